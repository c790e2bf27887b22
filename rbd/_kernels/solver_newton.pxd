# cython: language_level=3
# The constraint rows as flat arrays, shared by the Newton and PGS kernels.

cdef struct RowsC:
    Py_ssize_t nv, nefc, ne, nf, ncone
    const double* J            # nefc × nv, row-major
    const double* aref
    const double* D
    const double* R
    const double* floss        # friction-loss bound per row (0 outside ne .. ne + nf)
    const Py_ssize_t* cone_start
    const Py_ssize_t* cone_dim
    const double* cone_mu
    const double* cone_friction  # ncone × 5
    const Py_ssize_t* cone_at  # per row: the elliptic contact it belongs to, or -1


cdef class RowsData:
    """The arrays behind a :c:type:`RowsC`, kept alive as long as the view is used."""
    cdef RowsC c
    cdef object keep


cdef int constraint_update(const RowsC* rows, const double* jar, double* force,
                           unsigned char* quadratic, double* hcone, int* state,
                           double* cost) noexcept nogil
