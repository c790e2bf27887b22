r"""One rigid body: Newton–Euler and Lagrange forms (Liu & Jain, §3–4, Eqs. 18–48).

The body has mass ``m`` and rotational inertia ``I0`` about its centre of
mass (COM) in its own axes; at orientation ``R`` the world-axes inertia is
:math:`I_c = R I_0 R^T` (L&J 21).  Two descriptions of its motion:

* **Newton–Euler** (L&J 24), in Cartesian velocities of the COM
  :math:`V = (v; \omega)` (world axes, *linear first* as in the paper):

  .. math:: \begin{pmatrix} m\mathbf 1 & 0 \\ 0 & I_c\end{pmatrix}
            \begin{pmatrix}\dot v\\ \dot\omega\end{pmatrix} +
            \begin{pmatrix}0\\ \omega\times I_c\omega\end{pmatrix} =
            \begin{pmatrix} f\\ \tau\end{pmatrix}.

* **Lagrange** (L&J 45, 48), in six generalized coordinates
  :math:`q = (x, \theta)`: the COM position and three rotation parameters
  (an exponential map, L&J 53–56, or Euler angles, L&J 52).  With the
  Jacobian :math:`V = J(q)\dot q` (L&J 31) and :math:`M_c = \mathrm{blockdiag}(m\mathbf 1, I_c)`
  (L&J 27),

  .. math:: M(q) = J^T M_c J,\qquad C(q, \dot q) = (J^T M_c \dot J +
            J^T[\tilde\omega] M_c J)\,\dot q,\qquad Q = J_v^T f + J_\omega^T \tau.

The two agree: :meth:`RigidBody.forward_dynamics` (Lagrange) and
:meth:`RigidBody.forward_dynamics_newton_euler` (L&J 46) give the same
:math:`\ddot q`, and :func:`lagrange_terms` evaluates each term of L&J Eq. 36
from its definition so that the simplifications of L&J Eqs. 37–43 can be
checked one at a time.

Note the ordering: this module keeps L&J's :math:`(v; \omega)`; the rest of
``rbd`` stacks spatial vectors as :math:`[\omega; v]`.
"""

from __future__ import annotations

import mpmath
import numpy as np

from ..errors import InputError
from ..joints import Free
from ..model import Model
from ..spatial import axis_angle_rotation, quat_to_rot, rot_to_quat, skew, so3_log, unskew

__all__ = [
    "newton_euler",
    "newton_euler_accelerations",
    "ExponentialMap",
    "EulerXYZ",
    "RigidBody",
    "lagrange_terms",
    "simplified_terms",
]

_E = np.eye(3)


# --- §3: Newton–Euler ---------------------------------------------------------------

def newton_euler(m: float, Ic: np.ndarray, omega: np.ndarray, v_dot: np.ndarray,
                 omega_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Force and torque that give a body the accelerations ``(v̇, ω̇)`` (L&J 22–24).

    Parameters
    ----------
    m : float
    Ic : (3, 3) ndarray
        Inertia about the COM in world axes.
    omega, v_dot, omega_dot : (3,) ndarray
        Angular velocity, COM acceleration and angular acceleration (world axes).

    Returns
    -------
    f, tau : (3,) ndarray
        Force and torque about the COM.
    """
    f = m * v_dot                                                         # L&J (22)
    tau = Ic @ omega_dot + np.cross(omega, Ic @ omega)                   # L&J (23)
    return f, tau


def newton_euler_accelerations(m: float, Ic: np.ndarray, omega: np.ndarray, f: np.ndarray,
                               tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve L&J Eq. 24 for ``(v̇, ω̇)`` given the force and torque about the COM."""
    v_dot = np.asarray(f, dtype=float) / m                                # L&J (24)
    omega_dot = np.linalg.solve(Ic, tau - np.cross(omega, Ic @ omega))   # L&J (24)
    return v_dot, omega_dot


# --- rotation parametrizations ---------------------------------------------------------

def _expmap_coefficients(t: float):
    """``a = (1-cos t)/t², b = (t-sin t)/t³`` and ``a'/t, b'/t`` (series for small t)."""
    if t < 0.1:
        t2 = t * t
        a = 0.5 - t2 / 24 + t2 * t2 / 720 - t2**3 / 40320
        b = 1 / 6 - t2 / 120 + t2 * t2 / 5040 - t2**3 / 362880
        da = -1 / 12 + t2 / 180 - t2 * t2 / 6720 + t2**3 / 453600
        db = -1 / 60 + t2 / 1260 - t2 * t2 / 60480 + t2**3 / 4989600
        return a, b, da, db
    s, c = np.sin(t), np.cos(t)
    a = 2 * np.sin(t / 2) ** 2 / t**2
    b = (t - s) / t**3
    da = (t * s - 2 * (1 - c)) / t**4
    db = (t * (1 - c) - 3 * (t - s)) / t**5
    return a, b, da, db


class ExponentialMap:
    r"""Rotation vector :math:`\theta`: :math:`R = e^{[\theta]}` (L&J 53).

    The angular velocity in world axes is :math:`\omega = \hat J_\omega(\theta)\dot\theta` with
    :math:`\hat J_\omega = \mathbf 1 + a[\theta] + b[\theta]^2`,
    :math:`a = (1-\cos t)/t^2`, :math:`b = (t-\sin t)/t^3`, :math:`t = |\theta|`
    (L&J 54; the small-angle limits are L&J 55–56).  It is singular at
    :math:`t = 2\pi`; :meth:`coordinates` keeps :math:`t \le \pi`.
    """

    name = "exponential map"

    def rotation(self, theta: np.ndarray) -> np.ndarray:
        """``R(θ) = 1 + (sin t/t)[θ] + ((1-cos t)/t²)[θ]²`` (L&J 53, 55)."""
        t = float(np.linalg.norm(theta))
        a, _, _, _ = _expmap_coefficients(t)
        K = skew(theta)
        return _E + np.sinc(t / np.pi) * K + a * K @ K                     # L&J (53)

    def jacobian(self, theta: np.ndarray) -> np.ndarray:
        """``Ĵ_ω(θ)``, 3 × 3: world angular velocity per unit ``θ̇`` (L&J 54, 56)."""
        a, b, _, _ = _expmap_coefficients(float(np.linalg.norm(theta)))
        K = skew(theta)
        return _E + a * K + b * K @ K                                      # L&J (54)

    def jacobian_dot(self, theta: np.ndarray, theta_d: np.ndarray) -> np.ndarray:
        """``d/dt Ĵ_ω`` along ``θ̇``: L&J 54 differentiated term by term."""
        a, b, da, db = _expmap_coefficients(float(np.linalg.norm(theta)))
        K, Kd = skew(theta), skew(theta_d)
        s = float(theta @ theta_d)                                         # t ṫ
        return da * s * K + a * Kd + db * s * K @ K + b * (Kd @ K + K @ Kd)

    def coordinates(self, R: np.ndarray) -> np.ndarray:
        """``θ = log R`` with ``|θ| ≤ π``."""
        return so3_log(R)


class EulerXYZ:
    r"""Euler angles :math:`R = R_x(\theta_1) R_y(\theta_2) R_z(\theta_3)` (L&J 52).

    :math:`\hat J_\omega = (e_x,\ R_x e_y,\ R_x R_y e_z)`: each angle turns
    about its axis as carried by the rotations before it.  Singular where
    :math:`\cos\theta_2 = 0` (gimbal lock).
    """

    name = "Euler angles XYZ"

    @staticmethod
    def _factors(theta):
        return (axis_angle_rotation(_E[0], theta[0]), axis_angle_rotation(_E[1], theta[1]),
                axis_angle_rotation(_E[2], theta[2]))

    def rotation(self, theta: np.ndarray) -> np.ndarray:
        Rx, Ry, Rz = self._factors(theta)
        return Rx @ Ry @ Rz

    def jacobian(self, theta: np.ndarray) -> np.ndarray:
        Rx, Ry, _ = self._factors(theta)
        return np.column_stack([_E[0], Rx @ _E[1], Rx @ Ry @ _E[2]])      # L&J (52)

    def jacobian_dot(self, theta: np.ndarray, theta_d: np.ndarray) -> np.ndarray:
        """Column k turns with the angular velocity of the rotations before it."""
        Rx, Ry, _ = self._factors(theta)
        w1 = _E[0] * theta_d[0]
        w2 = w1 + Rx @ _E[1] * theta_d[1]
        return np.column_stack([np.zeros(3), np.cross(w1, Rx @ _E[1]),
                                np.cross(w2, Rx @ Ry @ _E[2])])

    def coordinates(self, R: np.ndarray) -> np.ndarray:
        """Angles with ``θ₂ ∈ [-π/2, π/2]``."""
        theta2 = np.arcsin(np.clip(R[0, 2], -1.0, 1.0))
        return np.array([np.arctan2(-R[1, 2], R[2, 2]), theta2, np.arctan2(-R[0, 1], R[0, 0])])


# --- §4: the Lagrange form -------------------------------------------------------------

class RigidBody:
    r"""A rigid body in generalized coordinates ``q = (x, θ)`` (L&J §4).

    Parameters
    ----------
    mass : float
    I0 : (3, 3) array_like
        Inertia about the COM in the body's axes (the world-axes inertia at
        zero rotation).
    parametrization : ExponentialMap or EulerXYZ, optional
        How ``θ`` describes the orientation (exponential map by default).

    Examples
    --------
    >>> import numpy as np
    >>> body = RigidBody(2.0, np.diag([0.1, 0.2, 0.3]))
    >>> q, qd = np.zeros(6), np.array([0, 0, 0, 1.0, 0, 0])
    >>> body.cartesian_velocity(q, qd)        # (v; ω)
    array([0., 0., 0., 1., 0., 0.])
    >>> float(body.kinetic_energy(q, qd))
    0.05
    """

    def __init__(self, mass: float, I0, parametrization=None):
        self.mass = float(mass)
        self.I0 = np.array(I0, dtype=float)
        if not self.mass > 0 or self.I0.shape != (3, 3):
            raise InputError("a rigid body needs a positive mass and a 3 × 3 inertia I0")
        self.parametrization = ExponentialMap() if parametrization is None else parametrization

    def _split(self, q):
        q = np.asarray(q, dtype=float)
        if q.shape != (6,):
            raise InputError(f"q must have shape (6,), got {q.shape}")
        return q[:3], q[3:]

    # --- kinematics
    def rotation(self, q) -> np.ndarray:
        return self.parametrization.rotation(self._split(q)[1])

    def inertia_world(self, q) -> np.ndarray:
        """``I_c = R I_0 Rᵀ`` (L&J 21)."""
        R = self.rotation(q)
        return R @ self.I0 @ R.T                                           # L&J (21)

    def cartesian_mass(self, q) -> np.ndarray:
        """``M_c = blockdiag(m 1, I_c)``, 6 × 6 (L&J 27)."""
        Mc = np.zeros((6, 6))
        Mc[:3, :3] = self.mass * _E
        Mc[3:, 3:] = self.inertia_world(q)                                # L&J (27)
        return Mc

    def jacobian(self, q) -> np.ndarray:
        """``J = blockdiag(J_v, J_ω)`` with ``J_v = ∂x/∂q = [1 0]`` (L&J 28–31)."""
        J = np.zeros((6, 6))
        J[:3, :3] = _E                                                     # L&J (28)
        J[3:, 3:] = self.parametrization.jacobian(self._split(q)[1])      # L&J (30)
        return J

    def jacobian_dot(self, q, qd) -> np.ndarray:
        """``J̇ = Σ_k ∂J/∂q_k q̇_k`` (below L&J 36)."""
        Jd = np.zeros((6, 6))
        Jd[3:, 3:] = self.parametrization.jacobian_dot(self._split(q)[1],
                                                       np.asarray(qd, dtype=float)[3:])
        return Jd

    def cartesian_velocity(self, q, qd) -> np.ndarray:
        """``V = (v; ω) = J q̇`` (L&J 31)."""
        return self.jacobian(q) @ qd                                       # L&J (31)

    def generalized_velocity(self, q, V) -> np.ndarray:
        """``q̇ = J⁻¹ V`` (J is square and invertible away from singular θ)."""
        return np.linalg.solve(self.jacobian(q), V)

    def kinetic_energy(self, q, qd) -> float:
        """``T = ½ q̇ᵀ Jᵀ M_c J q̇`` (L&J 32)."""
        V = self.cartesian_velocity(q, qd)
        return float(0.5 * V @ self.cartesian_mass(q) @ V)                # L&J (32)

    # --- dynamics
    def mass_matrix(self, q) -> np.ndarray:
        """``M(q) = Jᵀ M_c J`` (L&J 48)."""
        J = self.jacobian(q)
        return J.T @ self.cartesian_mass(q) @ J                           # L&J (48)

    def coriolis(self, q, qd) -> np.ndarray:
        """``C(q, q̇) = (Jᵀ M_c J̇ + Jᵀ [ω̃] M_c J) q̇`` (L&J 44, 48)."""
        J, Mc = self.jacobian(q), self.cartesian_mass(q)
        omega = J[3:, 3:] @ np.asarray(qd, dtype=float)[3:]
        W = np.zeros((6, 6))
        W[3:, 3:] = skew(omega)                                            # [ω̃], L&J (44)
        return (J.T @ Mc @ self.jacobian_dot(q, qd) + J.T @ W @ Mc @ J) @ qd  # L&J (48)

    def generalized_forces(self, q, f, tau) -> np.ndarray:
        """``Q = J_vᵀ f + J_ωᵀ τ`` for a force ``f`` at the COM and a torque ``τ`` (L&J 48)."""
        J = self.jacobian(q)
        return J[:3].T @ f + J[3:].T @ tau                                 # L&J (48)

    def forward_dynamics(self, q, qd, f, tau) -> np.ndarray:
        """``q̈ = M⁻¹ (Q − C)`` (L&J 45, 48)."""
        return np.linalg.solve(self.mass_matrix(q),
                               self.generalized_forces(q, f, tau) - self.coriolis(q, qd))

    def forward_dynamics_newton_euler(self, q, qd, f, tau) -> np.ndarray:
        """``q̈`` from Newton–Euler: ``V̇`` by L&J 24, then ``J q̈ = V̇ − J̇ q̇`` (L&J 46)."""
        V = self.cartesian_velocity(q, qd)
        v_dot, omega_dot = newton_euler_accelerations(self.mass, self.inertia_world(q), V[3:],
                                                      f, tau)           # L&J (24)
        V_dot = np.concatenate([v_dot, omega_dot])
        return np.linalg.solve(self.jacobian(q), V_dot - self.jacobian_dot(q, qd) @ qd)  # (46)

    # --- the same body as an rbd model with a free joint
    def free_joint_model(self, gravity=(0.0, 0.0, 0.0)) -> Model:
        """A one-body :class:`~rbd.model.Model` with a free joint, body frame at the COM."""
        model = Model(gravity=gravity, name="single rigid body")
        model.add_body(-1, Free(), None, (self.mass, np.zeros(3), self.I0), "body", "root")
        return model

    def to_free_joint_state(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """rbd's free-joint ``(q, v)``: position + quaternion, body-frame ``[ω_b; v_b]``."""
        x, _ = self._split(q)
        R = self.rotation(q)
        V = self.cartesian_velocity(q, qd)
        return (np.concatenate([x, rot_to_quat(R)]),
                np.concatenate([R.T @ V[3:], R.T @ V[:3]]))

    def from_free_joint_state(self, q_free, v_free) -> tuple[np.ndarray, np.ndarray]:
        """Inverse of :meth:`to_free_joint_state` (θ from :meth:`coordinates`)."""
        R = quat_to_rot(np.asarray(q_free)[3:7])
        q = np.concatenate([q_free[:3], self.parametrization.coordinates(R)])
        V = np.concatenate([R @ v_free[3:], R @ v_free[:3]])
        return q, self.generalized_velocity(q, V)

    def from_free_joint_acceleration(self, q, qd, a_free) -> np.ndarray:
        r"""``q̈`` from rbd's body-frame acceleration ``[ω̇_b; v̇_b]`` at the state ``(q, q̇)``.

        World-axes rates: :math:`\dot\omega = R\dot\omega_b` and, the body
        frame sitting at the COM, :math:`\dot v = R(\dot v_b + \omega_b\times v_b)`.
        """
        R = self.rotation(q)
        _, v_free = self.to_free_joint_state(q, qd)
        w_b, v_b = v_free[:3], v_free[3:]
        V_dot = np.concatenate([R @ (a_free[3:] + np.cross(w_b, v_b)), R @ a_free[:3]])
        return np.linalg.solve(self.jacobian(q), V_dot - self.jacobian_dot(q, qd) @ qd)


# --- the terms of L&J Eq. 36, from their definitions -------------------------------------

def _rotation_mp(kind: str, th) -> mpmath.matrix:
    """The rotation formula L&J 52 or 53 in mpmath arithmetic."""
    th = [mpmath.mpf(x) for x in th]
    if kind == "euler":
        c, s = [mpmath.cos(x) for x in th], [mpmath.sin(x) for x in th]
        Rx = mpmath.matrix([[1, 0, 0], [0, c[0], -s[0]], [0, s[0], c[0]]])
        Ry = mpmath.matrix([[c[1], 0, s[1]], [0, 1, 0], [-s[1], 0, c[1]]])
        Rz = mpmath.matrix([[c[2], -s[2], 0], [s[2], c[2], 0], [0, 0, 1]])
        return Rx * Ry * Rz                                                # L&J (52)
    t = mpmath.sqrt(th[0] ** 2 + th[1] ** 2 + th[2] ** 2)
    K = mpmath.matrix([[0, -th[2], th[1]], [th[2], 0, -th[0]], [-th[1], th[0], 0]])
    # sin t / t and (1 − cos t)/t² = ½ sinc(t/2)², both smooth through t = 0
    return mpmath.eye(3) + mpmath.sinc(t) * K + mpmath.sinc(t / 2) ** 2 / 2 * K * K  # L&J (53)


def _rotation_derivatives(kind: str, theta: np.ndarray):
    """``R``, ``∂R/∂θ_j`` and ``∂²R/∂θ_j∂θ_k`` of the rotation formula, differentiated
    numerically in 40-digit arithmetic (``mpmath.diff``) and rounded to doubles."""
    theta = [float(x) for x in theta]
    R, dR, ddR = np.zeros((3, 3)), np.zeros((3, 3, 3)), np.zeros((3, 3, 3, 3))
    unit = [tuple(int(i == j) for i in range(3)) for j in range(3)]
    with mpmath.workdps(40):
        for a in range(3):
            for b in range(3):
                def entry(*th, a=a, b=b):
                    return _rotation_mp(kind, th)[a, b]
                R[a, b] = float(entry(*theta))
                for j in range(3):
                    dR[j, a, b] = float(mpmath.diff(entry, theta, unit[j]))
                    for k in range(j, 3):
                        order = tuple(x + y for x, y in zip(unit[j], unit[k], strict=True))
                        ddR[j, k, a, b] = ddR[k, j, a, b] = float(mpmath.diff(entry, theta, order))
    return R, dR, ddR


def _rotation_kind(parametrization) -> str:
    if isinstance(parametrization, EulerXYZ):
        return "euler"
    if isinstance(parametrization, ExponentialMap):
        return "expmap"
    raise InputError("lagrange_terms handles the ExponentialMap and EulerXYZ parametrizations, "
                     f"got {parametrization!r}")


def lagrange_terms(body: RigidBody, q, qd, qdd) -> dict[str, np.ndarray]:
    r"""The five terms of L&J Eq. 36, each evaluated from its definition.

    The first and second derivatives of :math:`R(\theta)` are taken from the
    rotation formula itself (L&J 52 or 53) by numerical differentiation in
    40-digit arithmetic (``mpmath.diff``, accurate far beyond double precision);
    :math:`J_\omega` (L&J 29), :math:`\partial
    J/\partial q_j`, :math:`\dot J`, :math:`\dot M_c` and :math:`\partial M_c/\partial q_j`
    are then assembled from those derivatives by their definitions — none of the
    closed forms used by :class:`RigidBody` enters.

    Returns
    -------
    dict
        ``term1`` … ``term5`` (each ``(6,)``; ``term4`` includes the minus sign
        it carries in Eq. 36); ``lagrange``: :math:`\frac{d}{dt}\partial_{\dot q} T
        - \partial_q T` for :math:`T = \tfrac12\dot q^T J^T M_c J\dot q` (L&J 13,
        evaluated as :math:`M\ddot q + \dot M\dot q - \tfrac12\dot q^T\partial_q M\,\dot q`,
        L&J 17); ``z``: the vectors :math:`z_{jk}` of L&J Eq. 41 as ``z[:, j, k]``;
        ``Jw``: :math:`J_\omega` from L&J Eq. 29.
    """
    q, qd, qdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
    R, dR, ddR = _rotation_derivatives(_rotation_kind(body.parametrization), q[3:])
    Jw = np.column_stack([unskew(dR[j] @ R.T) for j in range(3)])         # L&J (29)
    dJw = [np.column_stack([unskew(ddR[j, k] @ R.T + dR[j] @ dR[k].T) for j in range(3)])
           for k in range(3)]                                              # ∂J_ω/∂θ_k
    J = _blockdiag(np.eye(3), Jw)                                          # L&J (31)
    dJ = [np.zeros((6, 6))] * 3 + [_blockdiag(np.zeros((3, 3)), d) for d in dJw]
    J_dot = sum(dJ[k] * qd[k] for k in range(6))                           # below L&J (36)
    Mc = _blockdiag(body.mass * np.eye(3), R @ body.I0 @ R.T)              # L&J (27)
    dMc = [np.zeros((6, 6))] * 3 + [
        _blockdiag(np.zeros((3, 3)), dR[j] @ body.I0 @ R.T + R @ body.I0 @ dR[j].T)
        for j in range(3)]
    Mc_dot = sum(dMc[k] * qd[k] for k in range(6))
    V = J @ qd
    M = J.T @ Mc @ J                                                       # L&J (32)
    dM = [dJ[j].T @ Mc @ J + J.T @ dMc[j] @ J + J.T @ Mc @ dJ[j] for j in range(6)]
    M_dot = sum(dM[k] * qd[k] for k in range(6))
    z = np.zeros((3, 3, 3))
    for j in range(3):
        for k in range(3):
            z[:, j, k] = dJw[k][:, j] - dJw[j][:, k]                       # L&J (41)
    return {
        "term1": J.T @ Mc @ J @ qdd,                                       # L&J (36)
        "term2": J.T @ Mc @ J_dot @ qd,
        "term3": J.T @ Mc_dot @ V,
        "term4": np.array([-0.5 * V @ dMc[j] @ V for j in range(6)]),
        "term5": np.array([J_dot[:, j] @ Mc @ V - (dJ[j] @ qd) @ Mc @ V for j in range(6)]),
        "lagrange": M @ qdd + M_dot @ qd - 0.5 * np.array([qd @ dM[j] @ qd for j in range(6)]),
        "z": z,
        "Jw": Jw,
    }


def _blockdiag(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    out = np.zeros((6, 6))
    out[:3, :3], out[3:, 3:] = A, B
    return out


def simplified_terms(body: RigidBody, q, qd, qdd) -> dict[str, np.ndarray]:
    r"""The closed forms L&J Eqs. 37–43 reduce the terms of Eq. 36 to.

    With :math:`j_j` the columns of :math:`J_\omega` and :math:`\omega = J_\omega\dot\theta`:
    term 3 :math:`= j_j^T[\omega]I_c\omega` (37), term 4 :math:`= +j_j^T[\omega]I_c\omega`
    (38, which evaluates it without its minus sign), term 5 :math:`= 0` for the linear part (40)
    and :math:`-j_j^T[\omega]I_c\omega` for the angular part (43), and
    :math:`z_{jk} = j_k\times j_j` (42).
    """
    J, Mc = body.jacobian(q), body.cartesian_mass(q)
    Jw = J[3:, 3:]
    omega = Jw @ np.asarray(qd, dtype=float)[3:]
    gyro = np.concatenate([np.zeros(3), Jw.T @ skew(omega) @ Mc[3:, 3:] @ omega])
    z = np.zeros((3, 3, 3))
    for j in range(3):
        for k in range(3):
            z[:, j, k] = np.cross(Jw[:, k], Jw[:, j])                      # L&J (42)
    return {
        "term1": J.T @ Mc @ J @ qdd,
        "term2": J.T @ Mc @ body.jacobian_dot(q, qd) @ qd,
        "term3": gyro,                                                     # L&J (37)
        "term4": gyro,                                                     # L&J (38)
        "term5": -gyro,                                                    # L&J (40), (43)
        "lagrange": body.mass_matrix(q) @ qdd + body.coriolis(q, qd),     # L&J (45)
        "z": z,
        "Jw": Jw,
    }
