"""Liu & Jain §2: particle systems, M = Σ μ JᵀJ (Eq. 16), C (Eq. 17), Lagrange (Eq. 13)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from helpers import RTOL_EXACT

import rbd
from rbd.reference import crba, rnea
from rbd.reference.particles import (
    ParticleSystem,
    generalized_coordinates,
    mass_matrix_from_jacobians,
    particle_momenta,
    rigid_body_from_particles,
    sample_box,
    sample_box_random,
)
from rbd.testing import relative_difference

#: The midpoint rule on a uniform grid of n cells integrates x² with relative error
#: exactly 1/n², so the observed order from n to 2n is 2 up to rounding in the sums.
ORDER_TOL = 1e-6

G = 9.81


@pytest.fixture(scope="module")
def polar_particle():
    """A free particle in the plane, in polar coordinates, under gravity and a spring."""
    (rho, th), (rho_d, th_d), _ = generalized_coordinates("rho theta")
    mu, k = 2.0, 3.0
    r = sp.Matrix([rho * sp.cos(th), rho * sp.sin(th), 0])
    f = -k * r + sp.Matrix([0, -mu * G, 0])
    return ParticleSystem([rho, th], [rho_d, th_d], [r], [mu], [f])


@pytest.fixture(scope="module")
def cart_pendulum():
    """Two particles: a cart on a horizontal rail and a bob on a rigid rod hanging from it."""
    (x, th), (x_d, th_d), _ = generalized_coordinates("x theta")
    m1, m2, l = sp.Rational(3, 2), sp.Rational(7, 10), sp.Rational(4, 5)
    r1 = sp.Matrix([x, 0, 0])
    r2 = r1 + l * sp.Matrix([sp.sin(th), 0, -sp.cos(th)])
    gravity = [sp.Matrix([0, 0, -m * G]) for m in (m1, m2)]
    spring = sp.Matrix([-4 * x, 0, 0])         # a spring pulling the cart to x = 0
    return ParticleSystem([x, th], [x_d, th_d], [r1, r2], [m1, m2],
                          [gravity[0] + spring, gravity[1]]), (m1, m2, l)


def test_free_particle_obeys_newton(polar_particle, rng):
    """Unconstrained: Lagrange's equations in polar coordinates give μ r̈ = f exactly."""
    num = polar_particle.numeric()
    for _ in range(5):
        q, qd = np.array([rng.uniform(0.5, 2.0), rng.uniform(-3, 3)]), rng.normal(size=2)
        qdd = num.forward_dynamics(q, qd)
        newton = num.masses[:, None] * num.accelerations(q, qd, qdd)
        assert relative_difference(newton, num.applied_forces(q, qd)) < RTOL_EXACT


@pytest.mark.slow
def test_polar_mass_matrix_and_coriolis_closed_form(polar_particle):
    """M = diag(μ, μ ρ²); C = (−μ ρ θ̇², 2 μ ρ ρ̇ θ̇): the textbook polar terms."""
    rho, th = polar_particle.q
    rho_d, th_d = polar_particle.qd
    mu = polar_particle.mu[0]
    assert sp.simplify(polar_particle.mass_matrix() - sp.diag(mu, mu * rho**2)) == sp.zeros(2, 2)
    expected = sp.Matrix([-mu * rho * th_d**2, 2 * mu * rho * rho_d * th_d])
    assert sp.simplify(polar_particle.coriolis() - expected) == sp.zeros(2, 1)


@pytest.mark.slow
@pytest.mark.parametrize("system", ["polar_particle", "cart_pendulum"])
def test_eq17_equals_lagrange_eq13(system, request):
    """M q̈ + C (Eqs. 16–17) is exactly d/dt ∂T/∂q̇ − ∂T/∂q (Eq. 13)."""
    ps = request.getfixturevalue(system)
    ps = ps[0] if isinstance(ps, tuple) else ps
    M = ps.mass_matrix()
    residual = ps.lagrange_lhs() - (M @ ps.qdd + ps.coriolis(M))
    assert residual.applyfunc(sp.simplify) == sp.zeros(ps.n, 1)


def test_coriolis_does_no_work(cart_pendulum):
    """q̇ᵀC = ½ q̇ᵀ Ṁ q̇, so dT/dt = q̇ᵀQ (power balance)."""
    ps, _ = cart_pendulum
    M = ps.mass_matrix()
    M_dot = M.applyfunc(ps.time_derivative)
    power = (ps.qd.T @ ps.coriolis(M))[0, 0] - (ps.qd.T @ M_dot @ ps.qd)[0, 0] / 2
    assert sp.simplify(power) == 0


def test_constraint_forces_cart_pendulum(cart_pendulum, rng):
    """Newton for each particle: the rod pulls the bob along the rod, the rail pushes the
    cart only vertically, and the constraint forces do no virtual work (D'Alembert, Eq. 4)."""
    ps, _ = cart_pendulum
    num = ps.numeric()
    for _ in range(5):
        q, qd = rng.normal(size=2), rng.normal(size=2)
        F = num.constraint_forces(q, qd)                # μ r̈ − f for each particle
        r = num.positions(q)
        rod = r[1] - r[0]
        assert np.linalg.norm(np.cross(F[1], rod)) < RTOL_EXACT * max(1, np.linalg.norm(F[1]))
        # cart: rail normal force (vertical) minus the rod's pull on the bob
        rail = F[0] + F[1]
        assert abs(rail[0]) < RTOL_EXACT * max(1.0, np.abs(F).max())
        assert abs(rail[1]) < RTOL_EXACT
        J = num.jacobians(q)
        virtual_work = sum(J[i].T @ F[i] for i in range(2))
        assert np.abs(virtual_work).max() < RTOL_EXACT * max(1.0, np.abs(F).max())


def test_pendulum_rod_tension():
    """A simple pendulum: the rod tension is μ (l θ̇² + g cos θ) (radial Newton's law)."""
    (th,), (th_d,), _ = generalized_coordinates("theta")
    mu, l = 1.3, 0.9
    r = l * sp.Matrix([sp.sin(th), 0, -sp.cos(th)])
    num = ParticleSystem([th], [th_d], [r], [mu], [sp.Matrix([0, 0, -mu * G])]).numeric()
    for q, qd in [(0.3, 1.1), (-1.2, 0.4), (2.5, -2.0)]:
        F = num.constraint_forces([q], [qd])[0]
        towards_pivot = -num.positions([q])[0] / l
        tension = mu * (l * qd**2 + G * np.cos(q))
        assert relative_difference(F, tension * towards_pivot) < RTOL_EXACT
        assert relative_difference(num.forward_dynamics([q], [qd]), [-G / l * np.sin(q)]) \
            < RTOL_EXACT


def test_double_pendulum_matches_featherstone(rng):
    """Point-mass double pendulum: Eqs. 16–17 agree with CRBA and RNEA on rbd's model."""
    (t1, t2), (t1_d, t2_d), _ = generalized_coordinates("t1 t2")
    m1, m2, l1, l2 = 1.2, 0.8, 0.7, 0.5
    # rbd's double pendulum hangs along −z and turns about +y: a point at (0, 0, −l)
    # rotated by t about y is l (−sin t, 0, −cos t).
    r1 = l1 * sp.Matrix([-sp.sin(t1), 0, -sp.cos(t1)])
    r2 = r1 + l2 * sp.Matrix([-sp.sin(t1 + t2), 0, -sp.cos(t1 + t2)])
    forces = [sp.Matrix([0, 0, -m * G]) for m in (m1, m2)]
    num = ParticleSystem([t1, t2], [t1_d, t2_d], [r1, r2], [m1, m2], forces).numeric()
    model = rbd.models.double_pendulum(m1, m2, l1, l2)
    for _ in range(5):
        q, qd = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2)
        assert relative_difference(num.mass_matrix(q), crba.crba(model, q)) < RTOL_EXACT
        h = num.coriolis(q, qd) - num.generalized_forces(q, qd)
        assert relative_difference(h, rnea.nonlinear_effects(model, q, qd)) < RTOL_EXACT


def test_mass_matrix_from_numeric_jacobians(cart_pendulum, rng):
    ps, _ = cart_pendulum
    num = ps.numeric()
    q = rng.normal(size=2)
    M = mass_matrix_from_jacobians(num.jacobians(q), num.masses)
    assert relative_difference(M, num.mass_matrix(q)) < RTOL_EXACT


def _box_inertia(m, a, b, c):
    return m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def test_sampled_box_converges_at_second_order():
    """Midpoint-grid particles: mass and COM exact, inertia error O(h²) (observed order 2)."""
    m, size = 3.0, (0.4, 0.3, 0.2)
    exact = _box_inertia(m, *size)
    errors = []
    for n in (4, 8, 16):
        points, mu = sample_box(m, size, n)
        mass, com, Ic = rigid_body_from_particles(points, mu)
        assert mass == pytest.approx(m, rel=1e-14)
        assert np.abs(com).max() < 1e-14
        errors.append(np.abs(Ic - exact).max() / np.abs(exact).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) < ORDER_TOL), orders


def test_random_particles_converge_at_half_order(rng):
    """Monte Carlo particles converge too, but only like N^(-1/2): 64 times more
    particles shrink the mean error about 8 times (not 64² as on a grid)."""
    m, size = 1.0, (0.5, 0.2, 0.1)
    exact = _box_inertia(m, *size)

    def mean_error(count):
        return np.mean([np.abs(rigid_body_from_particles(*sample_box_random(m, size, count, rng))[2]
                               - exact).max() for _ in range(16)]) / np.abs(exact).max()

    ratio = mean_error(256) / mean_error(256 * 64)
    assert 3 < ratio < 25, ratio


def test_momenta_of_rigid_particle_cloud(rng):
    """Σ μ ṙ = m v and Σ r' × μ ṙ = I_c ω for rigid motion (Eqs. 18–21)."""
    points, mu = sample_box_random(2.0, (0.3, 0.5, 0.2), 500, rng)
    points = points + np.array([1.0, -2.0, 0.5])
    v, omega = rng.normal(size=3), rng.normal(size=3)
    m, _, Ic = rigid_body_from_particles(points, mu)
    P, L = particle_momenta(points, mu, v, omega)
    assert relative_difference(P, m * v) < RTOL_EXACT
    assert relative_difference(L, Ic @ omega) < RTOL_EXACT


def test_compound_pendulum_from_particles_converges():
    """A hanging box as particles: M(θ) = Σ μ |e_y × r_i|² tends to rbd's CRBA inertia."""
    m, size = 2.0, (0.1, 0.1, 0.6)
    offset = np.array([0.0, 0.0, -0.3])          # box below the hinge
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute([0, 1, 0]), None, (m, offset, _box_inertia(m, *size)))
    M_exact = crba.crba(model, np.array([0.4]))
    errors = []
    for n in (4, 8):
        points, mu = sample_box(m, size, n)
        R = rbd.spatial.axis_angle_rotation([0, 1, 0], 0.4)
        r = (points + offset) @ R.T
        J = np.cross([0.0, 1.0, 0.0], r)[:, :, None]          # ∂r_i/∂θ, (N, 3, 1)
        errors.append(abs(mass_matrix_from_jacobians(J, mu)[0, 0] - M_exact[0, 0]))
    assert errors[1] < errors[0] / 3.9


def test_bad_input_raises():
    (x,), (x_d,), _ = generalized_coordinates("x")
    r = [sp.Matrix([x, 0, 0])]
    with pytest.raises(rbd.InputError, match="same length"):
        ParticleSystem([x], [x_d], r, [1.0, 2.0])
    with pytest.raises(rbd.InputError, match="same length"):
        ParticleSystem([x], [x_d], r, [1.0], forces=[])
