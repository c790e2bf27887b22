# cython: language_level=3
from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport cross3_add, mat3_vec

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
