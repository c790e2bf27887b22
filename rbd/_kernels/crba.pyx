# cython: language_level=3
"""Composite-rigid-body algorithm for the joint-space inertia matrix, compiled.

The compiled twin of ``rbd/reference/crba.py`` (RBDA Table 6.2 with the block
rows taken in root-body coordinates): the same three passes under the same
headers.  The joint transforms also give each body's pose ``X_0,i`` relative
to its root body, so ``S`` and ``F = IC_i S_i`` are expressed once in root
coordinates and each step of the walk to the root is a single dot product
``M_ji = S⁰_j · F⁰`` (the same products as RBDA's ``F ← X_upᵀ F`` walk, taken
once per body instead of once per pair).  ``mass_matrix_inverse`` is the
ABA on unit forces in ``aba.pyx`` (twin: ``rbd.reference.aba``).
"""

from libc.math cimport sqrt
from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work, joint_step
from rbd._kernels._spatial cimport mat3_mulT, mat3_vec, set_identity3


cdef void crba(const ModelC* model, Work* w, const double* q, double* M) noexcept nogil:
    """M = CRBA(q), full and symmetric (nv × nv, row-major).

    Writes X_up, S, IC (m_C, h_C, I_C), R, p (root-body coordinates), S0, F0.
    """
    cdef Py_ssize_t nb = model.nb, i, k
    # --- outward pass: joint transforms, root-body coordinates
    for i in range(nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i)
        joint_step(model, w, i, q, NULL)
        # R_i = R_λ(i) E_upᵀ,  p_i = p_λ(i) + R_λ(i) r_up   (R = 1, p = 0 at a root body)
        root_pose(model, w, i)
        for k in range(model.nv_j[i]):
            # S⁰ = X_0,i⁻¹ S_i = [R S_ω; R S_v + p × R S_ω]
            motion_to_root(w, i, w.S + 6 * (model.v_start[i] + k),
                           w.S0 + 6 * (model.v_start[i] + k))

    # --- inward pass: composite inertias, held as rigid-body inertias (m, h, Ī)
    composite_inertias(model, w)

    # --- block rows: project the composite inertia onto every ancestor's joint
    # (in root-body coordinates: M_ji = S_jᵀ X_up[..]ᵀ F = S⁰_j · F⁰)
    block_rows(model, w, M)


cdef inline void root_pose(const ModelC* model, Work* w, Py_ssize_t i) noexcept nogil:
    # R_i, p_i: orientation and origin of body i in its root body's coordinates
    # (R = 1, p = 0 for a root body; else R_i = R_λ(i) E_upᵀ, p_i = p_λ(i) + R_λ(i) r_up)
    cdef Py_ssize_t p = model.parent[i], k
    if p < 0:
        set_identity3(w.R + 9 * i)
        w.p[3 * i] = 0.0; w.p[3 * i + 1] = 0.0; w.p[3 * i + 2] = 0.0
    else:
        mat3_mulT(w.R + 9 * p, w.E_up + 9 * i, w.R + 9 * i)
        mat3_vec(w.R + 9 * p, w.r_up + 3 * i, w.p + 3 * i)
        for k in range(3):
            w.p[3 * i + k] += w.p[3 * p + k]


cdef int ltl(const ModelC* model, double* M) noexcept nogil:
    """M = Lᵀ L in place (row-major, lower triangle), the tree's sparsity kept.

    Returns 0, or 1 + k when the pivot of degree of freedom k is not positive.
    """
    cdef Py_ssize_t n = model.nv, k, m, s, t
    cdef const int64_t* path
    cdef double* Mk
    cdef double* Mi
    cdef double d, l
    for k in range(n - 1, -1, -1):
        # the path of k to the root: path[0] = λ(k), path[1] = λ(λ(k)), …
        path = model.dof_path + model.dof_path_start[k]
        m = model.dof_path_start[k + 1] - model.dof_path_start[k]
        # L[k, k] = √M[k, k];  L[k, i] = M[k, i] / L[k, k] along the path to the root
        Mk = M + k * n
        if not Mk[k] > 0.0:
            return 1 + k
        d = sqrt(Mk[k])
        Mk[k] = d
        for t in range(m):
            Mk[path[t]] /= d
        # M[i, j] -= L[k, i] L[k, j] for every pair i, j on the path (j above i: the path of
        # i = path[t] is path[t + 1:])
        for t in range(m):
            Mi = M + path[t] * n
            l = Mk[path[t]]
            for s in range(t, m):
                Mi[path[s]] -= l * Mk[path[s]]
    return 0


cdef inline void ltl_solve_vector(const ModelC* model, const double* L,
                                  double* x) noexcept nogil:
    # ltl_solve's two sweeps for one vector (ncols = 1): x ← L⁻ᵀ x from the leaves, each
    # x_k pushed into its ancestors, then x ← L⁻¹ x from the root, each x_k gathered from
    # its ancestors (mj_solveM's two passes along dof_parent)
    cdef Py_ssize_t n = model.nv, k, t
    cdef const int64_t* start = model.dof_path_start
    cdef const int64_t* path = model.dof_path
    cdef const double* Lk
    cdef double s
    for k in range(n - 1, -1, -1):
        if x[k] == 0.0:
            continue
        Lk = L + k * n
        s = x[k] / Lk[k]
        x[k] = s
        for t in range(start[k], start[k + 1]):
            x[path[t]] -= Lk[path[t]] * s
    for k in range(n):
        Lk = L + k * n
        s = x[k]
        for t in range(start[k], start[k + 1]):
            s -= Lk[path[t]] * x[path[t]]
        x[k] = s / Lk[k]


cdef void ltl_solve(const ModelC* model, const double* L, double* X,
                    Py_ssize_t ncols) noexcept nogil:
    """X ← M⁻¹ X from M = Lᵀ L (X: nv rows of ncols, row-major), in place."""
    if ncols == 1:
        ltl_solve_vector(model, L, X)
        return
    # --- sweep 1 (leaves to root): X ← L⁻ᵀ X
    lt_solve(model, L, X, ncols)
    # --- sweep 2 (root to leaves): X ← L⁻¹ X
    l_solve(model, L, X, ncols)


cdef void ltl_inverse(const ModelC* model, double* L) noexcept nogil:
    """M⁻¹ = L⁻¹ L⁻ᵀ from M = Lᵀ L, in L's own storage (full and symmetric on return).

    The reference solves against the identity; here N = L⁻¹ replaces L column by column
    from the last (N keeps L's pattern), then N Nᵀ replaces N row by row from the last.
    """
    cdef Py_ssize_t n = model.nv, a, b, k
    cdef const int64_t* lam = model.dof_parent
    cdef double s
    for b in range(n - 1, -1, -1):
        # N[b, b] = 1 / L[b, b];  N[a, b] = -N[b, b] Σ_{b < k ⪯ a} N[a, k] L[k, b]  (N L = 1)
        L[b * n + b] = 1.0 / L[b * n + b]
        for a in range(n - 1, b, -1):
            s = 0.0
            k = a
            while k > b:
                s += L[a * n + k] * L[k * n + b]
                k = lam[k]
            L[a * n + b] = -L[b * n + b] * s
    for a in range(n - 1, -1, -1):
        for b in range(a, -1, -1):
            # (N Nᵀ)[a, b] = Σ_{k ⪯ b} N[a, k] N[b, k]
            s = 0.0
            k = b
            while k >= 0:
                s += L[a * n + k] * L[b * n + k]
                k = lam[k]
            L[a * n + b] = s
    for a in range(n):
        for b in range(a + 1, n):
            L[a * n + b] = L[b * n + a]
