"""The errors a simulation meets: a diverging rollout in a batch, runs too large for memory,
divergence reports of the compiled path, arguments of the wrong kind."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from helpers import assert_rollout_row

import rbd
import rbd.simulation.core as core
from rbd.simulation import PD

needs_kernels = pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")


# --- one diverging rollout in a batch ----------------------------------------------------------
def batch_with_one_runaway():
    """arm7, three rollouts at rest but the middle one spinning at 10¹⁰⁰ rad/s: its Coriolis
    terms overflow within a few steps, the others are ordinary runs."""
    model = rbd.models.arm7()
    rng = np.random.default_rng(3)
    q0 = np.array([rbd.random_configuration(model, rng) for _ in range(3)])
    v0 = np.zeros((3, 7))
    v0[1] = 1e100
    return model, q0, v0


@pytest.mark.parametrize("compiled", [pytest.param(True, marks=needs_kernels), False])
@pytest.mark.parametrize("record_every", [1, 3])
def test_a_diverging_rollout_keeps_the_whole_batch(compiled, record_every):
    model, q0, v0 = batch_with_one_runaway()
    with np.errstate(all="ignore"), pytest.raises(rbd.SimulationError) as info:
        rbd.simulate(model, q0, v0, 0.1, 1e-3, compiled=compiled, record_every=record_every)
    err = info.value
    assert err.diverged.tolist() == [1]
    assert 0 < err.diverged_at[0] <= 0.1
    assert "1 of 3 rollouts stopped early: 1 (t = " in str(err)
    assert "rollout 1 of the batch: The simulation diverged" in str(err)
    traj = err.trajectory
    rows = 100 // record_every + 1 + (1 if 100 % record_every else 0)
    assert traj.q.shape == (3, rows, 7) and traj.kinetic.shape == (3, rows)
    for k in (0, 2):                 # the others are the runs made one at a time
        one = rbd.simulate(model, q0[k], v0[k], 0.1, 1e-3, compiled=compiled,
                           record_every=record_every)
        for name in ("q", "kinetic"):
            if compiled:           # in lanes: to rounding (helpers.assert_rollout_row)
                assert_rollout_row(name, getattr(traj, name)[k], getattr(one, name),
                                   one.evaluations)
            else:
                np.testing.assert_array_equal(getattr(traj, name)[k], getattr(one, name))
    # the runaway: NaN after its last finite sample, which precedes its divergence
    finite = np.isfinite(traj.kinetic[1])
    n = int(finite.sum())
    assert 1 <= n < rows and finite[:n].all()
    assert np.isnan(traj.q[1, n:]).all()
    assert traj.t[n - 1] < err.diverged_at[0]


@needs_kernels
def test_batch_divergence_is_the_same_on_both_paths():
    model, q0, v0 = batch_with_one_runaway()
    errors = []
    for compiled in (True, False):
        with np.errstate(all="ignore"), pytest.raises(rbd.SimulationError) as info:
            rbd.simulate(model, q0, v0, 0.1, 1e-3, compiled=compiled)
        errors.append(info.value)
    fast, slow = errors
    assert fast.diverged.tolist() == slow.diverged.tolist()
    assert fast.diverged_at.tolist() == slow.diverged_at.tolist()
    assert str(fast) == str(slow)
    np.testing.assert_array_equal(np.isnan(fast.trajectory.q), np.isnan(slow.trajectory.q))


# --- the compiled path reports its own divergence ----------------------------------------------
@needs_kernels
@pytest.mark.parametrize("record_every", [1, 7])
def test_compiled_divergence_is_reported_without_a_python_rerun(monkeypatch, record_every):
    model = rbd.models.arm7()
    law = PD(np.full(7, 0.5), kp=1e9, kd=0.0)
    args = (model, np.zeros(7), np.zeros(7), 1.0, 0.01)
    with pytest.raises(rbd.SimulationError) as slow:
        rbd.simulate(*args, tau=law, compiled=False, record_every=record_every)

    def no_python_path(*args, **kwargs):
        raise AssertionError("the compiled run was re-run on the Python path")

    monkeypatch.setattr(core, "_run_python", no_python_path)
    with pytest.raises(rbd.SimulationError) as fast:
        rbd.simulate(*args, tau=law, record_every=record_every)
    assert str(fast.value) == str(slow.value)
    assert fast.value.diverged_at == slow.value.diverged_at
    np.testing.assert_array_equal(fast.value.trajectory.t, slow.value.trajectory.t)
    # the last finite state is kept also when it is not a sample of the stride
    np.testing.assert_allclose(fast.value.trajectory.q, slow.value.trajectory.q,
                               rtol=1e-9, atol=1e-9)


# --- memory: refuse before allocating, and never build the time grid ---------------------------
def test_a_run_too_large_for_memory_is_refused_with_the_number(monkeypatch):
    monkeypatch.setattr(core, "available_memory", lambda: 2**30)

    def never(*args, **kwargs):       # a run reached: the check came too late
        raise AssertionError("the run started before the memory check refused it")

    for runner in ("run_compiled", "_run_python", "_python_batch"):
        monkeypatch.setattr(core, runner, never)
    model = rbd.models.revolute_chain(1)
    with pytest.raises(rbd.InputError) as info:
        rbd.simulate(model, [0.1], [0.0], 1e3, 1e-6)
    message = str(info.value)
    for part in ("GiB", "1,000,000,001 samples", "duration = 1000 s", "dt = 1e-06 s",
                 "record_every = 1", "1 GiB are available"):
        assert part in message, message
    # the same run on the Python path, and solve_ivp sampling every nanosecond (its
    # evaluation cap grows with the samples, so only the memory check bounds it)
    with pytest.raises(rbd.InputError, match="record_every = 1 steps"):
        rbd.simulate(model, [0.1], [0.0], 1e3, 1e-6, compiled=False)
    with pytest.raises(rbd.InputError, match=r"1,000,000,001 samples"):
        rbd.simulate(model, [0.1], [0.0], 1.0, 1e-9, integrator="solve_ivp")
    with pytest.raises(rbd.InputError, match="for each of 4 rollouts"):
        rbd.simulate(model, np.full((4, 1), 0.1), np.zeros((4, 1)), 1e3, 1e-6)


@pytest.mark.slow
@needs_kernels
def test_the_time_grid_of_a_sparse_recording_is_not_allocated():
    # 10⁶ steps kept every 10⁶: the grid alone would be 8 MB, the samples are 2
    model = rbd.models.revolute_chain(1)
    rbd.simulate(model, [0.1], [0.0], 1e-3, 1e-6)         # the compiled model, built
    tracemalloc.start()
    try:
        traj = rbd.simulate(model, [0.1], [0.0], 1.0, 1e-6, integrator="euler",
                            record_every=10**6)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert traj.t.tolist() == [0.0, 1.0]
    assert peak < 1_000_000, f"peak {peak} bytes"


# --- arguments of the wrong kind ----------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    (dict(q0=[0.1 + 1e-3j, 0.0]), "q0 must be real, got complex entries"),
    (dict(v0=np.array([0.0, 1j])), "v0.* must be real"),
    (dict(q0=[[0.1, 0.2], [0.3]]), "q0"),
    (dict(dt=True), "dt must be a real number, got True"),
    (dict(dt="0.01"), "dt must be a real number"),
    (dict(duration=1 + 0j), "duration must be a real number"),
    (dict(compiled="yes"), "compiled must be True or False, got 'yes'"),
    (dict(damping=1), "damping must be True or False"),
])
@pytest.mark.parametrize("batch", [False, True])
def test_arguments_of_the_wrong_kind_are_refused(kwargs, message, batch):
    model = rbd.models.double_pendulum()
    args = dict(q0=[0.1, 0.2], v0=[0.0, 0.0], duration=0.05, dt=0.01)
    args.update(kwargs)
    if batch:                        # two rows of each: a batch of two rollouts
        args["q0"], args["v0"] = [args["q0"]] * 2, [args["v0"]] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no ComplexWarning on the way
        with pytest.raises(rbd.InputError, match=message):
            rbd.simulate(model, args.pop("q0"), args.pop("v0"), **args)


# --- energy drift: a blow-up cannot hide behind its own scale -----------------------------------
def tumbling_body():
    """A torque-free box (principal moments 0.1, 0.2, 0.3) spinning near its intermediate
    axis, without gravity: E = T is constant in the exact motion."""
    model = rbd.Model(gravity=(0.0, 0.0, 0.0), name="tumbler")
    model.add_body(-1, rbd.Free(), None, (2.0, [0.0, 0.0, 0.0], np.diag([0.1, 0.2, 0.3])),
                   "box", "free")
    return model, rbd.neutral(model), np.array([0.3, 5.0, 0.2, 0.0, 0.0, 0.0])


@pytest.mark.slow
@pytest.mark.skipif(not rbd.has_kernels(), reason="800,000 Euler steps: seconds on the compiled "
                    "rollout, over ten minutes on the pure-Python path (the two paths agree "
                    "step by step in test_rollout)")
def test_energy_drift_of_a_blowing_up_euler_run_is_honest():
    # semi-implicit Euler is not symplectic on body-frame angular velocities: the
    # energy of the tumbling body grows ~11-fold in 800 s at dt = 1 ms
    model, q0, v0 = tumbling_body()
    traj = rbd.simulate(model, q0, v0, 800.0, 1e-3, integrator="euler", record_every=100)
    growth = traj.total[-1] / traj.total[0]
    assert growth > 5.0
    assert traj.energy_scale == pytest.approx(traj.total[0], rel=1e-15)  # E(0) = T(0)
    assert traj.energy_drift == pytest.approx(np.max(traj.total) / traj.total[0] - 1.0,
                                              rel=1e-12)
    assert traj.energy_drift > 4.0        # the peak-T scale reported < 1 here


def test_energy_scale_comes_from_the_initial_state():
    traj = rbd.simulation.Trajectory(
        t=np.arange(3.0), q=np.zeros((3, 1)), v=np.zeros((3, 1)), a=np.zeros((3, 1)),
        kinetic=np.array([2.0, 50.0, 100.0]), potential=np.array([-1.0, -1.0, -1.0]))
    assert traj.energy_scale == 2.0                 # max(|E(0)| = 1, T(0) = 2)
    assert traj.energy_drift == 49.0                # (99 - 1) / 2
    rest = rbd.simulation.Trajectory(
        t=np.arange(2.0), q=np.zeros((2, 1)), v=np.zeros((2, 1)), a=np.zeros((2, 1)),
        kinetic=np.array([0.0, 0.5]), potential=np.array([0.0, -0.5]))
    assert rest.energy_scale == 1.0 and rest.energy_drift == 0.0   # joules
