"""Mechanisms with complex joints: closed-form frames, contact kinematics, energy."""

import numpy as np
import pytest
import sympy
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd import geometry
from rbd import spatial as sp
from rbd.models import mechanisms as mech
from rbd.symbolic import frames, lagrangian

#: Closed-form and generic frames are two evaluations of the same vectors.
RTOL_FRAME = 1e-12
#: RK4 with dt = 1e-3 over 0.3 s: energy error O(dt⁴) per unit time, ~1e-9 relative.
RTOL_ENERGY = 1e-6

u, v, s = sympy.symbols("u v s", real=True)

SURFACES = [
    geometry.Torus(0.5, 0.1),
    geometry.Sphere(0.3),
    geometry.Ellipsoid(0.4, 0.25, 0.15),
    geometry.Plane((0.1, 0.2, 0.3), (1.0, 0.0, 0.0), (0.0, 0.6, 0.8)),
    geometry.Torus(0.5, 0.1).transformed(sp.so3_exp(np.array([0.3, -0.2, 0.5])), (0, 0, 1)),
]


@pytest.mark.parametrize("surface", SURFACES, ids=repr)
def test_closed_form_surface_frames_match_geometry(surface):
    outward = sympy.lambdify((u, v), frames.surface_frame(surface, u, v))
    inward = sympy.lambdify((u, v), frames.surface_frame(surface, u, v, outward=False))
    for point in [(0.3, 0.4), (2.1, -0.9), (-1.0, 1.2)]:
        F = surface.frame(*point)
        assert_close(outward(*point), F, RTOL_FRAME, "frame")
        G = inward(*point)
        assert_close(G[:3, 2], -F[:3, 2], RTOL_FRAME, "inward normal")
        assert_close(G[:3, 3], F[:3, 3], RTOL_FRAME, "contact point")
        assert_close(G[:3, :3].T @ G[:3, :3], np.eye(3), RTOL_FRAME, "rotation")
        assert np.linalg.det(G[:3, :3]) > 0


def test_closed_form_helix_frame_matches_geometry():
    helix = geometry.Helix(0.5, 0.1)
    frame = sympy.lambdify(s, frames.curve_frame(helix, s))
    for t in (0.0, 0.7, -2.3):
        assert_close(frame(t), helix.frame(t), RTOL_FRAME, "Frenet frame")


# --- Si & Guenter, Table 1: DoF of TC10, TC20 and the windmill ---------------------------------
@pytest.mark.parametrize("builder, dof", [
    (lambda: mech.torus_chain(10), 38),
    (lambda: mech.torus_chain(20), 78),
    (mech.windmill, 73),
])
def test_table1_degrees_of_freedom(builder, dof):
    model = builder()
    assert model.nv == model.nq == dof


def body_pose(model, q, i):
    return rbd.forward_kinematics(model, q, backend="reference")[i]


def test_torus_chain_keeps_tubes_in_contact():
    """At any q, the parent's contact point equals the child's, normals opposite (GL (15))."""
    model = mech.torus_chain(3)
    torus = mech.body_shapes(model)["torus1"]
    rng = np.random.default_rng(21)
    q = rbd.neutral(model) + rng.uniform(-0.4, 0.4, model.nq)
    for i in (1, 2):
        u1, v1, u2, v2 = q[model.q_index(i)]
        parent = body_pose(model, q, i - 1) @ torus.frame(u1, v1)
        child = body_pose(model, q, i) @ torus.frame(u2, v2)
        assert_close(parent[:3, 3], child[:3, 3], RTOL_EXACT, "contact point")
        assert_close(parent[:3, 2], -child[:3, 2], RTOL_EXACT, "normals")


def test_torus_chain_hangs_straight_down():
    model = mech.torus_chain(4, R=0.5, r=0.1)
    T = rbd.forward_kinematics(model, rbd.neutral(model), backend="reference")
    # consecutive centres are 2 (R - r) apart along -z; each torus axis turned 90°
    assert_close(T[:, :3, 3], [[0, 0, -0.4], [0, 0, -1.2], [0, 0, -2.0], [0, 0, -2.8]],
                 RTOL_EXACT, "centres")
    for i in range(3):
        assert abs(T[i, :3, 2] @ T[i + 1, :3, 2]) < 1e-12


def test_bead_stays_on_the_wire():
    model = mech.bead_on_wire()
    helix = mech.body_shapes(model)["world"][1]
    for t in (0.0, 1.3, -4.0):
        T = body_pose(model, np.array([t]), 0)
        assert_close(T[:3, 3], helix.position(t), RTOL_EXACT, "on the wire")
        assert_close(T[:3, 0], helix.frenet(t)[0], RTOL_EXACT, "along the tangent")


def test_wheels_roll_without_slip():
    """The wheel point touching the track (or the other wheel) has the same velocity."""
    model = mech.rolling_wheels(track_radius=1.0, r1=0.3, r2=0.12)
    rng = np.random.default_rng(22)
    q, qd = rng.uniform(0.5, 2.5, 2), rng.normal(size=2)
    T = rbd.forward_kinematics(model, q, backend="reference")
    c1, c2 = T[0, :3, 3], T[1, :3, 3]
    contact1 = c1 / np.linalg.norm(c1) * 1.0
    contact2 = c1 + (c2 - c1) / np.linalg.norm(c2 - c1) * 0.3

    def point_velocity(body, world_point):
        local = T[body, :3, :3].T @ (world_point - T[body, :3, 3])
        return rbd.jacobian(model, q, body, local, backend="reference")[3:] @ qd

    assert_close(point_velocity(0, contact1), np.zeros(3), RTOL_EXACT, "on the track")
    assert_close(point_velocity(1, contact2), point_velocity(0, contact2), RTOL_EXACT,
                 "wheel on wheel")


def test_four_bar_knee_closes_its_loop():
    knee = mech.KNEE
    joint = mech.four_bar_coupler(**knee)
    for theta in np.linspace(0.3, 3.0, 7):
        R, B = joint.transform(np.array([theta]))
        C = B + R @ np.array([knee["coupler"], 0.0, 0.0])
        assert np.linalg.norm(B) == pytest.approx(knee["crank"], rel=1e-12)
        assert np.linalg.norm(C - [knee["ground"], 0, 0]) == pytest.approx(knee["rocker"],
                                                                            rel=1e-12)


# --- dynamics ------------------------------------------------------------------------------
SMALL = {
    "bead": mech.bead_on_wire,
    "wheels": mech.rolling_wheels,
    "knee": mech.four_bar_knee,
    "TC2": lambda: mech.torus_chain(2),
}


def _backend():
    return "kernel" if rbd.has_kernels() else "reference"


def energy(model, q, qd):
    return rbd.kinetic_energy(model, q, qd) + rbd.potential_energy(model, q)


def rk4(model, q, qd, dt, steps, backend):
    def f(x):
        q_, qd_ = x[:model.nq], x[model.nq:]
        return np.concatenate([qd_, rbd.aba(model, q_, qd_, np.zeros(model.nv),
                                            backend=backend)])

    x = np.concatenate([q, qd])
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x[:model.nq], x[model.nq:]


@pytest.mark.parametrize("name", list(SMALL))
def test_passive_mechanism_conserves_energy(name):
    model = SMALL[name]()
    rng = np.random.default_rng(23)
    q0 = rbd.neutral(model) + rng.uniform(-0.2, 0.2, model.nq)
    qd0 = rng.normal(size=model.nv) * 0.5
    q1, qd1 = rk4(model, q0, qd0, 1e-3, 300, _backend())
    E0, E1 = energy(model, q0, qd0), energy(model, q1, qd1)
    assert abs(E1 - E0) <= RTOL_ENERGY * max(1.0, abs(E0))
    assert not np.allclose(q1, q0)  # it moved


@pytest.mark.parametrize("name", ["bead", "wheels", "knee"])
def test_symbolic_lagrangian_on_mechanisms(name):
    model = SMALL[name]()
    gl = lagrangian(model)
    rng = np.random.default_rng(24)
    q = rbd.neutral(model) + rng.uniform(-0.3, 0.3, model.nq)
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    assert_close(gl.forward_dynamics(q, qd, tau), rbd.aba(model, q, qd, tau,
                                                           backend="reference"), 1e-9, "aba")
    assert_close(gl.inverse_dynamics(q, qd, tau), rbd.rnea(model, q, qd, tau,
                                                           backend="reference"),
                 RTOL_EXACT, "rnea")


@pytest.mark.skipif(not rbd.has_kernels(), reason="compiled kernels not built")
def test_windmill_kernel_agrees_with_reference():
    model = mech.windmill()
    rng = np.random.default_rng(25)
    q = rbd.neutral(model) + rng.uniform(-0.2, 0.2, model.nq)
    qd, tau = rng.normal(size=model.nv) * 0.3, rng.normal(size=model.nv)
    assert_close(rbd.rnea(model, q, qd, tau, backend="kernel"),
                 rbd.rnea(model, q, qd, tau, backend="reference"), RTOL_EXACT, "rnea")


def test_bad_arguments():
    with pytest.raises(rbd.ModelError, match="at least one torus"):
        mech.torus_chain(0)
    with pytest.raises(rbd.ModelError, match="0 < r < R"):
        mech.torus_chain(3, R=0.1, r=0.2)
    with pytest.raises(rbd.ModelError, match="at least one arm"):
        mech.windmill(arms=0)


# --- rolling without slip (GL Eq. 16) ----------------------------------------------------------
@pytest.fixture(scope="module")
def bowl():
    from rbd.symbolic.rolling import ellipsoid_in_bowl

    return ellipsoid_in_bowl()


def _admissible_velocity(contact, q, weights):
    """A velocity in the null space of P(q)."""
    _, _, Vt = np.linalg.svd(contact.P(q))
    return Vt[2:].T @ weights


def test_rolling_ball_keeps_contact_point_at_rest(bowl):
    from rbd.symbolic.rolling import simulate_rolling

    model, contact = bowl
    ball = geometry.Ellipsoid(0.2, 0.15, 0.12)
    q0 = np.array([0.15, 0.05, 0.0, 0.0])            # released from rest off the bottom
    t, Q, QD = simulate_rolling(model, contact, q0, np.zeros(4), 0.4, 2e-3)
    assert np.abs(Q[:, [1, 3]]).max() < 1.0          # clear of the ellipsoid charts' poles
    E = [energy(model, q, qd) for q, qd in zip(Q, QD, strict=True)]
    assert np.ptp(E) <= RTOL_ENERGY * max(1.0, abs(E[0]))
    for q, qd in zip(Q[::25], QD[::25], strict=True):
        point = ball.position(q[2], q[3])            # the ball's material point at the contact
        v = rbd.jacobian(model, q, 0, point, backend="reference")[3:] @ qd
        assert np.abs(v).max() < 1e-8
    assert np.abs(Q[-1] - q0).max() > 0.05           # it rolled


def test_baumgarte_removes_velocity_drift(bowl):
    """A velocity error e = P q̇ decays as exp(-β t) (velocity-level Baumgarte)."""
    from rbd.symbolic.rolling import simulate_rolling

    model, contact = bowl
    q0 = np.array([0.1, -0.05, 0.0, 0.0])
    qd0 = _admissible_velocity(contact, q0, np.array([0.2, 0.1]))
    qd0 = qd0 + 0.05 * contact.P(q0)[0] / np.linalg.norm(contact.P(q0)[0])  # violate it
    beta = 20.0
    t, Q, QD = simulate_rolling(model, contact, q0, qd0, 0.25, 1e-3, beta=beta)
    e = np.array([np.linalg.norm(contact.P(q) @ qd) for q, qd in zip(Q, QD, strict=True)])
    assert e[0] > 1e-2
    assert e[-1] == pytest.approx(e[0] * np.exp(-beta * t[-1]), rel=1e-3)


def test_kkt_rejects_negative_beta(bowl):
    from rbd.symbolic.rolling import kkt_forward_dynamics

    model, contact = bowl
    with pytest.raises(rbd.InputError, match="beta must be non-negative"):
        kkt_forward_dynamics(model, contact, np.zeros(4), np.zeros(4), np.zeros(4), beta=-1.0)
