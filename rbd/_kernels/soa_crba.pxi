# Batched CRBA over a structure of arrays: the mass matrices of W states together.
#
# The lane rendering of ``crba.pyx``/``crba.pxd`` (twin: ``rbd/reference/crba.py``): the
# same three passes under the same headers, every quantity stored ``[component][W]``
# (``_lanes.pxd``).  It runs in the workspace of ``soa.pxi``'s ``Lanes`` (``size``):
# the joint transforms and S where RNEA and ABA keep them, the root-body poses and the
# composite inertias in the place of the articulated inertias IA, S⁰ in U, F⁰ in D⁻¹
# (nv ≤ 6 nb, so 6 nv ≤ 36 nb).  M is written straight to each state's output rows.
# Included by ``_soa_portable.pyx``, ``_soa_avx2.pyx`` and ``_soa_avx512.pyx`` after
# ``soa.pxi``.


cdef struct CrbaLanes:
    # CRBA's arrays over the ABA workspace of one block (soa.pxi's Lanes)
    double* R                     # nb × 9 × W: orientation of body i in its root body's frame
    double* p                     # nb × 3 × W: origin of body i in its root body's frame
    double* h_C                   # nb × 3 × W: composite first moments of mass
    double* I_C                   # nb × 9 × W: composite rotational inertias (about the origin)
    double* S0                    # nv × 6 × W: S in root-body coordinates
    double* F0                    # nv × 6 × W: IC_i S_i in root-body coordinates


cdef inline void root_pose_lanes(const ModelC* model, Lanes* w, CrbaLanes* c,
                                 Py_ssize_t i) noexcept nogil:
    # R_i, p_i: orientation and origin of body i in its root body's coordinates
    # (R = 1, p = 0 for a root body; else R_i = R_λ(i) E_upᵀ, p_i = p_λ(i) + R_λ(i) r_up)
    cdef Py_ssize_t p = model.parent[i], j, k, l
    cdef double* R_i = c.R + 9 * W * i
    cdef double* p_i = c.p + 3 * W * i
    cdef const double* R_p
    cdef const double* E = w.E_up + 9 * W * i
    cdef const double* r = w.r_up + 3 * W * i
    if p < 0:
        for k in range(9):
            for l in range(W):
                R_i[k * W + l] = 1.0 if k % 4 == 0 else 0.0
        memset(p_i, 0, 3 * W * sizeof(double))
        return
    R_p = c.R + 9 * W * p
    for j in range(3):
        for k in range(3):
            for l in range(W):
                R_i[(3 * j + k) * W + l] = (R_p[3 * j * W + l] * E[3 * k * W + l]
                                            + R_p[(3 * j + 1) * W + l] * E[(3 * k + 1) * W + l]
                                            + R_p[(3 * j + 2) * W + l] * E[(3 * k + 2) * W + l])
        for l in range(W):
            p_i[j * W + l] = (c.p[(3 * p + j) * W + l] + R_p[3 * j * W + l] * r[l]
                              + R_p[(3 * j + 1) * W + l] * r[W + l]
                              + R_p[(3 * j + 2) * W + l] * r[2 * W + l])


cdef inline void motion_to_root_lanes(const CrbaLanes* c, Py_ssize_t i, clp m,
                                      lp out) noexcept nogil:
    # out = X_0,i⁻¹ m = [R ω; R v + p × R ω]
    cdef const double* R = c.R + 9 * W * i
    cdef const double* p = c.p + 3 * W * i
    cdef Py_ssize_t j, l
    for j in range(3):
        for l in range(W):
            out[j * W + l] = (R[3 * j * W + l] * m[l] + R[(3 * j + 1) * W + l] * m[W + l]
                              + R[(3 * j + 2) * W + l] * m[2 * W + l])
            out[(3 + j) * W + l] = (R[3 * j * W + l] * m[3 * W + l]
                                    + R[(3 * j + 1) * W + l] * m[4 * W + l]
                                    + R[(3 * j + 2) * W + l] * m[5 * W + l])
    for l in range(W):
        out[3 * W + l] += p[W + l] * out[2 * W + l] - p[2 * W + l] * out[W + l]
        out[4 * W + l] += p[2 * W + l] * out[l] - p[l] * out[2 * W + l]
        out[5 * W + l] += p[l] * out[W + l] - p[W + l] * out[l]


cdef inline void force_to_root_lanes(const CrbaLanes* c, Py_ssize_t i, clp f,
                                     lp out) noexcept nogil:
    # out = X_0,iᵀ f = [R n + p × R f; R f]
    cdef const double* R = c.R + 9 * W * i
    cdef const double* p = c.p + 3 * W * i
    cdef Py_ssize_t j, l
    for j in range(3):
        for l in range(W):
            out[j * W + l] = (R[3 * j * W + l] * f[l] + R[(3 * j + 1) * W + l] * f[W + l]
                              + R[(3 * j + 2) * W + l] * f[2 * W + l])
            out[(3 + j) * W + l] = (R[3 * j * W + l] * f[3 * W + l]
                                    + R[(3 * j + 1) * W + l] * f[4 * W + l]
                                    + R[(3 * j + 2) * W + l] * f[5 * W + l])
    for l in range(W):
        out[l] += p[W + l] * out[5 * W + l] - p[2 * W + l] * out[4 * W + l]
        out[W + l] += p[2 * W + l] * out[3 * W + l] - p[l] * out[5 * W + l]
        out[2 * W + l] += p[l] * out[4 * W + l] - p[W + l] * out[3 * W + l]


cdef inline void rbi_congruence_add_lanes(clp E, clp r, double m, clp h, clp Ibar,
                                          lp h_out, lp Ibar_out) noexcept nogil:
    # (h', Ī') += Xᵀ (m, h, Ī) X for a rigid-body inertia and X = plux(E, r); with y = Eᵀ h:
    #   h' = y + m r,  Ī' = Eᵀ Ī E - (y rᵀ + r yᵀ) + 2 (r·y) 1 - m (r rᵀ - (r·r) 1)
    #   (the mass, the same on every lane, is summed by the caller)
    cdef double y[3 * W]
    cdef double T[9 * W]
    cdef double ry, rr, Rij
    cdef Py_ssize_t i, j, l
    for i in range(3):
        for l in range(W):
            y[i * W + l] = (E[i * W + l] * h[l] + E[(3 + i) * W + l] * h[W + l]
                            + E[(6 + i) * W + l] * h[2 * W + l])
    for i in range(3):
        for j in range(3):
            for l in range(W):
                # T = Ī E
                T[(3 * i + j) * W + l] = (Ibar[3 * i * W + l] * E[j * W + l]
                                          + Ibar[(3 * i + 1) * W + l] * E[(3 + j) * W + l]
                                          + Ibar[(3 * i + 2) * W + l] * E[(6 + j) * W + l])
    for i in range(3):
        for l in range(W):
            h_out[i * W + l] += y[i * W + l] + m * r[i * W + l]
        for j in range(3):
            for l in range(W):
                # (Eᵀ T)_ij - y_i r_j - r_i y_j - m r_i r_j
                Rij = (E[i * W + l] * T[j * W + l] + E[(3 + i) * W + l] * T[(3 + j) * W + l]
                       + E[(6 + i) * W + l] * T[(6 + j) * W + l])
                Ibar_out[(3 * i + j) * W + l] += (Rij - y[i * W + l] * r[j * W + l]
                                                  - r[i * W + l] * y[j * W + l]
                                                  - m * r[i * W + l] * r[j * W + l])
    for l in range(W):
        ry = r[l] * y[l] + r[W + l] * y[W + l] + r[2 * W + l] * y[2 * W + l]
        rr = r[l] * r[l] + r[W + l] * r[W + l] + r[2 * W + l] * r[2 * W + l]
        for i in range(3):
            Ibar_out[4 * i * W + l] += 2.0 * ry + m * rr


cdef inline void rbi_apply_lanes(double m, clp h, clp Ibar, clp v, lp out) noexcept nogil:
    # out = I v = [Ī ω + h × v_lin; m v_lin - h × ω]   (h, Ī per lane)
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = (Ibar[l] * v[l] + Ibar[W + l] * v[W + l] + Ibar[2 * W + l] * v[2 * W + l]
                  + (h[W + l] * v[5 * W + l] - h[2 * W + l] * v[4 * W + l]))
        out[W + l] = (Ibar[3 * W + l] * v[l] + Ibar[4 * W + l] * v[W + l]
                      + Ibar[5 * W + l] * v[2 * W + l]
                      + (h[2 * W + l] * v[3 * W + l] - h[l] * v[5 * W + l]))
        out[2 * W + l] = (Ibar[6 * W + l] * v[l] + Ibar[7 * W + l] * v[W + l]
                          + Ibar[8 * W + l] * v[2 * W + l]
                          + (h[l] * v[4 * W + l] - h[W + l] * v[3 * W + l]))
        out[3 * W + l] = m * v[3 * W + l] - (h[W + l] * v[2 * W + l] - h[2 * W + l] * v[W + l])
        out[4 * W + l] = m * v[4 * W + l] - (h[2 * W + l] * v[l] - h[l] * v[2 * W + l])
        out[5 * W + l] = m * v[5 * W + l] - (h[l] * v[W + l] - h[W + l] * v[l])


cdef void crba(const ModelC* model, Lanes* w, double* m_C, double* out,
               Py_ssize_t out_stride, Py_ssize_t n) noexcept nogil:
    """M = CRBA(q) on W lanes, lane l's M (nv × nv, row-major) at out + l out_stride, l < n.

    Writes X_up, S (soa.pxi's places) and R, p, IC, S0, F0 (CrbaLanes); m_C: nb doubles.
    """
    cdef Py_ssize_t nb = model.nb, nv = model.nv, i, j, k, kk, l, p, nv_i, nv_j, vi, vj
    cdef CrbaLanes c
    cdef double F[6 * W]
    cdef double Mji[W]
    c.R = w.IA
    c.p = c.R + 9 * W * nb
    c.h_C = c.p + 3 * W * nb
    c.I_C = c.h_C + 3 * W * nb
    c.S0 = w.U
    c.F0 = w.D_inv

    # --- outward pass: joint transforms, root-body coordinates
    for i in range(nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i)
        joint_step(model, w, i)
        # R_i = R_λ(i) E_upᵀ,  p_i = p_λ(i) + R_λ(i) r_up   (R = 1, p = 0 at a root body)
        root_pose_lanes(model, w, &c, i)
        for k in range(model.nv_j[i]):
            # S⁰ = X_0,i⁻¹ S_i = [R S_ω; R S_v + p × R S_ω]
            motion_to_root_lanes(&c, i, w.S + 6 * W * (model.v_start[i] + k),
                                 c.S0 + 6 * W * (model.v_start[i] + k))

    # --- inward pass: composite inertias, held as rigid-body inertias (m, h, Ī)
    # IC_i = I_i
    for i in range(nb):
        m_C[i] = model.mass[i]
        for k in range(3):
            for l in range(W):
                c.h_C[(3 * i + k) * W + l] = model.h[3 * i + k]
        for k in range(9):
            for l in range(W):
                c.I_C[(9 * i + k) * W + l] = model.Ibar[9 * i + k]
    for i in range(nb - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            # IC_λ(i) += X_up[i]ᵀ IC_i X_up[i]
            m_C[p] += m_C[i]
            rbi_congruence_add_lanes(w.E_up + 9 * W * i, w.r_up + 3 * W * i, m_C[i],
                                     c.h_C + 3 * W * i, c.I_C + 9 * W * i,
                                     c.h_C + 3 * W * p, c.I_C + 9 * W * p)  # RBDA T6.2

    # --- block rows: project the composite inertia onto every ancestor's joint
    # (in root-body coordinates: M_ji = S_jᵀ X_up[..]ᵀ F = S⁰_j · F⁰)
    for l in range(n):
        memset(out + l * out_stride, 0, nv * nv * sizeof(double))
    for i in range(nb):
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        for k in range(nv_i):
            # F = IC_i S_i
            rbi_apply_lanes(m_C[i], c.h_C + 3 * W * i, c.I_C + 9 * W * i,
                            w.S + 6 * W * (vi + k), F)                      # RBDA T6.2
            for kk in range(nv_i):
                # M_ii = S_iᵀ F
                dot6(w.S + 6 * W * (vi + kk), F, Mji)
                for l in range(n):
                    out[l * out_stride + (vi + kk) * nv + vi + k] = Mji[l]
            # M_ii += diag(armature_i)   (rotor inertia)
            for l in range(n):
                out[l * out_stride + (vi + k) * nv + vi + k] += model.armature[vi + k]
            # F⁰ = X_0,iᵀ F = [R n + p × R f; R f]
            force_to_root_lanes(&c, i, F, c.F0 + 6 * W * (vi + k))
        j = i
        while model.parent[j] >= 0 and nv_i > 0:
            j = model.parent[j]
            nv_j = model.nv_j[j]
            vj = model.v_start[j]
            for k in range(nv_i):
                for kk in range(nv_j):
                    # M_ji = S_jᵀ F = S⁰_j · F⁰;  M_ij = M_jiᵀ
                    dot6(c.S0 + 6 * W * (vj + kk), c.F0 + 6 * W * (vi + k), Mji)  # RBDA T6.2
                    for l in range(n):
                        out[l * out_stride + (vj + kk) * nv + vi + k] = Mji[l]
                        out[l * out_stride + (vi + k) * nv + vj + kk] = Mji[l]


cdef int run_crba(const void* record, double* work, int task, const double** x,
                  const Py_ssize_t* stride, double* out, Py_ssize_t out_stride,
                  Py_ssize_t k0, Py_ssize_t n) noexcept nogil:
    # the mass matrices of states k0 .. k0 + n - 1 (n ≤ W) of a batch: x[0] = q (the
    # other inputs unused), lanes past n repeat the last state; rows of out_stride = nv²
    # doubles.  Returns 0.
    cdef const ModelC* model = <const ModelC*>record
    cdef Lanes w
    cdef Py_ssize_t l, k
    cdef double m_C[64]
    cdef double* masses = m_C
    bind(model, <double*>((<size_t>work + 63) & ~(<size_t>63)), &w)
    for l in range(W):
        k = k0 + (l if l < n else n - 1)
        w.q[l] = x[0] + k * stride[0]
        w.qd_row[l] = NULL
    if model.nb > 64:
        # the composite masses: in the (unused) articulated bias forces' place
        masses = w.pA
    crba(model, &w, masses, out + k0 * out_stride, out_stride, n)
    return 0


_kernels.crba = run_crba
