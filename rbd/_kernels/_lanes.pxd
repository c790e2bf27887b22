# cython: language_level=3
"""Spatial algebra on W states at once: the lanes of the structure-of-arrays kernels.

The lane twin of ``_spatial.pxd``, used by ``soa.pxi`` and ``soa_aba.pxi`` (batched
RNEA and ABA) and ``soa_derivatives.pxi`` (their analytical derivatives; the
world-coordinate helpers only they use are in ``_lanes_world.pxd``).
A quantity of ``n`` components over a block of ``W`` states is stored
component-major, the state index innermost: component ``k`` of lane ``l`` is
``x[k * W + l]`` (a 6-vector is ``double[6 * W]``, a 3×3 matrix ``double[9 * W]``,
a 6×6 matrix ``double[36 * W]``).  Each helper carries the name and formula of
the ``_spatial.pxd`` helper it renders; its innermost loops run over the lanes
with straight-line bodies, which the C compiler vectorizes (2, 4 or 8 doubles an
instruction with SSE2, AVX2 or AVX-512; check with ``-fopt-info-vec``).  The
pointers are ``restrict`` (``lp``, ``clp``): outputs never alias inputs.
"""

from libc.math cimport cos, fabs, sin, sqrt

cdef extern from *:
    # restrict-qualified lane pointers: the compiler may vectorize without alias checks
    ctypedef double* lp "double *__restrict__"
    ctypedef const double* clp "const double *__restrict__"

# States per block (lanes): a multiple of every vector width (2, 4 or 8 doubles).
cdef enum:
    W = 8


# --- moving one lane in and out ----------------------------------------------------------

cdef inline void lane_get(clp x, Py_ssize_t n, Py_ssize_t l, double* out) noexcept nogil:
    # out[k] = x[k W + l], k < n
    cdef Py_ssize_t k
    for k in range(n):
        out[k] = x[k * W + l]


cdef inline void lane_put(const double* x, Py_ssize_t n, Py_ssize_t l, lp out) noexcept nogil:
    # out[k W + l] = x[k], k < n
    cdef Py_ssize_t k
    for k in range(n):
        out[k * W + l] = x[k]


# --- sine and cosine ---------------------------------------------------------------------

cdef inline void sincos_lanes(clp x, lp s, lp c) noexcept nogil:
    # s = sin x, c = cos x on every lane, within 1 ulp of the correctly rounded values (the
    # libm per lane it replaces; tests/test_soa.py), in arithmetic the compiler vectorizes:
    #   reduce:  x = n π/2 + y, |y| ≤ π/4, n = round(2x/π)  (Cody–Waite: π/2 is split into
    #            fdlibm's pio2_1 + pio2_2 + pio2_3 + pio2_3t, the first three of 33 bits, so
    #            n pio2_k is exact for |n| < 2¹⁹; the two subtractions are TwoSums, leaving
    #            y = yh + yl to about 2⁻¹⁰⁰ |x|)
    #   kernels: sin y, cos y by fdlibm's k_sin.c and k_cos.c (degree-13 and -14 minimax
    #            polynomials, with yl as the correction term)
    #   place:   sin x = (sin y, cos y, -sin y, -cos y)[n mod 4], cos x one quadrant on.
    # Lanes with |x| > 2¹⁹ (or not finite) take libm's sin and cos (Payne–Hanek reduction).
    cdef Py_ssize_t l
    cdef double fn, r, w, hi, bb, e, yh, yl, z, zz, v, ps, pc, hz
    cdef int n
    cdef int far = 0
    for l in range(W):
        # n = round(x 2/π) (the 1.5·2⁵² shift rounds to an integer)
        fn = (x[l] * 6.36619772367581382433e-01 + 6755399441055744.0) - 6755399441055744.0
        r = x[l] - fn * 1.57079632673412561417e+00              # exact (Sterbenz)
        w = fn * 6.07710050630396597660e-11
        hi = r - w                                               # TwoSum(r, -w) = hi + e
        bb = hi - r
        e = (r - (hi - bb)) + (-w - bb)
        w = fn * 2.02226624871116645580e-21
        r = hi - w                                               # TwoSum(hi, -w)
        bb = r - hi
        e = e + ((hi - (r - bb)) + (-w - bb)) - fn * 8.47842766036889956997e-32
        yh = r + e
        yl = (r - yh) + e
        z = yh * yh
        zz = z * z
        v = z * yh
        # k_sin.c: sin(yh + yl)
        ps = yh - ((z * (0.5 * yl - v * (8.33333333332248946124e-03 + z * (
            -1.98412698298579493134e-04 + z * 2.75573137070700676789e-06) + z * zz * (
            -2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))) - yl)
            - v * -1.66666666666666324348e-01)
        # k_cos.c: cos(yh + yl)
        w = (z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z
                                                    * 2.48015872894767294178e-05))
             + zz * zz * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09
                                                             + z * -1.13596475577881948265e-11)))
        hz = 0.5 * z
        r = 1.0 - hz
        pc = r + (((1.0 - r) - hz) + (z * w - yh * yl))
        n = <int>fn
        s[l] = (pc if n & 1 else ps) * (-1.0 if n & 2 else 1.0)
        c[l] = (ps if n & 1 else pc) * (-1.0 if (n + 1) & 2 else 1.0)
        far = far | (not fabs(x[l]) <= 524288.0)
    if far:
        for l in range(W):
            if not fabs(x[l]) <= 524288.0:
                s[l] = sin(x[l])
                c[l] = cos(x[l])


# --- spatial algebra, lane by lane ---------------------------------------------------------

cdef inline void dot6(clp a, clp b, lp out) noexcept nogil:
    # out = a · b
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = (a[l] * b[l] + a[W + l] * b[W + l] + a[2 * W + l] * b[2 * W + l]
                  + a[3 * W + l] * b[3 * W + l] + a[4 * W + l] * b[4 * W + l]
                  + a[5 * W + l] * b[5 * W + l])


cdef inline void axis_rotation_T(const double* a, clp s, clp c, lp E) noexcept nogil:
    # E = exp(ã θ)ᵀ = c 1 - s ã + (1 - c) a aᵀ   (Rodrigues; s = sin θ, c = cos θ per lane)
    cdef Py_ssize_t l
    cdef double t
    for l in range(W):
        t = 1.0 - c[l]
        E[l] = c[l] + t * a[0] * a[0]
        E[W + l] = t * a[0] * a[1] + s[l] * a[2]
        E[2 * W + l] = t * a[0] * a[2] - s[l] * a[1]
        E[3 * W + l] = t * a[0] * a[1] - s[l] * a[2]
        E[4 * W + l] = c[l] + t * a[1] * a[1]
        E[5 * W + l] = t * a[1] * a[2] + s[l] * a[0]
        E[6 * W + l] = t * a[0] * a[2] + s[l] * a[1]
        E[7 * W + l] = t * a[1] * a[2] - s[l] * a[0]
        E[8 * W + l] = c[l] + t * a[2] * a[2]


cdef inline void mat3_mul(clp A, clp B, lp C) noexcept nogil:
    # C = A B   (3×3 on every lane)
    cdef Py_ssize_t i, l
    for i in range(3):
        for l in range(W):
            C[3 * i * W + l] = (A[3 * i * W + l] * B[l] + A[(3 * i + 1) * W + l] * B[3 * W + l]
                                + A[(3 * i + 2) * W + l] * B[6 * W + l])
            C[(3 * i + 1) * W + l] = (A[3 * i * W + l] * B[W + l]
                                      + A[(3 * i + 1) * W + l] * B[4 * W + l]
                                      + A[(3 * i + 2) * W + l] * B[7 * W + l])
            C[(3 * i + 2) * W + l] = (A[3 * i * W + l] * B[2 * W + l]
                                      + A[(3 * i + 1) * W + l] * B[5 * W + l]
                                      + A[(3 * i + 2) * W + l] * B[8 * W + l])


cdef inline void quat_to_rot_T(clp quat, lp E) noexcept nogil:
    # E = R(quat / |quat|)ᵀ for the scalar-last quaternion (x, y, z, w) of each lane: the
    # formula of _spatial.pxd's quat_to_rot_T with its factor 2 replaced by s = 2 / |quat|²,
    # so that a quaternion within the tolerance of a unit one (rbd's check) needs no
    # normalized copy of q
    cdef Py_ssize_t l
    cdef double x, y, z, w, s
    for l in range(W):
        x = quat[l]
        y = quat[W + l]
        z = quat[2 * W + l]
        w = quat[3 * W + l]
        s = 2.0 / (x * x + y * y + z * z + w * w)
        E[l] = 1.0 - s * (y * y + z * z)
        E[W + l] = s * (x * y + z * w)
        E[2 * W + l] = s * (x * z - y * w)
        E[3 * W + l] = s * (x * y - z * w)
        E[4 * W + l] = 1.0 - s * (x * x + z * z)
        E[5 * W + l] = s * (y * z + x * w)
        E[6 * W + l] = s * (x * z + y * w)
        E[7 * W + l] = s * (y * z - x * w)
        E[8 * W + l] = 1.0 - s * (x * x + y * y)


cdef inline void plux_compose(clp E1, clp r1, const double* E2, const double* r2,
                              lp E, lp r) noexcept nogil:
    # plux(E1, r1) plux(E2, r2) = plux(E1 E2, r2 + E2ᵀ r1)   (X_2 the same on every lane)
    cdef Py_ssize_t i, l
    cdef double a0, a1, a2, b0, b1, b2, c0, c1, c2
    a0, a1, a2 = E2[0], E2[1], E2[2]
    b0, b1, b2 = E2[3], E2[4], E2[5]
    c0, c1, c2 = E2[6], E2[7], E2[8]
    for i in range(3):
        # row i of E1 E2 (written out: one lane loop, three stores)
        for l in range(W):
            E[3 * i * W + l] = (E1[3 * i * W + l] * a0 + E1[(3 * i + 1) * W + l] * b0
                                + E1[(3 * i + 2) * W + l] * c0)
            E[(3 * i + 1) * W + l] = (E1[3 * i * W + l] * a1 + E1[(3 * i + 1) * W + l] * b1
                                      + E1[(3 * i + 2) * W + l] * c1)
            E[(3 * i + 2) * W + l] = (E1[3 * i * W + l] * a2 + E1[(3 * i + 1) * W + l] * b2
                                      + E1[(3 * i + 2) * W + l] * c2)
    for l in range(W):
        r[l] = r2[0] + (a0 * r1[l] + b0 * r1[W + l] + c0 * r1[2 * W + l])
        r[W + l] = r2[1] + (a1 * r1[l] + b1 * r1[W + l] + c1 * r1[2 * W + l])
        r[2 * W + l] = r2[2] + (a2 * r1[l] + b2 * r1[W + l] + c2 * r1[2 * W + l])


cdef inline void xform_motion(clp E, clp r, clp m, lp out) noexcept nogil:
    # out = X m = [E ω; E (v - r × ω)]
    cdef Py_ssize_t l
    cdef double t0, t1, t2
    for l in range(W):
        t0 = m[3 * W + l] - (r[W + l] * m[2 * W + l] - r[2 * W + l] * m[W + l])
        t1 = m[4 * W + l] - (r[2 * W + l] * m[l] - r[l] * m[2 * W + l])
        t2 = m[5 * W + l] - (r[l] * m[W + l] - r[W + l] * m[l])
        out[l] = E[l] * m[l] + E[W + l] * m[W + l] + E[2 * W + l] * m[2 * W + l]
        out[W + l] = E[3 * W + l] * m[l] + E[4 * W + l] * m[W + l] + E[5 * W + l] * m[2 * W + l]
        out[2 * W + l] = (E[6 * W + l] * m[l] + E[7 * W + l] * m[W + l]
                          + E[8 * W + l] * m[2 * W + l])
        out[3 * W + l] = E[l] * t0 + E[W + l] * t1 + E[2 * W + l] * t2
        out[4 * W + l] = E[3 * W + l] * t0 + E[4 * W + l] * t1 + E[5 * W + l] * t2
        out[5 * W + l] = E[6 * W + l] * t0 + E[7 * W + l] * t1 + E[8 * W + l] * t2


cdef inline void xform_force_T_add(clp E, clp r, clp f, lp out) noexcept nogil:
    # out += Xᵀ f = [Eᵀ n + r × Eᵀ f; Eᵀ f]
    cdef Py_ssize_t l
    cdef double n0, n1, n2, f0, f1, f2
    for l in range(W):
        n0 = E[l] * f[l] + E[3 * W + l] * f[W + l] + E[6 * W + l] * f[2 * W + l]
        n1 = E[W + l] * f[l] + E[4 * W + l] * f[W + l] + E[7 * W + l] * f[2 * W + l]
        n2 = E[2 * W + l] * f[l] + E[5 * W + l] * f[W + l] + E[8 * W + l] * f[2 * W + l]
        f0 = E[l] * f[3 * W + l] + E[3 * W + l] * f[4 * W + l] + E[6 * W + l] * f[5 * W + l]
        f1 = E[W + l] * f[3 * W + l] + E[4 * W + l] * f[4 * W + l] + E[7 * W + l] * f[5 * W + l]
        f2 = E[2 * W + l] * f[3 * W + l] + E[5 * W + l] * f[4 * W + l] + E[8 * W + l] * f[5 * W + l]
        out[l] += n0 + (r[W + l] * f2 - r[2 * W + l] * f1)
        out[W + l] += n1 + (r[2 * W + l] * f0 - r[l] * f2)
        out[2 * W + l] += n2 + (r[l] * f1 - r[W + l] * f0)
        out[3 * W + l] += f0
        out[4 * W + l] += f1
        out[5 * W + l] += f2


cdef inline void crm_apply(clp v, clp m, lp out) noexcept nogil:
    # out = v × m = [ω × m_ω; ω × m_v + v_lin × m_ω]
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = v[W + l] * m[2 * W + l] - v[2 * W + l] * m[W + l]
        out[W + l] = v[2 * W + l] * m[l] - v[l] * m[2 * W + l]
        out[2 * W + l] = v[l] * m[W + l] - v[W + l] * m[l]
        out[3 * W + l] = (v[W + l] * m[5 * W + l] - v[2 * W + l] * m[4 * W + l]
                          + v[4 * W + l] * m[2 * W + l] - v[5 * W + l] * m[W + l])
        out[4 * W + l] = (v[2 * W + l] * m[3 * W + l] - v[l] * m[5 * W + l]
                          + v[5 * W + l] * m[l] - v[3 * W + l] * m[2 * W + l])
        out[5 * W + l] = (v[l] * m[4 * W + l] - v[W + l] * m[3 * W + l]
                          + v[3 * W + l] * m[W + l] - v[4 * W + l] * m[l])


cdef inline void crf_apply(clp v, clp f, lp out) noexcept nogil:
    # out = v ×* f = [ω × n + v_lin × f; ω × f]
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = (v[W + l] * f[2 * W + l] - v[2 * W + l] * f[W + l]
                  + v[4 * W + l] * f[5 * W + l] - v[5 * W + l] * f[4 * W + l])
        out[W + l] = (v[2 * W + l] * f[l] - v[l] * f[2 * W + l]
                      + v[5 * W + l] * f[3 * W + l] - v[3 * W + l] * f[5 * W + l])
        out[2 * W + l] = (v[l] * f[W + l] - v[W + l] * f[l]
                          + v[3 * W + l] * f[4 * W + l] - v[4 * W + l] * f[3 * W + l])
        out[3 * W + l] = v[W + l] * f[5 * W + l] - v[2 * W + l] * f[4 * W + l]
        out[4 * W + l] = v[2 * W + l] * f[3 * W + l] - v[l] * f[5 * W + l]
        out[5 * W + l] = v[l] * f[4 * W + l] - v[W + l] * f[3 * W + l]


cdef inline void rbi_apply(double m, const double* h, const double* Ibar, clp v,
                           lp out) noexcept nogil:
    # out = I v = [Ī ω + h × v_lin; m v_lin - h × ω]   (I the same on every lane)
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = (Ibar[0] * v[l] + Ibar[1] * v[W + l] + Ibar[2] * v[2 * W + l]
                  + (h[1] * v[5 * W + l] - h[2] * v[4 * W + l]))
        out[W + l] = (Ibar[3] * v[l] + Ibar[4] * v[W + l] + Ibar[5] * v[2 * W + l]
                      + (h[2] * v[3 * W + l] - h[0] * v[5 * W + l]))
        out[2 * W + l] = (Ibar[6] * v[l] + Ibar[7] * v[W + l] + Ibar[8] * v[2 * W + l]
                          + (h[0] * v[4 * W + l] - h[1] * v[3 * W + l]))
        out[3 * W + l] = m * v[3 * W + l] - (h[1] * v[2 * W + l] - h[2] * v[W + l])
        out[4 * W + l] = m * v[4 * W + l] - (h[2] * v[l] - h[0] * v[2 * W + l])
        out[5 * W + l] = m * v[5 * W + l] - (h[0] * v[W + l] - h[1] * v[l])


cdef inline Py_ssize_t sym(Py_ssize_t r, Py_ssize_t s) noexcept nogil:
    # the index of entry (r, s) of a symmetric 6×6 matrix kept in its lower triangle (the
    # articulated inertias of soa.pxi: only entries with column ≤ row are written and read)
    return 6 * r + s if s <= r else 6 * s + r


cdef inline void sym_row_dot(clp A, Py_ssize_t r, clp x, lp out) noexcept nogil:
    # out = (A x)_r, row r of A times x   (A 6×6 symmetric, its lower triangle read)
    cdef Py_ssize_t l
    cdef const double* a0 = A + sym(r, 0) * W
    cdef const double* a1 = A + sym(r, 1) * W
    cdef const double* a2 = A + sym(r, 2) * W
    cdef const double* a3 = A + sym(r, 3) * W
    cdef const double* a4 = A + sym(r, 4) * W
    cdef const double* a5 = A + sym(r, 5) * W
    for l in range(W):
        out[l] = (a0[l] * x[l] + a1[l] * x[W + l] + a2[l] * x[2 * W + l]
                  + a3[l] * x[3 * W + l] + a4[l] * x[4 * W + l] + a5[l] * x[5 * W + l])


cdef inline void sym6_vec(clp A, clp x, lp out) noexcept nogil:
    # out = A x   (A 6×6 symmetric, its lower triangle read; each row written out)
    cdef Py_ssize_t r
    for r in range(6):
        sym_row_dot(A, r, x, out + r * W)


cdef inline void axpy6(clp s, clp x, lp out) noexcept nogil:
    # out += s x   (a 6-vector s times a scalar x, per lane)
    cdef Py_ssize_t k, l
    for k in range(6):
        for l in range(W):
            out[k * W + l] += s[k * W + l] * x[l]


cdef inline void add_lanes(clp x, Py_ssize_t n, lp out) noexcept nogil:
    # out += x   (n components)
    cdef Py_ssize_t k
    for k in range(n * W):
        out[k] += x[k]


cdef inline void broadcast_lower(const double* x, lp out) noexcept nogil:
    # out[k W + l] = x[k] for the entries k = 6 r + s, s ≤ r, of a symmetric 6×6 x
    cdef Py_ssize_t r, s, l
    cdef double t
    for r in range(6):
        for s in range(r + 1):
            t = x[6 * r + s]
            for l in range(W):
                out[(6 * r + s) * W + l] = t


cdef inline void broadcast(const double* x, Py_ssize_t n, lp out) noexcept nogil:
    # out[k W + l] = x[k], k < n: the same value on every lane
    cdef Py_ssize_t k, l
    cdef double t
    for k in range(n):
        t = x[k]
        for l in range(W):
            out[k * W + l] = t


cdef inline Py_ssize_t block_entry(Py_ssize_t b, Py_ssize_t i, Py_ssize_t k) noexcept nogil:
    # where entry (i, k) of the block A (b = 0), B (b = 1) or C (b = 2) of a symmetric
    # I = [[A, B], [Bᵀ, C]] is kept in I's lower triangle
    if b == 0:
        return sym(i, k)
    if b == 1:
        return 6 * (3 + k) + i
    return sym(3 + i, 3 + k)


cdef inline void rotate_block(clp I, Py_ssize_t b, clp E, lp T, lp out) noexcept nogil:
    # out = Eᵀ I_b E for the block I_b = A (b = 0), B (b = 1) or C (b = 2) of a symmetric I
    # kept in its lower triangle (block_entry); T: 9 W of scratch
    cdef Py_ssize_t i, j, l
    cdef const double* e0
    cdef const double* e1
    cdef const double* e2
    for i in range(3):
        e0 = I + block_entry(b, i, 0) * W
        e1 = I + block_entry(b, i, 1) * W
        e2 = I + block_entry(b, i, 2) * W
        for j in range(3):
            for l in range(W):
                # T = I_b E
                T[(3 * i + j) * W + l] = (e0[l] * E[j * W + l] + e1[l] * E[(3 + j) * W + l]
                                          + e2[l] * E[(6 + j) * W + l])
    for i in range(3):
        for j in range(3):
            for l in range(W):
                # out = Eᵀ T
                out[(3 * i + j) * W + l] = (
                    E[i * W + l] * T[j * W + l] + E[(3 + i) * W + l] * T[(3 + j) * W + l]
                    + E[(6 + i) * W + l] * T[(6 + j) * W + l])


cdef inline void cross_columns(clp r, clp C, lp G) noexcept nogil:
    # G = r̃ C  (column j: r × C[:, j])
    cdef Py_ssize_t j, l
    for j in range(3):
        for l in range(W):
            G[j * W + l] = r[W + l] * C[(6 + j) * W + l] - r[2 * W + l] * C[(3 + j) * W + l]
            G[(3 + j) * W + l] = r[2 * W + l] * C[j * W + l] - r[l] * C[(6 + j) * W + l]
            G[(6 + j) * W + l] = r[l] * C[(3 + j) * W + l] - r[W + l] * C[j * W + l]


cdef inline void congruence_add(clp E, clp r, clp I, lp out) noexcept nogil:
    # out += Xᵀ I X for X = plux(E, r) and a symmetric I = [[A, B], [Bᵀ, C]]:
    #   rotate:    A' = Eᵀ A E,  B' = Eᵀ B E,  C' = Eᵀ C E
    #   translate: B'' = B' + r̃ C',  A'' = A' + r̃ B'ᵀ + (r̃ B'ᵀ)ᵀ - r̃ C' r̃
    # I and out are kept in their lower triangles (sym): A, Bᵀ, C are read there and
    # A'', B''ᵀ, C'' written there
    cdef double T[9 * W]
    cdef double P[27 * W]         # A', B', C'
    cdef double G[9 * W]
    cdef double K[9 * W]
    cdef Py_ssize_t b, i, j, l
    cdef const double* Ap = P
    cdef const double* Bp = P + 9 * W
    cdef const double* Cp = P + 18 * W
    for b in range(3):
        # P_b = Eᵀ I_b E for A (b = 0), B (b = 1: entry (i, k) is I's (3 + k, i)), C (b = 2)
        rotate_block(I, b, E, T, P + 9 * W * b)
    # G = r̃ C'
    cross_columns(r, Cp, G)
    for j in range(3):
        for l in range(W):
            # K = r̃ B'ᵀ  (column j: r × B'[j, :])
            K[j * W + l] = (r[W + l] * Bp[(3 * j + 2) * W + l]
                            - r[2 * W + l] * Bp[(3 * j + 1) * W + l])
            K[(3 + j) * W + l] = r[2 * W + l] * Bp[3 * j * W + l] - r[l] * Bp[(3 * j + 2) * W + l]
            K[(6 + j) * W + l] = r[l] * Bp[(3 * j + 1) * W + l] - r[W + l] * Bp[3 * j * W + l]
    for i in range(3):
        for l in range(W):
            # T = G r̃ = r̃ C' r̃  (row i: G[i, :] × r)
            T[3 * i * W + l] = G[(3 * i + 1) * W + l] * r[2 * W + l] - G[(3 * i + 2) * W + l] * r[W + l]
            T[(3 * i + 1) * W + l] = G[(3 * i + 2) * W + l] * r[l] - G[3 * i * W + l] * r[2 * W + l]
            T[(3 * i + 2) * W + l] = G[3 * i * W + l] * r[W + l] - G[(3 * i + 1) * W + l] * r[l]
    # A'' = A' + K + Kᵀ - G r̃;  B'' = B' + G;  C'' = C'  (one store per lane loop: the
    # compiler then needs no run-time check that the blocks of out do not overlap)
    for i in range(3):
        for j in range(i + 1):
            for l in range(W):
                out[(6 * i + j) * W + l] += (Ap[(3 * i + j) * W + l] + K[(3 * i + j) * W + l]
                                             + K[(3 * j + i) * W + l] - T[(3 * i + j) * W + l])
    for i in range(3):
        for j in range(3):
            for l in range(W):
                out[(6 * (3 + j) + i) * W + l] += Bp[(3 * i + j) * W + l] + G[(3 * i + j) * W + l]
    for i in range(3):
        for j in range(i + 1):
            for l in range(W):
                out[(6 * (3 + i) + 3 + j) * W + l] += Cp[(3 * i + j) * W + l]


cdef inline void congruence_add_corner(clp E, clp r, clp I, lp out) noexcept nogil:
    # out += Xᵀ I X for X = plux(E, r) and a symmetric I = [[0, 0], [0, C]] (only the
    # lower-right block C of I read): congruence_add with A = B = 0, so
    #   C' = Eᵀ C E,  G = r̃ C':  A'' = -G r̃,  B'' = G,  C'' = C'
    # (I and out in their lower triangles, as congruence_add)
    cdef double T[9 * W]
    cdef double Cp[9 * W]
    cdef double G[9 * W]
    cdef Py_ssize_t i, j, l
    cdef const double* e0
    cdef const double* e1
    cdef const double* e2
    cdef const double* e3
    # C' = Eᵀ C E;  G = r̃ C'
    rotate_block(I, 2, E, T, Cp)
    cross_columns(r, Cp, G)
    for i in range(3):
        for j in range(i + 1):
            # A'' = -G r̃, its lower triangle: (G r̃)_ij = G_i,j+1 r_j+2 - G_i,j+2 r_j+1
            # (indices mod 3)
            e0 = G + (3 * i + (j + 1) % 3) * W
            e1 = G + (3 * i + (j + 2) % 3) * W
            e2 = r + ((j + 2) % 3) * W
            e3 = r + ((j + 1) % 3) * W
            for l in range(W):
                out[(6 * i + j) * W + l] -= e0[l] * e2[l] - e1[l] * e3[l]
    for i in range(3):
        for j in range(3):
            for l in range(W):
                out[(6 * (3 + j) + i) * W + l] += G[(3 * i + j) * W + l]
    for i in range(3):
        for j in range(i + 1):
            for l in range(W):
                out[(6 * (3 + i) + 3 + j) * W + l] += Cp[(3 * i + j) * W + l]


# --- small dense solves ---------------------------------------------------------------------

cdef inline int spd_inverse3(clp D, lp Dinv) noexcept nogil:
    # Dinv = D⁻¹ = adj(D) / det(D) on every lane for a symmetric 3×3 block (leading
    # dimension 6, its lower triangle read), branch-free; returns 1 when D is not positive
    # definite on some lane (a leading minor D₀₀, D₀₀D₁₁ - D₁₀², det D not > 0: Sylvester)
    cdef Py_ssize_t l
    cdef double d00, d10, d11, d20, d21, d22, c00, c10, c11, c20, c21, c22, det, inv
    cdef int bad = 0
    for l in range(W):
        d00 = D[l]
        d10 = D[6 * W + l]
        d11 = D[7 * W + l]
        d20 = D[12 * W + l]
        d21 = D[13 * W + l]
        d22 = D[14 * W + l]
        c00 = d11 * d22 - d21 * d21
        c10 = d20 * d21 - d10 * d22
        c20 = d10 * d21 - d20 * d11
        c11 = d00 * d22 - d20 * d20
        c21 = d10 * d20 - d00 * d21
        c22 = d00 * d11 - d10 * d10
        det = d00 * c00 + d10 * c10 + d20 * c20
        inv = 1.0 / det
        Dinv[l] = c00 * inv
        Dinv[W + l] = c10 * inv
        Dinv[2 * W + l] = c20 * inv
        Dinv[6 * W + l] = c10 * inv
        Dinv[7 * W + l] = c11 * inv
        Dinv[8 * W + l] = c21 * inv
        Dinv[12 * W + l] = c20 * inv
        Dinv[13 * W + l] = c21 * inv
        Dinv[14 * W + l] = c22 * inv
        bad = bad | (not (d00 > 0.0 and c22 > 0.0 and det > 0.0))
    return bad


cdef inline int cholesky(clp D, Py_ssize_t n, lp L) noexcept nogil:
    # D = L Lᵀ on every lane for a symmetric positive-definite n×n block (n ≤ 6, leading
    # dimension 6, its lower triangle read); L is written below the diagonal and its
    # diagonal as 1 / L_jj (the divisions done once, for the solves).  Returns 0, or 1
    # when D is not positive definite on some lane.
    cdef double t[W]
    cdef Py_ssize_t i, j, k, l
    cdef int bad = 0
    for j in range(n):
        # L_jj = sqrt(D_jj - Σ_k L_jk²)
        for l in range(W):
            t[l] = D[7 * j * W + l]
        for k in range(j):
            for l in range(W):
                t[l] -= L[(6 * j + k) * W + l] * L[(6 * j + k) * W + l]
        for l in range(W):
            if not t[l] > 0.0:
                bad = 1
        if bad:
            return 1
        for l in range(W):
            L[7 * j * W + l] = 1.0 / sqrt(t[l])
        for i in range(j + 1, n):
            # L_ij = (D_ij - Σ_k L_ik L_jk) / L_jj
            for l in range(W):
                t[l] = D[(6 * i + j) * W + l]
            for k in range(j):
                for l in range(W):
                    t[l] -= L[(6 * i + k) * W + l] * L[(6 * j + k) * W + l]
            for l in range(W):
                L[(6 * i + j) * W + l] = t[l] * L[7 * j * W + l]
    return 0


cdef inline void cholesky_solve(clp L, Py_ssize_t n, clp b, lp x) noexcept nogil:
    # x = D⁻¹ b on every lane for D = L Lᵀ (``cholesky``'s factor): L y = b, then Lᵀ x = y
    cdef Py_ssize_t i, k, l
    cdef double t[W]
    for i in range(n):
        # y_i = (b_i - Σ_k<i L_ik y_k) / L_ii
        for l in range(W):
            t[l] = b[i * W + l]
        for k in range(i):
            for l in range(W):
                t[l] -= L[(6 * i + k) * W + l] * x[k * W + l]
        for l in range(W):
            x[i * W + l] = t[l] * L[7 * i * W + l]
    for i in range(n - 1, -1, -1):
        # x_i = (y_i - Σ_k>i L_ki x_k) / L_ii
        for l in range(W):
            t[l] = x[i * W + l]
        for k in range(i + 1, n):
            for l in range(W):
                t[l] -= L[(6 * k + i) * W + l] * x[k * W + l]
        for l in range(W):
            x[i * W + l] = t[l] * L[7 * i * W + l]


cdef inline int spd_inverse(clp D, Py_ssize_t n, lp Dinv) noexcept nogil:
    # Dinv = D⁻¹ on every lane for a symmetric positive-definite n×n block (n ≤ 6, leading
    # dimension 6), by ``cholesky`` D = L Lᵀ then D⁻¹ = L⁻ᵀ L⁻¹.  Returns 0, or 1 when D is
    # not positive definite on some lane.
    cdef double L[36 * W]
    cdef double Li[36 * W]
    cdef double t[W]
    cdef Py_ssize_t i, j, k, l
    if cholesky(D, n, L):
        return 1
    for j in range(n):
        for i in range(j, n):
            # Li = L⁻¹ by forward substitution, column j
            for l in range(W):
                t[l] = 1.0 if i == j else 0.0
            for k in range(j, i):
                for l in range(W):
                    t[l] -= L[(6 * i + k) * W + l] * Li[(6 * k + j) * W + l]
            for l in range(W):
                Li[(6 * i + j) * W + l] = t[l] * L[7 * i * W + l]
    for i in range(n):
        for j in range(i, n):
            # D⁻¹_ij = Σ_k Li_ki Li_kj
            for l in range(W):
                t[l] = 0.0
            for k in range(j, n):
                for l in range(W):
                    t[l] += Li[(6 * k + i) * W + l] * Li[(6 * k + j) * W + l]
            for l in range(W):
                Dinv[(6 * i + j) * W + l] = t[l]
                Dinv[(6 * j + i) * W + l] = t[l]
    return 0
