"""Batched RNEA and ABA in lanes of states against the one-state kernel and Pinocchio.

Run from the repository root (Pinocchio 3+ as ``pinocchio``, PyPI ``pin``;
example-robot-data for the Panda arm)::

    python benchmarks/bench_soa.py             # full run, updates docs/benchmarks.md
    python benchmarks/bench_soa.py --quick     # fewer rounds, prints only

Per state, one thread, ``N = 10,000`` states: ``rbd.aba(model, Q, V, TAU)`` /
``rbd.rnea`` with ``(N, nv)`` arrays on each lane build this CPU runs
(``rbd/_kernels/soa.pxi``: AVX-512, AVX2, portable) and with the lanes off
(``set_simd("off")``: the one-state kernel state by state, the batched path before
the lanes), against ``pinocchio.abaInParallel(1, pool, q, v, tau, out)`` /
``rneaInParallel``.  Times are the CPU time of the calling thread
(``time.thread_time``; with one thread the whole batch runs there), the median
over rounds in which the candidates are interleaved in a shuffled order.  A
second table gives the wall-clock time with one and two threads of the default
build (the cores are shared with other work, so wall clock is noisy).

Useful flops per cycle.  The table's last columns divide the arithmetic the algorithm
needs by the cycles one state takes on the default build.  The arithmetic is
Featherstone's operation count for an unbranched chain of ``n`` revolute joints,
as RBDA (R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008)
Table 10.1 lists it from the literature, multiplications plus additions:

* RNEA: ``(93 n - 69) + (81 n - 66) = 174 n - 135`` flops;
* ABA: ``(224 n - 174) + (205 n - 186) = 429 n - 360`` flops.

``n`` is the number of degrees of freedom ``nv``.  For the revolute models (arm7,
Panda, RC20, and tree31, whose branching only lowers the true count) this is the
book's count.  For the humanoid it is the count of a chain of ``nv`` revolute
joints, not of its free, spherical and universal joints.  Its flops per cycle are
therefore an upper estimate.  The book itself is not in the project's sources, so
the four entries are the widely quoted values, not checked against the page.
Cycles per state are the CPU time per state times the clock in ``/proc/cpuinfo``
(``cpu MHz``, the nominal clock).  This machine exposes no cycle counter to
``perf``, so a turbo clock above the nominal one goes unseen.  If it runs faster,
the true flops per cycle are lower than shown.

Models: arm7, the Panda arm of example-robot-data with its fingers fixed (7
revolute joints), the 31-body binary tree, the free-floating humanoid (free,
spherical, universal and revolute joints) and RC20.  Before timing, rbd and
Pinocchio are checked to agree to 1e-10 on each model.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

import rbd
from rbd import interop
from rbd._kernels import _model, _simd
from rbd.spatial import plux_parts

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_core import depth_first, interleaved, machine, ratio, versions, write_section  # noqa: E402
from helpers import example_robot_data_dir  # noqa: E402

SECTION = "## Batches in lanes (structure of arrays)"
NOTE = ("\n"
        'The two-thread column was measured while other work kept both cores busy (the load '
        "average above), so it shows the machine's contention, not the kernels' scaling: blocks"
        ' are independent and `prange` hands them out dynamically, but a ≥ 1.8× speed-up can '
        'only be shown on an idle machine. Where the lanes stand against the target: the '
        'arithmetic of the passes runs in 8-wide vectors, `sin`/`cos` of the revolute joints '
        "included (`_lanes.pxd`'s `sincos_lanes`, within 1 ulp of libm); what remains "
        'scalar per lane is the joint transform of helical, planar and symbolic joints '
        '(none in these models) and the moves of `q`, `q̇`, `τ` in and `q̈` out of the lanes '
        '(strided). The multi-degree-of-freedom pivots of the humanoid take their own paths '
        "(docs/design.md, \"The lane ABA's multi-degree-of-freedom pivots\": the free joint's "
        '`D_i` factored, not inverted; a spherical joint passes on only the lower-right block '
        'of its articulated inertia; articulated inertias in their lower triangles). Of the '
        "humanoid's ABA time, about a third is spent outside the passes, in the argument "
        'checks (finite entries, quaternion norms) and the moves into and out of the lanes '
        '(timed with the passes removed from a build).'
        "\n")
AGREEMENT = 1e-10
#: The issue's bound on the per-state time of the lanes over Pinocchio's, one thread.
TARGET = 0.3


def panda_arm() -> str | None:
    """The Panda URDF of example-robot-data with its finger joints fixed (7 DoF), or None."""
    robots = example_robot_data_dir()
    if robots is None:
        return None
    root = ET.parse(robots / "panda_description" / "urdf" / "panda.urdf").getroot()
    for joint in root.iter("joint"):
        if "finger" in joint.get("name", ""):
            joint.set("type", "fixed")
            for child in list(joint):
                if child.tag in ("mimic", "limit", "axis", "dynamics"):
                    joint.remove(child)
    return ET.tostring(root, encoding="unicode")


def models() -> dict:
    table = {
        "arm7": rbd.models.arm7,
        "tree31": lambda: rbd.models.binary_tree(5),
        "humanoid": rbd.models.humanoid,
        "RC20": lambda: rbd.models.revolute_chain(20),
    }
    xml = panda_arm()
    if xml is not None:
        table = {"arm7": table["arm7"], "panda": lambda: rbd.load_urdf(xml), **{
            k: v for k, v in table.items() if k != "arm7"}}
    return table


def to_pinocchio(model: rbd.Model):
    """Pinocchio's model of ``model`` (revolute, spherical, universal, free joints)."""
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    ids: dict[int, int] = {}
    for i in depth_first(model):
        body = model.bodies[i]
        joint, kind = body.joint, body.joint.kind
        if kind == "revolute":
            aligned = np.flatnonzero(np.isclose(joint.axis, 1.0, rtol=0, atol=1e-14))
            pj = ((pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ)[aligned[0]]()
                  if len(aligned) == 1 else pin.JointModelRevoluteUnaligned(joint.axis))
        elif kind == "spherical":
            pj = pin.JointModelSpherical()
        elif kind == "free":
            pj = pin.JointModelFreeFlyer()
        elif kind == "universal":
            pj = pin.JointModelUniversal(np.asarray(joint.axis1, float),
                                         np.asarray(joint.axis2, float))
        else:
            raise SystemExit(f"{model.name}: no Pinocchio joint for {kind}")
        E, r = plux_parts(body.X_tree)
        parent = 0 if body.parent < 0 else ids[body.parent]
        ids[i] = pm.addJoint(parent, pj, pin.SE3(E.T.copy(), r.copy()), body.joint_name)
        pm.appendBodyToJoint(ids[i], pin.Inertia(body.mass, body.com.copy(),
                                                 body.I_com.copy()), pin.SE3.Identity())
    return pm, interop.pinocchio_map(model, pm)


def featherstone_flops(nv: int, algorithm: str) -> int:
    """Multiplications plus additions of RBDA Table 10.1 for ``nv`` revolute joints."""
    if algorithm == "rnea":
        return (93 * nv - 69) + (81 * nv - 66)
    return (224 * nv - 174) + (205 * nv - 186)


def clock_hz() -> float | None:
    """The CPU clock from ``/proc/cpuinfo`` (``cpu MHz`` of the first core), or None."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return None


def flops_per_cycle(nv: int, algorithm: str, seconds_per_state: float,
                    clock: float | None) -> float | None:
    """Useful flops (``featherstone_flops``) over the cycles one state takes."""
    if clock is None or seconds_per_state <= 0:
        return None
    return featherstone_flops(nv, algorithm) / (seconds_per_state * clock)


def states(model, n: int):
    rng = np.random.default_rng(3)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(n)])
    return Q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def check(model, pm, joint_map, Q, V, T) -> float:
    """Largest relative difference between rbd and Pinocchio, both algorithms, 5 states."""
    import pinocchio as pin

    pd, worst = pm.createData(), 0.0
    for k in range(5):
        qp, vp, tp = joint_map.to_q(Q[k]), joint_map.to_v(Q[k], V[k]), joint_map.to_tau(Q[k], T[k])
        for ours, theirs in ((rbd.aba, pin.aba), (rbd.rnea, pin.rnea)):
            mine = joint_map.to_a(Q[k], V[k], ours(model, Q[k], V[k], T[k])) \
                if ours is rbd.aba else joint_map.to_tau(Q[k], ours(model, Q[k], V[k], T[k]))
            worst = max(worst, rbd.testing.relative_difference(mine, theirs(pm, pd, qp, vp, tp)))
    if worst > AGREEMENT:
        raise SystemExit(f"{model.name}: rbd and Pinocchio differ by {worst:.3g}; not timing")
    return worst


def time_model(model, n: int, rounds: int, rng: random.Random):
    """Rows per algorithm: (name, {candidate: CPU s per state}, ratios, wall 1 and 2 threads)."""
    import pinocchio as pin

    pm, joint_map = to_pinocchio(model)
    Q, V, T = states(model, n)
    check(model, pm, joint_map, Q, V, T)
    QT = np.asfortranarray(joint_map.to_q(Q).T)
    VT = np.asfortranarray(joint_map.to_v(Q, V).T)
    TT = np.asfortranarray(joint_map.to_tau(Q, T).T)
    out = np.zeros((pm.nv, n), order="F")
    pool = pin.ModelPool(pm, 1)
    kernel = rbd.algorithms.compiled(model)
    builds = [b for b in _simd.SIMD_BUILDS if _simd.runnable(b)]
    saved_threads, saved_simd = kernel.num_threads, _model.simd()
    rows = []
    try:
        for name, ours, theirs in (("aba", rbd.aba, pin.abaInParallel),
                                   ("rnea", rbd.rnea, pin.rneaInParallel)):
            def run(choice, threads=1, ours=ours):
                def call():
                    _model.set_simd(choice)
                    kernel.num_threads = threads
                    ours(model, Q, V, T)
                return call

            candidates = {b: run(b) for b in [*builds, "off"]}
            candidates["pinocchio"] = lambda theirs=theirs: theirs(1, pool, QT, VT, TT, out)
            result = interleaved(candidates, rounds, 0.0, rng, {k: 1 for k in candidates})
            cpu = {k: result[k].median() / n for k in candidates}
            ratios = {k: ratio(result, k, "pinocchio") for k in [*builds, "off"]}
            walls = interleaved({"1": run(builds[0], 1), "2": run(builds[0], 2)}, rounds, 0.0,
                                rng, {"1": 1, "2": 1})
            rows.append((name, cpu, ratios, walls["1"].median("wall") / n,
                         walls["2"].median("wall") / n, ratio(walls, "1", "2", "wall")))
    finally:
        kernel.num_threads = saved_threads
        _model.set_simd(saved_simd)
    return rows, builds


def us(t: float) -> str:
    return f"{t * 1e6:.3g}"


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
        "interleaved in a shuffled order. `off` is the batched path without lanes (the "
        "one-state kernel state by state); Pinocchio is `abaInParallel` / "
        "`rneaInParallel` with one thread and a `ModelPool`. Ratios are medians of "
        f"per-round ratios to Pinocchio (the target is ≤ 0.3). Load average at the end: "
        f"{info['load']} on {os.cpu_count()} cores. Times in µs per state. Flops are "
        "RBDA Table 10.1's multiplications plus additions for `nv` revolute joints "
        "(RNEA 174 nv − 135, ABA 429 nv − 360; an upper estimate for the humanoid, "
        "whose joints are not all revolute); cycles per state are the time per state "
        f"times the clock in `/proc/cpuinfo` ({info['clock']}; no cycle counter on this "
        "machine).", "",
        f"| model | nv | algorithm | {head} | off | Pinocchio | "
        + " | ".join(f"{b} / Pinocchio" for b in builds) + " | off / Pinocchio | "
        + f"flops per state | flops per cycle ({builds[0]}) | flops per cycle (Pinocchio) |",
        "|---|---:|---|" + "---:|" * (2 * len(builds) + 6),
    ]
    for model_name, nv, rows in table:
        for name, cpu, ratios, *_ in rows:
            per_cycle = [flops_per_cycle(nv, name, cpu[k], info["clock_hz"])
                         for k in (builds[0], "pinocchio")]
            lines.append(f"| {model_name} | {nv} | {name} | "
                         + " | ".join(us(cpu[b]) for b in builds)
                         + f" | {us(cpu['off'])} | {us(cpu['pinocchio'])} | "
                         + " | ".join(f"{ratios[b]:.2f}" for b in builds)
                         + f" | {ratios['off']:.2f} | {featherstone_flops(nv, name):,} | "
                         + " | ".join("–" if f is None else f"{f:.2f}" for f in per_cycle)
                         + " |")
    met, missed = [], []
    for model_name, _, rows in table:
        for name, _, ratios, *_ in rows:
            (met if ratios[builds[0]] <= TARGET else missed).append(
                f"{model_name} {name.upper()} ({ratios[builds[0]]:.2f})")
    lines += ["", f"Target ≤ {TARGET} (`{builds[0]}` lanes / Pinocchio): met by "
              + (", ".join(met) or "none") + "; not met by " + (", ".join(missed) or "none")
              + "."]
    lines += ["", f"Threads (`{builds[0]}` lanes, wall clock, µs per state; the issue asks "
              "for ≥ 1.8× on two cores):", "",
              "| model | algorithm | 1 thread | 2 threads | speed-up |", "|---|---|---:|---:|---:|"]
    for model_name, _, rows in table:
        for name, _, _, w1, w2, speedup in rows:
            lines.append(f"| {model_name} | {name} | {us(w1)} | {us(w2)} | {speedup:.2f} |")
    return "\n".join(lines) + "\n" + NOTE


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, no doc update")
    parser.add_argument("--states", type=int, default=10_000)
    parser.add_argument("--models", nargs="+", default=None)
    args = parser.parse_args(argv)
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("Pinocchio is not installed (pip install pin); nothing to compare with.")
        return 1
    rounds = 5 if args.quick else 15
    clock = clock_hz()
    rng = random.Random(0)
    table, builds = [], []
    for name, make in models().items():
        if args.models and name not in args.models:
            continue
        model = make()
        rows, builds = time_model(model, args.states, rounds, rng)
        table.append((name, model.nv, rows))
        for alg, cpu, ratios, _, _, speedup in rows:
            fpc = flops_per_cycle(model.nv, alg, cpu[builds[0]], clock)
            print(f"{name:9s} {alg:4s} " + "  ".join(f"{k} {us(t)}" for k, t in cpu.items())
                  + "  ratios " + " ".join(f"{k} {r:.2f}" for k, r in ratios.items())
                  + f"  threads 1→2: {speedup:.2f}×"
                  + ("" if fpc is None else f"  flops/cycle {fpc:.2f}"))
    info = {"date": datetime.date.today().isoformat(), "machine": machine(),
            "clock_hz": clock,
            "clock": "unknown" if clock is None else f"{clock / 1e9:.2f} GHz",
            "versions": versions(), "n": args.states,
            "command": "python benchmarks/bench_soa.py" + (" --quick" if args.quick else ""),
            "load": f"{os.getloadavg()[0]:.1f}"}
    text = markdown(table, builds, info)
    print(text)
    if not args.quick:
        write_section(text, section=SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
