"""rbd.forward with contacts, joint limits and friction loss against MuJoCo's mj_forward."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rbd
from rbd.constraints.forward import forward

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference for the forward pass")
gymnasium = pytest.importorskip("gymnasium", reason="the test models are gymnasium's MJCFs")

import helpers  # noqa: E402
from helpers import (  # noqa: E402
    assert_forward_matches_mujoco,
    gymnasium_asset,
    mujoco_pair,
)

from rbd.mjcf import from_mujoco_state  # noqa: E402

#: The bounds of issue 21 (see tests/helpers.py).
QACC_RTOL, ROW_RTOL = helpers.QACC_RTOL, helpers.ROW_RTOL


def _paths(name):
    return str(gymnasium_asset(name))


def _pair(name, cone, steps, seed=0):
    """rbd and MuJoCo models of one file, MuJoCo's state after ``steps`` random-control steps.

    MuJoCo runs Newton to 1e-15.  Both sides keep the file's joint springs and
    per-joint limit softness (half_cheetah sets ``stiffness``, ``solreflimit``,
    ``solimplimit``).
    """
    return mujoco_pair(gymnasium_asset(name), steps, seed, cone=cone)


def _compare(model, mm, d, cone, solver="newton"):
    return assert_forward_matches_mujoco(model, mm, d, cone, solver)


@pytest.mark.parametrize("solver", ["newton", "pgs"])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("steps", [100, 300, 1000])
def test_ant_matches_mujoco(cone, steps, solver):
    """rbd's Newton and PGS both against MuJoCo's Newton: the problem's minimizer is unique."""
    model, mm, d = _pair("ant", cone, steps)
    model.mujoco_options = {"timestep": mm.opt.timestep, "impratio": mm.opt.impratio}
    _compare(model, mm, d, cone, solver)


def test_ant_states_have_contacts_and_limits():
    """The states compared above are not trivial: contacts and limit rows are active."""
    counts = []
    for steps in (100, 300, 1000):
        _, mm, d = _pair("ant", "pyramidal", steps)
        mujoco.mj_forward(mm, d)
        counts.append((d.ncon, d.nl))
    assert any(c > 0 for c, _ in counts) and any(n > 0 for _, n in counts)


@pytest.mark.parametrize("solver", ["newton", "pgs"])
@pytest.mark.parametrize("name", ["hopper", "walker2d", "half_cheetah", "humanoid"])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_gymnasium_models_match_mujoco(name, cone, solver):
    model, mm, d = _pair(name, cone, 300)
    _compare(model, mm, d, cone, solver)


def test_options_read_from_mjcf():
    """``<option timestep impratio cone>`` reach the rows (ant: timestep 0.01)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_mjcf(_paths("ant"))
    assert model.mujoco_options["timestep"] == 0.01
    xml = """<mujoco><option cone="elliptic" impratio="10"/><worldbody>
      <body><freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>"""
    opts = rbd.load_mjcf(xml).mujoco_options
    assert opts == {"cone": "elliptic", "impratio": 10.0}


def test_limits_on_both_sides_and_solvers_agree():
    """A hinge pushed past its upper limit: one row -e_j, Newton and PGS agree."""
    xml = """<mujoco><worldbody><body><joint name="j" type="hinge" axis="0 1 0" range="-10 10"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body></worldbody></mujoco>"""
    model = rbd.load_mjcf(xml)
    q = np.array([np.radians(12.0)])
    newton = forward(model, q, np.zeros(1))
    pgs = forward(model, q, np.zeros(1), solver="pgs")
    assert list(newton.kinds) == ["limit"]
    np.testing.assert_array_equal(newton.rows.J, [[-1.0]])
    assert newton.force[0] > 0
    np.testing.assert_allclose(pgs.qdd, newton.qdd, rtol=1e-8)
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    d.qpos[:] = q
    mm.opt.tolerance = 1e-15
    mujoco.mj_forward(mm, d)
    np.testing.assert_allclose(newton.qdd, d.qacc, rtol=QACC_RTOL)


def test_bad_solver_and_cone_are_refused():
    model = rbd.load_mjcf("""<mujoco><worldbody><body><joint type="hinge"/>
      <geom type="sphere" size="0.1"/></body></worldbody></mujoco>""")
    with pytest.raises(rbd.InputError, match="solver"):
        forward(model, [0.0], [0.0], solver="cg")
    with pytest.raises(rbd.InputError, match="cone"):
        forward(model, [0.0], [0.0], cone="round")
    with pytest.raises(rbd.InputError, match="q, v"):
        forward(model, [0.0, 1.0], [0.0])


def test_dof_friction_loss_matches_mujoco():
    """A hinge with ``frictionloss``: one Huber row per dof, qacc as MuJoCo's, both sides
    of the quadratic zone (slow: the row is in its linear zone; fast start: too)."""
    xml = """<mujoco><worldbody><body><joint type="hinge" axis="0 1 0" frictionloss="0.3"
      damping="0.1"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      </body></worldbody></mujoco>"""
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.tolerance = 1e-15
    d = mujoco.MjData(mm)
    for q, v in ((0.3, 0.0), (0.3, 2.0), (-1.0, -0.01)):
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(mm, d)
        result = forward(model, [q], [v])
        assert list(result.kinds) == ["friction"]
        np.testing.assert_allclose(result.qdd, d.qacc, rtol=QACC_RTOL)
        np.testing.assert_allclose(result.force, d.efc_force, rtol=QACC_RTOL)


#: Equality constraints, joint springs and per-joint solver parameters in one file:
#: a two-link arm closed on a world site (connect, site semantics, its own class), its
#: hand a welded child body; a box on the floor welded softly to a tilted world frame
#: (torquescale 0.3) and its welded lid tied to the upper arm with the rotation free
#: (torquescale 0); a pole coupled to its cart by a polynomial; a flap held by a
#: one-joint equality.  Springs (degrees for the hinge), limit margin and softness,
#: friction-loss softness.
EQUALITIES = """
<mujoco model="equalities">
  <option timestep="0.005"/>
  <default>
    <equality solimp="0.85 0.95 0.002 0.4 3"/>
    <default class="stiff"><equality solref="0.01 0.9"/></default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <site name="hook" pos="1.05 0 1.5"/>
    <body name="upper" pos="0 0 1.5">
      <joint name="shoulder" axis="0 1 0" stiffness="4" springref="20" damping="0.1"
             range="-80 80" solreflimit="0.03 0.7" solimplimit="0.8 0.9 0.01" margin="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04"/>
      <body name="lower" pos="0.5 0 0">
        <joint name="elbow" axis="0 1 0" frictionloss="0.05" solreffriction="0.05 1"
               solimpfriction="0.7 0.8 0.01"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04"/>
        <body name="hand" pos="0.5 0 0">
          <geom type="box" size="0.05 0.05 0.05" mass="0.5" contype="0" conaffinity="0"/>
          <site name="palm" pos="0.05 0 0"/>
        </body>
      </body>
    </body>
    <body name="box" pos="0.3 0.6 0.049">
      <freejoint/>
      <geom type="box" size="0.1 0.08 0.05"/>
      <body name="lid" pos="0.02 0 0.06">
        <geom type="box" size="0.1 0.08 0.01" mass="0.2" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="cart" pos="0 -0.6 0.5">
      <joint name="rail" type="slide" axis="1 0 0" stiffness="30" springref="0.1"
             range="-0.5 0.03" margin="0.05"/>
      <geom type="box" size="0.1 0.1 0.05" contype="0" conaffinity="0"/>
      <body name="pole" pos="0 0 0.05">
        <joint name="pivot" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.03" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="flag" pos="-0.5 0 1">
      <joint name="flap" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality>
    <connect name="closure" site1="palm" site2="hook" class="stiff"/>
    <weld name="hold" body1="box" relpose="0.3 0.6 0.06 0.995 0.05 0.07 0" torquescale="0.3"
          solref="0.05 1"/>
    <weld name="lid_to_arm" body1="lid" body2="upper" torquescale="0"/>
    <joint name="gear" joint1="pivot" joint2="rail" polycoef="0 1 0.5"/>
    <joint name="flap_hold" joint1="flap" polycoef="0.2"/>
  </equality>
</mujoco>
"""


def _equality_pair(cone, steps):
    """rbd's and MuJoCo's models of EQUALITIES and MuJoCo's state after ``steps`` steps from a
    random velocity."""
    model = rbd.load_mjcf(EQUALITIES)
    mm = mujoco.MjModel.from_xml_string(EQUALITIES)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    mm.opt.cone = (mujoco.mjtCone.mjCONE_ELLIPTIC if cone == "elliptic"
                   else mujoco.mjtCone.mjCONE_PYRAMIDAL)
    d = mujoco.MjData(mm)
    d.qvel[:] = np.random.default_rng(3).normal(0.0, 0.5, mm.nv)
    for _ in range(steps):
        mujoco.mj_step(mm, d)
    return model, mm, d


@pytest.mark.slow
@pytest.mark.parametrize("solver, steps", [("newton", 0), ("newton", 60), ("pgs", 60)])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_equalities_springs_and_joint_softness_match_mujoco(cone, solver, steps):
    """Equality rows (connect, weld with torquescale 0.3 and 0, joint polynomial and
    one-joint), joint springs, per-joint limit and friction softness, and the weights of
    welded bodies (hand, lid) against mj_forward: rows, qacc and efc_force.  (PGS at the
    first state takes ~1 min to converge on the closed loop: it runs at the later one.)"""
    model, mm, d = _equality_pair(cone, steps)
    result = _compare(model, mm, d, cone, solver)
    ne = int(np.sum(result.kinds == "equality"))
    assert ne == d.ne == 3 + 6 + 6 + 1 + 1
    assert result.rows.ne == ne and list(result.kinds[:ne]) == ["equality"] * ne
    assert d.ncon > 0 and np.sum(result.kinds == "friction") == 1


def test_equality_states_are_not_trivial():
    """The compared states violate the equalities (the rows do work), a limit is inside its
    margin at the start and the springs pull."""
    model, mm, d = _equality_pair("pyramidal", 60)
    mujoco.mj_forward(mm, d)
    assert np.abs(d.efc_pos[:d.ne]).max() > 1e-4
    assert np.abs(d.qfrc_spring).max() > 0.1
    model, mm, d = _equality_pair("pyramidal", 0)
    mujoco.mj_forward(mm, d)
    assert d.nl == 1 and d.efc_margin[d.ne + d.nf] == pytest.approx(0.05)
    assert d.efc_pos[d.ne + d.nf] == pytest.approx(0.03)    # inside the margin, not past
    result = forward(model, *from_mujoco_state(model, d.qpos, d.qvel)[:2])
    assert list(result.ids[result.kinds == "limit"]) == [model.v_slice("rail").start]


def test_equality_rows_ignore_inactive_and_can_be_switched_off():
    """``active="false"`` leaves a constraint out, ``constraints=()`` all of them, as
    MuJoCo's ``eq_active`` does."""
    model, mm, d = _equality_pair("pyramidal", 0)
    mm.eq_active0[:] = 0
    d = mujoco.MjData(mm)
    mujoco.mj_forward(mm, d)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = forward(model, q, v, constraints=())
    assert d.ne == 0 and not np.any(result.kinds == "equality")
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())
    off = rbd.load_mjcf(EQUALITIES.replace('<joint name="gear"', '<joint active="false" '
                                           'name="gear"'))
    assert np.sum(forward(off, q, v).kinds == "equality") == 16


#: Sides fixed to the world: body1 welded to the world (a connect and a weld with a
#: relpose), and sites named like bodies on both a static and a moving body.
WORLD_SIDES = """
<mujoco>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="post" pos="-1 0 0"><geom type="box" size=".1 .1 .3"/></body>
    <body name="beam" pos="-1 0 0"><freejoint/>
      <geom type="box" size=".2 .05 .05" pos=".2 0 0"/></body>
    <body name="wall" pos="1 0 0"><geom type="box" size=".5 .1 .5"/>
      <site name="wall" pos=".5 -.1 .5"/></body>
    <body name="plank" pos="1 0 0"><freejoint/>
      <geom type="box" size=".2 .2 .05"/><site name="plank" pos=".2 -.1 .2"/></body>
    <body name="arm" pos="0 1 1"><joint name="swing" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .5 0 0" size=".03"/></body>
  </worldbody>
  <equality>
    <connect body1="post" body2="beam" anchor=".1 .05 .3"/>
    <connect site1="wall" site2="plank" solref="0.03 1"/>
    <weld body1="wall" body2="arm" relpose="0.4 0 0 0.98 0 0.2 0" torquescale="2"/>
  </equality>
</mujoco>
"""


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_sides_fixed_to_the_world_match_mujoco(cone):
    """Rows whose body1 is fixed to the world keep MuJoCo's sign (efc_force as MuJoCo's),
    and a site named like a body is the site."""
    mm = mujoco.MjModel.from_xml_string(WORLD_SIDES)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    d.qvel[:] = np.random.default_rng(5).normal(0.0, 0.5, mm.nv)
    for _ in range(30):
        mujoco.mj_step(mm, d)
    model = rbd.load_mjcf(WORLD_SIDES)
    _compare(model, mm, d, cone)
    assert d.ne == 12 and np.abs(d.efc_force[:d.ne]).max() > 1.0


@pytest.mark.slow
def test_simulate_steps_equalities_and_springs_as_mujoco():
    """rbd.simulate's Euler path steps the equality rows and the springs without a warning,
    and follows MuJoCo's Euler (implicit damping) to round-off over 0.2 s."""
    model, mm, d = _equality_pair("pyramidal", 0)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traj = rbd.simulate(model, q0, v0, 0.2, mm.opt.timestep, integrator="euler")
    qs = []
    for _ in range(len(traj.t)):
        qs.append(from_mujoco_state(model, d.qpos, d.qvel)[0])
        mujoco.mj_step(mm, d)
    # the equalities pull: the run moves well away from its start
    assert np.abs(traj.q[-1] - traj.q[0]).max() > 0.05
    # the soft rows' drift is recorded (rigid rows of the same constraints: 3+6+3+1+1)
    assert traj.constraint_error.shape == (len(traj.t), 14)
    # the flap starts 0.2 rad off its held value and is pulled there (timeconst 0.02 s)
    assert traj.constraint_error[0, -1] == pytest.approx(-0.2)
    assert abs(traj.constraint_error[-1, -1]) < 0.01
    np.testing.assert_allclose(traj.q, qs, rtol=0, atol=1e-9)


def test_simulate_warns_when_springs_are_left_out():
    """Off the contact path (RK4, rbd.aba) the joint springs act nowhere: the run says so."""
    model = rbd.load_mjcf(EQUALITIES)
    with pytest.warns(RuntimeWarning, match="joint springs"):
        rbd.simulate(model, rbd.neutral(model), np.zeros(model.nv), 0.01, 0.005,
                     constraints=())


def test_simulate_warns_that_rk4_leaves_the_floor_out():
    """A cylinder above a box under the default integrator falls through it: the run says
    what it leaves out, and ``contact=False`` (said on purpose) silences that."""
    model = rbd.load_mjcf("""<mujoco><worldbody>
      <geom type="box" size="0.5 0.5 0.1"/>
      <body pos="0 0 0.3"><joint type="hinge" range="-1 1"/><joint type="slide" axis="0 0 1"/>
        <geom type="cylinder" size="0.05 0.15" mass="0.3"/></body>
    </worldbody></mujoco>""")
    with pytest.warns(RuntimeWarning, match=r"collision geoms \(contacts\) and joint limits "
                      r"act only on the contact path"):
        rbd.simulate(model, np.zeros(2), np.zeros(2), 0.01, 0.002)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rbd.simulate(model, np.zeros(2), np.zeros(2), 0.01, 0.002, contact=False)
        rbd.simulate(model, np.zeros(2), np.zeros(2), 0.01, 0.002, integrator="euler")


@pytest.mark.parametrize("attribute, value, message", [
    ("solref", "0.02 -1", "mixes the standard form"),
    ("solref", "0.02 1 3", "must hold 1 to 2 numbers"),
    ("solimp", "0.9 0.95 0.001 0.5 2 1", "must hold 1 to 5 numbers"),
    ("solimp", "0.9 nan", "non-finite"),
    ("solref", "fast", "is not a list of numbers"),
])
def test_malformed_equality_softness_is_refused(attribute, value, message):
    xml = EQUALITIES.replace('<joint name="gear"', f'<joint {attribute}="{value}" name="gear"')
    with pytest.raises(rbd.MJCFError, match=rf"<equality/joint name='gear'>: {attribute}.*"
                                            f"{message}"):
        rbd.load_mjcf(xml)


def test_malformed_joint_softness_is_refused():
    xml = EQUALITIES.replace('solreflimit="0.03 0.7"', 'solreflimit="-100 0.7"')
    with pytest.raises(rbd.MJCFError, match=r"'shoulder'.*solreflimit.*mixes"):
        rbd.load_mjcf(xml)
    with pytest.raises(rbd.MJCFError, match=r"'shoulder'.*stiffness must not be negative"):
        rbd.load_mjcf(EQUALITIES.replace('stiffness="4"', 'stiffness="-4"'))


def test_constraint_kinds_carry_mujoco_defaults_and_check_them():
    """The builder path: MuJoCo's default softness, a checked solref/solimp/torquescale."""
    from rbd import constraints as rc

    c = rc.PointAnchor("a", None, [0, 0, 0], [0, 0, 0])
    assert c.solref.tolist() == [0.02, 1.0]
    assert c.solimp.tolist() == [0.9, 0.95, 0.001, 0.5, 2.0]
    assert rc.FrameAnchor("a", None).torquescale == 1.0
    with pytest.raises(rbd.InputError, match="JointCoupling solref"):
        rc.JointCoupling("j", None, [0.0], solref=(0.02,))
    with pytest.raises(rbd.InputError, match="PointAnchor solimp"):
        rc.PointAnchor("a", None, [0, 0, 0], [0, 0, 0], solimp=[0.9, np.inf, 0, 0.5, 2])
    with pytest.raises(rbd.InputError, match="torquescale"):
        rc.FrameAnchor("a", None, torquescale=-1.0)
    with pytest.raises(rbd.InputError, match="cannot both be the world"):
        rc.PointAnchor(None, None, [0, 0, 0], [0, 0, 0])


def test_world_as_side_a_is_the_same_rigid_constraint():
    """An anchor with the world as side A gives the rigid solvers the rows of the swapped
    anchor (negated: the same accelerations); forward keeps its side order."""
    from rbd import constraints as rc

    q, v = np.array([0.4, -0.3]), np.array([0.5, 0.2])
    qdd, force = [], []
    for c in (rc.PointAnchor("link2", None, [1.0, 0, 0], [1.9, 0, -0.3]),
              rc.PointAnchor(None, "link2", [1.9, 0, -0.3], [1.0, 0, 0])):
        model = rbd.models.double_pendulum()
        model.add_constraint(c)
        qdd.append(rbd.constrained_dynamics(model, q, v, np.zeros(2)).qdd)
        force.append(forward(model, q, v).force)
    np.testing.assert_allclose(qdd[1], qdd[0], rtol=1e-12)
    np.testing.assert_allclose(force[1], -force[0], rtol=1e-12)


def test_builder_constraints_are_soft_rows_of_forward():
    """A coupling added through the builder is a row of forward (no warning), with the
    softness it was given: a stiffer solref holds the joints closer together."""
    model = rbd.models.double_pendulum()
    names = model.joint_names
    q, v = np.array([0.3, -0.2]), np.zeros(2)
    errors = []
    for solref in ((0.2, 1.0), (0.02, 1.0)):
        model = rbd.models.double_pendulum()
        model.add_constraint(rbd.constraints.JointCoupling(names[1], names[0], [0.0, 1.0],
                                                           solref=solref))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = forward(model, q, v)
        assert list(result.kinds) == ["equality"]
        # the row's acceleration error pulls q1 - q0 = -0.5 back
        errors.append(result.qdd[1] - result.qdd[0])
    assert errors[0] > 0 and errors[1] > 10 * errors[0]


#: The whole forward pass on both backends: the same rows, the solvers' twins agree to
#: ~1e-13 (tests/test_contact_solver.py), contact points to ~1e-15.
RTOL_BACKENDS = 1e-10


@pytest.mark.parametrize("name, cone", [("ant", "pyramidal"), ("humanoid", "elliptic")])
def test_kernel_and_reference_backends_agree(name, cone, require_kernels):
    """``rbd.forward`` with the compiled solver and pair routines equals the readable path
    (states with contacts and limit rows active)."""
    model, mm, d = _pair(name, cone, 1000)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    tau = d.qfrc_actuator.copy()
    for solver in ("newton", "pgs"):
        kernel = forward(model, q, v, tau, cone=cone, solver=solver, backend="kernel",
                         iterations=100 if solver == "newton" else 50)
        reference = forward(model, q, v, tau, cone=cone, solver=solver, backend="reference",
                            iterations=100 if solver == "newton" else 50)
        assert len(kernel.contacts) == len(reference.contacts) > 0
        np.testing.assert_allclose(kernel.contacts.pos, reference.contacts.pos, rtol=0,
                                   atol=1e-12)
        np.testing.assert_allclose(kernel.contacts.frame, reference.contacts.frame, rtol=0,
                                   atol=1e-12)
        scale = np.abs(reference.qdd).max()
        np.testing.assert_allclose(kernel.qdd, reference.qdd, rtol=0, atol=RTOL_BACKENDS * scale)
        gain = np.max(np.abs(reference.force), initial=1.0)
        np.testing.assert_allclose(kernel.force, reference.force, rtol=0,
                                   atol=RTOL_BACKENDS * gain)
