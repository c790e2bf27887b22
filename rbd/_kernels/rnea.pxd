# cython: language_level=3
from rbd._kernels._model cimport ModelC, Work

cdef void rnea(const ModelC* model, Work* w, const double* q, const double* qd,
               const double* qdd, const double* f_ext, double* tau) noexcept nogil
