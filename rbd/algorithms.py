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

    With mimic joints, ``M = Gᵀ M_full G`` (:mod:`rbd.coupling`).
    """
    k = _kernel(model, backend)
    if k is not None:
        return k.crba(q)
    return _reference(_crba.crba, model, (_Q,), (q,))


def aba(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None,
        pivot: str = "standard") -> np.ndarray:
    """Forward dynamics: the accelerations produced by joint forces ``tau``.

    ``pivot="modified"`` selects Pai, Ascher & Kry's modified articulated-body
    pivot (§7), which is better conditioned for chains of very uneven masses.
    With mimic joints (either pivot) it solves ``(Gᵀ M_full G) q̈ = tau − Gᵀ h_full``
    by a Cholesky factorization (:mod:`rbd.coupling`).
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
    """Bias forces ``h(q, v) = C(q, v) v + g(q)``."""
    k = _kernel(model, backend)
    if k is not None:
        return k.nonlinear_effects(q, v)
    return _reference(_rnea.nonlinear_effects, model, (_Q, _V), (q, v))


def gravity_forces(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Generalized gravity ``g(q) = ∂U/∂q`` (as a force in velocity coordinates)."""
    k = _kernel(model, backend)
    if k is not None:
        return k.gravity_forces(q)
    return _reference(_rnea.gravity_forces, model, (_Q,), (q,))


def mass_matrix_inverse(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """``M(q)⁻¹``, ``(nv, nv)``; with mimic joints ``(Gᵀ M_full G)⁻¹`` by Cholesky."""
    k = _kernel(model, backend)
    if k is not None:
        return k.mass_matrix_inverse(q)
    return _reference(_crba.mass_matrix_inverse, model, (_Q,), (q,))


# --- kinematics and energy ------------------------------------------------------------------
def kinetic_energy(model: Model, q, v, *, backend: str | None = None):
    """Kinetic energy ``½ vᵀ M(q) v`` (a float, or ``(N,)`` for a batch)."""
    k = _kernel(model, backend)
    if k is not None:
        return k.kinetic_energy(q, v)
    return _reference(_kin.kinetic_energy, model, (_Q, _V), (q, v))


def potential_energy(model: Model, q, *, backend: str | None = None):
    """Gravitational potential energy, zero at the world origin."""
    k = _kernel(model, backend)
    if k is not None:
        return k.potential_energy(q)
    return _reference(_kin.potential_energy, model, (_Q,), (q,))


def forward_kinematics(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """World poses of the body frames as 4×4 matrices, ``(nbodies, 4, 4)``."""
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
    :math:`c_i` (world coordinates).

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
    """Each body's centre of mass in world coordinates, ``(nbodies, 3)``."""
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

    ``body`` is a body index or a body/frame name; ``point`` is in the body frame.
    With mimic joints, ``J = J_full G`` (:mod:`rbd.coupling`).
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

    Quaternion joints move on the unit sphere (``q ⊗ exp(ω dt)``); never use ``q + dt*v``.
    """
    dt = as_time_step(dt)
    k = _kernel(model, backend)
    if k is not None:
        return k.integrate(q, v, dt)
    return _reference(_kin.integrate, model, (_Q, _V), (q, v), extra=(dt,))


def neutral(model: Model) -> np.ndarray:
    """The neutral configuration (zero angles and offsets, identity quaternions)."""
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:  # the independent coordinates of the full tree's neutral configuration
        return _kin.neutral(model._full_tree())[model.coupling().q_keep]
    return _kin.neutral(model)


def random_configuration(model: Model, rng=None) -> np.ndarray:
    """A random configuration within ``model.lower`` / ``model.upper``.

    ``rng`` is a NumPy Generator or a seed.  A coordinate with both limits
    finite is uniform between them; one with a single finite limit is the
    joint's own random draw clipped to it; quaternions stay unit quaternions.
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
