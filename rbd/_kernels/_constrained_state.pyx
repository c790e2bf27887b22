# cython: language_level=3
"""The terms of one state of the compiled constrained calls, and the KKT acceleration.

Part of the dispatch layer of the kernels (see ``_model.pyx``), not a derivation of its
own: it has no reference twin in ``rbd/reference/``.  It assembles, for one state, the
passes of ``constraints.pyx`` (rows), ``stages.pyx`` (``M`` and ``h`` from one outward pass),
``crba.pyx`` (the tree-sparse factor) and hands them to the solvers of ``constrained.pyx``,
which render ``rbd/reference/constrained.py``:

* ``state_terms``: rows ``φ``, ``J``, ``γ`` (``γ ← γ − kd J q̇ − kp φ``), ``M = Lᵀ L``,
  ``Y = L⁻ᵀ Jᵀ``, ``G = Yᵀ Y`` and ``q̈₀ = M⁻¹(τ − h)``;
* ``solve_augmented``: Pai (5) by an LU with partial pivoting where ``M`` is not positive
  definite (the reference's ``solve_kkt`` factors the augmented matrix the same way);
* ``kkt_acceleration``: both for the compiled rollouts (``rollout.pyx``).
"""

from libc.math cimport fabs, sqrt
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport cholesky_factor, cholesky_solve
from rbd._kernels.constrained cimport Arena, arena, arena_size, solve_kkt
from rbd._kernels.constraints cimport Rows, constraint_motion, rows_after_motion
from rbd._kernels.crba cimport l_solve, lt_solve, ltl, ltl_solve, motion_to_root
from rbd._kernels.rnea cimport rnea
from rbd._kernels.stages cimport Terms, bias, composite_inertia

from rbd._kernels.constrained import AUGMENTED_RTOL


# --- the terms of one state ---------------------------------------------------------------------

cdef int state_terms(const ModelC* model, Work* w, const Rows* r, Arena* s, const double* q,
                     const double* qd, const double* tau, const double* f_ext, double kp,
                     double kd) noexcept nogil:
    """Rows φ, J, γ (γ ← γ − kd J q̇ − kp φ), M = Lᵀ L, Y = L⁻ᵀ Jᵀ, G = Yᵀ Y, and (τ given)
    q̈₀ = M⁻¹(τ − h); returns 1 if M is not positive definite."""
    cdef Py_ssize_t nv = model.nv, m = r.m, i, j, k, r_, n_rows
    cdef double x
    cdef Terms t
    # one outward pass evaluates the joints for all that follows: X_up, S, world poses,
    # v, c (constraint_motion), then the rows, S⁰ and M, and h
    constraint_motion(model, w, q, qd)
    rows_after_motion(model, w, r, q, qd, s.phi, s.J, s.gamma)
    for i in range(m):
        # γ ← γ − kd J q̇ − kp φ
        x = 0.0
        for j in range(nv):
            x += s.J[i * nv + j] * qd[j]
        s.gamma[i] -= kd * x + kp * s.phi[i]                                 # RBDA §8.3
    # S⁰ = X_0,i⁻¹ S_i (world coordinates);  M = Σ S⁰ᵀ F⁰ (the stages' composite_inertia)
    for i in range(model.nb):
        for k in range(model.v_start[i], model.v_start[i] + model.nv_j[i]):
            motion_to_root(w, i, w.S + 6 * k, w.S0 + 6 * k)
    t.M = s.M
    composite_inertia(model, w, &t)                                         # RBDA T6.2
    # M = Lᵀ L   (tree-sparse)
    if ltl(model, s.M):
        return 1
    # Y = L⁻ᵀ Jᵀ
    for k in range(nv):
        for i in range(m):
            s.Y[k * m + i] = s.J[i * nv + k]
    lt_solve(model, s.M, s.Y, m)                                            # L⁻ᵀ Jᵀ
    # the rows of Y that are not zero (the branches the constraints touch, and their roots)
    n_rows = 0
    for k in range(nv):
        for i in range(m):
            if s.Y[k * m + i] != 0.0:
                s.rows[n_rows] = k
                n_rows += 1
                break
    for i in range(m):
        for j in range(i + 1):
            # G_ij = Σ_k Y_ki Y_kj  (over the rows that are not zero)
            x = 0.0
            for r_ in range(n_rows):
                k = s.rows[r_]
                x += s.Y[k * m + i] * s.Y[k * m + j]
            s.G[i * m + j] = x                                              # G = Yᵀ Y
            s.G[j * m + i] = x
    if tau != NULL:
        # q̈₀ = M⁻¹(τ − h),  h = RNEA(q, q̇, 0) − Σ Jᵢᵀ f_ext,i: the stages' bias on the
        # pass above (its generalized gravity g into q̈₀, overwritten below), else the RNEA
        if f_ext == NULL:
            t.h = s.h
            t.g = s.qdd0
            t.qd = <double*>qd
            bias(model, w, &t)                                              # RBDA T5.1
        else:
            rnea(model, w, q, qd, NULL, f_ext, s.h)
        for j in range(nv):
            s.qdd0[j] = tau[j] - s.h[j]
        ltl_solve(model, s.M, s.qdd0, 1)                                    # q̈₀ = M⁻¹(τ − h)
    return 0


cdef double c_AUGMENTED_RTOL = AUGMENTED_RTOL


cdef int solve_augmented(const ModelC* model, Work* w, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                         const double* q, const double* qd, const double* tau,
                         const double* f_ext, double* qdd, double* f) noexcept nogil:
    """q̈, f of Pai (5) where M is not positive definite (``state_terms`` returned 1):
    [[M, Jᵀ], [J, 0]] [q̈; −f] = [τ − h; γ] by an LU factor with partial pivoting, as the
    reference's ``solve_kkt``; 1 when the augmented matrix is singular too (a joint that
    moves no inertia and no constraint holds, or redundant rows).  Needs the outward pass
    of ``state_terms`` in w and its rows J, γ in s."""
    cdef Py_ssize_t n = nv + m, i, j, k, p
    cdef double big = 0.0, x
    cdef Terms t
    # M again (ltl stopped inside it) and h, on the pass in w
    t.M = s.M
    composite_inertia(model, w, &t)                                         # RBDA T6.2
    if f_ext == NULL:
        t.h = s.h
        t.g = s.qdd0
        t.qd = <double*>qd
        bias(model, w, &t)
    else:
        rnea(model, w, q, qd, NULL, f_ext, s.h)
    # K = [[M, Jᵀ], [J, 0]],  b = [τ − h; γ]   (b in qdd and f, then x = [q̈; −f])
    for i in range(n):
        for j in range(n):
            if i < nv and j < nv:
                x = s.M[i * nv + j]
            elif i < nv:
                x = s.J[(j - nv) * nv + i]
            elif j < nv:
                x = s.J[(i - nv) * nv + j]
            else:
                x = 0.0
            s.K[i * n + j] = x                                              # Pai (5)
            big = max(big, fabs(x))
    for i in range(nv):
        qdd[i] = tau[i] - s.h[i]
    for i in range(m):
        f[i] = s.gamma[i]
    # K = P⁻¹ L U (Doolittle, partial pivoting), in place
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if fabs(s.K[i * n + k]) > fabs(s.K[p * n + k]):
                p = i
        if not fabs(s.K[p * n + k]) > c_AUGMENTED_RTOL * big:
            return 1
        s.kpiv[k] = p
        if p != k:
            for j in range(n):
                x = s.K[k * n + j]
                s.K[k * n + j] = s.K[p * n + j]
                s.K[p * n + j] = x
        for i in range(k + 1, n):
            s.K[i * n + k] /= s.K[k * n + k]
            for j in range(k + 1, n):
                s.K[i * n + j] -= s.K[i * n + k] * s.K[k * n + j]
    # x = U⁻¹ L⁻¹ P b, b split over qdd (first nv) and f (last m)
    for k in range(n):
        p = s.kpiv[k]
        if p != k:
            x = _at(qdd, f, nv, k)
            _put(qdd, f, nv, k, _at(qdd, f, nv, p))
            _put(qdd, f, nv, p, x)
    for i in range(n):
        x = _at(qdd, f, nv, i)
        for j in range(i):
            x -= s.K[i * n + j] * _at(qdd, f, nv, j)
        _put(qdd, f, nv, i, x)
    for i in range(n - 1, -1, -1):
        x = _at(qdd, f, nv, i)
        for j in range(i + 1, n):
            x -= s.K[i * n + j] * _at(qdd, f, nv, j)
        _put(qdd, f, nv, i, x / s.K[i * n + i])
    for i in range(m):
        f[i] = -f[i]                                                        # x₂ = −f
    return 0


cdef inline double _at(const double* a, const double* b, Py_ssize_t na,
                       Py_ssize_t k) noexcept nogil:
    # entry k of the vector [a; b] (a of na entries)
    return a[k] if k < na else b[k - na]


cdef inline void _put(double* a, double* b, Py_ssize_t na, Py_ssize_t k,
                      double x) noexcept nogil:
    # entry k of the vector [a; b] ← x
    if k < na:
        a[k] = x
    else:
        b[k - na] = x


cdef int kkt_acceleration(const ModelC* model, Work* w, const Rows* r, double* base,
                          const double* q, const double* qd, const double* tau,
                          const double* f_ext, double kp, double kd,
                          double* qdd) noexcept nogil:
    """q̈ of :func:`rbd.constrained_dynamics` (method "kkt", Baumgarte gains kp, kd) at one
    state, in the arena at base (``arena_size(m, nv) + m`` doubles: the Arena, then f), the
    rows φ, J, γ left in its first ``m (2 + nv)`` doubles; where M is not positive definite
    the augmented system (``solve_augmented``), 1 if that is singular too."""
    cdef Arena s
    arena(base, r.m, model.nv, &s)
    if state_terms(model, w, r, &s, q, qd, tau, f_ext, kp, kd):
        return solve_augmented(model, w, &s, r.m, model.nv, q, qd, tau, f_ext, qdd,
                               base + arena_size(r.m, model.nv))
    solve_kkt(model, &s, r.m, model.nv, qdd, base + arena_size(r.m, model.nv))
    return 0
