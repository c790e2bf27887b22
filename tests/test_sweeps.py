"""rbd.sweep: a grid of simulations on Dask equals the same simulations run one by one."""

import os

import numpy as np
import pytest

import rbd
from rbd.sweeps import SweepResult, sweep

distributed = pytest.importorskip("dask.distributed", reason="needs the 'parallel' extra")

ANGLES = np.linspace(0.2, 2.6, 7)
DURATION, DT = 0.5, 0.01


def final_angle(theta):
    """The first joint angle of a double pendulum released from rest at (theta, 0)."""
    model = rbd.models.double_pendulum()
    traj = rbd.simulate(model, [theta, 0.0], [0.0, 0.0], DURATION, DT)
    return float(traj.q[-1, 0])


def final_angles(theta):
    """``final_angle`` for a batch: one call of simulate with q0 of shape (k, 2)."""
    model = rbd.models.double_pendulum()
    q0 = np.column_stack([theta, np.zeros(len(theta))])
    traj = rbd.simulate(model, q0, np.zeros_like(q0), DURATION, DT)
    return traj.q[:, -1, 0]


def final_of_state(q0):
    """Batched over an axis of initial configurations, rows of shape (2,)."""
    q0 = np.asarray(q0, dtype=float)
    traj = rbd.simulate(rbd.models.double_pendulum(), q0, np.zeros_like(q0), DURATION, DT)
    return traj.q[:, -1, 0]


def where_and_sum(a, b):
    return os.getpid(), a + b


def too_few(a):
    return list(a)[:-1]


def divide(a):
    return 1 / a


@pytest.fixture(scope="module")
def serial():
    return np.array([final_angle(theta) for theta in ANGLES])


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes, started once for this module (the thread-count variables
    their nannies write into this process's environment are put back afterwards)."""
    from rbd.sweeps import _environment_keeper

    restore_environment = _environment_keeper()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster
    restore_environment()


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as client:
        yield client


@pytest.mark.slow
def test_a_local_cluster_of_two_workers_equals_the_serial_loop(serial):
    result = sweep(final_angle, {"theta": ANGLES}, chunk=2, n_workers=2, progress=False)
    assert isinstance(result, SweepResult)
    assert result.values.dtype == float and result.shape == (7,)
    assert result.names == ("theta",)
    np.testing.assert_array_equal(result.grid["theta"], ANGLES)
    # the same compiled code on the same inputs: bit-for-bit the same numbers
    np.testing.assert_array_equal(result.values, serial)


@pytest.mark.slow
def test_the_tasks_run_in_the_worker_processes(client):
    result = sweep(where_and_sum, {"a": [1, 2], "b": [10, 20, 30]}, chunk=1, scheduler=client,
                   progress=False)
    pids = {pid for pid, _ in result.values.flat}
    assert os.getpid() not in pids
    assert pids <= set(client.run(os.getpid).values())
    assert [[s for _, s in row] for row in result] == [[11, 21, 31], [12, 22, 32]]
    assert result.values.dtype == object


@pytest.mark.slow
def test_batched_tasks_run_one_simulate_per_chunk_and_equal_the_serial_loop(client, serial):
    result = sweep(final_angles, {"theta": ANGLES}, chunk=3, batched=True, scheduler=client,
                   progress=False)
    # the batched rollout runs the same RK4 steps per row as the single one; 1e-12 leaves
    # room for a different order of floating-point operations in the batched kernel only
    np.testing.assert_allclose(result.values, serial, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_an_axis_of_initial_states_is_one_value_per_row(client, serial):
    states = np.column_stack([ANGLES, np.zeros_like(ANGLES)])
    result = sweep(final_of_state, {"q0": states}, batched=True, scheduler=client,
                   progress=False)
    assert result.shape == (7,) and result.grid["q0"].shape == (7, 2)
    np.testing.assert_allclose(result.values, serial, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_a_scheduler_address_runs_the_same_sweep(cluster, serial):
    address = cluster.scheduler_address
    assert isinstance(address, str) and address.startswith("tcp://")
    result = sweep(final_angle, {"theta": ANGLES}, scheduler=address, progress=False)
    np.testing.assert_array_equal(result.values, serial)


@pytest.mark.slow
def test_a_failing_point_raises_its_error_and_leaves_the_client_usable(client):
    with pytest.raises(ZeroDivisionError):
        sweep(divide, {"a": [1.0, 0.0, 2.0]}, chunk=1, scheduler=client, progress=False)
    assert sweep(divide, {"a": [2.0]}, scheduler=client, progress=False).tolist() == [0.5]


@pytest.mark.slow
def test_a_batched_fn_must_return_one_result_per_point(client):
    message = "one result per point: it returned 2 for a batch of 3"
    with pytest.raises(rbd.InputError, match=message):
        sweep(too_few, {"a": [1, 2, 3]}, chunk=3, batched=True, scheduler=client, progress=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"grid": {}}, "grid must be a non-empty mapping"),
    ({"grid": [1, 2]}, "grid must be a non-empty mapping"),
    ({"grid": {"a": 3}}, r"grid\['a'\] must be a sequence"),
    ({"grid": {"a": "abc"}}, r"grid\['a'\] must be a sequence"),
    ({"grid": {"a": []}}, r"grid\['a'\] has no values"),
    ({"grid": {"a": [[1, 2], [3]]}}, r"grid\['a'\] mixes values of different shapes"),
    ({"grid": {"not a name": [1]}}, "'not a name' is not a name"),
    ({"chunk": 0}, "chunk must be a positive integer"),
    ({"chunk": 2.5}, "chunk must be a positive integer"),
    ({"n_workers": 0}, "n_workers must be a positive integer"),
    ({"scheduler": 3}, "scheduler must be None, a scheduler address or a dask Client"),
    ({"scheduler": "nonsense"}, "'nonsense' is not a scheduler address"),
    ({"scheduler": "tcp://127.0.0.1:8786", "n_workers": 2}, "drop n_workers"),
    ({"batched": "yes"}, "batched must be True or False"),
    ({"fn": 3}, "fn must be callable"),
])
def test_bad_arguments_are_named(kwargs, message):
    arguments = {"fn": divide, "grid": {"a": [1.0]}, "progress": False, **kwargs}
    with pytest.raises(rbd.InputError, match=message):
        sweep(**arguments)


def test_plot_draws_one_and_two_axis_sweeps():
    from matplotlib.figure import Figure

    line = SweepResult(np.array([1.0, 4.0, 9.0]), {"x": np.array([1.0, 2.0, 3.0])})
    fig = line.plot(label="x²")
    assert isinstance(fig, Figure)
    ax, = fig.axes
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [1.0, 4.0, 9.0])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x", "x²")

    values = np.arange(6).reshape(2, 3) > 2
    grid = {"rows": np.array([0.0, 1.0]), "cols": np.array([10.0, 20.0, 30.0])}
    fig = SweepResult(values, grid).plot(label="flipped")
    ax = fig.axes[0]
    mesh, = ax.collections
    np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(2, 3), values)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("cols", "rows")
    assert len(fig.axes) == 2  # the map and its colour bar


def test_plot_refuses_what_it_cannot_draw():
    cube = SweepResult(np.zeros((2, 2, 2)), {"a": np.arange(2), "b": np.arange(2),
                                             "c": np.arange(2)})
    with pytest.raises(rbd.InputError, match="one- or two-axis sweeps"):
        cube.plot()
    pairs = np.empty(2, dtype=object)
    pairs[:] = [(1, 2), (3, 4)]
    with pytest.raises(rbd.InputError, match="needs a number at every point"):
        SweepResult(pairs, {"a": np.arange(2)}).plot()


def test_rbd_sweep_is_this_function():
    assert rbd.sweep is sweep


def exit_at_two(a):
    """Kills its worker process at a == 2 (as a crash in compiled code would)."""
    if a == 2:
        os._exit(1)
    return a


def lock_at_one(a, b):
    import threading

    return threading.Lock() if a == b == 1 else a + b


@pytest.mark.slow
@pytest.mark.slow
def test_a_local_cluster_leaves_the_callers_thread_settings_alone(monkeypatch):
    # before: OMP_NUM_THREADS=1 (Dask's setting for its workers) stayed in os.environ after
    # the sweep, so the caller's later child processes ran their batches on one thread
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "2")
    sweep(divide, {"a": [1.0, 2.0]}, n_workers=1, progress=False)
    assert "OMP_NUM_THREADS" not in os.environ
    assert os.environ["MKL_NUM_THREADS"] == "2"


def test_a_point_that_kills_its_worker_is_named():
    # before: Dask's KilledWorker naming an internal task ('_run_chunk-<hash>')
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with pytest.raises(rbd.SweepError, match=r"grid point 2 \(index \(2,\): a=2\)") as info:
            sweep(exit_at_two, {"a": [0, 1, 2, 3]}, chunk=4, n_workers=1, progress=False)
    assert info.value.point == {"a": 2} and info.value.index == (2,)


@pytest.mark.slow
def test_an_unpicklable_result_names_its_point(client):
    # before: a pickling traceback from the worker's transport
    with pytest.raises(rbd.SweepError, match=r"grid point 4 \(b=1, a=1\).*lock") as info:
        sweep(lock_at_one, {"b": [0, 1], "a": [0, 1, 2]}, chunk=2, scheduler=client,
              progress=False)
    assert info.value.index == (1, 1) and info.value.point == {"b": 1, "a": 1}


@pytest.mark.slow
def test_an_error_of_fn_names_its_point(client):
    with pytest.raises(ZeroDivisionError) as info:
        sweep(divide, {"a": [1.0, 0.0]}, chunk=2, scheduler=client, progress=False)
    assert any("grid point 1 (a=0.0)" in note for note in info.value.__notes__)


@pytest.mark.parametrize("grid, chunk, message", [
    ({"a": range(10**4), "b": range(10**4)}, None, r"100,000,000 points \(10000 x 10000\)"),
    ({"a": range(10**6)}, 1, r"1,000,000 Dask tasks, more than MAX_TASKS"),
])
def test_a_grid_too_large_is_refused_before_anything_runs(grid, chunk, message, monkeypatch):
    import rbd.sweeps

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cluster was started or points were made before the refusal")

    monkeypatch.setattr(rbd.sweeps, "_connect", must_not_run)
    monkeypatch.setattr(rbd.sweeps._Grid, "chunk", must_not_run)
    with pytest.raises(rbd.InputError, match=message):
        sweep(divide, grid, chunk=chunk, progress=False)
