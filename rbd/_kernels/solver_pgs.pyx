# cython: language_level=3
"""Projected Gauss–Seidel on the dual of MuJoCo's soft-constraint problem, compiled.

The compiled twin of ``rbd/constraints/solver_pgs.py``: the same sweeps and
projections.  The forces minimize

    ½ fᵀ (A + R) f + fᵀ (J a₀ − aref),   A = J M⁻¹ Jᵀ,

over equality rows free, friction-loss rows in ``[−floss, floss]``, unilateral
rows ``f ≥ 0`` and each elliptic contact in its friction cone (a projected
gradient in the scaled forces ``y = f / s``, where the cone is the standard
second-order cone); then ``a = a₀ + M⁻¹ Jᵀ f``.  ``M⁻¹ Jᵀ`` comes from the
Cholesky factor of ``M`` (the reference calls ``np.linalg.solve``), and the
largest eigenvalue of a cone block from a cyclic Jacobi iteration (the
reference calls ``np.linalg.eigvalsh``).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, sqrt

from rbd._kernels._spatial cimport cholesky_factor, cholesky_solve
from rbd._kernels.solver_newton cimport RowsC, RowsData

cnp.import_array()

cdef enum:
    #: leading dimension of a cone block (condim ≤ 6)
    LD = 6


cdef inline double largest_eigenvalue(const double* B, Py_ssize_t n) noexcept nogil:
    # λ_max of a symmetric n×n block (leading dimension LD): cyclic Jacobi rotations
    # until the off-diagonal vanishes against the diagonal
    cdef double A[36]
    cdef double off, diag, theta, t, c, s, akp, akq, top
    cdef Py_ssize_t p, q, k, sweep
    for k in range(LD * LD):
        A[k] = B[k]
    for sweep in range(100):
        off = 0.0
        diag = 0.0
        for p in range(n):
            diag += A[LD * p + p] * A[LD * p + p]
            for q in range(p + 1, n):
                off += A[LD * p + q] * A[LD * p + q]
        if off <= 1e-36 * diag:
            break
        for p in range(n):
            for q in range(p + 1, n):
                if A[LD * p + q] == 0.0:
                    continue
                # the rotation that zeroes A_pq: t = tan φ, c = cos φ, s = sin φ
                theta = (A[LD * q + q] - A[LD * p + p]) / (2 * A[LD * p + q])
                t = (1.0 if theta >= 0 else -1.0) / (fabs(theta) + sqrt(theta * theta + 1))
                c = 1 / sqrt(t * t + 1)
                s = t * c
                for k in range(n):
                    akp, akq = A[LD * k + p], A[LD * k + q]
                    A[LD * k + p], A[LD * k + q] = c * akp - s * akq, s * akp + c * akq
                for k in range(n):
                    akp, akq = A[LD * p + k], A[LD * q + k]
                    A[LD * p + k], A[LD * q + k] = c * akp - s * akq, s * akp + c * akq
    top = A[0]
    for p in range(1, n):
        if A[LD * p + p] > top:
            top = A[LD * p + p]
    return top


cdef int project_second_order_cone(const double* y, Py_ssize_t dim,
                                   double* out) noexcept nogil:
    """Euclidean projection onto {y : y_0 ≥ ‖y_{1:}‖}."""
    cdef double n = y[0], t = 0.0, scale
    cdef Py_ssize_t j
    for j in range(1, dim):
        t += y[j] * y[j]
    t = sqrt(t)
    if t <= n:
        for j in range(dim):
            out[j] = y[j]
        return 0
    if t <= -n:
        for j in range(dim):
            out[j] = 0.0
        return 0
    # the nearest point of the cone's surface: ½ (N + T) (1, y_{1:} / T)
    scale = 0.5 * (n + t)
    out[0] = scale
    for j in range(1, dim):
        out[j] = y[j] * (scale / t)
    return 0


cdef int _cone_blocks(const double* A, const RowsC* rows, double* s, double* Ab,
                      double* step) noexcept nogil:
    """Per elliptic contact: the force scaling s, the scaled block of A and 1/λ_max."""
    cdef Py_ssize_t k, i, j, start, dim, n = rows.nefc
    for k in range(rows.ncone):
        start, dim = rows.cone_start[k], rows.cone_dim[k]
        # s = (1, μ_1, …, μ_{dim−1})
        s[LD * k] = 1.0
        for j in range(1, dim):
            s[LD * k + j] = rows.cone_friction[5 * k + j - 1]
        for i in range(dim):
            for j in range(dim):
                # Ab = A_blk ∘ s sᵀ
                Ab[LD * LD * k + LD * i + j] = (A[(start + i) * n + start + j]
                                                * s[LD * k + i] * s[LD * k + j])
        step[k] = 1.0 / largest_eigenvalue(Ab + LD * LD * k, dim)
    return 0


cdef int _cone_step(const double* A, const double* b, double* f, Py_ssize_t start,
                    Py_ssize_t dim, Py_ssize_t n, const double* s, const double* Ab,
                    double step) noexcept nogil:
    """Minimize the cost over one elliptic contact's forces, the others fixed
    (projected gradient in y = f / s, at most three sweeps)."""
    cdef double c[6]
    cdef double y[6]
    cdef double g[6]
    cdef double y_new[6]
    cdef double acc, inner, change, size
    cdef Py_ssize_t i, j, sweep
    for i in range(dim):
        # c = s ∘ (b + A_blk,: f − A_blk,blk f_blk)
        acc = 0.0
        inner = 0.0
        for j in range(n):
            acc += A[(start + i) * n + j] * f[j]
        for j in range(dim):
            inner += A[(start + i) * n + start + j] * f[start + j]
        c[i] = s[i] * (b[start + i] + acc - inner)
        y[i] = f[start + i] / s[i]
    for sweep in range(3):
        for i in range(dim):
            # g = y − step (Ab y + c)
            acc = 0.0
            for j in range(dim):
                acc += Ab[LD * i + j] * y[j]
            g[i] = y[i] - step * (acc + c[i])
        project_second_order_cone(g, dim, y_new)
        change = 0.0
        size = 0.0
        for i in range(dim):
            change = max(change, fabs(y_new[i] - y[i]))
            size = max(size, fabs(y[i]))
            y[i] = y_new[i]
        if change <= 1e-16 * (1 + size):
            break
    for i in range(dim):
        # f_blk = y ∘ s
        f[start + i] = y[i] * s[i]
    return 0


cdef inline int delassus(const RowsC* rows, const double* M, const double* a0, double* L,
                         double* MinvJT, double* A, double* b) noexcept nogil:
    # M⁻¹ Jᵀ (nefc columns of nv, column r at MinvJT + r nv), A = J M⁻¹ Jᵀ + diag(R),
    # b = J a₀ − aref.  Returns 1 when M is not positive definite.
    cdef Py_ssize_t r, c, j, nv = rows.nv, n = rows.nefc
    cdef double acc
    if cholesky_factor(M, L, nv, nv):
        return 1
    for r in range(n):
        for j in range(nv):
            MinvJT[r * nv + j] = rows.J[r * nv + j]
        cholesky_solve(L, MinvJT + r * nv, nv)
    for r in range(n):
        for c in range(n):
            acc = 0.0
            for j in range(nv):
                acc += rows.J[r * nv + j] * MinvJT[c * nv + j]
            A[r * n + c] = acc
        A[r * n + r] += rows.R[r]
        acc = 0.0
        for j in range(nv):
            acc += rows.J[r * nv + j] * a0[j]
        b[r] = acc - rows.aref[r]
    return 0


cdef int c_solve_pgs(const RowsC* rows, const double* M, const double* a0, double* qacc,
                     double* f, Py_ssize_t iterations, double tolerance,
                     double* work) noexcept nogil:
    """Gauss–Seidel sweeps over the rows (a cone's rows as one block), then
    a = a₀ + M⁻¹ Jᵀ f.  Returns 1 when M is not positive definite."""
    cdef Py_ssize_t nv = rows.nv, n = rows.nefc, it, i, j, k
    cdef double* L = work
    cdef double* MinvJT = L + nv * nv
    cdef double* A = MinvJT + nv * n
    cdef double* b = A + n * n
    cdef double* previous = b + n
    cdef double* s = previous + n
    cdef double* Ab = s + LD * rows.ncone
    cdef double* step = Ab + LD * LD * rows.ncone
    cdef Py_ssize_t lo = rows.ne + rows.nf
    cdef double value, acc, change, size
    if delassus(rows, M, a0, L, MinvJT, A, b):
        return 1
    _cone_blocks(A, rows, s, Ab, step)
    for i in range(n):
        f[i] = 0.0
    for it in range(iterations):
        for i in range(n):
            previous[i] = f[i]
        i = 0
        while i < n:
            k = rows.cone_at[i]
            if k >= 0:
                _cone_step(A, b, f, i, rows.cone_dim[k], n, s + LD * k, Ab + LD * LD * k,
                           step[k])
                i += rows.cone_dim[k]
                continue
            # f_i ← f_i − (A_i f + b_i) / A_ii, projected
            acc = 0.0
            for j in range(n):
                acc += A[i * n + j] * f[j]
            value = f[i] - (acc + b[i]) / A[i * n + i]
            if i >= lo:
                value = max(0.0, value)
            elif i >= rows.ne:
                value = min(max(value, -rows.floss[i]), rows.floss[i])
            f[i] = value
            i += 1
        change = 0.0
        size = 0.0
        for i in range(n):
            change = max(change, fabs(f[i] - previous[i]))
            size = max(size, fabs(f[i]))
        if change <= tolerance * (1 + size):
            break
    for j in range(nv):
        # a = a₀ + M⁻¹ Jᵀ f
        acc = 0.0
        for i in range(n):
            acc += MinvJT[i * nv + j] * f[i]
        qacc[j] = a0[j] + acc
    return 0


def solve_pgs(M, a0, rows, Py_ssize_t iterations=2000, double tolerance=1e-15):
    """Accelerations and constraint forces by projected Gauss–Seidel on the dual.

    The arguments and results of ``rbd.constraints.solver_pgs.solve_pgs``.
    """
    cdef cnp.ndarray Mc = np.ascontiguousarray(M, dtype=np.float64)
    cdef Py_ssize_t nv = Mc.shape[0]
    cdef cnp.ndarray a0c = np.ascontiguousarray(a0, dtype=np.float64)
    cdef RowsData data = RowsData(rows, nv)
    cdef Py_ssize_t n = data.c.nefc, ncone = data.c.ncone
    cdef cnp.ndarray work = np.zeros(nv * nv + nv * n + n * n + 2 * n + LD * ncone
                                     + LD * LD * ncone + ncone + 1)
    cdef cnp.ndarray qacc = np.zeros(nv)
    cdef cnp.ndarray force = np.zeros(n)
    cdef int status
    if Mc.shape[1] != nv or a0c.shape[0] != nv:
        raise ValueError(f"M, a0: expected ({nv}, {nv}) and ({nv},)")
    with nogil:
        status = c_solve_pgs(&data.c, <const double*> cnp.PyArray_DATA(Mc),
                             <const double*> cnp.PyArray_DATA(a0c),
                             <double*> cnp.PyArray_DATA(qacc), <double*> cnp.PyArray_DATA(force),
                             iterations, tolerance, <double*> cnp.PyArray_DATA(work))
    if status:
        raise ValueError("solve_pgs: the mass matrix is not positive definite")
    return qacc, force
