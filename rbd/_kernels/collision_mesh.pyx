# cython: language_level=3
"""Mesh geoms in the collision stage, through their convex hull, compiled.

The compiled twin of ``rbd/constraints/collision_mesh.py``: the hull of a mesh geom
(:class:`Hull`, the arrays of ``rbd.model.mesh_hull.MeshHull`` in C), its mesh frame
(``placed``, ``collision_mesh.pxd``), plane–mesh (:c:func:`c_plane_mesh`, MuJoCo 4.0's
``mjc_PlaneConvex``) and the pairs GJK/EPA gives one contact or none
(:c:func:`c_mesh_pair`: sphere, capsule, ellipsoid, cylinder, box or mesh with a mesh; a
box or a mesh on a mesh without margin through MuJoCo's one-pass multi-contact,
``collision_multi.pyx``; a capsule or a cylinder on a mesh, or a box or a mesh on a mesh
with margin, through MuJoCo 4.0's multi-CCD, ``collision_multiccd.pyx``; without multi-CCD
any convex pair, one contact) on ``collision_convex.pyx`` with the hull's support function
(``collision_gjk.pyx``).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport sqrt

from rbd._kernels._spatial cimport dot3
from rbd._kernels.collision_convex cimport c_convex
from rbd._kernels.collision_gjk cimport (CCD_BOX, CCD_CAPSULE, CCD_CYLINDER, CCD_ELLIPSOID,
                                         CCD_MESH, CCD_SPHERE, ConvexGeom, farthest_vertex,
                                         geom_init)
from rbd._kernels.collision_primitive cimport add_contact, as_doubles, pack

cnp.import_array()

#: Plane–mesh contacts come from at most this many corners of one polygon (the
#: reference's MAX_PLANE_MESH)
cdef Py_ssize_t MAX_PLANE_MESH = 4
#: a zero tangent: make_frame picks one
cdef double ZERO3[3]
#: the plane's kind code (rbd.constraints.collision.KINDS)
cdef int PLANE = 0
KIND_CODES = {"plane": PLANE, "sphere": CCD_SPHERE, "capsule": CCD_CAPSULE,
              "ellipsoid": CCD_ELLIPSOID, "cylinder": CCD_CYLINDER, "box": CCD_BOX,
              "mesh": CCD_MESH}


cdef inline cnp.ndarray _flat(values, dtype):
    # a contiguous array of the values, at least one entry long (a valid data pointer)
    out = np.ascontiguousarray(values, dtype=dtype).reshape(-1)
    return out if len(out) else np.zeros(1, dtype=dtype)


cdef class Hull:
    """A mesh geom's convex hull (``rbd.model.mesh_hull.MeshHull``) as the C record
    ``HullC`` the compiled routines read; the arrays it points into live with it."""

    def __init__(self, hull):
        sizes = [len(p) for p in hull.polygons]
        # a hull made without polygons has none at any vertex
        counts = [len(f) for f in hull.vertex_polygons] or [0] * len(hull.vertices)
        arrays = (_flat(hull.vertices, float), _flat(hull.normals, float),
                  _flat(np.cumsum([0, *sizes]), np.intp),
                  _flat(np.concatenate([np.zeros(0), *hull.polygons]), np.intp),
                  _flat(np.cumsum([0, *counts]), np.intp),
                  _flat(np.concatenate([np.zeros(0), *hull.vertex_polygons]), np.intp))
        self.arrays = arrays
        self.c.nvert, self.c.npoly = len(hull.vertices), len(sizes)
        self.c.vert = <const double*>cnp.PyArray_DATA(arrays[0])
        self.c.normal = <const double*>cnp.PyArray_DATA(arrays[1])
        self.c.poly_start = <const Py_ssize_t*>cnp.PyArray_DATA(arrays[2])
        self.c.poly_vert = <const Py_ssize_t*>cnp.PyArray_DATA(arrays[3])
        self.c.vpoly_start = <const Py_ssize_t*>cnp.PyArray_DATA(arrays[4])
        self.c.vpoly = <const Py_ssize_t*>cnp.PyArray_DATA(arrays[5])
        frame = np.asarray(hull.frame, dtype=float)
        lower, upper = np.asarray(hull.lower, float), np.asarray(hull.upper, float)
        for k in range(3):
            self.c.c[k] = frame[k, 3]
            self.c.center[k] = 0.5 * (lower[k] + upper[k])
            self.c.half[k] = 0.5 * (upper[k] - lower[k])
            for j in range(3):
                self.c.R[3 * k + j] = frame[k, j]
        self.c.rbound = hull.rbound


# ----------------------------------------------------------------------------- plane–mesh

cdef inline double _plane_vertex(const double* vertex, const double* pos1,
                                 const double* normal, const double* pos2, const double* mat2,
                                 double* point) noexcept nogil:
    # one hull vertex against the plane (addplanemesh): its signed height returned, the
    # point halfway between it and the plane into point
    cdef double rel[3]
    cdef double dist
    cdef int k
    mat3_vec(mat2, vertex, point)
    for k in range(3):
        point[k] = point[k] + pos2[k]
        rel[k] = point[k] - pos1[k]
    dist = dot3(normal, rel)
    for k in range(3):
        point[k] = point[k] - 0.5 * dist * normal[k]
    return dist


cdef inline Py_ssize_t _facing(const HullC* hull, Py_ssize_t vertex,
                               const double* d) noexcept nogil:
    # of the polygons at the vertex, the first whose normal is farthest along d; -1: none
    cdef Py_ssize_t a, f, best = -1
    cdef double top = 0.0, dot
    for a in range(hull.vpoly_start[vertex], hull.vpoly_start[vertex + 1]):
        f = hull.vpoly[a]
        dot = dot3(hull.normal + 3 * f, d)
        if best < 0 or dot > top:
            best, top = f, dot
    return best


cdef inline double _area4(const HullC* hull, Py_ssize_t start, Py_ssize_t n, Py_ssize_t a,
                          Py_ssize_t b, Py_ssize_t c, Py_ssize_t d) noexcept nogil:
    # area of the quadrilateral of polygon corners a, b, c, d (positions from start):
    # half the norm of the cross product of its diagonals
    cdef const double* va = hull.vert + 3 * hull.poly_vert[start + a]
    cdef const double* vb = hull.vert + 3 * hull.poly_vert[start + b]
    cdef const double* vc = hull.vert + 3 * hull.poly_vert[start + c]
    cdef const double* vd = hull.vert + 3 * hull.poly_vert[start + d]
    cdef double e[3]
    cdef double f[3]
    cdef double g[3]
    cdef int i
    for i in range(3):
        e[i] = va[i] - vc[i]
        f[i] = vb[i] - vd[i]
    g[0] = e[1] * f[2] - e[2] * f[1]
    g[1] = e[2] * f[0] - e[0] * f[2]
    g[2] = e[0] * f[1] - e[1] * f[0]
    return 0.5 * sqrt(dot3(g, g))


cdef Py_ssize_t polygon_quad(const HullC* hull, Py_ssize_t start, Py_ssize_t n, Py_ssize_t a,
                             Py_ssize_t* quad) noexcept nogil:
    """The reference's ``polygon_quad`` (MuJoCo 4.0's ``hull4``): positions of at most four
    corners of the polygon of n corners at ``start``, the first ``a``; their number."""
    cdef Py_ssize_t b = (a + 1) % n, c = (a + 2) % n, d = (a + 3) % n, k
    cdef double best
    if n <= MAX_PLANE_MESH:
        for k in range(n):
            quad[k] = (a + k) % n
        return n
    best = _area4(hull, start, n, a, b, c, d)
    while _area4(hull, start, n, a, b, c, (d + 1) % n) > best:
        d = (d + 1) % n
        best = _area4(hull, start, n, a, b, c, d)
        while _area4(hull, start, n, a, b, (c + 1) % n, d) > best:
            c = (c + 1) % n
            best = _area4(hull, start, n, a, b, c, d)
        while _area4(hull, start, n, a, (b + 1) % n, c, d) > best:
            b = (b + 1) % n
            best = _area4(hull, start, n, a, b, c, d)
    quad[0], quad[1], quad[2], quad[3] = a, b, c, d
    return 4


cdef int c_plane_mesh(const double* pos1, const double* mat1, const double* pos2,
                      const double* mat2, const HullC* hull, double margin,
                      PairOut* out) noexcept nogil:
    """plane_mesh: the deepest hull vertex, then, of the polygon at it turned most to the
    plane, the other corners of ``polygon_quad`` not above the mesh frame's origin and
    within the margin; the number of contacts written."""
    cdef double normal[3]
    cdef double local[3]
    cdef double point[3]
    cdef double dist
    cdef Py_ssize_t quad[4]
    cdef Py_ssize_t best, face, start, n, k, m, j, nquad
    cdef int i
    for i in range(3):
        normal[i] = mat1[3 * i + 2]
    for i in range(3):
        # Rᵀ (−n)
        local[i] = -(mat2[i] * normal[0] + mat2[3 + i] * normal[1] + mat2[6 + i] * normal[2])
    best = farthest_vertex(hull.vert, hull.nvert, local)     # MeshHull.support_index
    dist = _plane_vertex(hull.vert + 3 * best, pos1, normal, pos2, mat2, point)
    if dist > margin:
        return 0
    add_contact(out, dist, point, normal, ZERO3)
    face = _facing(hull, best, local)
    if face < 0:
        return out.n
    start, n = hull.poly_start[face], hull.poly_start[face + 1] - hull.poly_start[face]
    k = 0
    while hull.poly_vert[start + k] != best:
        k += 1
    nquad = polygon_quad(hull, start, n, k, quad)
    for m in range(1, nquad):
        j = hull.poly_vert[start + quad[m]]
        mat3_vec(mat2, hull.vert + 3 * j, point)
        if dot3(normal, point) > 0:
            # above the mesh frame's origin (point is relative to it here)
            continue
        dist = _plane_vertex(hull.vert + 3 * j, pos1, normal, pos2, mat2, point)
        if dist < margin:
            add_contact(out, dist, point, normal, ZERO3)
    return out.n


def plane_mesh(pos1, mat1, pos2, mat2, hull, double margin):
    """:c:func:`c_plane_mesh` on array_like poses and a ``MeshHull`` (the reference's
    ``plane_mesh``): ``(dist, pos, frame)`` arrays."""
    cdef const double[::1] p1 = as_doubles(pos1).reshape(3)
    cdef const double[::1] m1 = as_doubles(mat1).reshape(9)
    cdef const double[::1] p2 = as_doubles(pos2).reshape(3)
    cdef const double[::1] m2 = as_doubles(mat2).reshape(9)
    cdef Hull h = Hull(hull)
    cdef PairOut out
    out.n = 0
    c_plane_mesh(&p1[0], &m1[0], &p2[0], &m2[0], &h.c, margin, &out)
    return pack(&out)


# ----------------------------------------------------------------------------- GJK/EPA pairs

cdef int c_mesh_pair(int kind1, int kind2, const double* pos1, const double* mat1,
                     const double* size1, const HullC* hull1, double rbound1,
                     const double* pos2, const double* mat2, const double* size2,
                     const HullC* hull2, double rbound2, double margin, bint multiccd,
                     PairOut* out) noexcept nogil:
    """mesh_pair, geom 1 first in kind order (a hull NULL for a primitive; without
    ``multiccd``, any convex pair): plane–mesh; a box or mesh on a mesh without margin
    under multi-CCD, GJK/EPA and MuJoCo's one-pass multi-contact (up to four contacts);
    a capsule, cylinder, box or mesh on a mesh otherwise under multi-CCD, MuJoCo 4.0's
    multi-CCD (``collision_multiccd.pyx``); else GJK/EPA's one contact."""
    cdef ConvexGeom g1, g2
    if kind1 == PLANE:
        return c_plane_mesh(pos1, mat1, pos2, mat2, hull2, margin, out)
    geom_init(&g1, kind1, pos1, mat1, size1, margin)
    geom_init(&g2, kind2, pos2, mat2, size2, margin)
    if hull1 != NULL:
        g1.vert, g1.nvert, g1.hull = hull1.vert, hull1.nvert, hull1
    if hull2 != NULL:
        g2.vert, g2.nvert, g2.hull = hull2.vert, hull2.nvert, hull2
    # EPA's face clipped, MuJoCo 4.0's multi-CCD or one contact, as c_convex decides
    return c_convex(&g1, &g2, margin, rbound1, rbound2, multiccd, out)


def mesh_pair(str kind1, str kind2, pos1, mat1, shape1, double rbound1, pos2, mat2, shape2,
              double rbound2, double margin, bint multiccd=True):
    """:c:func:`c_mesh_pair` on array_like poses, a size array or a ``MeshHull`` per geom
    (the reference's ``mesh_pair``): ``(dist, pos, frame)`` arrays."""
    cdef const double[::1] p1 = as_doubles(pos1).reshape(3)
    cdef const double[::1] m1 = as_doubles(mat1).reshape(9)
    cdef const double[::1] p2 = as_doubles(pos2).reshape(3)
    cdef const double[::1] m2 = as_doubles(mat2).reshape(9)
    cdef Hull h1 = Hull(shape1) if kind1 == "mesh" else None
    cdef Hull h2 = Hull(shape2) if kind2 == "mesh" else None
    cdef const double[::1] s1 = np.zeros(3) if h1 is not None else np.resize(
        as_doubles(shape1), 3)
    cdef const double[::1] s2 = np.zeros(3) if h2 is not None else np.resize(
        as_doubles(shape2), 3)
    cdef PairOut out
    out.n = 0
    c_mesh_pair(KIND_CODES[kind1], KIND_CODES[kind2], &p1[0], &m1[0], &s1[0],
                NULL if h1 is None else &h1.c, rbound1, &p2[0], &m2[0], &s2[0],
                NULL if h2 is None else &h2.c, rbound2, margin, multiccd, &out)
    return pack(&out)
