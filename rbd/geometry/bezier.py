r"""Bézier curves, splines and tensor-product patches of any degree.

One family serves numbers and symbols.  A curve of degree ``n`` is
:math:`x(s) = \sum_{i=0}^n B_i^n(s) P_i` with the Bernstein polynomials
:math:`B_i^n(t) = \binom{n}{i} t^i (1-t)^{n-i}`, ``s ∈ [0, 1]``; a patch of
degree ``(m, n)`` is :math:`x(u, v) = \sum_{ij} B_i^m(u) B_j^n(v) P_{ij}`.

* Numbers are evaluated in Bernstein form through the hodographs,
  :math:`x^{(k)}(s) = \tfrac{n!}{(n-k)!}\sum_i B_i^{n-k}(s)\,\Delta^k P_i`.
* A sympy parameter with numeric control points gets the same polynomial in
  powers of the parameter, :math:`c = M P` (:func:`bernstein_to_power`), which
  is shorter to differentiate: a seven-point curve is a single sextic and a
  5×5 patch a single bi-quartic (no pieces, no ``Piecewise``).
* Symbolic control points keep the Bernstein form, in sympy.

:class:`CubicBezier` and :class:`BezierPatch` are the cubic and bicubic
members; :class:`BezierSpline` chains cubic segments.
"""

from __future__ import annotations

from math import comb, perm

import numpy as np

from ..errors import InputError
from .backend import NUMPY, orders, points
from .curves import Curve
from .surfaces import Surface

__all__ = [
    "bernstein",
    "bernstein3",
    "bernstein_to_power",
    "BezierCurve",
    "BezierSurface",
    "CubicBezier",
    "BezierPatch",
    "BezierSpline",
]

#: Power-basis coefficients this small relative to the control points are round-off.
CHOP_POWER = 1e-14


def bernstein(n: int, t) -> list:
    r"""The Bernstein polynomials of degree ``n``, :math:`B_i^n(t) = \binom{n}{i} t^i (1-t)^{n-i}`.

    Returns a list of ``n + 1`` values (floats or sympy expressions).
    """
    return [comb(n, i) * t**i * (1 - t) ** (n - i) for i in range(n + 1)]


def bernstein3(t, k: int = 0) -> list:
    r"""The four cubic Bernstein polynomials :math:`B_i^3(t)` or their ``k``-th derivatives.

    .. math::

        \frac{d^k B_i^n}{dt^k} = \frac{n!}{(n-k)!}
            \sum_{j=0}^{k} (-1)^{k-j}\binom{k}{j} B_{i-j}^{n-k}(t),

    with :math:`B_i^{n-k} = 0` outside :math:`0 \le i \le n-k`.

    Parameters
    ----------
    t : float or sympy expression
    k : int, 0 to 3 (higher derivatives are zero)

    Returns
    -------
    list of 4 scalars, :math:`[B_0^{(k)}(t), \dots, B_3^{(k)}(t)]`.
    """
    n = 3
    if k > n:
        return [0 * t] * (n + 1)
    low = bernstein(n - k, t)
    return [perm(n, k) * sum((-1) ** (k - j) * comb(k, j) * low[i - j]
                             for j in range(k + 1) if 0 <= i - j <= n - k)
            for i in range(n + 1)]


def bernstein_to_power(n: int) -> np.ndarray:
    r"""The matrix ``M`` (n+1, n+1) with :math:`B_i^n(t) = \sum_a M_{ai} t^a`.

    :math:`M_{ai} = \binom{n}{a}\binom{a}{i}(-1)^{a-i}` for :math:`i \le a`: the
    power coefficients of a Bézier curve are :math:`c = M P`, i.e.
    :math:`c_a = \binom{n}{a}\Delta^a P_0`.
    """
    M = np.zeros((n + 1, n + 1))
    for a in range(n + 1):
        for i in range(a + 1):
            M[a, i] = comb(n, a) * comb(a, i) * (-1) ** (a - i)
    return M


def _control_net(value, ndim: int, what: str) -> np.ndarray:
    """Control points ``(n + 1, 3)`` or ``(m + 1, n + 1, 3)``: finite numbers or sympy."""
    P = points(value, None, what)
    if P.ndim != ndim or P.shape[-1] != 3 or any(k < 2 for k in P.shape[:-1]):
        shape = "(n + 1, 3)" if ndim == 2 else "(m + 1, n + 1, 3)"
        raise InputError(f"{what} must have shape {shape} with degrees >= 1, got {P.shape}")
    return P


def _power_form(C: np.ndarray, P: np.ndarray) -> np.ndarray | None:
    """Power coefficients ``C`` with round-off (below CHOP_POWER of the net's size) set to 0.

    ``None`` for a symbolic net, which keeps the Bernstein form.
    """
    if P.dtype == object:
        return None
    C = C.copy()
    C[np.abs(C) < CHOP_POWER * max(1.0, np.abs(P).max())] = 0.0
    return C


def _weighted(L, weights, P: np.ndarray):
    """``Σ_i weights[i] P[i]`` for a (possibly symbolic) ``P`` of shape ``(k, 3)``."""
    return L.vector(*[sum(w * p[c] for w, p in zip(weights, P, strict=True))
                      for c in range(3)])


class BezierCurve(Curve):
    r"""The Bézier curve of degree ``n``, :math:`x(s) = \sum_{i=0}^n B_i^n(s) P_i`, ``s ∈ [0, 1]``.

    Parameters
    ----------
    control_points : (n + 1, 3) array_like
        ``P_0 … P_n`` (numbers or sympy expressions); the curve starts at
        ``P_0`` and ends at ``P_n``.

    Notes
    -----
    One polynomial of degree ``n`` (not a piecewise spline), evaluated as the
    module notes say.  The polynomial extends beyond ``[0, 1]``, where the
    curve keeps going.
    """

    domain = (0.0, 1.0)

    def __init__(self, control_points):
        what = f"{type(self).__name__} control_points"
        self.control_points = _control_net(control_points, 2, what)
        P, n = self.control_points, self.control_points.shape[0] - 1
        self.degree = n
        #: :math:`\tfrac{n!}{(n-k)!}\Delta^k P`: the control points of :math:`x^{(k)}`.
        self.hodographs = [perm(n, k) * np.diff(P, k, axis=0) for k in range(n + 1)]
        self.power = _power_form(bernstein_to_power(n) @ P, P)

    def _params(self):
        return (self.control_points,)

    def _derivatives(self, s, L, order):
        n, H = self.degree, self.hodographs
        if L is NUMPY:
            return [np.array(bernstein(n - k, float(s))) @ H[k]
                    if k <= n else np.zeros(3) for k in range(order + 1)]
        if self.power is None:
            return [_weighted(L, bernstein(n - k, s), H[k])
                    if k <= n else L.vector(0, 0, 0) for k in range(order + 1)]
        C = self.power
        return [L.vector(*[L.polynomial((perm(a, k) * C[a, c], s ** (a - k))
                                        for a in range(k, n + 1)) for c in range(3)])
                for k in range(order + 1)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(control_points={self.control_points.tolist()})"


class BezierSurface(Surface):
    r"""The tensor-product Bézier patch :math:`x(u, v) = \sum_{ij} B_i^m(u) B_j^n(v) P_{ij}`.

    Parameters
    ----------
    control_points : (m + 1, n + 1, 3) array_like
        The control net (numbers or sympy expressions); ``u, v ∈ [0, 1]`` and
        the normal points along :math:`x_u\times x_v`.

    Notes
    -----
    One polynomial of degree ``m`` in ``u`` and ``n`` in ``v``.  Numbers use
    the Bernstein form with the hodographs in each direction; sympy
    arguments the power form :math:`\sum_{ab} c_{ab} u^a v^b`,
    :math:`c = M_m P M_n^T` (:func:`bernstein_to_power`).
    """

    domain = ((0.0, 1.0), (0.0, 1.0))

    def __init__(self, control_points):
        what = f"{type(self).__name__} control_points"
        self.control_points = _control_net(control_points, 3, what)
        P = self.control_points
        m, n = (k - 1 for k in P.shape[:2])
        self.degree = (m, n)
        #: Control nets of :math:`\partial_u^i\partial_v^j x`: differences in each direction.
        self.hodographs = {(i, j): perm(m, i) * perm(n, j)
                           * np.diff(np.diff(P, i, axis=0), j, axis=1)
                           for i in range(m + 1) for j in range(n + 1)}
        self.power = _power_form(np.einsum("ai,bj,ijk->abk", bernstein_to_power(m),
                                           bernstein_to_power(n), P), P)
        self._stacked = None if P.dtype == object else _stack(self.hodographs, m, n)

    @classmethod
    def from_heights(cls, heights, half_width: float = 1.0) -> BezierSurface:
        """Patch over ``[-w, w]²`` with evenly spaced x, y control points and z = ``heights``.

        ``heights`` is (m + 1, n + 1); ``x`` grows with ``u`` and ``y`` with
        ``v`` — linearly, since evenly spaced control points reproduce a
        linear function — so the normal points towards +z.
        """
        Z = np.asarray(heights, dtype=float)
        if Z.ndim != 2 or min(Z.shape) < 2:
            raise InputError(f"heights must be a 2-D array with both sides >= 2, got {Z.shape}")
        X, Y = np.meshgrid(np.linspace(-half_width, half_width, Z.shape[0]),
                           np.linspace(-half_width, half_width, Z.shape[1]), indexing="ij")
        return cls(np.stack([X, Y, Z], axis=-1))

    def _params(self):
        return (self.control_points,)

    def _partials(self, u, v, L, order):
        (m, n), keys, H = self.degree, orders(order), self.hodographs
        if L is NUMPY:
            X = np.einsum("ia,jb,ijabk->ijk", _hodograph_basis(m, float(u)),
                          _hodograph_basis(n, float(v)), self._stacked)
            return {(i, j): X[i, j] for i, j in keys}
        if self.power is None:
            return {(i, j): _weighted(L, [a * b for a in bernstein(m - i, u)
                                          for b in bernstein(n - j, v)],
                                      H[i, j].reshape(-1, 3))
                    if i <= m and j <= n else L.vector(0, 0, 0) for i, j in keys}
        C = self.power
        return {(i, j): L.vector(*[L.polynomial(
            (perm(a, i) * perm(b, j) * C[a, b, c], u ** (a - i) * v ** (b - j))
            for a in range(i, m + 1) for b in range(j, n + 1)) for c in range(3)])
            for i, j in keys}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(control_points={self.control_points.tolist()})"


#: Highest derivative order the surfaces evaluate (:meth:`Surface.partials`).
_MAX_ORDER = 3


def _hodograph_basis(n: int, t: float) -> np.ndarray:
    """Row ``k`` (0 to 3): :math:`B^{n-k}(t)`, zero-padded to ``n + 1`` (zero for ``k > n``)."""
    B = np.zeros((_MAX_ORDER + 1, n + 1))
    for k in range(min(n, _MAX_ORDER) + 1):
        B[k, :n + 1 - k] = bernstein(n - k, t)
    return B


def _stack(hodographs: dict, m: int, n: int) -> np.ndarray:
    """The nets of the partials, zero-padded into one array ``(4, 4, m + 1, n + 1, 3)``."""
    out = np.zeros((_MAX_ORDER + 1, _MAX_ORDER + 1, m + 1, n + 1, 3))
    for (i, j), D in hodographs.items():
        if i <= _MAX_ORDER and j <= _MAX_ORDER:
            out[i, j, :m + 1 - i, :n + 1 - j] = D
    return out


class CubicBezier(BezierCurve):
    r"""The cubic Bézier curve :math:`x(s) = \sum_{i=0}^3 B_i^3(s) P_i`, ``s ∈ [0, 1]``.

    A :class:`BezierCurve` whose ``control_points`` have shape ``(4, 3)``.
    """

    def __init__(self, control_points):
        super().__init__(points(control_points, (4, 3), "CubicBezier control_points"))


class BezierPatch(BezierSurface):
    r"""The bicubic Bézier patch :math:`x = \sum_{ij} B_i^3(u) B_j^3(v) P_{ij}`.

    A :class:`BezierSurface` whose ``control_points`` have shape ``(4, 4, 3)``;
    ``u, v ∈ [0, 1]``, the normal points along :math:`x_u\times x_v`.
    """

    def __init__(self, control_points):
        super().__init__(points(control_points, (4, 4, 3), "BezierPatch control_points"))

    @classmethod
    def from_heights(cls, heights, half_width: float = 1.0) -> BezierPatch:
        """Patch over the square ``[-w, w]²`` with evenly spaced x, y control points.

        ``heights`` (4×4) are the control points' z values; ``x`` grows with
        ``u`` and ``y`` with ``v``, so the normal points towards +z.
        """
        Z = np.asarray(heights, dtype=float)
        if Z.shape != (4, 4):
            raise InputError(f"heights must have shape (4, 4), got {Z.shape}")
        return super().from_heights(Z, half_width)


class BezierSpline(Curve):
    r"""A chain of cubic Bézier segments, ``s ∈ [0, nseg]``, segment ``k`` on ``[k, k+1]``.

    ``control_points`` has ``3 nseg + 1`` rows; segment ``k`` uses rows
    ``3k .. 3k+3``.  :meth:`interpolate` builds the C²-continuous spline
    through given points.  With a symbolic parameter the position is a
    ``sympy.Piecewise`` over the segments.
    """

    def __init__(self, control_points):
        P = points(control_points, None, "BezierSpline control_points")
        if P.ndim != 2 or P.shape[1] != 3 or (P.shape[0] - 1) % 3 or P.shape[0] < 4:
            raise InputError("BezierSpline control_points must have shape (3k+1, 3), k >= 1; "
                             f"got {P.shape}")
        self.control_points = P
        self.nseg = (P.shape[0] - 1) // 3
        self.domain = (0.0, float(self.nseg))
        self._segments = [CubicBezier(P[3 * k: 3 * k + 4]) for k in range(self.nseg)]

    @classmethod
    def interpolate(cls, points, closed: bool = False) -> BezierSpline:
        r"""The C² cubic spline through ``points`` (natural ends, or periodic if ``closed``).

        The nodal derivatives :math:`D_i` solve
        :math:`D_{i-1} + 4 D_i + D_{i+1} = 3 (P_{i+1} - P_{i-1})`; segment ``i``
        then has control points :math:`P_i,\ P_i + D_i/3,\ P_{i+1} - D_{i+1}/3,\ P_{i+1}`.
        """
        P = np.asarray(_interpolation_points(points), dtype=float)
        if closed:
            P = np.vstack([P, P[:1]])
        n = P.shape[0] - 1  # number of segments
        A = np.zeros((n + 1, n + 1))
        rhs = np.zeros((n + 1, 3))
        for i in range(1, n):
            A[i, i - 1:i + 2] = (1.0, 4.0, 1.0)
            rhs[i] = 3 * (P[i + 1] - P[i - 1])
        if closed:  # D_0 = D_n, and the row for node 0 wraps around
            A[0, [n - 1, 0, 1]] = (1.0, 4.0, 1.0)
            rhs[0] = 3 * (P[1] - P[n - 1])
            A[n, [0, n]] = (1.0, -1.0)
        else:  # natural ends: zero second derivative
            A[0, :2] = (2.0, 1.0)
            rhs[0] = 3 * (P[1] - P[0])
            A[n, n - 1:] = (1.0, 2.0)
            rhs[n] = 3 * (P[n] - P[n - 1])
        D = np.linalg.solve(A, rhs)
        rows = [P[0]]
        for i in range(n):
            rows += [P[i] + D[i] / 3, P[i + 1] - D[i + 1] / 3, P[i + 1]]
        return cls(np.array(rows))

    def _params(self):
        return (self.control_points,)

    def segment(self, k: int) -> CubicBezier:
        """Segment ``k`` as a :class:`CubicBezier` on its local parameter ``s - k``."""
        return self._segments[k]

    def _derivatives(self, s, L, order):
        if L is NUMPY:
            k = int(np.clip(np.floor(s), 0, self.nseg - 1))
            return self._segments[k]._derivatives(s - k, L, order)
        import sympy

        pieces = [seg._derivatives(s - k, L, order) for k, seg in enumerate(self._segments)]
        return [sympy.Matrix([
            sympy.Piecewise(*[(pieces[k][d][c], s < k + 1) for k in range(self.nseg - 1)],
                            (pieces[-1][d][c], True))
            for c in range(3)]) for d in range(order + 1)]


def _interpolation_points(value) -> np.ndarray:
    P = points(value, None, "BezierSpline.interpolate points")
    if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 3:
        raise InputError(f"points must have shape (n, 3) with n >= 3, got {P.shape}")
    return P
