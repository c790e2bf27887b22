r"""Analytical derivatives of inverse and forward dynamics.

After Carpentier & Mansard, *Analytical Derivatives of Rigid Body Dynamics
Algorithms*, Robotics: Science and Systems (RSS) 2018: the partial derivatives
of the RNEA are obtained by differentiating each of its passes, and those of
forward dynamics follow from the identity ``M q̈ = τ − h`` (their Section on
forward dynamics):

.. math::

    \frac{\partial \ddot q}{\partial x} = -M^{-1}\,\frac{\partial \tau}{\partial x}
    \Big|_{\ddot q = \mathrm{FD}(q, \dot q, \tau)} \quad (x = q, \dot q), \qquad
    \frac{\partial \ddot q}{\partial \tau} = M^{-1}.

Carpentier & Mansard write the recursion in world coordinates; here it is
the same differentiation carried out on the body-coordinate passes of
:func:`rbd.reference.rnea.rnea`, one coordinate at a time (forward mode):
the tangent of every pass quantity along ``x`` is propagated outward through
the subtree of the joint that owns ``x``, then inward to the root.  The tags
``D (n)`` refer to the numbered equations below.

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
including the armature, which does not depend on ``q`` or ``q̇``.  Cost:
O(nv · nbodies).  Symbolic joints are refused (their second derivatives are
not generated).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..spatial import crf, crm
from .aba import aba, mass_matrix_inverse
from .crba import crba
from .rnea import outward_step

#: Joint kinds whose derivatives are implemented.
DIFFERENTIABLE = ("fixed", "revolute", "prismatic", "helical", "universal", "spherical",
                  "free", "planar")


def check_joints(model):
    """Raise :class:`~rbd.errors.ModelError` naming the first joint without derivatives."""
    for body in model.bodies:
        if body.joint.kind not in DIFFERENTIABLE:
            raise ModelError(
                f"joint {body.joint_name!r}: the analytical derivatives handle the joint "
                f"kinds {', '.join(DIFFERENTIABLE)}, not {body.joint.kind!r}; "
                "differentiate such a model by finite differences of rbd.rnea / rbd.aba")


def joint_partials(joint, q_i, qd_i):
    """``(∂S, ∂c_J/∂q, ∂c_J/∂q̇)`` of one joint, each a list over its degrees of freedom.

    ``∂S[k] = Ṡ(q, e_k)`` (as ``Ṡ(q, q̇) = Σ_k ∂S/∂q_k q̇_k``); ``∂c_J/∂q̇_k =
    Ṡ(q, e_k) q̇ + Ṡ(q, q̇) e_k`` since ``c_J = Ṡ(q, q̇) q̇``; ``∂c_J/∂q_k`` needs the
    second derivative of ``S``, written out for the two joints whose ``S`` varies.
    """
    nv = joint.nv
    E = np.eye(nv)
    dS = [joint.S_dot(q_i, E[k]) for k in range(nv)]
    Sd = joint.S_dot(q_i, qd_i)
    dcJ_dqd = [dS[k] @ qd_i + Sd[:, k] for k in range(nv)]
    dcJ_dq = [np.zeros(6) for _ in range(nv)]
    if joint.kind == "universal":
        # c_J = [-(a₂ × w) q̇₁q̇₂; 0], w = R₂ᵀa₁, ∂w/∂q₂ = -(a₂ × w)
        w = joint.S(q_i)[:3, 0]
        a2 = joint.axis2
        dcJ_dq[1][:3] = np.cross(a2, np.cross(a2, w)) * qd_i[0] * qd_i[1]
    elif joint.kind == "planar":
        # c_J = [0; (∂S₀/∂θ q̇_x + ∂S₁/∂θ q̇_y) θ̇], ∂²S/∂θ² = -S on the linear rows
        S = joint.S(q_i)
        dcJ_dq[2] = -(S[:, 0] * qd_i[0] + S[:, 1] * qd_i[1]) * qd_i[2]
    return dS, dcJ_dq, dcJ_dqd


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
    return dtau_dq, dtau_dv


def rnea_derivatives(model, q, qd, qdd, f_ext=None):
    """``(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈)`` of inverse dynamics, each ``(nv, nv)``.

    ``∂τ/∂q`` is taken in the tangent space (module notes); ``∂τ/∂q̈ = M``
    (:func:`rbd.reference.crba.crba`, armature included).
    """
    dtau_dq, dtau_dv = tau_partials(model, q, qd, qdd, f_ext)
    return dtau_dq, dtau_dv, crba(model, q)


def aba_derivatives(model, q, qd, tau, f_ext=None):
    """``(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ)`` of forward dynamics, each ``(nv, nv)``.

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = aba(q, q̇, τ)`` and ``∂q̈/∂τ = M⁻¹``
    (Carpentier & Mansard; module notes).
    """
    check_joints(model)
    qdd = aba(model, q, qd, tau, f_ext)
    dtau_dq, dtau_dv = tau_partials(model, q, qd, qdd, f_ext)
    M_inv = mass_matrix_inverse(model, q)
    return -M_inv @ dtau_dq, -M_inv @ dtau_dv, M_inv
