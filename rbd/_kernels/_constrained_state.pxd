# cython: language_level=3
"""The terms of one state of the compiled constrained calls (``_constrained_state.pyx``)."""

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.constrained cimport Arena
from rbd._kernels.constraints cimport Rows

cdef int state_terms(const ModelC* model, Work* w, const Rows* r, Arena* s, const double* q,
                     const double* qd, const double* tau, const double* f_ext, double kp,
                     double kd) noexcept nogil
cdef int solve_augmented(const ModelC* model, Work* w, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                         const double* q, const double* qd, const double* tau,
                         const double* f_ext, double* qdd, double* f) noexcept nogil
cdef int kkt_acceleration(const ModelC* model, Work* w, const Rows* r, double* base,
                          const double* q, const double* qd, const double* tau,
                          const double* f_ext, double kp, double kd,
                          double* qdd) noexcept nogil
