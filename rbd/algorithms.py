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
a :class:`~rbd.coupling.CoupledDynamics`, cached where a compiled model would
be: it maps the independent coordinates to the full tree (``q_full = G q + o``,
``v_full = G v``), runs the full tree's algorithm on the selected backend and
projects back (``τ = Gᵀ τ_full``, ``M = Gᵀ M_full G``, ``J = J_full G``;
forward dynamics and ``M⁻¹`` through the Cholesky factor of ``Gᵀ M_full G``).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from . import _backend
from ._validation import QUATERNION_TOLERANCE, as_real_array, as_symbolic_array, as_time_step
from .errors import InputError, ModelError
from .model import Model
from .reference import aba as _aba
from .reference import crba as _crba
from .reference import derivatives as _deriv
from .reference import kinematics as _kin
from .reference import rnea as _rnea
from .spatial import plux_parts

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
    "center_of_mass",
    "body_centers_of_mass",
    "jacobian",
    "integrate",
    "neutral",
    "random_configuration",
    "inverse_dynamics",
    "mass_matrix",
    "forward_dynamics",
    "bias_forces",
    "compiled",
]


_HAVE_KERNELS = _backend.has_kernels()


def compiled(model: Model):
    """The compiled twin of ``model`` (flat arrays + workspace), built once and cached.

    For a model with mimic joints: its :class:`~rbd.coupling.CoupledDynamics` over
    the compiled full tree.
    """
    try:
        return model._cache["kernel"]
    except KeyError:
        if model._mimic:
            return _coupled(model, "kernel")
        from ._kernels._model import CompiledModel

        kernel = CompiledModel(model)
        model._cache["kernel"] = kernel
        return kernel


def _kernel(model, backend):
    """Return the compiled model when the kernel path is selected, else None.

    The first lines are the hot path of every call: a model compiled before
    answers with one dictionary lookup.  A model with mimic joints gets its
    :class:`~rbd.coupling.CoupledDynamics` on every backend (the one of the
    default backend is cached under the same key).
    """
    if backend is None:
        try:
            return model._cache["kernel"]
        except (AttributeError, KeyError):
            if getattr(model, "_mimic", None):
                return _coupled(model, None)
            if not _HAVE_KERNELS:
                return None
    elif _backend.resolve(backend) != "kernel":
        return _coupled(model, "reference") if getattr(model, "_mimic", None) else None
    if not isinstance(model, Model):
        if _symbolic_record(model):
            raise InputError("model: a SymbolicModel runs on backend='reference' only")
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:
        return _coupled(model, "kernel")
    if backend is None and "kernel_unavailable" in model._cache:
        return None
    try:
        return compiled(model)
    except ModelError as exc:
        if backend is not None or not any(b.joint.kind == "symbolic" for b in model.bodies):
            raise
        # A symbolic joint without compiled C (no compiler at run time): the reference
        # derivations evaluate its generated Python functions instead.
        model._cache["kernel_unavailable"] = str(exc)
        warnings.warn(f"{model.name}: the compiled kernels cannot run this model ({exc}); "
                      "using the reference implementation", RuntimeWarning, stacklevel=3)
        return None


def _coupled(model: Model, backend: str | None):
    """The :class:`~rbd.coupling.CoupledDynamics` of a model with mimic joints (cached)."""
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    key = "kernel" if backend is None else ("coupled", backend)
    try:
        return model._cache[key]
    except KeyError:
        from .coupling import CoupledDynamics

        dynamics = CoupledDynamics(model, backend)
        model._cache[key] = dynamics
        return dynamics


# --- validation ------------------------------------------------------------------------
def _symbolic_record(model) -> bool:
    """Is ``model`` a :class:`rbd.symbolic.SymbolicModel` (never imports sympy)?"""
    module = sys.modules.get("rbd.symbolic.equations")
    return module is not None and isinstance(model, module.SymbolicModel)


def _array(value, name: str, symbolic: bool = False) -> np.ndarray:
    try:
        arr = as_real_array(value, name)
    except InputError:
        arr = as_symbolic_array(value) if symbolic else None
        if arr is None:
            raise
        return arr
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} has non-finite entries")
    return arr


def _check_quaternions(model: Model, q: np.ndarray) -> np.ndarray:
    """Refuse a quaternion whose norm is off by more than the tolerance; return ``q`` with
    every quaternion normalized (a copy when some norm differs from 1, never the caller's
    array).  The norm is ``sqrt(x² + y² + z² + w²)`` summed in this order, as in the
    kernels' check, so both backends compute the same normalized configuration."""
    starts = []
    for i, body in enumerate(model.bodies):
        kind = body.joint.kind
        if kind in ("spherical", "free"):
            starts.append((model.q_index(i).start + (3 if kind == "free" else 0), body))
    scaled = None
    if q.dtype == object:   # symbols: taken as a unit quaternion
        return q
    for start, body in starts:
        quat = q[..., start:start + 4]
        norms = np.sqrt(quat[..., 0] * quat[..., 0] + quat[..., 1] * quat[..., 1]
                        + quat[..., 2] * quat[..., 2] + quat[..., 3] * quat[..., 3])
        bad = np.abs(norms - 1.0) > QUATERNION_TOLERANCE
        if np.any(bad):
            raise InputError(
                f"q: the quaternion of joint {body.joint_name!r} (q[{start}:{start + 4}]) "
                f"has norm {float(np.ravel(norms)[np.argmax(np.ravel(bad))]):.9g}, not 1"
            )
        if np.any(norms != 1.0):
            if scaled is None:
                scaled = np.array(q, dtype=float, copy=True)
            scaled[..., start:start + 4] /= norms[..., None]
    return q if scaled is None else scaled


def _validate(model: Model, specs, values, symbolic: bool = False):
    """Check each argument against its spec; return (arrays, batch size or None).

    ``symbolic=True`` (the reference path) also accepts arrays of sympy expressions
    and a :class:`rbd.symbolic.SymbolicModel`.
    """
    if not isinstance(model, Model) and not (symbolic and _symbolic_record(model)):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    sizes = {"q": (model.nq,), "v": (model.nv,), "f": (model.nbodies, 6)}
    arrays, batch = [], None
    for (name, kind), value in zip(specs, values, strict=True):
        if value is None and kind == "f":
            arrays.append(None)
            continue
        arr = _array(value, name, symbolic)
        shape = sizes[kind]
        if arr.shape == shape:
            n = None
        elif arr.ndim == len(shape) + 1 and arr.shape[1:] == shape:
            n = arr.shape[0]
        else:
            raise InputError(
                f"{name} must have shape {shape} or (N, {', '.join(map(str, shape))}), "
                f"got {arr.shape}"
            )
        if n is not None and batch is not None and n != batch:
            raise InputError(f"{name} has batch size {n}, other arguments have {batch}")
        if n is not None:
            batch = n
        if kind == "q":
            arr = _check_quaternions(model, arr)
        arrays.append(arr)
    if batch is not None:
        for k, ((_, kind), arr) in enumerate(zip(specs, arrays, strict=True)):
            if arr is not None and arr.ndim == len(sizes[kind]):
                arrays[k] = np.broadcast_to(arr, (batch, *arr.shape))
    return arrays, batch


def _reference(fn, model, specs, values, extra=()):
    arrays, batch = _validate(model, specs, values, symbolic=True)
    if not isinstance(model, Model) or any(a is not None and a.dtype == object for a in arrays):
        return _symbolic(fn, model, specs, arrays, batch, extra)
    return _run(fn, model, specs, arrays, batch, extra)


def _run(fn, model, specs, arrays, batch, extra):
    if batch is None:
        return fn(model, *arrays, *extra)
    if batch == 0:  # an empty batch: the shape of one result, with a leading 0
        rest = {"q": _kin.neutral(model), "v": np.zeros(model.nv), "f": None}
        sample = fn(model, *[rest[kind] for _, kind in specs], *extra)
        return np.empty((0, *np.shape(sample)))
    out = [fn(model, *[None if a is None else a[k] for a in arrays], *extra)
           for k in range(batch)]
    return np.array(out)


def _symbolic(fn, model, specs, arrays, batch, extra):
    """The reference on symbols: a model's data made exact, integral floats of the result too."""
    from .symbolic.equations import SymbolicModel, exact_numbers

    if isinstance(model, Model):
        model = SymbolicModel.of(model)
    out = _run(fn, model, specs, arrays, batch, extra)
    if np.ndim(out) == 0:
        return exact_numbers(out)
    return np.array([exact_numbers(x) for x in np.ravel(out)], dtype=object).reshape(out.shape)


_Q = ("q", "q")
_V = ("v", "v")
_A = ("a", "v")
_TAU = ("tau", "v")
_F = ("f_ext", "f")


# --- dynamics ---------------------------------------------------------------------------
def rnea(model: Model, q, v, a, f_ext=None, *, backend: str | None = None) -> np.ndarray:
    """Inverse dynamics: the joint forces ``tau`` giving acceleration ``a``.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v, a : (nv,) or (N, nv) array_like
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional
        External spatial forces ``[n; f]`` on each body, in body coordinates.
    backend : {None, "kernel", "reference"}

    Returns
    -------
    tau : (nv,) or (N, nv) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (one within it is normalized, on a copy).

    Notes
    -----
    The recursive Newton–Euler algorithm: velocities and accelerations outward,
    forces inward, ``tau_i = S_iᵀ f_i`` (:ref:`RBDA Table 5.1 <rbda-t5-1>`;
    S&G (8), (11), (14) in Lie-group notation).

    With mimic joints, ``tau = Gᵀ rnea_full(G q + o, G v, G a, f_ext)`` on the
    independent coordinates (:mod:`rbd.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> q = rbd.neutral(model)
    >>> rbd.rnea(model, q, [0.0, 0.0], [0.0, 0.0]).round(12)  # hanging at rest
    array([0., 0.])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.rnea(q, v, a, f_ext)
    return _reference(_rnea.rnea, model, (_Q, _V, _A, _F), (q, v, a, f_ext))


def crba(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Joint-space inertia matrix ``M(q)``, ``(nv, nv)`` (or ``(N, nv, nv)``), symmetric.

    The composite-rigid-body algorithm: composite inertias accumulate from the
    leaves, and each column of ``M`` is the projection of a composite inertia
    on the joints up to the root (:ref:`RBDA Table 6.2 <rbda-t6-2>`).  The
    joints' rotor inertia ``model.armature`` is added to the diagonal.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    M : (nv, nv) or (N, nv, nv) ndarray
        Symmetric positive definite; ``T = ½ vᵀ M v``.

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Notes
    -----
    With mimic joints, ``M = Gᵀ M_full G`` (:mod:`rbd.coupling`).

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()   # unit masses at unit-length tips
    >>> rbd.crba(model, [0.0, np.pi / 2]).round(12)  # [[3 + 2 cos q1, 1 + cos q1], [., 1]]
    array([[3., 1.],
           [1., 1.]])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.crba(q)
    return _reference(_crba.crba, model, (_Q,), (q,))


def aba(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None,
        pivot: str = "standard") -> np.ndarray:
    """Forward dynamics: the accelerations produced by joint forces ``tau``.

    The articulated-body algorithm: velocities outward, articulated inertias
    and bias forces inward, accelerations outward
    (:ref:`RBDA Table 7.1 <rbda-t7-1>`; S&G (17) states the result,
    ``qdd = M⁻¹ (tau − C v − g)``).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v, tau : (nv,) or (N, nv) array_like
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional
        External spatial forces ``[n; f]`` on each body, in body coordinates.
    backend : {None, "kernel", "reference"}
    pivot : {"standard", "modified"}
        ``"modified"`` selects Pai, Ascher & Kry's modified articulated-body
        pivot (§7, :ref:`the modified pivot <pai-modified-pivot>`), which keeps
        the body's own inertia apart from its children's when forming
        ``D = Sᵀ I S + Sᵀ Ĩ S``.  Tutorial 21 measured it on chains of very
        uneven masses (a light link carrying a coaxial heavy one, mass ratios
        down to 1e-10): the standard and modified pivots had errors of the same
        size, pivot by pivot and in ``qdd`` (sometimes one smaller, sometimes the
        other), because the rounding that matters happens while the articulated
        inertia is formed, before the pivot is assembled.  The compiled kernel
        costs 2–6 % more with it (:doc:`/benchmarks`).  It is kept as a faithful
        rendering of the paper, not as an accuracy fix.

    Returns
    -------
    qdd : (nv,) or (N, nv) ndarray

    Raises
    ------
    InputError
        On an unknown ``pivot``, or on bad arrays (as :func:`rnea`).

    Notes
    -----
    With mimic joints (either pivot) it solves ``(Gᵀ M_full G) q̈ = tau − Gᵀ h_full``
    by a Cholesky factorization (:mod:`rbd.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.aba(model, [0.0, 0.0], [0.0, 0.0], [1.0, 0.0]).round(12)  # M⁻¹ [1, 0]
    array([ 1., -2.])
    >>> rbd.aba(model, [0.0, 0.0], [0.0, 0.0], [1.0, 0.0], pivot="modified").round(12)
    array([ 1., -2.])
    """
    if pivot not in ("standard", "modified"):
        raise InputError(f"pivot must be 'standard' or 'modified', got {pivot!r}")
    k = _kernel(model, backend)
    if k is not None:
        if pivot == "modified":
            return k.aba_modified(q, v, tau, f_ext)
        return k.aba(q, v, tau, f_ext)
    if pivot == "modified":
        from .reference.block_elimination import aba_modified

        return _reference(aba_modified, model, (_Q, _V, _TAU, _F), (q, v, tau, f_ext))
    return _reference(_aba.aba, model, (_Q, _V, _TAU, _F), (q, v, tau, f_ext))


def nonlinear_effects(model: Model, q, v, *, backend: str | None = None) -> np.ndarray:
    """Bias forces ``h(q, v) = C(q, v) v + g(q)``: the joint forces at zero acceleration.

    The recursive Newton–Euler algorithm with ``a = 0``
    (:ref:`RBDA Table 5.1 <rbda-t5-1>`; S&G (17) names the terms).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v : (nv,) or (N, nv) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    h : (nv,) or (N, nv) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> # elbow at 90°, shoulder turning: gravity (9.81, 9.81) plus the centrifugal 1 at the elbow
    >>> rbd.nonlinear_effects(model, [0.0, np.pi / 2], [1.0, 0.0]).round(12)
    array([ 9.81, 10.81])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.nonlinear_effects(q, v)
    return _reference(_rnea.nonlinear_effects, model, (_Q, _V), (q, v))


def gravity_forces(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Generalized gravity ``g(q) = ∂U/∂q`` (as a force in velocity coordinates).

    The recursive Newton–Euler algorithm with ``v = a = 0``
    (:ref:`RBDA Table 5.1 <rbda-t5-1>`; the term ``φ(q)`` of S&G (17)).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    g : (nv,) or (N, nv) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.gravity_forces(model, [np.pi / 2, 0.0]).round(12)  # arm horizontal: (1+2) g, 1 g
    array([29.43,  9.81])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.gravity_forces(q)
    return _reference(_rnea.gravity_forces, model, (_Q,), (q,))


def mass_matrix_inverse(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """``M(q)⁻¹``, ``(nv, nv)``, without forming ``M``.

    The articulated-body recursion applied to unit forces, the factorization
    ``M⁻¹ = (1 − Sᵀ Y Π)ᵀ Ω⁻¹ (1 − Sᵀ Y Π)`` of S&G (58).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    Minv : (nv, nv) or (N, nv, nv) ndarray
        Symmetric positive definite.

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Notes
    -----
    With mimic joints, ``(Gᵀ M_full G)⁻¹`` by a Cholesky factorization.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.mass_matrix_inverse(model, [0.0, 0.0]).round(12)  # inv([[5, 2], [2, 1]])
    array([[ 1., -2.],
           [-2.,  5.]])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.mass_matrix_inverse(q)
    return _reference(_crba.mass_matrix_inverse, model, (_Q,), (q,))


# --- derivatives -------------------------------------------------------------------------------
def _three(result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference's ``(A, B, C)`` per state, or stacked ``(N, 3, nv, nv)``, as a triple."""
    if isinstance(result, tuple):
        return result
    return result[:, 0], result[:, 1], result[:, 2]


def _coupled_derivatives(dyn, q, v, x, f_ext, forward: bool):
    """Derivatives of a model with mimic joints from the full tree's: ``Gᵀ (·) G``.

    ``τ = Gᵀ τ_full(G_q q + o, G v, G a)`` with a constant ``G``, so
    ``∂τ/∂y = Gᵀ ∂τ_full/∂y_full G`` (``y = q, v, a``).  Forward dynamics solves
    ``Gᵀ τ_full(…, G q̈) = τ``; differentiating this identity gives
    ``∂q̈/∂y = −(Gᵀ M_full G)⁻¹ Gᵀ ∂τ_full/∂y_full G``.
    """
    from .coupling import _spd_solve

    c = dyn.coupling
    if forward:
        qdd = dyn.aba(q, v, x, f_ext)
        qf, vf, af, f = dyn._args((_Q, _V, _A, _F), (q, v, qdd, f_ext))
    else:
        qf, vf, af, f = dyn._args((_Q, _V, _A, _F), (q, v, x, f_ext))
    full = rnea_derivatives(dyn.full, qf, vf, af, f, backend=dyn.backend)
    dq, dv, M = (c.G.T @ D @ c.G for D in full)
    if not forward:
        return dq, dv, c.project_matrix(full[2])
    M_inv = _spd_solve(c.project_matrix(full[2]), None)
    return -M_inv @ dq, -M_inv @ dv, M_inv


def rnea_derivatives(model: Model, q, v, a, f_ext=None, *, backend: str | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial derivatives of inverse dynamics: ``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)``.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v, a : (nv,) or (N, nv) array_like
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional
        External spatial forces in body coordinates, held fixed in the body frames.
    backend : {None, "kernel", "reference"}

    Returns
    -------
    dtau_dq, dtau_dv, dtau_da : (nv, nv) or (N, nv, nv) ndarray
        ``∂τ/∂a = M(q)`` (armature included).

    Raises
    ------
    InputError
        On bad arguments, as :func:`rnea`.
    ModelError
        For a model with a symbolic joint (no generated second derivatives).

    Notes
    -----
    Derivatives with respect to ``q`` are taken in the tangent space: column
    ``c`` is ``∂/∂ε τ(integrate(q, ε e_c), v, a)`` at ``ε = 0``.  For a spherical
    or free joint ``e_c`` is a local (body-frame) increment — a rotation
    ``q ⊗ exp(ε e)`` about a body axis, or for a free joint a body-frame twist
    ``[ω; v]`` — so the matrix has ``nv`` columns, not ``nq``; for every other joint
    it is the ordinary partial derivative.  The recursion differentiates each
    pass of the RNEA (:mod:`rbd.reference.derivatives`, after Carpentier &
    Mansard, RSS 2018), in O(nv · nbodies).  With mimic joints,
    ``∂τ/∂y = Gᵀ ∂τ_full/∂y_full G`` (:mod:`rbd.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> dq, dv, da = rbd.rnea_derivatives(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    >>> dq.round(6)   # hanging at rest: ∂²U/∂q² = g [[m₁l₁ + m₂(l₁ + l₂), m₂l₂], [m₂l₂, m₂l₂]]
    array([[29.43,  9.81],
           [ 9.81,  9.81]])
    """
    k = _kernel(model, backend)
    if k is not None and getattr(model, "_mimic", None):
        return _coupled_derivatives(k, q, v, a, f_ext, forward=False)
    if k is not None:
        return k.rnea_derivatives(q, v, a, f_ext)
    _deriv.check_joints(model)
    return _three(_reference(_deriv.rnea_derivatives, model, (_Q, _V, _A, _F),
                             (q, v, a, f_ext)))


def aba_derivatives(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial derivatives of forward dynamics: ``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)``.

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = aba(q, v, tau)`` (``x = q, v``) and
    ``∂q̈/∂τ = M⁻¹``; ``q`` in the tangent space as for :func:`rnea_derivatives`.
    Arguments, shapes and errors as :func:`rnea_derivatives`; a model whose
    forward dynamics is undefined raises :class:`~rbd.errors.ModelError` as
    :func:`aba` does on the kernel backend.  With mimic joints,
    ``∂q̈/∂y = −(Gᵀ M_full G)⁻¹ Gᵀ ∂τ_full/∂y_full G``.
    """
    k = _kernel(model, backend)
    if k is not None and getattr(model, "_mimic", None):
        return _coupled_derivatives(k, q, v, tau, f_ext, forward=True)
    if k is not None:
        return k.aba_derivatives(q, v, tau, f_ext)
    _deriv.check_joints(model)
    return _three(_reference(_deriv.aba_derivatives, model, (_Q, _V, _TAU, _F),
                             (q, v, tau, f_ext)))


def linearize(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """First-order dynamics ``ẋ ≈ A x + B u`` about ``(q, v, tau)``.

    The state is ``x = (δq, δv)`` (``2 nv``) and the input ``u = δτ`` (``nv``):

    .. math::

        A = \\begin{bmatrix} 0 & 1 \\\\ \\partial\\ddot q/\\partial q &
        \\partial\\ddot q/\\partial v \\end{bmatrix}, \\qquad
        B = \\begin{bmatrix} 0 \\\\ M^{-1} \\end{bmatrix}.

    Returns
    -------
    A : (2 nv, 2 nv) or (N, 2 nv, 2 nv) ndarray
    B : (2 nv, nv) or (N, 2 nv, nv) ndarray

    Notes
    -----
    ``δq`` is a tangent-space coordinate: the configuration is
    ``integrate(q, δq)``.  For revolute, prismatic, helical, universal and planar
    joints this is ``q + δq``.  For a spherical joint ``δq`` is a rotation vector
    in the body frame (the configuration is ``q ⊗ exp(δq)``), and for a free joint
    a body-frame twist ``[δθ; δp]`` applied on the right (``T(q) exp(δq)``), so
    ``δq`` has ``nv`` entries where ``q`` has ``nq``.  Near ``δq = 0`` the
    kinematics is ``d(δq)/dt = v`` to first order, which is the identity block
    of ``A``; use :func:`integrate` to map a linear prediction back to ``q``.
    ``(q, v, tau)`` need not be an equilibrium: the drift ``[v; q̈]`` is then the
    constant term left out of ``A x + B u``.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> A, B = rbd.linearize(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    >>> bool(np.all(abs(np.linalg.eigvals(A).real) < 1e-9))   # hanging: oscillates
    True
    """
    dq, dv, M_inv = aba_derivatives(model, q, v, tau, f_ext, backend=backend)
    nv = dq.shape[-1]
    batch = dq.shape[:-2]
    A = np.zeros((*batch, 2 * nv, 2 * nv))
    A[..., :nv, nv:] = np.eye(nv)
    A[..., nv:, :nv] = dq
    A[..., nv:, nv:] = dv
    B = np.zeros((*batch, 2 * nv, nv))
    B[..., nv:, :] = M_inv
    return A, B


# --- kinematics and energy ------------------------------------------------------------------
def kinetic_energy(model: Model, q, v, *, backend: str | None = None):
    """Kinetic energy ``T = ½ vᵀ M(q) v = ½ Σᵢ vᵢᵀ Iᵢ vᵢ`` (body velocities by S&G (8)).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v : (nv,) or (N, nv) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    T : float or (N,) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> float(rbd.kinetic_energy(model, [0.0, 0.0], [1.0, 0.0]))  # ½ · 1 · M[0, 0] = ½ · 5
    2.5
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.kinetic_energy(q, v)
    return _reference(_kin.kinetic_energy, model, (_Q, _V), (q, v))


def potential_energy(model: Model, q, *, backend: str | None = None):
    """Gravitational potential energy ``U(q) = −Σᵢ mᵢ gᵀ cᵢ``, zero at the world origin.

    Its gradient is :func:`gravity_forces` (``g(q) = ∂U/∂q``, the term ``φ(q)``
    of S&G (17)).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    U : float or (N,) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> round(float(rbd.potential_energy(model, [0.0, 0.0])), 12)  # masses at z = -1, -2
    -29.43
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.potential_energy(q)
    return _reference(_kin.potential_energy, model, (_Q,), (q,))


def forward_kinematics(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """World poses of the body frames as 4×4 matrices, ``(nbodies, 4, 4)``.

    Each pose composes the parent's with the tree and joint transforms,
    ``X_up[i] = X_J(q_i) X_tree[i]`` (S&G (8); :doc:`/conventions` for frames).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    T : (nbodies, 4, 4) or (N, nbodies, 4, 4) ndarray
        ``[[R, p], [0, 1]]``: body ``i``'s axes ``R`` and origin ``p`` in world coordinates.

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.forward_kinematics(model, [0.0, 0.0])[:, :3, 3].round(12)  # body origins
    array([[ 0.,  0.,  0.],
           [ 0.,  0., -1.]])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.forward_kinematics(q)
    return _reference(_kin.forward_kinematics, model, (_Q,), (q,))


def frame_pose(model: Model, q, name, *, backend: str | None = None) -> np.ndarray:
    """World pose ``(4, 4)`` of a body, a link merged into a body, or an attached frame.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    name : str or int
        A body name or index, or a frame name (``model.frames``: links merged by a
        fixed joint, frames added with :meth:`Model.add_frame`).
    backend : {None, "kernel", "reference"}

    Returns
    -------
    T : (4, 4) or (N, 4, 4) ndarray
        ``[[R, p], [0, 1]]``: the frame's axes ``R`` and origin ``p`` in world
        coordinates.  With ``X = plux(E, r)`` the frame's transform from its body
        (``r`` its origin in body coordinates), ``R = R_b Eᵀ`` and ``p = p_b + R_b r``.
        The body pose ``(R_b, p_b)`` is that of :func:`forward_kinematics` (S&G (8)).

    Raises
    ------
    InputError
        On an unknown name, or on a bad ``q`` (as :func:`forward_kinematics`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.frame_pose(model, [0.0, 0.0], model.body_names[-1])[:3, 3].round(12)
    array([ 0.,  0., -1.])
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if isinstance(name, str) and name in model._frames:
        frame = model._frames[name]
        index, offset = frame.body, frame.X
    else:
        try:
            index, offset = model.body_index(name), None
        except Exception:
            raise InputError(f"name: no body or frame {name!r} in model {model.name!r} "
                             "(see model.frames)") from None
    T = forward_kinematics(model, q, backend=backend)[..., index, :, :]
    if offset is None:
        return T
    E, r = plux_parts(offset)
    local = np.eye(4)
    local[:3, :3], local[:3, 3] = E.T, r
    return T @ local


def center_of_mass(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    r"""The system's centre of mass in world coordinates, ``(3,)``.

    :math:`c = \sum_i m_i c_i / \sum_i m_i` over the bodies' centres of mass
    :math:`c_i` (world coordinates, :func:`body_centers_of_mass`; poses by S&G (8)).

    Raises
    ------
    ModelError
        When the model has no mass (its centre of mass is undefined).
    InputError
        On a bad ``q``.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.center_of_mass(model, [0.0, 0.0]).round(6).tolist()
    [0.0, 0.0, -1.5]
    """
    if isinstance(model, Model) and model.total_mass <= 0.0:
        raise ModelError(f"{model.name}: the model has no mass, so no centre of mass")
    k = _kernel(model, backend)
    if k is not None:
        return k.center_of_mass(q)
    return _reference(_kin.center_of_mass, model, (_Q,), (q,))


def body_centers_of_mass(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Each body's centre of mass in world coordinates, ``(nbodies, 3)``.

    ``cᵢ = pᵢ + Rᵢ c_local,i`` with the poses of :func:`forward_kinematics` (S&G (8)).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : {None, "kernel", "reference"}

    Returns
    -------
    C : (nbodies, 3) or (N, nbodies, 3) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (as :func:`rnea`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.body_centers_of_mass(model, [0.0, 0.0]).round(12)  # point masses at the tips
    array([[ 0.,  0., -1.],
           [ 0.,  0., -2.]])
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.body_centers_of_mass(q)
    return _reference(_kin.body_centers_of_mass, model, (_Q,), (q,))


def _point(point) -> np.ndarray:
    if point is None:
        return np.zeros(3)
    p = _array(point, "point")
    if p.shape != (3,):
        raise InputError(f"point must have shape (3,), got {p.shape}")
    return p


def jacobian(model: Model, q, body, point=None, *, backend: str | None = None) -> np.ndarray:
    """Jacobian ``(6, nv)`` of a point on ``body``: world-aligned ``[ω; v]`` at the point.

    Column ``j`` is joint ``j``'s motion subspace ``S_j`` carried to the world
    and shifted to the point, for the joints on the path to the root
    (``v_body = Σ_j X S_j q̇_j``, S&G (8) unrolled; L&J (61) inverts it).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    body : int or str
        A body index or a body/frame name.
    point : (3,) array_like, optional
        The point in the body's (or frame's) coordinates; default its origin.
    backend : {None, "kernel", "reference"}

    Returns
    -------
    J : (6, nv) or (N, 6, nv) ndarray

    Raises
    ------
    InputError
        On an unknown body, a point of the wrong shape, or bad ``q``.

    Notes
    -----
    With mimic joints, ``J = J_full G`` (:mod:`rbd.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()   # joints about y, hanging along -z
    >>> rbd.jacobian(model, [0.0, 0.0], 1, point=[0.0, 0.0, -0.5]).round(12)
    array([[ 0. ,  0. ],
           [ 1. ,  1. ],
           [ 0. ,  0. ],
           [-1.5, -0.5],
           [ 0. ,  0. ],
           [ 0. ,  0. ]])
    """
    if not isinstance(model, Model) and not _symbolic_record(model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    try:
        index = model.body_index(body)
    except Exception as exc:
        raise InputError(f"body: {exc}") from None
    local = _point(point)
    if isinstance(body, str) and body in model._frames:
        # a point given in a frame's coordinates, moved to its body's coordinates
        E, r = plux_parts(model._frames[body].X)
        local = r + E.T @ local
    k = _kernel(model, backend)
    if k is not None:
        return k.jacobian(q, index, local)
    return _reference(_kin.jacobian, model, (_Q,), (q,), extra=(index, local))


def integrate(model: Model, q, v, dt: float = 1.0, *, backend: str | None = None) -> np.ndarray:
    """Configuration reached from ``q`` moving with constant velocity ``v`` for ``dt``.

    Each joint moves on its own manifold: angles and offsets add ``v dt``;
    quaternion joints move on the unit sphere, ``q ⊗ exp(ω dt)`` (the
    exponential map of S&G (1)); never use ``q + dt*v``.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v : (nv,) or (N, nv) array_like
    dt : float
    backend : {None, "kernel", "reference"}

    Returns
    -------
    q_next : (nq,) or (N, nq) ndarray

    Raises
    ------
    InputError
        On a non-finite ``dt``, or on bad ``q``, ``v`` (as :func:`rnea`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.integrate(model, [0.0, 0.0], [1.0, 2.0], 0.1)
    array([0.1, 0.2])
    """
    dt = as_time_step(dt)
    k = _kernel(model, backend)
    if k is not None:
        return k.integrate(q, v, dt)
    return _reference(_kin.integrate, model, (_Q, _V), (q, v), extra=(dt,))


def neutral(model: Model) -> np.ndarray:
    """The neutral configuration (zero angles and offsets, identity quaternions).

    The configuration where every joint transform is the identity,
    ``X_J(q) = 1`` (S&G (8) then reduces to the tree transforms).

    Parameters
    ----------
    model : Model

    Returns
    -------
    q : (nq,) ndarray

    Raises
    ------
    InputError
        When ``model`` is not an :class:`rbd.Model`.

    Examples
    --------
    >>> import rbd
    >>> rbd.neutral(rbd.models.double_pendulum())
    array([0., 0.])
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:  # the independent coordinates of the full tree's neutral configuration
        return _kin.neutral(model._full_tree())[model.coupling().q_keep]
    return _kin.neutral(model)


def random_configuration(model: Model, rng=None) -> np.ndarray:
    """A random configuration within ``model.lower`` / ``model.upper``.

    A coordinate with both limits finite is uniform between them; one with a
    single finite limit is the joint's own random draw clipped to it;
    quaternions stay unit quaternions (uniform rotations, the group of S&G (1)).

    Parameters
    ----------
    model : Model
    rng : numpy.random.Generator or int, optional
        A NumPy Generator or a seed.

    Returns
    -------
    q : (nq,) ndarray

    Raises
    ------
    InputError
        When ``model`` is not an :class:`rbd.Model`.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> q = rbd.random_configuration(model, 0)
    >>> q.shape, bool(((q >= model.lower) & (q <= model.upper)).all())
    ((2,), True)
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:  # each independent coordinate within its own limits, as in the full tree
        full = _kin.random_configuration(model._full_tree(), np.random.default_rng(rng))
        return full[model.coupling().q_keep]
    return _kin.random_configuration(model, np.random.default_rng(rng))


# Word names for the same quantities.
inverse_dynamics = rnea
mass_matrix = crba
forward_dynamics = aba
bias_forces = nonlinear_effects
