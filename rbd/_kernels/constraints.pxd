# cython: language_level=3
"""Constraint rows of closed loops, compiled (``constraints.pyx``): the packed records and the
C entry point ``c_constraint_rows`` shared with the constrained solvers (``constrained.pyx``)."""

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work


cdef struct Rows:
    # the resolved records of rbd.constraints.kinds, packed by pack_records()
    Py_ssize_t n                  # constraints
    Py_ssize_t m                  # rows
    const int64_t* code           # n × 8: kind (0 point, 1 frame, 2 coupling), rows, a, b, q_s,
                                  # v_s, first coefficient, count
    const double* T               # n × 32: T_a, T_b (4×4 row-major each; anchors only)
    const double* coef            # the couplings' coefficients, one after the other


cdef void constraint_motion(const ModelC* model, Work* w, const double* q,
                            const double* qd) noexcept nogil
cdef void rows_after_motion(const ModelC* model, Work* w, const Rows* r, const double* q,
                            const double* qd, double* phi, double* J,
                            double* gamma) noexcept nogil
cdef void c_constraint_rows(const ModelC* model, Work* w, const Rows* r, const double* q,
                            const double* qd, double* phi, double* J,
                            double* gamma) noexcept nogil


cdef inline int bind_rows(Rows* r, object packed) except -1:
    # point r at the arrays of pack_records() (kept alive by the caller)
    cdef const int64_t[:, ::1] code = packed[0]
    cdef const double[:, ::1] T = packed[1]
    cdef const double[::1] coef = packed[2]
    cdef Py_ssize_t k
    r.n = code.shape[0]
    r.m = 0
    for k in range(r.n):
        r.m += code[k, 1]
    r.code = &code[0, 0] if r.n else NULL
    r.T = &T[0, 0] if r.n else NULL
    r.coef = &coef[0]
    return 0
