# cython: language_level=3
"""Spatial algebra on W states at once: the lanes of the structure-of-arrays kernels.

The lane twin of ``_spatial.pxd``, used by ``soa.pxi`` (batched RNEA and ABA) and
``soa_derivatives.pxi`` (their analytical derivatives).
A quantity of ``n`` components over a block of ``W`` states is stored
component-major, the state index innermost: component ``k`` of lane ``l`` is
``x[k * W + l]`` (a 6-vector is ``double[6 * W]``, a 3×3 matrix ``double[9 * W]``,
a 6×6 matrix ``double[36 * W]``).  Each helper carries the name and formula of
the ``_spatial.pxd`` helper it renders; its innermost loops run over the lanes
with straight-line bodies, which the C compiler vectorizes (2, 4 or 8 doubles an
instruction with SSE2, AVX2 or AVX-512; check with ``-fopt-info-vec``).  The
pointers are ``restrict`` (``lp``, ``clp``): outputs never alias inputs.
"""

from libc.math cimport sqrt

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


cdef inline void quat_to_rot_T(clp quat, lp E) noexcept nogil:
    # E = R(quat)ᵀ for the scalar-last quaternion (x, y, z, w) of each lane
    cdef Py_ssize_t l
    cdef double x, y, z, w
    for l in range(W):
        x = quat[l]
        y = quat[W + l]
        z = quat[2 * W + l]
        w = quat[3 * W + l]
        E[l] = 1.0 - 2.0 * (y * y + z * z)
        E[W + l] = 2.0 * (x * y + z * w)
        E[2 * W + l] = 2.0 * (x * z - y * w)
        E[3 * W + l] = 2.0 * (x * y - z * w)
        E[4 * W + l] = 1.0 - 2.0 * (x * x + z * z)
        E[5 * W + l] = 2.0 * (y * z + x * w)
        E[6 * W + l] = 2.0 * (x * z + y * w)
        E[7 * W + l] = 2.0 * (y * z - x * w)
        E[8 * W + l] = 1.0 - 2.0 * (x * x + y * y)


cdef inline void plux_compose(clp E1, clp r1, const double* E2, const double* r2,
                              lp E, lp r) noexcept nogil:
    # plux(E1, r1) plux(E2, r2) = plux(E1 E2, r2 + E2ᵀ r1)   (X_2 the same on every lane)
    cdef Py_ssize_t i, j, l
    for i in range(3):
        for j in range(3):
            for l in range(W):
                E[(3 * i + j) * W + l] = (E1[3 * i * W + l] * E2[j] + E1[(3 * i + 1) * W + l]
                                          * E2[3 + j] + E1[(3 * i + 2) * W + l] * E2[6 + j])
        for l in range(W):
            r[i * W + l] = r2[i] + (E2[i] * r1[l] + E2[3 + i] * r1[W + l]
                                    + E2[6 + i] * r1[2 * W + l])


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
    # out += Xᵀ I X for X = plux(E, r) and a symmetric I = [[A, B], [Bᵀ, C]]:
    #   rotate:    A' = Eᵀ A E,  B' = Eᵀ B E,  C' = Eᵀ C E
    #   translate: B'' = B' + r̃ C',  A'' = A' + r̃ B'ᵀ + (r̃ B'ᵀ)ᵀ - r̃ C' r̃
    cdef double T[9 * W]
    cdef double P[27 * W]         # A', B', C'
    cdef double G[9 * W]
    cdef double K[9 * W]
    cdef Py_ssize_t b, o, i, j, l
    cdef const double* Ap = P
    cdef const double* Bp = P + 9 * W
    cdef const double* Cp = P + 18 * W
    for b in range(3):
        # the block at row/column offset o (A: 0, B: 3, C: 21) of I;  T = block E
        o = 0 if b == 0 else (3 if b == 1 else 21)
        for i in range(3):
            for j in range(3):
                for l in range(W):
                    T[(3 * i + j) * W + l] = (I[(o + 6 * i) * W + l] * E[j * W + l]
                                              + I[(o + 6 * i + 1) * W + l] * E[(3 + j) * W + l]
                                              + I[(o + 6 * i + 2) * W + l] * E[(6 + j) * W + l])
        # P_b = Eᵀ T
        for i in range(3):
            for j in range(3):
                for l in range(W):
                    P[(9 * b + 3 * i + j) * W + l] = (
                        E[i * W + l] * T[j * W + l] + E[(3 + i) * W + l] * T[(3 + j) * W + l]
                        + E[(6 + i) * W + l] * T[(6 + j) * W + l])
    for j in range(3):
        for l in range(W):
            # G = r̃ C'  (column j: r × C'[:, j]);  K = r̃ B'ᵀ  (column j: r × B'[j, :])
            G[j * W + l] = r[W + l] * Cp[(6 + j) * W + l] - r[2 * W + l] * Cp[(3 + j) * W + l]
            G[(3 + j) * W + l] = r[2 * W + l] * Cp[j * W + l] - r[l] * Cp[(6 + j) * W + l]
            G[(6 + j) * W + l] = r[l] * Cp[(3 + j) * W + l] - r[W + l] * Cp[j * W + l]
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
    for i in range(3):
        for j in range(3):
            for l in range(W):
                # A'' = A' + K + Kᵀ - G r̃;  B'' = B' + G;  C'' = C'
                out[(6 * i + j) * W + l] += (Ap[(3 * i + j) * W + l] + K[(3 * i + j) * W + l]
                                             + K[(3 * j + i) * W + l] - T[(3 * i + j) * W + l])
                out[(6 * i + 3 + j) * W + l] += Bp[(3 * i + j) * W + l] + G[(3 * i + j) * W + l]
                out[(6 * (3 + j) + i) * W + l] += Bp[(3 * i + j) * W + l] + G[(3 * i + j) * W + l]
                out[(6 * (3 + i) + 3 + j) * W + l] += Cp[(3 * i + j) * W + l]


# --- world coordinates and per-lane inertias (the derivatives, soa_derivatives.pxi) ---------

cdef inline void dot3(clp a, clp b, lp out) noexcept nogil:
    # out = a · b   (3-vectors)
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = a[l] * b[l] + a[W + l] * b[W + l] + a[2 * W + l] * b[2 * W + l]


cdef inline void motion_to_root(clp R, clp p, clp m, lp out) noexcept nogil:
    # out = X_0,i⁻¹ m = [R ω; R v + p × R ω]   (R, p: the pose of body i, each lane its own)
    cdef Py_ssize_t l
    cdef double w0, w1, w2
    for l in range(W):
        w0 = R[l] * m[l] + R[W + l] * m[W + l] + R[2 * W + l] * m[2 * W + l]
        w1 = R[3 * W + l] * m[l] + R[4 * W + l] * m[W + l] + R[5 * W + l] * m[2 * W + l]
        w2 = R[6 * W + l] * m[l] + R[7 * W + l] * m[W + l] + R[8 * W + l] * m[2 * W + l]
        out[l] = w0
        out[W + l] = w1
        out[2 * W + l] = w2
        out[3 * W + l] = (R[l] * m[3 * W + l] + R[W + l] * m[4 * W + l]
                          + R[2 * W + l] * m[5 * W + l]) + (p[W + l] * w2 - p[2 * W + l] * w1)
        out[4 * W + l] = (R[3 * W + l] * m[3 * W + l] + R[4 * W + l] * m[4 * W + l]
                          + R[5 * W + l] * m[5 * W + l]) + (p[2 * W + l] * w0 - p[l] * w2)
        out[5 * W + l] = (R[6 * W + l] * m[3 * W + l] + R[7 * W + l] * m[4 * W + l]
                          + R[8 * W + l] * m[5 * W + l]) + (p[l] * w1 - p[W + l] * w0)


cdef inline void force_to_root(clp R, clp p, clp f, lp out) noexcept nogil:
    # out = X_0,iᵀ f = [R n + p × R f; R f]
    cdef Py_ssize_t l
    cdef double f0, f1, f2
    for l in range(W):
        f0 = R[l] * f[3 * W + l] + R[W + l] * f[4 * W + l] + R[2 * W + l] * f[5 * W + l]
        f1 = R[3 * W + l] * f[3 * W + l] + R[4 * W + l] * f[4 * W + l] + R[5 * W + l] * f[5 * W + l]
        f2 = R[6 * W + l] * f[3 * W + l] + R[7 * W + l] * f[4 * W + l] + R[8 * W + l] * f[5 * W + l]
        out[3 * W + l] = f0
        out[4 * W + l] = f1
        out[5 * W + l] = f2
        out[l] = (R[l] * f[l] + R[W + l] * f[W + l] + R[2 * W + l] * f[2 * W + l]
                  + (p[W + l] * f2 - p[2 * W + l] * f1))
        out[W + l] = (R[3 * W + l] * f[l] + R[4 * W + l] * f[W + l] + R[5 * W + l] * f[2 * W + l]
                      + (p[2 * W + l] * f0 - p[l] * f2))
        out[2 * W + l] = (R[6 * W + l] * f[l] + R[7 * W + l] * f[W + l]
                          + R[8 * W + l] * f[2 * W + l] + (p[l] * f1 - p[W + l] * f0))


cdef inline void rbi_apply_each(double m, clp h, clp Ibar, clp v, lp out) noexcept nogil:
    # out = I v = [Ī ω + h × v_lin; m v_lin - h × ω]   (h, Ī its own on each lane)
    cdef Py_ssize_t l
    for l in range(W):
        out[l] = (Ibar[l] * v[l] + Ibar[W + l] * v[W + l] + Ibar[2 * W + l] * v[2 * W + l]
                  + (h[W + l] * v[5 * W + l] - h[2 * W + l] * v[4 * W + l]))
        out[W + l] = (Ibar[3 * W + l] * v[l] + Ibar[4 * W + l] * v[W + l]
                      + Ibar[5 * W + l] * v[2 * W + l]
                      + (h[2 * W + l] * v[3 * W + l] - h[l] * v[5 * W + l]))
        out[2 * W + l] = (Ibar[6 * W + l] * v[l] + Ibar[7 * W + l] * v[W + l]
                          + Ibar[8 * W + l] * v[2 * W + l]
                          + (h[l] * v[4 * W + l] - h[W + l] * v[3 * W + l]))
        out[3 * W + l] = m * v[3 * W + l] - (h[W + l] * v[2 * W + l] - h[2 * W + l] * v[W + l])
        out[4 * W + l] = m * v[4 * W + l] - (h[2 * W + l] * v[l] - h[l] * v[2 * W + l])
        out[5 * W + l] = m * v[5 * W + l] - (h[l] * v[W + l] - h[W + l] * v[l])


cdef inline void rbi_congruence_add(clp E, clp r, double m, const double* h,
                                    const double* Ibar, lp h_out, lp Ibar_out) noexcept nogil:
    # (h', Ī') += Xᵀ (m, h, Ī) X for a rigid-body inertia the same on every lane and
    # X = plux(E, r) of each lane (m' = m: the caller adds it once); with y = Eᵀ h:
    #   h' = y + m r,  Ī' = Eᵀ Ī E - (y rᵀ + r yᵀ) + 2 (r·y) 1 - m (r rᵀ - (r·r) 1)
    cdef double y[3 * W]
    cdef double T[9 * W]
    cdef double d[W]
    cdef Py_ssize_t i, j, l
    for i in range(3):
        for l in range(W):
            y[i * W + l] = (E[i * W + l] * h[0] + E[(3 + i) * W + l] * h[1]
                            + E[(6 + i) * W + l] * h[2])
    for i in range(3):
        for j in range(3):
            for l in range(W):
                # T = Ī E
                T[(3 * i + j) * W + l] = (Ibar[3 * i] * E[j * W + l]
                                          + Ibar[3 * i + 1] * E[(3 + j) * W + l]
                                          + Ibar[3 * i + 2] * E[(6 + j) * W + l])
    for l in range(W):
        # d = 2 (r·y) + m (r·r)
        d[l] = (2.0 * (r[l] * y[l] + r[W + l] * y[W + l] + r[2 * W + l] * y[2 * W + l])
                + m * (r[l] * r[l] + r[W + l] * r[W + l] + r[2 * W + l] * r[2 * W + l]))
    for i in range(3):
        for l in range(W):
            h_out[i * W + l] += y[i * W + l] + m * r[i * W + l]
        for j in range(3):
            for l in range(W):
                Ibar_out[(3 * i + j) * W + l] += (
                    E[i * W + l] * T[j * W + l] + E[(3 + i) * W + l] * T[(3 + j) * W + l]
                    + E[(6 + i) * W + l] * T[(6 + j) * W + l]
                    - y[i * W + l] * r[j * W + l] - r[i * W + l] * y[j * W + l]
                    - m * r[i * W + l] * r[j * W + l])
        for l in range(W):
            Ibar_out[4 * i * W + l] += d[l]


# --- small dense solves ---------------------------------------------------------------------

cdef inline int spd_inverse(clp D, Py_ssize_t n, lp Dinv) noexcept nogil:
    # Dinv = D⁻¹ on every lane for a symmetric positive-definite n×n block (n ≤ 6, leading
    # dimension 6), by Cholesky D = L Lᵀ then D⁻¹ = L⁻ᵀ L⁻¹.  Returns 0, or 1 when D is
    # not positive definite on some lane.
    cdef double L[36 * W]
    cdef double Li[36 * W]
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
            L[7 * j * W + l] = sqrt(t[l])
        for i in range(j + 1, n):
            # L_ij = (D_ij - Σ_k L_ik L_jk) / L_jj
            for l in range(W):
                t[l] = D[(6 * i + j) * W + l]
            for k in range(j):
                for l in range(W):
                    t[l] -= L[(6 * i + k) * W + l] * L[(6 * j + k) * W + l]
            for l in range(W):
                L[(6 * i + j) * W + l] = t[l] / L[7 * j * W + l]
    for j in range(n):
        for i in range(j, n):
            # Li = L⁻¹ by forward substitution, column j
            for l in range(W):
                t[l] = 1.0 if i == j else 0.0
            for k in range(j, i):
                for l in range(W):
                    t[l] -= L[(6 * i + k) * W + l] * Li[(6 * k + j) * W + l]
            for l in range(W):
                Li[(6 * i + j) * W + l] = t[l] / L[7 * i * W + l]
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
