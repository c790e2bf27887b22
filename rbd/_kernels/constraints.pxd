# cython: language_level=3
"""Constraint rows of closed loops, compiled (``constraints.pyx``): the packed records and the
C entry point ``fill_rows`` shared with the constrained solvers (``constrained.pyx``)."""

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work


cdef struct Rows:
    # the resolved records of rbd.constraints.kinds, packed by pack_records()
    Py_ssize_t n                  # constraints
    Py_ssize_t m                  # rows
    const int64_t* code           # n × 8: kind, rows, a, b, q_s, v_s, first coefficient, count
    const double* T               # n × 32: T_a, T_b (4×4 row-major each; anchors only)
    const double* coef            # the couplings' coefficients, one after the other


cdef void fill_rows(const ModelC* model, Work* w, const Rows* r, const double* q,
                    const double* qd, double* phi, double* J, double* gamma) noexcept nogil
cdef int bind_rows(Rows* r, object packed) except -1
