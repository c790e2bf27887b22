r"""Mechanisms with complex joints (Guenter & Lee §5; Si & Guenter §5).

Every joint here is a :class:`~rbd.symbolic.SymbolicJoint` built from
geometry (:mod:`rbd.symbolic.frames`), so these models run in every
algorithm — the reference ones through generated Python, the compiled
kernels through generated C.

===============================  ====  ============================================================
builder                           DoF  joints
===============================  ====  ============================================================
``torus_chain(10)``                38  a torus hanging on a peg (2), then torus–torus (4 each): TC10
``torus_chain(20)``                78  TC20
``windmill()``                     73  a hub on an axle (1) and six arms of three links joined by
                                       sphere–sphere, sphere–ellipsoid, sphere–torus,
                                       torus–ellipsoid and torus–torus contacts (4 each)
``bead_on_wire()``                  1  a bead on a helix with its Frenet frame (GL Fig. 8)
``rolling_wheels()``                2  a wheel rolling without slip on a fixed circle and a second
                                       wheel rolling on the first (GL Fig. 5c)
``four_bar_knee()``                 2  a thigh on a hip hinge and a shank on a crossed four-bar
                                       linkage with one coordinate (GL §7)
``torus_chain_on_spline(4)``       14  a torus threaded on a sextic Bézier curve (2: along it and
                                       about it), then torus–torus (4 each) (S&G Fig. 3)
``board_on_bezier_surface()``       4  a board sliding on a bi-quartic Bézier patch (3), a pendulum
                                       on a mast (1) (S&G Fig. 4)
===============================  ====  ============================================================

The DoF of TC10, TC20 and the windmill are those of Si & Guenter's Table 1.
:func:`body_shapes` returns the surfaces and curves to draw each body.
"""

from __future__ import annotations

import weakref

import numpy as np
import sympy

from .. import geometry
from ..errors import ModelError
from ..geometry import BezierCurve, BezierSurface
from ..joints import Revolute
from ..model import Model
from ..spatial import plux
from ..symbolic.frames import (
    curve_joint,
    homogeneous,
    rot_z,
    surface_frame,
    surface_point_joint,
    surface_surface_joint,
)
from ..symbolic.joint import SymbolicJoint
from . import _MECHANISM_BUILDERS, box_inertia

__all__ = [
    *_MECHANISM_BUILDERS,
    "SPLINE_POINTS",
    "SURFACE_HEIGHTS",
    "body_shapes",
    "torus_inertia",
    "ellipsoid_inertia",
]

_SHAPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def body_shapes(model: Model) -> dict:
    """``{body name: geometry}`` of a model built here (surfaces and curves to draw).

    The geometry is in the body frame (a surface, a ``("wire", curve)`` or a
    ``("box", half_extents)`` centred at ``(0, 0, half_extents[2])``); a
    ``("wire", curve)`` or ``("surface", surface)`` entry under the key
    ``"world"`` is fixed in the world.  Models not built by this module
    give an empty dict.
    """
    return dict(_SHAPES.get(model, {}))


def torus_inertia(mass: float, R: float, r: float):
    """``(mass, com, I_com)`` of a solid torus about its symmetry axis z."""
    axial = mass * (R**2 + 0.75 * r**2)
    diametral = mass * (0.5 * R**2 + 0.625 * r**2)
    return mass, np.zeros(3), np.diag([diametral, diametral, axial])


def ellipsoid_inertia(mass: float, a: float, b: float, c: float):
    """``(mass, com, I_com)`` of a solid ellipsoid with semi-axes ``a, b, c``."""
    return mass, np.zeros(3), mass / 5 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


# --- torus chains (TC10, TC20) ----------------------------------------------------------------
def _check_torus_chain(n: int, R: float, r: float) -> None:
    if n < 1:
        raise ModelError(f"a torus chain needs at least one torus, got n={n}")
    if not 0 < r < R:
        raise ModelError(f"torus radii must satisfy 0 < r < R, got R={R}, r={r}")


def _torus_chain(model: Model, shapes: dict, torus, first, n: int, mass: float) -> Model:
    """Add ``n`` tori to ``model``: the first on the joint ``first = (joint, frame name)``,
    each next one hanging from the previous by a torus–torus contact (GL Eq. 15)."""
    link = surface_surface_joint(torus, torus, neutral=(np.pi, np.pi, 0.0, np.pi),
                                 name="torus-torus")
    parent = -1
    for i in range(n):
        joint, frame = first if i == 0 else (link, f"contact{i}")
        parent = model.add_body(parent, joint, None, torus_inertia(mass, torus.R, torus.r),
                                f"torus{i + 1}", frame)
        shapes[f"torus{i + 1}"] = torus
    _SHAPES[model] = shapes
    return model


def torus_chain(n: int = 10, R: float = 0.5, r: float = 0.1, mass: float = 1.0) -> Model:
    """A chain of ``n`` linked tori hanging from a peg (Si & Guenter's TC10/TC20; GL Fig. 5b).

    The first torus hangs on a fixed peg by the inside of its tube: a
    point-on-surface joint with the torus's two surface coordinates.  Each next
    torus passes through the previous one's hole, their tubes touching: a
    surface–surface joint ``S₁ S₂⁻¹`` with four coordinates (GL Eq. 15).  At
    the neutral configuration the chain hangs straight down, each torus
    turned 90° from the last.  DoF ``2 + 4 (n - 1)``.
    """
    _check_torus_chain(n, R, r)
    torus = geometry.Torus(R, r)
    # peg contact frame: tangent along x, normal pointing down (into the hole below the peg)
    peg = homogeneous(sympy.diag(1, -1, -1), [0, 0, 0])
    hang = surface_point_joint(torus, peg, neutral=(0.0, np.pi), name="torus on peg")
    return _torus_chain(Model(name=f"TC{n}"), {}, torus, (hang, "peg"), n, mass)


# --- the windmill (WM) ------------------------------------------------------------------------
def windmill(arms: int = 6, hub_radius: float = 0.3, mass: float = 0.5) -> Model:
    """A windmill: a spherical hub on a horizontal axle with ``arms`` arms of three links.

    Arms alternate between sphere → torus → torus and ellipsoid → torus →
    torus, so the tree has sphere–sphere, sphere–ellipsoid, sphere–torus,
    torus–ellipsoid and torus–torus contacts (Si & Guenter, Fig. 2), each a
    four-coordinate surface–surface joint (GL Eq. 15).  With six arms the
    model has 1 + 6 × 3 × 4 = 73 DoF, Si & Guenter's WM.
    """
    if arms < 1:
        raise ModelError(f"a windmill needs at least one arm, got {arms}")
    hub = geometry.Sphere(hub_radius)
    ball = geometry.Sphere(0.12)
    egg = geometry.Ellipsoid(0.2, 0.1, 0.1)
    ring = geometry.Torus(0.15, 0.04)
    # outward contacts: sphere/ellipsoid at (u, v) = (0, 0) and (π, 0) (the ends of the
    # x axis); a torus's outer equator at u = 0 and its inner equator at u = π (v = π).
    joints = {
        ("ball", "hub"): lambda u: surface_surface_joint(hub, ball, (u, 0.0, 0.0, 0.0),
                                                         "sphere-sphere"),
        ("egg", "hub"): lambda u: surface_surface_joint(hub, egg, (u, 0.0, 0.0, 0.0),
                                                        "sphere-ellipsoid"),
    }
    ball_ring = surface_surface_joint(ball, ring, (np.pi, 0.0, 0.0, 0.0), "sphere-torus")
    egg_ring = surface_surface_joint(egg, ring, (np.pi, 0.0, 0.0, 0.0), "ellipsoid-torus")
    ring_ring = surface_surface_joint(ring, ring, (np.pi, np.pi, 0.0, np.pi), "torus-torus")
    model = Model(name="windmill")
    # the hub turns about the world y axis; its own z axis is the axle
    axle = plux(np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]), np.zeros(3))
    h = model.add_body(-1, Revolute([0, 0, 1]), axle, ellipsoid_inertia(
        4 * mass, hub_radius, hub_radius, hub_radius), "hub", "axle")
    shapes = {"hub": hub}
    for k in range(arms):
        u = 2 * np.pi * k / arms
        first = "ball" if k % 2 == 0 else "egg"
        surface = ball if first == "ball" else egg
        inertia = (ellipsoid_inertia(mass, 0.12, 0.12, 0.12) if first == "ball" else
                   ellipsoid_inertia(mass, 0.2, 0.1, 0.1))
        b1 = model.add_body(h, joints[first, "hub"](u), None, inertia, f"arm{k}_{first}",
                            f"arm{k}_hub_contact")
        b2 = model.add_body(b1, ball_ring if first == "ball" else egg_ring, None,
                            torus_inertia(mass, 0.15, 0.04), f"arm{k}_ring1",
                            f"arm{k}_{first}_contact")
        model.add_body(b2, ring_ring, None, torus_inertia(mass, 0.15, 0.04), f"arm{k}_ring2",
                       f"arm{k}_ring_contact")
        shapes.update({f"arm{k}_{first}": surface, f"arm{k}_ring1": ring,
                       f"arm{k}_ring2": ring})
    _SHAPES[model] = shapes
    return model


# --- a bead on a wire -------------------------------------------------------------------------
def bead_on_wire(curve=None, mass: float = 0.1, roll: bool = False) -> Model:
    """A bead sliding on a fixed wire, its frame the wire's Frenet frame (GL §5, Fig. 8).

    ``curve`` is any :class:`rbd.geometry.Curve` (default: a helix of radius
    0.5 m rising 0.1 m per radian about the vertical).  With ``roll=True`` the
    bead may also spin about the wire (``C(s) Rx(θ)``, two coordinates).
    """
    curve = geometry.Helix(0.5, 0.1) if curve is None else curve
    joint = curve_joint(curve, roll=roll, name="bead")
    model = Model(name="bead_on_wire")
    radius = 0.02
    model.add_body(-1, joint, None, ellipsoid_inertia(mass, radius, radius, radius), "bead",
                   "wire")
    _SHAPES[model] = {"world": ("wire", curve), "bead": geometry.Sphere(radius)}
    return model


# --- rolling wheels ---------------------------------------------------------------------------
def _rolling_joint(track_radius: float, wheel_radius: float, name: str) -> SymbolicJoint:
    """A wheel rolling without slip on the outside of a circle, in the plane z = 0.

    The wheel's centre sits at angle ``q`` on the circle of radius
    ``track_radius + wheel_radius``; rolling turns the wheel by
    ``(track_radius + wheel_radius) / wheel_radius · q`` (GL §5, Fig. 5c).
    """
    q = sympy.Symbol("q", real=True)
    k = sympy.Float(track_radius + wheel_radius)
    G = homogeneous(rot_z(k / wheel_radius * q), [k * sympy.cos(q), k * sympy.sin(q), 0])
    return SymbolicJoint(G, [q], neutral=[np.pi / 2], name=name)


def rolling_wheels(track_radius: float = 1.0, r1: float = 0.3, r2: float = 0.12,
                   mass1: float = 1.0, mass2: float = 0.3) -> Model:
    """A wheel rolling on a fixed circle and a second wheel rolling on the first (GL Fig. 5c).

    The wheels turn in the vertical x-y plane; gravity points along -y.  Each
    joint has one coordinate: the angle of the wheel's centre about the
    circle it rolls on (the first wheel's rim, for the second wheel).
    """
    model = Model(gravity=(0.0, -9.81, 0.0), name="rolling_wheels")
    disc = lambda m, a: (m, np.zeros(3), np.diag([m * a * a / 4, m * a * a / 4,  # noqa: E731
                                                  m * a * a / 2]))
    w1 = model.add_body(-1, _rolling_joint(track_radius, r1, "wheel on track"), None,
                        disc(mass1, r1), "wheel1", "track_contact")
    model.add_body(w1, _rolling_joint(r1, r2, "wheel on wheel"), None, disc(mass2, r2),
                   "wheel2", "wheel_contact")
    _SHAPES[model] = {"world": ("wire", geometry.Circle(track_radius)),
                      "wheel1": ("wire", geometry.Circle(r1)),
                      "wheel2": ("wire", geometry.Circle(r2))}
    return model


# --- the four-bar knee ------------------------------------------------------------------------
#: Crossed four-bar knee (m): femoral pivots A, D; crank AB, coupler BC (tibial plateau),
#: rocker DC.  Opposite bars are equal (an anti-parallelogram): the loop closes for crank
#: angles 0 < θ < π; at θ = 0 and θ = π the two circles touch and the linkage is singular.
KNEE = {"ground": 0.03, "crank": 0.04, "coupler": 0.03, "rocker": 0.04}


def four_bar_coupler(ground: float, crank: float, coupler: float, rocker: float,
                     crossed: bool = True) -> SymbolicJoint:
    r"""The coupler of a four-bar linkage as a one-coordinate joint (GL §5, closed loops).

    Pivots ``A = (0, 0)`` and ``D = (ground, 0)`` are fixed in the parent, in
    its x-y plane.  The crank turns by ``θ`` about ``A``:
    :math:`B = crank\,(\cos θ, \sin θ)`; ``C`` is where the circles about ``B``
    (radius ``coupler``) and ``D`` (radius ``rocker``) meet.  The coupler
    frame has its origin at ``B`` and its x axis along ``BC``.
    """
    theta = sympy.Symbol("theta", real=True)
    B = sympy.Matrix([crank * sympy.cos(theta), crank * sympy.sin(theta)])
    delta = sympy.Matrix([ground, 0]) - B
    L2 = delta.dot(delta)
    L = sympy.sqrt(L2)
    along = (coupler**2 + L2 - rocker**2) / (2 * L)             # BC projected on BD
    across = sympy.sqrt(coupler**2 - along**2) * (-1 if crossed else 1)
    e = delta / L
    C = B + along * e + across * sympy.Matrix([-e[1], e[0]])
    x = (C - B) / coupler
    R = sympy.Matrix([[x[0], -x[1], 0], [x[1], x[0], 0], [0, 0, 1]])
    G = homogeneous(R, [B[0], B[1], 0])
    return SymbolicJoint(G, [theta], neutral=[np.pi / 2], name="four-bar knee")


def four_bar_knee(thigh_mass: float = 7.0, shank_mass: float = 3.5) -> Model:
    """A leg with a four-bar knee: thigh on a hip hinge, shank on the crossed four-bar.

    The knee is a closed loop (two cruciate ligaments as crank and rocker,
    the tibial plateau as coupler) whose pose is a closed-form function of the
    crank angle, so the leg has 2 DoF and no loop constraint (GL §7).  The
    bars themselves are massless.  The leg swings in the x-z plane.
    """
    model = Model(name="four_bar_knee")
    to_plane = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])  # joint z along world y
    thigh = model.add_body(-1, Revolute([0, 1, 0]), None,
                           (thigh_mass, np.array([0, 0, -0.2]), np.diag([0.1, 0.1, 0.02])),
                           "thigh", "hip")
    # The knee's linkage plane is the thigh's x-z plane, its ground link below the thigh
    # (the linkage frame's +y points down).  The shank hangs straight down when the crank
    # is at θ = π/2, in the middle of the range where the loop closes.
    knee = four_bar_coupler(**KNEE)
    R0, _ = knee.transform(np.array([np.pi / 2]))
    com = R0.T @ np.array([0.0, 0.2, 0.0])
    I_com = R0.T @ np.diag([0.05, 0.01, 0.05]) @ R0
    model.add_body(thigh, knee, plux(to_plane, [0.0, 0.0, -0.4]), (shank_mass, com, I_com),
                   "shank", "knee")
    _SHAPES[model] = {}
    return model


# --- a torus chain on a Bézier curve (Si & Guenter, Fig. 3) -----------------------------------
#: The seven control points (m) of the default curve: x evenly spaced, so x(s) = -3 + 6 s
#: and the tangent is never vertical; z symmetric about s = 1/2 (a valley, lowest at the
#: middle, where the tangent is horizontal: z(1/2) = 0.047); y antisymmetric (a gentle S
#: seen from above).  The ends climb with slope -0.9 and 0.9.
SPLINE_POINTS = np.array([[-3.0, 0.0, 1.2],
                          [-2.0, 0.8, 0.3],
                          [-1.0, 0.6, -0.1],
                          [0.0, 0.0, 0.0],
                          [1.0, -0.6, -0.1],
                          [2.0, -0.8, 0.3],
                          [3.0, 0.0, 1.2]])
#: The travelling frame's reference direction: its N is the world z made normal to the curve.
UP = (0.0, 0.0, 1.0)


def torus_chain_on_spline(n: int = 4, control_points=None, R: float = 0.5, r: float = 0.1,
                          mass: float = 1.0) -> Model:
    """A chain of ``n`` tori whose first torus slides along a Bézier curve (S&G Fig. 3).

    The curve (degree 6 with the default seven :data:`SPLINE_POINTS`, one
    polynomial in Bernstein form, :class:`~rbd.geometry.BezierCurve`)
    passes through the centre of the first torus, whose symmetry axis z
    stays on the tangent.  Its joint is ``C(s) A Rz(θ)`` (GL §5): ``C`` the
    curve's travelling frame with ``N`` towards the world's +z
    (:func:`~rbd.symbolic.frames.curve_frame` with ``up``), ``A`` the turn
    putting the torus axis on the tangent, ``θ`` a roll about it.  The other
    tori hang from it by torus–torus contacts as in :func:`torus_chain`
    (GL (15)).  At the neutral configuration the first torus is at the
    middle of the curve (``s = 1/2``, ``θ = 0``) and the chain hangs straight
    down.  DoF ``2 + 4 (n - 1)``.
    """
    _check_torus_chain(n, R, r)
    curve = BezierCurve(SPLINE_POINTS if control_points is None else control_points)
    tangent = curve.derivatives(0.5, 1)[1]
    if np.linalg.norm(np.cross(tangent, UP)) < 1e-6 * np.linalg.norm(tangent):
        raise ModelError("the curve's tangent at s = 1/2 is vertical: the travelling frame "
                         "turning N towards +z is undefined there")
    torus = geometry.Torus(R, r)
    ride = curve_joint(curve, roll=True, neutral=(0.5, 0.0), name="torus on spline", up=UP,
                       axis="z")
    return _torus_chain(Model(name=f"TC{n} on spline"), {"world": ("wire", curve)}, torus,
                        (ride, "spline"), n, mass)


# --- a board on a Bézier surface (Si & Guenter, Fig. 4) ---------------------------------------
#: Heights (m) of the 5 × 5 control net over [-1, 1]² (x with u, y with v, evenly spaced): a
#: lopsided bowl, lowest near the middle, with slopes up to about 0.6; a height field, so
#: the patch is regular everywhere (x_u × x_v has z component 4).
SURFACE_HEIGHTS = np.array([[0.6, 0.3, 0.2, 0.3, 0.6],
                            [0.3, 0.0, -0.1, 0.0, 0.4],
                            [0.2, -0.1, -0.2, 0.0, 0.3],
                            [0.3, 0.0, 0.0, 0.1, 0.4],
                            [0.7, 0.4, 0.3, 0.4, 0.8]])


def board_on_bezier_surface(control_points=None, pendulum: bool = True,
                            size=(0.3, 0.2, 0.02), mass: float = 1.0, mast: float = 0.25,
                            length: float = 0.15, bob_mass: float = 0.2) -> Model:
    """A board sliding on a Bézier patch, flat on its tangent plane (S&G Fig. 4).

    The patch is one tensor-product Bézier surface of degree 4 × 4 (25
    control points; default :data:`SURFACE_HEIGHTS` on an evenly spaced grid;
    :class:`~rbd.geometry.BezierSurface`).  The board's joint is
    ``S(u, v) Rz(ψ)``: the surface frame at ``(u, v)`` (GL §5) turned by ``ψ``
    about the normal, so its origin is on the surface and its z axis is the
    surface normal; the board lies on top (centre of mass ``size[2]/2`` above).
    With ``pendulum=True`` a bob hangs from the top of a massless mast of
    height ``mast`` on a hinge about the board's x axis (rod ``length <
    mast``, massless): a two-body system with 4 DoF.  Neutral: the middle of
    the patch, ``(u, v, ψ) = (1/2, 1/2, 0)``, the bob hanging along -z.
    """
    P = (BezierSurface.from_heights(SURFACE_HEIGHTS) if control_points is None
         else BezierSurface(control_points))
    if pendulum and not 0 < length < mast:
        raise ModelError(f"the pendulum must clear the board: need 0 < length < mast, got "
                         f"length={length}, mast={mast}")
    u, v, psi = sympy.symbols("u v psi", real=True)
    G = surface_frame(P, u, v) * homogeneous(rot_z(psi), [0, 0, 0])            # GL §5
    slide = SymbolicJoint(G, [u, v, psi], neutral=(0.5, 0.5, 0.0), name="board on surface")
    a, b, c = size
    model = Model(name="board on Bézier surface")
    board = model.add_body(-1, slide, None, box_inertia(mass, (a, b, c), (0.0, 0.0, c / 2)),
                           "board", "surface")
    shapes = {"world": ("surface", P), "board": ("box", (a / 2, b / 2, c / 2))}
    if pendulum:
        bob = 0.03
        model.add_body(board, Revolute([1, 0, 0]), plux(np.eye(3), [0.0, 0.0, mast]),
                       (bob_mass, np.array([0.0, 0.0, -length]),
                        2 / 5 * bob_mass * bob**2 * np.eye(3)), "bob", "hinge")
        shapes["bob"] = geometry.Sphere(bob).transformed(np.eye(3), (0.0, 0.0, -length))
    _SHAPES[model] = shapes
    return model
