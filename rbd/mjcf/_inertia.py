"""The inertia of an MJCF body: its ``<inertial>``, or its geoms as MuJoCo's compiler infers it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._robotfile import Link, check_merged, quote, violation
from ..errors import MJCFError, ModelError
from ..reference.mass_properties import primitive_inertia, primitive_volume
from ._geoms import geom_frame, mesh_properties
from ._options import _MJ_EPS, _attributes, _Compiler, _Context, _element, _owner
from ._orientation import _ORIENTATIONS, _pose
from ._principal import MESH_TOL, principal_axes
from ._xml import _flag, _scalar, _vector

_PRIMITIVES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")


@dataclass
class _GeomMass:
    """One geom's mass as MuJoCo's compiler keeps it (``mjCGeom``): its mass, centre and
    principal axes (body frame) and its moments about them."""
    name: str
    mass: float
    pos: np.ndarray
    axes: np.ndarray
    moments: np.ndarray


def _geom_mass(elem, R, p, cls, ctx: _Context, body: str, k: int) -> _GeomMass | None:
    """Mass, centre and principal inertia (body frame) of one geom, or None without mass.

    As MuJoCo's compiler (``mjCGeom::Compile``): the mass is ``mass``, or
    ``density`` (1000) times the volume (the area with ``shellinertia``); the
    moments are the shape's (:mod:`rbd.reference.mass_properties`) in the geom frame,
    a mesh's from its triangles by the mesh asset's ``inertia`` rule in the mesh frame
    (:func:`rbd.mjcf._principal.principal_axes`, composed with the geom's as MuJoCo's
    ``mjuu_frameaccum``).
    """
    name = elem.get("name") or f"#{k}"
    where = f"{_element('geom', elem, k)} of {_owner(ctx, body)}"
    attrs = _attributes(elem, "geom", cls, ctx, where)
    group = int(_scalar(attrs, "group", where, 0))
    low, high = ctx.compiler.group_range
    if not low <= group <= high or ("mass" in attrs and _scalar(attrs, "mass", where, 0) == 0):
        return None
    kind = attrs.get("type", "sphere").strip()
    if kind in ("hfield", "sdf") or ("mesh" in attrs and kind != "mesh"):
        raise MJCFError(f"{where}: the body's inertia would come from a "
                        f"{'primitive fitted to a mesh' if kind != 'hfield' else kind} and "
                        "rbd does not compute it: give the body an <inertial> element")
    shell = _flag(attrs, "shellinertia", where, "false") == "true"
    if kind not in _PRIMITIVES and kind != "mesh":
        return None  # a plane has no volume
    size, Rg, pg = geom_frame(elem, attrs, kind, where, ctx)
    R_mesh = np.eye(3)
    if kind == "mesh":
        if shell:
            raise MJCFError(f"{where}: shellinertia on a mesh geom: set inertia='shell' on "
                            "the <mesh> asset instead (as MuJoCo requires)")
        mesh = ctx.assets.meshes.get(attrs.get("mesh", ""))
        if mesh is None:
            raise MJCFError(f"{where}: unknown mesh {quote(attrs.get('mesh', ''))}")
        volume, c_mesh, I_unit = mesh_properties(mesh, where)
        R_mesh, unit_moments = principal_axes(I_unit, MESH_TOL)  # what MuJoCo keeps
    else:
        volume, c_mesh = primitive_volume(kind, size, shell), np.zeros(3)
    if "mass" in attrs:
        mass = _scalar(attrs, "mass", where, 0.0)
    else:
        mass = _scalar(attrs, "density", where, 1000.0) * volume
    if mass < 0:
        raise MJCFError(f"{where}: negative mass or density")
    if mass <= _MJ_EPS or volume <= _MJ_EPS:
        return None
    moments = (unit_moments * (mass / volume) if kind == "mesh"
               else primitive_inertia(kind, size, mass, shell))
    Rg = R @ Rg
    return _GeomMass(name, mass, p + R @ pg + Rg @ c_mesh, Rg @ R_mesh, moments)


def _global_inertia(moments, axes: np.ndarray) -> list:
    """``mjuu_globalinertia``: ``E diag(moments) Eᵀ`` as ``(xx, yy, zz, xy, xz, yz)``."""
    E = axes.tolist()
    t = [[E[r][c] * moments[c] for r in range(3)] for c in range(3)]  # t[c][r]: row c of diag E^T
    return [E[i][0] * t[0][j] + E[i][1] * t[1][j] + E[i][2] * t[2][j]
            for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]


def _off_centre(mass: float, d: list) -> list:
    """``mjuu_offcenter``: the parallel-axis term ``m (|d|² 1 − d dᵀ)``, six numbers."""
    return [mass * (d[1] * d[1] + d[2] * d[2]), mass * (d[0] * d[0] + d[2] * d[2]),
            mass * (d[0] * d[0] + d[1] * d[1]), -mass * d[0] * d[1], -mass * d[0] * d[2],
            -mass * d[1] * d[2]]


def _tensor(six: list) -> np.ndarray:
    xx, yy, zz, xy, xz, yz = six
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _inertia_from_geoms(parts: list, body: str) -> tuple[Link, np.ndarray | None]:
    """``mjCBody::InertiaFromGeom``: the body's inertia from its geoms', summed in MuJoCo's
    order, and its principal axes (None for one geom: its own frame is the inertial one)."""
    with np.errstate(over="ignore", invalid="ignore"):   # overflow is checked below
        if len(parts) == 1:
            g = parts[0]
            link = Link(body, g.mass, g.pos, (g.axes * g.moments) @ g.axes.T)
        else:
            mass, com = 0.0, [0.0, 0.0, 0.0]
            for g in parts:
                mass += g.mass
                com = [com[i] + g.mass * float(g.pos[i]) for i in range(3)]
            ipos = [c / mass for c in com]
            total = [0.0] * 6
            for g in parts:
                own = _global_inertia(g.moments.tolist(), g.axes)
                shift = _off_centre(g.mass, [float(g.pos[i]) - ipos[i] for i in range(3)])
                total = [total[j] + own[j] + shift[j] for j in range(6)]
            link = Link(body, mass, np.array(ipos), _tensor(total))
    try:
        check_merged(link.mass, link.com, link.I_com, [g.name for g in parts])
    except ModelError as exc:
        raise MJCFError(f"body {quote(body)}: its geoms' inertia: {exc}") from None
    return link, (principal_axes(link.I_com)[0] if len(parts) > 1 else None)


def _inertial_link(elem, R, p, ctx: _Context, body: str) -> tuple[Link, object]:
    """The ``<inertial>``'s inertia, and its axes as :func:`_body_link` returns them."""
    where = f"<inertial> of {_owner(ctx, body)}"
    a = elem.attrib
    Ri, c = _pose(a, a, where, ctx.compiler)
    mass = _scalar(a, "mass", where, math.nan)
    if math.isnan(mass):
        raise MJCFError(f"{where}: missing attribute 'mass'")
    if "fullinertia" in a:
        if any(k in a for k in _ORIENTATIONS):
            raise MJCFError(f"{where}: fullinertia gives the axes itself; drop the orientation "
                            "(as MuJoCo requires)")
        xx, yy, zz, xy, xz, yz = _vector(a, "fullinertia", 6, where)
        I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif "diaginertia" in a:
        I = np.diag(_vector(a, "diaginertia", 3, where))
    else:
        raise MJCFError(f"{where}: needs 'diaginertia' or 'fullinertia'")
    Ri = R @ Ri
    if "fullinertia" in a:  # mjuu_fullInertia: the principal axes of the tensor as written
        return Link(body, mass, p + R @ c, Ri @ I @ Ri.T), R @ principal_axes(I)[0]
    return Link(body, mass, p + R @ c, Ri @ I @ Ri.T), Ri


def _bounded(link: Link, compiler: _Compiler, body: str, where: str) -> Link:
    """Apply ``boundmass``, ``boundinertia`` and ``balanceinertia``; check the inertia."""
    if link.mass < 0:  # checked before boundmass, which would hide it
        raise MJCFError(f"{where}: negative mass {link.mass:g}")
    mass, Ic = max(link.mass, compiler.boundmass), 0.5 * (link.I_com + link.I_com.T)
    lam, V = np.linalg.eigh(Ic)
    lam = np.maximum(lam, compiler.boundinertia)
    if compiler.balanceinertia and lam[0] + lam[1] < lam[2]:
        lam = np.full(3, lam.mean())
    Ic = (V * lam) @ V.T if (compiler.boundinertia or compiler.balanceinertia) else Ic
    problem = violation(mass, Ic)
    if problem is not None:
        raise MJCFError(f"{where}: non-physical inertia: {problem}. Correct its <inertial> "
                        "(or set <compiler balanceinertia=\"true\"> as MuJoCo allows)")
    return Link(link.name, mass, link.com, Ic)


def _body_link(kids, body: str, ctx: _Context) -> tuple[Link, object]:
    """The body's inertia, from its ``<inertial>`` or its geoms as MuJoCo's compiler decides,
    and the axes of MuJoCo's inertial frame (``body_iquat``) in the body: the principal
    axes MuJoCo finds (:func:`rbd.mjcf._principal.principal_axes`) of several geoms' sum
    (``mjCBody::InertiaFromGeom``) or of a ``fullinertia``, the ``<inertial>``'s rotation,
    or None (one geom's frame, or no inertia)."""
    where = _owner(ctx, body)
    inertials = [(e, R, p) for e, R, p, _ in kids if e.tag == "inertial"]
    if len(inertials) > 1:
        raise MJCFError(f"{where}: more than one <inertial>")
    mode = ctx.compiler.inertiafromgeom
    if mode == "true" or (mode == "auto" and not inertials):
        geoms = [e for e in kids if e[0].tag == "geom"]
        parts = [g for k, (e, R, p, cls) in enumerate(geoms)
                 if (g := _geom_mass(e, R, p, cls, ctx, body, k)) is not None]
        if parts:  # MuJoCo diagonalizes the sum before boundinertia and balanceinertia
            link, axes = _inertia_from_geoms(parts, body)
            return _bounded(link, ctx.compiler, body, where), axes
    if inertials:
        link, axes = _inertial_link(*inertials[0], ctx, body)
        return _bounded(link, ctx.compiler, body, where), axes
    return (_bounded(Link(body, 0.0, np.zeros(3), np.zeros((3, 3))), ctx.compiler, body, where),
            None)
