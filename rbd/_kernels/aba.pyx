# cython: language_level=3
"""Articulated-body algorithm for forward dynamics, compiled.

The compiled twin of ``rbd/reference/aba.py`` (RBDA Table 7.1): three passes
under the same headers and symbols.  ``mass_matrix_inverse`` runs the same
inward pass on the unit joint forces (all columns at once, zero velocity and
gravity), which yields Si & Guenter's factorization of ``M⁻¹`` (their
Appendix B, Eq. 58) in O(n·nv) operations; the reference computes ``M⁻¹``
by a Cholesky solve of the CRBA matrix (``rbd/reference/crba.py``).

Both return 0, or ``1 + i`` when the articulated inertia ``D_i`` of body ``i``
is not positive definite (a joint that moves no inertia).
"""

from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work, joint_step
from rbd._kernels._spatial cimport (
    congruence_add,
    crf_apply,
    crm_apply,
    dot6,
    mat6_vec,
    rbi_apply,
    spd_inverse,
    xform_force_T,
    xform_force_T_add,
    xform_motion,
)


cdef inline int articulate(const ModelC* model, Work* w, Py_ssize_t i) noexcept nogil:
    # U_i = IA_i S_i,  D_i = S_iᵀ U_i + diag(armature_i),  D_i⁻¹;  returns 1 if D_i is not positive definite
    cdef Py_ssize_t nv_i = model.nv_j[i], k, l
    cdef double* S_i = w.S + 6 * model.v_start[i]
    cdef double* U_i = w.U + 6 * model.v_start[i]
    cdef double* D = w.D + 36 * i
    for k in range(nv_i):
        # U_i = IA_i S_i
        mat6_vec(w.IA + 36 * i, S_i + 6 * k, U_i + 6 * k)                  # RBDA T7.1
    for k in range(nv_i):
        for l in range(nv_i):
            # D_i = S_iᵀ U_i
            D[6 * k + l] = dot6(S_i + 6 * k, U_i + 6 * l)                   # S&G (28)
    for k in range(nv_i):
        # D_i += diag(armature_i)   (rotor inertia, on the joint's own degrees of freedom)
        D[7 * k] += model.armature[model.v_start[i] + k]
    if nv_i == 0:
        return 0
    return spd_inverse(D, <int>nv_i, 6, w.D_inv + 36 * i, w.scratch)


cdef inline void articulated_inertia(const ModelC* model, Work* w, Py_ssize_t i,
                                     double* Ia, double* UDinv) noexcept nogil:
    # Ia = IA_i - U_i D_i⁻¹ U_iᵀ;  UDinv = U_i D_i⁻¹ (6 × nv_i, column-major)
    cdef Py_ssize_t nv_i = model.nv_j[i], k, l, r, s
    cdef double* U_i = w.U + 6 * model.v_start[i]
    cdef double* D_inv = w.D_inv + 36 * i
    memcpy(Ia, w.IA + 36 * i, 36 * sizeof(double))
    for k in range(nv_i):
        for r in range(6):
            UDinv[6 * k + r] = 0.0
            for l in range(nv_i):
                UDinv[6 * k + r] += U_i[6 * l + r] * D_inv[6 * l + k]
    for k in range(nv_i):
        for r in range(6):
            for s in range(6):
                Ia[6 * r + s] -= UDinv[6 * k + r] * U_i[6 * k + s]          # S&G (27)


cdef int aba(const ModelC* model, Work* w, const double* q, const double* qd,
             const double* tau, const double* f_ext, double* qdd) noexcept nogil:
    """qdd = FD(q, q̇, τ, f_ext); writes X_up, S, v, c, IA, pA, U, D, D_inv, u, a."""
    cdef Py_ssize_t nb = model.nb, i, j, k, p, nv_i, vi
    cdef double* v_i
    cdef double* c_i
    cdef double* a_i
    cdef const double* a_p
    cdef double* S_i
    cdef double* U_i
    cdef double* D_inv
    cdef double v_J[6]
    cdef double t[6]
    cdef double Iv[6]
    cdef double pa[6]
    cdef double Ia[36]
    cdef double UDinv[36]
    cdef double r_i[6]

    # --- pass 1 (outward): velocities, bias accelerations, bias forces
    for i in range(nb):
        # X_J, S_i, c_J = jcalc(q_i, q̇_i);  X_up[i] = X_J X_tree[i]
        joint_step(model, w, i, q, qd)
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        v_i = w.v + 6 * i
        c_i = w.c + 6 * i
        # v_J = S_i q̇_i
        for k in range(6):
            v_J[k] = 0.0
        for j in range(nv_i):
            for k in range(6):
                v_J[k] += S_i[6 * j + k] * qd[vi + j]
        # v_i = X_up[i] v_λ(i) + v_J
        if p < 0:
            memcpy(v_i, v_J, 6 * sizeof(double))                           # S&G (8)
        else:
            xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.v + 6 * p, v_i)
            for k in range(6):
                v_i[k] += v_J[k]                                            # S&G (8)
        # c_i = c_J + v_i × v_J
        crm_apply(v_i, v_J, c_i)
        for k in range(6):
            c_i[k] += w.c_J[6 * i + k]                                      # S&G (11)
        # IA_i = I_i
        memcpy(w.IA + 36 * i, model.inertia + 36 * i, 36 * sizeof(double))
        # pA_i = v_i ×* I_i v_i - f_ext_i
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, v_i, Iv)
        crf_apply(v_i, Iv, w.pA + 6 * i)                                    # S&G (21)
        if f_ext != NULL:
            for k in range(6):
                w.pA[6 * i + k] -= f_ext[6 * i + k]

    # --- pass 2 (inward): articulated-body inertias and bias forces
    for i in range(nb - 1, -1, -1):
        if articulate(model, w, i):
            w.status = <int>(1 + i)
            return w.status
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        D_inv = w.D_inv + 36 * i
        for k in range(nv_i):
            # u_i = τ_i - S_iᵀ pA_i
            w.u[vi + k] = tau[vi + k] - dot6(S_i + 6 * k, w.pA + 6 * i)     # RBDA T7.1
        p = model.parent[i]
        if p >= 0:
            # Ia = IA_i - U_i D_i⁻¹ U_iᵀ
            articulated_inertia(model, w, i, Ia, UDinv)                     # S&G (27)
            # pa = pA_i + Ia c_i + U_i D_i⁻¹ u_i
            mat6_vec(Ia, w.c + 6 * i, pa)
            for k in range(6):
                pa[k] += w.pA[6 * i + k]
            for j in range(nv_i):
                for k in range(6):
                    pa[k] += UDinv[6 * j + k] * w.u[vi + j]                 # RBDA T7.1
            # IA_λ(i) += X_up[i]ᵀ Ia X_up[i]
            congruence_add(w.E_up + 9 * i, w.r_up + 3 * i, Ia, w.IA + 36 * p)  # S&G (27)
            # pA_λ(i) += X_up[i]ᵀ pa
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, pa, w.pA + 6 * p)  # S&G (24)

    # --- pass 3 (outward): accelerations
    for i in range(nb):
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        U_i = w.U + 6 * vi
        D_inv = w.D_inv + 36 * i
        a_i = w.a + 6 * i
        # a' = X_up[i] a_λ(i) + c_i
        if p < 0:
            a_p = <const double*>&model.a0[0]
        else:
            a_p = w.a + 6 * p
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, a_p, a_i)
        for k in range(6):
            a_i[k] += w.c[6 * i + k]                                        # RBDA T7.1
        # q̈_i = D_i⁻¹ (u_i - U_iᵀ a')
        for j in range(nv_i):
            r_i[j] = w.u[vi + j] - dot6(U_i + 6 * j, a_i)
        for j in range(nv_i):
            qdd[vi + j] = 0.0
            for k in range(nv_i):
                qdd[vi + j] += D_inv[6 * j + k] * r_i[k]                    # RBDA T7.1
        # a_i = a' + S_i q̈_i
        for j in range(nv_i):
            for k in range(6):
                a_i[k] += S_i[6 * j + k] * qdd[vi + j]
    return 0


cdef int mass_matrix_inverse(const ModelC* model, Work* w, const double* q,
                             double* M_inv) noexcept nogil:
    """M⁻¹(q) (nv × nv, row-major, symmetric); writes X_up, S, IA, U, D, D_inv, F.

    Column j of M⁻¹ is the ABA's q̈ for τ = e_j at zero velocity and gravity.  The
    inward pass carries the bias forces of every column at once in F_i (6 × nv),
    the outward pass their accelerations (in the same storage).  Only the columns
    j ≥ v_start[i] of block row i are computed (bodies are numbered λ(i) < i);
    the lower triangle is copied from the upper one.  F_i is stored in slot
    col_slot[i] of w.F, shared by bodies whose F are never needed at the same time
    (``_model.column_slots``): a chain of n bodies uses 2 slots, not n.
    """
    cdef Py_ssize_t nb = model.nb, nv = model.nv, i, j, k, l, p, nv_i, vi
    cdef double* S_i
    cdef double* U_i
    cdef double* D_inv
    cdef double* F_i
    cdef double* F_p
    cdef double* row
    cdef double Ia[36]
    cdef double UDinv[36]
    cdef double t[6]
    cdef double s[6]
    cdef const int64_t* slot = model.col_slot
    for i in range(nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i)
        joint_step(model, w, i, q, NULL)
        # IA_i = I_i
        memcpy(w.IA + 36 * i, model.inertia + 36 * i, 36 * sizeof(double))

    # --- pass 2 (inward): articulated inertias; bias forces of the unit joint forces
    for i in range(nb - 1, -1, -1):
        if articulate(model, w, i):
            w.status = <int>(1 + i)
            return w.status
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        U_i = w.U + 6 * vi
        D_inv = w.D_inv + 36 * i
        F_i = w.F + 6 * nv * slot[i]
        if model.col_last[i] == i:
            # F_i = 0 (no child pushed into it)
            memset(F_i + 6 * vi, 0, 6 * (nv - vi) * sizeof(double))
        for k in range(nv_i):
            row = M_inv + (vi + k) * nv
            for l in range(nv_i):
                # M⁻¹_ii = D_i⁻¹   (u_i = 1 on the joint's own columns)
                row[vi + l] = D_inv[6 * k + l]
            for j in range(vi + nv_i, nv):
                # M⁻¹_ij = -D_i⁻¹ S_iᵀ F_i[:, j]   (u_i = -S_iᵀ pA_i)
                row[j] = 0.0
                for l in range(nv_i):
                    row[j] -= D_inv[6 * k + l] * dot6(S_i + 6 * l, F_i + 6 * j)
        p = model.parent[i]
        if p >= 0:
            # Ia = IA_i - U_i D_i⁻¹ U_iᵀ;  IA_λ(i) += X_up[i]ᵀ Ia X_up[i]
            articulated_inertia(model, w, i, Ia, UDinv)                     # S&G (27)
            congruence_add(w.E_up + 9 * i, w.r_up + 3 * i, Ia, w.IA + 36 * p)  # S&G (27)
            F_p = w.F + 6 * nv * slot[p]
            if model.col_last[p] == i:
                # F_λ(i) = 0 before its first (highest-numbered) child pushes
                memset(F_p + 6 * model.v_start[p], 0,
                       6 * (nv - model.v_start[p]) * sizeof(double))
            for j in range(vi, nv):
                # pa = F_i[:, j] + U_i M⁻¹[i, j];  F_λ(i)[:, j] += X_up[i]ᵀ pa
                memcpy(s, F_i + 6 * j, 6 * sizeof(double))
                for l in range(nv_i):
                    for k in range(6):
                        s[k] += U_i[6 * l + k] * M_inv[(vi + l) * nv + j]
                xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, s, F_p + 6 * j)  # S&G (24)

    # --- pass 3 (outward): accelerations of the unit joint forces
    for i in range(nb):
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        U_i = w.U + 6 * vi
        D_inv = w.D_inv + 36 * i
        F_i = w.F + 6 * nv * slot[i]
        p = model.parent[i]
        for j in range(vi, nv):
            if p >= 0:
                # a' = X_up[i] a_λ(i)
                xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.F + 6 * (nv * slot[p] + j), t)
                for k in range(nv_i):
                    s[k] = dot6(U_i + 6 * k, t)
                for k in range(nv_i):
                    # M⁻¹_ij -= D_i⁻¹ U_iᵀ a'
                    for l in range(nv_i):
                        M_inv[(vi + k) * nv + j] -= D_inv[6 * k + l] * s[l]     # S&G (58)
            else:
                for k in range(6):
                    t[k] = 0.0
            for l in range(nv_i):
                for k in range(6):
                    # a_i = a' + S_i M⁻¹[i, j]
                    t[k] += S_i[6 * l + k] * M_inv[(vi + l) * nv + j]
            memcpy(F_i + 6 * j, t, 6 * sizeof(double))

    for i in range(nv):
        for j in range(i + 1, nv):
            # M⁻¹ symmetric
            M_inv[j * nv + i] = M_inv[i * nv + j]
    return 0
