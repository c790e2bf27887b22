# cython: language_level=3
"""The whole forward pass with contacts, joint limits and friction loss, compiled (``mj_forward``).

The compiled twin of ``rbd/constraints/forward.py``, for one state and a given
contact set (a :c:type:`ContactSetC`, ``contact_set.pxd``):

1. ``smooth_dynamics``: the stages of ``stages.pyx`` in MuJoCo's order, each joint
   transform computed once (``position``: X_up, S, the world poses, S⁰; skipped when the
   step's collision stage ran it), ``velocity``, M with armature (``composite_inertia``, in
   world coordinates), the bias h(q, v) (``bias``), ``passive_force`` (``passive.pyx``:
   damping, springs, ``mj_passive``) with ``fluid_force``, a₀ = M⁻¹(τ + τ_p − h) by
   the one factor M = Lᵀ L;
2. ``constrained_acceleration``: the rows in MuJoCo's order (``equality_rows``, the tendon
   equalities, ``_friction_rows``, ``_limit_rows`` each followed by the fixed tendons'
   (``tendon_rows.pyx``), ``_contact_rows``) with their impedance, R and aref (``mj_makeImpedance``,
   ``mj_referenceConstraint``), the free joints' velocity term (``free_joint_bias``),
   then MuJoCo's Newton solver (``c_solve_newton``) or PGS (``c_solve_pgs``).

``forward_into`` runs both without the GIL.  ``ForwardModel`` holds the static data,
built once per model from the reference helpers (``rbd.constraints.forward_compiled.kernel_data``):
reference inverse weights, limits, margins, solref/solimp per joint, friction loss,
damping, springs, MuJoCo's body weights per geom, the tendons, and the options; the equality
rows (``equality_rows.pyx``) and fluid forces (``fluid.pyx``, in τ_p).  Models the glue
refuses (``compiled_forward``) stay on the Python path (``rbd.forward``).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from rbd._kernels._base cimport CompiledBase
from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.contact_set cimport ContactSetC
from rbd._kernels.contact_rows cimport (contact_frame_rows, contact_jacobian, contact_rows,
                                       contact_soft_terms)
from rbd._kernels.crba cimport ltl, ltl_solve
from rbd._kernels.equality_rows cimport equality_c, equality_rows
from rbd._kernels.fluid cimport fluid_c, fluid_force
from rbd._kernels.impedance cimport impedance, regularizer
from rbd._kernels.passive cimport passive_force
from rbd._kernels.solver_newton cimport TREE_MIN_NV, RowsC
from rbd._kernels.solver_newton cimport c_solve_newton, warm_start
from rbd._kernels.solver_pgs cimport c_solve_pgs
from rbd._kernels.stages cimport bias, composite_inertia, position, velocity
from rbd._kernels.tendon_rows cimport (TendonModel, tendon_equality_rows, tendon_friction_rows,
                                       tendon_limit_rows, tendon_rows_fn)

cnp.import_array()

cdef enum:
    FRICTION = 1
    LIMIT = 2
    CONTACT = 3
    EQUALITY = 4
    #: rows of one contact at most (a pyramid of condim 6)
    CONTACT_ROWS = 10

# smooth dynamics

cdef inline int smooth_dynamics(const ForwardC* f, const ModelC* model, ForwardWork* fw,
                         const double* q, const double* v, const double* tau) noexcept nogil:
    """After the position stage: the body velocities, M (with armature), h and
    a₀ = M⁻¹(τ + τ_p − h) from the one factor M = Lᵀ L (mj_fwdVelocity, mj_fwdAcceleration,
    the stages of stages.pyx on the poses already computed); 1 when M is not positive
    definite."""
    cdef Py_ssize_t nv = model.nv, j
    velocity(model, fw.w, &fw.t, v)
    composite_inertia(model, fw.w, &fw.t)
    bias(model, fw.w, &fw.t)
    if f.tendon_M != NULL:          # + Σ a JᵀJ of the tendons (mj_tendonArmature)
        for j in range(nv * nv):
            fw.M[j] += f.tendon_M[j]
    passive_force(f, q, v, fw.a0)
    if f.fluid != NULL:
        fluid_force(f.fluid, model, fw.w, v, fw.a0)
    for j in range(nv):
        # a₀ = M⁻¹ (τ + τ_p − h)
        fw.a0[j] = ((tau[j] if tau != NULL else 0.0) + fw.a0[j]) - fw.bias[j]
    memcpy(fw.L, fw.M, nv * nv * sizeof(double))
    if ltl(model, fw.L):
        return 1
    ltl_solve(model, fw.L, fw.a0, 1)
    return 0


# constraint rows (mj_makeConstraint)

cdef inline void new_row(ForwardWork* fw, Py_ssize_t nv, int kind, int64_t ident) noexcept nogil:
    # a zero row at fw.nefc, of the given kind and id
    cdef Py_ssize_t r = fw.nefc
    memset(fw.J + r * nv, 0, nv * sizeof(double))
    fw.kind[r] = kind
    fw.ids[r] = ident
    fw.floss[r] = 0.0
    fw.cone_at[r] = -1


cdef void _friction_rows(const ForwardC* f, ForwardWork* fw, const double* v) noexcept nogil:
    """Dof friction loss: row e_j, aref = −b v_j, R from solreffriction/solimpfriction
    (mj_instantiateFriction; their constant parts precomputed)."""
    cdef Py_ssize_t s, j, r, nv = f.nv
    for s in range(f.nfriction):
        j = f.friction_dof[s]
        r = fw.nefc
        new_row(fw, nv, FRICTION, j)
        fw.J[r * nv + j] = 1.0
        fw.aref[r] = -f.friction_b[s] * v[j] - 0.0
        fw.R[r] = f.friction_R[s]
        fw.floss[r] = f.friction_loss[s]
        fw.nefc += 1
    fw.nf = f.nfriction


cdef void _limit_rows(const ForwardC* f, ForwardWork* fw, const double* q,
                      const double* v) noexcept nogil:
    """Joint limits of hinges and slides: the lower side active when q − lower < margin (row
    +e_j), the upper when upper − q < margin (row −e_j) (mj_instantiateLimit)."""
    cdef Py_ssize_t i, r, jq, jv, nv = f.nv
    cdef int side_i
    cdef double side, bound, dist, margin, imp
    for i in range(f.nlimit):
        jq = f.limit_q[i]
        jv = f.limit_v[i]
        margin = f.limit_margin[i]
        for side_i in range(2):
            side = -1.0 if side_i == 0 else 1.0
            bound = f.limit_bound[2 * i + side_i]
            if not isfinite(bound):
                continue
            dist = side * (bound - q[jq])
            if dist >= margin:
                continue
            r = fw.nefc
            new_row(fw, nv, LIMIT, jv)
            fw.J[r * nv + jv] = -side
            imp = impedance(f.limit_solimp + 5 * i, dist, margin)
            # aref = −b J v − k d (dist − margin)   (mj_referenceConstraint)
            fw.aref[r] = -f.limit_b[i] * (-side * v[jv]) - f.limit_k[i] * imp * (dist - margin)
            fw.R[r] = regularizer(imp, f.dof_weight[jv])
            fw.nefc += 1


cdef inline Py_ssize_t _tendon_rows(const ForwardC* f, ForwardWork* fw, const double* q,
                                    const double* v, int kind, tendon_rows_fn rows) noexcept nogil:
    # the fixed tendons' rows of one kind at fw.nefc (tendon_rows.pyx); their number
    cdef Py_ssize_t r, at = fw.nefc
    cdef Py_ssize_t n = rows(f.tendon, q, v, fw.J + at * f.nv, fw.aref + at, fw.R + at,
                             fw.floss + at, fw.ids + at)
    for r in range(at, at + n):
        fw.kind[r] = kind
        fw.cone_at[r] = -1
    fw.nefc += n
    return n


cdef int _contact_rows(const ForwardC* f, const ModelC* model, ForwardWork* fw,
                       const double* v) noexcept nogil:
    """Rows of the active contacts of fw.con (mj_instantiateContact, mj_diagApprox,
    mj_makeImpedance); 1 when they do not fit the workspace."""
    cdef const ContactSetC* con = &fw.con
    cdef Py_ssize_t c, r, t, n, ncols, nv = model.nv, g1, g2, b1, b2
    cdef double tran, s
    cdef const double* row
    for c in range(con.n):
        if con.exclude[c]:
            continue
        if fw.nefc + CONTACT_ROWS > fw.max_rows:
            return 1
        g1 = con.geom[2 * c]
        g2 = con.geom[2 * c + 1]
        b1 = f.geom_body[g1]
        b2 = f.geom_body[g2]
        ncols = contact_jacobian(model, fw, con.pos + 3 * c, b1, b2)
        # Â of the normal: the bodies' translational weights (body_invweight0)
        tran = 0.0
        if b1 >= 0:
            tran += f.geom_weight[g1]
        if b2 >= 0:
            tran += f.geom_weight[g2]
        contact_frame_rows(fw, nv, ncols, con.frame + 9 * c, con.condim[c])
        n = contact_rows(fw, nv, ncols, con.condim[c], con.friction + 5 * c, f.elliptic)
        for r in range(n):
            new_row_keep(fw, fw.nefc + r, CONTACT, c)
            # the row's velocity J_r v (over its columns: zero elsewhere)
            row = fw.J + (fw.nefc + r) * nv
            s = 0.0
            for t in range(ncols):
                s += row[fw.cols[t]] * v[fw.cols[t]]
            fw.vel[r] = s
        contact_soft_terms(f, fw, con, c, n, tran)
        fw.nefc += n
    return 0


cdef inline void new_row_keep(ForwardWork* fw, Py_ssize_t r, int kind,
                              int64_t ident) noexcept nogil:
    # row r's kind and id, its J already written
    fw.kind[r] = kind
    fw.ids[r] = ident
    fw.floss[r] = 0.0
    fw.cone_at[r] = -1


cdef inline void free_joint_bias(const ModelC* model, const double* v, double* b) noexcept nogil:
    # b = ω × u on each free joint's linear entries, 0 elsewhere: MuJoCo's rows act on its
    # free-joint acceleration (rbd.constraints.forward.free_joint_bias)
    cdef Py_ssize_t i, vs
    memset(b, 0, model.nv * sizeof(double))
    for i in range(model.nb):
        if model.jtype[i] == 6:                        # J_FREE
            vs = model.v_start[i]
            b[vs + 3] = v[vs + 1] * v[vs + 5] - v[vs + 2] * v[vs + 4]
            b[vs + 4] = v[vs + 2] * v[vs + 3] - v[vs] * v[vs + 5]
            b[vs + 5] = v[vs] * v[vs + 4] - v[vs + 1] * v[vs + 3]


cdef inline int solve_pgs(const ForwardC* f, ForwardWork* fw) noexcept nogil:
    # PGS (the call's iterations and tolerance, as rbd.forward) in a workspace of this call's size
    # (its Delassus matrix is nefc × nefc): 0, or 2 when M is not positive definite
    cdef Py_ssize_t nv = f.nv, n = fw.nefc, nc = fw.ncone, status
    cdef double* work = <double*>malloc((nv * nv + nv * n + n * n + 2 * n + 43 * nc + 1)
                                        * sizeof(double))
    if work == NULL:
        return 2
    status = c_solve_pgs(&fw.rows, fw.M, fw.a0, fw.qdd, fw.force, f.iterations,
                         f.tolerance, work)
    free(work)
    return 2 if status else 0


cdef inline int constrained_acceleration(const ForwardC* f, const ModelC* model, ForwardWork* fw,
                                  const double* q, const double* v) noexcept nogil:
    """The rows of fw.con, limits and friction loss, and their solve into fw.qdd, fw.force
    (after ``smooth_dynamics``); 0, 2 when the solver fails, 3 when the rows do not fit."""
    cdef Py_ssize_t nv = model.nv, r, j, t, nb, neq
    cdef double s
    fw.ncone = 0
    fw.nefc = neq = (0 if f.equality == NULL else equality_rows(
        f.equality, model, fw.w, q, v, fw.J, fw.aref, fw.R, fw.ids))
    for r in range(neq):
        fw.kind[r], fw.floss[r], fw.cone_at[r] = EQUALITY, 0.0, -1
    fw.rows.ne = neq + _tendon_rows(f, fw, q, v, EQUALITY, tendon_equality_rows)
    _friction_rows(f, fw, v)
    fw.nf += _tendon_rows(f, fw, q, v, FRICTION, tendon_friction_rows)
    if f.limits:
        _limit_rows(f, fw, q, v)
        _tendon_rows(f, fw, q, v, LIMIT, tendon_limit_rows)
    if _contact_rows(f, model, fw, v):
        return 3
    free_joint_bias(model, v, fw.bvec)
    nb = 0
    for j in range(nv):                   # b's nonzero entries (fw.cols: free after the rows)
        if fw.bvec[j] != 0.0:
            fw.cols[nb] = j
            nb += 1
    for r in range(fw.nefc):
        # aref ← aref − J b (tendon equality rows too: _with_tendon_rows), over b's nonzero
        # entries;  D = 1 / R
        s = 0.0
        for t in range(nb):
            s += fw.J[r * nv + fw.cols[t]] * fw.bvec[fw.cols[t]]
        fw.aref[r] -= s if r >= neq else 0.0      # not on equality_rows' (their own J̇ v)
        fw.D[r] = 1 / fw.R[r]
    memcpy(fw.qdd, fw.a0, nv * sizeof(double))
    if fw.nefc == 0:
        return 0
    fw.rows.nefc = fw.nefc
    fw.rows.nf = fw.nf
    fw.rows.ncone = fw.ncone
    if f.pgs:
        return solve_pgs(f, fw)
    # the Newton factor along the kinematic tree when the rows allow, from TREE_MIN_NV dofs
    # on (below, the dense factor is faster)
    fw.nw.model = model if fw.rows.nv >= TREE_MIN_NV else NULL
    if fw.warm != NULL:
        warm_start(&fw.rows, fw.M, fw.a0, fw.warm, fw.qdd, &fw.nw)
    return 2 if c_solve_newton(&fw.rows, fw.M, fw.a0, fw.qdd, fw.force, f.iterations,
                               f.tolerance, &fw.nw, fw.warm != NULL) else 0


cdef int forward_into(const ForwardC* f, const ModelC* model, ForwardWork* fw, const double* q,
                      const double* v, const double* tau, bint posed) noexcept nogil:
    """The forward pass at (q, v, τ) with the contact set in fw.con: fw.qdd, fw.force, the
    rows (mj_forward); 0, or 1 (M not positive definite), 2 (solver), 3 (rows do not fit).
    ``posed``: the position stage (joint transforms, world poses, S⁰: stages.position) already
    ran at q in fw.w, as the step's collision stage runs it (mj_fwdPosition once a step)."""
    if not posed:
        position(model, fw.w, &fw.t, q)
    if smooth_dynamics(f, model, fw, q, v, tau):
        return 1
    return constrained_acceleration(f, model, fw, q, v)


# the Python-facing classes

cdef enum:
    CACHE_LINE = 64               # bytes


cdef inline void* _zeros(list keep, Py_ssize_t n, dtype=np.float64) except NULL:
    # the data of a zeroed array of n entries (at least one), kept alive by ``keep``, on
    # cache lines of its own: the threads of a batch write their own workspaces, and two
    # small arrays of different threads side by side in the heap would share a line
    return cnp.PyArray_DATA(_aligned(keep, max(n, 1), dtype))


cdef inline cnp.ndarray _aligned(list keep, Py_ssize_t n, dtype):
    # a zeroed array of n entries that starts and ends on a cache line (kept by ``keep``)
    cdef Py_ssize_t size = n * np.dtype(dtype).itemsize
    raw = np.zeros(size + 2 * CACHE_LINE, dtype=np.uint8)
    keep.append(raw)
    cdef Py_ssize_t start = (CACHE_LINE - <Py_ssize_t>cnp.PyArray_DATA(raw) % CACHE_LINE) % CACHE_LINE
    return raw[start:start + size].view(dtype)


cdef inline int _bind_contacts(ContactSetC* con, list keep, Py_ssize_t capacity) except -1:
    con.n = 0
    con.capacity = capacity
    con.pos = <double*>_zeros(keep, 3 * capacity)
    con.frame = <double*>_zeros(keep, 9 * capacity)
    con.dist = <double*>_zeros(keep, capacity)
    con.geom = <Py_ssize_t*>_zeros(keep, 2 * capacity, np.intp)
    con.condim = <Py_ssize_t*>_zeros(keep, capacity, np.intp)
    con.friction = <double*>_zeros(keep, 5 * capacity)
    con.solref = <double*>_zeros(keep, 2 * capacity)
    con.solreffriction = <double*>_zeros(keep, 2 * capacity)
    con.solimp = <double*>_zeros(keep, 5 * capacity)
    con.includemargin = <double*>_zeros(keep, capacity)
    con.exclude = <unsigned char*>_zeros(keep, capacity, np.uint8)
    return 0


cdef inline int _bind_work(ForwardWork* fw, const ForwardC* f, Py_ssize_t nb, Py_ssize_t nq,
                           Py_ssize_t nv, Py_ssize_t capacity, list keep) except -1:
    # every array of one thread's ForwardWork, sized for ``capacity`` contacts; the stages'
    # Terms over its M, L, h (no frame Jacobians; M factored as Lᵀ L, the tree's pattern)
    cdef Py_ssize_t mr = (f.nfriction + 2 * f.nlimit + CONTACT_ROWS * capacity
                          + f.tendon.nfriction + 2 * f.tendon.nlimit + f.tendon.nequality
                          + (0 if f.equality == NULL else f.equality.rows.m))
    cdef Py_ssize_t mc = capacity
    fw.t.M = fw.M = <double*>_zeros(keep, nv * nv)
    fw.t.L = fw.L = <double*>_zeros(keep, nv * nv)
    fw.t.h = fw.bias = <double*>_zeros(keep, nv)
    fw.t.q, fw.t.qd = <double*>_zeros(keep, nq), <double*>_zeros(keep, nv)
    fw.t.g = NULL                 # generalized gravity: not read by the forward pass
    fw.t.J, fw.t.frame_body, fw.t.frame_point, fw.t.nframes, fw.t.sparse = NULL, NULL, NULL, 0, 1
    fw.a0 = <double*>_zeros(keep, nv)
    fw.qdd = <double*>_zeros(keep, nv)
    fw.jac = <double*>_zeros(keep, 6 * nv)
    fw.frame_rows = <double*>_zeros(keep, 6 * nv)
    fw.cols = <Py_ssize_t*>_zeros(keep, nv, np.intp)
    fw.path = <Py_ssize_t*>_zeros(keep, 2 * nb, np.intp)
    fw.vel = <double*>_zeros(keep, CONTACT_ROWS)
    fw.bvec = <double*>_zeros(keep, nv)
    fw.a_step = <double*>_zeros(keep, nv)
    fw.warm = NULL
    fw.max_rows = mr
    fw.nefc = fw.nf = fw.ncone = 0
    fw.J = <double*>_zeros(keep, mr * nv)
    fw.aref = <double*>_zeros(keep, mr)
    fw.D = <double*>_zeros(keep, mr)
    fw.R = <double*>_zeros(keep, mr)
    fw.floss = <double*>_zeros(keep, mr)
    fw.force = <double*>_zeros(keep, mr)
    fw.kind = <int64_t*>_zeros(keep, mr, np.int64)
    fw.ids = <int64_t*>_zeros(keep, mr, np.int64)
    fw.cone_start = <Py_ssize_t*>_zeros(keep, mc, np.intp)
    fw.cone_dim = <Py_ssize_t*>_zeros(keep, mc, np.intp)
    fw.cone_mu = <double*>_zeros(keep, mc)
    fw.cone_friction = <double*>_zeros(keep, 5 * mc)
    fw.cone_at = <Py_ssize_t*>_zeros(keep, mr, np.intp)
    fw.rows.nv = nv
    fw.rows.ne = 0
    fw.rows.J, fw.rows.aref, fw.rows.D, fw.rows.R = fw.J, fw.aref, fw.D, fw.R
    fw.rows.floss, fw.rows.cone_at = fw.floss, fw.cone_at
    fw.rows.cone_start, fw.rows.cone_dim = fw.cone_start, fw.cone_dim
    fw.rows.cone_mu, fw.rows.cone_friction = fw.cone_mu, fw.cone_friction
    # the Newton workspace (solver_newton.pyx's _Workspace)
    fw.nw.jar, fw.nw.force = <double*>_zeros(keep, mr), <double*>_zeros(keep, mr)
    fw.nw.Ja, fw.nw.Jstep = <double*>_zeros(keep, mr), <double*>_zeros(keep, mr)
    fw.nw.quadratic = <unsigned char*>_zeros(keep, mr + 1, np.uint8)
    fw.nw.hcone = <double*>_zeros(keep, 36 * mc)
    fw.nw.state = <int*>_zeros(keep, mc + 1, np.intc)
    fw.nw.Mstep, fw.nw.grad = <double*>_zeros(keep, nv), <double*>_zeros(keep, nv)
    fw.nw.step = <double*>_zeros(keep, nv)
    fw.nw.H = <double*>_zeros(keep, nv * nv)
    fw.nw.L, fw.nw.upd = <double*>_zeros(keep, nv * nv), <double*>_zeros(keep, nv)
    fw.nw.Ma = <double*>_zeros(keep, nv)
    fw.nw.oldq = <unsigned char*>_zeros(keep, mr + 1, np.uint8)
    fw.nw.nnz = <Py_ssize_t*>_zeros(keep, mr, np.intp)
    fw.nw.cols = <Py_ssize_t*>_zeros(keep, mr * nv, np.intp)
    fw.nw.model, fw.nw.tree = NULL, False     # model: constrained_acceleration
    _bind_contacts(&fw.con, keep, capacity)
    return 0


cdef class ForwardWorkspace:
    """The workspaces of ``nthreads`` threads, each for up to ``capacity`` contacts."""

    def __init__(self, ForwardModel fm, int nthreads, Py_ssize_t capacity):
        cdef CompiledBase cm = fm.compiled
        cdef int t
        self.keep = []
        self.nthreads = nthreads
        self.capacity = capacity
        self.fw = <ForwardWork*>malloc(nthreads * sizeof(ForwardWork))
        if self.fw == NULL:
            raise MemoryError()
        for t in range(nthreads):
            # each thread's Work record and data on cache lines of their own (_zeros)
            self.fw[t].w = <Work*>_zeros(self.keep, sizeof(Work), np.uint8)
            cm._bind(self.fw[t].w, _aligned(self.keep, cm.data.size, np.float64))
            _bind_work(&self.fw[t], &fm.c, cm.m.nb, cm.m.nq, cm.m.nv, capacity, self.keep)

    def __dealloc__(self):
        free(self.fw)


cdef class ForwardModel:
    """The static data of a model's compiled forward pass (``ForwardC``), built once.

    Parameters
    ----------
    compiled : CompiledBase
        :func:`rbd.algorithms.compiled` of the model.
    data : dict
        ``rbd.constraints.forward_compiled.kernel_data``: the arrays named as ``ForwardC``'s fields
        and the options ``timestep``, ``impratio``.
    max_contacts : int
        Contacts a step can hold (the collision model's bound).
    """

    def __init__(self, CompiledBase compiled, dict data, Py_ssize_t max_contacts):
        self.compiled = compiled
        self.max_contacts = max_contacts
        self._workspace = None
        self._busy = False
        ints = {k: np.ascontiguousarray(data[k], dtype=np.int64)
                for k in ("friction_dof", "limit_q", "limit_v", "spring_q", "spring_v",
                          "ball_q", "ball_v", "ball_free", "geom_body")}
        reals = {k: np.ascontiguousarray(data[k], dtype=np.float64)
                 for k in ("dof_weight", "damping", "friction_loss", "friction_b",
                           "friction_R", "limit_bound", "limit_margin", "limit_k", "limit_b",
                           "limit_solimp", "spring_k", "spring_ref", "ball_k", "ball_ref",
                           "geom_weight", "tendon_M")}
        self.keep = (ints, reals, data.get("equality"), data.get("fluid"))
        self.c.equality = equality_c(data.get("equality"))
        self.c.fluid = fluid_c(data.get("fluid"))
        self.c.nv = compiled.m.nv
        self.c.timestep = data["timestep"]
        self.c.impratio, self.c.eulerdamp = data["impratio"], data.get("eulerdamp", True)
        self.c.dof_weight = _const(reals["dof_weight"])
        self.c.damping = _const(reals["damping"])
        self.c.nfriction = len(ints["friction_dof"])
        self.c.friction_dof = _const_int(ints["friction_dof"])
        self.c.friction_loss = _const(reals["friction_loss"])
        self.c.friction_b = _const(reals["friction_b"])
        self.c.friction_R = _const(reals["friction_R"])
        self.c.nlimit = len(ints["limit_q"])
        self.c.limit_q = _const_int(ints["limit_q"])
        self.c.limit_v = _const_int(ints["limit_v"])
        self.c.limit_bound = _const(reals["limit_bound"])
        self.c.limit_margin = _const(reals["limit_margin"])
        self.c.limit_k = _const(reals["limit_k"])
        self.c.limit_b = _const(reals["limit_b"])
        self.c.limit_solimp = _const(reals["limit_solimp"])
        self.c.nspring = len(ints["spring_q"])
        self.c.spring_q = _const_int(ints["spring_q"])
        self.c.spring_v = _const_int(ints["spring_v"])
        self.c.spring_k = _const(reals["spring_k"])
        self.c.spring_ref = _const(reals["spring_ref"])
        self.c.nball = len(ints["ball_q"])
        self.c.ball_q, self.c.ball_v = _const_int(ints["ball_q"]), _const_int(ints["ball_v"])
        self.c.ball_free = _const_int(ints["ball_free"])
        self.c.ball_k, self.c.ball_ref = _const(reals["ball_k"]), _const(reals["ball_ref"])
        self.c.tendon_M = _const(reals["tendon_M"]) if reals["tendon_M"].size else NULL
        self.c.ngeom = len(ints["geom_body"])
        self.c.geom_body = _const_int(ints["geom_body"])
        self.c.geom_weight = _const(reals["geom_weight"])
        self.tendons = TendonModel(data["tendon"])
        self.c.tendon = &(<TendonModel>self.tendons).c
        self.call_options(&self.c, "pyramidal", "newton", 100, 1e-14, True)   # defaults

    cdef int call_options(self, ForwardC* f, str cone, str solver, Py_ssize_t iterations,
                          double tolerance, bint limits) except -1:
        """``f``: this model's static data with one call's options.  Every call runs on its
        own copy (scalars and pointers to the shared constant arrays), so that threads
        running one model with different options do not write each other's."""
        f[0] = self.c
        f.limits = limits
        f.elliptic = cone == "elliptic"
        f.pgs = solver == "pgs"
        f.iterations = iterations
        f.tolerance = tolerance
        return 0

    cdef ForwardWorkspace take_workspace(self, int nthreads, Py_ssize_t capacity):
        """A :class:`ForwardWorkspace` of at least ``nthreads`` threads and ``capacity``
        contacts for one call: the one kept from an earlier call when it is large enough and
        not in use (its sizes depend on nothing else: the rows' counts are this model's),
        else a new one, kept in its place unless that one is in use.  Hand it back with
        :meth:`give_back` (checked and set with the GIL held: two threads never share one)."""
        ws = self._workspace
        if self._busy or ws is None or ws.nthreads < nthreads or ws.capacity < capacity:
            ws = ForwardWorkspace(self, nthreads, capacity)
            if self._busy:
                return ws
            self._workspace = ws
        self._busy = True
        return ws

    cdef void give_back(self, ForwardWorkspace ws) noexcept:
        # the call that took ``ws`` has finished with it
        if ws is self._workspace:
            self._busy = False

    def forward(self, q, v, tau, contacts, str cone="pyramidal", str solver="newton",
                Py_ssize_t iterations=100, double tolerance=1e-14, bint limits=True):
        """The compiled forward pass at one state with a given contact set.

        Parameters
        ----------
        q, v, tau : ndarray
            Validated, float64.
        contacts : rbd.constraints.collision.Contacts
        cone, solver, iterations, tolerance, limits
            As :func:`rbd.forward`.

        Returns
        -------
        status, dict
            ``status`` as ``forward_into``'s;
            ``qdd``, ``qdd_smooth``, ``force``, the rows (``J``, ``aref``, ``D``, ``R``,
            ``frictionloss``, ``nf``, ``cones``) and ``kinds`` (1, 2, 3), ``ids``.
        """
        cdef CompiledBase cm = self.compiled
        cdef ForwardWorkspace ws
        cdef ForwardWork* fw
        cdef ForwardC f                                 # this call's options (call_options)
        cdef int status
        cdef Py_ssize_t n = len(contacts), nv = cm.m.nv
        cdef cnp.ndarray qc = np.ascontiguousarray(q, dtype=np.float64)
        cdef cnp.ndarray vc = np.ascontiguousarray(v, dtype=np.float64)
        cdef cnp.ndarray tc = np.ascontiguousarray(tau, dtype=np.float64)
        self.call_options(&f, cone, solver, iterations, tolerance, limits)
        ws = self.take_workspace(1, max(n, self.max_contacts))
        try:
            fw = &ws.fw[0]
            fw.warm = NULL                             # (a kept workspace's last run set it)
            self.fill_contacts(&fw.con, contacts)
            with nogil:
                status = forward_into(&f, &cm.m, fw, <const double*>cnp.PyArray_DATA(qc),
                                      <const double*>cnp.PyArray_DATA(vc),
                                      <const double*>cnp.PyArray_DATA(tc), False)
            return status, results(fw, nv)
        finally:
            self.give_back(ws)

    cdef int fill_contacts(self, ContactSetC* con, contacts) except -1:
        """Copy a Python contact set (``rbd.collide``'s ``Contacts``) into ``con``; −1 when it
        holds more contacts than ``con.capacity``."""
        cdef Py_ssize_t n = len(contacts)
        if n > con.capacity:
            return -1
        con.n = n
        if n == 0:
            return 0
        _copy(con.pos, contacts.pos, 3 * n)
        _copy(con.frame, contacts.frame, 9 * n)
        _copy(con.dist, contacts.dist, n)
        _copy(con.friction, contacts.friction, 5 * n)
        _copy(con.solref, contacts.solref, 2 * n)
        _copy(con.solreffriction, contacts.solreffriction, 2 * n)
        _copy(con.solimp, contacts.solimp, 5 * n)
        _copy(con.includemargin, contacts.includemargin, n)
        geom = np.ascontiguousarray(contacts.geom, dtype=np.intp)
        condim = np.ascontiguousarray(contacts.condim, dtype=np.intp)
        exclude = np.ascontiguousarray(contacts.exclude, dtype=np.uint8)
        memcpy(con.geom, cnp.PyArray_DATA(geom), 2 * n * sizeof(Py_ssize_t))
        memcpy(con.condim, cnp.PyArray_DATA(condim), n * sizeof(Py_ssize_t))
        memcpy(con.exclude, cnp.PyArray_DATA(exclude), n)
        return 0


cdef inline const double* _const(cnp.ndarray a):
    return <const double*>cnp.PyArray_DATA(a)


cdef inline const int64_t* _const_int(cnp.ndarray a):
    return <const int64_t*>cnp.PyArray_DATA(a)


cdef inline void _copy(double* out, value, Py_ssize_t n):
    arr = np.ascontiguousarray(value, dtype=np.float64)
    memcpy(out, cnp.PyArray_DATA(arr), n * sizeof(double))


cdef inline dict results(ForwardWork* fw, Py_ssize_t nv):
    """The arrays of one ``forward_into`` call, copied out of the workspace."""
    cdef Py_ssize_t n = fw.nefc, k
    cones = []
    for k in range(fw.ncone):
        cones.append((fw.cone_start[k], fw.cone_dim[k], fw.cone_mu[k],
                      np.array(<double[:5]>(fw.cone_friction + 5 * k))))
    return {"qdd": np.array(<double[:nv]>fw.qdd), "qdd_smooth": np.array(<double[:nv]>fw.a0),
            "M": np.array(<double[:nv * nv]>fw.M).reshape(nv, nv), "ne": fw.rows.ne,
            "force": _take(fw.force, n), "J": _take(fw.J, n * nv).reshape(n, nv),
            "aref": _take(fw.aref, n), "D": _take(fw.D, n), "R": _take(fw.R, n),
            "frictionloss": _take(fw.floss, n), "nf": fw.nf, "cones": tuple(cones),
            "kinds": np.array([int(fw.kind[k]) for k in range(n)], dtype=int),
            "ids": np.array([int(fw.ids[k]) for k in range(n)], dtype=int)}


cdef inline cnp.ndarray _take(double* p, Py_ssize_t n):
    if n == 0:
        return np.zeros(0)
    return np.array(<double[:n]>p)
