# cython: language_level=3
"""The state of a compiled model (``_base.pyx``), shared by ``_model.pyx`` and
``_rollout_batch.pyx``: ``CompiledBase``, the fork rule of threaded batches and the
interrupt check of long compiled loops."""

cimport numpy as cnp
from cpython.ref cimport PyObject

from rbd._kernels._args cimport Call, Pending
from rbd._kernels._model cimport ModelC, Work, jcalc_fn
from rbd._kernels._soa cimport SoaKernels


cdef bint omp_unusable() noexcept
cdef void omp_starting() noexcept


cdef struct Interrupt:
    # the interrupt check of one call of a long compiled loop (interrupted() in _base.pyx)
    volatile int stop             # set once a signal handler raised: every thread ends its work
    unsigned long poller          # the thread that runs Python's signal handlers (the caller)
    double last                   # monotonic time of its last check, seconds
    PyObject* error               # what the handler raised (a new reference), or NULL


cdef int run_lanes(const ModelC* m, const SoaKernels* K, int task, const double** x,
                   const Py_ssize_t* stride, double* out, Py_ssize_t out_stride, Py_ssize_t N,
                   int num_threads, Pending* pending) except -1


cdef void interrupt_start(Interrupt* s) noexcept
cdef bint interrupted(Interrupt* s) noexcept nogil
cdef object interrupt_error(Interrupt* s)


cdef class CompiledBase:
    cdef ModelC m
    cdef Work w0
    cdef bint w0_busy
    cdef Work* works
    cdef int nworks
    cdef bint works_busy
    cdef object _works_buffer
    cdef object _arrays
    cdef object _capsules
    cdef jcalc_fn* jfun
    cdef Py_ssize_t* quat_start
    cdef Py_ssize_t nquat
    cdef double quat_tol
    cdef object _quat_names
    cdef object _joint_names
    cdef readonly object data
    cdef int _num_threads

    cdef int _compile_joints(self, model) except -1
    cdef int _bind(self, Work* w, cnp.ndarray buffer) except -1
    cdef int _allocate_works(self, int nt) except -1
    cdef int _join(self, Call* c, Py_ssize_t n, str name) except -1
    cdef tuple _arg_q(self, object q, Call* c)
    cdef cnp.ndarray _arg_v(self, object v, str name, int slot, Call* c)
    cdef object _arg_f(self, object f_ext, Call* c)
    cdef int _defer(self, Call* c, cnp.ndarray arr, Py_ssize_t n, str name, int slot) except -1
    cdef list _inputs(self, Call* c, object q, object x1, str name1, object x2, str name2,
                      object f_ext)
    cdef int _settle(self, Call* c) except -1
    cdef int _check_quaternions(self, const double* q, Py_ssize_t N) except -1
    cdef void _normalize_quaternions(self, double* q, Py_ssize_t N) noexcept
    cdef int _raise_status(self, int status) except -1
