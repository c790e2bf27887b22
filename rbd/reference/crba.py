"""Composite-rigid-body algorithm for the joint-space inertia matrix (RBDA Table 6.2)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lapack

from .._validation import singular_pivot
from ..errors import ModelError
from ..spatial import inv_plux


def crba(model, q):
    """Joint-space inertia matrix ``M(q)`` (symmetric, nv × nv).

    Notes
    -----
    The joint transforms, with each body's transform ``X_0,i`` from its root
    body's coordinates; the inward pass accumulating composite inertias; then
    one block row per body, walking to the root:

    .. math::

        I^C_{\\lambda(i)} \\mathrel{+}= X_i^T I^C_i X_i, \\quad
        F = I^C_i S_i, \\quad M_{ii} = S_i^T F, \\quad
        M_{ji} = S_j^T X_{j,i}^T F = (X_{0,j}^{-1} S_j)^T (X_{0,i}^T F)
        \\text{ for ancestors } j.

    RBDA Table 6.2 carries ``F ← X_jᵀ F`` up the walk, one transform per
    (body, ancestor) pair; here ``S⁰_j = X_{0,j}^{-1} S_j`` and ``F⁰ = X_{0,i}^T F``
    are formed once per body, in root-body coordinates (``X_{j,i} = X_{0,i}
    X_{0,j}^{-1}``), and each step of the walk is one product ``S⁰_jᵀ F⁰``, as in
    the compiled twin ``rbd/_kernels/crba.pyx``.  This is Pai, Ascher & Kry's
    CRBM mass matrix ``HᵀAᵀMAH`` (their Eq. 7) computed without forming the
    sparse factors.  The joints' rotor inertia (``model.armature``) is added to
    the diagonal: ``M_ii += diag(armature_i)``.
    """
    nb = model.nbodies
    X_up, S, X_0, S0, F0 = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb

    # --- outward pass: joint transforms, root-body coordinates
    for i, body in enumerate(model.bodies):
        qi, p = q[model.q_index(i)], body.parent
        S[i] = body.joint.S(qi)
        X_up[i] = body.joint.X_J(qi) @ body.X_tree                     # S&G (8)
        X_0[i] = X_up[i] @ X_0[p] if p >= 0 else np.eye(6, dtype=X_up[i].dtype)  # X_0,i
        S0[i] = inv_plux(X_0[i]) @ S[i]                                # S⁰_i = X_0,i⁻¹ S_i

    # --- inward pass: composite inertias
    IC = [np.array(body.inertia, dtype=np.result_type(X_up[0] if nb else 0.0))
          for body in model.bodies]
    for i in range(nb - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            IC[p] = IC[p] + X_up[i].T @ IC[i] @ X_up[i]                # RBDA T6.2

    # --- block rows: project the composite inertia onto every ancestor's joint
    # (in root-body coordinates: M_ji = S_jᵀ X_up[..]ᵀ F = S⁰_jᵀ F⁰)
    M = np.zeros((model.nv, model.nv), dtype=IC[0].dtype if nb else float)
    for i in range(nb):
        vi = model.v_index(i)
        F = IC[i] @ S[i]                                               # RBDA T6.2
        M[vi, vi] = S[i].T @ F + np.diag(model.armature[vi])           # rotor inertia
        F0[i] = X_0[i].T @ F                                           # F⁰ = X_0,iᵀ F
        j = i
        while model.bodies[j].parent >= 0:
            j = model.bodies[j].parent
            vj = model.v_index(j)
            M[vj, vi] = S0[j].T @ F0[i]                                # RBDA T6.2
            M[vi, vj] = M[vj, vi].T
    return M


def mass_matrix_inverse(model, q):
    """``M(q)⁻¹`` through a Cholesky factorization of the CRBA matrix.

    The compiled ``M⁻¹`` renders another text, the ABA on unit forces
    (:func:`rbd.reference.aba.mass_matrix_inverse`).

    ``M = L Lᵀ`` and ``M⁻¹ = L⁻ᵀ L⁻¹`` are formed in ``M``'s own storage (LAPACK
    ``potrf`` then ``potri``): no copy of an ``nv × nv`` matrix besides the result.
    """
    M = crba(model, q)
    if model.nv == 0:
        return M
    # M is symmetric, so its transpose is the same matrix in Fortran order: LAPACK
    # works on it in place (M = L Lᵀ, lower triangle, then M⁻¹ in the lower triangle)
    L, info = lapack.dpotrf(M.T, lower=1, clean=0, overwrite_a=1)
    if info == 0:
        M_inv, info = lapack.dpotri(L, lower=1, overwrite_c=1)
    if info != 0:
        ltl(model, crba(model, q))   # names the joint, eliminating from the leaves as ABA does
        raise ModelError("forward dynamics is undefined: the mass matrix is not positive "
                         "definite")
    for j in range(model.nv - 1):
        M_inv[j, j + 1:] = M_inv[j + 1:, j]   # the upper triangle from the lower one
    return M_inv.T


def _joint_of_dof(model, k: int) -> str:
    """The name of the joint that degree of freedom ``k`` belongs to."""
    for i, body in enumerate(model.bodies):
        if model.v_index(i).start <= k < model.v_index(i).stop:
            return body.joint_name
    return f"dof {k}"


def ltl(model, M):
    """``M = Lᵀ L`` with ``L`` lower triangular and the sparsity of the tree.

    Featherstone, *Efficient factorization of the joint-space inertia matrix for
    branched kinematic trees* (IJRR 2005): ``M[i, j]`` is non-zero only when one of
    ``i, j`` is an ancestor of the other in the tree of the degrees of freedom
    (``λ = model.dof_parent``).  Eliminating from the leaves to the root keeps that
    pattern (no fill-in): ``L[k, i] ≠ 0`` only for ``i`` on the path from ``k`` to the
    root, and the cost is ``O(Σ_k d_k²)`` (``d_k``: depth of ``k``) instead of
    ``O(nv³)``: a chain costs as much as a dense Cholesky, a branched tree much less.
    A pivot that is not positive raises :class:`~rbd.errors.ModelError` naming its
    joint (the ABA's pivots are these, eliminated in the same order).
    """
    lam = model.dof_parent
    L = np.tril(M).astype(float)
    for k in range(model.nv - 1, -1, -1):
        # L[k, k] = √M[k, k];  L[k, i] = M[k, i] / L[k, k] along the path to the root
        if not L[k, k] > 0.0:
            raise singular_pivot(_joint_of_dof(model, k))
        L[k, k] = np.sqrt(L[k, k])
        i = lam[k]
        while i >= 0:
            L[k, i] /= L[k, k]
            i = lam[i]
        # M[i, j] -= L[k, i] L[k, j] for every pair i, j on the path (j above i)
        i = lam[k]
        while i >= 0:
            j = i
            while j >= 0:
                L[i, j] -= L[k, i] * L[k, j]
                j = lam[j]
            i = lam[i]
    return L


def ltl_solve(model, L, B):
    """``M⁻¹ B`` from ``M = Lᵀ L`` (:func:`ltl`): ``L⁻ᵀ`` leaves to root, then ``L⁻¹``.

    Both sweeps move whole rows of ``B`` along the paths to the root, so their cost
    is ``O(Σ_k d_k)`` row operations.
    """
    lam = model.dof_parent
    X = np.array(B, dtype=float)
    # --- sweep 1 (leaves to root): X ← L⁻ᵀ X
    # (row k is final once its descendants, larger indices, have pushed into it)
    for k in range(model.nv - 1, -1, -1):
        X[k] /= L[k, k]
        i = lam[k]
        while i >= 0:
            X[i] -= L[k, i] * X[k]
            i = lam[i]
    # --- sweep 2 (root to leaves): X ← L⁻¹ X
    # (row k needs its ancestors, smaller indices, only)
    for k in range(model.nv):
        i = lam[k]
        while i >= 0:
            X[k] -= L[k, i] * X[i]
            i = lam[i]
        X[k] /= L[k, k]
    return X


def ltl_inverse(model, L):
    """``M⁻¹ = L⁻¹ L⁻ᵀ`` from ``M = Lᵀ L`` (:func:`ltl`)."""
    return ltl_solve(model, L, np.eye(model.nv))


def forward_dynamics_crba(model, q, qd, tau, f_ext=None):
    """Forward dynamics by ``M(q) qdd = tau - h`` with a Cholesky solve.

    ``h`` (with the external forces) comes from RNEA at zero acceleration.
    """
    from .rnea import rnea

    h = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    M = crba(model, q)
    return cho_solve(cho_factor(M, lower=True), tau - h)    # M = L Lᵀ, two triangular solves


def forward_dynamics_ltl(model, q, qd, tau, f_ext=None):
    """Forward dynamics by ``M(q) qdd = tau - h`` with the sparse factorization :func:`ltl`."""
    from .rnea import rnea

    h = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    M = crba(model, q)
    return ltl_solve(model, ltl(model, M), (tau - h)[:, None])[:, 0]
