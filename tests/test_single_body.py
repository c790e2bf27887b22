"""Liu & Jain §3–4: one rigid body in Newton–Euler (Eq. 24) and Lagrange (Eq. 48) form."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT

import rbd
from rbd.reference import aba, kinematics
from rbd.reference.single_body import (
    EulerXYZ,
    ExponentialMap,
    RigidBody,
    lagrange_terms,
    newton_euler,
    newton_euler_accelerations,
    simplified_terms,
)
from rbd.spatial import so3_exp, unskew
from rbd.testing import random_inertia, relative_difference

#: Central differences with h = 1e-6: truncation O(h²), rounding O(eps/h).
RTOL_FD = 1e-7
#: A fixed-step RK4 integration of 0.3 s at dt = 3e-3: global error O(dt⁴) ≈ 1e-10 times
#: derivative bounds; two parametrizations integrate different ODEs, so they differ by
#: the integration error of each.
RTOL_RK4 = 1e-8

PARAMETRIZATIONS = [ExponentialMap(), EulerXYZ()]
IDS = ["expmap", "euler"]


def _body(rng, parametrization):
    m, _, I0 = random_inertia(rng)
    return RigidBody(m, I0, parametrization)


def _state(rng, scale=1.0):
    # angles kept away from the Euler-angle singularity cos θ₂ = 0 and from |θ| = 2π
    q = np.concatenate([rng.normal(size=3), rng.uniform(-1.0, 1.0, 3)])
    return q, scale * rng.normal(size=6)


def _fd(fn, q, qd, h=1e-6):
    return (fn(q + h * qd) - fn(q - h * qd)) / (2 * h)


@pytest.mark.parametrize("par", PARAMETRIZATIONS, ids=IDS)
def test_angular_velocity_matches_rotation_rate(par, rng):
    """ω = J_ω θ̇ is the vector of Ṙ Rᵀ (L&J 29–30)."""
    for _ in range(5):
        theta, theta_d = rng.uniform(-1, 1, 3), rng.normal(size=3)
        R_dot = _fd(par.rotation, theta, theta_d)
        omega = unskew(R_dot @ par.rotation(theta).T)
        assert relative_difference(par.jacobian(theta) @ theta_d, omega) < RTOL_FD


@pytest.mark.parametrize("scale", [0.0, 1e-9, 1e-4, 0.05, 0.0999, 0.1001, 1.0, 3.0])
def test_exponential_map_rotation_and_jacobian_dot(scale, rng):
    """L&J 53 against Rodrigues in rbd.spatial; J̇_ω against differences, on both sides
    of the small-angle series switch (L&J 55–56)."""
    par = ExponentialMap()
    axis = rng.normal(size=3)
    theta = scale * axis / np.linalg.norm(axis)
    assert relative_difference(par.rotation(theta), so3_exp(theta)) < RTOL_EXACT
    theta_d = rng.normal(size=3)
    expected = _fd(par.jacobian, theta, theta_d, h=1e-5)
    assert relative_difference(par.jacobian_dot(theta, theta_d), expected) < RTOL_FD
    assert relative_difference(par.rotation(par.coordinates(par.rotation(theta))),
                               par.rotation(theta)) < RTOL_EXACT


def test_euler_jacobian_dot_and_coordinates(rng):
    par = EulerXYZ()
    for _ in range(5):
        theta, theta_d = rng.uniform(-1, 1, 3), rng.normal(size=3)
        assert relative_difference(par.jacobian_dot(theta, theta_d),
                                   _fd(par.jacobian, theta, theta_d)) < RTOL_FD
        assert relative_difference(par.coordinates(par.rotation(theta)), theta) < RTOL_EXACT


def test_newton_euler_round_trip(rng):
    m, _, Ic = random_inertia(rng)
    omega, v_dot, omega_dot = rng.normal(size=(3, 3))
    f, tau = newton_euler(m, Ic, omega, v_dot, omega_dot)
    v_dot2, omega_dot2 = newton_euler_accelerations(m, Ic, omega, f, tau)
    assert relative_difference(np.concatenate([v_dot2, omega_dot2]),
                               np.concatenate([v_dot, omega_dot])) < RTOL_EXACT


def test_torque_free_axisymmetric_precession():
    """Euler's equations for a symmetric top: ω̇ = Ω (−ω₂, ω₁, 0) with Ω = (C−A)/A ω₃."""
    A, C = 0.3, 0.5
    omega = np.array([0.4, -0.7, 2.0])
    _, omega_dot = newton_euler_accelerations(1.0, np.diag([A, A, C]), omega,
                                              np.zeros(3), np.zeros(3))
    Omega = (C - A) / A * omega[2]
    assert relative_difference(omega_dot, Omega * np.array([-omega[1], omega[0], 0])) \
        < RTOL_EXACT


@pytest.mark.parametrize("par", PARAMETRIZATIONS, ids=IDS)
def test_lagrange_equals_newton_euler(par, rng):
    """The same q̈ from M q̈ + C = Q (L&J 48) and from Newton–Euler + J q̈ = V̇ − J̇ q̇ (L&J 46)."""
    body = _body(rng, par)
    for _ in range(5):
        q, qd = _state(rng)
        f, tau = rng.normal(size=(2, 3))
        a_lagrange = body.forward_dynamics(q, qd, f, tau)
        a_newton = body.forward_dynamics_newton_euler(q, qd, f, tau)
        assert relative_difference(a_lagrange, a_newton) < RTOL_EXACT


@pytest.mark.parametrize("par", PARAMETRIZATIONS, ids=IDS)
def test_agrees_with_free_joint_aba(par, rng):
    """The Lagrange form gives the accelerations rbd's ABA gives a free body under gravity
    and the same force and torque (converted to a body-frame spatial force)."""
    body = _body(rng, par)
    gravity = np.array([0.0, 0.0, -9.81])
    model = body.free_joint_model(gravity)
    for _ in range(5):
        q, qd = _state(rng)
        f, tau = rng.normal(size=(2, 3))
        q_free, v_free = body.to_free_joint_state(q, qd)
        R = body.rotation(q)
        f_ext = np.concatenate([R.T @ tau, R.T @ f])[None, :]
        a_free = aba.aba(model, q_free, v_free, np.zeros(6), f_ext)
        expected = body.from_free_joint_acceleration(q, qd, a_free)
        assert relative_difference(body.forward_dynamics(q, qd, f + body.mass * gravity, tau),
                                   expected) < RTOL_EXACT


@pytest.mark.parametrize("par", PARAMETRIZATIONS, ids=IDS)
def test_velocity_conversions_and_energy(par, rng):
    """Generalized ↔ body velocities round-trip; T = ½ q̇ᵀ M q̇ is rbd's kinetic energy."""
    body = _body(rng, par)
    model = body.free_joint_model()
    q, qd = _state(rng)
    q_free, v_free = body.to_free_joint_state(q, qd)
    q2, qd2 = body.from_free_joint_state(q_free, v_free)
    assert relative_difference(q2, q) < RTOL_EXACT
    assert relative_difference(qd2, qd) < RTOL_EXACT
    T = body.kinetic_energy(q, qd)
    assert T == pytest.approx(0.5 * qd @ body.mass_matrix(q) @ qd, rel=RTOL_EXACT)
    assert T == pytest.approx(kinematics.kinetic_energy(model, q_free, v_free), rel=RTOL_EXACT)
    M = body.mass_matrix(q)
    assert relative_difference(M, M.T) < RTOL_EXACT
    assert np.linalg.eigvalsh(M).min() > 0


@pytest.mark.parametrize("par", PARAMETRIZATIONS, ids=IDS)
def test_terms_of_eq36_simplify_as_derived(par, rng):
    """Each term of L&J 36 from its definition equals its closed form (Eqs. 37–43), and
    their sum is Lagrange's equation (Eq. 13) for T = ½ q̇ᵀJᵀM_cJq̇."""
    body = _body(rng, par)
    q, qd = _state(rng)
    qdd = rng.normal(size=6)
    raw, closed = lagrange_terms(body, q, qd, qdd), simplified_terms(body, q, qd, qdd)
    scale = max(1.0, np.abs(raw["lagrange"]).max())
    for key in ("term1", "term2", "term3", "term4", "term5", "lagrange", "z", "Jw"):
        err = np.abs(raw[key] - closed[key]).max() / scale
        assert err < RTOL_EXACT, f"{key}: {err:.2e}"
    total = sum(raw[f"term{i}"] for i in range(1, 6))
    assert np.abs(total - raw["lagrange"]).max() / scale < RTOL_EXACT
    gyro = closed["term3"]
    assert np.abs(gyro).max() > 1e-3      # the terms are not trivially zero in this state


def _rk4(body, q, qd, dt, steps):
    def rhs(y):
        return np.concatenate([y[6:], body.forward_dynamics(y[:6], y[6:], np.zeros(3),
                                                            np.zeros(3))])
    y = np.concatenate([q, qd])
    for _ in range(steps):
        k1 = rhs(y)
        k2 = rhs(y + dt / 2 * k1)
        k3 = rhs(y + dt / 2 * k2)
        k4 = rhs(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[:6], y[6:]


@pytest.mark.slow
def test_same_motion_in_both_parametrizations(rng):
    """A tumbling body integrated in exponential-map and in Euler-angle coordinates ends in
    the same orientation with the same angular velocity; |L| and T are conserved."""
    m, _, I0 = random_inertia(rng)
    bodies = [RigidBody(m, I0, p) for p in PARAMETRIZATIONS]
    R0 = so3_exp(np.array([0.2, -0.3, 0.1]))
    V0 = np.concatenate([[0.1, 0.0, 0.2], [0.5, -0.8, 1.2]])
    ends = []
    for body in bodies:
        q0 = np.concatenate([np.zeros(3), body.parametrization.coordinates(R0)])
        qd0 = body.generalized_velocity(q0, V0)
        q1, qd1 = _rk4(body, q0, qd0, 3e-3, 100)
        V1 = body.cartesian_velocity(q1, qd1)
        L0 = body.inertia_world(q0) @ V0[3:]
        L1 = body.inertia_world(q1) @ V1[3:]
        assert relative_difference(L1, L0) < RTOL_RK4
        assert body.kinetic_energy(q1, qd1) == pytest.approx(body.kinetic_energy(q0, qd0),
                                                             rel=RTOL_RK4)
        ends.append((body.rotation(q1), V1))
    assert relative_difference(ends[0][0], ends[1][0]) < RTOL_RK4
    assert relative_difference(ends[0][1], ends[1][1]) < RTOL_RK4
    assert relative_difference(ends[0][0], R0) > 0.1          # it did turn


def test_bad_input_raises(rng):
    with pytest.raises(rbd.InputError, match="positive mass"):
        RigidBody(-1.0, np.eye(3))
    body = RigidBody(1.0, np.eye(3))
    q = np.zeros(5)
    with pytest.raises(rbd.InputError, match=r"shape \(6,\)"):
        body.mass_matrix(q)
    assert np.array_equal(q, np.zeros(5))
