"""The fixed cost of one contact run: ``rbd.simulate`` and ``compiled_runs`` around the kernel.

gymnasium's ant and humanoid at a touching state (``bench_contact.setup``, MuJoCo's
time step), on the compiled contact path.  For runs of 1 and of 100 steps, the time per
call of

* ``rbd.simulate(model, q, v, steps * dt, dt, integrator="euler")``: one state, and a
  batch of 4 (the state repeated) on one thread (``num_threads=1``: the cost of a call,
  without the threads' start and the waits for a second core);
* ``rbd.simulation.contact.compiled_runs`` (no ``simulate`` front end, one state);
* the kernel alone, ``rbd._kernels.contact.simulate_contact``, with the arguments
  ``compiled_runs`` gives it (the compiled model built once, before the timing);

and the fixed cost of each front end: its time less the kernel's for the same run, at 1
and at 100 steps (the two agree when the cost around the kernel does not grow with the
run).  Each number is the 20th percentile of ``--calls`` calls (``time.perf_counter``;
100-step runs: a fifth as many), all in one process, the five calls of a run length
made in turn: a low percentile, because on a loaded machine most of the spread is
waiting for a core.

Usage::

    python benchmarks/bench_call.py               # ant and humanoid
    python benchmarks/bench_call.py --calls 300   # fewer calls
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_contact import ROBOTS, setup  # noqa: E402

import rbd  # noqa: E402
from rbd.simulation.contact import compiled_runs  # noqa: E402

BATCH = 4          # initial states of the batch rows


def percentile_times(fns: list, calls: int, percentile: float = 20) -> list[float]:
    """The ``percentile``-th percentile (µs) of the times of ``calls`` calls of each of
    ``fns``, called in turn (one call of each per round: a change of the machine's load
    falls on all of them alike)."""
    for fn in fns:
        fn()
    times = np.empty((len(fns), calls))
    for k in range(calls):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i, k] = time.perf_counter() - t0
    return [float(np.percentile(row, percentile)) * 1e6 for row in times]


def kernel_call(model, q, v, steps: int, dt: float, num_threads=None):
    """The kernel's call as ``compiled_runs`` makes it for the states ``q`` ``(N, nq)``,
    ``v`` ``(N, nv)``, its arguments built once."""
    from rbd._kernels.contact import simulate_contact
    from rbd.constraints.collision import compiled_collision
    from rbd.constraints.forward_compiled import compiled_forward, kernel_tolerance
    from rbd.constraints.mujoco_model import options, solver_settings
    from rbd.simulation.contact import RECORDED_CONTACTS

    fm = compiled_forward(model)
    collide = compiled_collision(model) if model.geoms else None
    iterations, tolerance = solver_settings(model)
    args = (fm, q.copy(), v.copy(), None, float(dt), steps, 1, collide,
            options(model)["cone"], "newton", iterations,
            kernel_tolerance(model, "newton", tolerance), num_threads)
    return lambda: simulate_contact(*args, contact_width=RECORDED_CONTACTS)


def robot_rows(name: str, calls: int) -> list[tuple]:
    """``(row, µs at 1 step, µs at 100 steps)`` for one robot."""
    model, mm, _, q, v = setup(name, ROBOTS[name])
    dt = float(mm.opt.timestep)
    model.mujoco_options = {**model.mujoco_options, "timestep": dt}
    if compiled_runs(model, q[None], v[None], 1, dt) is None:
        print(f"{name}: not on the compiled contact path, skipped")
        return []
    qb, vb = np.repeat(q[None], BATCH, axis=0), np.repeat(v[None], BATCH, axis=0)
    calls_of = {1: calls, 100: max(calls // 5, 20)}
    rows = {
        "kernel alone": lambda n: kernel_call(model, q[None], v[None], n, dt),
        "compiled_runs": lambda n: (lambda: compiled_runs(model, q[None], v[None], n, dt)),
        "rbd.simulate": lambda n: (lambda: rbd.simulate(model, q, v, n * dt, dt,
                                                        integrator="euler")),
        f"rbd.simulate, batch of {BATCH}": lambda n: (
            lambda: rbd.simulate(model, qb, vb, n * dt, dt, integrator="euler", num_threads=1)),
        f"kernel alone, batch of {BATCH}": lambda n: kernel_call(model, qb, vb, n, dt, 1),
    }
    by_steps = {n: percentile_times([make(n) for make in rows.values()], calls_of[n])
                for n in (1, 100)}
    return [(label, by_steps[1][i], by_steps[100][i]) for i, label in enumerate(rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per 1-step number")
    parser.add_argument("--robots", nargs="*", default=list(ROBOTS))
    args = parser.parse_args()
    print(f"# {datetime.date.today()}  {platform.machine()}  {platform.processor() or ''}  "
          f"Python {platform.python_version()}  load {os.getloadavg()[0]:.2f}")
    print("20th percentile of the time per call, µs; fixed = front end less the kernel "
          "(same run)\n")
    for name in args.robots:
        rows = robot_rows(name, args.calls)
        if not rows:
            continue
        kernel = {label.replace("kernel alone", ""): (t1, t100) for label, t1, t100 in rows
                  if label.startswith("kernel alone")}
        print(f"## {name}\n")
        print("| call | 1 step | 100 steps | fixed at 1 step | fixed at 100 steps |")
        print("|---|---:|---:|---:|---:|")
        for label, t1, t100 in rows:
            if label.startswith("kernel alone"):
                print(f"| {label} | {t1:.0f} | {t100:.0f} | | |")
                continue
            suffix = ", batch of" + label.split("batch of")[1] if "batch" in label else ""
            k1, k100 = kernel[suffix]
            print(f"| {label} | {t1:.0f} | {t100:.0f} | {t1 - k1:.0f} | {t100 - k100:.0f} |")
        print()


if __name__ == "__main__":
    main()
