"""MJCF ``<equality>`` read into ``model.constraints``, checked against MuJoCo's own rows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd import constraints as rc

LOOP = """
<mujoco model="loops">
  <default><equality solref="0.01 1"/></default>
  <worldbody>
    <body name="post" pos="1 0 0"><site name="post_site" pos="0.1 0 0.2"/></body>
    <body name="crank">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/>
      <body name="coupler" pos="0.4 0 0">
        <joint name="j2" type="hinge" axis="0 1 0" ref="0.3"/>
        <geom type="capsule" fromto="0 0 0 1 0 0" size="0.02"/>
        <body name="rocker" pos="1 0 0" euler="0 -90 0">
          <joint name="j3" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/>
          <body name="tip" pos="0.4 0 0"><site name="tip_site" euler="10 20 30"/></body>
        </body>
      </body>
    </body>
    <body name="slider" pos="0 0.5 0">
      <joint name="s" type="slide" axis="1 0 0" ref="0.2"/>
      <geom type="box" size="0.1 0.1 0.1"/>
    </body>
    <body name="box" pos="0 1 1" quat="0.9 0.1 0.3 0.2">
      <freejoint name="free"/>
      <geom type="box" size="0.1 0.2 0.1"/>
      <body name="lid" pos="0.1 0 0.1"><joint name="lid_hinge" axis="1 0 0"/>
        <geom type="box" size="0.1 0.1 0.02"/></body>
    </body>
  </worldbody>
  <equality>
    <connect name="loop" body1="rocker" body2="post" anchor="0.4 0 0"/>
    <connect name="sites" site1="tip_site" site2="post_site"/>
    <connect name="slide_to_box" body1="slider" body2="box" anchor="0.1 0 0"/>
    <weld name="hold" body1="box" relpose="0.2 0.1 0 1 0 0 0" anchor="0 0 0.3"/>
    <weld name="lid_shut" body1="lid" body2="box"/>
    <weld name="pos_only" body1="coupler" body2="slider" torquescale="0"/>
    <joint name="tie" joint1="j3" joint2="j1" polycoef="0.1 -1 0.5 0 0"/>
    <joint name="lock" joint1="s" polycoef="0.25 0 0 0 0" active="false"/>
  </equality>
</mujoco>
"""


def test_equalities_become_constraints():
    model = rbd.load_mjcf(LOOP)
    kinds = {c.name: type(c) for c in model.constraints}
    assert kinds == {"loop": rc.PointAnchor, "sites": rc.PointAnchor,
                     "slide_to_box": rc.PointAnchor, "hold": rc.FrameAnchor,
                     "lid_shut": rc.FrameAnchor, "pos_only": rc.FrameAnchor,
                     "tie": rc.JointCoupling, "lock": rc.JointCoupling}
    # torquescale 0 frees the rotation: three rigid rows (MuJoCo keeps six soft ones)
    pos_only = next(c for c in model.constraints if c.name == "pos_only")
    assert pos_only.torquescale == 0.0 and pos_only.rows == 3
    assert pos_only.resolve(model)[0] == "point"
    assert [c.name for c in model.constraints if not c.active] == ["lock"]
    # the <default><equality solref> class reaches every equality; solimp keeps the default
    assert all(c.solref.tolist() == [0.01, 1.0] for c in model.constraints)
    assert all(c.solimp.tolist() == [0.9, 0.95, 0.001, 0.5, 2.0] for c in model.constraints)
    lock = model.constraints[-1]
    assert lock.source is None and lock.coefficients.tolist() == [0.2 + 0.25]   # ref + a0


def test_no_warning_for_translated_equalities_and_one_for_tendons():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rbd.load_mjcf(LOOP)
    tendon = LOOP.replace("</equality>", '<tendon tendon1="t"/></equality>')
    with pytest.warns(RuntimeWarning, match=r"equality constraints \(1: <tendon>\)"):
        rbd.load_mjcf(tendon)


def test_bad_equalities_name_the_element():
    bad = LOOP.replace('anchor="0.4 0 0"/>', "/>", 1)
    with pytest.raises(rbd.MJCFError, match=r"<equality/connect name='loop'>: needs body1 and "
                                            "anchor, or site1 and site2"):
        rbd.load_mjcf(bad)
    unknown = LOOP.replace('body2="post"', 'body2="nowhere"')
    with pytest.raises(rbd.MJCFError, match="unknown body or site 'nowhere'"):
        rbd.load_mjcf(unknown)
    joint = LOOP.replace('joint1="j3" joint2="j1"', 'joint1="j3" joint2="free"')
    with pytest.raises(rbd.MJCFError, match=r"<equality/joint name='tie'>.*is free"):
        rbd.load_mjcf(joint)


def _mujoco_rows(mujoco, m, d):
    """Equality rows of MuJoCo's (dense) constraint Jacobian and their position errors."""
    rows = np.flatnonzero(d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    J = np.array(d.efc_J[:d.nefc * m.nv]).reshape(d.nefc, m.nv)
    return J[rows], np.array(d.efc_pos)[rows]


def test_rows_and_errors_match_mujoco():
    """MuJoCo's connect rows are the world-aligned point rows; its joint rows the coupling's;
    a weld's translational rows too (its rotational rows are a quaternion error: not compared).
    Both hold at qpos0, and J_rbd = J_mujoco T with qvel = T v."""
    mujoco = pytest.importorskip("mujoco", reason="the MuJoCo cross-check needs `mujoco`")
    model = rbd.load_mjcf(LOOP)
    m = mujoco.MjModel.from_xml_string(LOOP)
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    d = mujoco.MjData(m)
    q0 = rbd.mjcf.from_mujoco_state(model, m.qpos0)[0]
    phi0 = rbd.constraint_error(model, q0)
    # all hold at qpos0 but "sites" (sites snap together), "hold" (a relpose) and "tie" (a0)
    assert np.abs(np.r_[phi0[:3], phi0[6:9], phi0[15:24]]).max() < 1e-12
    assert phi0[24] == pytest.approx(-0.1)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rbd.random_configuration(model, rng)
        d.qpos[:] = rbd.mjcf.to_mujoco_state(model, q)[0]
        mujoco.mj_forward(m, d)
        J_mj, pos_mj = _mujoco_rows(mujoco, m, d)
        T = rbd.mjcf.mujoco_velocity_map(model, q)
        J = rbd.constraint_jacobian(model, q)
        phi = rbd.constraint_error(model, q)
        # rows: loop 3, sites 3, slide_to_box 3, hold 6 [ω; v], lid_shut 6, pos_only 3, tie 1;
        # MuJoCo's welds are [v; rotation] and keep 6 rows at torquescale 0
        ours = np.r_[0:9, 12:15, 18:21, 21:24, 24]
        theirs = np.r_[0:9, 9:12, 15:18, 21:24, 27]
        assert_close(J[ours], J_mj[theirs] @ T, RTOL_EXACT, "constraint rows")
        assert_close(phi[ours], pos_mj[theirs], RTOL_EXACT, "position errors")


def test_world_sites_and_bodies_fixed_to_the_world():
    """A site in <worldbody> is a world point; a connect between two world-fixed bodies
    constrains nothing and is listed in the reader's warning instead."""
    xml = """
    <mujoco>
      <worldbody>
        <site name="hook" pos="0 0 2"/>
        <body name="wall" pos="3 0 0"/>
        <body name="bob" pos="0 0 1">
          <joint name="ball" type="ball"/>
          <geom type="sphere" size="0.1"/>
          <site name="eye" pos="0 0 1"/>
        </body>
      </worldbody>
      <equality>
        <connect name="rope" site1="eye" site2="hook"/>
        <connect name="nothing" body1="wall" body2="world" anchor="0 0 0"/>
      </equality>
    </mujoco>"""
    with pytest.warns(RuntimeWarning, match="fixed to the world"):
        model = rbd.load_mjcf(xml)
    (rope,) = model.constraints
    assert rope.body_a == "eye" and rope.body_b is None
    assert rope.point_b.tolist() == [0.0, 0.0, 2.0]
    assert np.abs(rbd.constraint_error(model, rbd.neutral(model))).max() < 1e-15
