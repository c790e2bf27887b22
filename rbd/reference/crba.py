"""Composite-rigid-body algorithm for the joint-space inertia matrix (RBDA Table 6.2)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lapack


def crba(model, q):
    """Joint-space inertia matrix ``M(q)`` (symmetric, nv × nv).

    Notes
    -----
    Inward pass accumulating composite inertias, then for each body a walk
    to the root filling one block row:

    .. math::

        I^C_{\\lambda(i)} \\mathrel{+}= X_i^T I^C_i X_i, \\quad
        F = I^C_i S_i, \\quad M_{ii} = S_i^T F, \\quad
        F \\leftarrow X_j^T F, \\; M_{ji} = S_j^T F \\text{ for ancestors } j.

    This is Pai, Ascher & Kry's CRBM mass matrix ``HᵀAᵀMAH`` (their Eq. 7)
    computed without forming the sparse factors.  The joints' rotor inertia
    (``model.armature``) is added to the diagonal: ``M_ii += diag(armature_i)``.
    """
    nb = model.nbodies
    X_up, S = [None] * nb, [None] * nb
    for i, body in enumerate(model.bodies):
        qi = q[model.q_index(i)]
        S[i] = body.joint.S(qi)
        X_up[i] = body.joint.X_J(qi) @ body.X_tree

    # --- inward pass: composite inertias
    IC = [np.array(body.inertia, dtype=np.result_type(X_up[0] if nb else 0.0))
          for body in model.bodies]
    for i in range(nb - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            IC[p] = IC[p] + X_up[i].T @ IC[i] @ X_up[i]

    # --- block rows: project the composite inertia onto every ancestor's joint
    M = np.zeros((model.nv, model.nv), dtype=IC[0].dtype if nb else float)
    for i in range(nb):
        vi = model.v_index(i)
        F = IC[i] @ S[i]
        M[vi, vi] = S[i].T @ F + np.diag(model.armature[vi])     # rotor inertia on the diagonal
        j = i
        while model.bodies[j].parent >= 0:
            F = X_up[j].T @ F
            j = model.bodies[j].parent
            vj = model.v_index(j)
            M[vj, vi] = S[j].T @ F
            M[vi, vj] = M[vj, vi].T
    return M


def mass_matrix_inverse(model, q):
    """``M(q)⁻¹`` through a Cholesky factorization of the CRBA matrix.

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
        raise np.linalg.LinAlgError("the mass matrix is not positive definite")
    for j in range(model.nv - 1):
        M_inv[j, j + 1:] = M_inv[j + 1:, j]   # the upper triangle from the lower one
    return M_inv.T


def forward_dynamics_crba(model, q, qd, tau, f_ext=None):
    """Forward dynamics by ``M(q) qdd = tau - h`` with a Cholesky solve.

    ``h`` (with the external forces) comes from RNEA at zero acceleration.
    """
    from .rnea import rnea

    h = rnea(model, q, qd, np.zeros(model.nv), f_ext)
    M = crba(model, q)
    return cho_solve(cho_factor(M, lower=True), tau - h)    # M = L Lᵀ, two triangular solves
