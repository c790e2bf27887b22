"""rbd.forward with contacts, joint limits and friction loss against MuJoCo's mj_forward."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import rbd
from rbd.constraints.forward import forward, free_joint_bias, inverse_weights

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference for the forward pass")
gymnasium = pytest.importorskip("gymnasium", reason="the test models are gymnasium's MJCFs")

from rbd.mjcf import from_mujoco_state  # noqa: E402

#: Relative qacc agreement asked of the constrained solution (issue 21).  Both sides
#: solve the same strictly convex problem to ~1e-15; what is left is rounding.
QACC_RTOL = 1e-8
#: Rows: R and aref are closed-form functions of the same inputs.
ROW_RTOL = 1e-10


def _paths(name):
    assets = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
    return os.path.join(assets, f"{name}.xml")


def _pair(name, cone, steps, seed=0):
    """rbd and MuJoCo models of one file, MuJoCo's state after ``steps`` random-control steps.

    MuJoCo runs Newton to 1e-15.  Joint springs and per-joint limit softness
    (rbd's MJCF reader leaves ``stiffness``, ``solreflimit``, ``solimplimit`` and
    ``margin`` out; half_cheetah sets them) take MuJoCo's defaults on MuJoCo's side.
    """
    path = _paths(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.jnt_stiffness[:] = 0.0
    mm.jnt_solref[:] = (0.02, 1.0)
    mm.jnt_solimp[:] = (0.9, 0.95, 0.001, 0.5, 2.0)
    mm.jnt_margin[:] = 0.0
    mm.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    mm.opt.cone = (mujoco.mjtCone.mjCONE_ELLIPTIC if cone == "elliptic"
                   else mujoco.mjtCone.mjCONE_PYRAMIDAL)
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        d.ctrl[:] = rng.uniform(-1, 1, mm.nu)
        mujoco.mj_step(mm, d)
    return model, mm, d


def _welded_weights(model, mm):
    """Give MuJoCo's bodies welded into their parent the weights rbd has for the merged body.

    rbd merges a body without joints into its parent, so its geoms' contacts use
    the merged body's inverse weight (``body_invweight0``) where MuJoCo uses the
    welded body's own centre of mass: the one known difference in the rows.
    """
    body_weight, _ = inverse_weights(model)
    for b in range(1, mm.nbody):
        weld = mm.body_weldid[b]
        if weld != b and weld > 0:
            name = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, weld)
            mm.body_invweight0[b] = body_weight[model.body_index(name) + 1]


def _compare(model, mm, d, cone, solver="newton"):
    mujoco.mj_forward(mm, d)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = forward(model, q, v, d.qfrc_actuator.copy(), cone=cone, solver=solver,
                     iterations=20000 if solver == "pgs" else 100)
    assert len(result.contacts) == d.ncon
    assert len(result.rows.aref) == d.nefc
    assert int(np.sum(result.kinds == "limit")) == d.nl
    np.testing.assert_allclose(result.contacts.pos, d.contact.pos, atol=1e-9)
    np.testing.assert_allclose(result.contacts.dist, d.contact.dist, atol=1e-9)
    np.testing.assert_allclose(result.rows.R, d.efc_R, rtol=ROW_RTOL)
    # rbd's rows act on rbd's free-joint acceleration: MuJoCo's aref is rbd's plus J b
    aref = result.rows.aref + result.rows.J @ free_joint_bias(model, v)
    np.testing.assert_allclose(aref, d.efc_aref, rtol=ROW_RTOL, atol=1e-9)
    scale = np.abs(a).max()
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * scale)
    # force = -D (J a - aref): a's error reaches the forces amplified by D |J|
    gain = np.max(result.rows.D * np.abs(result.rows.J).sum(axis=1), initial=1.0)
    np.testing.assert_allclose(result.force, d.efc_force, rtol=0, atol=gain * QACC_RTOL * scale)
    return result


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
    _welded_weights(model, mm)
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


def test_equality_constraints_are_not_silently_dropped():
    """Equality rows are not part of forward yet: a model with them warns."""
    model = rbd.models.double_pendulum()
    model.add_constraint(rbd.constraints.JointCoupling(model.joint_names[1],
                                                       model.joint_names[0], 1.0))
    with pytest.warns(RuntimeWarning, match="equality constraints"):
        forward(model, [0.1, 0.1], [0.0, 0.0])


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
