r"""Derivatives of inverse dynamics, one coordinate at a time (forward mode).

The derivation closest to the RNEA it differentiates: every pass quantity of
:func:`rbd.reference.rnea.rnea` (body coordinates) gets a tangent along one
coordinate ``x``, propagated outward through the subtree of the joint that owns
``x``, then inward to the root.  It costs ``O(nv · nbodies)`` spatial steps per
call, so the library's ``rbd.rnea_derivatives`` renders the world-frame
reorganization of Carpentier & Mansard (RSS 2018) instead
(:mod:`rbd.reference.derivatives`, compiled twin ``rbd/_kernels/derivatives.pyx``),
which builds all columns in one outward and one inward sweep.  This module is
the second, independent derivation the tests compare it with, and the one
tutorial 60 walks through.  The tags ``D (n)`` refer to the numbered equations
below.

Derivatives with respect to ``q`` are taken in the tangent space: column
``(j, k)`` is ``∂/∂δ f(q ⊕ δ)`` at ``δ = 0``, where ``δ`` moves degree of
freedom ``k`` of joint ``j`` (``q ⊕ δ = rbd.integrate(model, q, δ)``).  For
every joint type the successor frame then moves by the body-frame twist of
its motion subspace column ``s = S_j[:, k]``: ``T_J(q ⊕ δ) = T_J(q) exp(s δ)``
to first order, so that

.. math::

    \partial X_j = -(s\times) X_j  \qquad \text{D (1)}

(for spherical and free joints this is the local-increment convention; for
the others ``q ⊕ δ = q + δ``).  Joints whose ``S`` depends on ``q``
(universal, planar) add ``∂S_j`` and ``∂c_J`` (:func:`joint_partials`).  With
``v_J = S_j q̇_j``, the tangents of the outward pass at joint ``j`` are

.. math::

    \partial v_j &= -s \times (X_j v_{\lambda(j)}) + \partial v_J \quad \text{D (2)}\\
    \partial c_j &= \partial c_J + \partial v_j \times v_J + v_j \times \partial v_J
        \quad \text{D (3)}\\
    \partial a_j &= -s \times (X_j a_{\lambda(j)}) + \partial S_j \ddot q_j + \partial c_j
        \quad \text{D (4)}

(for ``x = q̇_{j,k}``: ``∂v_J = s``, ``∂v_j = s``, no transform term), at
its descendants ``i`` (joint data unchanged)

.. math::

    \partial v_i = X_i \partial v_{\lambda(i)}, \quad
    \partial a_i = X_i \partial a_{\lambda(i)} + \partial v_i \times v_J \quad \text{D (5)}

and everywhere in the subtree

.. math::

    \partial f_i = I_i \partial a_i + \partial v_i \times^* I_i v_i
        + v_i \times^* I_i \partial v_i \quad \text{D (6)}

(``f_ext`` is given in body coordinates, so it has no tangent).  Inward, with
``f_i`` the RNEA's accumulated body force:

.. math::

    \partial \tau_i = S_i^T \partial f_i + [i = j]\, \partial S_j^T f_j
        \quad \text{D (7)}, \qquad
    \partial f_{\lambda(i)} \mathrel{+}= X_i^T (\partial f_i + [i = j]\, s \times^* f_j)
        \quad \text{D (8)}

(D (8) is D (1) transposed: ``(−(s×) X)ᵀ f = Xᵀ (s ×* f)``).  ``∂τ/∂q̈ = M``
including the armature, which does not depend on ``q`` or ``q̇`` (a free joint's
armature adds :func:`rbd.reference.rnea.armature_bias_jacobian` to ``∂τ/∂q̇``).  Cost:
O(nv · nbodies).  Symbolic joints are refused (their second derivatives are
not generated).
"""

from __future__ import annotations

import numpy as np

from ..spatial import crf, crm
from .crba import crba
from .derivatives import check_joints, joint_partials
from .rnea import armature_bias_jacobian, outward_step


def rnea_passes(model, q, qd, qdd, f_ext):
    """RNEA's passes, keeping ``X_up, S, v, v_J, a`` and the accumulated forces ``f``."""
    nb = model.nbodies
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])
    X_up, S, v, v_J, a, f = ([None] * nb for _ in range(6))

    # --- outward pass: velocities, accelerations and forces
    for i, body in enumerate(model.bodies):
        c_i, f[i] = outward_step(model, i, q, qd, f_ext, X_up, S, v)   # f_i = v ×* I v − f_ext
        p, vi = body.parent, model.v_index(i)
        v_J[i] = S[i] @ qd[vi]
        a[i] = X_up[i] @ (a0 if p < 0 else a[p]) + c_i + S[i] @ qdd[vi]  # S&G (11)
        f[i] = body.inertia @ a[i] + f[i]                              # RBDA T5.1

    # --- inward pass: body forces
    for i in range(nb - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            f[p] = f[p] + X_up[i].T @ f[i]                             # RBDA T5.1
    return X_up, S, v, v_J, a, f


def tangent_column(model, j, k, wrt, passes, partials, q, qd, qdd):
    """``∂τ/∂x`` for ``x = δq_{j,k}`` (``wrt="q"``) or ``q̇_{j,k}`` (``wrt="v"``)."""
    X_up, S, v, v_J, a, f = passes
    dS, dcJ_dq, dcJ_dqd = partials[j]
    nb, s = model.nbodies, S[j][:, k]
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])
    dv, da, df = np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nb, 6))
    inside = np.zeros(nb, dtype=bool)

    # --- outward pass: tangents of velocities, accelerations and forces (subtree of j)
    for i in range(j, nb):
        p = model.bodies[i].parent
        inside[i] = i == j or (p >= 0 and inside[p])
        if not inside[i]:
            continue
        if i == j and wrt == "q":
            dv_J = dS[k] @ qd[model.v_index(j)]
            dv[i] = -crm(s) @ (v[i] - v_J[i]) + dv_J                   # D (2)
            a_p = X_up[i] @ (a0 if p < 0 else a[p])
            da[i] = -crm(s) @ a_p + dS[k] @ qdd[model.v_index(j)]      # D (4)
            dc = dcJ_dq[k]
        elif i == j:
            dv_J, dv[i], dc = s, s, dcJ_dqd[k]                          # D (2), q̇ column
        else:
            dv_J, dc = np.zeros(6), np.zeros(6)
            dv[i] = X_up[i] @ dv[p]                                    # D (5)
            da[i] = X_up[i] @ da[p]                                    # D (5)
        dc = dc + crm(dv[i]) @ v_J[i] + crm(v[i]) @ dv_J               # D (3)
        da[i] = da[i] + dc                                             # D (4), D (5)
        I_i = model.bodies[i].inertia
        df[i] = I_i @ da[i] + crf(dv[i]) @ I_i @ v[i] + crf(v[i]) @ I_i @ dv[i]  # D (6)

    # --- inward pass: tangents of joint forces
    dtau = np.zeros(model.nv)
    for i in range(nb - 1, -1, -1):
        vi, p = model.v_index(i), model.bodies[i].parent
        dtau[vi] = S[i].T @ df[i]                                      # D (7)
        push = df[i]
        if i == j and wrt == "q":
            dtau[vi] = dtau[vi] + dS[k].T @ f[i]                       # D (7)
            push = push + crf(s) @ f[i]                                # D (8)
        if p >= 0:
            df[p] = df[p] + X_up[i].T @ push                           # D (8)
    return dtau


def tau_partials(model, q, qd, qdd, f_ext=None):
    """``(∂τ/∂q, ∂τ/∂q̇)`` at ``(q, q̇, q̈)``, each ``(nv, nv)``, column by column."""
    check_joints(model)
    passes = rnea_passes(model, q, qd, qdd, f_ext)
    partials = [joint_partials(b.joint, q[model.q_index(i)], qd[model.v_index(i)])
                for i, b in enumerate(model.bodies)]
    dtau_dq, dtau_dv = np.zeros((model.nv, model.nv)), np.zeros((model.nv, model.nv))
    for j in range(model.nbodies):
        for k in range(model.bodies[j].joint.nv):
            col = model.v_index(j).start + k
            dtau_dq[:, col] = tangent_column(model, j, k, "q", passes, partials, q, qd, qdd)
            dtau_dv[:, col] = tangent_column(model, j, k, "v", passes, partials, q, qd, qdd)
    return dtau_dq, dtau_dv + armature_bias_jacobian(model, qd)         # free joints' rotors


def rnea_derivatives(model, q, qd, qdd, f_ext=None):
    """``(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈)`` of inverse dynamics, each ``(nv, nv)``.

    ``∂τ/∂q`` is taken in the tangent space (module notes); ``∂τ/∂q̈ = M``
    (:func:`rbd.reference.crba.crba`, armature included).
    """
    dtau_dq, dtau_dv = tau_partials(model, q, qd, qdd, f_ext)
    return dtau_dq, dtau_dv, crba(model, q)
