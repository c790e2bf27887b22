"""The inertia of an MJCF body: its ``<inertial>``, or its geoms as MuJoCo's compiler infers it."""

from __future__ import annotations

import math

import numpy as np

from .._robotfile import Link, merge, quote, violation
from ..errors import MJCFError, ModelError
from ._options import _MJ_EPS, _attributes, _Compiler, _Context
from ._orientation import _ORIENTATIONS, _pose, _z_to
from ._xml import _flag, _numbers, _scalar, _vector

_PRIMITIVES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")
_NEEDS_MESH = ("mesh", "sdf", "hfield")


def _geom_size(attrs: dict, kind: str, where: str):
    """Sizes, position and orientation given by ``fromto`` (None when absent)."""
    count = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}[kind]
    size = np.zeros(3)
    given = _numbers(attrs["size"], where, "size", (1, 3)) if "size" in attrs else np.zeros(0)
    size[:given.size] = given
    if "fromto" not in attrs:
        if np.any(size[:count] <= 0):
            raise MJCFError(f"{where}: a {kind} needs {count} positive size value(s), got "
                            f"{given.tolist()}")
        return size, None
    if kind == "sphere":
        raise MJCFError(f"{where}: fromto needs a capsule, cylinder, box or ellipsoid")
    ends = _numbers(attrs["fromto"], where, "fromto", 6)
    vec = ends[:3] - ends[3:]
    half = float(np.linalg.norm(vec)) / 2
    if half < _MJ_EPS:
        raise MJCFError(f"{where}: fromto points coincide")
    size[1:] = (size[0], half) if kind in ("ellipsoid", "box") else (half, size[2])
    if np.any(size[:count] <= 0):
        raise MJCFError(f"{where}: a {kind} needs a positive radius, got {given.tolist()}")
    return size, ((ends[:3] + ends[3:]) / 2, _z_to(vec / (2 * half)))


def _primitive(kind: str, s: np.ndarray) -> tuple[float, np.ndarray]:
    """Volume and principal inertia per unit mass of a solid primitive (MuJoCo's formulas)."""
    if kind == "sphere":
        return 4 * math.pi * s[0] ** 3 / 3, np.full(3, 2 * s[0] ** 2 / 5)
    if kind in ("capsule", "cylinder"):
        r, h = s[0], 2 * s[1]
        if kind == "cylinder":
            return math.pi * r * r * h, np.array([(3 * r * r + h * h) / 12] * 2 + [r * r / 2])
        ms = 4 * r / (4 * r + 3 * h)  # mass fraction of the two hemispheres
        mc = 1 - ms
        ixx = mc * (3 * r * r + h * h) / 12 + 2 * ms * r * r / 5 + ms * h * (3 * r + 2 * h) / 8
        izz = mc * r * r / 2 + 2 * ms * r * r / 5
        return math.pi * (r * r * h + 4 * r ** 3 / 3), np.array([ixx, ixx, izz])
    sq = s * s
    moments = np.array([sq[1] + sq[2], sq[0] + sq[2], sq[0] + sq[1]])
    if kind == "ellipsoid":
        return 4 * math.pi * s[0] * s[1] * s[2] / 3, moments / 5
    return 8 * s[0] * s[1] * s[2], moments / 3


def _geom_link(elem, R, p, cls, ctx: _Context, body: str, k: int) -> Link | None:
    """Mass, centre and inertia (body frame) of one geom, or None when it has no mass."""
    name = elem.get("name") or f"#{k}"
    where = f"<geom name={quote(name)}> of body {quote(body)}"
    attrs = _attributes(elem, "geom", cls, ctx, where)
    group = int(_scalar(attrs, "group", where, 0))
    low, high = ctx.compiler.group_range
    if not low <= group <= high or ("mass" in attrs and _scalar(attrs, "mass", where, 0) == 0):
        return None
    kind = attrs.get("type", "sphere").strip()
    if kind in _NEEDS_MESH or "mesh" in attrs:
        raise MJCFError(f"{where}: the body's inertia would come from a {kind} geom "
                        f"{'fitted to a mesh ' if 'mesh' in attrs else ''}and rbd never reads "
                        "mesh or height-field files: give the body an <inertial> element")
    if _flag(attrs, "shellinertia", where, "false") == "true":
        raise MJCFError(f"{where}: shellinertia='true' is not supported: give the body an "
                        "<inertial> element")
    if kind not in _PRIMITIVES:
        return None  # a plane has no volume
    size, fromto = _geom_size(attrs, kind, where)
    if fromto is None:
        Rg, pg = _pose(attrs, elem.attrib, where, ctx.compiler)
    else:
        pg, Rg = fromto
    volume, unit = _primitive(kind, size)
    if "mass" in attrs:
        mass = _scalar(attrs, "mass", where, 0.0)
    else:
        mass = _scalar(attrs, "density", where, 1000.0) * volume
    if mass < 0:
        raise MJCFError(f"{where}: negative mass or density")
    if mass <= _MJ_EPS:
        return None
    Rg = R @ Rg
    return Link(name, mass, p + R @ pg, Rg @ np.diag(mass * unit) @ Rg.T)


def _inertial_link(elem, R, p, ctx: _Context, body: str) -> Link:
    where = f"<inertial> of body {quote(body)}"
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
    return Link(body, mass, p + R @ c, Ri @ I @ Ri.T)


def _bounded(link: Link, compiler: _Compiler, body: str) -> Link:
    """Apply ``boundmass``, ``boundinertia`` and ``balanceinertia``; check the inertia."""
    where = f"body {quote(body)}"
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


def _body_link(kids, body: str, ctx: _Context) -> Link:
    """The body's inertia, from its ``<inertial>`` or its geoms as MuJoCo's compiler decides."""
    inertials = [(e, R, p) for e, R, p, _ in kids if e.tag == "inertial"]
    if len(inertials) > 1:
        raise MJCFError(f"body {quote(body)}: more than one <inertial>")
    mode = ctx.compiler.inertiafromgeom
    if mode == "true" or (mode == "auto" and not inertials):
        geoms = [e for e in kids if e[0].tag == "geom"]
        parts = [g for k, (e, R, p, cls) in enumerate(geoms)
                 if (g := _geom_link(e, R, p, cls, ctx, body, k)) is not None]
        if parts:
            try:
                m, c, Ic = merge([(g, np.eye(6)) for g in parts])
            except ModelError as exc:
                raise MJCFError(f"body {quote(body)}: its geoms' inertia: {exc}") from None
            return _bounded(Link(body, m, c, Ic), ctx.compiler, body)
    if inertials:
        return _bounded(_inertial_link(*inertials[0], ctx, body), ctx.compiler, body)
    return _bounded(Link(body, 0.0, np.zeros(3), np.zeros((3, 3))), ctx.compiler, body)


