r"""Parametric space curves with their Frenet frames (Guenter & Lee §5).

*Frenet frame* (the travelling frame :math:`C(q)` of GL §5): tangent
:math:`T = x'/\lVert x'\rVert`, binormal
:math:`B = (x' \times x'')/\lVert x'\times x''\rVert`, principal normal
:math:`N = B \times T`; ``frame(s) = [[T, N, B, x], [0, 0, 0, 1]]``.
Guenter & Lee name the same columns ``b, p, n``.  Bézier curves and splines
are in :mod:`rbd.geometry.bezier`.
"""

from __future__ import annotations

import numpy as np

from .backend import dcos, dsin, math_for, unit, vector3

__all__ = ["Curve", "Line", "Helix", "Circle"]


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
        L = math_for((s, *self._params()), lib)
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
        L = math_for((s, *self._params()), lib)
        x = self._derivatives(s, L, 2)
        T = unit(L, x[1])  # GL §5: b = f_q / |f_q|
        B = unit(L, L.cross(x[1], x[2]))  # GL §5: n = b × f_qq / |b × f_qq|
        N = L.cross(B, T)  # GL §5: p = n × b
        return T, N, B

    def frame(self, s, lib=None):
        """The 4×4 Frenet frame ``[[T, N, B, x], [0, 0, 0, 1]]`` (GL §5, ``C(q)``)."""
        L = math_for((s, *self._params()), lib)
        T, N, B = self.frenet(s, lib=L.name)
        return L.frame(T, N, B, self._derivatives(s, L, 0)[0])

    def speed(self, s, lib=None):
        r""":math:`\lVert x'(s)\rVert`, arc length per unit parameter."""
        L = math_for((s, *self._params()), lib)
        d = self._derivatives(s, L, 1)[1]
        return L.sqrt(L.dot(d, d))

    def curvature(self, s, lib=None):
        r"""Curvature :math:`\kappa = \lVert x'\times x''\rVert / \lVert x'\rVert^3`."""
        L = math_for((s, *self._params()), lib)
        x = self._derivatives(s, L, 2)
        w = L.cross(x[1], x[2])
        return L.sqrt(L.dot(w, w)) / L.sqrt(L.dot(x[1], x[1])) ** 3

    def torsion(self, s, lib=None):
        r"""Torsion :math:`\tau = (x'\times x'')\cdot x''' / \lVert x'\times x''\rVert^2`."""
        L = math_for((s, *self._params()), lib)
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
        self.point = vector3(point, "Line point")
        self.direction = vector3(direction, "Line direction")
        if normal is None:
            d = np.asarray(self.direction, dtype=float)
            trial = np.eye(3)[int(np.argmin(np.abs(d)))]
            normal = np.cross(np.cross(d, trial), d)
        self.normal = vector3(normal, "Line normal")

    def _params(self):
        return (self.point, self.direction, self.normal)

    def _derivatives(self, s, L, order):
        p, d = L.constant(self.point), L.constant(self.direction)
        out = [p + s * d, d]
        return (out + [0 * d, 0 * d])[: order + 1]

    def frenet(self, s, lib=None):
        L = math_for((s, *self._params()), lib)
        T = unit(L, L.constant(self.direction))
        N = unit(L, L.constant(self.normal))
        N = unit(L, N - T * L.dot(N, T))
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
            out.append(L.vector(r * dcos(c, sn, k), r * dsin(c, sn, k), h if k == 1 else 0))
        return out


class Circle(Helix):
    r"""The circle :math:`x(s) = (r\cos s,\ r\sin s,\ 0)`; its binormal is +z."""

    def __init__(self, radius=1.0):
        super().__init__(radius, 0)

    def _params(self):
        return (self.radius,)
