# cython: language_level=3
"""Forward kinematics, Jacobians, energies and integration on the joint manifolds, compiled.

The compiled twin of ``rbd/reference/kinematics.py``: the same functions with
the same formulas.  The manifold maps (``quat_integrate``, ``se3_exp``,
``rot_to_quat``) are the ``_spatial.pxd`` twins of ``rbd/spatial.py``, used as
the joints of ``rbd/joints.py`` use them; the body velocities are the shared
outward step ``velocity_step`` (``rnea.pxd``).  World poses are kept as ``R_i`` (body axes in world
coordinates) and ``p_i`` (body origin in world coordinates):
``R_i = R_λ(i) E_upᵀ`` and ``p_i = p_λ(i) + R_λ(i) r_up`` for
``X_up[i] = plux(E_up, r_up)``.
"""

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
    mat3_mulT,
    mat3_vec,
    mat3T_mul,
    mat3T_vec,
    quat_integrate,
    quat_to_rot_T,
    rot_to_quat,
    se3_exp,
)
from rbd._kernels.rnea cimport velocity_step


cdef void world_poses(const ModelC* model, Work* w, const double* q,
                      Py_ssize_t last) noexcept nogil:
    """R_i, p_i of bodies 0..last (their ancestors have smaller indices)."""
    cdef Py_ssize_t i
    for i in range(last + 1):
        # X_up[i] = X_J(q_i) X_tree[i] = plux(E, r)
        joint_step(model, w, i, q, NULL)
        world_pose(model, w, i)


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
    cdef Py_ssize_t i
    cdef double v_J[6]
    for i in range(model.nb):
        # X_up[i] = X_J(q_i) X_tree[i];  v_i = X_up[i] v_λ(i) + S_i q̇_i
        velocity_step(model, w, i, q, qd, v_J)                              # S&G (8)


cdef void jacobian(const ModelC* model, Work* w, const double* q, Py_ssize_t body,
                   const double* point, double* J) noexcept nogil:
    """J (6 × nv, row-major): column block of ancestor j is [R_j S_ω; R_j S_v + ω × (p - o_j)]."""
    world_poses(model, w, q, body)
    jacobian_columns(model, w, body, point, J)


cdef double kinetic_energy(const ModelC* model, Work* w, const double* q,
                           const double* qd) noexcept nogil:
    """T = ½ Σ v_iᵀ I_i v_i + ½ Σ armature_k q̇_k²  (= ½ q̇ᵀ M q̇, M with the armature)."""
    body_velocities(model, w, q, qd)
    return kinetic_energy_of(model, w, qd)


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
    body_centers_of_mass(model, w, q, w.C)
    return potential_energy_of(model, w)


cdef inline void free_integrate(const double* q, const double* v, double dt,
                                double* out) noexcept nogil:
    # [p; quat] ← T exp(ξ dt):  p' = p + R p_ξ,  quat' = quat(R R_ξ)   (joints.Free.integrate)
    cdef double xi[6]
    cdef double E[9]
    cdef double R_xi[9]
    cdef double R_next[9]
    cdef double p_xi[3]
    cdef double t[3]
    cdef int k
    for k in range(6):
        xi[k] = v[k] * dt
    # R_ξ, p_ξ = se3_exp(ξ dt)
    se3_exp(xi, R_xi, p_xi)
    # R = R(quat) = Eᵀ;  p' = p + R p_ξ
    quat_to_rot_T(q + 3, E)
    mat3T_vec(E, p_xi, t)
    for k in range(3):
        out[k] = q[k] + t[k]
    # quat' = rot_to_quat(R R_ξ)
    mat3T_mul(E, R_xi, R_next)
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
