# cython: language_level=3
"""Argument conversion and checks shared by the compiled entry points (``_args.pyx``).

``usable`` and ``as_array`` run on every call and are inline here, so each
entry point keeps its no-copy fast path without a call into another module.
"""

cimport numpy as cnp


cdef cnp.ndarray convert(object x, str name)
cdef int check_finite(cnp.ndarray arr, str name) except -1
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
