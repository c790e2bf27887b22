# cython: language_level=3
from libc.string cimport memcpy

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport mat3_mulT, mat3_vec

cdef void world_poses(const ModelC* model, Work* w, const double* q,
                      Py_ssize_t last) noexcept nogil
cdef void forward_kinematics(const ModelC* model, Work* w, const double* q,
                             double* T) noexcept nogil
cdef void body_velocities(const ModelC* model, Work* w, const double* q,
                          const double* qd) noexcept nogil
cdef void jacobian(const ModelC* model, Work* w, const double* q, Py_ssize_t body,
                   const double* point, double* J) noexcept nogil
cdef void jacobian_columns(const ModelC* model, Work* w, Py_ssize_t body, const double* point,
                           double* J) noexcept nogil
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
