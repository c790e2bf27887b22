"""Time rbd's analytical derivatives against Pinocchio's, per call, in one process.

Run from the repository root (Pinocchio 3+ as ``pinocchio``, PyPI ``pin``)::

    python benchmarks/bench_derivatives.py           # 31 rounds
    python benchmarks/bench_derivatives.py --quick   # 7 rounds

What is timed, on RC20, RC50, the 31-body binary tree (``binary_tree(5)``) and
the 7-DoF arm: ``rbd.aba_derivatives(model, q, v, tau)`` (the public function,
validation included) against ``pinocchio.computeABADerivatives(model, data, q,
v, tau)``, and ``rbd.rnea_derivatives`` against
``pinocchio.computeRNEADerivatives``.  The models, the interleaved timing and
the ratio (median of the per-round ratios of CPU times) are those of
``bench_core.py``.  Before any timing both libraries are checked to agree to
1e-9 (relative) on every model.  The last column is the cost of the reference
derivation (``backend="reference"``, NumPy), one call, for scale.  SciPy's BLAS
is held to one thread (``OPENBLAS_NUM_THREADS=1`` unless set), so the CPU time of
the calling thread is all the work done.  The result is printed; nothing is
written.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import interleaved, peers_ready, ratio, to_pinocchio, us  # noqa: E402

import rbd  # noqa: E402

MODELS = ("RC20", "RC50", "tree31", "arm7")
AGREEMENT = 1e-9


def agreement(model, pm, order, pin) -> float:
    """Largest relative difference of the three derivative matrices of both algorithms."""
    pd = pm.createData()
    ix = np.ix_(order, order)
    worst = 0.0
    for seed in range(3):
        q, v, a = rbd.testing.random_state(model, seed)
        ours = rbd.rnea_derivatives(model, q, v, a)
        pin.computeRNEADerivatives(pm, pd, q[order], v[order], a[order])
        M = np.triu(pd.M) + np.triu(pd.M, 1).T
        theirs = (pd.dtau_dq.copy(), pd.dtau_dv.copy(), M)   # pd is reused below
        ours += rbd.aba_derivatives(model, q, v, a)
        pin.computeABADerivatives(pm, pd, q[order], v[order], a[order])
        M_inv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
        theirs += (pd.ddq_dq, pd.ddq_dv, M_inv)
        for o, t in zip(ours, theirs, strict=True):
            worst = max(worst, rbd.testing.relative_difference(o[ix], t))
    return worst


def time_model(model, pm, order, pin, rounds: int, target: float, rng: random.Random):
    """Rows (algorithm, rbd s per call, Pinocchio s per call, CPU-time ratio)."""
    pd = pm.createData()
    q, v, tau = rbd.testing.random_state(model, 7)
    qp, vp, tp = q[order], v[order], tau[order]
    pairs = {
        "aba_derivatives": (lambda: rbd.aba_derivatives(model, q, v, tau),
                            lambda: pin.computeABADerivatives(pm, pd, qp, vp, tp)),
        "rnea_derivatives": (lambda: rbd.rnea_derivatives(model, q, v, tau),
                             lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, tp)),
    }
    rows = []
    for alg, (ours, theirs) in pairs.items():
        result = interleaved({"rbd": ours, "pinocchio": theirs}, rounds, target, rng)
        rows.append((alg, result["rbd"].median(), result["pinocchio"].median(),
                     ratio(result, "rbd", "pinocchio"), ratio(result, "rbd", "pinocchio", "wall"),
                     reference_cost(getattr(rbd, alg), model, q, v, tau)))
    return rows


def reference_cost(fn, model, q, v, x) -> float:
    """CPU seconds of one call of the reference derivation (best of three)."""
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        fn(model, q, v, x, backend="reference")
        best = min(best, time.thread_time() - start)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="models to time")
    args = parser.parse_args(argv)
    if not peers_ready():
        return 1
    import pinocchio as pin
    rounds, target = (7, 0.02) if args.quick else (31, 0.05)
    rng = random.Random(0)
    print(f"{'model':8s} {'nv':>3s} {'algorithm':16s} {'rbd µs':>8s} {'Pinocchio µs':>13s} "
          f"{'ratio':>6s} {'wall ratio':>10s} {'reference ms':>12s}")
    for name in args.models:
        model = rbd.models.get(name)
        pm, order = to_pinocchio(model)
        worst = agreement(model, pm, order, pin)
        if worst > AGREEMENT:
            print(f"{name}: rbd and Pinocchio differ by {worst:.3g}; not timing")
            return 1
        for alg, t_rbd, t_pin, r, r_wall, t_ref in time_model(model, pm, order, pin, rounds,
                                                              target, rng):
            print(f"{name:8s} {model.nv:3d} {alg:16s} {us(t_rbd):>8s} {us(t_pin):>13s} "
                  f"{r:6.2f} {r_wall:10.2f} {t_ref * 1e3:12.1f}   (agreement {worst:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
