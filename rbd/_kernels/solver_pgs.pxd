# cython: language_level=3
from rbd._kernels.solver_newton cimport RowsC


cdef int c_solve_pgs(const RowsC* rows, const double* M, const double* a0, double* qacc,
                     double* f, Py_ssize_t iterations, double tolerance,
                     double* work) noexcept nogil
