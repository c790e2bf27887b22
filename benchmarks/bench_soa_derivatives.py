"""Batched analytical derivatives in lanes of states against Pinocchio in a Python loop.

Run from the repository root (Pinocchio 3+ as ``pinocchio``, PyPI ``pin``;
example-robot-data for the Panda arm)::

    python benchmarks/bench_soa_derivatives.py            # full run, updates docs/benchmarks.md
    python benchmarks/bench_soa_derivatives.py --quick    # fewer rounds, prints only

Per state, one thread, ``N = 10,000`` states: ``rbd.aba_derivatives(model, Q, V, TAU)``
/ ``rbd.rnea_derivatives`` with ``(N, nv)`` arrays, on each lane build this CPU runs
(``rbd/_kernels/soa_derivatives.pxi``) and with the lanes off (``set_simd("off")``:
the one-state kernel state by state, ``prange`` over the states), against a Python
loop of ``pinocchio.computeABADerivatives(model, data, q, v, tau)`` /
``computeRNEADerivatives`` over the same states (the issue's yardstick: Pinocchio has
no batched derivatives).  The call overhead of that loop is estimated by the same loop
on a one-joint model (whose own work is a few dozen flops); the loop time minus it
estimates Pinocchio's per-call C++ time, a slight underestimate, so the ratio to it
errs against rbd.  Times are the CPU time of the calling thread
(``time.thread_time``), the median over rounds in which the candidates run
interleaved in a shuffled order; rbd's time includes allocating its ``(N, 3, nv, nv)``
result, Pinocchio's loop writes into one ``Data``.  Models and their Pinocchio twins
are those of ``bench_soa.py``; before timing, the two libraries' derivative matrices
are checked to agree to 1e-9 on each model.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_core import interleaved, machine, ratio, versions, write_section  # noqa: E402
from bench_soa import models, states, to_pinocchio, us  # noqa: E402

import rbd  # noqa: E402
from rbd._kernels import _model, _simd  # noqa: E402

SECTION = "## Batched derivatives in lanes"
AGREEMENT = 1e-9
DEFAULT_MODELS = ("arm7", "panda", "tree31", "RC20", "universal13")
#: Beyond bench_soa.py's models: a random tree of universal and revolute joints (their
#: S_i moves with q_i: the lanes' W (8) terms), which Pinocchio expresses with
#: JointModelUniversal.  Planar joints are left out: Pinocchio's planar joint has other
#: coordinates (cos θ, sin θ) and velocities (in the body frame).
EXTRA_MODELS = {"universal13": lambda: rbd.testing.random_model(
    np.random.default_rng(4), 8, ("universal", "revolute"))}
TARGET = 0.5
NOTE = ("Where the time goes (`perf`, AVX-512): the sweeps of `soa_derivatives.pxi` and "
        "the lane ABA run in 8-wide vectors; `sin`/`cos` stay scalar per lane. What grows "
        "with the result is memory: rbd's `(N, 3, nv, nv)` result is a new array each call "
        "(230 MB for tree31 at N = 10,000, 96 MB for RC20), whose pages the kernel zeroes on "
        "first touch (`clear_page_erms`, the largest entry of tree31's profile), and the "
        "`3 nv²` entries of each state move from lanes to rows; Pinocchio's loop reuses one "
        "`Data`. Universal and planar joints run in lanes too (their `W (8)` terms); "
        "`universal13` is a random tree of universal and revolute joints. The machine is "
        "shared: ratios move by about ±0.1 between runs at this load.")


def permutation(model, joint_map) -> np.ndarray:
    """rbd's index of each of Pinocchio's velocity coordinates (revolute models only)."""
    q = rbd.neutral(model)
    return np.asarray(np.rint(joint_map.to_v(q, np.arange(model.nv, dtype=float))), int)


def moving_axes(model) -> bool:
    """Has ``model`` a universal joint?  Pinocchio 4.1's ``computeRNEADerivatives`` and
    ``computeABADerivatives`` leave out the derivative of such a joint's motion subspace
    (their ``∂τ/∂q`` differs from their own ``rnea``'s finite differences by about 50 %
    on ``universal13``), so only ``M`` and ``M⁻¹`` are compared there."""
    return any(body.joint.kind == "universal" for body in model.bodies)


def check(model, pm, perm, Q, V, T) -> float:
    """Largest relative difference of the six derivative matrices (of ``M`` and ``M⁻¹``
    only on a model with :func:`moving_axes`), 3 states."""
    import pinocchio as pin

    pd, worst, ix = pm.createData(), 0.0, np.ix_(perm, perm)
    for k in range(3):
        q, v, t = Q[k], V[k], T[k]
        qp, vp, tp = q[perm], v[perm], t[perm]
        ours = rbd.rnea_derivatives(model, q, v, t)
        pin.computeRNEADerivatives(pm, pd, qp, vp, tp)
        theirs = [pd.dtau_dq.copy(), pd.dtau_dv.copy(), np.triu(pd.M) + np.triu(pd.M, 1).T]
        ours += rbd.aba_derivatives(model, q, v, t)
        pin.computeABADerivatives(pm, pd, qp, vp, tp)
        theirs += [pd.ddq_dq.copy(), pd.ddq_dv.copy(),
                   np.triu(pd.Minv) + np.triu(pd.Minv, 1).T]
        for j, (o, t_) in enumerate(zip(ours, theirs, strict=True)):
            if j in (2, 5) or not moving_axes(model):
                worst = max(worst, rbd.testing.relative_difference(o[ix], t_))
    if worst > AGREEMENT:
        raise SystemExit(f"{model.name}: rbd and Pinocchio differ by {worst:.3g}; not timing")
    return worst


def one_joint():
    """A one-joint Pinocchio model and its state: the per-call overhead of the loop."""
    import pinocchio as pin

    pm = pin.Model()
    j = pm.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "j")
    pm.appendBodyToJoint(j, pin.Inertia.Random(), pin.SE3.Identity())
    return pm, pm.createData(), np.array([0.3]), np.array([0.2]), np.array([0.1])


def time_model(model, n: int, rounds: int, rng: random.Random):
    """Rows per algorithm: (name, {candidate: CPU s per state}, {candidate: ratio})."""
    import pinocchio as pin

    pm, joint_map = to_pinocchio(model)
    if pm.nq != model.nv:
        raise SystemExit(f"{model.name}: only models with one coordinate per joint here")
    perm = permutation(model, joint_map)
    Q, V, T = states(model, n)
    check(model, pm, perm, Q, V, T)
    QP, VP, TP = (np.ascontiguousarray(X[:, perm]) for X in (Q, V, T))
    pd = pm.createData()
    small = one_joint()
    kernel = rbd.algorithms.compiled(model)
    builds = [b for b in _simd.SIMD_BUILDS if _simd.runnable(b)]
    saved_threads, saved_simd = kernel.num_threads, _model.simd()
    rows = []
    try:
        kernel.num_threads = 1
        for name, ours, theirs in (
                ("aba_derivatives", rbd.aba_derivatives, pin.computeABADerivatives),
                ("rnea_derivatives", rbd.rnea_derivatives, pin.computeRNEADerivatives)):
            def run(choice, ours=ours):
                def call():
                    _model.set_simd(choice)
                    ours(model, Q, V, T)
                return call

            def loop(theirs=theirs):
                for k in range(n):
                    theirs(pm, pd, QP[k], VP[k], TP[k])

            def overhead(theirs=theirs):
                m1, d1, q1, v1, t1 = small
                for _ in range(n):
                    theirs(m1, d1, q1, v1, t1)

            candidates = {b: run(b) for b in [*builds, "off"]}
            candidates["pinocchio loop"] = loop
            candidates["loop overhead"] = overhead
            result = interleaved(candidates, rounds, 0.0, rng, {k: 1 for k in candidates})
            cpu = {k: result[k].median() / n for k in candidates}
            cpu["pinocchio C++"] = cpu["pinocchio loop"] - cpu["loop overhead"]
            ratios = {k: ratio(result, k, "pinocchio loop") for k in [*builds, "off"]}
            cxx = np.asarray(result["pinocchio loop"].cpu) - np.asarray(
                result["loop overhead"].cpu)
            ratios["vs C++"] = float(np.median(np.asarray(result[builds[0]].cpu) / cxx))
            rows.append((name, cpu, ratios))
    finally:
        kernel.num_threads = saved_threads
        _model.set_simd(saved_simd)
    return rows, builds


def markdown(table, builds, info) -> str:
    head = " | ".join(f"{b} lanes" for b in builds)
    lines = [
        SECTION, "",
        f"Measured {info['date']} on {info['machine']} ({info['versions']}); lane build "
        f"chosen at import: `{builds[0]}` (instruction sets built: {', '.join(builds)}), "
        f"W = 8 states a block. Command:", "",
        "```bash", info["command"], "```", "",
        f"Per state, one thread, N = {info['n']:,} states: CPU time of the calling thread "
        "(`time.thread_time`), the median over rounds in which the candidates run "
        "interleaved in a shuffled order (`benchmarks/bench_soa_derivatives.py`). `off` is "
        "the batched path without lanes (the one-state kernel state by state). The "
        "yardstick is a Python loop of `pinocchio.computeABADerivatives` / "
        "`computeRNEADerivatives` over the same states; `C++` is that loop minus the same "
        "loop on a one-joint model, an estimate (from below) of Pinocchio's own time per "
        "call. Ratios are medians of per-round ratios (the issue's target for "
        f"`aba_derivatives`: ≤ 0.5 of the loop). Load average at the end: {info['load']} on "
        f"{os.cpu_count()} cores. Times in µs per state.", "",
        f"| model | nv | algorithm | {head} | off | Pinocchio loop | Pinocchio C++ | "
        + " | ".join(f"{b} / loop" for b in builds)
        + f" | off / loop | {builds[0]} / C++ |",
        "|---|---:|---|" + "---:|" * (2 * len(builds) + 5),
    ]
    for model_name, nv, rows in table:
        for name, cpu, ratios in rows:
            lines.append(f"| {model_name} | {nv} | `{name}` | "
                         + " | ".join(us(cpu[b]) for b in builds)
                         + f" | {us(cpu['off'])} | {us(cpu['pinocchio loop'])} | "
                         + f"{us(cpu['pinocchio C++'])} | "
                         + " | ".join(f"{ratios[b]:.2f}" for b in builds)
                         + f" | {ratios['off']:.2f} | {ratios['vs C++']:.2f} |")
    verdict = []
    if any(name in EXTRA_MODELS for name, _, _ in table):
        lines += ["", "Pinocchio's derivatives of universal joints are not correct "
                  "(`moving_axes` in the script): on `universal13` its row times the same "
                  "algorithm but answers another question, and only `M`, `M⁻¹` were "
                  "checked."]
    for model_name, _, rows in table:
        r = dict((name, ratios[builds[0]]) for name, _, ratios in rows)["aba_derivatives"]
        verdict.append(f"{model_name} {r:.2f} ({'met' if r <= TARGET else 'not met'})")
    lines += ["", f"The target for `aba_derivatives` (≤ {TARGET} of the Pinocchio loop, "
              f"`{builds[0]}` lanes, this run): " + ", ".join(verdict) + ".", "", NOTE]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no doc update")
    parser.add_argument("--states", type=int, default=10_000)
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS))
    args = parser.parse_args(argv)
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("Pinocchio is not installed (pip install pin); nothing to compare with.")
        return 1
    rounds = 3 if args.quick else 7
    rng = random.Random(0)
    table, builds = [], []
    for name, make in {**models(), **EXTRA_MODELS}.items():
        if name not in args.models:
            continue
        model = make()
        rows, builds = time_model(model, args.states, rounds, rng)
        table.append((name, model.nv, rows))
        for alg, cpu, ratios in rows:
            print(f"{name:7s} {alg:16s} " + "  ".join(f"{k} {us(t)}" for k, t in cpu.items())
                  + "  ratios " + " ".join(f"{k} {r:.2f}" for k, r in ratios.items()),
                  flush=True)
    info = {"date": datetime.date.today().isoformat(), "machine": machine(),
            "versions": versions(), "n": args.states,
            "command": "python benchmarks/bench_soa_derivatives.py"
                       + (" --quick" if args.quick else ""),
            "load": f"{os.getloadavg()[0]:.1f}"}
    text = markdown(table, builds, info)
    print(text)
    if not args.quick:
        write_section(text, section=SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
