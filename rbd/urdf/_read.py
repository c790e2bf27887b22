"""Reading a URDF document: the source, its elements, links and joints, mimics and topology.

The parsed document is plain data (:class:`~rbd._robotfile.Link`, :class:`_Joint`);
:mod:`rbd.urdf._build` turns it into a model.  See :mod:`rbd.urdf` for the conventions.
"""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np
from defusedxml import DefusedXmlException

from .._robotfile import Link, caller_stacklevel, quote, safe_fromstring
from ..errors import URDFError
from ..joints import Free, Joint, Planar, Prismatic, Revolute
from ..spatial import plux, rpy_to_rot
from ._attributes import _XACRO_REMEDY, _numbers
from ._geoms import _material_colours, link_geoms

#: Bound written in a ``<limit>`` for a limit that is infinite (URDF requires the
#: ``<limit>`` of revolute and prismatic joints and cannot write ``inf``).  It is
#: beyond any configuration, speed or effort of interest; on reading, a limit of
#: this magnitude or more means no limit.
POSITION_BOUND = 1.0e9


_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ONE_DOF = ("revolute", "continuous", "prismatic")
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_AXIS_TOLERANCE = 1e-12


# --- parsed document ---------------------------------------------------------------------
@dataclass
class _Joint:
    name: str
    kind: str
    parent: str
    child: str
    X: np.ndarray  # parent link coordinates -> joint frame coordinates
    axis: np.ndarray
    properties: dict[str, float] = field(default_factory=dict)  # limits and dynamics
    mimic: tuple[str, float, float] | None = None  # (mimicked joint, multiplier, offset)

    def to_rbd(self) -> Joint:
        if self.kind in ("revolute", "continuous"):
            return Revolute(self.axis)
        if self.kind == "prismatic":
            return Prismatic(self.axis)
        if self.kind == "planar":
            return Planar(self.axis)
        return Free()


# --- reading the source ------------------------------------------------------------------
def _xacro_error(what: str) -> URDFError:
    return URDFError(f"{what} is a xacro file, not URDF: {_XACRO_REMEDY}")


def _read_file(path) -> bytes:
    try:
        name = os.fspath(path)
        if str(name).endswith(".xacro"):
            raise _xacro_error(f"file {quote(name)}")
        if os.path.exists(name) and not os.path.isfile(name):
            raise URDFError(f"cannot read URDF file {quote(path)}: not a regular file (a "
                            "directory, FIFO or device would be read forever or not at all)")
        with open(name, "rb") as fh:
            return fh.read()
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        if isinstance(exc, URDFError):
            raise
        reason = getattr(exc, "strerror", None) or str(exc)
        hint = ("" if "<" not in str(path) else
                "; a string is read as XML when its first non-blank character is '<'")
        raise URDFError(f"cannot read URDF file {quote(path)}: {reason}{hint}") from None


def _trimmed(data: bytes) -> bytes:
    """Blank lines before the XML declaration and NUL bytes after the document removed
    (both refused by the XML parser, both accepted by Pinocchio's reader)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.lstrip().rstrip(b"\x00 \t\r\n")


def _read_source(source) -> str | bytes:
    """Return the XML text of ``source`` (an XML string or bytes, or a file path)."""
    if isinstance(source, bytes | bytearray):
        return _trimmed(bytes(source))
    if isinstance(source, str):
        text = source.lstrip().lstrip("\ufeff").lstrip()  # a byte order mark may open it
        if text.startswith("<"):
            return text.rstrip("\x00 \t\r\n")  # an XML declaration must open the document
    if isinstance(source, str | os.PathLike):
        return _trimmed(_read_file(source))
    raise URDFError(f"expected a URDF file path or an XML string, got {type(source).__name__}")


def _parse_xml(text: str | bytes) -> ET.Element:
    """Parse with document type declarations (hence entities and external references) refused."""
    try:
        return safe_fromstring(text)
    except DefusedXmlException as exc:
        raise URDFError(
            f"unsafe XML refused ({type(exc).__name__}): a URDF may not have a DOCTYPE, "
            "declare entities or refer to external resources"
        ) from None
    except ET.ParseError as exc:
        head = text[:4096] if isinstance(text, str) else text[:4096].decode("latin-1")
        if "unbound prefix" in str(exc) and "xacro:" in head:
            raise _xacro_error("the document") from None
        raise URDFError(f"malformed XML: {exc}") from None
    except LookupError as exc:  # an encoding declaration Python does not know
        raise URDFError(f"cannot decode the XML ({quote(exc)}); save the file as UTF-8"
                        ) from None
    except ValueError as exc:
        raise URDFError(f"cannot parse the XML: {quote(exc)}") from None


def _check_not_xacro(root: ET.Element) -> None:
    """Refuse a document with elements or attributes in a xacro namespace."""
    for elem in root.iter():
        names = [elem.tag if isinstance(elem.tag, str) else "", *elem.attrib]
        if any(name.startswith("{") and "xacro" in name.split("}")[0] for name in names):
            raise _xacro_error("the document")


# --- elements and attributes ---------------------------------------------------------------
def _single(elem: ET.Element, tag: str, where: str, required: bool = False):
    """The one ``<tag>`` child of ``elem`` (None if absent and not required)."""
    found = elem.findall(tag)
    if len(found) > 1:
        raise URDFError(f"{where}: more than one <{tag}> element")
    if not found:
        if required:
            raise URDFError(f"{where}: missing <{tag}> element")
        return None
    return found[0]


def _attribute(elem: ET.Element, name: str, where: str) -> str:
    value = elem.get(name)
    if value is None or not value.strip():
        raise URDFError(f"{where}: <{elem.tag}> has no {name!r} attribute")
    return value.strip()




def _origin(elem, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)`` and offset ``xyz`` of an ``<origin>``."""
    origin = _single(elem, "origin", where)
    xyz = _numbers(origin, "xyz", 3, where, default=(0.0, 0.0, 0.0))
    rpy = _numbers(origin, "rpy", 3, where, default=(0.0, 0.0, 0.0))
    return rpy_to_rot(rpy), xyz


def _parse_link(elem: ET.Element) -> Link:
    name = _attribute(elem, "name", "<link>")
    where = f"link {name!r}"
    inertial = _single(elem, "inertial", where)
    if inertial is None:
        return Link(name, 0.0, np.zeros(3), np.zeros((3, 3)))
    where = f"link {name!r} <inertial>"
    R_c, com = _origin(inertial, where)
    mass = float(_numbers(_single(inertial, "mass", where, required=True), "value", 1, where)[0])
    if mass < 0:
        raise URDFError(f"link {name!r}: negative mass {mass:g} (no inertia policy repairs a "
                        "negative mass: correct the file)")
    inertia = _single(inertial, "inertia", where, required=True)
    ixx, ixy, ixz, iyy, iyz, izz = (float(_numbers(inertia, key, 1, where)[0])
                                    for key in INERTIA_KEYS)
    I_frame = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    I_com = R_c @ I_frame @ R_c.T  # inertia about the COM in link axes
    return Link(name, mass, com, 0.5 * (I_com + I_com.T))


def _link_ref(elem: ET.Element, tag: str, where: str) -> str:
    return _attribute(_single(elem, tag, where, required=True), "link", where)


def _unbounded(x: float) -> float:
    """A limit of magnitude ``POSITION_BOUND`` or more is no limit."""
    return math.copysign(math.inf, x) if abs(x) >= POSITION_BOUND else x


def _joint_properties(elem: ET.Element, kind: str, where: str) -> dict[str, float]:
    """``<limit>`` and ``<dynamics>`` of a one-degree-of-freedom joint, as model properties."""
    if kind not in ONE_DOF:
        return {}
    attributes = {"limit": (("lower", "lower"), ("upper", "upper"),
                            ("velocity_limit", "velocity"), ("effort_limit", "effort")),
                  "dynamics": (("damping", "damping"), ("friction", "friction"),
                               ("armature", "armature"))}
    properties = {}
    if _single(elem, "limit", where) is not None and kind != "continuous":
        properties.update(lower=0.0, upper=0.0)  # the specification's defaults
    for tag, pairs in attributes.items():
        child = _single(elem, tag, where)
        for key, attribute in pairs:
            if child is not None and child.get(attribute) is not None:
                x = float(_numbers(child, attribute, 1, where, infinite=tag == "limit")[0])
                properties[key] = _unbounded(x) if tag == "limit" else x
    if kind == "continuous":  # unbounded by definition, whatever <limit> says
        properties.pop("lower", None)
        properties.pop("upper", None)
    return properties


def _parse_joint(elem: ET.Element) -> _Joint:
    name = _attribute(elem, "name", "<joint>")
    where = f"joint {name!r}"
    kind = _attribute(elem, "type", where)
    if kind not in _JOINT_TYPES:
        raise URDFError(f"{where}: unknown joint type {quote(kind)} "
                        f"(supported: {', '.join(_JOINT_TYPES)})")
    parent, child = _link_ref(elem, "parent", where), _link_ref(elem, "child", where)
    R, xyz = _origin(elem, where)
    axis = _numbers(_single(elem, "axis", where), "xyz", 3, where, default=(1.0, 0.0, 0.0))
    if kind not in ("fixed", "floating"):
        norm = float(np.linalg.norm(axis))
        if norm < _AXIS_TOLERANCE:
            raise URDFError(f"{where}: <axis> xyz={axis.tolist()} is zero")
        axis = axis / norm
    return _Joint(name, kind, parent, child, plux(R.T, xyz), axis,
                  _joint_properties(elem, kind, where), _parse_mimic(elem, kind, where))


def _parse_mimic(elem: ET.Element, kind: str, where: str) -> tuple[str, float, float] | None:
    """``(mimicked joint, multiplier, offset)`` of a ``<mimic>``, defaults 1 and 0 (URDF)."""
    mimic = _single(elem, "mimic", where)
    if mimic is None or kind == "fixed":  # a welded joint has no coordinate to tie
        return None
    if kind not in ONE_DOF:
        raise URDFError(f"{where}: a {kind} joint cannot mimic another (mimic joints are "
                        f"{', '.join(ONE_DOF)})")
    target = _attribute(mimic, "joint", where)
    multiplier = float(_numbers(mimic, "multiplier", 1, where, default=[1.0])[0])
    offset = float(_numbers(mimic, "offset", 1, where, default=[0.0])[0])
    return target, multiplier, offset


def _check_mimics(joints: list[_Joint]) -> None:
    """Refuse a mimic of an unknown, fixed or mimic joint (a chain or a cycle)."""
    by_name = {j.name: j for j in joints}
    for joint in joints:
        if joint.mimic is None:
            continue
        where, target = f"joint {joint.name!r}: <mimic>", joint.mimic[0]
        if target == joint.name:
            raise URDFError(f"{where} names the joint itself")
        if target not in by_name:
            raise URDFError(f"{where} names an unknown joint {target!r}")
        other = by_name[target]
        if other.kind not in ONE_DOF:
            raise URDFError(f"{where} names {target!r}, a {other.kind} joint (mimicked joints "
                            f"are {', '.join(ONE_DOF)})")
        if other.mimic is None:
            continue
        chain = [joint.name, target]
        while by_name[chain[-1]].mimic is not None and chain[-1] not in chain[:-1]:
            chain.append(by_name[chain[-1]].mimic[0])
        if chain[-1] in chain[:-1]:
            raise URDFError(f"{where}: the mimic joints form a cycle "
                            + " -> ".join(repr(x) for x in chain[chain.index(chain[-1]):]))
        raise URDFError(f"{where} names {target!r}, which mimics {other.mimic[0]!r} itself "
                        f"(a mimic of a mimic): mimic {chain[-1]!r} directly")


# --- the tree ------------------------------------------------------------------------------
def _parse_robot(root: ET.Element, base: str | None = None, package_dirs=(),
                 collision_meshes: bool = True
                 ) -> tuple[str, dict[str, Link], list[_Joint], dict[str, list]]:
    """Name, links, joints and each link's geoms (link frame) of a ``<robot>``; with
    ``collision_meshes``, the hulls of the collision meshes (``load_urdf``'s keyword)."""
    _check_not_xacro(root)
    if root.tag != "robot":
        raise URDFError(f"the document's root element is <{root.tag}>, expected <robot>")
    robot_name = (root.get("name") or "").strip()
    if not robot_name:
        robot_name = "robot"
        warnings.warn("<robot> has no 'name' attribute (the URDF specification requires one): "
                      "the model is called 'robot'", RuntimeWarning, stacklevel=caller_stacklevel())
    links: dict[str, Link] = {}
    geoms: dict[str, list] = {}
    colours = _material_colours(root)
    left_out: list | None = [] if collision_meshes else None   # meshes without a hull
    for elem in root.findall("link"):
        link = _parse_link(elem)
        if link.name in links:
            raise URDFError(f"duplicate link name {link.name!r}")
        links[link.name] = link
        geoms[link.name] = link_geoms(elem, link.name, colours, base, package_dirs, _origin,
                                      left_out)
    _warn_left_out(left_out or [])
    joints: list[_Joint] = []
    names: set[str] = set()
    for elem in root.findall("joint"):
        joint = _parse_joint(elem)
        if joint.name in names:
            raise URDFError(f"duplicate joint name {joint.name!r}")
        names.add(joint.name)
        joints.append(joint)
    if not links:
        warnings.warn(f"robot {robot_name!r} has no <link>: the model has no bodies",
                      RuntimeWarning, stacklevel=caller_stacklevel())
    return robot_name, links, joints, geoms


def _warn_left_out(left_out: list) -> None:
    """One warning for the collision meshes that collide with nothing, by reason."""
    reasons: dict = {}
    for where, reason in left_out:
        reasons.setdefault(reason, []).append(where)
    for reason, places in reasons.items():
        shown = ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3
                                         else "")
        warnings.warn(f"{len(places)} collision mesh(es) will collide with nothing ({reason}): "
                      f"{shown}", RuntimeWarning, stacklevel=caller_stacklevel())


def _cycle_through(link: str, parent_joint: dict[str, _Joint]) -> URDFError:
    """Follow parents from ``link`` until a link repeats: that closes a cycle."""
    path = [link]
    while True:
        link = parent_joint[link].parent
        if link in path:
            cycle = path[path.index(link):] + [link]
            return URDFError("the joints form a cycle through links "
                             + " <- ".join(repr(x) for x in cycle))
        path.append(link)


def _topology(links, joints) -> tuple[str, dict[str, _Joint], dict[str, list[_Joint]]]:
    """Check the link graph is one tree; return its root, parent joints and child joints."""
    parent_joint: dict[str, _Joint] = {}
    children: dict[str, list[_Joint]] = {name: [] for name in links}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise URDFError(f"joint {joint.name!r}: {role} link {link!r} is not defined")
        if joint.child in parent_joint:
            raise URDFError(f"link {joint.child!r} has two parents: joints "
                            f"{parent_joint[joint.child].name!r} and {joint.name!r}")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise _cycle_through(next(iter(links)), parent_joint)
    if len(roots) > 1:
        raise URDFError(f"links {roots[0]!r} and {roots[1]!r} both have no parent joint "
                        "(a second root)")
    reached, stack = {roots[0]}, [roots[0]]
    while stack:
        for joint in children[stack.pop()]:
            reached.add(joint.child)
            stack.append(joint.child)
    for name in links:
        if name not in reached:
            raise _cycle_through(name, parent_joint)
    return roots[0], parent_joint, children

