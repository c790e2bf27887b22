# cython: language_level=3
r"""Forward dynamics and impulses under bilateral constraints, compiled.

The compiled twin of ``rbd/reference/constrained.py``: the same solvers under
the same names and symbols (``M``, ``h``, ``τ``, ``J``, ``γ``, ``L``, ``Y``,
``G``, ``q̈₀``, ``b``, ``f``, ``μ``), each on one state, in C without the GIL,
on the terms of that state in an ``Arena`` (``constrained.pxd``) filled by
``state_terms`` from one outward pass that evaluates every joint once
(``constraint_motion``, ``constraints.pxd``: joint transforms, world poses,
velocities): the rows ``φ``, ``J``, ``γ`` on it, ``M`` by the CRBA's
composite inertias and block rows on it (``composite_inertia`` of
``stages.pxd``, ``S⁰`` in world coordinates), ``h`` by the stages' ``bias``
on it (the compiled RNEA at ``q̈ = 0`` when there are external forces).
``M = Lᵀ L`` is the tree-sparse factor of the compiled CRBA (``ltl`` of ``crba.pyx``, RBDA §6.5: no fill-in, so it costs
``Σ depth²`` rather than ``nv³/3``) where the reference takes a dense
Cholesky factor ``M = L Lᵀ``; with ``Y = L⁻ᵀ Jᵀ`` (``nv × m``) the Delassus
matrix is ``G = Yᵀ Y`` (RBDA §8.1) and ``M⁻¹ Jᵀ f = L⁻¹ (Y f)``.

Where the twins differ (docs/design.md): the reference finds the redundant
rows from the singular values of ``J``; the kernel finds them while it
factors ``G`` by a Cholesky with diagonal pivoting (``pivoted_cholesky``): a
pivot of ``G``'s remaining Schur complement below :data:`PIVOT_RTOL` times
``G``'s largest diagonal entry ends the factor, ``G ≈ P B Bᵀ Pᵀ`` with ``B``
of ``rank`` columns.  Both return the force of least norm,
``f = G⁺ b = P B (BᵀB)⁻² Bᵀ Pᵀ b`` here (``least_norm``), which is
``U_r (U_rᵀ G U_r)⁻¹ U_rᵀ b`` of the reference; the two rank tests agree
wherever ``J``'s singular values are either at rounding level or above
``~1e-6`` of the largest (``PIVOT_RTOL`` is on their squares, weighted by
``M⁻¹``).

``solve_kkt`` renders the augmented system of Pai (5) by its block
``LDLᵀ`` factor (``M`` eliminated first, the constraint block's pivots
``−G``): a forward and a back substitution on ``[τ − h; γ]``.  It does the
same arithmetic as ``solve_schur`` in another order; the reference's
``solve_kkt`` factors the augmented matrix with partial pivoting instead.

``ConstrainedModel`` (``_constrained_batch.pyx``) is the Python entry point;
``kkt_acceleration`` (the terms and ``solve_kkt`` of one state) is the constrained
evaluation of the compiled rollouts (``rollout.pyx``).
"""

from libc.math cimport fabs, sqrt
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport cholesky_factor, cholesky_solve
from rbd._kernels.constraints cimport Rows, constraint_motion, rows_after_motion
from rbd._kernels.crba cimport l_solve, lt_solve, ltl, ltl_solve, motion_to_root
from rbd._kernels.rnea cimport rnea
from rbd._kernels.stages cimport Terms, bias, composite_inertia

#: A pivot of the Delassus matrix below this fraction of its largest diagonal entry marks
#: a redundant row (the squares of ``RANK_RTOL``'s singular values sit below rounding).
PIVOT_RTOL = 1e-12

cdef double c_PIVOT_RTOL = PIVOT_RTOL


#: A pivot of the augmented matrix's LU factor at most this fraction of its largest entry
#: marks it singular (``solve_augmented`` of ``_constrained_state.pyx``).
AUGMENTED_RTOL = 1e-13


# --- dense factors (row-major, n × n) -----------------------------------------------------------

cdef inline int cholesky(double* A, Py_ssize_t n) noexcept nogil:
    """A = L Lᵀ in place (lower triangle; the upper one zeroed); 1 if A is not positive definite."""
    cdef Py_ssize_t i, j
    if cholesky_factor(A, A, n, n):
        return 1
    for j in range(n):
        for i in range(j + 1, n):
            A[j * n + i] = 0.0
    return 0


cdef inline Py_ssize_t pivoted_cholesky(double* A, Py_ssize_t m, Py_ssize_t* piv) noexcept nogil:
    """A (= G, m × m, full) ← P B Bᵀ Pᵀ with diagonal pivoting; returns rank (columns of B).

    ``B`` is the lower trapezoid of the first ``rank`` columns of A, rows in the order
    ``piv``; the factor stops at the first pivot below ``PIVOT_RTOL`` of G's largest diagonal.
    """
    cdef Py_ssize_t i, j, k, p
    cdef double dmax = 0.0, t
    for i in range(m):
        piv[i] = i
        if A[i * m + i] > dmax:
            dmax = A[i * m + i]
    if not dmax > 0.0:
        return 0
    for j in range(m):
        # p = argmax_{i ≥ j} of the Schur complement's diagonal
        p = j
        for i in range(j + 1, m):
            if A[i * m + i] > A[p * m + p]:
                p = i
        if not A[p * m + p] > c_PIVOT_RTOL * dmax:
            return j                                        # the rest: redundant rows
        if p != j:
            # swap rows and columns j and p (A kept full and symmetric)
            for k in range(m):
                t = A[j * m + k]; A[j * m + k] = A[p * m + k]; A[p * m + k] = t
            for k in range(m):
                t = A[k * m + j]; A[k * m + j] = A[k * m + p]; A[k * m + p] = t
            k = piv[j]; piv[j] = piv[p]; piv[p] = k
        # B_jj = √A_jj;  B_ij = A_ij / B_jj;  A_ik −= B_ij B_kj  (the Schur complement)
        A[j * m + j] = sqrt(A[j * m + j])
        for i in range(j + 1, m):
            A[i * m + j] /= A[j * m + j]
        for i in range(j + 1, m):
            for k in range(j + 1, i + 1):
                A[i * m + k] -= A[i * m + j] * A[k * m + j]
                A[k * m + i] = A[i * m + k]
    return m


cdef inline void least_norm(const double* A, Py_ssize_t m, Py_ssize_t rank, const Py_ssize_t* piv,
                     const double* b, double* f, double* C, double* t) noexcept nogil:
    """f = G⁺ b from G = P B Bᵀ Pᵀ (pivoted_cholesky): ``P B⁻ᵀ B⁻¹ Pᵀ b`` at full rank, else
    ``P B (BᵀB)⁻² Bᵀ Pᵀ b`` (C: rank × rank scratch, t: m scratch)."""
    cdef Py_ssize_t i, j, k
    cdef double s
    # t = Pᵀ b
    for i in range(m):
        t[i] = b[piv[i]]
    if rank == m:
        # t ← B⁻ᵀ B⁻¹ t
        cholesky_solve(A, t, m)
    else:
        # C = BᵀB = L_C L_Cᵀ;  u = Bᵀ t (in f);  u ← C⁻¹ C⁻¹ u;  t = B u
        for i in range(rank):
            for j in range(rank):
                s = 0.0
                for k in range(max(i, j), m):
                    s += A[k * m + i] * A[k * m + j]
                C[i * rank + j] = s
        cholesky(C, rank)
        for i in range(rank):
            s = 0.0
            for k in range(i, m):
                s += A[k * m + i] * t[k]
            f[i] = s
        cholesky_solve(C, f, rank)
        cholesky_solve(C, f, rank)
        for k in range(m):
            s = 0.0
            for i in range(min(k + 1, rank)):
                s += A[k * m + i] * f[i]
            t[k] = s
    # f = P t
    for i in range(m):
        f[piv[i]] = t[i]


cdef inline void add_constraint_motion(const ModelC* model, const Arena* s, Py_ssize_t m,
                                       const double* f, double* x) noexcept nogil:
    # x ← x + M⁻¹ Jᵀ f = x + L⁻¹ (Y f)
    cdef Py_ssize_t i, j, nv = model.nv
    cdef double* y = s.h                        # h is no longer needed
    for j in range(nv):
        y[j] = 0.0
        for i in range(m):
            y[j] += s.Y[j * m + i] * f[i]
    l_solve(model, s.M, y, 1)
    for j in range(nv):
        x[j] += y[j]


cdef inline void dual_rhs(const Arena* s, Py_ssize_t m, Py_ssize_t nv, const double* target,
                          const double* x0) noexcept nogil:
    # b = target − J x0
    cdef Py_ssize_t i, j
    for i in range(m):
        s.b[i] = target[i]
        for j in range(nv):
            s.b[i] -= s.J[i * nv + j] * x0[j]


cdef Py_ssize_t solve_schur(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv, double* qdd,
                            double* f) noexcept nogil:
    """q̈, f by the Schur complement of M: G f = γ − J q̈₀, q̈ = q̈₀ + M⁻¹Jᵀf; returns rank."""
    cdef Py_ssize_t rank
    memcpy(qdd, s.qdd0, nv * sizeof(double))
    memset(f, 0, m * sizeof(double))
    if m == 0:
        return 0
    # b = γ − J q̈₀
    dual_rhs(s, m, nv, s.gamma, s.qdd0)
    # G = P B Bᵀ Pᵀ;  f = G⁺ b
    memcpy(s.A, s.G, m * m * sizeof(double))
    rank = pivoted_cholesky(s.A, m, s.piv)
    if rank > 0:
        least_norm(s.A, m, rank, s.piv, s.b, f, s.C, s.t)                   # RBDA §8.1
    # q̈ = q̈₀ + M⁻¹ Jᵀ f
    add_constraint_motion(model, s, m, f, qdd)
    return rank


cdef Py_ssize_t solve_kkt(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv, double* qdd,
                          double* f) noexcept nogil:
    """q̈, f from Pai (5) by its block LDLᵀ factor; returns rank.

    [[M, Jᵀ], [J, 0]] = [[L, 0], [Yᵀ, P B]] diag(1, −1) [[Lᵀ, Y], [0, Bᵀ Pᵀ]] with
    Yᵀ Y = G = P B Bᵀ Pᵀ; the unknowns [q̈; −f], the right side [τ − h; γ].
    """
    cdef Py_ssize_t rank, i, j
    memset(f, 0, m * sizeof(double))
    # forward: z₁ = L⁻¹(τ − h) (kept as L⁻ᵀ z₁ = q̈₀);  P B z₂ = γ − Yᵀ z₁ = γ − J q̈₀ = b
    memcpy(qdd, s.qdd0, nv * sizeof(double))
    if m == 0:
        return 0
    dual_rhs(s, m, nv, s.gamma, s.qdd0)                                     # Pai (5)
    memcpy(s.A, s.G, m * m * sizeof(double))
    rank = pivoted_cholesky(s.A, m, s.piv)
    # back: −f = x₂ = −(P B)⁻ᵀ z₂ (least norm over redundant rows);  q̈ = L⁻ᵀ(z₁ − Y x₂)
    if rank > 0:
        least_norm(s.A, m, rank, s.piv, s.b, f, s.C, s.t)                   # Pai (5)
    add_constraint_motion(model, s, m, f, qdd)                                 # Pai (5)
    return rank


cdef int solve_proximal(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                        const Proximal* prox, double* qdd, double* f,
                        Py_ssize_t* rank) noexcept nogil:
    """q̈, f by proximal point iterations on the dual (CBM 2021, Alg. 1); returns iterations.

    (G + μ1) f_{k+1} = b + μ f_k from f_0 = 0, b = γ − J q̈₀, until max|G f − b| is below
    PROXIMAL_TOL relative to its scale, or stops halving (the reference's test).
    """
    cdef Py_ssize_t i, j
    cdef int k = 0
    cdef double scale = 0.0, mu, residual = 1e308, previous, size, x, fmax, bmax = 0.0
    memcpy(qdd, s.qdd0, nv * sizeof(double))
    memset(f, 0, m * sizeof(double))
    rank[0] = 0
    if m == 0:
        return 0
    dual_rhs(s, m, nv, s.gamma, s.qdd0)                                     # b = γ − J q̈₀
    memcpy(s.A, s.G, m * m * sizeof(double))
    rank[0] = pivoted_cholesky(s.A, m, s.piv)
    for i in range(m):
        scale = max(scale, s.G[i * m + i])
        bmax = max(bmax, fabs(s.b[i]))
    scale = max(scale, 2.2250738585072014e-308)
    mu = prox.mu * scale
    # G + μ1 = L_μ L_μᵀ
    memcpy(s.C, s.G, m * m * sizeof(double))
    for i in range(m):
        s.C[i * m + i] += mu                                                # G + μ1 ≻ 0
    if cholesky(s.C, m):
        return -1
    while k < prox.max_iter:
        k += 1
        # f ← (G + μ1)⁻¹ (b + μ f)
        for i in range(m):
            f[i] = s.b[i] + mu * f[i]
        cholesky_solve(s.C, f, m)                                           # proximal step
        # residual = max|G f − b|  (J q̈ − γ)
        previous = residual
        residual = 0.0
        fmax = 0.0
        for i in range(m):
            x = -s.b[i]
            for j in range(m):
                x += s.G[i * m + j] * f[j]
            residual = max(residual, fabs(x))
            fmax = max(fmax, fabs(f[i]))
        size = max(max(bmax, scale * fmax), 1e-300)
        if residual <= prox.tol * m * size or residual > 0.5 * previous:
            break                                     # converged, or at the rounding floor
    add_constraint_motion(model, s, m, f, qdd)
    return k


cdef Py_ssize_t solve_impulse(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv, const double* v_minus,
                              double e, double* v_plus, double* Lam) noexcept nogil:
    """v⁺, Λ: M (v⁺ − v⁻) = Jᵀ Λ and J v⁺ = −e J v⁻ (Newton's restitution); returns rank."""
    cdef Py_ssize_t rank, i, j
    memcpy(v_plus, v_minus, nv * sizeof(double))
    memset(Lam, 0, m * sizeof(double))
    if m == 0:
        return 0
    # target = −e J v⁻ (in u);  b = target − J v⁻
    for i in range(m):
        s.u[i] = 0.0
        for j in range(nv):
            s.u[i] -= e * s.J[i * nv + j] * v_minus[j]
    dual_rhs(s, m, nv, s.u, v_minus)
    memcpy(s.A, s.G, m * m * sizeof(double))
    rank = pivoted_cholesky(s.A, m, s.piv)
    if rank > 0:
        least_norm(s.A, m, rank, s.piv, s.b, Lam, s.C, s.t)
    # v⁺ = v⁻ + M⁻¹ Jᵀ Λ
    add_constraint_motion(model, s, m, Lam, v_plus)
    return rank
