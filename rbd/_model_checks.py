"""The model builder's parameter checks: numbers, transforms, inertias, gravity, parent arrays.

Each check returns the checked value as a float array, or raises
:class:`~rbd.errors.ModelError` naming the body and what is wrong.
"""

from __future__ import annotations

import numpy as np

from .errors import ModelError
from .spatial import inertia_parts, mcI, plux, plux_parts

#: Largest magnitude accepted for a length, mass or inertia entry: products of a
#: few such numbers (a spatial inertia moved through a transform) stay finite in
#: double precision, far beyond any physical system in SI units.
MAX_MAGNITUDE = 1e100

#: Tolerance of the inertia checks, relative to the largest principal moment: a
#: principal moment may be below zero, and the two smaller ones may sum to less
#: than the largest, by this fraction of the largest.  Numbers written with ten
#: or more significant digits (as tools that export URDF do) stay inside it.
INERTIA_RTOL = 1e-9

#: Absolute floor of that tolerance, in kg m² per kg of body mass (at least 1 kg):
#: far below any physical moment, it accepts inertias that are zero up to round-off.
INERTIA_ATOL = 1e-15


def _as_matrix(value, shape, what: str, body: str) -> np.ndarray:
    if np.iscomplexobj(value):
        raise ModelError(f"body {body!r}: {what} must be real, got complex values")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelError(f"body {body!r}: {what} is not numeric ({exc})") from None
    if arr.shape != shape:
        raise ModelError(f"body {body!r}: {what} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"body {body!r}: {what} has non-finite entries")
    if arr.size and np.abs(arr).max() > MAX_MAGNITUDE:
        raise ModelError(f"body {body!r}: {what} has entries above {MAX_MAGNITUDE:g} in "
                         "magnitude (their products would overflow)")
    return arr


def real_scalar(value, what: str, *, limit: float | None = MAX_MAGNITUDE, text: bool = True,
                wording: str | None = None) -> float:
    """``value`` as a finite float of magnitude at most ``limit``, or :class:`ModelError`.

    Each message opens with ``what`` and says what is wrong (complex, not a number, not
    finite, too large); ``wording``, when given, is the one message of every failure
    instead (``{what}`` and ``{value!r}`` filled in).  ``text=False`` refuses a string
    even when it spells a number.
    """
    def refused(problem: str) -> ModelError:
        message = wording.format(what=what, value=value) if wording else f"{what} {problem}"
        return ModelError(message)

    if isinstance(value, complex | np.complexfloating) or (not text and isinstance(value, str)):
        raise refused(f"must be real, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise refused(f"is not a number: {value!r}") from None
    if not np.isfinite(x):
        raise refused("is not finite")
    if limit is not None and abs(x) > limit:
        raise refused(f"{x:g} is above {limit:g} in magnitude (its products would overflow)")
    return x


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """``max|a - b| <= atol`` (what the builder's checks need, without allclose's cost)."""
    return float(np.abs(a - b).max()) <= atol


def inertia_violation(m: float, Ic: np.ndarray, scale: float | None = None) -> str | None:
    """The physical condition ``Ic`` breaks beyond the tolerance, with its numbers, or None.

    The principal moments must be non-negative and obey the triangle inequality,
    within ``INERTIA_RTOL * scale`` (``scale``: the largest principal moment by
    default), never below ``INERTIA_ATOL`` kg m² per kg of mass.
    """
    lam = np.linalg.eigvalsh(Ic)
    scale = float(np.abs(lam).max()) if scale is None else scale
    tol = max(INERTIA_RTOL * scale, INERTIA_ATOL * max(1.0, m))
    moments = "[" + ", ".join(f"{x:.6g}" for x in lam) + "] kg m^2"
    if lam[0] < -tol:
        return (f"principal moments {moments} are not all >= 0 (the rotational inertia is "
                "not positive semi-definite)")
    if lam[0] + lam[1] < lam[2] - tol:
        return (f"principal moments {moments} break the triangle inequality: "
                f"{lam[0]:.6g} + {lam[1]:.6g} = {lam[0] + lam[1]:.6g} < {lam[2]:.6g}")
    return None


def _check_inertia(m: float, Ic: np.ndarray, body: str) -> None:
    if m < 0:
        raise ModelError(f"body {body!r}: negative mass {m:g}")
    if not _close(Ic, Ic.T, 1e-9 * max(1.0, np.abs(Ic).max())):
        raise ModelError(f"body {body!r}: rotational inertia is not symmetric")
    # the builder's scale is the largest entry (at most the largest principal moment)
    problem = inertia_violation(m, 0.5 * (Ic + Ic.T), scale=max(1e-300, np.abs(Ic).max()))
    if problem:
        raise ModelError(f"body {body!r}: {problem}")


def _parse_inertia(inertia, body: str, check: bool = True) -> np.ndarray:
    if inertia is None:
        return np.zeros((6, 6))
    if isinstance(inertia, tuple | list) and len(inertia) == 3:
        m, c, Ic = inertia
        m = real_scalar(m, f"body {body!r}: mass")
        c = _as_matrix(c, (3,), "centre of mass", body)
        Ic = _as_matrix(Ic, (3, 3), "rotational inertia", body)
        if check:
            _check_inertia(m, Ic, body)
        I = mcI(m, c, Ic)
        if not np.all(np.isfinite(I)):
            raise ModelError(f"body {body!r}: the spatial inertia overflows (mass {m:g}, "
                             f"centre of mass {c.tolist()})")
        return I
    I = _as_matrix(inertia, (6, 6), "spatial inertia", body)
    if not _close(I, I.T, 1e-9 * max(1.0, np.abs(I).max())):
        raise ModelError(f"body {body!r}: spatial inertia is not symmetric")
    m, c, Ic = inertia_parts(I)
    if m < 0:
        raise ModelError(f"body {body!r}: negative mass {m:g}")
    if not _close(I, mcI(m, c, Ic), 1e-9 * max(1.0, np.abs(I).max())):
        raise ModelError(f"body {body!r}: not a rigid-body spatial inertia")
    if check:
        _check_inertia(m, Ic, body)
    return I


def _parse_X_tree(X_tree, body: str) -> np.ndarray:
    if X_tree is None:
        return np.eye(6)
    X = None
    if isinstance(X_tree, tuple) and len(X_tree) == 2:
        E = _as_matrix(X_tree[0], (3, 3), "X_tree rotation", body)
        r = _as_matrix(X_tree[1], (3,), "X_tree translation", body)
    else:
        X = _as_matrix(X_tree, (6, 6), "X_tree", body)
        E, r = plux_parts(X)
    if not _close(E @ E.T, _IDENTITY3, 1e-9) or np.linalg.det(E) < 0:
        raise ModelError(f"body {body!r}: X_tree rotation is not a proper rotation")
    X_checked = plux(E, r)
    if X is not None and not _close(X, X_checked, 1e-9 * max(1.0, np.abs(X).max())):
        raise ModelError(f"body {body!r}: X_tree is not a Plücker motion transform")
    return X_checked


_IDENTITY3 = np.eye(3)


def _check_gravity(gravity) -> np.ndarray:
    """``gravity`` as a read-only finite real 3-vector (:class:`ModelError` otherwise)."""
    try:
        if np.iscomplexobj(gravity):
            raise TypeError("complex values")
        g = np.array(gravity, dtype=float).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"gravity must be a finite real 3-vector, got {gravity!r}") from None
    if g.shape != (3,) or not np.all(np.isfinite(g)) or np.abs(g).max() > MAX_MAGNITUDE:
        raise ModelError(f"gravity must be a finite 3-vector, got {gravity!r}")
    g.setflags(write=False)
    return g


def _parent_index(p, body: str, n: int) -> int:
    """A parent entry of ``from_arrays`` as an int in ``[-1, n)``."""
    if isinstance(p, bool | np.bool_) or not isinstance(p, int | np.integer | float | np.floating):
        raise ModelError(f"body {body!r}: parent must be an integer index, got {p!r}")
    if not float(p).is_integer():
        raise ModelError(f"body {body!r}: parent must be an integer index, got {p!r}")
    if not -1 <= int(p) < n:
        raise ModelError(f"body {body!r}: unknown parent {p}")
    return int(p)


def _build_order(parent: list[int], names: list[str]) -> list[int]:
    """The bodies of a checked parent array in an order with parents first (cycles refused)."""
    n = len(parent)
    order, state = [], [0] * n  # 0 new, 1 on stack, 2 done
    for start in range(n):
        path, i = [], start
        while i != -1 and state[i] == 0:
            state[i] = 1
            path.append(i)
            i = int(parent[i])
        if i != -1 and state[i] == 1:
            raise ModelError(f"body {names[i]!r}: the parent array has a cycle through it")
        for j in reversed(path):
            state[j] = 2
            order.append(j)
    return order
