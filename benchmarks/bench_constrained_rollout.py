"""Constrained simulation per step: rbd's compiled rollout, its Python loop, Pinocchio's calls.

``rbd.simulate(model, q0, v0, ..., constraints=...)`` (RK4, dt = 1 ms, Baumgarte
"auto") on the four-bar (:mod:`rbd.constraints.mechanisms`) and on Talos with both
soles welded to the ground (when example-robot-data is installed), timed

* on the compiled path (``rbd/_kernels/rollout.pyx``: four stabilized KKT solves a
  step, without the GIL),
* on the Python path (``compiled=False``: the same steps in Python, each
  evaluation one compiled ``rbd.constrained_dynamics`` call),
* against Pinocchio, which has no constrained rollout: four calls of
  ``pinocchio.constraintDynamics`` (one RK4 step's evaluations) on the same rows,
  timed in a Python loop (the integration between them left out).

Then a batch of 64 four-bar rollouts on 1 and 2 threads.  Prints Markdown tables.

All runs are long (a second of simulated time compiled, a tenth on the Python
path, 2,000 Pinocchio calls; the best of three): on a shared machine each is cut
by the scheduler alike, so the ratios hold better than the times, which include
the load.  Both rbd paths record a sample at every step (energies, constraint
errors) and include ``rbd.simulate``'s fixed cost (some 0.5 ms).

Run: ``python benchmarks/bench_constrained_rollout.py [--seconds 1.0]``
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

import rbd
from rbd.constraints import mechanisms as mech

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from bench_constraints import cases, pinocchio_call  # noqa: E402
from constraint_cases import consistent_velocity  # noqa: E402

DT = 1e-3


def best_time(fn, repeat: int = 3) -> float:
    """The shortest of ``repeat`` runs of ``fn()`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def models():
    """``name -> (model, q0, v0, constraints or None, Pinocchio model or None)``."""
    rng = np.random.default_rng(0)
    model, q = mech.four_bar(), mech.four_bar_angles(0.7)
    out = {"four-bar": (model, q, 3.0 * consistent_velocity(model, q, None, rng), None, None)}
    talos = cases().get("talos, feet welded")
    if talos is not None:
        model, q, welds, pmodel = talos
        out["talos, feet welded"] = (model, q, 0.1 * consistent_velocity(model, q, welds, rng),
                                     welds, pmodel)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="simulated time, compiled")
    args = parser.parse_args()
    print(f"# constrained rollouts, RK4, dt = 1 ms, {datetime.date.today()}, "
          f"{platform.processor() or 'cpu'}, load {os.getloadavg()[0]:.1f}\n")
    print("| model | nv | rows | compiled (µs/step) | Python loop (µs/step) | "
          "4 × Pinocchio constraintDynamics (µs) | compiled steps/s | Python / compiled | "
          "compiled / Pinocchio |")
    print("|---|---|---|---|---|---|---|---|---|")
    fast_s, slow_s, n = args.seconds, args.seconds / 10, 2000
    for name, (model, q0, v0, cs, pmodel) in models().items():
        rows = rbd.constraint_jacobian(model, q0, cs).shape[0]
        run = dict(constraints=cs, contact=False)
        fast = best_time(lambda m=model, q=q0, v=v0, k=run: rbd.simulate(m, q, v, fast_s, DT,
                                                                         **k))
        slow = best_time(lambda m=model, q=q0, v=v0, k=run: rbd.simulate(
            m, q, v, slow_s, DT, compiled=False, **k), 1)
        per_fast = fast / (fast_s / DT) * 1e6
        per_slow = slow / (slow_s / DT) * 1e6
        tau = np.zeros(model.nv)
        theirs = pinocchio_call(model, q0, cs, pmodel, v0, tau)
        if theirs is not None:
            per_pin = 4 * best_time(lambda f=theirs: [f() for _ in range(n)]) / n * 1e6
        else:
            per_pin = float("nan")
        print(f"| {name} | {model.nv} | {rows} | {per_fast:.1f} | {per_slow:.1f} | "
              f"{per_pin:.1f} | {1e6 / per_fast:,.0f} | {per_slow / per_fast:.1f} | "
              f"{per_fast / per_pin:.2f} |")
    model, q0, v0, _, _ = models()["four-bar"]
    rng = np.random.default_rng(1)
    Q = np.stack([mech.four_bar_angles(t) for t in rng.uniform(0.3, 1.2, 64)])
    V = np.stack([consistent_velocity(model, q, None, rng) for q in Q])
    print("\n| four-bar, 64 rollouts of 1 s | threads | wall (s) | steps/s (all rollouts) |")
    print("|---|---|---|---|")
    for threads in (1, 2):
        wall = best_time(lambda k=threads: rbd.simulate(model, Q, V, 1.0, DT, num_threads=k), 2)
        print(f"| | {threads} | {wall:.3f} | {64 * 1000 / wall:,.0f} |")


if __name__ == "__main__":
    main()
