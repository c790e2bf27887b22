"""Contact coordinates of two smooth bodies: kinematics and dynamics (Pai §6).

See :mod:`rbd.contact_coordinates` for the equations; :mod:`rbd.contact_coordinates.simulation`
integrates them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._validation import check_unit_quaternion
from ..errors import InputError, ModelError
from ..geometry import Surface, contact_forms, frame_jet
from ..spatial import (
    crf,
    crm,
    inertia_parts,
    mcI,
    quat_multiply,
    quat_to_rot,
    skew,
    unskew,
)

__all__ = [
    "R_psi",
    "Ad",
    "frame_jacobian",
    "ContactJacobians",
    "ContactState",
    "ContactDynamics",
    "ContactPair",
]

#: Pai (11): the relative twist of the contact frames is ``H_psi ψ̇``.
H_PSI = np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])

#: J rotates the frame-basis components of the normal's derivative into ω_x, ω_y.
_J = np.array([[0.0, -1.0], [1.0, 0.0]])


def R_psi(psi: float) -> np.ndarray:
    r"""The rotation :math:`{}^{1c}_{2c}E` aligning the contact frames (Pai §6).

    .. math::

        R_\psi = \begin{bmatrix} \cos\psi & -\sin\psi & 0 \\
                                 -\sin\psi & -\cos\psi & 0 \\ 0 & 0 & -1 \end{bmatrix}

    It is symmetric and its own inverse; the normal of frame 2c is minus that of 1c.
    """
    c, s = np.cos(psi), np.sin(psi)
    return np.array([[c, -s, 0.0], [-s, -c, 0.0], [0.0, 0.0, -1.0]])


def _dR_psi(psi: float, k: int) -> np.ndarray:
    """``d^k R_psi / dψ^k`` for ``k = 1, 2``."""
    c, s = np.cos(psi), np.sin(psi)
    if k == 1:
        return np.array([[-s, -c, 0.0], [-c, s, 0.0], [0.0, 0.0, 0.0]])
    return np.array([[-c, s, 0.0], [s, c, 0.0], [0.0, 0.0, 0.0]])


def Ad(E: np.ndarray) -> np.ndarray:
    r"""Adjoint :math:`{}^j_i\mathrm{Ad}` of a pose :math:`{}^j_iE = [[\Theta, p], [0, 1]]`, Pai §2.

    Maps twists (and, transposed, wrenches from j to i) between coordinates:
    :math:`{}^j\phi = {}^j_i\mathrm{Ad}\,{}^i\phi`,
    :math:`\mathrm{Ad} = [[\Theta, 0], [[p]\Theta, \Theta]]`.  In Featherstone's
    notation this is the motion transform ``X`` from i to j coordinates.
    """
    Theta, p = E[:3, :3], E[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = Theta
    X[3:, 3:] = Theta
    X[3:, :3] = skew(p) @ Theta
    return X


def _pose(R: np.ndarray, corner: float = 1.0) -> np.ndarray:
    """4×4 matrix with ``R`` in the rotation block (``corner`` 0 for derivatives)."""
    E = np.zeros((4, 4))
    E[:3, :3] = R
    E[3, 3] = corner
    return E


def _inv_pose(E: np.ndarray) -> np.ndarray:
    Einv = np.eye(4)
    Einv[:3, :3] = E[:3, :3].T
    Einv[:3, 3] = -E[:3, :3].T @ E[:3, 3]
    return Einv


def _unhat(W: np.ndarray) -> np.ndarray:
    """The twist ``[ω; v]`` of a 4×4 element of se(3)."""
    return np.concatenate([unskew(W[:3, :3]), W[:3, 3]])


class ContactJacobians(NamedTuple):
    """The contact matrices of Pai Eqs. 9–12, all in contact frame 1c coordinates."""

    H1: np.ndarray  #: (6, 2) Pai (9)
    H2: np.ndarray  #: (6, 2) Pai (10), body 2's frame twist rotated into 1c
    H_psi: np.ndarray  #: (6, 1) Pai (11)
    H: np.ndarray  #: (6, 5) Pai (12): ¹ᶜφ(1, 2) = H q̇


def frame_jacobian(surface: Surface, u: np.ndarray) -> np.ndarray:
    r"""``H_k`` (6×2): twist of the contact frame relative to its body, in frame coordinates.

    Pai (9): :math:`{}^{1c}\phi(1, 1c) = H_1 \dot u_1`, with Montana's closed form
    :math:`H = [J K M;\ T M;\ M;\ 0]` in the metric, curvature and torsion
    forms of the surface at ``u`` (:func:`rbd.geometry.contact_forms`).

    Parameters
    ----------
    surface : Surface
    u : (2,) array, the surface parameters of the contact point

    Returns
    -------
    (6, 2) ndarray
    """
    return _frame_jacobian(*surface.contact_geometry(float(u[0]), float(u[1])))


def _frame_jacobian(M, K, T):
    H = np.zeros((6, 2))
    H[0:2] = _J @ K @ M  # Pai (9): ω_x, ω_y, the normal turns with the curvature
    H[2] = T @ M  # Pai (9): ω_z, the frame twists about the normal (torsion form)
    H[3:5] = M  # Pai (9): v_x, v_y, the contact point slides on the surface (metric)
    return H


class _Kinematics(NamedTuple):
    """Everything the dynamics needs at one ``(q, q̇)``, from one surface evaluation each."""

    E1c: np.ndarray  # ¹E_1c, contact frame 1 in body 1
    E2c: np.ndarray  # ²E_2c
    E12: np.ndarray  # ¹E_2, body 2 in body 1
    E2_1c: np.ndarray  # ²E_1c, frame 1c in body 2
    jac: ContactJacobians  # Pai (9)-(12), frame 1c
    H: np.ndarray  # ²H, body-2 coordinates
    phi: np.ndarray  # ²H q̇
    a: np.ndarray  # (d ²H/dt) q̇


@dataclass
class ContactState:
    """Configuration and velocity of a contact pair.

    Attributes
    ----------
    q : (5,) ndarray
        Contact coordinates ``(u1, v1, u2, v2, ψ)``.
    qd : (5,) ndarray
        Their rates.
    base_q : (7,) ndarray or None
        World pose ``[p; quat(x, y, z, w)]`` of body 1 when it is free.
    base_v : (6,) ndarray or None
        Body-1 twist ``[ω; v]`` in body-1 coordinates when it is free.
    """

    q: np.ndarray
    qd: np.ndarray
    base_q: np.ndarray | None = None
    base_v: np.ndarray | None = None

    def to_vector(self) -> np.ndarray:
        parts = [self.q, self.qd]
        if self.base_q is not None:
            parts += [self.base_q, self.base_v]
        return np.concatenate([np.asarray(p, dtype=float) for p in parts])

    @classmethod
    def from_vector(cls, y: np.ndarray) -> ContactState:
        y = np.asarray(y, dtype=float)
        if y.size == 10:
            return cls(y[:5], y[5:10])
        return cls(y[:5], y[5:10], y[10:17], y[17:23])


class ContactDynamics(NamedTuple):
    """Result of :meth:`ContactPair.forward_dynamics`."""

    qdd: np.ndarray  #: (5,) contact-coordinate accelerations
    base_a: np.ndarray | None  #: (6,) body-1 acceleration (body coordinates), if free
    wrench: np.ndarray  #: (6,) contact wrench on body 2 in frame 1c, ``[n; f]``
    normal_force: float  #: λ = wrench[5]: the push of body 1 on body 2 along its normal


def _spatial_inertia(value, what: str) -> np.ndarray:
    if isinstance(value, tuple | list) and len(value) == 3:
        m, c, Ic = value
        I = mcI(float(m), np.asarray(c, dtype=float), np.asarray(Ic, dtype=float))
    else:
        I = np.asarray(value, dtype=float)
    if I.shape != (6, 6) or not np.all(np.isfinite(I)):
        raise ModelError(f"{what} must be a finite 6×6 spatial inertia or (m, c, Ic)")
    if not np.allclose(I, I.T, atol=1e-12 * max(1.0, np.abs(I).max())):
        raise ModelError(f"{what} is not symmetric")
    if np.linalg.eigvalsh(I)[0] <= 0:
        raise ModelError(f"{what} is not positive definite (a free body needs mass and inertia)")
    return I


class ContactPair:
    r"""Two rigid bodies touching at one point of their smooth surfaces (Pai §6).

    Parameters
    ----------
    surface1, surface2 : Surface
        The bodies' surfaces in body coordinates, normals pointing out of each body.
    inertia2 : (6, 6) array or (m, c, Ic)
        Spatial inertia of body 2 about its frame origin (``rbd.spatial.mcI``).
    inertia1 : (6, 6) array, (m, c, Ic) or None
        ``None`` fixes body 1 in the world at ``pose1``; otherwise body 1 is free.
    pose1 : (4, 4) array, optional
        World pose of body 1 when it is fixed (default identity).
    gravity : (3,) array
        World gravity, default ``(0, 0, -9.81)``.

    Examples
    --------
    A ball of radius 0.1 resting on the ground plane:

    >>> import numpy as np
    >>> from rbd.geometry import Plane, Sphere
    >>> from rbd.spatial import mcI
    >>> ball = Sphere(0.1).transformed(np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]]))
    >>> pair = ContactPair(Plane(), ball, mcI(1.0, np.zeros(3), 0.004 * np.eye(3)))
    >>> state = ContactState(np.array([0, 0, 0, 0, 0.0]), np.zeros(5))
    >>> round(pair.forward_dynamics(state).normal_force, 6)
    9.81
    """

    def __init__(self, surface1: Surface, surface2: Surface, inertia2,
                 inertia1=None, pose1=None, gravity=(0.0, 0.0, -9.81)):
        for k, s in ((1, surface1), (2, surface2)):
            if not isinstance(s, Surface):
                raise InputError(f"surface{k} must be an rbd.geometry.Surface, got {s!r}")
        self.surface1, self.surface2 = surface1, surface2
        self.inertia2 = _spatial_inertia(inertia2, "inertia2")
        self.inertia1 = None if inertia1 is None else _spatial_inertia(inertia1, "inertia1")
        self.pose1 = np.eye(4) if pose1 is None else np.array(pose1, dtype=float)
        if self.pose1.shape != (4, 4):
            raise InputError(f"pose1 must be a 4×4 pose, got shape {self.pose1.shape}")
        self.gravity = np.array(gravity, dtype=float)
        if self.gravity.shape != (3,) or not np.all(np.isfinite(self.gravity)):
            raise InputError(f"gravity must be a finite 3-vector, got {gravity!r}")

    @property
    def free_base(self) -> bool:
        """Whether body 1 moves (has inertia) rather than being fixed in the world."""
        return self.inertia1 is not None

    # --- kinematics -------------------------------------------------------------
    def contact_frames(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(¹E_1c, ²E_2c)``: the contact frames in their bodies' coordinates (Pai §6)."""
        q = self._check_q(q)
        return self.surface1.frame(q[0], q[1]), self.surface2.frame(q[2], q[3])

    def relative_pose(self, q: np.ndarray) -> np.ndarray:
        r"""Pose of body 2 in frame 1: :math:`{}^1_{1c}E\,{}^{1c}_{2c}E\,({}^2_{2c}E)^{-1}`."""
        E1c, E2c = self.contact_frames(q)
        return E1c @ _pose(R_psi(q[4])) @ _inv_pose(E2c)

    def contact_jacobians(self, q: np.ndarray) -> ContactJacobians:
        """The contact matrices ``H1, H2, H_psi, H`` of Pai Eqs. 9–12 (frame 1c coordinates)."""
        return self._kinematics(q, np.zeros(5)).jac

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        r"""``²H`` (6×5): body 2's twist relative to body 1, in body-2 coordinates, per q̇.

        :math:`{}^2H = {}^2_{1c}\mathrm{Ad}\,{}^{1c}H` (Pai §6, after Eq. 12).
        """
        return self._kinematics(q, np.zeros(5)).H

    def relative_motion(self, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Relative twist ``²H q̇`` and velocity-product acceleration ``(d ²H/dt) q̇``.

        Both are in body-2 coordinates.  With :math:`G(t) = {}^1_2E(q + t\dot q)`,
        :math:`\phi = (G^{-1}\dot G)^\vee` and
        :math:`\dot H\dot q = (G^{-1}\ddot G - (G^{-1}\dot G)^2)^\vee` at ``t = 0``;
        the jets of the contact frames come from :func:`rbd.geometry.frame_jet`
        (third derivatives of the surfaces).

        Returns
        -------
        phi : (6,) ndarray
        a : (6,) ndarray
        """
        k = self._kinematics(q, qd)
        return k.phi, k.a

    def _kinematics(self, q, qd) -> _Kinematics:
        q, qd = self._check_q(q), np.asarray(qd, dtype=float)
        d1 = self.surface1.partials(q[0], q[1], 3, lib="numpy")
        d2 = self.surface2.partials(q[2], q[3], 3, lib="numpy")
        R = R_psi(q[4])
        H1 = _frame_jacobian(*contact_forms(d1, "numpy"))  # Pai (9)
        H2c = _frame_jacobian(*contact_forms(d2, "numpy"))
        H2 = np.vstack([R @ H2c[:3], R @ H2c[3:]])  # Pai (10)
        H_psi = H_PSI.reshape(6, 1)  # Pai (11)
        H = np.hstack([H1, -H2, H_psi])  # Pai (12): φ(1,2) = φ(1,1c) + φ(1c,2c) - φ(2,2c)
        # Jets of ¹E_2 = A B C along q + t q̇: A = ¹E_1c, B = ^{1c}E_2c, C = (²E_2c)^{-1}.
        A = frame_jet(d1, qd[0], qd[1])
        E2 = frame_jet(d2, qd[2], qd[3])
        B = (_pose(R), _pose(_dR_psi(q[4], 1) * qd[4], 0.0),
             _pose(_dR_psi(q[4], 2) * qd[4] ** 2, 0.0))
        C0 = _inv_pose(E2[0])  # C' = -C E' C,  C'' = -C E'' C + 2 C E' C E' C
        C1 = -C0 @ E2[1] @ C0
        C = (C0, C1, -C0 @ E2[2] @ C0 - 2 * C1 @ E2[1] @ C0)
        G0 = A[0] @ B[0] @ C[0]
        G1 = A[1] @ B[0] @ C[0] + A[0] @ B[1] @ C[0] + A[0] @ B[0] @ C[1]
        G2 = (A[2] @ B[0] @ C[0] + A[0] @ B[2] @ C[0] + A[0] @ B[0] @ C[2]
              + 2 * (A[1] @ B[1] @ C[0] + A[1] @ B[0] @ C[1] + A[0] @ B[1] @ C[1]))
        Ginv = _inv_pose(G0)
        W = Ginv @ G1
        E2_1c = E2[0] @ B[0]  # ²E_1c: frames 1c and 2c share their origin
        return _Kinematics(A[0], E2[0], G0, E2_1c, ContactJacobians(H1, H2, H_psi, H),
                           Ad(E2_1c) @ H, _unhat(W), _unhat(Ginv @ G2 - W @ W))

    def qd_from_twist(self, q: np.ndarray, twist: np.ndarray) -> np.ndarray:
        r"""Contact-coordinate rates ``q̇`` (5,) with ``²H q̇ = twist``.

        Parameters
        ----------
        q : (5,) array
        twist : (6,) array
            Body 2's twist ``[ω; v]`` relative to body 1, in body-2 coordinates.

        Raises
        ------
        InputError
            If the twist moves the contact point along the normal: such a
            motion leaves contact at once and has no contact coordinates.
        """
        k = self._kinematics(q, np.zeros(5))
        twist = np.asarray(twist, dtype=float)
        if twist.shape != (6,) or not np.all(np.isfinite(twist)):
            raise InputError(f"twist must be 6 finite numbers, got {twist!r}")
        v_n = (Ad(_inv_pose(k.E2_1c)) @ twist)[5]  # normal velocity at the contact point
        if abs(v_n) > 1e-9 * (1.0 + np.abs(twist).max()):
            raise InputError(f"the twist has a velocity {v_n:.3g} along the contact normal: "
                             "the bodies would separate (or interpenetrate) at once")
        return np.linalg.lstsq(k.H, twist, rcond=None)[0]

    def qd_from_velocity(self, q: np.ndarray, omega, v_com) -> np.ndarray:
        r"""``q̇`` (5,) giving body 2 the angular velocity ``omega`` and COM velocity ``v_com``.

        Both are relative to body 1 and in body-1 coordinates (the world's when
        body 1 is fixed at the identity pose).  See :meth:`qd_from_twist`.
        """
        E12 = self.relative_pose(q)
        R, c2 = E12[:3, :3], inertia_parts(self.inertia2)[1]
        omega, v_com = np.asarray(omega, dtype=float), np.asarray(v_com, dtype=float)
        v_origin = v_com - np.cross(omega, R @ c2)  # velocity of body 2's frame origin
        return self.qd_from_twist(q, np.concatenate([R.T @ omega, R.T @ v_origin]))

    # --- poses, velocities, energy --------------------------------------------------
    def body_poses(self, state: ContactState) -> tuple[np.ndarray, np.ndarray]:
        """World poses ``(G1, G2)`` (4×4) of the two body frames."""
        G1 = self._base_pose(state)
        return G1, G1 @ self.relative_pose(state.q)

    def _base_pose(self, state):
        if not self.free_base:
            return self.pose1
        G1 = np.eye(4)
        G1[:3, :3] = quat_to_rot(state.base_q[3:7])
        G1[:3, 3] = state.base_q[:3]
        return G1

    def twists(self, state: ContactState) -> tuple[np.ndarray, np.ndarray]:
        """Body twists ``(φ1, φ2)``, each ``[ω; v]`` in its own body coordinates."""
        phi1 = np.zeros(6) if not self.free_base else np.asarray(state.base_v, dtype=float)
        X21 = Ad(_inv_pose(self.relative_pose(state.q)))
        return phi1, X21 @ phi1 + self.jacobian(state.q) @ state.qd

    def center_of_mass(self, state: ContactState, body: int = 2) -> np.ndarray:
        """World position ``(3,)`` of the centre of mass of ``body`` (1 or 2)."""
        I = self.inertia2 if body == 2 else self.inertia1
        if I is None:
            raise InputError("body 1 is fixed and has no inertia")
        G = self.body_poses(state)[body - 1]
        return G[:3, :3] @ inertia_parts(I)[1] + G[:3, 3]

    def kinetic_energy(self, state: ContactState) -> float:
        r""":math:`\tfrac12\sum_i \phi_i^T I_i \phi_i`."""
        phi1, phi2 = self.twists(state)
        T = 0.5 * phi2 @ self.inertia2 @ phi2
        if self.free_base:
            T += 0.5 * phi1 @ self.inertia1 @ phi1
        return float(T)

    def potential_energy(self, state: ContactState) -> float:
        r""":math:`-\sum_i m_i\, g\cdot c_i` (zero at the world origin)."""
        V = -inertia_parts(self.inertia2)[0] * self.gravity @ self.center_of_mass(state, 2)
        if self.free_base:
            V -= inertia_parts(self.inertia1)[0] * self.gravity @ self.center_of_mass(state, 1)
        return float(V)

    def energy(self, state: ContactState) -> float:
        """Total mechanical energy ``T + V``."""
        return self.kinetic_energy(state) + self.potential_energy(state)

    def momentum(self, state: ContactState) -> np.ndarray:
        r"""Total spatial momentum ``(6,)`` in world coordinates at the world origin.

        :math:`h = \sum_i \mathrm{Ad}_{G_i^{-1}}^T I_i \phi_i`; conserved without gravity.
        """
        G1, G2 = self.body_poses(state)
        phi1, phi2 = self.twists(state)
        h = Ad(_inv_pose(G2)).T @ self.inertia2 @ phi2
        if self.free_base:
            h += Ad(_inv_pose(G1)).T @ self.inertia1 @ phi1
        return h

    # --- dynamics -----------------------------------------------------------------
    def forward_dynamics(self, state: ContactState, f_ext=None) -> ContactDynamics:
        r"""Contact-coordinate accelerations and the contact wrench (Pai Eqs. 13–14).

        Parameters
        ----------
        state : ContactState
        f_ext : (6,) array, optional
            External wrench on body 2 in body-2 coordinates (gravity is added).

        Returns
        -------
        ContactDynamics
            ``qdd`` (5,), ``base_a`` (6,) or None, the contact wrench on body 2 in
            frame 1c and its normal component ``normal_force``.

        Notes
        -----
        With :math:`p = [\phi]^{\times *} I\phi - f_{ext}` (Pai's :math:`b`) and the
        velocity-product acceleration :math:`a`, fixed body 1:

        .. math::

            H^T I H\,\ddot q = -H^T(I a + p),\qquad
            \dot\phi = H\ddot q + a,\qquad f = I\dot\phi + p.

        A free body 1 adds the articulated-body step of Pai §5: body 2 passes
        :math:`\hat I = I - I H D^{-1} H^T I` and the matching bias to body 1.
        """
        self._check_state(state)
        k = self._kinematics(state.q, state.qd)
        G1 = self._base_pose(state)
        G2 = G1 @ k.E12
        X21 = Ad(_inv_pose(k.E12))  # motion transform, body-1 to body-2 coordinates
        H = k.H  # ²H
        phi1 = np.zeros(6) if not self.free_base else np.asarray(state.base_v, float)
        phi2 = X21 @ phi1 + k.phi
        a = k.a + crm(phi2) @ k.phi  # velocity product of the contact "joint"
        I2 = self.inertia2
        f2 = self._gravity_wrench(I2, G2) + (np.zeros(6) if f_ext is None else f_ext)
        p2 = crf(phi2) @ I2 @ phi2 - f2  # Pai (1): b = -[φ]^T M φ, less external forces
        U = I2 @ H
        D = H.T @ U  # Pai (14): H^T M H
        u = -H.T @ (I2 @ a + p2)  # Pai (14): r = H^T(f_ext + [φ]^T M φ - M Ḣ q̇)
        base_a = None
        try:
            if not self.free_base:
                qdd = np.linalg.solve(D, u)  # Pai (14), last row
                phid2 = H @ qdd + a  # Pai (13), second row
            else:
                Dinv_u = np.linalg.solve(D, u)
                Ia = I2 - U @ np.linalg.solve(D, U.T)  # Pai §5: articulated inertia M̂
                pa = p2 + I2 @ a + U @ Dinv_u  # Pai §5: b̂ + M̂ a
                I1 = self.inertia1
                p1 = crf(phi1) @ I1 @ phi1 - self._gravity_wrench(I1, G1)
                base_a = -np.linalg.solve(I1 + X21.T @ Ia @ X21, p1 + X21.T @ pa)
                qdd = Dinv_u - np.linalg.solve(D, U.T @ X21 @ base_a)
                phid2 = X21 @ base_a + H @ qdd + a
        except np.linalg.LinAlgError:
            raise ModelError("the contact matrix H has lost rank: the relative curvature is "
                             "singular (e.g. flat on flat) or a surface chart is degenerate"
                             ) from None
        f = I2 @ phid2 + p2  # Pai (13), first row: the contact wrench on body 2
        wrench = Ad(k.E2_1c).T @ f  # to frame 1c: a pure normal force when H^T f = 0
        return ContactDynamics(qdd, base_a, wrench, float(wrench[5]))

    def _gravity_wrench(self, I: np.ndarray, G: np.ndarray) -> np.ndarray:
        """Gravity on a body as a body-frame wrench: ``I [0; Rᵀ g]``."""
        return I @ np.concatenate([np.zeros(3), G[:3, :3].T @ self.gravity])

    def derivative(self, state: ContactState, f_ext=None) -> np.ndarray:
        """Time derivative of ``state.to_vector()`` (for integrators)."""
        return self._derivative(state, f_ext)[0]

    def _derivative(self, state, f_ext):
        dyn = self.forward_dynamics(state, f_ext)
        parts = [np.asarray(state.qd, float), dyn.qdd]
        if self.free_base:
            R = quat_to_rot(state.base_q[3:7])
            w, v = state.base_v[:3], state.base_v[3:]
            quat_dot = 0.5 * quat_multiply(state.base_q[3:7], np.concatenate([w, [0.0]]))
            parts += [R @ v, quat_dot, dyn.base_a]
        return np.concatenate(parts), dyn

    def chart_margin(self, q: np.ndarray) -> float:
        """Distance of the contact parameters to the nearest edge of their charts (≥ 0 inside)."""
        margin = np.inf
        for surface, uv in ((self.surface1, q[0:2]), (self.surface2, q[2:4])):
            for (lo, hi), x in zip(surface.domain, uv, strict=True):
                margin = min(margin, x - lo, hi - x)
        return float(margin)

    # --- validation -----------------------------------------------------------------
    def _check_q(self, q):
        q = np.asarray(q, dtype=float)
        if q.shape != (5,) or not np.all(np.isfinite(q)):
            raise InputError(f"contact coordinates q must be 5 finite numbers, got {q!r}")
        return q

    def _check_state(self, state: ContactState) -> None:
        if not isinstance(state, ContactState):
            raise InputError(f"state must be a ContactState, got {type(state).__name__}")
        self._check_q(state.q)
        qd = np.asarray(state.qd, dtype=float)
        if qd.shape != (5,) or not np.all(np.isfinite(qd)):
            raise InputError(f"state.qd must be 5 finite numbers, got {state.qd!r}")
        if self.free_base:
            if state.base_q is None or state.base_v is None:
                raise InputError("body 1 is free: the state needs base_q (7,) and base_v (6,)")
            bq, bv = np.asarray(state.base_q, float), np.asarray(state.base_v, float)
            if bq.shape != (7,) or bv.shape != (6,) or not np.all(np.isfinite(bq)) \
                    or not np.all(np.isfinite(bv)):
                raise InputError("state.base_q must be 7 and state.base_v 6 finite numbers")
            check_unit_quaternion(bq[3:7], "state.base_q[3:7], the base's unit quaternion "
                                  "(x, y, z, w),")
        elif state.base_q is not None or state.base_v is not None:
            raise InputError("body 1 is fixed: the state must not carry base_q / base_v")
