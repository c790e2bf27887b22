"""The body tree of an MJCF document: bodies, joints and sites, depth-first (MuJoCo's order)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from .._robotfile import Link, quote
from ..errors import MJCFError
from ..spatial import plux, rot_to_quat
from ._geoms import geom_record
from ._inertia import _body_link
from ._options import _MJ_EPS, _MJ_MINVAL, _attributes, _Context, _element, _ignore, _owner
from ._orientation import _pose, _site_pose
from ._xml import _flag, _numbers, _scalar, _vector

#: MuJoCo's default ``solref`` and ``solimp`` (``mj_defaultSolRefImp``).
SOLREF_DEFAULT = (0.02, 1.0)
SOLIMP_DEFAULT = (0.9, 0.95, 0.001, 0.5, 2.0)

_JOINT_KINDS = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical", "free": "free"}
_REFUSED = {  # elements that add bodies or degrees of freedom rbd cannot read
    "composite": "expand it in MuJoCo and save the compiled model (mj_saveLastXML)",
    "flexcomp": "flexible bodies are not rigid: rbd cannot model them",
    "replicate": "expand it in MuJoCo and save the compiled model (mj_saveLastXML)",
    "attach": "expand it in MuJoCo and save the compiled model (mj_saveLastXML)",
    "deformable": "flexible bodies are not rigid: rbd cannot model them",
}
_BODY_CHILDREN = ("inertial", "joint", "freejoint", "geom", "site", "camera", "light", "body",
                  "plugin")


@dataclass
class _MJJoint:
    name: str
    kind: str  # hinge, slide, ball, free
    axis: np.ndarray
    pos: np.ndarray
    ref: float
    properties: dict = field(default_factory=dict)
    softness: dict = field(default_factory=dict)  # MuJoCo's spring and solver parameters


@dataclass
class _MJBody:
    name: str
    parent: int  # index of the parent MJCF body, -1 for the world
    X: np.ndarray  # motion transform: parent body frame -> this body's reference frame
    joints: list
    inertia: object  # () -> (Link, inertial axes): see _inertia._body_link
    sites: list  # (name, X body -> site)
    geoms: list = field(default_factory=list)  # Geom records, poses in this body's frame
    mocap: bool = False  # a mocap body: welded to the world at its default mocap pose
    _link: Link | None = None
    _axes: object = None

    @property
    def link(self) -> Link:
        """The body's inertia, computed on first use (bodies welded to the world need none)."""
        if self._link is None:
            self._link, self._axes = self.inertia()
        return self._link

    @property
    def inertial_axes(self):
        """Axes of MuJoCo's inertial frame (``body_iquat``): a rotation or None
        (:func:`rbd.mjcf._inertia._body_link`)."""
        _ = self.link
        return self._axes

    @link.setter
    def link(self, value: Link) -> None:
        self._link = value


def _flatten(body: ET.Element, childclass: str, ctx: _Context, where: str):
    """Children of ``body`` with ``<frame>`` elements resolved: (elem, R, p, childclass)."""
    out = []
    stack = [(iter(body), np.eye(3), np.zeros(3), childclass)]  # frames nest: no recursion
    while stack:
        children, R, p, cls = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        if child.tag in _REFUSED:
            raise MJCFError(f"{where}: <{child.tag}> is not supported: {_REFUSED[child.tag]}")
        if child.tag not in (*_BODY_CHILDREN, "frame"):
            raise MJCFError(f"{where}: unknown element <{child.tag}> (MJCF allows "
                            f"{', '.join(_BODY_CHILDREN)} and frame here)")
        if child.tag == "frame":
            attrs = _attributes(child, "frame", cls, ctx, f"{where} <frame>")
            Rf, pf = _pose(attrs, child.attrib, f"{where} <frame>", ctx.compiler)
            stack.append((iter(child), R @ Rf, p + R @ pf, child.get("childclass", cls)))
        else:
            out.append((child, R, p, cls))
    return out


def _joint_properties(kind: str, attrs: dict, where: str, ctx: _Context, name: str) -> dict:
    props = {key: _scalar(attrs, attr, where, 0.0) for key, attr in
             (("armature", "armature"), ("damping", "damping"), ("friction", "frictionloss"))}
    if kind == "free":
        return props
    limited = _flag(attrs, "limited", where, "auto", ("true", "false", "auto"))
    rng = _vector(attrs, "range", 2, where, [0.0, 0.0])
    if limited == "auto":
        limited = "true" if ctx.compiler.autolimits and np.any(rng) else "false"
    if limited == "true" and kind == "ball":
        _ignore(ctx.ignored, "ball-joint cone limits (range)", quote(name))
    elif limited == "true":
        if rng[0] >= rng[1]:
            raise MJCFError(f"{where}: range {rng.tolist()} must have range[0] < range[1]")
        scale = math.pi / 180.0 if ctx.compiler.degree and kind == "hinge" else 1.0
        props.update(lower=rng[0] * scale, upper=rng[1] * scale)
    return props


def _read_joint(elem, R, p, cls, ctx: _Context, body: str, k: int) -> _MJJoint:
    free = elem.tag == "freejoint"
    name = elem.get("name") or f"{body}_joint{k}"
    where = f"{_element(elem.tag, elem, k)} of {_owner(ctx, body)}"
    attrs = dict(elem.attrib) if free else _attributes(elem, "joint", cls, ctx, where)
    kind = "free" if free else attrs.get("type", "hinge").strip()
    if kind not in _JOINT_KINDS:
        raise MJCFError(f"{where}: unknown joint type {quote(kind)} (MJCF joint types: "
                        f"{', '.join(_JOINT_KINDS)})")
    if _flag(attrs, "align", where, "auto", ("true", "false", "auto")) == "true":
        raise MJCFError(f"{where}: align='true' moves the body frame to the inertial frame, "
                        "which rbd does not do: remove it")
    axis = R @ _vector(attrs, "axis", 3, where, [0, 0, 1])
    if kind in ("hinge", "slide") and np.abs(axis).max() < _MJ_EPS:
        raise MJCFError(f"{where}: axis is zero")
    axis = axis / max(float(np.abs(axis).max()), _MJ_EPS)  # the norm of 1e300 would overflow
    scale = math.pi / 180.0 if ctx.compiler.degree and kind == "hinge" else 1.0
    ref = _scalar(attrs, "ref", where, 0.0) * scale if kind in ("hinge", "slide") else 0.0
    pos = p + R @ _vector(attrs, "pos", 3, where, [0, 0, 0]) if kind != "free" else np.zeros(3)
    norm = float(np.linalg.norm(axis))
    softness = _joint_softness(kind, attrs, where, scale)
    if kind in ("hinge", "slide"):
        softness["qpos0"] = ref                         # MuJoCo's qpos0 of the joint
    return _MJJoint(name, kind, axis / norm if norm else axis, pos, ref,
                    _joint_properties(kind, attrs, where, ctx, name), softness)


def _joint_softness(kind: str, attrs: dict, where: str, scale: float) -> dict:
    """MuJoCo's joint spring (hinge, slide) and the solver parameters of its limit and
    friction-loss rows (``solreflimit``, ``solimplimit``, ``margin``, ``solreffriction``,
    ``solimpfriction``), MuJoCo's defaults where the file says nothing."""
    out = {"margin": _scalar(attrs, "margin", where, 0.0)}
    for key in ("solreflimit", "solreffriction"):
        out[key] = _solref(attrs, key, where)
    for key in ("solimplimit", "solimpfriction"):
        out[key] = _leading(attrs, key, where, SOLIMP_DEFAULT)
    out["stiffness"] = _scalar(attrs, "stiffness", where, 0.0)
    if out["stiffness"] < 0:
        raise MJCFError(f"{where}: stiffness must not be negative, got {out['stiffness']}")
    if kind in ("hinge", "slide"):
        out["springref"] = _scalar(attrs, "springref", where, 0.0) * scale
    elif kind == "ball":                        # qpos_spring: MuJoCo's qpos0 (w, x, y, z)
        out["qpos_spring"] = np.array([1.0, 0.0, 0.0, 0.0])
    timeconst, dampratio = _vector(attrs, "springdamper", 2, where, [0, 0])
    if timeconst or dampratio:
        if timeconst <= 0 or dampratio <= 0:
            raise MJCFError(f"{where}: springdamper (time constant, damping ratio) must both "
                            f"be positive, got {[float(timeconst), float(dampratio)]}")
        out["springdamper"] = (float(timeconst), float(dampratio))
    return out


def _leading(attrs: dict, key: str, where: str, default) -> np.ndarray:
    """Up to ``len(default)`` numbers over ``default`` (MuJoCo reads a leading part)."""
    out = np.array(default, dtype=float)
    if key in attrs:
        values = _numbers(attrs[key], where, key, (1, out.size))
        out[:values.size] = values
    return out


def _solref(attrs: dict, key: str, where: str) -> np.ndarray:
    """A ``solref``-like pair: both positive (time constant, damping ratio) or both not
    (-stiffness, -damping); MuJoCo replaces a mixed pair with its default and warns."""
    out = _leading(attrs, key, where, SOLREF_DEFAULT)
    if (out[0] > 0) != (out[1] > 0):
        raise MJCFError(f"{where}: {key}={attrs[key]!r} mixes the standard form (time constant "
                        "and damping ratio, both positive) and the direct form (-stiffness, "
                        "-damping)")
    return out


def _read_body(elem, R, p, cls, parent: int, ctx: _Context, label: str) -> list:
    """Append the body ``elem`` to ``ctx.bodies``; its child bodies, to be read next."""
    index = len(ctx.bodies)
    name = elem.get("name") or f"body{index + 1}"
    if not elem.get("name"):
        ctx.labels[name] = label
    where = _owner(ctx, name)
    attrs = _attributes(elem, "body", cls, ctx, where)
    Rb, pb = _pose(attrs, elem.attrib, where, ctx.compiler)
    Rb, pb = R @ Rb, p + R @ pb
    cls = elem.get("childclass", cls)
    if cls not in ctx.classes:
        raise MJCFError(f"{where}: unknown childclass {quote(cls)}")
    if _scalar(attrs, "gravcomp", where, 0.0):
        _ignore(ctx.ignored, "gravity compensation (gravcomp) of bodies", quote(name))
    mocap = _flag(attrs, "mocap", where, "false") == "true"
    if mocap:
        _ignore(ctx.ignored, "mocap motion (welded to the world at the body's pose) of bodies",
                quote(name))
    kids = _flatten(elem, cls, ctx, where)
    joints = [_read_joint(e, Rk, pk, c, ctx, name, k) for k, (e, Rk, pk, c) in
              enumerate(x for x in kids if x[0].tag in ("joint", "freejoint"))]
    _check_joints(joints, parent, where)
    for joint in (j for j in joints if j.kind == "free"):     # qpos_spring: the body's pose
        x, y, z, w = rot_to_quat(Rb)
        joint.softness["qpos_spring"] = np.array([*pb, w, x, y, z])
    sites = []
    for k, (e, Rk, pk, c) in enumerate(x for x in kids if x[0].tag == "site"):
        if e.get("name"):
            where_site = f"{_element('site', e, k)} of {where}"
            site_attrs = _attributes(e, "site", c, ctx, where_site)
            Rs, ps = _site_pose(site_attrs, e.attrib, where_site, ctx.compiler)
            sites.append((e.get("name"), plux((Rk @ Rs).T, pk + Rk @ ps)))
    geoms = []
    for k, (e, Rk, pk, c) in enumerate(x for x in kids if x[0].tag == "geom"):
        g = geom_record(e, Rk, pk, c, ctx, ctx.assets, name, k, ctx.geom_names)
        if g:
            geoms.append(g)
        _fluid_shape(e, g, c, ctx, name, f"{_element('geom', e, k)} of {where}")
    ctx.bodies.append(_MJBody(name, parent, plux(Rb.T, pb), joints,
                              lambda: _body_link(kids, name, ctx), sites, geoms,
                              mocap and parent == -1 and not joints))
    if any(e.tag == "plugin" for e, *_ in kids):
        _ignore(ctx.ignored, "plugins of bodies", quote(name))
    children = [x for x in kids if x[0].tag == "body"]
    up = where if where.count(" of ") < 3 else where.split(" of ", 1)[0] + " of ..."
    return [(e, Rk, pk, c, index, f"<body #{k}> (unnamed) of {up}")
            for k, (e, Rk, pk, c) in enumerate(children)]


def _fluid_shape(elem, geom, cls, ctx: _Context, body: str, where: str) -> None:
    """Note a geom with ``fluidshape="ellipsoid"`` and its ``fluidcoef`` (MuJoCo's defaults
    0.5 0.25 1.5 1 1: blunt drag, slender drag, angular drag, Kutta lift, Magnus lift)."""
    attrs = _attributes(elem, "geom", cls, ctx, where)
    shape = _flag(attrs, "fluidshape", where, "none", ("none", "ellipsoid"))
    if shape == "none":
        return
    coefs = _vector(attrs, "fluidcoef", 5, where, [0.5, 0.25, 1.5, 1.0, 1.0])
    kinds = ("sphere", "capsule", "cylinder", "ellipsoid", "box")
    usable = geom is not None and geom.kind in kinds
    ctx.fluid_ellipsoid.setdefault(body, []).append((geom.name if usable else where,
                                                     coefs if usable else None))


def _read_tree(first: list, ctx: _Context) -> None:
    """Read bodies depth-first in document order (MuJoCo's numbering) with an explicit stack,
    so any nesting depth is read without recursion."""
    stack = list(reversed(first))
    while stack:
        e, R, p, cls, parent, label = stack.pop()
        stack.extend(reversed(_read_body(e, R, p, cls, parent, ctx, label)))


def _check_joints(joints: list, parent: int, where: str) -> None:
    kinds = [j.kind for j in joints]
    if "free" in kinds and len(kinds) > 1:
        raise MJCFError(f"{where}: a free joint must be the body's only joint")
    if "free" in kinds and parent != -1:
        raise MJCFError(f"{where}: a free joint is allowed only in a child of the worldbody "
                        "(as in MuJoCo)")
    if "ball" in kinds and any(k in ("ball", "hinge") for k in kinds[kinds.index("ball") + 1:]):
        raise MJCFError(f"{where}: a ball joint followed by a rotation (MuJoCo refuses this)")


def _read_world(root: ET.Element, ctx: _Context) -> None:
    for world in root.findall("worldbody"):
        top = []
        for e, R, p, cls in _flatten(world, "main", ctx, "<worldbody>"):
            if e.tag in ("joint", "freejoint"):
                raise MJCFError("<worldbody> cannot have joints: put them in a <body>")
            if e.tag == "body":
                top.append((e, R, p, cls, -1, f"<body #{len(top)}> (unnamed) of <worldbody>"))
            elif e.tag == "geom":
                k = len(ctx.world_geoms)
                geom = geom_record(e, R, p, cls, ctx, ctx.assets, "<worldbody>", k,
                                   ctx.geom_names)
                if geom is not None:
                    ctx.world_geoms.append(geom)
        _read_tree(top, ctx)




def apply_springdamper(model) -> None:
    r"""Joint stiffness and damping from ``springdamper`` (time constant :math:`\tau`,
    damping ratio :math:`\zeta`), as MuJoCo's compiler sets them (``AutoSpringDamper``).

    With :math:`I = n / \sum_i w_i`, the joint's :math:`n` dofs' ``dof_invweight0``
    :math:`w_i` (:func:`rbd.constraints.forward.inverse_weights`):
    :math:`k = I / (\tau^2 \zeta^2)` and :math:`b = 2 I / \tau` (MuJoCo's ``solref``
    relation), replacing the joint's ``stiffness`` and ``damping``.
    """
    from ..constraints.forward import inverse_weights, own_slices

    given = getattr(model, "mujoco_joints", None) or {}
    if not any("springdamper" in soft for soft in given.values()):
        return
    _, dof_weight = inverse_weights(model)
    for _, body, vs in own_slices(model, "v"):
        soft = given.get(body.joint_name, {})
        if "springdamper" not in soft:
            continue
        timeconst, dampratio = soft["springdamper"]
        n = vs.stop - vs.start
        inertia = n / max(_MJ_MINVAL, float(np.sum(dof_weight[vs])))
        soft["stiffness"] = inertia / max(_MJ_MINVAL, timeconst**2 * dampratio**2)
        model.set_joint_properties(body.joint_name,
                                   damping=2 * inertia / max(_MJ_MINVAL, timeconst))
