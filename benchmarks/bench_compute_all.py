"""Time ``rbd.compute_all`` against one ``rbd.aba`` call, and the one-call functions before/after.

Run from the repository root::

    python benchmarks/bench_compute_all.py                       # compute_all vs aba
    python benchmarks/bench_compute_all.py --baseline /path/to/old/checkout
    python benchmarks/bench_compute_all.py --write               # append to docs/benchmarks.md

What is timed (thread CPU time, the machinery of ``bench_core.py``: blocks of
calls interleaved in a shuffled order each round, medians of per-round ratios):

* ``compute_all``: ``rbd.compute_all(model, q, v, data=data, frames=(frame,))``
  with a reused ``rbd.Data`` (M, its factor, h, g, world poses and one frame
  Jacobian) against one ``rbd.aba(model, q, v, tau)`` call, and against the
  separate calls ``crba`` + ``nonlinear_effects`` + ``jacobian`` that give the same
  M, h and J, on the humanoid of ``rbd.models`` and RC20 (and the 7-DoF arm, the
  31-body binary tree);
* with ``--baseline DIR`` (a checkout with built kernels, e.g. the commit before
  the stages): the one-call functions of this tree against the same functions of
  ``DIR``, each side in its own child process, the two alternating round by
  round; each child reports thread CPU times, and the ratio this / baseline is
  the median over the rounds of the per-round ratios.

OpenBLAS (behind the dense factor and ``aba_derivatives``) is held to one thread
(``OPENBLAS_NUM_THREADS=1`` unless set), as in ``bench_derivatives.py``: its idle
threads spin, and on a shared machine that shows in every other timing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy loads OpenBLAS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench_core  # noqa: E402  (the timing machinery; imports rbd from sys.path)

import rbd  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## One Data, computed in stages: `compute_all`"

#: model name -> (builder, the frame whose Jacobian is asked for)
MODELS = {
    "humanoid": (rbd.models.humanoid, "left_foot"),
    "RC20": (lambda: rbd.models.revolute_chain(20), None),
    "arm7": (rbd.models.arm7, None),
    "tree31": (lambda: rbd.models.binary_tree(5), None),
}
#: The one-call functions timed before/after, with the arguments they take.
ONE_CALL = ("rnea", "crba", "aba", "nonlinear_effects", "gravity_forces", "jacobian",
            "forward_kinematics", "mass_matrix_inverse", "aba_derivatives")


def build(name: str):
    make, frame = MODELS[name]
    model = make()
    return model, frame or model.body_names[-1]


def compute_all_rows(rounds: int, target: float, rng: random.Random) -> list[tuple]:
    """Rows (model, nv, aba µs, compute_all µs, ratio, separate µs, ratio)."""
    rows = []
    for name in MODELS:
        model, frame = build(name)
        q, v, tau = rbd.testing.random_state(model, 11)
        data = rbd.Data(model)
        frames = (frame,)
        data = rbd.compute_all(model, q, v, data=data, frames=frames)
        worst = max(rbd.testing.relative_difference(data.M, rbd.crba(model, q)),
                    rbd.testing.relative_difference(data.h, rbd.nonlinear_effects(model, q, v)),
                    rbd.testing.relative_difference(data.jacobians[frame],
                                                    rbd.jacobian(model, q, frame)))
        if worst > bench_core.AGREEMENT:
            raise SystemExit(f"{name}: compute_all and the one-call functions differ by {worst}")

        def separate(model=model, q=q, v=v, frame=frame):
            rbd.crba(model, q)
            rbd.nonlinear_effects(model, q, v)
            rbd.jacobian(model, q, frame)

        candidates = {
            "aba": lambda model=model, q=q, v=v, tau=tau: rbd.aba(model, q, v, tau),
            "all": lambda model=model, q=q, v=v, data=data, frames=frames: rbd.compute_all(
                model, q, v, data=data, frames=frames),
            "separate": separate,
        }
        result = bench_core.interleaved(candidates, rounds, target, rng)
        rows.append((name, model.nv, result["aba"].median(), result["all"].median(),
                     bench_core.ratio(result, "all", "aba"), result["separate"].median(),
                     bench_core.ratio(result, "separate", "aba")))
    return rows


def one_call_candidates() -> dict:
    """``"model/function" -> callable`` for the one-call functions on every model."""
    candidates = {}
    for name in MODELS:
        model, frame = build(name)
        q, v, a = rbd.testing.random_state(model, 5)
        args = {"rnea": (q, v, a), "crba": (q,), "aba": (q, v, a),
                "nonlinear_effects": (q, v), "gravity_forces": (q,), "jacobian": (q, frame),
                "forward_kinematics": (q,), "mass_matrix_inverse": (q,),
                "aba_derivatives": (q, v, a)}
        for fn in ONE_CALL:
            function = getattr(rbd, fn)
            candidates[f"{name}/{fn}"] = (
                lambda f=function, model=model, x=args[fn]: f(model, *x))
    return candidates


def child(rounds: int, target: float, seed: int) -> None:
    """Print the median CPU seconds per call of every one-call candidate (JSON)."""
    candidates = one_call_candidates()
    for fn in candidates.values():
        # the first call compiles the model: outside the calibration of the block size
        fn()
    result = bench_core.interleaved(candidates, rounds, target, random.Random(seed))
    print(json.dumps({key: timing.median() for key, timing in result.items()}))


def before_after(baseline: Path, rounds: int, child_rounds: int, target: float,
                 rng: random.Random) -> dict[str, tuple[float, float, float]]:
    """``key -> (baseline s, this tree s, median per-round ratio this / baseline)``."""
    sides = {"before": str(baseline), "after": str(ROOT)}
    samples: dict[str, list[dict]] = {side: [] for side in sides}
    for k in range(rounds):
        order = list(sides)
        rng.shuffle(order)
        for side in order:
            env = dict(os.environ, PYTHONPATH=sides[side])
            out = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child",
                 "--rounds", str(child_rounds), "--seed", str(k)],
                env=env, cwd=str(HERE), capture_output=True, text=True, check=True)
            samples[side].append(json.loads(out.stdout.strip().splitlines()[-1]))
    table = {}
    for key in samples["after"][0]:
        before = np.array([s[key] for s in samples["before"]])
        after = np.array([s[key] for s in samples["after"]])
        table[key] = (float(np.median(before)), float(np.median(after)),
                      float(np.median(after / before)))
    return table


def markdown(rows, table, info) -> str:
    lines = [
        SECTION,
        "",
        f"Measured {info['date']} on {info['machine']} (load average {info['load']} at the "
        "end; the cores were shared with other work) with",
        "",
        "```bash",
        info["command"],
        "```",
        "",
        "`rbd.compute_all(model, q, v, data=data, frames=(frame,))` with a reused "
        "`rbd.Data` fills M (armature included), its factor, h, g, the world poses, the "
        "body centres of mass and one frame Jacobian. It is timed against one "
        "`rbd.aba(model, q, v, tau)` call and against the three calls `crba` + "
        "`nonlinear_effects` + `jacobian` that give the same M, h and J. Thread CPU time "
        "in µs; ratios are medians of per-round ratios (`bench_core.py`'s machinery).",
        "",
        "| model | nv | aba | compute_all | compute_all / aba | crba + h + J | "
        "(crba + h + J) / aba |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, nv, t_aba, t_all, r_all, t_sep, r_sep in rows:
        lines.append(f"| {name} | {nv} | {bench_core.us(t_aba)} | {bench_core.us(t_all)} | "
                     f"{r_all:.2f} | {bench_core.us(t_sep)} | {r_sep:.2f} |")
    if table:
        lines += [
            "",
            "### The one-call functions before and after the stages",
            "",
            f"This tree against `{info['baseline']}` (the commit before the stages, built "
            "alike), each side in its own child process, the two alternating "
            f"{info['rounds']} times; µs of thread CPU time (medians) and the median of the "
            "per-round ratios after / before (1.00: unchanged).",
            "",
            "| model | function | before | after | after / before |",
            "|---|---|---|---|---|",
        ]
        for key, (before, after, r) in table.items():
            model, fn = key.split("/")
            lines.append(f"| {model} | `{fn}` | {bench_core.us(before)} | "
                         f"{bench_core.us(after)} | {r:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--baseline", type=Path, help="a checkout with built kernels")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of timing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="append to docs/benchmarks.md")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    target = 0.002 if args.quick else 0.005
    if args.child:
        child(args.rounds or 3, target, args.seed)
        return 0
    if not rbd.has_kernels():
        raise SystemExit("the compiled kernels are not built")
    rng = random.Random(args.seed)
    rounds = args.rounds or (5 if args.quick else 41)
    rows = compute_all_rows(rounds, target, rng)
    table = {}
    if args.baseline is not None:
        table = before_after(args.baseline.resolve(), 4 if args.quick else 8,
                             3 if args.quick else 5, target, rng)
    info = {
        "date": datetime.date.today().isoformat(),
        "machine": bench_core.machine(),
        "load": f"{os.getloadavg()[0]:.1f}",
        "command": "python benchmarks/bench_compute_all.py " + " ".join(argv or sys.argv[1:]),
        "baseline": "" if args.baseline is None else args.baseline.name,
        "rounds": 4 if args.quick else 8,
    }
    text = markdown(rows, table, info)
    print(text)
    if args.write:
        with DOC.open("a") as stream:
            stream.write("\n" + text)
        print(f"appended to {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
