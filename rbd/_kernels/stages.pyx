# cython: language_level=3
"""The stage pipeline over one caller-owned ``rbd.Data``, compiled.

The compiled twin of ``rbd/reference/stages.py``: the same stages, passes and
symbols, in MuJoCo's order (position, velocity, composite inertia and ``M``,
the factor of ``M``, bias forces, Jacobians of named frames; then forward
dynamics with the factor).  Each stage reads what the earlier ones wrote and writes its
own fields of the workspace ``Work`` and of ``Terms`` (``stages.pxd``), both
pointing into the buffer of an :class:`rbd.data.Data`.  The passes are the
shared steps of the one-call kernels: ``joint_step`` and ``world_pose``
(position), ``body_velocity`` (``rnea.pxd``), ``composite_inertias`` and
``block_rows`` (``crba.pxd``), ``ltl``/``ltl_solve`` or LAPACK's dense
Cholesky (the crossover ``factor_sparse``).

``compute_all(twin, data, q, qd, tau=None)`` is the checked entry point
behind :func:`rbd.compute_all`: one state, or a batch in threads (one state
of ``data`` each, ``data.state(k)``).
"""

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs

from rbd._kernels cimport _args
from rbd._kernels cimport _base
from rbd._kernels._base cimport CompiledBase
from rbd._kernels._model cimport (
    J_PLANAR,
    J_SYMBOLIC,
    J_UNIVERSAL,
    ModelC,
    Work,
    armature_bias_add,
    jcalc,
    joint_step,
)
from rbd._kernels._spatial cimport (
    crf_apply,
    crm_apply,
    cross3,
    dot6,
    mat3_vec,
    mat3T_vec,
    rbi_apply,
    xform_force_T_add,
    xform_motion,
)
from rbd._kernels.crba cimport (
    block_rows,
    composite_inertias,
    ltl,
    ltl_solve,
    motion_to_root,
)
from rbd._kernels.kinematics cimport world_pose
from rbd._kernels.rnea cimport body_velocity

import numpy as np

from rbd.errors import InputError, ModelError

cnp.import_array()

#: The fields of rbd.data.Data behind Work and Terms, in the order of ``bind``.
FIELDS = ("E_up", "r_up", "S_cols", "c_J", "v", "a", "f", "c", "pA", "IA", "U_cols", "D",
          "D_inv", "u", "m_C", "h_C", "I_C", "S0", "F0", "R", "p", "C", "F", "scratch", "J",
          "dVdq", "dAdq", "dAdv", "B_C", "qdd", "q", "qd", "M", "L", "h", "g")
DEF NFIELDS = 36


cdef void position(const ModelC* model, Work* w, Terms* t, const double* q) noexcept nogil:
    """X_up, S, world poses R, p, centres of mass C and S⁰ = X_0,i⁻¹ S (world) at q."""
    cdef Py_ssize_t i, k, vi
    memcpy(t.q, q, model.nq * sizeof(double))
    # --- outward pass: joint transforms, world poses
    for i in range(model.nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i)
        joint_step(model, w, i, q, NULL)
        # R_i = R_λ(i) E_upᵀ,  p_i = p_λ(i) + R_λ(i) r_up
        world_pose(model, w, i)
        # C_i = R_i c_i + p_i
        mat3_vec(w.R + 9 * i, model.com + 3 * i, w.C + 3 * i)
        for k in range(3):
            w.C[3 * i + k] += w.p[3 * i + k]
        vi = model.v_start[i]
        for k in range(model.nv_j[i]):
            # S⁰ = X_0,i⁻¹ S_i = [R S_ω; R S_v + p × R S_ω]
            motion_to_root(w, i, w.S + 6 * (vi + k), w.S0 + 6 * (vi + k))


cdef void velocity(const ModelC* model, Work* w, Terms* t, const double* qd) noexcept nogil:
    """Body velocities v and bias accelerations c = c_J + v × v_J at q̇ (after position)."""
    cdef Py_ssize_t i, k
    cdef double v_J[6]
    cdef double E[9]
    cdef double r[3]
    cdef double S[36]
    cdef int64_t code
    memcpy(t.qd, qd, model.nv * sizeof(double))
    # --- outward pass: velocities, bias accelerations
    for i in range(model.nb):
        code = model.jtype[i]
        if code == J_UNIVERSAL or code == J_PLANAR or code == J_SYMBOLIC:
            # c_J = Ṡ q̇ (the other joints have a constant S in body coordinates: c_J = 0)
            jcalc(model, i, t.q, qd, E, r, S, w.c_J + 6 * i)
        else:
            memset(w.c_J + 6 * i, 0, 6 * sizeof(double))
        # v_J = S_i q̇_i;  v_i = X_up[i] v_λ(i) + v_J
        body_velocity(model, w, i, qd, v_J)
        # c_i = c_J + v_i × v_J
        crm_apply(w.v + 6 * i, v_J, w.c + 6 * i)
        for k in range(6):
            w.c[6 * i + k] += w.c_J[6 * i + k]                             # S&G (11)


cdef void composite_inertia(const ModelC* model, Work* w, Terms* t) noexcept nogil:
    """IC (m_C, h_C, I_C), F0 and M = Σ S⁰ᵀ F⁰ + diag(armature) (after position)."""
    # --- inward pass: composite inertias
    composite_inertias(model, w)

    # --- block rows: project the composite inertia onto every ancestor's joint
    # (in world coordinates: M_ji = S⁰_j · F⁰)
    block_rows(model, w, t.M)


cdef inline bint factor_sparse(const ModelC* model):
    # factor M = Lᵀ L with the tree's pattern (ltl: ~Σ_k d_k² / 2 multiply-adds, d_k the
    # depth of degree of freedom k) or densely by LAPACK (M = L Lᵀ: nv³/6, faster per
    # operation but with a fixed cost): measured (docs/benchmarks.md), the sparse one wins
    # up to 12 degrees of freedom and wherever 8 Σ_k d_k² ≤ nv³ (the humanoid, trees),
    # the dense one on chains (RC20).  Derivatives solve nv right-hand sides: their
    # crossover is crba.pxd's sparse_pays.
    cdef Py_ssize_t k, total = 0
    cdef int64_t* depth = <int64_t*>malloc(max(model.nv, 1) * sizeof(int64_t))
    if depth == NULL:
        raise MemoryError()
    for k in range(model.nv):
        depth[k] = 1 + (depth[model.dof_parent[k]] if model.dof_parent[k] >= 0 else 0)
        total += depth[k] * depth[k]
    free(depth)
    return model.nv <= 12 or 8 * total <= model.nv * model.nv * model.nv


cdef int factor(const ModelC* model, Work* w, Terms* t) noexcept nogil:
    """L: M = Lᵀ L (tree pattern) when t.sparse (factor_sparse), else M = L Lᵀ; 0 or 1 + the
    failing degree of freedom."""
    cdef Py_ssize_t n = model.nv, r, c
    cdef int nn = <int>n, info = 0
    memcpy(t.L, t.M, n * n * sizeof(double))
    if n == 0:
        return 0
    if t.sparse:
        # M = Lᵀ L
        info = ltl(model, t.L)
    else:
        # M = L Lᵀ: the row-major lower triangle is LAPACK's column-major upper one
        dpotrf(b"U", &nn, t.L, &nn, &info)
    for r in range(n):
        for c in range(r + 1, n):
            t.L[r * n + c] = 0.0
    return info


cdef void bias(const ModelC* model, Work* w, Terms* t) noexcept nogil:
    """h = C q̇ + g (RNEA at q̈ = 0) and g_i = S_iᵀ IC_i [0; -R_iᵀ g] (after the stages above;
    g left out when ``t.g`` is NULL, as in the forward pass of the contact step)."""
    cdef Py_ssize_t nb = model.nb, i, j, k, p, vi
    cdef const double* a_p
    cdef double* a_i
    cdef double* f_i
    cdef double Iv[6]
    cdef double a_g[6]
    cdef double f_g[6]
    # --- outward pass: accelerations and forces at zero joint acceleration
    for i in range(nb):
        p = model.parent[i]
        a_i = w.a + 6 * i
        f_i = w.f + 6 * i
        # a_i = X_up[i] a_λ(i) + c_i
        a_p = <const double*>&model.a0[0] if p < 0 else w.a + 6 * p
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, a_p, a_i)
        for k in range(6):
            a_i[k] += w.c[6 * i + k]                                        # S&G (11)
        # f_i = v_i ×* I_i v_i
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, w.v + 6 * i, Iv)
        crf_apply(w.v + 6 * i, Iv, f_i)                                     # S&G (21)
        # f_i = I_i a_i + f_i
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, a_i, Iv)
        for k in range(6):
            f_i[k] += Iv[k]                                                 # RBDA T5.1

    # --- inward pass: joint forces
    for i in range(nb - 1, -1, -1):
        vi = model.v_start[i]
        f_i = w.f + 6 * i
        for j in range(model.nv_j[i]):
            # h_i = S_iᵀ f_i
            t.h[vi + j] = dot6(w.S + 6 * (vi + j), f_i)                     # RBDA T5.1
        if t.g != NULL:
            # f_g = IC_i a_g,  a_g = [0; -R_iᵀ g];  g_i = S_iᵀ f_g
            mat3T_vec(w.R + 9 * i, model.gravity, a_g + 3)
            for k in range(3):
                a_g[k] = 0.0
                a_g[3 + k] = -a_g[3 + k]
            rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, a_g, f_g)
            for j in range(model.nv_j[i]):
                t.g[vi + j] = dot6(w.S + 6 * (vi + j), f_g)
        # h_i += a ⊙ (ω × u)   (a free joint's armature, on its linear rows)
        armature_bias_add(model, i, t.qd, 1.0, t.h)
        p = model.parent[i]
        if p >= 0:
            # f_λ(i) += X_up[i]ᵀ f_i
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, f_i, w.f + 6 * p)  # RBDA T5.1


cdef void jacobians(const ModelC* model, Work* w, Terms* t) noexcept nogil:
    """J of each frame (6 × nv, row-major): ancestor column [S⁰_ω; S⁰_v + S⁰_ω × x]."""
    cdef Py_ssize_t nv = model.nv, f, i, j, k, col
    cdef double x[3]
    cdef double wx[3]
    cdef double* J
    for f in range(t.nframes):
        i = t.frame_body[f]
        J = t.J + 6 * nv * f
        # x = R_i point + p_i
        mat3_vec(w.R + 9 * i, t.frame_point + 3 * f, x)
        for k in range(3):
            x[k] += w.p[3 * i + k]
        memset(J, 0, 6 * nv * sizeof(double))
        # --- walk to the root: the columns of the joints that move the frame
        j = i
        while j >= 0:
            for col in range(model.v_start[j], model.v_start[j] + model.nv_j[j]):
                # [ω; v] = [S⁰_ω; S⁰_v + S⁰_ω × x]
                cross3(w.S0 + 6 * col, x, wx)
                for k in range(3):
                    J[k * nv + col] = w.S0[6 * col + k]
                    J[(3 + k) * nv + col] = w.S0[6 * col + 3 + k] + wx[k]
            j = model.parent[j]


cdef int solve(const ModelC* model, Work* w, Terms* t, const double* tau) noexcept nogil:
    """q̈ = M⁻¹ (τ - h) from the factor into w.qdd (after factor and bias)."""
    cdef Py_ssize_t n = model.nv, k
    cdef int nn = <int>n, one = 1, info = 0
    for k in range(n):
        w.qdd[k] = tau[k] - t.h[k]
    if n == 0:
        return 0
    if t.sparse:
        # q̈ = L⁻¹ L⁻ᵀ (τ - h)
        ltl_solve(model, t.L, w.qdd, 1)
    else:
        # q̈ = L⁻ᵀ L⁻¹ (τ - h)   (LAPACK's upper factor is the row-major L)
        dpotrs(b"U", &nn, &one, t.L, &nn, w.qdd, &nn, &info)
    return info


cdef int c_compute_all(const ModelC* model, Work* w, Terms* t, const double* q,
                       const double* qd, const double* tau) noexcept nogil:
    # every stage in order at (q, q̇); with τ also q̈; 0 or 1 + the failing degree of freedom
    cdef int status
    position(model, w, t, q)
    velocity(model, w, t, qd)
    composite_inertia(model, w, t)
    status = factor(model, w, t)
    if status:
        return status
    bias(model, w, t)
    jacobians(model, w, t)
    if tau != NULL:
        return solve(model, w, t, tau)
    return 0


cdef inline void bind(Work* w, Terms* t, double* base, const int64_t* start,
                      const int64_t* step, Py_ssize_t k) noexcept nogil:
    # the pointers of state k: field n at base + start[n] + k step[n] (FIELDS order)
    cdef double* x[NFIELDS]
    cdef int n
    for n in range(NFIELDS):
        x[n] = base + start[n] + k * step[n]
    w.E_up = x[0]; w.r_up = x[1]; w.S = x[2]; w.c_J = x[3]; w.v = x[4]; w.a = x[5]
    w.f = x[6]; w.c = x[7]; w.pA = x[8]; w.IA = x[9]; w.U = x[10]; w.D = x[11]
    w.D_inv = x[12]; w.u = x[13]; w.m_C = x[14]; w.h_C = x[15]; w.I_C = x[16]; w.S0 = x[17]
    w.F0 = x[18]; w.R = x[19]; w.p = x[20]; w.C = x[21]; w.F = x[22]; w.scratch = x[23]
    w.J = x[24]; w.dVdq = x[25]; w.dAdq = x[26]; w.dAdv = x[27]; w.B_C = x[28]
    w.qdd = x[29]; t.q = x[30]; t.qd = x[31]; t.M = x[32]; t.L = x[33]; t.h = x[34]
    t.g = x[35]
    w.status = 0


cdef inline tuple bound_data(CompiledBase twin, object data):
    # what a run needs of data, kept on it until its frames or its model change:
    # (twin, buffer, (2, NFIELDS) int64 table of each field's start in the buffer and size
    # per state, frame Jacobians, frame bodies, frame points, number of frames, sparse)
    if (data.nbodies, data.nq, data.nv) != (twin.m.nb, twin.m.nq, twin.m.nv):
        raise InputError(f"data was made for another model ({data.nbodies} bodies, "
                         f"nq={data.nq}, nv={data.nv}); the kernels write its buffer")
    if not data.terms:
        raise InputError("data has no room for M (made with terms=False, a compiled "
                         "model's own workspace); use rbd.Data(model)")
    if data._view_of is not None:
        raise InputError("data is one state of a batch (data.state(k)); pass the batch, or "
                         "an rbd.Data(model) of its own")
    buffer = data.buffer
    if cnp.PyArray_TYPE(buffer) != cnp.NPY_DOUBLE:
        raise InputError("data holds symbols (dtype=object); the kernels need rbd.Data(model)")
    n = 1 if data.batch is None else data.batch
    layout = np.array([[data.offsets[name][0] * n for name in FIELDS],
                       [int(np.prod(data.offsets[name][1])) for name in FIELDS]], dtype=np.int64)
    sparse = factor_sparse(&twin.m)
    bound = (twin, buffer, layout, data.J_frames, data.frame_body, data.frame_point,
             len(data.frames), sparse)
    data._bound = bound
    data.factor_kind = "LtL" if sparse else "LLt"
    return bound


cdef inline cnp.ndarray state_argument(object x, str name, Py_ssize_t size, Py_ssize_t* N,
                                       Py_ssize_t* stride):
    # a (size,) or (N, size) float64 array; N agreed with the other arguments' batch
    cdef cnp.ndarray arr = _args.as_array(x, name)
    cdef Py_ssize_t n = _args.batch_of(arr, 1, size, 0, name)
    _args.check_finite(arr, name)
    if n >= 0:
        if N[0] >= 0 and n != N[0]:
            raise InputError(f"{name} has batch size {n}, other arguments have {N[0]}")
        N[0] = n
    stride[0] = 0 if n < 0 else size
    return arr


cdef inline int run_batch(const ModelC* m, double* base, const int64_t* start,
                          double* J, Terms* shared, const double* q, Py_ssize_t sq,
                          const double* qd, Py_ssize_t sv, const double* tau, Py_ssize_t st,
                          Py_ssize_t N, int nt) except -1:
    # c_compute_all on N states in threads, each in its own state of the buffer; returns the
    # first nonzero status (0 when every state succeeded)
    cdef Py_ssize_t jstep = shared.nframes * 6 * m.nv, k, chunk
    cdef int tid, status = 0
    nt = 1 if _base.omp_unusable() else <int>min(nt, N)
    cdef Work* works = <Work*>malloc(nt * sizeof(Work))
    cdef Terms* terms = <Terms*>malloc(nt * sizeof(Terms))
    cdef int* statuses = <int*>malloc(nt * sizeof(int))
    if works == NULL or terms == NULL or statuses == NULL:
        free(works); free(terms); free(statuses)
        raise MemoryError()
    for tid in range(nt):
        terms[tid] = shared[0]
        statuses[tid] = 0
    chunk = max(1, N // (16 * nt))
    if nt > 1:
        _base.omp_starting()
    with nogil:
        for k in prange(N, num_threads=nt, schedule="dynamic", chunksize=chunk):
            tid = threadid()
            if statuses[tid] == 0:
                bind(&works[tid], &terms[tid], base, start, start + NFIELDS, k)
                terms[tid].J = J + k * jstep
                statuses[tid] = c_compute_all(
                    m, &works[tid], &terms[tid], q + k * sq, qd + k * sv,
                    NULL if tau == NULL else tau + k * st)
    for tid in range(nt):
        if statuses[tid] and not status:
            status = statuses[tid]
    free(works); free(terms); free(statuses)
    return status


def compute_all(CompiledBase twin, data, q, qd, tau=None):
    """Run every stage into ``data`` (an :class:`rbd.data.Data` of the twin's model).

    ``q`` ``(nq,)`` or ``(N, nq)``, ``qd`` and ``tau`` (optional) ``(nv,)`` or
    ``(N, nv)``; a batch needs ``data`` made with ``batch=N``.  Frames: those
    resolved on ``data`` (``data.frames``).  Returns ``data``.

    Raises
    ------
    InputError
        On a bad argument (named), or a ``data`` whose batch or dtype does not fit.
    ModelError
        When ``M`` is not positive definite.
    """
    cdef const ModelC* m = &twin.m
    cdef Py_ssize_t N = -1, nstates, sq = 0, sv = 0, st = 0
    cdef Work w
    cdef Terms t
    cdef const double* tau_p = NULL
    cdef int status
    cdef cnp.ndarray qa = state_argument(q, "q", m.nq, &N, &sq)
    cdef cnp.ndarray va = state_argument(qd, "v", m.nv, &N, &sv)
    cdef cnp.ndarray ta = None
    if tau is not None:
        ta = state_argument(tau, "tau", m.nv, &N, &st)
        tau_p = <const double*>cnp.PyArray_DATA(ta)
    nstates = N if sq else 1
    if twin.nquat and twin._check_quaternions(<const double*>cnp.PyArray_DATA(qa), nstates):
        # a norm within the tolerance but not 1: normalize a copy (never the caller's q)
        qa = cnp.PyArray_NewCopy(qa, cnp.NPY_CORDER)
        twin._normalize_quaternions(<double*>cnp.PyArray_DATA(qa), nstates)
    batch = data.batch
    if (batch is None) != (N < 0) or (batch is not None and batch != N):
        raise InputError(f"data holds {'one state' if batch is None else f'{batch} states'}, "
                         f"the arguments {'one' if N < 0 else N}: make it with "
                         f"rbd.Data(model{'' if N < 0 else f', batch={N}'})")
    bound = data._bound
    if bound is None or bound[0] is not twin:
        bound = bound_data(twin, data)
    _, buffer, layout, J, frame_body, frame_point, nf, sparse = bound
    t.nframes = nf
    t.sparse = sparse
    t.frame_body = <const int64_t*>cnp.PyArray_DATA(frame_body)
    t.frame_point = <const double*>cnp.PyArray_DATA(frame_point)
    t.J = <double*>cnp.PyArray_DATA(J)
    cdef double* base = <double*>cnp.PyArray_DATA(buffer)
    cdef const int64_t* start = <const int64_t*>cnp.PyArray_DATA(layout)
    if N < 0:
        bind(&w, &t, base, start, start + NFIELDS, 0)
        with nogil:
            status = c_compute_all(m, &w, &t, <const double*>cnp.PyArray_DATA(qa),
                                   <const double*>cnp.PyArray_DATA(va), tau_p)
    elif N == 0:
        status = 0
    else:
        status = run_batch(m, base, start, t.J, &t, <const double*>cnp.PyArray_DATA(qa), sq,
                           <const double*>cnp.PyArray_DATA(va), sv, tau_p, st, N,
                           twin._num_threads)
    if status:
        raise ModelError(f"the mass matrix is not positive definite (pivot of degree of "
                         f"freedom {status - 1})")
    return data

