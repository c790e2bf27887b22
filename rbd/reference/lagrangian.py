r"""Articulated trees through per-link Jacobians (Liu & Jain, §5, Eqs. 49–59).

Each link ``k`` is one rigid body of §4.  Its Cartesian velocity — the
velocity :math:`v_k` of its centre of mass (COM) and its angular velocity
:math:`\omega_k`, both in world axes — is linear in the generalized velocity,
:math:`V_k = (v_k; \omega_k) = J_k \dot q` (L&J 58), and summing the
single-body equations (L&J 45) over the links gives the equations of motion
of the tree (L&J 59):

.. math::

    \underbrace{\sum_k J_k^T M_{ck} J_k}_{M(q)}\,\ddot q
    + \underbrace{\sum_k \big(J_k^T M_{ck}\dot J_k + J_k^T[\tilde\omega_k] M_{ck} J_k\big)\dot q}
      _{C(q,\dot q)}
    = Q,

with :math:`M_{ck} = \mathrm{blockdiag}(m_k\mathbf 1, R^0_k I_{0k} R^{0T}_k)` (L&J 27) and
:math:`[\tilde\omega_k] = \mathrm{blockdiag}(0, [\omega_k])` (L&J 44).

**Columns of** :math:`J_k`.  The joint of an ancestor ``l`` of ``k`` moves
body ``l`` (and everything outboard of it) with the twist :math:`S_l\dot q_l`
given in body ``l``'s axes (:meth:`rbd.joints.Joint.S`).  In world axes its
angular part is :math:`R^0_l S_{\omega,l}` — L&J's :math:`R^0_{p(l)}\hat J_{\omega l}`
of Eq. 50 with :math:`\hat J_{\omega l} = R_l S_{\omega,l}` — and it moves the COM
:math:`x_k` with :math:`R^0_l S_{v,l} + (R^0_l S_{\omega,l})\times(x_k - o_l)`, where
:math:`o_l` is the origin of body ``l``.  This is :math:`\partial x_k/\partial q`
of L&J Eq. 57 written column by column; columns of joints not on the path
from the root to ``k`` are zero (L&J 51).

**Generalized velocities.**  ``rbd`` uses the joint velocity ``v`` of each
joint (for spherical and free joints the body-frame angular velocity, not the
quaternion rate).  L&J's derivation from Newton–Euler (Eqs. 46–47) needs
only :math:`V_k = J_k v` and the true time derivative :math:`\dot J_k`, so
Eq. 59 holds for these velocities too.

**Time derivative of** :math:`J_k`.  The columns of ancestor ``l`` depend on
time through :math:`R^0_l` (which turns with :math:`\omega_l`), through
:math:`S_l(q_l)` (:meth:`rbd.joints.Joint.S_dot`) and through the lever arm
:math:`x_k - o_l`:

.. math::

    \tfrac{d}{dt}(R^0_l S_{\omega}) = \omega_l\times R^0_l S_{\omega} + R^0_l\dot S_{\omega},
    \quad
    \tfrac{d}{dt}\big(R^0_l S_v + j_\omega\times r\big) = \omega_l\times R^0_l S_v +
    R^0_l\dot S_v + \dot j_\omega\times r + j_\omega\times(\dot x_k - \dot o_l).

Gravity and the external forces enter :math:`Q` by virtual work (L&J 3, 67):
:math:`Q = \sum_k J_{vk}^T m_k g + \dots`.  Here the spatial ordering is
L&J's :math:`(v; \omega)`, linear first.
"""

from __future__ import annotations

import numpy as np

from ..spatial import skew
from .kinematics import body_velocities, forward_kinematics

__all__ = [
    "com_jacobians",
    "com_jacobian_derivatives",
    "mass_matrix",
    "coriolis_matrix",
    "coriolis_forces",
    "bias_forces",
    "gravity_forces",
    "external_generalized_forces",
    "inverse_dynamics",
    "forward_dynamics",
]


def _chain(model, k: int) -> list[int]:
    """``p(1, k)``: the bodies from ``k`` back to the root (L&J §5.1)."""
    chain = []
    while k >= 0:
        chain.append(k)
        k = model.bodies[k].parent
    return chain


def _poses(model, q):
    """World rotations ``R0[k]``, body origins ``o[k]`` and COMs ``x[k]`` (L&J 57)."""
    T = forward_kinematics(model, q)
    R0, o = T[:, :3, :3], T[:, :3, 3]
    x = np.array([R0[k] @ b.com + o[k] for k, b in enumerate(model.bodies)]).reshape(-1, 3)
    return R0, o, x


def _jacobians(model, q, R0, o, x) -> np.ndarray:
    """:func:`com_jacobians` from poses already computed."""
    S = [b.joint.S(q[model.q_index(l)]) for l, b in enumerate(model.bodies)]
    J = np.zeros((model.nbodies, 6, model.nv))
    for k in range(model.nbodies):
        for l in _chain(model, k):
            j_w = R0[l] @ S[l][:3]                                         # L&J (50)
            J[k, 3:, model.v_index(l)] = j_w                               # L&J (51)
            J[k, :3, model.v_index(l)] = R0[l] @ S[l][3:] + skew(x[k] - o[l]).T @ j_w  # L&J (57)
    return J


def _jacobian_derivatives(model, q, v, R0, o, x, J) -> np.ndarray:
    """:func:`com_jacobian_derivatives` from poses and Jacobians already computed."""
    v_body = body_velocities(model, q, v)
    omega = np.einsum("kab,kb->ka", R0, v_body[:, :3])                    # ω_l, world axes
    o_dot = np.einsum("kab,kb->ka", R0, v_body[:, 3:])                    # ȯ_l
    S, S_dot = [], []
    for l, b in enumerate(model.bodies):
        ql, vl = q[model.q_index(l)], v[model.v_index(l)]
        S.append(b.joint.S(ql))
        S_dot.append(b.joint.S_dot(ql, vl))
    J_dot = np.zeros_like(J)
    for k in range(model.nbodies):
        x_dot = J[k, :3] @ v                                               # L&J (57)
        for l in _chain(model, k):
            W = skew(omega[l])
            j_w = R0[l] @ S[l][:3]
            j_w_dot = W @ j_w + R0[l] @ S_dot[l][:3]
            J_dot[k, 3:, model.v_index(l)] = j_w_dot
            J_dot[k, :3, model.v_index(l)] = (W @ R0[l] @ S[l][3:] + R0[l] @ S_dot[l][3:]
                                              + skew(x[k] - o[l]).T @ j_w_dot
                                              + skew(x_dot - o_dot[l]).T @ j_w)
    return J_dot


def com_jacobians(model, q) -> np.ndarray:
    r"""COM Jacobians ``J_k = (J_vk; J_ωk)`` of every link, shape ``(nbodies, 6, nv)``.

    Rows 0–2 map ``v`` to the COM velocity (L&J 57), rows 3–5 to the angular
    velocity (L&J 50–51), both in world axes.
    """
    q = np.asarray(q, dtype=float)
    return _jacobians(model, q, *_poses(model, q))


def com_jacobian_derivatives(model, q, v) -> np.ndarray:
    r"""Time derivatives ``J̇_k`` along the velocity ``v``, shape ``(nbodies, 6, nv)``.

    Each column of :func:`com_jacobians` differentiated analytically (see the
    module notes): the world axes of the ancestor turn with ``ω_l``, the
    motion subspace changes by ``Ṡ_l`` and the lever arm ``x_k − o_l`` stretches.
    """
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    R0, o, x = _poses(model, q)
    return _jacobian_derivatives(model, q, v, R0, o, x, _jacobians(model, q, R0, o, x))


def _cartesian_mass(body, R0_k) -> np.ndarray:
    """``M_ck = blockdiag(m_k 1, R0_k I_0k R0_kᵀ)`` (L&J 27)."""
    Mc = np.zeros((6, 6))
    Mc[:3, :3] = body.mass * np.eye(3)
    Mc[3:, 3:] = R0_k @ body.I_com @ R0_k.T                               # L&J (21), (27)
    return Mc


def _equations_of_motion(model, q, v):
    r"""``M``, the Coriolis matrix ``C`` and gravity ``g`` of L&J 59 from one set of Jacobians."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    R0, o, x = _poses(model, q)
    J = _jacobians(model, q, R0, o, x)
    J_dot = _jacobian_derivatives(model, q, v, R0, o, x, J)
    g = np.asarray(model.gravity, dtype=float)
    M = np.zeros((model.nv, model.nv))
    C = np.zeros((model.nv, model.nv))
    G = np.zeros(model.nv)
    for k, body in enumerate(model.bodies):
        Mc = _cartesian_mass(body, R0[k])
        W = np.zeros((6, 6))
        W[3:, 3:] = skew(J[k, 3:] @ v)                                     # [ω̃_k], L&J (44)
        M += J[k].T @ Mc @ J[k]                                            # L&J (59)
        C += J[k].T @ Mc @ J_dot[k] + J[k].T @ W @ Mc @ J[k]               # L&J (59)
        G -= J[k, :3].T @ (body.mass * g)                                  # L&J (3), (67)
    return M, C, G


def mass_matrix(model, q) -> np.ndarray:
    r"""Joint-space inertia ``M(q) = Σ_k J_kᵀ M_ck J_k``, shape ``(nv, nv)`` (L&J 59).

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> np.allclose(mass_matrix(model, [0.3, 0.2]), rbd.crba(model, np.array([0.3, 0.2])))
    True
    """
    q = np.asarray(q, dtype=float)
    R0, o, x = _poses(model, q)
    J = _jacobians(model, q, R0, o, x)
    M = np.zeros((model.nv, model.nv))
    for k, body in enumerate(model.bodies):
        M += J[k].T @ _cartesian_mass(body, R0[k]) @ J[k]                  # L&J (59)
    return M


def coriolis_matrix(model, q, v) -> np.ndarray:
    r"""``C(q, v) = Σ_k (J_kᵀ M_ck J̇_k + J_kᵀ [ω̃_k] M_ck J_k)``, shape ``(nv, nv)`` (L&J 59).

    With this factorization :math:`\dot M - 2C` is skew-symmetric: :math:`\dot M_{ck} =
    [\tilde\omega_k]M_{ck} - M_{ck}[\tilde\omega_k]`, so :math:`\dot M - 2C = \sum_k
    (\dot J_k^T M_{ck} J_k - J_k^T M_{ck}\dot J_k) - J_k^T([\tilde\omega_k]M_{ck} +
    M_{ck}[\tilde\omega_k])J_k`, a sum of skew-symmetric matrices.
    """
    return _equations_of_motion(model, q, v)[1]


def coriolis_forces(model, q, v) -> np.ndarray:
    """``C(q, v) v``, shape ``(nv,)`` (L&J 59)."""
    return coriolis_matrix(model, q, v) @ np.asarray(v, dtype=float)


def gravity_forces(model, q) -> np.ndarray:
    r"""``g(q) = −Σ_k J_vkᵀ m_k g``: minus the generalized gravity force (L&J 3, 67)."""
    J = com_jacobians(model, q)
    g = np.asarray(model.gravity, dtype=float)
    G = np.zeros(model.nv)
    for k, body in enumerate(model.bodies):
        G -= J[k, :3].T @ (body.mass * g)                                  # L&J (67)
    return G


def bias_forces(model, q, v) -> np.ndarray:
    """``h(q, v) = C(q, v) v + g(q)``, shape ``(nv,)`` (L&J 59 with gravity on the left)."""
    _, C, G = _equations_of_motion(model, q, v)
    return C @ np.asarray(v, dtype=float) + G


def external_generalized_forces(model, q, f_ext) -> np.ndarray:
    r"""Generalized force ``Q`` of body-frame spatial forces ``f_ext`` (L&J 67).

    ``f_ext[k] = [n; f]`` acts at the origin ``o_k`` of body ``k``, in body ``k``'s
    axes.  In world axes it is the force :math:`R^0_k f` and, about the COM, the
    torque :math:`\tau_k = R^0_k n + (o_k - x_k)\times R^0_k f` (the note below
    L&J 67), so :math:`Q = \sum_k J_{vk}^T R^0_k f + J_{\omega k}^T\tau_k`.
    """
    q = np.asarray(q, dtype=float)
    R0, o, x = _poses(model, q)
    J = com_jacobians(model, q)
    Q = np.zeros(model.nv)
    for k in range(model.nbodies):
        n_w, f_w = R0[k] @ f_ext[k][:3], R0[k] @ f_ext[k][3:]
        tau = n_w + np.cross(o[k] - x[k], f_w)                            # below L&J (67)
        Q += J[k, :3].T @ f_w + J[k, 3:].T @ tau                           # L&J (67)
    return Q


def inverse_dynamics(model, q, v, a, f_ext=None) -> np.ndarray:
    """``τ = M(q) a + C(q, v) v + g(q) − Q_ext`` (L&J 59), shape ``(nv,)``.

    Parameters are those of :func:`rbd.reference.local_frame_id.joint_forces`:
    ``model, q, v, a, f_ext`` (``f_ext``: body-frame spatial forces ``[n; f]`` at each
    body's origin).
    """
    M, C, G = _equations_of_motion(model, q, v)
    tau = M @ np.asarray(a, dtype=float) + C @ np.asarray(v, dtype=float) + G  # L&J (59)
    if f_ext is not None:
        tau = tau - external_generalized_forces(model, q, f_ext)
    return tau


def forward_dynamics(model, q, v, tau, f_ext=None) -> np.ndarray:
    """``a = M(q)⁻¹ (τ + Q_ext − C(q, v) v − g(q))`` (L&J 59), shape ``(nv,)``."""
    M, C, G = _equations_of_motion(model, q, v)
    rhs = np.asarray(tau, dtype=float) - C @ np.asarray(v, dtype=float) - G
    if f_ext is not None:
        rhs = rhs + external_generalized_forces(model, q, f_ext)
    return np.linalg.solve(M, rhs)
