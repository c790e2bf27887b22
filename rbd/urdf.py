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
revolute       :class:`~rbd.joints.Revolute`                     1        1
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

Continuous joints
-----------------
A ``continuous`` joint is a revolute joint without position limits, and rbd
gives it one coordinate, the angle ``θ`` (``nq = nv = 1``; ``model.lower`` and
``model.upper`` are ``∓inf``).  Pinocchio instead stores the point
``(cos θ, sin θ)`` on the unit circle (``nq = 2``, ``nv = 1``), so that
configurations differing by ``2π`` are equal; to pass a configuration across,
map ``θ ↦ (cos θ, sin θ)`` and back with ``θ = atan2(sin, cos)``.  Velocities
and forces are the same scalars in both.

Limits and joint dynamics
-------------------------
``<limit lower upper velocity effort>`` and ``<dynamics damping friction>``
are stored with :meth:`~rbd.model.Model.set_joint_properties` (``model.lower``,
``model.upper``, ``model.velocity_limit``, ``model.effort_limit``,
``model.damping``, ``model.friction``); an absent attribute means no limit
(``±inf``) or no damping or friction (``0``).  A ``continuous`` joint has no
position limits, whatever its ``<limit>`` says.  URDF cannot write an infinite
number, so the writer puts ``±POSITION_BOUND`` where a limit is infinite, and
the reader takes any limit of magnitude ``POSITION_BOUND`` or more for no limit.

Mimic joints
------------
``<mimic joint="k" multiplier="m" offset="o"/>`` in joint ``j`` ties its
coordinate to joint ``k``'s, ``q_j = m q_k + o`` (``m = 1`` and ``o = 0``
when absent, as the URDF specification says), through
:meth:`~rbd.model.Model.add_mimic`: the model's ``nq`` and ``nv`` count the
independent coordinates and every algorithm works on them (see
:mod:`rbd.coupling`).  Both joints must be ``revolute``, ``continuous`` or
``prismatic``; a mimic of an unknown joint, of itself or of another mimic
joint (hence a cycle), and a multiplier or offset that is not a finite
number, raise :class:`~rbd.errors.URDFError` naming the joint.  A
``<mimic>`` inside a ``fixed`` joint is ignored, as Pinocchio ignores it:
the welded joint has no coordinate to tie (files that weld a gripper shut
keep the element).  Pinocchio
(``buildModelFromUrdf(..., mimic=True)``) uses the same convention.

Armature
--------
URDF has no rotor inertia.  As an rbd extension, ``<dynamics armature="…">``
gives a one-degree-of-freedom joint's armature
(:meth:`~rbd.model.Model.set_joint_properties`); :func:`to_urdf` writes it
there, and other URDF readers ignore the attribute.

Security
--------
The XML is parsed with :mod:`defusedxml`, refusing any document type
declaration: a document that declares entities ("billion laughs", quadratic
blow-up), refers to external entities or to an external DTD raises
:class:`~rbd.errors.URDFError` at the declaration, before anything is
expanded or fetched (URDF defines no DTD, so nothing legitimate is lost).
Mesh and other file names in ``<visual>`` and ``<collision>`` are never
read.  Messages quote at most a short prefix of a document or file name.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _safe_fromstring

from .errors import InputError, ModelError, URDFError
from .joints import Free, Joint, Planar, Prismatic, Revolute
from .model import Model
from .spatial import plux, plux_parts, rot_to_rpy, rpy_to_rot

__all__ = ["load_urdf", "to_urdf", "write_urdf", "ROOT_JOINT_NAME", "POSITION_BOUND",
           "INERTIA_POLICIES", "INERTIA_RTOL", "INERTIA_ATOL"]

#: Name of the free joint that ``load_urdf(..., floating_base=True)`` adds at the root.
ROOT_JOINT_NAME = "root_joint"

#: Bound written in a ``<limit>`` for a limit that is infinite (URDF requires the
#: ``<limit>`` of revolute and prismatic joints and cannot write ``inf``).  It is
#: beyond any configuration, speed or effort of interest; on reading, a limit of
#: this magnitude or more means no limit.
POSITION_BOUND = 1.0e9

#: What :func:`load_urdf` does with a non-physical inertia (see its ``inertia`` argument).
INERTIA_POLICIES = ("strict", "repair", "ignore")

#: Tolerance of the inertia checks, relative to the largest principal moment: a
#: principal moment may be below zero, and the two smaller ones may sum to less
#: than the largest, by this fraction of the largest.  Numbers written with ten
#: or more significant digits (as tools that export URDF do) stay inside it.
INERTIA_RTOL = 1e-9

#: Absolute floor of that tolerance, in kg m² per kg of body mass (at least 1 kg):
#: far below any physical moment, it accepts inertias that are zero up to round-off.
INERTIA_ATOL = 1e-15

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_ONE_DOF = ("revolute", "continuous", "prismatic")
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_AXIS_TOLERANCE = 1e-12
_LISTED = 12  # massless bodies named in the warning
_QUOTE = 60  # characters of a document or file name quoted in a message
_XACRO_REMEDY = "expand it to URDF first: `xacro file.xacro > file.urdf`"

#: The triangle inequalities ``λi + λj - λk ≥ 0`` of the principal moments, one a row.
_TRIANGLE = np.array([[1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]])


def _quote(text) -> str:
    """``repr`` of the first characters of ``text``: never a whole document in a message."""
    text = str(text)
    return repr(text if len(text) <= _QUOTE else text[:_QUOTE] + "...")


# --- parsed document ---------------------------------------------------------------------
@dataclass
class _Link:
    name: str
    mass: float
    com: np.ndarray
    I_com: np.ndarray


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
            raise _xacro_error(f"file {_quote(name)}")
        with open(name, "rb") as fh:
            return fh.read()
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        if isinstance(exc, URDFError):
            raise
        reason = getattr(exc, "strerror", None) or str(exc)
        hint = ("" if "<" not in str(path) else
                "; a string is read as XML when its first non-blank character is '<'")
        raise URDFError(f"cannot read URDF file {_quote(path)}: {reason}{hint}") from None


def _read_source(source) -> str | bytes:
    """Return the XML text of ``source`` (an XML string or bytes, or a file path)."""
    if isinstance(source, bytes | bytearray):
        return bytes(source).lstrip()
    if isinstance(source, str):
        text = source.lstrip().lstrip("\ufeff").lstrip()  # a byte order mark may open it
        if text.startswith("<"):
            return text  # an XML declaration must open the document
    if isinstance(source, str | os.PathLike):
        return _read_file(source)
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
        head = text[:4096] if isinstance(text, str) else text[:4096].decode("latin-1")
        if "unbound prefix" in str(exc) and "xacro:" in head:
            raise _xacro_error("the document") from None
        raise URDFError(f"malformed XML: {exc}") from None
    except LookupError as exc:  # an encoding declaration Python does not know
        raise URDFError(f"cannot decode the XML ({_quote(exc)}); save the file as UTF-8"
                        ) from None
    except ValueError as exc:
        raise URDFError(f"cannot parse the XML: {_quote(exc)}") from None


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


def _numbers(elem, name: str, count: int, where: str, default=None,
             infinite: bool = False) -> np.ndarray:
    """Parse ``count`` numbers from attribute ``name`` (``default`` if absent).

    The numbers must be finite unless ``infinite`` allows ``±inf`` (never NaN).
    """
    if elem is None or elem.get(name) is None:
        if default is None:
            tag = "element" if elem is None else f"<{elem.tag}>"
            raise URDFError(f"{where}: {tag} has no {name!r} attribute")
        return np.array(default, dtype=float)
    text = elem.get(name)
    try:
        values = [float(token) for token in text.split()]
    except ValueError:
        hint = (f" (an unexpanded xacro expression: {_XACRO_REMEDY})"
                if "${" in text or "$(" in text else "")
        raise URDFError(f"{where}: <{elem.tag}> {name}={_quote(text)} is not a list of "
                        f"numbers{hint}") from None
    if len(values) != count:
        raise URDFError(f"{where}: <{elem.tag}> {name}={_quote(text)} must hold {count} "
                        f"number{'s' if count > 1 else ''}, got {len(values)}")
    if not all(math.isfinite(x) or (infinite and math.isinf(x)) for x in values):
        raise URDFError(f"{where}: <{elem.tag}> {name}={_quote(text)} has a non-finite value")
    return np.array(values)


def _origin(elem, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)`` and offset ``xyz`` of an ``<origin>``."""
    origin = _single(elem, "origin", where)
    xyz = _numbers(origin, "xyz", 3, where, default=(0.0, 0.0, 0.0))
    rpy = _numbers(origin, "rpy", 3, where, default=(0.0, 0.0, 0.0))
    return rpy_to_rot(rpy), xyz


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
        raise URDFError(f"link {name!r}: negative mass {mass:g} (no inertia policy repairs a "
                        "negative mass: correct the file)")
    inertia = _single(inertial, "inertia", where, required=True)
    ixx, ixy, ixz, iyy, iyz, izz = (float(_numbers(inertia, key, 1, where)[0])
                                    for key in _INERTIA_KEYS)
    I_frame = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    I_com = R_c @ I_frame @ R_c.T  # inertia about the COM in link axes
    return _Link(name, mass, com, 0.5 * (I_com + I_com.T))


def _link_ref(elem: ET.Element, tag: str, where: str) -> str:
    return _attribute(_single(elem, tag, where, required=True), "link", where)


def _unbounded(x: float) -> float:
    """A limit of magnitude ``POSITION_BOUND`` or more is no limit."""
    return math.copysign(math.inf, x) if abs(x) >= POSITION_BOUND else x


def _joint_properties(elem: ET.Element, kind: str, where: str) -> dict[str, float]:
    """``<limit>`` and ``<dynamics>`` of a one-degree-of-freedom joint, as model properties."""
    if kind not in _ONE_DOF:
        return {}
    attributes = {"limit": (("lower", "lower"), ("upper", "upper"),
                            ("velocity_limit", "velocity"), ("effort_limit", "effort")),
                  "dynamics": (("damping", "damping"), ("friction", "friction"),
                               ("armature", "armature"))}
    properties = {}
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
        raise URDFError(f"{where}: unknown joint type {_quote(kind)} "
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
    if kind not in _ONE_DOF:
        raise URDFError(f"{where}: a {kind} joint cannot mimic another (mimic joints are "
                        f"{', '.join(_ONE_DOF)})")
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
        if other.kind not in _ONE_DOF:
            raise URDFError(f"{where} names {target!r}, a {other.kind} joint (mimicked joints "
                            f"are {', '.join(_ONE_DOF)})")
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
def _parse_robot(root: ET.Element) -> tuple[str, dict[str, _Link], list[_Joint]]:
    _check_not_xacro(root)
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
    names: set[str] = set()
    for elem in root.findall("joint"):
        joint = _parse_joint(elem)
        if joint.name in names:
            raise URDFError(f"duplicate joint name {joint.name!r}")
        names.add(joint.name)
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


# --- inertias of the merged bodies -----------------------------------------------------------
def _merge(parts: list[tuple[_Link, np.ndarray]]) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Mass, centre of mass and inertia about it (body axes) of links welded into one body.

    ``parts`` pairs each link with ``X``, the motion transform from body to link
    coordinates, ``X = plux(E, r)``.  Link ``k`` has its centre of mass at
    ``c_k = r + Eᵀ c'_k`` and the inertia ``Eᵀ I'_k E`` about it, in body
    coordinates; by the parallel-axis theorem

    .. math::

        m = \sum_k m_k, \quad c = \frac{1}{m} \sum_k m_k c_k, \quad
        I_c = \sum_k \left(E_k^T I'_k E_k + m_k (\lVert d_k \rVert^2 \mathbf 1
              - d_k d_k^T)\right), \quad d_k = c_k - c.
    """
    placed = []
    for link, X in parts:
        E, r = plux_parts(X)
        placed.append((link.mass, r + E.T @ link.com, E.T @ link.I_com @ E))
    m = float(sum(mk for mk, _, _ in placed))
    c = sum(mk * ck for mk, ck, _ in placed) / m if m > 0 else np.zeros(3)
    Ic = np.zeros((3, 3))
    for mk, ck, Ik in placed:
        d = ck - c
        Ic += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis theorem
    return m, np.asarray(c, dtype=float), 0.5 * (Ic + Ic.T)


def _violation(m: float, Ic: np.ndarray) -> str | None:
    """The physical condition ``Ic`` breaks beyond the tolerance, with its numbers, or None."""
    lam = np.linalg.eigvalsh(Ic)
    tol = max(INERTIA_RTOL * float(np.abs(lam).max()), INERTIA_ATOL * max(1.0, m))
    moments = "[" + ", ".join(f"{x:.6g}" for x in lam) + "] kg m^2"
    if lam[0] < -tol:
        return (f"principal moments {moments} are not all >= 0 (the rotational inertia is "
                "not positive semi-definite)")
    if lam[0] + lam[1] < lam[2] - tol:
        return (f"principal moments {moments} break the triangle inequality: "
                f"{lam[0]:.6g} + {lam[1]:.6g} = {lam[0] + lam[1]:.6g} < {lam[2]:.6g}")
    return None


def _nearest_physical(Ic: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The physical rotational inertia nearest to ``Ic`` in the Frobenius norm.

    The valid principal moments form the convex cone ``λi + λj ≥ λk`` (which
    implies ``λ ≥ 0``), invariant under permutations, so the nearest valid
    matrix has the principal axes of ``Ic`` and the moments projected onto the
    cone.  The projection lies on one face of the cone: it is the nearest of the
    projections onto the faces (sets of active inequalities) that satisfy all
    inequalities.  Returns ``(Ic_new, moments_before, moments_after)``.
    """
    lam, V = np.linalg.eigh(Ic)
    slack = 1e-12 * float(np.abs(lam).max())  # round-off of the projection
    best = np.zeros(3)  # every inequality active: the zero inertia
    for size in (1, 2):
        for rows in itertools.combinations(range(3), size):
            A = _TRIANGLE[list(rows)]
            x = lam - A.T @ np.linalg.solve(A @ A.T, A @ lam)
            if np.all(_TRIANGLE @ x >= -slack) and (
                    np.linalg.norm(x - lam) < np.linalg.norm(best - lam)):
                best = x
    return (V * best) @ V.T, lam, best


# --- building the model ----------------------------------------------------------------------
def _tree(root: str, children, floating_base: bool):
    """Walk the tree depth-first: links in preorder, their owner bodies, the moving joints.

    ``owner[link] = (link of the body carrying it, or None for the world; X body -> link)``.
    """
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
    return preorder, owner, moving


def _body_inertias(links, preorder, owner, policy: str):
    """Merged ``(m, c, Ic)`` of each body, checked under ``policy``; the repairs made."""
    parts: dict[str, list] = {}
    for link in preorder:
        body_link, X = owner[link]
        if body_link is not None:
            parts.setdefault(body_link, []).append((links[link], X))
    inertias, repairs = {}, []
    for body_link, welded in parts.items():
        m, c, Ic = _merge(welded)
        problem = None if policy == "ignore" else _violation(m, Ic)
        if problem is not None:
            others = [repr(lk.name) for lk, _ in welded[1:]]
            names = repr(body_link) + (f" (with its welded link{'s' if len(others) > 1 else ''} "
                                       + ", ".join(others) + ")" if others else "")
            if policy == "strict":
                raise URDFError(
                    f"link {names}: non-physical inertia: {problem}. Pass inertia='repair' "
                    "to load_urdf to use the nearest physical inertia instead (or correct "
                    "the file)")
            Ic, before, after = _nearest_physical(Ic)
            change = np.linalg.norm(after - before) / max(float(np.abs(before).max()), 1e-300)
            repairs.append(f"link {names}: principal moments "
                           f"[{', '.join(f'{x:.6g}' for x in before)}] -> "
                           f"[{', '.join(f'{x:.6g}' for x in after)}] kg m^2 "
                           f"(relative change {change:.2g})")
        inertias[body_link] = (m, c, Ic)
    return inertias, repairs


def _warn_about(repairs: list[str], massless: list[str]) -> None:
    if repairs:
        warnings.warn(f"inertia='repair' replaced {len(repairs)} non-physical inertia"
                      f"{'s' if len(repairs) > 1 else ''} by the nearest physical one: "
                      + "; ".join(repairs), RuntimeWarning, stacklevel=4)
    if massless:
        shown = ", ".join(repr(name) for name in massless[:_LISTED])
        more = f" and {len(massless) - _LISTED} more" if len(massless) > _LISTED else ""
        warnings.warn(f"bod{'ies' if len(massless) > 1 else 'y'} {shown}{more} "
                      + ("have" if len(massless) > 1 else "has")
                      + " zero mass and zero inertia (welded links included): unless bodies "
                      "below carry inertia along the joint, the mass matrix is singular and "
                      "forward dynamics undefined", RuntimeWarning, stacklevel=4)


def _build(robot_name, links, joints, floating_base: bool, policy: str) -> Model:
    """Turn the checked tree into a Model: bodies depth-first, fixed joints merged."""
    root, _, children = _topology(links, joints)
    preorder, owner, moving = _tree(root, children, floating_base)
    inertias, repairs = _body_inertias(links, preorder, owner, policy)
    model = Model(name=robot_name)
    index: dict[str | None, int] = {None: -1}
    massless = []
    for link in preorder:
        if owner[link][0] != link:
            continue
        if link == root:
            parent, X_tree, urdf_joint = None, None, None
            joint, joint_name = Free(), _unique(ROOT_JOINT_NAME, {j.name for j in joints})
        else:
            parent, X_tree, urdf_joint = moving[link]
            joint, joint_name = urdf_joint.to_rbd(), urdf_joint.name
        m, c, Ic = inertias[link]
        if m == 0.0 and not np.any(Ic):
            massless.append(link)
        try:
            index[link] = model.add_body(index[parent], joint, X_tree, (m, c, Ic), link,
                                         joint_name, check_inertia=False)
            if urdf_joint is not None and urdf_joint.properties:
                model.set_joint_properties(joint_name, **urdf_joint.properties)
        except ModelError as exc:
            raise URDFError(f"link {link!r}: {exc}") from None
    for link in preorder:
        body_link, X = owner[link]
        if body_link is not None and body_link != link:
            model.add_frame(link, index[body_link], X)
    for joint in joints:
        if joint.mimic is not None:
            try:
                model.add_mimic(joint.name, *joint.mimic)
            except ModelError as exc:
                raise URDFError(f"joint {joint.name!r}: <mimic>: {exc}") from None
    _warn_about(repairs, massless)
    return model


def load_urdf(source: str | os.PathLike | bytes, floating_base: bool = False, *,
              inertia: str = "strict") -> Model:
    """Build a :class:`~rbd.model.Model` from a URDF file or XML string.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path to a ``.urdf`` file, or the XML document itself (a string whose
        first non-blank character, after an optional byte order mark, is
        ``<``, or bytes).
    floating_base : bool, optional
        If True, the root link becomes a body on a :class:`~rbd.joints.Free`
        joint named ``"root_joint"`` (``q = [p; quaternion (x, y, z, w)]``, the
        root link frame's pose in the world).  If False (default), the root link
        *is* the world frame.
    inertia : {"strict", "repair", "ignore"}, optional
        What to do with a body whose inertia is not physical.  The inertia of a
        body is that of its link and of the links welded to it by fixed joints,
        merged (a non-physical link inertia is harmless when the merged one is
        physical); it must have principal moments ``λ ≥ 0`` obeying the
        triangle inequality ``λi + λj ≥ λk``, both up to a tolerance of
        ``INERTIA_RTOL`` (1e-9) times the largest principal moment (with an
        absolute floor of ``INERTIA_ATOL`` (1e-15) kg m² per kg).  The root
        link of a fixed base is the world: its inertia, and that of the links
        welded to it, is discarded and never checked.

        ``"strict"`` (default)
            raise :class:`~rbd.errors.URDFError` naming the link, the broken
            condition and its numbers.
        ``"repair"``
            replace each non-physical rotational inertia by the nearest physical
            one in the Frobenius norm: the same principal axes, mass and centre
            of mass, and the principal moments projected onto the cone
            ``λi + λj ≥ λk`` (for sorted moments ``a ≤ b ≤ c`` breaking only
            ``a + b ≥ c`` by ``d``: ``a`` and ``b`` rise by ``d/3``, ``c``
            falls by ``d/3``; negative moments end at zero or above).  One
            :class:`RuntimeWarning` lists every changed link with its moments
            before and after.
        ``"ignore"``
            keep the inertias as written, unchecked.  The dynamics of a model
            with a non-physical inertia may be meaningless (a mass matrix that
            is not positive definite, negative kinetic energy).

        A negative mass is an error under every policy: no nearby physical
        inertia is a reasonable guess for it.

    Returns
    -------
    Model
        One body per link on a non-fixed joint (body name = child link name,
        joint name = URDF joint name), numbered depth-first in the document
        order of the joints, parents before children.  ``model.name`` is the
        robot's name; gravity is the default ``(0, 0, -9.81)``; joint limits,
        damping and friction as in the file (see the module notes).

    Raises
    ------
    URDFError
        On malformed or unsafe XML (any DOCTYPE, hence entity declarations
        and external references), an unknown encoding, a xacro file (by its
        ``.xacro`` suffix or xacro elements: expand it first with ``xacro
        file.xacro > file.urdf``), a root element other than ``<robot>``, an
        unknown joint type, a joint naming an undefined link, a second root,
        a cycle, a duplicate link or joint name, a link with two parents, a
        bad number (not finite, wrong count), a negative mass, a non-physical
        inertia (``inertia="strict"``), a zero axis, a lower limit above the
        upper one, a negative speed or effort limit, or a bad ``<mimic>`` (of
        an unknown joint, itself, a joint other than revolute, continuous or
        prismatic, or another mimic joint; a multiplier or offset that is not
        a finite number).  The message names the
        offending link or joint.

    Warns
    -----
    RuntimeWarning
        Once for the inertias ``inertia="repair"`` changed, and once naming the
        bodies that have zero mass and zero inertia after merging (with
        nothing massive below them moving with their joint, the mass matrix is
        singular).

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

    A ``continuous`` joint has one coordinate, its angle, where Pinocchio has
    two, ``(cos θ, sin θ)`` (see the module notes).  A ``<mimic>`` joint
    follows the joint it names and has no coordinate of its own
    (:meth:`~rbd.model.Model.add_mimic`); ``<dynamics armature>`` is read as
    the joint's armature (an rbd extension).  Visual and
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
    ...     <dynamics damping="0.1"/>
    ...   </joint>
    ... </robot>'''
    >>> model = rbd.load_urdf(xml)
    >>> model.body_names, model.joint_names, model.nq
    (['rod'], ['hinge'], 1)
    >>> round(float(rbd.crba(model, [0.0])[0, 0]), 12)  # I_yy + m (0.5)^2
    0.67
    >>> model.upper.tolist(), model.damping.tolist()
    ([inf], [0.1])
    """
    if inertia not in INERTIA_POLICIES:
        raise InputError(f"inertia must be one of {', '.join(map(repr, INERTIA_POLICIES))}, "
                         f"got {inertia!r}")
    robot_name, links, joints = _parse_robot(_parse_xml(_read_source(source)))
    _check_mimics(joints)
    return _build(robot_name, links, joints, bool(floating_base), inertia)


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


def to_urdf(model: Model, *, floating_base: bool = False) -> str:
    """Write ``model`` as a URDF document (a string).

    Parameters
    ----------
    model : Model
        Its joints must be revolute, prismatic, fixed, planar, or free
        (written as a URDF ``floating`` joint, at the root or below it).
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
        symbolic), naming the joint.

    Warns
    -----
    RuntimeWarning
        When a planar or free joint has a non-zero armature, which is not written.

    Notes
    -----
    Each body is a link with an ``<inertial>`` (mass, centre of mass, inertia
    about the centre of mass in body axes) and its joint; each attached frame
    is a link of zero mass on a fixed joint.  A revolute or prismatic joint
    gets a ``<limit>`` (which URDF requires) from ``model.lower``,
    ``model.upper``, ``model.velocity_limit`` and ``model.effort_limit``, an
    infinite limit written as ``±POSITION_BOUND``, a ``<dynamics>`` when its
    damping, friction or armature is not zero (``armature`` is an rbd
    extension, see the module notes), and a ``<mimic>`` when it mimics another
    joint (:attr:`~rbd.model.Model.mimic`); a revolute joint is always written as
    ``revolute``, so a ``continuous`` joint comes back as a revolute joint
    with bounds ``±POSITION_BOUND``, which the reader takes for no bounds.
    Gravity and the limits of planar and free joints are not part of URDF and
    are not written.

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
    full, mimic = model._full_tree(), model.mimic
    unwritten = [b.joint_name for i, b in enumerate(full.bodies)
                 if kinds[i] in ("planar", "floating") and np.any(full.armature[full.v_index(i)])]
    if unwritten:
        warnings.warn(f"the armature of planar and floating joints ({', '.join(unwritten)}) "
                      "is not written: rbd writes armature in <dynamics>, which only "
                      "revolute and prismatic joints have", RuntimeWarning, stacklevel=2)
    free_root = _floating_root(model) if floating_base else None
    body_names = set(model.body_names)
    frames = {name: f for name, f in model.frames.items() if name not in body_names}
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
            properties = (_joint_properties_of(full, i)
                          if kinds[i] in ("revolute", "prismatic") else None)
            _joint_element(robot, body.joint_name, kinds[i], parent, body.name, body.X_tree,
                           body.joint, properties, mimic.get(body.joint_name))
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
