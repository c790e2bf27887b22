"""Building the model of a read MJCF body tree: one rbd body per joint, welded bodies merged."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._robotfile import Link, merge, quote, unique
from ..errors import MJCFError, ModelError
from ..joints import Fixed, Free, Joint, Prismatic, Revolute, Spherical
from ..model import Model
from ..spatial import axis_angle_rotation, plux, plux_parts
from ._bodies import _MJBody, _MJJoint
from ._options import _MJ_MINVAL
from ._principal import principal_axes
from ._sameframe import snapped_pose


@dataclass
class _Spec:
    parent: int
    joint: Joint
    X_tree: np.ndarray
    name: str
    joint_name: str
    properties: dict = field(default_factory=dict)
    parts: list = field(default_factory=list)  # (Link, X body -> part frame)


def _rbd_joint(joint: _MJJoint) -> Joint:
    if joint.kind == "hinge":
        return Revolute(joint.axis)
    if joint.kind == "slide":
        return Prismatic(joint.axis)
    return Spherical() if joint.kind == "ball" else Free()


def _chain(body: _MJBody, parent: int, X_base: np.ndarray, specs: list, taken: set) -> int:
    r"""Specs for a body's joints, composed in order (module notes); the carrying spec's index.

    Body ``k``'s frame is ``G_k = F_k T(c_k)`` with ``c_k`` the anchor of a hinge or ball
    and zero for a slide; ``X_tree`` reaches its predecessor frame from ``G_{k-1}``.
    """
    if body.joints[0].kind == "free":
        specs.append(_Spec(parent, Free(), np.eye(6), body.name, body.joints[0].name,
                           body.joints[0].properties))
        return len(specs) - 1
    X_prev, c_prev = X_base, np.zeros(3)
    for k, joint in enumerate(body.joints):
        if joint.kind == "slide":
            X_rel, c = plux(np.eye(3), -c_prev - joint.axis * joint.ref), np.zeros(3)
        else:
            turn = axis_angle_rotation(joint.axis, -joint.ref)
            X_rel, c = plux(turn.T, joint.pos - c_prev), joint.pos
        carries = k == len(body.joints) - 1 and not np.any(c)
        name = body.name if carries else unique(f"{body.name}/{joint.name}", taken)
        taken.add(name)
        specs.append(_Spec(parent, _rbd_joint(joint), X_rel @ X_prev, name, joint.name,
                           joint.properties))
        parent, X_prev, c_prev = len(specs) - 1, np.eye(6), c
    if np.any(c_prev):
        specs.append(_Spec(parent, Fixed(), plux(np.eye(3), -c_prev), body.name,
                           unique(f"{body.name}/weld", taken)))
        taken.add(specs[-1].joint_name)
    return len(specs) - 1


def _placed(X: np.ndarray) -> np.ndarray:
    """The pose ``[[Eᵀ, r], [0, 1]]`` of a frame reached by the motion transform ``plux(E, r)``."""
    E, r = plux_parts(X)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = E.T, r
    return T


def _plan(bodies: list) -> tuple[list, list, list, dict]:
    """Specs of the rbd bodies with their inertia parts, the frames ``(name, spec, X)``, the
    geoms ``(spec or -1, Geom in that frame)`` and where each MJCF body went (``places``)."""
    specs: list[_Spec] = []
    frames, geoms = [], []
    places: dict = {"body": {}, "geom": {}, "frame": {}}
    taken = {b.name for b in bodies} | {j.name for b in bodies for j in b.joints}
    named = {b.name: f"body {quote(b.name)}" for b in bodies}  # the frames' namespace
    owner: list[tuple[int, np.ndarray]] = []  # (spec carrying the MJCF body, X spec -> body)
    mocap = set()  # the specs of mocap bodies: welded to the world, like their welded bodies
    for body in bodies:
        base, X_up = (-1, np.eye(6)) if body.parent == -1 else owner[body.parent]
        X_base = body.X @ X_up
        if body.joints:
            owner.append((_chain(body, base, X_base, specs, taken), np.eye(6)))
        elif body.mocap:  # a body on a fixed joint at its pose: its frame, sites and geoms
            specs.append(_Spec(-1, Fixed(), X_base, body.name,
                               unique(f"{body.name}/mocap", taken)))
            taken.add(specs[-1].joint_name)
            mocap.add(len(specs) - 1)
            owner.append((len(specs) - 1, np.eye(6)))
        else:
            owner.append((base, X_base))
            if base >= 0:
                frames.append((body.name, base, X_base))
        spec, X = owner[-1]
        T = _placed(X)
        geoms.extend((spec, g.replace(pose=T @ _snapped(g, body))) for g in body.geoms)
        places["body"][body.name] = (spec, T, body)
        places["geom"].update((g.name, body.name) for g in body.geoms)
        if spec >= 0:
            if spec not in mocap:  # welded to the world, the inertia would never be used
                specs[spec].parts.append((body.link, X))
            for site, X_site in body.sites:
                # MuJoCo keeps sites and bodies apart; rbd's frames are one namespace, so a
                # site named like a body is the frame "site:<name>" (documented in rbd.mjcf)
                name = site if site not in named else f"site:{site}"
                if name in named:
                    raise MJCFError(f"<site name={quote(site)}> of body {quote(body.name)}: "
                                    f"{named[name]} already has the frame name {quote(name)}")
                named[name] = f"<site name={quote(site)}> of body {quote(body.name)}"
                frames.append((name, spec, X_site @ X))
                places["frame"][name] = body.name
    return specs, frames, geoms, places


def _snapped(geom, body: _MJBody | None) -> np.ndarray:
    """The geom's pose in its MJCF body (None: the world) after MuJoCo's ``geom_sameframe``
    snapping (:mod:`rbd.mjcf._sameframe`); a mesh's stays its own.  A body welded to the
    world whose inertia is refused (rbd never uses it) snaps to its body frame only."""
    if geom.kind == "mesh":
        return geom.pose
    try:
        link = body.link if body is not None else None
    except MJCFError:
        if body.joints:                      # a moving body's inertia is checked anyway
            raise
        link = None
    if link is None:
        return snapped_pose(geom.pose, None, None)
    return snapped_pose(geom.pose, link.com, body.inertial_axes)


def _scale_masses(bodies: list, total: float) -> None:
    """``<compiler settotalmass>``: scale every mass and inertia (MuJoCo's mj_setTotalmass)."""
    current = sum(b.link.mass for b in bodies)
    scale = max(_MJ_MINVAL, total / max(_MJ_MINVAL, current))
    for b in bodies:
        b.link = Link(b.name, b.link.mass * scale, b.link.com, b.link.I_com * scale)


def _mujoco_bodies(specs: list, places: dict) -> dict:
    """Each MJCF body's rbd body and centre of mass in that body's frame (MuJoCo computes
    contact and equality weights per body, before rbd merges welded bodies), and the MJCF
    body of each geom and site frame."""
    found = {"body": {}, "geom": places["geom"], "frame": places["frame"], "inertia": {}}
    for name, (spec, T, body) in places["body"].items():
        if spec < 0:
            found["body"][name] = (None, np.zeros(3))
        else:
            com = T[:3, :3] @ np.asarray(body.link.com, float) + T[:3, 3]
            found["body"][name] = (specs[spec].name, com)
            axes, moments = _principal_axes(body.link.I_com, body.geoms, body.inertial_axes)
            found["inertia"][name] = (specs[spec].name, float(body.link.mass), com,
                                      T[:3, :3] @ axes, moments)
    return found


def _principal_axes(inertia, geoms=(), axes=None) -> tuple[np.ndarray, np.ndarray]:
    """Principal axes (columns, body frame) and moments of an inertia about the centre of mass.

    MuJoCo's inertia frame (``body_iquat``): ``axes`` where the reader found them (the
    diagonalized sum of several geoms, a ``fullinertia``, an ``<inertial>``'s frame); for a
    body of one geom, that geom's frame.  There the first of the body's geom frames and of
    the body frame in which the inertia is diagonal is taken (any signed permutation of
    MuJoCo's axes gives the same fluid forces, :mod:`rbd.constraints.fluid`); failing those
    (a mesh, whose principal frame is not its geom's), the inertia is diagonalized as
    MuJoCo does (:func:`rbd.mjcf._principal.principal_axes`)."""
    inertia = np.asarray(inertia, float)
    if axes is not None:
        return axes, np.diag(axes.T @ inertia @ axes).copy()
    scale = max(np.abs(inertia).max(), 1e-300)
    for R in [g.pose[:3, :3] for g in geoms] + [np.eye(3)]:
        local = R.T @ inertia @ R
        if np.abs(local - np.diag(np.diag(local))).max() <= 1e-12 * scale:
            return R, np.diag(local).copy()
    return principal_axes(inertia)


def _build(name: str, gravity, bodies: list, world_geoms=(), labels=None) -> Model:
    specs, frames, geoms, places = _plan(bodies)
    model = Model(gravity=gravity, name=name)
    for spec in specs:
        try:
            inertia = merge(spec.parts) if spec.parts else None
            model.add_body(spec.parent, spec.joint, spec.X_tree, inertia, spec.name,
                           spec.joint_name, check_inertia=False)
            if spec.properties:
                model.set_joint_properties(spec.joint_name, **spec.properties)
        except ModelError as exc:
            where = (labels or {}).get(spec.name, f"body {quote(spec.name)}")
            raise MJCFError(f"{where}: {exc}") from None
    for frame_name, spec, X in frames:
        try:
            model.add_frame(frame_name, spec, X)
        except ModelError as exc:
            raise MJCFError(f"frame {quote(frame_name)} (a site or a welded body): {exc}"
                            ) from None
    for geom in world_geoms:
        model.add_geom(geom.replace(pose=_snapped(geom, None)))
    for spec, geom in geoms:
        model.add_geom(geom.replace(body=specs[spec].name if spec >= 0 else None))
    model.mujoco_bodies = _mujoco_bodies(specs, places)
    model.mujoco_joints = {j.name: j.softness for b in bodies for j in b.joints}
    return model

