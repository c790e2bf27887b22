# cython: language_level=3
# Several contacts of two polytopes from one EPA run (collision_multi.pyx), for the convex
# driver.
from libc.math cimport sqrt

from rbd._kernels._spatial cimport dot3
from rbd._kernels.collision_gjk cimport ConvexGeom, Vertex

cdef enum:
    # polytope pairs without margin ask EPA's face for up to this many contacts (MuJoCo's
    # maxContacts); more clipped points are reduced to a quadrilateral
    MAX_CONTACTS = 4


cdef int multicontact(const Vertex* face_verts, const double* x1, const double* x2,
                      ConvexGeom* g1, ConvexGeom* g2, double* dist, double* w1,
                      double* w2) noexcept nogil


cdef struct Normals:         # the faces holding a feature: world normals and face indices
    int n
    double* normal            # n × 3
    Py_ssize_t* index


cdef struct Edges:           # the edges of a feature: unit directions and far ends
    int n
    double* direction         # n × 3
    double* end               # n × 3


# the pieces collision_multiccd.pyx reuses
cdef int simplex_dim(Py_ssize_t* indices, double* points) noexcept nogil
cdef void face_normals(const ConvexGeom* g, int dim, const Py_ssize_t* indices,
                       const double* direction, Normals* out) noexcept nogil
cdef bint aligned_faces(const Normals* normals1, const Normals* normals2, int* i,
                        int* j) noexcept nogil
cdef bint aligned_face_edge(const Edges* edges, const Normals* normals, int* edge,
                            int* face) noexcept nogil
cdef void feature_edges(const ConvexGeom* g, int dim, const double* points, Py_ssize_t index,
                        Edges* out) noexcept nogil
cdef int face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil
cdef int clipped_face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil
cdef int clipping_face(const ConvexGeom* g, Py_ssize_t index, bint after_box,
                       double* out) noexcept nogil
cdef void polygon_quad(const double* polygon, int n, int* best) noexcept nogil
cdef double side_plane(const double* v1, const double* v2, const double* n,
                       double* normal) noexcept nogil
cdef int clip_to_face(const double* clipping, int nclip, const double* polygon, int npoly,
                      const double* n, const double* side, double margin,
                      double** result) noexcept nogil


# small pieces of collision_multi.pyx

cdef inline void _rotate(const double* mat, const double* local, double* out) noexcept nogil:
    # mat @ local in MuJoCo's order of operations (globalcoord without a position)
    cdef int k
    for k in range(3):
        out[k] = mat[3 * k] * local[0] + mat[3 * k + 1] * local[1] + mat[3 * k + 2] * local[2]


cdef inline void _place(const ConvexGeom* g, const double* local, double* out) noexcept nogil:
    # world point of a point in the geom's frame (globalcoord)
    cdef int k
    _rotate(g.mat, local, out)
    for k in range(3):
        out[k] = out[k] + g.pos[k]


cdef inline void _unit(const double* v, double* out) noexcept nogil:
    # v normalized (mju_normalize3: a null vector becomes x)
    cdef double norm = sqrt(dot3(v, v))
    cdef int k
    if norm < 1e-15:
        # mjMINVAL
        out[0], out[1], out[2] = 1.0, 0.0, 0.0
        return
    for k in range(3):
        out[k] = v[k] * (1.0 / norm)


cdef inline void _unit_from(const double* a, const double* b, double* out) noexcept nogil:
    # (b - a) normalized
    cdef double d[3]
    cdef int k
    for k in range(3):
        d[k] = b[k] - a[k]
    _unit(d, out)
