# cython: language_level=3
# GJK on support functions (collision_gjk.pyx), for the EPA and the convex driver.
from libc.float cimport DBL_MAX

from rbd._kernels._spatial cimport dot3

# Kinds a support function knows: the geom kind codes of rbd.constraints.collision.KINDS
# (MuJoCo's mjtGeom order) and the cores of a sphere and a capsule.  A mesh's support reads
# ConvexGeom.vert (its hull's vertices, nvert × 3, in the mesh frame).
cdef enum:
    CCD_SPHERE = 2
    CCD_CAPSULE = 3
    CCD_ELLIPSOID = 4
    CCD_CYLINDER = 5
    CCD_BOX = 6
    CCD_MESH = 7
    CCD_POINT = 8             # a sphere's centre
    CCD_LINE = 9              # a capsule's segment

cdef enum:
    ITERATIONS = 35           # MuJoCo's ccd_iterations default (mjOption)


cdef struct ConvexGeom:      # one side of the pair (MuJoCo's mjCCDObj)
    int kind                  # CCD_* code
    double pos[3]             # world position
    double mat[9]             # world rotation, row-major (columns: the geom axes)
    double size[3]
    double margin             # the pair margin (the support grows by half of it)
    const double* vert        # a mesh's hull vertices (NULL for the primitives)
    Py_ssize_t nvert
    Py_ssize_t vertindex      # a mesh's last support vertex (-1: none yet; the search
                              # keeps it on a tie, as the reference's ConvexGeom.vertindex)


cdef struct Vertex:          # a vertex of the Minkowski difference and its two points
    double w[3]               # w1 - w2
    double w1[3]
    double w2[3]


cdef struct GJKStatus:       # GJK's state and result (MuJoCo's mjCCDStatus)
    double x1[3]              # witness points
    double x2[3]
    double dist_cutoff
    double dist
    int separated
    int nsimplex
    Vertex simplex[4]
    int iterations


cdef void vertex(ConvexGeom* g1, ConvexGeom* g2, const double* d,
                 Vertex* out) noexcept nogil
cdef double det3(const double* a, const double* b, const double* c) noexcept nogil
cdef bint project_origin_plane(const double* s1, const double* s2, const double* s3,
                               double* out) noexcept nogil
cdef void gjk(GJKStatus* status, ConvexGeom* g1, ConvexGeom* g2) noexcept nogil
cdef void lincomb(const double* coef, const double* const* vectors, int n,
                  double* out) noexcept nogil


cdef inline void geom_init(ConvexGeom* g, int kind, const double* pos, const double* mat,
                           const double* size, double margin) noexcept nogil:
    # ConvexGeom(kind, pos, mat, size, margin)
    cdef int k
    g.kind, g.margin, g.vert, g.nvert, g.vertindex = kind, margin, NULL, 0, -1
    for k in range(3):
        g.pos[k], g.size[k] = pos[k], size[k]
    for k in range(9):
        g.mat[k] = mat[k]


cdef inline void status_init(GJKStatus* status, ConvexGeom* g1, ConvexGeom* g2,
                             double dist_cutoff) noexcept nogil:
    # GJKStatus(g1, g2, dist_cutoff): start at the centres, no distance yet (mjMAX_LIMIT)
    cdef int k
    for k in range(3):
        status.x1[k], status.x2[k] = g1.pos[k], g2.pos[k]
    status.dist_cutoff = dist_cutoff
    status.dist, status.separated, status.nsimplex, status.iterations = DBL_MAX, 0, 0, 0


cdef inline Py_ssize_t farthest_vertex(const double* v, Py_ssize_t n,
                                       const double* d) noexcept nogil:
    # the index of the vertex of v (n rows of 3) farthest along d, the first of equally far
    # ones (np.argmax of the dot products: MeshHull.support_index)
    cdef double top = dot3(v, d), dot
    cdef Py_ssize_t i, best = 0
    for i in range(1, n):
        dot = dot3(v + 3 * i, d)
        if dot > top:
            best, top = i, dot
    return best
