r"""Parametric surfaces with their surface frames (GL §5; Pai §6).

*Surface frame* (the surface frame of GL §5 and the contact frame of Pai §6):
:math:`\hat x = x_u/\lVert x_u\rVert`, unit normal
:math:`n = (x_u\times x_v)/\lVert x_u\times x_v\rVert`, and
:math:`\hat y = n\times\hat x`; ``frame(u, v) = [[x̂, ŷ, n, x], [0, 0, 0, 1]]``.
Pai's :math:`{}^1\mathbf y` (Gram–Schmidt of :math:`c_{,t}` against
:math:`c_{,s}`) is the same vector as :math:`n\times\hat x`.  Guenter & Lee
write :math:`n = p_0\times p_1` with unit tangents; that is a unit vector only
when :math:`x_u \perp x_v`, so the normal is normalised here.  The normal
points along :math:`x_u\times x_v`: choose the parametrisation (or
:meth:`Surface.flipped`) so that it points *out of* the body the surface
bounds.  Curvature conventions: :mod:`rbd.geometry.forms`.  Bézier patches
are in :mod:`rbd.geometry.bezier`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .backend import dcos, det2, dsin, inv2, is_symbolic, math_for, orders, unit, vector3
from .forms import contact_forms, frame_jet, fundamental_forms

__all__ = ["Surface", "Plane", "Ellipsoid", "Sphere", "Torus"]


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
        L = math_for((u, v, *self._params()), lib)
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
        L = math_for((u, v, *self._params()), lib)
        d = self._partials(u, v, L, 1)
        return unit(L, L.cross(d[1, 0], d[0, 1]))

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
        L = math_for((u, v, *self._params()), lib)
        d = self._partials(u, v, L, 1)
        xh = unit(L, d[1, 0])  # Pai §6: ¹x = c_s / |c_s|
        n = unit(L, L.cross(d[1, 0], d[0, 1]))  # Pai §6: ¹z
        yh = L.cross(n, xh)  # Pai §6: ¹y (Gram–Schmidt of c_t)
        return L.frame(xh, yh, n, d[0, 0])

    # --- fundamental forms ----------------------------------------------------
    def first_fundamental_form(self, u, v, lib=None):
        r"""The metric :math:`I = [[x_u\cdot x_u, x_u\cdot x_v], [x_v\cdot x_u, x_v\cdot x_v]]`."""
        L = math_for((u, v, *self._params()), lib)
        return fundamental_forms(self._partials(u, v, L, 2), L)[3]

    def second_fundamental_form(self, u, v, lib=None):
        r""":math:`II = [[n\cdot x_{uu}, n\cdot x_{uv}], [n\cdot x_{uv}, n\cdot x_{vv}]]`."""
        L = math_for((u, v, *self._params()), lib)
        return fundamental_forms(self._partials(u, v, L, 2), L)[4]

    def shape_operator(self, u, v, lib=None):
        r"""Weingarten map :math:`S = I^{-1} II` in the parameter basis.

        :math:`n_{,j} = -\sum_k x_{,k} S_{kj}`; with an outward normal a convex
        surface has negative eigenvalues (see the module notes).
        """
        L = math_for((u, v, *self._params()), lib)
        _, _, _, I, II = fundamental_forms(self._partials(u, v, L, 2), L)
        return inv2(L, I) @ II

    def gaussian_curvature(self, u, v, lib=None):
        r"""Gaussian curvature :math:`\det II / \det I` (independent of the normal's sign)."""
        L = math_for((u, v, *self._params()), lib)
        _, _, _, I, II = fundamental_forms(self._partials(u, v, L, 2), L)
        return det2(II) / det2(I)

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
        L = math_for((u, v, *self._params()), lib)
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
        self.base, self.R, self.p = base, R, vector3(p, "transformed p")
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


class Plane(Surface):
    r"""The plane :math:`x(u, v) = o + u\,e_1 + v\,e_2`; normal along :math:`e_1\times e_2`."""

    def __init__(self, origin=(0.0, 0.0, 0.0), e1=(1.0, 0.0, 0.0), e2=(0.0, 1.0, 0.0)):
        self.origin = vector3(origin, "Plane origin")
        self.e1 = vector3(e1, "Plane e1")
        self.e2 = vector3(e2, "Plane e2")
        if np.linalg.norm(np.cross(np.asarray(self.e1, float), np.asarray(self.e2, float))) \
                < 1e-12 and not is_symbolic((self.e1, self.e2)):
            raise InputError("Plane e1 and e2 must not be parallel")

    def _params(self):
        return (self.origin, self.e1, self.e2)

    def _partials(self, u, v, L, order):
        o, e1, e2 = L.constant(self.origin), L.constant(self.e1), L.constant(self.e2)
        out = {key: 0 * e1 for key in orders(order)}
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
        for i, j in orders(order):
            out[i, j] = L.vector(self.a * dcos(cu, su, i) * dcos(cv, sv, j),
                                 self.b * dsin(cu, su, i) * dcos(cv, sv, j),
                                 self.c * dsin(cv, sv, j) if i == 0 else 0 * cv)
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
        for i, j in orders(order):
            rho = (self.R if j == 0 else 0) + self.r * dcos(cv, sv, j)  # ∂v^j (R + r cos v)
            out[i, j] = L.vector(rho * dcos(cu, su, i), rho * dsin(cu, su, i),
                                 self.r * dsin(cv, sv, j) if i == 0 else 0 * cv)
        return out

    def __repr__(self) -> str:
        return f"Torus(R={self.R}, r={self.r})"
