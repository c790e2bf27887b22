"""The model-wide settings of an MJCF document: ``<compiler>``, ``<option>``, ``<default>``.

Also the reading context the body tree is read in (:class:`_Context`) and the
record of what rbd's dynamics leaves out (:func:`_ignore`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from .._robotfile import quote
from ..errors import MJCFError
from ._xml import _flag, _numbers, _scalar, _vector

_MJ_EPS = 1e-14  # MuJoCo's mjEPS: geoms of smaller mass are left out of a body's inertia
_MJ_MINVAL = 1e-15  # MuJoCo's mjMINVAL
_LISTED = 8  # items of one kind named in the warning


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



# --- compiler, option, defaults ---------------------------------------------------------------
def _read_compiler(root: ET.Element) -> _Compiler:
    c, where = _Compiler(), "<compiler>"
    for elem in root.findall("compiler"):
        a = elem.attrib
        if a.get("coordinate", "local").strip() != "local":
            raise MJCFError(f"{where}: coordinate={quote(a['coordinate'])} is not supported "
                            "(MuJoCo itself only reads local coordinates): convert the model")
        if _flag(a, "alignfree", where, "false") == "true":
            raise MJCFError(f"{where}: alignfree='true' moves free bodies' frames to their "
                            "inertial frames, which rbd does not do: remove it")
        if "angle" in a:
            c.degree = _flag(a, "angle", where, "degree", ("degree", "radian")) == "degree"
        if "eulerseq" in a:
            c.eulerseq = a["eulerseq"].strip()
            if len(c.eulerseq) != 3 or set(c.eulerseq) - set("xyzXYZ"):
                raise MJCFError(f"{where}: eulerseq={quote(c.eulerseq)} must be three of "
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
        for key, default in _CONVEX_OPTIONS.items():
            if key in elem.attrib and _scalar(elem.attrib, key, "<option>", default) != default:
                _ignore(ignored, "options", f"<option {key}={quote(elem.get(key))}> (rbd's "
                        f"convex collision uses MuJoCo's default {default:g})")
    if "gravity" in _read_flags(root, ignored):
        gravity = np.zeros(3)
    return gravity


def _read_defaults(top: ET.Element, classes: dict) -> None:
    """Class ``top`` and its nested classes; each class starts from a copy of its parent's.

    A top-level ``<default>`` is the class ``main``: a repeated one adds to it (as
    MuJoCo does).  The walk keeps its own stack, so any nesting depth is read.
    """
    if top.get("class", "main") != "main":
        raise MJCFError(f"<default class={quote(top.get('class'))}> at the top level: the "
                        "top-level class is 'main' and cannot be renamed")
    pending = [(top, None)]
    while pending:
        elem, parent = pending.pop()
        name = "main" if parent is None else elem.get("class")
        if parent is None:
            values = classes.setdefault("main", {})
        elif name is None:
            raise MJCFError(f"a nested <default> inside class {quote(parent)} has no 'class'")
        elif name in classes:
            raise MJCFError(f"<default class={quote(name)}> is defined twice")
        else:
            values = {tag: dict(attrs) for tag, attrs in classes[parent].items()}
            classes[name] = values
        for child in elem:
            if child.tag != "default":
                values.setdefault(child.tag, {}).update(child.attrib)
        pending.extend((child, name) for child in reversed(elem.findall("default")))


def _defaults(root: ET.Element) -> dict:
    classes: dict = {"main": {}}
    for elem in root.findall("default"):
        _read_defaults(elem, classes)
    return classes



@dataclass
class _Context:
    compiler: _Compiler
    classes: dict
    ignored: dict
    bodies: list = field(default_factory=list)
    assets: object = None  # the <asset> section's meshes and materials (mjcf._geoms._Assets)
    world_geoms: list = field(default_factory=list)  # geoms of <worldbody>, world frame
    geom_names: set = field(default_factory=set)
    labels: dict = field(default_factory=dict)  # generated body name -> the file's element
    fluid_ellipsoid: dict = field(default_factory=dict)  # body -> [(geom, fluidcoef)]


def _owner(ctx: _Context, body: str) -> str:
    """How messages name a body: ``body 'name'``, or where an unnamed ``<body>`` sits."""
    return ctx.labels.get(body, f"body {quote(body)}")


def _element(tag: str, elem, k: int) -> str:
    """``<tag name='x'>``, or ``<tag #k>`` (its place among its kind) when it has no name."""
    name = elem.get("name")
    return f"<{tag} name={quote(name)}>" if name else f"<{tag} #{k}>"


def _attributes(elem: ET.Element, tag: str, childclass: str, ctx: _Context, where: str) -> dict:
    """The element's attributes over those of its class (its own, or the inherited childclass)."""
    name = elem.get("class", childclass)
    if name not in ctx.classes:
        raise MJCFError(f"{where}: unknown default class {quote(name)}")
    attrs = dict(ctx.classes[name].get(tag, {}))
    attrs.update(elem.attrib)
    return attrs



def _ignore(ignored: dict, category: str, item: str) -> None:
    """Note ``item`` under ``category`` of what the dynamics leaves out."""
    ignored.setdefault(category, []).append(item)


def _dynamics_sections(root: ET.Element, ignored: dict) -> None:
    for section, what in (("equality", "equality constraints"), ("tendon", "tendons"),
                          ("actuator", "actuators"), ("contact", "contact pairs")):
        for e in (e for s in root.findall(section) for e in s):
            if e.tag == "exclude" or (section == "tendon" and e.tag in ("fixed", "spatial")):
                continue                                # read by _read_excludes, _tendons
            _ignore(ignored, what, f"<{e.tag}" + (f" {quote(e.get('name'))}>"
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



def _read_solver_options(root: ET.Element) -> dict:
    """``<option timestep impratio cone iterations tolerance density viscosity wind>`` and the
    disable flags (:func:`_read_flags`) as a dict (those given), for
    :func:`rbd.forward`'s constraint rows and fluid forces (:mod:`rbd.constraints.fluid`)."""
    found: dict = {}
    for elem in root.findall("option"):
        for key in ("timestep", "impratio"):
            if key in elem.attrib:
                found[key] = _scalar(elem.attrib, key, "<option>", 0.0)
        if "iterations" in elem.attrib:
            found["iterations"] = int(_scalar(elem.attrib, "iterations", "<option>", 100))
            if found["iterations"] < 0:
                raise MJCFError(f"<option>: iterations must not be negative, got "
                                f"{found['iterations']}")
        if "tolerance" in elem.attrib:
            found["tolerance"] = _scalar(elem.attrib, "tolerance", "<option>", 1e-8)
            if found["tolerance"] < 0:
                raise MJCFError(f"<option>: tolerance must not be negative, got "
                                f"{found['tolerance']}")
        for key in ("density", "viscosity"):            # MuJoCo takes any sign
            if key in elem.attrib:
                found[key] = _scalar(elem.attrib, key, "<option>", 0.0)
        if "wind" in elem.attrib:
            found["wind"] = tuple(_vector(elem.attrib, "wind", 3, "<option>", [0, 0, 0]))
        if "cone" in elem.attrib:
            found["cone"] = _flag(elem.attrib, "cone", "<option>", "pyramidal",
                                  ("pyramidal", "elliptic"))
    disabled = _read_flags(root)
    if disabled:
        found["disable"] = disabled
    return found


#: ``<option><flag>`` disable flags that change :func:`rbd.forward` or the contact step and
#: that rbd honours (MuJoCo's ``mjtDisableBit``).  ``gravity`` is also applied at load
#: (the model's gravity is zero).
HONOURED_FLAGS = ("constraint", "equality", "frictionloss", "limit", "contact", "spring",
                  "damper", "gravity", "filterparent", "refsafe", "eulerdamp", "multiccd")
#: Flags whose setting changes a quantity rbd computes differently: MuJoCo's enable flags
#: ``override`` (contact margin and solver parameters), ``diagexact`` (the exact Delassus
#: diagonal) and ``sleep`` (bodies at rest frozen) when enabled.
_UNSUPPORTED_ENABLE = ("override", "diagexact", "sleep")
#: Disable flags of MuJoCo's convex collision that rbd does not follow
#: (``rbd.constraints.collision_convex`` is the native GJK/EPA whatever the file says;
#: ``multiccd`` is honoured: one contact per convex pair).
_CONVEX_FLAGS = ("nativeccd",)
#: ``<option>`` attributes of MuJoCo's convex collision and the defaults rbd uses.
_CONVEX_OPTIONS = {"ccd_tolerance": 1e-6, "ccd_iterations": 35}


def _read_flags(root: ET.Element, ignored: dict | None = None) -> tuple[str, ...]:
    """The disable flags of ``<option><flag>`` that rbd honours, set to ``"disable"``
    (sorted).  The other disable flags (``warmstart``, ``midphase``, ``sensor`` ...) leave
    the forward pass unchanged; an enable flag of :data:`_UNSUPPORTED_ENABLE` set to
    ``"enable"`` is noted in ``ignored``."""
    disabled = set()
    for flag in (f for elem in root.findall("option") for f in elem.findall("flag")):
        for key in flag.attrib:
            value = _flag(flag.attrib, key, "<option><flag>", "enable", ("enable", "disable"))
            if key in HONOURED_FLAGS and value == "disable":
                disabled.add(key)
            elif key in HONOURED_FLAGS:
                disabled.discard(key)
            elif key in _UNSUPPORTED_ENABLE and value == "enable" and ignored is not None:
                _ignore(ignored, "option flags", f"<flag {key}='enable'>")
            elif key in _CONVEX_FLAGS and value == "disable" and ignored is not None:
                _ignore(ignored, "option flags", f"<flag {key}='disable'> (rbd's convex "
                        "collision is MuJoCo's native one)")
    return tuple(sorted(disabled))


def _read_excludes(root: ET.Element, model) -> tuple:
    """``<contact><exclude body1 body2>`` as pairs of the rbd body keys that carry the two
    MJCF bodies (None: the world), for :func:`rbd.collide`'s ``excludes``.

    A body welded into its parent at load excludes its carrier, as the whole rbd body.
    """
    places = (getattr(model, "mujoco_bodies", None) or {}).get("body", {})
    names = set(model.body_names)

    def key(name: str, where: str):
        if name == "world":
            return None
        if name in names:
            return name
        if name in places:
            return places[name][0]
        raise MJCFError(f"{where}: unknown body {quote(name)}")

    found = []
    for k, e in enumerate(e for s in root.findall("contact") for e in s.findall("exclude")):
        where = _element("exclude", e, k)
        if "body1" not in e.attrib or "body2" not in e.attrib:
            raise MJCFError(f"{where}: needs body1 and body2")
        found.append((key(e.get("body1"), where), key(e.get("body2"), where)))
    return tuple(found)
