# cython: language_level=3
"""The compiled collision stage: the static pair table of a model and ``collide_into``.

``CollisionC`` holds what ``rbd/constraints/collision.py`` derives from the geoms
alone, once per model: each geom's kind, size, body, local pose and bounds, and the
candidate pairs that every q-independent filter lets through, in MuJoCo's order,
each with its routine and mixed contact parameters.  ``collide_into`` does the rest
per configuration: geom world poses, the broad tests, the pair routines, the
contact set (``contact_set.pxd``).
"""

from rbd._kernels.collision_primitive cimport pair_function
from rbd._kernels.contact_set cimport ContactSetC


cdef struct GeomC:
    int kind                  # code in rbd.constraints.collision.KINDS (mjtGeom order)
    Py_ssize_t body           # row of the body in R, p (rbd's body order); -1: the world
    double size[3]            # MuJoCo's size convention
    double R[9]               # rotation in the body frame, row-major
    double p[3]               # origin in the body frame
    double margin
    double gap
    double rbound             # bounding radius (bounding_radius; 0 for planes, meshes)
    double half[3]            # half-sizes of the local box (local_half_extents)
    int bounded               # 1: a kind of BOUNDED (its world box takes part in the broad test)


cdef struct PairC:
    Py_ssize_t geom1          # geom 1 (lower kind, as the routine takes it)
    Py_ssize_t geom2
    pair_function function    # NULL: no primitive routine (listed as unsupported)
    int boxed                 # 1: an automatic pair of two bounded geoms (box test first)
    int most                  # most contacts the routine produces
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
    cdef int _build_sweep(self, int sweep) except -1
    cdef tuple _poses(self, R, p)
    cdef tuple _unsupported(self, const double* R, const double* p)


cdef int collide_into(const CollisionC* cm, const double* R, const double* p,
                      ContactSetC* out) noexcept nogil
