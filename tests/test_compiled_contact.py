"""The compiled forward pass and contact step (``rbd/_kernels/forward.pyx``, ``contact.pyx``)
against their reference texts, against MuJoCo, batched and when a run diverges.

States come from a noisy MuJoCo run of gymnasium's MJCFs (1 s in, so that contacts and
joint limits are active).  The compiled pass runs on the kernel backend only: these tests
skip on the pure-Python path (``require_kernels``).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from helpers import RTOL_EXACT, mujoco_qpos_path

import rbd
from rbd.constraints.forward_compiled import compiled_forward
from rbd.simulation.contact import compiled_runs, euler_step

pytestmark = pytest.mark.usefixtures("require_kernels")

#: The issue's bound on qpos over 0.2 s against MuJoCo (the Python step meets it with
#: 1.4e-14, tests/test_contact_trajectories.py).
ATOL_TRAJECTORY = 1e-6


def _asset(name: str) -> str:
    gymnasium = pytest.importorskip("gymnasium", reason="the models are gymnasium's MJCFs")
    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                        name + ".xml")


def _model_and_state(name: str, seconds: float = 1.0):
    """rbd's model, MuJoCo's (Euler, Newton, tightened) and its data ``seconds`` into a run
    from qpos0 + U(±0.05), qvel ~ 0.1 N(0, 1); the state as rbd's q, v."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the states and the reference run")
    from rbd.mjcf import from_mujoco_state

    path = _asset(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # left-out actuators
        model = rbd.load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(path)
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    mm.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(0)
    d.qpos[:] = mm.qpos0 + rng.uniform(-0.05, 0.05, mm.nq)
    d.qvel[:] = 0.1 * rng.normal(size=mm.nv)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    for _ in range(round(seconds / mm.opt.timestep)):
        mujoco.mj_step(mm, d)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    return model, (mujoco, mm, d), q, v


@pytest.mark.slow
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", ["ant", "hopper", "walker2d", "half_cheetah"])
def test_compiled_forward_equals_the_reference(name, cone):
    model, _, q, v = _model_and_state(name)
    assert compiled_forward(model) is not None               # the compiled pass runs
    tau = np.random.default_rng(1).normal(size=model.nv)
    ref = rbd.forward(model, q, v, tau, backend="reference", cone=cone)
    ker = rbd.forward(model, q, v, tau, backend="kernel", cone=cone)
    assert len(ref.contacts) > 0 and len(ref.force) > 0        # rows are active
    np.testing.assert_array_equal(ker.kinds, ref.kinds)
    np.testing.assert_array_equal(ker.ids, ref.ids)
    scale = 1 + np.abs(ref.qdd).max()
    np.testing.assert_allclose(ker.qdd, ref.qdd, rtol=0, atol=RTOL_EXACT * scale)
    np.testing.assert_allclose(ker.qdd_smooth, ref.qdd_smooth, rtol=0, atol=RTOL_EXACT * scale)
    np.testing.assert_allclose(ker.force, ref.force, rtol=0,
                               atol=RTOL_EXACT * (1 + np.abs(ref.force).max()))
    np.testing.assert_allclose(ker.rows.R, ref.rows.R, rtol=RTOL_EXACT)
    np.testing.assert_allclose(ker.rows.aref, ref.rows.aref, rtol=0,
                               atol=RTOL_EXACT * (1 + np.abs(ref.rows.aref).max()))


def test_compiled_forward_pgs_and_without_limits():
    model, _, q, v = _model_and_state("hopper")
    for kwargs in ({"solver": "pgs"}, {"limits": False}, {"contacts": False}):
        ref = rbd.forward(model, q, v, backend="reference", **kwargs)
        ker = rbd.forward(model, q, v, backend="kernel", **kwargs)
        np.testing.assert_array_equal(ker.kinds, ref.kinds)
        np.testing.assert_allclose(ker.qdd, ref.qdd, rtol=0,
                                   atol=RTOL_EXACT * (1 + np.abs(ref.qdd).max()))


def test_which_models_take_the_compiled_pass():
    """Fluid forces, fixed tendons, equality rows and the GJK pairs (an ellipsoid on a box)
    are compiled."""
    swimmer = rbd.load_mjcf(_asset("swimmer"))                   # fluid forces: compiled
    assert compiled_forward(swimmer) is not None
    humanoid = rbd.load_mjcf(_asset("humanoid"))                 # fixed tendons: compiled
    assert compiled_forward(humanoid) is not None
    ellipsoid = rbd.load_mjcf("""<mujoco><worldbody><geom type="box" size="1 1 .1"/>
      <body pos="0 0 .5"><freejoint/><geom type="ellipsoid" size=".1 .2 .3"/></body>
      </worldbody></mujoco>""")
    assert compiled_forward(ellipsoid) is not None               # GJK pairs: compiled
    welded = rbd.load_mjcf("""<mujoco><worldbody>
      <body name="a"><joint name="h" type="hinge"/><geom size="0.1" mass="1"/></body>
      <body name="b" pos="1 0 0"><joint name="g" type="hinge"/><geom size="0.1" mass="1"/></body>
      </worldbody><equality><joint joint1="h" joint2="g"/></equality></mujoco>""")
    assert compiled_forward(welded) is not None                  # equality rows: compiled
    assert compiled_forward(welded, constraints=()) is not compiled_forward(welded)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ant", "walker2d", "humanoid"])
def test_compiled_step_equals_the_python_step(name):
    """Each compiled step from a recorded state gives the Python step's next state."""
    model, (_, mm, _), q, v = _model_and_state(name)
    steps = 4
    traj = compiled_runs(model, q[None], v[None], steps, mm.opt.timestep)[0]
    assert len(traj.t) == steps + 1 and traj.contact_count.max() > 0
    for k in range(steps):
        q1, v1, a, ncon = euler_step(model, traj.q[k], traj.v[k], None, mm.opt.timestep,
                                     backend="reference")
        np.testing.assert_allclose(traj.q[k + 1], q1, rtol=0, atol=RTOL_EXACT)
        np.testing.assert_allclose(traj.v[k + 1], v1, rtol=0,
                                   atol=RTOL_EXACT * (1 + np.abs(v1).max()))
        np.testing.assert_allclose(traj.a[k], a, rtol=0, atol=RTOL_EXACT * (1 + np.abs(a).max()))
        assert traj.contact_count[k] == ncon


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ant", "humanoid"])
def test_compiled_run_follows_mujoco_for_0_2_s(name):
    from rbd.mjcf import to_mujoco_state

    model, (mujoco, mm, d), q, v = _model_and_state(name, seconds=0.5)
    steps = round(0.2 / mm.opt.timestep)
    traj = compiled_runs(model, q[None], v[None], steps, mm.opt.timestep)[0]
    expected = mujoco_qpos_path(mm, d, steps)
    assert np.abs(expected[-1] - expected[0]).max() > 1e-3     # the window is not at rest
    assert traj.contact_count.max() > 0
    np.testing.assert_allclose(to_mujoco_state(model, traj.q)[0], expected, rtol=0,
                               atol=ATOL_TRAJECTORY)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:simulate. the initial state is outside:RuntimeWarning")
def test_batched_run_equals_single_runs_on_any_thread_count():
    model, (_, mm, _), q, v = _model_and_state("ant")
    rng = np.random.default_rng(2)
    q0 = np.array([q, q, q])
    q0[1:, 7:] += rng.uniform(-0.05, 0.05, (2, model.nq - 7))
    v0 = np.array([v, v + 0.1 * rng.normal(size=model.nv), v])
    single = [compiled_runs(model, q0[k:k + 1], v0[k:k + 1], 6, mm.opt.timestep)[0]
              for k in range(3)]
    for threads in (1, 2):
        batch = compiled_runs(model, q0, v0, 6, mm.opt.timestep, record_every=2,
                              num_threads=threads)
        for k in range(3):
            np.testing.assert_array_equal(batch[k].q, single[k].q[::2])
            np.testing.assert_array_equal(batch[k].v, single[k].v[::2])
            np.testing.assert_array_equal(batch[k].contact_count, single[k].contact_count[::2])
    for run in single:                       # energies recorded in the run, as rbd's
        np.testing.assert_allclose(run.kinetic, rbd.kinetic_energy(model, run.q, run.v),
                                   rtol=RTOL_EXACT)
        np.testing.assert_allclose(run.potential, rbd.potential_energy(model, run.q),
                                   rtol=RTOL_EXACT)
    traj = rbd.simulate(model, q0, v0, 6 * mm.opt.timestep, mm.opt.timestep,
                        integrator="euler")                    # simulate's batched path
    np.testing.assert_array_equal(traj.q[1], single[1].q)
    np.testing.assert_array_equal(traj.contact_count[2], single[2].contact_count)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:simulate. the initial state is outside:RuntimeWarning")
def test_a_batch_is_its_single_runs_on_one_thread_and_on_two(monkeypatch):
    """``rbd.simulate``'s contact batch (built on the kernel's arrays, not stacked from
    per-run trajectories) holds every recorded field of each single run bit for bit, on
    the number of threads asked for (which reaches the kernel), the contact forces zero
    past a run's contacts; an off-stride last sample included."""
    import rbd._kernels.contact as kernel

    model, (_, mm, _), q, v = _model_and_state("ant")
    rng = np.random.default_rng(4)
    q0 = np.array([q, q, q])
    q0[1:, 7:] += rng.uniform(-0.05, 0.05, (2, model.nq - 7))
    v0 = v + 0.1 * rng.normal(size=(3, model.nv))
    dt = mm.opt.timestep
    single = [rbd.simulate(model, q0[k], v0[k], 8 * dt, dt, integrator="euler",
                           record_every=3) for k in range(3)]
    asked = []
    run = kernel.simulate_contact

    def spy(*args, **kwargs):
        asked.append(args[12])                          # num_threads
        return run(*args, **kwargs)

    monkeypatch.setattr(kernel, "simulate_contact", spy)
    for threads in (1, 2):
        batch = rbd.simulate(model, q0, v0, 8 * dt, dt, integrator="euler", record_every=3,
                             num_threads=threads)
        np.testing.assert_array_equal(batch.t, single[0].t)
        assert len(batch.t) == 4                        # steps 0, 3, 6 and 8
        widths = [run.contact_force.shape[1] for run in single]
        assert batch.contact_force.shape == (3, 4, max(widths), 6) and max(widths) > 0
        for k in range(3):
            for name in ("q", "v", "a", "kinetic", "potential", "contact_count",
                         "constraint_force"):
                np.testing.assert_array_equal(getattr(batch, name)[k],
                                              getattr(single[k], name), err_msg=name)
            np.testing.assert_array_equal(batch.contact_force[k, :, :widths[k]],
                                          single[k].contact_force)
            np.testing.assert_array_equal(batch.contact_force[k, :, widths[k]:], 0.0)
        assert batch.contact_count.dtype.kind == "i"
        assert batch.evaluations == 3 * 9
    assert asked == [1, 2]


def _kernel_runs(model, q0, v0, steps, dt, threads, record_every=1):
    """The compiled step's raw arrays (``simulate_contact``'s dict) for a batch."""
    from rbd.simulation.contact import _run_compiled

    return _run_compiled(model, q0, v0, steps, dt, None, record_every, None, "newton", None,
                         None, threads)


def _assert_same_runs(a, b, rows=slice(None)):
    """The runs ``rows`` of the batch ``a`` are the batch ``b``, every array to the bit (NaN
    equals NaN).  Each batch's contact forces are cut to its own most contacts of a sample,
    so ``a``'s may be wider: zero there (NaN past a stopped run's samples).  The totals
    (ints) are compared between whole batches."""
    for name, x in a.items():
        if np.ndim(x) == 0:
            if rows == slice(None):
                assert x == b[name], name
            continue
        x = x[rows]
        if name == "contact_force":
            width = b[name].shape[2]
            wider = x[:, :, width:]
            assert np.all((wider == 0.0) | np.isnan(wider)), name
            x = x[:, :, :width]
        np.testing.assert_array_equal(x, b[name], err_msg=name)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:simulate. the initial state is outside:RuntimeWarning")
def test_runs_cut_into_segments_on_two_threads_are_the_single_runs():
    """On two threads each run is cut into segments that either thread may take
    (``contact.pyx: _run_segments``): five runs of 37 steps (segments of three steps, the
    last one shorter), recorded every fourth step, equal the one-thread batch and each run
    alone, every array to the bit."""
    model, (_, mm, _), q, v = _model_and_state("ant")
    rng = np.random.default_rng(5)
    q0 = np.repeat(q[None], 5, axis=0)
    q0[:, 7:] += rng.uniform(-0.05, 0.05, (5, model.nq - 7))
    v0 = v + 0.1 * rng.normal(size=(5, model.nv))
    dt = mm.opt.timestep
    one = _kernel_runs(model, q0, v0, 37, dt, 1, record_every=4)
    assert one["contact_count"].max() > 0 and np.all(one["recorded"] == 11)
    _assert_same_runs(_kernel_runs(model, q0, v0, 37, dt, 2, record_every=4), one)
    alone = [_kernel_runs(model, q0[k:k + 1], v0[k:k + 1], 37, dt, 1, record_every=4)
             for k in range(5)]
    for k in range(5):
        _assert_same_runs(one, alone[k], rows=slice(k, k + 1))
    # the batch's totals are its runs' (38 forward passes each), its contact forces as wide
    # as the widest run's
    assert one["evaluations"] == sum(run["evaluations"] for run in alone) == 5 * 38
    assert one["failures"] == 0
    assert one["contact_force"].shape[2] == max(run["contact_force"].shape[2] for run in alone)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_runs_that_stop_in_a_segment_leave_the_others_untouched():
    """Runs stopping early in the middle of a segment (diverging) beside runs that
    finish: the two-thread batch equals the one-thread one (the stopped runs' samples,
    NaN after them, the steps they stopped at), with any number of runs to the threads."""
    model = _stiff_pendulum()
    for n in (1, 2, 3, 7):
        q0 = np.where(np.arange(n) % 2 == 0, 0.1, 0.0)[:, None]      # even runs diverge
        one = _kernel_runs(model, q0, np.zeros((n, 1)), 90, 0.01, 1, record_every=4)
        assert np.all(one["status"][::2] == 4) and np.all(one["status"][1::2] == 0)
        # 91 evaluations in 16 segments of 6 steps: the runs stop inside one (step 20)
        assert set(one["stopped"][::2] % 6) <= {1, 2, 3, 4}
        # a stopped run evaluated the steps up to the one it stopped at, a finished one 91
        assert one["failures"] == len(one["status"][::2])
        assert one["evaluations"] == np.sum(one["stopped"][::2] + 1) + 91 * (n // 2)
        _assert_same_runs(_kernel_runs(model, q0, np.zeros((n, 1)), 90, 0.01, 2,
                                       record_every=4), one)


def _stiff_pendulum():
    """An explicit spring far too stiff for the step: each step multiplies the swing by ~h²k.
    (No geoms: the Python step's collision refuses the non-finite poses of a diverged state.)"""
    return rbd.load_mjcf("""<mujoco><option timestep="0.01"/><worldbody>
      <body name="arm"><joint name="j" type="hinge" axis="0 1 0" stiffness="1e12"/>
        <inertial pos="0 0 -1" mass="1" diaginertia="0.01 0.01 0.01"/></body>
      </worldbody></mujoco>""")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # overflow on the Python path
def test_a_diverging_run_stops_with_what_it_computed():
    model = _stiff_pendulum()
    assert compiled_forward(model) is not None
    q0, v0 = np.array([0.1]), np.zeros(1)
    with pytest.raises(rbd.SimulationError, match="diverged") as compiled:
        rbd.simulate(model, q0, v0, 1.0, 0.01, integrator="euler")
    with pytest.raises(rbd.SimulationError, match="diverged") as python:
        rbd.simulate(model, q0, v0, 1.0, 0.01, integrator="euler", backend="reference")
    ker, ref = compiled.value.trajectory, python.value.trajectory
    assert compiled.value.diverged_at == python.value.diverged_at < 1.0
    np.testing.assert_array_equal(ker.t, ref.t)
    assert np.all(np.isfinite(ker.q)) and len(ker.t) > 2
    np.testing.assert_allclose(ker.q, ref.q, rtol=RTOL_EXACT)
    for every in (1, 3):          # one of two diverges: each rollout's samples on the grid
        with pytest.raises(rbd.SimulationError) as alone:
            rbd.simulate(model, q0, v0, 1.0, 0.01, integrator="euler", record_every=every)
        with pytest.raises(rbd.SimulationError) as batch:
            rbd.simulate(model, np.array([[0.1], [0.0]]), np.zeros((2, 1)), 1.0, 0.01,
                         integrator="euler", record_every=every)
        np.testing.assert_array_equal(batch.value.diverged, [0])
        stacked, run = batch.value.trajectory, alone.value.trajectory
        assert np.all(stacked.q[1] == 0.0)                      # the other rests
        n = int(np.sum(np.isin(run.t, stacked.t)))
        assert n == len(run.t) - (every == 3)   # with a stride, its last sample is off it
        np.testing.assert_array_equal(stacked.q[0, :n], run.q[:n])
        np.testing.assert_array_equal(stacked.contact_count[0, :n], run.contact_count[:n])
        for name in ("q", "v", "a", "kinetic", "contact_count", "constraint_force"):
            assert np.all(np.isnan(getattr(stacked, name)[0, n:])), name


def test_compiled_forward_follows_a_changed_time_step():
    """solref's time constant is at least two steps: the compiled pass's static data follow
    ``model.mujoco_options`` when it changes (a ball resting 1 cm into the floor)."""
    model = rbd.load_mjcf("""<mujoco><option timestep="0.002"/><worldbody>
      <geom type="plane" size="0 0 1"/><body pos="0 0 0.09"><freejoint/>
      <geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>""")
    q, v = rbd.neutral(model), np.zeros(6)
    q[2] = 0.09
    before = rbd.forward(model, q, v).qdd
    model.mujoco_options = {**model.mujoco_options, "timestep": 0.05}
    after = rbd.forward(model, q, v).qdd
    ref = rbd.forward(model, q, v, backend="reference").qdd
    assert abs(after[5] - before[5]) > 1.0                      # a softer contact now
    np.testing.assert_allclose(after, ref, rtol=0, atol=RTOL_EXACT * (1 + np.abs(ref).max()))


#: contacts between two moving bodies: two free boxes stacked (two trees), and two links
#: crossing on the branches of one free base (their paths share the base's six dofs)
_TWO_BODY_SCENES = {
    "stacked boxes": """<mujoco><option timestep="0.002"/><worldbody>
      <geom type="plane" size="0 0 1"/>
      <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
      <body pos="0.03 0.02 0.299" euler="0 0 10"><freejoint/>
        <geom type="box" size="0.1 0.1 0.1" mass="1"/></body></worldbody></mujoco>""",
    "crossing links": """<mujoco><option timestep="0.002"/><worldbody>
      <geom type="plane" size="0 0 1" pos="0 0 -1"/>
      <body pos="0 0 1"><freejoint/><geom type="sphere" size="0.05" pos="-0.3 0 0" mass="1"/>
        <body><joint type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05" mass="0.3"/></body>
        <body pos="0.15 -0.15 0.02"><joint type="hinge" axis="1 0 0"/>
          <joint type="hinge" axis="0 0 1"/>
          <geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.05" mass="0.3"/></body>
      </body></worldbody></mujoco>""",
}


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("scene", sorted(_TWO_BODY_SCENES))
def test_rows_between_two_moving_bodies_match_the_readable_rows(scene, cone):
    """The compiled contact rows are built on the columns of the dofs that move either body
    only (``contact_rows.contact_jacobian``): where both bodies move, on two trees or on two
    branches of one, the rows, their reference accelerations and the solve equal the
    readable pass's (which differences the two dense body Jacobians)."""
    model = rbd.load_mjcf(_TWO_BODY_SCENES[scene])
    q = rbd.neutral(model)
    v = np.linspace(-0.5, 0.5, model.nv)
    kernel = rbd.forward(model, q, v, cone=cone, backend="kernel")
    reference = rbd.forward(model, q, v, cone=cone, backend="reference")
    pairs = {tuple(g) for g in np.asarray(reference.contacts.geom)}
    assert pairs & {(1, 2), (2, 3)}, pairs        # two moving geoms touch (0: the floor)
    for name in ("J", "aref", "R"):
        want = np.asarray(getattr(reference.rows, name))
        np.testing.assert_allclose(getattr(kernel.rows, name), want, rtol=0,
                                   atol=RTOL_EXACT * (1 + np.abs(want).max()), err_msg=name)
    scale = 1 + np.abs(reference.qdd).max()
    np.testing.assert_allclose(kernel.qdd, reference.qdd, rtol=0, atol=RTOL_EXACT * scale)


def test_a_new_options_dict_reaches_the_next_batch():
    """The compiled step's settings (cone, solver iterations and tolerance) are kept with
    the compiled model: a new ``<option>`` dict assigned to the model reaches the next
    ``rbd.simulate`` batch, which then equals a batch of a model loaded with those options
    from the start."""
    text = """<mujoco><option timestep="0.005" cone="{cone}" iterations="{iterations}"/>
      <worldbody><geom type="plane" size="5 5 0.1"/>
        <body pos="0 0 0.099"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/>
        </body></worldbody></mujoco>"""
    model = rbd.load_mjcf(text.format(cone="pyramidal", iterations=100))
    q0 = np.repeat(rbd.neutral(model)[None], 2, axis=0)
    q0[:, 2] = 0.099
    v0 = np.array([[1.0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0]])     # sliding on the plane
    first = rbd.simulate(model, q0, v0, 0.1, 0.005, integrator="euler")
    for cone, iterations in (("elliptic", 100), ("pyramidal", 1)):
        model.mujoco_options = {**model.mujoco_options, "cone": cone, "iterations": iterations}
        again = rbd.simulate(model, q0, v0, 0.1, 0.005, integrator="euler")
        fresh = rbd.load_mjcf(text.format(cone=cone, iterations=iterations))
        expected = rbd.simulate(fresh, q0, v0, 0.1, 0.005, integrator="euler")
        np.testing.assert_array_equal(again.q, expected.q)
        assert not np.array_equal(again.q, first.q)     # the options change the run
