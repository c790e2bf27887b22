"""Ctrl-C during a simulation or a batch: it stops at once and keeps what was computed.

Each case runs in a child interpreter that sends itself SIGINT after
``DELAY`` seconds of a run that would take far longer (tens of seconds on the
compiled path), and reports what it caught.  Before the interrupt checks, the
compiled loops ran to their end and the result was thrown away; the Python
path stopped but kept nothing.
"""

from __future__ import annotations

import json

import pytest
from helpers import python_child

import rbd

pytestmark = pytest.mark.slow

#: Seconds before the child sends itself SIGINT.
DELAY = 0.5
#: Seconds from SIGINT to the exception that the runs may take: the compiled
#: loops check every 20 ms; the rest is one step of a 7-DoF model (or one
#: Python-path sample) and the building of the partial trajectory, on a shared machine.
STOP_WITHIN = 2.0

CHILD = """
import json, os, signal, sys, threading, time
import numpy as np
import rbd

case = sys.argv[1]
model = rbd.models.arm7()
rng = np.random.default_rng(0)
q0 = rbd.random_configuration(model, rng)
out = {}

qs = np.array([rbd.random_configuration(model, rng) for _ in range(6)])
many = np.repeat(qs, 500_000, axis=0)
# everything built before the clock starts: the compiled model, the Python path's imports
rbd.simulate(model, q0, np.zeros(7), 0.01, 1e-3)
rbd.simulate(model, qs, np.zeros((6, 7)), 0.01, 1e-3, compiled=False)
rbd.aba_derivatives(model, qs, np.zeros(7), np.zeros(7))

def run():
    if case == "compiled":
        return rbd.simulate(model, q0, np.zeros(7), 5000.0, 1e-3)
    if case == "compiled-strided":
        return rbd.simulate(model, q0, np.zeros(7), 5000.0, 1e-3, record_every=100)
    if case == "python":
        return rbd.simulate(model, q0, np.zeros(7), 5000.0, 1e-3, compiled=False)
    if case == "batch":
        return rbd.simulate(model, qs, np.zeros((6, 7)), 2000.0, 1e-3, num_threads=2,
                            record_every=1000)
    if case == "python-batch":
        return rbd.simulate(model, qs[:3], np.zeros((3, 7)), 2000.0, 1e-3, compiled=False,
                            record_every=100)
    if case == "derivatives":
        return rbd.aba_derivatives(model, many, np.zeros(7), np.zeros(7))

# Python's own SIGINT handler, as in a terminal: a test run started in the background by a
# shell without job control hands its children SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
timer = threading.Timer(%(delay)r, os.kill, (os.getpid(), signal.SIGINT))
start = time.perf_counter()
timer.start()
try:
    run()
    out["finished"] = True
except KeyboardInterrupt as exc:
    out["stopped_after"] = time.perf_counter() - start
    out["type"] = type(exc).__name__
    traj = getattr(exc, "trajectory", None)
    if traj is not None:
        out["samples"] = len(traj.t)
        out["t_last"] = float(traj.t[-1])
        out["shape"] = list(traj.q.shape)
        finite = np.isfinite(traj.kinetic)
        out["finite_per_rollout"] = np.atleast_2d(finite).sum(axis=1).tolist()
        out["finite_is_prefix"] = bool(all(
            not row[n:].any() for row, n in zip(np.atleast_2d(finite),
                                                 np.atleast_2d(finite).sum(axis=1))))
        out["message"] = str(exc)
print(json.dumps(out))
"""


def interrupted(case: str) -> dict:
    proc = python_child(CHILD % dict(delay=DELAY), case, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "finished" not in out, f"{case}: the run was not interrupted"
    assert out["stopped_after"] < DELAY + STOP_WITHIN, out
    return out


needs_kernels = pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")


@pytest.mark.parametrize("case", [pytest.param("compiled", marks=needs_kernels),
                                  pytest.param("compiled-strided", marks=needs_kernels),
                                  "python"])
def test_ctrl_c_stops_a_run_and_keeps_its_samples(case):
    out = interrupted(case)
    assert out["type"] == "SimulationInterrupted"
    stride = 100 if case == "compiled-strided" else 1
    assert out["samples"] >= 2 and out["shape"][0] == out["samples"]
    # the samples reach (nearly) the moment of the interrupt: more than the first step
    assert out["t_last"] >= (out["samples"] - 1) * stride * 1e-3 - 1e-9
    assert out["finite_per_rollout"] == [out["samples"]]
    assert "interrupted at t = " in out["message"] and ".trajectory" in out["message"]


@pytest.mark.parametrize("case", [pytest.param("batch", marks=needs_kernels), "python-batch"])
def test_ctrl_c_stops_a_batch_and_keeps_every_rollout(case):
    out = interrupted(case)
    assert out["type"] == "SimulationInterrupted"
    # a sample every 1000 steps compiled, every 100 on the Python path (a Python step takes
    # ~0.1 ms with the kernels, and a shared machine can stretch that tenfold: the first
    # kept sample has to exist within DELAY)
    n, samples = (6, 2001) if case == "batch" else (3, 20001)
    assert out["shape"][:2] == [n, samples]
    assert out["finite_is_prefix"]              # NaN only after each rollout's samples
    assert max(out["finite_per_rollout"]) >= 1  # the initial states are kept
    if rbd.has_kernels():   # the reference path (RBD_NO_EXTENSIONS=1) takes seconds for the
        # first 1000 steps, longer than DELAY: there only the initial samples exist yet
        assert max(out["finite_per_rollout"]) >= 2  # something was computed and kept
    assert min(out["finite_per_rollout"]) < samples


@needs_kernels
def test_ctrl_c_stops_a_derivative_batch():
    out = interrupted("derivatives")
    assert out["type"] == "KeyboardInterrupt"
