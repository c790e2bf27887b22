# cython: language_level=3
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
