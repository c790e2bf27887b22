r"""Equality constraints as MuJoCo's soft rows (``mj_instantiateEquality``, ``mj_Jdotv``).

A constraint kind of :mod:`rbd.constraints.kinds` becomes the rows MuJoCo makes
of the matching MJCF ``<equality>`` (MuJoCo's "Computation" chapter,
*Constraint model*, *Equality*; ``engine_core_constraint.c``):

* :class:`~rbd.constraints.PointAnchor` (``connect``): 3 rows, world axes,
  :math:`r = p_a - p_b` and :math:`J = J_{p_a} - J_{p_b}` (translation rows of
  :func:`rbd.reference.constraints.anchor_rows`);
* :class:`~rbd.constraints.FrameAnchor` (``weld``): those 3 rows of the two frame
  origins, then 3 rotation rows from the quaternion error
  :math:`e = \bar q_b \otimes q_a`: :math:`r = s\,e_{1:3}` and
  :math:`J = \tfrac{s}{2}\,(e_0 I - [e_{1:3}]_\times)\,R_b^T (J_{\omega_a} - J_{\omega_b})`
  with :math:`s` the ``torquescale`` (MuJoCo's
  :math:`\tfrac12\,\bar q_b \otimes \delta\omega \otimes q_a` written with matrices);
  :math:`e` carries MuJoCo's sign, that of its quaternions multiplied along the tree
  (:func:`weld_sign`), so that rows and forces are MuJoCo's past a half turn too;
* :class:`~rbd.constraints.JointCoupling` (``joint``): 1 row,
  :math:`r = q_j - p(q_s)`, :math:`J = e_j - p'(q_s)\,e_s`.

All rows of one constraint share one impedance, taken at the norm of the whole
error (``getposdim``), and the reference acceleration
:math:`a^{\mathrm{ref}} = -b\,J\dot q - k\,d\,r - \dot J \dot q` (``mj_referenceConstraint``):
MuJoCo subtracts the velocity product :math:`\dot J\dot q` of the anchors'
rows (``mj_Jdotv``), not of a coupling's.  Here :math:`\dot J \dot q` is
:math:`-\gamma` of :mod:`rbd.reference.constraints` for the translation rows,
and for the rotation rows :math:`G\,(\dot\omega_a - \dot\omega_b) + \dot G\,\delta\omega`
with :math:`G` the matrix above and :math:`\dot q_x = \tfrac12 (0, \omega_x) \otimes q_x`.
The rows act on rbd's velocity ``v``, so :math:`\dot J\dot q` is rbd's and the
free-joint correction of contact rows (:func:`rbd.constraints.mujoco_model.free_joint_bias`)
does not apply here.
"""

from __future__ import annotations

import numpy as np

from ..reference.constraints import constraint_motion, coupling_rows, frame_motion, jacobian
from ..spatial import rot_to_quat, skew
from .impedance import (
    clamp_solimp,
    impedance,
    reference_acceleration,
    regularizer,
    safe_solref,
    stiffness_damping,
)
from .mujoco_model import mujoco_reference_configuration

__all__ = ["equality_rows"]


def _wxyz(R) -> np.ndarray:
    x, y, z, w = rot_to_quat(R)
    return np.array([w, x, y, z])


def _qmul(p, q) -> np.ndarray:
    """Quaternion product ``p ⊗ q`` (scalar first)."""
    return np.concatenate([[p[0] * q[0] - p[1:] @ q[1:]],
                           p[0] * q[1:] + q[0] * p[1:] + np.cross(p[1:], q[1:])])


def _pure(w) -> np.ndarray:
    return np.concatenate([[0.0], w])


def _conj(q) -> np.ndarray:
    return np.concatenate([[q[0]], -q[1:]])


def _jacobian(model, q, body: int, T) -> np.ndarray:
    """World-aligned ``[ω; v]`` Jacobian of the origin of ``T`` on ``body`` (zero: world)."""
    if body < 0:
        return np.zeros((6, model.nv))
    return jacobian(model, q, body, T[:3, 3])


def anchor_terms(model, q, motion, record, torquescale: float):
    r"""MuJoCo's error ``r``, rows ``J`` and velocity product :math:`\dot J\dot q` of an anchor.

    ``record`` is ``("point" | "frame", a, b, T_a, T_b)``; a frame record gives
    the six rows of a weld (translation first), a point record the three of a
    connect.
    """
    kind, a, b, Ta, Tb = record
    Ra, oa, wa, _, dwa, acc_a = frame_motion(motion, a, Ta)
    Rb, ob, wb, _, dwb, acc_b = frame_motion(motion, b, Tb)
    J6 = _jacobian(model, q, a, Ta) - _jacobian(model, q, b, Tb)
    r, J, jdot = oa - ob, J6[3:], acc_a - acc_b
    if kind == "point":
        return r, J, jdot
    qb = _wxyz(Rb)
    e = _wxyz(Rb.T @ Ra)                                  # ē_b ⊗ q_a, scalar part ≥ 0
    qa = _qmul(qb, e)
    G = 0.5 * torquescale * (e[0] * np.eye(3) - skew(e[1:])) @ Rb.T
    dw = wa - wb
    qa_dot = 0.5 * _qmul(_pure(wa), qa)
    qb_dot = 0.5 * _qmul(_pure(wb), qb)
    G_dot_dw = 0.5 * torquescale * (_qmul(_qmul(_conj(qb_dot), _pure(dw)), qa)
                                    + _qmul(_qmul(_conj(qb), _pure(dw)), qa_dot))[1:]
    sign = weld_sign(model, q, record)               # MuJoCo's sign of e
    return (np.concatenate([r, sign * torquescale * e[1:]]), np.vstack([J, sign * G @ J6[:3]]),
            np.concatenate([jdot, sign * (G @ (dwa - dwb) + G_dot_dw)]))


def chain_quaternion(model, q, body: int, T=None) -> np.ndarray | None:
    r"""The world orientation of ``body`` (times ``T``'s rotation) as MuJoCo's kinematics
    multiplies it out: the product along the path from the root (formed here from the
    body towards the root) of constant quaternions
    (``X_tree``) and joint quaternions continuous in ``q`` (a hinge's
    :math:`(\cos\tfrac{\theta}{2}, \sin\tfrac{\theta}{2}\,a)`, a ball or free joint's
    own quaternion, sign kept), :math:`(w, x, y, z)`.

    Two such products of one rotation differ by a sign that is constant over the
    configuration space; None when the path holds a joint other than revolute,
    prismatic, spherical, free or fixed.
    """
    Q = np.array([1.0, 0.0, 0.0, 0.0]) if T is None else _wxyz(np.asarray(T)[:3, :3])
    while body >= 0:                # Q ← P_i ⊗ Q from the body to the root
        b = model.bodies[body]
        P = _wxyz(np.asarray(b.X_tree)[:3, :3].T)
        kind = b.joint.kind
        qi = q[model.q_index(body)] if b.joint.nq else np.zeros(0)
        if kind == "revolute":
            half = 0.5 * float(qi[0])
            P = _qmul(P, np.concatenate([[np.cos(half)], np.sin(half) * b.joint.axis]))
        elif kind in ("spherical", "free"):
            x, y, z, w = qi[-4:] / np.linalg.norm(qi[-4:])
            P = _qmul(P, np.array([w, x, y, z]))
        elif kind not in ("prismatic", "fixed"):
            return None
        Q = _qmul(P, Q)
        body = model.parent[body]
    return Q


def weld_sign(model, q, record) -> float:
    r"""The sign of MuJoCo's weld error :math:`\bar q_b \otimes q_a` (scalar part) against
    rbd's (scalar part :math:`\ge 0`): MuJoCo multiplies its body quaternions along the
    tree, so past a half turn of the error (a hinge wound once round, a free body's
    quaternion of the other sign) its error, rows and forces are rbd's negated.

    From :func:`chain_quaternion`, continuous in ``q``, and MuJoCo's error at its
    ``qpos0`` (:func:`mujoco_reference_configuration`), where a weld without a
    ``relpose`` quaternion is the identity with scalar part +1.  1.0 where the chain
    cannot be formed.
    """
    _, a, b, Ta, Tb = record

    def error(q):
        qa, qb = chain_quaternion(model, q, a, Ta), chain_quaternion(model, q, b, Tb)
        return None if qa is None or qb is None else _qmul(_conj(qb), qa)

    now, start = error(q), error(mujoco_reference_configuration(model))
    if now is None or start is None:
        return 1.0
    return float(np.sign(start[0]) * np.sign(now[0])) or 1.0


def _weights(constraint, record, attachment_weight, dof_weight) -> np.ndarray:
    """MuJoCo's approximate diagonal of the constraint's rows (``mj_diagApprox``)."""
    if record[0] == "coupling":
        _, (_, vj), source, _ = record
        return np.array([dof_weight[vj] + (0.0 if source is None else dof_weight[source[1]])])
    wa = attachment_weight(constraint.body_a)
    wb = attachment_weight(constraint.body_b)
    tran, rot = wa + wb
    return np.array([tran] * 3 + ([rot] * 3 if record[0] == "frame" else []))


def equality_rows(model, q, v, constraints, attachment_weight, dof_weight, timestep):
    r"""The soft rows of the active equality constraints, in ``constraints``' order.

    Parameters
    ----------
    model : rbd.Model
    q, v : ndarray
    constraints : list of constraint kinds
        The active ones (:func:`rbd.constraints.kinds.active_constraints`).
    attachment_weight : callable
        ``name -> (translation, rotation)`` inverse weight of the body carrying a
        body or frame name (zeros for None, the world).
    dof_weight : (nv,) ndarray
        MuJoCo's ``dof_invweight0``.
    timestep : float

    Returns
    -------
    J : (ne, nv) ndarray
    aref, R, pos : (ne,) ndarray
    ids : list of int
        The index of each row's constraint in ``constraints``.
    """
    motion = None
    J, aref, R, pos, ids = [], [], [], [], []
    for k, c in enumerate(constraints):
        if c.kind == "coupling":
            record = c.resolve(model)
            r, Jc, _ = coupling_rows(model, q, v, record)
            jdot = np.zeros(1)                          # MuJoCo's mj_Jdotv skips couplings
        else:
            record = c.anchors(model)
            if motion is None:
                motion = constraint_motion(model, q, v)
            r, Jc, jdot = anchor_terms(model, q, motion, record,
                                       getattr(c, "torquescale", 1.0))
        solimp = clamp_solimp(c.solimp)
        imp, _ = impedance(solimp, float(np.linalg.norm(r)), 0.0)       # getposdim
        kk, bb = stiffness_damping(safe_solref(c.solref, timestep), solimp[1])
        vel = Jc @ v
        J.append(Jc)
        aref.append(reference_acceleration(kk, bb, imp, vel, r, 0.0) - jdot)
        R.append([regularizer(imp, w) for w in _weights(c, record, attachment_weight,
                                                          dof_weight)])
        pos.append(r)
        ids += [k] * len(r)
    if not J:
        return np.zeros((0, model.nv)), np.zeros(0), np.zeros(0), np.zeros(0), []
    return (np.vstack(J), np.concatenate(aref), np.concatenate(R), np.concatenate(pos), ids)
