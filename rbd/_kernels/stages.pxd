# cython: language_level=3
"""The stage pipeline over one caller-owned ``rbd.Data``, compiled (``stages.pyx``).

Twin: ``rbd/reference/stages.py``.  ``Terms`` points at the fields of
:class:`rbd.data.Data` that the stages add to the kernels' workspace ``Work``.
"""

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work


cdef struct Terms:
    double* q                     # nq: the configuration of the position stage
    double* qd                    # nv: the joint velocities of the velocity stage
    double* M                     # nv × nv: joint-space inertia (armature included)
    double* L                     # nv × nv: its factor, lower triangular (Lᵀ L or L Lᵀ)
    double* h                     # nv: bias forces C q̇ + g
    double* g                     # nv: generalized gravity (NULL: not computed)
    double* J                     # nframes × 6 × nv: Jacobians of the named frames
    const int64_t* frame_body     # nframes: the body of each frame
    const double* frame_point     # nframes × 3: its origin in body coordinates
    Py_ssize_t nframes
    bint sparse                   # the factor is M = Lᵀ L (tree pattern), else M = L Lᵀ


cdef void position(const ModelC* model, Work* w, Terms* t, const double* q) noexcept nogil
cdef void velocity(const ModelC* model, Work* w, Terms* t, const double* qd) noexcept nogil
cdef void composite_inertia(const ModelC* model, Work* w, Terms* t) noexcept nogil
cdef int factor(const ModelC* model, Work* w, Terms* t) noexcept nogil
cdef void bias(const ModelC* model, Work* w, Terms* t) noexcept nogil
cdef void jacobians(const ModelC* model, Work* w, Terms* t) noexcept nogil
cdef int solve(const ModelC* model, Work* w, Terms* t, const double* tau) noexcept nogil
cdef int c_compute_all(const ModelC* model, Work* w, Terms* t, const double* q,
                       const double* qd, const double* tau) noexcept nogil
