"""Fixed tendons and disable flags on the compiled forward pass and step
(``rbd/_kernels/tendon_rows.pyx`` hooked into ``forward.pyx``), against the Python pass
and against MuJoCo.

The compiled pass and the Python pass are two renderings of one computation; they differ
in the order of floating-point sums (dense Jacobian products, the tree-sparse factor of M
against ``numpy.linalg.solve``), each rounding ~1e-16 relative, amplified by the
conditioning of M and of the Newton Hessian (~1e2-1e3 on these models): measured
disagreements are below 2e-14 of the largest acceleration.  :data:`RTOL_TWIN` = 1e-12
leaves a margin of 50-100; a wrong term (a row missing, a sign) shows at 1e-3 or more.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_forward_matches_mujoco, dm_control_asset, mujoco_run

import rbd
from rbd.constraints.forward_compiled import compiled_forward
from rbd.simulation.contact import compiled_runs, euler_step

pytestmark = pytest.mark.usefixtures("require_kernels")
mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the states and the reference")

#: Compiled against Python pass, relative to 1 + max |qdd| (module docstring).
RTOL_TWIN = 1e-12

#: Every tendon term: a spring with a dead band, damping, friction loss, a limit with its
#: own solref and margin, a second spring, and an equality between two tendons with a
#: polynomial (no other equality constraint, so the compiled pass takes the model).
XML = """<mujoco><worldbody>
  <geom type="plane" size="5 5 .1"/>
  <body pos="0 0 1"><joint name="a" axis="0 1 0" ref="10" damping="0.2"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
    <body pos="0.4 0 0"><joint name="b" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body pos="0.3 0 0"><joint name="c" type="slide" axis="1 0 0"/>
        <geom type="sphere" size="0.05"/></body></body></body>
  <body pos="1 0 0.09"><freejoint/><geom type="box" size="0.1 0.1 0.1"/>
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
  <tendon tendon1="t3" tendon2="t2" polycoef="0.05 0.5 0.2 0 0" solref="0.05 1"/>
</equality></mujoco>"""


def _state(xml: str, seed: int):
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(seed)
    d.qpos[:3] += rng.uniform(-0.6, 0.6, 3)
    d.qpos[-1] += rng.uniform(-0.6, 0.6)
    d.qvel[:] = rng.normal(size=mm.nv)
    mujoco.mj_forward(mm, d)
    return model, mm, d


def _assert_twins(model, q, v, tau=None, **kwargs):
    """The compiled pass equals the Python pass: rows, kinds, ids, qdd (RTOL_TWIN)."""
    ref = rbd.forward(model, q, v, tau, backend="reference", **kwargs)
    ker = rbd.forward(model, q, v, tau, backend="kernel", **kwargs)
    np.testing.assert_array_equal(ker.kinds, ref.kinds)
    np.testing.assert_array_equal(ker.ids, ref.ids)
    assert ker.rows.ne == ref.rows.ne and ker.rows.nf == ref.rows.nf
    scale = 1 + np.abs(ref.qdd).max()
    np.testing.assert_allclose(ker.qdd_smooth, ref.qdd_smooth, rtol=0, atol=RTOL_TWIN * scale)
    np.testing.assert_allclose(ker.qdd, ref.qdd, rtol=0, atol=RTOL_TWIN * scale)
    np.testing.assert_allclose(ker.rows.R, ref.rows.R, rtol=RTOL_EXACT)
    np.testing.assert_allclose(ker.rows.aref, ref.rows.aref, rtol=0,
                               atol=RTOL_EXACT * (1 + np.abs(ref.rows.aref).max(initial=0.0)))
    return ref


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_compiled_tendon_rows_equal_the_python_pass_and_mujoco(seed):
    model, mm, d = _state(XML, seed)
    assert compiled_forward(model) is not None                 # the compiled pass runs
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    tau = np.random.default_rng(seed).normal(size=model.nv)
    for cone in ("pyramidal", "elliptic"):
        ref = _assert_twins(model, q, v, tau, cone=cone)
    assert {"equality", "friction"} <= set(ref.kinds)
    for solver in ("newton", "pgs"):                           # the compiled pass vs MuJoCo
        assert_forward_matches_mujoco(model, mm, d, "pyramidal", solver)


def test_the_compared_states_hold_a_tendon_limit():
    found = [sum(t == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON for t in _state(XML, s)[2].efc_type)
             for s in range(4)]
    assert any(found)


def test_tendon_equalities_keep_the_python_pass_when_constraints_are_given():
    """``constraints=()`` drops the tendon equalities on the Python pass: it runs it."""
    model, _, d = _state(XML, 0)
    assert compiled_forward(model, constraints=()) is None
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    assert "equality" not in set(rbd.forward(model, q, v, constraints=()).kinds)


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_step_with_tendons_equals_the_python_step(seed):
    model, mm, d = _state(XML, seed)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    traj = compiled_runs(model, q[None], v[None], 3, mm.opt.timestep)[0]
    for k in range(3):
        q1, v1, a, _ = euler_step(model, traj.q[k], traj.v[k], None, mm.opt.timestep,
                                  backend="reference")
        np.testing.assert_allclose(traj.q[k + 1], q1, rtol=0, atol=RTOL_EXACT)
        np.testing.assert_allclose(traj.v[k + 1], v1, rtol=0,
                                   atol=RTOL_EXACT * (1 + np.abs(v1).max()))


def test_simulate_keeps_the_tendon_equality():
    """``rbd.simulate`` with contacts (one state and a batch of two) runs the model's
    tendon equality: its first steps equal the compiled step's, which has the equality
    row (it once handed the step an empty tuple of constraint objects, which switched
    the tendon equalities off), and differ from a step without it."""
    model, mm, d = _state(XML, 0)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    dt = mm.opt.timestep
    expected = compiled_runs(model, q[None], v[None], 3, dt)[0].q
    one = rbd.simulate(model, q, v, 3 * dt, dt, integrator="euler")
    batch = rbd.simulate(model, np.stack([q, q]), np.stack([v, v]), 3 * dt, dt,
                         integrator="euler")
    np.testing.assert_allclose(one.q, expected, rtol=0, atol=RTOL_EXACT)
    np.testing.assert_allclose(batch.q[1], expected, rtol=0, atol=RTOL_EXACT)
    without = euler_step(model, q, v, None, dt, constraints=())[0]
    assert np.abs(without - expected[1]).max() > 1e3 * RTOL_EXACT


#: The flags the compiled pass and step honour, on XML: those of tests/test_forward_flags.py
#: that change this model, and ``eulerdamp`` (the step's damping explicit).
FLAGS = ("contact", "limit", "equality", "frictionloss", "spring", "damper", "constraint",
         "refsafe", "filterparent", "eulerdamp")


@pytest.mark.parametrize("flag", FLAGS)
def test_disable_flags_on_the_compiled_pass(flag):
    xml = XML.replace("<worldbody>", f'<option><flag {flag}="disable"/></option><worldbody>', 1)
    model, mm, d = _state(xml, 2)
    assert compiled_forward(model) is not None
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    _assert_twins(model, q, v)
    assert_forward_matches_mujoco(model, mm, d, "pyramidal")
    traj = compiled_runs(model, q[None], v[None], 2, mm.opt.timestep)[0]
    q1, v1, _, ncon = euler_step(model, q, v, None, mm.opt.timestep, backend="reference")
    np.testing.assert_allclose(traj.v[1], v1, rtol=0, atol=RTOL_EXACT * (1 + np.abs(v1).max()))
    assert traj.contact_count[0] == ncon


def test_compiled_step_without_implicit_damping_follows_mujoco():
    """``eulerdamp`` disabled: MuJoCo's Euler step takes the damping explicitly, and so
    does the compiled step (10 steps against mj_step; the Python step meets 1e-12 in
    tests/test_forward_flags.py)."""
    xml = XML.replace("<worldbody>", '<option><flag eulerdamp="disable"/></option><worldbody>', 1)
    model, mm, d = _state(xml, 1)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    traj = compiled_runs(model, q[None], v[None], 10, mm.opt.timestep)[0]
    for _ in range(10):
        mujoco.mj_step(mm, d)
    np.testing.assert_allclose(rbd.mjcf.to_mujoco_state(model, traj.q[-1])[0], d.qpos,
                               rtol=0, atol=RTOL_EXACT)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:collide. no primitive routine:UserWarning")
@pytest.mark.parametrize("name", ["humanoid"])
def test_dm_control_tendon_models_on_the_compiled_pass(name):
    """humanoid (fixed tendons without force): compiled, equal to the Python pass and to
    MuJoCo, with contacts.  (quadruped, with tendon equalities, has ellipsoid pairs and so
    keeps the Python pass: test_compiled_tendons' every-term model covers those rows.)"""
    for cone in ("pyramidal", "elliptic"):
        model, mm, d = rbd.testing.mujoco_pair(dm_control_asset(name), cone=cone)
        mujoco_run(mm, d, 300, seed=0, qvel_noise=0.1)
        assert compiled_forward(model) is not None and d.ncon > 0
        q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
        tau = np.random.default_rng(1).normal(size=model.nv)
        _assert_twins(model, q, v, tau, cone=cone)
        assert_forward_matches_mujoco(model, mm, d, cone)


def test_the_contact_benchmark_refuses_a_model_off_the_compiled_path():
    """benchmarks/bench_contact.py times the compiled step only where it runs: a model the
    compiled pass refuses (a spatial tendon, here) gets no number (it once timed a no-op)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_contact.py"
    spec = importlib.util.spec_from_file_location("bench_contact", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tendon = ('<tendon><spatial stiffness="1"><site site="a"/><site site="b"/></spatial>'
              '</tendon>')
    xml = """<mujoco><worldbody>
      <geom type="plane" size="1 1 .1"/><site name="a" pos="0 0 1"/><body pos="0 0 0.2">
      <joint type="hinge" axis="1 0 0"/><geom size="0.1"/><site name="b" pos="0 .1 0"/></body>
      <geom type="box" pos="1 0 .1" size=".1 .1 .1"/></worldbody>TENDON</mujoco>"""
    model = rbd.load_mjcf(xml.replace("TENDON", tendon))
    mm = mujoco.MjModel.from_xml_string(xml.replace("TENDON", tendon))
    d = mujoco.MjData(mm)
    q, v = rbd.neutral(model), np.zeros(model.nv)
    assert compiled_forward(model) is None
    assert bench.compiled_step_times(model, mm, d, q, v, 2, 1) is None
    dry = rbd.load_mjcf(xml.replace("TENDON", ""))
    times = bench.compiled_step_times(dry, mm, d, rbd.neutral(dry), v, 2, 1)
    assert times is not None and times["compiled"] > 0
