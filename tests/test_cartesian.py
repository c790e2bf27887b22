"""Liu & Jain §6: generalized ↔ Cartesian velocities and forces (Eqs. 60–71)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT

import rbd
from rbd.reference import cartesian, rnea
from rbd.testing import random_model, random_state, relative_difference

ALL_JOINTS = ("revolute", "prismatic", "helical", "universal", "spherical", "planar", "free")


def zoo(seed: int = 23):
    rng = np.random.default_rng(seed)
    return [
        random_model(rng, 5, ALL_JOINTS, gravity=(0, 0, 0)),
        random_model(rng, 5, ALL_JOINTS, floating_base=True, gravity=(0, 0, 0)),
        random_model(rng, 4, ("revolute", "universal", "spherical", "helical"),
                     gravity=(0, 0, 0)),
    ]


MODELS = zoo()
ROTATIONAL = MODELS[2]


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_velocity_round_trip_pseudo_inverse(k):
    """V = J v (Eq. 60) and back by q̇ = J⁺ V (Eq. 61) with zero residual."""
    model = MODELS[k]
    q, v, _ = random_state(model, 1 + k)
    V = cartesian.cartesian_velocities(model, q, v)
    assert V.shape == (6 * model.nbodies,)
    qd, residual = cartesian.generalized_velocities(model, q, V)
    assert relative_difference(qd, v) < RTOL_EXACT
    assert residual < RTOL_EXACT * np.linalg.norm(V)


def test_unreachable_velocity_is_least_squares():
    """A V that breaks the joints: the residual is > 0 and orthogonal to the columns of J."""
    model = MODELS[0]
    q, v, _ = random_state(model, 5)
    rng = np.random.default_rng(5)
    V = cartesian.cartesian_velocities(model, q, v) + 0.1 * rng.normal(size=6 * model.nbodies)
    qd, residual = cartesian.generalized_velocities(model, q, V)
    J = cartesian.stacked_jacobian(model, q)
    assert residual > 1e-3
    assert np.abs(J.T @ (J @ qd - V)).max() < RTOL_EXACT * np.abs(J.T @ V).max()


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_block_diagonal_form(k):
    """D J_ω = R Ĵ_ω (Eqs. 63, 65); ω̂ = Rᵀ D ω is Ĵ_ωk q̇_k; Eq. 66 recovers q̇."""
    model = MODELS[k]
    m = model.nbodies
    q, v, _ = random_state(model, 10 + k)
    J = cartesian.stacked_jacobian(model, q)
    D, R = cartesian.connectivity_matrix(model), cartesian.parent_rotations(model, q)
    J_hat = cartesian.block_diagonal(cartesian.local_angular_jacobians(model, q))
    assert relative_difference(D @ J[3 * m:], R @ J_hat) < RTOL_EXACT
    omega = (J[3 * m:] @ v).reshape(m, 3)
    w_hat = cartesian.relative_angular_velocities(model, q, omega)
    assert relative_difference(w_hat.reshape(-1), J_hat @ v) < RTOL_EXACT
    V = J @ v
    assert relative_difference(cartesian.generalized_velocities_blockwise(model, q, V), v) \
        < RTOL_EXACT


def test_any_full_rank_row_subset_gives_the_same_velocity():
    """For a reachable V, n independent rows of V = J q̇ determine q̇, and with rotational
    joints only the angular rows suffice: q̇ = J_ω⁺ ω (L&J §6.1)."""
    model = ROTATIONAL
    q, v, _ = random_state(model, 20)
    J = cartesian.stacked_jacobian(model, q)
    V = J @ v
    rng = np.random.default_rng(20)
    checked = 0
    for _ in range(50):
        rows = rng.permutation(len(V))[:model.nv + 4]
        if np.linalg.matrix_rank(J[rows]) < model.nv:
            continue                       # these rows do not determine q̇
        qd = np.linalg.lstsq(J[rows], V[rows], rcond=None)[0]
        assert relative_difference(qd, v) < RTOL_EXACT
        checked += 1
    assert checked >= 3
    m = model.nbodies
    assert relative_difference(np.linalg.pinv(J[3 * m:]) @ V[3 * m:], v) < RTOL_EXACT


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_generalized_forces_match_rnea(k):
    """Q of Eq. 67 is the generalized force rbd's RNEA feels from the same external forces:
    at rest without gravity, rnea(q, 0, 0, f_ext) = −Q."""
    model = MODELS[k]
    m = model.nbodies
    q, _, _ = random_state(model, 30 + k)
    rng = np.random.default_rng(30 + k)
    f, tau, points = rng.normal(size=(3, m, 3))
    Q = cartesian.generalized_forces(model, q, f, tau, points)
    zero = np.zeros(model.nv)
    f_ext = cartesian.body_frame_forces(model, q, f, tau, points)
    assert relative_difference(Q, -rnea.rnea(model, q, zero, zero, f_ext)) < RTOL_EXACT
    # the note below Eq. 67: a force at r_k equals the same force at the COM plus (r_k − x_k) × f
    x = np.array([T[:3, :3] @ b.com + T[:3, 3] for T, b in
                  zip(rbd.reference.kinematics.forward_kinematics(model, q), model.bodies,
                      strict=True)])
    Q_com = cartesian.generalized_forces(model, q, f, tau + np.cross(points - x, f))
    assert relative_difference(Q_com, Q) < RTOL_EXACT


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_joint_torques_to_generalized_forces(k):
    """Eq. 69 equals Eq. 67 with the body torques of Eq. 68; the pairs of Eq. 68 are equal
    and opposite, so the net torque is that of the root joints alone (Newton's third law)."""
    model = MODELS[k]
    m = model.nbodies
    q, _, _ = random_state(model, 40 + k)
    rng = np.random.default_rng(40 + k)
    f, tau_hat, points = rng.normal(size=(3, m, 3))
    tau_body = cartesian.body_torques_from_joint_torques(model, q, tau_hat)
    assert relative_difference(
        cartesian.generalized_forces_from_joint_torques(model, q, f, tau_hat, points),
        cartesian.generalized_forces(model, q, f, tau_body, points)) < RTOL_EXACT
    roots = [i for i, b in enumerate(model.bodies) if b.parent < 0]
    assert relative_difference(tau_body.sum(axis=0), tau_hat[roots].sum(axis=0)) < RTOL_EXACT


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_cartesian_forces_minimum_norm(k):
    """Eq. 70 reproduces Q; adding an internal force (null space of Jᵀ) leaves Q unchanged
    and makes the Cartesian forces larger."""
    model = MODELS[k]
    q, _, Q = random_state(model, 50 + k)
    f, tau = cartesian.cartesian_forces(model, q, Q)
    assert relative_difference(cartesian.generalized_forces(model, q, f, tau), Q) < RTOL_EXACT
    J = cartesian.stacked_jacobian(model, q)
    null = np.linalg.svd(J.T)[2][-1]                  # a unit vector with Jᵀ n = 0
    m = model.nbodies
    F = np.concatenate([f.reshape(-1), tau.reshape(-1)]) + null
    Q2 = cartesian.generalized_forces(model, q, F[:3 * m].reshape(m, 3), F[3 * m:].reshape(m, 3))
    assert relative_difference(Q2, Q) < RTOL_EXACT
    assert np.linalg.norm(F) > np.linalg.norm(np.concatenate([f.reshape(-1), tau.reshape(-1)]))


def test_joint_torques_reproduce_generalized_forces():
    """Eq. 71 for rotational joints: applying τ̂ as torque pairs (Eq. 68) gives back Q,
    checked through RNEA."""
    model = ROTATIONAL
    m = model.nbodies
    q, _, Q = random_state(model, 60)
    tau_hat = cartesian.joint_torques(model, q, Q)
    assert relative_difference(
        cartesian.generalized_forces_from_joint_torques(model, q, np.zeros((m, 3)), tau_hat),
        Q) < RTOL_EXACT
    tau_body = cartesian.body_torques_from_joint_torques(model, q, tau_hat)
    f_ext = cartesian.body_frame_forces(model, q, np.zeros((m, 3)), tau_body)
    zero = np.zeros(model.nv)
    assert relative_difference(-rnea.rnea(model, q, zero, zero, f_ext), Q) < RTOL_EXACT


def test_joint_torques_refuse_translational_joints():
    model = rbd.Model()
    model.add_body(-1, rbd.Prismatic([1, 0, 0]), None, (1.0, np.zeros(3), np.eye(3) * 0.1),
                   "slider", "rail")
    q, Q = np.zeros(1), np.array([2.0])
    with pytest.raises(rbd.ModelError, match="'rail'.*translational"):
        cartesian.joint_torques(model, q, Q)
    assert np.array_equal(Q, [2.0]) and np.array_equal(q, [0.0])
