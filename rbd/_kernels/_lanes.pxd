# cython: language_level=3
"""Spatial algebra on W states at once: the lanes of the structure-of-arrays kernels.

The lane twin of ``_spatial.pxd``, used by ``soa.pxi`` (batched RNEA and ABA).
A quantity of ``n`` components over a block of ``W`` states is stored
component-major, the state index innermost: component ``k`` of lane ``l`` is
``x[k * W + l]`` (a 6-vector is ``double[6 * W]``, a 3×3 matrix ``double[9 * W]``,
a 6×6 matrix ``double[36 * W]``).  Each helper carries the name of the
``_spatial.pxd`` helper it applies and is one loop over the lanes whose body
reads the lane into small local arrays, calls that helper and writes the lane
back: after inlining, the C compiler unrolls the small loops and vectorizes the
loop over the lanes (4 or 8 doubles an instruction with AVX2 or AVX-512).  The
pointers are ``restrict`` (``lp``, ``clp``): outputs never alias inputs.
"""

from rbd._kernels cimport _spatial as sp

cdef extern from *:
    # restrict-qualified lane pointers: the compiler may vectorize without alias checks
    ctypedef double* lp "double *__restrict__"
    ctypedef const double* clp "const double *__restrict__"

# States per block (lanes): a multiple of every vector width (2, 4 or 8 doubles).
cdef enum:
    W = 8


# --- moving one lane in and out ----------------------------------------------------------

cdef inline void lane_get(clp x, Py_ssize_t n, Py_ssize_t l, double* out) noexcept nogil:
    # out[k] = x[k W + l], k < n (n ≤ 9)
    cdef Py_ssize_t k
    for k in range(n):
        out[k] = x[k * W + l]


cdef inline void lane_put(const double* x, Py_ssize_t n, Py_ssize_t l, lp out) noexcept nogil:
    # out[k W + l] = x[k], k < n (n ≤ 9)
    cdef Py_ssize_t k
    for k in range(n):
        out[k * W + l] = x[k]


cdef inline void lane_get36(clp x, Py_ssize_t l, double* out) noexcept nogil:
    # a 6×6 matrix of lane l
    cdef Py_ssize_t r, s
    for r in range(6):
        for s in range(6):
            out[6 * r + s] = x[(6 * r + s) * W + l]


# --- spatial algebra, lane by lane ---------------------------------------------------------

cdef inline void dot6(clp a, clp b, lp out) noexcept nogil:
    # out = a · b
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = (a[l] * b[l] + a[W + l] * b[W + l] + a[2 * W + l] * b[2 * W + l]
                  + a[3 * W + l] * b[3 * W + l] + a[4 * W + l] * b[4 * W + l]
                  + a[5 * W + l] * b[5 * W + l])


cdef inline void plux_compose(clp E1, clp r1, const double* E2, const double* r2,
                              lp E, lp r) noexcept nogil:
    # plux(E1, r1) plux(E2, r2) = plux(E1 E2, r2 + E2ᵀ r1)   (X_2 the same on every lane)
    cdef double E1l[9]
    cdef double r1l[3]
    cdef double El[9]
    cdef double rl[3]
    cdef Py_ssize_t l
    for l in range(W):
        lane_get(E1, 9, l, E1l)
        lane_get(r1, 3, l, r1l)
        sp.plux_compose(E1l, r1l, E2, r2, El, rl)
        lane_put(El, 9, l, E)
        lane_put(rl, 3, l, r)


cdef inline void xform_motion(clp E, clp r, clp m, lp out) noexcept nogil:
    # out = X m = [E ω; E (v - r × ω)]
    cdef double El[9]
    cdef double rl[3]
    cdef double ml[6]
    cdef double ol[6]
    cdef Py_ssize_t l
    for l in range(W):
        lane_get(E, 9, l, El)
        lane_get(r, 3, l, rl)
        lane_get(m, 6, l, ml)
        sp.xform_motion(El, rl, ml, ol)
        lane_put(ol, 6, l, out)


cdef inline void xform_force_T_add(clp E, clp r, clp f, lp out) noexcept nogil:
    # out += Xᵀ f
    cdef double El[9]
    cdef double rl[3]
    cdef double fl[6]
    cdef double ol[6]
    cdef Py_ssize_t l, k
    for l in range(W):
        lane_get(E, 9, l, El)
        lane_get(r, 3, l, rl)
        lane_get(f, 6, l, fl)
        sp.xform_force_T(El, rl, fl, ol)
        for k in range(6):
            out[k * W + l] += ol[k]


cdef inline void crm_apply(clp v, clp m, lp out) noexcept nogil:
    # out = v × m
    cdef double vl[6]
    cdef double ml[6]
    cdef double ol[6]
    cdef Py_ssize_t l
    for l in range(W):
        lane_get(v, 6, l, vl)
        lane_get(m, 6, l, ml)
        sp.crm_apply(vl, ml, ol)
        lane_put(ol, 6, l, out)


cdef inline void crf_apply(clp v, clp f, lp out) noexcept nogil:
    # out = v ×* f
    cdef double vl[6]
    cdef double fl[6]
    cdef double ol[6]
    cdef Py_ssize_t l
    for l in range(W):
        lane_get(v, 6, l, vl)
        lane_get(f, 6, l, fl)
        sp.crf_apply(vl, fl, ol)
        lane_put(ol, 6, l, out)


cdef inline void rbi_apply(double m, const double* h, const double* Ibar, clp v,
                           lp out) noexcept nogil:
    # out = I v = [Ī ω + h × v_lin; m v_lin - h × ω]   (I the same on every lane)
    cdef double vl[6]
    cdef double ol[6]
    cdef Py_ssize_t l
    for l in range(W):
        lane_get(v, 6, l, vl)
        sp.rbi_apply(m, h, Ibar, vl, ol)
        lane_put(ol, 6, l, out)


cdef inline void mat6_vec(clp A, clp x, lp out) noexcept nogil:
    # out = A x   (A 6×6)
    cdef Py_ssize_t l, r, s
    for r in range(6):
        for l in range(W):
            out[r * W + l] = A[(6 * r) * W + l] * x[l]
        for s in range(1, 6):
            for l in range(W):
                out[r * W + l] += A[(6 * r + s) * W + l] * x[s * W + l]


cdef inline void congruence_add(clp E, clp r, clp I, lp out) noexcept nogil:
    # out += Xᵀ I X for X = plux(E, r) and a symmetric I
    cdef double El[9]
    cdef double rl[3]
    cdef double Il[36]
    cdef double ol[36]
    cdef Py_ssize_t l, a, b
    for l in range(W):
        lane_get(E, 9, l, El)
        lane_get(r, 3, l, rl)
        lane_get36(I, l, Il)
        for a in range(6):
            for b in range(6):
                ol[6 * a + b] = out[(6 * a + b) * W + l]
        sp.congruence_add(El, rl, Il, ol)
        for a in range(6):
            for b in range(6):
                out[(6 * a + b) * W + l] = ol[6 * a + b]
