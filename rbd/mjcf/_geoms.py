"""Geoms and their assets: ``<mesh>`` and ``<material>`` assets, geom records, mesh inertia."""

from __future__ import annotations

import os
import struct
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from .._robotfile import quote, unique
from ..errors import InputError, MJCFError
from ..model.geoms import MUJOCO_DEFAULTS, make_geom, read_triangles
from ..model.mesh_hull import MeshHull, mesh_hull
from ..reference.mass_properties import MESH_INERTIA_MODES, mesh_inertia
from ._options import _attributes, _Context, _element, _ignore, _owner
from ._orientation import _pose, _quat_rot, _z_to
from ._principal import principal_frame
from ._xml import _flag, _numbers, _scalar, _vector

GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh",
              "sdf")
_SIZES = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3, "plane": 0}


@dataclass
class _Mesh:
    name: str
    file: str | None  # resolved path, or None for inline vertices
    scale: np.ndarray
    inertia: str
    vertices: np.ndarray | None = None  # inline vertex=... (then faces may be inline too)
    faces: np.ndarray | None = None
    refpos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    refquat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0, 0, 0]))
    _properties: tuple | None = None
    _hull: MeshHull | None = None


@dataclass
class _Assets:
    meshes: dict = field(default_factory=dict)
    materials: dict = field(default_factory=dict)


def _asset_dir(compiler_dirs: dict, kind: str, directory: str | None) -> str | None:
    sub = compiler_dirs.get(kind) or compiler_dirs.get("asset")
    if directory is None:
        return sub
    return os.path.join(directory, sub) if sub else directory


def _read_assets(root: ET.Element, ctx: _Context, directory: str | None) -> _Assets:
    """``<mesh>`` and ``<material>`` assets (mesh files are located, not opened)."""
    dirs = {}
    for elem in root.findall("compiler"):
        for kind in ("mesh", "asset"):
            if f"{kind}dir" in elem.attrib:
                dirs[kind] = elem.get(f"{kind}dir")
    assets = _Assets()
    meshdir = _asset_dir(dirs, "mesh", directory)
    for section in root.findall("asset"):
        for elem in section:
            if elem.tag == "mesh":
                mesh = _read_mesh(elem, ctx, meshdir)
                if mesh.name in assets.meshes:
                    raise MJCFError(f"<mesh name={quote(mesh.name)}> is defined twice")
                assets.meshes[mesh.name] = mesh
            elif elem.tag == "material" and elem.get("name"):
                where = f"<material name={quote(elem.get('name'))}>"
                attrs = _attributes(elem, "material", "main", ctx, where)
                assets.materials[elem.get("name")] = _vector(attrs, "rgba", 4, where,
                                                             [1, 1, 1, 1])
    return assets


def _read_mesh(elem: ET.Element, ctx: _Context, meshdir: str | None) -> _Mesh:
    file = elem.get("file")
    name = elem.get("name") or (os.path.splitext(os.path.basename(file))[0] if file else None)
    if not name:
        raise MJCFError("<mesh> has neither 'name' nor 'file'")
    where = f"<mesh name={quote(name)}>"
    attrs = _attributes(elem, "mesh", elem.get("class", "main"), ctx, where)
    scale = _vector(attrs, "scale", 3, where, [1, 1, 1])
    inertia = _flag(attrs, "inertia", where, "legacy", MESH_INERTIA_MODES)
    path = None
    if file:
        path = file if meshdir is None or os.path.isabs(file) else os.path.join(meshdir, file)
    mesh = _Mesh(name, path, scale, inertia)
    if "vertex" in elem.attrib:
        values = _numbers(elem.get("vertex"), where, "vertex", (12, 10 ** 9))
        if values.size % 3:
            raise MJCFError(f"{where}: vertex must hold a multiple of 3 numbers")
        mesh.vertices = values.reshape(-1, 3).astype(np.float32).astype(float)
        if "face" in elem.attrib:
            faces = _numbers(elem.get("face"), where, "face", (3, 10 ** 9))
            if faces.size % 3 or np.any(faces < 0) or np.any(faces >= len(mesh.vertices)):
                raise MJCFError(f"{where}: face must hold vertex indices, three per triangle")
            mesh.faces = faces.reshape(-1, 3).astype(np.int64)
    elif not file and "builtin" not in attrs:
        raise MJCFError(f"{where}: needs a 'file', 'vertex' or 'builtin' attribute")
    mesh.refpos = _vector(attrs, "refpos", 3, where, [0, 0, 0])
    mesh.refquat = _vector(attrs, "refquat", 4, where, [1, 0, 0, 0])
    return mesh


def _read_msh(path: str) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's binary ``.msh``: four int32 counts, float32 vertices (normals, uv), int32 faces."""
    if not os.path.isfile(path):
        raise MJCFError(f"mesh file {quote(path)} does not exist or is not a regular file")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise MJCFError(f"cannot read mesh file {quote(path)}: {exc.strerror}") from None
    if len(data) < 16:
        raise MJCFError(f"mesh file {quote(path)}: missing header")
    nv, nn, nt, nf = struct.unpack("<4i", data[:16])
    if (nv < 4 or min(nn, nt, nf) < 0
            or len(data) != 16 + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf)):
        raise MJCFError(f"mesh file {quote(path)}: sizes do not match the file")
    vertices = np.frombuffer(data, "<f4", 3 * nv, 16).reshape(-1, 3).astype(float)
    faces = np.frombuffer(data, "<i4", 3 * nf, 16 + 4 * (3 * nv + 3 * nn + 2 * nt))
    return vertices, faces.reshape(-1, 3).astype(np.int64)


def _triangles(mesh: _Mesh, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (float32 values, as MuJoCo stores them) and triangles of a mesh asset."""
    if mesh.vertices is not None:
        vertices, faces = mesh.vertices, mesh.faces
    elif mesh.file is None:
        raise MJCFError(f"{where}: the body's inertia would come from the procedural mesh "
                        f"{quote(mesh.name)} (builtin), which rbd does not build: give the "
                        "body an <inertial> element")
    elif mesh.file.lower().endswith(".msh"):
        vertices, faces = _read_msh(mesh.file)
    else:
        try:
            vertices, faces = read_triangles(mesh.file)
        except InputError as exc:
            raise MJCFError(f"{where}: {exc}") from None
        vertices = vertices.astype(np.float32).astype(float)
    if len(vertices) < 4 or not np.all(np.isfinite(vertices)):
        raise MJCFError(f"{where}: mesh {quote(mesh.name)} has {len(vertices)} readable "
                        "vertices (a solid needs at least 4 finite ones)")
    if faces is None or len(faces) == 0:
        from scipy.spatial import QhullError

        from ..reference.mass_properties import _hull_faces

        try:
            faces = _hull_faces(vertices)
        except QhullError:
            raise MJCFError(f"{where}: mesh {quote(mesh.name)}: its vertices are on one "
                            "plane, line or point (no convex hull)") from None
    return vertices, faces


def mesh_vertices(mesh: _Mesh, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of a mesh asset in the geom frame: after ``refpos``,
    ``refquat`` and ``scale`` (triangles flipped by a mirroring scale), as MuJoCo's
    ``ApplyTransformations``."""
    vertices, faces = _triangles(mesh, where)
    vertices = vertices - mesh.refpos
    if np.any(mesh.refquat != (1, 0, 0, 0)):
        vertices = vertices @ _quat_rot(mesh.refquat, where)
    vertices = vertices * mesh.scale
    if np.prod(mesh.scale) < 0:
        faces = faces[:, ::-1]
    return vertices, faces


def mesh_properties(mesh: _Mesh, where: str):
    """Volume, centre and inertia (density 1) of a mesh asset, as MuJoCo computes them."""
    if mesh._properties is None:
        vertices, faces = mesh_vertices(mesh, where)
        try:
            volume, com, inertia = mesh_inertia(vertices, faces, mesh.inertia)
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise MJCFError(f"{where}: mesh {quote(mesh.name)}: {exc}") from None
        if not volume > 1e-15:
            raise MJCFError(f"{where}: mesh {quote(mesh.name)} has no volume (misoriented "
                            "or open triangles): give the body an <inertial> element or "
                            "set inertia='shell' on the mesh")
        mesh._properties = (volume, com, inertia)
    return mesh._properties


def collision_hull(mesh: _Mesh, where: str) -> MeshHull:
    """The convex hull a mesh geom collides with, in MuJoCo's mesh frame (its centre of
    mass and principal axes, :func:`rbd.mjcf._principal.principal_frame`)."""
    if mesh._hull is None:
        vertices, _ = mesh_vertices(mesh, where)
        _, centre, inertia = mesh_properties(mesh, where)
        try:
            mesh._hull = mesh_hull(vertices, centre, principal_frame(inertia),
                                   f"{where}: mesh {quote(mesh.name)}",
                                   _triangles(mesh, where)[0])
        except InputError as exc:
            raise MJCFError(str(exc)) from None
    return mesh._hull


#: Hulls of mesh files by (real path, modification time, size, scale): a robot file that
#: names one mesh on several links, or is loaded again, builds each hull once.
_FILE_HULLS: dict = {}


def file_hull(path: str, scale, where: str) -> MeshHull:
    """The collision hull of the mesh asset ``<mesh file=path scale=scale>`` (what MuJoCo's
    URDF reader makes of a ``<collision>`` mesh): :func:`collision_hull`, kept per version
    of the file (the record is read-only).  A file whose triangles enclose no volume gets
    the frame of its hull's inertia (``inertia="convex"``) instead of refusing the robot."""
    status = os.stat(path)
    key = (os.path.realpath(path), status.st_mtime_ns, status.st_size,
           tuple(float(x) for x in scale))
    hull = _FILE_HULLS.get(key)
    if hull is None:
        name = os.path.splitext(os.path.basename(path))[0]
        scale = np.asarray(scale, dtype=float)
        try:
            hull = collision_hull(_Mesh(name, path, scale, "legacy"), where)
        except MJCFError as exc:
            if "has no volume" not in str(exc):
                raise
            # open or misoriented triangles (a visual-grade file): the hull's own frame,
            # where MuJoCo's compiler would refuse the mesh; its contacts are the same
            hull = collision_hull(_Mesh(name, path, scale, "convex"), where)
        if len(_FILE_HULLS) >= 1024:
            _FILE_HULLS.clear()
        hull = _FILE_HULLS.setdefault(key, hull)
    return hull


def _hull_left_out(mesh: _Mesh) -> str | None:
    """Why rbd cannot build the mesh's hull at all (a procedural mesh; a file only
    ``trimesh`` reads, not installed), or None."""
    if mesh.vertices is not None:
        return None
    if mesh.file is None:
        return "procedural (builtin) meshes, which rbd does not build"
    if mesh.file.lower().endswith(".msh"):
        return None
    try:
        import trimesh  # noqa: F401
    except ImportError:
        return 'reading the file needs trimesh: pip install "rbd[mesh]"'
    return None


# --- geom records -------------------------------------------------------------------------------
def geom_size(attrs: dict, kind: str, where: str):
    """Sizes, and the position and orientation given by ``fromto`` (None when absent)."""
    count = _SIZES.get(kind, 0)
    size = np.zeros(3)
    given = _numbers(attrs["size"], where, "size", (1, 3)) if "size" in attrs else np.zeros(0)
    size[:given.size] = given
    if "fromto" not in attrs:
        if kind in ("mesh", "hfield", "sdf", "plane"):
            return size, None
        if np.any(size[:count] <= 0):
            raise MJCFError(f"{where}: a {kind} needs {count} positive size value(s), got "
                            f"{given.tolist()}")
        return size, None
    if kind not in ("capsule", "cylinder", "box", "ellipsoid"):
        raise MJCFError(f"{where}: fromto needs a capsule, cylinder, box or ellipsoid")
    ends = _numbers(attrs["fromto"], where, "fromto", 6)
    vec = ends[:3] - ends[3:]
    half = float(np.linalg.norm(vec)) / 2
    if half < 1e-14:
        raise MJCFError(f"{where}: fromto points coincide")
    size[1:] = (size[0], half) if kind in ("ellipsoid", "box") else (half, size[2])
    if np.any(size[:count] <= 0):
        raise MJCFError(f"{where}: a {kind} needs a positive radius, got {given.tolist()}")
    return size, ((ends[:3] + ends[3:]) / 2, _z_to(vec / (2 * half)))


def geom_frame(elem, attrs, kind, where, ctx: _Context):
    """Size and the geom frame ``(R, p)`` in its parent frame."""
    size, fromto = geom_size(attrs, kind, where)
    if fromto is None:
        R, p = _pose(attrs, elem.attrib, where, ctx.compiler)
    else:
        p, R = fromto
    return size, R, p


def geom_record(elem, R, p, cls, ctx: _Context, assets: _Assets, body: str, k: int, taken):
    """The :class:`~rbd.model.geoms.Geom` of one ``<geom>`` (pose in the MJCF body frame)."""
    name = elem.get("name") or f"{'world' if body == '<worldbody>' else body}/geom{k}"
    owner = body if body == "<worldbody>" else _owner(ctx, body)
    where = f"{_element('geom', elem, k)} of {owner}"
    attrs = _attributes(elem, "geom", cls, ctx, where)
    kind = attrs.get("type", "sphere").strip()
    if kind not in GEOM_TYPES:
        raise MJCFError(f"{where}: unknown geom type {quote(kind)} (MJCF geom types: "
                        f"{', '.join(GEOM_TYPES)})")
    size, Rg, pg = geom_frame(elem, attrs, kind, where, ctx)
    fields = {key: int(_scalar(attrs, key, where, MUJOCO_DEFAULTS[key]))
              for key in ("group", "contype", "conaffinity", "condim", "priority")}
    fields.update({key: _scalar(attrs, key, where, MUJOCO_DEFAULTS[key])
                   for key in ("solmix", "margin", "gap")})
    fields.update({key: _vector(attrs, key, len(MUJOCO_DEFAULTS[key]), where,
                                MUJOCO_DEFAULTS[key]) for key in ("solref",)})
    fields["friction"] = _leading_values(attrs, "friction", where, 3)
    fields["solimp"] = _leading_values(attrs, "solimp", where, 5)
    rgba = MUJOCO_DEFAULTS["rgba"]
    material = attrs.get("material")
    if material is not None and material in assets.materials:
        rgba = assets.materials[material]
    fields["rgba"] = _vector(attrs, "rgba", 4, where, rgba)
    if "mesh" in attrs and kind not in ("mesh", "sdf"):
        raise MJCFError(f"{where}: a {kind} fitted to mesh {quote(attrs['mesh'])} is not "
                        "supported: give its size, or use type='mesh'")
    if kind in ("mesh", "sdf"):
        mesh = assets.meshes.get(attrs.get("mesh", ""))
        if mesh is None:
            raise MJCFError(f"{where}: unknown mesh {quote(attrs.get('mesh', ''))}")
        inline = "builtin" if mesh.vertices is None else "inline"
        fields["mesh"], fields["mesh_scale"] = mesh.file or f"<{inline} {mesh.name}>", mesh.scale
    if kind in ("hfield", "sdf"):
        return None  # no record for shapes rbd cannot describe (heights, distance fields)
    if kind != "mesh":
        fields.pop("mesh", None)
        fields.pop("mesh_scale", None)
    # only a generated name can meet another (MuJoCo refuses duplicate geom names)
    name = unique(name, taken)
    taken.add(name)
    fields["visual"] = 0 <= fields["group"] <= 2
    fields["collision"] = bool(fields["contype"] or fields["conaffinity"])
    if kind == "mesh" and fields["collision"]:
        reason = _hull_left_out(mesh)                   # a static mesh loads without it
        if reason:
            _ignore(ctx.ignored, f"mesh collisions ({reason})", where)
        else:
            fields["hull"] = collision_hull(mesh, where)
    return make_geom(name, None, kind, size if kind != "mesh" else np.zeros(3),
                     (R @ Rg, p + R @ pg), **fields)


def _leading_values(attrs, key: str, where: str, count: int) -> np.ndarray:
    """``key``'s 1 to ``count`` numbers over MuJoCo's default (the values not given keep it)."""
    values = _numbers(attrs[key], where, key, (1, count)) if key in attrs else np.zeros(0)
    out = np.array(MUJOCO_DEFAULTS[key], dtype=float)
    out[:values.size] = values
    return out
