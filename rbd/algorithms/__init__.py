"""The public entry points: validate once, then dispatch.

With the compiled kernels built (the default), a call goes straight to the
model's compiled twin, which validates its arguments in compiled code and
raises :class:`~rbd.errors.InputError` on a bad one.  With
``backend="reference"`` (or ``RBD_NO_EXTENSIONS=1``) the arguments are
validated here and the pure-Python derivation in :mod:`rbd.reference` runs,
once per state of a batch.

The reference path also runs on symbols: a ``q`` (``v``, ...) holding sympy
expressions (an object array or a list) is taken as is, and the result is an
object array of formulas, computed on the model's data made exact
(:class:`rbd.symbolic.SymbolicModel`, which may itself be passed as the model,
with symbolic masses, lengths and inertias).  Quaternion coordinates given as
symbols are taken as a unit quaternion (no norm check).

Every function accepts a single state (``q`` of shape ``(nq,)``) or a batch
with a leading axis (``q`` of shape ``(N, nq)``), and returns a result of the
matching shape.

A model with mimic joints (:meth:`~rbd.model.Model.add_mimic`) dispatches to
a :class:`~rbd.algorithms._coupled.CoupledDynamics`, cached where a compiled model would
be: it maps the independent coordinates to the full tree (``q_full = G q + o``,
``v_full = G v``), runs the full tree's algorithm on the selected backend and
projects back (``τ = Gᵀ τ_full``, ``M = Gᵀ M_full G``, ``J = J_full G``;
forward dynamics and ``M⁻¹`` through the Cholesky factor of ``Gᵀ M_full G``).
"""

# the dispatch helpers and validation constants stay reachable as rbd.algorithms.X
from .._validation import QUATERNION_TOLERANCE, as_real_array, as_time_step  # noqa: F401
from ._dispatch import _HAVE_KERNELS, _kernel, _reference, _validate, compiled  # noqa: F401
from .configuration import integrate, neutral, random_configuration
from .constrained import (
    assemble,
    constrained_dynamics,
    constraint_error,
    constraint_jacobian,
    delassus,
    impulse_dynamics,
)
from .derivatives import aba_derivatives, linearize, rnea_derivatives
from .dynamics import aba, crba, gravity_forces, mass_matrix_inverse, nonlinear_effects, rnea
from .kinematics import (
    body_centers_of_mass,
    center_of_mass,
    forward_kinematics,
    frame_pose,
    geom_poses,
    jacobian,
    kinetic_energy,
    potential_energy,
)
from .pipeline import compute_all

__all__ = [
    "rnea",
    "crba",
    "aba",
    "nonlinear_effects",
    "gravity_forces",
    "mass_matrix_inverse",
    "rnea_derivatives",
    "aba_derivatives",
    "linearize",
    "kinetic_energy",
    "potential_energy",
    "forward_kinematics",
    "frame_pose",
    "geom_poses",
    "center_of_mass",
    "body_centers_of_mass",
    "jacobian",
    "compute_all",
    "integrate",
    "neutral",
    "random_configuration",
    "inverse_dynamics",
    "mass_matrix",
    "forward_dynamics",
    "bias_forces",
    "constrained_dynamics",
    "impulse_dynamics",
    "delassus",
    "constraint_jacobian",
    "constraint_error",
    "assemble",
    "compiled",
]

# Word names for the same quantities.
inverse_dynamics = rnea
mass_matrix = crba
forward_dynamics = aba
bias_forces = nonlinear_effects
