"""MJCF ``<equality>``: connect, weld and joint constraints as :mod:`rbd.constraints` kinds.

MuJoCo's meaning (its compiler, ``mj_setConst``, and ``mj_instantiateEquality``):

* ``connect body1 anchor [body2]``: the point ``anchor`` of body1 coincides with
  the point of body2 that it occupies at the reference configuration ``qpos0``
  (:class:`~rbd.constraints.PointAnchor`); ``connect site1 site2``: the two sites'
  origins coincide.
* ``weld body1 [body2] [anchor] [relpose]``: the frame at ``relpose`` (position and
  quaternion ``w x y z``) on body1 coincides with the frame at ``anchor`` (axes of
  body2) on body2; without a ``relpose`` quaternion the relative pose of ``qpos0``
  is kept (:class:`~rbd.constraints.FrameAnchor`); ``weld site1 site2`` aligns the
  two site frames.  ``torquescale="0"`` leaves the rotation free: a point anchor.
* ``joint joint1 [joint2] polycoef``: ``y − y0 = a0 + a1 (x − x0) + … + a4 (x − x0)⁴``
  with ``y0, x0`` the joints' ``qpos0`` (their ``ref``); rbd's coordinate of a hinge
  or slide is MuJoCo's ``qpos``, so the polynomial is expanded in powers of ``x``
  (:class:`~rbd.constraints.JointCoupling`).

``active``, ``solref`` and ``solimp`` (their leading numbers over MuJoCo's
defaults, ``<default><equality>`` classes included) and a weld's ``torquescale``
are kept on each constraint: :func:`rbd.forward` makes MuJoCo's soft rows of
them, the rigid solvers (:func:`rbd.constrained_dynamics`) use none of them but
``torquescale="0"``, which frees the rotation.  Tendon and flex equalities, and
a connect or weld between two bodies fixed to the world, stay in the reader's
warning.
``qpos0`` is rbd's neutral configuration with each hinge and slide at its
``ref`` and each free body where the file puts it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
from numpy.polynomial import Polynomial

from .._robotfile import quote
from ..constraints.kinds import FrameAnchor, JointCoupling, PointAnchor
from ..errors import InputError, MJCFError, ModelError
from ..model import Model
from ..spatial import plux_parts, quat_to_rot
from ._bodies import SOLIMP_DEFAULT, _flatten, _leading, _solref
from ._options import _attributes, _Context, _ignore
from ._orientation import _site_pose
from ._tendons import tendon_names
from ._xml import _flag, _scalar, _vector

__all__ = ["read_equality"]

_TRANSLATED = ("connect", "weld", "joint")


def _pose(X: np.ndarray) -> np.ndarray:
    """(4, 4) pose of the frame a motion transform ``X`` (parent -> frame) reaches."""
    E, r = plux_parts(X)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = E.T, r
    return T


def _static_poses(ctx: _Context) -> dict:
    """World poses of the MJCF bodies welded to the world (no joint up to the worldbody)."""
    poses: dict = {}
    for k, body in enumerate(ctx.bodies):
        if body.joints:
            continue
        if body.parent == -1:
            poses[k] = _pose(body.X)
        elif body.parent in poses:
            poses[k] = poses[body.parent] @ _pose(body.X)
    return poses


def _world_sites(root: ET.Element, ctx: _Context) -> dict:
    """World poses of the sites placed directly in ``<worldbody>``."""
    sites = {}
    for world in root.findall("worldbody"):
        for e, R, p, cls in _flatten(world, "main", ctx, "<worldbody>"):
            if e.tag == "site" and e.get("name"):
                where = f"<site name={quote(e.get('name'))}> of <worldbody>"
                Rs, ps = _site_pose(_attributes(e, "site", cls, ctx, where), e.attrib, where,
                                    ctx.compiler)
                T = np.eye(4)
                T[:3, :3], T[:3, 3] = R @ Rs, p + R @ ps
                sites[e.get("name")] = T
    return sites


class _BothWeldedError(Exception):
    """A connect or weld whose two sides are fixed to the world: nothing to constrain."""


def _reference_configuration(model: Model, ctx: _Context) -> np.ndarray:
    """``qpos0`` in rbd's coordinates: neutral, each free body at its pose in the file."""
    from ..algorithms import neutral

    q = neutral(model)
    for body in ctx.bodies:
        for joint in body.joints:
            if joint.kind in ("hinge", "slide"):
                q[model.q_slice(joint.name)] = joint.ref
        if body.joints and body.joints[0].kind == "free":
            T = _pose(body.X)
            w, x, y, z = _quat_wxyz(T[:3, :3])
            q[model.q_slice(body.joints[0].name)] = [*T[:3, 3], x, y, z, w]
    return q


def _quat_wxyz(R: np.ndarray) -> np.ndarray:
    from ..spatial import rot_to_quat

    x, y, z, w = rot_to_quat(R)
    return np.array([w, x, y, z])


class _Resolver:
    """Names of MJCF bodies and sites to rbd attachment names and world poses at ``qpos0``."""

    def __init__(self, model: Model, ctx: _Context, root: ET.Element):
        self.model, self.ctx = model, ctx
        self.static = {ctx.bodies[k].name: T for k, T in _static_poses(ctx).items()}
        self.static_sites = {name: self.static[b.name] @ _pose(X) for b in ctx.bodies
                             if b.name in self.static for name, X in b.sites}
        self.static_sites.update(_world_sites(root, ctx))
        self.q0 = None

    def _site_frame(self, name: str) -> str:
        """The frame of a site: its name, or ``site:<name>`` where a body has the name."""
        return f"site:{name}" if f"site:{name}" in self.model.frames else name

    def world_pose(self, name: str | None, site: bool = False) -> np.ndarray:
        """World pose at ``qpos0`` of an MJCF body (``site=False``) or site."""
        if name is None or (name == "world" and not site):
            return np.eye(4)
        if site and name in self.static_sites:
            return self.static_sites[name]
        if not site and name in self.static:
            return self.static[name]
        from ..algorithms import frame_pose

        if self.q0 is None:
            self.q0 = _reference_configuration(self.model, self.ctx)
        frame = self._site_frame(name) if site else name
        return frame_pose(self.model, self.q0, frame, backend="reference")

    def attachment(self, name: str | None, where: str, site: bool = False) -> str | None:
        """The rbd body or frame of an MJCF body or site; None for the world."""
        if site:
            if name in self.static_sites:
                return None
            frame = self._site_frame(name)
            if frame in self.model.frames:
                return frame
        elif name is None or name == "world" or name in self.static:
            return None
        elif name in self.model.body_names or name in self.model.frames:
            return name
        raise MJCFError(f"{where}: unknown body or site {quote(name)}")


def _names(attrs: dict, kind: str, where: str) -> tuple[str, str | None, bool]:
    """``(name1, name2, sites)`` of a connect or weld: body semantic or site semantic."""
    if "body1" in attrs and (kind == "weld" or "anchor" in attrs):
        return attrs["body1"], attrs.get("body2"), False
    if "site1" in attrs and "site2" in attrs:
        return attrs["site1"], attrs["site2"], True
    need = "body1 and anchor" if kind == "connect" else "body1"
    raise MJCFError(f"{where}: needs {need}, or site1 and site2")


def _connect(attrs, where, res: _Resolver, common: dict):
    one, two, sites = _names(attrs, "connect", where)
    a, b = res.attachment(one, where, sites), res.attachment(two, where, sites)
    if sites:
        return _anchor(a, b, res, (one, two, True), np.zeros(3), None, common)
    anchor = _vector(attrs, "anchor", 3, where)
    world = res.world_pose(one)
    point = world[:3, :3] @ anchor + world[:3, 3]                     # at qpos0
    T2 = res.world_pose(two)
    point_b = T2[:3, :3].T @ (point - T2[:3, 3])
    return _anchor(a, b, res, (one, two, False), anchor, point_b, common)


def _in_world(a, b, res, names, Ta, Tb):
    """The two poses, a side on a body or site fixed to the world re-expressed in world;
    ``names``: the MJCF names of the two sides and whether they are sites."""
    one, two, sites = names
    if a is None and b is None:
        raise _BothWeldedError
    if a is None:
        Ta = res.world_pose(one, sites) @ Ta
    if b is None:
        Tb = res.world_pose(two, sites) @ Tb
    return Ta, Tb


def _anchor(a, b, res, names, point_a, point_b, common):
    """A point anchor whose attachments may be bodies or sites fixed to the world."""
    Ta = np.eye(4)
    Ta[:3, 3] = point_a
    Tb = np.eye(4)
    if point_b is not None:
        Tb[:3, 3] = point_b
    Ta, Tb = _in_world(a, b, res, names, Ta, Tb)
    return PointAnchor(a, b, Ta[:3, 3], Tb[:3, 3], **common)


def _weld(attrs, where, res: _Resolver, common: dict):
    one, two, sites = _names(attrs, "weld", where)
    a, b = res.attachment(one, where, sites), res.attachment(two, where, sites)
    common = dict(common, torquescale=_scalar(attrs, "torquescale", where, 1.0))
    if common["torquescale"] < 0:
        raise MJCFError(f"{where}: torquescale must not be negative, got "
                        f"{common['torquescale']}")
    if sites:
        return _framed(a, b, res, (one, two, True), np.eye(4), np.eye(4), common)
    anchor = _vector(attrs, "anchor", 3, where, [0.0, 0.0, 0.0])
    relpose = _vector(attrs, "relpose", 7, where, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    pose_b = np.eye(4)
    pose_b[:3, 3] = anchor
    pose_a = np.eye(4)
    if np.any(relpose[3:]):
        w, x, y, z = relpose[3:] / np.linalg.norm(relpose[3:])
        pose_a[:3, :3], pose_a[:3, 3] = quat_to_rot(np.array([x, y, z, w])), relpose[:3]
    else:                               # the relative pose of qpos0
        pose_a = np.linalg.solve(res.world_pose(one), res.world_pose(two) @ pose_b)
    return _framed(a, b, res, (one, two, False), pose_a, pose_b, common)


def _framed(a, b, res, names, pose_a, pose_b, common):
    pose_a, pose_b = _in_world(a, b, res, names, pose_a, pose_b)
    return FrameAnchor(a, b, pose_a, pose_b, **common)


def _joint(attrs, where, ctx: _Context, common: dict):
    """``y = y0 + p(x − x0)`` expanded in powers of ``x`` (``x0``, ``y0``: the refs)."""
    if "joint1" not in attrs:
        raise MJCFError(f"{where}: missing attribute 'joint1'")
    a = _vector(attrs, "polycoef", (1, 5), where, [0.0, 1.0, 0.0, 0.0, 0.0])
    refs = {j.name: j.ref for b in ctx.bodies for j in b.joints}
    one, two = attrs["joint1"], attrs.get("joint2")
    y0, x0 = refs.get(one, 0.0), refs.get(two, 0.0)
    if two is None:
        return JointCoupling(one, None, [y0 + a[0]], **common)
    p = Polynomial(a)(Polynomial([-x0, 1.0])) + y0
    return JointCoupling(one, two, p.coef, **common)


def read_equality(root: ET.Element, ctx: _Context, model: Model, ignored: dict) -> None:
    """Add the file's connect, weld and joint equalities to ``model.constraints``.

    The other kinds (tendon, flex) stay listed in ``ignored`` under "equality
    constraints"; the translated ones are taken off that list.
    """
    ignored.pop("equality constraints", None)
    res = _Resolver(model, ctx, root)
    for elem in (e for s in root.findall("equality") for e in s):
        name = elem.get("name", "")
        where = f"<equality/{elem.tag}" + (f" name={quote(name)}>" if name else ">")
        if elem.tag == "tendon" and {elem.get("tendon1"), elem.get("tendon2")} - {None} <= (
                tendon_names(root)):
            continue                                    # rbd.mjcf._tendons reads it
        if elem.tag not in _TRANSLATED:
            _ignore(ignored, "equality constraints",
                    f"<{elem.tag}" + (f" {quote(name)}>" if name else ">"))
            continue
        attrs = _attributes(elem, "equality", "main", ctx, where)
        common = {"name": name, "active": _flag(attrs, "active", where, "true") == "true",
                  "solref": _solref(attrs, "solref", where),
                  "solimp": _leading(attrs, "solimp", where, SOLIMP_DEFAULT)}
        try:
            if elem.tag == "connect":
                constraint = _connect(attrs, where, res, common)
            elif elem.tag == "weld":
                constraint = _weld(attrs, where, res, common)
            else:
                constraint = _joint(attrs, where, ctx, common)
            model.add_constraint(constraint)
        except _BothWeldedError:
            _ignore(ignored, "equality constraints between bodies fixed to the world",
                    f"<{elem.tag}" + (f" {quote(name)}>" if name else ">"))
        except (ModelError, InputError) as exc:
            raise MJCFError(f"{where}: {exc}") from None
