r"""Si & Guenter's O(n) forward dynamics (Ploen's recursion) and its global matrix form.

Si & Guenter extend Ploen's Lie-group derivation of the Rodriguez recursion to
joints with arbitrary motion subspaces ``S(q)`` and their derivatives
``Ṡ(q, q̇)`` (their Eqs. 9 and 12).  Here every joint supplies both through
``joint.S`` and ``joint.S_dot``, so any joint type (including symbolic ones)
enters the same recursion.

Notation dictionary (Si & Guenter → ``rbd``), each entry checked against the
paper's own definitions (Eqs. 2–5 and Appendix C):

============================================  ==================================================
Si & Guenter                                  ``rbd``
============================================  ==================================================
:math:`Ad_{f^{-1}_{\lambda(k),k}}`            ``X_up[k]`` (motion transform parent → k)
:math:`Ad^*_{f^{-1}_{\lambda(k),k}}`          ``X_up[k].T`` (force transform k → parent)
:math:`ad_{v}`                                ``crm(v)``
:math:`-ad^*_{v}`                             ``crf(v)`` (so ``-ad*_v J v = crf(v) @ J @ v``)
:math:`\mathbf J_k` (Eq. 5)                   ``body.inertia`` (same matrix: ``m[r]ᵀ = -m[r]``)
:math:`\mathbf S_k, \dot{\mathbf S}_k`        ``joint.S(q_k)``, ``joint.S_dot(q_k, q̇_k)``
:math:`\mathbf f_{e,k}`                       ``f_ext[k]``; gravity enters as ``α_0 = a_0 = [0; -g]``
:math:`\bar{\mathbf J}_k`, :math:`\Omega_k`   articulated inertia ``IA[k]``, pivot ``D[k]``
============================================  ==================================================

Two remarks on the printed equations, both settled numerically by the tests:

* Eq. (30) must use the force transform, :math:`\Pi_{\lambda(k),k} =
  Ad^*_{f^{-1}_{\lambda(k),k}} \bar J_k S_k \Omega_k^{-1}` (``X_up[k].T @ …``):
  :math:`\bar J_k S_k \Omega_k^{-1}` maps a joint force to a spatial force,
  and only the force transform makes Eqs. (31) and (35) reproduce the
  articulated-body algorithm.
* Eq. (31) reads ``Π_{k,i} τ̄_i`` (the reduced joint forces of Eq. 26).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..spatial import crf, crm
from .aba import articulated_inertia, pivot, pivot_inverse, pivot_solve
from .cartesian import block_diagonal
from .rnea import armature_bias, outward_step

__all__ = [
    "forward_dynamics",
    "joint_quantities",
    "reduced_torques",
    "articulated_factors",
    "apply_inverse",
    "Factors",
    "global_matrices",
    "mass_matrix_global",
    "bias_forces_global",
    "inverse_mass_factors",
    "mass_matrix_inverse_factorized",
    "forward_dynamics_factorized",
]


def joint_quantities(model, q):
    """``X_up[k] = X_J(q_k) X_tree[k]`` (S&G Eq. 8) and ``S_k(q_k)`` (S&G Eq. 9).

    Returns
    -------
    X_up : list of (6, 6) ndarray
    S : list of (6, nv_k) ndarray
    """
    X_up, S = [], []
    for k, body in enumerate(model.bodies):
        qk = q[model.q_index(k)]
        X_up.append(body.joint.X_J(qk) @ body.X_tree)                  # S&G (8)
        S.append(np.asarray(body.joint.S(qk), dtype=float).reshape(6, -1))  # S&G (9)
    return X_up, S


# --------------------------------------------------------------------------------------
# The O(n) recursion, S&G Eqs. (18)–(35)
# --------------------------------------------------------------------------------------
def reduced_torques(model, q, qd, tau, f_ext=None, X_up=None, S=None) -> np.ndarray:
    r"""Recursions 1–3: ``τ̄ = τ − C(q, q̇) q̇ − φ(q)`` (S&G Eqs. 18–26).

    ``C q̇`` includes the velocity product of free joints' armature
    (:func:`rbd.reference.rnea.armature_bias`), as the pivots include the armature.

    Returns
    -------
    tau_bar : (nv,) ndarray
    """
    nb, parent = model.nbodies, model.parent
    X_up = [None] * nb if X_up is None else X_up
    S = [None] * nb if S is None else S
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
    v, a, b, alpha, p = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb

    # --- recursion 1 (forward): velocities, velocity-product accelerations, bias forces
    for k in range(nb):
        # X_up[k], S_k, v_k (Eqs. 18, 20), a_k (Eq. 19), b_k (Eq. 21): the outward step of
        # RNEA and ABA, where a_k = Ṡ_k q̇_k + v_k × S_k q̇_k (= −ad_{S_k q̇_k} X_up[k] v_λ(k))
        a[k], b[k] = outward_step(model, k, q, qd, f_ext, X_up, S, v)     # S&G (18)–(21)

    # --- recursion 2 (forward): bias accelerations (gravity as α_0 = a_0)
    for k, body in enumerate(model.bodies):
        alpha_parent = alpha[parent[k]] if parent[k] >= 0 else a0
        alpha[k] = X_up[k] @ alpha_parent + a[k]                           # S&G (22)
        p[k] = body.inertia @ alpha[k] + b[k]                              # S&G (23): ᾱ_k

    # --- recursion 3 (backward): bias forces and reduced joint forces
    tau_bar = np.zeros(model.nv)
    tau = tau - armature_bias(model, qd)                                   # free joints' rotors
    for k in range(nb - 1, -1, -1):
        tau_bar[model.v_index(k)] = tau[model.v_index(k)] - S[k].T @ p[k]  # S&G (25)–(26)
        if parent[k] >= 0:
            p[parent[k]] = p[parent[k]] + X_up[k].T @ p[k]                 # S&G (24)
    return tau_bar


@dataclass
class Factors:
    """The configuration-only quantities of recursion 4, per body.

    ``J_bar`` articulated inertias (S&G Eq. 27), ``Omega`` and ``Omega_inv``
    joint pivots (Eq. 28), ``Y`` the 6 × 6 operators ``Y_{λ(k),k}`` (Eq. 29),
    ``Pi`` the 6 × d_k operators ``Π_{λ(k),k}`` (Eq. 30).
    """

    J_bar: list
    Omega: list
    Omega_inv: list
    Y: list
    Pi: list


def articulated_factors(model, X_up, S) -> Factors:
    r"""Recursion 4 (backward): articulated inertias and the factors of ``M⁻¹``.

    .. math::

        \bar J_k = J_k + \sum_{i \in \mu(k)} \big(X_i^T \bar J_i X_i
                   - X_i^T \bar J_i S_i \Omega_i^{-1} S_i^T \bar J_i X_i\big),
        \qquad \Omega_k = S_k^T \bar J_k S_k,

        Y_{\lambda(k),k} = X_k^T (1 - \bar J_k S_k \Omega_k^{-1} S_k^T), \qquad
        \Pi_{\lambda(k),k} = X_k^T \bar J_k S_k \Omega_k^{-1}.
    """
    nb, parent = model.nbodies, model.parent
    J_bar = [np.array(body.inertia, dtype=float) for body in model.bodies]
    Omega, Omega_inv, Y, Pi = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    for k in range(nb - 1, -1, -1):
        X = X_up[k]
        JS, Omega[k], L = pivot(model, k, J_bar, S[k])                     # S&G (28), rotor
        Omega_inv[k] = pivot_solve(L, np.eye(len(Omega[k])))
        Y[k] = X.T @ (np.eye(6) - JS @ Omega_inv[k] @ S[k].T)             # S&G (29)
        Pi[k] = X.T @ JS @ Omega_inv[k]                                    # S&G (30), Ad*
        if parent[k] >= 0:
            J_a = articulated_inertia(J_bar[k], JS, L)                     # S&G (27)
            J_bar[parent[k]] = J_bar[parent[k]] + X.T @ J_a @ X            # S&G (27)
    return Factors(J_bar, Omega, Omega_inv, Y, Pi)


def apply_inverse(model, factors: Factors, S, tau_bar) -> np.ndarray:
    r"""Recursions 5–6: ``q̈ = M⁻¹ τ̄`` in O(n) (S&G Eqs. 31–35).

    .. math::

        z_k = \sum_{i \in \mu(k)} (Y_{k,i} z_i + \Pi_{k,i} \bar\tau_i), \quad
        \bar c_k = \Omega_k^{-1}(\bar\tau_k - S_k^T z_k),

        \eta_k = Y_{\lambda(k),k}^T \eta_{\lambda(k)} + S_k \bar c_k, \quad
        \ddot q_k = \bar c_k - \Pi_{\lambda(k),k}^T \eta_{\lambda(k)}.

    ``η_k`` is the spatial acceleration of body k, and ``η`` of the world is zero
    (gravity is already in ``τ̄``).
    """
    nb, parent = model.nbodies, model.parent
    z = [np.zeros(6) for _ in range(nb)]
    c_bar, eta = [None] * nb, [None] * nb

    # --- recursion 5 (backward)
    for k in range(nb - 1, -1, -1):
        tau_k = tau_bar[model.v_index(k)]
        c_k = tau_k - S[k].T @ z[k]                                        # S&G (32)
        c_bar[k] = factors.Omega_inv[k] @ c_k                              # S&G (33)
        if parent[k] >= 0:
            z[parent[k]] = z[parent[k]] + factors.Y[k] @ z[k] + factors.Pi[k] @ tau_k  # S&G (31)

    # --- recursion 6 (forward)
    qdd = np.zeros(model.nv)
    for k in range(nb):
        eta_parent = eta[parent[k]] if parent[k] >= 0 else np.zeros(6)
        qdd[model.v_index(k)] = c_bar[k] - factors.Pi[k].T @ eta_parent     # S&G (35)
        eta[k] = factors.Y[k].T @ eta_parent + S[k] @ c_bar[k]             # S&G (34)
    return qdd


def forward_dynamics(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """Joint accelerations by Si & Guenter's O(n) recursion (Eqs. 18–35).

    Parameters are those of :func:`rbd.reference.aba.aba`: ``model, q, qd, tau, f_ext``.

    Returns
    -------
    qdd : (nv,) ndarray

    Examples
    --------
    >>> import numpy as np, rbd
    >>> from rbd.reference import ploen
    >>> model = rbd.models.double_pendulum()
    >>> q, qd, tau = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.zeros(2)
    >>> bool(np.allclose(ploen.forward_dynamics(model, q, qd, tau),
    ...                  rbd.aba(model, q, qd, tau, backend="reference")))
    True
    """
    X_up, S = [None] * model.nbodies, [None] * model.nbodies     # filled by recursion 1
    tau_bar = reduced_torques(model, q, qd, tau, f_ext, X_up, S)
    return apply_inverse(model, articulated_factors(model, X_up, S), S, tau_bar)


# --------------------------------------------------------------------------------------
# Global matrix form, S&G Appendix A (Eqs. 36–53)
# --------------------------------------------------------------------------------------
def global_matrices(model, q, qd=None) -> dict[str, np.ndarray]:
    r"""The stacked matrices of S&G Appendix A for one state.

    Keys (``n`` bodies, ``N = nv``):

    ``S`` (6n × N), ``S_dot`` (6n × N) block diagonals of ``S_k`` and ``Ṡ_k``;
    ``M_lambda`` (6n × 6n) = diag(``X_up[k]``); ``Theta`` (6n × 6n) with an
    identity at block (k, λ(k)) (Eq. 38); ``Gamma = M_lambda Θ`` (Eq. 43);
    ``G = (1 − Γ)⁻¹`` (Eq. 44); ``J`` = diag(``J_k``); ``ad_Sqd`` =
    diag(``−ad_{S_k q̇_k}``) and ``ad_star_v`` = diag(``−ad*_{v_k}``) =
    diag(``crf(v_k)``); ``v = G S q̇`` (Eq. 41); ``a_g`` the base acceleration
    ``X_up[k] a_0`` stacked at the root bodies (zero elsewhere).

    ``G`` is block lower triangular with blocks ``G(i, j)`` = the motion
    transform from ``j`` to its descendant ``i`` (Eq. 59): Pai, Ascher & Kry's
    ``A`` of their Eq. (7).
    """
    n, N, parent = model.nbodies, model.nv, model.parent
    qd = np.zeros(N) if qd is None else np.asarray(qd, dtype=float)
    X_up, S = joint_quantities(model, q)
    S_dot = [b.joint.S_dot(q[model.q_index(k)], qd[model.v_index(k)]).reshape(6, -1)
             for k, b in enumerate(model.bodies)]
    Theta = np.zeros((6 * n, 6 * n))
    for k in range(n):
        if parent[k] >= 0:
            Theta[6 * k:6 * k + 6, 6 * parent[k]:6 * parent[k] + 6] = np.eye(6)  # S&G (38)
    S_g = block_diagonal(S)
    M_lambda = block_diagonal(X_up)
    Gamma = M_lambda @ Theta                                               # S&G (43)
    G = scipy.linalg.solve_triangular(np.eye(6 * n) - Gamma, np.eye(6 * n), lower=True,
                                      unit_diagonal=True)                  # S&G (44)
    v = G @ S_g @ qd                                                       # S&G (41)
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
    a_g = np.concatenate([X_up[k] @ a0 if parent[k] < 0 else np.zeros(6) for k in range(n)]
                         or [np.zeros(0)])
    return {
        "S": S_g,
        "S_dot": block_diagonal(S_dot),
        "M_lambda": M_lambda,
        "Theta": Theta,
        "Gamma": Gamma,
        "G": G,
        "J": block_diagonal([b.inertia for b in model.bodies]),
        "ad_Sqd": block_diagonal([-crm(S[k] @ qd[model.v_index(k)]) for k in range(n)]),
        "ad_star_v": block_diagonal([crf(v[6 * k:6 * k + 6]) for k in range(n)]),
        "v": v,
        "a_g": a_g,
    }


def mass_matrix_global(model, q) -> np.ndarray:
    """Joint-space inertia ``M = Sᵀ G_λᵀ J G_λ S`` (S&G Eq. 51), ``(nv, nv)``."""
    g = global_matrices(model, q)
    GS = g["G"] @ g["S"]
    return GS.T @ g["J"] @ GS                                              # S&G (51)


def bias_forces_global(model, q, qd) -> np.ndarray:
    r"""``C(q, q̇) q̇ + φ(q)`` from the global matrices (S&G Eqs. 52–53).

    .. math::

        C = S^T G^T \big(J G\, ad_{S\dot q}\, \Gamma G S + J G \dot S
            + ad^*_{v} J G S\big), \qquad \phi = S^T G^T f_e,

    with gravity written as the external force ``f_e = J G a_g`` (the base
    acceleration ``a_0`` carried to every body).
    """
    g = global_matrices(model, q, qd)
    G, S, J = g["G"], g["S"], g["J"]
    C = S.T @ G.T @ (J @ G @ g["ad_Sqd"] @ g["Gamma"] @ G @ S + J @ G @ g["S_dot"]
                     + g["ad_star_v"] @ J @ G @ S)                          # S&G (52)
    phi = S.T @ G.T @ (J @ G @ g["a_g"])                                   # S&G (53)
    return C @ np.asarray(qd, dtype=float) + phi


# --------------------------------------------------------------------------------------
# Factorization of M⁻¹, S&G Appendix B (Eqs. 54–60)
# --------------------------------------------------------------------------------------
def inverse_mass_factors(model, q) -> dict[str, np.ndarray]:
    r"""The square factorization ``M⁻¹ = (1 − Sᵀ Y_λ Π_λ)ᵀ Ω⁻¹ (1 − Sᵀ Y_λ Π_λ)`` (Eq. 58).

    ``Π_λ`` (6n × N) holds ``Π_{λ(k),k}`` at block (λ(k), k); ``Y_λ =
    (1 − Y_step)⁻¹`` (6n × 6n) with ``Y_step`` holding ``Y_{λ(k),k}`` at block
    (λ(k), k), so ``Y_λ(j, k)`` is the product of the ``Y`` operators along the
    path from descendant ``k`` up to ``j``.  Both are block upper triangular
    (parents have lower indices), as S&G state; ``Ω = diag(Ω_k)``.

    Returns
    -------
    dict with ``L`` (N × N, ``1 − Sᵀ Y_λ Π_λ``), ``Omega`` (N × N), ``Y_lambda``,
    ``Pi_lambda`` and ``S``.
    """
    n, N, parent = model.nbodies, model.nv, model.parent
    X_up, S = joint_quantities(model, q)
    F = articulated_factors(model, X_up, S)
    Y_step, Pi_lambda = np.zeros((6 * n, 6 * n)), np.zeros((6 * n, N))
    for k in range(n):
        p = parent[k]
        if p >= 0:
            Y_step[6 * p:6 * p + 6, 6 * k:6 * k + 6] = F.Y[k]
            Pi_lambda[6 * p:6 * p + 6, model.v_index(k)] = F.Pi[k]
    Y_lambda = scipy.linalg.solve_triangular(np.eye(6 * n) - Y_step, np.eye(6 * n),
                                             lower=False, unit_diagonal=True)
    S_g = block_diagonal(S)
    L = np.eye(N) - S_g.T @ Y_lambda @ Pi_lambda                           # S&G (58)
    return {"L": L, "Omega": block_diagonal(F.Omega), "Y_lambda": Y_lambda,
            "Pi_lambda": Pi_lambda, "S": S_g}


def mass_matrix_inverse_factorized(model, q) -> np.ndarray:
    """``M⁻¹`` assembled from the factors of S&G Eq. (58), ``(nv, nv)``."""
    f = inverse_mass_factors(model, q)
    Omega_inv = block_diagonal([pivot_inverse(f["Omega"][model.v_index(k), model.v_index(k)])
                                for k in range(model.nbodies)])
    return f["L"].T @ Omega_inv @ f["L"]                                   # S&G (58)


def forward_dynamics_factorized(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """Appendix B's nine steps in global matrix form (S&G Eqs. 54–58).

    ``a`` and ``b`` (Eqs. 56–57), ``α = G a``, ``ᾱ = J α + b``, ``p = Gᵀ ᾱ``,
    ``τ̄ = τ − Sᵀ p``, then ``q̈ = Lᵀ Ω⁻¹ L τ̄`` with ``L = 1 − Sᵀ Y_λ Π_λ``.
    """
    qd = np.asarray(qd, dtype=float)
    g = global_matrices(model, q, qd)
    G, S, J = g["G"], g["S"], g["J"]
    a = g["ad_Sqd"] @ g["Gamma"] @ G @ S @ qd + g["S_dot"] @ qd + g["a_g"]  # S&G (56) + gravity
    b = g["ad_star_v"] @ J @ G @ S @ qd                                    # S&G (57)
    if f_ext is not None:
        b = b - np.asarray(f_ext, dtype=float).reshape(-1)                 # S&G (57): f_e
    alpha = G @ a                                                          # step 2
    p = G.T @ (J @ alpha + b)                                              # steps 3–4
    tau_bar = np.asarray(tau, dtype=float) - S.T @ p                       # steps 5–6, S&G (55)
    return mass_matrix_inverse_factorized(model, q) @ tau_bar              # steps 7–9, S&G (58)
