# cython: language_level=3
"""The compiled collision stage: the static pair table of a model and ``collide_into``.

``CollisionC`` holds what ``rbd/constraints/collision.py`` derives from the geoms
alone, once per model: each geom's kind, size, body, local pose and bounds, and the
candidate pairs that every q-independent filter lets through, in MuJoCo's order,
each with its routine and mixed contact parameters.  ``collide_into`` does the rest
per configuration: geom world poses, the broad tests, the pair routines, the
contact set (``contact_set.pxd``).  Here too, as inline helpers of ``collision.pyx``:
the routine of each kind pair (``routine``, ``mesh_routine``), the world boxes of the
broad test and the pieces of its sweep and prune.
"""

from rbd._kernels.collision_box cimport c_box_box, c_capsule_box, c_sphere_box
from rbd._kernels.collision_convex cimport (
    convex_capsule_cylinder,
    convex_capsule_ellipsoid,
    convex_cylinder_box,
    convex_cylinder_cylinder,
    convex_ellipsoid_box,
    convex_ellipsoid_cylinder,
    convex_ellipsoid_ellipsoid,
    convex_sphere_ellipsoid,
)
from rbd._kernels.collision_gjk cimport HullC
from rbd._kernels.collision_mesh cimport c_mesh_pair, mesh_world_aabb, placed
from rbd._kernels.collision_primitive cimport (
    c_capsule_capsule,
    c_plane_box,
    c_plane_capsule,
    c_plane_cylinder,
    c_plane_ellipsoid,
    c_plane_sphere,
    c_sphere_capsule,
    c_sphere_cylinder,
    c_sphere_sphere,
    pair_function,
)
from rbd._kernels.contact_set cimport ContactSetC

# Geom kind codes: rbd.constraints.collision.KINDS (MuJoCo's mjtGeom order).
cdef enum:
    K_PLANE = 0
    K_HFIELD = 1
    K_SPHERE = 2
    K_CAPSULE = 3
    K_ELLIPSOID = 4
    K_CYLINDER = 5
    K_BOX = 6
    K_MESH = 7


cdef enum:
    # the sweep and prune pays when the boxed pairs outnumber this many per bounded geom
    SWEEP_PAIRS_PER_GEOM = 8
    # geoms whose world poses and boxes live on the stack of collide_into (more: malloc)
    STACK_GEOMS = 64
    # doubles per geom in that scratch: position 3, rotation 9, box lower 3, upper 3
    GEOM_SCRATCH = 18


cdef struct GeomC:
    int kind                  # code in rbd.constraints.collision.KINDS (mjtGeom order)
    Py_ssize_t body           # row of the body in R, p (rbd's body order); -1: the world
    double size[3]            # MuJoCo's size convention
    double R[9]               # rotation in the body frame, row-major
    double p[3]               # origin in the body frame
    double margin
    double gap
    double rbound             # bounding radius (bounding_radius; a hulled mesh: its hull's; 0 for
                              # planes and meshes without a hull)
    double half[3]            # half-sizes of the local box (local_half_extents)
    int bounded               # 1: a kind of BOUNDED or a mesh with its hull (its world box
                              # takes part in the broad test)
    const HullC* hull         # a mesh's hull (CollisionModel.hulls), NULL: none; the geom's
                              # world pose in collide_into is then its mesh frame's (placed)


cdef struct PairC:
    Py_ssize_t geom1          # geom 1 (lower kind, as the routine takes it)
    Py_ssize_t geom2
    pair_function function    # NULL: no routine (listed as unsupported); a routine returning
                              # -1 (a convex pair needing multi-contact): unsupported there
    int boxed                 # 1: an automatic pair of two bounded geoms (box test first)
    int most                  # most contacts the routine produces
    int mesh                  # 1: a pair with a mesh, run by collision_mesh's c_mesh_pair
    Py_ssize_t condim
    double friction[5]        # raised to MIN_FRICTION
    double solref[2]
    double solreffriction[2]
    double solimp[5]
    double margin             # includemargin: a contact is active below it
    double gap                # detected up to margin + gap


cdef struct CollisionC:
    Py_ssize_t ngeom
    Py_ssize_t nbody          # rows of R, p the geoms refer to (max body + 1)
    Py_ssize_t npair
    GeomC* geoms              # ngeom
    PairC* pairs              # npair, in MuJoCo's order
    Py_ssize_t nunsupported   # pairs whose function is NULL
    Py_ssize_t max_contacts   # Σ most over the pairs: a contact set this large never overflows
    int multiccd              # MuJoCo's multi-CCD (its multiccd disable flag off); 0: every
                              # convex pair gives GJK/EPA's one contact (c_mesh_pair)
    # the sweep and prune over the bounded geoms (broad_phase), used when the table holds
    # many more boxed pairs than there are bounded geoms: then only the pairs it finds and
    # the unboxed ones are visited; else every pair of the table, its boxes compared
    int sweep                 # 1: sweep and prune; 0: box test per pair
    Py_ssize_t nbounded
    Py_ssize_t* bounded       # nbounded geom indices
    Py_ssize_t* row_start     # ngeom + 1: boxed pairs of geom a < b in row a (CSR) ...
    Py_ssize_t* row_geom      # ... b, increasing within a row
    Py_ssize_t* row_pair      # ... and the pair's index in the table
    Py_ssize_t nunboxed
    Py_ssize_t* unboxed       # the other pairs' table indices, increasing


cdef class CollisionModel:
    cdef CollisionC c
    cdef list hulls           # the collision_mesh.Hull records the geoms' hull pointers name
    cdef int _build_sweep(self, int sweep) except -1
    cdef tuple _poses(self, R, p)
    cdef tuple _unsupported(self, const double* R, const double* p)


# The contact set at body poses R (≥ cm.nbody rows of 3×3, row-major) and p (≥ cm.nbody
# rows of 3): Work.R, Work.p after world_poses.  Returns the number of contacts written
# (out.n), -1 when out.capacity is too small (cm.max_contacts always suffices; out.n then
# counts the whole pairs written), -2 when scratch memory cannot be had.
cdef int collide_into(const CollisionC* cm, const double* R, const double* p,
                      ContactSetC* out) noexcept nogil


# ----------------------------------------------------------------------------- the routine table

cdef inline pair_function routine(int kind1, int kind2, int* most) noexcept nogil:
    # the compiled routine of the kind pair (kind1 <= kind2) and its most contacts, or NULL:
    # rbd.constraints.collision.PAIR_FUNCTIONS, the routines' compiled twins
    most[0] = 0
    if kind1 == K_PLANE:
        if kind2 == K_SPHERE:
            most[0] = 1
            return c_plane_sphere
        if kind2 == K_CAPSULE:
            most[0] = 2
            return c_plane_capsule
        if kind2 == K_ELLIPSOID:
            most[0] = 1
            return c_plane_ellipsoid
        if kind2 == K_CYLINDER:
            most[0] = 4
            return c_plane_cylinder
        if kind2 == K_BOX:
            most[0] = 4
            return c_plane_box
    elif kind1 == K_SPHERE:
        most[0] = 1
        if kind2 == K_SPHERE:
            return c_sphere_sphere
        if kind2 == K_CAPSULE:
            return c_sphere_capsule
        if kind2 == K_ELLIPSOID:
            return convex_sphere_ellipsoid
        if kind2 == K_CYLINDER:
            return c_sphere_cylinder
        if kind2 == K_BOX:
            return c_sphere_box
    elif kind1 == K_CAPSULE:
        most[0] = 2
        if kind2 == K_CAPSULE:
            return c_capsule_capsule
        if kind2 == K_BOX:
            return c_capsule_box
        most[0] = 1
        if kind2 == K_ELLIPSOID:
            return convex_capsule_ellipsoid
        if kind2 == K_CYLINDER:
            # MuJoCo 4.0's multi-CCD (collision_multiccd.pyx): up to four
            most[0] = 4
            return convex_capsule_cylinder
    elif kind1 == K_BOX and kind2 == K_BOX:
        most[0] = 8
        return c_box_box
    else:
        return convex_routine(kind1, kind2, most)
    most[0] = 0
    return NULL


cdef inline pair_function convex_routine(int kind1, int kind2, int* most) noexcept nogil:
    # the GJK routines (collision_convex.pxd) of ellipsoids and cylinders (kind1 <= kind2),
    # one contact each (a cylinder on a cylinder or a box up to four); NULL for the rest
    most[0] = 1
    if kind1 == K_ELLIPSOID:
        if kind2 == K_ELLIPSOID:
            return convex_ellipsoid_ellipsoid
        if kind2 == K_CYLINDER:
            return convex_ellipsoid_cylinder
        if kind2 == K_BOX:
            return convex_ellipsoid_box
    elif kind1 == K_CYLINDER:
        # MuJoCo 4.0's multi-CCD (collision_multiccd.pyx): up to four
        most[0] = 4
        if kind2 == K_CYLINDER:
            return convex_cylinder_cylinder
        if kind2 == K_BOX:
            return convex_cylinder_box
    most[0] = 0
    return NULL


cdef inline bint gjk_pair(int kind1, int kind2) noexcept nogil:
    # a kind pair of collision_convex.PAIR_FUNCTIONS (kind1 <= kind2): GJK among the primitives
    if kind1 == K_SPHERE or kind1 == K_CAPSULE:
        return kind2 == K_ELLIPSOID or (kind1 == K_CAPSULE and kind2 == K_CYLINDER)
    if kind1 == K_ELLIPSOID:
        return kind2 == K_ELLIPSOID or kind2 == K_CYLINDER or kind2 == K_BOX
    return kind1 == K_CYLINDER and (kind2 == K_CYLINDER or kind2 == K_BOX)


cdef inline int mesh_routine(const GeomC* g1, const GeomC* g2, double margin, bint multiccd,
                             int* most) noexcept nogil:
    # 1 when c_mesh_pair collides the pair (g1 before g2 in kind order) and its most
    # contacts: a mesh pair of collision_mesh.PAIRS whose meshes carry their hulls (four for
    # plane-mesh and, under multi-CCD, a capsule, cylinder, box or mesh on a mesh: one-pass
    # multi-contact or MuJoCo 4.0's multi-CCD), or without multi-CCD a GJK pair of the
    # primitives (collision_convex.PAIR_FUNCTIONS); else 0
    most[0] = 1
    if not multiccd and gjk_pair(g1.kind, g2.kind):
        return 1
    most[0] = 0
    if g2.kind != K_MESH or g2.hull == NULL or g1.kind == K_HFIELD:
        return 0
    if g1.kind == K_MESH and g1.hull == NULL:
        return 0
    most[0] = 1
    if g1.kind == K_PLANE or (multiccd and (g1.kind == K_CAPSULE or g1.kind == K_CYLINDER
                                            or g1.kind == K_BOX or g1.kind == K_MESH)):
        most[0] = 4
    return 1


cdef inline bint has_routine(const PairC* pair) noexcept nogil:
    # a compiled routine collides the pair (else it is listed as unsupported)
    return pair.function != NULL or pair.mesh


# ----------------------------------------------------------------------------- sweep helpers

cdef inline void world_aabb(const GeomC* g, const double* pos, const double* mat,
                            double* lower, double* upper) noexcept nogil:
    # world_aabb: the rotated local box within the bounding sphere, grown by margin + gap
    # (MuJoCo's makeAAMM)
    cdef double half, inflate = g.margin + g.gap
    cdef int k
    for k in range(3):
        half = (abs(mat[3 * k]) * g.half[0] + abs(mat[3 * k + 1]) * g.half[1]
                + abs(mat[3 * k + 2]) * g.half[2])
        if half > g.rbound:
            half = g.rbound
        lower[k] = pos[k] - half - inflate
        upper[k] = pos[k] + half + inflate


cdef inline bint boxes_overlap(const double* lo1, const double* hi1, const double* lo2,
                               const double* hi2) noexcept nogil:
    # the boxes meet on every axis (what broad_phase's sweep reports)
    cdef int k
    for k in range(3):
        if not (lo1[k] <= hi2[k] and lo2[k] <= hi1[k]):
            return False
    return True


cdef struct Interval:
    double lower              # the box's lower bound on the sweep axis
    Py_ssize_t geom


cdef inline int by_index(const void* a, const void* b) noexcept nogil:
    # qsort order of table indices
    cdef Py_ssize_t x = (<const Py_ssize_t*>a)[0], y = (<const Py_ssize_t*>b)[0]
    return -1 if x < y else (1 if x > y else 0)


cdef inline int by_lower(const void* a, const void* b) noexcept nogil:
    # qsort order of Interval: lower bound, then geom index (a deterministic order on ties)
    cdef const Interval* x = <const Interval*>a
    cdef const Interval* y = <const Interval*>b
    if x.lower != y.lower:
        return -1 if x.lower < y.lower else 1
    return -1 if x.geom < y.geom else (1 if x.geom > y.geom else 0)


cdef inline Py_ssize_t table_pair(const CollisionC* cm, Py_ssize_t a,
                                  Py_ssize_t b) noexcept nogil:
    # the table index of boxed pair {a, b} (binary search in row min(a, b)), or -1
    cdef Py_ssize_t lo, hi, mid
    if a > b:
        a, b = b, a
    lo, hi = cm.row_start[a], cm.row_start[a + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if cm.row_geom[mid] < b:
            lo = mid + 1
        else:
            hi = mid
    return cm.row_pair[lo] if lo < cm.row_start[a + 1] and cm.row_geom[lo] == b else -1


cdef inline int spread_axis(const CollisionC* cm, const double* scratch) noexcept nogil:
    # the axis along which the bounded geoms' box centres spread most
    cdef double lo[3]
    cdef double hi[3]
    cdef double c, best = -1.0
    cdef Py_ssize_t i
    cdef int k, axis = 0
    for k in range(3):
        lo[k], hi[k] = 1e300, -1e300
    for i in range(cm.nbounded):
        for k in range(3):
            c = 0.5 * (scratch[GEOM_SCRATCH * cm.bounded[i] + 12 + k]
                       + scratch[GEOM_SCRATCH * cm.bounded[i] + 15 + k])
            lo[k], hi[k] = min(lo[k], c), max(hi[k], c)
    for k in range(3):
        if hi[k] - lo[k] > best:
            best, axis = hi[k] - lo[k], k
    return axis
