"""Liu & Jain §7: two-pass inverse dynamics in local frames (Eqs. 72–85)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, every_joint_zoo

import rbd
from rbd import registry
from rbd.reference import kinematics, lagrangian, local_frame_id, rnea
from rbd.testing import random_state, relative_difference

MODELS = every_joint_zoo(17, (4, ("prismatic", "planar"), False),  # translation on moving frames
                         (3, ("revolute",), True))                   # the paper's rotational case


@pytest.mark.parametrize("k", range(len(MODELS)))
def test_registered_functions_match_rnea(k):
    model, rng = MODELS[k], np.random.default_rng(100 + k)
    inverse = registry.implementations("inverse_dynamics")["liu-jain-local-frame"]
    bias = registry.implementations("bias_forces")["liu-jain-local-frame"]
    for _ in range(2):
        q, v, a = random_state(model, rng)
        f_ext = rng.normal(size=(model.nbodies, 6))
        for f in (None, f_ext):
            tau = inverse(model, q, v, a, f)
            assert tau.shape == (model.nv,) and tau.dtype == float
            assert relative_difference(tau, rnea.rnea(model, q, v, a, f)) < RTOL_EXACT
        assert relative_difference(bias(model, q, v), rnea.nonlinear_effects(model, q, v)) \
            < RTOL_EXACT


@pytest.mark.parametrize("k", [0, 1, 3])
def test_gravity_as_root_acceleration_equals_weights(k):
    """Eq. 85: offsetting the root acceleration by −g is the same as applying each link's
    weight m_k g at its COM in a world without gravity."""
    model = MODELS[k]
    q, v, a = random_state(model, 200 + k)
    weightless = model.copy()
    weightless.gravity = (0.0, 0.0, 0.0)
    T = kinematics.forward_kinematics(model, q)
    f_ext = np.zeros((model.nbodies, 6))
    for i, body in enumerate(model.bodies):
        weight = T[i, :3, :3].T @ (body.mass * model.gravity)          # body axes
        f_ext[i, :3] = np.cross(body.com, weight)                      # moment about the origin
        f_ext[i, 3:] = weight
    assert relative_difference(local_frame_id.inverse_dynamics(weightless, q, v, a, f_ext),
                               local_frame_id.inverse_dynamics(model, q, v, a)) < RTOL_EXACT


@pytest.mark.parametrize("k", [0, 1, 2])
def test_root_force_is_newton_for_the_whole_tree(k):
    """Pass 2 at a root: the joint force equals Σ m_k ẍ_k − Σ m_k g over its subtree
    (COM accelerations from the Jacobians of §5, ẍ_k = J_vk a + J̇_vk v)."""
    model = MODELS[k]
    q, v, a = random_state(model, 300 + k)
    f, _ = local_frame_id.joint_forces(model, q, v, a)
    J = lagrangian.com_jacobians(model, q)
    J_dot = lagrangian.com_jacobian_derivatives(model, q, v)
    T = kinematics.forward_kinematics(model, q)
    for root in (i for i, b in enumerate(model.bodies) if b.parent < 0):
        expected = sum(model.bodies[i].mass * (J[i, :3] @ a + J_dot[i, :3] @ v - model.gravity)
                       for i in model.subtree(root))
        assert relative_difference(T[root, :3, :3] @ f[root], expected) < RTOL_EXACT


def test_hanging_pendulum_closed_form():
    """Static point-mass pendulum at angle θ: the hinge holds m g l sin θ and the weight."""
    m, l, theta = 1.5, 0.6, 0.4
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute([0, 1, 0]), None, (m, [0, 0, -l], np.zeros((3, 3))))
    tau = local_frame_id.inverse_dynamics(model, [theta], [0.0], [0.0])
    assert tau[0] == pytest.approx(m * 9.81 * l * np.sin(theta), rel=RTOL_EXACT)
    f, _ = local_frame_id.joint_forces(model, [theta], [0.0], [0.0])
    R = rbd.spatial.axis_angle_rotation([0, 1, 0], theta)
    assert relative_difference(R @ f[0], [0, 0, m * 9.81]) < RTOL_EXACT


def test_slider_on_turntable_coriolis():
    """A mass sliding at rate ṡ along a spoke of a turntable spinning at ω: the turntable
    motor must supply 2 m s ṡ ω (Coriolis), the slider m s ω² inward (centripetal)."""
    m, s, s_d, w = 0.8, 0.5, 0.3, 2.0
    model = rbd.Model(gravity=(0, 0, 0))
    table = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, None)
    model.add_body(table, rbd.Prismatic([1, 0, 0]), None, (m, np.zeros(3), np.zeros((3, 3))))
    tau = local_frame_id.inverse_dynamics(model, [0.3, s], [w, s_d], [0.0, 0.0])
    assert tau[0] == pytest.approx(2 * m * s * s_d * w, rel=RTOL_EXACT)
    assert tau[1] == pytest.approx(-m * s * w**2, rel=RTOL_EXACT)
