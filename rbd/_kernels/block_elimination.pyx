# cython: language_level=3
"""Articulated-body algorithm with Pai, Ascher & Kry's modified pivot (§7), compiled.

The compiled twin of ``aba_modified`` in ``rbd/reference/block_elimination.py``:
Featherstone's three passes (``rbd/_kernels/aba.pyx``), except that during the
inward pass ``IA`` holds only the children's contribution ``IA~_i`` (Pai's
``M̃``) until body ``i`` is reached, and the pivot is formed in two parts,

    D_i = S_iᵀ I_i S_i + S_iᵀ IA~_i S_i,

before ``IA_i = I_i + IA~_i`` is stored.  Returns 0, or ``1 + i`` when ``D_i``
of body ``i`` is not positive definite.
"""

from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work, joint_step
from rbd._kernels._spatial cimport (
    congruence_add,
    crf_apply,
    crm_apply,
    dot6,
    mat6_vec,
    rbi_apply,
    spd_inverse,
    xform_force_T_add,
    xform_motion,
)

__all__ = ["aba_modified"]


cdef inline int modified_pivot(const ModelC* model, Work* w, Py_ssize_t i) noexcept nogil:
    # D_i = S_iᵀ I_i S_i + S_iᵀ IA~_i S_i;  U_i = (I_i + IA~_i) S_i;  IA_i = I_i + IA~_i
    cdef Py_ssize_t nv_i = model.nv_j[i], k, l
    cdef double* S_i = w.S + 6 * model.v_start[i]
    cdef double* U_i = w.U + 6 * model.v_start[i]
    cdef double* IA_i = w.IA + 36 * i
    cdef double* D = w.D + 36 * i
    cdef double IS[36]
    for k in range(nv_i):
        # I_i S_i (own inertia);  IA~_i S_i (children)
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, S_i + 6 * k, IS + 6 * k)
        mat6_vec(IA_i, S_i + 6 * k, U_i + 6 * k)
    for k in range(nv_i):
        for l in range(nv_i):
            # D_i = S_iᵀ (I_i S_i) + S_iᵀ (IA~_i S_i)
            D[6 * k + l] = dot6(S_i + 6 * k, IS + 6 * l) + dot6(S_i + 6 * k, U_i + 6 * l)  # Pai §7
    for k in range(nv_i):
        # D_i += diag(armature_i)   (rotor inertia, on the joint's own degrees of freedom)
        D[7 * k] += model.armature[model.v_start[i] + k]
    for k in range(6 * nv_i):
        # U_i = I_i S_i + IA~_i S_i
        U_i[k] += IS[k]
    for k in range(36):
        # IA_i = I_i + IA~_i
        IA_i[k] += model.inertia[36 * i + k]                                # Pai §5: M̂ = M + M̃
    if nv_i == 0:
        return 0
    return spd_inverse(D, <int>nv_i, 6, w.D_inv + 36 * i, w.scratch)


cdef inline void project(const ModelC* model, Work* w, Py_ssize_t i, double* Ia,
                         double* UDinv) noexcept nogil:
    # Ia = IA_i - U_i D_i⁻¹ U_iᵀ;  UDinv = U_i D_i⁻¹ (6 × nv_i, column-major)
    cdef Py_ssize_t nv_i = model.nv_j[i], k, l, r, s
    cdef double* U_i = w.U + 6 * model.v_start[i]
    cdef double* D_inv = w.D_inv + 36 * i
    memcpy(Ia, w.IA + 36 * i, 36 * sizeof(double))
    for k in range(nv_i):
        for r in range(6):
            UDinv[6 * k + r] = 0.0
            for l in range(nv_i):
                UDinv[6 * k + r] += U_i[6 * l + r] * D_inv[6 * l + k]
    for k in range(nv_i):
        for r in range(6):
            for s in range(6):
                Ia[6 * r + s] -= UDinv[6 * k + r] * U_i[6 * k + s]          # S&G (27)


cdef int c_aba_modified(const ModelC* model, Work* w, const double* q, const double* qd,
                        const double* tau, const double* f_ext, double* qdd) noexcept nogil:
    """qdd = FD(q, q̇, τ, f_ext) with the modified pivot; writes the ABA workspace."""
    cdef Py_ssize_t nb = model.nb, i, j, k, p, nv_i, vi
    cdef double* v_i
    cdef double* a_i
    cdef double* S_i
    cdef double* U_i
    cdef double* D_inv
    cdef const double* a_p
    cdef double v_J[6]
    cdef double Iv[6]
    cdef double pa[6]
    cdef double r_i[6]
    cdef double Ia[36]
    cdef double UDinv[36]

    # --- pass 1 (outward): velocities, bias accelerations, bias forces
    for i in range(nb):
        joint_step(model, w, i, q, qd)
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        v_i = w.v + 6 * i
        # v_J = S_i q̇_i
        memset(v_J, 0, 6 * sizeof(double))
        for j in range(nv_i):
            for k in range(6):
                v_J[k] += S_i[6 * j + k] * qd[vi + j]
        # v_i = X_up[i] v_λ(i) + v_J
        if p < 0:
            memcpy(v_i, v_J, 6 * sizeof(double))                           # S&G (8)
        else:
            xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.v + 6 * p, v_i)
            for k in range(6):
                v_i[k] += v_J[k]                                            # S&G (8)
        # c_i = c_J + v_i × v_J
        crm_apply(v_i, v_J, w.c + 6 * i)
        for k in range(6):
            w.c[6 * i + k] += w.c_J[6 * i + k]                              # S&G (11)
        # IA~_i = 0 (the children's contribution, Pai's M̃)
        memset(w.IA + 36 * i, 0, 36 * sizeof(double))
        # pA_i = v_i ×* I_i v_i - f_ext_i
        rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, v_i, Iv)
        crf_apply(v_i, Iv, w.pA + 6 * i)                                    # S&G (21)
        if f_ext != NULL:
            for k in range(6):
                w.pA[6 * i + k] -= f_ext[6 * i + k]

    # --- pass 2 (inward): articulated inertias with the two-part pivot
    for i in range(nb - 1, -1, -1):
        if modified_pivot(model, w, i):
            w.status = <int>(1 + i)
            return w.status
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        for k in range(nv_i):
            # u_i = τ_i - S_iᵀ pA_i
            w.u[vi + k] = tau[vi + k] - dot6(S_i + 6 * k, w.pA + 6 * i)     # RBDA T7.1
        p = model.parent[i]
        if p >= 0:
            # Ia = IA_i - U_i D_i⁻¹ U_iᵀ
            project(model, w, i, Ia, UDinv)                                 # S&G (27)
            # pa = pA_i + Ia c_i + U_i D_i⁻¹ u_i
            mat6_vec(Ia, w.c + 6 * i, pa)
            for k in range(6):
                pa[k] += w.pA[6 * i + k]
            for j in range(nv_i):
                for k in range(6):
                    pa[k] += UDinv[6 * j + k] * w.u[vi + j]                 # RBDA T7.1
            # IA~_λ(i) += X_up[i]ᵀ Ia X_up[i]
            congruence_add(w.E_up + 9 * i, w.r_up + 3 * i, Ia, w.IA + 36 * p)  # Pai §7: M̃
            # pA_λ(i) += X_up[i]ᵀ pa
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, pa, w.pA + 6 * p)  # S&G (24)

    # --- pass 3 (outward): accelerations
    for i in range(nb):
        p = model.parent[i]
        nv_i = model.nv_j[i]
        vi = model.v_start[i]
        S_i = w.S + 6 * vi
        U_i = w.U + 6 * vi
        D_inv = w.D_inv + 36 * i
        a_i = w.a + 6 * i
        # a' = X_up[i] a_λ(i) + c_i
        a_p = &model.a0[0] if p < 0 else w.a + 6 * p
        xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, a_p, a_i)
        for k in range(6):
            a_i[k] += w.c[6 * i + k]                                        # RBDA T7.1
        # q̈_i = D_i⁻¹ (u_i - U_iᵀ a')
        for j in range(nv_i):
            r_i[j] = w.u[vi + j] - dot6(U_i + 6 * j, a_i)
        for j in range(nv_i):
            qdd[vi + j] = 0.0
            for k in range(nv_i):
                qdd[vi + j] += D_inv[6 * j + k] * r_i[k]                    # RBDA T7.1
        # a_i = a' + S_i q̈_i
        for j in range(nv_i):
            for k in range(6):
                a_i[k] += S_i[6 * j + k] * qdd[vi + j]
    return 0


def aba_modified(model, q, v, tau, f_ext=None):
    """Forward dynamics with the modified pivot: ``(nv,)`` or ``(N, nv)`` for a batch.

    Runs on the model's :class:`~rbd._kernels._model.CompiledModel`
    (``rbd.algorithms.compiled(model)``): the arguments are checked in compiled
    code, and a batch runs with the GIL released, in parallel over the states.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v, tau : (nv,) or (N, nv) array_like
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional

    Raises
    ------
    InputError
        When ``model`` is not an rbd.Model, or on a wrong shape, a non-finite value
        or a non-unit quaternion (the message names the argument).
    ModelError
        When a joint moves no inertia (``D_i`` not positive definite).
    """
    from rbd._kernels._model import compiled_model

    return compiled_model(model).aba_modified(q, v, tau, f_ext)
