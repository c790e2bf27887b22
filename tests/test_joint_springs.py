"""Springs of ball and free joints and ``springdamper`` against MuJoCo's ``mj_passive``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import QACC_RTOL, RTOL_EXACT

import rbd
from rbd.constraints.forward import forward, passive_force
from rbd.mjcf import from_mujoco_force, from_mujoco_state

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference passive force")

XML = """<mujoco><option gravity="0 0 0"/><worldbody>
  <body name="root" pos="0.1 0.2 1" euler="10 20 30">
    <joint name="free" type="free" stiffness="3"/>
    <geom type="box" size="0.2 0.1 0.05" mass="2"/>
    <body name="arm" pos="0 0 0.3" euler="5 0 0">
      <joint name="ball" type="ball" stiffness="1.5" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.04"/>
      <body name="hand" pos="0 0.3 0">
        <joint name="hinge" type="hinge" axis="1 0 0" springdamper="0.2 0.7"/>
        <geom type="sphere" size="0.05" pos="0 0.1 0"/>
        <body name="thumb" pos="0 0.1 0">
          <joint name="knuckle" type="ball" springdamper="0.1 1.3"/>
          <geom type="sphere" size="0.03" pos="0 0.05 0"/>
        </body>
      </body>
    </body>
  </body>
</worldbody></mujoco>"""


def _pair():
    return rbd.load_mjcf(XML), mujoco.MjModel.from_xml_string(XML)


def test_springdamper_sets_stiffness_and_damping_as_mujoco():
    model, mm = _pair()
    np.testing.assert_allclose(model.damping, mm.dof_damping[[3, 4, 5, 0, 1, 2, *range(6, 13)]],
                               rtol=RTOL_EXACT)
    soft = model.mujoco_joints
    for name in ("hinge", "knuckle"):
        assert soft[name]["stiffness"] == pytest.approx(mm.joint(name).stiffness[0],
                                                        rel=RTOL_EXACT)
    assert mm.joint("hinge").stiffness[0] > 0 and mm.joint("knuckle").stiffness[0] > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ball_and_free_springs_match_qfrc_passive(seed):
    """Random poses (rotations past π from qpos_spring included) and velocities."""
    model, mm = _pair()
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(seed)
    d.qpos[:3] += rng.normal(size=3)
    for adr in (3, 7, 12):
        d.qpos[adr:adr + 4] = rng.normal(size=4)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    d.qvel[:] = rng.normal(size=mm.nv)
    mujoco.mj_forward(mm, d)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    expected = from_mujoco_force(model, d.qpos, d.qfrc_passive)
    assert np.abs(expected).max() > 1.0
    np.testing.assert_allclose(passive_force(model, q, v), expected, rtol=0,
                               atol=RTOL_EXACT * np.abs(expected).max())
    result = forward(model, q, v)
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())


def test_springdamper_needs_both_values_positive():
    with pytest.raises(rbd.MJCFError, match="springdamper"):
        rbd.load_mjcf(XML.replace('springdamper="0.2 0.7"', 'springdamper="0.2 0"'))
