"""Forward kinematics, Jacobians, energies and the configuration manifold."""

from __future__ import annotations

import numpy as np

from ..spatial import as_scalar, identity, plux_parts
from .rnea import velocity_step


def neutral(model):
    """The neutral configuration: zero angles, identity quaternions."""
    return np.concatenate([b.joint.neutral() for b in model.bodies] or [np.zeros(0)])


def quaternion_coordinates(model):
    """Boolean mask ``(nq,)`` of the quaternion coordinates (spherical and free joints)."""
    mask = np.zeros(model.nq, dtype=bool)
    for i, body in enumerate(model.bodies):
        if body.joint.kind in ("spherical", "free"):
            start = model.q_index(i).start + (3 if body.joint.kind == "free" else 0)
            mask[start:start + 4] = True
    return mask


def random_configuration(model, rng):
    """A random configuration within the model's position limits.

    Each joint draws its own random value (uniform angles, uniform random
    quaternions); then a coordinate with both limits finite is drawn uniformly
    between them instead, and one with a single finite limit is clipped to it.
    Quaternion coordinates are never limited (a limit there would break the unit
    norm).
    """
    q = np.concatenate([b.joint.random(rng) for b in model.bodies] or [np.zeros(0)])
    limited = ~quaternion_coordinates(model)
    lower = np.where(limited, model.lower, -np.inf)
    upper = np.where(limited, model.upper, np.inf)
    both = np.isfinite(lower) & np.isfinite(upper)
    if np.any(both):
        q[both] = rng.uniform(lower[both], upper[both])
    return np.clip(q, lower, upper)


def integrate(model, q, v, dt=1.0):
    """Move ``q`` along the constant velocity ``v`` for ``dt`` on each joint's manifold."""
    return np.concatenate(
        [b.joint.integrate(q[model.q_index(i)], v[model.v_index(i)], dt)
         for i, b in enumerate(model.bodies)] or [np.zeros(0)]
    )


def difference(model, q0, q1):
    """The velocity ``v`` with ``integrate(model, q0, v, 1) == q1``."""
    return np.concatenate(
        [b.joint.difference(q0[model.q_index(i)], q1[model.q_index(i)])
         for i, b in enumerate(model.bodies)] or [np.zeros(0)]
    )


def world_poses(model, q, last=None):
    """World orientation ``R_i`` and origin ``p_i`` of bodies ``0..last`` (default: all).

    With ``X_up[i] = plux(E, r)`` (``E`` maps parent to body coordinates, ``r``
    is the body origin in parent coordinates), ``R_i = R_λ(i) Eᵀ`` and
    ``p_i = p_λ(i) + R_λ(i) r``; the ancestors of ``last`` have smaller indices.
    Returns two lists.
    """
    last = model.nbodies - 1 if last is None else last
    R, p = [None] * (last + 1), [None] * (last + 1)
    for i, body in enumerate(model.bodies[:last + 1]):
        E, r = plux_parts(body.joint.X_J(q[model.q_index(i)]) @ body.X_tree)   # S&G (8)
        R_p, p_p = (identity(3, E), np.zeros(3)) if body.parent < 0 else (R[body.parent],
                                                                           p[body.parent])
        R[i] = R_p @ E.T
        p[i] = p_p + R_p @ r
    return R, p


def forward_kinematics(model, q):
    """World poses of the body frames, shape ``(nbodies, 4, 4)``: ``[[R_i, p_i], [0, 1]]``."""
    R, p = world_poses(model, q)
    T = np.zeros((model.nbodies, 4, 4), dtype=np.result_type(R[0], p[0]) if R else float)
    for i in range(model.nbodies):
        T[i, :3, :3] = R[i]
        T[i, :3, 3] = p[i]
        T[i, 3, 3] = 1.0
    return T


def body_velocities(model, q, qd):
    """Spatial velocities of the bodies in body coordinates, ``(nbodies, 6)``."""
    nb = model.nbodies
    X_up, S, v = [None] * nb, [None] * nb, [None] * nb
    for i in range(nb):
        velocity_step(model, i, q, qd, X_up, S, v)                      # S&G (8)
    return np.array(v, dtype=np.result_type(v[0]) if v else float).reshape(nb, 6)


def jacobian(model, q, body, point=None):
    """Geometric Jacobian of a point on ``body``, world-aligned ``[ω; v]``, ``(6, nv)``.

    ``point`` is given in the body frame (default: the body origin).  Column
    block ``j`` (an ancestor joint) is the joint's motion subspace rotated to
    world axes and shifted to the point: ``ω = R_j S_ω``, ``v = R_j S_v + ω × (p - o_j)``.
    """
    i = model.body_index(body)
    R, o = world_poses(model, q, i)
    local = np.zeros(3) if point is None else np.asarray(point, dtype=float)
    p_world = R[i] @ local + o[i]
    J = np.zeros((6, model.nv), dtype=np.result_type(R[i], o[i]))
    j = i
    while j >= 0:
        S = model.bodies[j].joint.S(q[model.q_index(j)])
        w = R[j] @ S[:3]
        J[:3, model.v_index(j)] = w
        J[3:, model.v_index(j)] = R[j] @ S[3:] + np.cross(w.T, p_world - o[j]).T
        j = model.bodies[j].parent
    return J


def kinetic_energy(model, q, qd):
    """``T = ½ Σ v_iᵀ I_i v_i + ½ Σ armature_k q̇_k²``, that is ``½ q̇ᵀ M q̇``.

    The rotors' energy is included (MuJoCo's convention, where the energy is
    ``½ q̇ᵀ M q̇`` with the armature in ``M``), so that ``dT/dt + dU/dt = q̇ᵀ τ``
    holds with the armature.
    """
    v = body_velocities(model, q, qd)
    bodies = sum(v[i] @ b.inertia @ v[i] / 2 for i, b in enumerate(model.bodies))
    return as_scalar(bodies + np.sum(model.armature * np.square(qd)) / 2)


def body_centers_of_mass(model, q):
    """World position of each body's centre of mass, ``(nbodies, 3)``."""
    R, p = world_poses(model, q)
    return np.array([R[i] @ b.com + p[i] for i, b in enumerate(model.bodies)]
                    ).reshape(model.nbodies, 3)


def center_of_mass(model, q):
    """World position of the system's centre of mass, ``(3,)``."""
    masses = np.array([b.mass for b in model.bodies])
    if masses.sum() <= 0:
        return np.zeros(3)
    return masses @ body_centers_of_mass(model, q) / masses.sum()


def potential_energy(model, q):
    """Gravitational potential ``U = -Σ m_i gᵀ c_i`` (zero at the world origin)."""
    masses = np.array([b.mass for b in model.bodies])
    if model.nbodies == 0:
        return 0.0
    return as_scalar(-masses @ body_centers_of_mass(model, q) @ model.gravity)
