# cython: language_level=3
"""Recursive Newton–Euler inverse dynamics, compiled.

The compiled twin of ``rbd/reference/rnea.py`` (RBDA Table 5.1): the same two
passes under the same headers, the same symbols, one formula comment per
statement.  ``nonlinear_effects`` and ``gravity_forces`` are this function with
``qdd = NULL`` (and ``qd = NULL``): a NULL vector stands for zeros.
"""

from rbd._kernels._model cimport ModelC, Work, joint_step
from rbd._kernels._spatial cimport (
    crf_apply,
    crm_apply,
    dot6,
    rbi_apply,
    xform_force_T_add,
    xform_motion,
)


cdef void rnea(const ModelC* model, Work* w, const double* q, const double* qd,
               const double* qdd, const double* f_ext, double* tau) noexcept nogil:
    """tau = ID(q, q̇, q̈, f_ext); writes X_up, S, c_J, v, a, f of the workspace."""
    cdef Py_ssize_t nb = model.nb, i, j, p, k, nv_i
    cdef double* v_i
    cdef double* a_i
    cdef const double* a_p
    cdef double* f_i
    cdef double* S_i
    cdef const double* c_J
    cdef double v_J[6]
    cdef double t[6]
    cdef double Iv[6]

    # --- outward pass: velocities and accelerations
    for i in range(nb):
        # X_J, S_i, c_J = jcalc(q_i, q̇_i);  X_up[i] = X_J X_tree[i]
        joint_step(model, w, i, q, qd)
        p = model.parent[i]
        nv_i = model.nv_j[i]
        S_i = w.S + 6 * model.v_start[i]
        c_J = w.c_J + 6 * i
        v_i = w.v + 6 * i
        a_i = w.a + 6 * i
        f_i = w.f + 6 * i
        # v_J = S_i q̇_i
        for k in range(6):
            v_J[k] = 0.0
        if qd != NULL:
            for j in range(nv_i):
                for k in range(6):
                    v_J[k] += S_i[6 * j + k] * qd[model.v_start[i] + j]
        # v_i = X_up[i] v_λ(i) + v_J
        if p < 0:
            for k in range(6):
                v_i[k] = v_J[k]                                             # S&G (8)
        else:
            xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.v + 6 * p, v_i)
            for k in range(6):
                v_i[k] += v_J[k]                                            # S&G (8)
        # a_i = X_up[i] a_λ(i) + S_i q̈_i + c_J + v_i × v_J
        if p < 0:
            a_p = <const double*>&model.a0[0]
        else:
            a_p = w.a + 6 * p
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, a_p, a_i)
        crm_apply(v_i, v_J, t)
        for k in range(6):
            a_i[k] += c_J[k] + t[k]                                         # S&G (11)
        if qdd != NULL:
            for j in range(nv_i):
                for k in range(6):
                    a_i[k] += S_i[6 * j + k] * qdd[model.v_start[i] + j]    # S&G (11)
        # f_i = I_i a_i + v_i ×* I_i v_i - f_ext_i
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, a_i, f_i)
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, v_i, Iv)
        crf_apply(v_i, Iv, t)
        for k in range(6):
            f_i[k] += t[k]                                                  # S&G (21)
        if f_ext != NULL:
            for k in range(6):
                f_i[k] -= f_ext[6 * i + k]

    # --- inward pass: joint forces
    for i in range(nb - 1, -1, -1):
        nv_i = model.nv_j[i]
        S_i = w.S + 6 * model.v_start[i]
        f_i = w.f + 6 * i
        # tau_i = S_iᵀ f_i
        for j in range(nv_i):
            tau[model.v_start[i] + j] = dot6(S_i + 6 * j, f_i)              # RBDA T5.1
        if qdd != NULL:
            for j in range(nv_i):
                # tau_i += armature_i ⊙ q̈_i   (rotor inertia)
                tau[model.v_start[i] + j] += (model.armature[model.v_start[i] + j]
                                              * qdd[model.v_start[i] + j])
        # f_λ(i) += X_up[i]ᵀ f_i
        p = model.parent[i]
        if p >= 0:
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, f_i, w.f + 6 * p)  # RBDA T5.1
