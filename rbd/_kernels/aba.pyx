# cython: language_level=3
"""Articulated-body algorithm for forward dynamics and ``M⁻¹``, compiled.

The compiled twin of ``rbd/reference/aba.py`` (RBDA Table 7.1): three passes
under the same headers and symbols.  Pass 1 is the shared outward step of
``rnea.pxd``; pass 2 the shared articulated-inertia step of ``aba.pxd``.

* ``aba(..., modified_pivot)``: with ``modified_pivot`` the pivot is Pai,
  Ascher & Kry's (their §7; the reference ``aba(..., modified_pivot=True)``,
  entry point ``rbd/_kernels/block_elimination.pyx``).
* ``mass_matrix_inverse``: the same passes run on the unit joint forces, all
  columns at once, at zero velocity and gravity (twin:
  ``rbd.reference.aba.mass_matrix_inverse``).  The product it assembles is Si
  & Guenter's factorization ``M⁻¹ = Lᵀ Ω⁻¹ L`` (their Eq. 58, rendered in
  global matrix form by ``rbd.reference.ploen``), in O(n·nv) operations.  It
  differs from its reference in storage only: the kernel computes the columns
  ``j ≥ v_start[i]`` of block row ``i`` and copies the lower triangle, and
  keeps the per-body columns ``F_i`` in shared slots.

Both return 0, or ``1 + i`` when the articulated inertia ``D_i`` of body ``i``
is not positive definite (a joint that moves no inertia).
"""

from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work, armature_bias_add, joint_step
from rbd._kernels._spatial cimport (
    congruence_add,
    dot6,
    mat6_vec,
    xform_force_T_add,
    xform_motion,
)
from rbd._kernels.rnea cimport outward_step


cdef inline void accelerations(const ModelC* model, Work* w, double* qdd) noexcept nogil:
    # pass 3 (outward): a' = X_up[i] a_λ(i) + c_i;  q̈_i = D_i⁻¹ (u_i - U_iᵀ a');
    # a_i = a' + S_i q̈_i
    cdef Py_ssize_t i, j, k, p, nv_i, vi
    cdef const double* a_p
    cdef double* a_i
    cdef double r_i[6]
    for i in range(model.nb):
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        a_i = w.a + 6 * i
        # a' = X_up[i] a_λ(i) + c_i
        a_p = <const double*>&model.a0[0] if p < 0 else w.a + 6 * p
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, a_p, a_i)
        for k in range(6):
            a_i[k] += w.c[6 * i + k]                                        # RBDA T7.1
        # q̈_i = D_i⁻¹ (u_i - U_iᵀ a')
        for j in range(nv_i):
            r_i[j] = w.u[vi + j] - dot6(w.U + 6 * (vi + j), a_i)
        for j in range(nv_i):
            qdd[vi + j] = 0.0
            for k in range(nv_i):
                qdd[vi + j] += w.D_inv[36 * i + 6 * j + k] * r_i[k]        # RBDA T7.1
        # a_i = a' + S_i q̈_i
        for j in range(nv_i):
            for k in range(6):
                a_i[k] += w.S[6 * (vi + j) + k] * qdd[vi + j]


cdef int aba(const ModelC* model, Work* w, const double* q, const double* qd,
             const double* tau, const double* f_ext, double* qdd,
             bint modified_pivot) noexcept nogil:
    """qdd = FD(q, q̇, τ, f_ext); writes X_up, S, v, c, IA, pA, U, D, D_inv, u, a."""
    cdef Py_ssize_t nb = model.nb, i, j, k, p, nv_i, vi
    cdef double pa[6]
    cdef double Ia[36]
    cdef double UDinv[36]

    # --- pass 1 (outward): velocities, bias accelerations, bias forces
    for i in range(nb):
        # v_i = X_up[i] v_λ(i) + S_i q̇_i;  c_i = c_J + v_i × S_i q̇_i;
        # pA_i = v_i ×* I_i v_i - f_ext_i
        outward_step(model, w, i, q, qd, f_ext, w.c + 6 * i, w.pA + 6 * i)
        # IA_i = I_i   (modified pivot: IA~_i = 0, the children's part only)
        if modified_pivot:
            memset(w.IA + 36 * i, 0, 36 * sizeof(double))
        else:
            memcpy(w.IA + 36 * i, model.inertia + 36 * i, 36 * sizeof(double))

    # --- pass 2 (inward): articulated-body inertias and bias forces
    for i in range(nb - 1, -1, -1):
        # U_i = IA_i S_i;  D_i = S_iᵀ U_i (+ armature);  D_i⁻¹
        if pivot(model, w, i, modified_pivot):
            w.status = <int>(1 + i)
            return w.status
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        for k in range(nv_i):
            # u_i = τ_i - S_iᵀ pA_i
            w.u[vi + k] = tau[vi + k] - dot6(w.S + 6 * (vi + k), w.pA + 6 * i)  # RBDA T7.1
        # u_i -= a ⊙ (ω × u)   (a free joint's armature, on its linear rows)
        armature_bias_add(model, i, qd, -1.0, w.u)
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
    accelerations(model, w, qdd)
    return 0


cdef inline void unit_force_columns(const ModelC* model, Work* w, Py_ssize_t i,
                                    double* M_inv) noexcept nogil:
    # pass 2 of M⁻¹ at body i, columns j ≥ v_start[i]:  row i of M⁻¹ = D_i⁻¹ u_i with
    # u_i = e_i - S_iᵀ F_i;  F_λ(i) += X_up[i]ᵀ (F_i + U_i D_i⁻¹ u_i)
    cdef Py_ssize_t nv = model.nv, nv_i = model.nv_j[i], vi = model.v_start[i]
    cdef Py_ssize_t p = model.parent[i], j, k, l
    cdef const double* D_inv = w.D_inv + 36 * i
    cdef double* F_i = w.F + 6 * nv * model.col_slot[i]
    cdef double* F_p
    cdef double* row
    cdef double s[6]
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
                row[j] -= D_inv[6 * k + l] * dot6(w.S + 6 * (vi + l), F_i + 6 * j)
    if p < 0:
        return
    F_p = w.F + 6 * nv * model.col_slot[p]
    if model.col_last[p] == i:
        # F_λ(i) = 0 before its first (highest-numbered) child pushes
        memset(F_p + 6 * model.v_start[p], 0, 6 * (nv - model.v_start[p]) * sizeof(double))
    for j in range(vi, nv):
        # pa = F_i[:, j] + U_i M⁻¹[i, j];  F_λ(i)[:, j] += X_up[i]ᵀ pa
        memcpy(s, F_i + 6 * j, 6 * sizeof(double))
        for l in range(nv_i):
            for k in range(6):
                s[k] += w.U[6 * (vi + l) + k] * M_inv[(vi + l) * nv + j]    # RBDA T7.1
        xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, s, F_p + 6 * j)  # S&G (24)


cdef inline void unit_force_accelerations(const ModelC* model, Work* w, Py_ssize_t i,
                                          double* M_inv) noexcept nogil:
    # pass 3 of M⁻¹ at body i, columns j ≥ v_start[i]:  a' = X_up[i] a_λ(i);
    # M⁻¹_ij -= D_i⁻¹ U_iᵀ a';  a_i = a' + S_i M⁻¹_ij   (a_i kept in F_i)
    cdef Py_ssize_t nv = model.nv, nv_i = model.nv_j[i], vi = model.v_start[i]
    cdef Py_ssize_t p = model.parent[i], j, k, l
    cdef const double* D_inv = w.D_inv + 36 * i
    cdef double* F_i = w.F + 6 * nv * model.col_slot[i]
    cdef double t[6]
    cdef double s[6]
    for j in range(vi, nv):
        if p >= 0:
            # a' = X_up[i] a_λ(i)
            xform_motion(w.E_up + 9 * i, w.r_up + 3 * i,
                         w.F + 6 * (nv * model.col_slot[p] + j), t)
            for k in range(nv_i):
                s[k] = dot6(w.U + 6 * (vi + k), t)
            for k in range(nv_i):
                # M⁻¹_ij -= D_i⁻¹ U_iᵀ a'
                for l in range(nv_i):
                    M_inv[(vi + k) * nv + j] -= D_inv[6 * k + l] * s[l]     # RBDA T7.1
        else:
            memset(t, 0, 6 * sizeof(double))
        for l in range(nv_i):
            for k in range(6):
                # a_i = a' + S_i M⁻¹[i, j]
                t[k] += w.S[6 * (vi + l) + k] * M_inv[(vi + l) * nv + j]
        memcpy(F_i + 6 * j, t, 6 * sizeof(double))


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
    cdef Py_ssize_t nb = model.nb, nv = model.nv, i, j, p
    cdef double Ia[36]
    cdef double UDinv[36]

    # --- pass 1 (outward): joint transforms
    for i in range(nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i);  IA_i = I_i
        joint_step(model, w, i, q, NULL)
        memcpy(w.IA + 36 * i, model.inertia + 36 * i, 36 * sizeof(double))

    # --- pass 2 (inward): articulated inertias; bias forces of the unit joint forces
    for i in range(nb - 1, -1, -1):
        # U_i = IA_i S_i;  D_i = S_iᵀ U_i (+ armature);  D_i⁻¹
        if pivot(model, w, i, False):
            w.status = <int>(1 + i)
            return w.status
        unit_force_columns(model, w, i, M_inv)
        p = model.parent[i]
        if p >= 0:
            # Ia = IA_i - U_i D_i⁻¹ U_iᵀ;  IA_λ(i) += X_up[i]ᵀ Ia X_up[i]
            articulated_inertia(model, w, i, Ia, UDinv)                     # S&G (27)
            congruence_add(w.E_up + 9 * i, w.r_up + 3 * i, Ia, w.IA + 36 * p)  # S&G (27)

    # --- pass 3 (outward): accelerations of the unit joint forces
    for i in range(nb):
        unit_force_accelerations(model, w, i, M_inv)

    for i in range(nv):
        for j in range(i + 1, nv):
            # M⁻¹ symmetric
            M_inv[j * nv + i] = M_inv[i * nv + j]
    return 0
