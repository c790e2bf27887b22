r"""Analytical derivatives of inverse and forward dynamics, in world coordinates.

After Carpentier & Mansard, *Analytical Derivatives of Rigid Body Dynamics
Algorithms*, Robotics: Science and Systems (RSS) 2018.  Inverse dynamics is
differentiated with every quantity expressed in world coordinates, where a
joint's motion moves its whole subtree rigidly and leaves everything else
alone; all ``nv`` columns then come out of one outward and one inward sweep.
Forward dynamics follows from the identity ``M q̈ = τ − h``:

.. math::

    \frac{\partial \ddot q}{\partial x} = -M^{-1}\,\frac{\partial \tau}{\partial x}
    \Big|_{\ddot q = \mathrm{FD}(q, \dot q, \tau)} \quad (x = q, \dot q), \qquad
    \frac{\partial \ddot q}{\partial \tau} = M^{-1}.

The tags ``W (n)`` refer to the numbered equations below; the compiled twin is
``rbd/_kernels/derivatives.pyx``.  A second, independent derivation, one
coordinate at a time on the body-coordinate RNEA, is
:mod:`rbd.reference.derivatives_tangent` (tutorial 60 derives it line by line).

**Convention.**  Derivatives with respect to ``q`` are taken in the tangent
space: column ``(j, k)`` is ``∂/∂δ f(q ⊕ δ)`` at ``δ = 0``, where ``δ`` moves
degree of freedom ``k`` of joint ``j`` (``q ⊕ δ = rbd.integrate(model, q, δ)``).
For every joint type the successor frame then moves by its motion-subspace
column ``S_j[:, k]`` (body coordinates): ``T_J(q ⊕ δ) = T_J(q) exp(S_j[:, k] δ)``
to first order (for spherical and free joints this is the local increment;
for the others ``q ⊕ δ = q + δ``).

**Outward sweep.**  With ``ⁱX_0`` the transform from world to body ``i``
coordinates, a joint's columns, the body velocities and accelerations in
world coordinates are (``v_0 = 0``, ``a_0 = −g``: gravity as a base
acceleration)

.. math::

    J_i &= {}^iX_0^{-1} S_i \quad \text{W (1)} \\
    v_i &= v_{\lambda(i)} + J_i \dot q_i \quad \text{W (2)} \\
    a_i &= a_{\lambda(i)} + J_i \ddot q_i + {}^iX_0^{-1} c_J + v_i \times J_i \dot q_i
        \quad \text{W (3)}

(``c_J = Ṡ q̇`` in body coordinates, non-zero for universal and planar joints),
and each body's inertia, momentum, force and *inertia variation*

.. math::

    I^0_i &= {}^iX_0^{T} I_i\, {}^iX_0, \quad h_i = I^0_i v_i \quad \text{W (4)} \\
    f_i &= I^0_i a_i + v_i \times^* h_i - {}^iX_0^{T} f^{ext}_i \quad \text{W (5)} \\
    B_i &= v_i \times^* I^0_i - I^0_i\, v_i \times + (\,\cdot \times^* h_i) \quad \text{W (6)}

(``B_i x = v_i ×* I⁰_i x − I⁰_i (v_i × x) + x ×* h_i``).  Written out with
``v_i = (ω, u)``, ``h_i = (n, f)`` and ``I⁰_i = [[Ī, ỹ], [−ỹ, m 1]]`` (``y = m c``,
both about the world origin), the last three columns of ``B_i`` vanish:

.. math::

    B_i = \begin{bmatrix} -(\bar I \tilde\omega - \tilde\omega \bar I)
        - (\tilde y \tilde u + \tilde u \tilde y) - \tilde n & 0 \\
        -2 \tilde f & 0 \end{bmatrix},

so ``B_i`` acts on the angular part of its argument only; the compiled twin
stores and multiplies the first three columns.  Moving joint ``j`` along
column ``s = J_j[:, k]`` turns the subtree of ``j`` about ``s``; every force in it
turns with it (``∂f = s ×* f``) except for two terms, which only depend on the
joint's parent ``λ = λ(j)``:

.. math::

    \frac{\partial V}{\partial q} = v_\lambda \times s, \quad
    \frac{\partial A}{\partial q} = a_\lambda \times s + v_\lambda \times
        \frac{\partial V}{\partial q}, \quad
    \frac{\partial A}{\partial \dot q} = (v_\lambda + v_j) \times s \quad \text{W (7)}

and a body ``i`` of the subtree has ``∂f_i = s ×* f_i + I⁰_i ∂A/∂q + B_i ∂V/∂q``
(along ``q̇_{j,k}``: ``∂f_i = I⁰_i ∂A/∂q̇ + B_i s``).  A joint whose ``S`` depends
on ``q`` (universal, planar) adds, with ``∂S = ∂S_j/∂q_{j,k}`` and
``∂c_J`` from :func:`joint_partials`,

.. math::

    \frac{\partial V}{\partial q} \mathrel{+}= e, \quad
    \frac{\partial A}{\partial q} \mathrel{+}= {}^jX_0^{-1}(\partial S \ddot q_j
        + \partial_q c_J) + (v_\lambda + v_j) \times e, \quad
    \frac{\partial A}{\partial \dot q} \mathrel{+}= {}^jX_0^{-1} \partial_{\dot q} c_J
        \quad \text{W (8)}

with ``e = ʲX_0⁻¹ ∂S q̇_j``.

**Inward sweep.**  The composite quantities ``I^C_i = Σ I⁰_k``, ``B^C_i = Σ B_k``,
``F_i = Σ f_k`` over the subtree of ``i`` give ``τ_i = J_iᵀ F_i``.  The joint's own
force columns are

.. math::

    \frac{\partial F}{\partial \ddot q} = I^C_i J_i, \quad
    \frac{\partial F}{\partial \dot q} = I^C_i \frac{\partial A}{\partial \dot q}
        + B^C_i J_i, \quad
    \frac{\partial F}{\partial q} = I^C_i \frac{\partial A}{\partial q}
        + B^C_i \frac{\partial V}{\partial q} \quad \text{W (9)}

and, since ``J_k`` turns with the subtree when ``k`` is in it, for ``j`` an
ancestor of ``i`` (or ``i`` itself)

.. math::

    \frac{\partial \tau_i}{\partial x_j} &= J_i^T \Big(I^C_i \frac{\partial A_j}{\partial x}
        + B^C_i \frac{\partial V_j}{\partial x}\Big) \quad \text{W (10)} \\
    \frac{\partial \tau_j}{\partial q_i} &= J_j^T \Big(\frac{\partial F_i}{\partial q}
        + J_i \times^* F_i\Big), \quad
    \frac{\partial \tau_j}{\partial \dot q_i} = J_j^T \frac{\partial F_i}{\partial \dot q},
    \quad M_{ji} = J_j^T I^C_i J_i \quad \text{W (11)}

(``∂V/∂q̇ = J``; the extra ``J_i ×* F_i`` is the ancestor's fixed axis seeing the
subtree's force turn).  A universal or planar joint adds ``(ⁱX_0⁻¹ ∂S)ᵀ F_i`` to
its own diagonal block, its axes changing with its own coordinates.  The
armature adds to ``M``'s diagonal and does not depend on ``q`` or ``q̇``; a free
joint's armature adds its velocity product's ``∂/∂q̇`` to ``∂τ/∂q̇``
(:func:`rbd.reference.rnea.armature_bias_jacobian`).  Cost:
``O(Σ depth)`` products of 6-vectors, against ``O(nv · nbodies)`` spatial steps
for the column-by-column derivation.  Symbolic joints are refused (their second
derivatives are not generated).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..spatial import crf, crm, inv_plux, skew
from .aba import aba
from .crba import ltl, ltl_inverse, ltl_solve
from .rnea import armature_bias_jacobian

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


def force_cross_matrix(h):
    """The matrix of ``x ↦ x ×* h``: ``[[−h̃_n, −h̃_f], [−h̃_f, 0]]`` for ``h = (h_n, h_f)``."""
    H = np.zeros((6, 6))
    H[:3, :3] = -skew(h[:3])
    H[:3, 3:] = -skew(h[3:])
    H[3:, :3] = -skew(h[3:])
    return H


def outward_sweep(model, q, qd, qdd, f_ext):
    """World-coordinate quantities of every body and joint column, W (1)–(8).

    Returns a dict of per-body lists: ``Xw`` (``ⁱX_0⁻¹``, body to world for
    motions), ``J``, ``dVdq``, ``dAdq``, ``dAdv`` (6 × nv_i), ``dSw`` (the world
    ``∂S`` columns of each coordinate of the joint), ``I0``, ``B``, ``f``.
    """
    nb = model.nbodies
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])
    out = {key: [None] * nb for key in ("X0", "Xw", "J", "v", "a", "f", "I0", "B",
                                          "dVdq", "dAdq", "dAdv", "dSw")}
    X0, Xw, J, v, a = out["X0"], out["Xw"], out["J"], out["v"], out["a"]
    for i, body in enumerate(model.bodies):
        p, qi, qdi, qddi = (body.parent, q[model.q_index(i)], qd[model.v_index(i)],
                            qdd[model.v_index(i)])
        X_J, S, _, c_J = body.joint.jcalc(qi, qdi)
        X_up = X_J @ body.X_tree                                        # S&G (8)
        X0[i] = X_up if p < 0 else X_up @ X0[p]                         # ⁱX_0
        Xw[i] = inv_plux(X0[i])
        v_p, a_p = (np.zeros(6), a0) if p < 0 else (v[p], a[p])
        J[i] = Xw[i] @ S                                                # W (1)
        v[i] = v_p + J[i] @ qdi                                         # W (2)
        a[i] = a_p + J[i] @ qddi + Xw[i] @ c_J + crm(v[i]) @ J[i] @ qdi  # W (3)

        I0 = out["I0"][i] = X0[i].T @ body.inertia @ X0[i]              # W (4)
        h = I0 @ v[i]                                                   # W (4)
        out["f"][i] = I0 @ a[i] + crf(v[i]) @ h                         # W (5)
        if f_ext is not None:
            out["f"][i] = out["f"][i] - X0[i].T @ f_ext[i]              # W (5)
        out["B"][i] = crf(v[i]) @ I0 - I0 @ crm(v[i]) + force_cross_matrix(h)  # W (6)

        dVdq = out["dVdq"][i] = crm(v_p) @ J[i]                         # W (7)
        dAdq = out["dAdq"][i] = crm(a_p) @ J[i] + crm(v_p) @ dVdq       # W (7)
        dAdv = out["dAdv"][i] = crm(v_p + v[i]) @ J[i]                  # W (7)
        dS, dcJ_dq, dcJ_dqd = joint_partials(body.joint, qi, qdi)
        out["dSw"][i] = [Xw[i] @ dS_k for dS_k in dS]
        for k in range(body.joint.nv):
            e = out["dSw"][i][k] @ qdi
            dVdq[:, k] += e                                             # W (8)
            dAdq[:, k] += (out["dSw"][i][k] @ qddi + Xw[i] @ dcJ_dq[k]
                           + crm(v_p + v[i]) @ e)                       # W (8)
            dAdv[:, k] += Xw[i] @ dcJ_dqd[k]                            # W (8)
    return out


def rnea_derivatives(model, q, qd, qdd, f_ext=None):
    """``(∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M)`` of inverse dynamics, each ``(nv, nv)``.

    One outward sweep (W (1)–(8)) and one inward sweep (W (9)–(11)) in world
    coordinates; ``∂τ/∂q`` in the tangent space (module notes); ``M`` includes
    the armature.
    """
    check_joints(model)
    w = outward_sweep(model, q, qd, qdd, f_ext)
    J, dVdq, dAdq, dAdv = w["J"], w["dVdq"], w["dAdq"], w["dAdv"]
    IC, BC, F = list(w["I0"]), list(w["B"]), list(w["f"])
    nv = model.nv
    dtau_dq, dtau_dv, M = np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros((nv, nv))

    for i in range(model.nbodies - 1, -1, -1):
        vi = model.v_index(i)
        dF_da = IC[i] @ J[i]                                            # W (9)
        dF_dv = IC[i] @ dAdv[i] + BC[i] @ J[i]                          # W (9)
        dF_dq = IC[i] @ dAdq[i] + BC[i] @ dVdq[i]                       # W (9)
        M[vi, vi] = J[i].T @ dF_da + np.diag(model.armature[vi])
        dtau_dv[vi, vi] = J[i].T @ dF_dv                                # W (10)
        dtau_dq[vi, vi] = J[i].T @ dF_dq + np.column_stack(
            [dSw_k.T @ F[i] for dSw_k in w["dSw"][i]])                  # W (10)
        turned = dF_dq + np.column_stack([crf(s) @ F[i] for s in J[i].T])  # W (11)
        j = i
        while model.bodies[j].parent >= 0:
            j = model.bodies[j].parent
            vj = model.v_index(j)
            M[vj, vi] = J[j].T @ dF_da                                  # W (11)
            M[vi, vj] = M[vj, vi].T
            dtau_dq[vj, vi] = J[j].T @ turned                           # W (11)
            dtau_dv[vj, vi] = J[j].T @ dF_dv                            # W (11)
            dtau_dq[vi, vj] = J[i].T @ (IC[i] @ dAdq[j] + BC[i] @ dVdq[j])  # W (10)
            dtau_dv[vi, vj] = J[i].T @ (IC[i] @ dAdv[j] + BC[i] @ J[j])     # W (10)
        p = model.bodies[i].parent
        if p >= 0:
            IC[p], BC[p], F[p] = IC[p] + IC[i], BC[p] + BC[i], F[p] + F[i]
    dtau_dv += armature_bias_jacobian(model, qd)                        # free joints' rotors
    return dtau_dq, dtau_dv, M


def minus_inverse_times(model, M, dtau_dq, dtau_dv):
    """``(−M⁻¹ ∂τ/∂q, −M⁻¹ ∂τ/∂q̇, M⁻¹)`` through ``M = Lᵀ L`` with the tree's sparsity
    (:func:`rbd.reference.crba.ltl`)."""
    L = ltl(model, M)
    return (-ltl_solve(model, L, dtau_dq), -ltl_solve(model, L, dtau_dv),
            ltl_inverse(model, L))


def aba_derivatives(model, q, qd, tau, f_ext=None):
    """``(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹)`` of forward dynamics, each ``(nv, nv)``.

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = aba(q, q̇, τ)`` (module notes), with ``M``
    from the same sweeps as ``∂τ/∂x``.
    """
    check_joints(model)
    qdd = aba(model, q, qd, tau, f_ext)
    dtau_dq, dtau_dv, M = rnea_derivatives(model, q, qd, qdd, f_ext)
    return minus_inverse_times(model, M, dtau_dq, dtau_dv)
