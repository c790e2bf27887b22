"""Time rbd's compiled RNEA, CRBA and ABA against Pinocchio, per call and batched.

Run from the repository root (Pinocchio 3+ as ``pinocchio``, PyPI ``pin``)::

    python benchmarks/bench_core.py            # full run, updates docs/benchmarks.md
    python benchmarks/bench_core.py --quick    # fewer repetitions, prints only

Every number is a median over repeated blocks of calls; the implementations
are interleaved block by block (in a shuffled order each round), so a change
in machine load hits all of them alike, and each ratio is the median of the
per-round ratios.  Before any timing, rbd and Pinocchio are checked to agree
to 1e-10 on every model and algorithm.

What is timed:

* per call, from Python: ``rbd.rnea(model, q, v, a)`` (the public function,
  validation included) against ``pinocchio.rnea(model, data, q, v, a)``, and
  the same for ``crba`` and ``aba``, on RC20, RC50, RC100, the 31-body binary
  tree and a 7-DoF arm; the pure-Python reference (``backend="reference"``)
  for scale;
* batched: ``rbd.aba`` / ``rbd.rnea`` on 10,000 states at once (2 threads)
  against ``pinocchio.abaInParallel`` / ``rneaInParallel`` (2 threads, a
  ``ModelPool``) and against a Python loop over ``pinocchio.aba``;
* call overhead: the same calls on a one-body model.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import rbd
from rbd import interop
from rbd.spatial import plux_parts

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Core algorithms"
MODELS = ("RC20", "RC50", "RC100", "tree31", "arm7")
ALGORITHMS = ("rnea", "crba", "aba")
AGREEMENT = 1e-10


# --- the same models in Pinocchio -----------------------------------------------------------
def depth_first(model: rbd.Model) -> list[int]:
    """Body indices in depth-first pre-order (parents first, each subtree contiguous)."""
    order: list[int] = []
    stack = [i for i in reversed(range(model.nbodies)) if model.parent[i] < 0]
    children = model.children
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    return order


def to_pinocchio(model: rbd.Model):
    """Build the Pinocchio model of an rbd model of revolute joints; return ``(pm, order)``.

    Pinocchio's CRBA assumes that the degrees of freedom of every subtree are
    contiguous, so the joints are added in depth-first order; ``order`` is
    :func:`rbd.interop.pinocchio_permutation` (joints paired by name): Pinocchio's
    coordinate ``k`` is rbd's coordinate ``order[k]`` (``v_pin = v[order]``, and
    ``q`` alike for revolute joints).
    Axis-aligned joints become ``JointModelRX/RY/RZ`` (Pinocchio's fastest
    revolute joints), others ``JointModelRevoluteUnaligned``.  The joint
    placement is ``X_tree`` as an SE3 (rotation ``Eᵀ``, translation ``r``);
    the body inertia is ``(m, c, I_c)`` in the body frame.
    """
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    ids: dict[int, int] = {}
    for i in depth_first(model):
        body = model.bodies[i]
        if body.joint.kind != "revolute":
            raise ValueError(f"only revolute joints are mapped, got {body.joint.kind}")
        E, r = plux_parts(body.X_tree)
        axis = body.joint.axis
        aligned = np.flatnonzero(np.isclose(axis, 1.0, rtol=0, atol=1e-14))
        if len(aligned) == 1:
            joint = (pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ)[aligned[0]]()
        else:
            joint = pin.JointModelRevoluteUnaligned(axis)
        parent = 0 if body.parent < 0 else ids[body.parent]
        ids[i] = pm.addJoint(parent, joint, pin.SE3(E.T.copy(), r.copy()), body.joint_name)
        pm.appendBodyToJoint(ids[i], pin.Inertia(body.mass, body.com.copy(),
                                                 body.I_com.copy()), pin.SE3.Identity())
    return pm, interop.pinocchio_permutation(model, pm)


def check_agreement(model, pm, order, rng) -> float:
    """Largest relative difference between rbd and Pinocchio over a few random states."""
    import pinocchio as pin

    pd = pm.createData()
    joint_map = interop.pinocchio_map(model, pm)
    if not np.array_equal(joint_map.permutation, order):
        raise SystemExit(f"{model.name}: the coordinate order is not Pinocchio's; not timing")
    worst = 0.0
    for _ in range(3):
        q, v, a = rbd.testing.random_state(model, rng)
        qp, vp, ap = joint_map.to_q(q), joint_map.to_v(q, v), joint_map.to_a(q, v, a)
        if not np.array_equal(qp, q[order]):     # the timed calls permute q like v
            raise SystemExit(f"{model.name}: q does not map by the permutation; not timing")
        pairs = [
            (rbd.rnea(model, q, v, a)[order], pin.rnea(pm, pd, qp, vp, ap)),
            (rbd.crba(model, q)[np.ix_(order, order)], pin.crba(pm, pd, qp)),
            (rbd.aba(model, q, v, a)[order], pin.aba(pm, pd, qp, vp, ap)),
        ]
        for ours, theirs in pairs:
            worst = max(worst, rbd.testing.relative_difference(ours, theirs))
    if worst > AGREEMENT:
        raise SystemExit(f"{model.name}: rbd and Pinocchio differ by {worst:.3g}; not timing")
    return worst


# --- timing ------------------------------------------------------------------------------
def _block(fn, number: int) -> tuple[float, float]:
    """Seconds per call of ``number`` calls: (wall clock, CPU time of this thread)."""
    w0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(number):
        fn()
    return (time.perf_counter() - w0) / number, (time.thread_time() - c0) / number


def _calibrate(fn, target: float) -> int:
    """Calls per block so that a block lasts about ``target`` seconds."""
    number = 1
    while True:
        t = _block(fn, number)[0] * number
        if t > target / 4 or number > 1 << 20:
            return max(1, int(number * target / max(t, 1e-9)))
        number *= 4


class Timing:
    """Per-round seconds per call of one candidate, on both clocks."""

    def __init__(self):
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def median(self, clock: str = "cpu") -> float:
        return float(np.median(getattr(self, clock)))


def interleaved(candidates: dict, rounds: int, target: float, rng: random.Random,
                numbers: dict | None = None) -> dict[str, Timing]:
    """Time each candidate block by block, in a shuffled order each round."""
    if numbers is None:
        numbers = {name: _calibrate(fn, target) for name, fn in candidates.items()}
    times = {name: Timing() for name in candidates}
    names = list(candidates)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            wall, cpu = _block(candidates[name], numbers[name])
            times[name].wall.append(wall)
            times[name].cpu.append(cpu)
    return times


def ratio(result: dict[str, Timing], a: str, b: str, clock: str = "cpu") -> float:
    """Median over rounds of time(a) / time(b)."""
    ta, tb = getattr(result[a], clock), getattr(result[b], clock)
    return float(np.median(np.asarray(ta) / np.asarray(tb)))


def per_call(model, pm, order, rounds: int, target: float, rng: random.Random,
             with_reference=True):
    """Rows (algorithm, rbd s, Pinocchio s, CPU ratio, wall ratio, reference s)."""
    import pinocchio as pin

    pd = pm.createData()
    q, v, a = rbd.testing.random_state(model, 7)
    rows = []
    for name in ALGORITHMS:
        args = (q,) if name == "crba" else (q, v, a)
        pin_args = tuple(x[order] for x in args)
        ours, theirs = getattr(rbd, name), getattr(pin, name)
        candidates = {
            "rbd": lambda ours=ours, args=args: ours(model, *args),
            "pinocchio": lambda theirs=theirs, p=pin_args: theirs(pm, pd, *p),
        }
        result = interleaved(candidates, rounds, target, rng)
        reference = float("nan")
        if with_reference:
            ref = interleaved({"reference": lambda ours=ours, args=args: ours(
                model, *args, backend="reference")}, max(3, rounds // 6), target, rng)
            reference = ref["reference"].median()
        rows.append((name, result["rbd"].median(), result["pinocchio"].median(),
                     ratio(result, "rbd", "pinocchio"),
                     ratio(result, "rbd", "pinocchio", "wall"), reference))
    return rows


def batched(model, pm, order, n_states: int, threads: int, rounds: int, rng: random.Random):
    """Rows (algorithm, rbd, Pinocchio parallel, ratio, rbd 1 thread, Pinocchio 1 thread,
    ratio, Pinocchio Python loop): seconds per state; wall clock with ``threads`` threads,
    CPU time with one thread."""
    import pinocchio as pin

    states = np.random.default_rng(3)
    Q = np.array([rbd.random_configuration(model, states) for _ in range(n_states)])
    V = states.normal(size=(n_states, model.nv))
    A = states.normal(size=(n_states, model.nv))
    QT, VT, AT = (np.asfortranarray(X[:, order].T) for X in (Q, V, A))
    out = np.zeros((model.nv, n_states), order="F")
    pool = pin.ModelPool(pm, threads)
    pd = pm.createData()
    kernel = rbd.algorithms.compiled(model)
    saved = kernel.num_threads
    rows = []
    try:
        for name, ours, parallel, single in (
            ("aba", rbd.aba, pin.abaInParallel, pin.aba),
            ("rnea", rbd.rnea, pin.rneaInParallel, pin.rnea),
        ):
            kernel.num_threads = threads
            mine = ours(model, Q, V, A)
            parallel(threads, pool, QT, VT, AT, out)
            diff = rbd.testing.relative_difference(mine[:, order], out.T)
            if diff > AGREEMENT:
                raise SystemExit(f"{model.name} batched {name}: rbd and Pinocchio differ by "
                                 f"{diff:.3g}")
            loop_count = min(n_states, 1000)

            def python_loop(single=single, loop_count=loop_count):
                for k in range(loop_count):
                    single(pm, pd, QT[:, k], VT[:, k], AT[:, k])

            def serial(ours=ours):
                kernel.num_threads = 1
                try:
                    ours(model, Q, V, A)
                finally:
                    kernel.num_threads = threads

            candidates = {
                "rbd": lambda ours=ours: ours(model, Q, V, A),
                "pinocchio": lambda parallel=parallel: parallel(threads, pool, QT, VT, AT, out),
                "rbd1": serial,
                "pinocchio1": lambda parallel=parallel: parallel(1, pool, QT, VT, AT, out),
                "loop": python_loop,
            }
            result = interleaved(candidates, rounds, 0.0, rng, {k: 1 for k in candidates})
            per_state = {k: n_states for k in candidates}
            per_state["loop"] = loop_count
            wall = {k: result[k].median("wall") / per_state[k] for k in candidates}
            cpu = {k: result[k].median("cpu") / per_state[k] for k in candidates}
            rows.append((name, wall["rbd"], wall["pinocchio"],
                         ratio(result, "rbd", "pinocchio", "wall"),
                         cpu["rbd1"], cpu["pinocchio1"], ratio(result, "rbd1", "pinocchio1"),
                         wall["loop"]))
    finally:
        kernel.num_threads = saved
    return rows


# --- reporting ----------------------------------------------------------------------------
def machine() -> str:
    """CPU model name and core count (from lscpu when available)."""
    name = platform.processor() or platform.machine()
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        match = re.search(r"^Model name:\s*(.+)$", text, re.MULTILINE)
        if match:
            name = match.group(1).strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{name}, {os.cpu_count()} cores"


def versions() -> str:
    import pinocchio as pin

    return (f"Python {platform.python_version()}, NumPy {np.__version__}, "
            f"rbd {rbd.__version__}, Pinocchio {pin.__version__}")


def us(t: float) -> str:
    if not np.isfinite(t):
        return "–"
    value = t * 1e6
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def markdown(per_call_rows, batch_rows, overhead_rows, info) -> str:
    lines = [
        SECTION,
        "",
        f"Measured {info['date']} on {info['machine']} ({info['versions']}) with",
        "",
        "```bash",
        info["command"],
        "```",
        "",
        "Every figure is a median over repeated blocks of calls, rbd and Pinocchio "
        "interleaved block by block in a shuffled order; a ratio is the median of the "
        "per-round ratios rbd / Pinocchio (below 1: rbd is faster). Both libraries agreed "
        "to 1e-10 on every model before any timing (Pinocchio's model is built in "
        "depth-first joint order, which its CRBA requires; the states are permuted to "
        "match outside the timed calls). The machine's "
        f"{os.cpu_count()} cores were shared with other work while this ran (load average "
        f"{info['load']} at the end), which inflates wall-clock times and adds noise of "
        "tens of percent. Single-threaded calls are therefore timed by the CPU time of "
        "the calling thread (`time.thread_time`, which does not count time spent waiting "
        "for a core); the wall-clock ratio of the same rounds is shown beside it.",
        "",
        "### Per call from Python",
        "",
        "`rbd.rnea(model, q, v, a)` is the public function (argument checks included), "
        "`pinocchio.rnea(model, data, q, v, a)` Pinocchio's binding with a preallocated "
        "`Data`, and likewise for `crba` and `aba`; the last column is rbd's pure-Python "
        "reference derivation (`backend=\"reference\"`) for scale. Times in µs "
        "(thread CPU time).",
        "",
        "| model | nv | algorithm | rbd | Pinocchio | ratio | ratio (wall clock) | reference |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for model_name, nv, name, t_rbd, t_pin, r_cpu, r_wall, t_ref in per_call_rows:
        lines.append(f"| {model_name} | {nv} | {name} | {us(t_rbd)} | {us(t_pin)} | "
                     f"{r_cpu:.2f} | {r_wall:.2f} | {us(t_ref)} |")
    lines += [
        "",
        f"### Batched: {info['n_states']:,} states",
        "",
        "`rbd.aba(model, Q, V, TAU)` with `(N, nv)` arrays against "
        "`pinocchio.abaInParallel(threads, ModelPool(model, threads), q, v, tau, out)` "
        "(and `rbd.rnea` against `rneaInParallel`): wall clock with "
        f"{info['threads']} threads, and CPU time with one thread (the kernels alone, "
        "free of the machine's load); for scale, a Python loop over `pinocchio.aba` "
        "(wall clock). Times in µs per state.",
        "",
        f"| model | algorithm | rbd, {info['threads']} threads | Pinocchio, "
        f"{info['threads']} threads | ratio | rbd, 1 thread | Pinocchio, 1 thread | ratio "
        "| Python loop over Pinocchio |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model_name, name, w_rbd, w_pin, r_w, c_rbd, c_pin, r_c, t_loop in batch_rows:
        lines.append(f"| {model_name} | {name} | {us(w_rbd)} | {us(w_pin)} | {r_w:.2f} | "
                     f"{us(c_rbd)} | {us(c_pin)} | {r_c:.2f} | {us(t_loop)} |")
    lines += notes(per_call_rows, batch_rows, overhead_rows, info["threads"])
    lines += [
        "",
        "### Call overhead",
        "",
        "On a one-body model a call costs almost nothing but its overhead: argument "
        "checks, dispatch and the allocation of the result. `CompiledModel` is the "
        "compiled entry point that the public function dispatches to "
        "(`rbd.algorithms.compiled(model).rnea(q, v, a)`). Times in µs (thread CPU time).",
        "",
        "| algorithm | rbd public function | rbd CompiledModel method | Pinocchio |",
        "|---|---:|---:|---:|",
    ]
    for name, t_pub, t_meth, t_pin in overhead_rows:
        lines.append(f"| {name} | {us(t_pub)} | {us(t_meth)} | {us(t_pin)} |")
    lines.append("")
    return "\n".join(lines)


def notes(per_call_rows, batch_rows, overhead_rows, threads: int) -> list[str]:
    """A few sentences read off the tables (numbers filled in from this run)."""
    ratios = [(r[5], r[0], r[2]) for r in per_call_rows]
    slower = [f"{alg} on {name} ({r:.2f})" for r, name, alg in ratios if r > 1.0]
    best, worst = min(ratios), max(ratios)
    wall = [r[4] for r in batch_rows]
    single = [r[7] for r in batch_rows]
    ours = [r[5] / r[2] for r in batch_rows]
    theirs = [r[6] / r[3] for r in batch_rows]
    public = [r[1] - r[2] for r in overhead_rows]
    per_call = (
        "every call is faster than Pinocchio's." if not slower else
        "slower than Pinocchio: " + ", ".join(slower) + ". On a model this small the "
        "Python-level dispatch in `rbd.algorithms` (the difference between the public "
        f"function and the `CompiledModel` method, about {np.median(public) * 1e6:.1f} µs "
        "in the overhead table) is a sizable part of the call."
    )
    shared = (" — well short of the thread count, because other work shared the cores"
              if max(ours + theirs) < 0.8 * threads else "")
    return [
        "",
        "Reading the tables:",
        "",
        f"* **Per call**, rbd's public functions take {best[0]:.2f}–{worst[0]:.2f} of "
        f"Pinocchio's time (thread CPU time); {per_call}",
        "* **CRBA** walks each block row of M to the root with the ancestors' motion "
        "subspaces and the composite-inertia force carried once into root-body "
        "coordinates, so each (ancestor, joint) pair costs one 6-vector dot product; its "
        "advantage grows with the depth of the tree (the chains) and is smallest on the "
        "shallow binary tree and the short arm.",
        f"* **Batched**, the per-state ratio with {threads} threads is "
        f"{min(wall):.2f}–{max(wall):.2f} (wall clock). Going from one thread to "
        f"{threads}, rbd ran {min(ours):.1f}–{max(ours):.1f}× and Pinocchio "
        f"{min(theirs):.1f}–{max(theirs):.1f}× faster{shared}; the one-thread CPU times "
        f"compare the kernels themselves: {min(single):.2f}–{max(single):.2f}.",
        "* **Reference derivations** (pure Python, 6×6 NumPy products) take milliseconds: "
        "they are written to be read beside the papers, not timed.",
    ]


def write_section(text: str, path: Path = DOC, section: str = SECTION) -> None:
    """Replace (or add) the ``section`` of ``path`` (``## Core algorithms``), keeping the rest."""
    if path.exists():
        old = path.read_text()
    else:
        old = "# Benchmarks\n\n"
    start = old.find(section + "\n")
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        nxt = re.search(r"^## ", old[start + len(section):], re.MULTILINE)
        end = len(old) if nxt is None else start + len(section) + nxt.start()
        new = old[:start] + text + ("\n" + old[end:] if end < len(old) else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new.rstrip("\n") + "\n")


def peers_ready() -> bool:
    """Pinocchio importable and rbd's kernels built; otherwise say which is missing."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("Pinocchio is not installed (pip install pin); nothing to compare with.")
        return False
    if not rbd.has_kernels():
        print("rbd's compiled kernels are not available; build them first.")
        return False
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, no doc update")
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="models to time")
    parser.add_argument("--states", type=int, default=10_000, help="batch size")
    parser.add_argument("--threads", type=int, default=2, help="threads for the batches")
    parser.add_argument("--no-write", action="store_true", help="do not update the docs page")
    args = parser.parse_args(argv)
    if not peers_ready():
        return 1
    rounds, target = (7, 0.02) if args.quick else (31, 0.05)
    rng = random.Random(0)
    check = np.random.default_rng(0)

    per_call_rows, batch_rows = [], []
    for name in args.models:
        model = rbd.models.get(name)
        pm, order = to_pinocchio(model)
        worst = check_agreement(model, pm, order, check)
        print(f"{name}: nv = {model.nv}, rbd vs Pinocchio max relative difference {worst:.1e}")
        for row in per_call(model, pm, order, rounds, target, rng):
            per_call_rows.append((name, model.nv, *row))
            alg, t_rbd, t_pin, r_cpu, r_wall, t_ref = row
            print(f"  {alg:5s} rbd {us(t_rbd):>6s} µs  Pinocchio {us(t_pin):>6s} µs  "
                  f"ratio {r_cpu:.2f} (wall {r_wall:.2f})  reference {us(t_ref):>6s} µs")
        for row in batched(model, pm, order, args.states, args.threads, max(5, rounds // 3),
                           rng):
            batch_rows.append((name, *row))
            alg, w_rbd, w_pin, r_w, c_rbd, c_pin, r_c, t_loop = row
            print(f"  batch {alg:5s} {args.threads} threads: rbd {us(w_rbd)} Pinocchio "
                  f"{us(w_pin)} (ratio {r_w:.2f});  1 thread: rbd {us(c_rbd)} Pinocchio "
                  f"{us(c_pin)} (ratio {r_c:.2f});  Python loop {us(t_loop)} µs/state")

    import pinocchio as pin

    one = rbd.models.revolute_chain(1)
    pm, order = to_pinocchio(one)
    check_agreement(one, pm, order, check)
    pd = pm.createData()
    kernel = rbd.algorithms.compiled(one)
    q, v, a = rbd.testing.random_state(one, 1)
    overhead_rows = []
    for name in ALGORITHMS:
        call_args = (q,) if name == "crba" else (q, v, a)
        result = interleaved({
            "public": lambda name=name, c=call_args: getattr(rbd, name)(one, *c),
            "method": lambda name=name, c=call_args: getattr(kernel, name)(*c),
            "pinocchio": lambda name=name, c=call_args: getattr(pin, name)(pm, pd, *c),
        }, rounds, target, rng)
        row = (name, result["public"].median(), result["method"].median(),
               result["pinocchio"].median())
        overhead_rows.append(row)
        print(f"overhead {name:5s} public {us(row[1])} µs   method {us(row[2])} µs   "
              f"Pinocchio {us(row[3])} µs")

    info = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "versions": versions(),
        "command": " ".join(["python benchmarks/bench_core.py", *(argv or sys.argv[1:])]),
        "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "n_states": args.states,
        "threads": args.threads,
    }
    text = markdown(per_call_rows, batch_rows, overhead_rows, info)
    if not (args.quick or args.no_write):
        write_section(text)
        print(f"updated {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
