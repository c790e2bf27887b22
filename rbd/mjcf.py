r"""MJCF reader (MuJoCo's model format): strict, with clear errors, safe on untrusted files.

What is read
------------
The ``<worldbody>`` tree of ``<body>`` elements with their ``pos`` and
orientation, ``<joint>`` (``hinge``, ``slide``, ``ball``, ``free``) and
``<freejoint>``, ``<inertial>`` (``pos``, orientation, ``mass``,
``diaginertia`` or ``fullinertia``) or, where MuJoCo infers it, the inertia of
the ``<geom>`` primitives (sphere, capsule, ellipsoid, cylinder, box; ``mass``
or ``density``; ``fromto``), ``<site>`` (as frames), ``<frame>``,
``<default>`` classes (``class``, ``childclass``, nested classes inherit),
``<include>``, ``<option gravity>`` (and ``<flag gravity="disable">``) and
``<compiler>`` (``angle``, ``eulerseq``, ``inertiafromgeom``,
``inertiagrouprange``, ``boundmass``, ``boundinertia``, ``balanceinertia``,
``settotalmass``, ``autolimits``).  Joint ``armature``, ``damping``,
``frictionloss`` and ``range`` (when limited) become ``model.armature``,
``model.damping``, ``model.friction``, ``model.lower`` and ``model.upper``.

Bodies and joints
-----------------
Every MJCF joint keeps its name and becomes one rbd joint of the same kind:

=========  ===============================  =====  =====
MJCF       rbd joint                        nq     nv
=========  ===============================  =====  =====
hinge      :class:`~rbd.joints.Revolute`    1      1
slide      :class:`~rbd.joints.Prismatic`   1      1
ball       :class:`~rbd.joints.Spherical`   4      3
free       :class:`~rbd.joints.Free`        7      6
=========  ===============================  =====  =====

Joints are numbered as MuJoCo numbers them (bodies depth-first in document
order, the joints of a body in order), so ``model.nq`` and ``model.nv`` equal
MuJoCo's and every joint's ``q`` and ``v`` slices sit at MuJoCo's
``jnt_qposadr`` and ``jnt_dofadr``.  An unnamed joint is called
``"<body>_joint<k>"`` and an unnamed body ``"body<id>"`` (its MuJoCo id).

MuJoCo moves a body with ``n`` joints by composing them in order, each about
its own anchor ``pos`` in the body frame: with ``F_0`` the body's reference
frame, ``F_k = F_{k-1} T(p_k) Rot(a_k, q_k - ref_k) T(-p_k)`` (hinge; a
slide translates by ``a_k (q_k - ref_k)``; a ball rotates about ``p_k``).
rbd gives each joint a body whose frame sits at the joint's anchor,
``G_k = F_k T(p_k)``, so the joint is a plain rotation about the frame's
origin; ``ref`` is folded into ``X_tree`` (``Rot(a, -ref)`` or
``T(-a ref)``), so rbd's ``q`` of a hinge or slide *is* MuJoCo's ``qpos``,
and ``range`` carries over unchanged.  The joints before the last get
massless bodies called ``"<body>/<joint>"``.  The body named after the MJCF
body carries its inertia and has MuJoCo's body frame: it is the last joint's
body when that joint's anchor is the body origin, otherwise a body welded
to it by a :class:`~rbd.joints.Fixed` joint at ``T(-p_n)``.

A body without joints is welded to its parent like a URDF fixed link: its
inertia is lumped into the parent's and it stays addressable as a frame.
Bodies welded to the world are static: their inertia is dropped, they are
not frames, and the bodies below them hang from the world.  ``<site>``
elements become frames of the body carrying them (a site whose name is a
body's gets a suffix: ``"name_0"``; unnamed sites and sites of the world
are dropped).  Geoms of the world body never enter the dynamics.

Inertia
-------
As MuJoCo's compiler: ``inertiafromgeom="auto"`` (default) takes the
``<inertial>`` when present and the geoms otherwise, ``"true"`` always the
geoms, ``"false"`` never.  A geom's mass is ``mass`` or ``density`` times its
volume (density 1000 by default); only geoms in ``inertiagrouprange`` and of
mass above ``1e-14`` count; the geoms' inertias are combined by the
parallel-axis theorem.  rbd never opens mesh files, so a mesh (or
mesh-fitted) geom whose inertia would be needed is an error: give the body an
``<inertial>``.  Each body's inertia must be physical (``mass ≥ 0``,
principal moments ``≥ 0`` obeying the triangle inequality, to the tolerance
of :data:`rbd.urdf.INERTIA_RTOL`), unless ``balanceinertia`` repairs it as
MuJoCo does.

What the dynamics leaves out
----------------------------
rbd's tree dynamics has no constraints, springs or actuators.  Whatever the
file holds of equality constraints, tendons, actuators, explicit contact
pairs and excludes, joint springs (``stiffness``, ``springref``,
``springdamper``), ball-joint cone limits, gravity compensation
(``gravcomp``), fluid forces (``<option density|viscosity|wind>``), mocap
bodies and plugins is named in one :class:`RuntimeWarning`; nothing is
dropped silently.  Joint limits, damping and friction are stored on the
model, as for URDF, and applied only by a simulation that asks.

MuJoCo's conventions
--------------------
This is the one place where MuJoCo's state conventions meet rbd's; the
functions :func:`from_mujoco_state`, :func:`to_mujoco_state`,
:func:`from_mujoco_force`, :func:`to_mujoco_force` and
:func:`mujoco_velocity_map` apply it.  Per joint (``R`` the body's
orientation in the world, ``u`` the body-frame linear velocity of the body
origin):

=========  ==========================  =========================  =====================
joint      MuJoCo                      rbd                        map
=========  ==========================  =========================  =====================
hinge      qpos θ, qvel θ̇              q θ, v θ̇                   identity
slide      qpos x, qvel ẋ              q x, v ẋ                   identity
ball       qpos (w, x, y, z)           q (x, y, z, w)             reorder
           qvel ω (body frame)         v ω (body frame)           identity
free       qpos [p; (w, x, y, z)]      q [p; (x, y, z, w)]        reorder
           qvel [R u; ω]               v [ω; u]                   ``qvel = T v``
           qacc d/dt qvel              a = v̇                      ``qacc = T a + Ṫ v``
           qfrc [f_world; n_body]      τ [n; Rᵀ f_world]          ``τ = Tᵀ qfrc``
=========  ==========================  =========================  =====================

with ``Ṫ v = [R (ω × u); 0]`` for a free joint.  Power is the same in both
(``τ · v = qfrc · qvel``), so the joint-space inertia maps as
``M_rbd = Tᵀ M_mujoco T`` and the bias forces as
``h_rbd = Tᵀ (qfrc_bias + M_mujoco Ṫ v)`` (MuJoCo's ``qfrc_bias`` is the
force at ``qacc = 0``, rbd's ``nonlinear_effects`` the force at ``a = 0``).

Security
--------
The XML is parsed with :mod:`defusedxml`, refusing any document type
declaration (hence entity expansion and external entities) before anything
is expanded or fetched.  ``<include file>`` is read only inside the
directory of the model file (or ``directory=``), after resolving symbolic
links, and an include cycle is refused.  Nothing else is opened: no mesh,
texture or plugin file, and nothing is executed.
"""

from __future__ import annotations

import math
import os
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _safe_fromstring

from .errors import InputError, MJCFError, ModelError
from .joints import Fixed, Free, Joint, Prismatic, Revolute, Spherical
from .model import Model
from .spatial import axis_angle_rotation, plux, quat_to_rot
from ._robotfile import Link as _Link, merge as _merge, quote as _quote, unique as _unique, violation as _violation  # noqa: E501

__all__ = ["load_mjcf", "load", "from_mujoco_state", "to_mujoco_state", "from_mujoco_force",
           "to_mujoco_force", "mujoco_velocity_map"]

_JOINT_KINDS = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical", "free": "free"}
_ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")
_PRIMITIVES = ("sphere", "capsule", "ellipsoid", "cylinder", "box")
_NEEDS_MESH = ("mesh", "sdf", "hfield")
_REFUSED = {  # elements that add bodies or degrees of freedom rbd cannot read
    "composite": "expand it in MuJoCo and save the compiled model (mj_saveLastXML)",
    "flexcomp": "flexible bodies are not rigid: rbd cannot model them",
    "replicate": "expand it in MuJoCo and save the compiled model (mj_saveLastXML)",
    "attach": "expand it in MuJoCo and save the compiled model (mj_saveLastXML)",
    "deformable": "flexible bodies are not rigid: rbd cannot model them",
}
_BODY_CHILDREN = ("inertial", "joint", "freejoint", "geom", "site", "camera", "light", "body",
                  "plugin")
_MJ_EPS = 1e-14  # MuJoCo's mjEPS: geoms of smaller mass are left out of a body's inertia
_MJ_MINVAL = 1e-15  # MuJoCo's mjMINVAL
_LISTED = 8  # items of one kind named in the warning
_MAX_INCLUDES = 1000  # included files per model (a guard against exponential include trees)


@dataclass
class _Compiler:
    degree: bool = True
    eulerseq: str = "xyz"
    inertiafromgeom: str = "auto"
    group_range: tuple[int, int] = (0, 5)
    boundmass: float = 0.0
    boundinertia: float = 0.0
    balanceinertia: bool = False
    settotalmass: float = -1.0
    autolimits: bool = True


@dataclass
class _MJJoint:
    name: str
    kind: str  # hinge, slide, ball, free
    axis: np.ndarray
    pos: np.ndarray
    ref: float
    properties: dict = field(default_factory=dict)


@dataclass
class _MJBody:
    name: str
    parent: int  # index of the parent MJCF body, -1 for the world
    X: np.ndarray  # motion transform: parent body frame -> this body's reference frame
    joints: list
    link: _Link  # mass, centre of mass and inertia about it, in the body frame
    sites: list  # (name, X body -> site)


# --- reading the source ----------------------------------------------------------------------
def _read_file(path) -> bytes:
    try:
        with open(os.fspath(path), "rb") as fh:
            return fh.read()
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise MJCFError(f"cannot read MJCF file {_quote(path)}: {reason}") from None


def _is_xml_text(source) -> bool:
    return isinstance(source, bytes | bytearray) or (
        isinstance(source, str) and source.lstrip().lstrip("\ufeff").lstrip().startswith("<"))


def _parse_xml(text, what: str = "the document") -> ET.Element:
    """Parse with document type declarations (hence entities and external references) refused."""
    if isinstance(text, str):
        text = text.lstrip().lstrip("\ufeff").lstrip()
    try:
        return _safe_fromstring(text, forbid_dtd=True, forbid_entities=True,
                                forbid_external=True)
    except DefusedXmlException as exc:
        raise MJCFError(f"{what}: unsafe XML refused ({type(exc).__name__}): an MJCF file may "
                        "not have a DOCTYPE, declare entities or refer to external resources"
                        ) from None
    except ET.ParseError as exc:
        raise MJCFError(f"{what}: malformed XML: {exc}") from None
    except (LookupError, ValueError) as exc:
        raise MJCFError(f"{what}: cannot parse the XML ({_quote(exc)}); save it as UTF-8"
                        ) from None


def _inside(path: str, directory: str) -> bool:
    return os.path.commonpath([path, directory]) == directory


def _expand_includes(elem: ET.Element, directory: str | None, stack: tuple, count: list) -> None:
    """Replace every ``<include file>`` below ``elem`` by the children of the file's root."""
    children = []
    for child in list(elem):
        if child.tag != "include":
            _expand_includes(child, directory, stack, count)
            children.append(child)
            continue
        name = child.get("file")
        if not name:
            raise MJCFError("<include> has no 'file' attribute")
        if directory is None:
            raise MJCFError(f"<include file={_quote(name)}>: a model given as a string has no "
                            "directory; pass directory= to load_mjcf or load the file by path")
        path = os.path.realpath(os.path.join(directory, name))
        if not _inside(path, directory):
            raise MJCFError(f"<include file={_quote(name)}> points outside the model's "
                            f"directory {_quote(directory)}: only files inside it are read")
        if path in stack:
            chain = " -> ".join(_quote(os.path.basename(p)) for p in (*stack, path))
            raise MJCFError(f"<include file={_quote(name)}> closes an include cycle: {chain}")
        count[0] += 1
        if count[0] > _MAX_INCLUDES:
            raise MJCFError(f"more than {_MAX_INCLUDES} <include> elements: refused")
        root = _parse_xml(_read_file(path), f"included file {_quote(name)}")
        if root.tag != "mujoco":
            raise MJCFError(f"included file {_quote(name)}: root element is <{root.tag}>, "
                            "expected <mujoco>")
        _expand_includes(root, directory, (*stack, path), count)
        children.extend(root)
    elem[:] = children


def _document(source, directory) -> ET.Element:
    """The root ``<mujoco>`` element of ``source``, includes expanded."""
    if _is_xml_text(source):
        text, main = (bytes(source) if not isinstance(source, str) else source), None
    elif isinstance(source, str | os.PathLike):
        text, main = _read_file(source), os.path.realpath(os.fspath(source))
        directory = directory if directory is not None else os.path.dirname(main)
    else:
        raise MJCFError("expected an MJCF file path or an XML string, got "
                        f"{type(source).__name__}")
    root = _parse_xml(text)
    if root.tag != "mujoco":
        raise MJCFError(f"the document's root element is <{root.tag}>, expected <mujoco>")
    if directory is not None:
        directory = os.path.realpath(os.fspath(directory))
    _expand_includes(root, directory, (main,) if main else (), [0])
    return root


# --- attributes ------------------------------------------------------------------------------
def _numbers(value: str, where: str, attr: str, count: int | tuple[int, int]) -> np.ndarray:
    """Parse ``count`` finite numbers (an exact count, or a ``(min, max)`` range)."""
    try:
        values = np.array([float(x) for x in value.split()])
    except ValueError:
        raise MJCFError(f"{where}: {attr}={_quote(value)} is not a list of numbers") from None
    low, high = count if isinstance(count, tuple) else (count, count)
    if not low <= values.size <= high:
        expected = f"{low}" if low == high else f"{low} to {high}"
        raise MJCFError(f"{where}: {attr}={_quote(value)} must hold {expected} numbers, "
                        f"got {values.size}")
    if not np.all(np.isfinite(values)):
        raise MJCFError(f"{where}: {attr}={_quote(value)} has a non-finite value")
    return values


def _vector(attrs: dict, key: str, count: int, where: str, default=None) -> np.ndarray:
    if key not in attrs:
        if default is None:
            raise MJCFError(f"{where}: missing attribute {key!r}")
        return np.array(default, dtype=float)
    return _numbers(attrs[key], where, key, count)


def _scalar(attrs: dict, key: str, where: str, default: float) -> float:
    return float(_vector(attrs, key, 1, where, [default])[0])


def _flag(attrs: dict, key: str, where: str, default: str, choices=("true", "false")) -> str:
    value = attrs.get(key, default).strip().lower()
    if value not in choices:
        raise MJCFError(f"{where}: {key}={_quote(value)} must be one of {', '.join(choices)}")
    return value


def _quat_rot(wxyz: np.ndarray, where: str) -> np.ndarray:
    norm = float(np.linalg.norm(wxyz))
    if norm < _MJ_EPS:
        raise MJCFError(f"{where}: quat is zero")
    w, x, y, z = wxyz / norm
    return quat_to_rot(np.array([x, y, z, w]))


def _z_to(vec: np.ndarray) -> np.ndarray:
    """MuJoCo's ``mjuu_z2quat``: the rotation about ``z × vec`` taking ``z`` to ``vec``."""
    axis = np.cross([0.0, 0.0, 1.0], vec)
    s = float(np.linalg.norm(axis))
    axis = np.array([1.0, 0.0, 0.0]) if s < 1e-10 else axis / s
    return axis_angle_rotation(axis, math.atan2(s, vec[2]))


def _euler(angles: np.ndarray, sequence: str) -> np.ndarray:
    """Lower-case axes rotate with the body (post-multiply), upper-case stay fixed."""
    R = np.eye(3)
    for angle, axis in zip(angles, sequence, strict=True):
        step = axis_angle_rotation(np.eye(3)["xyz".index(axis.lower())], angle)
        R = R @ step if axis.islower() else step @ R
    return R


def _xyaxes(values: np.ndarray, where: str) -> np.ndarray:
    x, y = values[:3], values[3:]
    if np.linalg.norm(x) < _MJ_EPS:
        raise MJCFError(f"{where}: xyaxes has a zero x axis")
    x = x / np.linalg.norm(x)
    y = y - x * (x @ y)
    if np.linalg.norm(y) < _MJ_EPS:
        raise MJCFError(f"{where}: xyaxes has a y axis parallel to x")
    y = y / np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def _rotation(attrs: dict, own: dict, where: str, compiler: _Compiler) -> np.ndarray:
    """Orientation from ``quat``, ``axisangle``, ``euler``, ``xyaxes`` or ``zaxis`` (one only)."""
    keys = [k for k in _ORIENTATIONS if k in own] or [k for k in _ORIENTATIONS if k in attrs]
    if len(keys) > 1:
        raise MJCFError(f"{where}: more than one orientation given ({', '.join(keys)}); "
                        "keep one")
    if not keys:
        return np.eye(3)
    key = keys[0]
    scale = math.pi / 180.0 if compiler.degree else 1.0
    if key == "quat":
        return _quat_rot(_vector(attrs, key, 4, where), where)
    if key == "axisangle":
        values = _vector(attrs, key, 4, where)
        if np.linalg.norm(values[:3]) < _MJ_EPS:
            raise MJCFError(f"{where}: axisangle has a zero axis")
        return axis_angle_rotation(values[:3] / np.linalg.norm(values[:3]), values[3] * scale)
    if key == "euler":
        return _euler(_vector(attrs, key, 3, where) * scale, compiler.eulerseq)
    if key == "xyaxes":
        return _xyaxes(_vector(attrs, key, 6, where), where)
    zaxis = _vector(attrs, key, 3, where)
    if np.linalg.norm(zaxis) < _MJ_EPS:
        raise MJCFError(f"{where}: zaxis is zero")
    return _z_to(zaxis / np.linalg.norm(zaxis))


def _pose(attrs: dict, own: dict, where: str, compiler: _Compiler):
    return _rotation(attrs, own, where, compiler), _vector(attrs, "pos", 3, where, [0, 0, 0])


# --- compiler, option, defaults ---------------------------------------------------------------
def _read_compiler(root: ET.Element) -> _Compiler:
    c, where = _Compiler(), "<compiler>"
    for elem in root.findall("compiler"):
        a = elem.attrib
        if a.get("coordinate", "local").strip() != "local":
            raise MJCFError(f"{where}: coordinate={_quote(a['coordinate'])} is not supported "
                            "(MuJoCo itself only reads local coordinates): convert the model")
        if _flag(a, "alignfree", where, "false") == "true":
            raise MJCFError(f"{where}: alignfree='true' moves free bodies' frames to their "
                            "inertial frames, which rbd does not do: remove it")
        if "angle" in a:
            c.degree = _flag(a, "angle", where, "degree", ("degree", "radian")) == "degree"
        if "eulerseq" in a:
            c.eulerseq = a["eulerseq"].strip()
            if len(c.eulerseq) != 3 or set(c.eulerseq) - set("xyzXYZ"):
                raise MJCFError(f"{where}: eulerseq={_quote(c.eulerseq)} must be three of "
                                "x, y, z, X, Y, Z")
        if "inertiafromgeom" in a:
            c.inertiafromgeom = _flag(a, "inertiafromgeom", where, "auto",
                                      ("true", "false", "auto"))
        if "inertiagrouprange" in a:
            low, high = _numbers(a["inertiagrouprange"], where, "inertiagrouprange", 2)
            c.group_range = (int(low), int(high))
        c.boundmass = _scalar(a, "boundmass", where, c.boundmass)
        c.boundinertia = _scalar(a, "boundinertia", where, c.boundinertia)
        c.settotalmass = _scalar(a, "settotalmass", where, c.settotalmass)
        if "balanceinertia" in a:
            c.balanceinertia = _flag(a, "balanceinertia", where, "false") == "true"
        if "autolimits" in a:
            c.autolimits = _flag(a, "autolimits", where, "true") == "true"
    return c


def _read_option(root: ET.Element, ignored: dict) -> np.ndarray:
    gravity = np.array([0.0, 0.0, -9.81])
    for elem in root.findall("option"):
        gravity = _vector(elem.attrib, "gravity", 3, "<option>", gravity)
        fluid = [k for k in ("density", "viscosity") if _scalar(elem.attrib, k, "<option>", 0)]
        if np.any(_vector(elem.attrib, "wind", 3, "<option>", [0, 0, 0])):
            fluid.append("wind")
        if fluid:
            _ignore(ignored, "fluid forces", f"<option {' '.join(fluid)}>")
        for flag in elem.findall("flag"):
            if _flag(flag.attrib, "gravity", "<option><flag>", "enable",
                     ("enable", "disable")) == "disable":
                gravity = np.zeros(3)
    return gravity


def _read_defaults(elem: ET.Element, inherited: dict, classes: dict) -> None:
    """Class ``elem``: its parent's attributes overridden by its own; nested classes recurse."""
    name = elem.get("class", "main")
    if name in classes:
        raise MJCFError(f"<default class={_quote(name)}> is defined twice")
    values = {tag: dict(attrs) for tag, attrs in inherited.items()}
    for child in elem:
        if child.tag != "default":
            values.setdefault(child.tag, {}).update(child.attrib)
    classes[name] = values
    for child in elem.findall("default"):
        if "class" not in child.attrib:
            raise MJCFError(f"a nested <default> inside class {_quote(name)} has no 'class'")
        _read_defaults(child, values, classes)


def _defaults(root: ET.Element) -> dict:
    classes: dict = {}
    for elem in root.findall("default"):
        _read_defaults(elem, classes.get("main", {}), classes)
    classes.setdefault("main", {})
    return classes


# --- the body tree -----------------------------------------------------------------------------
@dataclass
class _Context:
    compiler: _Compiler
    classes: dict
    ignored: dict
    bodies: list = field(default_factory=list)


def _attributes(elem: ET.Element, tag: str, childclass: str, ctx: _Context, where: str) -> dict:
    """The element's attributes over those of its class (its own, or the inherited childclass)."""
    name = elem.get("class", childclass)
    if name not in ctx.classes:
        raise MJCFError(f"{where}: unknown default class {_quote(name)}")
    attrs = dict(ctx.classes[name].get(tag, {}))
    attrs.update(elem.attrib)
    return attrs


def _flatten(body: ET.Element, childclass: str, ctx: _Context, where: str):
    """Children of ``body`` with ``<frame>`` elements resolved: (elem, R, p, childclass)."""
    out = []

    def visit(elem, R, p, cls):
        for child in elem:
            if child.tag in _REFUSED:
                raise MJCFError(f"{where}: <{child.tag}> is not supported: {_REFUSED[child.tag]}")
            if child.tag not in (*_BODY_CHILDREN, "frame"):
                raise MJCFError(f"{where}: unknown element <{child.tag}> (MJCF allows "
                                f"{', '.join(_BODY_CHILDREN)} and frame here)")
            if child.tag == "frame":
                attrs = _attributes(child, "frame", cls, ctx, f"{where} <frame>")
                Rf, pf = _pose(attrs, child.attrib, f"{where} <frame>", ctx.compiler)
                visit(child, R @ Rf, p + R @ pf, child.get("childclass", cls))
            else:
                out.append((child, R, p, cls))

    visit(body, np.eye(3), np.zeros(3), childclass)
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
        _ignore(ctx.ignored, "ball-joint cone limits (range)", _quote(name))
    elif limited == "true":
        if rng[0] >= rng[1]:
            raise MJCFError(f"{where}: range {rng.tolist()} must have range[0] < range[1]")
        scale = math.pi / 180.0 if ctx.compiler.degree and kind == "hinge" else 1.0
        props.update(lower=rng[0] * scale, upper=rng[1] * scale)
    return props


def _read_joint(elem, R, p, cls, ctx: _Context, body: str, k: int) -> _MJJoint:
    free = elem.tag == "freejoint"
    name = elem.get("name") or f"{body}_joint{k}"
    where = f"<{elem.tag} name={_quote(name)}> of body {_quote(body)}"
    attrs = dict(elem.attrib) if free else _attributes(elem, "joint", cls, ctx, where)
    kind = "free" if free else attrs.get("type", "hinge").strip()
    if kind not in _JOINT_KINDS:
        raise MJCFError(f"{where}: unknown joint type {_quote(kind)} (MJCF joint types: "
                        f"{', '.join(_JOINT_KINDS)})")
    if _flag(attrs, "align", where, "auto", ("true", "false", "auto")) == "true":
        raise MJCFError(f"{where}: align='true' moves the body frame to the inertial frame, "
                        "which rbd does not do: remove it")
    axis = R @ _vector(attrs, "axis", 3, where, [0, 0, 1])
    if kind in ("hinge", "slide") and np.linalg.norm(axis) < _MJ_EPS:
        raise MJCFError(f"{where}: axis is zero")
    scale = math.pi / 180.0 if ctx.compiler.degree and kind == "hinge" else 1.0
    ref = _scalar(attrs, "ref", where, 0.0) * scale if kind in ("hinge", "slide") else 0.0
    if _scalar(attrs, "stiffness", where, 0.0) or np.any(
            _vector(attrs, "springdamper", 2, where, [0, 0])):
        _ignore(ctx.ignored, "joint springs (stiffness or springdamper, with springref)",
                _quote(name))
    pos = p + R @ _vector(attrs, "pos", 3, where, [0, 0, 0]) if kind != "free" else np.zeros(3)
    norm = float(np.linalg.norm(axis))
    return _MJJoint(name, kind, axis / norm if norm else axis, pos, ref,
                    _joint_properties(kind, attrs, where, ctx, name))


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


def _geom_link(elem, R, p, cls, ctx: _Context, body: str, k: int) -> _Link | None:
    """Mass, centre and inertia (body frame) of one geom, or None when it has no mass."""
    name = elem.get("name") or f"#{k}"
    where = f"<geom name={_quote(name)}> of body {_quote(body)}"
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
    return _Link(name, mass, p + R @ pg, Rg @ np.diag(mass * unit) @ Rg.T)


def _inertial_link(elem, R, p, ctx: _Context, body: str) -> _Link:
    where = f"<inertial> of body {_quote(body)}"
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
    return _Link(body, mass, p + R @ c, Ri @ I @ Ri.T)


def _bounded(link: _Link, compiler: _Compiler, body: str) -> _Link:
    """Apply ``boundmass``, ``boundinertia`` and ``balanceinertia``; check the inertia."""
    where = f"body {_quote(body)}"
    if link.mass < 0:  # checked before boundmass, which would hide it
        raise MJCFError(f"{where}: negative mass {link.mass:g}")
    mass, Ic = max(link.mass, compiler.boundmass), 0.5 * (link.I_com + link.I_com.T)
    lam, V = np.linalg.eigh(Ic)
    lam = np.maximum(lam, compiler.boundinertia)
    if compiler.balanceinertia and lam[0] + lam[1] < lam[2]:
        lam = np.full(3, lam.mean())
    Ic = (V * lam) @ V.T if (compiler.boundinertia or compiler.balanceinertia) else Ic
    problem = _violation(mass, Ic)
    if problem is not None:
        raise MJCFError(f"{where}: non-physical inertia: {problem}. Correct its <inertial> "
                        "(or set <compiler balanceinertia=\"true\"> as MuJoCo allows)")
    return _Link(link.name, mass, link.com, Ic)


def _body_link(kids, body: str, ctx: _Context) -> _Link:
    """The body's inertia, from its ``<inertial>`` or its geoms as MuJoCo's compiler decides."""
    inertials = [(e, R, p) for e, R, p, _ in kids if e.tag == "inertial"]
    if len(inertials) > 1:
        raise MJCFError(f"body {_quote(body)}: more than one <inertial>")
    mode = ctx.compiler.inertiafromgeom
    if mode == "true" or (mode == "auto" and not inertials):
        geoms = [e for e in kids if e[0].tag == "geom"]
        parts = [g for k, (e, R, p, cls) in enumerate(geoms)
                 if (g := _geom_link(e, R, p, cls, ctx, body, k)) is not None]
        if parts:
            m, c, Ic = _merge([(g, np.eye(6)) for g in parts])
            return _bounded(_Link(body, m, c, Ic), ctx.compiler, body)
    if inertials:
        return _bounded(_inertial_link(*inertials[0], ctx, body), ctx.compiler, body)
    return _bounded(_Link(body, 0.0, np.zeros(3), np.zeros((3, 3))), ctx.compiler, body)


def _read_body(elem, R, p, cls, parent: int, ctx: _Context) -> None:
    """Append the body ``elem`` and, depth-first, its descendants to ``ctx.bodies``."""
    index = len(ctx.bodies)
    name = elem.get("name") or f"body{index + 1}"
    where = f"body {_quote(name)}"
    attrs = _attributes(elem, "body", cls, ctx, where)
    Rb, pb = _pose(attrs, elem.attrib, where, ctx.compiler)
    Rb, pb = R @ Rb, p + R @ pb
    cls = elem.get("childclass", cls)
    if cls not in ctx.classes:
        raise MJCFError(f"{where}: unknown childclass {_quote(cls)}")
    if _scalar(attrs, "gravcomp", where, 0.0):
        _ignore(ctx.ignored, "gravity compensation (gravcomp) of bodies", _quote(name))
    if _flag(attrs, "mocap", where, "false") == "true":
        _ignore(ctx.ignored, "mocap motion (welded to the world) of bodies", _quote(name))
    kids = _flatten(elem, cls, ctx, where)
    joints = [_read_joint(e, Rk, pk, c, ctx, name, k) for k, (e, Rk, pk, c) in
              enumerate(x for x in kids if x[0].tag in ("joint", "freejoint"))]
    _check_joints(joints, parent, where)
    sites = []
    for e, Rk, pk, c in kids:
        if e.tag == "site" and e.get("name"):
            where_site = f"<site name={_quote(e.get('name'))}> of {where}"
            site_attrs = _attributes(e, "site", c, ctx, where_site)
            Rs, ps = _site_pose(site_attrs, e.attrib, where_site, ctx.compiler)
            sites.append((e.get("name"), plux((Rk @ Rs).T, pk + Rk @ ps)))
    ctx.bodies.append(_MJBody(name, parent, plux(Rb.T, pb), joints, _body_link(kids, name, ctx),
                              sites))
    if any(e.tag == "plugin" for e, *_ in kids):
        _ignore(ctx.ignored, "plugins of bodies", _quote(name))
    for e, Rk, pk, c in kids:
        if e.tag == "body":
            _read_body(e, Rk, pk, c, index, ctx)


def _site_pose(attrs, own, where, compiler):
    if "fromto" not in attrs:
        return _pose(attrs, own, where, compiler)
    ends = _numbers(attrs["fromto"], where, "fromto", 6)
    vec = ends[:3] - ends[3:]
    if np.linalg.norm(vec) < _MJ_EPS:
        raise MJCFError(f"{where}: fromto points coincide")
    return _z_to(vec / np.linalg.norm(vec)), (ends[:3] + ends[3:]) / 2


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
        for e, R, p, cls in _flatten(world, "main", ctx, "<worldbody>"):
            if e.tag in ("joint", "freejoint"):
                raise MJCFError("<worldbody> cannot have joints: put them in a <body>")
            if e.tag == "body":
                _read_body(e, R, p, cls, -1, ctx)


def _ignore(ignored: dict, category: str, item: str) -> None:
    """Note ``item`` under ``category`` of what the dynamics leaves out."""
    ignored.setdefault(category, []).append(item)


def _dynamics_sections(root: ET.Element, ignored: dict) -> None:
    for section, what in (("equality", "equality constraints"), ("tendon", "tendons"),
                          ("actuator", "actuators"), ("contact", "contact pairs and excludes")):
        for e in (e for s in root.findall(section) for e in s):
            _ignore(ignored, what, f"<{e.tag}" + (f" {_quote(e.get('name'))}>"
                                                  if e.get("name") else ">"))
    if root.findall("extension"):
        _ignore(ignored, "plugins", "<extension>")


def _ignored_message(name: str, ignored: dict) -> str:
    parts = []
    for category, items in ignored.items():
        shown = ", ".join(items[:_LISTED]) + (f" and {len(items) - _LISTED} more"
                                              if len(items) > _LISTED else "")
        parts.append(f"{category} ({len(items)}: {shown})")
    return (f"MJCF model {name!r}: rbd's tree dynamics leaves out " + "; ".join(parts)
            + " (they are not part of the model)")


# --- building the model --------------------------------------------------------------------------
@dataclass
class _Spec:
    parent: int
    joint: Joint
    X_tree: np.ndarray
    name: str
    joint_name: str
    properties: dict = field(default_factory=dict)
    parts: list = field(default_factory=list)  # (_Link, X body -> part frame)


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
        name = body.name if carries else _unique(f"{body.name}/{joint.name}", taken)
        taken.add(name)
        specs.append(_Spec(parent, _rbd_joint(joint), X_rel @ X_prev, name, joint.name,
                           joint.properties))
        parent, X_prev, c_prev = len(specs) - 1, np.eye(6), c
    if np.any(c_prev):
        specs.append(_Spec(parent, Fixed(), plux(np.eye(3), -c_prev), body.name,
                           _unique(f"{body.name}/weld", taken)))
        taken.add(specs[-1].joint_name)
    return len(specs) - 1


def _plan(bodies: list) -> tuple[list, list]:
    """Specs of the rbd bodies with their inertia parts, and the frames ``(name, spec, X)``."""
    specs: list[_Spec] = []
    frames = []
    taken = {b.name for b in bodies} | {j.name for b in bodies for j in b.joints}
    owner: list[tuple[int, np.ndarray]] = []  # (spec carrying the MJCF body, X spec -> body)
    for body in bodies:
        base, X_up = (-1, np.eye(6)) if body.parent == -1 else owner[body.parent]
        X_base = body.X @ X_up
        if body.joints:
            owner.append((_chain(body, base, X_base, specs, taken), np.eye(6)))
        else:
            owner.append((base, X_base))
            if base >= 0:
                frames.append((body.name, base, X_base))
        spec, X = owner[-1]
        if spec >= 0:
            specs[spec].parts.append((body.link, X))
            for site, X_site in body.sites:
                name = _unique(site, taken)
                taken.add(name)
                frames.append((name, spec, X_site @ X))
    return specs, frames


def _scale_masses(bodies: list, total: float) -> None:
    """``<compiler settotalmass>``: scale every mass and inertia (MuJoCo's mj_setTotalmass)."""
    current = sum(b.link.mass for b in bodies)
    scale = max(_MJ_MINVAL, total / max(_MJ_MINVAL, current))
    for b in bodies:
        b.link = _Link(b.name, b.link.mass * scale, b.link.com, b.link.I_com * scale)


def _build(name: str, gravity, bodies: list) -> Model:
    specs, frames = _plan(bodies)
    model = Model(gravity=gravity, name=name)
    for spec in specs:
        inertia = _merge(spec.parts) if spec.parts else None
        try:
            model.add_body(spec.parent, spec.joint, spec.X_tree, inertia, spec.name,
                           spec.joint_name, check_inertia=False)
            if spec.properties:
                model.set_joint_properties(spec.joint_name, **spec.properties)
        except ModelError as exc:
            raise MJCFError(f"body {_quote(spec.name)}: {exc}") from None
    for frame_name, spec, X in frames:
        model.add_frame(frame_name, spec, X)
    return model


def load_mjcf(source: str | os.PathLike | bytes, *,
              directory: str | os.PathLike | None = None) -> Model:
    """Build a :class:`~rbd.model.Model` from an MJCF (MuJoCo) file or XML string.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path to an MJCF file, or the XML document itself (a string whose
        first non-blank character is ``<``, or bytes).
    directory : str or os.PathLike, optional
        The directory ``<include>`` files are read from (and confined to).
        Default: the model file's directory; a model given as a string has
        none, so its includes are refused unless this is given.

    Returns
    -------
    Model
        One body per MJCF body with joints (plus massless bodies for the
        extra joints of a body and a welded body where the last joint's anchor
        is off the body origin; see the module notes), joints named and
        ordered as in MuJoCo, bodies without joints merged into their parents
        and kept as frames, sites as frames.  ``model.name`` is the
        ``<mujoco model>`` name; gravity from ``<option>``.

    Raises
    ------
    MJCFError
        On malformed or unsafe XML (any DOCTYPE), a root other than
        ``<mujoco>``, an ``<include>`` outside the model's directory or in a
        cycle, an unknown joint type or default class, a free joint that is
        not alone or not at the top level, a bad number, a zero axis or
        quaternion, two orientations on one element, an inverted ``range``,
        a non-physical inertia, a geom whose inertia needs a mesh file, or an
        element rbd cannot model rigidly (``<composite>``, ``<flexcomp>``,
        ``<replicate>``, ``<attach>``, ``<deformable>``).  The message names
        the element.  Nothing is returned and no model is half built.

    Warns
    -----
    RuntimeWarning
        Once, listing what the file holds that rbd's dynamics leaves out
        (equality constraints, tendons, actuators, contact pairs and
        excludes, joint springs, ball-joint limits, gravity compensation,
        fluid forces, mocap bodies, plugins).

    Notes
    -----
    Use :func:`from_mujoco_state` and its companions to pass states, forces
    and accelerations between MuJoCo and rbd (quaternion order and the free
    joint's velocity differ; see the module notes).

    Examples
    --------
    A rod of 2 kg hinged about ``y``, its centre of mass 0.5 m below the hinge:

    >>> import rbd.mjcf
    >>> xml = '''
    ... <mujoco model="pendulum">
    ...   <worldbody>
    ...     <body name="rod">
    ...       <joint name="hinge" axis="0 1 0" range="-90 90" damping="0.1"/>
    ...       <inertial pos="0 0 -0.5" mass="2" diaginertia="0.17 0.17 0.001"/>
    ...     </body>
    ...   </worldbody>
    ... </mujoco>'''
    >>> model = rbd.mjcf.load_mjcf(xml)
    >>> model.body_names, model.joint_names, model.nq
    (['rod'], ['hinge'], 1)
    >>> round(float(rbd.crba(model, [0.0])[0, 0]), 12)  # I_yy + m (0.5)^2
    0.67
    >>> [round(float(x), 6) for x in (model.lower[0], model.upper[0])]  # degrees by default
    [-1.570796, 1.570796]
    """
    root = _document(source, directory)
    compiler = _read_compiler(root)
    ignored: dict[str, list[str]] = {}
    gravity = _read_option(root, ignored)
    ctx = _Context(compiler, _defaults(root), ignored)
    _read_world(root, ctx)
    _dynamics_sections(root, ignored)
    if compiler.settotalmass > 0:
        _scale_masses(ctx.bodies, compiler.settotalmass)
    model = _build(root.get("model", "MuJoCo Model"), gravity, ctx.bodies)
    if ignored:
        warnings.warn(_ignored_message(model.name, ignored), RuntimeWarning, stacklevel=2)
    return model


# --- choosing the reader ----------------------------------------------------------------------
_MARKUP = re.compile(r"\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)", re.S)


def _root_tag(head: str) -> str | None:
    """The name of the first element of an XML text (declarations and comments skipped)."""
    head = head.lstrip("\ufeff")
    position = 0
    while match := _MARKUP.match(head, position):
        position = match.end()
    found = re.match(r"\s*<([A-Za-z_][\w.:-]*)", head[position:])
    return found.group(1) if found else None


def load(source: str | os.PathLike | bytes, **kwargs) -> Model:
    """Load a URDF or an MJCF model, choosing the reader from the file.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A file path or the XML document itself.  A ``.urdf`` file is read as
        URDF; otherwise the root element decides: ``<robot>`` is URDF,
        ``<mujoco>`` is MJCF.
    **kwargs
        Passed to :func:`rbd.urdf.load_urdf` or :func:`load_mjcf`.

    Returns
    -------
    Model

    Raises
    ------
    InputError
        When the root element is neither ``<robot>`` nor ``<mujoco>``.
    URDFError, MJCFError
        From the chosen reader.

    Examples
    --------
    >>> import rbd.mjcf
    >>> rbd.mjcf.load('<mujoco><worldbody><body><freejoint name="j"/>'
    ...               '<geom size="0.1"/></body></worldbody></mujoco>').nv
    6
    """
    from .urdf import load_urdf

    if not _is_xml_text(source) and isinstance(source, str | os.PathLike):
        if os.fspath(source).lower().endswith((".urdf", ".xacro")):
            return load_urdf(source, **kwargs)
        try:
            with open(os.fspath(source), "rb") as fh:
                head = fh.read(65536)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise InputError(f"cannot read model file {_quote(source)}: {reason}") from None
    elif _is_xml_text(source):
        head = source[:65536]
    else:
        raise InputError(f"expected a model file path or XML, got {type(source).__name__}")
    text = head.decode("utf-8", "replace") if isinstance(head, bytes | bytearray) else head
    tag = _root_tag(text)
    if tag == "robot":
        return load_urdf(source, **kwargs)
    if tag == "mujoco":
        return load_mjcf(source, **kwargs)
    raise InputError(f"{_quote(source)}: the root element is "
                     f"{'<' + tag + '>' if tag else 'missing'}; expected <robot> (URDF) or "
                     "<mujoco> (MJCF)")


# --- MuJoCo's state conventions (see the module notes) -----------------------------------------
def _layout(model: Model):
    """``(kind, q slice, v slice)`` of each joint with degrees of freedom, in ``q`` order."""
    out = []
    for i, body in enumerate(model.bodies):
        kind = body.joint.kind
        if kind == "fixed":
            continue
        if kind not in ("revolute", "prismatic", "spherical", "free"):
            raise InputError(f"joint {body.joint_name!r}: a {kind} joint has no MuJoCo "
                             "equivalent (hinge, slide, ball, free)")
        out.append((kind, model.q_index(i), model.v_index(i)))
    return out


def _array(value, size: int, what: str) -> np.ndarray:
    arr = np.array(value, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise InputError(f"{what} must have shape (..., {size}), got {arr.shape}")
    return arr


def _rotate(quat_xyzw: np.ndarray, vec: np.ndarray, inverse: bool = False) -> np.ndarray:
    """``R v`` (or ``Rᵀ v``) for unit quaternions ``(x, y, z, w)``, over leading axes."""
    u = -quat_xyzw[..., :3] if inverse else quat_xyzw[..., :3]
    w = quat_xyzw[..., 3:4]
    t = 2.0 * np.cross(u, vec)
    return vec + w * t + np.cross(u, t)


def _wxyz_to_xyzw(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x[..., 1:4], x[..., 0:1]], axis=-1)


def _xyzw_to_wxyz(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x[..., 3:4], x[..., 0:3]], axis=-1)


def _free_quat(q: np.ndarray, qs: slice) -> np.ndarray:
    return q[..., qs.start + 3:qs.start + 7]


def _halves(x: np.ndarray, vs: slice) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the first and last three entries of a free joint's six."""
    return x[..., vs.start:vs.start + 3].copy(), x[..., vs.start + 3:vs.stop].copy()


def from_mujoco_state(model: Model, qpos, qvel=None, qacc=None):
    """MuJoCo's ``qpos``, ``qvel``, ``qacc`` as rbd's ``q``, ``v``, ``a``.

    Parameters
    ----------
    model : Model
        A model whose joints are revolute, prismatic, spherical, free or fixed
        in MuJoCo's joint order (as :func:`load_mjcf` builds it).
    qpos : (..., nq) array_like
    qvel : (..., nv) array_like, optional
    qacc : (..., nv) array_like, optional
        Needs ``qvel`` (a free joint's linear acceleration picks up ``ω × u``).

    Returns
    -------
    q, v, a : ndarray or None
        ``None`` where the input was not given.

    Notes
    -----
    Per joint (module notes): quaternions ``(w, x, y, z) -> (x, y, z, w)``;
    a free joint's ``[R u; ω] -> [ω; u]`` and ``[R (u̇ + ω × u); ω̇] -> [ω̇; u̇]``.
    """
    layout = _layout(model)
    qpos = _array(qpos, model.nq, "qpos")
    q = qpos.copy()
    for kind, qs, _ in layout:
        if kind == "spherical":
            q[..., qs] = _wxyz_to_xyzw(qpos[..., qs])
        elif kind == "free":
            q[..., qs.start + 3:qs.stop] = _wxyz_to_xyzw(qpos[..., qs.start + 3:qs.stop])
    v = None if qvel is None else _array(qvel, model.nv, "qvel").copy()
    a = None
    if qacc is not None:
        if qvel is None:
            raise InputError("qacc needs qvel (a free joint's acceleration depends on it)")
        a = _array(qacc, model.nv, "qacc").copy()
    for kind, qs, vs in layout:
        if kind != "free" or v is None:
            continue
        quat, (lin, ang) = _free_quat(q, qs), _halves(v, vs)
        u = _rotate(quat, lin, inverse=True)
        v[..., vs] = np.concatenate([ang, u], axis=-1)
        if a is not None:
            lin_a, ang_a = _halves(a, vs)
            udot = _rotate(quat, lin_a, inverse=True) - np.cross(ang, u)
            a[..., vs] = np.concatenate([ang_a, udot], axis=-1)
    return q, v, a


def to_mujoco_state(model: Model, q, v=None, a=None):
    """rbd's ``q``, ``v``, ``a`` as MuJoCo's ``qpos``, ``qvel``, ``qacc`` (inverse of
    :func:`from_mujoco_state`; ``a`` needs ``v``)."""
    layout = _layout(model)
    q = _array(q, model.nq, "q")
    qpos = q.copy()
    for kind, qs, _ in layout:
        if kind == "spherical":
            qpos[..., qs] = _xyzw_to_wxyz(q[..., qs])
        elif kind == "free":
            qpos[..., qs.start + 3:qs.stop] = _xyzw_to_wxyz(q[..., qs.start + 3:qs.stop])
    qvel = None if v is None else _array(v, model.nv, "v").copy()
    qacc = None
    if a is not None:
        if v is None:
            raise InputError("a needs v (a free joint's acceleration depends on it)")
        qacc = _array(a, model.nv, "a").copy()
    for kind, qs, vs in layout:
        if kind != "free" or qvel is None:
            continue
        quat = _free_quat(q, qs)
        omega, u = _halves(qvel, vs)
        qvel[..., vs] = np.concatenate([_rotate(quat, u), omega], axis=-1)
        if qacc is not None:
            wdot, udot = _halves(qacc, vs)
            lin = _rotate(quat, udot + np.cross(omega, u))
            qacc[..., vs] = np.concatenate([lin, wdot], axis=-1)
    return qpos, qvel, qacc


def from_mujoco_force(model: Model, qpos, qfrc) -> np.ndarray:
    """A MuJoCo generalized force (``qfrc_*``, ``ctrl`` mapped to joints) as rbd's ``τ``.

    ``τ = Tᵀ qfrc`` (:func:`mujoco_velocity_map`): a free joint's
    ``[f_world; n_body] -> [n_body; Rᵀ f_world]``; other joints unchanged.
    """
    layout = _layout(model)
    q, _, _ = from_mujoco_state(model, qpos)
    tau = _array(qfrc, model.nv, "qfrc").copy()
    for kind, qs, vs in layout:
        if kind == "free":
            f, n = _halves(tau, vs)
            tau[..., vs] = np.concatenate([n, _rotate(_free_quat(q, qs), f, inverse=True)],
                                          axis=-1)
    return tau


def to_mujoco_force(model: Model, q, tau) -> np.ndarray:
    """rbd's ``τ`` as a MuJoCo generalized force (inverse of :func:`from_mujoco_force`)."""
    layout = _layout(model)
    q = _array(q, model.nq, "q")
    qfrc = _array(tau, model.nv, "tau").copy()
    for kind, qs, vs in layout:
        if kind == "free":
            n, f = _halves(qfrc, vs)
            qfrc[..., vs] = np.concatenate([_rotate(_free_quat(q, qs), f), n], axis=-1)
    return qfrc


def mujoco_velocity_map(model: Model, q) -> np.ndarray:
    r"""The matrix ``T`` with ``qvel = T v`` at the configuration ``q`` (rbd's).

    Returns
    -------
    (nv, nv) ndarray
        Identity except for each free joint's block ``[[0, R], [1, 0]]``.
        With it, ``M_rbd = Tᵀ M_mujoco T`` and ``τ = Tᵀ qfrc``.
    """
    q = _array(q, model.nq, "q")
    if q.ndim != 1:
        raise InputError(f"q must have shape ({model.nq},), got {q.shape}")
    T = np.eye(model.nv)
    for kind, qs, vs in _layout(model):
        if kind == "free":
            i = vs.start
            T[i:i + 6, i:i + 6] = 0.0
            T[i:i + 3, i + 3:i + 6] = quat_to_rot(_free_quat(q, qs))
            T[i + 3:i + 6, i:i + 3] = np.eye(3)
    return T
