# cython: language_level=3
from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport cross3_add, dot6, mat3_vec, rbi_apply, rbi_congruence_add

cdef void crba(const ModelC* model, Work* w, const double* q, double* M) noexcept nogil
cdef int ltl(const ModelC* model, double* M) noexcept nogil
cdef void ltl_solve(const ModelC* model, const double* L, double* X,
                    Py_ssize_t ncols) noexcept nogil
cdef void ltl_inverse(const ModelC* model, double* L) noexcept nogil


cdef inline void motion_to_root(Work* w, Py_ssize_t i, const double* m,
                                double* out) noexcept nogil:
    # out = X_0,i⁻¹ m = [R ω; R v + p × R ω]  (X_0,i: from the frame of R_i, p_i to body i,
    # its root body here, the world in the derivatives)
    mat3_vec(w.R + 9 * i, m, out)
    mat3_vec(w.R + 9 * i, m + 3, out + 3)
    cross3_add(w.p + 3 * i, out, out + 3)


cdef inline void force_to_root(Work* w, Py_ssize_t i, const double* f,
                               double* out) noexcept nogil:
    # out = X_0,iᵀ f = [R n + p × R f; R f]
    mat3_vec(w.R + 9 * i, f, out)
    mat3_vec(w.R + 9 * i, f + 3, out + 3)
    cross3_add(w.p + 3 * i, out + 3, out)


cdef inline void composite_inertias(const ModelC* model, Work* w) noexcept nogil:
    # IC_i = I_i;  IC_λ(i) += X_up[i]ᵀ IC_i X_up[i] from the leaves (m_C, h_C, I_C)
    cdef Py_ssize_t nb = model.nb, i, p
    # IC_i = I_i
    memcpy(w.m_C, model.mass, nb * sizeof(double))
    memcpy(w.h_C, model.h, 3 * nb * sizeof(double))
    memcpy(w.I_C, model.Ibar, 9 * nb * sizeof(double))
    for i in range(nb - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            # IC_λ(i) += X_up[i]ᵀ IC_i X_up[i]
            rbi_congruence_add(w.E_up + 9 * i, w.r_up + 3 * i, w.m_C[i], w.h_C + 3 * i,
                               w.I_C + 9 * i, w.m_C + p, w.h_C + 3 * p, w.I_C + 9 * p)  # RBDA T6.2


cdef inline void block_rows(const ModelC* model, Work* w, double* M) noexcept nogil:
    # M_ii = S_iᵀ IC_i S_i (+ armature);  M_ji = S⁰_j · F⁰ for every ancestor j, with S⁰, F⁰
    # in any frame common to a tree (root-body coordinates here, world in the stages);
    # needs S0 on entry, writes F0
    cdef Py_ssize_t nb = model.nb, nv = model.nv, i, j, k, l, nv_i, nv_j, vi, vj
    cdef double Mji
    cdef double* S_i
    cdef double F[6]
    memset(M, 0, nv * nv * sizeof(double))
    for i in range(nb):
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        for k in range(nv_i):
            # F = IC_i S_i
            rbi_apply(w.m_C[i], w.h_C + 3 * i, w.I_C + 9 * i, S_i + 6 * k, F)  # RBDA T6.2
            for l in range(nv_i):
                # M_ii = S_iᵀ F
                M[(vi + l) * nv + vi + k] = dot6(S_i + 6 * l, F)
            # M_ii += diag(armature_i)   (rotor inertia)
            M[(vi + k) * nv + vi + k] += model.armature[vi + k]
            # F⁰ = X_0,iᵀ F = [R n + p × R f; R f]
            force_to_root(w, i, F, w.F0 + 6 * (vi + k))
        j = i
        while model.parent[j] >= 0 and nv_i > 0:
            j = model.parent[j]
            nv_j = model.nv_j[j]
            vj = model.v_start[j]
            for k in range(nv_i):
                for l in range(nv_j):
                    # M_ji = S_jᵀ F = S⁰_j · F⁰;  M_ij = M_jiᵀ
                    Mji = dot6(w.S0 + 6 * (vj + l), w.F0 + 6 * (vi + k))        # RBDA T6.2
                    M[(vj + l) * nv + vi + k] = Mji
                    M[(vi + k) * nv + vj + l] = Mji


cdef inline void row_minus(double* X, Py_ssize_t ncols, Py_ssize_t dst, Py_ssize_t src,
                           double l) noexcept nogil:
    # row dst of X -= l · row src
    cdef Py_ssize_t c
    for c in range(ncols):
        X[dst * ncols + c] -= l * X[src * ncols + c]


cdef inline void row_scale(double* X, Py_ssize_t ncols, Py_ssize_t k, double l) noexcept nogil:
    # row k of X *= l
    cdef Py_ssize_t c
    for c in range(ncols):
        X[k * ncols + c] *= l


cdef inline void lt_solve(const ModelC* model, const double* L, double* X,
                          Py_ssize_t ncols) noexcept nogil:
    """X ← L⁻ᵀ X (sweep 1 of ``ltl_solve``, from the leaves to the root); a row of zeros
    stays zero and pushes nothing, so it is skipped (constraint Jacobians that touch a
    branch of the tree only)."""
    cdef Py_ssize_t n = model.nv, k, i, c, t
    # (row k is final once its descendants, larger indices, have pushed into it)
    for k in range(n - 1, -1, -1):
        c = 0
        while c < ncols and X[k * ncols + c] == 0.0:
            c += 1
        if c == ncols:
            continue
        row_scale(X, ncols, k, 1.0 / L[k * n + k])
        for t in range(model.dof_path_start[k], model.dof_path_start[k + 1]):
            i = model.dof_path[t]
            row_minus(X, ncols, i, k, L[k * n + i])


cdef inline void l_solve(const ModelC* model, const double* L, double* X,
                  Py_ssize_t ncols) noexcept nogil:
    """X ← L⁻¹ X (sweep 2 of ``ltl_solve``, from the root to the leaves)."""
    cdef Py_ssize_t n = model.nv, k, i, t
    # (row k needs its ancestors, smaller indices, only)
    for k in range(n):
        for t in range(model.dof_path_start[k], model.dof_path_start[k + 1]):
            i = model.dof_path[t]
            row_minus(X, ncols, k, i, L[k * n + i])
        row_scale(X, ncols, k, 1.0 / L[k * n + k])
