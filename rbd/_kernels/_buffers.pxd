# cython: language_level=3
"""Per-thread buffers of the threaded batches (``_base.pyx``, ``_rollout_batch.pyx``,
``_constrained_batch.pyx``): no cache line shared by two threads, lane vectors aligned."""

cimport numpy as cnp
from posix.stdlib cimport posix_memalign

import numpy as np


cdef inline cnp.ndarray thread_rows(int nt, Py_ssize_t n, bint zero):
    # nt rows of ≥ n doubles, one per thread (its workspace), a 64-byte cache line apart: no
    # line written by two threads (such a line moves between the cores at every write)
    cdef Py_ssize_t stride = (n + 7) // 8 * 8 + 8
    return np.zeros((nt, stride)) if zero else np.empty((nt, stride))


cdef inline double* lane_buffer(int nt, Py_ssize_t* size) except NULL:
    # nt lane workspaces of ≥ size doubles (size rounded up to whole 64-byte lines), the
    # first on a 64-byte boundary, so every thread's workspace starts on one: a lane
    # vector (8 doubles with AVX-512) then never straddles two cache lines.  malloc gives
    # 16-byte alignment only; with it, two threads' lane ABA spent 1.3x the CPU time of one
    # thread (1.06-1.10x aligned).  Freed with free().
    cdef void* p = NULL
    size[0] = (size[0] + 7) // 8 * 8
    if posix_memalign(&p, 64, max(1, nt * size[0]) * sizeof(double)) != 0:
        raise MemoryError()
    return <double*>p
