"""``<visual>`` and ``<collision>`` of URDF links as :class:`~rbd.model.geoms.Geom` records.

Shapes become MuJoCo's convention: ``<box size>`` its half sizes,
``<cylinder radius length>`` ``(radius, length / 2, 0)``, ``<sphere radius>``
``(radius, 0, 0)``, ``<mesh filename scale>`` a mesh geom with the resolved
file.  Mesh paths are resolved, never opened: ``package://pkg/path`` is looked
up as ``<dir>/pkg/path`` and then ``<dir>/path`` in each of ``package_dirs``
(as Pinocchio does), ``file://`` is a local path, and a relative path is taken
from the URDF file's directory first, then from ``package_dirs``.  A path
found nowhere is kept as written.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from .._robotfile import quote
from ..errors import URDFError
from ..model.geoms import MUJOCO_DEFAULTS, make_geom
from ._attributes import _numbers

_SHAPES = ("box", "cylinder", "sphere", "mesh", "capsule")


def resolve_mesh(filename: str, base: str | None, package_dirs) -> str:
    """The local file a URDF mesh ``filename`` names (module notes); unchanged if not found."""
    dirs = [os.fspath(d) for d in package_dirs or ()]
    if filename.startswith("package://"):
        rest = filename[len("package://"):]
        tail = rest.split("/", 1)[1] if "/" in rest else rest
        candidates = [os.path.join(d, rest) for d in dirs] + [os.path.join(d, tail) for d in dirs]
    elif filename.startswith("file://"):
        candidates = [filename[len("file://"):]]
    elif os.path.isabs(filename):
        candidates = [filename]
    else:
        candidates = ([os.path.join(base, filename)] if base else []) + [
            os.path.join(d, filename) for d in dirs]
    for path in candidates:
        if os.path.isfile(path):
            return os.path.abspath(path)
    return filename


def _shape(geometry: ET.Element, where: str):
    """``(kind, size, mesh filename, mesh scale)`` of a ``<geometry>``."""
    shapes = [c for c in geometry if c.tag in _SHAPES]
    if len(shapes) != 1:
        raise URDFError(f"{where}: <geometry> must hold exactly one of box, cylinder, sphere, "
                        f"mesh, got {[c.tag for c in geometry]}")
    shape = shapes[0]
    if shape.tag == "box":
        return "box", _numbers(shape, "size", 3, where) / 2, None, None
    if shape.tag in ("cylinder", "capsule"):
        r = _numbers(shape, "radius", 1, where)[0]
        half = _numbers(shape, "length", 1, where)[0] / 2
        return shape.tag, np.array([r, half, 0.0]), None, None
    if shape.tag == "sphere":
        return "sphere", np.array([_numbers(shape, "radius", 1, where)[0], 0, 0]), None, None
    filename = shape.get("filename")
    if not filename or not filename.strip():
        raise URDFError(f"{where}: <mesh> has no 'filename' attribute")
    return "mesh", np.zeros(3), filename.strip(), _numbers(shape, "scale", 3, where, (1, 1, 1))


def _material_colours(root: ET.Element) -> dict:
    colours = {}
    for material in root.findall("material"):
        color = material.find("color")
        if material.get("name") and color is not None:
            colours[material.get("name")] = _numbers(color, "rgba", 4,
                                                     f"<material {quote(material.get('name'))}>")
    return colours


def link_geoms(link_elem: ET.Element, link: str, colours: dict, base, package_dirs,
               origin) -> list:
    """The geoms of one ``<link>``, poses in the link frame (``origin``: ``_read._origin``)."""
    out = []
    for tag in ("visual", "collision"):
        for k, elem in enumerate(link_elem.findall(tag)):
            where = f"link {link!r} <{tag}>"
            geometry = elem.find("geometry")
            if geometry is None:
                raise URDFError(f"{where}: missing <geometry> element")
            kind, size, mesh, scale = _shape(geometry, where)
            R, p = origin(elem, where)
            fields = {"visual": tag == "visual", "collision": tag == "collision"}
            if tag == "visual":
                fields.update(contype=0, conaffinity=0, group=1)
                material = elem.find("material")
                rgba = MUJOCO_DEFAULTS["rgba"]
                if material is not None:
                    color = material.find("color")
                    if color is not None:
                        rgba = _numbers(color, "rgba", 4, where)
                    elif material.get("name") in colours:
                        rgba = colours[material.get("name")]
                fields["rgba"] = rgba
            if mesh is not None:
                fields.update(mesh=resolve_mesh(mesh, base, package_dirs), mesh_scale=scale)
            name = elem.get("name") or f"{link}_{tag}{k}"
            out.append(make_geom(name, link, kind, size, (R, p), **fields))
    return out
