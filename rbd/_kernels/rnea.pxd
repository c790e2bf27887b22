# cython: language_level=3
"""The outward pass shared by every recursive algorithm (twins in ``rbd/reference/rnea.py``).

``velocity_step`` and ``outward_step`` are the one compiled home of the first,
outward pass of RNEA, ABA (standard and modified pivot), Si & Guenter's
recursion 1 and the body velocities of the kinematics: each algorithm calls
them once per body, in body order.
"""

from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work, joint_step
from rbd._kernels._spatial cimport crf_apply, crm_apply, rbi_apply, xform_motion


cdef void rnea(const ModelC* model, Work* w, const double* q, const double* qd,
               const double* qdd, const double* f_ext, double* tau) noexcept nogil


cdef inline void velocity_step(const ModelC* model, Work* w, Py_ssize_t i, const double* q,
                               const double* qd, double* v_J) noexcept nogil:
    # X_J, S_i, c_J = jcalc(q_i, q̇_i);  X_up[i] = X_J X_tree[i];  v_J = S_i q̇_i;
    # v_i = X_up[i] v_λ(i) + v_J   (q̇ = NULL stands for 0)
    joint_step(model, w, i, q, qd)                                         # S&G (8)
    body_velocity(model, w, i, qd, v_J)


cdef inline void body_velocity(const ModelC* model, Work* w, Py_ssize_t i, const double* qd,
                               double* v_J) noexcept nogil:
    # v_J = S_i q̇_i;  v_i = X_up[i] v_λ(i) + v_J   (X_up[i], S_i known; q̇ = NULL stands for 0)
    cdef Py_ssize_t p = model.parent[i], vi = model.v_start[i], j, k
    cdef const double* S_i = w.S + 6 * vi
    cdef double* v_i = w.v + 6 * i
    memset(v_J, 0, 6 * sizeof(double))
    if qd != NULL:
        for j in range(model.nv_j[i]):
            for k in range(6):
                v_J[k] += S_i[6 * j + k] * qd[vi + j]
    if p < 0:
        memcpy(v_i, v_J, 6 * sizeof(double))                               # S&G (8)
    else:
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.v + 6 * p, v_i)
        for k in range(6):
            v_i[k] += v_J[k]                                                # S&G (8)


cdef inline void outward_step(const ModelC* model, Work* w, Py_ssize_t i, const double* q,
                              const double* qd, const double* f_ext, double* c_i,
                              double* pA_i) noexcept nogil:
    # velocity_step;  c_i = c_J + v_i × v_J;  pA_i = v_i ×* I_i v_i - f_ext_i
    cdef double v_J[6]
    cdef double Iv[6]
    cdef double* v_i = w.v + 6 * i
    cdef int k
    velocity_step(model, w, i, q, qd, v_J)
    # c_i = c_J + v_i × v_J
    crm_apply(v_i, v_J, c_i)
    for k in range(6):
        c_i[k] += w.c_J[6 * i + k]                                          # S&G (11)
    # pA_i = v_i ×* I_i v_i - f_ext_i
    rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, v_i, Iv)
    crf_apply(v_i, Iv, pA_i)                                                # S&G (21)
    if f_ext != NULL:
        for k in range(6):
            pA_i[k] -= f_ext[6 * i + k]
