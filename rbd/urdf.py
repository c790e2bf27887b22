r"""URDF reader and writer: strict, with clear errors, safe on untrusted files.

Conventions
-----------
A URDF joint places its *joint frame* in the parent link frame by
``<origin xyz rpy>``; the child link frame coincides with the joint frame
(moved by the joint).  In ``rbd`` the body frame is the child link frame, so
a non-fixed URDF joint becomes one body whose tree transform is the Plücker
motion transform from the parent link frame to the joint frame,

.. math::

    X_\mathrm{tree} = \mathrm{plux}(R^T, p), \qquad
    R = R_z(\mathrm{yaw})\, R_y(\mathrm{pitch})\, R_x(\mathrm{roll}), \quad p = \mathrm{xyz},

and whose joint axis is ``<axis xyz>`` (unit length after normalization;
default ``(1, 0, 0)``) in the joint frame.  An ``<inertial>`` gives the mass,
the centre of mass ``c`` (its ``<origin xyz>``) and the rotational inertia
``I'`` about the centre of mass in a frame rotated by ``R_c`` (its
``<origin rpy>``); in link coordinates the inertia about the centre of mass
is ``I_c = R_c I' R_cᵀ`` and the spatial inertia about the link origin is
``mcI(m, c, I_c)``.

Joint types
-----------
=============  ==============================================  =======  =======
URDF type      rbd joint                                        nq       nv
=============  ==============================================  =======  =======
revolute       :class:`~rbd.joints.Revolute` (limits ignored)    1        1
continuous     :class:`~rbd.joints.Revolute` (one angle)         1        1
prismatic      :class:`~rbd.joints.Prismatic`                    1        1
planar         :class:`~rbd.joints.Planar` (``normal=axis``)     3        3
floating       :class:`~rbd.joints.Free`                         7        6
fixed          merged into the parent body (see below)           0        0
=============  ==============================================  =======  =======

Fixed joints
------------
A link attached by a fixed joint is welded into the body that carries its
parent link: its spatial inertia is moved into that body's frame and added,
``I_B += Xᵀ I_L X`` with ``X`` the motion transform from the body frame to
the link frame, and the link stays addressable as a frame of the body
(:meth:`~rbd.model.Model.add_frame`; e.g. ``rbd.jacobian(model, q, "tool0")``).
The joints below a welded link hang from the same body, with the transforms
composed.

Security
--------
The XML is parsed with :mod:`defusedxml`, refusing any document type
declaration: a document that declares entities ("billion laughs", quadratic
blow-up), refers to external entities or to an external DTD raises
:class:`~rbd.errors.URDFError` at the declaration, before anything is
expanded or fetched (URDF defines no DTD, so nothing legitimate is lost).
Mesh and other file names in ``<visual>`` and ``<collision>`` are never
read.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _safe_fromstring

from .errors import InputError, ModelError, URDFError
from .joints import Fixed, Free, Joint, Planar, Prismatic, Revolute
from .model import Model
from .spatial import mcI, plux, plux_parts, rot_to_rpy, rpy_to_rot

__all__ = ["load_urdf", "to_urdf", "write_urdf", "ROOT_JOINT_NAME", "POSITION_BOUND"]

#: Name of the free joint that ``load_urdf(..., floating_base=True)`` adds at the root.
ROOT_JOINT_NAME = "root_joint"

#: Position bound written in the ``<limit>`` element that URDF requires for revolute
#: and prismatic joints.  rbd models carry no limits; this bound is beyond any
#: configuration of interest, so the written joint is effectively unlimited.
POSITION_BOUND = 1.0e9

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_AXIS_TOLERANCE = 1e-12


# --- parsed document ---------------------------------------------------------------------
@dataclass
class _Link:
    name: str
    mass: float
    com: np.ndarray
    I_com: np.ndarray

    @property
    def inertia(self) -> np.ndarray:
        """Spatial inertia about the link origin, in link coordinates."""
        return mcI(self.mass, self.com, self.I_com)


@dataclass
class _Joint:
    name: str
    kind: str
    parent: str
    child: str
    X: np.ndarray  # parent link coordinates -> joint frame coordinates
    axis: np.ndarray

    def to_rbd(self) -> Joint:
        if self.kind in ("revolute", "continuous"):
            return Revolute(self.axis)
        if self.kind == "prismatic":
            return Prismatic(self.axis)
        if self.kind == "planar":
            return Planar(self.axis)
        return Free()


# --- reading the source ------------------------------------------------------------------
def _read_source(source) -> str | bytes:
    """Return the XML text of ``source`` (an XML string or bytes, or a file path)."""
    if isinstance(source, bytes | bytearray):
        return bytes(source).lstrip()
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.lstrip()  # an XML declaration must open the document
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise URDFError(f"cannot read URDF file {path!r}: {exc.strerror or exc}") from None
    raise URDFError(f"expected a URDF file path or an XML string, got {type(source).__name__}")


def _parse_xml(text: str | bytes) -> ET.Element:
    """Parse with document type declarations (hence entities and external references) refused."""
    try:
        return _safe_fromstring(text, forbid_dtd=True, forbid_entities=True,
                                forbid_external=True)
    except DefusedXmlException as exc:
        raise URDFError(
            f"unsafe XML refused ({type(exc).__name__}): a URDF may not have a DOCTYPE, "
            "declare entities or refer to external resources"
        ) from None
    except ET.ParseError as exc:
        raise URDFError(f"malformed XML: {exc}") from None


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


def _numbers(elem, name: str, count: int, where: str, default=None) -> np.ndarray:
    """Parse ``count`` finite numbers from attribute ``name`` (``default`` if absent)."""
    if elem is None or elem.get(name) is None:
        if default is None:
            tag = "element" if elem is None else f"<{elem.tag}>"
            raise URDFError(f"{where}: {tag} has no {name!r} attribute")
        return np.array(default, dtype=float)
    text = elem.get(name)
    try:
        values = [float(token) for token in text.split()]
    except ValueError:
        raise URDFError(f"{where}: <{elem.tag}> {name}={text!r} is not a list of numbers") from None
    if len(values) != count:
        raise URDFError(f"{where}: <{elem.tag}> {name}={text!r} must hold {count} "
                        f"number{'s' if count > 1 else ''}, got {len(values)}")
    if not all(math.isfinite(x) for x in values):
        raise URDFError(f"{where}: <{elem.tag}> {name}={text!r} has a non-finite value")
    return np.array(values)


def _origin(elem, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)`` and offset ``xyz`` of an ``<origin>``."""
    origin = _single(elem, "origin", where)
    xyz = _numbers(origin, "xyz", 3, where, default=(0.0, 0.0, 0.0))
    rpy = _numbers(origin, "rpy", 3, where, default=(0.0, 0.0, 0.0))
    return rpy_to_rot(rpy), xyz


def _check_physical(name: str, mass: float, com: np.ndarray, I_com: np.ndarray) -> None:
    """Run the model builder's inertia checks on one link; re-raise as URDFError."""
    try:
        Model().add_body(-1, Fixed(), None, (mass, com, I_com), name)
    except ModelError as exc:
        raise URDFError(f"link {name!r}: non-physical <inertial>: {exc}") from None


def _parse_link(elem: ET.Element) -> _Link:
    name = _attribute(elem, "name", "<link>")
    where = f"link {name!r}"
    inertial = _single(elem, "inertial", where)
    if inertial is None:
        return _Link(name, 0.0, np.zeros(3), np.zeros((3, 3)))
    where = f"link {name!r} <inertial>"
    R_c, com = _origin(inertial, where)
    mass = float(_numbers(_single(inertial, "mass", where, required=True), "value", 1, where)[0])
    if mass < 0:
        raise URDFError(f"link {name!r}: negative mass {mass:g}")
    inertia = _single(inertial, "inertia", where, required=True)
    ixx, ixy, ixz, iyy, iyz, izz = (float(_numbers(inertia, key, 1, where)[0])
                                    for key in _INERTIA_KEYS)
    I_frame = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    I_com = R_c @ I_frame @ R_c.T  # inertia about the COM in link axes
    _check_physical(name, mass, com, I_com)
    return _Link(name, mass, com, I_com)


def _link_ref(elem: ET.Element, tag: str, where: str) -> str:
    return _attribute(_single(elem, tag, where, required=True), "link", where)


def _parse_joint(elem: ET.Element) -> _Joint:
    name = _attribute(elem, "name", "<joint>")
    where = f"joint {name!r}"
    kind = _attribute(elem, "type", where)
    if kind not in _JOINT_TYPES:
        raise URDFError(f"{where}: unknown joint type {kind!r} "
                        f"(supported: {', '.join(_JOINT_TYPES)})")
    parent, child = _link_ref(elem, "parent", where), _link_ref(elem, "child", where)
    R, xyz = _origin(elem, where)
    axis = _numbers(_single(elem, "axis", where), "xyz", 3, where, default=(1.0, 0.0, 0.0))
    if kind not in ("fixed", "floating"):
        norm = float(np.linalg.norm(axis))
        if norm < _AXIS_TOLERANCE:
            raise URDFError(f"{where}: <axis> xyz={axis.tolist()} is zero")
        axis = axis / norm
    return _Joint(name, kind, parent, child, plux(R.T, xyz), axis)


# --- the tree ------------------------------------------------------------------------------
def _parse_robot(root: ET.Element) -> tuple[str, dict[str, _Link], list[_Joint]]:
    if root.tag != "robot":
        raise URDFError(f"the document's root element is <{root.tag}>, expected <robot>")
    robot_name = _attribute(root, "name", "<robot>")
    links: dict[str, _Link] = {}
    for elem in root.findall("link"):
        link = _parse_link(elem)
        if link.name in links:
            raise URDFError(f"duplicate link name {link.name!r}")
        links[link.name] = link
    joints: list[_Joint] = []
    for elem in root.findall("joint"):
        joint = _parse_joint(elem)
        if any(j.name == joint.name for j in joints):
            raise URDFError(f"duplicate joint name {joint.name!r}")
        joints.append(joint)
    if not links:
        raise URDFError(f"robot {robot_name!r} has no <link>")
    return robot_name, links, joints


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


def _unique(base: str, taken) -> str:
    name, k = base, 0
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def _build(robot_name, links, joints, floating_base: bool) -> Model:
    """Turn the checked tree into a Model: bodies depth-first, fixed joints merged."""
    root, _, children = _topology(links, joints)
    # owner[link] = (link of the body carrying it, or None for the world; X body -> link)
    owner: dict[str, tuple[str | None, np.ndarray]] = {
        root: (root if floating_base else None, np.eye(6))}
    preorder, moving = [], {}
    stack = [root]
    while stack:
        link = stack.pop()
        preorder.append(link)
        body_link, X_link = owner[link]
        for joint in reversed(children[link]):
            if joint.kind == "fixed":
                owner[joint.child] = (body_link, joint.X @ X_link)
            else:
                owner[joint.child] = (joint.child, np.eye(6))
                moving[joint.child] = (body_link, joint.X @ X_link, joint)
            stack.append(joint.child)

    inertia = {link: np.zeros((6, 6)) for link in preorder if owner[link][0] == link}
    for link in preorder:
        body_link, X = owner[link]
        if body_link is not None:
            inertia[body_link] += X.T @ links[link].inertia @ X  # I_B += Xᵀ I_L X

    model = Model(name=robot_name)
    index: dict[str | None, int] = {None: -1}
    for link in preorder:
        if owner[link][0] != link:
            continue
        if link == root:
            parent, X_tree = None, None
            joint, joint_name = Free(), _unique(ROOT_JOINT_NAME, {j.name for j in joints})
        else:
            parent, X_tree, urdf_joint = moving[link]
            joint, joint_name = urdf_joint.to_rbd(), urdf_joint.name
        I = inertia[link]
        try:
            index[link] = model.add_body(index[parent], joint, X_tree, 0.5 * (I + I.T), link,
                                         joint_name)
        except ModelError as exc:
            raise URDFError(f"link {link!r}: {exc}") from None
    for link in preorder:
        body_link, X = owner[link]
        if body_link is not None and body_link != link:
            model.add_frame(link, index[body_link], X)
    return model


def load_urdf(source: str | os.PathLike | bytes, floating_base: bool = False) -> Model:
    """Build a :class:`~rbd.model.Model` from a URDF file or XML string.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path to a ``.urdf`` file, or the XML document itself (a string whose
        first non-blank character is ``<``, or bytes).
    floating_base : bool, optional
        If True, the root link becomes a body on a :class:`~rbd.joints.Free`
        joint named ``"root_joint"`` (``q = [p; quaternion (x, y, z, w)]``, the
        root link frame's pose in the world).  If False (default), the root link
        *is* the world frame.

    Returns
    -------
    Model
        One body per link on a non-fixed joint (body name = child link name,
        joint name = URDF joint name), numbered depth-first in the document
        order of the joints, parents before children.  ``model.name`` is the
        robot's name; gravity is the default ``(0, 0, -9.81)``.

    Raises
    ------
    URDFError
        On malformed or unsafe XML (any DOCTYPE, hence entity declarations
        and external references),
        a root element other than ``<robot>``, an unknown joint type, a joint
        naming an undefined link, a second root, a cycle, a duplicate link or
        joint name, a link with two parents, a bad number (not finite, wrong
        count), a negative mass, a non-physical inertia, or a zero axis.  The
        message names the offending link or joint.

    Notes
    -----
    Fixed joints are merged (see the module notes): the child link's inertia
    is lumped into the body carrying its parent link, and the link becomes a
    frame of that body, usable wherever a body name is (``rbd.jacobian``).

    With ``floating_base=False`` the root link is the world: its
    ``<inertial>`` is ignored, and so are the inertias of links welded to it
    by fixed joints.  Those world-welded links are neither bodies nor frames
    (a :class:`~rbd.model.Model` attaches frames to bodies only, and their
    pose is constant); the joints below them hang from the world with the
    composed transforms.

    Joint limits, ``<dynamics>`` (damping, friction), ``<mimic>``, visual and
    collision geometry, materials and transmissions are ignored; mesh files
    are never opened.

    Examples
    --------
    A rod of 2 kg hinged about ``y`` at its top, its centre of mass 0.5 m below:

    >>> import rbd
    >>> xml = '''
    ... <robot name="pendulum">
    ...   <link name="base"/>
    ...   <link name="rod">
    ...     <inertial>
    ...       <origin xyz="0 0 -0.5"/>
    ...       <mass value="2.0"/>
    ...       <inertia ixx="0.17" iyy="0.17" izz="0.001" ixy="0" ixz="0" iyz="0"/>
    ...     </inertial>
    ...   </link>
    ...   <joint name="hinge" type="continuous">
    ...     <parent link="base"/>
    ...     <child link="rod"/>
    ...     <axis xyz="0 1 0"/>
    ...   </joint>
    ... </robot>'''
    >>> model = rbd.load_urdf(xml)
    >>> model.body_names, model.joint_names, model.nq
    (['rod'], ['hinge'], 1)
    >>> round(float(rbd.crba(model, [0.0])[0, 0]), 12)  # I_yy + m (0.5)^2
    0.67
    """
    robot_name, links, joints = _parse_robot(_parse_xml(_read_source(source)))
    return _build(robot_name, links, joints, bool(floating_base))


# --- writing ---------------------------------------------------------------------------------
def _fmt(values) -> str:
    """Shortest text that reads back as the same doubles."""
    return " ".join(repr(float(x) + 0.0) for x in np.ravel(values))


def _origin_element(parent: ET.Element, X: np.ndarray) -> None:
    """``<origin>`` of the frame reached by the motion transform ``X = plux(Rᵀ, p)``."""
    E, r = plux_parts(X)
    ET.SubElement(parent, "origin", xyz=_fmt(r), rpy=_fmt(rot_to_rpy(E.T)))


def _link_element(robot: ET.Element, name: str, mass: float, com, I_com) -> None:
    link = ET.SubElement(robot, "link", name=name)
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz=_fmt(com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=_fmt([mass]))
    I = 0.5 * (np.asarray(I_com) + np.asarray(I_com).T)
    ET.SubElement(inertial, "inertia", **{
        key: _fmt([I[i, j]]) for key, (i, j) in zip(
            _INERTIA_KEYS, ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)), strict=True)})


def _joint_element(robot, name, kind, parent, child, X, joint: Joint | None) -> None:
    elem = ET.SubElement(robot, "joint", name=name, type=kind)
    ET.SubElement(elem, "parent", link=parent)
    ET.SubElement(elem, "child", link=child)
    _origin_element(elem, X)
    if kind in ("revolute", "prismatic"):
        ET.SubElement(elem, "axis", xyz=_fmt(joint.axis))
        ET.SubElement(elem, "limit", effort="0", velocity="0", lower=_fmt([-POSITION_BOUND]),
                      upper=_fmt([POSITION_BOUND]))
    elif kind == "planar":
        ET.SubElement(elem, "axis", xyz=_fmt(joint.normal))


def _urdf_kind(model: Model, i: int) -> str:
    body = model.bodies[i]
    kind = body.joint.kind
    if kind == "free":
        if body.parent != -1:
            raise URDFError(f"joint {body.joint_name!r}: a free joint can only be written "
                            "at the root (as a URDF floating joint)")
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


def to_urdf(model: Model, *, floating_base: bool = False) -> str:
    """Write ``model`` as a URDF document (a string).

    Parameters
    ----------
    model : Model
        Its joints must be revolute, prismatic, fixed, planar, or free at a
        root body (written as a URDF ``floating`` joint).
    floating_base : bool, optional
        If False (default), a link named ``"world"`` (made unique if a body or
        frame has that name) is the URDF root and every root body hangs from
        it.  If True, the model must have one root body on a free joint with
        an identity ``X_tree``; that body is the URDF root link and its free
        joint is left implicit, for ``load_urdf(..., floating_base=True)`` (the
        free joint then gets the name ``"root_joint"``).

    Returns
    -------
    str
        The URDF XML.  Numbers are written with Python's shortest round-trip
        representation, so reading the file back reproduces the model's
        transforms and inertias to rounding.

    Raises
    ------
    URDFError
        For a joint URDF cannot express (helical, universal, spherical,
        symbolic, a free joint below the root), naming the joint.

    Notes
    -----
    Each body is a link with an ``<inertial>`` (mass, centre of mass, inertia
    about the centre of mass in body axes) and its joint; each attached frame
    is a link of zero mass on a fixed joint.  URDF requires a ``<limit>`` on
    revolute and prismatic joints: an rbd model has none, so the bounds are
    ``±POSITION_BOUND`` with zero effort and velocity entries.  Gravity is not
    part of URDF and is not written.

    ``load_urdf(to_urdf(model))`` has the same bodies, joints, frames and
    dynamics, with bodies renumbered depth-first (the same order when the
    model was built depth-first, as chains are).  Bodies on
    :class:`~rbd.joints.Fixed` joints come back merged into their parents.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> again = rbd.load_urdf(rbd.to_urdf(model))
    >>> again.joint_names, round(again.total_mass, 12)
    (['joint1', 'joint2'], 2.0)
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    kinds = [_urdf_kind(model, i) for i in range(model.nbodies)]
    free_root = _floating_root(model) if floating_base else None
    frames = {name: f for name, f in model.frames.items() if name not in model.body_names}
    robot = ET.Element("robot", name=model.name)
    world = None
    if free_root is None:
        world = _unique("world", set(model.body_names) | set(frames))
        ET.SubElement(robot, "link", name=world)
    names = model.body_names
    for i, body in enumerate(model.bodies):
        _link_element(robot, body.name, body.mass, body.com, body.I_com)
        if i != free_root:
            parent = world if body.parent == -1 else names[body.parent]
            _joint_element(robot, body.joint_name, kinds[i], parent, body.name, body.X_tree,
                           body.joint)
    joint_names = {b.joint_name for b in model.bodies}
    for name, frame in frames.items():
        _link_element(robot, name, 0.0, np.zeros(3), np.zeros((3, 3)))
        joint_name = _unique(f"{name}_joint", joint_names)
        joint_names.add(joint_name)
        _joint_element(robot, joint_name, "fixed", names[frame.body], name, frame.X, None)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def write_urdf(model: Model, path: str | os.PathLike, *, floating_base: bool = False) -> None:
    """Write ``to_urdf(model, floating_base=floating_base)`` to the file ``path`` (UTF-8).

    Parameters
    ----------
    model : Model
    path : str or os.PathLike
        The file to create or overwrite.
    floating_base : bool, optional
        See :func:`to_urdf`.

    Raises
    ------
    URDFError
        For a joint URDF cannot express (see :func:`to_urdf`); nothing is written then.

    Examples
    --------
    >>> import os, tempfile, rbd
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "arm.urdf")
    ...     rbd.write_urdf(rbd.models.revolute_chain(3), path)
    ...     rbd.load_urdf(path).joint_names
    ['joint1', 'joint2', 'joint3']
    """
    text = to_urdf(model, floating_base=floating_base)
    with open(os.fspath(path), "w", encoding="utf-8") as fh:
        fh.write(text)
