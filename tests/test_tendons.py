"""Fixed tendons in rbd.forward against mj_forward: springs with a dead band, damping,
friction loss, limits and equality constraints between tendons."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import QACC_RTOL, RTOL_EXACT, assert_forward_matches_mujoco

import rbd
from rbd.constraints.forward import passive_force
from rbd.mjcf import from_mujoco_force, from_mujoco_state

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference for tendons")

XML = """<mujoco><worldbody>
  <body pos="0 0 1"><joint name="a" axis="0 1 0" ref="10"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
    <body pos="0.4 0 0"><joint name="b" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body pos="0.3 0 0"><joint name="c" type="slide" axis="1 0 0"/>
        <geom type="sphere" size="0.05"/></body></body></body>
  <body pos="1 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/>
    <body pos="0.2 0 0"><joint name="d" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body></body>
</worldbody>
<tendon>
  <fixed name="t1" stiffness="3" springlength="0.1 0.3" damping="0.4" frictionloss="0.2"
         range="-0.5 0.2" solreflimit="0.03 1.1" margin="0.01">
    <joint joint="a" coef="0.5"/><joint joint="b" coef="-1.5"/></fixed>
  <fixed name="t2" stiffness="2"><joint joint="c" coef="2"/><joint joint="d" coef="0.7"/></fixed>
  <fixed name="t3"><joint joint="b" coef="1"/><joint joint="d" coef="1"/></fixed>
</tendon>
<equality>
  <joint joint1="c" polycoef="0.02 0 0 0 0"/>
  <tendon tendon1="t3" tendon2="t2" polycoef="0.05 0.5 0.2 0 0" solref="0.05 1"/>
</equality></mujoco>"""


def _state(seed: int):
    model = rbd.load_mjcf(XML)
    mm = mujoco.MjModel.from_xml_string(XML)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(seed)
    d.qpos[:3] += rng.uniform(-0.6, 0.6, 3)
    d.qpos[-1] += rng.uniform(-0.6, 0.6)
    d.qvel[:] = rng.normal(size=mm.nv)
    mujoco.mj_forward(mm, d)
    return model, mm, d


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_tendon_passive_force_matches_qfrc_passive(seed):
    model, mm, d = _state(seed)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    expected = from_mujoco_force(model, d.qpos, d.qfrc_passive)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(passive_force(model, q, v), expected, rtol=0,
                               atol=RTOL_EXACT * np.abs(expected).max())


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("solver", ["newton", "pgs"])
def test_tendon_rows_match_mujoco(seed, solver):
    """Friction, limit and equality rows of tendons: counts, R, aref, qacc, forces."""
    model, mm, d = _state(seed)
    result = assert_forward_matches_mujoco(model, mm, d, "pyramidal", solver)
    types = list(d.efc_type)
    assert types.count(mujoco.mjtConstraint.mjCNSTR_EQUALITY) == 2
    assert types.count(mujoco.mjtConstraint.mjCNSTR_FRICTION_TENDON) == 1
    assert list(result.kinds[:2]) == ["equality"] * 2


def test_some_state_has_a_tendon_limit():
    found = [sum(t == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON for t in _state(s)[2].efc_type)
             for s in range(4)]
    assert any(found)


def test_spatial_tendon_is_read_in_file_order():
    """A spatial tendon between fixed ones keeps MuJoCo's tendon numbering, is not in the
    load warning, and the equality on the tendons after it still names the right ones."""
    import warnings

    rope = '<spatial name="rope"><site site="s1"/><site site="s2"/></spatial>'
    xml = XML.replace('<fixed name="t2"', rope + '<fixed name="t2"').replace(
        '<geom type="sphere" size="0.05"/>', '<geom type="sphere" size="0.05"/><site name="s1"/>'
    ).replace('<geom type="box" size="0.1 0.1 0.1"/>',
              '<geom type="box" size="0.1 0.1 0.1"/><site name="s2"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = rbd.load_mjcf(xml)
    assert [(t["name"], t["kind"]) for t in model.mujoco_tendons] == [
        ("t1", "fixed"), ("rope", "spatial"), ("t2", "fixed"), ("t3", "fixed")]
    eq, = model.mujoco_tendon_equalities
    assert (eq["tendon1"], eq["tendon2"]) == (3, 2)
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    d.qpos[:3] += 0.3
    d.qvel[:] = 0.5
    assert_forward_matches_mujoco(model, mm, d, "pyramidal", "newton")


def test_tendon_flags_disable_their_rows():
    """``frictionloss`` and ``limit`` disabled: no tendon rows of those kinds (as MuJoCo)."""
    xml = XML.replace("<worldbody>", '<option><flag frictionloss="disable" limit="disable"/>'
                                     "</option><worldbody>", 1)
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mm)
    d.qpos[:3] += 0.5
    mujoco.mj_forward(mm, d)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = rbd.forward(model, q, v)
    assert set(result.kinds) == {"equality"} and d.nefc == len(result.kinds)
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())


def test_simulate_takes_the_tendon_terms():
    """A model whose only extra terms are tendons runs on the path that holds them."""
    from rbd.simulation.contact import has_contact_terms

    xml = """<mujoco><option gravity="0 0 0"/><worldbody><body>
      <joint name="a" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"
      contype="0" conaffinity="0"/></body></worldbody>
      <tendon><fixed stiffness="5"><joint joint="a" coef="1"/></fixed></tendon></mujoco>"""
    model = rbd.load_mjcf(xml)
    assert has_contact_terms(model)
    traj = rbd.simulate(model, [0.3], [0.0], 0.1, 0.01, integrator="euler")
    assert traj.q[-1, 0] < 0.3                            # the spring pulls back to 0


def test_fixed_tendon_armature_enters_the_mass_matrix_as_mujocos():
    """``<fixed armature>``: MuJoCo's ``qM`` gains a JᵀJ (``mj_tendonArmature``); rbd's
    forward pass has the same M (in rbd's coordinates, ``Tᵀ qM T`` with ``T`` the map of
    rbd's v to MuJoCo's qvel), the same rows and ``qacc``, on the backend of the run (the
    compiled pass on the kernels).  Tendon t2 joins two trees (c and d): as in MuJoCo's
    sparse ``qM``, its armature couples neither branch with the other."""
    from rbd.constraints.forward_compiled import compiled_forward
    from rbd.constraints.tendon_rows import tendon_armature
    from rbd.mjcf import to_mujoco_state

    xml = XML.replace('<fixed name="t1"', '<fixed name="t1" armature="0.7"').replace(
        '<fixed name="t2"', '<fixed name="t2" armature="0.25"')
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    assert (compiled_forward(model) is not None) == rbd.has_kernels()
    c, d = model.v_slice("c").start, model.v_slice("d").start
    assert tendon_armature(model)[c, c] == pytest.approx(0.25 * 2 ** 2, rel=RTOL_EXACT)
    assert tendon_armature(model)[c, d] == 0.0
    for seed in (0, 1):
        _, _, d = _state(seed)
        d2 = mujoco.MjData(mm)
        d2.qpos[:], d2.qvel[:] = d.qpos, d.qvel
        result = assert_forward_matches_mujoco(model, mm, d2, "pyramidal")
        qM = np.zeros((mm.nv, mm.nv))
        mujoco.mj_fullM(mm, d2, qM)
        q = from_mujoco_state(model, d2.qpos, d2.qvel)[0]
        T = np.array([to_mujoco_state(model, q, e)[1] for e in np.eye(model.nv)]).T
        np.testing.assert_allclose(result.M, T.T @ qM @ T, rtol=0,
                                   atol=RTOL_EXACT * np.abs(qM).max())


#: Compiled against Python step, relative to 1 + the largest entry (as
#: tests/test_compiled_equality_fluid.py): the same formulas summed in another order
#: (tree-sparse LᵀL against a dense solve); a missing armature term shows at 1e-3.
RTOL_COMPILED = 1e-12


def test_compiled_run_with_tendon_armature_follows_the_python_step(require_kernels):
    """The compiled step adds the tendons' armature to M (``ForwardC.tendon_M``): five steps
    from a state of the model with armature give the Python step's states."""
    from rbd.simulation.contact import compiled_runs, euler_step

    xml = XML.replace('<fixed name="t1"', '<fixed name="t1" armature="0.7"')
    model = rbd.load_mjcf(xml)
    _, _, d = _state(1)
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    traj = compiled_runs(model, q0[None], v0[None], 5, 0.002)[0]
    for k in range(5):
        q1, v1, _, _ = euler_step(model, traj.q[k], traj.v[k], None, 0.002,
                                  backend="reference")
        np.testing.assert_allclose(traj.v[k + 1], v1, rtol=0,
                                   atol=RTOL_COMPILED * (1 + np.abs(v1).max()))
        np.testing.assert_allclose(traj.q[k + 1], q1, rtol=0,
                                   atol=RTOL_COMPILED * (1 + np.abs(q1).max()))


def test_negative_tendon_armature_is_refused():
    with pytest.raises(rbd.MJCFError, match="armature"):
        rbd.load_mjcf(XML.replace('<fixed name="t2"', '<fixed name="t2" armature="-1"'))
