# cython: language_level=3
"""Analytical derivatives of inverse and forward dynamics, compiled.

The compiled twin of ``rbd/reference/derivatives.py`` (Carpentier & Mansard,
RSS 2018, in world coordinates): ``outward_sweep`` computes each body's world
pose, joint columns ``J``, velocity, acceleration, inertia, force and inertia
variation ``B`` and each column's ``∂V/∂q``, ``∂A/∂q``, ``∂A/∂q̇`` (W (1)–(8));
``rnea_derivatives`` sweeps inward once, accumulating composite quantities and
writing every entry of ``∂τ/∂q``, ``∂τ/∂q̇`` and ``M`` as a product of two
6-vectors (W (9)–(11)).  The tags ``W (n)`` are the numbered equations of the
reference module's notes.  Derivatives with respect to ``q`` are taken in the
tangent space (local increments for spherical and free joints).

``aba_derivatives`` differentiates ``M q̈ = τ − h`` at ``q̈ = ABA(q, q̇, τ)``:
``∂q̈/∂x = −M⁻¹ ∂τ/∂x``, with ``M`` from the same sweep factored ``M = Lᵀ L`` with
the tree's sparsity (``crba.ltl``) and everything done in the result's own
storage.  On long chains, which have no sparsity to use, the factorization is
dense and done by LAPACK and BLAS (SciPy's ``cython_lapack`` /
``cython_blas``): ``M = L Lᵀ``, ``M⁻¹ ∂τ/∂x = L⁻ᵀ (L⁻¹ ∂τ/∂x)``, ``M⁻¹ = L⁻ᵀ L⁻¹``.

Results go to ``out``: three ``nv × nv`` row-major blocks, ``[∂τ/∂q, ∂τ/∂q̇,
M]`` or ``[∂q̈/∂q, ∂q̈/∂q̇, M⁻¹]``.  Symbolic joints are refused by the caller
(``CompiledModel``) before a kernel runs.  Both return 0, or ``1 + i`` when
the articulated inertia ``D_i`` of body ``i`` (or ``M`` at a column of body
``i``) is not positive definite.
"""

from libc.string cimport memset
from scipy.linalg.cython_blas cimport dtrmm
from scipy.linalg.cython_lapack cimport dlauum, dpotrf, dtrtri

from rbd._kernels._model cimport (
    J_PLANAR,
    J_UNIVERSAL,
    ModelC,
    Work,
    armature_bias_jacobian_add,
    joint_step,
)
from rbd._kernels._spatial cimport (
    crf_apply,
    crm_apply,
    cross3,
    dot3,
    dot6,
    rbi_apply,
    rbi_congruence_add,
)
from rbd._kernels.aba cimport aba
from rbd._kernels.crba cimport force_to_root, ltl, ltl_inverse, ltl_solve, motion_to_root
from rbd._kernels.kinematics cimport world_pose


cdef inline void planar_partials(const double* S_j, const double* qdj, Py_ssize_t k,
                                 bint wrt_q, double* dS, double* dc_J) noexcept nogil:
    # planar: with S₀ = [0; E e₁], S₁ = [0; E e₂], ∂S₀/∂θ = -S₁ and ∂S₁/∂θ = S₀
    cdef int m
    for m in range(3, 6):
        if wrt_q and k == 2:
            # ∂S = [-S₁, S₀, 0];  ∂c_J = -(S₀ q̇_x + S₁ q̇_y) θ̇
            dS[m] = -S_j[6 + m]
            dS[6 + m] = S_j[m]
            dc_J[m] = -(S_j[m] * qdj[0] + S_j[6 + m] * qdj[1]) * qdj[2]
        elif not wrt_q and k == 0:
            # ∂c_J/∂q̇_x = -S₁ θ̇
            dc_J[m] = -S_j[6 + m] * qdj[2]
        elif not wrt_q and k == 1:
            # ∂c_J/∂q̇_y = S₀ θ̇
            dc_J[m] = S_j[m] * qdj[2]
        elif not wrt_q:
            # ∂c_J/∂θ̇ = -S₁ q̇_x + S₀ q̇_y
            dc_J[m] = -S_j[6 + m] * qdj[0] + S_j[m] * qdj[1]


cdef inline void joint_partials(const ModelC* model, Work* w, Py_ssize_t j, Py_ssize_t k,
                                bint wrt_q, const double* qd, double* dS,
                                double* dc_J) noexcept nogil:
    # ∂S_j (6 × nv_j, column-major) and ∂c_J along x = δq_{j,k} (wrt_q) or q̇_{j,k};
    # non-zero for universal and planar joints only
    cdef const double* par = model.jparams + 9 * j
    cdef const double* qdj = qd + model.v_start[j]
    cdef const double* S_j = w.S + 6 * model.v_start[j]
    cdef double t[3]
    cdef double u[3]
    cdef int m
    memset(dS, 0, 36 * sizeof(double))
    memset(dc_J, 0, 6 * sizeof(double))
    if model.jtype[j] == J_UNIVERSAL:
        # t = a₂ × w,  w = E₂ a₁ = S_j[:3, 0]
        cross3(par + 3, S_j, t)
        if wrt_q and k == 1:
            # ∂S[:, 0] = [-t; 0];  ∂c_J = [(a₂ × t) q̇₁ q̇₂; 0]
            cross3(par + 3, t, u)
            for m in range(3):
                dS[m] = -t[m]
                dc_J[m] = u[m] * qdj[0] * qdj[1]
        elif not wrt_q:
            # ∂c_J/∂q̇₁ = [-t q̇₂; 0],  ∂c_J/∂q̇₂ = [-t q̇₁; 0]
            for m in range(3):
                dc_J[m] = -t[m] * qdj[1 - k]
    elif model.jtype[j] == J_PLANAR:
        planar_partials(S_j, qdj, k, wrt_q, dS, dc_J)


cdef inline bint varying_S(const ModelC* model, Py_ssize_t i) noexcept nogil:
    # does S_i depend on q_i?
    return model.jtype[i] == J_UNIVERSAL or model.jtype[i] == J_PLANAR


cdef inline void inertia_variation(const double* Ibar, const double* h, const double* v,
                                   const double* mom, double* B) noexcept nogil:
    # B = v ×* I - I v× + (· ×* mom) in closed form (reference notes): its last three
    # columns vanish, the first three (column-major, 3 × 6) are
    #   [-(Ī ω̃ - ω̃ Ī) - (h̃ ũ + ũ h̃) - ñ;  -2 f̃]   for v = (ω, u), mom = I v = (n, f)
    cdef double A[9]
    cdef double hu = h[0] * v[3] + h[1] * v[4] + h[2] * v[5]
    cdef int r, k
    for r in range(3):
        # A = Ī ω̃ (row r: ω̃ᵀ Ī[r] = Ī[r] × ω)
        A[3 * r + 0] = Ibar[3 * r + 1] * v[2] - Ibar[3 * r + 2] * v[1]
        A[3 * r + 1] = Ibar[3 * r + 2] * v[0] - Ibar[3 * r + 0] * v[2]
        A[3 * r + 2] = Ibar[3 * r + 0] * v[1] - Ibar[3 * r + 1] * v[0]
    for k in range(3):
        for r in range(3):
            # Ī ω̃ - ω̃ Ī = A + Aᵀ;  h̃ ũ + ũ h̃ = u hᵀ + h uᵀ - 2 (h·u) 1
            B[6 * k + r] = -(A[3 * r + k] + A[3 * k + r]) - (v[3 + r] * h[k] + h[r] * v[3 + k])
            B[6 * k + 3 + r] = 0.0
        B[6 * k + k] += 2.0 * hu
    # - ñ (rows 0–2) and -2 f̃ (rows 3–5)
    B[1] -= mom[2]; B[2] += mom[1]; B[6] += mom[2]
    B[8] -= mom[0]; B[12] -= mom[1]; B[13] += mom[0]
    B[4] -= 2.0 * mom[5]; B[5] += 2.0 * mom[4]; B[9] += 2.0 * mom[5]
    B[11] -= 2.0 * mom[3]; B[15] -= 2.0 * mom[4]; B[16] += 2.0 * mom[3]


cdef inline void body_sweep(const ModelC* model, Work* w, Py_ssize_t i, const double* v_p,
                            const double* a_p, const double* qd, const double* qdd,
                            const double* f_ext) noexcept nogil:
    # J_i, v_i, a_i, I⁰_i, f_i, B_i of body i (world coordinates), W (1)–(6)
    cdef Py_ssize_t vi = model.v_start[i], k, n
    cdef double* v_i = w.v + 6 * i
    cdef double* a_i = w.a + 6 * i
    cdef double* f_i = w.f + 6 * i
    cdef double v_J[6]
    cdef double t[6]
    cdef double mom[6]
    cdef double E0[9]
    memset(v_J, 0, 6 * sizeof(double))
    memset(t, 0, 6 * sizeof(double))
    for k in range(model.nv_j[i]):
        motion_to_root(w, i, w.S + 6 * (vi + k), w.J + 6 * (vi + k))            # W (1)
        for n in range(6):
            v_J[n] += w.J[6 * (vi + k) + n] * qd[vi + k]
            t[n] += w.J[6 * (vi + k) + n] * qdd[vi + k]
    for n in range(6):
        v_i[n] = v_p[n] + v_J[n]                                                # W (2)
        a_i[n] = a_p[n] + t[n]
    motion_to_root(w, i, w.c_J + 6 * i, t)
    crm_apply(v_i, v_J, mom)
    for n in range(6):
        a_i[n] += t[n] + mom[n]                                                 # W (3)
    # I⁰_i = ⁱX_0ᵀ I_i ⁱX_0, ⁱX_0 = plux(R_iᵀ, p_i)
    for k in range(3):
        for n in range(3):
            E0[3 * k + n] = w.R[9 * i + 3 * n + k]
    w.m_C[i] = 0.0
    memset(w.h_C + 3 * i, 0, 3 * sizeof(double))
    memset(w.I_C + 9 * i, 0, 9 * sizeof(double))
    rbi_congruence_add(E0, w.p + 3 * i, model.mass[i], model.h + 3 * i, model.Ibar + 9 * i,
                       w.m_C + i, w.h_C + 3 * i, w.I_C + 9 * i)                # W (4)
    rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, v_i, mom)                # W (4)
    rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, a_i, f_i)
    crf_apply(v_i, mom, t)
    for n in range(6):
        f_i[n] += t[n]                                                          # W (5)
    if f_ext != NULL:
        force_to_root(w, i, f_ext + 6 * i, t)
        for n in range(6):
            f_i[n] -= t[n]                                                      # W (5)
    inertia_variation(w.I_C + 9 * i, w.h_C + 3 * i, v_i, mom, w.B_C + 18 * i)    # W (6)


cdef inline void column_sweep(const ModelC* model, Work* w, Py_ssize_t i, const double* v_p,
                              const double* a_p, const double* qd,
                              const double* qdd) noexcept nogil:
    # ∂V/∂q, ∂A/∂q, ∂A/∂q̇ of each column of joint i, W (7)–(8)
    cdef Py_ssize_t vi = model.v_start[i], k, n, m
    cdef double vv[6]
    cdef double t[6]
    cdef double e[6]
    cdef double dS[36]
    cdef double dc_J[6]
    cdef double* J
    cdef double* dVdq
    cdef double* dAdq
    cdef double* dAdv
    for n in range(6):
        vv[n] = v_p[n] + w.v[6 * i + n]
    for k in range(model.nv_j[i]):
        J = w.J + 6 * (vi + k)
        dVdq = w.dVdq + 6 * (vi + k)
        dAdq = w.dAdq + 6 * (vi + k)
        dAdv = w.dAdv + 6 * (vi + k)
        crm_apply(v_p, J, dVdq)                                                 # W (7)
        crm_apply(a_p, J, dAdq)
        crm_apply(v_p, dVdq, t)
        for n in range(6):
            dAdq[n] += t[n]                                                     # W (7)
        crm_apply(vv, J, dAdv)                                                  # W (7)
        if not varying_S(model, i):
            continue
        # e = ⁱX_0⁻¹ ∂S q̇_i;  ∂A/∂q += ⁱX_0⁻¹ (∂S q̈_i + ∂_q c_J) + (v_λ + v_i) × e
        joint_partials(model, w, i, k, True, qd, dS, dc_J)
        for n in range(6):
            t[n] = 0.0
            for m in range(model.nv_j[i]):
                t[n] += dS[6 * m + n] * qd[vi + m]
                dc_J[n] += dS[6 * m + n] * qdd[vi + m]
        motion_to_root(w, i, t, e)
        motion_to_root(w, i, dc_J, t)
        for n in range(6):
            dVdq[n] += e[n]                                                     # W (8)
            dAdq[n] += t[n]
        crm_apply(vv, e, t)
        for n in range(6):
            dAdq[n] += t[n]                                                     # W (8)
        # ∂A/∂q̇ += ⁱX_0⁻¹ ∂_q̇ c_J
        joint_partials(model, w, i, k, False, qd, dS, dc_J)
        motion_to_root(w, i, dc_J, t)
        for n in range(6):
            dAdv[n] += t[n]                                                     # W (8)


cdef void outward_sweep(const ModelC* model, Work* w, const double* q, const double* qd,
                        const double* qdd, const double* f_ext) noexcept nogil:
    """World-coordinate quantities of every body and joint column, W (1)–(8)."""
    cdef Py_ssize_t i, p
    cdef double v0[6]
    cdef const double* v_p
    cdef const double* a_p
    memset(v0, 0, 6 * sizeof(double))
    for i in range(model.nb):
        # X_up[i], S_i, c_J;  R_i, p_i in world coordinates;  v_0 = 0, a_0 = -g
        joint_step(model, w, i, q, qd)
        world_pose(model, w, i)
        p = model.parent[i]
        v_p = &v0[0] if p < 0 else w.v + 6 * p
        a_p = <const double*>&model.a0[0] if p < 0 else w.a + 6 * p
        body_sweep(model, w, i, v_p, a_p, qd, qdd, f_ext)
        column_sweep(model, w, i, v_p, a_p, qd, qdd)


cdef inline void own_columns(const ModelC* model, Work* w, Py_ssize_t i, double* P, double* Q,
                             double* dF_dv, double* dF_dq, double* turned) noexcept nogil:
    # for each column r of joint i: P = I^C J (∂F/∂q̈), Q = B^Cᵀ J (3 entries: B^C acts on
    # the angular part only), ∂F/∂q̇, ∂F/∂q (W (9)), turned = ∂F/∂q + J ×* F_i (W (11))
    cdef Py_ssize_t vi = model.v_start[i], r, k, n
    cdef const double* B = w.B_C + 18 * i
    cdef const double* J
    cdef const double* dVdq
    cdef double t[6]
    for r in range(model.nv_j[i]):
        J = w.J + 6 * (vi + r)
        dVdq = w.dVdq + 6 * (vi + r)
        rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, J, P + 6 * r)         # W (9)
        rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, w.dAdv + 6 * (vi + r),
                  dF_dv + 6 * r)
        rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, w.dAdq + 6 * (vi + r),
                  dF_dq + 6 * r)
        for k in range(3):
            Q[3 * r + k] = dot6(B + 6 * k, J)
            for n in range(6):
                dF_dv[6 * r + n] += B[6 * k + n] * J[k]                         # W (9)
                dF_dq[6 * r + n] += B[6 * k + n] * dVdq[k]                      # W (9)
        crf_apply(J, w.f + 6 * i, t)
        for n in range(6):
            turned[6 * r + n] = dF_dq[6 * r + n] + t[n]                         # W (11)


cdef inline void diagonal_block(const ModelC* model, Work* w, Py_ssize_t i, const double* qd,
                                const double* P, const double* dF_dv, const double* dF_dq,
                                double* dq, double* dv, double* M) noexcept nogil:
    # rows and columns of joint i: J_iᵀ ∂F/∂x (W (10)), M_ii (+ armature)
    cdef Py_ssize_t nv = model.nv, vi = model.v_start[i], r, l
    cdef const double* J
    cdef double dS[36]
    cdef double dc_J[6]
    cdef double t[6]
    for r in range(model.nv_j[i]):
        for l in range(model.nv_j[i]):
            J = w.J + 6 * (vi + l)
            M[(vi + l) * nv + vi + r] = dot6(J, P + 6 * r)
            dv[(vi + l) * nv + vi + r] = dot6(J, dF_dv + 6 * r)                 # W (10)
            dq[(vi + l) * nv + vi + r] = dot6(J, dF_dq + 6 * r)                 # W (10)
        M[(vi + r) * nv + vi + r] += model.armature[vi + r]
        if varying_S(model, i):
            # + (ⁱX_0⁻¹ ∂S)ᵀ F_i: the joint's own axes move with its coordinate r
            joint_partials(model, w, i, r, True, qd, dS, dc_J)
            for l in range(model.nv_j[i]):
                motion_to_root(w, i, dS + 6 * l, t)
                dq[(vi + l) * nv + vi + r] += dot6(t, w.f + 6 * i)             # W (10)
    # ∂/∂q̇ of a free joint's armature velocity product a ⊙ (ω × u)
    armature_bias_jacobian_add(model, i, qd, dv)


cdef inline void ancestor_blocks(const ModelC* model, Work* w, Py_ssize_t i, const double* P,
                                 const double* Q, const double* dF_dv, const double* turned,
                                 double* dq, double* dv, double* M) noexcept nogil:
    # rows of i and columns of each ancestor j (W (10)), and the transposed places (W (11))
    cdef Py_ssize_t nv = model.nv, vi = model.v_start[i], j = i, r, c, row, col
    cdef const double* J
    while model.parent[j] >= 0:
        j = model.parent[j]
        for c in range(model.v_start[j], model.v_start[j] + model.nv_j[j]):
            J = w.J + 6 * c
            for r in range(model.nv_j[i]):
                row = (vi + r) * nv + c
                col = c * nv + vi + r
                M[col] = dot6(J, P + 6 * r)                                     # W (11)
                M[row] = M[col]
                dq[col] = dot6(J, turned + 6 * r)                               # W (11)
                dv[col] = dot6(J, dF_dv + 6 * r)                                # W (11)
                dq[row] = dot6(P + 6 * r, w.dAdq + 6 * c) + dot3(Q + 3 * r, w.dVdq + 6 * c)
                dv[row] = dot6(P + 6 * r, w.dAdv + 6 * c) + dot3(Q + 3 * r, J)  # W (10)


cdef inline void accumulate(const ModelC* model, Work* w, Py_ssize_t i) noexcept nogil:
    # I^C, B^C, F of the parent += those of body i
    cdef Py_ssize_t p = model.parent[i], n
    if p < 0:
        return
    w.m_C[p] += w.m_C[i]
    for n in range(3):
        w.h_C[3 * p + n] += w.h_C[3 * i + n]
    for n in range(9):
        w.I_C[9 * p + n] += w.I_C[9 * i + n]
    for n in range(18):
        w.B_C[18 * p + n] += w.B_C[18 * i + n]
    for n in range(6):
        w.f[6 * p + n] += w.f[6 * i + n]


cdef int rnea_derivatives(const ModelC* model, Work* w, const double* q, const double* qd,
                          const double* qdd, const double* f_ext,
                          double* out) noexcept nogil:
    """out = [∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M] at (q, q̇, q̈, f_ext)."""
    cdef Py_ssize_t n2 = model.nv * model.nv, i
    cdef double P[36]
    cdef double Q[36]
    cdef double dF_dv[36]
    cdef double dF_dq[36]
    cdef double turned[36]
    memset(out, 0, 3 * n2 * sizeof(double))
    outward_sweep(model, w, q, qd, qdd, f_ext)
    for i in range(model.nb - 1, -1, -1):
        own_columns(model, w, i, P, Q, dF_dv, dF_dq, turned)
        diagonal_block(model, w, i, qd, P, dF_dv, dF_dq, out, out + n2, out + 2 * n2)
        ancestor_blocks(model, w, i, P, Q, dF_dv, turned, out, out + n2, out + 2 * n2)
        accumulate(model, w, i)
    return 0


cdef inline bint sparse_pays(const ModelC* model) noexcept nogil:
    # the sparse sweeps cost ~nv Σ_k d_k multiply-adds, the dense ones ~nv³ done about four
    # times faster by BLAS but with a fixed cost per call: measured on chains and on a
    # binary tree (docs/benchmarks.md), the sparse path wins up to 12 degrees of freedom
    # and wherever 4 Σ_k d_k ≤ nv² (branched trees)
    return model.nv <= 12 or 4 * model.dof_depths <= model.nv * model.nv


cdef inline int minus_inverse_times_dense(int n, double* M, double* dq, double* dv) noexcept nogil:
    # M ← M⁻¹, dq ← -M⁻¹ dq, dv ← -M⁻¹ dv by LAPACK/BLAS: M = L Lᵀ (dense Cholesky), and as
    # the row-major buffers are the column-major transposes, (-M⁻¹ D)ᵀ = -Dᵀ L⁻ᵀ L⁻¹
    cdef int info = 0, r, c
    cdef double one = 1.0, minus_one = -1.0
    dpotrf(b"L", &n, M, &n, &info)                                              # M = L Lᵀ
    if info != 0:
        return info
    dtrtri(b"L", b"N", &n, M, &n, &info)                                        # L⁻¹
    dtrmm(b"R", b"L", b"T", b"N", &n, &n, &one, M, &n, dq, &n)                  # Dᵀ L⁻ᵀ
    dtrmm(b"R", b"L", b"N", b"N", &n, &n, &minus_one, M, &n, dq, &n)            # -Dᵀ L⁻ᵀ L⁻¹
    dtrmm(b"R", b"L", b"T", b"N", &n, &n, &one, M, &n, dv, &n)
    dtrmm(b"R", b"L", b"N", b"N", &n, &n, &minus_one, M, &n, dv, &n)
    dlauum(b"L", &n, M, &n, &info)                                              # L⁻ᵀ L⁻¹
    for c in range(n):
        for r in range(c + 1, n):
            M[r * n + c] = M[c * n + r]
    return 0


cdef int minus_inverse_times(const ModelC* model, double* M, double* dq,
                             double* dv) noexcept nogil:
    """M ← M⁻¹, dq ← -M⁻¹ dq, dv ← -M⁻¹ dv in place; 0 or 1 + the failing column.

    As the reference: M = Lᵀ L with the tree's sparsity (``crba.ltl``), the rows of
    dq and dv solved, M⁻¹ = L⁻¹ L⁻ᵀ formed in M's storage.  A long chain has no
    sparsity to use, and there the dense factorization by LAPACK/BLAS is faster.
    """
    cdef Py_ssize_t n = model.nv, k
    cdef int status
    if n == 0:
        return 0
    if not sparse_pays(model):
        return minus_inverse_times_dense(<int>n, M, dq, dv)
    status = ltl(model, M)
    if status:
        return status
    ltl_solve(model, M, dq, n)
    ltl_solve(model, M, dv, n)
    for k in range(n * n):
        dq[k] = -dq[k]
        dv[k] = -dv[k]
    ltl_inverse(model, M)
    return 0


cdef int aba_derivatives(const ModelC* model, Work* w, const double* q, const double* qd,
                         const double* tau, const double* f_ext, double* out) noexcept nogil:
    """out = [∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹] at (q, q̇, τ, f_ext)."""
    cdef Py_ssize_t n2 = model.nv * model.nv, i
    cdef int status
    # q̈ = FD(q, q̇, τ)
    status = aba(model, w, q, qd, tau, f_ext, w.qdd, False)
    if status:
        return status
    rnea_derivatives(model, w, q, qd, w.qdd, f_ext, out)
    # ∂q̈/∂x = -M⁻¹ ∂τ/∂x   (x = q, q̇),  ∂q̈/∂τ = M⁻¹
    status = minus_inverse_times(model, out + 2 * n2, out, out + n2)
    if status:
        for i in range(model.nb):
            if model.v_start[i] + model.nv_j[i] >= status:
                return 1 + i
    return 0
