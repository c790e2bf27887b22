"""MuJoCo's ``<option><flag ... ="disable"/>`` in rbd.forward and rbd.collide, against mj_forward.

One small model holds every term a flag switches off: a ground plane and a ball pressed
into it (contact), a hinge past its limit (limit) with friction loss, damping and a
spring, a child hinge whose sphere overlaps its parent's capsule (filterparent), a joint
equality with a time constant below two steps (equality, refsafe) and gravity.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import QACC_RTOL

import rbd
from rbd.constraints.forward import forward
from rbd.mjcf import from_mujoco_state

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference for the flags")

XML = """<mujoco><option timestep="0.002">{flag}</option>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.5">
      <joint name="h1" type="hinge" axis="0 1 0" range="-20 20" damping="0.3" stiffness="2"
             springref="10" frictionloss="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05"/>
      <body pos="0.4 0 0">
        <joint name="h2" type="hinge" axis="0 1 0" range="-30 30" damping="0.1"/>
        <geom type="sphere" size="0.08" pos="0.02 0 0"/>
      </body>
    </body>
    <body pos="1 0 0.09"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
  <equality><joint joint1="h2" joint2="h1" polycoef="0 0.5 0 0 0" solref="0.001 1"/></equality>
</mujoco>"""

FLAGS = ("contact", "limit", "equality", "frictionloss", "spring", "damper", "gravity",
         "filterparent", "constraint", "refsafe")


def _forward(flag: str | None):
    """rbd's and MuJoCo's qacc, contact and row counts with ``flag`` disabled."""
    xml = XML.format(flag=f'<flag {flag}="disable"/>' if flag else "")
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    d.qpos[:2] = 0.45, 0.2                           # h1 past its 20° limit
    d.qvel[:] = np.linspace(0.3, -0.4, mm.nv)
    mujoco.mj_forward(mm, d)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = forward(model, q, v)
    return result, a, d


def test_every_term_is_active_without_flags():
    result, a, d = _forward(None)
    assert {"contact", "limit", "equality", "friction"} <= set(result.kinds)
    assert len(result.contacts) == d.ncon == 1      # ball-floor; child-parent is filtered
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())


@pytest.mark.parametrize("flag", FLAGS)
def test_disable_flag_matches_mujoco(flag):
    """With the flag, rbd equals MuJoCo; and the flag changes the answer (it is read)."""
    result, a, d = _forward(flag)
    assert len(result.contacts) == d.ncon
    assert len(result.rows.aref) == d.nefc
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())
    plain, a0, _ = _forward(None)
    assert np.abs(a - a0).max() > 1e-6 * np.abs(a0).max()


def test_flags_read_into_options():
    model = rbd.load_mjcf(XML.format(flag='<flag contact="disable" warmstart="disable"/>'))
    assert model.mujoco_options["disable"] == ("contact",)
    assert len(rbd.collide(model, rbd.neutral(model))) == 0


def test_bad_flag_value_is_refused():
    with pytest.raises(rbd.MJCFError, match="contact"):
        rbd.load_mjcf(XML.format(flag='<flag contact="off"/>'))


def test_passive_force_without_springs_and_dampers():
    """spring and damper both disabled: no passive force at all (``mj_passive``)."""
    from rbd.constraints.forward import passive_force

    xml = XML.format(flag='<flag spring="disable" damper="disable"/>')
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    d.qpos[:2] = 0.45, 0.2
    d.qvel[:] = 1.0
    mujoco.mj_forward(mm, d)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    assert not np.any(passive_force(model, q, v)) and not np.any(d.qfrc_passive)


def test_euler_step_without_implicit_damping():
    """``eulerdamp`` disabled: the damping is explicit in MuJoCo's Euler step, and in rbd's."""
    xml = XML.format(flag='<flag eulerdamp="disable"/>')
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    d.qpos[:2] = 0.45, 0.2
    d.qvel[:] = np.linspace(0.3, -0.4, mm.nv)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    with pytest.warns(RuntimeWarning, match="outside joint limits"):
        traj = rbd.simulate(model, q, v, 10 * mm.opt.timestep, mm.opt.timestep,
                            integrator="euler")
    for _ in range(10):
        mujoco.mj_step(mm, d)
    q_mj, _, _ = from_mujoco_state(model, d.qpos, d.qvel)
    np.testing.assert_allclose(traj.q[-1], q_mj, atol=1e-12)


def test_enable_flags_rbd_leaves_out_are_named():
    """``override`` changes every contact's margin and solver parameters: named at load."""
    with pytest.warns(RuntimeWarning, match="override"):
        rbd.load_mjcf(XML.format(flag='<flag override="enable"/>'))


def test_contact_exclude_is_read():
    """``<contact><exclude>``: the ball never touches the plane's body (the world)."""
    xml = XML.format(flag="").replace(
        "</mujoco>", '<contact><exclude body1="world" body2="ball"/></contact></mujoco>'
    ).replace('<body pos="1 0 0.09">', '<body name="ball" pos="1 0 0.09">')
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    mujoco.mj_forward(mm, d)
    assert model.contact_excludes == ((None, "ball"),)
    q, _, _ = from_mujoco_state(model, d.qpos, d.qvel)
    assert len(rbd.collide(model, q)) == d.ncon == 0
