r"""Constraint rows of a closed loop: position error, Jacobian and acceleration bias.

Featherstone, *Rigid Body Dynamics Algorithms* (2008), §8.1–8.3: a loop
closure (or any bilateral constraint) adds rows

.. math::

    \phi(q) = 0, \qquad J(q)\,\dot q = 0, \qquad J\ddot q = \gamma,
    \quad \gamma = -\dot J\dot q,

and the joint-space equation of motion gains the constraint force
:math:`M\ddot q + h = \tau + J^T f` (RBDA §8.1).  For a body-fixed point the
rows of :math:`J` are those of the point's world-aligned Jacobian, and
:math:`\dot J\dot q` is the point's acceleration at :math:`\ddot q = 0` without
gravity (RBDA §8.2; spatial_v2's ``gamma_q`` computes the same terms for its
loop joints).  That acceleration comes out of the outward pass of the RNEA with
:math:`\ddot q = 0`: :math:`a_i = X_i a_{\lambda(i)} + c_i` (S&G (11)).

The resolved records are those of :mod:`rbd.constraints.kinds`.  Rows are in
world axes for the anchors (``[ω; v]`` for a frame anchor); a coupling's row
is :math:`q_j - p(q_s)`; a rolling constraint's rows are its own ``P(q_j)``
(velocity only: its ``φ`` is zero).
"""

from __future__ import annotations

import numpy as np

from ..spatial import crm, plux_parts, skew, so3_log
from .kinematics import jacobian
from .rnea import velocity_step


def constraint_motion(model, q, qd):
    """World poses ``R_i, p_i``, body velocities ``v_i`` and accelerations ``a_i`` at ``q̈ = 0``.

    ``v_i`` and ``a_i`` are spatial, in body coordinates, without gravity: ``a_i``
    holds the velocity-product terms only, so that ``J̇ q̇`` of any body-fixed
    point is read from it.
    """
    nb = model.nbodies
    X_up, S, v, a, R, p = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb, [
        None] * nb

    # --- outward pass: poses, velocities, velocity-product accelerations
    for i, body in enumerate(model.bodies):
        v_J, c_J = velocity_step(model, i, q, qd, X_up, S, v)           # S&G (8)
        c = c_J + crm(v[i]) @ v_J                                         # S&G (11)
        E, r = plux_parts(X_up[i])
        lam = body.parent
        if lam < 0:
            a[i], R[i], p[i] = c, E.T, r                                  # S&G (11), q̈ = 0
        else:
            a[i] = X_up[i] @ a[lam] + c                                   # S&G (11), q̈ = 0
            R[i], p[i] = R[lam] @ E.T, p[lam] + R[lam] @ r
    return R, p, v, a


def frame_motion(motion, i, T):
    """World pose, velocity and ``q̈ = 0`` acceleration of the frame ``T`` fixed on body ``i``.

    Returns ``(R, o, ω, ȯ, ω̇, ö)`` in world axes; ``i = -1`` (the world) is at rest.
    """
    if i < 0:
        zero = np.zeros(3)
        return T[:3, :3], T[:3, 3], zero, zero, zero, zero
    R, p, v, a = (m[i] for m in motion)
    r = T[:3, 3]
    w, vo, dw, dvo = v[:3], v[3:], a[:3], a[3:]
    vel = vo + skew(w) @ r                                                # RBDA §8.2
    acc = dvo + skew(dw) @ r + skew(w) @ vel                              # RBDA §8.2
    return R @ T[:3, :3], p + R @ r, R @ w, R @ vel, R @ dw, R @ acc


def _point_jacobian(model, q, i, T):
    """World-aligned ``[ω; v]`` Jacobian (6, nv) of the origin of ``T`` on body ``i``."""
    if i < 0:
        return np.zeros((6, model.nv))
    return jacobian(model, q, i, T[:3, 3])


def anchor_rows(model, q, motion, record):
    """``(φ, J, γ)`` of a point anchor (3 rows) or a frame anchor (6 rows ``[ω; v]``)."""
    kind, a, b, Ta, Tb = record
    Ra, oa, wa, va, dwa, acc_a = frame_motion(motion, a, Ta)
    Rb, ob, wb, vb, dwb, acc_b = frame_motion(motion, b, Tb)
    J = _point_jacobian(model, q, a, Ta) - _point_jacobian(model, q, b, Tb)   # RBDA §8.2
    if kind == "point":
        return oa - ob, J[3:], -(acc_a - acc_b)                           # RBDA §8.2
    phi = np.concatenate([so3_log(Ra @ Rb.T), oa - ob])
    gamma = -np.concatenate([dwa - dwb, acc_a - acc_b])                   # RBDA §8.2
    return phi, J, gamma


def coupling_rows(model, q, qd, record):
    """``(φ, J, γ)`` of ``q_j = p(q_s)``: one row ``e_j − p'(q_s) e_s``, ``γ = p''(q_s) q̇_s²``."""
    _, (qj, vj), source, c = record
    p = np.polynomial.polynomial.Polynomial(c)
    J = np.zeros((1, model.nv))
    J[0, vj] = 1.0
    if source is None:
        return np.array([q[qj] - c[0]]), J, np.zeros(1)
    qs, vs = source
    x, xd = q[qs], qd[vs]
    J[0, vs] = -p.deriv(1)(x)
    return np.array([q[qj] - p(x)]), J, np.array([p.deriv(2)(x) * xd * xd])


def rolling_rows(model, q, qd, record):
    """``(φ, J, γ)`` of a velocity constraint ``P(q_j) q̇_j = 0`` (Guenter & Lee's Eq. 16):
    ``J = P`` in the joint's columns, ``γ = −Ṗ q̇_j``, and ``φ = 0``: no position error exists."""
    _, sq, sv, P, P_dot_qd, m = record
    J = np.zeros((m, model.nv))
    J[:, sv] = P(q[sq])
    return np.zeros(m), J, -np.asarray(P_dot_qd(q[sq], qd[sv]), dtype=float)


def constraint_rows(model, q, qd, records):
    """Stacked ``(φ, J, γ)`` of the resolved constraints: ``(m,)``, ``(m, nv)``, ``(m,)``."""
    anchors = any(r[0] in ("point", "frame") for r in records)
    motion = constraint_motion(model, q, qd) if anchors else None
    parts = [coupling_rows(model, q, qd, r) if r[0] == "coupling"
             else rolling_rows(model, q, qd, r) if r[0] == "rolling"
             else anchor_rows(model, q, motion, r) for r in records]
    if not parts:
        return np.zeros(0), np.zeros((0, model.nv)), np.zeros(0)
    return (np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))
