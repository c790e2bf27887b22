"""Recursive Newton–Euler inverse dynamics (Featherstone, RBDA Table 5.1).

Equation tags ``S&G (n)`` refer to Si & Guenter; ``RBDA T5.1`` to the
algorithm table in Featherstone's *Rigid Body Dynamics Algorithms* (2008).
Liu & Jain's §7 (:mod:`rbd.reference.local_frame_id`) gives the same two passes
written at each link's centre of mass.
"""

from __future__ import annotations

import numpy as np

from .._docstrings import shared_doc
from ..spatial import crf, crm, skew


def armed_free_joints(model):
    """The bodies whose free joint has a linear armature."""
    return [i for i, body in enumerate(model.bodies) if body.joint.kind == "free"
            and np.any(model.armature[model.v_index(i)][3:])]


def armature_bias(model, qd):
    """Velocity product of the free joints' armature: ``a ⊙ (ω × u)`` on their linear rows.

    The armature of a free joint acts, as in MuJoCo, on the velocity of the body
    origin in the parent frame, ``ṗ = R u`` (rbd's free joint velocity is
    ``[ω; u]`` in the body frame).  Its rate is ``p̈ = R (u̇ + ω × u)``, so the
    linear armature ``a`` (equal on the three rows, :meth:`rbd.Model.set_joint_properties`)
    needs ``Rᵀ a p̈ = a u̇ + a (ω × u)``: the first term is ``M``'s diagonal, the
    second this bias.  It does no work (``u · (ω × u) = 0``), so the kinetic energy
    stays ``½ q̇ᵀ M q̇``.  The angular rows have none: ``ω`` is the body-frame
    angular velocity in MuJoCo too, and the armature is isotropic on it.  Every
    other joint's rows are zero.  Compiled twin ``armature_bias`` in
    ``rbd/_kernels/_model.pxd``.

    Returns
    -------
    (nv,) ndarray
    """
    bias = np.zeros(model.nv, dtype=np.result_type(np.asarray(qd).dtype, float))
    for i in armed_free_joints(model):
        vi = model.v_index(i)
        w, u = qd[vi][:3], qd[vi][3:]
        bias[vi.start + 3:vi.stop] = model.armature[vi][3:] * (skew(w) @ u)
    return bias


def armature_bias_jacobian(model, qd):
    """``∂/∂q̇`` of :func:`armature_bias`: ``[-a ũ, a ω̃]`` on a free joint's linear rows."""
    jac = np.zeros((model.nv, model.nv))
    for i in armed_free_joints(model):
        vi = model.v_index(i)
        w, u = qd[vi][:3], qd[vi][3:]
        a = np.asarray(model.armature[vi][3:])[:, None]
        rows = slice(vi.start + 3, vi.stop)
        jac[rows, vi.start:vi.start + 3] = -a * skew(u)               # ∂(ω × u)/∂ω = -ũ
        jac[rows, vi.start + 3:vi.stop] = a * skew(w)                  # ∂(ω × u)/∂u = ω̃
    return jac


def velocity_step(model, i, q, qd, X_up, S, v):
    """Outward step of body ``i``: fills ``X_up[i]``, ``S[i]``, ``v[i]``; returns ``(v_J, c_J)``.

    The first lines of every recursive algorithm here (RNEA, ABA, Si & Guenter's
    recursion 1, the body velocities); compiled twin ``velocity_step`` in
    ``rbd/_kernels/rnea.pxd``.
    """
    body = model.bodies[i]
    X_J, S[i], v_J, c_J = body.joint.jcalc(q[model.q_index(i)], qd[model.v_index(i)])
    X_up[i] = X_J @ body.X_tree                                        # S&G (8)
    p = body.parent
    v[i] = X_up[i] @ (np.zeros(6) if p < 0 else v[p]) + v_J            # S&G (8)
    return v_J, c_J


def outward_step(model, i, q, qd, f_ext, X_up, S, v):
    """:func:`velocity_step`, then the bias acceleration ``c_i`` and bias force ``pA_i``.

    ``c_i = c_J + v_i × v_J`` and ``pA_i = v_i ×* I_i v_i − f_ext_i``; compiled
    twin ``outward_step`` in ``rbd/_kernels/rnea.pxd``.  Returns ``(c_i, pA_i)``.
    """
    v_J, c_J = velocity_step(model, i, q, qd, X_up, S, v)
    inertia = model.bodies[i].inertia
    c = c_J + crm(v[i]) @ v_J                                          # S&G (11)
    pA = crf(v[i]) @ inertia @ v[i]                                    # S&G (21)
    if f_ext is not None:
        pA = pA - f_ext[i]
    return c, pA


@shared_doc
def rnea(model, q, qd, qdd, f_ext=None):
    """Joint forces ``tau`` that produce ``qdd`` at state ``(q, qd)``.

    Parameters
    ----------
    {reference_model_q}
    qd, qdd : (nv,) ndarray
    {reference_f_ext}

    Returns
    -------
    tau : (nv,) ndarray

    Notes
    -----
    Outward pass (velocities, accelerations and forces; its first lines are
    :func:`outward_step`), then inward pass (joint forces):

    .. math::

        v_i = X_i v_{\\lambda(i)} + S_i \\dot q_i, \\quad
        c_i = c_{J,i} + v_i \\times S_i \\dot q_i, \\quad
        a_i = X_i a_{\\lambda(i)} + S_i \\ddot q_i + c_i,

        f_i = I_i a_i + v_i \\times^* I_i v_i - f^{ext}_i, \\quad
        \\tau_i = S_i^T f_i, \\quad f_{\\lambda(i)} \\mathrel{+}= X_i^T f_i.

    Gravity enters as a fictitious base acceleration ``a_0 = -[0; g]``.  The
    joints' rotor inertia adds ``armature_i ⊙ q̈_i`` to ``τ_i`` (``M`` gains
    ``diag(armature)``, see :func:`rbd.reference.crba.crba`), and a free joint's
    armature its velocity product (:func:`armature_bias`).
    """
    nb = model.nbodies
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])
    X_up, S, v, a, f = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb

    # --- outward pass: velocities, accelerations and forces
    for i, body in enumerate(model.bodies):
        c_i, f[i] = outward_step(model, i, q, qd, f_ext, X_up, S, v)   # f_i = v ×* I v − f_ext
        p = body.parent
        a[i] = X_up[i] @ (a0 if p < 0 else a[p]) + c_i                 # S&G (11)
        a[i] = a[i] + S[i] @ qdd[model.v_index(i)]                     # S&G (11)
        f[i] = body.inertia @ a[i] + f[i]                              # RBDA T5.1

    # --- inward pass: joint forces
    tau = np.zeros(model.nv, dtype=np.result_type(f[0] if nb else 0.0))
    for i in range(nb - 1, -1, -1):
        vi = model.v_index(i)
        tau[vi] = S[i].T @ f[i] + model.armature[vi] * qdd[vi]         # RBDA T5.1, rotor
        p = model.bodies[i].parent
        if p >= 0:
            f[p] = f[p] + X_up[i].T @ f[i]                             # RBDA T5.1
    return tau + armature_bias(model, qd)


def nonlinear_effects(model, q, qd):
    """Bias forces ``h = C(q, qd) qd + g(q)``: RNEA with zero acceleration."""
    return rnea(model, q, qd, np.zeros(model.nv))


def gravity_forces(model, q):
    """Generalized gravity ``g(q)``: RNEA with zero velocity and acceleration."""
    return rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
