# cython: language_level=3
r"""Forward dynamics and impulses under bilateral constraints, compiled.

The compiled twin of ``rbd/reference/constrained.py``: the same solvers under
the same names and symbols (``M``, ``h``, ``τ``, ``J``, ``γ``, ``L``, ``Y``,
``G``, ``q̈₀``, ``b``, ``f``, ``μ``), each on one state, in C without the GIL.
``M`` comes from the compiled CRBA (``crba.pxd``), ``h`` from the compiled RNEA
at ``q̈ = 0`` (``rnea.pxd``), the rows ``φ``, ``J``, ``γ`` from ``fill_rows``
(``constraints.pxd``).  ``M = Lᵀ L`` is the tree-sparse factor of the
compiled CRBA (``ltl`` of ``crba.pyx``, RBDA §6.5: no fill-in, so it costs
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

``ConstrainedModel`` is the Python entry point (one per model and tuple of
constraints, kept by :func:`rbd.constrained_dynamics`): it validates a state
or a stack of states once, and runs them with the GIL released, a stack in
parallel (``prange``, one workspace and arena per thread).
"""

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.math cimport fabs, sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from rbd._kernels.crba cimport crba, l_solve, lt_solve, ltl, ltl_solve
from rbd._kernels cimport rnea as _rnea
from rbd._kernels._args cimport as_array, batch_of, check_finite
from rbd._kernels._base cimport CompiledBase, omp_starting, omp_unusable
from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.constraints cimport Rows, bind_rows, fill_rows

import numpy as np

from rbd._kernels.constraints import pack_records
from rbd.errors import InputError, ModelError
from rbd.reference.constrained import PROXIMAL_MAX_ITER, PROXIMAL_MU, PROXIMAL_TOL

cnp.import_array()

#: A pivot of the Delassus matrix below this fraction of its largest diagonal entry marks
#: a redundant row (the squares of ``RANK_RTOL``'s singular values sit below rounding).
PIVOT_RTOL = 1e-12

cdef double c_PIVOT_RTOL = PIVOT_RTOL
cdef double c_MU = PROXIMAL_MU
cdef double c_TOL = PROXIMAL_TOL
cdef int c_MAX_ITER = PROXIMAL_MAX_ITER

# methods (the order of rbd.algorithms.constrained.METHODS) and tasks
cdef enum:
    KKT = 0
    SCHUR = 1
    PROXIMAL = 2
    IMPULSE = 3
    DELASSUS = 4


# --- dense factors (row-major, n × n) -----------------------------------------------------------

cdef int cholesky(double* A, Py_ssize_t n) noexcept nogil:
    """A = L Lᵀ in place (lower triangle; the upper one zeroed); 1 if A is not positive definite."""
    cdef Py_ssize_t i, j, k
    cdef double s
    for j in range(n):
        # L_jj = √(A_jj − Σ_k L_jk²)
        s = A[j * n + j]
        for k in range(j):
            s -= A[j * n + k] * A[j * n + k]
        if not s > 0.0:
            return 1
        A[j * n + j] = sqrt(s)
        for i in range(j + 1, n):
            # L_ij = (A_ij − Σ_k L_ik L_jk) / L_jj
            s = A[i * n + j]
            for k in range(j):
                s -= A[i * n + k] * A[j * n + k]
            A[i * n + j] = s / A[j * n + j]
            A[j * n + i] = 0.0
    return 0


cdef inline void lower_solve(const double* L, Py_ssize_t n, Py_ssize_t ld,
                             double* x) noexcept nogil:
    # x ← L⁻¹ x   (L lower triangular, leading dimension ld)
    cdef Py_ssize_t i, k
    for i in range(n):
        for k in range(i):
            x[i] -= L[i * ld + k] * x[k]
        x[i] /= L[i * ld + i]


cdef inline void upper_solve(const double* L, Py_ssize_t n, Py_ssize_t ld,
                             double* x) noexcept nogil:
    # x ← L⁻ᵀ x
    cdef Py_ssize_t i, k
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            x[i] -= L[k * ld + i] * x[k]
        x[i] /= L[i * ld + i]


cdef inline void cholesky_solve(const double* L, Py_ssize_t n, double* x) noexcept nogil:
    # x ← M⁻¹ x from M = L Lᵀ: two triangular solves
    lower_solve(L, n, n, x)
    upper_solve(L, n, n, x)


cdef Py_ssize_t pivoted_cholesky(double* A, Py_ssize_t m, Py_ssize_t* piv) noexcept nogil:
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


cdef void least_norm(const double* A, Py_ssize_t m, Py_ssize_t rank, const Py_ssize_t* piv,
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
        lower_solve(A, m, m, t)
        upper_solve(A, m, m, t)
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
        cholesky_solve(C, rank, f)
        cholesky_solve(C, rank, f)
        for k in range(m):
            s = 0.0
            for i in range(min(k + 1, rank)):
                s += A[k * m + i] * f[i]
            t[k] = s
    # f = P t
    for i in range(m):
        f[piv[i]] = t[i]


# --- one state ----------------------------------------------------------------------------------

cdef struct Arena:
    # the scratch of one state (m rows, nv velocities), laid out by arena()
    double* phi                   # m
    double* gamma                 # m
    double* J                     # m × nv
    double* M                     # nv × nv: M, then its factor L (M = Lᵀ L)
    double* h                     # nv
    double* qdd0                  # nv
    double* Y                     # nv × m: Y = L⁻ᵀ Jᵀ
    double* G                     # m × m
    double* A                     # m × m: the pivoted factor of G (or of G + μ1)
    double* C                     # m × m
    double* b                     # m
    double* t                     # m
    double* u                     # m
    Py_ssize_t* piv               # m


cdef Py_ssize_t arena_size(Py_ssize_t m, Py_ssize_t nv) noexcept nogil:
    return 5 * m + 2 * m * nv + nv * nv + 2 * nv + 3 * m * m + m + 1


cdef void arena(double* base, Py_ssize_t m, Py_ssize_t nv, Arena* s) noexcept nogil:
    s.phi = base; base += m
    s.gamma = base; base += m
    s.J = base; base += m * nv
    s.M = base; base += nv * nv
    s.h = base; base += nv
    s.qdd0 = base; base += nv
    s.Y = base; base += m * nv
    s.G = base; base += m * m
    s.A = base; base += m * m
    s.C = base; base += m * m
    s.b = base; base += m
    s.t = base; base += m
    s.u = base; base += m
    s.piv = <Py_ssize_t*>base


cdef int factor_terms(const ModelC* model, Work* w, const Rows* r, Arena* s, const double* q,
                      const double* qd, const double* tau, const double* f_ext, double kp,
                      double kd) noexcept nogil:
    """Rows φ, J, γ (γ ← γ − kd J q̇ − kp φ), M = Lᵀ L, Y = L⁻ᵀ Jᵀ, G = Yᵀ Y, and (τ given)
    q̈₀ = M⁻¹(τ − h); returns 1 if M is not positive definite."""
    cdef Py_ssize_t nv = model.nv, m = r.m, i, j, k
    cdef double x
    fill_rows(model, w, r, q, qd, s.phi, s.J, s.gamma)
    for i in range(m):
        # γ ← γ − kd J q̇ − kp φ
        x = 0.0
        for j in range(nv):
            x += s.J[i * nv + j] * qd[j]
        s.gamma[i] -= kd * x + kp * s.phi[i]                                 # RBDA §8.3
    # M = Lᵀ L   (tree-sparse)
    crba(model, w, q, s.M)
    if ltl(model, s.M):
        return 1
    # Y = L⁻ᵀ Jᵀ
    for k in range(nv):
        for i in range(m):
            s.Y[k * m + i] = s.J[i * nv + k]
    lt_solve(model, s.M, s.Y, m)                                            # L⁻ᵀ Jᵀ
    for i in range(m):
        for j in range(i + 1):
            # G_ij = Σ_k Y_ki Y_kj
            x = 0.0
            for k in range(nv):
                x += s.Y[k * m + i] * s.Y[k * m + j]
            s.G[i * m + j] = x                                              # G = Yᵀ Y
            s.G[j * m + i] = x
    if tau != NULL:
        # q̈₀ = M⁻¹(τ − h),  h = RNEA(q, q̇, 0) − Σ Jᵢᵀ f_ext,i
        _rnea.rnea(model, w, q, qd, NULL, f_ext, s.h)
        for j in range(nv):
            s.qdd0[j] = tau[j] - s.h[j]
        ltl_solve(model, s.M, s.qdd0, 1)                                    # q̈₀ = M⁻¹(τ − h)
    return 0


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


cdef int solve_proximal(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv, double* qdd, double* f,
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
    mu = c_MU * scale
    # G + μ1 = L_μ L_μᵀ
    memcpy(s.C, s.G, m * m * sizeof(double))
    for i in range(m):
        s.C[i * m + i] += mu                                                # G + μ1 ≻ 0
    if cholesky(s.C, m):
        return -1
    while k < c_MAX_ITER:
        k += 1
        # f ← (G + μ1)⁻¹ (b + μ f)
        for i in range(m):
            f[i] = s.b[i] + mu * f[i]
        cholesky_solve(s.C, m, f)                                           # proximal step
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
        if residual <= c_TOL * m * size or residual > 0.5 * previous:
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


cdef struct Job:
    # one validated request over N states (N = 1 without a batch axis)
    int task
    const ModelC* model
    const Rows* rows
    const double* x[4]            # q, q̇ (v⁻), τ, f_ext (NULL: none)
    Py_ssize_t stride[4]          # doubles between consecutive states (0: shared)
    double kp
    double kd
    double e
    double* out[2]                # q̈ (v⁺, G), f (Λ)
    int64_t* counts               # 2 × n: rank (−1: M not positive definite), iterations
    Py_ssize_t n
    Py_ssize_t out_stride[2]
    double* arena                 # nthreads × arena_size
    Py_ssize_t arena_size
    Work* works


cdef void run_state(const Job* job, Py_ssize_t k, int t) noexcept nogil:
    """State k of the job in the workspace and arena of thread t: rank −1 if M is not definite."""
    job.counts[k] = -1
    job.counts[job.n + k] = 0
    if solve_state(job, k, t) == 0 and job.task > PROXIMAL:
        job.counts[k] = 0


cdef int solve_state(const Job* job, Py_ssize_t k, int t) noexcept nogil:
    # run_state's work; 1 if M is not positive definite
    cdef Arena s
    cdef const ModelC* model = job.model
    cdef Py_ssize_t m = job.rows.m, nv = model.nv, rank = 0
    cdef int its = 1
    cdef const double* q = job.x[0] + k * job.stride[0]
    cdef const double* qd = job.x[1] + k * job.stride[1]
    cdef const double* tau = NULL
    cdef const double* f_ext = NULL
    cdef double* x = job.out[0] + k * job.out_stride[0]
    cdef double* f = job.out[1] + k * job.out_stride[1]
    arena(job.arena + t * job.arena_size, m, nv, &s)
    if job.x[2] != NULL:
        tau = job.x[2] + k * job.stride[2]
    if job.x[3] != NULL:
        f_ext = job.x[3] + k * job.stride[3]
    if job.task == IMPULSE or job.task == DELASSUS:
        if factor_terms(model, &job.works[t], job.rows, &s, q, qd, NULL, NULL, 0.0, 0.0):
            return 1
        if job.task == DELASSUS:
            memcpy(x, s.G, m * m * sizeof(double))
            return 0
        solve_impulse(model, &s, m, nv, qd, job.e, x, f)
        return 0
    if factor_terms(model, &job.works[t], job.rows, &s, q, qd, tau, f_ext, job.kp, job.kd):
        return 1
    if job.task == KKT:
        rank = solve_kkt(model, &s, m, nv, x, f)
    elif job.task == SCHUR:
        rank = solve_schur(model, &s, m, nv, x, f)
    else:
        its = solve_proximal(model, &s, m, nv, x, f, &rank)
        if its < 0:
            return 1
    job.counts[k] = rank
    job.counts[job.n + k] = its
    return 0


cdef class ConstrainedModel:
    """The constrained solvers of one compiled model and one tuple of resolved constraints.

    Parameters
    ----------
    compiled : CompiledModel
        :func:`rbd.algorithms.compiled` of the model.
    records : sequence of tuple
        The constraints resolved on the model (``Constraint.resolve``).
    """

    cdef CompiledBase cm
    cdef Rows rows
    cdef object packed
    cdef Py_ssize_t size
    cdef object buffer
    cdef bint busy
    cdef object zero

    def __init__(self, CompiledBase compiled, records):
        self.cm = compiled
        self.packed = pack_records(list(records))
        bind_rows(&self.rows, self.packed)
        self.size = arena_size(self.rows.m, compiled.m.nv)
        self.buffer = np.zeros(self.size)
        self.busy = False
        self.zero = np.zeros(compiled.m.nv)

    @property
    def nrows(self) -> int:
        """Number of constraint rows."""
        return self.rows.m

    cdef cnp.ndarray _arg(self, object x, str name, Py_ssize_t n, Job* job, int slot,
                          Py_ssize_t* N):
        cdef cnp.ndarray arr = as_array(x, name)
        cdef Py_ssize_t k = batch_of(arr, 1, n, 0, name)
        check_finite(arr, name)
        if slot == 0 and self.cm.nquat and self.cm._check_quaternions(
                <const double*>cnp.PyArray_DATA(arr), 1 if k < 0 else k):
            arr = cnp.PyArray_NewCopy(arr, cnp.NPY_CORDER)
            self.cm._normalize_quaternions(<double*>cnp.PyArray_DATA(arr), 1 if k < 0 else k)
        if k >= 0:
            if N[0] >= 0 and N[0] != k:
                raise InputError(f"{name} has batch size {k}, other arguments have {N[0]}")
            N[0] = k
        job.x[slot] = <const double*>cnp.PyArray_DATA(arr)
        job.stride[slot] = 0 if k < 0 else n
        return arr

    cdef cnp.ndarray _arg_f(self, object f_ext, Job* job, Py_ssize_t* N):
        cdef cnp.ndarray arr = as_array(f_ext, "f_ext")
        cdef Py_ssize_t k = batch_of(arr, 2, self.cm.m.nb, 6, "f_ext")
        check_finite(arr, "f_ext")
        if k >= 0:
            if N[0] >= 0 and N[0] != k:
                raise InputError(f"f_ext has batch size {k}, other arguments have {N[0]}")
            N[0] = k
        job.x[3] = <const double*>cnp.PyArray_DATA(arr)
        job.stride[3] = 0 if k < 0 else 6 * self.cm.m.nb
        return arr

    cdef object _run(self, Job* job, Py_ssize_t N, Py_ssize_t width):
        # outputs (q̈ or v⁺ or G: width; f: m; rank and iterations), then every state
        cdef Py_ssize_t n = 1 if N < 0 else N, k, m = self.rows.m
        cdef int nt = self.cm._num_threads, t, nd = 1 if N < 0 else 2
        cdef bint failed = False
        cdef Work* works
        cdef cnp.npy_intp dims[2]
        cdef cnp.ndarray x, f, counts
        dims[0] = n
        dims[1] = width
        x = cnp.PyArray_EMPTY(nd, &dims[2 - nd], cnp.NPY_DOUBLE, 0)
        dims[1] = m
        f = cnp.PyArray_EMPTY(nd, &dims[2 - nd], cnp.NPY_DOUBLE, 0)
        dims[0] = 2
        dims[1] = n
        counts = cnp.PyArray_EMPTY(2, dims, cnp.NPY_INT64, 0)
        cdef object own_buffer = None
        cdef bint own_works = False
        job.model = &self.cm.m
        job.rows = &self.rows
        job.out[0] = <double*>cnp.PyArray_DATA(x)
        job.out[1] = <double*>cnp.PyArray_DATA(f)
        job.counts = <int64_t*>cnp.PyArray_DATA(counts)
        job.out_stride[0] = width
        job.out_stride[1] = m
        job.n = n
        job.arena_size = self.size
        if N < 0 or N == 1 or nt == 1 or omp_unusable():
            nt = 1
        elif nt > N:
            nt = <int>N
        # the model's workspaces (w0 for one thread), private ones when they are in use
        if nt == 1 and not self.cm.w0_busy:
            works = &self.cm.w0
            self.cm.w0_busy = True
        elif nt > 1 and not self.cm.works_busy:
            self.cm.works_busy = True
            try:
                if self.cm.nworks < nt:
                    self.cm._allocate_works(nt)
            except BaseException:
                self.cm.works_busy = False
                raise
            works = self.cm.works
        else:
            own_works = True
            works = <Work*>malloc(nt * sizeof(Work))
            if works == NULL:
                raise MemoryError()
            own_buffer = np.zeros((nt, self.cm.data.size))
            for t in range(nt):
                self.cm._bind(&works[t], own_buffer[t])
        if nt == 1 and not self.busy:
            arena_buffer = self.buffer
            self.busy = True
        else:
            arena_buffer = np.empty((nt, self.size))
        job.arena = <double*>cnp.PyArray_DATA(arena_buffer)
        job.works = works
        try:
            if nt == 1:
                with nogil:
                    for k in range(n):
                        run_state(job, k, 0)
            else:
                omp_starting()
                with nogil:
                    for k in prange(n, num_threads=nt, schedule="static"):
                        run_state(job, k, threadid())
        finally:
            if arena_buffer is self.buffer:
                self.busy = False
            if own_works:
                free(works)
            elif nt == 1:
                self.cm.w0_busy = False
            else:
                self.cm.works_busy = False
        for k in range(n):
            failed = failed or job.counts[k] < 0
        if failed:
            raise ModelError("constrained dynamics is undefined: the joint-space inertia M is "
                             "not positive definite at this state (a joint moves no inertia)")
        if N < 0:
            return x, f, job.counts[0], job.counts[1]
        return x, f, counts[0], counts[1]

    def dynamics(self, q, v, tau, f_ext=None, int method=KKT, double kp=0.0, double kd=0.0):
        """``(q̈, f, rank, iterations)`` of ``method`` (0 kkt, 1 schur, 2 proximal); rank and
        iterations are ints for one state, int64 arrays for a stack."""
        cdef Job job
        cdef Py_ssize_t N = -1
        cdef Py_ssize_t nq = self.cm.m.nq, nv = self.cm.m.nv
        if method < KKT or method > PROXIMAL:
            raise InputError(f"method must be 0, 1 or 2, got {method}")
        job.task = method
        job.kp = kp
        job.kd = kd
        job.e = 0.0
        q_ = self._arg(q, "q", nq, &job, 0, &N)
        v_ = self._arg(v, "v", nv, &job, 1, &N)
        t_ = self._arg(tau, "tau", nv, &job, 2, &N)
        f_ = None
        job.x[3] = NULL
        job.stride[3] = 0
        if f_ext is not None:
            f_ = self._arg_f(f_ext, &job, &N)
        return self._run(&job, N, nv)

    def impulse(self, q, v_minus, double restitution=0.0):
        """``(v⁺, Λ)``: the impulse problem of :func:`rbd.impulse_dynamics`."""
        cdef Job job
        cdef Py_ssize_t N = -1
        job.task = IMPULSE
        job.kp = job.kd = 0.0
        job.e = restitution
        q_ = self._arg(q, "q", self.cm.m.nq, &job, 0, &N)
        v_ = self._arg(v_minus, "v_minus", self.cm.m.nv, &job, 1, &N)
        job.x[2] = NULL
        job.x[3] = NULL
        job.stride[2] = job.stride[3] = 0
        x, f, _, _ = self._run(&job, N, self.cm.m.nv)
        return x, f

    def delassus(self, q):
        """``G = J M⁻¹ Jᵀ`` (rows × rows) at ``q``, or stacked."""
        cdef Job job
        cdef Py_ssize_t N = -1, m = self.rows.m
        job.task = DELASSUS
        job.kp = job.kd = job.e = 0.0
        q_ = self._arg(q, "q", self.cm.m.nq, &job, 0, &N)
        job.x[1] = <const double*>cnp.PyArray_DATA(self.zero)
        job.stride[1] = 0
        job.x[2] = NULL
        job.x[3] = NULL
        job.stride[2] = job.stride[3] = 0
        x, _, _, _ = self._run(&job, N, m * m)
        if N < 0:
            return x.reshape(m, m)
        return x.reshape(N, m, m)
