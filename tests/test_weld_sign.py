"""Weld rotation rows where MuJoCo's quaternion error has a negative scalar part."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import QACC_RTOL, ROW_RTOL

import rbd
from rbd.constraints.equality_rows import chain_quaternion
from rbd.constraints.forward import forward, free_joint_bias
from rbd.mjcf import from_mujoco_state
from rbd.spatial import quat_to_rot

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference for the weld rows")

XML = """<mujoco><option gravity="0 0 -9.81"/><worldbody>
  <body name="box" pos="0.2 0 1" euler="20 -30 45"><freejoint/>
    <geom type="box" size="0.1 0.2 0.05"/></body>
  <body name="arm" pos="0 1 1" euler="0 0 30"><joint name="hinge" axis="1 0.2 0" ref="15"/>
    <geom type="capsule" fromto="0 0 0 0 0.4 0" size="0.04"/></body>
</worldbody>
<equality>
  <weld body1="box" solref="0.05 1"/>
  <weld body1="arm" solref="0.05 1"/>
</equality></mujoco>"""


def _state(box_quat_sign: float, turns: float):
    """Box: its file pose, the quaternion of sign ``box_quat_sign``, turned 0.2 rad about
    z; arm: the hinge at ref + 0.3 + 2π ``turns``.  Same rotations for every sign and
    turn; MuJoCo's weld errors change sign."""
    model = rbd.load_mjcf(XML)
    mm = mujoco.MjModel.from_xml_string(XML)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    turn = np.array([np.cos(0.1), 0, 0, np.sin(0.1)])
    quat = np.zeros(4)
    mujoco.mju_mulQuat(quat, mm.qpos0[3:7], turn)
    d.qpos[3:7] = box_quat_sign * quat
    d.qpos[7] = mm.qpos0[7] + 0.3 + 2 * np.pi * turns
    d.qvel[:] = np.linspace(-0.5, 0.5, mm.nv)
    mujoco.mj_forward(mm, d)
    return model, mm, d


@pytest.mark.parametrize(("sign", "turns"), [(1.0, 0), (-1.0, 0), (1.0, 1), (-1.0, -1)])
def test_weld_forces_match_mujoco_sign(sign, turns):
    model, mm, d = _state(sign, turns)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = forward(model, q, v)
    assert d.ne == len(result.rows.aref) == 12
    # rbd's rows act on rbd's free-joint acceleration: MuJoCo's aref is rbd's plus J b
    aref = result.rows.aref + result.rows.J @ free_joint_bias(model, v)
    np.testing.assert_allclose(aref, d.efc_aref, rtol=ROW_RTOL, atol=1e-9)
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())
    scale = np.abs(d.efc_force).max()
    np.testing.assert_allclose(result.force, d.efc_force, rtol=0, atol=1e-8 * scale)


def test_the_states_differ_in_mujoco_error_sign():
    """The parametrized states are not all alike: MuJoCo's rotation rows flip sign."""
    forces = [_state(s, t)[2].efc_force.copy() for s, t in [(1.0, 0), (-1.0, 0), (1.0, 1)]]
    scale = np.abs(forces[0]).max()
    assert np.abs(forces[0][3:6]).max() > 1e-3 * scale
    np.testing.assert_allclose(forces[1][3:6], -forces[0][3:6], rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(forces[2][9:12], -forces[0][9:12], rtol=0, atol=1e-9 * scale)


def test_chain_quaternion_is_the_body_rotation():
    rng = np.random.default_rng(3)
    model = rbd.testing.random_model(rng, 6, ("revolute", "prismatic", "spherical"),
                                     floating_base=True)
    q = rbd.random_configuration(model, rng)
    T = rbd.forward_kinematics(model, q)
    for i in range(model.nbodies):
        w, x, y, z = chain_quaternion(model, q, i)
        np.testing.assert_allclose(quat_to_rot(np.array([x, y, z, w])), T[i][:3, :3],
                                   atol=1e-12)
