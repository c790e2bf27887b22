# Batched ABA over a structure of arrays, and the runner of a block of a batch.
#
# The second half of ``soa.pxi`` (included right after it by ``_soa_portable.pyx``,
# ``_soa_avx2.pyx`` and ``_soa_avx512.pyx``): the lane rendering of ``aba.pyx``/``aba.pxd``
# (twin: ``rbd/reference/aba.py``) on that file's ``Lanes`` workspace and ``joint_step``;
# then ``run_block``, which moves a block of states into lanes and runs RNEA or ABA on it,
# and the kernel table (``SoaKernels``) that ``soa_derivatives.pxi``, ``soa_rollout.pxi``
# and ``soa_crba.pxi`` add their kernels to.

from cpython.pycapsule cimport PyCapsule_New

from rbd._kernels._lanes cimport (
    broadcast_lower,
    cholesky,
    cholesky_solve,
    congruence_add,
    congruence_add_corner,
    spd_inverse,
    spd_inverse3,
    sym6_vec,
    sym_row_dot,
)
from rbd._kernels._soa cimport SOA_RNEA, SoaKernels


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
