# cython: language_level=3
"""Si & Guenter's O(n) forward dynamics (Ploen's recursion, their Eqs. 18–35), compiled.

The compiled twin of ``forward_dynamics`` in ``rbd/reference/ploen.py``: the
same six recursions under the same headers, in the twins ``reduced_torques``
(recursions 1–3), ``articulated_factors`` (4) and ``apply_inverse`` (5–6);
``c_forward_dynamics`` is the nogil body of the entry point
``forward_dynamics``.  Recursion 1 is the outward step shared with RNEA and
ABA (``outward_step``, ``rnea.pxd``) and recursion 4 the articulated-inertia
step shared with ABA (``pivot``, ``articulated_inertia``, ``aba.pxd``): Eqs.
(18)–(21) are Eqs. (8), (11) and (21) (``−ad_{S_k q̇_k} v_k = v_k × S_k q̇_k``
for the velocity ``v_k`` before or after adding ``S_k q̇_k``).

Workspace use (``Work``): ``v`` velocities, ``c`` the accelerations ``a_k``
of Eq. (19), ``pA`` the forces ``b_k`` of Eq. (21), ``a`` first ``α_k``
(Eq. 22) then ``η_k`` (Eq. 34), ``f`` first ``p_k`` (Eq. 24) then ``z_k``
(Eq. 31), ``u`` the reduced forces ``τ̄_k`` (Eq. 26), ``IA`` the articulated
inertias ``J̄_k`` (Eq. 27), ``U`` the columns of ``J̄_k S_k``, ``D``/``D_inv``
the pivots ``Ω_k`` (Eq. 28), and ``F0`` the columns of
``P_k = J̄_k S_k Ω_k⁻¹``.  The 6 × 6 operators of Eqs. (29)–(30) are applied,
not stored:

    Y_{λ(k),k} z = X_kᵀ (z − P_k S_kᵀ z),   Π_{λ(k),k} τ = X_kᵀ P_k τ.

Returns 0, or ``1 + k`` when ``Ω_k`` of body ``k`` is not positive definite.
"""

from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work, armature_bias_add
from rbd._kernels._spatial cimport (
    congruence_add,
    dot6,
    rbi_apply,
    xform_force_T_add,
    xform_motion,
)
from rbd._kernels.aba cimport articulated_inertia, pivot
from rbd._kernels.rnea cimport outward_step

__all__ = ["forward_dynamics"]


cdef void reduced_torques(const ModelC* model, Work* w, const double* q, const double* qd,
                          const double* tau, const double* f_ext) noexcept nogil:
    # recursions 1–3: τ̄ = τ − C q̇ − φ into w.u;  also X_up, S, J̄_k = J_k (w.IA)
    cdef Py_ssize_t nb = model.nb, k, j, l, p, vk
    cdef const double* alpha_p

    # --- recursion 1 (forward): velocities, velocity-product accelerations, bias forces
    for k in range(nb):
        # v_k = X_up[k] v_λ(k) + S_k q̇_k;  a_k = Ṡ_k q̇_k + v_k × S_k q̇_k;
        # b_k = −ad*_{v_k} J_k v_k − f_e,k
        outward_step(model, w, k, q, qd, f_ext, w.c + 6 * k, w.pA + 6 * k)  # S&G (18)–(21)
        # J̄_k = J_k (recursion 4 starts here)
        memcpy(w.IA + 36 * k, model.inertia + 36 * k, 36 * sizeof(double))

    # --- recursion 2 (forward): bias accelerations α (α_0 = a_0 carries gravity)
    for k in range(nb):
        p = model.parent[k]
        alpha_p = <const double*>&model.a0[0] if p < 0 else w.a + 6 * p
        # α_k = X_up[k] α_λ(k) + a_k
        xform_motion(w.E_up + 9 * k, w.r_up + 3 * k, alpha_p, w.a + 6 * k)
        for l in range(6):
            w.a[6 * k + l] += w.c[6 * k + l]                                # S&G (22)
        # p_k = ᾱ_k = J_k α_k + b_k
        rbi_apply(model.mass[k], model.h + 3 * k, model.Ibar + 9 * k, w.a + 6 * k,
                  w.f + 6 * k)
        for l in range(6):
            w.f[6 * k + l] += w.pA[6 * k + l]                               # S&G (23)

    # --- recursion 3 (backward): bias forces p and reduced joint forces τ̄
    for k in range(nb - 1, -1, -1):
        vk = model.v_start[k]
        for j in range(model.nv_j[k]):
            # τ̄_k = τ_k − S_kᵀ p_k
            w.u[vk + j] = tau[vk + j] - dot6(w.S + 6 * (vk + j), w.f + 6 * k)  # S&G (25)–(26)
        # τ̄_k -= a ⊙ (ω × u)   (a free joint's armature, on its linear rows)
        armature_bias_add(model, k, qd, -1.0, w.u)
        p = model.parent[k]
        if p >= 0:
            # p_λ(k) += Ad*_{f⁻¹} p_k = X_up[k]ᵀ p_k
            xform_force_T_add(w.E_up + 9 * k, w.r_up + 3 * k, w.f + 6 * k, w.f + 6 * p)  # S&G (24)


cdef int articulated_factors(const ModelC* model, Work* w) noexcept nogil:
    # recursion 4 (backward): J̄_k, Ω_k, Ω_k⁻¹ and P_k = J̄_k S_k Ω_k⁻¹ (columns in w.F0)
    cdef Py_ssize_t k, p
    cdef double Ja[36]
    for k in range(model.nb - 1, -1, -1):
        # J̄_k S_k (w.U);  Ω_k = S_kᵀ J̄_k S_k (+ armature);  Ω_k⁻¹
        if pivot(model, w, k, False):                                       # S&G (28)
            return <int>(1 + k)
        # P_k = J̄_k S_k Ω_k⁻¹:  Π_{λ(k),k} = X_up[k]ᵀ P_k,  Y_{λ(k),k} = X_up[k]ᵀ (1 − P_k S_kᵀ);
        # Ja = J̄_k − P_k (J̄_k S_k)ᵀ
        articulated_inertia(model, w, k, Ja, w.F0 + 6 * model.v_start[k])   # S&G (29)–(30)
        p = model.parent[k]
        if p >= 0:
            # J̄_λ(k) += X_kᵀ (J̄_k − J̄_k S_k Ω_k⁻¹ S_kᵀ J̄_k) X_k
            congruence_add(w.E_up + 9 * k, w.r_up + 3 * k, Ja, w.IA + 36 * p)  # S&G (27)
    return 0


cdef void apply_inverse(const ModelC* model, Work* w, double* qdd) noexcept nogil:
    # recursions 5–6: q̈ = M⁻¹ τ̄ (τ̄ in w.u)
    cdef Py_ssize_t nb = model.nb, k, j, l, p, vk, nv_k
    cdef double* S_k
    cdef double* P_k
    cdef double* z_k
    cdef double* eta_k
    cdef double c_k[6]
    cdef double t[6]

    # --- recursion 5 (backward)
    memset(w.f, 0, 6 * nb * sizeof(double))
    for k in range(nb - 1, -1, -1):
        vk = model.v_start[k]
        nv_k = model.nv_j[k]
        S_k = w.S + 6 * vk
        P_k = w.F0 + 6 * vk
        z_k = w.f + 6 * k
        for j in range(nv_k):
            # c_k = τ̄_k − S_kᵀ z_k
            c_k[j] = w.u[vk + j] - dot6(S_k + 6 * j, z_k)                   # S&G (32)
        for j in range(nv_k):
            # c̄_k = Ω_k⁻¹ c_k
            qdd[vk + j] = 0.0
            for l in range(nv_k):
                qdd[vk + j] += w.D_inv[36 * k + 6 * j + l] * c_k[l]         # S&G (33)
        p = model.parent[k]
        if p >= 0:
            # z_λ(k) += Y_{λ(k),k} z_k + Π_{λ(k),k} τ̄_k = X_kᵀ (z_k + P_k c_k)
            memcpy(t, z_k, 6 * sizeof(double))
            for j in range(nv_k):
                for l in range(6):
                    t[l] += P_k[6 * j + l] * c_k[j]
            xform_force_T_add(w.E_up + 9 * k, w.r_up + 3 * k, t, w.f + 6 * p)  # S&G (31)

    # --- recursion 6 (forward)
    for k in range(nb):
        vk = model.v_start[k]
        nv_k = model.nv_j[k]
        S_k = w.S + 6 * vk
        P_k = w.F0 + 6 * vk
        eta_k = w.a + 6 * k
        p = model.parent[k]
        # t = X_k η_λ(k)   (η of the world is 0)
        if p < 0:
            memset(t, 0, 6 * sizeof(double))
        else:
            xform_motion(w.E_up + 9 * k, w.r_up + 3 * k, w.a + 6 * p, t)
        for j in range(nv_k):
            # q̈_k = c̄_k − Π_{λ(k),k}ᵀ η_λ(k) = c̄_k − P_kᵀ t
            qdd[vk + j] -= dot6(P_k + 6 * j, t)                             # S&G (35)
        # η_k = Y_{λ(k),k}ᵀ η_λ(k) + S_k c̄_k = t + S_k q̈_k
        memcpy(eta_k, t, 6 * sizeof(double))
        for j in range(nv_k):
            for l in range(6):
                eta_k[l] += S_k[6 * j + l] * qdd[vk + j]                    # S&G (34)


cdef int c_forward_dynamics(const ModelC* model, Work* w, const double* q, const double* qd,
                            const double* tau, const double* f_ext, double* qdd) noexcept nogil:
    """q̈ by S&G Eqs. (18)–(35); returns 0 or 1 + the body whose Ω_k is singular."""
    cdef int status
    reduced_torques(model, w, q, qd, tau, f_ext)
    status = articulated_factors(model, w)
    if status:
        w.status = status
        return status
    apply_inverse(model, w, qdd)
    return 0


def forward_dynamics(model, q, v, tau, f_ext=None):
    """Forward dynamics by the compiled S&G recursion: ``(nv,)`` or ``(N, nv)``.

    Parameters, errors and the way it runs (on the model's compiled twin, a batch
    in parallel) are those of :func:`rbd._kernels.block_elimination.aba_modified`;
    here a joint that moves no inertia leaves its ``Ω_k`` not positive definite.
    """
    from rbd._kernels._model import compiled_model

    return compiled_model(model).forward_dynamics_ploen(q, v, tau, f_ext)
