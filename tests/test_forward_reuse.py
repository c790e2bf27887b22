"""What rbd.forward computes once and reuses: joint softness, body poses, the mass matrix."""

from __future__ import annotations

import numpy as np
from helpers import RTOL_EXACT

import rbd
from rbd.constraints.forward import forward, joint_softness, passive_force

XML = """<mujoco><worldbody><geom type="plane" size="2 2 .1"/>
  <body pos="0 0 0.3"><joint name="j" type="hinge" axis="0 1 0" damping="0.2"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 -0.25" size="0.05"/></body>
  <body pos="1 0 0.05"><freejoint/><geom type="sphere" size="0.1"/></body>
</worldbody></mujoco>"""


def test_joint_softness_follows_a_new_mujoco_joints():
    """The kept softness is the one of the dict assigned last."""
    model = rbd.load_mjcf(XML)
    q, v = rbd.neutral(model), np.zeros(model.nv)
    q[0] = 0.3
    assert passive_force(model, q, v)[0] == 0.0
    assert joint_softness(model) is joint_softness(model)           # kept
    model.mujoco_joints = {"j": {"stiffness": 2.0, "springref": 0.1}}
    assert passive_force(model, q, v)[0] == -2.0 * (0.3 - 0.1)
    assert not joint_softness(model)["stiffness"].flags.writeable


def test_forward_returns_the_mass_matrix_it_used():
    model = rbd.load_mjcf(XML)
    q = rbd.random_configuration(model, np.random.default_rng(0))
    result = forward(model, q, np.zeros(model.nv))
    np.testing.assert_array_equal(result.M, rbd.crba(model, q))


def test_geom_poses_from_given_body_poses():
    model = rbd.load_mjcf(XML)
    q = rbd.random_configuration(model, np.random.default_rng(1))
    T = rbd.forward_kinematics(model, q)
    np.testing.assert_allclose(rbd.geom_poses(model, q, body_poses=T), rbd.geom_poses(model, q),
                               rtol=0, atol=RTOL_EXACT)
    assert len(rbd.collide(model, q)) == len(
        rbd.constraints.collision.collide_model(model, q, body_poses=T))
