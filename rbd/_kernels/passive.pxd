# cython: language_level=3
# MuJoCo's passive forces in the compiled forward pass (passive.pyx).

from rbd._kernels.forward cimport ForwardC


cdef void passive_force(const ForwardC* f, const double* q, const double* v,
                        double* out) noexcept nogil


cdef void ball_free_spring_force(const ForwardC* f, const double* q,
                                 double* out) noexcept nogil
