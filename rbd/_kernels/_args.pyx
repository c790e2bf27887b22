# cython: language_level=3
"""Argument conversion and checks of the compiled entry points.

Part of the dispatch and validation layer of the kernels (see ``_model.pyx``),
not a derivation: it has no reference twin in ``rbd/reference/``.  The
conversion is the reference path's (:func:`rbd._validation.as_real_array`), so
both backends accept the same arguments and refuse the others with the same
messages; every refusal is an :class:`rbd.InputError` naming the argument.

C functions only, declared in ``_args.pxd`` (with the inline fast path
``usable`` / ``as_array``) and cimported by ``_model.pyx`` and
``_rollout_batch.pyx``.
"""

cimport numpy as cnp
from libc.math cimport isfinite

from rbd._validation import as_real_array
from rbd.errors import InputError

cnp.import_array()


cdef cnp.ndarray convert(object x, str name):
    # the conversion of the reference path (rbd._validation.as_real_array): one float64
    # C-contiguous array, complex values and out-of-range numbers refused with the same
    # messages on both backends
    return as_real_array(x, name)


cdef int check_finite(cnp.ndarray arr, str name) except -1:
    cdef const double* p = <const double*>cnp.PyArray_DATA(arr)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(arr), i
    for i in range(n):
        if not isfinite(p[i]):
            raise InputError(f"{name} has non-finite entries")
    return 0


cdef str shape_text(tuple shape):
    return "(" + ", ".join([str(d) for d in shape]) + ("," if len(shape) == 1 else "") + ")"


cdef cnp.ndarray vector(object x, str name, Py_ssize_t n):
    # a finite vector of shape (n,)
    cdef cnp.ndarray arr = as_array(x, name)
    if (<object>arr).shape != (n,):
        raise InputError(f"{name} must have shape ({n},), got "
                         f"{shape_text((<object>arr).shape)}")
    check_finite(arr, name)
    return arr


cdef Py_ssize_t batch_of(cnp.ndarray arr, int nd, Py_ssize_t d0, Py_ssize_t d1,
                          str name) except -2:
    # -1 for one state of shape (d0,) or (d0, d1); N for a batch (N, d0[, d1])
    cdef int ndim = cnp.PyArray_NDIM(arr)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(arr)
    if ndim == nd and dims[0] == d0 and (nd == 1 or dims[1] == d1):
        return -1
    if ndim == nd + 1 and dims[1] == d0 and (nd == 1 or dims[2] == d1):
        return dims[0]
    cdef tuple shape = (d0,)
    if nd == 2:
        shape = (d0, d1)
    raise InputError(
        f"{name} must have shape {shape_text(shape)} or "
        f"(N, {', '.join([str(d) for d in shape])}), got {shape_text((<object>arr).shape)}"
    )
