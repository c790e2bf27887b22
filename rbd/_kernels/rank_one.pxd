# cython: language_level=3
"""Rank-one updates and downdates of a Cholesky factor in place, for the Newton solver's
``refactor``, ``row_update`` and ``add_cones`` (``solver_newton.pyx``): the dense factor
``L Lᵀ`` (``cholesky_update``) and the factor ``Lᵀ L`` along the kinematic tree of
``crba.ltl`` (``tree_update``)."""

from libc.math cimport sqrt
from libc.stdint cimport int64_t


cdef inline double pivot_floor() noexcept nogil:
    # a downdate that leaves a pivot² below this fraction of its old value is abandoned for
    # a rebuild: the cancellation would cost more than 6 of the 16 digits (MuJoCo rebuilds
    # only when the pivot² falls below 1e-15, mjMINVAL)
    return 1e-6


cdef inline bint pivot(double* Lkk, double xk, double sign, double* c, double* s,
                       double* inv) noexcept nogil:
    # the rotation of one pivot: r² = L_kk² ± x_k², L_kk ← r, c = r / L_kk, s = x_k / L_kk,
    # inv = L_kk / r; 1 (L_kk kept) when a downdate leaves r² below pivot_floor() of L_kk²
    cdef double d = Lkk[0], r = d * d + sign * xk * xk
    if not r > pivot_floor() * d * d:
        return 1
    r = sqrt(r)
    c[0], s[0], inv[0] = r / d, xk / d, d / r
    Lkk[0] = r
    return 0


cdef inline void rotate(double* Lik, double* xi, double c, double s, double inv,
                        double sign) noexcept nogil:
    # L_ik ← (L_ik ± s x_i) / c (1 / c = L_kk / r), x_i ← c x_i − s L_ik
    Lik[0] = (Lik[0] + sign * s * xi[0]) * inv
    xi[0] = c * xi[0] - s * Lik[0]


cdef inline bint cholesky_update(double* L, double* x, Py_ssize_t n, bint plus) noexcept nogil:
    # L Lᵀ ± x xᵀ = L' L'ᵀ in place, one rotation per pivot (MuJoCo's mju_cholUpdate; x is
    # overwritten).  Returns 1, L half-updated, when a downdate leaves a pivot² below
    # pivot_floor() of its old value (the caller rebuilds L)
    cdef Py_ssize_t i, k
    cdef double c, s, inv, sign = 1.0 if plus else -1.0
    for k in range(n):
        if x[k] == 0.0:
            continue
        if pivot(&L[k * n + k], x[k], sign, &c, &s, &inv):
            return 1
        for i in range(k + 1, n):
            rotate(&L[i * n + k], &x[i], c, s, inv, sign)
    return 0


cdef inline bint tree_update(double* L, const int64_t* path, Py_ssize_t m, double* x,
                             Py_ssize_t top, Py_ssize_t n, bint plus) noexcept nogil:
    # Lᵀ L ± x xᵀ = L'ᵀ L' in place for the tree factor of crba.ltl (L_ki ≠ 0 only for i on
    # the path of k to the root) and x zero off the path of dof ``top`` (``path``: its m
    # ancestors, nearest first, ModelC.dof_path): cholesky_update on the reversed order (Lᵀ
    # is the lower factor of M with the dofs numbered backwards), the pivots k along the
    # path from ``top``, each rotating row k's entries on the path above it (path[t + 1:]
    # for k = path[t]), so that nothing leaves the tree's pattern.  x is overwritten;
    # returns 1 as cholesky_update does
    cdef Py_ssize_t t, u, k = top
    cdef double c, s, inv, sign = 1.0 if plus else -1.0
    for t in range(-1, m):
        if t >= 0:
            k = path[t]
        if x[k] != 0.0:
            if pivot(&L[k * n + k], x[k], sign, &c, &s, &inv):
                return 1
            for u in range(t + 1, m):
                rotate(&L[k * n + path[u]], &x[path[u]], c, s, inv, sign)
    return 0
