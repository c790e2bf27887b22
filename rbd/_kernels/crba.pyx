# cython: language_level=3
"""Composite-rigid-body algorithm for the joint-space inertia matrix, compiled.

The compiled twin of ``rbd/reference/crba.py`` (RBDA Table 6.2): the joint
transforms, the inward pass of composite inertias, then one block row of
``M`` per body, walking to the root.  ``mass_matrix_inverse`` is computed by
the ABA-based factorization in ``aba.pyx`` rather than by the reference's
Cholesky solve.
"""

from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work, joint_step
from rbd._kernels._spatial cimport congruence_add, dot6, mat6_vec, xform_force_T


cdef void crba(const ModelC* model, Work* w, const double* q, double* M) noexcept nogil:
    """M = CRBA(q), full and symmetric (nv × nv, row-major); writes X_up, S, IC."""
    cdef Py_ssize_t nb = model.nb, nv = model.nv, i, j, p, k, l, nv_i, nv_j, vi, vj
    cdef double F[36]
    cdef double t[6]
    cdef double Mji
    cdef double* S_i
    cdef double* S_j
    for i in range(nb):
        # X_up[i] = X_J(q_i) X_tree[i];  S_i = S(q_i)
        joint_step(model, w, i, q, NULL)

    # --- inward pass: composite inertias
    # IC_i = I_i
    memcpy(w.IC, model.inertia, 36 * nb * sizeof(double))
    for i in range(nb - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            # IC_λ(i) += X_up[i]ᵀ IC_i X_up[i]
            congruence_add(w.E_up + 9 * i, w.r_up + 3 * i, w.IC + 36 * i, w.IC + 36 * p)

    # --- block rows: project the composite inertia onto every ancestor's joint
    memset(M, 0, nv * nv * sizeof(double))
    for i in range(nb):
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        for k in range(nv_i):
            # F = IC_i S_i
            mat6_vec(w.IC + 36 * i, S_i + 6 * k, F + 6 * k)
        for k in range(nv_i):
            for l in range(nv_i):
                # M_ii = S_iᵀ F
                M[(vi + l) * nv + vi + k] = dot6(S_i + 6 * l, F + 6 * k)
        j = i
        while model.parent[j] >= 0 and nv_i > 0:
            for k in range(nv_i):
                # F = X_up[j]ᵀ F
                xform_force_T(w.E_up + 9 * j, w.r_up + 3 * j, F + 6 * k, t)
                memcpy(F + 6 * k, t, 6 * sizeof(double))
            j = model.parent[j]
            nv_j = model.nv_j[j]
            vj = model.v_start[j]
            S_j = w.S + 6 * vj
            for k in range(nv_i):
                for l in range(nv_j):
                    # M_ji = S_jᵀ F;  M_ij = M_jiᵀ
                    Mji = dot6(S_j + 6 * l, F + 6 * k)
                    M[(vj + l) * nv + vi + k] = Mji
                    M[(vi + k) * nv + vj + l] = Mji
