r"""MuJoCo's passive forces (``mj_passive``, ``engine_passive.c``): joint damping, the springs
of hinges, slides, balls and free joints (``mj_springdamper``), the fixed and spatial
tendons' springs and dampers (:func:`.tendon_rows.tendon_passive_force`) and the fluid
forces (:mod:`.fluid`), as rbd's generalized force :math:`\tau_p` of the forward pass
(:func:`.forward.forward`: :math:`a_0 = M^{-1}(\tau + \tau_p - h)`).

The compiled twin is ``rbd/_kernels/passive.pyx``.
"""

from __future__ import annotations

import numpy as np

from .fluid import fluid_force, has_fluid
from .mujoco_model import disabled, joint_softness, options, own_slices
from .tendon_rows import tendon_passive_force, tendons


def _quat_difference(qa, qb) -> np.ndarray:
    r"""MuJoCo's ``mju_subQuat``: the rotation vector :math:`r` (angle in
    :math:`[-\pi, \pi]`) with :math:`q_b \otimes \exp(r) = q_a`, quaternions
    :math:`(w, x, y, z)`."""
    wb, vb = qb[0], -np.asarray(qb[1:], float)                  # conj(qb)
    wa, va = qa[0], np.asarray(qa[1:], float)
    w = wb * wa - vb @ va
    vec = wb * va + wa * vb + np.cross(vb, va)
    sin = float(np.linalg.norm(vec))
    if sin == 0.0:
        return np.zeros(3)
    angle = 2.0 * np.arctan2(sin, w)
    if angle > np.pi:
        angle -= 2.0 * np.pi
    return vec / sin * angle


def ball_free_spring_force(model, q) -> np.ndarray:
    r"""MuJoCo's springs of ball and free joints (``mj_springdamper``), as rbd's
    generalized force.

    A ball joint: the torque :math:`-k\,r` in the body frame, :math:`r` the rotation
    vector from ``qpos_spring`` to the normalized joint quaternion (``mju_subQuat``,
    :func:`_quat_difference`).  A free joint adds the world force
    :math:`-k\,(p - p_{\mathrm{spring}})`, rbd's :math:`R^T f` on its linear
    coordinates; ``qpos_spring`` is the body's pose in the file (MuJoCo's ``qpos0``).
    """
    from ..spatial import quat_to_rot

    given = getattr(model, "mujoco_joints", None) or {}
    force = np.zeros(model.nv)
    for (_, b, qs), (_, _, vs) in zip(own_slices(model, "q"), own_slices(model, "v"),
                                      strict=True):
        soft = given.get(b.joint_name, {})
        k = soft.get("stiffness", 0.0)
        if b.joint.kind not in ("spherical", "free") or not k:
            continue
        spring = np.asarray(soft["qpos_spring"], float)
        xyzw = np.asarray(q[qs][-4:], float)
        xyzw = xyzw / np.linalg.norm(xyzw)
        torque = -k * _quat_difference(np.r_[xyzw[3], xyzw[:3]], spring[-4:])
        force[vs.start:vs.start + 3] += torque
        if b.joint.kind == "free":      # rbd's free v is [ω; u] in the body frame
            f_world = -k * (np.asarray(q[qs][:3], float) - spring[:3])
            force[vs.start + 3:vs.stop] += quat_to_rot(xyzw).T @ f_world
    return force


def passive_force(model, q, v, poses=None) -> np.ndarray:
    r"""MuJoCo's passive force :math:`-\mathrm{damping}\,v - k\,(q - q_{\mathrm{spring}})
    + \tau_{\mathrm{fluid}}`
    (``mj_passive``; springs of hinges and slides, :func:`joint_softness`, of ball and
    free joints, :func:`ball_free_spring_force`; the fluid
    forces of ``<option density viscosity wind>``, :func:`.fluid.fluid_force`).

    MuJoCo's ``spring`` and ``damper`` disable flags drop the springs or the damping;
    with both disabled there is no passive force at all, fluid forces included.
    ``poses``: :func:`rbd.forward_kinematics` at ``q`` when the caller has it (fluid).
    """
    no_spring, no_damper = disabled(model, "spring"), disabled(model, "damper")
    if no_spring and no_damper:
        return np.zeros(model.nv)
    soft = joint_softness(model)
    force = np.zeros(model.nv) if no_damper else -np.asarray(model.damping, float) * v
    if tendons(model):
        force += tendon_passive_force(model, q, v, spring=not no_spring, damper=not no_damper)
    if not no_spring and np.any(soft["stiffness"]):
        for (_, b, qs), (_, _, vs) in zip(own_slices(model, "q"), own_slices(model, "v"),
                                          strict=True):
            if b.joint.kind in ("revolute", "prismatic"):
                j = vs.start
                force[j] -= soft["stiffness"][j] * (q[qs.start] - soft["springref"][j])
        force += ball_free_spring_force(model, q)
    if has_fluid(model):
        force += fluid_force(model, q, v, options(model), poses=poses)
    return force
