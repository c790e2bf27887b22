r"""Parametric curves and surfaces with moving frames.

The shapes here serve two users.  Joints built from geometry (a bead on a
wire, a body sliding on a surface, two surfaces held in contact: Guenter &
Lee, §5) need a curve's Frenet frame or a surface frame as a 4×4 pose, often
as a *symbolic* expression to be differentiated.  Contact dynamics in
contact coordinates (Pai, Ascher & Kry, §6; :mod:`rbd.contact`) needs the
same frames numerically, with the metric, curvature and torsion of the
surface and the first two time derivatives of the frame.

Every formula is written once against a small math backend: given floats the
methods return NumPy arrays; given sympy expressions (a coordinate, or a
shape parameter such as a symbolic radius) they return sympy matrices built
with ``sympy.sin``, ``sympy.sqrt``, ... .  The backend is detected from the
arguments or forced with ``lib="numpy"`` / ``lib="sympy"`` (the modules
themselves are accepted too).

>>> import numpy as np, sympy
>>> sphere = Sphere(2.0)
>>> sphere.frame(0.3, 0.1).shape
(4, 4)
>>> u, v = sympy.symbols("u v")
>>> sphere.frame(u, v).shape
(4, 4)

Frames
------
*Curve* (Frenet frame, the travelling frame :math:`C(q)` of GL §5):
tangent :math:`T = x'/\lVert x'\rVert`, binormal
:math:`B = (x' \times x'')/\lVert x'\times x''\rVert`, principal normal
:math:`N = B \times T`; ``frame(s) = [[T, N, B, x], [0, 0, 0, 1]]``.
Guenter & Lee name the same columns ``b, p, n``.

*Surface* (the surface frame of GL §5 and the contact frame of Pai §6):
:math:`\hat x = x_u/\lVert x_u\rVert`, unit normal
:math:`n = (x_u\times x_v)/\lVert x_u\times x_v\rVert`, and
:math:`\hat y = n\times\hat x`; ``frame(u, v) = [[x̂, ŷ, n, x], [0, 0, 0, 1]]``.
Pai's :math:`{}^1\mathbf y` (Gram–Schmidt of :math:`c_{,t}` against
:math:`c_{,s}`) is the same vector as :math:`n\times\hat x`.  Guenter & Lee
write :math:`n = p_0\times p_1` with unit tangents; that is a unit vector only
when :math:`x_u \perp x_v`, so the normal is normalised here.  The normal
points along :math:`x_u\times x_v`: choose the parametrisation (or
:meth:`Surface.flipped`) so that it points *out of* the body the surface
bounds.

Curvature conventions
---------------------
First and second fundamental forms are the textbook ones,
:math:`I = [x_i\cdot x_j]` and :math:`II = [n\cdot x_{ij}]`, and the shape
operator is :math:`S = I^{-1} II` (Weingarten: :math:`n_{,j} = -x_k S_{kj}`).
With an *outward* normal a convex surface therefore has negative principal
curvatures (a sphere of radius r: :math:`S = -\mathbf 1/r`).  The contact
geometry of Montana (Pai's reference [18]) uses the opposite sign: in the
frame basis, the metric :math:`M`, curvature form :math:`K` and torsion form
:math:`T` are defined by

.. math::

    R^T [x_u\; x_v] = \begin{bmatrix} M \\ 0 \end{bmatrix},\qquad
    [\hat x\;\hat y]^T [n_{,u}\; n_{,v}] = K M,\qquad
    \hat y^T [\hat x_{,u}\;\hat x_{,v}] = T M,

so :math:`K = -M S M^{-1}` is positive definite on a convex surface with
outward normal (a sphere: :math:`K = \mathbf 1/r`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "Curve",
    "Line",
    "Circle",
    "Helix",
    "CubicBezier",
    "BezierSpline",
    "Surface",
    "Plane",
    "Ellipsoid",
    "Sphere",
    "Torus",
    "BezierPatch",
    "bernstein3",
    "frame_jet",
    "contact_forms",
]

# ---------------------------------------------------------------------------
# Math backends: the same formulas on floats (NumPy) and on sympy expressions.
# ---------------------------------------------------------------------------


class _NumpyMath:
    """Scalars are floats, vectors ``(3,)`` arrays, matrices 2-D arrays."""

    name = "numpy"
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sqrt = staticmethod(np.sqrt)
    pi = np.pi

    @staticmethod
    def vector(x, y, z) -> np.ndarray:
        return np.array([x, y, z], dtype=float)

    @staticmethod
    def constant(values) -> np.ndarray:
        return np.array(values, dtype=float)

    @staticmethod
    def cross(a, b) -> np.ndarray:
        return np.array([a[1] * b[2] - a[2] * b[1],
                         a[2] * b[0] - a[0] * b[2],
                         a[0] * b[1] - a[1] * b[0]])

    @staticmethod
    def dot(a, b):
        return a @ b

    @staticmethod
    def matrix(rows) -> np.ndarray:
        return np.array(rows, dtype=float)

    @staticmethod
    def matvec(A, x) -> np.ndarray:
        return A @ x

    @staticmethod
    def frame(x, y, z, o) -> np.ndarray:
        E = np.eye(4)
        E[:3, 0], E[:3, 1], E[:3, 2], E[:3, 3] = x, y, z, o
        return E


class _SympyMath:
    """Scalars are sympy expressions, vectors 3×1 ``sympy.Matrix``."""

    name = "sympy"

    def __init__(self):
        import sympy

        self._sp = sympy
        self.sin, self.cos, self.sqrt, self.pi = sympy.sin, sympy.cos, sympy.sqrt, sympy.pi

    def vector(self, x, y, z):
        return self._sp.Matrix([x, y, z])

    def constant(self, values):
        return self._sp.Matrix(list(values))

    @staticmethod
    def cross(a, b):
        return a.cross(b)

    @staticmethod
    def dot(a, b):
        return a.dot(b)

    def matrix(self, rows):
        return self._sp.Matrix(rows)

    def matvec(self, A, x):
        return self._sp.Matrix(A) * x

    def frame(self, x, y, z, o):
        E = self._sp.eye(4)
        E[:3, 0], E[:3, 1], E[:3, 2], E[:3, 3] = x, y, z, o
        return E


_NUMPY = _NumpyMath()
_SYMPY: _SympyMath | None = None


def _is_symbolic(value) -> bool:
    if type(value).__module__.split(".")[0] == "sympy":
        return True
    if isinstance(value, np.ndarray) and value.dtype == object:
        return any(_is_symbolic(v) for v in value.flat)
    if isinstance(value, list | tuple):
        return any(_is_symbolic(v) for v in value)
    return False


def _math(values: Sequence, lib=None):
    """The backend for ``values``: sympy if any is symbolic or ``lib`` asks for it."""
    global _SYMPY
    name = getattr(lib, "__name__", lib)
    if name not in (None, "numpy", "sympy"):
        raise InputError(f"lib must be 'numpy', 'sympy' or None, got {lib!r}")
    if name == "sympy" or (name is None and any(_is_symbolic(v) for v in values)):
        if _SYMPY is None:
            _SYMPY = _SympyMath()
        return _SYMPY
    return _NUMPY


def _unit(L, a):
    return a / L.sqrt(L.dot(a, a))


def _det2(A):
    return A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]


def _inv2(L, A):
    d = _det2(A)
    return L.matrix([[A[1, 1] / d, -A[0, 1] / d], [-A[1, 0] / d, A[0, 0] / d]])


# Derivatives of cos and sin: d^k/dt^k cos t = _DCOS[k % 4](c, s), and so on.
def _dcos(c, s, k: int):
    return (c, -s, -c, s)[k % 4]


def _dsin(c, s, k: int):
    return (s, c, -s, -c)[k % 4]


def bernstein3(t, k: int = 0) -> list:
    """The four cubic Bernstein polynomials :math:`B_i(t)` or their ``k``-th derivatives.

    Parameters
    ----------
    t : float or sympy expression
    k : int, 0 to 3

    Returns
    -------
    list of 4 scalars, :math:`[B_0^{(k)}(t), \\dots, B_3^{(k)}(t)]`.
    """
    s = 1 - t
    if k == 0:
        return [s**3, 3 * t * s**2, 3 * t**2 * s, t**3]
    if k == 1:
        return [-3 * s**2, 3 * s**2 - 6 * t * s, 6 * t * s - 3 * t**2, 3 * t**2]
    if k == 2:
        return [6 * s, 18 * t - 12, 6 - 18 * t, 6 * t]
    if k == 3:
        return [-6 + 0 * t, 18 + 0 * t, -18 + 0 * t, 6 + 0 * t]
    return [0 * t] * 4


#: Bernstein-to-power change of basis: B_i(t) = Σ_a _BERNSTEIN_POWER[a, i] t^a.
_BERNSTEIN_POWER = np.array([[1.0, 0.0, 0.0, 0.0],
                             [-3.0, 3.0, 0.0, 0.0],
                             [3.0, -6.0, 3.0, 0.0],
                             [-1.0, 3.0, -3.0, 1.0]])


def _power3(t, k: int) -> list:
    """``[d^k t^a / dt^k for a = 0..3]``: the monomial basis used for symbolic Bézier forms."""
    z = 0 * t
    return [[1 + z, t, t**2, t**3], [z, 1 + z, 2 * t, 3 * t**2],
            [z, z, 2 + z, 6 * t], [z, z, z, 6 + z]][k]


def _combine(L, weights, points):
    """``Σ_k weights[k] * points[k]`` for ``points`` of shape ``(n, 3)``."""
    if L is _NUMPY and not _is_symbolic(points):
        return np.asarray(weights, dtype=float) @ points
    return L.vector(*[sum(w * p[c] for w, p in zip(weights, points, strict=True))
                      for c in range(3)])


# ---------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------


class Curve:
    r"""A parametric space curve :math:`x(s)` with its Frenet frame (GL §5).

    Subclasses implement :meth:`_derivatives`; everything else follows from
    :math:`x, x', x'', x'''`.
    """

    #: The parameter interval on which the curve is defined.
    domain: tuple[float, float] = (-np.inf, np.inf)

    def _params(self) -> tuple:
        return ()

    def _derivatives(self, s, L, order: int) -> list:
        raise NotImplementedError

    def derivatives(self, s, order: int = 3, lib=None) -> list:
        """``[x(s), x'(s), ..., x^(order)(s)]``, each a 3-vector.

        Parameters
        ----------
        s : float or sympy expression
        order : int, 0 to 3
        lib : None, "numpy" or "sympy"
        """
        L = _math((s, *self._params()), lib)
        return self._derivatives(s, L, order)

    def position(self, s, lib=None):
        """The point :math:`x(s)`, a 3-vector."""
        return self.derivatives(s, 0, lib)[0]

    def frenet(self, s, lib=None) -> tuple:
        r"""Tangent, principal normal and binormal ``(T, N, B)`` (GL §5).

        .. math::

            T = \frac{x'}{\lVert x'\rVert},\quad
            B = \frac{x'\times x''}{\lVert x'\times x''\rVert},\quad N = B\times T
        """
        L = _math((s, *self._params()), lib)
        x = self._derivatives(s, L, 2)
        T = _unit(L, x[1])  # GL §5: b = f_q / |f_q|
        B = _unit(L, L.cross(x[1], x[2]))  # GL §5: n = b × f_qq / |b × f_qq|
        N = L.cross(B, T)  # GL §5: p = n × b
        return T, N, B

    def frame(self, s, lib=None):
        """The 4×4 Frenet frame ``[[T, N, B, x], [0, 0, 0, 1]]`` (GL §5, ``C(q)``)."""
        L = _math((s, *self._params()), lib)
        T, N, B = self.frenet(s, lib=L.name)
        return L.frame(T, N, B, self._derivatives(s, L, 0)[0])

    def speed(self, s, lib=None):
        r""":math:`\lVert x'(s)\rVert`, arc length per unit parameter."""
        L = _math((s, *self._params()), lib)
        d = self._derivatives(s, L, 1)[1]
        return L.sqrt(L.dot(d, d))

    def curvature(self, s, lib=None):
        r"""Curvature :math:`\kappa = \lVert x'\times x''\rVert / \lVert x'\rVert^3`."""
        L = _math((s, *self._params()), lib)
        x = self._derivatives(s, L, 2)
        w = L.cross(x[1], x[2])
        return L.sqrt(L.dot(w, w)) / L.sqrt(L.dot(x[1], x[1])) ** 3

    def torsion(self, s, lib=None):
        r"""Torsion :math:`\tau = (x'\times x'')\cdot x''' / \lVert x'\times x''\rVert^2`."""
        L = _math((s, *self._params()), lib)
        x = self._derivatives(s, L, 3)
        w = L.cross(x[1], x[2])
        return L.dot(w, x[3]) / L.dot(w, w)

    def sample(self, n: int = 100) -> np.ndarray:
        """Points ``(n, 3)`` at evenly spaced parameters over the (finite) domain."""
        lo, hi = self.domain
        if not (np.isfinite(lo) and np.isfinite(hi)):
            lo, hi = -1.0, 1.0
        return np.array([self.position(s) for s in np.linspace(lo, hi, n)])


class Line(Curve):
    r"""The straight line :math:`x(s) = p + s\,d`.

    A line has no curvature, so its Frenet frame is undefined; :meth:`frame`
    uses the constant unit ``normal`` (perpendicular to ``direction``; chosen
    automatically when not given) as N and ``B = T × N``.
    """

    def __init__(self, point=(0.0, 0.0, 0.0), direction=(1.0, 0.0, 0.0), normal=None):
        self.point = _vector3(point, "Line point")
        self.direction = _vector3(direction, "Line direction")
        if normal is None:
            d = np.asarray(self.direction, dtype=float)
            trial = np.eye(3)[int(np.argmin(np.abs(d)))]
            normal = np.cross(np.cross(d, trial), d)
        self.normal = _vector3(normal, "Line normal")

    def _params(self):
        return (self.point, self.direction, self.normal)

    def _derivatives(self, s, L, order):
        p, d = L.constant(self.point), L.constant(self.direction)
        out = [p + s * d, d]
        return (out + [0 * d, 0 * d])[: order + 1]

    def frenet(self, s, lib=None):
        L = _math((s, *self._params()), lib)
        T = _unit(L, L.constant(self.direction))
        N = _unit(L, L.constant(self.normal))
        N = _unit(L, N - T * L.dot(N, T))
        return T, N, L.cross(T, N)

    def curvature(self, s, lib=None):
        return 0 * s

    def torsion(self, s, lib=None):
        return 0 * s


class Helix(Curve):
    r"""The circular helix :math:`x(s) = (r\cos s,\ r\sin s,\ h\,s)` about the z axis.

    ``pitch`` ``h`` is the rise per radian (as for :class:`rbd.joints.Helical`).
    Curvature :math:`r/(r^2+h^2)`, torsion :math:`h/(r^2+h^2)`.
    """

    def __init__(self, radius=1.0, pitch=0.1):
        self.radius, self.pitch = radius, pitch

    def _params(self):
        return (self.radius, self.pitch)

    def _derivatives(self, s, L, order):
        r, h = self.radius, self.pitch
        c, sn = L.cos(s), L.sin(s)
        out = [L.vector(r * c, r * sn, h * s)]
        for k in range(1, order + 1):
            out.append(L.vector(r * _dcos(c, sn, k), r * _dsin(c, sn, k), h if k == 1 else 0))
        return out


class Circle(Helix):
    r"""The circle :math:`x(s) = (r\cos s,\ r\sin s,\ 0)`; its binormal is +z."""

    def __init__(self, radius=1.0):
        super().__init__(radius, 0)

    def _params(self):
        return (self.radius,)


class CubicBezier(Curve):
    r"""The cubic Bézier curve :math:`x(s) = \sum_{i=0}^3 B_i(s) P_i`, ``s ∈ [0, 1]``."""

    domain = (0.0, 1.0)

    def __init__(self, control_points):
        self.control_points = _points(control_points, (4, 3), "CubicBezier control_points")

    def _params(self):
        return (self.control_points,)

    def _derivatives(self, s, L, order):
        P = self.control_points
        if L is _NUMPY:
            return [_combine(L, bernstein3(s, k), P) for k in range(order + 1)]
        # symbolic: expand in powers of s, which keeps the expressions short
        C = _BERNSTEIN_POWER @ P if P.dtype != object else P
        basis = _power3 if P.dtype != object else bernstein3
        return [_combine(L, basis(s, k), C) for k in range(order + 1)]


class BezierSpline(Curve):
    r"""A chain of cubic Bézier segments, ``s ∈ [0, nseg]``, segment ``k`` on ``[k, k+1]``.

    ``control_points`` has ``3 nseg + 1`` rows; segment ``k`` uses rows
    ``3k .. 3k+3``.  :meth:`interpolate` builds the C²-continuous spline
    through given points.  With a symbolic parameter the position is a
    ``sympy.Piecewise`` over the segments.
    """

    def __init__(self, control_points):
        P = _points(control_points, None, "BezierSpline control_points")
        if P.ndim != 2 or P.shape[1] != 3 or (P.shape[0] - 1) % 3 or P.shape[0] < 4:
            raise InputError("BezierSpline control_points must have shape (3k+1, 3), k >= 1; "
                             f"got {P.shape}")
        self.control_points = P
        self.nseg = (P.shape[0] - 1) // 3
        self.domain = (0.0, float(self.nseg))

    @classmethod
    def interpolate(cls, points, closed: bool = False) -> BezierSpline:
        r"""The C² cubic spline through ``points`` (natural ends, or periodic if ``closed``).

        The nodal derivatives :math:`D_i` solve
        :math:`D_{i-1} + 4 D_i + D_{i+1} = 3 (P_{i+1} - P_{i-1})`; segment ``i``
        then has control points :math:`P_i,\ P_i + D_i/3,\ P_{i+1} - D_{i+1}/3,\ P_{i+1}`.
        """
        P = _points(points, None, "BezierSpline.interpolate points")
        if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 3:
            raise InputError(f"points must have shape (n, 3) with n >= 3, got {P.shape}")
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
        return CubicBezier(self.control_points[3 * k: 3 * k + 4])

    def _derivatives(self, s, L, order):
        if L is _NUMPY:
            k = int(np.clip(np.floor(s), 0, self.nseg - 1))
            return self.segment(k)._derivatives(s - k, L, order)
        import sympy

        pieces = [self.segment(k)._derivatives(s - k, L, order) for k in range(self.nseg)]
        out = []
        for d in range(order + 1):
            out.append(sympy.Matrix([
                sympy.Piecewise(*[(pieces[k][d][c], s < k + 1) for k in range(self.nseg - 1)],
                                (pieces[-1][d][c], True))
                for c in range(3)]))
        return out


# ---------------------------------------------------------------------------
# Surfaces
# ---------------------------------------------------------------------------


def _jet(d, i, j, du, dv) -> np.ndarray:
    """Rows: value, first, second t-derivative of ``∂u^i ∂v^j x`` along ``(u, v) + t (du, dv)``."""
    return np.array([d[i, j],
                     d[i + 1, j] * du + d[i, j + 1] * dv,
                     d[i + 2, j] * du**2 + 2 * d[i + 1, j + 1] * du * dv + d[i, j + 2] * dv**2])


def _cross_jet(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Second-order jet of ``a × b`` from the jets of ``a`` and ``b`` (Leibniz rule)."""
    cross = _NUMPY.cross
    return np.array([cross(a[0], b[0]),
                     cross(a[1], b[0]) + cross(a[0], b[1]),
                     cross(a[2], b[0]) + 2 * cross(a[1], b[1]) + cross(a[0], b[2])])


def _unit_jet(w: np.ndarray) -> np.ndarray:
    r"""Second-order jet of :math:`\hat w = w/\lVert w\rVert`.

    With :math:`s = \lVert w\rVert`, :math:`\dot s = \hat w\cdot\dot w` and
    :math:`P = 1 - \hat w\hat w^T`:
    :math:`\dot{\hat w} = P\dot w/s` and
    :math:`\ddot{\hat w} = (P\ddot w - 2\dot s\,\dot{\hat w}
    - \hat w\,(\dot{\hat w}\cdot\dot w))/s`.
    """
    w0, w1, w2 = w
    s = np.sqrt(w0 @ w0)
    h0 = w0 / s
    s1 = h0 @ w1
    h1 = (w1 - h0 * s1) / s
    h2 = (w2 - h0 * (h0 @ w2) - 2 * s1 * h1 - h0 * (h1 @ w1)) / s
    return np.array([h0, h1, h2])


def frame_jet(partials: dict, du: float, dv: float) -> tuple:
    r"""The surface frame and its first two time derivatives along a straight parameter path.

    Parameters
    ----------
    partials : dict
        Numeric partial derivatives up to order 3, from :meth:`Surface.partials`.
    du, dv : float
        Parameter rates :math:`(\dot u, \dot v)` (parameter accelerations zero).

    Returns
    -------
    E, E_dot, E_ddot : (4, 4) ndarrays
        :math:`E`, :math:`\dot E`, :math:`\ddot E` of ``frame(u + t du, v + t dv)``
        at ``t = 0``, by second-order Taylor arithmetic on :math:`x_u, x_v`.
    """
    p = _jet(partials, 0, 0, du, dv)
    a = _jet(partials, 1, 0, du, dv)  # jet of x_u
    b = _jet(partials, 0, 1, du, dv)  # jet of x_v
    xh = _unit_jet(a)  # Pai §6: ¹x = c_s / |c_s|
    n = _unit_jet(_cross_jet(a, b))  # Pai §6: ¹z
    yh = _cross_jet(n, xh)  # Pai §6: ¹y
    E = np.zeros((3, 4, 4))
    E[:, :3, 0], E[:, :3, 1], E[:, :3, 2], E[:, :3, 3] = xh, yh, n, p
    E[0, 3, 3] = 1.0
    return E[0], E[1], E[2]


def _forms(d: dict, L):
    """``(x_u, x_v, n, I, II)`` from partial derivatives up to order 2."""
    xu, xv = d[1, 0], d[0, 1]
    n = _unit(L, L.cross(xu, xv))
    F, M = L.dot(xu, xv), L.dot(n, d[1, 1])
    I = L.matrix([[L.dot(xu, xu), F], [F, L.dot(xv, xv)]])
    II = L.matrix([[L.dot(n, d[2, 0]), M], [M, L.dot(n, d[0, 2])]])
    return xu, xv, n, I, II


def contact_forms(partials: dict, lib=None) -> tuple:
    r"""Montana's metric ``M`` (2×2), curvature form ``K`` (2×2) and torsion ``T`` (1×2).

    In the frame basis :math:`(\hat x, \hat y)` (module notes):

    .. math::

        M = \begin{bmatrix}\hat x\cdot x_u & \hat x\cdot x_v\\
                             0 & \hat y\cdot x_v\end{bmatrix},\quad
        K = -M S M^{-1},\quad
        T = \frac{1}{\lVert x_u\rVert}
            [\hat y\cdot x_{uu},\ \hat y\cdot x_{uv}]\, M^{-1},

    with :math:`S = I^{-1} II` the shape operator.  These give the frame's
    twist relative to the surface, Pai (9) (:func:`rbd.contact.frame_jacobian`).

    Parameters
    ----------
    partials : dict
        Partial derivatives up to order 2 (:meth:`Surface.partials`).
    """
    L = _math(list(partials.values()), lib)
    xu, xv, n, I, II = _forms(partials, L)
    r = L.sqrt(L.dot(xu, xu))
    xh = xu / r
    yh = L.cross(n, xh)
    M = L.matrix([[r, L.dot(xh, xv)], [0 * r, L.dot(yh, xv)]])
    Minv = _inv2(L, M)
    K = -(M @ _inv2(L, I) @ II @ Minv)
    T = L.matrix([[L.dot(yh, partials[2, 0]) / r, L.dot(yh, partials[1, 1]) / r]]) @ Minv
    return M, K, T


class Surface:
    r"""A parametric surface :math:`x(u, v)` with its surface frame and curvature.

    Subclasses implement :meth:`_partials`, returning the analytic partial
    derivatives :math:`\partial_u^i\partial_v^j x` up to total order 3 (third
    derivatives are needed by the velocity-product terms of contact
    dynamics).  Everything else is generic.
    """

    #: Parameter ranges ``((u_min, u_max), (v_min, v_max))`` of the chart.
    domain: tuple[tuple[float, float], tuple[float, float]] = ((-np.inf, np.inf),
                                                               (-np.inf, np.inf))

    def _params(self) -> tuple:
        return ()

    def _partials(self, u, v, L, order: int) -> dict:
        raise NotImplementedError

    # --- derivatives ----------------------------------------------------------
    def partials(self, u, v, order: int = 2, lib=None) -> dict:
        r"""Partial derivatives ``{(i, j): ∂u^i ∂v^j x}`` for ``i + j <= order``.

        Parameters
        ----------
        u, v : float or sympy expression
        order : int, 0 to 3
        lib : None, "numpy" or "sympy"

        Returns
        -------
        dict mapping ``(i, j)`` to a 3-vector (``(3,)`` array or 3×1 sympy Matrix);
        ``(0, 0)`` is the point, ``(1, 0)`` is :math:`x_u`, ``(1, 1)`` is :math:`x_{uv}`.
        """
        if not 0 <= order <= 3:
            raise InputError(f"order must be 0..3, got {order}")
        L = _math((u, v, *self._params()), lib)
        return self._partials(u, v, L, order)

    def position(self, u, v, lib=None):
        """The point :math:`x(u, v)`."""
        return self.partials(u, v, 0, lib)[0, 0]

    def tangents(self, u, v, lib=None) -> tuple:
        r"""The tangent vectors :math:`(x_u, x_v)`."""
        d = self.partials(u, v, 1, lib)
        return d[1, 0], d[0, 1]

    # --- frame --------------------------------------------------------------
    def normal(self, u, v, lib=None):
        r"""Unit normal :math:`n = x_u\times x_v / \lVert x_u\times x_v\rVert` (Pai §6, ¹z)."""
        L = _math((u, v, *self._params()), lib)
        d = self._partials(u, v, L, 1)
        return _unit(L, L.cross(d[1, 0], d[0, 1]))

    def rotation(self, u, v, lib=None):
        r"""The frame's axes ``[x̂, ŷ, n]`` as a 3×3 rotation (Pai §6; GL §5)."""
        return self.frame(u, v, lib)[:3, :3]

    def frame(self, u, v, lib=None):
        r"""The 4×4 surface frame ``[[x̂, ŷ, n, x], [0, 0, 0, 1]]`` (Pai §6 frame 1c; GL §5 S).

        .. math::

            \hat x = \frac{x_u}{\lVert x_u\rVert},\quad
            n = \frac{x_u\times x_v}{\lVert x_u\times x_v\rVert},\quad
            \hat y = n\times\hat x
        """
        L = _math((u, v, *self._params()), lib)
        d = self._partials(u, v, L, 1)
        xh = _unit(L, d[1, 0])  # Pai §6: ¹x = c_s / |c_s|
        n = _unit(L, L.cross(d[1, 0], d[0, 1]))  # Pai §6: ¹z
        yh = L.cross(n, xh)  # Pai §6: ¹y (Gram–Schmidt of c_t)
        return L.frame(xh, yh, n, d[0, 0])

    # --- fundamental forms ----------------------------------------------------
    def first_fundamental_form(self, u, v, lib=None):
        r"""The metric :math:`I = [[x_u\cdot x_u, x_u\cdot x_v], [x_v\cdot x_u, x_v\cdot x_v]]`."""
        L = _math((u, v, *self._params()), lib)
        return _forms(self._partials(u, v, L, 2), L)[3]

    def second_fundamental_form(self, u, v, lib=None):
        r""":math:`II = [[n\cdot x_{uu}, n\cdot x_{uv}], [n\cdot x_{uv}, n\cdot x_{vv}]]`."""
        L = _math((u, v, *self._params()), lib)
        return _forms(self._partials(u, v, L, 2), L)[4]

    def shape_operator(self, u, v, lib=None):
        r"""Weingarten map :math:`S = I^{-1} II` in the parameter basis.

        :math:`n_{,j} = -\sum_k x_{,k} S_{kj}`; with an outward normal a convex
        surface has negative eigenvalues (see the module notes).
        """
        L = _math((u, v, *self._params()), lib)
        _, _, _, I, II = _forms(self._partials(u, v, L, 2), L)
        return _inv2(L, I) @ II

    def gaussian_curvature(self, u, v, lib=None):
        r"""Gaussian curvature :math:`\det II / \det I` (independent of the normal's sign)."""
        L = _math((u, v, *self._params()), lib)
        _, _, _, I, II = _forms(self._partials(u, v, L, 2), L)
        return _det2(II) / _det2(I)

    def mean_curvature(self, u, v, lib=None):
        r"""Mean curvature :math:`\tfrac12\operatorname{tr} S` (sign follows the normal)."""
        S = self.shape_operator(u, v, lib)
        return (S[0, 0] + S[1, 1]) / 2

    def principal_curvatures(self, u: float, v: float) -> np.ndarray:
        """Eigenvalues of the shape operator, ascending (numeric only), shape ``(2,)``."""
        return np.sort(np.linalg.eigvals(np.asarray(self.shape_operator(u, v), float)).real)

    def contact_geometry(self, u, v, lib=None) -> tuple:
        r"""Montana's metric, curvature and torsion forms ``(M, K, T)`` at ``(u, v)``.

        See :func:`contact_forms`.
        """
        L = _math((u, v, *self._params()), lib)
        return contact_forms(self._partials(u, v, L, 2), L.name)

    # --- time derivatives of the frame (numeric) --------------------------------
    def frame_jet(self, u: float, v: float, du: float, dv: float) -> tuple:
        r"""The frame and its first two time derivatives along :math:`(u, v) + t(\dot u, \dot v)`.

        See :func:`frame_jet`; the second derivative uses the third partial
        derivatives of ``x``.
        """
        return frame_jet(self.partials(float(u), float(v), 3, lib="numpy"), du, dv)

    # --- charts -----------------------------------------------------------------
    def contains(self, u: float, v: float) -> bool:
        """Whether ``(u, v)`` lies in the (closed) parameter domain."""
        (u0, u1), (v0, v1) = self.domain
        return bool(u0 <= u <= u1 and v0 <= v <= v1)

    def sample(self, nu: int = 20, nv: int = 20) -> np.ndarray:
        """Grid of points ``(nu, nv, 3)`` over the finite parts of the domain (for plots)."""
        ranges = []
        for lo, hi in self.domain:
            ranges.append(np.linspace(lo if np.isfinite(lo) else -1.0,
                                      hi if np.isfinite(hi) else 1.0, nu if not ranges else nv))
        return np.array([[self.position(u, v) for v in ranges[1]] for u in ranges[0]])

    def flipped(self) -> Surface:
        """The same surface with ``u`` and ``v`` exchanged: the normal is reversed."""
        return _Flipped(self)

    def transformed(self, R, p=(0.0, 0.0, 0.0)) -> Surface:
        """The surface moved rigidly: :math:`x \\mapsto R x + p` (``R`` a rotation)."""
        return _Transformed(self, R, p)


class _Flipped(Surface):
    def __init__(self, base: Surface):
        self.base = base
        self.domain = (base.domain[1], base.domain[0])

    def _params(self):
        return self.base._params()

    def _partials(self, u, v, L, order):
        d = self.base._partials(v, u, L, order)
        return {(i, j): d[j, i] for (i, j) in d}

    def __repr__(self) -> str:
        return f"{self.base!r}.flipped()"


class _Transformed(Surface):
    def __init__(self, base: Surface, R, p):
        R = np.asarray(R, dtype=float)
        if R.shape != (3, 3) or not np.allclose(R @ R.T, np.eye(3), atol=1e-9) \
                or np.linalg.det(R) < 0:
            raise InputError("transformed: R must be a 3×3 proper rotation matrix")
        self.base, self.R, self.p = base, R, _vector3(p, "transformed p")
        self.domain = base.domain

    def _params(self):
        return (*self.base._params(), self.p)

    def _partials(self, u, v, L, order):
        d = self.base._partials(u, v, L, order)
        out = {key: L.matvec(self.R, x) for key, x in d.items()}
        out[0, 0] = out[0, 0] + L.constant(self.p)
        return out

    def __repr__(self) -> str:
        return f"{self.base!r}.transformed(R={self.R.tolist()}, p={list(self.p)})"


def _orders(order: int):
    return [(i, k - i) for k in range(order + 1) for i in range(k + 1)]


class Plane(Surface):
    r"""The plane :math:`x(u, v) = o + u\,e_1 + v\,e_2`; normal along :math:`e_1\times e_2`."""

    def __init__(self, origin=(0.0, 0.0, 0.0), e1=(1.0, 0.0, 0.0), e2=(0.0, 1.0, 0.0)):
        self.origin = _vector3(origin, "Plane origin")
        self.e1 = _vector3(e1, "Plane e1")
        self.e2 = _vector3(e2, "Plane e2")
        if np.linalg.norm(np.cross(np.asarray(self.e1, float), np.asarray(self.e2, float))) \
                < 1e-12 and not _is_symbolic((self.e1, self.e2)):
            raise InputError("Plane e1 and e2 must not be parallel")

    def _params(self):
        return (self.origin, self.e1, self.e2)

    def _partials(self, u, v, L, order):
        o, e1, e2 = L.constant(self.origin), L.constant(self.e1), L.constant(self.e2)
        out = {key: 0 * e1 for key in _orders(order)}
        out[0, 0] = o + u * e1 + v * e2
        if order >= 1:
            out[1, 0], out[0, 1] = e1, e2
        return out

    def __repr__(self) -> str:
        return f"Plane(origin={list(self.origin)}, e1={list(self.e1)}, e2={list(self.e2)})"


class Ellipsoid(Surface):
    r"""The ellipsoid :math:`x = (a\cos u\cos v,\ b\sin u\cos v,\ c\sin v)`, outward normal.

    ``u`` is the longitude (periodic), ``v ∈ (-π/2, π/2)`` the latitude; the
    chart is singular at the poles :math:`(0, 0, \pm c)`.  Use
    :meth:`transformed` to put the poles elsewhere.
    """

    domain = ((-np.inf, np.inf), (-np.pi / 2, np.pi / 2))

    def __init__(self, a=1.0, b=1.0, c=1.0):
        self.a, self.b, self.c = a, b, c

    def _params(self):
        return (self.a, self.b, self.c)

    def _partials(self, u, v, L, order):
        cu, su, cv, sv = L.cos(u), L.sin(u), L.cos(v), L.sin(v)
        out = {}
        for i, j in _orders(order):
            out[i, j] = L.vector(self.a * _dcos(cu, su, i) * _dcos(cv, sv, j),
                                 self.b * _dsin(cu, su, i) * _dcos(cv, sv, j),
                                 self.c * _dsin(cv, sv, j) if i == 0 else 0 * cv)
        return out

    def __repr__(self) -> str:
        return f"Ellipsoid(a={self.a}, b={self.b}, c={self.c})"


class Sphere(Ellipsoid):
    """The sphere of ``radius`` about the origin (an :class:`Ellipsoid` with a = b = c)."""

    def __init__(self, radius=1.0):
        super().__init__(radius, radius, radius)
        self.radius = radius

    def __repr__(self) -> str:
        return f"Sphere(radius={self.radius})"


class Torus(Surface):
    r"""The torus :math:`x = ((R + r\cos v)\cos u,\ (R + r\cos v)\sin u,\ r\sin v)`.

    ``R`` is the distance from the axis (z) to the tube centre, ``r`` the tube
    radius; both parameters are periodic and the normal points out of the tube.
    """

    def __init__(self, R=1.0, r=0.25):
        self.R, self.r = R, r

    def _params(self):
        return (self.R, self.r)

    def _partials(self, u, v, L, order):
        cu, su, cv, sv = L.cos(u), L.sin(u), L.cos(v), L.sin(v)
        out = {}
        for i, j in _orders(order):
            rho = (self.R if j == 0 else 0) + self.r * _dcos(cv, sv, j)  # ∂v^j (R + r cos v)
            out[i, j] = L.vector(rho * _dcos(cu, su, i), rho * _dsin(cu, su, i),
                                 self.r * _dsin(cv, sv, j) if i == 0 else 0 * cv)
        return out

    def __repr__(self) -> str:
        return f"Torus(R={self.R}, r={self.r})"


class BezierPatch(Surface):
    r"""The bicubic Bézier (tensor-product) patch :math:`x = \sum_{ij} B_i(u) B_j(v) P_{ij}`.

    ``control_points`` has shape ``(4, 4, 3)``, ``u, v ∈ [0, 1]``; the normal
    points along :math:`x_u\times x_v`.  Derivatives use the derivatives of the
    Bernstein polynomials, :func:`bernstein3`.
    """

    domain = ((0.0, 1.0), (0.0, 1.0))

    def __init__(self, control_points):
        self.control_points = _points(control_points, (4, 4, 3), "BezierPatch control_points")

    @classmethod
    def from_heights(cls, heights, half_width: float = 1.0) -> BezierPatch:
        """Patch over the square ``[-w, w]²`` with evenly spaced x, y control points.

        ``heights`` (4×4) are the control points' z values; ``x`` grows with
        ``u`` and ``y`` with ``v``, so the normal points towards +z.
        """
        Z = np.asarray(heights, dtype=float)
        if Z.shape != (4, 4):
            raise InputError(f"heights must have shape (4, 4), got {Z.shape}")
        g = np.linspace(-half_width, half_width, 4)
        X, Y = np.meshgrid(g, g, indexing="ij")
        return cls(np.stack([X, Y, Z], axis=-1))

    def _params(self):
        return (self.control_points,)

    def _partials(self, u, v, L, order):
        P = self.control_points
        Bu = [bernstein3(u, k) for k in range(order + 1)]
        Bv = [bernstein3(v, k) for k in range(order + 1)]
        if L is _NUMPY and P.dtype != object:
            X = np.einsum("ia,jb,abk->ijk", np.array(Bu, float), np.array(Bv, float), P)
            return {(i, j): X[i, j] for i, j in _orders(order)}
        if P.dtype != object:  # symbolic: a polynomial in powers of u and v (shorter)
            P = np.einsum("ai,bj,ijk->abk", _BERNSTEIN_POWER, _BERNSTEIN_POWER, P)
            Bu = [_power3(u, k) for k in range(order + 1)]
            Bv = [_power3(v, k) for k in range(order + 1)]
        return {(i, j): _combine(L, [Bu[i][a] * Bv[j][b] for a in range(4) for b in range(4)],
                                 P.reshape(16, 3))
                for i, j in _orders(order)}

    def __repr__(self) -> str:
        return f"BezierPatch(control_points={self.control_points.tolist()})"


# ---------------------------------------------------------------------------
# Input helpers
# ---------------------------------------------------------------------------


def _vector3(value, what: str):
    if _is_symbolic(value):
        out = np.array(list(value), dtype=object)
    else:
        try:
            out = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be a 3-vector of numbers, got {value!r}") from None
        if not np.all(np.isfinite(out)):
            raise InputError(f"{what} must be finite, got {value!r}")
    if out.shape != (3,):
        raise InputError(f"{what} must be a 3-vector, got shape {out.shape}")
    return out


def _points(value: Any, shape, what: str) -> np.ndarray:
    if _is_symbolic(value):
        out = np.array(value, dtype=object)
    else:
        try:
            out = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be numeric, got {value!r}") from None
        if not np.all(np.isfinite(out)):
            raise InputError(f"{what} must be finite")
    if shape is not None and out.shape != shape:
        raise InputError(f"{what} must have shape {shape}, got {out.shape}")
    return out
