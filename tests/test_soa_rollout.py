"""Batched compiled rollouts in lanes (``rbd/_kernels/soa_rollout.pxi``).

A batch of ``CompiledModel.rollout`` (the compiled path of a stacked ``rbd.simulate``)
runs blocks of W rollouts in lanes.  These tests run every lane build this machine
runs against the one-state rollouts (``set_simd("off")``): the samples agree to
round-off, and statuses, sample counts, step counts and failures are the same, also
when some rollouts of a block diverge; the thread count changes no bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_rollout_row, random_models
from test_soa import builds

import rbd
from rbd.reference.rollout import Integrator

pytestmark = pytest.mark.usefixtures("require_kernels")

#: Rollouts per test batch: not a multiple of the lane count W (8), so the last block
#: is partly filled.
N_ROLLOUTS = 11
#: The grid: short horizons (see assert_rollout_row), a stride that leaves the last
#: step unrecorded on the regular grid.
DT, STEPS, STRIDE = 2e-3, 20, 3

MODELS = {
    "arm7": rbd.models.arm7,
    "humanoid": rbd.models.humanoid,                 # free base, spherical joints
    "random-all-joints": lambda: random_models(3)[0],
    "random-floating": lambda: random_models(3)[1],
    "random-free-spherical-universal": lambda: random_models(3)[3],
}

OUTPUTS = ("q", "v", "a", "tau", "kinetic", "potential")


def _model_module():
    from rbd._kernels import _model

    return _model


@pytest.fixture
def simd():
    """Set the lane build for one test; put the previous choice back afterwards."""
    _model = _model_module()
    previous = _model.simd()
    yield _model.set_simd
    _model.set_simd(previous)


def starts(model, n=N_ROLLOUTS, seed=0):
    rng = np.random.default_rng(seed)
    q0 = np.array([rbd.random_configuration(model, rng) for _ in range(n)])
    return q0, 0.5 * rng.normal(size=(n, model.nv))


def run(model, q0, v0, integrator=Integrator.RK4, steps=STEPS, **kwargs):
    km = _model_module().compiled_model(model)
    kwargs.setdefault("stride", STRIDE)
    return km.rollout(q0, v0, grid=(DT, steps * DT, steps), integrator=integrator,
                      keep_tau=True, **kwargs)


def law(model, n, seed=1):
    """Every control input at once: a τ table per rollout, the PD law (quaternion
    q_ref ⊖ q on curved joints), damping and body forces."""
    rng = np.random.default_rng(seed)
    return dict(tau=rng.normal(size=(n, STEPS, model.nv)),
                q_ref=rbd.random_configuration(model, rng),
                kp=rng.uniform(1.0, 5.0, model.nv), kd=rng.uniform(0.1, 0.5, model.nv),
                damping=rng.uniform(0.0, 0.2, model.nv),
                f_ext=rng.normal(size=(model.nbodies, 6)))


def assert_same_runs(lanes, scalar, evaluations):
    for k, name in enumerate(OUTPUTS):
        assert_rollout_row(name, lanes[k], scalar[k], evaluations)
    for k, name in enumerate(("status", "samples", "steps", "failure", "failure_t"), 6):
        np.testing.assert_array_equal(lanes[k], scalar[k], err_msg=name)


@pytest.mark.parametrize("integrator", [Integrator.RK4, Integrator.EULER])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_build_matches_the_one_state_rollouts(name, integrator, simd):
    model = MODELS[name]()
    q0, v0 = starts(model)
    controls = law(model, N_ROLLOUTS)
    simd("off")
    scalar = run(model, q0, v0, integrator, **controls)
    assert np.all(scalar[6] == 0)
    evaluations = STEPS * (4 if integrator == Integrator.RK4 else 1) + 1
    for build in builds():
        simd(build)
        assert_same_runs(run(model, q0, v0, integrator, **controls), scalar, evaluations)


@pytest.mark.parametrize("build", ["avx2", "avx512"])
def test_a_batch_runs_in_lanes(build, simd):
    # the lane builds with FMA round differently from the one-state rollout somewhere
    # in a batch: the batch did run in lanes
    if build not in builds():
        pytest.skip(f"this CPU does not run the {build} lane build")
    model = rbd.models.arm7()
    q0, v0 = starts(model)
    simd("off")
    scalar = run(model, q0, v0)
    simd(build)
    lanes = run(model, q0, v0)
    assert not np.array_equal(lanes[2], scalar[2])
    assert_same_runs(lanes, scalar, 4 * STEPS + 1)


@pytest.mark.parametrize("lanes", [True, False], ids=["lanes", "one-state"])
@pytest.mark.parametrize("integrator", [Integrator.RK4, Integrator.EULER])
def test_the_thread_count_changes_no_bit(integrator, lanes, simd):
    # one-state: each thread's workspace and scratch are rows of one array, a cache line
    # apart (_base.pyx thread_rows); the rows each thread computes are the one thread's
    if not lanes:
        simd("off")
    model = rbd.models.humanoid()
    q0, v0 = starts(model, n=19)
    controls = law(model, 19)
    one = run(model, q0, v0, integrator, num_threads=1, **controls)
    for nt in (2, 3):
        other = run(model, q0, v0, integrator, num_threads=nt, **controls)
        for a, b in zip(one, other, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("stride", [1, 4])
@pytest.mark.parametrize("integrator", [Integrator.RK4, Integrator.EULER])
def test_a_diverging_lane_stops_and_the_others_go_on(integrator, stride, simd):
    # rollouts 2 and 9 are pushed by forces of 1e300 from steps 7 and 13 on, and overflow
    # there; the others of their blocks run to the end.  Each stops as the one-state
    # rollout does: status, samples (with the last unrecorded step's state after a
    # divergence), steps, what became non-finite and when
    model = rbd.models.arm7()
    q0, v0 = starts(model)
    tau = np.zeros((N_ROLLOUTS, STEPS, model.nv))
    tau[2, 7:] = 1e300
    tau[9, 13:, 3] = -1e300
    simd("off")
    scalar = run(model, q0, v0, integrator, stride=stride, tau=tau)
    assert list(scalar[6][[0, 2, 9]]) == [0, -1, -1]
    assert 0 < scalar[8][2] < scalar[8][9] < STEPS
    evaluations = STEPS * (4 if integrator == Integrator.RK4 else 1) + 1
    for build in builds():
        simd(build)
        lanes = run(model, q0, v0, integrator, stride=stride, tau=tau)
        for k in range(6, 11):
            np.testing.assert_array_equal(lanes[k], scalar[k], err_msg=f"output {k}")
        for r in range(N_ROLLOUTS):
            n = scalar[7][r]
            for k, name in enumerate(OUTPUTS):
                # overflowing rows are compared where the scalar one is finite
                rows, ref = lanes[k][r][:n], scalar[k][r][:n]
                keep = np.isfinite(ref) & (np.abs(ref) < 1e100)
                assert np.array_equal(np.isfinite(rows), np.isfinite(ref)), name
                if r in (2, 9):
                    np.testing.assert_allclose(rows[keep], ref[keep], rtol=1e-6, err_msg=name)
                else:
                    assert_rollout_row(name, rows, ref, evaluations)


def test_an_empty_batch(simd):
    model = rbd.models.arm7()
    q0, v0 = starts(model, n=1)
    for build in builds():
        simd(build)
        out = run(model, q0[:0], v0[:0])
        assert out[0].shape == (0, STEPS // STRIDE + 2, model.nq)


def test_a_single_rollout_and_a_batch_of_one_agree():
    model = rbd.models.arm7()
    q0, v0 = starts(model, n=1)
    batch = run(model, q0, v0)
    single = run(model, q0[0], v0[0])
    for k, name in enumerate(OUTPUTS):
        assert_rollout_row(name, batch[k][0], single[k], 4 * STEPS + 1)


def test_the_lane_rollout_keeps_the_passes_of_its_twin():
    """``soa_rollout.pxi`` renders ``rollout.pyx``: the same pass headers in the rollout,
    its stages and its RK4 step."""
    from test_twins import KERNELS, kernel_functions, passes

    lanes = kernel_functions((KERNELS / "soa_rollout.pxi").read_text())
    scalar = kernel_functions((KERNELS / "rollout.pyx").read_text())
    for lane, one in (("rollout_lanes", "rollout"), ("stage", "stage"),
                      ("rk4_step", "rk4_step")):
        assert passes(lanes[lane]) == passes(scalar[one]), lane
    assert passes(lanes["rollout_lanes"])


def test_a_singular_pivot_on_one_lane_is_named_as_in_the_one_state_rollouts(simd):
    # a massless base turning about z carrying a point mass on a hinge about x: the base's
    # pivot D = m (L sin q₂)² vanishes on the rollout that starts (and, at rest, stays)
    # with the mass on the z axis; the lane ABA refuses its block, and the block is
    # evaluated lane by lane, which names the joint as the one-state rollout does
    model = rbd.Model(name="hinge-on-a-massless-turntable")
    base = model.add_body(-1, rbd.joints.Revolute([0, 0, 1]), None,
                          (0.0, np.zeros(3), np.zeros((3, 3))), "turntable", "spin")
    model.add_body(base, rbd.joints.Revolute([1, 0, 0]), None,
                   (1.0, np.array([0.0, 0.0, 1.0]), np.zeros((3, 3))), "bob", "hinge")
    q0 = np.tile([0.0, 0.7], (N_ROLLOUTS, 1))
    q0[5, 1] = 0.0
    v0 = np.zeros((N_ROLLOUTS, 2))
    simd("off")
    with pytest.raises(rbd.ModelError) as scalar:
        run(model, q0, v0)
    assert "spin" in str(scalar.value)
    for build in builds():
        simd(build)
        with pytest.raises(rbd.ModelError) as lanes:
            run(model, q0, v0)
        assert str(lanes.value) == str(scalar.value)
    simd(builds()[0])
    q0[5, 1] = 0.7               # without the singular rollout, every lane runs
    assert np.all(run(model, q0, v0)[6] == 0)
