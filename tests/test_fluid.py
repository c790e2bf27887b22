"""MuJoCo's inertia-box fluid forces (``<option density viscosity wind>``) against MuJoCo."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from helpers import mujoco_qpos_path

import rbd
from rbd.constraints.forward import passive_force

#: Both sides evaluate the same closed-form drag at the same state; the force sums a few
#: products over a short kinematic chain, so they differ by rounding (measured: passive force
#: 2e-16 swimmer, 9e-15 free body, 6e-16 ellipsoids; qacc ≤ 8e-15); 1e-10 leaves room for
#: other BLAS orderings.
RTOL_PASSIVE = 1e-10

#: A free body of two geoms (inertia not diagonal in the body frame) carrying a welded body
#: whose capsule is oblique (two equal moments: MuJoCo's inertia frame is the geom's).
#: No collision geoms, so that only the fluid sends a run down the contact path.
FREE_BODY = """<mujoco><option density="1.2" viscosity="0.02" wind="0.5 -1 0.3"/>
  <default><geom contype="0" conaffinity="0"/></default><worldbody>
  <body name="b" pos="0 0 1" euler="10 20 30"><freejoint/>
    <geom type="box" size="0.1 0.2 0.05" pos="0.1 0 0" euler="5 0 40"/>
    <geom type="sphere" size="0.07" pos="-0.1 0.05 0"/>
    <body name="w" pos="0.2 0 0" euler="0 30 0">
      <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0.1 0"/></body>
  </body></worldbody></mujoco>"""


def _swimmer() -> str:
    gymnasium = pytest.importorskip("gymnasium", reason="the swimmer is gymnasium's MJCF")
    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                        "swimmer.xml")


def _pair(source: str):
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo's mj_passive is the reference")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # the swimmer's actuators
        model = rbd.load_mjcf(source)
    mm = (mujoco.MjModel.from_xml_path(source) if source.endswith(".xml")
          else mujoco.MjModel.from_xml_string(source))
    return mujoco, model, mm, mujoco.MjData(mm)


def _moving_state(mujoco, mm, d, seed: int = 1):
    rng = np.random.default_rng(seed)
    d.qpos[:] = mm.qpos0 + rng.uniform(-0.3, 0.3, mm.nq)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    d.qvel[:] = rng.normal(size=mm.nv)
    mujoco.mj_forward(mm, d)


@pytest.mark.parametrize("which", ["swimmer", "free body"])
def test_passive_force_and_acceleration_equal_mujocos(which):
    from rbd.mjcf import from_mujoco_force, from_mujoco_state

    mujoco, model, mm, d = _pair(_swimmer() if which == "swimmer" else FREE_BODY)
    _moving_state(mujoco, mm, d)
    assert np.abs(d.qfrc_fluid).max() > 1e-2 * np.abs(d.qfrc_passive).max() > 0
    q, v, qdd = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    expected = from_mujoco_force(model, d.qpos, d.qfrc_passive)
    got = passive_force(model, q, v)
    np.testing.assert_allclose(got, expected, rtol=0,
                               atol=RTOL_PASSIVE * np.abs(expected).max())
    result = rbd.forward(model, q, v)
    np.testing.assert_allclose(result.qdd, qdd, rtol=0, atol=RTOL_PASSIVE * np.abs(qdd).max())


def test_negative_density_and_viscosity_give_no_force_as_in_mujoco():
    """MuJoCo accepts negative values and applies a term only when its coefficient is
    positive: the force is MuJoCo's (zero), not a push."""
    from rbd.mjcf import from_mujoco_state

    xml = FREE_BODY.replace('density="1.2" viscosity="0.02"', 'density="-1" viscosity="-2"')
    mujoco, model, mm, d = _pair(xml)
    _moving_state(mujoco, mm, d)
    assert np.all(d.qfrc_passive == 0)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    assert np.all(passive_force(model, q, v) == 0)


def test_fluid_model_takes_the_contact_path_and_is_not_warned_about():
    from rbd.simulation.contact import has_contact_terms

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)          # nothing left out
        model = rbd.load_mjcf(FREE_BODY)
    assert has_contact_terms(model)
    still = rbd.load_mjcf(FREE_BODY.replace('<option density="1.2" viscosity="0.02" '
                                            'wind="0.5 -1 0.3"/>', ''))
    assert not has_contact_terms(still)


#: MuJoCo's ellipsoid model on every primitive kind it reads: a box (its sphere neighbour
#: then gets no fluid force), an oblique capsule with its own ``fluidcoef`` and a cylinder
#: on a welded body, an ellipsoid on a hinged body.
ELLIPSOIDS = """<mujoco><option density="1.2" viscosity="0.02" wind="0.5 -1 0.3"/>
  <default><geom contype="0" conaffinity="0"/></default><worldbody>
  <body name="b" pos="0 0 1" euler="10 20 30"><freejoint/>
    <geom type="box" size="0.1 0.2 0.05" pos="0.1 0 0" euler="5 0 40" fluidshape="ellipsoid"/>
    <geom type="sphere" size="0.07" pos="-0.1 0.05 0"/>
    <body name="w" pos="0.2 0 0" euler="0 30 0">
      <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0.1 0" fluidshape="ellipsoid"
            fluidcoef="0.4 0.3 1.2 0.8 0.9"/>
      <geom type="cylinder" size="0.05 0.1" pos="0 0.1 0" euler="20 0 0"
            fluidshape="ellipsoid"/></body>
    <body name="h" pos="-0.2 0 0"><joint type="hinge" axis="1 1 0"/>
      <geom type="ellipsoid" size="0.1 0.05 0.02" pos="0 0 -0.1" fluidshape="ellipsoid"/></body>
  </body></worldbody></mujoco>"""


def test_ellipsoid_model_equals_mujocos():
    from rbd.mjcf import from_mujoco_force, from_mujoco_state

    mujoco, model, mm, d = _pair(ELLIPSOIDS)
    _moving_state(mujoco, mm, d)
    box_model = mujoco.MjModel.from_xml_string(ELLIPSOIDS.replace('fluidshape="ellipsoid"', ""))
    boxes = mujoco.MjData(box_model)                  # the same state, inertia-box model
    boxes.qpos[:], boxes.qvel[:] = d.qpos, d.qvel
    mujoco.mj_forward(box_model, boxes)
    assert np.abs(d.qfrc_fluid - boxes.qfrc_fluid).max() > 1e-2 * np.abs(d.qfrc_fluid).max()
    q, v, qdd = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    expected = from_mujoco_force(model, d.qpos, d.qfrc_passive)
    np.testing.assert_allclose(passive_force(model, q, v), expected, rtol=0,
                               atol=RTOL_PASSIVE * np.abs(expected).max())
    np.testing.assert_allclose(rbd.forward(model, q, v).qdd, qdd, rtol=0,
                               atol=RTOL_PASSIVE * np.abs(qdd).max())


def test_ellipsoid_fluid_shape_of_a_mesh_is_named_and_left_out():
    xml = FREE_BODY.replace("<default>", """<asset><mesh name="tet"
        vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1"/></asset><default>""").replace(
        '<geom type="sphere"',
        '<geom type="mesh" mesh="tet" fluidshape="ellipsoid"/><geom type="sphere"')
    with pytest.warns(RuntimeWarning, match=r"ellipsoid fluid forces.*<geom #1> of body 'b'"):
        model = rbd.load_mjcf(xml)
    assert model.mujoco_bodies["ellipsoid"] == {"b": []}


def test_bad_fluidshape_is_refused_naming_the_geom():
    xml = FREE_BODY.replace('<geom type="sphere"', '<geom type="sphere" fluidshape="blob"')
    with pytest.raises(rbd.MJCFError, match=r"geom #1.*fluidshape"):
        rbd.load_mjcf(xml)


def test_run_of_a_fluid_only_model_follows_mujocos_euler_steps():
    """No contact, limit or spring: the fluid alone sends the run down the Euler path, which
    follows MuJoCo step for step (0.1 s of the free body tumbling in wind)."""
    from rbd.mjcf import from_mujoco_state, to_mujoco_state

    mujoco, model, mm, d = _pair(FREE_BODY)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    _moving_state(mujoco, mm, d)
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    traj = rbd.simulate(model, q0, v0, 0.1, mm.opt.timestep, integrator="euler")
    expected = mujoco_qpos_path(mm, d, len(traj.t) - 1)
    # rounding only over 50 steps of O(1) states (measured 4e-16; without the fluid 7.5e-5)
    np.testing.assert_allclose(to_mujoco_state(model, traj.q)[0], expected,
                               rtol=0, atol=1e-12)


def test_run_off_the_euler_path_warns_that_it_leaves_the_fluid_out():
    model = rbd.load_mjcf(FREE_BODY)
    with pytest.warns(RuntimeWarning, match="fluid forces"):
        rbd.simulate(model, rbd.neutral(model), np.ones(model.nv), 0.01, 0.002)
