# cython: language_level=3
cimport numpy as cnp

# The contacts of one geom pair, written by the compiled pair routines.

cdef enum:
    #: most contacts a primitive pair produces (box–box: 8)
    MAX_PAIR_CONTACTS = 8

cdef struct PairOut:
    int n
    double dist[8]
    double pos[24]       # n × 3
    double frame[72]     # n × 3 × 3, rows: normal, tangent 1, tangent 2

cdef double normalize(double* vec) noexcept nogil
cdef int make_frame(const double* normal, const double* tangent, double* frame) noexcept nogil
cdef int _sphere_sphere(const double* pos1, const double* mat1, double r1, const double* pos2,
                        const double* mat2, double r2, double margin, PairOut* out) noexcept nogil
cdef object pack(const PairOut* out)

# The pair routines (pair_function's signature), for collision.pyx's pair table.
cdef int c_plane_sphere(const double* pos1, const double* mat1, const double* size1,
                        const double* pos2, const double* mat2, const double* size2,
                        double margin, PairOut* out) noexcept nogil
cdef int c_plane_capsule(const double* pos1, const double* mat1, const double* size1,
                         const double* pos2, const double* mat2, const double* size2,
                         double margin, PairOut* out) noexcept nogil
cdef int c_plane_cylinder(const double* pos1, const double* mat1, const double* size1,
                          const double* pos2, const double* mat2, const double* size2,
                          double margin, PairOut* out) noexcept nogil
cdef int c_plane_box(const double* pos1, const double* mat1, const double* size1,
                     const double* pos2, const double* mat2, const double* size2,
                     double margin, PairOut* out) noexcept nogil
cdef int c_plane_ellipsoid(const double* pos1, const double* mat1, const double* size1,
                           const double* pos2, const double* mat2, const double* size2,
                           double margin, PairOut* out) noexcept nogil
cdef int c_sphere_sphere(const double* pos1, const double* mat1, const double* size1,
                         const double* pos2, const double* mat2, const double* size2,
                         double margin, PairOut* out) noexcept nogil
cdef int c_sphere_capsule(const double* pos1, const double* mat1, const double* size1,
                          const double* pos2, const double* mat2, const double* size2,
                          double margin, PairOut* out) noexcept nogil
cdef int c_sphere_cylinder(const double* pos1, const double* mat1, const double* size1,
                           const double* pos2, const double* mat2, const double* size2,
                           double margin, PairOut* out) noexcept nogil
cdef int c_capsule_capsule(const double* pos1, const double* mat1, const double* size1,
                           const double* pos2, const double* mat2, const double* size2,
                           double margin, PairOut* out) noexcept nogil


cdef inline void add_contact(PairOut* out, double dist, const double* pos, const double* normal,
                             const double* tangent) noexcept nogil:
    # contact n: distance, point, frame (make_frame of the normal and the tangent)
    cdef int k
    if out.n >= MAX_PAIR_CONTACTS:
        return
    out.dist[out.n] = dist
    for k in range(3):
        out.pos[3 * out.n + k] = pos[k]
    make_frame(normal, tangent, out.frame + 9 * out.n)
    out.n += 1


cdef inline object as_doubles(x):
    # a C-contiguous float64 array of x (a copy when it is not one already)
    return cnp.PyArray_FROMANY(x, cnp.NPY_DOUBLE, 0, 2, cnp.NPY_ARRAY_C_CONTIGUOUS)


ctypedef int (*pair_function)(const double*, const double*, const double*, const double*,
                              const double*, const double*, double, PairOut*) noexcept nogil


cdef inline object run_pair(pair_function f, pos1, mat1, size1, pos2, mat2, size2,
                            double margin):
    # contiguous float copies of the inputs, the routine, its contacts as arrays
    cdef const double[::1] p1 = as_doubles(pos1).reshape(3)
    cdef const double[::1] m1 = as_doubles(mat1).reshape(9)
    cdef const double[::1] s1 = as_doubles(size1).reshape(-1)
    cdef const double[::1] p2 = as_doubles(pos2).reshape(3)
    cdef const double[::1] m2 = as_doubles(mat2).reshape(9)
    cdef const double[::1] s2 = as_doubles(size2).reshape(-1)
    cdef PairOut out
    if s1.shape[0] < 3 or s2.shape[0] < 3:
        raise ValueError("size1, size2: expected 3 entries each")
    out.n = 0
    f(&p1[0], &m1[0], &s1[0], &p2[0], &m2[0], &s2[0], margin, &out)
    return pack(&out)
