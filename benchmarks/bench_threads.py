"""Thread scaling of the batches: one and two threads, wall clock, in one process.

The issues on batches and on contact ask that a batch use both cores (≥ 1.8× over
one thread).  This script prints only that table, in about a minute, so that it
can be rerun when the machine is quiet::

    python benchmarks/bench_threads.py              # every case, 5 rounds
    python benchmarks/bench_threads.py --rounds 9   # more rounds
    python benchmarks/bench_threads.py --cases lanes

Cases: ``rbd.aba`` / ``rbd.rnea`` on ``N = 10,000`` states in lanes (arm7, the
humanoid); 1,000 RK4 rollouts of arm7 in lanes (``rbd.simulate``, 100 steps of
1 ms, a sample every 10); the compiled contact runs of gymnasium's ant
(``rbd.simulation.contact.compiled_runs``, 100 Euler steps from a standing state,
the batch of 8 perturbed states of ``bench_contact.py`` and one of 32).

How: each round times the one-thread and the two-thread call once each, in a
shuffled order, on the wall clock (``time.perf_counter``); the speed-up is the
median over rounds of the per-round ratio, so a change of load during the run
touches both.  Wall clock on a machine that other work keeps busy measures the
contention, not the code: the load average is printed before and after, and a
speed-up is only evidence when it is well below the number of cores.
``serial`` is what two threads leave unexplained, ``2 t₂ − t₁`` (Amdahl's law
for two threads, ``t₂ = s + (t₁ − s) / 2``): the time of the call that one
thread runs alone, plus any imbalance between the two.

A batch of contact runs cannot be split finer than one run, and runs from
different states take different times (their contacts differ): ``balance``
is the speed-up that two threads handing out the runs in order (OpenMP's
``schedule(dynamic)``) can reach with the per-run times measured alone,
``Σ t_i / max(thread loads)``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

import numpy as np

import rbd
from rbd._kernels import _model

ROLLOUTS, ROLLOUT_STEPS = 1000, 100
CONTACT_STEPS = 100


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def scaling(make_call, rounds: int, rng: random.Random) -> dict:
    """Median wall times of one and two threads and the median per-round ratio."""
    calls = {1: make_call(1), 2: make_call(2)}
    for c in calls.values():
        c()
    walls = {1: [], 2: []}
    for _ in range(rounds):
        order = [1, 2]
        rng.shuffle(order)
        for n in order:
            walls[n].append(timed(calls[n]))
    t1, t2 = statistics.median(walls[1]), statistics.median(walls[2])
    ratios = [a / b for a, b in zip(walls[1], walls[2], strict=True)]
    return {"t1": t1, "t2": t2, "speedup": statistics.median(ratios), "serial": 2 * t2 - t1}


def lanes_cases(rounds: int, rng: random.Random) -> list:
    rows = []
    for name, make in (("arm7", rbd.models.arm7), ("humanoid", rbd.models.humanoid)):
        model = make()
        g = np.random.default_rng(3)
        n = 10_000
        Q = np.array([rbd.random_configuration(model, g) for _ in range(n)])
        V, T = g.normal(size=(2, n, model.nv))
        kernel = rbd.algorithms.compiled(model)
        saved = kernel.num_threads
        try:
            for fn in (rbd.aba, rbd.rnea):
                def make_call(threads, fn=fn, model=model, kernel=kernel, Q=Q, V=V, T=T):
                    def call():
                        kernel.num_threads = threads
                        fn(model, Q, V, T)
                    return call
                rows.append((f"lanes {fn.__name__.upper()} {name}, N = {n:,}",
                             scaling(make_call, rounds, rng), None))
        finally:
            kernel.num_threads = saved
    return rows


def rollout_case(rounds: int, rng: random.Random) -> list:
    model = rbd.models.arm7()
    g = np.random.default_rng(1)
    q0 = np.array([rbd.random_configuration(model, g) for _ in range(ROLLOUTS)])
    v0 = 0.1 * g.normal(size=(ROLLOUTS, model.nv))

    def make_call(threads):
        return lambda: rbd.simulate(model, q0, v0, ROLLOUT_STEPS * 1e-3, 1e-3,
                                    record_every=10, num_threads=threads)

    return [(f"lane rollouts arm7 RK4, {ROLLOUTS:,} × {ROLLOUT_STEPS} steps",
             scaling(make_call, rounds, rng), None)]


def dynamic_balance(costs) -> float:
    """Speed-up of two threads taking the runs in order, each the next when it is free."""
    loads = [0.0, 0.0]
    for c in costs:
        loads[loads.index(min(loads))] += c
    return sum(costs) / max(loads)


def contact_cases(rounds: int, rng: random.Random) -> list:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_contact import ROBOTS, setup

    from rbd.simulation.contact import compiled_runs

    model, mm, _, q, v = setup("ant", ROBOTS["ant"])
    dt = float(mm.opt.timestep)
    model.mujoco_options = {**(model.mujoco_options or {}), "timestep": dt}
    rows = []
    for n in (8, 32):
        g = np.random.default_rng(0)
        Q = np.repeat(q[None], n, axis=0)
        V = v + 0.05 * g.normal(size=(n, model.nv))

        def make_call(threads, Q=Q, V=V):
            return lambda: compiled_runs(model, Q, V, CONTACT_STEPS, dt, num_threads=threads)

        result = scaling(make_call, rounds, rng)
        # one run's CPU time: a batch of two copies of it less a batch of one (the setup
        # of a call left out)
        costs = []
        for s in range(n):
            cpu = {}
            for copies in (1, 2):
                def call(copies=copies, s=s, Q=Q, V=V):
                    compiled_runs(model, Q[[s] * copies], V[[s] * copies], CONTACT_STEPS, dt,
                                  num_threads=1)
                call()
                t0 = time.thread_time()
                call()
                cpu[copies] = time.thread_time() - t0
            costs.append(max(cpu[2] - cpu[1], 1e-9))
        rows.append((f"contact runs ant, {n} states × {CONTACT_STEPS} steps", result,
                     dynamic_balance(costs)))
    return rows


CASES = {"lanes": lanes_cases, "rollout": rollout_case, "contact": contact_cases}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = parser.parse_args(argv)
    rng = random.Random(0)
    before = os.getloadavg()[0]
    rows = []
    for case in args.cases:
        rows += CASES[case](args.rounds, rng)
    after = os.getloadavg()[0]
    print(f"Threads, wall clock ({args.rounds} rounds, lane build `{_model.simd()}`, "
          f"{os.cpu_count()} cores; load average {before:.2f} before, {after:.2f} after)\n")
    print("| batch | 1 thread (ms) | 2 threads (ms) | speed-up | serial 2 t₂ − t₁ (ms) | "
          "balance |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r, balance in rows:
        print(f"| {name} | {r['t1'] * 1e3:.2f} | {r['t2'] * 1e3:.2f} | {r['speedup']:.2f}× | "
              f"{r['serial'] * 1e3:.2f} | {'–' if balance is None else f'{balance:.2f}×'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
