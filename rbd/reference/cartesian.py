r"""Conversions between generalized and Cartesian quantities (Liu & Jain, §6, Eqs. 60–71).

A tree of ``m`` links has ``n = model.nv`` generalized velocities but ``6m``
Cartesian ones: the velocity :math:`v_k` of each link's centre of mass (COM) and
its angular velocity :math:`\omega_k`, in world axes.  Stacking the per-link
Jacobians of :mod:`rbd.reference.lagrangian` gives :math:`V = J v` (L&J 60) with

.. math:: V = (v_1, \dots, v_m, \omega_1, \dots, \omega_m),\qquad J = (J_v; J_\omega).

* **Velocities, Cartesian → generalized** is over-determined (``6m ≥ n``):
  :math:`\dot q = J^+ V` (L&J 61) is the least-squares answer, exact when
  ``V`` is reachable; the residual measures how far ``V`` breaks the joints.
  The block-diagonal form (L&J 62–66) works joint by joint with the relative
  angular velocity :math:`\hat\omega_k` of each link in its parent's axes.
* **Forces, Cartesian → generalized** is a product with :math:`J^T` (L&J 67, 69).
* **Forces, generalized → Cartesian** is under-determined (``n ≤ 6m``):
  :math:`(f; \tau) = (J_v^T\ J_\omega^T)^+ Q` (L&J 70) is the minimum-norm choice
  among many; per joint, :math:`\hat\tau_k = (\hat J_{\omega k}^T)^+ Q_k` (L&J 71).

Notation.  :math:`R^0_k` is the world orientation of link ``k``'s frame,
:math:`o_k` its origin, :math:`x_k` its COM; ``p(k)`` is its parent (the world
for a root, with :math:`R^0_{p} = \mathbf 1`).  The local angular Jacobian of
joint ``k`` in the parent's axes is :math:`\hat J_{\omega k} = R_k S_{\omega,k}`,
with :math:`R_k = R^{0T}_{p(k)} R^0_k`.  Arrays of per-link vectors have shape
``(m, 3)``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .kinematics import forward_kinematics
from .lagrangian import com_jacobians

__all__ = [
    "stacked_jacobian",
    "cartesian_velocities",
    "generalized_velocities",
    "connectivity_matrix",
    "parent_rotations",
    "local_angular_jacobians",
    "local_jacobians",
    "block_diagonal",
    "relative_angular_velocities",
    "generalized_velocities_blockwise",
    "point_jacobians",
    "generalized_forces",
    "body_torques_from_joint_torques",
    "generalized_forces_from_joint_torques",
    "cartesian_forces",
    "joint_torques",
    "body_frame_forces",
]


# --- velocities --------------------------------------------------------------------------

def stacked_jacobian(model, q) -> np.ndarray:
    """``J = (J_v1; …; J_vm; J_ω1; …; J_ωm)``, shape ``(6m, nv)`` (L&J 60)."""
    Jk = com_jacobians(model, q)
    return np.vstack([Jk[:, :3].reshape(-1, model.nv), Jk[:, 3:].reshape(-1, model.nv)])


def cartesian_velocities(model, q, v) -> np.ndarray:
    """``V = J v`` = (COM velocities, angular velocities), shape ``(6m,)`` (L&J 60)."""
    return stacked_jacobian(model, q) @ np.asarray(v, dtype=float)        # L&J (60)


def generalized_velocities(model, q, V) -> tuple[np.ndarray, float]:
    r"""``q̇ = J⁺ V`` by least squares (L&J 61).

    Returns
    -------
    qd : (nv,) ndarray
    residual : float
        :math:`|J\dot q - V|`: zero (to rounding) when ``V`` is reachable, otherwise
        the size of the part of ``V`` that would pull the joints apart.
    """
    J = stacked_jacobian(model, q)
    qd = np.linalg.lstsq(J, np.asarray(V, dtype=float), rcond=None)[0]  # L&J (61)
    return qd, float(np.linalg.norm(J @ qd - V))


def connectivity_matrix(model) -> np.ndarray:
    """``D``, ``(3m, 3m)``: identity blocks on the diagonal, ``−1`` at ``(k, p(k))`` (L&J 64)."""
    m = model.nbodies
    D = np.eye(3 * m)
    for k, body in enumerate(model.bodies):
        if body.parent >= 0:
            D[3 * k:3 * k + 3, 3 * body.parent:3 * body.parent + 3] = -np.eye(3)  # L&J (62)
    return D


def _world_rotations(model, q):
    T = forward_kinematics(model, np.asarray(q, dtype=float))
    return T[:, :3, :3], T[:, :3, 3]


def parent_rotations(model, q) -> np.ndarray:
    """``R = blockdiag(R0_p(1), …, R0_p(m))``, ``(3m, 3m)`` (L&J 63)."""
    R0, _ = _world_rotations(model, q)
    R = np.zeros((3 * model.nbodies, 3 * model.nbodies))
    for k, body in enumerate(model.bodies):
        R[3 * k:3 * k + 3, 3 * k:3 * k + 3] = np.eye(3) if body.parent < 0 else R0[body.parent]
    return R


def local_jacobians(model, q) -> list[np.ndarray]:
    r"""Per joint, ``(Ĵ_ωk; Ĵ_vk) = (R_k S_ω; R_k S_v)``, ``(6, n_k)``: the joint's
    relative angular velocity and origin velocity in the parent's axes (L&J 62)."""
    q = np.asarray(q, dtype=float)
    R0, _ = _world_rotations(model, q)
    out = []
    for k, body in enumerate(model.bodies):
        R_p = np.eye(3) if body.parent < 0 else R0[body.parent]
        R_k = R_p.T @ R0[k]                                                # R0_k = R0_p R_k
        S = body.joint.S(q[model.q_index(k)])
        out.append(np.vstack([R_k @ S[:3], R_k @ S[3:]]))
    return out


def local_angular_jacobians(model, q) -> list[np.ndarray]:
    """``Ĵ_ωk``, ``(3, n_k)``, with ``ω_k − ω_p(k) = R0_p(k) Ĵ_ωk q̇_k`` (L&J 50, 62)."""
    return [J[:3] for J in local_jacobians(model, q)]


def block_diagonal(blocks: list[np.ndarray]) -> np.ndarray:
    """``blockdiag(B_1, …, B_m)`` of rectangular blocks (L&J 63)."""
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    out = np.zeros((rows, cols))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def relative_angular_velocities(model, q, omega) -> np.ndarray:
    """``ω̂ = Rᵀ D ω``: each link's angular velocity relative to its parent, in the
    parent's axes, ``(m, 3)`` (L&J 65); ``omega`` is ``(m, 3)`` in world axes."""
    w = np.asarray(omega, dtype=float).reshape(-1)
    R, D = parent_rotations(model, q), connectivity_matrix(model)
    return (R.T @ D @ w).reshape(-1, 3)                                    # L&J (65)


def generalized_velocities_blockwise(model, q, V) -> np.ndarray:
    r"""``q̇`` joint by joint from the Cartesian velocities ``V`` (L&J 62–66).

    A joint whose rotation determines its velocity (``Ĵ_ωk`` of full column
    rank: revolute, helical, universal, spherical) uses
    :math:`\dot q_k = \hat J_{\omega k}^+\hat\omega_k` (L&J 66).  A joint with
    translational freedom (prismatic, planar, free) also needs the relative
    velocity of its origin, :math:`\hat v_k = R^{0T}_{p}(\dot o_k - \dot o_p - \omega_p\times
    (o_k - o_p))`, and solves :math:`(\hat J_{\omega k}; \hat J_{vk})\dot q_k =
    (\hat\omega_k; \hat v_k)` (the last paragraph of L&J §6.1).
    """
    q = np.asarray(q, dtype=float)
    m = model.nbodies
    V = np.asarray(V, dtype=float)
    v_com, omega = V[:3 * m].reshape(m, 3), V[3 * m:].reshape(m, 3)
    R0, o = _world_rotations(model, q)
    x = np.array([R0[k] @ b.com + o[k] for k, b in enumerate(model.bodies)]).reshape(-1, 3)
    o_dot = v_com + np.cross(omega, o - x)                                # origin velocities
    w_hat = relative_angular_velocities(model, q, omega)                   # L&J (65)
    qd = np.zeros(model.nv)
    for k, (body, Jh) in enumerate(zip(model.bodies, local_jacobians(model, q), strict=True)):
        n_k = Jh.shape[1]
        if n_k == 0:
            continue
        if np.linalg.matrix_rank(Jh[:3]) == n_k:
            qd[model.v_index(k)] = np.linalg.pinv(Jh[:3]) @ w_hat[k]      # L&J (66)
            continue
        p = body.parent
        R_p, o_p, w_p, od_p = ((np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3)) if p < 0
                               else (R0[p], o[p], omega[p], o_dot[p]))
        v_hat = R_p.T @ (o_dot[k] - od_p - np.cross(w_p, o[k] - o_p))
        qd[model.v_index(k)] = np.linalg.pinv(Jh) @ np.concatenate([w_hat[k], v_hat])
    return qd


# --- forces ------------------------------------------------------------------------------

def point_jacobians(model, q, points=None) -> np.ndarray:
    r"""``J'_vk = ∂r_k/∂q`` of a point ``r_k`` fixed on each link, ``(m, 3, nv)`` (L&J 67).

    ``points`` are world positions ``(m, 3)`` (default: the COMs, where
    :math:`J'_{vk} = J_{vk}`).  The point moves with
    :math:`v_k + \omega_k\times(r_k - x_k)`.
    """
    Jk = com_jacobians(model, q)
    Jv = Jk[:, :3].copy()
    if points is not None:
        R0, o = _world_rotations(model, q)
        for k, b in enumerate(model.bodies):
            lever = np.asarray(points[k], dtype=float) - (R0[k] @ b.com + o[k])
            Jv[k] -= np.cross(lever[:, None], Jk[k, 3:], axis=0)           # J_v − [r − x] J_ω
    return Jv


def generalized_forces(model, q, f, tau, points=None) -> np.ndarray:
    r"""``Q = Σ_k J'_vkᵀ f_k + J_ωkᵀ τ'_k`` (L&J 67).

    Parameters
    ----------
    f : (m, 3) array_like
        World-axes forces, ``f_k`` applied at ``points[k]`` (default: the COM).
    tau : (m, 3) array_like
        World-axes body torques :math:`\tau'_k` (not counting the moment of ``f_k``).
    points : (m, 3) array_like, optional
    """
    Jv = point_jacobians(model, q, points)
    Jw = com_jacobians(model, q)[:, 3:]
    f, tau = np.asarray(f, dtype=float), np.asarray(tau, dtype=float)
    return sum((Jv[k].T @ f[k] + Jw[k].T @ tau[k] for k in range(model.nbodies)),
               np.zeros(model.nv))                                         # L&J (67)


def body_torques_from_joint_torques(model, q, tau_hat) -> np.ndarray:
    r"""Body torques ``τ' = (Rᵀ D)ᵀ τ̂``, ``(m, 3)`` (L&J 68).

    Joint torque :math:`\hat\tau_k` (in the parent's axes) acts as
    :math:`+R^0_{p(k)}\hat\tau_k` on link ``k`` and as its opposite on the parent.
    """
    R, D = parent_rotations(model, q), connectivity_matrix(model)
    return ((R.T @ D).T @ np.asarray(tau_hat, dtype=float).reshape(-1)).reshape(-1, 3)  # (68)


def generalized_forces_from_joint_torques(model, q, f, tau_hat, points=None) -> np.ndarray:
    """``Q = J'_vᵀ f + Ĵ_ωᵀ τ̂`` (L&J 69), with ``Ĵ_ω = blockdiag(Ĵ_ω1, …)``."""
    J_hat = block_diagonal(local_angular_jacobians(model, q))             # L&J (63)
    Jv = point_jacobians(model, q, points)
    f = np.asarray(f, dtype=float)
    Q_f = sum((Jv[k].T @ f[k] for k in range(model.nbodies)), np.zeros(model.nv))
    return Q_f + J_hat.T @ np.asarray(tau_hat, dtype=float).reshape(-1)    # L&J (69)


def cartesian_forces(model, q, Q) -> tuple[np.ndarray, np.ndarray]:
    r"""A minimum-norm ``(f, τ)`` at the COMs with ``J_vᵀ f + J_ωᵀ τ = Q`` (L&J 70).

    Any forces in the null space of :math:`(J_v^T\ J_\omega^T)` — internal
    forces that the joints absorb — may be added without changing ``Q``.

    Returns
    -------
    f, tau : (m, 3) ndarray
    """
    J = stacked_jacobian(model, q)
    F = np.linalg.pinv(J.T) @ np.asarray(Q, dtype=float)                  # L&J (70)
    m = model.nbodies
    return F[:3 * m].reshape(m, 3), F[3 * m:].reshape(m, 3)


def joint_torques(model, q, Q) -> np.ndarray:
    r"""Joint torques ``τ̂_k = (Ĵ_ωkᵀ)⁺ Q_k`` in the parents' axes, ``(m, 3)`` (L&J 71).

    Raises
    ------
    ModelError
        If a joint has a translational degree of freedom that no torque can
        drive (its ``Ĵ_ωk`` is not of full column rank: prismatic, planar, free).
    """
    Q = np.asarray(Q, dtype=float)
    tau_hat = np.zeros((model.nbodies, 3))
    for k, Jh in enumerate(local_angular_jacobians(model, q)):
        n_k = Jh.shape[1]
        if n_k and np.linalg.matrix_rank(Jh) < n_k:
            raise ModelError(f"joint {model.bodies[k].joint_name!r} "
                             f"({model.bodies[k].joint.kind}) has a translational degree of "
                             "freedom: joint torques alone cannot produce its force (L&J 71)")
        if n_k:
            tau_hat[k] = np.linalg.pinv(Jh.T) @ Q[model.v_index(k)]        # L&J (71)
    return tau_hat


def body_frame_forces(model, q, f, tau, points=None) -> np.ndarray:
    """World forces at points and body torques as rbd's ``f_ext``: ``(m, 6)`` body-frame
    spatial forces ``[n; f]`` at each body's origin."""
    R0, o = _world_rotations(model, q)
    f, tau = np.asarray(f, dtype=float), np.asarray(tau, dtype=float)
    f_ext = np.zeros((model.nbodies, 6))
    for k, b in enumerate(model.bodies):
        r = (R0[k] @ b.com + o[k]) if points is None else np.asarray(points[k], dtype=float)
        f_ext[k, :3] = R0[k].T @ (tau[k] + np.cross(r - o[k], f[k]))
        f_ext[k, 3:] = R0[k].T @ f[k]
    return f_ext
