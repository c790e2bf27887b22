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


cdef enum:
    # the kinds of the packed records (Rows.code[8 k])
    K_POINT = 0
    K_FRAME = 1
    K_COUPLING = 2


cdef void constraint_motion(const ModelC* model, Work* w, const double* q,
                            const double* qd) noexcept nogil
cdef void anchor_rows(const ModelC* model, Work* w, const double* q, int kind, Py_ssize_t a,
                      Py_ssize_t b, const double* Ta, const double* Tb, double* phi,
                      double* J, double* gamma) noexcept nogil
cdef void coupling_rows(const double* q, const double* qd, Py_ssize_t nv, Py_ssize_t qj,
                        Py_ssize_t vj, Py_ssize_t qs, Py_ssize_t vs, const double* c,
                        Py_ssize_t nc, double* phi, double* J, double* gamma) noexcept nogil
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


cdef inline void rows_after_motion(const ModelC* model, Work* w, const Rows* r,
                                   const double* q, const double* qd, double* phi, double* J,
                                   double* gamma) noexcept nogil:
    # the rows of c_constraint_rows once constraint_motion has run at (q, q̇)
    cdef Py_ssize_t nv = model.nv, k, row = 0
    cdef const int64_t* c
    for k in range(r.n):
        c = r.code + 8 * k
        if c[0] == K_COUPLING:
            coupling_rows(q, qd, nv, c[2], c[3], c[4], c[5], r.coef + c[6], c[7],
                          phi + row, J + row * nv, gamma + row)
        else:
            anchor_rows(model, w, q, <int>c[0], c[2], c[3], r.T + 32 * k, r.T + 32 * k + 16,
                        phi + row, J + row * nv, gamma + row)
        row += c[1]
