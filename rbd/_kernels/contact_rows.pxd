# cython: language_level=3
"""A contact's constraint rows, compiled: the twin of ``rbd/constraints/contact_rows.py``
(frame rows, pyramid edges), inline for ``forward.pyx``."""

from libc.string cimport memcpy

from rbd._kernels.forward cimport ForwardWork

cdef inline void contact_frame_rows(ForwardWork* fw, Py_ssize_t nv, const double* frame,
                                    Py_ssize_t condim) noexcept nogil:
    # rows [n; t1; t2]ᵀ J_p (one row for condim 1), then n, t1, t2 of J_r up to condim
    # (rbd.constraints.contact_rows.contact_frame_rows)
    cdef Py_ssize_t r, k, j, ntrans = 3 if condim > 1 else 1
    cdef double s
    for r in range(condim):
        for j in range(nv):
            s = 0.0
            for k in range(3):
                if r < ntrans:                         # J_p: rows 3..5 of jac
                    s += frame[3 * r + k] * fw.jac[(3 + k) * nv + j]
                else:                                  # J_r: rows 0..2 of jac
                    s += frame[3 * (r - 3) + k] * fw.jac[k * nv + j]
            fw.frame_rows[r * nv + j] = s


cdef inline Py_ssize_t contact_rows(ForwardWork* fw, Py_ssize_t nv, Py_ssize_t condim,
                                    const double* friction, bint elliptic) noexcept nogil:
    # the contact's rows at fw.nefc: its frame rows (elliptic, condim 1) or the pyramid's
    # edges J_0 ± μ_k J_k (rbd.constraints.contact_rows.contact_rows); returns their number
    cdef Py_ssize_t k, j, n
    cdef double* top = fw.J + fw.nefc * nv
    if condim == 1 or elliptic:
        memcpy(top, fw.frame_rows, condim * nv * sizeof(double))
        return condim
    n = 2 * (condim - 1)
    for k in range(1, condim):
        for j in range(nv):
            top[(2 * k - 2) * nv + j] = (fw.frame_rows[j]
                                         + friction[k - 1] * fw.frame_rows[k * nv + j])
            top[(2 * k - 1) * nv + j] = (fw.frame_rows[j]
                                         - friction[k - 1] * fw.frame_rows[k * nv + j])
    return n
