"""``<visual>`` and ``<collision>`` of URDF links as :class:`~rbd.model.geoms.Geom` records.

Shapes become MuJoCo's convention: ``<box size>`` its half sizes,
``<cylinder radius length>`` ``(radius, length / 2, 0)``, ``<sphere radius>``
``(radius, 0, 0)``, ``<mesh filename scale>`` a mesh geom with the resolved
file.  ``package://pkg/path`` is looked up as ``<dir>/pkg/path`` and then
``<dir>/path`` in each of ``package_dirs`` (as Pinocchio does), then in the URDF
file's directory and each directory above it (an installed package tree, such as
example-robot-data's, finds its meshes without ``package_dirs``); ``file://`` is a
local path, and a relative path is taken from the URDF file's directory first, then
from ``package_dirs``.  A path found nowhere is kept as written.

A ``<collision>`` mesh collides through its convex hull as MuJoCo's URDF reader
makes it: the file becomes a mesh asset (``inertia="legacy"``) and its hull is
the one :func:`rbd.mjcf._geoms.collision_hull` builds for an MJCF mesh geom, kept
per version of the file.  Only regular files are opened, through ``trimesh``;
``<visual>`` meshes are never opened.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from .._robotfile import quote
from ..errors import InputError, MJCFError, URDFError
from ..model.geoms import MUJOCO_DEFAULTS, make_geom, read_triangles
from ._attributes import _numbers

_SHAPES = ("box", "cylinder", "sphere", "mesh", "capsule")


def resolve_mesh(filename: str, base: str | None, package_dirs) -> str:
    """The local file a URDF mesh ``filename`` names (module notes); unchanged if not found."""
    dirs = [os.fspath(d) for d in package_dirs or ()]
    if filename.startswith("package://"):
        dirs += _ancestors(base) if base else []
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


def _ancestors(directory: str) -> list[str]:
    """``directory`` and the directories above it, nearest first."""
    out, path = [], os.path.abspath(directory)
    while path not in out:
        out.append(path)
        path = os.path.dirname(path)
    return out


def collision_hull(path: str, scale, where: str, left_out: list):
    """The convex hull a ``<collision>`` mesh collides with, as MuJoCo makes it of the mesh
    asset its URDF reader writes (``rbd.mjcf._geoms.file_hull``), or None, with the reason
    noted in ``left_out``, when the file was not found or cannot be parsed here (``trimesh``
    missing, or a format it reads only with a plugin).  A file read whose vertices hold no
    solid (all on a plane) is refused, naming the element."""
    from ..mjcf._geoms import file_hull

    if not os.path.isfile(path):
        left_out.append((where, "file not found: give load_urdf its package_dirs"))
        return None
    try:
        import trimesh  # noqa: F401
    except ImportError:
        left_out.append((where, 'reading them needs trimesh: pip install "rbd[mesh]"'))
        return None
    try:
        read_triangles(path)                     # parsed once per file (kept by its reader)
    except InputError:                          # a format trimesh reads only with a plugin
        left_out.append((where, "trimesh cannot read the file (.dae needs pycollada)"))
        return None
    try:
        return file_hull(path, scale, where)
    except (InputError, MJCFError) as exc:       # read, but not a solid
        raise URDFError(str(exc)) from None


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
               origin, left_out: list | None) -> list:
    """The geoms of one ``<link>``, poses in the link frame (``origin``: ``_read._origin``);
    collision meshes with their hull (:func:`collision_hull`; those without one noted in
    ``left_out`` as ``(element, reason)``), none when ``left_out`` is None."""
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
                if tag == "collision" and left_out is not None:
                    fields["hull"] = collision_hull(fields["mesh"], scale, where, left_out)
            name = elem.get("name") or f"{link}_{tag}{k}"
            out.append(make_geom(name, link, kind, size, (R, p), **fields))
    return out
