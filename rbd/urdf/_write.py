"""Writing a model as a URDF document (:func:`rbd.urdf.to_urdf`)."""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from .._robotfile import caller_stacklevel, unique
from ..errors import URDFError
from ..joints import Joint
from ..model import Model
from ..spatial import plux_parts, rot_to_rpy
from ._read import INERTIA_KEYS, POSITION_BOUND


def _fmt(values) -> str:
    """Shortest text that reads back as the same doubles."""
    return " ".join(repr(float(x) + 0.0) for x in np.ravel(values))


def _origin_element(parent: ET.Element, X: np.ndarray) -> None:
    """``<origin>`` of the frame reached by the motion transform ``X = plux(Rᵀ, p)``."""
    E, r = plux_parts(X)
    ET.SubElement(parent, "origin", xyz=_fmt(r), rpy=_fmt(rot_to_rpy(E.T)))


def _link_element(robot: ET.Element, name: str, mass: float, com, I_com) -> ET.Element:
    link = ET.SubElement(robot, "link", name=name)
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz=_fmt(com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=_fmt([mass]))
    I = 0.5 * (np.asarray(I_com) + np.asarray(I_com).T)
    ET.SubElement(inertial, "inertia", **{
        key: _fmt([I[i, j]]) for key, (i, j) in zip(
            INERTIA_KEYS, ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)), strict=True)})
    return link


_URDF_SHAPES = ("box", "cylinder", "sphere", "mesh")


def _geom_elements(model: Model, links: dict, world: str | None) -> None:
    """``<visual>`` and ``<collision>`` of each geom URDF can describe (module notes of
    :mod:`rbd.urdf._geoms` for the sizes); one warning names the others."""
    unwritten = []
    for geom in model.geoms:
        link = links.get(world if geom.body is None else geom.body)
        if geom.kind not in _URDF_SHAPES or link is None:
            unwritten.append(f"{geom.name!r} ({geom.kind}"
                             + (", on the world of a floating base)" if link is None else ")"))
            continue
        for tag, wanted in (("visual", geom.visual), ("collision", geom.collision)):
            if not wanted:
                continue
            elem = ET.SubElement(link, tag, name=geom.name)
            ET.SubElement(elem, "origin", xyz=_fmt(geom.pose[:3, 3]),
                          rpy=_fmt(rot_to_rpy(geom.pose[:3, :3])))
            shape = ET.SubElement(elem, "geometry")
            if geom.kind == "box":
                ET.SubElement(shape, "box", size=_fmt(2 * geom.size))
            elif geom.kind == "cylinder":
                ET.SubElement(shape, "cylinder", radius=_fmt(geom.size[:1]),
                              length=_fmt(2 * geom.size[1:2]))
            elif geom.kind == "sphere":
                ET.SubElement(shape, "sphere", radius=_fmt(geom.size[:1]))
            else:
                ET.SubElement(shape, "mesh", filename=geom.mesh, scale=_fmt(geom.mesh_scale))
            if tag == "visual":
                material = ET.SubElement(elem, "material", name=f"{geom.name}_material")
                ET.SubElement(material, "color", rgba=_fmt(geom.rgba))
    if unwritten:
        warnings.warn(f"geoms URDF cannot hold are not written: {', '.join(unwritten)}",
                      RuntimeWarning, stacklevel=caller_stacklevel())


def _bound(x: float) -> float:
    """A limit as URDF can write it: ``±POSITION_BOUND`` for an infinite one."""
    return math.copysign(POSITION_BOUND, x) if math.isinf(x) else x


def _joint_properties_of(full: Model, i: int) -> dict[str, float]:
    """Limits and dynamics of body ``i``'s one-degree-of-freedom joint (of the full tree)."""
    iq, iv = full.q_index(i).start, full.v_index(i).start
    return {"lower": float(full.lower[iq]), "upper": float(full.upper[iq]),
            "velocity": float(full.velocity_limit[iv]),
            "effort": float(full.effort_limit[iv]),
            "damping": float(full.damping[iv]), "friction": float(full.friction[iv]),
            "armature": float(full.armature[iv])}


def _joint_element(robot, name, kind, parent, child, X, joint: Joint | None,
                   properties: dict[str, float] | None = None,
                   mimic: tuple[str, float, float] | None = None) -> None:
    elem = ET.SubElement(robot, "joint", name=name, type=kind)
    ET.SubElement(elem, "parent", link=parent)
    ET.SubElement(elem, "child", link=child)
    _origin_element(elem, X)
    if kind in ("revolute", "prismatic"):
        ET.SubElement(elem, "axis", xyz=_fmt(joint.axis))
        ET.SubElement(elem, "limit", **{key: _fmt([_bound(properties[key])]) for key in
                                        ("lower", "upper", "effort", "velocity")})
        dynamics = {key: _fmt([properties[key]]) for key in ("damping", "friction", "armature")
                    if properties[key]}
        if dynamics:
            # readers built on urdfdom refuse a <dynamics> without damping or friction
            dynamics.setdefault("damping", "0")
            ET.SubElement(elem, "dynamics", **dynamics)
        if mimic is not None:
            ET.SubElement(elem, "mimic", joint=mimic[0], multiplier=_fmt([mimic[1]]),
                          offset=_fmt([mimic[2]]))
    elif kind == "planar":
        ET.SubElement(elem, "axis", xyz=_fmt(joint.normal))


def _urdf_kind(model: Model, i: int) -> str:
    body = model.bodies[i]
    kind = body.joint.kind
    if kind == "free":  # a URDF floating joint, at the root or below it
        return "floating"
    if kind not in ("revolute", "prismatic", "fixed", "planar"):
        raise URDFError(f"joint {body.joint_name!r}: a {kind} joint has no URDF equivalent "
                        "(URDF has revolute, prismatic, fixed, floating and planar joints)")
    return kind


def _floating_root(model: Model) -> int:
    roots = [i for i, b in enumerate(model.bodies) if b.parent == -1]
    if len(roots) != 1 or model.bodies[roots[0]].joint.kind != "free":
        raise URDFError("floating_base=True needs exactly one root body, on a free joint")
    body = model.bodies[roots[0]]
    if not np.allclose(body.X_tree, np.eye(6), rtol=0.0, atol=1e-15):
        raise URDFError(f"joint {body.joint_name!r}: a URDF floating base has no origin, so "
                        "the free joint's X_tree must be the identity "
                        "(write with floating_base=False instead)")
    return roots[0]



def _robot_element(model: Model, floating_base: bool) -> ET.Element:
    """The ``<robot>`` element of :func:`rbd.urdf.to_urdf` (see there)."""
    kinds = [_urdf_kind(model, i) for i in range(model.nbodies)]
    full, mimic = model._full_tree(), model.mimic
    unwritten = [b.joint_name for i, b in enumerate(full.bodies)
                 if kinds[i] in ("planar", "floating") and np.any(full.armature[full.v_index(i)])]
    if unwritten:
        warnings.warn(f"the armature of planar and floating joints ({', '.join(unwritten)}) "
                      "is not written: rbd writes armature in <dynamics>, which only "
                      "revolute and prismatic joints have", RuntimeWarning,
                      stacklevel=caller_stacklevel())
    free_root = _floating_root(model) if floating_base else None
    body_names = set(model.body_names)
    frames = {name: f for name, f in model.frames.items() if name not in body_names}
    robot = ET.Element("robot", name=model.name)
    world, links = None, {}
    if free_root is None:
        world = unique("world", set(model.body_names) | set(frames))
        links[world] = ET.SubElement(robot, "link", name=world)
    names = model.body_names
    for i, body in enumerate(model.bodies):
        links[body.name] = _link_element(robot, body.name, body.mass, body.com, body.I_com)
        if i != free_root:
            parent = world if body.parent == -1 else names[body.parent]
            properties = (_joint_properties_of(full, i)
                          if kinds[i] in ("revolute", "prismatic") else None)
            _joint_element(robot, body.joint_name, kinds[i], parent, body.name, body.X_tree,
                           body.joint, properties, mimic.get(body.joint_name))
    joint_names = {b.joint_name for b in model.bodies}
    for name, frame in frames.items():
        _link_element(robot, name, 0.0, np.zeros(3), np.zeros((3, 3)))
        joint_name = unique(f"{name}_joint", joint_names)
        joint_names.add(joint_name)
        _joint_element(robot, joint_name, "fixed", names[frame.body], name, frame.X, None)
    _geom_elements(model, links, world)
    return robot
