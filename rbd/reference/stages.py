"""The stage pipeline: the quantities of one state computed once, in order, into a ``Data``.

MuJoCo's ``mj_kinematics → mj_crb → mj_factorM → mj_rne`` and Pinocchio's
``computeAllTerms``, written with the passes of RBDA's tables.  Each stage reads
what the earlier ones wrote to an :class:`rbd.data.Data` and writes its own
fields; the compiled twin ``rbd/_kernels/stages.pyx`` has the same functions.

=================  ============================  ===================================
stage              reads                         writes
=================  ============================  ===================================
position           q                             E_up, r_up (X_up), S, R, p, C, S0
velocity           q̇, position                   c_J, v, c
composite_inertia  position                      m_C, h_C, I_C (IC), F0, M
factor             M                             L, factor_kind
bias               position, velocity, IC        a, f, h, g
jacobians          position, frames              jacobians
solve              factor, h, τ                  qdd
=================  ============================  ===================================

World coordinates carry the geometry: ``R_i``, ``p_i`` are body ``i``'s axes and
origin, ``S⁰ = X_0,i⁻¹ S_i`` its joint's motion subspace in world coordinates.
Tags ``S&G (n)`` refer to Si & Guenter, ``RBDA Tn.m`` to Featherstone's tables.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, cholesky

from ..spatial import crf, crm, identity, inv_plux, plux, plux_parts, unskew
from .crba import ltl, ltl_solve
from .rnea import armature_bias


def position(model, data, q):
    """Joint transforms ``X_up``, motion subspaces ``S`` and world poses at ``q``.

    ``R_i = R_λ(i) Eᵀ``, ``p_i = p_λ(i) + R_λ(i) r`` for ``X_up[i] = plux(E, r)``; the
    centre of mass ``C_i = R_i c_i + p_i``; ``S⁰_i = X_0,i⁻¹ S_i`` with
    ``X_0,i = plux(R_iᵀ, p_i)``.
    """
    data.q[:] = q
    # --- outward pass: joint transforms, world poses
    for i, body in enumerate(model.bodies):
        qi, vi, p = q[model.q_index(i)], model.v_index(i), body.parent
        X_up = body.joint.X_J(qi) @ body.X_tree                        # S&G (8)
        S = body.joint.S(qi)
        E, r = plux_parts(X_up)
        data.E_up[i], data.r_up[i], data.S_cols[vi] = E, r, S.T
        R_p, p_p = (identity(3, E), np.zeros(3)) if p < 0 else (data.R[p], data.p[p])
        data.R[i] = R_p @ E.T
        data.p[i] = p_p + R_p @ r
        data.C[i] = data.R[i] @ body.com + data.p[i]
        data.S0[vi] = (inv_plux(plux(data.R[i].T, data.p[i])) @ S).T  # S⁰ = X_0,i⁻¹ S


def velocity(model, data, qd):
    """Body velocities ``v_i`` and bias accelerations ``c_i = c_J + v_i × v_J`` at ``q̇``."""
    data.qd[:] = qd
    X_up = data.X_up
    # --- outward pass: velocities, bias accelerations
    for i, body in enumerate(model.bodies):
        qi, vi, p = data.q[model.q_index(i)], model.v_index(i), body.parent
        v_J = data.S_cols[vi].T @ qd[vi]
        data.c_J[i] = body.joint.c_J(qi, qd[vi])
        data.v[i] = X_up[i] @ (np.zeros(6) if p < 0 else data.v[p]) + v_J  # S&G (8)
        data.c[i] = data.c_J[i] + crm(data.v[i]) @ v_J                 # S&G (11)


def composite_inertia(model, data):
    """Composite inertias ``IC_i`` and the joint-space inertia ``M`` (armature included).

    RBDA Table 6.2 in world coordinates: ``F⁰ = X_0,iᵀ IC_i S_i`` once per degree
    of freedom, then ``M_ji = S⁰_jᵀ F⁰`` for each ancestor ``j`` (as
    :func:`rbd.reference.crba.crba`, whose common frame is the root body's).
    """
    X_up = data.X_up
    IC = [np.array(body.inertia, dtype=data.dtype) for body in model.bodies]
    # --- inward pass: composite inertias
    for i in range(model.nbodies - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            IC[p] = IC[p] + X_up[i].T @ IC[i] @ X_up[i]                # RBDA T6.2
        data.m_C[i], data.h_C[i], data.I_C[i] = IC[i][5, 5], unskew(IC[i][:3, 3:]), IC[i][:3, :3]

    # --- block rows: project the composite inertia onto every ancestor's joint
    data.M[:] = 0
    for i in range(model.nbodies):
        vi = model.v_index(i)
        S = data.S_cols[vi].T
        F = IC[i] @ S                                                  # RBDA T6.2
        data.M[vi, vi] = S.T @ F + np.diag(model.armature[vi])         # rotor inertia
        data.F0[vi] = (plux(data.R[i].T, data.p[i]).T @ F).T           # F⁰ = X_0,iᵀ F
        j = model.bodies[i].parent
        while j >= 0:
            vj = model.v_index(j)
            data.M[vj, vi] = data.S0[vj] @ data.F0[vi].T               # RBDA T6.2
            data.M[vi, vj] = data.M[vj, vi].T
            j = model.bodies[j].parent


def factor_sparse(model) -> bool:
    """Factor ``M`` with the tree's sparsity (``M = Lᵀ L``) rather than densely (``L Lᵀ``).

    :func:`rbd.reference.crba.ltl` costs about ``Σ_k d_k² / 2`` multiply-adds (``d_k``:
    depth of degree of freedom ``k``), a dense Cholesky ``nv³ / 6`` done faster per
    operation by LAPACK but with a fixed cost per call.  Measured on the compiled twins
    (``docs/benchmarks.md``), the sparse one wins up to 12 degrees of freedom and
    wherever ``8 Σ_k d_k² ≤ nv³`` (the humanoid, branched trees), the dense one on chains.
    """
    depth = [0] * model.nv
    for k, lam in enumerate(model.dof_parent):
        depth[k] = 1 + (depth[lam] if lam >= 0 else 0)
    return model.nv <= 12 or 8 * sum(d * d for d in depth) <= model.nv ** 3


def factor(model, data):
    """The factor ``L`` of ``M``: ``M = Lᵀ L`` (:func:`rbd.reference.crba.ltl`) or ``L Lᵀ``.

    Raises ``numpy.linalg.LinAlgError`` when ``M`` is not positive definite.
    """
    if factor_sparse(model):
        data.L[:] = ltl(model, data.M)                                 # M = Lᵀ L
        data.factor_kind = "LtL"
    else:
        data.L[:] = cholesky(data.M, lower=True)                       # M = L Lᵀ
        data.factor_kind = "LLt"


def bias(model, data):
    """Bias forces ``h = C q̇ + g`` (RNEA at ``q̈ = 0``) and gravity ``g`` from ``IC``.

    Gravity is the base acceleration ``a_0 = [0; -g]``.  Alone, it accelerates every
    body of a subtree alike (``a_i = X_i,0 a_0 = [0; -R_iᵀ g]``), so the force it
    needs across joint ``i`` is ``IC_i a_i``: ``g_i = S_iᵀ IC_i [0; -R_iᵀ g]``.
    """
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])
    X_up, IC = data.X_up, data.IC
    # --- outward pass: accelerations and forces at zero joint acceleration
    for i, body in enumerate(model.bodies):
        p = body.parent
        data.a[i] = X_up[i] @ (a0 if p < 0 else data.a[p]) + data.c[i]  # S&G (11)
        data.f[i] = crf(data.v[i]) @ body.inertia @ data.v[i]          # S&G (21)
        data.f[i] = body.inertia @ data.a[i] + data.f[i]               # RBDA T5.1

    # --- inward pass: joint forces
    for i in range(model.nbodies - 1, -1, -1):
        vi, p = model.v_index(i), model.bodies[i].parent
        S = data.S_cols[vi].T
        data.h[vi] = S.T @ data.f[i]                                   # RBDA T5.1
        data.g[vi] = S.T @ IC[i] @ np.concatenate([np.zeros(3), -data.R[i].T @ model.gravity])
        if p >= 0:
            data.f[p] = data.f[p] + X_up[i].T @ data.f[i]              # RBDA T5.1
    data.h[:] = data.h + armature_bias(model, data.qd)                 # free joints' rotors


def jacobians(model, data):
    """World-aligned ``[ω; v]`` Jacobians at the frames of ``data.frames``.

    Column ``k`` of an ancestor joint is ``S⁰_k`` moved to the point ``x``:
    ``[ω; v] = [S⁰_ω; S⁰_v + ω × x]`` (the motion ``S⁰`` is given at the world origin).
    """
    for k, (i, point) in enumerate(zip(data.frame_body, data.frame_point, strict=True)):
        x = data.R[i] @ point + data.p[i]
        J = data.J_frames[k]
        J[:] = 0
        # --- walk to the root: the columns of the joints that move the frame
        j = int(i)
        while j >= 0:
            for col in range(model.v_index(j).start, model.v_index(j).stop):
                J[:3, col] = data.S0[col, :3]
                J[3:, col] = data.S0[col, 3:] + np.cross(data.S0[col, :3], x)
            j = model.bodies[j].parent


def solve(model, data, tau):
    """Forward dynamics from the factor: ``q̈ = M⁻¹ (τ - h)`` into ``data.qdd``."""
    if data.factor_kind == "LtL":
        data.qdd[:] = ltl_solve(model, data.L, (tau - data.h)[:, None])[:, 0]
    else:
        data.qdd[:] = cho_solve((data.L, True), tau - data.h)


def compute_all(model, data, q, qd, tau=None):
    """Every stage in order at ``(q, q̇)``; with ``tau``, also ``q̈`` by :func:`solve`.

    On sympy symbols (``data.dtype == object``) the factor and the solve are
    skipped (``data.factor_kind`` stays None): the factorizations here are numeric.
    """
    position(model, data, q)
    velocity(model, data, qd)
    composite_inertia(model, data)
    numeric = data.dtype != object
    if numeric:
        factor(model, data)
    bias(model, data)
    jacobians(model, data)
    if tau is not None and numeric:
        solve(model, data, tau)
    return data
