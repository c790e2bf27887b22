# cython: language_level=3
"""Collision detection of a model's geoms, compiled.

The compiled twin of ``rbd/constraints/collision.py`` (MuJoCo's ``mj_collision``,
``engine_collision_driver.c``), split where the reference's work stops depending on
the configuration:

* built once (:class:`CollisionModel`, from Python): the geoms' kinds, sizes, bodies,
  local poses and bounds, and the static pair table of the reference's
  ``candidate_pairs`` (MuJoCo's filters ``filterBodyPair``, ``filterBitmask``,
  ``<exclude>``, explicit ``<pair>``s, and its sort order, all q-independent), each
  pair with its routine of ``collision_primitive.pyx`` / ``collision_box.pyx`` /
  ``collision_convex.pyx`` / ``collision_mesh.pyx`` (a mesh through its hull) and its
  parameters from the reference's ``pair_parameters`` (``mj_contactParam``);
* per configuration (:c:func:`collide_into`, nogil): each geom's world pose from its
  body's ``R``, ``p`` (``Work.R``, ``Work.p`` after ``kinematics.world_poses``), the
  broad tests of the reference (the overlap of the inflated world boxes that its
  sweep and prune finds, then ``mj_filterSphere``), the pair routines, the contact
  set (``contact_set.pxd``) in the table's order.

The box test of automatic pairs of bounded geoms runs as the reference's sweep and prune
(``broad_phase``) when the table holds many such pairs per bounded geom (a heap of free
bodies), and pair by pair otherwise (a filtered robot: 13 pairs on the ant); both keep
exactly the pairs whose boxes overlap.
"""

import numpy as np

cimport numpy as cnp
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcpy, memset

from rbd._kernels._spatial cimport mat3_mul, mat3_vec
from rbd._kernels.collision_mesh cimport Hull
from rbd._kernels.collision_primitive cimport PairOut

from rbd.errors import InputError

cnp.import_array()

# ----------------------------------------------------------------------------- per configuration

cdef inline void geom_world_pose(const GeomC* g, const double* R, const double* p,
                                 double* xpos, double* xmat) noexcept nogil:
    # T_body P (rbd.geom_poses): xmat = R_b R_g, xpos = R_b p_g + p_b; a world geom: P
    cdef int k
    if g.body < 0:
        for k in range(9):
            xmat[k] = g.R[k]
        for k in range(3):
            xpos[k] = g.p[k]
        return
    mat3_mul(R + 9 * g.body, g.R, xmat)
    mat3_vec(R + 9 * g.body, g.p, xpos)
    for k in range(3):
        xpos[k] += p[3 * g.body + k]


cdef inline bint sphere_filtered(const GeomC* g1, const double* pos1, const double* mat1,
                                 const GeomC* g2, const double* pos2,
                                 double margin) noexcept nogil:
    # sphere_filtered (MuJoCo's mj_filterSphere): the bounding spheres, or a plane and the
    # sphere of geom 2, are further apart than margin
    cdef double d0, d1, d2, r = g1.rbound + g2.rbound + margin
    if g1.rbound > 0 and g2.rbound > 0:
        d0, d1, d2 = pos1[0] - pos2[0], pos1[1] - pos2[1], pos1[2] - pos2[2]
        return d0 * d0 + d1 * d1 + d2 * d2 > r * r
    if g1.kind == K_PLANE and g2.rbound > 0:
        d0, d1, d2 = pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]
        return d0 * mat1[2] + d1 * mat1[5] + d2 * mat1[8] > margin + g2.rbound
    return False


cdef inline void place_geoms(const CollisionC* cm, const double* R, const double* p,
                             double* scratch) noexcept nogil:
    # every geom's world pose, and the world box of each bounded one
    cdef Py_ssize_t i
    cdef double* s
    cdef const GeomC* g
    for i in range(cm.ngeom):
        s = scratch + GEOM_SCRATCH * i
        g = &cm.geoms[i]
        geom_world_pose(g, R, p, s, s + 3)
        if g.hull != NULL:
            # a mesh: its mesh frame (collision_mesh.placed) and its hull's box
            placed(g.hull, s, s + 3)
            mesh_world_aabb(g.hull, s, s + 3, g.margin + g.gap, s + 12, s + 15)
        elif g.bounded:
            world_aabb(g, s, s + 3, s + 12, s + 15)


cdef inline bint broad_passed(const CollisionC* cm, const PairC* pair,
                              const double* scratch) noexcept nogil:
    # the reference's broad phase on one pair of the table: box overlap (automatic pairs of
    # bounded geoms), then the bounding-sphere test at the pair's margin + gap
    cdef const double* s1 = scratch + GEOM_SCRATCH * pair.geom1
    cdef const double* s2 = scratch + GEOM_SCRATCH * pair.geom2
    if pair.boxed and not boxes_overlap(s1 + 12, s1 + 15, s2 + 12, s2 + 15):
        return False
    return not sphere_filtered(&cm.geoms[pair.geom1], s1, s1 + 3, &cm.geoms[pair.geom2], s2,
                               pair.margin + pair.gap)


cdef inline void write_contact(const PairC* pair, const PairOut* found, int c,
                               ContactSetC* out, Py_ssize_t k) noexcept nogil:
    # contact c of a pair's routine into row k of the contact set (_assemble)
    cdef int j
    for j in range(3):
        out.pos[3 * k + j] = found.pos[3 * c + j]
    for j in range(9):
        out.frame[9 * k + j] = found.frame[9 * c + j]
    out.dist[k] = found.dist[c]
    out.geom[2 * k] = pair.geom1
    out.geom[2 * k + 1] = pair.geom2
    out.condim[k] = pair.condim
    for j in range(5):
        out.friction[5 * k + j] = pair.friction[j]
        out.solimp[5 * k + j] = pair.solimp[j]
    for j in range(2):
        out.solref[2 * k + j] = pair.solref[j]
        out.solreffriction[2 * k + j] = pair.solreffriction[j]
    out.includemargin[k] = pair.margin
    out.exclude[k] = found.dist[c] >= pair.margin


cdef inline double* scratch_for(const CollisionC* cm, double* stack) noexcept nogil:
    # the per-call geom scratch: the caller's stack buffer, or malloc for many geoms
    if cm.ngeom <= STACK_GEOMS:
        return stack
    return <double*>malloc(GEOM_SCRATCH * cm.ngeom * sizeof(double))


cdef Py_ssize_t broad_phase(const CollisionC* cm, const double* scratch,
                            Py_ssize_t* swept) noexcept nogil:
    """Sweep and prune over the bounded geoms' world boxes: the table indices of the boxed
    pairs whose boxes overlap (the pairs of the reference's ``broad_phase``) into ``swept``,
    their number returned (-1: no scratch memory).

    Sorted by lower bound on the axis of largest spread of the box centres; a sweep keeps
    the boxes still open and tests the other two axes only against them.
    """
    cdef Py_ssize_t n = cm.nbounded, nactive = 0, nswept = 0, i, j, a, k, keep
    cdef Interval* order = <Interval*>malloc(n * sizeof(Interval) + 1)
    cdef Py_ssize_t* active = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t) + 1)
    cdef int axis = spread_axis(cm, scratch)
    cdef const double* si
    cdef const double* sj
    if order == NULL or active == NULL:
        free(order)
        free(active)
        return -1
    for i in range(n):
        order[i].geom = cm.bounded[i]
        order[i].lower = scratch[GEOM_SCRATCH * cm.bounded[i] + 12 + axis]
    qsort(order, n, sizeof(Interval), by_lower)
    for i in range(n):
        si = scratch + GEOM_SCRATCH * order[i].geom
        keep = 0
        for a in range(nactive):
            # drop the boxes that closed before this one opens
            sj = scratch + GEOM_SCRATCH * active[a]
            if sj[15 + axis] >= si[12 + axis]:
                active[keep] = active[a]
                keep += 1
        nactive = keep
        for a in range(nactive):
            j = active[a]
            sj = scratch + GEOM_SCRATCH * j
            if boxes_overlap(si + 12, si + 15, sj + 12, sj + 15):
                k = table_pair(cm, order[i].geom, j)
                if k >= 0:
                    swept[nswept] = k
                    nswept += 1
        active[nactive] = order[i].geom
        nactive += 1
    free(order)
    free(active)
    return nswept


cdef inline int collide_pair(const CollisionC* cm, Py_ssize_t k, const double* scratch,
                             ContactSetC* out) noexcept nogil:
    # pair k of the table: broad tests, routine, its contacts appended to out (0), or -1
    # when they do not fit (out unchanged)
    cdef const PairC* pair = &cm.pairs[k]
    cdef const double* s1 = scratch + GEOM_SCRATCH * pair.geom1
    cdef const double* s2 = scratch + GEOM_SCRATCH * pair.geom2
    cdef const GeomC* g1 = &cm.geoms[pair.geom1]
    cdef const GeomC* g2 = &cm.geoms[pair.geom2]
    cdef PairOut found
    cdef int c
    if not has_routine(pair) or not broad_passed(cm, pair, scratch):
        return 0
    found.n = 0
    if pair.mesh:
        c_mesh_pair(g1.kind, g2.kind, s1, s1 + 3, g1.size, g1.hull, g1.rbound, s2,
                    s2 + 3, g2.size, g2.hull, g2.rbound, pair.margin + pair.gap,
                    cm.multiccd, &found)
    else:
        pair.function(s1, s1 + 3, g1.size, s2, s2 + 3, g2.size, pair.margin + pair.gap,
                      &found)
    if out.n + found.n > out.capacity:
        return -1
    for c in range(found.n):
        write_contact(pair, &found, c, out, out.n)
        out.n += 1
    return 0


cdef inline int collide_swept(const CollisionC* cm, const double* scratch,
                              ContactSetC* out) noexcept nogil:
    # the pairs the sweep finds merged in table order with the unboxed pairs (0, -1: full,
    # -2: no scratch memory)
    cdef Py_ssize_t* swept = <Py_ssize_t*>malloc((cm.row_start[cm.ngeom] + 1)
                                                 * sizeof(Py_ssize_t))
    cdef Py_ssize_t m = -1, i = 0, j = 0, k
    cdef int status = 0
    if swept != NULL:
        m = broad_phase(cm, scratch, swept)
    if m < 0:
        free(swept)
        return -2
    qsort(swept, m, sizeof(Py_ssize_t), by_index)
    while status == 0 and (i < m or j < cm.nunboxed):
        if j >= cm.nunboxed or (i < m and swept[i] < cm.unboxed[j]):
            k = swept[i]
            i += 1
        else:
            k = cm.unboxed[j]
            j += 1
        status = collide_pair(cm, k, scratch, out)
    free(swept)
    return status


cdef int collide_into(const CollisionC* cm, const double* R, const double* p,
                      ContactSetC* out) noexcept nogil:
    """The contact set at body poses R (nbody × 3×3 row-major), p (nbody × 3): collide.

    Writes ``out.n`` contacts in MuJoCo's order and returns their number; returns -1
    (``out.n``: the contacts of the pairs that fit) when ``out.capacity`` is too small
    (``cm.max_contacts`` always suffices), -2 when scratch memory cannot be had.
    """
    cdef double stack[STACK_GEOMS * GEOM_SCRATCH]
    cdef double* scratch = scratch_for(cm, stack)
    cdef Py_ssize_t k
    cdef int status = 0
    out.n = 0
    if scratch == NULL:
        return -2
    place_geoms(cm, R, p, scratch)
    if cm.sweep:
        status = collide_swept(cm, scratch, out)
    else:
        for k in range(cm.npair):
            status = collide_pair(cm, k, scratch, out)
            if status:
                break
    if scratch != stack:
        free(scratch)
    return status if status else <int>out.n


cdef inline Py_ssize_t unsupported_into(const CollisionC* cm, const double* R,
                                        const double* p, Py_ssize_t* which) noexcept nogil:
    """Indices into ``cm.pairs`` of the pairs without a routine that pass the broad tests at
    R, p (the reference's ``Contacts.unsupported``), written to ``which``; their number
    (-2: no scratch memory)."""
    cdef double stack[STACK_GEOMS * GEOM_SCRATCH]
    cdef double* scratch
    cdef Py_ssize_t k, n = 0
    if cm.nunsupported == 0:
        return 0
    scratch = scratch_for(cm, stack)
    if scratch == NULL:
        return -2
    place_geoms(cm, R, p, scratch)
    for k in range(cm.npair):
        if not has_routine(&cm.pairs[k]) and broad_passed(cm, &cm.pairs[k], scratch):
            which[n] = k
            n += 1
    if scratch != stack:
        free(scratch)
    return n


# ----------------------------------------------------------------------------- built once

cdef inline void fill(double* target, values, Py_ssize_t n):
    # target[:n] = values (any array_like of n numbers, flattened)
    cdef double[::1] flat = np.ascontiguousarray(values, dtype=float).reshape(-1)
    cdef Py_ssize_t k
    for k in range(n):
        target[k] = flat[k]


cdef inline int fill_geom(GeomC* g, Py_ssize_t i, kind, body, bounded, size, pose, margin, gap,
                          rbound, half, Hull hull) except -1:
    # geom i of the static arrays (hull: a mesh's, or None)
    g.kind, g.body, g.bounded = kind[i], body[i], bounded[i]
    g.hull = NULL if hull is None else &hull.c
    fill(g.size, size[i], 3)
    fill(g.R, pose[i, :3, :3], 9)
    fill(g.p, pose[i, :3, 3], 3)
    g.margin, g.gap, g.rbound = margin[i], gap[i], rbound[i]
    fill(g.half, half[i], 3)
    return 0


cdef inline int fill_pair(PairC* pc, const GeomC* geoms, Py_ssize_t k, geom, boxed, condim,
                          friction, solref, solreffriction, solimp, margin, gap,
                          bint multiccd) except -1:
    # pair k of the static arrays, with the routine of its kinds
    cdef int most
    pc.geom1, pc.geom2 = geom[k, 0], geom[k, 1]
    pc.function = routine(geoms[pc.geom1].kind, geoms[pc.geom2].kind, &most)
    if not multiccd and gjk_pair(geoms[pc.geom1].kind, geoms[pc.geom2].kind):
        # without multi-CCD a GJK pair takes c_mesh_pair (one contact), as the reference's
        pc.function = NULL
    pc.mesh = mesh_routine(&geoms[pc.geom1], &geoms[pc.geom2], margin[k] + gap[k], multiccd,
                           &most) if pc.function == NULL else 0
    pc.most, pc.boxed, pc.condim = most, boxed[k], condim[k]
    fill(pc.friction, friction[k], 5)
    fill(pc.solref, solref[k], 2)
    fill(pc.solreffriction, solreffriction[k], 2)
    fill(pc.solimp, solimp[k], 5)
    pc.margin, pc.gap = margin[k], gap[k]
    return 0


cdef inline ContactSetC shifted(ContactSetC out, Py_ssize_t s) noexcept nogil:
    # the contact set of state s of arrays laid out state after state (ContactArrays)
    cdef Py_ssize_t c = out.capacity * s
    out.n = 0
    out.pos += 3 * c
    out.frame += 9 * c
    out.dist += c
    out.geom += 2 * c
    out.condim += c
    out.friction += 5 * c
    out.solref += 2 * c
    out.solreffriction += 2 * c
    out.solimp += 5 * c
    out.includemargin += c
    out.exclude += c
    return out


cdef class ContactArrays:
    """N contact sets of ``capacity`` contacts each, in three C blocks (floats, integers,
    flags) laid out field after field, state after state; ``fields`` copies one state's
    contacts out as NumPy arrays of their exact size (``Contacts``' fields)."""

    cdef Py_ssize_t cap
    cdef Py_ssize_t N
    cdef double* floats
    cdef Py_ssize_t* ints
    cdef unsigned char* flags

    def __cinit__(self, Py_ssize_t N, Py_ssize_t capacity):
        self.N, self.cap = N, capacity
        self.floats = <double*>malloc((28 * N * capacity + 1) * sizeof(double))
        self.ints = <Py_ssize_t*>malloc((3 * N * capacity + 1) * sizeof(Py_ssize_t))
        self.flags = <unsigned char*>malloc(N * capacity + 1)
        if self.floats == NULL or self.ints == NULL or self.flags == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.floats)
        free(self.ints)
        free(self.flags)

    cdef ContactSetC first(self):
        # the ContactSetC of state 0; state s is shifted(first, s)
        cdef ContactSetC out
        cdef Py_ssize_t c = self.N * self.cap
        out.n, out.capacity = 0, self.cap
        out.pos, out.frame, out.dist = self.floats, self.floats + 3 * c, self.floats + 12 * c
        out.friction, out.solref = self.floats + 13 * c, self.floats + 18 * c
        out.solreffriction, out.solimp = self.floats + 20 * c, self.floats + 22 * c
        out.includemargin = self.floats + 27 * c
        out.geom, out.condim, out.exclude = self.ints, self.ints + 2 * c, self.flags
        return out

    cdef tuple fields(self, Py_ssize_t s, Py_ssize_t n):
        # the first n contacts of state s, one new array per field
        cdef ContactSetC out = shifted(self.first(), s)
        return (copied(out.pos, n, 3, 0, cnp.NPY_DOUBLE),
                copied(out.frame, n, 3, 3, cnp.NPY_DOUBLE),
                copied(out.dist, n, 0, 0, cnp.NPY_DOUBLE),
                copied(out.geom, n, 2, 0, cnp.NPY_INTP),
                copied(out.condim, n, 0, 0, cnp.NPY_INTP),
                copied(out.friction, n, 5, 0, cnp.NPY_DOUBLE),
                copied(out.solref, n, 2, 0, cnp.NPY_DOUBLE),
                copied(out.solreffriction, n, 2, 0, cnp.NPY_DOUBLE),
                copied(out.solimp, n, 5, 0, cnp.NPY_DOUBLE),
                copied(out.includemargin, n, 0, 0, cnp.NPY_DOUBLE),
                copied(out.exclude, n, 0, 0, cnp.NPY_BOOL))


cdef inline cnp.ndarray copied(const void* data, Py_ssize_t n, Py_ssize_t d1, Py_ssize_t d2,
                               int typenum):
    # a new (n[, d1[, d2]]) array of type typenum holding the values at data
    cdef cnp.npy_intp dims[3]
    cdef int nd = 1 + (d1 > 0) + (d2 > 0)
    dims[0], dims[1], dims[2] = n, d1, d2
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(nd, dims, typenum, 0)
    memcpy(cnp.PyArray_DATA(out), data, cnp.PyArray_NBYTES(out))
    return out


cdef class CollisionModel:
    """The static part of collision detection, in C (``CollisionC``).

    Built by ``rbd.constraints.collision.compiled_collision`` from the reference's
    static pair table (``static_table``: ``candidate_pairs``, ``pair_parameters``);
    the arguments are its arrays, one row per geom (``kind`` … ``half``, and ``hull``: a
    mesh geom's ``MeshHull`` or None, held as a ``collision_mesh.Hull``) and one per pair
    in MuJoCo's order (``pair_*``); ``multiccd`` False (MuJoCo's ``multiccd`` disable flag)
    gives every convex pair GJK/EPA's one contact.  Body ``b`` of a geom is row ``b`` of the
    poses :meth:`collide` and :c:func:`collide_into` take; -1 is the world.
    """

    def __cinit__(self):
        memset(&self.c, 0, sizeof(CollisionC))

    def __dealloc__(self):
        free(self.c.geoms)
        free(self.c.pairs)
        free(self.c.bounded)
        free(self.c.row_start)
        free(self.c.row_geom)
        free(self.c.row_pair)
        free(self.c.unboxed)

    def __init__(self, kind, body, bounded, size, pose, margin, gap, rbound, half, pair_geom,
                 pair_boxed, pair_condim, pair_friction, pair_solref, pair_solreffriction,
                 pair_solimp, pair_margin, pair_gap, int sweep=-1, hull=None,
                 bint multiccd=True):
        cdef Py_ssize_t i, k, ng = len(kind), npair = len(pair_geom)
        if self.c.geoms != NULL:
            raise InputError("CollisionModel: built once")
        self.c.geoms = <GeomC*>malloc(max(ng, 1) * sizeof(GeomC))
        self.c.pairs = <PairC*>malloc(max(npair, 1) * sizeof(PairC))
        if self.c.geoms == NULL or self.c.pairs == NULL:
            raise MemoryError()
        pose, pair_geom = np.asarray(pose, dtype=float), np.asarray(pair_geom, dtype=np.intp)
        self.hulls = [None if h is None else Hull(h) for h in (hull or [None] * ng)]
        for i in range(ng):
            fill_geom(&self.c.geoms[i], i, kind, body, bounded, size, pose, margin, gap,
                      rbound, half, self.hulls[i])
            self.c.nbody = max(self.c.nbody, self.c.geoms[i].body + 1)
        self.c.ngeom, self.c.multiccd = ng, multiccd
        for k in range(npair):
            if not (0 <= pair_geom[k, 0] < ng and 0 <= pair_geom[k, 1] < ng):
                raise InputError(f"pair_geom: row {k} names a geom outside 0..{ng - 1}")
            fill_pair(&self.c.pairs[k], self.c.geoms, k, pair_geom, pair_boxed, pair_condim,
                      pair_friction, pair_solref, pair_solreffriction, pair_solimp,
                      pair_margin, pair_gap, multiccd)
            self.c.max_contacts += self.c.pairs[k].most
            self.c.nunsupported += not has_routine(&self.c.pairs[k])
            self.c.npair = k + 1
        self._build_sweep(sweep)

    cdef int _build_sweep(self, int sweep) except -1:
        # the bounded geoms and the boxed pairs by geom (CSR rows) for broad_phase; the sweep
        # runs when asked (sweep = 1), or by default (-1) when the boxed pairs outnumber
        # SWEEP_PAIRS_PER_GEOM times the bounded geoms (each pair's box test would cost more)
        cdef Py_ssize_t i, k, ng = self.c.ngeom
        boxed = sorted((min(self.c.pairs[k].geom1, self.c.pairs[k].geom2),
                        max(self.c.pairs[k].geom1, self.c.pairs[k].geom2), k)
                       for k in range(self.c.npair) if self.c.pairs[k].boxed)
        bounded = [i for i in range(ng) if self.c.geoms[i].bounded]
        self.c.nbounded = len(bounded)
        self.c.bounded = <Py_ssize_t*>malloc((len(bounded) + 1) * sizeof(Py_ssize_t))
        self.c.row_start = <Py_ssize_t*>calloc(ng + 2, sizeof(Py_ssize_t))
        self.c.row_geom = <Py_ssize_t*>malloc((len(boxed) + 1) * sizeof(Py_ssize_t))
        self.c.row_pair = <Py_ssize_t*>malloc((len(boxed) + 1) * sizeof(Py_ssize_t))
        unboxed = [k for k in range(self.c.npair) if not self.c.pairs[k].boxed]
        self.c.unboxed = <Py_ssize_t*>malloc((len(unboxed) + 1) * sizeof(Py_ssize_t))
        if (self.c.bounded == NULL or self.c.row_start == NULL or self.c.row_geom == NULL
                or self.c.row_pair == NULL or self.c.unboxed == NULL):
            raise MemoryError()
        self.c.nunboxed = len(unboxed)
        for i in range(len(unboxed)):
            self.c.unboxed[i] = unboxed[i]
        for i in range(len(bounded)):
            self.c.bounded[i] = bounded[i]
        for k, (a, b, pair) in enumerate(boxed):
            self.c.row_start[a + 1] += 1
            self.c.row_geom[k], self.c.row_pair[k] = b, pair
        for i in range(ng):
            self.c.row_start[i + 1] += self.c.row_start[i]
        self.c.sweep = (sweep == 1 or sweep == -1
                        and len(boxed) > SWEEP_PAIRS_PER_GEOM * len(bounded))
        return 0

    @staticmethod
    def routine_kinds(int nkinds=8):
        """The kind-code pairs (a ≤ b) with a compiled routine, each with its most contacts."""
        cdef int a, b, most
        found = {}
        for a in range(nkinds):
            for b in range(a, nkinds):
                if routine(a, b, &most) != NULL:
                    found[(a, b)] = most
        return found

    @property
    def max_contacts(self) -> int:
        """Σ over the pair table of each routine's most contacts: a capacity never too small."""
        return self.c.max_contacts

    @property
    def npairs(self) -> int:
        """Pairs in the static table (those without a routine included)."""
        return self.c.npair

    @property
    def nunsupported(self) -> int:
        """Pairs of the table without a primitive routine (never tested)."""
        return self.c.nunsupported

    @property
    def sweeps(self) -> bool:
        """Whether the box test runs as a sweep and prune (else per boxed pair)."""
        return bool(self.c.sweep)

    @property
    def nbodies(self) -> int:
        """Rows of R, p the geoms refer to (the highest body row + 1)."""
        return self.c.nbody

    def table(self):
        """The static pair table: ``(geom1, geom2)`` per pair, in MuJoCo's order."""
        return [(self.c.pairs[k].geom1, self.c.pairs[k].geom2) for k in range(self.c.npair)]

    def _time_into(self, R, p, Py_ssize_t repeat=1000):
        """Seconds per :c:func:`collide_into` call at body poses R (nb, 3, 3), p (nb, 3), into
        a contact set allocated once (``benchmarks/bench_collision.py``)."""
        from time import perf_counter

        cdef cnp.ndarray Ra, pa
        Ra, pa = self._poses(R, p)
        cdef Py_ssize_t _
        cdef ContactArrays arrays = ContactArrays(1, max(self.c.max_contacts, 1))
        cdef ContactSetC out = arrays.first()
        cdef const double* Rd = <const double*>cnp.PyArray_DATA(Ra)
        cdef const double* pd = <const double*>cnp.PyArray_DATA(pa)
        start = perf_counter()
        with nogil:
            for _ in range(repeat):
                collide_into(&self.c, Rd, pd, &out)
        return (perf_counter() - start) / repeat

    cdef tuple _poses(self, R, p):
        # R, p as contiguous (N, nb, 3, 3) and (N, nb, 3) float arrays, checked
        cdef cnp.ndarray Ra = np.ascontiguousarray(R, dtype=float)
        cdef cnp.ndarray pa = np.ascontiguousarray(p, dtype=float)
        if pa.ndim == 2:
            Ra, pa = Ra[None], pa[None]
        if (pa.ndim != 3 or pa.shape[1] < self.c.nbody or pa.shape[2] != 3
                or (<object>Ra).shape != (<object>pa).shape + (3,)):
            raise InputError(f"R, p: expected shapes ([N,] nb, 3, 3) and ([N,] nb, 3) with "
                             f"nb >= {self.c.nbody}, got {np.shape(R)} and {np.shape(p)}")
        return Ra, pa

    def collide(self, R, p, Py_ssize_t capacity=-1):
        """The contact set at body poses R, p: the fields of ``Contacts``, in its order.

        Parameters
        ----------
        R : (nb, 3, 3) or (N, nb, 3, 3) array_like
            World rotations of the bodies (nb ≥ :attr:`nbodies`).
        p : (nb, 3) or (N, nb, 3) array_like
            World origins.
        capacity : int, optional
            Contacts per state the output holds (default :attr:`max_contacts`).

        Returns
        -------
        tuple, or a list of N tuples
            ``(pos, frame, dist, geom, condim, friction, solref, solreffriction, solimp,
            includemargin, exclude, unsupported)``: ``rbd.constraints.collision.Contacts``.

        Raises
        ------
        InputError
            On arrays of the wrong shape, or a ``capacity`` the contacts exceed.
        """
        cdef cnp.ndarray Ra, pa
        Ra, pa = self._poses(R, p)
        cdef Py_ssize_t N = pa.shape[0], nb = pa.shape[1], s
        cdef Py_ssize_t cap = self.c.max_contacts if capacity < 0 else capacity
        cdef ContactArrays arrays = ContactArrays(N, cap)
        cdef Py_ssize_t[::1] counts = np.zeros(N, dtype=np.intp)
        cdef const double* Rd = <const double*>cnp.PyArray_DATA(Ra)
        cdef const double* pd = <const double*>cnp.PyArray_DATA(pa)
        cdef ContactSetC base = arrays.first(), out
        cdef int status = 0
        with nogil:
            for s in range(N):
                out = shifted(base, s)
                status = collide_into(&self.c, Rd + 9 * nb * s, pd + 3 * nb * s, &out)
                if status < 0:
                    break
                counts[s] = out.n
        if status == -1:
            raise InputError(f"capacity: {cap} contacts per state are too few "
                             f"(max_contacts = {self.c.max_contacts} always suffices)")
        if status == -2:
            raise MemoryError()
        found = [arrays.fields(s, counts[s])
                 + (self._unsupported(Rd + 9 * nb * s, pd + 3 * nb * s),)
                 for s in range(N)]
        return found[0] if np.ndim(p) == 2 else found

    cdef tuple _unsupported(self, const double* R, const double* p):
        # (geom1, geom2) of the pairs without a routine the broad tests pass at R, p, in
        # table order
        cdef Py_ssize_t[::1] which = np.empty(self.c.nunsupported + 1, dtype=np.intp)
        cdef Py_ssize_t m = 0
        if self.c.nunsupported:
            m = unsupported_into(&self.c, R, p, &which[0])
        if m < 0:
            raise MemoryError()
        return tuple((self.c.pairs[k].geom1, self.c.pairs[k].geom2)
                     for k in np.asarray(which[:m]).tolist())
