"""Batched compiled rollouts and CRBA in lanes against the one-state kernels.

Run from the repository root::

    python benchmarks/bench_soa_rollout.py             # full run, updates docs/benchmarks.md
    python benchmarks/bench_soa_rollout.py --quick     # fewer rounds, prints only

Rollouts: 1,000 RK4 rollouts of arm7 from random states (dt = 1 ms, 100 steps, a
sample every 10 steps), ``rbd.simulate`` on the stack, per rollout step; with the
lanes off (``set_simd("off")``: ``rollout.pyx`` rollout by rollout, the batched path
before the lanes) and on each lane build this CPU runs (``soa_rollout.pxi``), with
one and two threads, both on the wall clock (the thread rows compare like with like),
and the CPU time of the calling thread with one thread (it runs the whole batch; the
per-step throughput of the issue's 3× target, insensitive to other work).  CRBA:
``rbd.crba`` on ``N = 10,000`` states, one thread, per state, lanes off against each
build (``soa_crba.pxi``).  Times are medians over rounds in
which the candidates run interleaved in a shuffled order.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
from pathlib import Path

import numpy as np

import rbd
from rbd._kernels import _model, _simd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import interleaved, machine, write_section  # noqa: E402

SECTION = "## Rollouts and CRBA in lanes"
MODELS = {
    "arm7": rbd.models.arm7,
    "tree31": lambda: rbd.models.binary_tree(5),
    "humanoid": rbd.models.humanoid,
    "RC20": lambda: rbd.models.revolute_chain(20),
}


NOTE = ("\n"
        "The lane rollout is bound by its evaluations: by `perf` on this "
        "benchmark (samples of the whole process), the lane ABA (`aba`, `outward_step`) "
        "took 46 % and libm's `sincos` of the revolute joints 9 % before `sincos_lanes`, the "
        "rollout's own lane code (stages, joint force, integration, samples, moves in and "
        "out of the lanes) "
        "about 6 %, the rest is the interpreter and the set-up; so the "
        "gain of the rollout follows the gain of the lane ABA over the one-state ABA (see "
        '"Batches in lanes"). The thread rows are wall clock on cores that other work may keep '
        "busy (the load average above): there they show the contention, not the scaling "
        "(`benchmarks/bench_threads.py` reruns the thread table alone at a quiet moment).\n")


def builds() -> list[str]:
    return [b for b in _simd.SIMD_BUILDS if _simd.runnable(b)]


def rollouts(rounds: int, rng: random.Random, n: int = 1000, steps: int = 100) -> dict:
    """Seconds per rollout step: {(choice, threads, clock): seconds}, clock "wall" or "cpu"."""
    model = rbd.models.arm7()
    g = np.random.default_rng(1)
    q0 = np.array([rbd.random_configuration(model, g) for _ in range(n)])
    v0 = 0.1 * g.normal(size=(n, model.nv))

    def run(choice, threads):
        def call():
            _model.set_simd(choice)
            rbd.simulate(model, q0, v0, steps * 1e-3, 1e-3, record_every=10,
                         num_threads=threads)
        return call

    candidates = {(c, t): run(c, t) for c in ("off", *builds()) for t in (1, 2)}
    timed = interleaved(candidates, rounds, 0.0, rng, numbers={k: 1 for k in candidates})
    return {(*k, clock): float(np.median(getattr(v, clock))) / (n * steps)
            for k, v in timed.items() for clock in ("wall", "cpu")}


def crba(rounds: int, rng: random.Random, n: int = 10_000) -> dict:
    """Seconds per state, one thread: {(model, choice): seconds}."""
    out = {}
    for name, make in MODELS.items():
        model = make()
        g = np.random.default_rng(2)
        Q = np.array([rbd.random_configuration(model, g) for _ in range(n)])
        kernel = rbd.algorithms.compiled(model)
        kernel.num_threads = 1

        def run(choice, model=model, Q=Q):
            def call():
                _model.set_simd(choice)
                rbd.crba(model, Q)
            return call

        candidates = {c: run(c) for c in ("off", *builds())}
        timed = interleaved(candidates, rounds, 0.3, rng)
        out.update({(name, c): float(np.median(v.cpu)) / n for c, v in timed.items()})
    return out


def markdown(ro: dict, cr: dict, info: dict) -> str:
    lanes = builds()
    lines = [SECTION, "",
             f"Measured {info['date']} on {info['machine']}; lane build chosen at import: "
             f"`{info['simd']}` (builds this CPU runs: {', '.join(lanes)}), W = 8. Command:", "",
             "```bash", info["command"], "```", "",
             f"Load average at the end: {info['load']} on 2 cores (shared machine).", "",
             "1,000 RK4 rollouts of arm7 (dt = 1 ms, 100 steps, a sample every 10), "
             "µs per rollout step: wall clock with one and two threads, and the CPU time of "
             "the calling thread with one. `off` is "
             "the batched path before the lanes (`rollout.pyx` rollout by rollout).", "",
             "| threads | off | " + " | ".join(f"{b} lanes" for b in lanes) + " | "
             + " | ".join(f"off / {b}" for b in lanes) + " |",
             "|---|---:|" + "---:|" * (2 * len(lanes))]
    for t, clock in ((1, "wall"), (2, "wall"), (1, "cpu")):
        lines.append(f"| {t} ({'CPU time' if clock == 'cpu' else 'wall clock'}) | "
                     f"{ro['off', t, clock] * 1e6:.2f} | "
                     + " | ".join(f"{ro[b, t, clock] * 1e6:.2f}" for b in lanes) + " | "
                     + " | ".join(f"{ro['off', t, clock] / ro[b, t, clock]:.2f}×"
                                  for b in lanes) + " |")
    lines.append("| speed-up 1 → 2 threads (wall) | "
                 + " | ".join(f"{ro[c, 1, 'wall'] / ro[c, 2, 'wall']:.2f}×"
                              for c in ("off", *lanes)) + " |" + " |" * len(lanes))
    lines += ["", "CRBA on N = 10,000 states, one thread, CPU time, µs per state:", "",
              "| model | nv | off | " + " | ".join(f"{b} lanes" for b in lanes) + " | "
              + " | ".join(f"off / {b}" for b in lanes) + " |",
              "|---|---:|---:|" + "---:|" * (2 * len(lanes))]
    for name, make in MODELS.items():
        lines.append(f"| {name} | {make().nv} | {cr[name, 'off'] * 1e6:.3g} | "
                     + " | ".join(f"{cr[name, b] * 1e6:.3g}" for b in lanes) + " | "
                     + " | ".join(f"{cr[name, 'off'] / cr[name, b]:.2f}×" for b in lanes)
                     + " |")
    gain = (ro["off", 1, "cpu"] / ro[info["simd"], 1, "cpu"]) if info["simd"] in lanes else 0.0
    verdict = (f"\nThe issue's target is 3× the per-step throughput of the batched rollouts "
               f"before the lanes (the `off` column, measured in the same run): one thread on "
               f"the `{info['simd']}` build gains {gain:.2f}× (CPU time), so it is "
               f"{'met' if gain >= 3 else 'not met'} in this run.\n")
    return "\n".join(lines) + "\n" + verdict + NOTE


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no doc update")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 7
    rng = random.Random(0)
    chosen = _model.simd()
    ro = rollouts(rounds, rng)
    cr = crba(rounds, rng)
    _model.set_simd(chosen)
    info = {"date": datetime.date.today().isoformat(), "machine": machine(), "simd": chosen,
            "command": "python benchmarks/bench_soa_rollout.py"
            + (" --quick" if args.quick else ""),
            "load": f"{os.getloadavg()[0]:.1f}"}
    text = markdown(ro, cr, info)
    print(text)
    if not args.quick:
        write_section(text, section=SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
