# cython: language_level=3
"""Analytical derivatives of inverse and forward dynamics.

Twin: ``rbd/reference/derivatives.py``.
"""

from rbd._kernels._model cimport ModelC, Work


cdef int rnea_derivatives(const ModelC* model, Work* w, const double* q, const double* qd,
                          const double* qdd, const double* f_ext,
                          double* out) noexcept nogil
cdef int aba_derivatives(const ModelC* model, Work* w, const double* q, const double* qd,
                         const double* tau, const double* f_ext, double* out) noexcept nogil
