"""The constraint forces a contact run records (issue 21): ``Trajectory.constraint_force``
(MuJoCo's ``qfrc_constraint``) and ``Trajectory.contact_force`` (``mj_contactForce``), the same
on the Python and the compiled step, single and batched, and MuJoCo's on the standing ant;
and a run that runs away stopping with ``SimulationError`` and its samples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import RTOL_EXACT, gymnasium_asset, mujoco_pair

import rbd

#: Forces against MuJoCo, relative to the largest force of the sample: both sides solve the
#: same strictly convex problem to 1e-15; a force is -D (J a - aref), a's rounding amplified
#: by D |J|.  Measured on the ant: 3e-13 (both cones, both steps); 1e-10 is RTOL_EXACT's
#: margin over it.
FORCE_RTOL_MUJOCO = 1e-10


def _standing_ant(cone: str, seconds: float = 1.0):
    """rbd's ant, MuJoCo's (Euler, Newton tightened) and its data ``seconds`` after a drop
    from qpos0 + U(±0.05), qvel ~ 0.1 N(0, 1) (it stands on its four feet), as rbd's q, v."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the state and the forces")
    from rbd.mjcf import from_mujoco_state

    model, mm, d = mujoco_pair(gymnasium_asset("ant"), cone=cone, integrator="euler")
    model.mujoco_options = dict(model.mujoco_options or {}, cone=cone)
    rng = np.random.default_rng(0)          # a start off symmetry: unequal feet, friction
    d.qpos[:] = mm.qpos0 + rng.uniform(-0.05, 0.05, mm.nq)
    d.qvel[:] = 0.1 * rng.normal(size=mm.nv)
    mujoco.mj_normalizeQuat(mm, d.qpos)
    for _ in range(round(seconds / mm.opt.timestep)):
        mujoco.mj_step(mm, d)
    mujoco.mj_forward(mm, d)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    return model, mm, d, q, v


@pytest.mark.slow
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_recorded_forces_are_mujocos_on_the_standing_ant(cone):
    """Sample 0 of a run from MuJoCo's state: ``constraint_force`` is ``d.qfrc_constraint``
    (in rbd's coordinates) and ``contact_force`` row i is ``mj_contactForce(i)``, on the
    Python step and on the compiled one."""
    import mujoco

    from rbd.mjcf import from_mujoco_force

    model, mm, d, q, v = _standing_ant(cone)
    assert d.ncon >= 2 and d.nl >= 1                  # feet down, a joint at its limit
    expected_q = from_mujoco_force(model, d.qpos, d.qfrc_constraint)
    expected_c = np.zeros((d.ncon, 6))
    for i in range(d.ncon):
        mujoco.mj_contactForce(mm, d, i, expected_c[i])
    scale = np.abs(expected_c).max()
    assert expected_c[:, 0].min() >= 0 and expected_c[:, 0].sum() > 1.0   # it carries weight
    assert np.abs(expected_c[:, 1:3]).max() > 1e-3 * scale                # and friction
    for backend in (["reference", "kernel"] if rbd.has_kernels() else ["reference"]):
        with warnings.catch_warnings():          # the ankle at its limit, a hair past it
            warnings.simplefilter("ignore", RuntimeWarning)
            traj = rbd.simulate(model, q, v, mm.opt.timestep, mm.opt.timestep,
                                integrator="euler", backend=backend)
        assert traj.contact_count[0] == d.ncon
        assert traj.constraint_force.shape == (2, model.nv)
        np.testing.assert_allclose(traj.constraint_force[0], expected_q, rtol=0,
                                   atol=FORCE_RTOL_MUJOCO * np.abs(expected_q).max())
        np.testing.assert_allclose(traj.contact_force[0, :d.ncon], expected_c, rtol=0,
                                   atol=FORCE_RTOL_MUJOCO * scale)


@pytest.mark.slow
def test_python_and_compiled_steps_record_the_same_forces():
    """Five steps of the standing ant on the Python step (reference backend) and the compiled
    one: the same counts and forces, to the twins' agreement."""
    pytest.importorskip("mujoco", reason="MuJoCo gives the state")
    if not rbd.has_kernels():
        pytest.skip("the compiled step needs the kernels")
    model, mm, _, q, v = _standing_ant("pyramidal")
    h = mm.opt.timestep
    with warnings.catch_warnings():              # the ankle at its limit, a hair past it
        warnings.simplefilter("ignore", RuntimeWarning)
        slow = rbd.simulate(model, q, v, 5 * h, h, integrator="euler", backend="reference")
        fast = rbd.simulate(model, q, v, 5 * h, h, integrator="euler", backend="kernel")
    np.testing.assert_array_equal(fast.contact_count, slow.contact_count)
    assert fast.contact_force.shape == slow.contact_force.shape
    assert slow.contact_force.shape[1] == slow.contact_count.max()
    for name in ("constraint_force", "contact_force"):
        ref = getattr(slow, name)
        np.testing.assert_allclose(getattr(fast, name), ref, rtol=0,
                                   atol=RTOL_EXACT * (1 + np.abs(ref).max()))


def _ball():
    return rbd.load_mjcf("""<mujoco><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="0 0 1"/>
      <body name="ball" pos="0 0 0.1"><freejoint/>
        <geom type="sphere" size="0.1" mass="1"/>
      </body></worldbody></mujoco>""")


@pytest.mark.parametrize("backend", ["reference", "kernel"])
def test_a_batch_stacks_each_runs_forces(backend):
    """A ball resting on the floor (one contact carrying m g) and one falling from above (no
    contact yet): the batch holds each single run's forces, zero where a run has fewer
    contacts than the widest."""
    if backend == "kernel" and not rbd.has_kernels():
        pytest.skip("the compiled step needs the kernels")
    model = _ball()
    q0 = np.array([[0, 0, 0.0998, 0, 0, 0, 1.0], [0, 0, 0.5, 0, 0, 0, 1.0]])
    batch = rbd.simulate(model, q0, np.zeros((2, 6)), 0.01, 0.002, integrator="euler",
                         backend=backend)
    singles = [rbd.simulate(model, q, np.zeros(6), 0.01, 0.002, integrator="euler",
                            backend=backend) for q in q0]
    assert batch.contact_force.shape == (2, len(batch.t), 1, 6)
    assert singles[1].contact_force.shape == (len(batch.t), 0, 6)
    np.testing.assert_array_equal(batch.contact_force[0], singles[0].contact_force)
    np.testing.assert_array_equal(batch.contact_force[1], 0.0)
    for k in range(2):
        np.testing.assert_array_equal(batch.constraint_force[k], singles[k].constraint_force)
    # the resting ball: the normal force is about its weight, along the world z (rbd's free
    # joint force is [torque; force] in the body frame, here the world's orientation)
    assert singles[0].contact_force[-1, 0, 0] == pytest.approx(9.81, rel=0.05)
    np.testing.assert_allclose(singles[0].constraint_force[-1, 3:],
                               [0, 0, singles[0].contact_force[-1, 0, 0]], atol=1e-9)
    np.testing.assert_array_equal(singles[1].constraint_force, 0.0)


@pytest.mark.parametrize("backend", ["reference", "kernel"])
def test_a_batch_keeps_the_last_sample_of_the_grid(backend):
    """0.3 s in steps of 0.1 (3 × 0.1 is not 0.3 in floating point): the samples are at the
    grid's times, the last one the duration, single and batched, and the batch keeps each
    run's last sample (it was NaN: the runs' times k dt did not match the grid's)."""
    if backend == "kernel" and not rbd.has_kernels():
        pytest.skip("the compiled step needs the kernels")
    assert 3 * 0.1 != 0.3
    model = _ball()
    q0 = np.array([[0, 0, 1.0, 0, 0, 0, 1.0], [0, 0, 1.5, 0, 0, 0, 1.0]])
    batch = rbd.simulate(model, q0, np.zeros((2, 6)), 0.3, 0.1, integrator="euler",
                         backend=backend)
    single = rbd.simulate(model, q0[1], np.zeros(6), 0.3, 0.1, integrator="euler",
                          backend=backend)
    np.testing.assert_array_equal(single.t, [0.0, 0.1, 0.2, 0.3])
    np.testing.assert_array_equal(batch.t, single.t)
    assert np.all(np.isfinite(batch.q)) and np.all(np.isfinite(batch.constraint_force))
    np.testing.assert_array_equal(batch.q[1], single.q)
    assert single.q[-1, 2] < 1.5 - 0.1                 # it fell


def test_a_run_whose_step_fails_stops_with_simulation_error():
    """The half cheetah launched at ~1e100 m/s: on the Python step its poses overflow (before
    the fix an InputError of the collision stage), on both steps the run stops with
    SimulationError, its samples kept."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_mjcf(str(gymnasium_asset("half_cheetah")))
    v0 = 1e100 * np.random.default_rng(1).normal(size=model.nv)
    for backend in (["reference", "kernel"] if rbd.has_kernels() else ["reference"]):
        with np.errstate(all="ignore"), warnings.catch_warnings(), \
                pytest.raises(rbd.SimulationError) as err:
            warnings.simplefilter("ignore", RuntimeWarning)
            rbd.simulate(model, rbd.neutral(model), v0, 0.3, 0.01, integrator="euler",
                         backend=backend)
        assert err.value.diverged_at is not None
        kept = err.value.trajectory
        if kept is not None:
            assert len(kept.contact_count) == len(kept.t) == len(kept.constraint_force)
            assert np.all(np.isfinite(kept.q))


@pytest.mark.parametrize("backend", ["reference", "kernel"])
def test_recorded_contacts_are_bounded(backend, monkeypatch):
    """A box resting on the floor (4 contacts) with the bound set to 2: the first two
    contacts' forces, as in the unbounded run; the count and Jᵀ f still hold all four."""
    if backend == "kernel" and not rbd.has_kernels():
        pytest.skip("the compiled step needs the kernels")
    import rbd.simulation.contact as contact

    model = rbd.load_mjcf("""<mujoco><worldbody><geom type="plane" size="0 0 1"/>
      <body pos="0 0 0.0999"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/>
      </body></worldbody></mujoco>""")
    q0 = rbd.neutral(model)
    q0[2] = 0.0999
    full = rbd.simulate(model, q0, np.zeros(6), 0.006, 0.002, integrator="euler",
                        backend=backend)
    monkeypatch.setattr(contact, "RECORDED_CONTACTS", 2)
    bounded = rbd.simulate(model, q0, np.zeros(6), 0.006, 0.002, integrator="euler",
                           backend=backend)
    assert full.contact_force.shape[1] == 4 and bounded.contact_force.shape[1] == 2
    np.testing.assert_array_equal(bounded.contact_count, full.contact_count)
    np.testing.assert_array_equal(bounded.contact_force, full.contact_force[:, :2])
    np.testing.assert_array_equal(bounded.constraint_force, full.constraint_force)


@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_saved_contact_run_keeps_its_forces(tmp_path, suffix):
    """``Trajectory.save`` writes a contact run's ``contact_count``, ``constraint_force`` and
    ``contact_force`` and ``load`` reads them back exactly, single runs (both formats) and a
    batch (``.npz``); a file without them (an older one) loads with them None."""
    from rbd.simulation.trajectory import Trajectory

    model = _ball()
    q0 = np.array([0, 0, 0.0998, 0, 0, 0, 1.0])
    traj = rbd.simulate(model, q0, np.zeros(6), 0.01, 0.002, integrator="euler")
    assert traj.contact_count.max() == 1 and np.abs(traj.contact_force).max() > 1.0
    runs = [traj]
    if suffix == ".npz":
        runs.append(rbd.simulate(model, np.array([q0, q0 + [0, 0, 0.4, 0, 0, 0, 0]]),
                                 np.zeros((2, 6)), 0.01, 0.002, integrator="euler"))
    for k, run in enumerate(runs):
        back = Trajectory.load(run.save(tmp_path / f"run{k}{suffix}"))
        for name in ("contact_count", "constraint_force", "contact_force", "q"):
            np.testing.assert_array_equal(getattr(back, name), getattr(run, name),
                                          err_msg=name)
    plain = rbd.simulate(rbd.models.double_pendulum(), [0.1, 0.0], [0.0, 0.0], 0.02, 0.01)
    back = Trajectory.load(plain.save(tmp_path / f"plain{suffix}"))
    assert back.contact_count is None and back.contact_force is None
    assert back.constraint_force is None
