# cython: language_level=3
"""Inline spatial algebra for the kernels: the compiled twin of ``rbd/spatial.py``.

Storage conventions (shared by every kernel):

* a 3-vector is ``double[3]``; a 3×3 matrix is ``double[9]``, row-major;
* a spatial vector is ``double[6]`` = ``[angular; linear]`` (motion ``[ω; v]``,
  force ``[n; f]``);
* a Plücker motion transform ``X = plux(E, r)`` is held as its rotation ``E``
  (3×3) and translation ``r`` (3): ``X = [[E, 0], [-E r̃, E]]``;
* a 6×6 matrix (spatial or articulated inertia) is ``double[36]``, row-major;
* a rigid-body inertia about the body origin is also held compactly as
  ``(m, h, Ī)`` with ``h = m c`` and ``Ī = I_c + m c̃ c̃ᵀ``, so
  ``I = [[Ī, h̃], [h̃ᵀ, m 1]]``.

Output arguments never alias inputs unless a helper says so.  A helper that
renders a function of ``spatial.py`` carries its name (``so3_exp``, ``se3_exp``,
``quat_multiply``, ``quat_normalize``, ``quat_integrate``, ``rot_to_quat``) and
its formula; the ``_T`` helpers return the transpose ``E = Rᵀ`` that a Plücker
transform holds.
"""

from libc.math cimport cos, sin, sqrt


# --- 3-vectors and 3×3 matrices -------------------------------------------------------

cdef inline double dot3(const double* a, const double* b) noexcept nogil:
    # a · b
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline double dot6(const double* a, const double* b) noexcept nogil:
    # a · b  (a spatial motion paired with a spatial force gives power)
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


cdef inline void cross3(const double* a, const double* b, double* out) noexcept nogil:
    # out = a × b
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


cdef inline void cross3_add(const double* a, const double* b, double* out) noexcept nogil:
    # out += a × b
    out[0] += a[1] * b[2] - a[2] * b[1]
    out[1] += a[2] * b[0] - a[0] * b[2]
    out[2] += a[0] * b[1] - a[1] * b[0]


cdef inline void mat3_vec(const double* E, const double* x, double* out) noexcept nogil:
    # out = E x
    out[0] = E[0] * x[0] + E[1] * x[1] + E[2] * x[2]
    out[1] = E[3] * x[0] + E[4] * x[1] + E[5] * x[2]
    out[2] = E[6] * x[0] + E[7] * x[1] + E[8] * x[2]


cdef inline void mat3T_vec(const double* E, const double* x, double* out) noexcept nogil:
    # out = Eᵀ x
    out[0] = E[0] * x[0] + E[3] * x[1] + E[6] * x[2]
    out[1] = E[1] * x[0] + E[4] * x[1] + E[7] * x[2]
    out[2] = E[2] * x[0] + E[5] * x[1] + E[8] * x[2]


cdef inline void mat3_mul(const double* A, const double* B, double* out) noexcept nogil:
    # out = A B
    cdef int i, j
    for i in range(3):
        for j in range(3):
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j]


cdef inline void mat3_mulT(const double* A, const double* B, double* out) noexcept nogil:
    # out = A Bᵀ
    cdef int i, j
    for i in range(3):
        for j in range(3):
            out[3 * i + j] = (A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1]
                              + A[3 * i + 2] * B[3 * j + 2])


cdef inline void mat3T_mul(const double* A, const double* B, double* out) noexcept nogil:
    # out = Aᵀ B
    cdef int i, j
    for i in range(3):
        for j in range(3):
            out[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j]


cdef inline void set_identity3(double* E) noexcept nogil:
    # E = 1
    E[0] = 1.0; E[1] = 0.0; E[2] = 0.0
    E[3] = 0.0; E[4] = 1.0; E[5] = 0.0
    E[6] = 0.0; E[7] = 0.0; E[8] = 1.0


cdef inline void skew_sq3(const double* w, double* out) noexcept nogil:
    # out = w̃ w̃ = w wᵀ - (w·w) 1
    cdef double ww = dot3(w, w)
    out[0] = w[0] * w[0] - ww; out[1] = w[0] * w[1];      out[2] = w[0] * w[2]
    out[3] = w[1] * w[0];      out[4] = w[1] * w[1] - ww; out[5] = w[1] * w[2]
    out[6] = w[2] * w[0];      out[7] = w[2] * w[1];      out[8] = w[2] * w[2] - ww


cdef inline void axis_rotation_T(const double* a, double theta, double s, double c,
                                 double* E) noexcept nogil:
    # E = exp(ã θ)ᵀ = c 1 - s ã + (1 - c) a aᵀ   (Rodrigues; s = sin θ, c = cos θ)
    cdef double t = 1.0 - c
    E[0] = c + t * a[0] * a[0]
    E[1] = t * a[0] * a[1] + s * a[2]
    E[2] = t * a[0] * a[2] - s * a[1]
    E[3] = t * a[0] * a[1] - s * a[2]
    E[4] = c + t * a[1] * a[1]
    E[5] = t * a[1] * a[2] + s * a[0]
    E[6] = t * a[0] * a[2] + s * a[1]
    E[7] = t * a[1] * a[2] - s * a[0]
    E[8] = c + t * a[2] * a[2]


cdef inline void quat_to_rot_T(const double* quat, double* E) noexcept nogil:
    # E = R(quat)ᵀ for the scalar-last quaternion (x, y, z, w)   (spatial.quat_to_rot)
    cdef double x = quat[0], y = quat[1], z = quat[2], w = quat[3]
    E[0] = 1.0 - 2.0 * (y * y + z * z)
    E[1] = 2.0 * (x * y + z * w)
    E[2] = 2.0 * (x * z - y * w)
    E[3] = 2.0 * (x * y - z * w)
    E[4] = 1.0 - 2.0 * (x * x + z * z)
    E[5] = 2.0 * (y * z + x * w)
    E[6] = 2.0 * (x * z + y * w)
    E[7] = 2.0 * (y * z - x * w)
    E[8] = 1.0 - 2.0 * (x * x + y * y)


# --- Plücker transforms -------------------------------------------------------------

cdef inline void plux_compose(const double* E1, const double* r1, const double* E2,
                              const double* r2, double* E, double* r) noexcept nogil:
    # plux(E1, r1) plux(E2, r2) = plux(E1 E2, r2 + E2ᵀ r1)
    mat3_mul(E1, E2, E)
    mat3T_vec(E2, r1, r)
    r[0] += r2[0]
    r[1] += r2[1]
    r[2] += r2[2]


cdef inline void xform_motion(const double* E, const double* r, const double* m,
                              double* out) noexcept nogil:
    # out = X m = [E ω; E (v - r × ω)]
    cdef double t[3]
    t[0] = m[3] - (r[1] * m[2] - r[2] * m[1])
    t[1] = m[4] - (r[2] * m[0] - r[0] * m[2])
    t[2] = m[5] - (r[0] * m[1] - r[1] * m[0])
    mat3_vec(E, m, out)
    mat3_vec(E, t, out + 3)


cdef inline void xform_motion_inv(const double* E, const double* r, const double* m,
                                  double* out) noexcept nogil:
    # out = X⁻¹ m = [Eᵀ ω; Eᵀ v + r × Eᵀ ω]
    mat3T_vec(E, m, out)
    mat3T_vec(E, m + 3, out + 3)
    cross3_add(r, out, out + 3)


cdef inline void xform_force_T(const double* E, const double* r, const double* f,
                               double* out) noexcept nogil:
    # out = Xᵀ f = [Eᵀ n + r × Eᵀ f; Eᵀ f]   (a child's force in parent coordinates)
    mat3T_vec(E, f, out)
    mat3T_vec(E, f + 3, out + 3)
    cross3_add(r, out + 3, out)


cdef inline void xform_force_T_add(const double* E, const double* r, const double* f,
                                   double* out) noexcept nogil:
    # out += Xᵀ f
    cdef double t[6]
    xform_force_T(E, r, f, t)
    out[0] += t[0]; out[1] += t[1]; out[2] += t[2]
    out[3] += t[3]; out[4] += t[4]; out[5] += t[5]


# --- spatial cross products -----------------------------------------------------------

cdef inline void crm_apply(const double* v, const double* m, double* out) noexcept nogil:
    # out = v × m = [ω × m_ω; ω × m_v + v_lin × m_ω]   (crm(v) m; Lie algebra ad_v m)
    cross3(v, m, out)
    cross3(v, m + 3, out + 3)
    cross3_add(v + 3, m, out + 3)


cdef inline void crf_apply(const double* v, const double* f, double* out) noexcept nogil:
    # out = v ×* f = [ω × n + v_lin × f; ω × f]   (crf(v) f = -ad*_v f)
    cross3(v, f, out)
    cross3_add(v + 3, f + 3, out)
    cross3(v, f + 3, out + 3)


# --- inertias ---------------------------------------------------------------------------

cdef inline void rbi_apply(double m, const double* h, const double* Ibar, const double* v,
                           double* out) noexcept nogil:
    # out = I v = [Ī ω + h × v_lin; m v_lin - h × ω]
    mat3_vec(Ibar, v, out)
    cross3_add(h, v + 3, out)
    out[3] = m * v[3] - (h[1] * v[2] - h[2] * v[1])
    out[4] = m * v[4] - (h[2] * v[0] - h[0] * v[2])
    out[5] = m * v[5] - (h[0] * v[1] - h[1] * v[0])


cdef inline void rbi_congruence_add(const double* E, const double* r, double m,
                                    const double* h, const double* Ibar, double* m_out,
                                    double* h_out, double* Ibar_out) noexcept nogil:
    # (m', h', Ī') += Xᵀ (m, h, Ī) X for a rigid-body inertia and X = plux(E, r); with y = Eᵀ h:
    #   m' = m,  h' = y + m r,  Ī' = Eᵀ Ī E - (y rᵀ + r yᵀ) + 2 (r·y) 1 - m (r rᵀ - (r·r) 1)
    cdef double y[3]
    cdef double T[9]
    cdef double R[9]
    cdef double ry, rr
    cdef int i, j
    mat3T_vec(E, h, y)
    ry = dot3(r, y)
    rr = dot3(r, r)
    mat3_mul(Ibar, E, T)
    mat3T_mul(E, T, R)
    m_out[0] += m
    for i in range(3):
        h_out[i] += y[i] + m * r[i]
        for j in range(3):
            Ibar_out[3 * i + j] += R[3 * i + j] - y[i] * r[j] - r[i] * y[j] - m * r[i] * r[j]
        Ibar_out[4 * i] += 2.0 * ry + m * rr


cdef inline void mat6_vec(const double* A, const double* x, double* out) noexcept nogil:
    # out = A x   (A 6×6 row-major)
    cdef int i
    for i in range(6):
        out[i] = (A[6 * i] * x[0] + A[6 * i + 1] * x[1] + A[6 * i + 2] * x[2]
                  + A[6 * i + 3] * x[3] + A[6 * i + 4] * x[4] + A[6 * i + 5] * x[5])


cdef inline void congruence_add(const double* E, const double* r, const double* I,
                                double* out) noexcept nogil:
    # out += Xᵀ I X for X = plux(E, r) and a symmetric I = [[A, B], [Bᵀ, C]]:
    #   rotate:    A' = Eᵀ A E,  B' = Eᵀ B E,  C' = Eᵀ C E
    #   translate: B'' = B' + r̃ C',  A'' = A' + r̃ B'ᵀ + (r̃ B'ᵀ)ᵀ - r̃ C' r̃
    cdef double A[9]
    cdef double B[9]
    cdef double C[9]
    cdef double T[9]
    cdef double Ap[9]
    cdef double Bp[9]
    cdef double Cp[9]
    cdef double G[9]
    cdef double K[9]
    cdef double col[3]
    cdef double res[3]
    cdef int i, j
    for i in range(3):
        for j in range(3):
            A[3 * i + j] = I[6 * i + j]
            B[3 * i + j] = I[6 * i + 3 + j]
            C[3 * i + j] = I[6 * (3 + i) + 3 + j]
    # A' = Eᵀ A E,  B' = Eᵀ B E,  C' = Eᵀ C E
    mat3_mul(A, E, T)
    mat3T_mul(E, T, Ap)
    mat3_mul(B, E, T)
    mat3T_mul(E, T, Bp)
    mat3_mul(C, E, T)
    mat3T_mul(E, T, Cp)
    # G = r̃ C'  (column j: r × C'[:, j]);  K = r̃ B'ᵀ  (column j: r × B'[j, :])
    for j in range(3):
        col[0] = Cp[j]; col[1] = Cp[3 + j]; col[2] = Cp[6 + j]
        cross3(r, col, res)
        G[j] = res[0]; G[3 + j] = res[1]; G[6 + j] = res[2]
        cross3(r, Bp + 3 * j, res)
        K[j] = res[0]; K[3 + j] = res[1]; K[6 + j] = res[2]
    # G r̃ = r̃ C' r̃  (row i: G[i, :] × r)
    for i in range(3):
        cross3(G + 3 * i, r, T + 3 * i)
    for i in range(3):
        for j in range(3):
            # A'' = A' + K + Kᵀ - G r̃;  B'' = B' + G;  C'' = C'
            out[6 * i + j] += Ap[3 * i + j] + K[3 * i + j] + K[3 * j + i] - T[3 * i + j]
            out[6 * i + 3 + j] += Bp[3 * i + j] + G[3 * i + j]
            out[6 * (3 + j) + i] += Bp[3 * i + j] + G[3 * i + j]
            out[6 * (3 + i) + 3 + j] += Cp[3 * i + j]


# --- small dense solves ---------------------------------------------------------------------

cdef inline int cholesky_factor(const double* D, double* L, Py_ssize_t n,
                                Py_ssize_t ld) noexcept nogil:
    # D = L Lᵀ for a symmetric positive-definite n×n block (lower triangles, leading
    # dimension ld; L may be D itself).  Returns 0, or 1 when D is not positive definite.
    cdef Py_ssize_t i, j, k
    cdef double s
    for j in range(n):
        # L_jj = sqrt(D_jj - Σ_k L_jk²)
        s = D[ld * j + j]
        for k in range(j):
            s -= L[ld * j + k] * L[ld * j + k]
        if not s > 0.0:
            return 1
        L[ld * j + j] = sqrt(s)
        for i in range(j + 1, n):
            # L_ij = (D_ij - Σ_k L_ik L_jk) / L_jj
            s = D[ld * i + j]
            for k in range(j):
                s -= L[ld * i + k] * L[ld * j + k]
            L[ld * i + j] = s / L[ld * j + j]
    return 0


cdef inline void cholesky_solve(const double* L, double* b, Py_ssize_t n) noexcept nogil:
    # b = (L Lᵀ)⁻¹ b with the factor of ``cholesky_factor`` (leading dimension n):
    # forward then backward substitution
    cdef Py_ssize_t i, k
    cdef double s
    for i in range(n):
        # y_i = (b_i - Σ_{k<i} L_ik y_k) / L_ii
        s = b[i]
        for k in range(i):
            s -= L[i * n + k] * b[k]
        b[i] = s / L[i * n + i]
    for i in range(n - 1, -1, -1):
        # x_i = (y_i - Σ_{k>i} L_ki x_k) / L_ii, the sum subtracted as each x_k is known
        # (row k of L, contiguous: no chain of dependent subtractions)
        b[i] = b[i] / L[i * n + i]
        s = b[i]
        for k in range(i):
            b[k] -= L[i * n + k] * s

cdef inline int spd_inverse(const double* D, int n, int ld, double* Dinv,
                            double* work) noexcept nogil:
    # Dinv = D⁻¹ for a symmetric positive-definite n×n block (leading dimension ld),
    # by Cholesky D = L Lᵀ then D⁻¹ = L⁻ᵀ L⁻¹.  ``work`` holds 2·ld·ld doubles.
    # Returns 0, or 1 when D is not positive definite.
    cdef double* L = work
    cdef double* Li = work + ld * ld
    cdef int i, j, k
    cdef double s
    if n == 1:
        if not D[0] > 0.0:
            return 1
        Dinv[0] = 1.0 / D[0]
        return 0
    if cholesky_factor(D, L, n, ld):
        return 1
    for j in range(n):
        # Li = L⁻¹ by forward substitution, column j
        for i in range(n):
            s = 1.0 if i == j else 0.0
            for k in range(j, i):
                s -= L[ld * i + k] * Li[ld * k + j]
            Li[ld * i + j] = s / L[ld * i + i] if i >= j else 0.0
    for i in range(n):
        for j in range(i, n):
            # D⁻¹_ij = Σ_k Li_ki Li_kj
            s = 0.0
            for k in range(j, n):
                s += Li[ld * k + i] * Li[ld * k + j]
            Dinv[ld * i + j] = s
            Dinv[ld * j + i] = s
    return 0


# --- SO(3), SE(3) and quaternions (the same names and formulas as rbd/spatial.py) ------------

cdef inline void so3_exp(const double* w, double* R) noexcept nogil:
    # R = exp(w̃) = 1 + sin θ/θ w̃ + (1 - cos θ)/θ² w̃²   (θ < 1e-8: 1 + w̃ + ½ w̃²)
    cdef double theta = sqrt(dot3(w, w)), a, b
    cdef double W2[9]
    cdef int k
    skew_sq3(w, W2)
    if theta < 1e-8:
        a = 1.0
        b = 0.5
    else:
        a = sin(theta) / theta
        b = (1.0 - cos(theta)) / (theta * theta)
    set_identity3(R)
    for k in range(9):
        R[k] += b * W2[k]
    R[1] -= a * w[2]; R[2] += a * w[1]
    R[3] += a * w[2]; R[5] -= a * w[0]
    R[6] -= a * w[1]; R[7] += a * w[0]


cdef inline void se3_exp(const double* xi, double* R, double* p) noexcept nogil:
    # exp of the twist ξ = [ω; v]:  R = exp(ω̃),  p = V v = v + a ω × v + b ω × (ω × v) with
    # V = 1 + a ω̃ + b ω̃²,  a = (1 - cos θ)/θ²,  b = (θ - sin θ)/θ³   (θ < 1e-8: a = ½, b = ⅙)
    cdef double theta = sqrt(dot3(xi, xi)), a = 0.5, b = 1.0 / 6.0
    cdef double wv[3]
    cdef double wwv[3]
    if theta >= 1e-8:
        a = (1.0 - cos(theta)) / (theta * theta)
        b = (theta - sin(theta)) / (theta * theta * theta)
    cross3(xi, xi + 3, wv)
    cross3(xi, wv, wwv)
    p[0] = xi[3] + a * wv[0] + b * wwv[0]
    p[1] = xi[4] + a * wv[1] + b * wwv[1]
    p[2] = xi[5] + a * wv[2] + b * wwv[2]
    so3_exp(xi, R)


cdef inline void quat_multiply(const double* a, const double* b, double* out) noexcept nogil:
    # out = a ⊗ b   (scalar-last Hamilton product)
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1]
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0]
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3]
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]


cdef inline void quat_normalize(double* quat) noexcept nogil:
    # quat = quat / |quat|
    cdef double n = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                         + quat[3] * quat[3])
    cdef int k
    for k in range(4):
        quat[k] /= n


cdef inline void quat_integrate(const double* quat, const double* omega, double dt,
                                double* out) noexcept nogil:
    # out = quat ⊗ exp(ω dt), normalized;  exp(w) = [sin(θ/2) w/θ; cos(θ/2)]  (θ < 1e-12: [w/2; 1])
    cdef double w[3]
    cdef double dq[4]
    cdef double theta, s
    cdef int k
    for k in range(3):
        w[k] = omega[k] * dt
    theta = sqrt(dot3(w, w))
    if theta < 1e-12:
        dq[0] = 0.5 * w[0]; dq[1] = 0.5 * w[1]; dq[2] = 0.5 * w[2]; dq[3] = 1.0
    else:
        s = sin(theta / 2.0)
        dq[0] = s * (w[0] / theta); dq[1] = s * (w[1] / theta); dq[2] = s * (w[2] / theta)
        dq[3] = cos(theta / 2.0)
    quat_multiply(quat, dq, out)
    quat_normalize(out)


cdef inline void rot_to_quat(const double* R, double* quat) noexcept nogil:
    # unit quaternion (x, y, z, w) of R with w ≥ 0
    cdef double tr = R[0] + R[4] + R[8], s
    cdef int i, j, k
    if tr > 0:
        s = 2.0 * sqrt(tr + 1.0)
        quat[0] = (R[7] - R[5]) / s
        quat[1] = (R[2] - R[6]) / s
        quat[2] = (R[3] - R[1]) / s
        quat[3] = 0.25 * s
    else:
        # i = argmax diag(R)
        i = 0
        if R[4] > R[0]:
            i = 1
        if R[8] > R[4 * i]:
            i = 2
        j = (i + 1) % 3
        k = (i + 2) % 3
        s = 2.0 * sqrt(1.0 + R[4 * i] - R[4 * j] - R[4 * k])
        quat[i] = 0.25 * s
        quat[j] = (R[3 * j + i] + R[3 * i + j]) / s
        quat[k] = (R[3 * k + i] + R[3 * i + k]) / s
        quat[3] = (R[3 * k + j] - R[3 * j + k]) / s
    if quat[3] < 0:
        for i in range(4):
            quat[i] = -quat[i]
    quat_normalize(quat)
