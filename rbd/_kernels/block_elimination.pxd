# cython: language_level=3
from rbd._kernels._model cimport ModelC, Work

cdef int c_aba_modified(const ModelC* model, Work* w, const double* q, const double* qd,
                        const double* tau, const double* f_ext, double* qdd) noexcept nogil
