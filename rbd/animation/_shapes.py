"""Surfaces of a model's geoms as triangle meshes, and the floor under it.

Every geom is turned once into a triangle mesh in its body's frame
(:func:`body_surface`): a primitive is tessellated (a sphere, ellipsoid,
capsule or cylinder as a surface of revolution about its ``z`` axis, a box by
its 12 triangles), a mesh is read with :func:`rbd.model.geoms.load_mesh` and, when it
has more triangles than the drawing can carry, simplified by vertex clustering
(:func:`simplify`).  The frames then only move these vertices with their body.

The floor is a checkerboard patch of a plane (a model's plane geom, or the
plane ``z = 0`` under a floating base) centred under the camera's target and
snapped to its grid, so it looks fixed while the camera follows the robot.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..model.geoms import load_mesh

#: Meridians of a tessellated round primitive (half as many rings), in a page and in a movie.
MERIDIANS, MOVIE_MERIDIANS = 16, 12
#: Checker cells along each side of the floor patch.
FLOOR_CELLS = 12
#: The two checker colours of a default floor (RGBA).
FLOOR_COLOURS = ((0.82, 0.84, 0.86, 1.0), (0.70, 0.73, 0.76, 1.0))

_BOX_CORNERS = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5)
                         for z in (-0.5, 0.5)])
# The 12 triangles of a box over the corners above (two per face, outward normals).
BOX_TRIANGLES = np.array([
    [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
    [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])


def box_corners(sides: np.ndarray) -> np.ndarray:
    """The 8 corners of an axis-aligned box with these sides, centred at the origin."""
    return _BOX_CORNERS * np.asarray(sides, dtype=float)


def revolution(profile: np.ndarray, meridians: int = MERIDIANS) -> tuple[np.ndarray, np.ndarray]:
    """The surface swept by turning ``profile`` (rows ``(r, z)``, top to bottom) about ``z``.

    The first and last rows should have ``r = 0`` (the poles) for a closed surface.
    """
    angles = np.linspace(0.0, 2 * np.pi, meridians, endpoint=False)
    r, z = profile[:, :1], profile[:, 1:]
    vertices = np.stack([r * np.cos(angles), r * np.sin(angles),
                         np.broadcast_to(z, r.shape[:1] + angles.shape)], axis=-1)
    n, m = len(profile), meridians
    triangles = []
    for i in range(n - 1):
        for j in range(m):
            a, b = i * m + j, i * m + (j + 1) % m
            triangles += [[a, a + m, b + m], [a, b + m, b]]
    tri = np.array(triangles)
    flat = vertices.reshape(-1, 3)
    # drop the triangles squeezed to nothing at the poles
    area = np.linalg.norm(np.cross(flat[tri[:, 1]] - flat[tri[:, 0]],
                                   flat[tri[:, 2]] - flat[tri[:, 0]]), axis=1)
    return flat, tri[area > 0]


def primitive(kind: str, size: np.ndarray, meridians: int = MERIDIANS):
    """Vertices and triangles of a primitive geom in its own frame (MuJoCo's ``size``)."""
    rings = meridians // 2
    theta = np.linspace(0.0, np.pi, rings + 1)
    if kind in ("sphere", "ellipsoid"):
        radii = np.full(3, size[0]) if kind == "sphere" else np.asarray(size, dtype=float)
        v, tri = revolution(np.column_stack([np.sin(theta), np.cos(theta)]), meridians)
        return v * radii, tri
    r, half = float(size[0]), float(size[1])
    if kind == "capsule":
        top, bottom = theta[: rings // 2 + 1], theta[rings // 2:]
        profile = np.vstack([np.column_stack([r * np.sin(top), half + r * np.cos(top)]),
                             np.column_stack([r * np.sin(bottom), -half + r * np.cos(bottom)])])
        return revolution(profile, meridians)
    if kind == "cylinder":
        return revolution(np.array([[0.0, half], [r, half], [r, -half], [0.0, -half]]),
                          meridians)
    if kind == "box":
        return box_corners(2 * np.asarray(size, dtype=float)), BOX_TRIANGLES
    raise ValueError(f"no surface for a {kind!r} geom")


def simplify(vertices: np.ndarray, triangles: np.ndarray, budget: int):
    """At most ``budget`` triangles of a mesh, by vertex clustering.

    The vertices falling in one cell of a cubic grid are merged into their
    mean; triangles whose corners merge are dropped.  The grid is coarsened
    until the budget holds.
    """
    if len(triangles) <= budget:
        return vertices, triangles
    extent = float(np.max(np.ptp(vertices, axis=0))) or 1.0
    cell = extent / math.sqrt(budget)
    while True:
        keys = np.floor(vertices / cell).astype(np.int64)
        _, cluster, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
        cluster = cluster.ravel()
        merged = np.zeros((len(counts), 3))
        np.add.at(merged, cluster, vertices)
        merged /= counts[:, None]
        tri = _kept(cluster, triangles)
        if len(tri) <= budget:
            used, inverse = np.unique(tri, return_inverse=True)
            return merged[used], inverse.reshape(tri.shape)
        cell *= 1.25


def _kept(cluster: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """The clustered triangles that keep three corners, each once (their first orientation)."""
    tri = cluster[triangles]
    tri = tri[(tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])]
    _, first = np.unique(np.sort(tri, axis=1), axis=0, return_index=True)
    return tri[np.sort(first)]


def geom_surface(geom, budget: int, meridians: int = MERIDIANS):
    """``(vertices, triangles)`` of one geom in its own frame; None if it cannot be read."""
    if geom.kind != "mesh":
        return primitive(geom.kind, geom.size, meridians)
    try:
        vertices, triangles = load_mesh(geom)
    except Exception as exc:  # a missing file, mesh reader or library: drawn without it
        warnings.warn(f"animate: geom {geom.name!r} is not drawn: {exc}", RuntimeWarning,
                      stacklevel=4)
        return None
    return simplify(np.asarray(vertices, float), np.asarray(triangles, int), budget)


def select_geoms(model, geometry: str) -> list:
    """The model's geoms drawn as ``geometry`` ("visual" or "collision"), planes apart."""
    key = "visual" if geometry == "visual" else "collision"
    return [g for g in model.geoms if getattr(g, key) and g.rgba[3] > 0]


def body_surfaces(model, geoms, budget: int) -> list[tuple]:
    """``(body index or -1, vertices in body frame, triangles, rgba)`` of each drawn geom.

    ``budget`` triangles are shared evenly among the geoms (at least 200 each);
    a small budget (a movie's) also draws round primitives with fewer sides.
    """
    solids = [g for g in geoms if g.kind != "plane"]
    meridians = MERIDIANS if budget >= 5000 else MOVIE_MERIDIANS
    out = []
    for g in solids:
        surface = geom_surface(g, max(budget // max(len(solids), 1), 200), meridians)
        if surface is None:
            continue
        v, tri = surface
        v = v @ g.pose[:3, :3].T + g.pose[:3, 3]
        body = -1 if g.body is None else model.body_index(g.body)
        out.append((body, v, tri, np.asarray(g.rgba, dtype=float)))
    return out


def nice_step(length: float) -> float:
    """A round cell size (1, 2 or 5 times a power of ten) near ``length``."""
    power = 10.0 ** math.floor(math.log10(length))
    return power * min((1, 2, 5, 10), key=lambda s: abs(s * power - length))


def floor_grid(half: float) -> tuple[float, int]:
    """Cell size and cells per side of a floor patch covering ``2 half`` (fixed per motion)."""
    cell = nice_step(2.0 * half / FLOOR_CELLS)
    return cell, int(math.ceil(2.0 * half / cell)) + 1


def floor_patch(origin: np.ndarray, axes: np.ndarray, target: np.ndarray, half: float,
                colours=FLOOR_COLOURS):
    """Checker cells of the plane through ``origin`` (columns of ``axes``: u, v, normal).

    The patch covers ``target ± half`` projected on the plane, on a grid of
    round cells (:func:`floor_grid`) fixed in the plane, starting on an even
    cell so that the colours of its triangles are the same for any target.
    Returns vertices ``(4 n, 3)``, triangles ``(2 n, 3)`` and a colour per
    triangle ``(2 n, 4)``.
    """
    cell, n = floor_grid(half)
    n += 1                         # starting on an even cell: the same checker in every frame
    u0, v0 = (np.asarray(target) - origin) @ axes[:, :2]
    i0, j0 = (2 * math.floor((w - half) / (2 * cell)) for w in (u0, v0))
    i, j = np.meshgrid(np.arange(i0, i0 + n), np.arange(j0, j0 + n), indexing="ij")
    i, j = i.ravel(), j.ravel()
    corners = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])
    uv = (np.stack([i, j], axis=1)[:, None, :] + corners) * cell          # (cells, 4, 2)
    vertices = (origin + uv @ axes[:, :2].T).reshape(-1, 3)
    base = 4 * np.arange(len(i))[:, None]
    triangles = np.stack([base + [0, 1, 2], base + [0, 2, 3]], axis=1).reshape(-1, 3)
    face = np.asarray(colours, dtype=float)[np.repeat((i + j) % 2, 2)]
    return vertices, triangles, face
