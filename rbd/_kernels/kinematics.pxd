# cython: language_level=3
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport cross3, dot3, dot6, mat3_mulT, mat3_vec, rbi_apply

cdef void world_poses(const ModelC* model, Work* w, const double* q,
                      Py_ssize_t last) noexcept nogil
cdef void forward_kinematics(const ModelC* model, Work* w, const double* q,
                             double* T) noexcept nogil
cdef void body_velocities(const ModelC* model, Work* w, const double* q,
                          const double* qd) noexcept nogil
cdef void jacobian(const ModelC* model, Work* w, const double* q, Py_ssize_t body,
                   const double* point, double* J) noexcept nogil
cdef double kinetic_energy(const ModelC* model, Work* w, const double* q,
                           const double* qd) noexcept nogil
cdef void body_centers_of_mass(const ModelC* model, Work* w, const double* q,
                               double* C) noexcept nogil
cdef void center_of_mass(const ModelC* model, Work* w, const double* q,
                         double* com) noexcept nogil
cdef double potential_energy(const ModelC* model, Work* w, const double* q) noexcept nogil
cdef void integrate(const ModelC* model, const double* q, const double* v, double dt,
                    double* q_next) noexcept nogil


cdef inline void world_pose(const ModelC* model, Work* w, Py_ssize_t i) noexcept nogil:
    # R_i, p_i: orientation and origin of body i in world coordinates, from X_up[i] = plux(E, r)
    # (R_i = R_λ(i) Eᵀ, p_i = p_λ(i) + R_λ(i) r;  R_λ = 1, p_λ = 0 for the world)
    cdef Py_ssize_t p = model.parent[i], k, l
    cdef double* R_i = w.R + 9 * i
    cdef double* p_i = w.p + 3 * i
    if p < 0:
        for k in range(3):
            for l in range(3):
                R_i[3 * k + l] = w.E_up[9 * i + 3 * l + k]
        memcpy(p_i, w.r_up + 3 * i, 3 * sizeof(double))
    else:
        mat3_mulT(w.R + 9 * p, w.E_up + 9 * i, R_i)
        mat3_vec(w.R + 9 * p, w.r_up + 3 * i, p_i)
        for k in range(3):
            p_i[k] += w.p[3 * p + k]


cdef inline void point_column(const Work* w, Py_ssize_t j, Py_ssize_t col,
                              const double* p_world, double* out) noexcept nogil:
    # out = [ω; v], the Jacobian column of dof ``col`` (of joint j, an ancestor of the body
    # or the body) at the world point p_world: ω = R_j S_ω, v = R_j S_v + ω × (p - o_j)
    cdef int k
    cdef double d[3]
    cdef double t[3]
    cdef const double* S_k = w.S + 6 * col
    for k in range(3):
        d[k] = p_world[k] - w.p[3 * j + k]
    mat3_vec(w.R + 9 * j, S_k, out)
    mat3_vec(w.R + 9 * j, S_k + 3, out + 3)
    cross3(out, d, t)
    for k in range(3):
        out[3 + k] += t[k]


cdef inline void body_point(const Work* w, Py_ssize_t body, const double* point,
                            double* p_world) noexcept nogil:
    # p = R_body point + p_body (a point in body coordinates, in the world)
    cdef int k
    mat3_vec(w.R + 9 * body, point, p_world)
    for k in range(3):
        p_world[k] += w.p[3 * body + k]


cdef inline void jacobian_columns(const ModelC* model, Work* w, Py_ssize_t body,
                                  const double* point, double* J) noexcept nogil:
    """``jacobian`` with the world poses R, p and S of body and its ancestors already in w."""
    cdef Py_ssize_t nv = model.nv, j, k, l, col
    cdef double p_world[3]
    cdef double column[6]
    body_point(w, body, point, p_world)
    memset(J, 0, 6 * nv * sizeof(double))
    j = body
    while j >= 0:
        for l in range(model.nv_j[j]):
            col = model.v_start[j] + l
            point_column(w, j, col, p_world, column)
            for k in range(6):
                J[k * nv + col] = column[k]
        j = model.parent[j]


cdef inline double kinetic_energy_of(const ModelC* model, const Work* w,
                                     const double* qd) noexcept nogil:
    """``kinetic_energy`` from the body velocities already in w.v (the velocity stage):
    T = ½ Σ v_iᵀ I_i v_i + ½ Σ armature_k q̇_k²."""
    cdef Py_ssize_t i
    cdef double T = 0.0
    cdef double Iv[6]
    for i in range(model.nb):
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, w.v + 6 * i, Iv)
        T += 0.5 * dot6(w.v + 6 * i, Iv)
    for i in range(model.nv):
        # rotor kinetic energy ½ armature_k q̇_k²
        T += 0.5 * model.armature[i] * qd[i] * qd[i]
    return T


cdef inline double potential_energy_of(const ModelC* model, const Work* w) noexcept nogil:
    """``potential_energy`` from the centres of mass already in w.C (the position stage):
    U = -Σ m_i gᵀ C_i."""
    cdef Py_ssize_t i
    cdef double U = 0.0
    for i in range(model.nb):
        U -= model.mass[i] * dot3(model.gravity, w.C + 3 * i)
    return U
