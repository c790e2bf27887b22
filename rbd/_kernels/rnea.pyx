# cython: language_level=3
"""Recursive Newton–Euler inverse dynamics, compiled.

The compiled twin of ``rbd/reference/rnea.py`` (RBDA Table 5.1): the same two
passes under the same headers, the same symbols, one formula comment per
statement.  The outward pass's shared step (``outward_step``, ``rnea.pxd``)
is also the first pass of the ABA kernels and of Si & Guenter's recursion.
``nonlinear_effects`` and ``gravity_forces`` are this function with
``qdd = NULL`` (and ``qd = NULL``): a NULL vector stands for zeros.
"""

from rbd._kernels._model cimport ModelC, Work, armature_bias_add
from rbd._kernels._spatial cimport dot6, rbi_apply, xform_force_T_add, xform_motion


cdef void rnea(const ModelC* model, Work* w, const double* q, const double* qd,
               const double* qdd, const double* f_ext, double* tau) noexcept nogil:
    """tau = ID(q, q̇, q̈, f_ext); writes X_up, S, c_J, v, a, f of the workspace."""
    cdef Py_ssize_t nb = model.nb, i, j, p, k, nv_i, vi
    cdef double* a_i
    cdef const double* a_p
    cdef double* f_i
    cdef double* S_i
    cdef double c_i[6]
    cdef double Ia[6]

    # --- outward pass: velocities, accelerations and forces
    for i in range(nb):
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        a_i = w.a + 6 * i
        f_i = w.f + 6 * i
        # v_i = X_up[i] v_λ(i) + S_i q̇_i;  c_i = c_J + v_i × S_i q̇_i;
        # f_i = v_i ×* I_i v_i - f_ext_i
        outward_step(model, w, i, q, qd, f_ext, c_i, f_i)
        # a_i = X_up[i] a_λ(i) + S_i q̈_i + c_i
        a_p = <const double*>&model.a0[0] if p < 0 else w.a + 6 * p
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, a_p, a_i)
        for k in range(6):
            a_i[k] += c_i[k]                                                # S&G (11)
        if qdd != NULL:
            for j in range(nv_i):
                for k in range(6):
                    a_i[k] += S_i[6 * j + k] * qdd[vi + j]                  # S&G (11)
        # f_i = I_i a_i + (v_i ×* I_i v_i - f_ext_i)
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, a_i, Ia)
        for k in range(6):
            f_i[k] += Ia[k]                                                 # RBDA T5.1

    # --- inward pass: joint forces
    for i in range(nb - 1, -1, -1):
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        f_i = w.f + 6 * i
        for j in range(nv_i):
            # tau_i = S_iᵀ f_i (+ armature_i ⊙ q̈_i, the rotor inertia)
            tau[vi + j] = dot6(S_i + 6 * j, f_i)                            # RBDA T5.1
            if qdd != NULL:
                tau[vi + j] += model.armature[vi + j] * qdd[vi + j]
        # tau_i += a ⊙ (ω × u)   (a free joint's armature, on its linear rows)
        armature_bias_add(model, i, qd, 1.0, tau)
        # f_λ(i) += X_up[i]ᵀ f_i
        p = model.parent[i]
        if p >= 0:
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, f_i, w.f + 6 * p)  # RBDA T5.1
