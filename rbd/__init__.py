"""rbd — rigid-body dynamics, readable derivations beside fast kernels.

The public API: build or load a :class:`Model`, then call the recursive
algorithms (:func:`rnea`, :func:`crba`, :func:`aba`, ...).  See the tutorials
for the derivations behind each one.
"""

from . import algorithms as _algorithms
from . import errors as _errors
from . import joints as _joints
from . import models, registry, testing
from ._backend import has_kernels
from .algorithms import (  # noqa: F401  (re-exported: see __all__ below)
    aba,
    aba_derivatives,
    assemble,
    bias_forces,
    body_centers_of_mass,
    center_of_mass,
    compute_all,
    constrained_dynamics,
    constraint_error,
    constraint_jacobian,
    crba,
    delassus,
    forward_dynamics,
    forward_kinematics,
    frame_pose,
    geom_poses,
    gravity_forces,
    impulse_dynamics,
    integrate,
    inverse_dynamics,
    jacobian,
    kinetic_energy,
    linearize,
    mass_matrix,
    mass_matrix_inverse,
    neutral,
    nonlinear_effects,
    potential_energy,
    random_configuration,
    rnea,
    rnea_derivatives,
)
from .data import Data
from .errors import (  # noqa: F401
    InputError,
    MJCFError,
    ModelError,
    RbdError,
    SimulationError,
    SimulationInterrupted,
    SweepError,
    URDFError,
)
from .joints import Fixed, Free, Helical, Joint, Planar, Prismatic, Revolute, Spherical, Universal  # noqa: F401
from .mjcf import load, load_mjcf
from .model import Model
from .urdf import load_urdf, to_urdf, write_urdf

__version__ = "0.1.0"

# Submodules with heavier dependencies load on first attribute access
# (``rbd.walker``, ``rbd.symbolic``, ...), keeping ``import rbd`` light.
_LAZY_SUBMODULES = ("animation", "constraints", "contact_coordinates", "data", "geometry",
                    "interop", "joints", "mjcf", "plotting", "reference", "simulation", "spatial",
                    "studies", "sweeps", "symbolic", "topology", "urdf", "walker")
# Functions of those submodules, also loaded on first access: ``rbd.simulate(...)``.
_LAZY_FUNCTIONS = {"simulate": "simulation", "sweep": "sweeps", "animate": "animation"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_FUNCTIONS:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY_FUNCTIONS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The public names: those of the algorithms, joints and errors modules, plus the loaders.
__all__ = [
    "__version__",
    "Model",
    "Data",
    *(name for name in _joints.__all__ if name != "JOINT_CODES"),
    *_errors.__all__,
    "load_urdf",
    "to_urdf",
    "write_urdf",
    "load_mjcf",
    "load",
    "geom_poses",
    *(name for name in _algorithms.__all__ if name != "compiled"),
    "has_kernels",
    *_LAZY_FUNCTIONS,
    "models",
    "registry",
    "testing",
    "collide",
    "forward",
]

# contact detection and the whole forward pass with contacts, joint limits and friction
# loss (mj_forward), imported last: rbd.constraints reads the public functions above
from .constraints import forward_compiled as _forward_compiled  # noqa: E402,F401
from .constraints.collision import collide_model as collide  # noqa: E402
from .constraints.forward import forward  # noqa: E402
