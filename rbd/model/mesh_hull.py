r"""The convex hull a mesh geom collides with, as MuJoCo's compiler makes it.

MuJoCo collides a mesh geom through the convex hull of its vertices, never its
triangles (``mjCMesh::MakeGraph`` in ``user_mesh.cc``: qhull with options ``Qt``, the
hull's vertices and, for each, its neighbours along hull edges).  The vertices it keeps
are in the *mesh frame*: about the mesh's centre of mass (``mesh_pos``) and along its
principal axes of inertia (``mesh_quat``), rounded to single precision (``mesh_vert`` is
``float``); the geom's world pose is then body ∘ geom frame ∘ mesh frame.  From the
vertices in that frame come the broad phase's bounds: the box ``aamm`` (computed before
the rounding) and the bounding radius ``rbound = ‖max(|lower|, |upper|)‖``
(``mjCGeom::GetRBound``).

The hull here is scipy's :class:`scipy.spatial.ConvexHull`, the same qhull library with
the same ``Qt`` (triangulated) option.  Two orders are qhull's internal lists in MuJoCo
and are not reproduced: the order of a vertex's neighbours, and the vertex where MuJoCo's
hill climbing starts.  They decide which vertex is *the* support point when several are
equally far along a direction (a face parallel to a plane), and which neighbours
MuJoCo's plane–mesh routine adds first when more than two qualify.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InputError

__all__ = ["MeshHull", "mesh_hull"]


@dataclasses.dataclass(frozen=True, eq=False)
class MeshHull:
    """The convex hull of a mesh geom in its mesh frame (read-only record).

    Attributes
    ----------
    vertices : (n, 3) ndarray
        Hull vertices in the mesh frame (single-precision values, as ``mesh_vert``).
    frame : (4, 4) ndarray
        The mesh frame in the geom frame ``[[R, c], [0, 1]]`` (``mesh_quat``,
        ``mesh_pos``): a point ``v`` of the file is ``Rᵀ (v − c)`` here.
    neighbors : tuple of (k,) int ndarrays
        For each vertex, the vertices joined to it by a hull edge.
    polygons : tuple of (k,) int ndarrays
        The hull's faces with the triangles of one plane merged (MuJoCo's
        ``mesh_polyvert``): vertex loops counter-clockwise seen from outside.
    normals : (npolygons, 3) ndarray
        Their outward unit normals (``mesh_polynormal``).
    vertex_polygons : tuple of (k,) int ndarrays
        For each vertex, the polygons it is a corner of (``mesh_polymap``).
    lower, upper : (3,) ndarray
        The box of the vertices in the mesh frame (``aamm``).
    rbound : float
        Radius of the sphere about the mesh-frame origin that holds the box.
    """

    vertices: np.ndarray
    frame: np.ndarray
    neighbors: tuple
    lower: np.ndarray
    upper: np.ndarray
    rbound: float
    polygons: tuple = ()
    normals: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    vertex_polygons: tuple = ()

    def support_index(self, local_dir) -> int:
        """Index of the vertex farthest along ``local_dir`` (mesh frame; the first
        of equally far ones)."""
        v = self.vertices
        return int(np.argmax(v[:, 0] * local_dir[0] + v[:, 1] * local_dir[1]
                             + v[:, 2] * local_dir[2]))

    def __reduce__(self):
        return (MeshHull, tuple(getattr(self, f.name) for f in dataclasses.fields(self)))


def mesh_hull(vertices, centre, rotation, where: str = "mesh", file_vertices=None) -> MeshHull:
    """The :class:`MeshHull` of mesh vertices (geom frame) with mesh frame ``(rotation, centre)``.

    Parameters
    ----------
    vertices : (n, 3) array_like
        The mesh's vertices in the geom frame, scaled (MuJoCo's user vertices after
        ``refpos``, ``refquat`` and ``scale``).
    centre : (3,) array_like
        ``mesh_pos``: the mesh's centre of mass in the geom frame.
    rotation : (3, 3) array_like
        ``mesh_quat`` as a matrix: the principal axes in the geom frame.
    where : str
        The element named in errors.
    file_vertices : (n, 3) array_like, optional
        The same vertices as the file gives them (before ``refpos``, ``refquat`` and
        ``scale``): MuJoCo groups the hull's triangles into polygons by their normals
        there.  Default: ``vertices``.

    Raises
    ------
    rbd.InputError
        If the vertices have no volume (fewer than 4, or all on a plane, a line or a point):
        MuJoCo refuses such a mesh ("cannot compute convex hull").
    """
    from scipy.spatial import ConvexHull, QhullError

    v = np.asarray(vertices, dtype=float)
    R = np.asarray(rotation, dtype=float)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4 or not np.all(np.isfinite(v)):
        raise InputError(f"{where}: a convex hull needs at least 4 finite vertices (n, 3)")
    local = (v - np.asarray(centre, dtype=float)) @ R          # Rᵀ (v − c), one row a vertex
    lower, upper = local.min(axis=0), local.max(axis=0)
    rounded = local.astype(np.float32).astype(float)
    try:                                        # on the user's vertices, as MuJoCo
        hull = ConvexHull(v, qhull_options="Qt")
    except QhullError:
        raise InputError(f"{where}: the mesh's vertices are on one plane, line or point; "
                         "MuJoCo cannot compute its convex hull") from None
    keep = np.sort(hull.vertices)
    local_id = np.full(len(rounded), -1)
    local_id[keep] = np.arange(len(keep))
    neighbors = _grouped(local_id[hull.simplices][:, _CORNER_PAIRS].reshape(-1, 2), len(keep), True)
    frame = np.eye(4)
    frame[:3, :3], frame[:3, 3] = R, centre
    half = np.maximum(np.abs(lower), np.abs(upper))
    triangles = local_id[hull.simplices]
    hull_vertices = rounded[keep]
    corners = hull_vertices[triangles]
    turned = np.einsum("ij,ij->i", np.cross(corners[:, 1] - corners[:, 0],
                                            corners[:, 2] - corners[:, 0]),
                       hull.equations[:, :3] @ R) < 0
    triangles[turned] = triangles[turned][:, [1, 0, 2]]      # counter-clockwise, outward
    binned = v if file_vertices is None else np.asarray(file_vertices, dtype=float)
    polygons = _polygons(triangles, binned[keep])
    normals = _normals(hull_vertices, polygons)
    vertex_polygons = _grouped(np.array([(i, k) for k, p in enumerate(polygons) for i in p],
                                        dtype=np.intp).reshape(-1, 2), len(keep))
    arrays = [hull_vertices, frame, lower, upper, normals]
    for a in arrays:
        a.setflags(write=False)
    return MeshHull(arrays[0], frame, neighbors, lower, upper, float(np.sqrt(half @ half)),
                    tuple(np.array(p, dtype=np.intp) for p in polygons), normals,
                    vertex_polygons)


#: The ordered pairs of a triangle's corners, in the order qhull's neighbour lists meet
#: them: (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1).
_CORNER_PAIRS = np.array([[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]])


def _grouped(pairs, n: int, distinct: bool = False) -> tuple:
    """For each ``i < n``, the ``j`` of the pairs ``(i, j)`` in the order they come (an
    array each); with ``distinct``, each ``j`` once, where it first comes."""
    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    if distinct and len(pairs):
        _, first = np.unique(pairs[:, 0] * (pairs[:, 1].max() + 1) + pairs[:, 1],
                             return_index=True)
        pairs = pairs[np.sort(first)]
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    ends = np.cumsum(np.bincount(pairs[:, 0], minlength=n))
    return tuple(np.array(g) for g in np.split(pairs[:, 1], ends[:-1]))


#: ``kAngleTol`` of ``mjCMesh::MakePolygons``: triangles whose normals fall in the same
#: bin of this many radians of azimuth and polar angle are one polygon.
ANGLE_BIN = 0.01


def _normals(vertices, polygons) -> np.ndarray:
    """Outward unit normal of each polygon, from its first three corners (loops run
    counter-clockwise seen from outside)."""
    first = np.array([p[:3] for p in polygons], dtype=np.intp).reshape(-1, 3)
    a, b, c = vertices[first[:, 0]], vertices[first[:, 1]], vertices[first[:, 2]]
    n = np.cross(b - a, c - a)
    return n / np.linalg.norm(n, axis=1)[:, None]


def _bins(p) -> list:
    """``MeshPolygonKey`` of each triangle ``p[k]``: the rounded azimuth and polar angles
    of its normal (in the frame of the user's vertices, where MuJoCo bins them)."""
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n = n / np.linalg.norm(n, axis=1)[:, None] + 0.0
    theta = np.round(np.arctan2(n[:, 1], n[:, 0]) / ANGLE_BIN)
    phi = np.round(np.arccos(np.clip(n[:, 2], -1, 1)) / ANGLE_BIN)
    polar = np.abs(n[:, 2]) > 1.0 - 1e-7                    # along ±z: one bin each
    theta[polar] = 0.0
    phi[polar] = np.where(n[polar, 2] < 0, np.round(np.pi / ANGLE_BIN), 0.0)
    return list(zip(theta.tolist(), phi.tolist(), strict=True))


def _polygons(triangles, user_vertices) -> list:
    """Triangles (outward loops) merged into polygons: one bin of normals, joined by edges;
    each polygon the loop of its boundary edges.

    As ``MeshPolygon`` of MuJoCo's compiler: the triangles of a bin, in qhull's order, add
    their edges to a list from which an edge met in the opposite direction is removed; a
    loop starts at the first edge left and follows the list.  So each polygon starts at
    the vertex MuJoCo's starts at (``mesh_polyvert``), which orders the contacts clipped
    against it (:mod:`rbd.constraints.collision_multi`).  The polygons themselves are in the
    order the bins first appear; MuJoCo lists them in the order of a hash map, which is not
    reproduced (it decides only which of two faces aligned with the other geom's is taken
    first, and the order of ``vertex_polygons``).
    """
    groups: dict = {}
    for t, key in zip(triangles.tolist(), _bins(user_vertices[triangles]), strict=True):
        groups.setdefault(key, []).append(t)
    polygons = []
    for group in groups.values():
        edges: list = []
        for t in group:
            for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
                if (b, a) in edges:
                    edges.remove((b, a))
                else:
                    edges.append((a, b))
        while edges:
            start, a = edges[0]
            loop = [start]
            edges.pop(0)
            while a != start:
                k = next((k for k, e in enumerate(edges) if e[0] == a), None)
                if k is None:
                    break
                loop.append(a)
                a = edges.pop(k)[1]
            if len(loop) >= 3:
                polygons.append(loop)
    return polygons
