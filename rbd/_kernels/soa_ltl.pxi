# M = Lᵀ L with the tree's sparsity over a structure of arrays: W states advance together.
#
# The lane rendering of ``crba.pyx``'s ``ltl``, ``ltl_solve`` and ``ltl_inverse`` (twin:
# ``rbd/reference/crba.py``) and of ``derivatives.pyx``'s ``minus_inverse_times`` (its
# sparse path: the dense LAPACK path of the one-state kernel does not run in lanes), every
# quantity stored ``[row][column][W]``.  Included by ``soa_derivatives.pxi``, whose
# ``aba_derivatives`` solves with it.

from libc.math cimport sqrt
from libc.stdint cimport int64_t


cdef extern from *:
    # out -= a b and out += a b over the W = 8 lanes of the sparse factor's sweeps, where the
    # three pointers index one matrix (the compiler cannot see they never overlap and would
    # keep 8 scalar operations): with GCC or Clang, one 8-double vector operation (one AVX-512
    # instruction, two AVX2 or four SSE2 ones), elsewhere a loop
    """
    #if defined(__GNUC__) || defined(__clang__)
    typedef double rbd_lanes8 __attribute__((vector_size(64), aligned(8)));
    static inline void rbd_minus_product(double* out, const double* a, const double* b) {
        *(rbd_lanes8*)out -= *(const rbd_lanes8*)a * *(const rbd_lanes8*)b;
    }
    static inline void rbd_plus_product(double* out, const double* a, const double* b) {
        *(rbd_lanes8*)out += *(const rbd_lanes8*)a * *(const rbd_lanes8*)b;
    }
    #else
    static void rbd_minus_product(double* out, const double* a, const double* b) {
        for (int l = 0; l < 8; l++) out[l] -= a[l] * b[l];
    }
    static void rbd_plus_product(double* out, const double* a, const double* b) {
        for (int l = 0; l < 8; l++) out[l] += a[l] * b[l];
    }
    #endif
    """
    void minus_product "rbd_minus_product"(double* out, const double* a,
                                           const double* b) noexcept nogil
    void plus_product "rbd_plus_product"(double* out, const double* a,
                                         const double* b) noexcept nogil


cdef int ltl(const ModelC* model, double* M) noexcept nogil:
    """M = Lᵀ L in place on W lanes (row-major, lower triangle), the tree's sparsity kept.

    Returns 0, or 1 + k when the pivot of degree of freedom k is not positive on some lane.
    """
    cdef Py_ssize_t n = model.nv, k, i, j, l
    cdef const int64_t* lam = model.dof_parent
    cdef double* Lk
    cdef double piv[W]
    cdef int bad = 0
    for k in range(n - 1, -1, -1):
        # L[k, k] = √M[k, k];  L[k, i] = M[k, i] / L[k, k] along the path to the root
        Lk = M + k * n * W
        for l in range(W):
            if not Lk[k * W + l] > 0.0:
                bad = 1
        if bad:
            return <int>(1 + k)
        for l in range(W):
            piv[l] = sqrt(Lk[k * W + l])
            Lk[k * W + l] = piv[l]
        i = lam[k]
        while i >= 0:
            for l in range(W):
                Lk[i * W + l] /= piv[l]
            i = lam[i]
        # M[i, j] -= L[k, i] L[k, j] for every pair i, j on the path (j above i)
        i = lam[k]
        while i >= 0:
            j = i
            while j >= 0:
                minus_product(M + (i * n + j) * W, Lk + i * W, Lk + j * W)
                j = lam[j]
            i = lam[i]
    return 0


cdef inline void row_minus(lp dst, clp src, Py_ssize_t ncols, clp s) noexcept nogil:
    # row dst -= s · row src (s one number a lane; rows of ncols entries)
    cdef Py_ssize_t c, l
    for c in range(ncols):
        for l in range(W):
            dst[c * W + l] -= s[l] * src[c * W + l]


cdef inline void row_scale(lp X, Py_ssize_t ncols, clp s) noexcept nogil:
    # row X *= 1 / s (s one number a lane)
    cdef Py_ssize_t c, l
    cdef double inv[W]
    for l in range(W):
        inv[l] = 1.0 / s[l]
    for c in range(ncols):
        for l in range(W):
            X[c * W + l] *= inv[l]


cdef void ltl_solve(const ModelC* model, const double* L, double* X,
                    Py_ssize_t ncols) noexcept nogil:
    """X ← M⁻¹ X from M = Lᵀ L on W lanes (X: nv rows of ncols, row-major), in place."""
    cdef Py_ssize_t n = model.nv, k, i
    cdef const int64_t* lam = model.dof_parent
    # --- sweep 1 (leaves to root): X ← L⁻ᵀ X
    for k in range(n - 1, -1, -1):
        row_scale(X + k * ncols * W, ncols, L + (k * n + k) * W)
        i = lam[k]
        while i >= 0:
            row_minus(X + i * ncols * W, X + k * ncols * W, ncols, L + (k * n + i) * W)
            i = lam[i]
    # --- sweep 2 (root to leaves): X ← L⁻¹ X
    for k in range(n):
        i = lam[k]
        while i >= 0:
            row_minus(X + k * ncols * W, X + i * ncols * W, ncols, L + (k * n + i) * W)
            i = lam[i]
        row_scale(X + k * ncols * W, ncols, L + (k * n + k) * W)


cdef void ltl_inverse(const ModelC* model, double* L) noexcept nogil:
    """M⁻¹ = L⁻¹ L⁻ᵀ from M = Lᵀ L on W lanes, in L's own storage (full and symmetric).

    As ``crba.ltl_inverse``: N = L⁻¹ replaces L column by column from the last (N keeps
    L's pattern), then N Nᵀ replaces N row by row from the last.
    """
    cdef Py_ssize_t n = model.nv, a, b, k, l
    cdef const int64_t* lam = model.dof_parent
    cdef double s[W]
    cdef double piv[W]
    for b in range(n - 1, -1, -1):
        # N[b, b] = 1 / L[b, b];  N[a, b] = -N[b, b] Σ_{b < k ⪯ a} N[a, k] L[k, b]  (N L = 1)
        for l in range(W):
            piv[l] = 1.0 / L[(b * n + b) * W + l]
            L[(b * n + b) * W + l] = piv[l]
        for a in range(n - 1, b, -1):
            memset(s, 0, W * sizeof(double))
            k = a
            while k > b:
                plus_product(s, L + (a * n + k) * W, L + (k * n + b) * W)
                k = lam[k]
            for l in range(W):
                L[(a * n + b) * W + l] = -piv[l] * s[l]
    for a in range(n - 1, -1, -1):
        for b in range(a, -1, -1):
            # (N Nᵀ)[a, b] = Σ_{k ⪯ b} N[a, k] N[b, k]
            memset(s, 0, W * sizeof(double))
            k = b
            while k >= 0:
                plus_product(s, L + (a * n + k) * W, L + (b * n + k) * W)
                k = lam[k]
            memcpy(L + (a * n + b) * W, s, W * sizeof(double))
    for a in range(n):
        for b in range(a + 1, n):
            memcpy(L + (a * n + b) * W, L + (b * n + a) * W, W * sizeof(double))


cdef int minus_inverse_times(const ModelC* model, double* M, double* dq,
                             double* dv) noexcept nogil:
    """M ← M⁻¹, dq ← -M⁻¹ dq, dv ← -M⁻¹ dv in place on W lanes; 0 or 1 + the failing column.

    As the one-state kernel's sparse path: M = Lᵀ L with the tree's sparsity, the rows
    of dq and dv solved, M⁻¹ = L⁻¹ L⁻ᵀ formed in M's storage.
    """
    cdef Py_ssize_t n = model.nv, k
    cdef int status
    if n == 0:
        return 0
    status = ltl(model, M)
    if status:
        return status
    ltl_solve(model, M, dq, n)
    ltl_solve(model, M, dv, n)
    for k in range(n * n * W):
        dq[k] = -dq[k]
        dv[k] = -dv[k]
    ltl_inverse(model, M)
    return 0


if W != 8:
    raise ImportError("soa_ltl.pxi: rbd_minus_product and rbd_plus_product are "
                      f"written for W = 8 lanes, _lanes.pxd has W = {W}")
