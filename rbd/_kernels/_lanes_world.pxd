# cython: language_level=3
"""World coordinates and per-lane inertias on W states at once (the lane derivatives).

The part of the lane algebra only ``soa_derivatives.pxi`` uses: motions and forces
carried to the root frame, dot products of 3-vectors, and rigid-body inertias that
differ from lane to lane (a composite inertia in world coordinates).  Same storage
as ``_lanes.pxd`` (``[component][W]``, state index innermost), whose lane pointers
and block width it takes.
"""

from rbd._kernels._lanes cimport W, clp, lp


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
