"""Cost of building, compiling, describing, writing and loading long chains.

Every stage should cost the same per body whatever the chain's length (linear
time): the table prints the wall time of each stage and its cost per body (µs)
for chains of 10³, 10⁴ and 10⁵ revolute joints (``rbd.models.revolute_chain``),
plus a forward-dynamics call on the compiled model.

Usage::

    python benchmarks/bench_build.py                 # 1e3, 1e4, 1e5 bodies
    python benchmarks/bench_build.py --sizes 1000 20000
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time

import numpy as np

import rbd


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def measure(n: int) -> dict[str, float]:
    """Seconds of each stage for a chain of ``n`` bodies."""
    seconds = {}
    model, seconds["build"] = _timed(lambda: rbd.models.revolute_chain(n))
    _, seconds["compile"] = _timed(lambda: rbd.algorithms.compiled(model))
    q = np.zeros(model.nq)
    _, seconds["aba (one call)"] = _timed(lambda: rbd.aba(model, q, q, q))
    _, seconds["describe"] = _timed(model.describe)
    xml, seconds["to_urdf"] = _timed(lambda: rbd.to_urdf(model))
    loaded, seconds["load_urdf"] = _timed(lambda: rbd.load_urdf(xml))
    assert loaded.nbodies == n
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000],
                        help="chain lengths to measure")
    args = parser.parse_args()
    print(f"# rbd build benchmark, {datetime.date.today()}, {platform.processor() or 'cpu'}, "
          f"Python {platform.python_version()}")
    rows = {n: measure(n) for n in args.sizes}
    stages = list(next(iter(rows.values())))
    print("\n| stage | " + " | ".join(f"n = {n:g}: s (µs/body)" for n in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for stage in stages:
        cells = [f"{rows[n][stage]:.3g} ({1e6 * rows[n][stage] / n:.3g})" for n in rows]
        print(f"| {stage} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
