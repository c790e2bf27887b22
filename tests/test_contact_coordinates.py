"""Contact in contact coordinates (Pai §6): kinematics (Eqs. 9–12), dynamics (13–14), events."""

import numpy as np
import pytest
from helpers import RTOL_EXACT

import rbd
from rbd import contact_coordinates as ct
from rbd import geometry as geo
from rbd.spatial import mcI, unskew

#: Central differences with step 1e-6 on O(1) quantities: truncation ~1e-12, rounding ~1e-10.
H_FD = 1e-6
TOL_FD = 1e-7

#: Rotations placing a sphere's chart: BOTTOM puts parameter (0, 0) at (0, 0, -r) with the
#: body upright; EQUATOR_XZ puts the chart's equator in the xz-plane (poles on ±y).
BOTTOM = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])
EQUATOR_XZ = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
G = 9.81


def twist_fd(pose, x, xd, h=H_FD):
    """Body twist ``(E⁻¹ Ė)^∨`` of a pose function along ``x + t ẋ``."""
    W = np.linalg.inv(pose(x)) @ (pose(x + h * xd) - pose(x - h * xd)) / (2 * h)
    return np.concatenate([unskew(W[:3, :3]), W[:3, 3]])


def ball_inertia(m=1.0, r=0.1):
    return mcI(m, np.zeros(3), 0.4 * m * r * r * np.eye(3))


def curved_patch(rng, z0=0.0):
    g = np.linspace(-0.5, 0.5, 4)
    X, Y = np.meshgrid(g, g, indexing="ij")
    Z = z0 + 0.6 * X**2 + 0.9 * Y**2 + 0.01 * rng.normal(size=(4, 4))
    return geo.BezierPatch(np.stack([X, Y, Z], axis=-1))


def pairs():
    """Pairs with generic geometry (non-orthogonal charts, torsion, curvature on both sides)."""
    rng = np.random.default_rng(3)
    I2 = mcI(2.0, np.array([0.01, 0.02, -0.03]), np.diag([0.1, 0.2, 0.15]))
    return {
        "torus-ellipsoid": (ct.ContactPair(geo.Torus(1.0, 0.3), geo.Ellipsoid(0.3, 0.2, 0.4), I2),
                            np.array([0.3, 0.5, 0.2, -0.4, 0.7])),
        "bezier-bezier": (ct.ContactPair(curved_patch(rng), curved_patch(rng).flipped(), I2),
                          np.array([0.4, 0.55, 0.6, 0.35, -0.3])),
        "plane-sphere": (ct.ContactPair(geo.Plane(e1=(1, 0.3, 0), e2=(0, 1, 0.2)),
                                        geo.Sphere(0.2).transformed(BOTTOM), I2),
                         np.array([0.1, -0.2, 0.3, 0.2, 1.1])),
    }


PAIRS = pairs()


# --- kinematics: Pai Eqs. 9-12 ----------------------------------------------------------


@pytest.mark.parametrize("name", PAIRS)
def test_contact_frames_touch_with_opposite_normals(name):
    pair, q = PAIRS[name]
    E1c, E2c = pair.contact_frames(q)
    E12 = pair.relative_pose(q)
    E2c_in_1 = E12 @ E2c
    assert np.allclose(E2c_in_1[:3, 3], E1c[:3, 3], atol=RTOL_EXACT)  # same contact point
    assert np.allclose(E2c_in_1[:3, 2], -E1c[:3, 2], atol=RTOL_EXACT)  # opposite normals
    assert np.allclose(E1c[:3, :3].T @ E2c_in_1[:3, :3], ct.R_psi(q[4]), atol=RTOL_EXACT)


def test_R_psi_is_an_involution():
    R = ct.R_psi(0.83)
    assert np.allclose(R @ R, np.eye(3), atol=RTOL_EXACT)
    assert np.linalg.det(R) == pytest.approx(1.0)


@pytest.mark.parametrize("name", PAIRS)
def test_H1_H2_Hpsi_are_the_frame_twists(name):
    """Pai (9), (10), (11) against finite differences of the frames."""
    pair, q = PAIRS[name]
    rng = np.random.default_rng(4)
    J = pair.contact_jacobians(q)

    def E1c(x):
        return pair.surface1.frame(x[0], x[1])

    def E2c(x):
        return pair.surface2.frame(x[0], x[1])

    def E_psi(x):
        E = np.eye(4)
        E[:3, :3] = ct.R_psi(x[0])
        return E

    for _ in range(3):
        qd = rng.normal(size=5)
        phi_1_1c = twist_fd(E1c, q[0:2], qd[0:2])  # Pai (9)
        assert np.allclose(J.H1 @ qd[0:2], phi_1_1c, atol=TOL_FD)
        phi_2_2c = twist_fd(E2c, q[2:4], qd[2:4])
        R = ct.R_psi(q[4])  # Pai (10): rotate 2c coordinates into 1c
        assert np.allclose(J.H2 @ qd[2:4], np.concatenate([R @ phi_2_2c[:3], R @ phi_2_2c[3:]]),
                           atol=TOL_FD)
        phi_1c_2c = ct.Ad(E_psi(q[4:])) @ twist_fd(E_psi, q[4:], qd[4:])  # in 1c coordinates
        assert np.allclose(J.H_psi[:, 0] * qd[4], phi_1c_2c, atol=TOL_FD)  # Pai (11)


@pytest.mark.parametrize("name", PAIRS)
def test_H_is_the_relative_twist_of_the_bodies(name):
    """Pai (12): ¹ᶜφ(1, 2) = H q̇, from finite differences of the relative pose."""
    pair, q = PAIRS[name]
    rng = np.random.default_rng(5)
    H = pair.contact_jacobians(q).H
    E1c = pair.contact_frames(q)[0]
    E_1c_2 = np.linalg.inv(E1c) @ pair.relative_pose(q)
    for _ in range(3):
        qd = rng.normal(size=5)
        phi_2 = twist_fd(pair.relative_pose, q, qd)  # body-2 coordinates
        assert np.allclose(H @ qd, ct.Ad(E_1c_2) @ phi_2, atol=TOL_FD)
        assert np.allclose(pair.jacobian(q) @ qd, phi_2, atol=TOL_FD)


def test_printed_sign_of_H_psi_in_eq_12_would_fail():
    """With Eq. 11 as printed, Eq. 12 needs +H_ψ: the -H_ψ variant is off by 2 H_ψ ψ̇."""
    pair, q = PAIRS["torus-ellipsoid"]
    qd = np.array([0.0, 0.0, 0.0, 0.0, 1.0])
    J = pair.contact_jacobians(q)
    E_1c_2 = np.linalg.inv(pair.contact_frames(q)[0]) @ pair.relative_pose(q)
    phi = ct.Ad(E_1c_2) @ twist_fd(pair.relative_pose, q, qd)
    assert np.allclose(phi, J.H_psi[:, 0], atol=TOL_FD)
    assert not np.allclose(phi, -J.H_psi[:, 0], atol=0.1)


@pytest.mark.parametrize("name", PAIRS)
def test_velocity_product_matches_finite_differences(name):
    """(d ²H/dt) q̇ along q + t q̇, the term Pai writes M Ḣ q̇ in r (Eq. 14)."""
    pair, q = PAIRS[name]
    rng = np.random.default_rng(6)
    for _ in range(3):
        qd = rng.normal(size=5)
        phi, a = pair.relative_motion(q, qd)
        assert np.allclose(phi, pair.jacobian(q) @ qd, atol=RTOL_EXACT)
        h = 1e-5
        ref = (pair.jacobian(q + h * qd) - pair.jacobian(q - h * qd)) @ qd / (2 * h)
        assert np.allclose(a, ref, atol=1e-6 * max(1.0, np.abs(ref).max()))


# --- dynamics: Pai Eqs. 13-14 -------------------------------------------------------------


@pytest.mark.parametrize("name", PAIRS)
def test_contact_wrench_is_a_pure_normal_force(name):
    """Back-substitution (Pai 13) gives f with Hᵀf = 0: no moment, no tangential force."""
    pair, q = PAIRS[name]
    rng = np.random.default_rng(7)
    for _ in range(3):
        dyn = pair.forward_dynamics(ct.ContactState(q, rng.normal(size=5)),
                                    f_ext=rng.normal(size=6))
        assert np.allclose(dyn.wrench[:5], 0.0, atol=1e-9 * max(1.0, abs(dyn.normal_force)))
        assert dyn.normal_force == dyn.wrench[5]


@pytest.mark.parametrize("name", PAIRS)
def test_forward_dynamics_matches_lagrange_equations(name):
    """An independent derivation: T = ½ q̇ᵀ(HᵀIH)q̇, V from the poses, derivatives by FD."""
    pair, q = PAIRS[name]
    rng = np.random.default_rng(8)
    qd = rng.normal(size=5)

    def mass(x):
        H = pair.jacobian(x)
        return H.T @ pair.inertia2 @ H

    def V(x):
        return pair.potential_energy(ct.ContactState(x, np.zeros(5)))

    h = 1e-5
    E = np.eye(5)
    Mdot_qd = (mass(q + h * qd) - mass(q - h * qd)) @ qd / (2 * h)
    dT_dq = np.array([qd @ (mass(q + h * e) - mass(q - h * e)) @ qd / (4 * h) for e in E])
    dV_dq = np.array([(V(q + h * e) - V(q - h * e)) / (2 * h) for e in E])
    qdd_lagrange = np.linalg.solve(mass(q), -Mdot_qd + dT_dq - dV_dq)
    qdd = pair.forward_dynamics(ct.ContactState(q, qd)).qdd
    assert np.allclose(qdd, qdd_lagrange, atol=1e-6 * max(1.0, np.abs(qdd).max()))


def test_ball_resting_on_a_plane():
    m, r = 2.0, 0.1
    pair = ct.ContactPair(geo.Plane(), geo.Sphere(r).transformed(BOTTOM), ball_inertia(m, r))
    state = ct.ContactState(np.array([0.3, -0.2, 0.0, 0.0, 0.4]), np.zeros(5))
    dyn = pair.forward_dynamics(state)
    assert np.allclose(dyn.qdd, 0.0, atol=RTOL_EXACT)
    assert dyn.normal_force == pytest.approx(m * G, rel=RTOL_EXACT)
    assert np.allclose(pair.center_of_mass(state), [0.3, -0.2, r], atol=RTOL_EXACT)


@pytest.mark.slow
def test_pai_figure_2_patch_released_on_a_plane():
    """Pai Fig. 2: frictionless, the centre of mass moves only vertically; energy is kept.

    Measured (dt = 1 ms, 0.3 s): horizontal drift 7.5e-11 m, energy error 1.0e-8 J of
    0.69 J, falling 16-fold per halving of dt (RK4's fourth order).
    """
    rng = np.random.default_rng(9)
    upper = curved_patch(rng).flipped()  # normal pointing down, out of the body
    lower = geo.BezierPatch.from_heights(np.zeros((4, 4)), 2.0)
    inertia = mcI(1.0, np.array([0.0, 0.0, 0.15]), np.diag([0.02, 0.03, 0.04]))
    pair = ct.ContactPair(lower, upper, inertia)
    state0 = ct.ContactState(np.array([0.5, 0.5, 0.72, 0.3, 0.4]), np.zeros(5))
    traj = ct.simulate(pair, state0, 0.3, 1e-3)
    assert traj.events == [] and traj.t[-1] == pytest.approx(0.3)
    drift = np.abs(traj.com[:, :2] - traj.com[0, :2]).max()
    assert drift < 1e-9
    assert np.ptp(traj.com[:, 2]) > 1e-3  # it does move: the centre of mass drops
    assert np.abs(traj.energy - traj.energy[0]).max() < 1e-7
    assert traj.normal_force.min() > 0


def bowl_pair(ball, inertia, R=1.0):
    bowl = geo.Sphere(R).transformed(EQUATOR_XZ).flipped()  # inside surface, normal inward
    return ct.ContactPair(bowl, ball, inertia)


@pytest.mark.slow
def test_ball_in_a_bowl_is_a_spherical_pendulum():
    """Frictionless: the ball slides without turning; its centre swings on radius R - r.

    Period of a pendulum of length l = R - r at amplitude θ₀:
    2π √(l/g) (1 + θ₀²/16 + 11 θ₀⁴/3072 + O(θ₀⁶)); even the θ₀⁴ term (3.6e-7 here)
    is resolved: measured agreement 5e-9.
    """
    R, r, theta0 = 1.0, 0.1, 0.1
    pair = bowl_pair(geo.Sphere(r).transformed(BOTTOM), ball_inertia(1.0, r), R)
    state0 = ct.ContactState(np.array([0.0, -np.pi / 2 + theta0, 0.0, 0.0, 0.2]), np.zeros(5))
    period = 2 * np.pi * np.sqrt((R - r) / G) * (1 + theta0**2 / 16 + 11 * theta0**4 / 3072)
    traj = ct.simulate(pair, state0, 0.3 * period, 4e-3)
    x = traj.com[:, 0]
    assert x[0] == pytest.approx((R - r) * np.sin(theta0))
    k = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))[0]  # first pass through the bottom
    t_cross = traj.t[k] + x[k] / (x[k] - x[k + 1]) * (traj.t[k + 1] - traj.t[k])
    assert 4 * t_cross == pytest.approx(period, rel=5e-8)
    assert np.abs(traj.energy - traj.energy[0]).max() < 1e-9
    _, phi2 = pair.twists(traj.state(len(traj.t) - 1))
    G2 = pair.body_poses(traj.state(len(traj.t) - 1))[1]
    assert np.allclose(G2[:3, :3] @ phi2[:3], 0.0, atol=1e-9)  # no spin develops


@pytest.mark.slow
def test_ellipsoid_in_a_bowl_conserves_energy():
    """An ellipsoid rocks, turns and slides in the bowl: every term of H and Ḣq̇ is active.

    Measured (dt = 4 ms, 0.6 s): energy error 4.3e-9 J of |E| = 8.6 J.
    """
    ell = geo.Ellipsoid(0.08, 0.12, 0.1).transformed(BOTTOM)
    inertia = mcI(1.0, np.zeros(3), np.diag([0.0044, 0.0033, 0.0041]))
    pair = bowl_pair(ell, inertia)
    q0 = np.array([0.1, -np.pi / 2 + 0.25, 0.15, -0.1, 0.3])
    state0 = ct.ContactState(q0, np.array([0.3, 0.2, -0.5, 0.4, 2.0]))
    traj = ct.simulate(pair, state0, 0.6, 4e-3)
    assert traj.events == []
    assert np.ptp(traj.q[:, 2:4], axis=0).min() > 0.05  # the contact moves over the ellipsoid
    assert np.abs(traj.energy - traj.energy[0]).max() < 1e-8


# --- events ---------------------------------------------------------------------------------


def test_separation_when_pulled_up():
    """A ball pulled up with force k t leaves the plane at t = m g / k (event located in-step)."""
    m, r, k = 1.5, 0.1, 20.0
    pair = ct.ContactPair(geo.Plane(), geo.Sphere(r).transformed(BOTTOM), ball_inertia(m, r))

    def pull(t, state):
        R2 = pair.body_poses(state)[1][:3, :3]
        return np.concatenate([np.zeros(3), R2.T @ [0.0, 0.0, k * t]])

    traj = ct.simulate(pair, ct.ContactState(np.zeros(5), np.zeros(5)), 2.0, 0.05, f_ext=pull)
    assert [e.kind for e in traj.events] == ["separation"]
    assert traj.events[0].time == pytest.approx(m * G / k, rel=1e-9)
    assert traj.t[-1] == traj.events[0].time
    assert abs(traj.normal_force[-1]) < 1e-9


@pytest.mark.slow
def test_ball_sliding_off_a_dome_separates_at_the_classical_angle():
    """From the top with speed v₀: cos θ* = (2 + v₀²/(g (R + r))) / 3."""
    R, r, v0 = 1.0, 0.1, 1.0
    dome = geo.Sphere(R).transformed(EQUATOR_XZ)
    pair = ct.ContactPair(dome, geo.Sphere(r).transformed(BOTTOM), ball_inertia(1.0, r))
    q0 = np.array([np.pi / 2, 0.0, 0.0, 0.0, 0.0])
    state0 = ct.ContactState(q0, pair.qd_from_velocity(q0, np.zeros(3), [v0, 0.0, 0.0]))
    traj = ct.simulate(pair, state0, 2.0, 5e-3)
    assert [e.kind for e in traj.events] == ["separation"]
    c = pair.center_of_mass(traj.events[0].state)
    theta = np.arccos(c[2] / np.linalg.norm(c))
    assert theta == pytest.approx(np.arccos((2 + v0**2 / (G * (R + r))) / 3), abs=1e-8)


def test_an_upward_velocity_has_no_contact_coordinates():
    """A sphere given an upward velocity leaves at once: qd_from_velocity refuses it."""
    pair = ct.ContactPair(geo.Plane(), geo.Sphere(0.1).transformed(BOTTOM), ball_inertia())
    q = np.zeros(5)
    with pytest.raises(rbd.InputError, match="along the contact normal"):
        pair.qd_from_velocity(q, np.zeros(3), [0.2, 0.0, 1.0])
    assert np.all(q == 0)


def test_state_that_would_pull_is_an_event_at_once():
    pair = ct.ContactPair(geo.Plane(), geo.Sphere(0.1).transformed(BOTTOM), ball_inertia())
    lift = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 20.0])  # body z is world z here
    traj = ct.simulate(pair, ct.ContactState(np.zeros(5), np.zeros(5)), 1.0, 0.01, f_ext=lift)
    assert [(e.kind, e.time) for e in traj.events] == [("separation", 0.0)]


def test_chart_event_at_the_edge_of_a_patch():
    """A ball sliding on a flat Bézier patch of half width w reaches its edge at t = w / v."""
    w, v = 0.5, 2.0
    patch = geo.BezierPatch.from_heights(np.zeros((4, 4)), w)
    pair = ct.ContactPair(patch, geo.Sphere(0.1).transformed(BOTTOM), ball_inertia())
    q0 = np.array([0.5, 0.5, 0.0, 0.0, 0.0])
    state0 = ct.ContactState(q0, pair.qd_from_velocity(q0, np.zeros(3), [v, 0.0, 0.0]))
    traj = ct.simulate(pair, state0, 1.0, 0.02)
    assert [e.kind for e in traj.events] == ["chart"]
    assert traj.events[0].time == pytest.approx(w / v, rel=1e-9)


# --- two free bodies --------------------------------------------------------------------------


def free_shell_pair(gravity):
    ball = geo.Sphere(0.1).transformed(BOTTOM)
    shell = geo.Sphere(1.0).transformed(EQUATOR_XZ).flipped()
    I1 = mcI(3.0, np.array([0.0, 0.05, 0.1]), np.diag([2.0, 2.2, 2.5]))
    I2 = mcI(1.0, np.array([0.01, 0.0, 0.0]), 0.004 * np.eye(3))
    pair = ct.ContactPair(shell, ball, I2, inertia1=I1, gravity=gravity)
    state0 = ct.ContactState(np.array([0.1, -np.pi / 2 + 0.2, 0.05, 0.0, 0.3]),
                             np.array([0.5, 1.0, -0.3, 0.4, 0.2]),
                             np.array([0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0]),
                             np.array([0.1, -0.2, 0.3, 0.2, 0.1, -0.1]))
    return pair, state0


@pytest.mark.slow
def test_two_free_bodies_conserve_momentum_and_energy():
    """Ball sliding inside a free shell, no gravity (measured: both < 1e-11 over 0.4 s)."""
    pair, state0 = free_shell_pair((0.0, 0.0, 0.0))
    traj = ct.simulate(pair, state0, 0.4, 4e-3)
    assert traj.events == [] and traj.normal_force.min() > 0
    h = np.array([pair.momentum(traj.state(k)) for k in range(len(traj.t))])
    assert np.abs(h - h[0]).max() < 1e-9
    assert np.abs(traj.energy - traj.energy[0]).max() < 1e-9


@pytest.mark.slow
def test_uniform_gravity_does_not_change_the_relative_motion_of_free_bodies():
    """Both bodies fall together: q(t) is the same with and without gravity."""
    pair0, state0 = free_shell_pair((0.0, 0.0, 0.0))
    pairg, _ = free_shell_pair((0.0, 0.0, -G))
    traj0 = ct.simulate(pair0, state0, 0.1, 5e-3)
    trajg = ct.simulate(pairg, state0, 0.1, 5e-3)
    assert np.allclose(traj0.q, trajg.q, atol=1e-10)
    assert np.allclose(traj0.normal_force, trajg.normal_force, atol=1e-9)
    dp = pairg.momentum(trajg.state(len(trajg.t) - 1))[3:] - pairg.momentum(state0)[3:]
    assert np.allclose(dp, 4.0 * np.array([0.0, 0.0, -G]) * trajg.t[-1], atol=1e-9)


# --- bad input ----------------------------------------------------------------------------------


def test_bad_input_raises_named_errors():
    ball = geo.Sphere(0.1).transformed(BOTTOM)
    pair = ct.ContactPair(geo.Plane(), ball, ball_inertia())
    q = np.zeros(4)
    with pytest.raises(rbd.InputError, match="contact coordinates q must be 5"):
        pair.forward_dynamics(ct.ContactState(q, np.zeros(5)))
    assert np.all(q == 0)
    with pytest.raises(rbd.InputError, match="must not carry base_q"):
        pair.forward_dynamics(ct.ContactState(np.zeros(5), np.zeros(5), np.zeros(7), np.zeros(6)))
    with pytest.raises(rbd.InputError, match="must be an rbd.geometry.Surface"):
        ct.ContactPair("plane", ball, ball_inertia())
    with pytest.raises(rbd.ModelError, match="not positive definite"):
        ct.ContactPair(geo.Plane(), ball, np.zeros((6, 6)))
    with pytest.raises(rbd.InputError, match="dt > 0"):
        ct.simulate(pair, ct.ContactState(np.zeros(5), np.zeros(5)), 1.0, 0.0)
    with pytest.raises(rbd.InputError, match=r"f_ext must be a \(6,\) wrench"):
        ct.simulate(pair, ct.ContactState(np.zeros(5), np.zeros(5)), 1.0, 0.1, f_ext=np.ones(3))
    free, state0 = free_shell_pair((0.0, 0.0, 0.0))
    with pytest.raises(rbd.InputError, match="needs base_q"):
        free.forward_dynamics(ct.ContactState(state0.q, state0.qd))
    base_q = np.array(state0.base_q, dtype=float)
    base_q[3:7] *= 1.2                                  # the base's quaternion, norm 1.2
    with pytest.raises(rbd.InputError, match=r"state\.base_q\[3:7\].* has norm 1\.2, not 1$"):
        free.forward_dynamics(ct.ContactState(state0.q, state0.qd, base_q, state0.base_v))
    with pytest.raises(rbd.ModelError, match="lost rank"):
        flat = ct.ContactPair(geo.Plane(), geo.Plane().flipped(), ball_inertia())
        flat.forward_dynamics(ct.ContactState(np.zeros(5), np.zeros(5)))
