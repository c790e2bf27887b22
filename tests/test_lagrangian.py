"""Liu & Jain §5: articulated trees through per-link Jacobians (Eqs. 49–59)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, every_joint_zoo

import rbd
from rbd import registry
from rbd.reference import aba, crba, kinematics, lagrangian, rnea
from rbd.testing import random_state, relative_difference

#: Central differences with h = 1e-6: truncation O(h²) ~ 1e-12, rounding O(eps/h) ~ 1e-10.
RTOL_FD = 1e-7

#: Trees covering every joint type, free joints at the root and inside.
MODELS = every_joint_zoo(7, (4, ("free", "spherical", "universal"), False),
                         (3, ("planar", "helical", "prismatic"), False), (1, ("revolute",), False))


def _f_ext(model, rng):
    return rng.normal(size=(model.nbodies, 6))


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_registered_functions_match_featherstone(k):
    """Every Lagrangian-Jacobian entry agrees with RNEA / CRBA / ABA, external forces included."""
    model, rng = MODELS[k], np.random.default_rng(k)
    impl = {qty: registry.implementations(qty)["lagrangian-jacobian"]
            for qty in ("inverse_dynamics", "mass_matrix", "forward_dynamics", "bias_forces")}
    for _ in range(2):
        q, v, a = random_state(model, rng)
        f_ext = _f_ext(model, rng)
        M = impl["mass_matrix"](model, q)
        assert M.shape == (model.nv, model.nv) and M.dtype == float
        assert relative_difference(M, crba.crba(model, q)) < RTOL_EXACT
        h = impl["bias_forces"](model, q, v)
        assert h.shape == (model.nv,)
        assert relative_difference(h, rnea.nonlinear_effects(model, q, v)) < RTOL_EXACT
        for f in (None, f_ext):
            tau = impl["inverse_dynamics"](model, q, v, a, f)
            assert relative_difference(tau, rnea.rnea(model, q, v, a, f)) < RTOL_EXACT
            qdd = impl["forward_dynamics"](model, q, v, a, f)
            assert relative_difference(qdd, aba.aba(model, q, v, a, f)) < RTOL_EXACT


def test_accepts_lists():
    model = rbd.models.double_pendulum()
    tau = lagrangian.inverse_dynamics(model, [0.1, 0.2], [0.3, 0.4], [0.5, 0.6])
    assert isinstance(tau, np.ndarray) and tau.shape == (2,)


@pytest.mark.parametrize("k", [0, 1, 3])
def test_com_jacobians_match_point_jacobians(k):
    """J_k (L&J 50–58) is the geometric Jacobian of the link's COM, rows reordered (v; ω)."""
    model = MODELS[k]
    q, _, _ = random_state(model, 11)
    J = lagrangian.com_jacobians(model, q)
    for i, body in enumerate(model.bodies):
        J_geo = kinematics.jacobian(model, q, i, body.com)         # [ω; v] at the COM
        assert relative_difference(J[i, :3], J_geo[3:]) < RTOL_EXACT
        assert relative_difference(J[i, 3:], J_geo[:3]) < RTOL_EXACT


@pytest.mark.parametrize("k", [0, 1, 3, 4])
def test_jacobian_derivatives_by_differences(k):
    """J̇_k against central differences along q(t) = integrate(q, v t)."""
    model = MODELS[k]
    q, v, _ = random_state(model, 12)
    h = 1e-6
    J_plus = lagrangian.com_jacobians(model, kinematics.integrate(model, q, v, h))
    J_minus = lagrangian.com_jacobians(model, kinematics.integrate(model, q, v, -h))
    assert relative_difference(lagrangian.com_jacobian_derivatives(model, q, v),
                               (J_plus - J_minus) / (2 * h)) < RTOL_FD


@pytest.mark.parametrize("k", [0, 1, 3, 4])
def test_mass_matrix_rate_minus_twice_coriolis_is_skew(k):
    """Ṁ − 2C is skew-symmetric for the C of Eq. 59 (Ṁ by differences along the motion)."""
    model = MODELS[k]
    q, v, _ = random_state(model, 13)
    h = 1e-6
    M_dot = (lagrangian.mass_matrix(model, kinematics.integrate(model, q, v, h))
             - lagrangian.mass_matrix(model, kinematics.integrate(model, q, v, -h))) / (2 * h)
    N = M_dot - 2 * lagrangian.coriolis_matrix(model, q, v)
    assert np.abs(N + N.T).max() < RTOL_FD * max(1.0, np.abs(N).max())


@pytest.mark.parametrize("k", [0, 2, 4])
def test_gravity_is_gradient_of_potential(k):
    """g(q) = ∂U/∂q, with ∂/∂q_j taken along integrate(q, e_j ε)."""
    model = MODELS[k]
    q, _, _ = random_state(model, 14)
    h = 1e-6
    grad = np.zeros(model.nv)
    for j in range(model.nv):
        e = np.zeros(model.nv)
        e[j] = 1.0
        grad[j] = (kinematics.potential_energy(model, kinematics.integrate(model, q, e, h))
                   - kinematics.potential_energy(model, kinematics.integrate(model, q, e, -h))
                   ) / (2 * h)
    assert relative_difference(lagrangian.gravity_forces(model, q), grad) < RTOL_FD


@pytest.mark.parametrize("k", [0, 1])
def test_kinetic_energy_is_sum_of_link_energies(k):
    """½ vᵀ M v = Σ_k ½ V_kᵀ M_ck V_k (L&J 16, 27)."""
    model = MODELS[k]
    q, v, _ = random_state(model, 15)
    assert 0.5 * v @ lagrangian.mass_matrix(model, q) @ v == pytest.approx(
        kinematics.kinetic_energy(model, q, v), rel=RTOL_EXACT)


def test_single_pendulum_closed_form():
    """A rod of mass m, COM at distance l from the hinge: M = I_c + m l², g = m g l sin θ."""
    m, l, Ic = 2.0, 0.4, 0.05
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute([0, 1, 0]), None,
                   (m, [0, 0, -l], np.diag([Ic, Ic, Ic])))
    theta = 0.7
    assert lagrangian.mass_matrix(model, [theta])[0, 0] == pytest.approx(Ic + m * l**2)
    assert lagrangian.gravity_forces(model, [theta])[0] == pytest.approx(
        m * 9.81 * l * np.sin(theta))
