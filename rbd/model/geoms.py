r"""Visual and collision geometry of a model: :class:`Geom` records and their world poses.

A model's geometry is a tuple of plain, read-only records
(:attr:`rbd.Model.geoms`), one per shape, each attached to a body (or to the
world) with a pose in that body's frame.  The records follow MuJoCo's
``<geom>``: the shape's ``kind`` and ``size`` use MuJoCo's convention, and
the contact parameters (``contype``, ``conaffinity``, ``condim``,
``friction``, ``solref``, ``solimp``, ``solmix``, ``margin``, ``gap``,
``priority``) carry MuJoCo's defaults wherever a file says nothing (so a URDF
collision shape behaves as MuJoCo would treat it).

=========  ====================================  ================================
kind       ``size``                              shape in its own frame
=========  ====================================  ================================
plane      (half x, half y, grid spacing)        the plane ``z = 0``, normal ``+z``
                                                 (half sizes 0: infinite)
sphere     (r, 0, 0)                             ball about the origin
capsule    (r, half length, 0)                   segment on ``z`` swept by a ball
cylinder   (r, half length, 0)                   axis ``z``
box        (half x, half y, half z)              axis-aligned
ellipsoid  (radius x, radius y, radius z)        axis-aligned
mesh       (0, 0, 0)                             the file's vertices times ``mesh_scale``
=========  ====================================  ================================

URDF ``<cylinder radius length>`` becomes ``(radius, length / 2, 0)`` and URDF
``<box size>`` the half sizes.  A URDF ``<visual>`` gives a record with
``visual=True, collision=False`` (``contype = conaffinity = 0``, as MuJoCo's
visual geoms), a ``<collision>`` one with ``visual=False, collision=True``.
An MJCF geom is visual when MuJoCo draws it by default (group 0, 1 or 2) and
collision when it can collide (``contype`` or ``conaffinity`` non-zero).

Mesh files are never opened by the readers: ``mesh`` holds the resolved file
path, and :func:`load_mesh` reads it (with the optional ``trimesh`` package)
only when asked.
"""

from __future__ import annotations

import dataclasses
import functools
import os

import numpy as np

from ..errors import InputError, ModelError
from .mesh_hull import MeshHull

__all__ = ["Geom", "GEOM_KINDS", "load_mesh", "make_geom"]

#: The shapes a geom can have (MuJoCo's geom types rbd reads).
GEOM_KINDS = ("plane", "sphere", "capsule", "cylinder", "box", "ellipsoid", "mesh")

#: MuJoCo's defaults of the contact parameters (``mjs_defaultGeom``).
MUJOCO_DEFAULTS = {
    "rgba": (0.5, 0.5, 0.5, 1.0),
    "group": 0,
    "contype": 1,
    "conaffinity": 1,
    "condim": 3,
    "friction": (1.0, 0.005, 0.0001),
    "solref": (0.02, 1.0),
    "solimp": (0.9, 0.95, 0.001, 0.5, 2.0),
    "solmix": 1.0,
    "margin": 0.0,
    "gap": 0.0,
    "priority": 0,
    "mesh_scale": (1.0, 1.0, 1.0),
}

_ARRAYS = {"size": (3,), "pose": (4, 4), "mesh_scale": (3,), "rgba": (4,), "friction": (3,),
           "solref": (2,), "solimp": (5,)}


@dataclasses.dataclass(frozen=True, eq=False)
class Geom:
    """One shape attached to a body (read-only record).

    Attributes
    ----------
    name : str
        The file's name for it (generated ``"<body>/geom<k>"`` when it has none).
    body : str or None
        The name of the body carrying it (one of ``model.body_names``); None
        for the world.
    kind : str
        One of :data:`GEOM_KINDS`.
    size : (3,) ndarray
        MuJoCo's size convention (module table).
    pose : (4, 4) ndarray
        The geom frame in the body frame, ``[[R, p], [0, 1]]``.
    visual, collision : bool
        Whether it is drawn by default and whether it takes part in contact.
    mesh : str or None
        The resolved mesh file of a ``"mesh"`` geom.
    mesh_scale : (3,) ndarray
        Per-axis scale applied to the mesh vertices.
    rgba : (4,) ndarray
        Colour (MuJoCo's default grey where the file gives none).
    group, contype, conaffinity, condim, priority : int
    friction : (3,) ndarray
        Sliding, torsional and rolling friction.
    solref : (2,) ndarray
    solimp : (5,) ndarray
    solmix, margin, gap : float
        MuJoCo's contact parameters, with its defaults.
    hull : rbd.model.mesh_hull.MeshHull or None
        A mesh geom's convex hull in MuJoCo's mesh frame, what it collides with (the
        MJCF reader makes it for mesh geoms that can collide); None otherwise.
    """

    name: str
    body: str | None
    kind: str
    size: np.ndarray
    pose: np.ndarray
    visual: bool = True
    collision: bool = True
    mesh: str | None = None
    mesh_scale: np.ndarray = dataclasses.field(
        default_factory=lambda: np.array(MUJOCO_DEFAULTS["mesh_scale"]))
    rgba: np.ndarray = dataclasses.field(
        default_factory=lambda: np.array(MUJOCO_DEFAULTS["rgba"]))
    group: int = 0
    contype: int = 1
    conaffinity: int = 1
    condim: int = 3
    friction: np.ndarray = dataclasses.field(
        default_factory=lambda: np.array(MUJOCO_DEFAULTS["friction"]))
    solref: np.ndarray = dataclasses.field(
        default_factory=lambda: np.array(MUJOCO_DEFAULTS["solref"]))
    solimp: np.ndarray = dataclasses.field(
        default_factory=lambda: np.array(MUJOCO_DEFAULTS["solimp"]))
    solmix: float = 1.0
    margin: float = 0.0
    gap: float = 0.0
    priority: int = 0
    hull: MeshHull | None = None

    def __post_init__(self):
        where = f"geom {self.name!r}"
        if not isinstance(self.name, str):
            raise ModelError(f"geom name must be a string, got {self.name!r}")
        if self.kind not in GEOM_KINDS:
            raise ModelError(f"{where}: unknown kind {self.kind!r} (one of "
                             f"{', '.join(GEOM_KINDS)})")
        for key, shape in _ARRAYS.items():
            try:
                value = np.array(getattr(self, key), dtype=float)
            except (TypeError, ValueError):
                raise ModelError(f"{where}: {key} must be numbers of shape {shape}") from None
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ModelError(f"{where}: {key} must be finite numbers of shape {shape}, "
                                 f"got shape {value.shape}")
            value.setflags(write=False)
            object.__setattr__(self, key, value)
        R = self.pose[:3, :3]
        if (np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0
                or np.any(self.pose[3] != (0, 0, 0, 1))):
            raise ModelError(f"{where}: pose must be a rigid transform [[R, p], [0, 1]]")
        if self.kind == "mesh" and not self.mesh:
            raise ModelError(f"{where}: a mesh geom needs its mesh file")
        if np.any(self.size < 0):
            raise ModelError(f"{where}: size must not be negative")
        for key in ("group", "contype", "conaffinity", "condim", "priority"):
            object.__setattr__(self, key, int(getattr(self, key)))
        for key in ("solmix", "margin", "gap"):
            object.__setattr__(self, key, float(getattr(self, key)))
        for key in ("visual", "collision"):
            object.__setattr__(self, key, bool(getattr(self, key)))
        if self.mesh is not None:
            object.__setattr__(self, "mesh", os.fspath(self.mesh))
        if self.hull is not None and (self.kind != "mesh" or not isinstance(self.hull, MeshHull)):
            raise ModelError(f"{where}: hull must be a MeshHull, on a mesh geom only")

    def __reduce__(self):
        # rebuilt through __init__, so the arrays of a copy are read-only too
        return (Geom, tuple(getattr(self, f.name) for f in dataclasses.fields(self)))

    def replace(self, **changes) -> Geom:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        shape = os.path.basename(self.mesh) if self.kind == "mesh" else np.round(
            self.size, 6).tolist()
        return f"Geom({self.name!r}, body={self.body!r}, kind={self.kind!r}, {shape})"


def make_geom(name: str, body: str | None, kind: str, size=(0.0, 0.0, 0.0), pose=None,
              **fields) -> Geom:
    """A :class:`Geom`; ``pose`` is a (4, 4) matrix, an ``(R, p)`` pair or None (identity)."""
    if pose is None:
        pose = np.eye(4)
    elif isinstance(pose, tuple) and len(pose) == 2:
        R, p = pose
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = R, p
    size = np.array(size, dtype=float).ravel()
    if size.size < 3:
        size = np.concatenate([size, np.zeros(3 - size.size)])
    return Geom(name, body, kind, size, np.array(pose, dtype=float), **fields)


def placed_geom(model, name, body, kind, size, pose, fields: dict) -> Geom:
    """The record :meth:`rbd.Model.add_geom` adds: ``body`` checked against ``model`` and
    stored by name (a whole :class:`Geom` given as ``name`` is taken as it is)."""
    if isinstance(name, Geom):
        if body is not None or fields or pose is not None:
            raise ModelError("add_geom(geom) takes the record alone")
        index = model._body_index(name.body, f"body of geom {name.name!r}")
        geom = name
    else:
        index = model._body_index(body, f"body of geom {name!r}")
        geom = make_geom(name, None, kind, size, pose, **fields)
    owner = None if index < 0 else model.bodies[index].name
    return geom if geom.body == owner else geom.replace(body=owner)


def load_mesh(geom_or_path, scale=None):
    """Vertices ``(n, 3)`` and triangles ``(m, 3)`` of a mesh file, scaled (needs ``trimesh``).

    Parameters
    ----------
    geom_or_path : Geom or str
        A mesh geom (its ``mesh`` and ``mesh_scale`` are used) or a file path.
    scale : (3,) array_like, optional
        Per-axis scale (default: the geom's, or 1).

    Raises
    ------
    InputError
        When ``trimesh`` is not installed (``pip install "rbd[mesh]"``) or the
        file cannot be read as a triangle mesh.
    """
    if isinstance(geom_or_path, Geom):
        path, default = geom_or_path.mesh, geom_or_path.mesh_scale
        if path is None:
            raise InputError(f"geom {geom_or_path.name!r} is a {geom_or_path.kind}, not a mesh")
    else:
        path, default = os.fspath(geom_or_path), np.ones(3)
    scale = default if scale is None else np.asarray(scale, dtype=float)
    return read_triangles(path, scale)


def read_triangles(path: str, scale=(1.0, 1.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """The vertices and triangles of a mesh file through ``trimesh`` (an optional dependency).

    A file is parsed once per content: later calls with the same path, modification time and
    size reuse the parsed arrays (a model with many bodies sharing one mesh, or an animation
    drawn again).  The returned arrays are the caller's own.
    """
    try:
        import trimesh  # noqa: F401  (checked here so the message names the file)
    except ImportError:
        raise InputError(f"reading the mesh file {path!r} needs the optional package trimesh:"
                         " pip install \"rbd[mesh]\" (or pip install trimesh)") from None
    if not os.path.isfile(path):
        raise InputError(f"mesh file {path!r} does not exist or is not a regular file")
    status = os.stat(path)
    vertices, faces = _parsed_mesh(os.path.realpath(path), status.st_mtime_ns, status.st_size)
    return vertices * np.asarray(scale, dtype=float), faces.copy()


@functools.lru_cache(maxsize=256)
def _parsed_mesh(path: str, mtime_ns: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The unscaled, read-only arrays of one version of a mesh file (the cache behind
    :func:`read_triangles`; the modification time and size make an edited file a new key)."""
    import trimesh
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many kinds of errors on bad files
        raise InputError(f"cannot read mesh file {path!r}: {exc}") from None
    vertices = np.asarray(mesh.vertices, dtype=float)
    faces = np.asarray(mesh.faces, dtype=np.int64)
    if vertices.ndim != 2 or vertices.shape[1:] != (3,) or faces.ndim != 2 or faces.shape[1] != 3:
        raise InputError(f"mesh file {path!r} holds no triangles")
    vertices.flags.writeable = False
    faces.flags.writeable = False
    return vertices, faces
