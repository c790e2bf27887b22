"""Articulated-body algorithm for forward dynamics (Featherstone, RBDA Table 7.1).

Tags ``S&G (n)`` point at the matching step of Si & Guenter's recursion
(their Eqs. 8–35, in Lie-group notation); ``RBDA T7.1`` at Featherstone's table.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .._docstrings import shared_doc
from .._validation import singular_pivot
from .rnea import armature_bias, outward_step


def pivot_factor(D):
    """Cholesky factor of a joint pivot ``D = Sᵀ IA S`` (symmetric positive definite).

    This text solves with the factor (:func:`pivot_solve`) and does not form ``D⁻¹``.
    The compiled twin forms ``D⁻¹ = L⁻ᵀ L⁻¹`` once from the same factor and multiplies
    by it (docs/design.md, "Where the twins differ"): the two agree to rounding.  An
    LU inverse (``numpy.linalg.inv``) is what lost digits on the ill-conditioned torus
    chain (cond(M) ~ 1e6; see :func:`pivot_inverse`).
    Raises ``numpy.linalg.LinAlgError`` when ``D`` is not positive definite
    (:func:`pivot` turns it into a ``ModelError`` naming the joint).
    """
    return cho_factor(D, lower=True) if D.size else None


def pivot_solve(factor, b):
    """``D⁻¹ b`` from :func:`pivot_factor` (an empty result for a joint without DoF)."""
    # b may have overflowed to inf on absurd (finite) velocities: the result is then
    # non-finite, as the kernel's, rather than an exception from the solver's check
    if factor is None:
        return np.zeros((0, *np.shape(b)[1:]))
    return cho_solve(factor, b, check_finite=False)


def pivot_inverse(D):
    """Inverse of a small symmetric positive definite pivot block (0 × 0 for a fixed joint).

    Formed from its Cholesky factor, not by LU inversion: on ill-conditioned mechanisms
    (a torus chain, cond(M) ~ 1e6) the explicit LU inverse lost up to four digits of the
    torque residual.
    """
    if not D.size:
        return D
    return cho_solve(cho_factor(D, lower=True), np.eye(len(D)))


def pivot(model, i, IA, S_i, modified_pivot=False):
    """``U_i = IA_i S_i``, the joint pivot ``D_i`` and its Cholesky factor.

    With ``modified_pivot`` (Pai, Ascher & Kry §7) ``IA[i]`` holds only the
    children's contribution ``IA~_i`` on entry; the pivot is formed in two parts,
    ``D_i = S_iᵀ I_i S_i + S_iᵀ IA~_i S_i``, before ``IA[i] = I_i + IA~_i`` is
    stored.  Compiled twin ``pivot`` in ``rbd/_kernels/aba.pxd``.
    Returns ``(U_i, D_i, L_i)``; a ``D_i`` that is not positive definite raises
    :class:`~rbd.errors.ModelError` naming the joint, as the kernel does.
    """
    I_i = model.bodies[i].inertia
    armature = np.diag(model.armature[model.v_index(i)])               # rotor inertia
    if modified_pivot:
        D = S_i.T @ I_i @ S_i + S_i.T @ IA[i] @ S_i + armature         # Pai §7
        IA[i] = I_i + IA[i]                                            # Pai §5: M̂ = M + M̃
        U = IA[i] @ S_i                                                # RBDA T7.1
    else:
        U = IA[i] @ S_i                                                # RBDA T7.1
        D = S_i.T @ U + armature                                       # S&G (28)
    try:
        return U, D, pivot_factor(D)
    except np.linalg.LinAlgError:
        raise singular_pivot(model.bodies[i].joint_name) from None


def articulated_inertia(IA_i, U_i, L_i):
    """``Ia = IA_i − U_i D_i⁻¹ U_iᵀ`` (twin ``articulated_inertia`` in ``aba.pxd``)."""
    return IA_i - U_i @ pivot_solve(L_i, U_i.T)                        # S&G (27)


@shared_doc
def aba(model, q, qd, tau, f_ext=None, data=None, modified_pivot=False):
    """Joint accelerations ``qdd`` produced by joint forces ``tau``.

    Parameters
    ----------
    {reference_model_q}
    qd, tau : (nv,) ndarray
    {reference_f_ext}
    data : dict, optional
        When given, receives the per-body quantities of the three passes
        (``X_up``, ``S``, ``v``, ``c``, ``IA``, ``pA``, ``U``, ``D``, ``u``, ``a``)
        for a reader to inspect; ``IA`` holds the articulated inertias.
    modified_pivot : bool, optional
        Form each pivot with Pai, Ascher & Kry's modified pivot (their §7, see
        :func:`pivot`): ``rbd.reference.block_elimination.aba_modified``.

    Returns
    -------
    qdd : (nv,) ndarray

    Notes
    -----
    Three passes.  Outward: velocities, bias accelerations ``c_i`` and
    bias forces ``pA_i`` (:func:`rbd.reference.rnea.outward_step`).  Inward:
    articulated inertias (:func:`pivot`, :func:`articulated_inertia`)

    .. math::

        U_i = I^A_i S_i,\\; D_i = S_i^T U_i + \\mathrm{diag}(a_i),\\;
        u_i = \\tau_i - S_i^T p^A_i,

        I^a_i = I^A_i - U_i D_i^{-1} U_i^T,\\;
        p^a_i = p^A_i + I^a_i c_i + U_i D_i^{-1} u_i,

    added to the parent through ``X_iᵀ (·) X_i``.  Outward: accelerations
    ``q̈_i = D_i^{-1}(u_i - U_i^T a')`` with ``a' = X_i a_{λ(i)} + c_i``.
    ``a_i`` is the joint's rotor inertia (``model.armature``): it adds to
    the joint pivot only, as it adds to the diagonal of ``M``; a free joint's
    armature also has a velocity product, taken from ``τ`` first
    (:func:`rbd.reference.rnea.armature_bias`).
    Every ``D_i^{-1} x`` is a solve with the Cholesky factor of ``D_i``
    (:func:`pivot_factor`); the compiled twin multiplies by ``D_i⁻¹`` formed from that
    factor instead (docs/design.md, "Where the twins differ").
    These are the articulated inertias that Pai, Ascher & Kry's ABM obtains by
    sparse block elimination of their augmented system (their Eq. 5); the
    same articulated inertia appears as Si & Guenter's Eq. (27).
    """
    nb = model.nbodies
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])
    X_up, S, v, c = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    IA, pA, U, D, u = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb
    L = [None] * nb

    # --- pass 1 (outward): velocities, bias accelerations, bias forces
    for i, body in enumerate(model.bodies):
        c[i], pA[i] = outward_step(model, i, q, qd, f_ext, X_up, S, v)
        IA[i] = np.zeros((6, 6)) if modified_pivot else np.array(body.inertia)  # IA~_i or I_i

    # --- pass 2 (inward): articulated-body inertias and bias forces
    tau = tau - armature_bias(model, qd)                               # free joints' rotors
    for i in range(nb - 1, -1, -1):
        U[i], D[i], L[i] = pivot(model, i, IA, S[i], modified_pivot)  # D = L Lᵀ
        u[i] = tau[model.v_index(i)] - S[i].T @ pA[i]                  # RBDA T7.1
        p = model.bodies[i].parent
        if p >= 0:
            Ia = articulated_inertia(IA[i], U[i], L[i])                # S&G (27)
            pa = pA[i] + Ia @ c[i] + U[i] @ pivot_solve(L[i], u[i])    # RBDA T7.1
            IA[p] = IA[p] + X_up[i].T @ Ia @ X_up[i]                   # S&G (27)
            pA[p] = pA[p] + X_up[i].T @ pa                             # S&G (24)

    # --- pass 3 (outward): accelerations
    qdd = np.zeros(model.nv)
    a = [None] * nb
    for i, body in enumerate(model.bodies):
        p = body.parent
        a_prime = X_up[i] @ (a0 if p < 0 else a[p]) + c[i]             # RBDA T7.1
        qdd_i = pivot_solve(L[i], u[i] - U[i].T @ a_prime)             # RBDA T7.1
        qdd[model.v_index(i)] = qdd_i
        a[i] = a_prime + S[i] @ qdd_i
    if data is not None:
        data.update(X_up=X_up, S=S, v=v, c=c, IA=IA, pA=pA, U=U, D=D, u=u, a=a)
    return qdd


def mass_matrix_inverse(model, q):
    """``M(q)⁻¹``: the ABA's three passes run on the unit joint forces, all columns at once.

    Column ``j`` of ``M⁻¹`` is :func:`aba`'s ``q̈`` for ``τ = e_j`` at zero velocity
    and gravity.  The inward pass carries the bias forces of every column in
    ``F_i`` (6 × nv), the outward pass their accelerations ``A_i``.  The product it
    assembles is Si & Guenter's factorization ``M⁻¹ = Lᵀ Ω⁻¹ L`` (their Eq. 58,
    :func:`rbd.reference.ploen.mass_matrix_inverse_factorized`).  Compiled twin:
    ``mass_matrix_inverse`` in ``rbd/_kernels/aba.pyx``, which fills only the
    columns ``j ≥ v_start[i]`` of block row ``i`` and copies the lower triangle.
    """
    nb, nv = model.nbodies, model.nv
    X_up, S = [None] * nb, [None] * nb
    IA = [np.array(body.inertia) for body in model.bodies]
    F = [np.zeros((6, nv)) for _ in range(nb)]
    U, L, A = [None] * nb, [None] * nb, [None] * nb
    M_inv = np.zeros((nv, nv))

    # --- pass 1 (outward): joint transforms
    for i, body in enumerate(model.bodies):
        qi = q[model.q_index(i)]
        S[i] = body.joint.S(qi)
        X_up[i] = body.joint.X_J(qi) @ body.X_tree                     # S&G (8)

    # --- pass 2 (inward): articulated inertias; bias forces of the unit joint forces
    for i in range(nb - 1, -1, -1):
        U[i], _, L[i] = pivot(model, i, IA, S[i])
        vi = model.v_index(i)
        u = np.eye(nv)[vi] - S[i].T @ F[i]                             # RBDA T7.1: u = τ − Sᵀ pA
        M_inv[vi] = pivot_solve(L[i], u)
        p = model.bodies[i].parent
        if p >= 0:
            Ia = articulated_inertia(IA[i], U[i], L[i])                # S&G (27)
            IA[p] = IA[p] + X_up[i].T @ Ia @ X_up[i]                   # S&G (27)
            F[p] = F[p] + X_up[i].T @ (F[i] + U[i] @ M_inv[vi])        # S&G (24)

    # --- pass 3 (outward): accelerations of the unit joint forces
    for i, body in enumerate(model.bodies):
        p, vi = body.parent, model.v_index(i)
        a_prime = X_up[i] @ A[p] if p >= 0 else np.zeros((6, nv))      # RBDA T7.1
        M_inv[vi] = M_inv[vi] - pivot_solve(L[i], U[i].T @ a_prime)    # RBDA T7.1
        A[i] = a_prime + S[i] @ M_inv[vi]
    return M_inv
