# cython: language_level=3
"""Argument conversion and checks shared by the compiled entry points (``_args.pyx``).

``usable`` and ``as_array`` run on every call and are inline here, so each
entry point keeps its no-copy fast path without a call into another module.
"""

cimport numpy as cnp
from cpython.ref cimport PyObject


cdef struct Pending:
    # The value checks of a batch's inputs, run block by block in the batch's threads
    # (check_rows) instead of over the whole arrays before it: finite entries, and the
    # quaternions of q within the tolerance, copied normalized to q_out.  The checks of
    # _model.pyx's _settle raise the error, in argument order, when one fails.
    bint active                   # check_rows has work to do
    const double* src[4]          # the caller's q, x1, x2, f_ext (NULL: none)
    Py_ssize_t width[4]           # doubles a state
    double* q_out                 # q with unit quaternions (NULL: the model has none, or the
                                  # kernel takes q as it is: the lanes, _model.pyx _run_lanes)
    const Py_ssize_t* quat_start  # first index of each quaternion in a state's q
    Py_ssize_t nquat
    double quat_tol
    volatile int failed           # set by check_rows when a check fails

cdef struct Call:
    # One validated request: up to four inputs (q, x1, x2, f_ext), each with the number
    # of doubles between consecutive states (0 when shared by the whole batch); the task and
    # its extra arguments (_model.pyx)
    int task                      # the Task of _model.pyx
    const double* x[4]
    Py_ssize_t stride[4]
    Py_ssize_t N                  # batch size, -1 for a single state
    double* out
    Py_ssize_t out_stride
    Py_ssize_t body
    const double* point
    double dt
    Pending pending               # a batch's value checks, run in its threads (CompiledBase._arg_q)
    PyObject* name[4]             # the argument of each input, for the errors of CompiledBase._settle


cdef cnp.ndarray convert(object x, str name)
cdef bint all_finite(const double* p, Py_ssize_t n) noexcept nogil
cdef int check_finite(cnp.ndarray arr, str name) except -1
cdef int raise_non_finite(str name) except -1
cdef int check_rows(Pending* p, Py_ssize_t k0, Py_ssize_t n) noexcept nogil
cdef str shape_text(tuple shape)
cdef cnp.ndarray vector(object x, str name, Py_ssize_t n)
cdef Py_ssize_t batch_of(cnp.ndarray arr, int nd, Py_ssize_t d0, Py_ssize_t d1,
                          str name) except -2


cdef inline bint usable(object x):
    # a C-contiguous, aligned, native-endian float64 ndarray (used without a copy)
    return (type(x) is cnp.ndarray
            and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>x)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>x))


cdef inline cnp.ndarray as_array(object x, str name):
    # x itself when usable, else one converted copy (see convert)
    if usable(x):
        return <cnp.ndarray>x
    return convert(x, name)
