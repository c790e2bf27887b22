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
from libc.math cimport fabs, sqrt
from libc.stdint cimport uint64_t

from rbd._validation import as_real_array
from rbd.errors import InputError

cnp.import_array()


cdef cnp.ndarray convert(object x, str name):
    # the conversion of the reference path (rbd._validation.as_real_array): one float64
    # C-contiguous array, complex values and out-of-range numbers refused with the same
    # messages on both backends
    return as_real_array(x, name)


cdef bint all_finite(const double* p, Py_ssize_t n) noexcept nogil:
    # no entry has its 11 exponent bits all set (±inf, NaN): adding 1 to the exponent field
    # carries into the sign bit only then; integer and/add/or, which vectorize
    cdef const uint64_t* bits = <const uint64_t*>p
    cdef uint64_t bad = 0
    cdef Py_ssize_t i
    for i in range(n):
        bad |= (bits[i] & 0x7ff0000000000000ULL) + 0x0010000000000000ULL
    return (bad >> 63) == 0


cdef int check_finite(cnp.ndarray arr, str name) except -1:
    if not all_finite(<const double*>cnp.PyArray_DATA(arr), cnp.PyArray_SIZE(arr)):
        raise_non_finite(name)
    return 0


cdef int raise_non_finite(str name) except -1:
    raise InputError(f"{name} has non-finite entries")


cdef int check_rows(Pending* p, Py_ssize_t k0, Py_ssize_t n) noexcept nogil:
    # the checks of Pending on states k0 .. k0 + n - 1; 0, or 1 (and p.failed) when one fails
    cdef Py_ssize_t k, s, j, l, nq = p.width[0], nquat = p.nquat
    cdef const Py_ssize_t* starts = p.quat_start
    cdef const double* q = p.src[0]
    cdef const double* quat
    cdef double* out
    cdef double norm, tol = p.quat_tol
    cdef int bad = 0
    for s in range(4):
        if p.src[s] != NULL and not all_finite(p.src[s] + k0 * p.width[s], n * p.width[s]):
            p.failed = 1
            return 1
    if q == NULL or nquat == 0:
        return 0
    for k in range(k0, k0 + n):
        for j in range(nquat):
            # |quat| = sqrt(x² + y² + z² + w²) within the tolerance of 1 (no branch per
            # quaternion: the norms of a block are independent of each other)
            quat = q + k * nq + starts[j]
            norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                        + quat[3] * quat[3])
            bad = bad | (fabs(norm - 1.0) > tol)
    if bad:
        p.failed = 1
        return 1
    if p.q_out == NULL:
        return 0
    for k in range(k0, k0 + n):
        # the normalized copy: a norm not exactly 1 gives quat / |quat|
        for l in range(nq):
            p.q_out[k * nq + l] = q[k * nq + l]
        for j in range(nquat):
            quat = q + k * nq + starts[j]
            out = p.q_out + k * nq + starts[j]
            norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                        + quat[3] * quat[3])
            if norm != 1.0:
                for l in range(4):
                    out[l] = quat[l] / norm
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
