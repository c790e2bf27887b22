# Batched RNEA and ABA over a structure of arrays: W states advance together.
#
# The lane rendering of ``rnea.pyx``/``rnea.pxd`` and ``aba.pyx``/``aba.pxd`` (twins:
# ``rbd/reference/rnea.py``, ``rbd/reference/aba.py``): the same functions, passes,
# symbols and equation tags, every quantity stored ``[body][component][W]`` (state
# index innermost, ``_lanes.pxd``), every arithmetic step a loop over the W lanes.
# Revolute, prismatic, universal, spherical and free joints are computed in lanes
# (``joint_step``; ``sincos_lanes`` for their angles); helical, planar and generated
# joints by the scalar ``jcalc`` lane by lane.  Pivots are inverted in lanes
# (``pivot``: division, ``spd_inverse3``, ``spd_inverse``; a free joint's 6×6 D_i is
# factored, ``cholesky``, and solved with, ``cholesky_solve``).  A spherical joint without
# armature gives an articulated inertia with only its lower-right block
# (``spherical_corner``), which ``congruence_add_corner`` carries to the parent.  Included by
# ``_soa_portable.pyx``, ``_soa_avx2.pyx`` and ``_soa_avx512.pyx``, which differ only
# in the instruction set ``setup.py`` compiles them for.

from cpython.pycapsule cimport PyCapsule_New
from libc.string cimport memcpy, memset

from rbd._kernels._lanes cimport (
    W,
    add_lanes,
    axis_rotation_T,
    axpy6,
    broadcast,
    broadcast_lower,
    cholesky,
    cholesky_solve,
    clp,
    congruence_add,
    congruence_add_corner,
    crf_apply,
    crm_apply,
    dot6,
    lane_get,
    lane_put,
    lp,
    mat3_mul,
    plux_compose,
    quat_to_rot_T,
    sincos_lanes,
    rbi_apply,
    spd_inverse,
    spd_inverse3,
    sym,
    sym6_vec,
    sym_row_dot,
    xform_force_T_add,
    xform_motion,
)
from rbd._kernels._model cimport (
    J_FREE,
    J_PRISMATIC,
    J_REVOLUTE,
    J_SPHERICAL,
    J_UNIVERSAL,
    ModelC,
    jcalc,
)
from rbd._kernels._soa cimport SOA_ABA, SOA_RNEA, SoaKernels

cdef extern from *:
    # a hint to load the cache line holding p (never faults, whatever the address); rw 0:
    # for reading, locality 2: into the second-level cache and beyond
    void __builtin_prefetch(const void* p, int rw, int locality) noexcept nogil


cdef struct Lanes:
    # The workspace of one block of W states (the lane twin of _model.pxd's Work).
    const double* q[W]            # each lane's row of q (jcalc reads it)
    const double* qd_row[W]       # each lane's row of q̇, or NULL
    double* E_up                  # nb × 9 × W: X_up[i] = plux(E_up[i], r_up[i])
    double* r_up                  # nb × 3 × W
    double* S                     # nv × 6 × W: motion subspace, per degree of freedom
    double* c_J                   # nb × 6 × W: Ṡ q̇ of each joint
    double* v                     # nb × 6 × W: body velocities
    double* a                     # nb × 6 × W: body accelerations
    double* f                     # nb × 6 × W: body forces (RNEA)
    double* c                     # nb × 6 × W: velocity-product accelerations (ABA)
    double* pA                    # nb × 6 × W: articulated bias forces
    double* IA                    # nb × 36 × W: articulated inertias (lower triangles, sym)
    double* U                     # nv × 6 × W: U_i = IA_i S_i (ball, free: read in IA)
    double* D_inv                 # nb × 36 × W: D_i⁻¹ (top-left nv_i × nv_i, leading dim. 6);
                                  # for nv_i = 6 the Cholesky factor of D_i (pivot)
    double* u                     # nv × W: u_i = τ_i - S_iᵀ pA_i
    double* a0                    # 6 × W: base acceleration [0; -g] on every lane
    double* qd                    # nv × W: q̇ (input)
    double* x                     # nv × W: q̈ (RNEA) or τ (ABA) (input)
    double* f_ext                 # nb × 6 × W: external forces (input)
    double* out                   # nv × W: τ (RNEA) or q̈ (ABA)


cdef Py_ssize_t size(const void* record) noexcept nogil:
    # doubles of one block's workspace (Lanes), padded for 64-byte alignment of each array
    cdef const ModelC* model = <const ModelC*>record
    return W * (model.nb * (9 + 3 + 6 * 7 + 36 * 2) + model.nv * (6 * 2 + 4) + 6) + 16 * W


cdef void bind(const ModelC* model, double* work, Lanes* w) noexcept nogil:
    # point the arrays of w into work, one after the other (each a multiple of W doubles)
    cdef Py_ssize_t nb = model.nb, nv = model.nv, k
    w.E_up = work; work += 9 * W * nb
    w.r_up = work; work += 3 * W * nb
    w.S = work; work += 6 * W * nv
    w.c_J = work; work += 6 * W * nb
    w.v = work; work += 6 * W * nb
    w.a = work; work += 6 * W * nb
    w.f = work; work += 6 * W * nb
    w.c = work; work += 6 * W * nb
    w.pA = work; work += 6 * W * nb
    w.IA = work; work += 36 * W * nb
    w.U = work; work += 6 * W * nv
    w.D_inv = work; work += 36 * W * nb
    w.u = work; work += W * nv
    w.a0 = work; work += 6 * W
    w.qd = work; work += W * nv
    w.x = work; work += W * nv
    w.f_ext = work; work += 6 * W * nb
    w.out = work
    for k in range(6 * W):
        w.a0[k] = model.a0[k // W]


cdef inline bint unit_subspace(const ModelC* model, Py_ssize_t i) noexcept nogil:
    # S_i is the first nv_i columns of the 6×6 identity (spherical and free joints, joint_step)
    return model.jtype[i] == J_SPHERICAL or model.jtype[i] == J_FREE


cdef inline bint spherical_corner(const ModelC* model, Py_ssize_t i) noexcept nogil:
    # a spherical joint without armature: with IA_i = [[A, B], [Bᵀ, C]] and S_i = [1; 0],
    # U_i = [A; Bᵀ] and D_i = A, so IA_i - U_i D_i⁻¹ U_iᵀ = [[0, 0], [0, C - Bᵀ A⁻¹ B]]
    # (a Schur complement): only its lower-right block is computed and carried
    cdef Py_ssize_t vi = model.v_start[i]
    return (model.jtype[i] == J_SPHERICAL and model.armature[vi] == 0.0
            and model.armature[vi + 1] == 0.0 and model.armature[vi + 2] == 0.0)


cdef inline bint joint_armature(const ModelC* model, Py_ssize_t i) noexcept nogil:
    # some degree of freedom of joint i has a rotor inertia
    cdef Py_ssize_t k
    for k in range(model.v_start[i], model.v_start[i] + model.nv_j[i]):
        if model.armature[k] != 0.0:
            return True
    return False


cdef inline void subspace_entries(const ModelC* model, Lanes* w, Py_ssize_t i,
                                  const double** Ue) noexcept nogil:
    # Ue[6 k + r] = entry (r, k) of U_i = IA_i S_i: in U (pivot), or for a unit_subspace
    # joint, whose U_i is the first nv_i columns of IA_i, in IA_i (not copied)
    cdef Py_ssize_t k, r
    cdef const double* IA_i = w.IA + 36 * W * i
    cdef const double* U_i = w.U + 6 * W * model.v_start[i]
    for k in range(model.nv_j[i]):
        for r in range(6):
            Ue[6 * k + r] = IA_i + sym(r, k) * W if unit_subspace(model, i) else (
                U_i + (6 * k + r) * W)


# === the outward step (rnea.pxd) ===============================================================

cdef inline void joint_step(const ModelC* model, Lanes* w, Py_ssize_t i) noexcept nogil:
    # X_J, S_i, c_J = jcalc(q_i, q̇_i) on each lane;  X_up[i] = X_J X_tree[i]   (S&G (8))
    cdef Py_ssize_t nv_i = model.nv_j[i], vi = model.v_start[i], qi = model.q_start[i], l, j, k
    cdef const double* par = model.jparams + 9 * i
    cdef double E_J[9 * W]
    cdef double r_J[3 * W]
    cdef double qv[W]
    cdef double sn[W]
    cdef double cs[W]
    cdef double quat[4 * W]
    cdef double E1[9 * W]
    cdef double E2[9 * W]
    cdef double* S_i = w.S + 6 * W * vi
    cdef double* c_J = w.c_J + 6 * W * i
    cdef double E[9]
    cdef double r[3]
    cdef double S[36]
    cdef double cJ[6]
    if model.jtype[i] == J_REVOLUTE or model.jtype[i] == J_PRISMATIC:
        # revolute: E = exp(ã q)ᵀ, r = 0, S = [a; 0];  prismatic: E = 1, r = a q, S = [0; a];
        # c_J = 0 (jcalc's formulas, written for the lanes)
        for l in range(W):
            qv[l] = w.q[l][qi]
        if model.jtype[i] == J_REVOLUTE:
            sincos_lanes(qv, sn, cs)
            axis_rotation_T(par, sn, cs, E_J)
            memset(r_J, 0, 3 * W * sizeof(double))
        else:
            for k in range(9):
                for l in range(W):
                    E_J[k * W + l] = 1.0 if k % 4 == 0 else 0.0
            for k in range(3):
                for l in range(W):
                    r_J[k * W + l] = par[k] * qv[l]
        for k in range(6):
            for l in range(W):
                w.S[(6 * vi + k) * W + l] = (par[k] if k < 3 else 0.0) if (
                    model.jtype[i] == J_REVOLUTE) else (par[k - 3] if k >= 3 else 0.0)
        memset(w.c_J + 6 * W * i, 0, 6 * W * sizeof(double))
    elif model.jtype[i] == J_SPHERICAL or model.jtype[i] == J_FREE:
        # spherical: E = R(quat)ᵀ, r = 0;  free: E = R(quat)ᵀ, r = p;  S = 1 (its first
        # nv_i columns), c_J = 0 (jcalc's formulas, written for the lanes)
        j = 3 if model.jtype[i] == J_FREE else 0
        for k in range(4):
            for l in range(W):
                quat[k * W + l] = w.q[l][qi + j + k]
        quat_to_rot_T(quat, E_J)
        for k in range(3):
            for l in range(W):
                r_J[k * W + l] = w.q[l][qi + k] if j == 3 else 0.0
        for j in range(nv_i):
            for k in range(6):
                for l in range(W):
                    w.S[(6 * (vi + j) + k) * W + l] = 1.0 if k == j else 0.0
        memset(w.c_J + 6 * W * i, 0, 6 * W * sizeof(double))
    elif model.jtype[i] == J_UNIVERSAL:
        # E = (exp(ã₁q₁) exp(ã₂q₂))ᵀ = E₂ E₁, r = 0;  S = [[E₂ a₁, a₂]; 0];
        # c_J = [-(a₂ × E₂ a₁) q̇₁ q̇₂; 0]   (jcalc_universal, written for the lanes)
        for l in range(W):
            qv[l] = w.q[l][qi]
        sincos_lanes(qv, sn, cs)
        axis_rotation_T(par, sn, cs, E1)
        for l in range(W):
            qv[l] = w.q[l][qi + 1]
        sincos_lanes(qv, sn, cs)
        axis_rotation_T(par + 3, sn, cs, E2)
        mat3_mul(E2, E1, E_J)
        memset(r_J, 0, 3 * W * sizeof(double))
        for k in range(3):
            for l in range(W):
                S_i[k * W + l] = (E2[3 * k * W + l] * par[0] + E2[(3 * k + 1) * W + l] * par[1]
                                  + E2[(3 * k + 2) * W + l] * par[2])
        broadcast(par + 3, 3, S_i + 6 * W)
        for k in range(3, 6):
            for l in range(W):
                S_i[k * W + l] = 0.0
                S_i[(6 + k) * W + l] = 0.0
        memset(c_J, 0, 6 * W * sizeof(double))
        if w.qd_row[0] != NULL:
            for l in range(W):
                qv[l] = w.qd_row[l][vi] * w.qd_row[l][vi + 1]
            for l in range(W):
                c_J[l] = -(par[4] * S_i[2 * W + l] - par[5] * S_i[W + l]) * qv[l]
                c_J[W + l] = -(par[5] * S_i[l] - par[3] * S_i[2 * W + l]) * qv[l]
                c_J[2 * W + l] = -(par[3] * S_i[W + l] - par[4] * S_i[l]) * qv[l]
    else:
        for l in range(W):
            jcalc(model, i, w.q[l], w.qd_row[l], E, r, S, cJ)
            lane_put(E, 9, l, E_J)
            lane_put(r, 3, l, r_J)
            lane_put(cJ, 6, l, w.c_J + 6 * W * i)
            for j in range(nv_i):
                lane_put(S + 6 * j, 6, l, w.S + 6 * W * (vi + j))
    plux_compose(E_J, r_J, model.E_tree + 9 * i, model.r_tree + 3 * i,
                 w.E_up + 9 * W * i, w.r_up + 3 * W * i)


cdef inline void body_velocity(const ModelC* model, Lanes* w, Py_ssize_t i, clp qd,
                               lp v_J) noexcept nogil:
    # v_J = S_i q̇_i;  v_i = X_up[i] v_λ(i) + v_J   (q̇ = NULL stands for 0)
    cdef Py_ssize_t p = model.parent[i], vi = model.v_start[i], j, k, l
    cdef const double* S_i = w.S + 6 * W * vi
    cdef double* v_i = w.v + 6 * W * i
    if qd == NULL or model.nv_j[i] == 0:
        memset(v_J, 0, 6 * W * sizeof(double))
    elif unit_subspace(model, i):
        # S_i = columns of 1: v_J = q̇_i in the leading rows
        memset(v_J, 0, 6 * W * sizeof(double))
        memcpy(v_J, qd + W * vi, model.nv_j[i] * W * sizeof(double))
    else:
        for k in range(6):
            for l in range(W):
                v_J[k * W + l] = S_i[k * W + l] * qd[vi * W + l]
        for j in range(1, model.nv_j[i]):
            axpy6(S_i + 6 * W * j, qd + W * (vi + j), v_J)
    if p < 0:
        memcpy(v_i, v_J, 6 * W * sizeof(double))                           # S&G (8)
    else:
        xform_motion(w.E_up + 9 * W * i, w.r_up + 3 * W * i, w.v + 6 * W * p, v_i)
        add_lanes(v_J, 6, v_i)                                              # S&G (8)


cdef inline void outward_step(const ModelC* model, Lanes* w, Py_ssize_t i, clp qd,
                              clp f_ext, lp c_i, lp pA_i) noexcept nogil:
    # joint_step, body_velocity;  c_i = c_J + v_i × v_J;  pA_i = v_i ×* I_i v_i - f_ext_i
    cdef double v_J[6 * W]
    cdef double Iv[6 * W]
    cdef const double* v_i = w.v + 6 * W * i
    cdef Py_ssize_t k
    joint_step(model, w, i)
    body_velocity(model, w, i, qd, v_J)
    # c_i = c_J + v_i × v_J
    crm_apply(v_i, v_J, c_i)
    add_lanes(w.c_J + 6 * W * i, 6, c_i)                                # S&G (11)
    # pA_i = v_i ×* I_i v_i - f_ext_i
    rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, v_i, Iv)
    crf_apply(v_i, Iv, pA_i)                                                # S&G (21)
    if f_ext != NULL:
        for k in range(6 * W):
            pA_i[k] -= f_ext[6 * W * i + k]


cdef inline void armature_bias_add(const ModelC* model, Py_ssize_t i, clp qd, double scale,
                                   lp out) noexcept nogil:
    # out[v_i + 3 + k] += scale a_k (ω × u)_k on a free joint's linear rows (q̇_i = [ω; u])
    cdef Py_ssize_t vi = model.v_start[i], k, l
    cdef const double* arm = model.armature + vi + 3
    cdef double wu[3]
    cdef double qdl[6]
    if model.jtype[i] != J_FREE or qd == NULL or (arm[0] == 0.0 and arm[1] == 0.0
                                                    and arm[2] == 0.0):
        return
    for l in range(W):
        lane_get(qd + W * vi, 6, l, qdl)
        wu[0] = qdl[1] * qdl[5] - qdl[2] * qdl[4]
        wu[1] = qdl[2] * qdl[3] - qdl[0] * qdl[5]
        wu[2] = qdl[0] * qdl[4] - qdl[1] * qdl[3]
        for k in range(3):
            out[(vi + 3 + k) * W + l] += scale * arm[k] * wu[k]


# === RNEA (rnea.pyx) ===========================================================================

cdef void rnea(const ModelC* model, Lanes* w, const double* qd, const double* qdd,
               const double* f_ext, double* tau) noexcept nogil:
    """tau = ID(q, q̇, q̈, f_ext) on W lanes; writes X_up, S, c_J, v, a, f of the lanes."""
    cdef Py_ssize_t nb = model.nb, i, j, p, k, l, nv_i, vi
    cdef double* a_i
    cdef const double* a_p
    cdef double* f_i
    cdef double* S_i
    cdef double c_i[6 * W]
    cdef double Ia[6 * W]

    # --- outward pass: velocities, accelerations and forces
    for i in range(nb):
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * W * vi
        a_i = w.a + 6 * W * i
        f_i = w.f + 6 * W * i
        # v_i = X_up[i] v_λ(i) + S_i q̇_i;  c_i = c_J + v_i × S_i q̇_i;
        # f_i = v_i ×* I_i v_i - f_ext_i
        outward_step(model, w, i, qd, f_ext, c_i, f_i)
        # a_i = X_up[i] a_λ(i) + S_i q̈_i + c_i
        a_p = w.a0 if p < 0 else w.a + 6 * W * p
        xform_motion(w.E_up + 9 * W * i, w.r_up + 3 * W * i, a_p, a_i)
        add_lanes(c_i, 6, a_i)                                              # S&G (11)
        if qdd != NULL and unit_subspace(model, i):
            add_lanes(qdd + W * vi, nv_i, a_i)                              # S&G (11)
        elif qdd != NULL:
            for j in range(nv_i):
                axpy6(S_i + 6 * W * j, qdd + W * (vi + j), a_i)             # S&G (11)
        # f_i = I_i a_i + (v_i ×* I_i v_i - f_ext_i)
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, a_i, Ia)
        add_lanes(Ia, 6, f_i)                                               # RBDA T5.1

    # --- inward pass: joint forces
    for i in range(nb - 1, -1, -1):
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * W * vi
        f_i = w.f + 6 * W * i
        for j in range(nv_i):
            # tau_i = S_iᵀ f_i (+ armature_i ⊙ q̈_i, the rotor inertia)
            if unit_subspace(model, i):
                memcpy(tau + W * (vi + j), f_i + W * j, W * sizeof(double))  # RBDA T5.1
            else:
                dot6(S_i + 6 * W * j, f_i, tau + W * (vi + j))              # RBDA T5.1
            if qdd != NULL:
                for l in range(W):
                    tau[(vi + j) * W + l] += model.armature[vi + j] * qdd[(vi + j) * W + l]
        # tau_i += a ⊙ (ω × u)   (a free joint's armature, on its linear rows)
        armature_bias_add(model, i, qd, 1.0, tau)
        # f_λ(i) += X_up[i]ᵀ f_i
        p = model.parent[i]
        if p >= 0:
            xform_force_T_add(w.E_up + 9 * W * i, w.r_up + 3 * W * i, f_i, w.f + 6 * W * p)  # RBDA T5.1


# === the articulated-inertia step (aba.pxd) ====================================================

cdef inline int pivot(const ModelC* model, Lanes* w, Py_ssize_t i) noexcept nogil:
    # U_i = IA_i S_i,  D_i = S_iᵀ U_i + diag(armature_i),  D_i⁻¹ on every lane;
    # returns 1 if D_i is not positive definite on some lane.
    cdef Py_ssize_t nv_i = model.nv_j[i], vi = model.v_start[i], k, m, l
    cdef const double* S_i = w.S + 6 * W * vi
    cdef double* U_i = w.U + 6 * W * vi
    cdef double* D_inv = w.D_inv + 36 * W * i
    cdef double D[36 * W]
    cdef const double* IA_i = w.IA + 36 * W * i
    cdef const double* Dp = D
    cdef bint in_place = False
    cdef int bad = 0
    if nv_i == 0:
        return 0
    if unit_subspace(model, i):
        # S_i = the first nv_i columns of 1: U_i = those columns of IA_i (read there:
        # subspace_entries), D_i = its leading nv_i × nv_i block (its lower triangle, which
        # the inverses read, in IA_i's own layout: used in place without armature)
        in_place = not joint_armature(model, i)
        Dp = IA_i if in_place else D
        for k in range(0 if in_place else nv_i):
            for m in range(k + 1):
                for l in range(W):
                    D[(6 * k + m) * W + l] = IA_i[(6 * k + m) * W + l]      # S&G (28)
    else:
        for k in range(nv_i):
            # U_i = IA_i S_i
            sym6_vec(IA_i, S_i + 6 * W * k, U_i + 6 * W * k)                 # RBDA T7.1
        for k in range(nv_i):
            for m in range(nv_i):
                # D_i = S_iᵀ U_i
                dot6(S_i + 6 * W * k, U_i + 6 * W * m, D + (6 * k + m) * W)  # S&G (28)
    for k in range(0 if in_place else nv_i):
        # D_i += diag(armature_i)   (rotor inertia, on the joint's own degrees of freedom)
        for l in range(W):
            D[7 * k * W + l] += model.armature[vi + k]
    if nv_i == 1:
        for l in range(W):
            # D_i⁻¹ = 1 / D_i
            D_inv[l] = 1.0 / Dp[l]
            bad = bad | (not Dp[l] > 0.0)
        return bad
    if nv_i == 3:
        # D_i⁻¹ = adj(D_i) / det(D_i)
        return spd_inverse3(Dp, D_inv)
    if nv_i == 6:
        # D_i = L Lᵀ, kept in place of D_i⁻¹ (articulated_inertia and accelerations solve
        # with it: no inverse is formed)
        return cholesky(Dp, 6, D_inv)
    # D_i⁻¹ from the Cholesky factor of D_i
    return spd_inverse(Dp, nv_i, D_inv)


cdef inline void articulated_inertia(const ModelC* model, Lanes* w, Py_ssize_t i,
                                     lp Ia, lp UDinv) noexcept nogil:
    # Ia = IA_i - U_i D_i⁻¹ U_iᵀ (its lower triangle, as IA_i: _lanes.pxd sym);
    # UDinv = U_i D_i⁻¹ (6 × nv_i, column-major).  For a spherical_corner joint only the
    # lower-right 3×3 block of Ia is written (the rest is zero).
    cdef Py_ssize_t nv_i = model.nv_j[i], k, m, r, s, l, z
    cdef const double* U_i = w.U + 6 * W * model.v_start[i]
    cdef const double* D_inv = w.D_inv + 36 * W * i
    cdef const double* IA_i = w.IA + 36 * W * i
    cdef const double* Ue[36]
    cdef double b[6 * W]
    cdef double x[6 * W]
    if nv_i == 0:
        # a fixed joint: Ia = IA_i
        memcpy(Ia, IA_i, 36 * W * sizeof(double))
        return
    if nv_i == 1:
        # one degree of freedom: UDinv = U_i D_i⁻¹, Ia = IA_i - UDinv U_iᵀ written out
        for r in range(6):
            for l in range(W):
                UDinv[r * W + l] = U_i[r * W + l] * D_inv[l]
        for r in range(6):
            for s in range(r + 1):
                for l in range(W):
                    Ia[(6 * r + s) * W + l] = (IA_i[(6 * r + s) * W + l]
                                               - UDinv[r * W + l] * U_i[s * W + l])  # S&G (27)
        return
    subspace_entries(model, w, i, Ue)
    if nv_i == 3:
        # three degrees of freedom (spherical, planar): each entry in one pass over the lanes
        for k in range(3):
            for r in range(6):
                for l in range(W):
                    UDinv[(6 * k + r) * W + l] = (Ue[r][l] * D_inv[k * W + l]
                                                  + Ue[6 + r][l] * D_inv[(6 + k) * W + l]
                                                  + Ue[12 + r][l] * D_inv[(12 + k) * W + l])
        z = 3 if spherical_corner(model, i) else 0
        for r in range(z, 6):
            for s in range(z, r + 1):
                for l in range(W):
                    Ia[(6 * r + s) * W + l] = IA_i[(6 * r + s) * W + l] - (
                        UDinv[r * W + l] * Ue[s][l]
                        + UDinv[(6 + r) * W + l] * Ue[6 + s][l]
                        + UDinv[(12 + r) * W + l] * Ue[12 + s][l])          # S&G (27)
        return
    if nv_i == 6:
        # row r of U_i D_i⁻¹ = (D_i⁻¹ (row r of U_i)ᵀ)ᵀ, solved with D_i = L Lᵀ (pivot)
        for r in range(6):
            for k in range(6):
                memcpy(b + W * k, Ue[6 * k + r], W * sizeof(double))
            cholesky_solve(D_inv, 6, b, x)
            for k in range(6):
                memcpy(UDinv + (6 * k + r) * W, x + W * k, W * sizeof(double))
    else:
        for k in range(nv_i):
            for r in range(6):
                for l in range(W):
                    UDinv[(6 * k + r) * W + l] = Ue[r][l] * D_inv[k * W + l]
                for m in range(1, nv_i):
                    for l in range(W):
                        UDinv[(6 * k + r) * W + l] += (Ue[6 * m + r][l]
                                                       * D_inv[(6 * m + k) * W + l])
    z = 3 if spherical_corner(model, i) else 0
    for r in range(z, 6):
        for s in range(z, r + 1):
            for l in range(W):
                Ia[(6 * r + s) * W + l] = (IA_i[(6 * r + s) * W + l]
                                           - UDinv[r * W + l] * Ue[s][l])  # S&G (27)
            for k in range(1, nv_i):
                for l in range(W):
                    Ia[(6 * r + s) * W + l] -= (UDinv[(6 * k + r) * W + l]
                                                * Ue[6 * k + s][l])        # S&G (27)


cdef inline void corner_apply_add(clp Ia, clp c, lp out) noexcept nogil:
    # out += Ia c for Ia = [[0, 0], [0, C]] (spherical_corner): out_lin += C c_lin, C read
    # from the lower triangle of Ia (entries 21, 27, 28, 33, 34, 35)
    cdef Py_ssize_t l
    for l in range(W):
        out[3 * W + l] += (Ia[21 * W + l] * c[3 * W + l] + Ia[27 * W + l] * c[4 * W + l]
                           + Ia[33 * W + l] * c[5 * W + l])
        out[4 * W + l] += (Ia[27 * W + l] * c[3 * W + l] + Ia[28 * W + l] * c[4 * W + l]
                           + Ia[34 * W + l] * c[5 * W + l])
        out[5 * W + l] += (Ia[33 * W + l] * c[3 * W + l] + Ia[34 * W + l] * c[4 * W + l]
                           + Ia[35 * W + l] * c[5 * W + l])


# === ABA (aba.pyx) =============================================================================

cdef inline void accelerations(const ModelC* model, Lanes* w, double* qdd) noexcept nogil:
    # pass 3 (outward): a' = X_up[i] a_λ(i) + c_i;  q̈_i = D_i⁻¹ (u_i - U_iᵀ a');
    # a_i = a' + S_i q̈_i
    cdef Py_ssize_t i, j, k, l, p, nv_i, vi
    cdef const double* a_p
    cdef double* a_i
    cdef double r_i[6 * W]
    for i in range(model.nb):
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        a_i = w.a + 6 * W * i
        # a' = X_up[i] a_λ(i) + c_i
        a_p = w.a0 if p < 0 else w.a + 6 * W * p
        xform_motion(w.E_up + 9 * W * i, w.r_up + 3 * W * i, a_p, a_i)
        add_lanes(w.c + 6 * W * i, 6, a_i)                                  # RBDA T7.1
        # q̈_i = D_i⁻¹ (u_i - U_iᵀ a')
        for j in range(nv_i):
            if unit_subspace(model, i):
                # (U_i = the first nv_i columns of IA_i: row j of IA_i a')
                sym_row_dot(w.IA + 36 * W * i, j, a_i, r_i + W * j)
            else:
                dot6(w.U + 6 * W * (vi + j), a_i, r_i + W * j)
            for l in range(W):
                r_i[j * W + l] = w.u[(vi + j) * W + l] - r_i[j * W + l]
        if nv_i == 6:
            # (D_i = L Lᵀ: pivot keeps the factor)
            cholesky_solve(w.D_inv + 36 * W * i, 6, r_i, qdd + W * vi)     # RBDA T7.1
        else:
            for j in range(nv_i):
                for l in range(W):
                    qdd[(vi + j) * W + l] = w.D_inv[(36 * i + 6 * j) * W + l] * r_i[l]
                for k in range(1, nv_i):
                    for l in range(W):
                        qdd[(vi + j) * W + l] += (w.D_inv[(36 * i + 6 * j + k) * W + l]
                                                  * r_i[k * W + l])         # RBDA T7.1
        # a_i = a' + S_i q̈_i   (S_i = columns of 1: q̈_i added to the leading rows)
        if unit_subspace(model, i):
            add_lanes(qdd + W * vi, nv_i, a_i)
        else:
            for j in range(nv_i):
                axpy6(w.S + 6 * W * (vi + j), qdd + W * (vi + j), a_i)


cdef int aba(const ModelC* model, Lanes* w, const double* qd, const double* tau,
             const double* f_ext, double* qdd) noexcept nogil:
    """qdd = FD(q, q̇, τ, f_ext) on W lanes; writes X_up, S, v, c, IA, pA, U, D_inv, u, a."""
    cdef Py_ssize_t nb = model.nb, i, j, k, l, p, nv_i, vi
    cdef bint corner
    cdef double pa[6 * W]
    cdef double Ia[36 * W]
    cdef double UDinv[36 * W]

    # --- pass 1 (outward): velocities, bias accelerations, bias forces
    for i in range(nb):
        # v_i = X_up[i] v_λ(i) + S_i q̇_i;  c_i = c_J + v_i × S_i q̇_i;
        # pA_i = v_i ×* I_i v_i - f_ext_i
        outward_step(model, w, i, qd, f_ext, w.c + 6 * W * i, w.pA + 6 * W * i)
        # IA_i = I_i   (its lower triangle: IA, Ia are kept there, _lanes.pxd sym)
        broadcast_lower(model.inertia + 36 * i, w.IA + 36 * W * i)

    # --- pass 2 (inward): articulated-body inertias and bias forces
    for i in range(nb - 1, -1, -1):
        # U_i = IA_i S_i;  D_i = S_iᵀ U_i (+ armature);  D_i⁻¹
        if pivot(model, w, i):
            return <int>(1 + i)
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        for k in range(nv_i):
            # u_i = τ_i - S_iᵀ pA_i   (S_i = columns of 1: the rows of pA_i)
            if unit_subspace(model, i):
                memcpy(w.u + W * (vi + k), w.pA + 6 * W * i + W * k, W * sizeof(double))
            else:
                dot6(w.S + 6 * W * (vi + k), w.pA + 6 * W * i, w.u + W * (vi + k))
            for l in range(W):
                w.u[(vi + k) * W + l] = tau[(vi + k) * W + l] - w.u[(vi + k) * W + l]  # RBDA T7.1
        # u_i -= a ⊙ (ω × u)   (a free joint's armature, on its linear rows)
        armature_bias_add(model, i, qd, -1.0, w.u)
        p = model.parent[i]
        if p >= 0:
            # Ia = IA_i - U_i D_i⁻¹ U_iᵀ
            articulated_inertia(model, w, i, Ia, UDinv)                     # S&G (27)
            # pa = pA_i + Ia c_i + U_i D_i⁻¹ u_i
            corner = spherical_corner(model, i)
            if corner:
                # (Ia = [[0, 0], [0, C]]: Ia c_i = [0; C c_i])
                memcpy(pa, w.pA + 6 * W * i, 6 * W * sizeof(double))
                corner_apply_add(Ia, w.c + 6 * W * i, pa)
            else:
                sym6_vec(Ia, w.c + 6 * W * i, pa)
                add_lanes(w.pA + 6 * W * i, 6, pa)
            for j in range(nv_i):
                axpy6(UDinv + 6 * W * j, w.u + W * (vi + j), pa)            # RBDA T7.1
            # IA_λ(i) += X_up[i]ᵀ Ia X_up[i]
            if corner:
                congruence_add_corner(w.E_up + 9 * W * i, w.r_up + 3 * W * i, Ia,
                                      w.IA + 36 * W * p)                    # S&G (27)
            else:
                congruence_add(w.E_up + 9 * W * i, w.r_up + 3 * W * i, Ia, w.IA + 36 * W * p)  # S&G (27)
            # pA_λ(i) += X_up[i]ᵀ pa
            xform_force_T_add(w.E_up + 9 * W * i, w.r_up + 3 * W * i, pa, w.pA + 6 * W * p)  # S&G (24)

    # --- pass 3 (outward): accelerations
    accelerations(model, w, qdd)
    return 0


# === a block of a batch ========================================================================

cdef int run_block(const void* record, double* work, int task, const double** x,
                   const Py_ssize_t* stride, double* out, Py_ssize_t out_stride,
                   Py_ssize_t k0, Py_ssize_t n) noexcept nogil:
    # states k0 .. k0 + n - 1 (n ≤ W) of a batch: inputs x[0] = q, x[1] = q̇, x[2] = q̈ or τ,
    # x[3] = f_ext (stride 0: shared; NULL: zero), moved into lanes; lanes past n repeat
    # the last state.  Returns 0, or 1 + the body whose D_i is not positive definite.
    cdef const ModelC* model = <const ModelC*>record
    cdef Lanes w
    cdef Py_ssize_t nv = model.nv, l, j, k
    cdef int status = 0
    cdef const double* row
    bind(model, <double*>((<size_t>work + 63) & ~(<size_t>63)), &w)
    for j in range(3):
        # the rows of q, q̇ and τ of the next block (W rows, contiguous) start their way into
        # the second-level cache while this block computes (a batch streams them from memory
        # once; a hint to the first level, one per row and 64 bytes, stalled the block while
        # the few line-fill buffers were busy: 10 % of the humanoid's ABA)
        if x[j] != NULL and stride[j] != 0:
            row = x[j] + (k0 + W) * stride[j]
            for k in range(0, W * stride[j] + 8, 8):
                __builtin_prefetch(row + k, 0, 2)
    for l in range(W):
        k = k0 + (l if l < n else n - 1)
        w.q[l] = x[0] + k * stride[0]
        w.qd_row[l] = NULL
        if x[1] != NULL:
            w.qd_row[l] = x[1] + k * stride[1]
            for j in range(nv):
                w.qd[j * W + l] = w.qd_row[l][j]
        if x[2] != NULL:
            row = x[2] + k * stride[2]
            for j in range(nv):
                w.x[j * W + l] = row[j]
        if x[3] != NULL:
            row = x[3] + k * stride[3]
            for j in range(6 * model.nb):
                w.f_ext[j * W + l] = row[j]
    if task == SOA_RNEA:
        rnea(model, &w, w.qd if x[1] != NULL else NULL, w.x if x[2] != NULL else NULL,
             w.f_ext if x[3] != NULL else NULL, w.out)
    else:
        status = aba(model, &w, w.qd if x[1] != NULL else NULL, w.x,
                     w.f_ext if x[3] != NULL else NULL, w.out)
    for l in range(n):
        for j in range(nv):
            out[(k0 + l) * out_stride + j] = w.out[j * W + l]
    return status


cdef SoaKernels _kernels
_kernels.lanes = W
_kernels.size = size
_kernels.run = run_block


def lane_sincos(const double[::1] x):
    """``(sin x, cos x)`` by ``_lanes.pxd``'s ``sincos_lanes``, W elements at a time (for tests)."""
    import numpy as np

    cdef Py_ssize_t n = x.shape[0], k0, l
    cdef double xs[W]
    cdef double s[W]
    cdef double c[W]
    sines = np.empty(n)
    cosines = np.empty(n)
    cdef double[::1] so = sines
    cdef double[::1] co = cosines
    for k0 in range(0, n, W):
        for l in range(W):
            xs[l] = x[min(k0 + l, n - 1)]
        sincos_lanes(xs, s, c)
        for l in range(min(W, n - k0)):
            so[k0 + l] = s[l]
            co[k0 + l] = c[l]
    return sines, cosines


def kernels():
    """This module's kernels for ``_model.pyx``: a PyCapsule ``"rbd.soa"`` of a ``SoaKernels``."""
    return PyCapsule_New(&_kernels, b"rbd.soa", NULL)
