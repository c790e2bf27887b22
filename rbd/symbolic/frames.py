r"""Joints built from geometry: curve frames, surface frames, surface on surface.

Guenter & Lee (§5) build complex joints from moving frames:

* a point on a curve with its Frenet frame :math:`C(q)`, and with a roll about
  the tangent, :math:`A_{path} = C(q_p)\,R_x(q_r)`;
* a surface frame :math:`S(u, v) = [\hat x\; \hat y\; n\; x]` on a surface;
* two surfaces held in contact with their frames aligned,
  :math:`S_{1,2} = S_1 S_2^{-1}` (GL Eq. 15), a four-coordinate joint.

The frames come from :mod:`rbd.geometry` (any curve or surface there, given
sympy coordinates).  For the plane, sphere, ellipsoid, torus and circular
helix this module writes the same frames in closed form — the unit vectors
simplified by hand, e.g. for the torus :math:`\hat x = (-\sin u, \cos u, 0)`
instead of :math:`x_u/\lVert x_u\rVert` — which makes the derived joint and
its generated code many times smaller.  ``tests/test_mechanisms.py`` checks
each closed form against :mod:`rbd.geometry`.

Bézier curves and tensor-product patches of any degree are those of
:mod:`rbd.geometry.bezier` (:class:`~rbd.geometry.BezierCurve`,
:class:`~rbd.geometry.BezierSurface`; also importable from here): their sympy
form is one polynomial in the power basis, so a seven-point curve is a single
sextic and a 5×5 patch a single bi-quartic (no pieces, no ``Piecewise``).

For two bodies touching from outside, body 2's frame is taken with the
normal pointing *into* body 2 (:func:`surface_frame` with ``outward=False``:
the frame of the same surface seen from the other side, ``[ŷ, x̂, -n]``), so
that aligning the frames puts the outward normals opposite.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from .. import geometry
from ..errors import ModelError
from ..geometry import bezier
from ..geometry.surfaces import _Transformed
from .joint import SymbolicJoint, _exact

__all__ = [
    "homogeneous",
    "inverse",
    "rot_x",
    "rot_z",
    "surface_frame",
    "curve_frame",
    "surface_surface_joint",
    "surface_point_joint",
    "curve_joint",
]

# The one Bézier family (rbd.geometry.bezier), also importable from here.
BezierCurve, BezierSurface = bezier.BezierCurve, bezier.BezierSurface
bernstein, bernstein_to_power = bezier.bernstein, bezier.bernstein_to_power

#: ``[ŷ, x̂, -n]`` from ``[x̂, ŷ, n]``: the surface frame seen from the other side.
FLIP = sympy.Matrix([[0, 1, 0], [1, 0, 0], [0, 0, -1]])


def homogeneous(R, p) -> sympy.Matrix:
    """The 4×4 matrix ``[[R, p], [0, 1]]``."""
    T = sympy.eye(4)
    T[:3, :3] = sympy.Matrix(R)
    T[:3, 3] = sympy.Matrix(p)
    return T


def inverse(T: sympy.Matrix) -> sympy.Matrix:
    """Inverse of a rigid motion: ``[[Rᵀ, -Rᵀ p], [0, 1]]``."""
    R, p = T[:3, :3], T[:3, 3]
    return homogeneous(R.T, -R.T * p)


def rot_x(t) -> sympy.Matrix:
    """Rotation by ``t`` about x (active)."""
    c, s = sympy.cos(t), sympy.sin(t)
    return sympy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_z(t) -> sympy.Matrix:
    """Rotation by ``t`` about z (active)."""
    c, s = sympy.cos(t), sympy.sin(t)
    return sympy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _num(x) -> sympy.Expr:
    return x if isinstance(x, sympy.Basic) else _exact(x)


def _frame(x_hat, n, origin) -> sympy.Matrix:
    x_hat, n = sympy.Matrix(x_hat), sympy.Matrix(n)
    y_hat = n.cross(x_hat)
    R = sympy.Matrix.hstack(x_hat, y_hat, n)
    return homogeneous(R, origin)


def _closed_form_surface_frame(surface, u, v) -> sympy.Matrix | None:
    cu, su, cv, sv = sympy.cos(u), sympy.sin(u), sympy.cos(v), sympy.sin(v)
    if isinstance(surface, geometry.Torus):
        R, r = _num(surface.R), _num(surface.r)
        rho = R + r * cv
        return _frame([-su, cu, 0], [cu * cv, su * cv, sv], [rho * cu, rho * su, r * sv])
    if isinstance(surface, geometry.Ellipsoid):
        a, b, c = _num(surface.a), _num(surface.b), _num(surface.c)
        origin = [a * cu * cv, b * su * cv, c * sv]
        if a == b == c:
            return _frame([-su, cu, 0], [cu * cv, su * cv, sv], origin)
        t = sympy.Matrix([-a * su, b * cu, 0])
        m = sympy.Matrix([b * c * cu * cv, a * c * su * cv, a * b * sv])
        return _frame(t / sympy.sqrt(t.dot(t)), m / sympy.sqrt(m.dot(m)), origin)
    if isinstance(surface, geometry.Plane):
        e1 = np.asarray(surface.e1, dtype=float)
        e2 = np.asarray(surface.e2, dtype=float)
        n = np.cross(e1, e2)
        o = np.asarray(surface.origin, dtype=float)
        return _frame([_exact(x) for x in e1 / np.linalg.norm(e1)],
                      [_exact(x) for x in n / np.linalg.norm(n)],
                      [_exact(o[k]) + _exact(e1[k]) * u + _exact(e2[k]) * v for k in range(3)])
    return None


def surface_frame(surface, u, v, outward: bool = True) -> sympy.Matrix:
    """The surface frame ``[[x̂, ŷ, n, x], [0, 0, 0, 1]]`` at ``(u, v)`` as a sympy matrix.

    Parameters
    ----------
    surface : rbd.geometry.Surface
    u, v : sympy expressions
    outward : bool
        ``False`` gives the frame seen from the other side, ``[ŷ, x̂, -n]``.

    Notes
    -----
    Closed forms for :class:`~rbd.geometry.Torus`, :class:`~rbd.geometry.Ellipsoid`
    (and :class:`~rbd.geometry.Sphere`), :class:`~rbd.geometry.Plane` and their
    :meth:`~rbd.geometry.Surface.transformed` versions; any other surface uses
    :meth:`rbd.geometry.Surface.frame`.
    """
    if isinstance(surface, _Transformed):
        base = surface_frame(surface.base, u, v)
        F = homogeneous([[_exact(x) for x in row] for row in surface.R],
                        [_exact(x) for x in surface.p]) * base
    else:
        F = _closed_form_surface_frame(surface, u, v)
    if F is None:
        F = sympy.Matrix(surface.frame(u, v, lib="sympy"))
    if not outward:
        F = homogeneous(F[:3, :3] * FLIP, F[:3, 3])
    return F


def curve_frame(curve, s, up=None) -> sympy.Matrix:
    r"""A frame ``[[T, N, B, x], [0, 0, 0, 1]]`` travelling along a curve (GL §5, ``C(q)``).

    With ``up=None`` it is the Frenet frame,
    :math:`T = x'/\lVert x'\rVert`, :math:`B = x'\times x''/\lVert x'\times x''\rVert`,
    :math:`N = B\times T` — closed form for :class:`~rbd.geometry.Helix` and
    :class:`~rbd.geometry.Circle`, :meth:`rbd.geometry.Curve.frame` otherwise.

    With a fixed vector ``up`` (3,), :math:`x''` is replaced by ``up``:
    :math:`B = x'\times a/\lVert x'\times a\rVert`, so :math:`N` is ``up``
    made perpendicular to the tangent.  This frame needs no curvature (it is
    regular through inflection points and on straight stretches, where the
    Frenet frame is undefined) and only the first derivative; it is singular
    only where the tangent is parallel to ``up``.
    """
    if up is not None:
        a = sympy.Matrix([_num(x) for x in np.asarray(up, dtype=float).reshape(3)])
        x, dx = curve.derivatives(s, 1, lib="sympy")
        T = dx / sympy.sqrt(dx.dot(dx))                                  # GL §5: b = f_q/|f_q|
        w = dx.cross(a)
        B = w / sympy.sqrt(w.dot(w))
        return homogeneous(sympy.Matrix.hstack(T, B.cross(T), B), x)
    if isinstance(curve, geometry.Helix):
        r, h = _num(curve.radius), _num(curve.pitch)
        c, sn = sympy.cos(s), sympy.sin(s)
        w = sympy.sqrt(r**2 + h**2)
        T = sympy.Matrix([-r * sn, r * c, h]) / w
        N = sympy.Matrix([-c, -sn, 0])
        B = T.cross(N)
        return homogeneous(sympy.Matrix.hstack(T, N, B), [r * c, r * sn, h * s])
    return sympy.Matrix(curve.frame(s, lib="sympy"))


def _coordinates(names: str, n: int) -> tuple[sympy.Symbol, ...]:
    symbols = sympy.symbols(names, real=True)
    symbols = symbols if isinstance(symbols, tuple) else (symbols,)
    if len(symbols) != n:
        raise ModelError(f"need {n} coordinate names, got {names!r}")
    return symbols


def surface_surface_joint(surface1, surface2, neutral: Sequence[float],
                          name: str = "surface-surface") -> SymbolicJoint:
    """Two surfaces in contact with aligned frames: ``G = S₁(u₁, v₁) S₂(u₂, v₂)⁻¹`` (GL (15)).

    Parameters
    ----------
    surface1 : rbd.geometry.Surface
        A surface of the parent body (its frame, outward normal).
    surface2 : rbd.geometry.Surface
        A surface of the child body, seen from outside: its frame is taken
        with the normal pointing into the child (:func:`surface_frame`,
        ``outward=False``), so the two bodies touch from outside.
    neutral : (4,) sequence
        ``(u₁, v₁, u₂, v₂)`` at the neutral configuration.
    """
    u1, v1, u2, v2 = _coordinates("u1 v1 u2 v2", 4)
    G = surface_frame(surface1, u1, v1) * inverse(surface_frame(surface2, u2, v2,
                                                                outward=False))  # GL (15)
    return SymbolicJoint(G, [u1, v1, u2, v2], neutral=neutral, name=name)


def surface_point_joint(surface, anchor: sympy.Matrix, neutral: Sequence[float],
                        name: str = "point on surface") -> SymbolicJoint:
    """A body whose surface slides over a fixed contact frame ``anchor``: ``G = anchor S(u, v)⁻¹``.

    Two coordinates: the surface point ``(u, v)`` of the child that touches the
    anchor point, with the child's surface frame aligned to ``anchor``.
    """
    u, v = _coordinates("u v", 2)
    G = sympy.Matrix(anchor) * inverse(surface_frame(surface, u, v))
    return SymbolicJoint(G, [u, v], neutral=neutral, name=name)


#: Body axes ``(x, y, z)`` onto the curve frame's ``(N, B, T)``: the body's z axis on the tangent.
AXIS_ON_TANGENT = sympy.Matrix([[0, 0, 1], [1, 0, 0], [0, 1, 0]])


def curve_joint(curve, roll: bool = False, neutral: Sequence[float] | None = None,
                name: str = "curve", up=None, axis: str = "x") -> SymbolicJoint:
    """A body riding a curve with a travelling frame, ``C(s)``, optionally rolled (GL §5).

    GL §5: the body's ``axis`` (``"x"``, or ``"z"`` for a ring threaded on
    the curve) stays on the tangent; with ``roll=True`` the body may also turn
    about it (two coordinates ``s, θ``): ``C(s) Rx(θ)`` for ``axis="x"``,
    ``C(s) A Rz(θ)`` for ``axis="z"`` with ``A`` = :data:`AXIS_ON_TANGENT`
    (then the body's x axis is the frame's ``N`` at ``θ = 0``).  ``C`` is the
    Frenet frame, or with ``up`` the frame of :func:`curve_frame` that turns
    ``N`` towards ``up``.
    """
    if axis not in ("x", "z"):
        raise ModelError(f"axis must be 'x' or 'z', got {axis!r}")
    s, theta = _coordinates("s theta", 2)
    C = curve_frame(curve, s, up=up)
    if axis == "z":
        C = C * homogeneous(AXIS_ON_TANGENT, [0, 0, 0])
    if roll:
        spin = rot_x(theta) if axis == "x" else rot_z(theta)
        G = C * homogeneous(spin, [0, 0, 0])
        return SymbolicJoint(G, [s, theta], neutral=neutral, name=name)
    return SymbolicJoint(C, [s], neutral=neutral, name=name)
