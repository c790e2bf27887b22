"""Input conversions and tolerances shared by both backends, below every other layer.

The compiled kernels (``rbd/_kernels/_model.pyx``) and the public functions of
:mod:`rbd.algorithms` both check their arguments with what is here, so that
the two backends accept and refuse the same inputs with the same messages.
Its vector check (:func:`as_vector`) and quaternion checks serve the rest of the
package too: the simulation, the peer maps of :mod:`rbd.interop`, re-rooting,
the symbolic record and Pai's contact pair.  This module imports nothing from
``rbd`` but :mod:`rbd.errors` (a model is read through its attributes only).
"""

from __future__ import annotations

import math
import reprlib
import sys

import numpy as np

from .errors import InputError, ModelError

__all__ = ["QUATERNION_TOLERANCE", "as_real_array", "as_symbolic_array", "as_time_step",
           "as_vector", "check_quaternions", "check_unit_quaternion", "quaternion_columns",
           "quaternion_norms", "singular_pivot", "singular_inertia"]

#: Largest accepted deviation of a quaternion's norm from one.
QUATERNION_TOLERANCE = 1e-6

#: Up to this many quaternions, :func:`check_quaternions` takes their norms in Python floats
#: (the same sums): a state or a small batch then costs one list of floats, not a dozen
#: array operations, each of which costs tens of µs when a call follows a long kernel run
#: that left NumPy's code out of the caches (docs/benchmarks.md).
FEW_QUATERNIONS = 64


def as_real_array(value, name: str) -> np.ndarray:
    """``value`` as a float64 array, or :class:`InputError` naming ``name``.

    The one conversion of both backends (the kernels call it for anything that
    is not already a C-contiguous float64 array): complex values are refused
    rather than cut to their real part, and numbers beyond the range of a
    double (a huge Python int) are refused rather than raising
    ``OverflowError``.  Finiteness is checked by the caller.
    """
    try:
        complex_values = np.iscomplexobj(value)
    except (TypeError, ValueError):   # ragged or not array-like: the conversion says which
        complex_values = False
    if complex_values:
        raise InputError(f"{name} must be real, got complex values")
    try:
        return np.asarray(value, dtype=np.float64, order="C")
    except OverflowError:
        raise InputError(f"{name} has a value too large for a double") from None
    except (TypeError, ValueError) as exc:
        if "inhomogeneous" in str(exc):
            raise InputError(f"{name} is ragged: its nested sequences have different "
                             "lengths") from None
        if as_symbolic_array(value) is not None:
            raise InputError(f"{name} holds sympy symbols: symbolic arguments run on "
                             "backend='reference' only (a model without mimic joints)") from None
        raise InputError(f"{name} must be a numeric array, got {type(value).__name__}") from None


def as_symbolic_array(value) -> np.ndarray | None:
    """``value`` as an object array when it holds sympy expressions (and numbers), else None.

    Only the symbolic branch of the reference path calls this, after
    :func:`as_real_array` refused ``value``; it never imports sympy (without
    sympy loaded, no value can hold a sympy expression).
    """
    sympy = sys.modules.get("sympy")
    if sympy is None:
        return None
    try:
        arr = np.array(value, dtype=object)
    except (TypeError, ValueError):
        return None
    entries = arr.ravel().tolist()
    scalars = (sympy.Expr, int, float, np.integer, np.floating)
    if not any(isinstance(x, sympy.Basic) for x in entries) or not all(
            isinstance(x, scalars) and not isinstance(x, bool) for x in entries):
        return None
    return arr


def as_vector(value, size: int, name: str, batch: bool = False,
              symbolic: bool = False) -> np.ndarray:
    """``value`` as a float array of ``size`` finite entries; :class:`InputError` names ``name``.

    The one check of a small vector argument (a point, an axis, a peer's
    configuration).  ``batch=True`` also accepts a stack ``(N, size)`` (the
    entries on the last axis); ``symbolic=True`` also accepts sympy expressions,
    returned as a flat object array of ``size`` entries (a sympy column or row
    included), with no finiteness check.
    """
    arr = as_symbolic_array(value) if symbolic else None
    if arr is not None:     # sympy numbers stay exact (a Rational is not cut to a float)
        arr = arr.reshape(-1) if arr.size == size else arr
    else:
        try:
            arr = as_real_array(value, name)
        except InputError:
            raise InputError(f"{name} must be a numeric {size}-vector, got "
                             f"{reprlib.repr(value)}") from None
    if arr.ndim == 0 or arr.shape[-1] != size or (arr.ndim > 1 and not batch):
        shapes = f"({size},) or (N, {size})" if batch else f"({size},)"
        raise InputError(f"{name} must have shape {shapes}, got {arr.shape}")
    if arr.dtype != object and not np.all(np.isfinite(arr)):
        raise InputError(f"{name} has non-finite entries")
    return arr


def quaternion_norms(quat: np.ndarray) -> np.ndarray:
    """The norms ``sqrt(x² + y² + z² + w²)`` of the quaternions ``quat`` ``(..., 4)``,
    summed in this order, as in the kernels' check (both backends normalize to the same
    numbers)."""
    squares = quat * quat
    return np.sqrt(squares[..., 0] + squares[..., 1] + squares[..., 2] + squares[..., 3])


def check_unit_quaternion(quat: np.ndarray, what: str) -> np.ndarray:
    """The norms of the quaternions ``quat`` ``(..., 4)``; :class:`InputError` when one is off.

    The norm is :func:`quaternion_norms`'; a norm off by more than
    :data:`QUATERNION_TOLERANCE` is refused with ``what`` in the message.
    """
    norms = quaternion_norms(quat)
    bad = np.abs(norms - 1.0) > QUATERNION_TOLERANCE
    if np.any(bad):
        worst = float(np.ravel(norms)[np.argmax(np.ravel(bad))])
        raise InputError(f"{what} has norm {worst:.9g}, not 1")
    return norms


def quaternion_columns(model) -> tuple[tuple[str, ...], np.ndarray]:
    """The names of the spherical and free joints and the indices of their quaternions in
    ``q``, ``(joints, 4)`` (in body order; a free joint's after its position).

    A model with a cache (``_derived``) keeps them: they depend on the tree only."""
    def build():
        names, starts = [], []
        for i, body in enumerate(model.bodies):
            kind = body.joint.kind
            if kind in ("spherical", "free"):
                names.append(body.joint_name)
                starts.append(model.q_index(i).start + (3 if kind == "free" else 0))
        cols = np.add.outer(np.array(starts, dtype=int), np.arange(4)).reshape(-1, 4)
        cols.setflags(write=False)
        return tuple(names), cols

    derived = getattr(model, "_derived", None)
    return build() if derived is None else derived("quaternion_columns", build)


def check_quaternions(model, q: np.ndarray, name: str = "q", normalize: bool = True
                      ) -> np.ndarray:
    """Check the unit quaternion of every spherical and free joint in ``q`` (one or a batch).

    Returns ``q`` with each quaternion normalized: a copy when some norm differs
    from 1, never the caller's array.  A norm off by more than the tolerance
    raises :class:`InputError` naming ``name``, the joint and its entries (the
    message of the kernels' check; the first such joint in body order).  Quaternion
    symbols are taken as unit quaternions.  All quaternions are checked at once
    (:func:`quaternion_columns`).  With ``normalize=False``, only the check: ``q`` is
    returned as it is (for a caller whose steps normalize themselves).
    """
    if q.dtype == object:
        return q
    names, cols = quaternion_columns(model)
    if not names:
        return q
    quats = q[..., cols]                         # (..., joints, 4)
    if q.dtype == np.float64 and quats.size <= 4 * FEW_QUATERNIONS:
        # a few: the same sums in Python floats, without an array operation each
        listed = [math.sqrt(x * x + y * y + z * z + w * w)
                  for x, y, z, w in quats.reshape(-1, 4).tolist()]
        off = any(abs(n - 1.0) > QUATERNION_TOLERANCE for n in listed)
        unit = all(n == 1.0 for n in listed)
        norms = listed
    else:
        norms = quaternion_norms(quats)          # (..., joints)
        deviation = np.abs(norms - 1.0)          # NaN for a NaN norm: neither off nor unit
        off = bool((deviation > QUATERNION_TOLERANCE).any())
        unit = not deviation.any()
    if off:
        for joint, start in zip(names, cols[:, 0].tolist(), strict=True):  # the first off
            check_unit_quaternion(
                q[..., start:start + 4],
                f"{name}: the quaternion of joint {joint!r} (q[{start}:{start + 4}])")
    if unit or not normalize:
        return q
    scaled = np.array(q, dtype=float, copy=True)
    norms = np.reshape(norms, quats.shape[:-1])      # (..., joints)
    for j, start in enumerate(cols[:, 0].tolist()):
        scaled[..., start:start + 4] /= norms[..., j, None]
    return scaled


def as_time_step(dt) -> float:
    """``dt`` as a finite float, or :class:`InputError` (shared by both backends)."""
    if type(dt) is float and math.isfinite(dt):
        return dt                      # the common case, without NumPy's type inspection
    if np.iscomplexobj(dt):
        raise InputError(f"dt must be a real number, got {dt!r}")
    try:
        dt = float(dt)
    except OverflowError:
        raise InputError("dt is too large for a double") from None
    except (TypeError, ValueError):
        raise InputError(f"dt must be a number, got {dt!r}") from None
    if not np.isfinite(dt):
        raise InputError("dt must be finite")
    return dt


def singular_pivot(joint: str) -> ModelError:
    """The error of forward dynamics at a joint whose pivot ``D`` is not positive definite.

    One message for both backends: the kernels' status and the reference's
    factorizations (``rbd.reference.aba.pivot``, ``rbd.reference.crba.ltl``) name
    the joint where the inward elimination, from the leaves, meets the singular
    pivot.
    """
    return ModelError(f"forward dynamics is undefined: the articulated inertia D of joint "
                      f"{joint!r} is not positive definite (the joint moves no inertia)")


def singular_inertia() -> ModelError:
    """The error of constrained dynamics where ``M`` is not positive definite.

    One message for both backends: the kernels' tree-sparse factor of ``M``
    (``rbd._kernels.crba.ltl``) and the reference's Cholesky factor
    (:func:`rbd.reference.constrained.delassus_factor`) both stop there.
    """
    return ModelError("constrained dynamics is undefined: the joint-space inertia M is not "
                      "positive definite at this state (a joint moves no inertia)")
