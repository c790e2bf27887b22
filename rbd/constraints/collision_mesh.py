r"""Mesh geoms in the collision stage, as MuJoCo collides them: through their convex hull.

A mesh geom carries the convex hull of its vertices in MuJoCo's mesh frame
(:class:`rbd.model.mesh_hull.MeshHull`, made by the MJCF reader); its world pose is
the geom's composed with the mesh frame (:func:`placed`), as ``geom_xpos`` and
``geom_xmat`` of a mesh geom in MuJoCo.  The pairs (``engine_collision_driver.c``'s
table):

* **plane–mesh**: :func:`plane_mesh`, MuJoCo's ``mjc_PlaneConvex`` as MuJoCo 4.0 runs
  it: the hull vertex deepest below the plane gives the first contact; of the hull
  polygons at that vertex, the one whose outward normal is most opposed to the plane's
  gives the others: its corners after the first in the polygon's counter-clockwise order
  (all of them on a polygon of up to four corners, else the quadrilateral from the first
  corner found by :func:`polygon_quad`, MuJoCo 4.0's ``hull4``), each kept when it is not
  above the mesh frame's origin along the plane normal and within the margin.  Each
  contact sits halfway between its vertex and the plane, normal the plane's.  (The source
  of 3.12 read here, ``engine_collision_convex.c``, adds up to two hull neighbours of the
  first vertex at least 0.3 ``rbound`` from it instead; the rule here is the one that
  reproduces MuJoCo 4.0's contacts on every one of 240 random states measured, the
  source's on 211, and on a box mesh's square faces.)  On caps of five to twelve corners
  (prisms on the tilted floor, 288 states turned by up to 0.3 rad) it gives MuJoCo 4.0's
  contacts in MuJoCo's order, to rounding, on all 288; on a cap lying exactly flat the
  deepest corner is a tie, which MuJoCo's hill-climbing vertex search breaks otherwise
  than :meth:`~rbd.model.mesh_hull.MeshHull.support_index` (24 of 96 such states give
  MuJoCo's set).
* **sphere–mesh and ellipsoid–mesh**: MuJoCo's ``mjc_Convex`` (GJK and EPA,
  :func:`rbd.constraints.collision_convex.convex`) with the hull's support function
  (the vertex farthest along a direction): one contact.
* **box or mesh with a mesh**: without margin, GJK/EPA and MuJoCo's one-pass
  multi-contact (:mod:`rbd.constraints.collision_multi`): faces lying flat on each other,
  or an edge in a face, are clipped against each other for up to four contacts.  With a
  margin MuJoCo 4.0 clips them too, on the bare shapes grown by half the margin each
  (:mod:`rbd.constraints.collision_multiccd`; measured: box–mesh and mesh–mesh with a cube
  and a hexagonal prism, 185 of 192 random or nearly flat states with MuJoCo's contact
  set).
* **capsule or cylinder with a mesh**: MuJoCo 4.0's multi-CCD
  (:mod:`rbd.constraints.collision_multiccd`): a capsule's side or a cylinder's side line
  lying in a hull face is clipped to it, a cylinder's cap flat on a face is clipped as a
  16-gon.  Measured on random and nearly aligned states, with and without margin:
  capsule 188 of 192 states with MuJoCo's contact set, cylinder 182 of 192; a cylinder's
  cap clipped to more than four points keeps MuJoCo's four, or where MuJoCo's choice
  hangs on a tie its rounding turns (19 of the 192 cylinder states) the four of rbd's own
  search (MuJoCo's in 16 of the 19, another four of the same area in 3).  With MuJoCo's
  ``multiccd`` disable flag (``<option><flag multiccd="disable"/>``) MuJoCo asks for one
  contact, and every mesh pair gives it: GJK/EPA's, MuJoCo's to rounding (capsule, box,
  mesh) or to EPA's tolerance (cylinder) on every state measured.

These routines have compiled twins on the compiled collision stage
(``rbd/_kernels/collision_mesh.pyx``; the hull's support in ``collision_gjk.pyx``, MuJoCo's
multi-contact of a box or a mesh on a mesh without margin in ``collision_multi.pyx``, MuJoCo
4.0's multi-CCD of a capsule or a cylinder on a mesh, or of a box or a mesh on a mesh with
margin, in ``collision_multiccd.pyx``), with ``multiccd`` on or disabled, the same contacts
as here bit for bit (``tests/test_collision_multi_kernel.py``,
``tests/test_collision_mesh_kernel.py``, ``tests/test_collision_multiccd_kernel.py``).
Agreement with MuJoCo 4.0 (``tests/test_collision_mesh.py``): plane–mesh to rounding (the same
single-precision vertices in the same frame), sphere–mesh to rounding (GJK on the
centre ends on a hull vertex, edge or face exactly), ellipsoid–mesh to EPA's
tolerance (:mod:`.collision_convex`).
"""

from __future__ import annotations

import numpy as np

from . import collision_convex as _convex
from .collision_gjk import dot3
from .collision_primitive import PairContacts, pack

#: Plane–mesh contacts come from at most this many corners of one hull polygon (MuJoCo
#: 4.0's ``hull4``, :func:`polygon_quad`).
MAX_PLANE_MESH = 4

def placed(geom, pos, mat) -> tuple:
    """``(pos, mat, shape, rbound)`` of a geom for the pair routines: a mesh geom's world
    pose composed with its mesh frame and its hull; another geom's pose and size."""
    hull = getattr(geom, "hull", None)
    if geom.kind != "mesh" or hull is None:
        size = np.asarray(geom.size, float)
        return pos, mat, size, _convex.bounding_radius(geom.kind, size)
    R, c = hull.frame[:3, :3], hull.frame[:3, 3]
    return pos + mat @ c, mat @ R, hull, hull.rbound


def hulled(geom) -> bool:
    """A mesh geom with its hull (boxed by the broad phase and collided through the hull)."""
    return geom.kind == "mesh" and getattr(geom, "hull", None) is not None


def routed(geom1, geom2) -> bool:
    """Whether the pair is collided here: a kind pair of :data:`PAIRS` (geom 1 first in kind
    order) whose meshes carry their hulls."""
    return (geom1.kind, geom2.kind) in PAIRS and has_hulls(geom1, geom2)


def has_hulls(geom1, geom2) -> bool:
    """Whether every mesh of the pair carries its hull (a mesh geom made without one, as a
    URDF's, has no routine)."""
    return all(g.kind != "mesh" or getattr(g, "hull", None) is not None for g in (geom1, geom2))


def plane_mesh(pos1, mat1, pos2, mat2, hull, margin) -> PairContacts:
    """Contacts of a plane (geom 1) and a mesh's hull (geom 2): MuJoCo's ``mjc_PlaneConvex``.

    Parameters
    ----------
    pos1, mat1 : array_like
        The plane's world pose (normal ``mat1[:, 2]``).
    pos2, mat2 : array_like
        The mesh frame's world pose (:func:`placed`).
    hull : rbd.model.mesh_hull.MeshHull
    margin : float
        The pair's ``margin + gap``.
    """
    normal = mat1[:, 2].copy()
    local = np.array([-(mat2[0, k] * normal[0] + mat2[1, k] * normal[1]
                        + mat2[2, k] * normal[2]) for k in range(3)])      # Rᵀ (−n)
    best = hull.support_index(local)
    first = _plane_vertex(hull.vertices[best], pos1, normal, pos2, mat2)
    if first[0] > margin:
        return pack([])
    contacts = [first]
    faces = hull.vertex_polygons[best]
    if len(faces):                                      # the face turned most to the plane
        face = faces[int(np.argmax(hull.normals[faces] @ local))]
        loop = hull.polygons[face]
        for j in polygon_quad(hull.vertices, loop, list(loop).index(best))[1:]:
            point = mat2 @ hull.vertices[loop[j]] + pos2
            if dot3(normal, point - pos2) > 0:          # above the mesh frame's origin
                continue
            extra = _plane_vertex(hull.vertices[loop[j]], pos1, normal, pos2, mat2)
            if extra[0] < margin:
                contacts.append(extra)
    return pack([(dist, point, normal, np.zeros(3)) for dist, point in contacts])


def _area4(a, b, c, d) -> float:
    """Area of the quadrilateral (a, b, c, d), corners in order: half the norm of the cross
    product of its diagonals."""
    g = np.cross(a - c, b - d)
    return 0.5 * np.sqrt(dot3(g, g))


def polygon_quad(vertices, loop, a: int) -> list:
    """Positions in ``loop`` of at most four corners of a hull polygon, the first ``a``
    (MuJoCo 4.0's ``hull4``): all of a polygon of up to four corners, from ``a`` on; of a
    larger one, the quadrilateral from ``a`` whose fourth, third and second corners advance
    around the loop while its area grows."""
    n = len(loop)
    b, c, d = (a + 1) % n, (a + 2) % n, (a + 3) % n
    if n <= MAX_PLANE_MESH:
        return [(a + k) % n for k in range(n)]

    def area(i, j, k, m):
        return _area4(*(vertices[loop[x]] for x in (i, j, k, m)))

    best = area(a, b, c, d)
    while area(a, b, c, (d + 1) % n) > best:
        d = (d + 1) % n
        best = area(a, b, c, d)
        while area(a, b, (c + 1) % n, d) > best:
            c = (c + 1) % n
            best = area(a, b, c, d)
        while area(a, (b + 1) % n, c, d) > best:
            b = (b + 1) % n
            best = area(a, b, c, d)
    return [a, b, c, d]


def _plane_vertex(vertex, pos1, normal, pos2, mat2) -> tuple:
    """``(dist, pos)`` of one mesh vertex against the plane (``addplanemesh``): its signed
    height and the point halfway between it and the plane."""
    point = mat2 @ vertex + pos2
    dist = dot3(normal, point - pos1)
    return dist, point - 0.5 * dist * normal


def mesh_pair(kind1, kind2, pos1, mat1, shape1, rbound1, pos2, mat2, shape2, rbound2,
              margin, multiccd: bool = True) -> PairContacts:
    """Contacts of a pair with a mesh, geom 1 first in MuJoCo's kind order (module notes);
    with ``multiccd`` False (MuJoCo's ``multiccd`` disable flag), of any convex pair.

    ``shape`` is a size array, or the :class:`~rbd.model.mesh_hull.MeshHull` of a mesh;
    poses, shapes and radii as :func:`placed` gives them.  Without multi-CCD MuJoCo asks
    GJK/EPA for one contact (``maxContacts`` 1, no turned geoms); plane–mesh is unchanged.
    """
    if kind1 == "plane":
        return plane_mesh(pos1, mat1, pos2, mat2, shape2, margin)
    return _convex.convex(kind1, kind2, pos1, mat1, shape1, pos2, mat2, shape2, margin,
                          rbound1, rbound2, multiccd=multiccd)


#: Kind pairs with a mesh that have a routine (MuJoCo's collision table; no height fields).
PAIRS = {("plane", "mesh"), ("sphere", "mesh"), ("capsule", "mesh"), ("ellipsoid", "mesh"),
         ("cylinder", "mesh"), ("box", "mesh"), ("mesh", "mesh")}
