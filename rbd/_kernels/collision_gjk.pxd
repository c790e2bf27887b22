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


cdef struct HullC:            # rbd.model.mesh_hull.MeshHull
    Py_ssize_t nvert
    const double* vert        # nvert × 3: the hull's vertices in the mesh frame
    Py_ssize_t npoly
    const double* normal      # npoly × 3: the polygons' outward unit normals
    const Py_ssize_t* poly_start    # npoly + 1: polygon f's corners are
    const Py_ssize_t* poly_vert     # poly_vert[poly_start[f]:poly_start[f + 1]]
    const Py_ssize_t* vpoly_start   # nvert + 1: the polygons at vertex i are
    const Py_ssize_t* vpoly         # vpoly[vpoly_start[i]:vpoly_start[i + 1]]
    double R[9]               # the mesh frame in the geom frame, row-major (frame[:3, :3])
    double c[3]               # (frame[:3, 3])
    double rbound
    double center[3]          # middle and half-sizes of the vertices' box (lower, upper)
    double half[3]


cdef struct ConvexGeom:      # one side of the pair (MuJoCo's mjCCDObj)
    int kind                  # CCD_* code
    double pos[3]             # world position
    double mat[9]             # world rotation, row-major (columns: the geom axes)
    double size[3]
    double margin             # the pair margin (the support grows by half of it)
    const double* vert        # a mesh's hull vertices (NULL for the primitives)
    Py_ssize_t nvert
    Py_ssize_t vertindex      # the last support vertex: a box's corner (box_corner_index),
                              # a mesh's hull vertex (-1: none yet; the mesh search keeps
                              # it on a tie, as the reference's ConvexGeom.vertindex)
    const HullC* hull         # a mesh's hull, polygons and all (NULL for the primitives;
                              # collision_multi reads it)


cdef struct Vertex:          # a vertex of the Minkowski difference and its two points
    double w[3]               # w1 - w2
    double w1[3]
    double w2[3]
    Py_ssize_t index1         # the geoms' vertindex after the two searches (a box corner
    Py_ssize_t index2         # or a hull vertex; -1 for a smooth kind)


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
cdef bint discrete(const ConvexGeom* g1, const ConvexGeom* g2) noexcept nogil
cdef void gjk(GJKStatus* status, ConvexGeom* g1, ConvexGeom* g2) noexcept nogil
cdef void lincomb(const double* coef, const double* const* vectors, int n,
                  double* out) noexcept nogil


cdef inline void geom_init(ConvexGeom* g, int kind, const double* pos, const double* mat,
                           const double* size, double margin) noexcept nogil:
    # ConvexGeom(kind, pos, mat, size, margin)
    cdef int k
    g.kind, g.margin, g.vert, g.nvert, g.vertindex = kind, margin, NULL, 0, -1
    g.hull = NULL
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
