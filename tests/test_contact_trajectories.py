"""Contact runs against MuJoCo over whole trajectories (gymnasium's MJCFs), and their energy.

Both sides step MuJoCo's semi-implicit Euler (``rbd.simulate(..., integrator="euler")``
and ``mjINT_EULER``) with the file's time step, the Newton solver and tightened solver
settings, from one state taken out of a MuJoCo run (so contacts and limits are active).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import gymnasium_asset, mujoco_pair

import rbd

#: The issue's bound on qpos over a 0.2 s window.  Measured (seed 0, 0.5 s into a MuJoCo run
#: from qpos0 + U(±0.05), qvel ~ 0.1 N(0, 1)): 1.4e-14 or less on every model that passes
#: (walker2d 1.4e-14, ant 1.7e-15, hopper 3e-16): the two runs differ by rounding only.
ATOL_TRAJECTORY = 1e-6

#: The issue's bound on the ant's torso height after 5 s (measured difference 1.4e-15 m).
ATOL_ANT_HEIGHT = 1e-3

#: Models whose run disagrees, with the missing feature (none today; the swimmer's fluid
#: forces are rbd.constraints.fluid).
MODELS = {
    "ant": None,
    "hopper": None,
    "walker2d": None,
    "half_cheetah": None,
    "humanoid": None,
    "humanoidstandup": None,
    "pusher": None,
    "reacher": None,
    "inverted_pendulum": None,
    "inverted_double_pendulum": None,
    "swimmer": None,
}


def _asset(name: str) -> str:
    return str(gymnasium_asset(name))


def _pair(name: str):
    """rbd's model and MuJoCo's (Euler, Newton, tightened), with a fresh MjData."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    return (mujoco, *mujoco_pair(gymnasium_asset(name), integrator="euler"))


def _mujoco_run(mujoco, mm, d, steps: int):
    """qpos after each of ``steps`` steps (row 0: the start) and the most constraint rows."""
    qpos, rows = [d.qpos.copy()], d.nefc
    for _ in range(steps):
        mujoco.mj_step(mm, d)
        qpos.append(d.qpos.copy())
        rows = max(rows, d.nefc)
    return np.array(qpos), rows


@pytest.mark.slow
@pytest.mark.parametrize("name", [
    pytest.param(name, marks=() if reason is None else pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=reason))
    for name, reason in MODELS.items()])
def test_trajectory_follows_mujoco_for_0_2_s(name):
    from rbd.mjcf import from_mujoco_state, to_mujoco_state

    mujoco, model, mm, d = _pair(name)
    rng = np.random.default_rng(0)                # gymnasium's reset noise, then 0.5 s
    d.qpos[:] = mm.qpos0 + rng.uniform(-0.05, 0.05, mm.nq)
    d.qvel[:] = 0.1 * rng.normal(size=mm.nv)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    for _ in range(round(0.5 / mm.opt.timestep)):
        mujoco.mj_step(mm, d)
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # a start just past a limit
        traj = rbd.simulate(model, q0, v0, 0.2, mm.opt.timestep, integrator="euler")
    expected, rows = _mujoco_run(mujoco, mm, d, len(traj.t) - 1)
    qpos = to_mujoco_state(model, traj.q)[0]
    assert np.abs(expected[-1] - expected[0]).max() > 1e-3   # the window is not at rest
    np.testing.assert_allclose(qpos, expected, rtol=0, atol=ATOL_TRAJECTORY)
    if name in ("ant", "hopper", "walker2d", "pusher"):      # contacts in the window
        assert rows > 0 and traj.contact_count.max() > 0


@pytest.mark.slow
def test_ant_still_stands_after_5_s_at_mujocos_height():
    from rbd.mjcf import from_mujoco_state

    mujoco, model, mm, d = _pair("ant")
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)     # qpos0: dropped from 0.75 m
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # qpos0 has the ankles at 0
        traj = rbd.simulate(model, q0, v0, 5.0, mm.opt.timestep, integrator="euler")
    expected, _ = _mujoco_run(mujoco, mm, d, len(traj.t) - 1)
    assert traj.q[-1, 2] == pytest.approx(expected[-1, 2], abs=ATOL_ANT_HEIGHT)
    assert 0.4 < traj.q[-1, 2] < 0.8 and traj.contact_count[-1] == d.ncon > 0   # it stands


# --- no energy gained over a passive run with contact ------------------------------------------
#: Total energy T + U of these runs is a sum of a few terms of at most ~15 J, each rounded at
#: 1e-16 relative: a gain above 1e-12 of the initial energy is not rounding.  Real gains are
#: far larger: the Euler step itself loses ½ m g² h² = 1.9e-4 J per flight step of the ball,
#: and a start inside a soft limit (the ant at qpos0, ankles at 0 outside their range)
#: releases the limit's virtual spring, +338 J.
RTOL_ENERGY_GAIN = 1e-12


def _assert_no_energy_gained(traj):
    """Total energy never rises above a level it had before: soft contacts and limits store
    energy in their virtual spring-dampers (T + U dips at an impact and partly recovers on the
    rebound) but never give back more than they took."""
    E = traj.kinetic + traj.potential
    earlier = np.maximum.accumulate(E)[:-1]
    gain = float(np.max(E[1:] - earlier))
    assert gain <= RTOL_ENERGY_GAIN * abs(E[0]), gain
    assert traj.contact_count.max() > 0                      # the run touched the floor


def _dropped(shape: str) -> rbd.Model:
    return rbd.load_mjcf(f"""<mujoco><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="0 0 1"/>
      <body name="body" pos="0 0 0.5"><freejoint/>
        <geom type="{shape}" size="{'0.1' if shape == 'sphere' else '0.1 0.05 0.08'}"
              mass="1"/></body></worldbody></mujoco>""")


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["sphere", "box"])
def test_dropped_body_gains_no_energy(shape):
    """A ball thrown sideways and a tumbling box (tilted 0.4 rad, spinning) dropped from 0.5 m
    land, bounce and slide for 1 s: their energy only ever goes down."""
    model = _dropped(shape)
    axis = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    q0 = np.concatenate([[0, 0, 0.5], np.sin(0.2) * axis, [np.cos(0.2)]])
    v0 = np.array([1.0, -2.0, 0.5, 0.3, 0.0, 0.0])           # [ω; u] in the body frame
    traj = rbd.simulate(model, q0, v0, 1.0, 0.002, integrator="euler")
    _assert_no_energy_gained(traj)


@pytest.mark.slow
def test_passive_ant_gains_no_energy():
    """The ant dropped from 0.75 m with its joints mid-range and random joint rates: damped
    joints, soft limits and four feet on the floor over 2 s."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # left-out actuators
        model = rbd.load_mjcf(_asset("ant"))
    q0 = rbd.neutral(model)
    q0[2] = 0.75
    lower, upper = np.asarray(model.lower, float), np.asarray(model.upper, float)
    joints = slice(7, model.nq)                              # after the free joint
    q0[joints] = 0.5 * (lower[joints] + upper[joints])
    v0 = np.zeros(model.nv)
    v0[6:] = np.random.default_rng(3).normal(size=model.nv - 6)
    traj = rbd.simulate(model, q0, v0, 2.0, 0.01, integrator="euler")
    _assert_no_energy_gained(traj)
