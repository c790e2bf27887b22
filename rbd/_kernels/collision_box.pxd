# cython: language_level=3
# The box pair routines of collision_box.pyx (pair_function's signature), for
# collision.pyx's pair table.
from rbd._kernels.collision_primitive cimport PairOut


cdef int c_sphere_box(const double* pos1, const double* mat1, const double* size1,
                      const double* pos2, const double* mat2, const double* size2,
                      double margin, PairOut* out) noexcept nogil
cdef int c_capsule_box(const double* pos1, const double* mat1, const double* size1,
                       const double* pos2, const double* mat2, const double* size2,
                       double margin, PairOut* out) noexcept nogil
cdef int c_box_box(const double* pos1, const double* mat1, const double* size1,
                   const double* pos2, const double* mat2, const double* size2,
                   double margin, PairOut* out) noexcept nogil
