"""Compiled rollouts (rbd/_kernels/rollout.pyx) against the Python path of rbd.simulate.

The compiled path runs the same steps as :mod:`rbd.simulation.integrators`, so
both agree to round-off; batches equal single rollouts bit for bit when they run state
by state, to round-off when they run in lanes (``soa_rollout.pxi``).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from helpers import assert_rollout_row, python_child

import rbd
from rbd.reference.rollout import Integrator
from rbd.reference.rollout import rollout as reference_rollout
from rbd.simulation import PD
from rbd.simulation.rollouts import grid_times

pytestmark = pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")

#: Compiled and Python paths do the same operations in the same order except for a
#: few sums (cross products, small matrix products in NumPy) that round differently.
#: Over 1000 RK4 steps of a chaotic tree such differences grow; 1e-9 relative to the
#: largest entry is still 10⁶ times round-off and far below any integration error.
RTOL_ROUNDOFF = 1e-9

MODELS = {
    "arm7": rbd.models.arm7,
    "RC20": lambda: rbd.models.revolute_chain(20),
    "humanoid": rbd.models.humanoid,
    "pendulum": lambda: rbd.models.pendulum(3),
}


def start(model, seed=0):
    rng = np.random.default_rng(seed)
    return rbd.random_configuration(model, rng), rng.normal(size=model.nv)


def assert_roundoff(actual, expected, what):
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(np.asarray(actual) - expected)))
    assert err <= RTOL_ROUNDOFF * scale, f"{what}: differs by {err:.3g} (scale {scale:.3g})"


def assert_same_run(fast, slow):
    assert np.array_equal(fast.t, slow.t)
    for name in ("q", "v", "a", "kinetic", "potential"):
        assert_roundoff(getattr(fast, name), getattr(slow, name), name)
    assert (fast.tau is None) == (slow.tau is None)
    if slow.tau is not None:
        assert_roundoff(fast.tau, slow.tau, "tau")
    assert (fast.steps, fast.evaluations) == (slow.steps, slow.evaluations)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_compiled_rk4_equals_the_python_path_over_one_second(name):
    model = MODELS[name]()
    q0, v0 = start(model)
    fast = rbd.simulate(model, q0, v0, 1.0, 1e-3)
    slow = rbd.simulate(model, q0, v0, 1.0, 1e-3, compiled=False)
    assert fast.q.shape == (1001, model.nq)
    assert_same_run(fast, slow)


@pytest.mark.parametrize("name", ["humanoid", "pendulum"])
def test_compiled_euler_equals_the_python_path(name):
    model = MODELS[name]()
    q0, v0 = start(model, 1)
    args = (model, q0, v0, 0.2, 1e-3)
    assert_same_run(rbd.simulate(*args, integrator="euler"),
                    rbd.simulate(*args, integrator="euler", compiled=False))


def test_the_last_step_is_clipped_as_on_the_python_path():
    model = rbd.models.arm7()
    q0, v0 = start(model)
    fast = rbd.simulate(model, q0, v0, 0.0105, 1e-3, record_every=4)
    slow = rbd.simulate(model, q0, v0, 0.0105, 1e-3, record_every=4, compiled=False)
    assert fast.t[-1] == 0.0105 and fast.steps == 11
    assert np.allclose(fast.t, [0.0, 0.004, 0.008, 0.0105], rtol=0, atol=1e-15)
    assert_same_run(fast, slow)


@pytest.mark.slow
def test_pd_table_and_damping_equal_the_python_path_and_the_reference_twin():
    model = rbd.models.humanoid()
    model.set_joint_properties(model.bodies[1].joint_name, damping=0.7)
    q0, v0 = start(model, 2)
    q_ref, _ = start(model, 3)
    steps = 40
    table = np.random.default_rng(4).normal(size=(steps, model.nv))
    law = PD(q_ref, kp=np.linspace(5, 30, model.nv), kd=2.0, feedforward=table)
    args = (model, q0, v0, steps * 1e-3, 1e-3)
    fast = rbd.simulate(*args, tau=law, damping=True, record_every=3)
    slow = rbd.simulate(*args, tau=law, damping=True, record_every=3, compiled=False)
    assert_same_run(fast, slow)
    control = dict(tau=table, q_ref=q_ref, kp=np.linspace(5, 30, model.nv),
                   kd=np.full(model.nv, 2.0), damping=model.damping)
    ref, status = reference_rollout(model, q0, v0, grid_times(steps * 1e-3, 1e-3),
                                    Integrator.RK4, 3, control)
    assert status == 0
    for name in ("q", "v", "a", "tau", "kinetic", "potential"):
        assert_roundoff(getattr(fast, name), ref[name], f"reference {name}")


@pytest.mark.parametrize("name", ["arm7", "spherical pendulum"])
def test_the_pd_law_drives_to_the_reference(name):
    model = rbd.models.pendulum(1) if name == "spherical pendulum" else MODELS[name]()
    q0 = rbd.neutral(model)
    q_ref, _ = start(model, 5)
    # gravity compensation at q_ref as the feedforward: the equilibrium is q_ref itself;
    # gains scaled by the joint inertias: about ω = 10 rad/s, critically damped, per joint
    inertia = np.diag(rbd.crba(model, q_ref))
    law = PD(q_ref, kp=100.0 * inertia, kd=20.0 * inertia,
             feedforward=rbd.gravity_forces(model, q_ref))
    traj = rbd.simulate(model, q0, np.zeros(model.nv), 6.0, 1e-3, tau=law, record_every=100)
    error = rbd.reference.kinematics.difference(model, traj.q[-1], q_ref)
    # exponential convergence (rates > 1/s for these gains): after 6 s the error is
    # below 1e-4 rad; it starts at about 1 rad
    assert np.max(np.abs(error)) < 1e-4
    assert np.max(np.abs(traj.v[-1])) < 1e-3


def test_damping_dissipates_energy_at_the_rate_vT_D_v():
    model = rbd.models.revolute_chain(5)
    for body in model.bodies:
        model.set_joint_properties(body.joint_name, damping=0.05)
    q0, v0 = start(model, 6)
    traj = rbd.simulate(model, q0, v0, 1.0, 1e-4, damping=True)
    power = np.einsum("ti,i,ti->t", traj.v, model.damping, traj.v)
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * 1e-4)])
    # dE/dt = -vᵀ D v; the trapezoid rule errs by O(dt²) ~ 1e-8 relative, RK4 far less
    lost = traj.total[0] - traj.total
    assert dissipated[-1] > 1e-3 * abs(traj.total[0])      # damping does something
    np.testing.assert_allclose(lost, dissipated, rtol=0, atol=1e-6 * dissipated[-1])
    undamped = rbd.simulate(model, q0, v0, 1.0, 1e-4)
    assert undamped.energy_drift < 1e-9                    # damping only when asked


@pytest.mark.parametrize("name", ["arm7", "humanoid"])
def test_a_batch_equals_single_rollouts(name):
    model = MODELS[name]()
    starts = [start(model, seed) for seed in range(5)]
    q0 = np.array([q for q, _ in starts])
    v0 = np.array([v for _, v in starts])
    table = np.random.default_rng(7).normal(size=(30, model.nv))
    batch = rbd.simulate(model, q0, v0, 0.03, 1e-3, tau=table, record_every=7, num_threads=2)
    assert batch.q.shape == (5, 6, model.nq) and batch.kinetic.shape == (5, 6)
    assert batch.batch == 5 and batch.t.shape == (6,)
    for k, (q, v) in enumerate(starts):
        one = rbd.simulate(model, q, v, 0.03, 1e-3, tau=table, record_every=7)
        for name_ in ("q", "v", "a", "tau", "kinetic", "potential"):
            assert_rollout_row(name_, getattr(batch, name_)[k], getattr(one, name_),
                               one.evaluations)
    python = rbd.simulate(model, q0, v0, 0.03, 1e-3, tau=table, record_every=7,
                          compiled=False)
    assert_roundoff(batch.q, python.q, "python batch q")
    assert batch.evaluations == python.evaluations


def test_a_diverging_stage_is_a_divergence_not_a_model_error():
    # before: a non-finite RK4 stage made the pivot D "not positive definite" (ModelError)
    model = rbd.models.pendulum(3)
    q_ref = rbd.random_configuration(model, np.random.default_rng(5))
    law = PD(q_ref, kp=20.0, kd=4.0)        # kd / I = 10⁴ /s on the spin axes: unstable
    with pytest.raises(rbd.SimulationError, match="diverged"):
        rbd.simulate(model, rbd.neutral(model), np.zeros(model.nv), 6.0, 1e-3, tau=law)


def test_divergence_is_reported_as_on_the_python_path():
    model = rbd.models.arm7()
    law = PD(np.full(7, 0.5), kp=1e9, kd=0.0)
    args = (model, np.zeros(7), np.zeros(7), 1.0, 0.01)
    with pytest.raises(rbd.SimulationError, match="diverged") as fast:
        rbd.simulate(*args, tau=law)
    with pytest.raises(rbd.SimulationError, match="diverged") as slow:
        rbd.simulate(*args, tau=law, compiled=False)
    assert str(fast.value) == str(slow.value)
    with pytest.raises(rbd.SimulationError, match="rollout 0 of the batch: .*diverged"):
        rbd.simulate(model, np.zeros((2, 7)), np.zeros((2, 7)), 1.0, 0.01,
                     tau=law, num_threads=1)


@pytest.mark.parametrize("kwargs, message", [
    (dict(tau=np.zeros((3, 7))), r"tau \(one row per step\) must have shape \(10, 7\)"),
    (dict(tau=np.zeros((10, 7)), integrator="solve_ivp"), "one row per step needs"),
    (dict(tau=PD(np.zeros(6), 1.0, 1.0)), r"PD q_ref must have shape \(7,\)"),
    (dict(tau=PD(np.zeros(7), -1.0, 1.0)), "PD kp must be non-negative"),
    (dict(record_every=0), "record_every must be a positive integer"),
    (dict(record_every=2, integrator="solve_ivp"), "record_every needs"),
    (dict(damping="yes"), "damping must be True or False"),
    (dict(num_threads=0), "num_threads must be a positive integer"),
    (dict(compiled=None), "compiled must be True or False"),
])
def test_bad_inputs_are_named(kwargs, message):
    model = rbd.models.arm7()
    with pytest.raises(rbd.InputError, match=message):
        rbd.simulate(model, np.zeros(7), np.zeros(7), 0.01, 1e-3, **kwargs)


def test_bad_batches_are_named():
    model = rbd.models.arm7()
    with pytest.raises(rbd.InputError, match=r"v0 \(one row per row of q0\) must have shape"):
        rbd.simulate(model, np.zeros((3, 7)), np.zeros((2, 7)), 0.01, 1e-3)
    with pytest.raises(rbd.InputError, match=r"q0 of a batch .* must have shape \(N, 7\)"):
        rbd.simulate(model, np.zeros(7), np.zeros((2, 7)), 0.01, 1e-3)
    with pytest.raises(rbd.InputError, match="cannot have events"):
        rbd.simulate(model, np.zeros((2, 7)), np.zeros((2, 7)), 0.01, 1e-3,
                     events=lambda t, q, v: q[0] - 1.0)
    humanoid = rbd.models.humanoid()
    q0 = np.tile(rbd.neutral(humanoid), (2, 1))
    q0[1, 3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(rbd.InputError, match=r"q0\[1\]: the quaternion"):
        rbd.simulate(humanoid, q0, np.zeros((2, humanoid.nv)), 0.01, 1e-3)


@pytest.mark.slow
def test_a_forked_child_runs_batches_serially():
    script = textwrap.dedent("""
        import os, numpy as np, rbd
        model = rbd.models.arm7()
        q0 = np.zeros((8, 7)); v0 = np.ones((8, 7))
        parent = rbd.simulate(model, q0, v0, 0.01, 1e-3, num_threads=2)
        pid = os.fork()
        if pid == 0:
            child = rbd.simulate(model, q0, v0, 0.01, 1e-3, num_threads=2)
            os._exit(0 if np.array_equal(child.q, parent.q) else 3)
        _, status = os.waitpid(pid, 0)
        raise SystemExit(os.waitstatus_to_exitcode(status))
    """)
    result = python_child(script, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_grid_without_its_array_is_the_grid():
    """grid_steps/grid_time (what the compiled path uses, no array) against the grid built
    whole, on durations that are and are not near multiples of dt."""
    from rbd.simulation.rollouts import grid_steps, grid_time

    rng = np.random.default_rng(7)
    for _ in range(500):
        dt = float(10.0 ** rng.uniform(-4, -1))
        k = int(rng.integers(1, 2000))
        duration = k * dt * (1.0 + float(rng.choice([0.0, 1e-12, -1e-12, 1e-9, 0.3, -0.3])))
        n = int(np.ceil(duration / dt)) + 2
        t = np.arange(n, dtype=float) * dt
        t[1:] = np.where(t[1:] > duration - 1e-9 * dt, duration, t[1:])
        steps = int(np.argmax(t[1:] >= duration)) + 1
        assert grid_steps(duration, dt) == steps, (duration, dt)
        assert np.array_equal(grid_time(np.arange(steps + 1), duration, dt), t[:steps + 1])
    assert grid_steps(0.0, 0.1) == 0


def test_the_uniform_grid_equals_its_array():
    from rbd.simulation.rollouts import grid_steps

    model = rbd.models.arm7()
    q0, v0 = start(model)
    kernel = rbd.algorithms.compiled(model)
    duration, dt = 0.1037, 1e-3
    by_array = kernel.rollout(q0, v0, grid_times(duration, dt), stride=4)
    by_grid = kernel.rollout(q0, v0, stride=4, grid=(dt, duration, grid_steps(duration, dt)))
    for x, y in zip(by_array[:6], by_grid[:6], strict=True):
        assert (x is None and y is None) or np.array_equal(x, y)
    assert by_grid[6:9] == (0, 27, 104)          # status, samples, steps
    with pytest.raises(rbd.InputError, match="either times or grid"):
        kernel.rollout(q0, v0)
