r"""Forward dynamics and impulses under bilateral constraints: three ways to one answer.

With the joint-space terms ``M``, ``h`` and the constraint rows ``J``,
``γ`` (:mod:`rbd.reference.constraints`), the constrained motion solves the
augmented (KKT) system, Pai et al.'s Eq. 5 written for joint coordinates:

.. math::

    \begin{bmatrix} M & J^T \\ J & 0 \end{bmatrix}
    \begin{bmatrix} \ddot q \\ -f \end{bmatrix} =
    \begin{bmatrix} \tau - h \\ \gamma \end{bmatrix}
    \qquad (M\ddot q + h = \tau + J^T f,\ J\ddot q = \gamma).

* :func:`solve_kkt` solves the augmented system as it stands (LU with pivoting:
  the matrix is symmetric but indefinite).
* :func:`solve_schur` eliminates ``q̈`` with the Cholesky factor of ``M``:
  ``G f = γ − J q̈₀`` with the Delassus matrix ``G = J M⁻¹ Jᵀ`` and the
  unconstrained ``q̈₀ = M⁻¹(τ − h)`` (RBDA §8.1).
* :func:`solve_proximal` is the proximal method of Carpentier, Budhiraja &
  Mansard (RSS 2021): ``(G + μ 1) f_{k+1} = γ − J q̈₀ + μ f_k`` from
  ``f_0 = 0``, each step well posed even where ``G`` is singular.

Redundant rows (a planar four-bar closed in 3-D has a row that is zero, or a
multiple of the others) make ``G`` singular: ``q̈`` is still unique but the
force is not.  Every method here returns the same one, the force of least
norm: the KKT and Schur solvers keep the ``rank`` rows of the singular value
decomposition ``J = U Σ Vᵀ`` whose singular values exceed
:data:`RANK_RTOL` times the largest, and the proximal iteration converges to
it from ``f_0 = 0`` (its component in the null space of ``Jᵀ`` never moves).
"""

from __future__ import annotations

import numpy as np

#: Singular values of ``J`` below this fraction of the largest count as redundant rows.
RANK_RTOL = 1e-10

#: Proximal iteration: the regularization relative to the largest diagonal entry of ``G``,
#: and the stopping tolerance on the constraint residual and the force update.
PROXIMAL_MU = 1e-6
PROXIMAL_TOL = 1e-15
PROXIMAL_MAX_ITER = 200


def independent_rows(J, gamma):
    """``(J_r, γ_r, U_r)``: ``rank`` independent combinations ``U_rᵀ J`` of the rows, or the
    rows themselves (``U_r`` None) when ``J`` has full row rank."""
    m = J.shape[0]
    if m == 0:
        return J, gamma, None
    U, s, _ = np.linalg.svd(J, full_matrices=False)
    rank = int(np.sum(s > RANK_RTOL * s[0])) if s[0] > 0 else 0
    if rank == m:
        return J, gamma, None
    U_r = U[:, :rank]                                     # rank 0: no row, force zero
    return U_r.T @ J, U_r.T @ gamma, U_r


def _force(f_r, U_r):
    return f_r if U_r is None else U_r @ f_r


def solve_kkt(M, h, tau, J, gamma):
    """``(q̈, f, rank)`` from the augmented system of Pai (5) with joint coordinates."""
    J_r, gamma_r, U_r = independent_rows(J, gamma)
    n, m = M.shape[0], J_r.shape[0]
    K = np.zeros((n + m, n + m))
    K[:n, :n], K[:n, n:], K[n:, :n] = M, J_r.T, J_r                       # Pai (5)
    rhs = np.concatenate([tau - h, gamma_r])                              # Pai (5)
    x = np.linalg.solve(K, rhs)
    return x[:n], _force(-x[n:], U_r), m


def delassus_factor(M, J):
    """``(G, L)``: ``G = J M⁻¹ Jᵀ`` through the Cholesky factor ``M = L Lᵀ`` (RBDA §8.1)."""
    L = np.linalg.cholesky(M)
    Y = np.linalg.solve(L, J.T)                                           # L⁻¹ Jᵀ
    return Y.T @ Y, L                                                     # G = (L⁻¹Jᵀ)ᵀ L⁻¹Jᵀ


def cholesky_solve(L, b):
    """``M⁻¹ b`` from ``M = L Lᵀ``: two triangular solves."""
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


def solve_schur(M, h, tau, J, gamma):
    """``(q̈, f, rank)`` by the Schur complement of ``M``: ``G f = γ − J q̈₀``, ``q̈ = q̈₀ + M⁻¹Jᵀf``."""
    J_r, gamma_r, U_r = independent_rows(J, gamma)
    G, c = delassus_factor(M, J_r)
    qdd0 = cholesky_solve(c, tau - h)                             # q̈₀ = M⁻¹(τ − h)
    if J_r.shape[0] == 0:
        return qdd0, np.zeros(J.shape[0]), 0
    f_r = cholesky_solve(np.linalg.cholesky(G), gamma_r - J_r @ qdd0)     # RBDA §8.1
    return qdd0 + cholesky_solve(c, J_r.T @ f_r), _force(f_r, U_r), J_r.shape[0]


def solve_proximal(M, h, tau, J, gamma, mu=None):
    """``(q̈, f, iterations)`` by proximal point iterations on the dual (CBM 2021, Alg. 1).

    ``f_{k+1} = argmin ½ fᵀGf − bᵀf + ½μ‖f − f_k‖²`` with ``b = γ − J q̈₀``; the
    iteration stops when ``‖J q̈ − γ‖`` is below :data:`PROXIMAL_TOL` relative to
    its scale, or stops halving (the rounding floor).  With redundant rows the
    rounding error of ``b`` in the null space of ``G`` grows the force by
    ``ε‖b‖/μ`` per step, which ``μ`` relatively large keeps below ~1e-9.
    """
    G, c = delassus_factor(M, J)
    qdd0 = cholesky_solve(c, tau - h)
    b = gamma - J @ qdd0
    m = J.shape[0]
    if m == 0:
        return qdd0, np.zeros(0), 0
    scale = max(float(np.max(np.diag(G))), np.finfo(float).tiny)
    mu = PROXIMAL_MU * scale if mu is None else float(mu)
    factor = np.linalg.cholesky(G + mu * np.eye(m))                       # G + μ1 ≻ 0
    f, k, residual = np.zeros(m), 0, np.inf
    while k < PROXIMAL_MAX_ITER:
        k += 1
        f = cholesky_solve(factor, b + mu * f)                            # proximal step
        residual, previous = float(np.max(np.abs(G @ f - b))), residual   # J q̈ − γ
        size = max(float(np.max(np.abs(b))), scale * float(np.max(np.abs(f))), 1e-300)
        if residual <= PROXIMAL_TOL * m * size or residual > 0.5 * previous:
            break                                     # converged, or at the rounding floor
    return qdd0 + cholesky_solve(c, J.T @ f), f, k


def solve_impulse(M, v_minus, J, restitution=0.0):
    """``(v⁺, Λ)``: ``M (v⁺ − v⁻) = Jᵀ Λ`` and ``J v⁺ = −e J v⁻`` (Newton's restitution)."""
    target = -restitution * (J @ v_minus)
    J_r, target_r, U_r = independent_rows(J, target)
    if J_r.shape[0] == 0:
        return v_minus.copy(), np.zeros(J.shape[0])
    G, c = delassus_factor(M, J_r)
    Lam = cholesky_solve(np.linalg.cholesky(G), target_r - J_r @ v_minus)
    return v_minus + cholesky_solve(c, J_r.T @ Lam), _force(Lam, U_r)
