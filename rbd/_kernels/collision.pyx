# cython: language_level=3
"""Collision detection of a model's geoms, compiled.

The compiled twin of ``rbd/constraints/collision.py`` (MuJoCo's ``mj_collision``,
``engine_collision_driver.c``), split where the reference's work stops depending on
the configuration:

* built once (:class:`CollisionModel`, from Python): the geoms' kinds, sizes, bodies,
  local poses and bounds, and the static pair table of the reference's
  ``candidate_pairs`` (MuJoCo's filters ``filterBodyPair``, ``filterBitmask``,
  ``<exclude>``, explicit ``<pair>``s, and its sort order, all q-independent), each
  pair with its routine of ``collision_primitive.pyx`` / ``collision_box.pyx`` and its
  parameters from the reference's ``pair_parameters`` (``mj_contactParam``);
* per configuration (:c:func:`collide_into`, nogil): each geom's world pose from its
  body's ``R``, ``p`` (``Work.R``, ``Work.p`` after ``kinematics.world_poses``), the
  broad tests of the reference (the overlap of the inflated world boxes that its
  sweep and prune finds, then ``mj_filterSphere``), the pair routines, the contact
  set (``contact_set.pxd``) in the table's order.

The box test is done per pair of the table (both geoms bounded, pair automatic): it
decides the same pairs as the reference's sweep and prune, at a cost linear in the
table's size, which the filters keep small on articulated robots.
"""

import warnings

import numpy as np

cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from rbd._kernels._spatial cimport mat3_mul, mat3_vec
from rbd._kernels.collision_box cimport c_box_box, c_capsule_box, c_sphere_box
from rbd._kernels.collision_primitive cimport (
    PairOut,
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

from rbd.constraints import collision as _col
from rbd.errors import InputError

cnp.import_array()

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
    # geoms whose world poses and boxes live on the stack of collide_into (more: malloc)
    STACK_GEOMS = 64
    # doubles per geom in that scratch: position 3, rotation 9, box lower 3, upper 3
    GEOM_SCRATCH = 18


cdef pair_function routine(int kind1, int kind2, int* most) noexcept nogil:
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
    elif kind1 == K_BOX and kind2 == K_BOX:
        most[0] = 8
        return c_box_box
    most[0] = 0
    return NULL


def routine_kinds():
    """The kind pairs with a compiled routine here, and each one's most contacts."""
    cdef int a, b, most
    found = {}
    for a in range(len(_col.KINDS)):
        for b in range(a, len(_col.KINDS)):
            if routine(a, b, &most) != NULL:
                found[(_col.KINDS[a], _col.KINDS[b])] = most
    return found


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


cdef void place_geoms(const CollisionC* cm, const double* R, const double* p,
                      double* scratch) noexcept nogil:
    # every geom's world pose, and the world box of each bounded one
    cdef Py_ssize_t i
    cdef double* s
    for i in range(cm.ngeom):
        s = scratch + GEOM_SCRATCH * i
        geom_world_pose(&cm.geoms[i], R, p, s, s + 3)
        if cm.geoms[i].bounded:
            world_aabb(&cm.geoms[i], s, s + 3, s + 12, s + 15)


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


cdef double* scratch_for(const CollisionC* cm, double* stack) noexcept nogil:
    # the per-call geom scratch: the caller's stack buffer, or malloc for many geoms
    if cm.ngeom <= STACK_GEOMS:
        return stack
    return <double*>malloc(GEOM_SCRATCH * cm.ngeom * sizeof(double))


cdef int collide_into(const CollisionC* cm, const double* R, const double* p,
                      ContactSetC* out) noexcept nogil:
    """The contact set at body poses R (nbody × 3×3 row-major), p (nbody × 3): collide.

    Writes ``out.n`` contacts in MuJoCo's order and returns their number; returns -1
    (``out.n``: the contacts of the pairs that fit) when ``out.capacity`` is too small
    (``cm.max_contacts`` always suffices), -2 when scratch memory cannot be had.
    """
    cdef double stack[STACK_GEOMS * GEOM_SCRATCH]
    cdef double* scratch = scratch_for(cm, stack)
    cdef const double* s1
    cdef const double* s2
    cdef const PairC* pair
    cdef PairOut found
    cdef Py_ssize_t k, n = 0
    cdef int c, status = 0
    out.n = 0
    if scratch == NULL:
        return -2
    place_geoms(cm, R, p, scratch)
    for k in range(cm.npair):
        pair = &cm.pairs[k]
        if pair.function == NULL or not broad_passed(cm, pair, scratch):
            continue
        s1 = scratch + GEOM_SCRATCH * pair.geom1
        s2 = scratch + GEOM_SCRATCH * pair.geom2
        found.n = 0
        pair.function(s1, s1 + 3, cm.geoms[pair.geom1].size, s2, s2 + 3,
                      cm.geoms[pair.geom2].size, pair.margin + pair.gap, &found)
        if n + found.n > out.capacity:
            status = -1
            break
        for c in range(found.n):
            write_contact(pair, &found, c, out, n)
            n += 1
    out.n = n
    if scratch != stack:
        free(scratch)
    return status if status else <int>n


cdef Py_ssize_t unsupported_into(const CollisionC* cm, const double* R, const double* p,
                                 Py_ssize_t* which) noexcept nogil:
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
        if cm.pairs[k].function == NULL and broad_passed(cm, &cm.pairs[k], scratch):
            which[n] = k
            n += 1
    if scratch != stack:
        free(scratch)
    return n


# ----------------------------------------------------------------------------- built once

cdef void fill(double* target, values, Py_ssize_t n):
    cdef Py_ssize_t k
    values = np.asarray(values, dtype=float).reshape(-1)
    for k in range(n):
        target[k] = values[k]


cdef class CollisionModel:
    """The static part of collision detection for a set of geoms (``CollisionC``).

    Parameters
    ----------
    geoms : sequence of geom records
        As :func:`rbd.constraints.collision.collide` reads them, each also with
        ``pose`` (4, 4), its frame in its body's frame (:class:`rbd.model.geoms.Geom`).
    bodies : BodyTree
        Body ``b`` of ``bodies.names`` (``b >= 1``) is row ``b - 1`` of the poses
        :meth:`collide` and :c:func:`collide_into` take (rbd's body order for
        :func:`~rbd.constraints.collision.body_tree`).
    pairs, excludes, filterparent
        As :func:`~rbd.constraints.collision.collide`.

    Warns
    -----
    UserWarning
        Once, when candidate pairs have no primitive routine: they are never
        tested, and :meth:`collide` lists those the broad tests pass as the
        reference does (``Contacts.unsupported``).
    """

    def __cinit__(self):
        memset(&self.c, 0, sizeof(CollisionC))

    def __dealloc__(self):
        free(self.c.geoms)
        free(self.c.pairs)

    def __init__(self, geoms, bodies, pairs=(), excludes=(), bint filterparent=True):
        geoms, pairs, excludes = tuple(geoms), tuple(pairs), tuple(excludes)
        table = _col.candidate_pairs(geoms, bodies, pairs, excludes, filterparent)
        index = {name: b for b, name in enumerate(bodies.names)}
        cdef Py_ssize_t i, k, ng = len(geoms), nt = len(table)
        cdef GeomC* g
        cdef PairC* pc
        cdef int most
        self.c.geoms = <GeomC*>malloc(max(ng, 1) * sizeof(GeomC))
        self.c.pairs = <PairC*>malloc(max(nt, 1) * sizeof(PairC))
        if self.c.geoms == NULL or self.c.pairs == NULL:
            raise MemoryError()
        self.c.ngeom, self.c.npair, self.c.nbody = ng, nt, 0
        for i, geom in enumerate(geoms):
            pose = np.asarray(getattr(geom, "pose", np.eye(4)), dtype=float)
            if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
                raise InputError(f"geoms: geom {getattr(geom, 'name', i)!r} has no finite "
                                 "(4, 4) pose")
            g = &self.c.geoms[i]
            g.kind = _col.KIND_CODE[geom.kind]
            g.body = index[geom.body] - 1
            self.c.nbody = max(self.c.nbody, g.body + 1)
            fill(g.size, np.resize(np.asarray(geom.size, dtype=float), 3), 3)
            fill(g.R, pose[:3, :3], 9)
            fill(g.p, pose[:3, 3], 3)
            g.margin, g.gap = geom.margin, geom.gap
            g.rbound = _col.bounding_radius(geom.kind, geom.size)
            g.bounded = geom.kind in _col.BOUNDED
            fill(g.half, _col.local_half_extents(geom.kind, geom.size) if g.bounded
                 else np.zeros(3), 3)
        unsupported, self.c.max_contacts, k = [], 0, 0
        for g1, g2, pair in table:
            a, b = geoms[g1], geoms[g2]
            if (a.kind, b.kind) in _col.NEVER:
                continue                      # MuJoCo never collides these
            pc = &self.c.pairs[k]
            k += 1
            pc.geom1, pc.geom2 = g1, g2
            pc.function = routine(self.c.geoms[g1].kind, self.c.geoms[g2].kind, &most)
            pc.most = most
            pc.boxed = pair is None and a.kind in _col.BOUNDED and b.kind in _col.BOUNDED
            margin, gap, condim, friction, solref, solimp, solreffriction = \
                _col.pair_parameters(a, b, pair)
            pc.margin, pc.gap, pc.condim = margin, gap, condim
            fill(pc.friction, np.maximum(friction, _col.MIN_FRICTION), 5)
            fill(pc.solref, solref, 2)
            fill(pc.solreffriction, solreffriction, 2)
            fill(pc.solimp, solimp, 5)
            self.c.max_contacts += most
            if pc.function == NULL:
                unsupported.append((a.kind, b.kind))
        self.c.npair, self.c.nunsupported = k, len(unsupported)
        if unsupported:
            warnings.warn(f"collide: no primitive routine for geom kinds "
                          f"{sorted(set(unsupported))}; {len(unsupported)} candidate pair(s) "
                          "never tested (see Contacts.unsupported)", stacklevel=3)
        self.geoms, self.pairs, self.excludes = geoms, pairs, excludes
        self.filterparent = filterparent

    @property
    def max_contacts(self) -> int:
        """Σ over the pair table of each routine's most contacts: a capacity never too small."""
        return self.c.max_contacts

    @property
    def npairs(self) -> int:
        """Pairs in the static table (those without a routine included)."""
        return self.c.npair

    @property
    def nbodies(self) -> int:
        """Rows of R, p the geoms refer to (the highest body row + 1)."""
        return self.c.nbody

    def table(self):
        """The static pair table: ``(geom1, geom2)`` per pair, in MuJoCo's order."""
        return [(self.c.pairs[k].geom1, self.c.pairs[k].geom2) for k in range(self.c.npair)]

    def matches(self, geoms, pairs=(), excludes=()) -> bool:
        """Whether this table was built from these very geoms, pairs and excludes."""
        return (len(geoms) == len(self.geoms) and all(a is b for a, b in zip(geoms, self.geoms))
                and len(pairs) == len(self.pairs)
                and all(a is b for a, b in zip(pairs, self.pairs))
                and tuple(excludes) == self.excludes)

    def collide(self, R, p, Py_ssize_t capacity=-1):
        """Contacts at body poses: :func:`rbd.constraints.collision.collide`'s result.

        Parameters
        ----------
        R : (nbodies, 3, 3) or (N, nbodies, 3, 3) array_like
            World rotations of the bodies (rows of :attr:`nbodies`).
        p : (nbodies, 3) or (N, nbodies, 3) array_like
            World origins.
        capacity : int, optional
            Contacts per state the output holds (default :attr:`max_contacts`).

        Returns
        -------
        Contacts, or a list of N Contacts

        Raises
        ------
        InputError
            On arrays of the wrong shape, or a ``capacity`` the contacts exceed.
        """
        cdef cnp.ndarray Ra = np.ascontiguousarray(R, dtype=float)
        cdef cnp.ndarray pa = np.ascontiguousarray(p, dtype=float)
        cdef Py_ssize_t nb = self.c.nbody, N, s, cap, status
        single = pa.ndim == 2
        if single:
            Ra, pa = Ra[None], pa[None]
        if (pa.ndim != 3 or pa.shape[1] < nb or pa.shape[2] != 3 or Ra.ndim != 4
                or Ra.shape[0] != pa.shape[0] or Ra.shape[1] != pa.shape[1]
                or Ra.shape[2] != 3 or Ra.shape[3] != 3):
            raise InputError(f"R, p: expected shapes ([N,] nb, 3, 3) and ([N,] nb, 3) with "
                             f"nb >= {nb}, got {np.shape(R)} and {np.shape(p)}")
        N, nb = pa.shape[0], pa.shape[1]
        cap = self.c.max_contacts if capacity < 0 else capacity
        cdef cnp.ndarray pos = np.empty((N, cap, 3))
        cdef cnp.ndarray frame = np.empty((N, cap, 3, 3))
        cdef cnp.ndarray dist = np.empty((N, cap))
        cdef cnp.ndarray geom = np.empty((N, cap, 2), dtype=np.intp)
        cdef cnp.ndarray condim = np.empty((N, cap), dtype=np.intp)
        cdef cnp.ndarray friction = np.empty((N, cap, 5))
        cdef cnp.ndarray solref = np.empty((N, cap, 2))
        cdef cnp.ndarray solreffriction = np.empty((N, cap, 2))
        cdef cnp.ndarray solimp = np.empty((N, cap, 5))
        cdef cnp.ndarray includemargin = np.empty((N, cap))
        cdef cnp.ndarray exclude = np.empty((N, cap), dtype=bool)
        cdef cnp.ndarray counts = np.empty(N, dtype=np.intp)
        cdef cnp.ndarray which = np.empty(max(self.c.nunsupported, 1), dtype=np.intp)
        cdef Py_ssize_t[::1] n_view = counts
        cdef ContactSetC out
        cdef const double* Rd = <const double*>cnp.PyArray_DATA(Ra)
        cdef const double* pd = <const double*>cnp.PyArray_DATA(pa)
        out.capacity = cap
        status = 0
        with nogil:
            for s in range(N):
                out.pos = <double*>cnp.PyArray_DATA(pos) + 3 * cap * s
                out.frame = <double*>cnp.PyArray_DATA(frame) + 9 * cap * s
                out.dist = <double*>cnp.PyArray_DATA(dist) + cap * s
                out.geom = <Py_ssize_t*>cnp.PyArray_DATA(geom) + 2 * cap * s
                out.condim = <Py_ssize_t*>cnp.PyArray_DATA(condim) + cap * s
                out.friction = <double*>cnp.PyArray_DATA(friction) + 5 * cap * s
                out.solref = <double*>cnp.PyArray_DATA(solref) + 2 * cap * s
                out.solreffriction = <double*>cnp.PyArray_DATA(solreffriction) + 2 * cap * s
                out.solimp = <double*>cnp.PyArray_DATA(solimp) + 5 * cap * s
                out.includemargin = <double*>cnp.PyArray_DATA(includemargin) + cap * s
                out.exclude = <unsigned char*>cnp.PyArray_DATA(exclude) + cap * s
                status = collide_into(&self.c, Rd + 9 * nb * s, pd + 3 * nb * s, &out)
                if status < 0:
                    break
                n_view[s] = out.n
        if status == -1:
            raise InputError(f"capacity: {cap} contacts per state are too few "
                             f"(max_contacts = {self.c.max_contacts} always suffices)")
        if status == -2:
            raise MemoryError()
        found = []
        for s in range(N):
            k = counts[s]
            unsupported = ()
            if self.c.nunsupported:
                m = unsupported_into(&self.c, Rd + 9 * nb * s, pd + 3 * nb * s,
                                     <Py_ssize_t*>cnp.PyArray_DATA(which))
                unsupported = tuple((self.c.pairs[which[j]].geom1, self.c.pairs[which[j]].geom2)
                                    for j in range(m))
            found.append(_col.Contacts(
                pos[s, :k], frame[s, :k], dist[s, :k], geom[s, :k], condim[s, :k],
                friction[s, :k], solref[s, :k], solreffriction[s, :k], solimp[s, :k],
                includemargin[s, :k], exclude[s, :k], unsupported))
        return found[0] if single else found
