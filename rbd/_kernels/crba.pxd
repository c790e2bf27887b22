# cython: language_level=3
from rbd._kernels._model cimport ModelC, Work

cdef void crba(const ModelC* model, Work* w, const double* q, double* M) noexcept nogil
