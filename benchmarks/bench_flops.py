"""Useful flops per cycle of the lane RNEA and ABA, the flops counted, not quoted.

Run from the repository root::

    python benchmarks/bench_flops.py            # full run, updates docs/benchmarks.md
    python benchmarks/bench_flops.py --quick    # fewer states and rounds, prints only

What is counted.  The reference pass (``rbd.reference.rnea.rnea``,
``rbd.reference.aba.aba``) runs once on an object array of :class:`Flop` numbers, which
count every multiplication, addition/subtraction and division they take part in (sin,
cos and sqrt counted apart, not as flops).  Operations of the model's own constants
among themselves (the tree transforms, the inertias, the axes: numbers the kernels hold
precomputed) are folded and not counted, and so are those with a structural 0 or ±1
(the zero blocks of the 6×6 Plücker matrices, ``0 · x``, ``1 · x``, ``x + 0``, negation):
the count is the arithmetic of the reference's formulation minus its trivial
operations.  It is not a minimal count: the reference forms ``(v ×*) I v`` as a 6×6
product and ``X_J X_tree`` in full, where hand-optimized codes use fewer operations,
and it does not share subexpressions beyond what the text itself shares.  The pivots
``D_i⁻¹ x`` are solved by an LDLᵀ factorization in this script (the reference's SciPy
Cholesky does not take object arrays).

Why not RBDA Table 10.1.  Featherstone's *Rigid Body Dynamics Algorithms* (2008)
Table 10.1 lists operation counts from the literature for unbranched chains of
revolute joints with coordinates chosen for efficiency; the book is not in this
project's sources, so its entries could not be checked against the page, and they say
nothing about the humanoid's free, spherical and universal joints or the binary tree.
The count here is made for each model as it is.

Flops per cycle.  The counted flops of one state over the cycles one state takes in
the default lane build (one thread, ``N`` states a batch, CPU time of the calling
thread, median over rounds), cycles being that time times the clock in
``/proc/cpuinfo`` (``cpu MHz``).  This machine exposes no hardware counters to
``perf`` (neither ``cycles`` nor ``fp_arith_inst_retired.*``), so a turbo clock above
the nominal one goes unseen: if the core runs faster, the true flops per cycle are
lower than shown.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import math
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import rbd
import rbd.joints as joints
import rbd.spatial as spatial
from rbd._kernels import _model
from rbd.reference import aba as ref_aba
from rbd.reference import rnea as ref_rnea

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import machine, write_section  # noqa: E402
from bench_soa import clock_hz, featherstone_flops, models  # noqa: E402

SECTION = "## Flops per cycle of the lanes (counted)"
#: Joint kinds of the per-joint table: a random chain of each (rbd.testing.random_model).
KINDS = ("revolute", "prismatic", "helical", "universal", "spherical", "planar", "free")
COUNT: collections.Counter = collections.Counter()
NOTE = ("Reading the counts: on the random chains above (general axes and geometry) the "
        "reference's formulation takes about three times the quoted chain formula a revolute "
        "body (its `X_J X_tree`, `(v ×*) I v` and `Xᵀ Ia X` are dense 6×6 products); on the "
        "benchmark models, whose axes and offsets are mostly aligned with the coordinate "
        "axes, the folded zeros bring it to {low:.2f}–{high:.2f} times the formula. The "
        "counted flops per cycle thus overstate the useful ones where the geometry is "
        "general; neither column is a minimal count: where the quoted formula applies "
        "(revolute models), read the two together.")
_NUMBER = (int, float, np.integer, np.floating)


class Flop:
    """A float that counts the arithmetic it takes part in (module docstring)."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = float(x)

    def __float__(self):
        return self.x

    def _op(self, other, kind, result):
        COUNT[kind] += 1
        return Flop(result)

    def __add__(self, o):
        if isinstance(o, _NUMBER):
            return self if o == 0 else self._op(o, "add", self.x + o)
        return self._op(o, "add", self.x + o.x) if isinstance(o, Flop) else NotImplemented

    __radd__ = __add__

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __neg__(self):
        return Flop(-self.x)

    def __mul__(self, o):
        if isinstance(o, _NUMBER):
            if o == 0:
                return 0
            if o in (1, -1):
                return self if o == 1 else -self
            return self._op(o, "mul", self.x * o)
        return self._op(o, "mul", self.x * o.x) if isinstance(o, Flop) else NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, o):
        if isinstance(o, _NUMBER) and o == 1:
            return self
        return self._op(o, "div", self.x / float(o))

    def __rtruediv__(self, o):
        return self._op(o, "div", o / self.x)

    def sqrt(self):
        COUNT["sqrt"] += 1
        return Flop(math.sqrt(self.x))

    def __lt__(self, o):
        return self.x < float(o)

    def __gt__(self, o):
        return self.x > float(o)


def _cos_sin(theta, plain=spatial._cos_sin):
    if isinstance(theta, Flop):
        COUNT["cos"] += 1
        COUNT["sin"] += 1
        return Flop(math.cos(theta.x)), Flop(math.sin(theta.x))
    return plain(theta)


def _ldl(D):
    """``(L, d)`` with ``D = L diag(d) Lᵀ`` (object arrays: the pivots of :func:`counted`)."""
    n = len(D)
    L, d = np.eye(n, dtype=object), np.zeros(n, dtype=object)
    for j in range(n):
        d[j] = D[j, j] - sum(L[j, k] * L[j, k] * d[k] for k in range(j))
        for i in range(j + 1, n):
            L[i, j] = (D[i, j] - sum(L[i, k] * L[j, k] * d[k] for k in range(j))) / d[j]
    return L, d


def _ldl_solve(factor, b):
    if factor is None:
        return np.zeros((0, *np.shape(b)[1:]), dtype=object)
    L, d = factor
    x = np.array(b, dtype=object)
    n = len(d)
    for i in range(n):
        for k in range(i):
            x[i] = x[i] - L[i, k] * x[k]
    for i in range(n):
        x[i] = x[i] / d[i]
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            x[i] = x[i] - L[k, i] * x[k]
    return x


@contextmanager
def counting():
    """The reference's sin/cos and pivot solves taking :class:`Flop` numbers."""
    saved = spatial._cos_sin, joints._cos_sin, ref_aba.pivot_factor, ref_aba.pivot_solve
    spatial._cos_sin = joints._cos_sin = _cos_sin
    ref_aba.pivot_factor = lambda D: _ldl(D) if D.size else None
    ref_aba.pivot_solve = _ldl_solve
    try:
        yield
    finally:
        spatial._cos_sin, joints._cos_sin, ref_aba.pivot_factor, ref_aba.pivot_solve = saved


def counted(model, algorithm: str) -> collections.Counter:
    """The operations of one reference pass (``"rnea"`` or ``"aba"``) at a random state."""
    rng = np.random.default_rng(1)
    q = rbd.random_configuration(model, rng)
    v, x = rng.normal(size=(2, model.nv))
    wrap = lambda a: np.array([Flop(e) for e in a], dtype=object)  # noqa: E731
    fn = ref_rnea.rnea if algorithm == "rnea" else ref_aba.aba
    data: dict = {}
    COUNT.clear()
    with counting():
        if algorithm == "rnea":
            out = last = fn(model, wrap(q), wrap(v), wrap(x))
        else:
            # (q̈ is written into a float array: the last body's a_i shows the types, Flop
            # or a structural constant, never a number of another kind that escaped the count)
            out = fn(model, wrap(q), wrap(v), wrap(x), data=data)
            last = data["a"][-1]
    if not all(isinstance(e, (Flop, *_NUMBER)) for e in last):
        raise SystemExit(f"{model.name} {algorithm}: a result left the counted numbers")
    got = np.array([float(e) for e in out])
    want = fn(model, q, v, x)
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
        raise SystemExit(f"{model.name} {algorithm}: the counted pass differs from the reference")
    return collections.Counter(COUNT)


def flops(count) -> int:
    return count["mul"] + count["add"] + count["div"]


def per_joint_kind() -> list[tuple]:
    """(kind, RNEA flops a body, ABA flops a body): a random chain of 6 minus one of 2."""
    rows = []
    for kind in KINDS:
        per = []
        for algorithm in ("rnea", "aba"):
            c6 = counted(rbd.testing.random_model(np.random.default_rng(0), 6, (kind,),
                                                  chain=True), algorithm)
            c2 = counted(rbd.testing.random_model(np.random.default_rng(0), 2, (kind,),
                                                  chain=True), algorithm)
            per.append((flops(c6) - flops(c2)) / 4)
        rows.append((kind, *per))
    return rows


def lane_seconds(model, algorithm: str, n: int, rounds: int) -> float:
    """CPU seconds per state of the default lane build, one thread (median over rounds)."""
    rng = np.random.default_rng(3)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(n)])
    V, X = rng.normal(size=(2, n, model.nv))
    fn = rbd.aba if algorithm == "aba" else rbd.rnea
    kernel = rbd.algorithms.compiled(model)
    saved = kernel.num_threads
    kernel.num_threads = 1
    try:
        fn(model, Q, V, X)
        times = []
        for _ in range(rounds):
            t0 = time.thread_time()
            fn(model, Q, V, X)
            times.append(time.thread_time() - t0)
    finally:
        kernel.num_threads = saved
    return float(np.median(times)) / n


def markdown(kinds, table, info) -> str:
    lines = [
        SECTION, "",
        f"Measured {info['date']} on {info['machine']}, lane build `{info['build']}`, "
        f"one thread, N = {info['n']:,} states, clock {info['clock']} (`/proc/cpuinfo`); "
        f"load average at the end: {info['load']} on {os.cpu_count()} cores. Command:", "",
        "```bash", info["command"], "```", "",
        "Flops are counted, not quoted: the reference pass runs once on numbers that count "
        "their multiplications, additions and divisions, with the model's constants folded "
        "and the operations on structural zeros and ones left out "
        "(`benchmarks/bench_flops.py` says exactly what is counted). That is the arithmetic "
        "of the reference's 6×6 formulation, not a minimal count. RBDA's Table 10.1 is not "
        "used: the book is not in the project's sources to check its entries against, and "
        "they cover only chains of revolute joints. This VM exposes no hardware counters "
        "(`perf stat -e cycles` and `fp_arith_inst_retired.*` are not supported), so cycles "
        "are CPU time × the nominal clock; a faster turbo clock would lower the true flops "
        "per cycle.", "",
        "Flops a body, by joint kind (a random chain of 6 bodies minus one of 2, over 4; "
        "general axes and geometry):", "",
        "| joint | RNEA | ABA |", "|---|---:|---:|",
    ]
    lines += [f"| {k} | {r:.0f} | {a:.0f} |" for k, r, a in kinds]
    lines += ["", "Per model: the counted flops of one state, the lane time of one state, "
              "their ratio in cycles; and, for comparison, the chain formula that "
              "`bench_soa.py` quotes from RBDA Table 10.1 (RNEA 174 nv − 135, ABA 429 nv − 360, "
              "unchecked against the book) with the flops per cycle it would give:", "",
              "| model | nv | algorithm | counted flops | µs a state | flops per cycle | "
              "quoted chain formula | its flops per cycle |",
              "|---|---:|---|---:|---:|---:|---:|---:|"]
    for name, nv, algorithm, count, seconds, per_cycle in table:
        quoted = featherstone_flops(nv, algorithm)
        lines.append(f"| {name} | {nv} | {algorithm} | {count:,} | {seconds * 1e6:.3g} | "
                     + ("–" if per_cycle is None else f"{per_cycle:.2f}")
                     + f" | {quoted:,} | "
                     + ("–" if per_cycle is None else f"{per_cycle * quoted / count:.2f}")
                     + " |")
    shares = [count / featherstone_flops(nv, algorithm)
              for _, nv, algorithm, count, _, _ in table]
    lines += ["", NOTE.format(low=min(shares), high=max(shares))]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer states, no doc update")
    parser.add_argument("--states", type=int, default=None)
    args = parser.parse_args(argv)
    n = args.states or (800 if args.quick else 4000)
    rounds = 3 if args.quick else 7
    clock = clock_hz()
    kinds = per_joint_kind()
    for row in kinds:
        print(f"{row[0]:10s} RNEA {row[1]:.0f}  ABA {row[2]:.0f} flops a body", flush=True)
    table = []
    for name, make in models().items():
        model = make()
        for algorithm in ("rnea", "aba"):
            count = flops(counted(model, algorithm))
            seconds = lane_seconds(model, algorithm, n, rounds)
            per_cycle = None if clock is None else count / (seconds * clock)
            table.append((name, model.nv, algorithm, count, seconds, per_cycle))
            print(f"{name:9s} {algorithm:4s} {count:7,d} flops  {seconds * 1e6:.3g} µs"
                  + ("" if per_cycle is None else f"  {per_cycle:.2f} flops/cycle"), flush=True)
    info = {"date": datetime.date.today().isoformat(), "machine": machine(),
            "build": _model.simd(), "n": n,
            "clock": "unknown" if clock is None else f"{clock / 1e9:.2f} GHz",
            "command": "python benchmarks/bench_flops.py" + (" --quick" if args.quick else ""),
            "load": f"{os.getloadavg()[0]:.1f}"}
    text = markdown(kinds, table, info)
    print(text)
    if not args.quick:
        write_section(text, section=SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
