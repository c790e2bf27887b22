"""Threads, fork, pickling and mutation: nothing crashes, hangs or goes stale.

Crash and hang tests run their code in a fresh interpreter with a timeout, so a
segmentation fault or a dead lock fails the test instead of the suite.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import subprocess

import numpy as np
import pytest
from helpers import python_child

import rbd

#: Seconds a child interpreter may take; each child below needs about one.
CHILD_TIMEOUT = 120


def run_child(code: str, timeout: float = CHILD_TIMEOUT, threads: int | None = None) -> str:
    """Run ``code`` in a new interpreter; fail on a crash, a hang or a non-zero exit.

    ``threads`` sets the child's OpenMP thread count (``OMP_NUM_THREADS``), so that its
    batches really run in parallel whatever this process's environment says.
    """
    env = None if threads is None else dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        done = python_child(code, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child process hung (no exit within {timeout} s)")
    assert done.returncode == 0, (f"child exited with status {done.returncode}\n"
                                  f"stdout: {done.stdout}\nstderr: {done.stderr[-3000:]}")
    return done.stdout


# --- threads ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_concurrent_first_batched_calls(require_kernels):
    # Eight threads make the first batched call on each of 300 fresh models, with the
    # interpreter switching threads as often as it can: the workspaces must be claimed
    # atomically.  Before the fix 2 of 3 such runs aborted with a corrupted heap.
    for _ in range(2):
        _stress_first_batched_calls()


def _stress_first_batched_calls():
    out = run_child("""
        import sys, threading
        import numpy as np, rbd
        sys.setswitchinterval(1e-6)
        base = rbd.models.humanoid()
        Q = np.array([rbd.random_configuration(base, k) for k in range(3)])
        V = np.zeros((3, base.nv))
        expected = rbd.aba(base, Q, V, V)
        mismatches = 0
        for _ in range(300):
            model = base.copy()
            results = [None] * 8
            def call(k, model=model):
                results[k] = rbd.aba(model, Q, V, V)
            threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            mismatches += sum(not np.array_equal(r, expected) for r in results)
        print("mismatches", mismatches)
    """)
    assert out.split() == ["mismatches", "0"]


# --- fork ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_fork_after_a_batched_call(require_kernels):
    # OpenMP's threads do not survive fork(): the child must not wait for them.
    out = run_child("""
        import os
        import numpy as np, rbd
        m = rbd.models.double_pendulum()
        Z = np.zeros((64, 2))
        M = rbd.crba(m, Z)
        pid = os.fork()
        if pid == 0:
            again = rbd.crba(m, Z)
            print("equal", np.array_equal(again, M), "max_difference", np.max(np.abs(again - M)),
                  "parallel", rbd._kernels._model.parallel_batches_available(), flush=True)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """, timeout=60, threads=2)
    words = out.split()
    assert words[-2:] == ["child", "0"], out
    # the child's batch equals the parent's, run without the OpenMP pool it cannot use
    assert words[:2] == ["equal", "True"] and words[4:6] == ["parallel", "False"], out


def _batched_mass_matrices(args):
    model, Q = args
    return rbd.crba(model, Q)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_pools_after_a_batched_call(method, require_kernels):
    # A pool of workers started after the parent ran a batch, each worker running batches
    # on a pickled model: same numbers, no hang (fork hung before the fix; a model
    # that had been used could not be pickled at all).
    out = run_child(f"""
        import multiprocessing
        import numpy as np, rbd

        def batched_mass_matrices(args):
            model, Q = args
            return rbd.crba(model, Q)

        if __name__ == "__main__":
            m = rbd.models.arm7()
            Q = np.array([rbd.random_configuration(m, k) for k in range(32)])
            expected = rbd.crba(m, Q)
            with multiprocessing.get_context({method!r}).Pool(2) as pool:
                results = pool.map(batched_mass_matrices, [(m, Q)] * 4)
            print(all(np.array_equal(r, expected) for r in results))
    """, timeout=180)
    assert out.split() == ["True"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_fork_pool_in_process_is_serial_but_right(require_kernels):
    # The in-process version (the child of this very test run): the answer is the same.
    m = rbd.models.double_pendulum()
    Z = np.random.default_rng(0).normal(size=(16, 2))
    expected = rbd.crba(m, Z)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        (got,) = pool.map(_batched_mass_matrices, [(m, Z)])
    np.testing.assert_array_equal(got, expected)


# --- pickling and copies ---------------------------------------------------------------------
MODELS = ["double_pendulum", "humanoid", "arm7"]


@pytest.mark.parametrize("name", MODELS)
def test_a_used_model_pickles_and_deep_copies(name, backend, rng):
    model = rbd.models.get(name)
    q = np.array([rbd.random_configuration(model, rng) for _ in range(5)])
    v = rng.normal(size=(5, model.nv))
    tau = rng.normal(size=(5, model.nv))
    expected = rbd.aba(model, q, v, tau, backend=backend)
    rbd.crba(model, q[0], backend=backend)
    for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), model.copy()):
        np.testing.assert_array_equal(rbd.aba(twin, q, v, tau, backend=backend), expected)
        assert twin.body_names == model.body_names
        assert twin.joint_names == model.joint_names
        np.testing.assert_array_equal(twin.armature, model.armature)


def test_an_unpickled_model_is_read_only_too():
    model = pickle.loads(pickle.dumps(rbd.models.double_pendulum()))
    with pytest.raises(ValueError, match="read-only"):
        model.bodies[1].joint.axis[:] = [1.0, 0.0, 0.0]
    with pytest.raises(AttributeError, match="read-only"):
        model.bodies[1].parent = 0


def test_pickled_model_keeps_joint_properties():
    model = rbd.models.double_pendulum()
    model.set_joint_properties(model.joint_names[0], lower=-1.0, upper=2.0, armature=0.25)
    twin = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(twin.lower, model.lower)
    np.testing.assert_array_equal(twin.armature, model.armature)


# --- mutation --------------------------------------------------------------------------------
MUTATIONS = [
    ("m.bodies[1].parent = 99", AttributeError),
    ("m.bodies[1].parent = 1", AttributeError),
    ("m.bodies[1].joint = rbd.Prismatic()", AttributeError),
    ("m.bodies[1].inertia = np.eye(6)", AttributeError),
    ("m.bodies[1].joint.axis[:] = [1, 0, 0]", ValueError),
    ("m.bodies[1].joint.axis = np.array([1.0, 0.0, 0.0])", AttributeError),
    ("m.bodies[1].X_tree[3, 3] = 2.0", ValueError),
    ("m.bodies[1].inertia[5, 5] = 7.0", ValueError),
    ("m.bodies[1].com[0] = 7.0", ValueError),
    ("m.flat_arrays()['parent'][1] = 10**6", ValueError),
    ("m.flat_arrays()['jparams'][1, 0] = 1.0", ValueError),
    ("m.X_tree[1][0, 0] = 3.0", ValueError),
    ("m.frames['link2'].X[0, 0] = 3.0", ValueError),
    ("m.armature[0] = 1.0", ValueError),
]


@pytest.mark.parametrize("statement, error", MUTATIONS)
def test_a_built_model_cannot_be_edited_in_place(statement, error, backend):
    # Before the fix, these edits segfaulted the kernels, made them loop forever, or
    # left them computing the old model while the reference computed the new one.
    m = rbd.models.double_pendulum()
    q = np.array([0.3, -0.7])
    M = rbd.crba(m, q, backend=backend)
    with pytest.raises(error, match="read-only"):
        exec(statement, {"m": m, "np": np, "rbd": rbd})
    np.testing.assert_array_equal(rbd.crba(m, q, backend=backend), M)
    np.testing.assert_array_equal(rbd.crba(m, q, backend="reference"), M)


def test_builder_changes_reach_the_kernels(backend):
    # The sanctioned ways to change a model invalidate its compiled form.
    m = rbd.models.double_pendulum()
    q = np.array([0.3, -0.7])
    M0 = rbd.crba(m, q, backend=backend)
    swapped = m.replace_joint(m.joint_names[1], rbd.Revolute([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(rbd.crba(swapped, q, backend=backend),
                               rbd.crba(swapped, q, backend="reference"), atol=1e-12)
    assert not np.allclose(rbd.crba(swapped, q, backend=backend), M0)
    g0 = rbd.gravity_forces(m, q, backend=backend)
    m.gravity = (0.0, 0.0, -2 * 9.81)
    np.testing.assert_allclose(rbd.gravity_forces(m, q, backend=backend), 2 * g0, rtol=1e-12)


# --- deep trees ------------------------------------------------------------------------------
@pytest.mark.slow
def test_describe_a_long_chain():
    # describe() walked the tree recursively and hit RecursionError at 1000 bodies.
    model = rbd.models.revolute_chain(3000)
    text = model.describe()
    assert len(text.splitlines()) == 3001
    assert text.splitlines()[-1].startswith("  " * 32 + "[depth 2999] - ")


def test_overflowing_velocities_give_non_finite_results_on_both_backends(backend):
    # Finite but absurd inputs overflow inside the recursion: the answer is non-finite
    # (a simulation reports the divergence), never a solver's own exception.
    m = rbd.models.double_pendulum()
    with np.errstate(over="ignore", invalid="ignore"):
        qdd = rbd.aba(m, [0.1, 0.2], [1e181, 1e181], [0.0, 0.0], backend=backend)
    assert qdd.shape == (2,) and not np.all(np.isfinite(qdd))
