"""Thread scaling of the batches: one and two threads, in one process, with where the time went.

The issues on batches and on contact ask that a batch use both cores (≥ 1.8× over
one thread).  This script prints only that table, in a few minutes, so that it
can be rerun when the machine is quiet::

    python benchmarks/bench_threads.py              # every case, 7 rounds
    python benchmarks/bench_threads.py --rounds 11  # more rounds
    python benchmarks/bench_threads.py --cases lanes contact
    OMP_WAIT_POLICY= python benchmarks/bench_threads.py   # libgomp's default wait (spins)

Cases: ``rbd.aba`` / ``rbd.rnea`` on ``N = 10,000`` states in lanes (arm7, the
humanoid); 1,000 RK4 rollouts of arm7 in lanes (``rbd.simulate``, 100 steps of
1 ms, a sample every 10); contact runs of gymnasium's ant (``rbd.simulate`` of a batch
of initial states, the compiled contact step: 100 Euler steps from a standing state,
the batch of 8 perturbed states of ``bench_contact.py`` and one of 32).

How: a timed *call* repeats the batch until one thread takes at least
``--min-ms`` (50 ms) on it, so that one scheduler hiccup of a shared machine
(a few ms) is a small part of it.  Each round times the one-thread and the
two-thread call once each, in a shuffled order; the speed-up is the median over
rounds of the per-round ratio of wall-clock times (``time.perf_counter``), so a
change of load during the run touches both.

Wall clock on a machine that other work keeps busy measures the contention, not
the code, so every call is also split, from the kernel's own accounts of this
process's threads (``time.process_time``; Linux ``/proc/self/task/*/schedstat``: time
spent runnable but waiting for a core) and the host's (``/proc/stat``: *steal*, time the
hypervisor gave the virtual cores to someone else), into

* ``cpu``: CPU time of all threads of the process during the call (the work; the
  OpenMP threads wait passively, ``OMP_WAIT_POLICY=passive`` unless set otherwise,
  so that a thread's spinning at the end of a loop is not counted as work);
* ``inside``: ``cpu`` on two threads over ``cpu`` on one (median of the per-round
  ratios): the same work taking longer when both cores run it (shared cache and
  memory bandwidth, false sharing, frequency); 1.00 is perfect.  ``CPU 1 t max/min``
  is the spread of the one-thread CPU time over the rounds: the same work, so the
  drift of the cores' speed on a shared host (the guest counts a slowed core as CPU);
* ``queued``: time the two threads were runnable but another process of this machine
  held the core;
* ``steal``: the host's steal on both virtual cores during the call;
* ``idle``: the rest of ``2 × wall`` (a thread with nothing to do: the calling
  thread's serial part, OpenMP start and join, imbalance at the end).

``CPU-bound`` is the speed-up these CPU times allow when nothing queues, steals or
idles, ``2 / inside``: below 1.8× the code (or the memory system) caps the
speed-up; above it and a lower wall speed-up, the ``queued``, ``steal`` and ``idle``
columns say where the wall time went.  ``busy`` is ``cpu₂ / (2 × wall₂)``.

The control: each round also times the one-thread call while a second process (this
script again, ``--companion``) runs the same one-thread call on the other core.  No
memory, cache line or lock is shared between the two processes, so what the work
loses there (``2 processes: inside``, the median per-round ratio to the call alone) is
the machine's own price of two busy cores: a shared last-level cache and memory, the
host's scheduling of the two virtual cores, their clock.  ``machine's bound`` =
2 / that is the speed-up no threading of this batch can beat on this machine; the
distance from it to ``CPU-bound`` is what the threads themselves cost.  The partner
starts within a millisecond of the timed call and both run ≥ 50 ms; whichever ends
first leaves the other alone for the rest, so the control errs towards a bound too
high.  ``--no-control`` leaves it out.

Runs from different states take different times (their contacts differ): ``balance``
is the speed-up that two threads handing out whole runs in order (OpenMP's
``schedule(dynamic)``) could reach with the per-run times measured alone,
``Σ t_i / max(thread loads)``.  The contact step cuts each run into segments that
either thread continues (``rbd/_kernels/contact.pyx``), so it can exceed that.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import subprocess
import sys
import time

# before the kernels load OpenMP (it reads its settings once): a thread that runs out of
# work sleeps at once instead of spinning, so that its CPU time is its work (see above)
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402

import rbd  # noqa: E402
from rbd._kernels import _model  # noqa: E402

ROLLOUTS, ROLLOUT_STEPS = 1000, 100
CONTACT_STEPS = 100
TICK = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def thread_clocks() -> dict:
    """Per thread of this process: (CPU seconds, seconds runnable but waiting for a core).

    Linux's ``/proc/self/task/<tid>/schedstat`` (nanoseconds; the CPU time is the one
    ``CLOCK_THREAD_CPUTIME_ID`` reads).  Empty where it does not exist."""
    clocks = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return clocks
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                run, delay = f.read().split()[:2]
        except (OSError, ValueError):
            continue
        clocks[tid] = (int(run) * 1e-9, int(delay) * 1e-9)
    return clocks


def steal_seconds() -> float:
    """The host's steal, summed over the virtual cores (``/proc/stat``, in clock ticks)."""
    try:
        with open("/proc/stat") as f:
            lines = f.read().splitlines()
    except OSError:
        return 0.0
    return TICK * sum(int(line.split()[8]) for line in lines
                      if line.startswith("cpu") and line[3:4].isdigit())


def measured(fn) -> dict:
    """Wall time of ``fn()`` and its split: CPU, queued and steal seconds (see above).

    The CPU time is the process's (``time.process_time``: every thread, the running ones
    brought up to date; ``schedstat`` brings a running thread's time up to date only at a
    scheduler tick, so it gives only the queued time here)."""
    before, s0, c0 = thread_clocks(), steal_seconds(), time.process_time()
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    after, s1 = thread_clocks(), steal_seconds()
    queued = sum(delay - before.get(tid, (0.0, 0.0))[1] for tid, (_, delay) in after.items())
    return {"wall": wall, "cpu": cpu, "queued": queued, "steal": s1 - s0}


def repeated(call, min_seconds: float):
    """``call`` repeated until the repetition takes ``min_seconds`` of CPU time (the calling
    thread's, one thread: the same count whatever the load)."""
    call()
    cpu = []
    for _ in range(3):
        t0 = time.thread_time()
        call()
        cpu.append(time.thread_time() - t0)
    reps = max(1, math.ceil(min_seconds / max(min(cpu), 1e-6)))

    def run():
        for _ in range(reps):
            call()
    return run, reps


class Companion:
    """A second process that runs the same one-thread call when told to (the control).

    It is this script started again with ``--companion CASE INDEX REPS``: it builds the
    same batch, waits for a line ``go`` on its input, runs the call ``REPS`` times and
    writes the CPU seconds it took."""

    def __init__(self, case: str, index: int, reps: int):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--companion", case, str(index),
             str(reps)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the companion process of {case}[{index}] did not start")

    def start(self) -> None:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def cpu(self) -> float:
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def companion_main(case: str, index: int, reps: int) -> int:
    """The companion's side (see :class:`Companion`)."""
    call = CASES[case]()[index][1](1)
    call()
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "go":
            break
        t0 = time.process_time()
        for _ in range(reps):
            call()
        print(time.process_time() - t0, flush=True)
    return 0


def scaling(make_call, rounds: int, rng: random.Random, min_seconds: float,
            companion=None) -> dict:
    """One- and two-thread calls of a batch, interleaved: medians of wall and CPU, the
    median per-round ratio, and the mean split of the two-thread call.  With
    ``companion(reps)`` (a :class:`Companion`), each round also times the one-thread
    call while a second process runs the same call: the machine's own cost of both
    cores at work."""
    one, reps = repeated(make_call(1), min_seconds)
    call_two = make_call(2)

    def two():
        for _ in range(reps):
            call_two()
    calls = {1: one, 2: two}
    two()
    runs = {1: [], 2: [], "pair": []}
    partner = None if companion is None else companion(reps)
    try:
        for _ in range(rounds):
            order = [1, 2] if partner is None else [1, 2, "pair"]
            rng.shuffle(order)
            for n in order:
                if n == "pair":
                    partner.start()
                    runs[n].append(measured(one))
                    runs[n][-1]["partner"] = partner.cpu()
                else:
                    runs[n].append(measured(calls[n]))
    finally:
        if partner is not None:
            partner.close()

    def median(n, key):
        return statistics.median(r[key] for r in runs[n]) / reps

    def mean(n, key):
        return statistics.fmean(r[key] for r in runs[n]) / reps

    t1, t2 = median(1, "wall"), median(2, "wall")
    cpu1, cpu2 = median(1, "cpu"), median(2, "cpu")
    ratios = [a["wall"] / b["wall"] for a, b in zip(runs[1], runs[2], strict=True)]
    # per round, as the speed-up: the cores' speed drifts between rounds on a shared host
    inside = statistics.median(b["cpu"] / a["cpu"] for a, b in zip(runs[1], runs[2],
                                                                      strict=True))
    idle = [2 * r["wall"] - r["cpu"] - r["queued"] - r["steal"] for r in runs[2]]
    spread = max(r["cpu"] for r in runs[1]) / min(r["cpu"] for r in runs[1])
    # the same work beside a second process doing it: per round, over the work alone
    pair = (statistics.median(b["cpu"] / a["cpu"] for a, b in zip(runs[1], runs["pair"],
                                                                   strict=True))
            if runs["pair"] else math.nan)
    return {"t1": t1, "t2": t2, "speedup": statistics.median(ratios), "reps": reps,
            "pair": pair, "ceiling": 2 / pair,
            "cpu1": cpu1, "cpu2": cpu2, "inside": inside, "bound": 2 / inside,
            "spread": spread,
            "queued": mean(2, "queued"), "steal": mean(2, "steal"),
            "steal1": mean(1, "steal"), "queued1": mean(1, "queued"),
            "idle": statistics.fmean(idle) / reps, "busy": cpu2 / (2 * t2)}


def lanes_cases() -> list:
    rows = []
    for name, make in (("arm7", rbd.models.arm7), ("humanoid", rbd.models.humanoid)):
        model = make()
        g = np.random.default_rng(3)
        n = 10_000
        Q = np.array([rbd.random_configuration(model, g) for _ in range(n)])
        V, T = g.normal(size=(2, n, model.nv))
        kernel = rbd.algorithms.compiled(model)
        for fn in (rbd.aba, rbd.rnea):
            def make_call(threads, fn=fn, model=model, kernel=kernel, Q=Q, V=V, T=T):
                def call():
                    saved = kernel.num_threads
                    kernel.num_threads = threads
                    try:
                        fn(model, Q, V, T)
                    finally:
                        kernel.num_threads = saved
                return call
            rows.append((f"lanes {fn.__name__.upper()} {name}, N = {n:,}", make_call, None))
    return rows


def rollout_case() -> list:
    model = rbd.models.arm7()
    g = np.random.default_rng(1)
    q0 = np.array([rbd.random_configuration(model, g) for _ in range(ROLLOUTS)])
    v0 = 0.1 * g.normal(size=(ROLLOUTS, model.nv))

    def make_call(threads):
        return lambda: rbd.simulate(model, q0, v0, ROLLOUT_STEPS * 1e-3, 1e-3,
                                    record_every=10, num_threads=threads)

    return [(f"lane rollouts arm7 RK4, {ROLLOUTS:,} × {ROLLOUT_STEPS} steps", make_call, None)]


def dynamic_balance(costs) -> float:
    """Speed-up of two threads taking the runs in order, each the next when it is free."""
    loads = [0.0, 0.0]
    for c in costs:
        loads[loads.index(min(loads))] += c
    return sum(costs) / max(loads)


def contact_cases() -> list:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import warnings

    from bench_contact import ROBOTS, setup

    model, mm, _, q, v = setup("ant", ROBOTS["ant"])
    dt = float(mm.opt.timestep)
    model.mujoco_options = {**(model.mujoco_options or {}), "timestep": dt}
    duration = CONTACT_STEPS * dt
    rows = []
    for n in (8, 32):
        g = np.random.default_rng(0)
        Q = np.repeat(q[None], n, axis=0)
        V = v + 0.05 * g.normal(size=(n, model.nv))

        def simulate(Q, V, threads):
            with warnings.catch_warnings():        # perturbed states past a joint limit
                warnings.simplefilter("ignore", RuntimeWarning)
                return rbd.simulate(model, Q, V, duration, dt, integrator="euler",
                                    num_threads=threads)

        def make_call(threads, Q=Q, V=V):
            return lambda: simulate(Q, V, threads)

        def balance(n=n, Q=Q, V=V):
            # one run's CPU time: a batch of two copies of it less a batch of one (the
            # setup of a call left out)
            costs = []
            for s in range(n):
                cpu = {}
                for copies in (1, 2):
                    simulate(Q[[s] * copies], V[[s] * copies], 1)
                    t0 = time.thread_time()
                    simulate(Q[[s] * copies], V[[s] * copies], 1)
                    cpu[copies] = time.thread_time() - t0
                costs.append(max(cpu[2] - cpu[1], 1e-9))
            return dynamic_balance(costs)

        rows.append((f"contact runs ant, {n} states × {CONTACT_STEPS} steps", make_call,
                     balance))
    return rows


CASES = {"lanes": lanes_cases, "rollout": rollout_case, "contact": contact_cases}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--companion"]:
        return companion_main(argv[1], int(argv[2]), int(argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--min-ms", type=float, default=50.0,
                        help="one thread's time of a timed call, at least (ms)")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--no-control", action="store_true",
                        help="leave out the two-process control (the machine's bound)")
    args = parser.parse_args(argv)
    rng = random.Random(0)
    before = os.getloadavg()
    rows = []
    for case in args.cases:
        for index, (name, make_call, balance) in enumerate(CASES[case]()):
            companion = (None if args.no_control
                         else lambda reps, case=case, index=index: Companion(case, index, reps))
            result = scaling(make_call, args.rounds, rng, args.min_ms * 1e-3, companion)
            rows.append((name, result, None if balance is None else balance()))
    after = os.getloadavg()
    print(f"Threads ({args.rounds} rounds, calls of ≥ {args.min_ms:g} ms, lane build "
          f"`{_model.simd()}`, {os.cpu_count()} cores, OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY')}; load average (1, 5 min) "
          f"{before[0]:.2f}, {before[1]:.2f} before, {after[0]:.2f}, {after[1]:.2f} after). "
          "Per batch, medians; queued, steal and idle: means over the rounds, both "
          "threads together.\n")
    print("| batch | batches a call | 1 thread (ms) | 2 threads (ms) | speed-up | "
          "CPU 1 t (ms) | CPU 1 t max/min | CPU 2 t (ms) | inside | CPU-bound | busy | "
          "1 t queued + steal (ms) | "
          "2 t queued (ms) | 2 t steal (ms) | 2 t idle (ms) | balance | "
          "2 processes: inside | machine's bound |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|")
    for name, r, balance in rows:
        print(f"| {name} | {r['reps']} | {r['t1'] * 1e3:.2f} | {r['t2'] * 1e3:.2f} | "
              f"{r['speedup']:.2f}× | {r['cpu1'] * 1e3:.2f} | {r['spread']:.2f} | "
              f"{r['cpu2'] * 1e3:.2f} | "
              f"{r['inside']:.3f} | {r['bound']:.2f}× | {r['busy']:.0%} | "
              f"{(r['queued1'] + r['steal1']) * 1e3:.2f} | {r['queued'] * 1e3:.2f} | "
              f"{r['steal'] * 1e3:.2f} | {r['idle'] * 1e3:.2f} | "
              f"{'–' if balance is None else f'{balance:.2f}×'} | "
              f"{r['pair']:.3f} | {r['ceiling']:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
