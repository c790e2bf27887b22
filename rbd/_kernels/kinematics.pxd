# cython: language_level=3
from rbd._kernels._model cimport ModelC, Work

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
