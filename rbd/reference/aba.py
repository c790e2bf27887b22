"""Articulated-body algorithm for forward dynamics (Featherstone, RBDA Table 7.1).

Tags ``S&G (n)`` point at the matching step of Si & Guenter's recursion
(their Eqs. 8–35, in Lie-group notation); ``RBDA T7.1`` at Featherstone's table.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..spatial import crf, crm


def pivot_factor(D):
    """Cholesky factor of a joint pivot ``D = Sᵀ IA S`` (symmetric positive definite).

    ``D`` is never inverted explicitly: on an ill-conditioned mechanism (a torus
    chain, cond(M) ~ 1e6) ``inv(D)`` loses digits that the Cholesky solves keep.
    Raises ``numpy.linalg.LinAlgError`` when ``D`` is not positive definite.
    """
    return cho_factor(D, lower=True) if D.size else None


def pivot_solve(factor, b):
    """``D⁻¹ b`` from :func:`pivot_factor` (an empty result for a joint without DoF)."""
    # b may have overflowed to inf on absurd (finite) velocities: the result is then
    # non-finite, as the kernel's, rather than an exception from the solver's check
    if factor is None:
        return np.zeros((0, *np.shape(b)[1:]))
    return cho_solve(factor, b, check_finite=False)


def aba(model, q, qd, tau, f_ext=None, data=None):
    """Joint accelerations ``qdd`` produced by joint forces ``tau``.

    Parameters
    ----------
    model : Model
    q : (nq,) ndarray
    qd, tau : (nv,) ndarray
    f_ext : (nbodies, 6) ndarray, optional
        External spatial forces on each body, in body coordinates.
    data : dict, optional
        When given, receives the per-body quantities of the three passes
        (``X_up``, ``S``, ``v``, ``c``, ``IA``, ``pA``, ``U``, ``D``, ``u``, ``a``)
        for a reader to inspect; ``IA`` holds the articulated inertias.

    Returns
    -------
    qdd : (nv,) ndarray

    Notes
    -----
    Three passes.  Outward: velocities, bias accelerations ``c_i`` and
    bias forces ``pA_i``.  Inward: articulated inertias

    .. math::

        U_i = I^A_i S_i,\\; D_i = S_i^T U_i + \\mathrm{diag}(a_i),\\;
        u_i = \\tau_i - S_i^T p^A_i,

        I^a_i = I^A_i - U_i D_i^{-1} U_i^T,\\;
        p^a_i = p^A_i + I^a_i c_i + U_i D_i^{-1} u_i,

    added to the parent through ``X_iᵀ (·) X_i``.  Outward: accelerations
    ``q̈_i = D_i^{-1}(u_i - U_i^T a')`` with ``a' = X_i a_{λ(i)} + c_i``.
    ``a_i`` is the joint's rotor inertia (``model.armature``): it adds to
    the joint pivot only, as it adds to the diagonal of ``M``.
    Every ``D_i^{-1} x`` is a solve with the Cholesky factor of ``D_i``
    (:func:`pivot_factor`), never a product with an explicit inverse.
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
        qi, vi = q[model.q_index(i)], qd[model.v_index(i)]
        X_J, S[i], v_J, c_J = body.joint.jcalc(qi, vi)
        X_up[i] = X_J @ body.X_tree                                    # S&G (8)
        p = body.parent
        v[i] = X_up[i] @ (np.zeros(6) if p < 0 else v[p]) + v_J        # S&G (8)
        c[i] = c_J + crm(v[i]) @ v_J                                   # S&G (11)
        IA[i] = np.array(body.inertia)
        pA[i] = crf(v[i]) @ body.inertia @ v[i]                        # S&G (21)
        if f_ext is not None:
            pA[i] = pA[i] - f_ext[i]

    # --- pass 2 (inward): articulated-body inertias and bias forces
    for i in range(nb - 1, -1, -1):
        U[i] = IA[i] @ S[i]                                            # RBDA T7.1
        D[i] = S[i].T @ U[i] + np.diag(model.armature[model.v_index(i)])  # S&G (28), rotor
        L[i] = pivot_factor(D[i])                                      # D = L Lᵀ
        u[i] = tau[model.v_index(i)] - S[i].T @ pA[i]                  # RBDA T7.1
        p = model.bodies[i].parent
        if p >= 0:
            Ia = IA[i] - U[i] @ pivot_solve(L[i], U[i].T)              # S&G (27)
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
