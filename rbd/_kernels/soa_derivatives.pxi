# Batched analytical derivatives over a structure of arrays: W states advance together.
#
# The lane rendering of ``derivatives.pyx`` (twin: ``rbd/reference/derivatives.py``,
# Carpentier & Mansard, RSS 2018, in world coordinates): the same functions, passes,
# symbols and equation tags ``W (1)``–``W (11)``, every quantity stored
# ``[index][component][W]`` (state index innermost, ``_lanes.pxd``), every arithmetic step
# a loop over the W lanes.  ``rnea_derivatives`` sweeps outward once (``outward_sweep``)
# and inward once, writing ``[∂τ/∂q, ∂τ/∂q̇, M]``; ``aba_derivatives`` runs the lane ABA
# of ``soa_aba.pxi`` for q̈ and then ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` with ``M = Lᵀ L`` factored with the
# tree's sparsity (``soa_ltl.pxi``: ``crba.ltl``'s sweeps, written for the lanes; on every
# model, long chains included: the dense LAPACK path of the one-state kernel does not run
# in lanes).  The joint transforms left in the lanes by that ABA are reused by the outward
# sweep.  Joints whose motion subspace moves with their own coordinate (universal, planar)
# add the terms W (8): ``joint_partials`` and ``planar_partials`` are ``derivatives.pyx``'s,
# written for the lanes.
# Included after ``soa.pxi`` by ``_soa_portable.pyx``, ``_soa_avx2.pyx`` and
# ``_soa_avx512.pyx``; it uses that file's ``Lanes`` workspace, ``joint_step`` and ``aba``,
# and adds ``derivatives_size`` and ``run_derivatives`` to its kernel table.

from rbd._kernels._lanes_world cimport (
    dot3,
    force_to_root,
    motion_to_root,
    rbi_apply_each,
    rbi_congruence_add,
)
from rbd._kernels._model cimport J_PLANAR
from rbd._kernels._soa cimport SOA_ABA_DERIVATIVES


cdef struct Derivs:
    # The lane twin of derivatives.pyx's part of Work (world coordinates).
    double* R                     # nb × 9 × W: body orientation
    double* p                     # nb × 3 × W: body origin
    double* m_C                   # nb: composite mass (the same on every lane)
    double* h_C                   # nb × 3 × W: composite inertia (m_C, h_C, I_C)
    double* I_C                   # nb × 9 × W
    double* B_C                   # nb × 18 × W: composite inertia variation, first 3 columns
    double* J                     # nv × 6 × W: joint columns
    double* dVdq                  # nv × 6 × W: ∂V/∂q of each degree of freedom
    double* dAdq                  # nv × 6 × W: ∂A/∂q of each degree of freedom
    double* dAdv                  # nv × 6 × W: ∂A/∂q̇ of each degree of freedom
    double* qdd                   # nv × W: q̈ at which forward dynamics is differentiated
    double* out                   # 3 nv² × W: the three nv × nv blocks, row-major


cdef Py_ssize_t derivatives_size(const void* record) noexcept nogil:
    # doubles of one block's workspace (Lanes, then Derivs), each array a multiple of W
    cdef const ModelC* model = <const ModelC*>record
    return size(record) + W * (model.nb * (9 + 3 + 1 + 3 + 9 + 18)
                               + model.nv * (6 * 4 + 1 + 3 * model.nv))


cdef void bind_derivatives(const ModelC* model, double* work, Derivs* d) noexcept nogil:
    # point the arrays of d into work (after the Lanes arrays, which take size(model))
    cdef Py_ssize_t nb = model.nb, nv = model.nv
    work += size(model)
    d.R = work; work += 9 * W * nb
    d.p = work; work += 3 * W * nb
    d.m_C = work; work += W * nb
    d.h_C = work; work += 3 * W * nb
    d.I_C = work; work += 9 * W * nb
    d.B_C = work; work += 18 * W * nb
    d.J = work; work += 6 * W * nv
    d.dVdq = work; work += 6 * W * nv
    d.dAdq = work; work += 6 * W * nv
    d.dAdv = work; work += 6 * W * nv
    d.qdd = work; work += W * nv
    d.out = work


cdef inline void world_pose(const ModelC* model, Lanes* w, Derivs* d, Py_ssize_t i) noexcept nogil:
    # R_i, p_i: orientation and origin of body i in world coordinates, from X_up[i] = plux(E, r)
    # (R_i = R_λ(i) Eᵀ, p_i = p_λ(i) + R_λ(i) r;  R_λ = 1, p_λ = 0 for the world)
    cdef Py_ssize_t p = model.parent[i], k, n, l
    cdef double* R_i = d.R + 9 * W * i
    cdef double* p_i = d.p + 3 * W * i
    cdef const double* E = w.E_up + 9 * W * i
    cdef const double* r = w.r_up + 3 * W * i
    cdef const double* R_p
    cdef const double* p_p
    if p < 0:
        for k in range(3):
            for n in range(3):
                for l in range(W):
                    R_i[(3 * k + n) * W + l] = E[(3 * n + k) * W + l]
        memcpy(p_i, r, 3 * W * sizeof(double))
        return
    R_p = d.R + 9 * W * p
    p_p = d.p + 3 * W * p
    for k in range(3):
        for n in range(3):
            for l in range(W):
                R_i[(3 * k + n) * W + l] = (R_p[3 * k * W + l] * E[3 * n * W + l]
                                            + R_p[(3 * k + 1) * W + l] * E[(3 * n + 1) * W + l]
                                            + R_p[(3 * k + 2) * W + l] * E[(3 * n + 2) * W + l])
        for l in range(W):
            p_i[k * W + l] = p_p[k * W + l] + (R_p[3 * k * W + l] * r[l]
                                               + R_p[(3 * k + 1) * W + l] * r[W + l]
                                               + R_p[(3 * k + 2) * W + l] * r[2 * W + l])


cdef inline void inertia_variation(clp Ibar, clp h, clp v, clp mom, lp B) noexcept nogil:
    # B = v ×* I - I v× + (· ×* mom) in closed form (reference notes): its last three
    # columns vanish, the first three (column-major, 3 × 6) are
    #   [-(Ī ω̃ - ω̃ Ī) - (h̃ ũ + ũ h̃) - ñ;  -2 f̃]   for v = (ω, u), mom = I v = (n, f)
    cdef double A[9 * W]
    cdef double hu[W]
    cdef Py_ssize_t r, k, l
    for l in range(W):
        hu[l] = h[l] * v[3 * W + l] + h[W + l] * v[4 * W + l] + h[2 * W + l] * v[5 * W + l]
    for r in range(3):
        for l in range(W):
            # A = Ī ω̃ (row r: ω̃ᵀ Ī[r] = Ī[r] × ω)
            A[3 * r * W + l] = (Ibar[(3 * r + 1) * W + l] * v[2 * W + l]
                                - Ibar[(3 * r + 2) * W + l] * v[W + l])
            A[(3 * r + 1) * W + l] = (Ibar[(3 * r + 2) * W + l] * v[l]
                                      - Ibar[3 * r * W + l] * v[2 * W + l])
            A[(3 * r + 2) * W + l] = (Ibar[3 * r * W + l] * v[W + l]
                                      - Ibar[(3 * r + 1) * W + l] * v[l])
    for k in range(3):
        for r in range(3):
            for l in range(W):
                # Ī ω̃ - ω̃ Ī = A + Aᵀ;  h̃ ũ + ũ h̃ = u hᵀ + h uᵀ - 2 (h·u) 1
                B[(6 * k + r) * W + l] = (-(A[(3 * r + k) * W + l] + A[(3 * k + r) * W + l])
                                          - (v[(3 + r) * W + l] * h[k * W + l]
                                             + h[r * W + l] * v[(3 + k) * W + l]))
                B[(6 * k + 3 + r) * W + l] = 0.0
        for l in range(W):
            B[7 * k * W + l] += 2.0 * hu[l]
    for l in range(W):
        # - ñ (rows 0–2) and -2 f̃ (rows 3–5)
        B[W + l] -= mom[2 * W + l]; B[2 * W + l] += mom[W + l]; B[6 * W + l] += mom[2 * W + l]
        B[8 * W + l] -= mom[l]; B[12 * W + l] -= mom[W + l]; B[13 * W + l] += mom[l]
        B[4 * W + l] -= 2.0 * mom[5 * W + l]; B[5 * W + l] += 2.0 * mom[4 * W + l]
        B[9 * W + l] += 2.0 * mom[5 * W + l]; B[11 * W + l] -= 2.0 * mom[3 * W + l]
        B[15 * W + l] -= 2.0 * mom[4 * W + l]; B[16 * W + l] += 2.0 * mom[3 * W + l]


cdef inline void body_sweep(const ModelC* model, Lanes* w, Derivs* d, Py_ssize_t i, clp v_p,
                            clp a_p, clp qd, clp qdd, clp f_ext) noexcept nogil:
    # J_i, v_i, a_i, I⁰_i, f_i, B_i of body i (world coordinates), W (1)–(6)
    cdef Py_ssize_t vi = model.v_start[i], k, n, l
    cdef const double* R_i = d.R + 9 * W * i
    cdef const double* p_i = d.p + 3 * W * i
    cdef double* v_i = w.v + 6 * W * i
    cdef double* a_i = w.a + 6 * W * i
    cdef double* f_i = w.f + 6 * W * i
    cdef double* J
    cdef double v_J[6 * W]
    cdef double t[6 * W]
    cdef double mom[6 * W]
    cdef double E0[9 * W]
    memset(v_J, 0, 6 * W * sizeof(double))
    memset(t, 0, 6 * W * sizeof(double))
    for k in range(model.nv_j[i]):
        J = d.J + 6 * W * (vi + k)
        motion_to_root(R_i, p_i, w.S + 6 * W * (vi + k), J)                    # W (1)
        for n in range(6):
            for l in range(W):
                v_J[n * W + l] += J[n * W + l] * qd[(vi + k) * W + l]
                t[n * W + l] += J[n * W + l] * qdd[(vi + k) * W + l]
    for n in range(6 * W):
        v_i[n] = v_p[n] + v_J[n]                                                # W (2)
        a_i[n] = a_p[n] + t[n]
    motion_to_root(R_i, p_i, w.c_J + 6 * W * i, t)
    crm_apply(v_i, v_J, mom)
    for n in range(6 * W):
        a_i[n] += t[n] + mom[n]                                                 # W (3)
    # I⁰_i = ⁱX_0ᵀ I_i ⁱX_0, ⁱX_0 = plux(R_iᵀ, p_i)
    for k in range(3):
        for n in range(3):
            for l in range(W):
                E0[(3 * k + n) * W + l] = R_i[(3 * n + k) * W + l]
    d.m_C[i] = model.mass[i]
    memset(d.h_C + 3 * W * i, 0, 3 * W * sizeof(double))
    memset(d.I_C + 9 * W * i, 0, 9 * W * sizeof(double))
    rbi_congruence_add(E0, p_i, model.mass[i], model.h + 3 * i, model.Ibar + 9 * i,
                       d.h_C + 3 * W * i, d.I_C + 9 * W * i)                    # W (4)
    rbi_apply_each(d.m_C[i], d.h_C + 3 * W * i, d.I_C + 9 * W * i, v_i, mom)   # W (4)
    rbi_apply_each(d.m_C[i], d.h_C + 3 * W * i, d.I_C + 9 * W * i, a_i, f_i)
    crf_apply(v_i, mom, t)
    for n in range(6 * W):
        f_i[n] += t[n]                                                          # W (5)
    if f_ext != NULL:
        force_to_root(R_i, p_i, f_ext + 6 * W * i, t)
        for n in range(6 * W):
            f_i[n] -= t[n]                                                      # W (5)
    inertia_variation(d.I_C + 9 * W * i, d.h_C + 3 * W * i, v_i, mom,
                      d.B_C + 18 * W * i)                                       # W (6)


cdef inline void planar_partials(clp S_j, clp qdj, Py_ssize_t k, bint wrt_q, lp dS,
                                 lp dc_J) noexcept nogil:
    # planar: with S₀ = [0; E e₁], S₁ = [0; E e₂], ∂S₀/∂θ = -S₁ and ∂S₁/∂θ = S₀
    cdef Py_ssize_t m, l
    for m in range(3, 6):
        for l in range(W):
            if wrt_q and k == 2:
                # ∂S = [-S₁, S₀, 0];  ∂c_J = -(S₀ q̇_x + S₁ q̇_y) θ̇
                dS[m * W + l] = -S_j[(6 + m) * W + l]
                dS[(6 + m) * W + l] = S_j[m * W + l]
                dc_J[m * W + l] = -(S_j[m * W + l] * qdj[l] + S_j[(6 + m) * W + l]
                                    * qdj[W + l]) * qdj[2 * W + l]
            elif not wrt_q and k == 0:
                # ∂c_J/∂q̇_x = -S₁ θ̇
                dc_J[m * W + l] = -S_j[(6 + m) * W + l] * qdj[2 * W + l]
            elif not wrt_q and k == 1:
                # ∂c_J/∂q̇_y = S₀ θ̇
                dc_J[m * W + l] = S_j[m * W + l] * qdj[2 * W + l]
            elif not wrt_q:
                # ∂c_J/∂θ̇ = -S₁ q̇_x + S₀ q̇_y
                dc_J[m * W + l] = (-S_j[(6 + m) * W + l] * qdj[l]
                                   + S_j[m * W + l] * qdj[W + l])


cdef inline void joint_partials(const ModelC* model, Lanes* w, Py_ssize_t j, Py_ssize_t k,
                                bint wrt_q, clp qd, lp dS, lp dc_J) noexcept nogil:
    # ∂S_j (6 × nv_j, column-major) and ∂c_J along x = δq_{j,k} (wrt_q) or q̇_{j,k};
    # non-zero for universal and planar joints only
    cdef const double* par = model.jparams + 9 * j
    cdef const double* qdj = qd + W * model.v_start[j]
    cdef const double* S_j = w.S + 6 * W * model.v_start[j]
    cdef double t[3 * W]
    cdef double u[W]
    cdef Py_ssize_t m, l
    memset(dS, 0, 36 * W * sizeof(double))
    memset(dc_J, 0, 6 * W * sizeof(double))
    if model.jtype[j] == J_UNIVERSAL:
        # t = a₂ × w,  w = E₂ a₁ = S_j[:3, 0]
        for m in range(3):
            for l in range(W):
                t[m * W + l] = (par[3 + (m + 1) % 3] * S_j[((m + 2) % 3) * W + l]
                                - par[3 + (m + 2) % 3] * S_j[((m + 1) % 3) * W + l])
        if wrt_q and k == 1:
            # ∂S[:, 0] = [-t; 0];  ∂c_J = [(a₂ × t) q̇₁ q̇₂; 0]
            for m in range(3):
                for l in range(W):
                    u[l] = (par[3 + (m + 1) % 3] * t[((m + 2) % 3) * W + l]
                            - par[3 + (m + 2) % 3] * t[((m + 1) % 3) * W + l])
                    dS[m * W + l] = -t[m * W + l]
                    dc_J[m * W + l] = u[l] * qdj[l] * qdj[W + l]
        elif not wrt_q:
            # ∂c_J/∂q̇₁ = [-t q̇₂; 0],  ∂c_J/∂q̇₂ = [-t q̇₁; 0]
            for m in range(3):
                for l in range(W):
                    dc_J[m * W + l] = -t[m * W + l] * qdj[(1 - k) * W + l]
    elif model.jtype[j] == J_PLANAR:
        planar_partials(S_j, qdj, k, wrt_q, dS, dc_J)


cdef inline bint varying_S(const ModelC* model, Py_ssize_t i) noexcept nogil:
    # does S_i depend on q_i?
    return model.jtype[i] == J_UNIVERSAL or model.jtype[i] == J_PLANAR


cdef inline void column_sweep(const ModelC* model, Lanes* w, Derivs* d, Py_ssize_t i,
                              clp v_p, clp a_p, clp qd, clp qdd) noexcept nogil:
    # ∂V/∂q, ∂A/∂q, ∂A/∂q̇ of each column of joint i, W (7)–(8)
    cdef Py_ssize_t vi = model.v_start[i], k, n, m, l
    cdef const double* R_i = d.R + 9 * W * i
    cdef const double* p_i = d.p + 3 * W * i
    cdef double vv[6 * W]
    cdef double t[6 * W]
    cdef double e[6 * W]
    cdef double dS[36 * W]
    cdef double dc_J[6 * W]
    cdef double* J
    cdef double* dVdq
    cdef double* dAdq
    cdef double* dAdv
    for n in range(6 * W):
        vv[n] = v_p[n] + w.v[6 * W * i + n]
    for k in range(model.nv_j[i]):
        J = d.J + 6 * W * (vi + k)
        dVdq = d.dVdq + 6 * W * (vi + k)
        dAdq = d.dAdq + 6 * W * (vi + k)
        dAdv = d.dAdv + 6 * W * (vi + k)
        crm_apply(v_p, J, dVdq)                                                 # W (7)
        crm_apply(a_p, J, dAdq)
        crm_apply(v_p, dVdq, t)
        for n in range(6 * W):
            dAdq[n] += t[n]                                                     # W (7)
        crm_apply(vv, J, dAdv)                                                  # W (7)
        if not varying_S(model, i):
            continue
        # e = ⁱX_0⁻¹ ∂S q̇_i;  ∂A/∂q += ⁱX_0⁻¹ (∂S q̈_i + ∂_q c_J) + (v_λ + v_i) × e
        joint_partials(model, w, i, k, True, qd, dS, dc_J)
        memset(t, 0, 6 * W * sizeof(double))
        for n in range(6):
            for m in range(model.nv_j[i]):
                for l in range(W):
                    t[n * W + l] += dS[(6 * m + n) * W + l] * qd[(vi + m) * W + l]
                    dc_J[n * W + l] += dS[(6 * m + n) * W + l] * qdd[(vi + m) * W + l]
        motion_to_root(R_i, p_i, t, e)
        motion_to_root(R_i, p_i, dc_J, t)
        for n in range(6 * W):
            dVdq[n] += e[n]                                                     # W (8)
            dAdq[n] += t[n]
        crm_apply(vv, e, t)
        for n in range(6 * W):
            dAdq[n] += t[n]                                                     # W (8)
        # ∂A/∂q̇ += ⁱX_0⁻¹ ∂_q̇ c_J
        joint_partials(model, w, i, k, False, qd, dS, dc_J)
        motion_to_root(R_i, p_i, dc_J, t)
        for n in range(6 * W):
            dAdv[n] += t[n]                                                     # W (8)


cdef void outward_sweep(const ModelC* model, Lanes* w, Derivs* d, const double* qd,
                        const double* qdd, const double* f_ext,
                        bint joints_ready) noexcept nogil:
    """World-coordinate quantities of every body and joint column, W (1)–(8).

    ``joints_ready``: X_up, S and c_J of every body are already in the lanes (the ABA
    ran at the same q and q̇).
    """
    cdef Py_ssize_t i, p
    cdef double v0[6 * W]
    cdef const double* v_p
    cdef const double* a_p
    memset(v0, 0, 6 * W * sizeof(double))
    for i in range(model.nb):
        # X_up[i], S_i, c_J;  R_i, p_i in world coordinates;  v_0 = 0, a_0 = -g
        if not joints_ready:
            joint_step(model, w, i)
        world_pose(model, w, d, i)
        p = model.parent[i]
        v_p = &v0[0] if p < 0 else w.v + 6 * W * p
        a_p = w.a0 if p < 0 else w.a + 6 * W * p
        body_sweep(model, w, d, i, v_p, a_p, qd, qdd, f_ext)
        column_sweep(model, w, d, i, v_p, a_p, qd, qdd)


cdef inline void own_columns(const ModelC* model, Lanes* w, Derivs* d, Py_ssize_t i, lp P,
                             lp Q, lp dF_dv, lp dF_dq, lp turned) noexcept nogil:
    # for each column r of joint i: P = I^C J (∂F/∂q̈), Q = B^Cᵀ J (3 entries: B^C acts on
    # the angular part only), ∂F/∂q̇, ∂F/∂q (W (9)), turned = ∂F/∂q + J ×* F_i (W (11))
    cdef Py_ssize_t vi = model.v_start[i], r, k, n, l
    cdef const double* B = d.B_C + 18 * W * i
    cdef const double* h_C = d.h_C + 3 * W * i
    cdef const double* I_C = d.I_C + 9 * W * i
    cdef const double* J
    cdef const double* dVdq
    cdef double t[6 * W]
    for r in range(model.nv_j[i]):
        J = d.J + 6 * W * (vi + r)
        dVdq = d.dVdq + 6 * W * (vi + r)
        rbi_apply_each(d.m_C[i], h_C, I_C, J, P + 6 * W * r)                   # W (9)
        rbi_apply_each(d.m_C[i], h_C, I_C, d.dAdv + 6 * W * (vi + r), dF_dv + 6 * W * r)
        rbi_apply_each(d.m_C[i], h_C, I_C, d.dAdq + 6 * W * (vi + r), dF_dq + 6 * W * r)
        for k in range(3):
            dot6(B + 6 * W * k, J, Q + (3 * r + k) * W)
            for n in range(6):
                for l in range(W):
                    dF_dv[(6 * r + n) * W + l] += B[(6 * k + n) * W + l] * J[k * W + l]     # W (9)
                    dF_dq[(6 * r + n) * W + l] += B[(6 * k + n) * W + l] * dVdq[k * W + l]  # W (9)
        crf_apply(J, w.f + 6 * W * i, t)
        for n in range(6 * W):
            turned[6 * W * r + n] = dF_dq[6 * W * r + n] + t[n]                 # W (11)


cdef inline void armature_bias_jacobian_add(const ModelC* model, Py_ssize_t i, clp qd,
                                            lp dv) noexcept nogil:
    # dv (nv × nv × W) += ∂/∂q̇ of armature_bias_add on joint i's rows:
    # ∂(ω × u)/∂ω = -ũ, ∂(ω × u)/∂u = ω̃   (rbd.reference.rnea.armature_bias_jacobian)
    cdef Py_ssize_t nv = model.nv, vi = model.v_start[i], k, l
    cdef const double* a = model.armature + vi + 3
    cdef const double* om = qd + W * vi
    cdef const double* u = qd + W * (vi + 3)
    cdef double* row
    if model.jtype[i] != J_FREE or (a[0] == 0.0 and a[1] == 0.0 and a[2] == 0.0):
        return
    for k in range(3):
        row = dv + ((vi + 3 + k) * nv + vi) * W
        for l in range(W):
            # row k of -ũ (columns of ω) and of ω̃ (columns of u)
            row[((k + 1) % 3) * W + l] += a[k] * u[((k + 2) % 3) * W + l]
            row[((k + 2) % 3) * W + l] -= a[k] * u[((k + 1) % 3) * W + l]
            row[(3 + (k + 1) % 3) * W + l] -= a[k] * om[((k + 2) % 3) * W + l]
            row[(3 + (k + 2) % 3) * W + l] += a[k] * om[((k + 1) % 3) * W + l]


cdef inline void diagonal_block(const ModelC* model, Lanes* w, Derivs* d, Py_ssize_t i,
                                clp qd, clp P, clp dF_dv, clp dF_dq, lp dq, lp dv,
                                lp M) noexcept nogil:
    # rows and columns of joint i: J_iᵀ ∂F/∂x (W (10)), M_ii (+ armature)
    cdef Py_ssize_t nv = model.nv, vi = model.v_start[i], r, c, l
    cdef const double* J
    cdef double dS[36 * W]
    cdef double dc_J[6 * W]
    cdef double t[6 * W]
    cdef double s[W]
    for r in range(model.nv_j[i]):
        for c in range(model.nv_j[i]):
            J = d.J + 6 * W * (vi + c)
            dot6(J, P + 6 * W * r, M + ((vi + c) * nv + vi + r) * W)
            dot6(J, dF_dv + 6 * W * r, dv + ((vi + c) * nv + vi + r) * W)     # W (10)
            dot6(J, dF_dq + 6 * W * r, dq + ((vi + c) * nv + vi + r) * W)     # W (10)
        for l in range(W):
            M[((vi + r) * nv + vi + r) * W + l] += model.armature[vi + r]
        if varying_S(model, i):
            # + (ⁱX_0⁻¹ ∂S)ᵀ F_i: the joint's own axes move with its coordinate r
            joint_partials(model, w, i, r, True, qd, dS, dc_J)
            for c in range(model.nv_j[i]):
                motion_to_root(d.R + 9 * W * i, d.p + 3 * W * i, dS + 6 * W * c, t)
                dot6(t, w.f + 6 * W * i, s)
                for l in range(W):
                    dq[((vi + c) * nv + vi + r) * W + l] += s[l]                # W (10)
    # ∂/∂q̇ of a free joint's armature velocity product a ⊙ (ω × u)
    armature_bias_jacobian_add(model, i, qd, dv)


cdef inline void ancestor_blocks(const ModelC* model, Derivs* d, Py_ssize_t i, clp P, clp Q,
                                 clp dF_dv, clp turned, lp dq, lp dv, lp M) noexcept nogil:
    # rows of i and columns of each ancestor j (W (10)), and the transposed places (W (11))
    cdef Py_ssize_t nv = model.nv, vi = model.v_start[i], j = i, r, c, row, col, l
    cdef const double* J
    cdef double t[W]
    while model.parent[j] >= 0:
        j = model.parent[j]
        for c in range(model.v_start[j], model.v_start[j] + model.nv_j[j]):
            J = d.J + 6 * W * c
            for r in range(model.nv_j[i]):
                row = ((vi + r) * nv + c) * W
                col = (c * nv + vi + r) * W
                dot6(J, P + 6 * W * r, M + col)                                 # W (11)
                memcpy(M + row, M + col, W * sizeof(double))
                dot6(J, turned + 6 * W * r, dq + col)                           # W (11)
                dot6(J, dF_dv + 6 * W * r, dv + col)                            # W (11)
                dot6(P + 6 * W * r, d.dAdq + 6 * W * c, dq + row)
                dot3(Q + 3 * W * r, d.dVdq + 6 * W * c, t)
                for l in range(W):
                    dq[row + l] += t[l]
                dot6(P + 6 * W * r, d.dAdv + 6 * W * c, dv + row)
                dot3(Q + 3 * W * r, J, t)
                for l in range(W):
                    dv[row + l] += t[l]                                         # W (10)


cdef inline void accumulate(const ModelC* model, Lanes* w, Derivs* d, Py_ssize_t i) noexcept nogil:
    # I^C, B^C, F of the parent += those of body i
    cdef Py_ssize_t p = model.parent[i], n
    if p < 0:
        return
    d.m_C[p] += d.m_C[i]
    for n in range(3 * W):
        d.h_C[3 * W * p + n] += d.h_C[3 * W * i + n]
    for n in range(9 * W):
        d.I_C[9 * W * p + n] += d.I_C[9 * W * i + n]
    for n in range(18 * W):
        d.B_C[18 * W * p + n] += d.B_C[18 * W * i + n]
    for n in range(6 * W):
        w.f[6 * W * p + n] += w.f[6 * W * i + n]


cdef int rnea_derivatives(const ModelC* model, Lanes* w, Derivs* d, const double* qd,
                          const double* qdd, const double* f_ext, double* out,
                          bint joints_ready) noexcept nogil:
    """out = [∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M] at (q, q̇, q̈, f_ext) on W lanes."""
    cdef Py_ssize_t n2 = model.nv * model.nv * W, i
    cdef double P[36 * W]
    cdef double Q[18 * W]
    cdef double dF_dv[36 * W]
    cdef double dF_dq[36 * W]
    cdef double turned[36 * W]
    memset(out, 0, 3 * n2 * sizeof(double))
    outward_sweep(model, w, d, qd, qdd, f_ext, joints_ready)
    for i in range(model.nb - 1, -1, -1):
        own_columns(model, w, d, i, P, Q, dF_dv, dF_dq, turned)
        diagonal_block(model, w, d, i, qd, P, dF_dv, dF_dq, out, out + n2, out + 2 * n2)
        ancestor_blocks(model, d, i, P, Q, dF_dv, turned, out, out + n2, out + 2 * n2)
        accumulate(model, w, d, i)
    return 0


include "soa_ltl.pxi"


cdef int aba_derivatives(const ModelC* model, Lanes* w, Derivs* d, const double* qd,
                         const double* tau, const double* f_ext, double* out) noexcept nogil:
    """out = [∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹] at (q, q̇, τ, f_ext) on W lanes."""
    cdef Py_ssize_t n2 = model.nv * model.nv * W, i
    cdef int status
    # q̈ = FD(q, q̇, τ)
    status = aba(model, w, qd, tau, f_ext, d.qdd)
    if status:
        return status
    rnea_derivatives(model, w, d, qd, d.qdd, f_ext, out, True)
    # ∂q̈/∂x = -M⁻¹ ∂τ/∂x   (x = q, q̇),  ∂q̈/∂τ = M⁻¹
    status = minus_inverse_times(model, out + 2 * n2, out, out + n2)
    if status:
        for i in range(model.nb):
            if model.v_start[i] + model.nv_j[i] >= status:
                return <int>(1 + i)
    return 0


# === a block of a batch ========================================================================

cdef inline void tile_row(clp lanes, lp row) noexcept nogil:
    # row[j] = lanes[j W], j < W: one lane of a W × W tile, back to a row
    cdef Py_ssize_t j
    for j in range(W):
        row[j] = lanes[j * W]


cdef int run_derivatives(const void* record, double* work, int task, const double** x,
                         const Py_ssize_t* stride, double* out, Py_ssize_t out_stride,
                         Py_ssize_t k0, Py_ssize_t n) noexcept nogil:
    # run_block's twin for the derivatives: states k0 .. k0 + n - 1 (n ≤ W) of a batch,
    # x[0] = q, x[1] = q̇, x[2] = q̈ or τ (never NULL), x[3] = f_ext (NULL: zero); lanes
    # past n repeat the last state.  Returns 0, or 1 + the body of a singular pivot.
    cdef const ModelC* model = <const ModelC*>record
    cdef Lanes w
    cdef Derivs d
    cdef Py_ssize_t nv = model.nv, n3 = 3 * model.nv * model.nv, l, j, k, b, j0, m
    cdef int status = 0
    cdef const double* row
    cdef double* aligned = <double*>((<size_t>work + 63) & ~(<size_t>63))
    bind(model, aligned, &w)
    bind_derivatives(model, aligned, &d)
    for l in range(W):
        k = k0 + (l if l < n else n - 1)
        w.q[l] = x[0] + k * stride[0]
        w.qd_row[l] = x[1] + k * stride[1]
        for j in range(nv):
            w.qd[j * W + l] = w.qd_row[l][j]
        row = x[2] + k * stride[2]
        for j in range(nv):
            w.x[j * W + l] = row[j]
        if x[3] != NULL:
            row = x[3] + k * stride[3]
            for j in range(6 * model.nb):
                w.f_ext[j * W + l] = row[j]
    if task == SOA_ABA_DERIVATIVES:
        status = aba_derivatives(model, &w, &d, w.qd, w.x, w.f_ext if x[3] != NULL else NULL,
                                 d.out)
    else:
        rnea_derivatives(model, &w, &d, w.qd, w.x, w.f_ext if x[3] != NULL else NULL, d.out,
                         False)
    # back to rows, W entries at a time: the W × W tile read from the lanes stays in cache
    for b in range((n3 + W - 1) // W):
        j0 = b * W
        m = min(W, n3 - j0)
        if m == W:
            for l in range(n):
                tile_row(d.out + j0 * W + l, out + (k0 + l) * out_stride + j0)
        else:
            for l in range(n):
                for j in range(m):
                    out[(k0 + l) * out_stride + j0 + j] = d.out[(j0 + j) * W + l]
    return status


_kernels.derivatives_size = derivatives_size
_kernels.run_derivatives = run_derivatives
