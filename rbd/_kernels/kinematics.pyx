# cython: language_level=3
"""Forward kinematics, Jacobians, energies and integration on the joint manifolds, compiled.

The compiled twin of ``rbd/reference/kinematics.py``: the same functions with
the same formulas.  World poses are kept as ``R_i`` (body axes in world
coordinates) and ``p_i`` (body origin in world coordinates):
``R_i = R_λ(i) E_upᵀ`` and ``p_i = p_λ(i) + R_λ(i) r_up`` for
``X_up[i] = plux(E_up, r_up)``.
"""

from libc.math cimport cos, sin, sqrt
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport (
    J_FREE,
    J_SPHERICAL,
    ModelC,
    Work,
    joint_step,
)
from rbd._kernels._spatial cimport (
    cross3,
    dot3,
    dot6,
    mat3_mul,
    mat3_mulT,
    mat3_vec,
    quat_to_rot_T,
    rbi_apply,
    set_identity3,
    skew_sq3,
    xform_motion,
)


cdef void world_poses(const ModelC* model, Work* w, const double* q,
                      Py_ssize_t last) noexcept nogil:
    """R_i, p_i of bodies 0..last (their ancestors have smaller indices)."""
    cdef Py_ssize_t i, p, k, l
    cdef double* R_i
    cdef double* p_i
    for i in range(last + 1):
        # X_up[i] = X_J(q_i) X_tree[i] = plux(E, r)
        joint_step(model, w, i, q, NULL)
        p = model.parent[i]
        R_i = w.R + 9 * i
        p_i = w.p + 3 * i
        if p < 0:
            # R_i = Eᵀ,  p_i = r
            for k in range(3):
                for l in range(3):
                    R_i[3 * k + l] = w.E_up[9 * i + 3 * l + k]
            memcpy(p_i, w.r_up + 3 * i, 3 * sizeof(double))
        else:
            # R_i = R_λ(i) Eᵀ,  p_i = p_λ(i) + R_λ(i) r
            mat3_mulT(w.R + 9 * p, w.E_up + 9 * i, R_i)
            mat3_vec(w.R + 9 * p, w.r_up + 3 * i, p_i)
            for k in range(3):
                p_i[k] += w.p[3 * p + k]


cdef void forward_kinematics(const ModelC* model, Work* w, const double* q,
                             double* T) noexcept nogil:
    """T_i = [[R_i, p_i], [0, 1]] for every body (nb × 4×4, row-major)."""
    cdef Py_ssize_t i, k, l
    cdef double* T_i
    world_poses(model, w, q, model.nb - 1)
    for i in range(model.nb):
        T_i = T + 16 * i
        for k in range(3):
            for l in range(3):
                T_i[4 * k + l] = w.R[9 * i + 3 * k + l]
            T_i[4 * k + 3] = w.p[3 * i + k]
        T_i[12] = 0.0; T_i[13] = 0.0; T_i[14] = 0.0; T_i[15] = 1.0


cdef void body_velocities(const ModelC* model, Work* w, const double* q,
                          const double* qd) noexcept nogil:
    """v_i = X_up[i] v_λ(i) + S_i q̇_i, body coordinates (fills w.v)."""
    cdef Py_ssize_t i, j, k, p, vi
    cdef double* v_i
    for i in range(model.nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i)
        joint_step(model, w, i, q, qd)
        p = model.parent[i]
        vi = model.v_start[i]
        v_i = w.v + 6 * i
        if p < 0:
            memset(v_i, 0, 6 * sizeof(double))
        else:
            xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.v + 6 * p, v_i)
        for j in range(model.nv_j[i]):
            for k in range(6):
                v_i[k] += w.S[6 * (vi + j) + k] * qd[vi + j]                # S&G (8)


cdef void jacobian(const ModelC* model, Work* w, const double* q, Py_ssize_t body,
                   const double* point, double* J) noexcept nogil:
    """J (6 × nv, row-major): column block of ancestor j is [R_j S_ω; R_j S_v + ω × (p - o_j)]."""
    cdef Py_ssize_t nv = model.nv, j, k, l, col
    cdef double p_world[3]
    cdef double d[3]
    cdef double om[3]
    cdef double lin[3]
    cdef double t[3]
    cdef const double* S_k
    world_poses(model, w, q, body)
    # p = R_body point + p_body
    mat3_vec(w.R + 9 * body, point, p_world)
    for k in range(3):
        p_world[k] += w.p[3 * body + k]
    memset(J, 0, 6 * nv * sizeof(double))
    j = body
    while j >= 0:
        for k in range(3):
            d[k] = p_world[k] - w.p[3 * j + k]
        for l in range(model.nv_j[j]):
            col = model.v_start[j] + l
            S_k = w.S + 6 * col
            # ω = R_j S_ω;  v = R_j S_v + ω × (p - o_j)
            mat3_vec(w.R + 9 * j, S_k, om)
            mat3_vec(w.R + 9 * j, S_k + 3, lin)
            cross3(om, d, t)
            for k in range(3):
                J[k * nv + col] = om[k]
                J[(3 + k) * nv + col] = lin[k] + t[k]
        j = model.parent[j]


cdef double kinetic_energy(const ModelC* model, Work* w, const double* q,
                           const double* qd) noexcept nogil:
    """T = ½ Σ v_iᵀ I_i v_i + ½ Σ armature_k q̇_k²  (= ½ q̇ᵀ M q̇, M with the armature)."""
    cdef Py_ssize_t i
    cdef double T = 0.0
    cdef double Iv[6]
    body_velocities(model, w, q, qd)
    for i in range(model.nb):
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, w.v + 6 * i, Iv)
        T += 0.5 * dot6(w.v + 6 * i, Iv)
    for i in range(model.nv):
        # rotor kinetic energy ½ armature_k q̇_k²
        T += 0.5 * model.armature[i] * qd[i] * qd[i]
    return T


cdef void body_centers_of_mass(const ModelC* model, Work* w, const double* q,
                               double* C) noexcept nogil:
    """C_i = R_i c_i + p_i (nb × 3)."""
    cdef Py_ssize_t i, k
    world_poses(model, w, q, model.nb - 1)
    for i in range(model.nb):
        mat3_vec(w.R + 9 * i, model.com + 3 * i, C + 3 * i)
        for k in range(3):
            C[3 * i + k] += w.p[3 * i + k]


cdef void center_of_mass(const ModelC* model, Work* w, const double* q,
                         double* com) noexcept nogil:
    """c = Σ m_i C_i / Σ m_i (0 for a massless model); fills w.C."""
    cdef Py_ssize_t i, k
    cdef double m = 0.0
    com[0] = 0.0; com[1] = 0.0; com[2] = 0.0
    for i in range(model.nb):
        m += model.mass[i]
    if not m > 0.0:
        return
    body_centers_of_mass(model, w, q, w.C)
    for i in range(model.nb):
        for k in range(3):
            com[k] += model.mass[i] * w.C[3 * i + k]
    for k in range(3):
        com[k] /= m


cdef double potential_energy(const ModelC* model, Work* w, const double* q) noexcept nogil:
    """U = -Σ m_i gᵀ C_i (zero at the world origin); fills w.C."""
    cdef Py_ssize_t i
    cdef double U = 0.0
    body_centers_of_mass(model, w, q, w.C)
    for i in range(model.nb):
        U -= model.mass[i] * dot3(model.gravity, w.C + 3 * i)
    return U


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
    # out = quat ⊗ exp(ω dt), normalized   (spatial.quat_integrate)
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
    # unit quaternion (x, y, z, w) of R with w ≥ 0   (spatial.rot_to_quat)
    cdef double tr = R[0] + R[4] + R[8], s
    cdef int i, j, k
    if tr > 0:
        s = 2.0 * sqrt(tr + 1.0)
        quat[0] = (R[7] - R[5]) / s
        quat[1] = (R[2] - R[6]) / s
        quat[2] = (R[3] - R[1]) / s
        quat[3] = 0.25 * s
    else:
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


cdef inline void free_integrate(const double* q, const double* v, double dt,
                                double* out) noexcept nogil:
    # [p; quat] ← T exp(ξ dt):  R' = R exp(ω̃ dt),  p' = p + R V(ω dt) v dt   (spatial.se3_exp)
    cdef double E[9]
    cdef double R[9]
    cdef double Rw[9]
    cdef double R_next[9]
    cdef double W2[9]
    cdef double V[9]
    cdef double w[3]
    cdef double u[3]
    cdef double Vu[3]
    cdef double t[3]
    cdef double theta, a, b
    cdef int k, l
    for k in range(3):
        w[k] = v[k] * dt
        u[k] = v[3 + k] * dt
    theta = sqrt(dot3(w, w))
    skew_sq3(w, W2)
    # V = 1 + (1 - cos θ)/θ² w̃ + (θ - sin θ)/θ³ w̃²   (θ < 1e-8: 1 + ½ w̃ + w̃²/6)
    if theta < 1e-8:
        a = 0.5
        b = 1.0 / 6.0
    else:
        a = (1.0 - cos(theta)) / (theta * theta)
        b = (theta - sin(theta)) / (theta * theta * theta)
    set_identity3(V)
    for k in range(9):
        V[k] += b * W2[k]
    V[1] -= a * w[2]; V[2] += a * w[1]
    V[3] += a * w[2]; V[5] -= a * w[0]
    V[6] -= a * w[1]; V[7] += a * w[0]
    so3_exp(w, Rw)
    # R = R(quat) = Eᵀ
    quat_to_rot_T(q + 3, E)
    for k in range(3):
        for l in range(3):
            R[3 * k + l] = E[3 * l + k]
    # p' = p + R (V u)
    mat3_vec(V, u, Vu)
    mat3_vec(R, Vu, t)
    for k in range(3):
        out[k] = q[k] + t[k]
    # quat' = quat(R exp(ω̃ dt))
    mat3_mul(R, Rw, R_next)
    rot_to_quat(R_next, out + 3)


cdef void integrate(const ModelC* model, const double* q, const double* v, double dt,
                    double* q_next) noexcept nogil:
    """q_next = q ⊕ v dt on each joint's manifold (vector joints: q + v dt)."""
    cdef Py_ssize_t i, k, qi, vi
    for i in range(model.nb):
        qi = model.q_start[i]
        vi = model.v_start[i]
        if model.jtype[i] == J_SPHERICAL:
            # quat' = quat ⊗ exp(ω dt)
            quat_integrate(q + qi, v + vi, dt, q_next + qi)
        elif model.jtype[i] == J_FREE:
            # T' = T exp(ξ dt)
            free_integrate(q + qi, v + vi, dt, q_next + qi)
        else:
            for k in range(model.nq_j[i]):
                # q' = q + v dt
                q_next[qi + k] = q[qi + k] + v[vi + k] * dt
