"""Constrained dynamics per call: rbd's three methods against Pinocchio's constraintDynamics.

The same models and states for both libraries: the four-bar and the slider-crank
(:mod:`rbd.constraints.mechanisms`, one point anchor each, a redundant row),
random trees with two closures to the world (``tests/constraint_cases.py``:
revolute, prismatic, spherical and free joints), and Talos with both soles
welded to the ground (6D each, when example-robot-data is installed).
Pinocchio runs its direct solve (``mu = 0``) where the rows are independent
and its proximal solver where they are not.  rbd runs its default backend
(the compiled solvers of ``rbd/_kernels/constrained.pyx`` when built: one
compiled call per state).  The calls of the two libraries alternate, round
by round, in one process, so both see the same load.  Prints a Markdown table
of the median time per call in µs and the ratios rbd / Pinocchio.

Usage::

    python benchmarks/bench_constraints.py            # every model
    python benchmarks/bench_constraints.py --quick    # fewer repetitions
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import platform
import statistics
import sys
import time

import numpy as np

import rbd
from rbd import constraints as rc
from rbd.constraints import mechanisms as mech

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from constraint_cases import consistent_velocity, random_loops  # noqa: E402

METHODS = ("kkt", "schur", "proximal")


def median_times(fns, repeat: int) -> list[float]:
    """Median over ``repeat`` rounds of the time per call (µs) of 20 calls of each of ``fns``,
    the functions taking turns within a round."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            out.append((time.perf_counter() - t0) / 20 * 1e6)
    return [statistics.median(t) for t in times]


def rbd_call(model, q, v, tau, cs, method):
    """A zero-argument call of ``rbd.constrained_dynamics`` with ``method``."""
    return lambda: rbd.constrained_dynamics(model, q, v, tau, cs, method=method)


def cases():
    """``name -> (model, q, constraints, Pinocchio model or None)``."""
    out = {"four-bar": (mech.four_bar(), mech.four_bar_angles(0.7), None, None),
           "slider-crank": (mech.slider_crank(), mech.slider_crank_coordinates(0.9), None,
                            None)}
    for seed in (0, 1):
        model, q, cs = random_loops(100 + seed, nloops=2, world=True)
        out[f"random loops {seed} (nv={model.nv})"] = (model, q, cs, None)
    try:
        from helpers import example_robot_data_dir

        robots = example_robot_data_dir()
        path = robots and glob.glob(os.path.join(robots, "talos_data/robots/talos_reduced.urdf"))
    except ImportError:
        path = None
    if path:
        model = rbd.load_urdf(path[0], floating_base=True)
        q = rbd.random_configuration(model, np.random.default_rng(11))
        welds = [rc.FrameAnchor(f, None, None, rbd.frame_pose(model, q, f))
                 for f in ("left_sole_link", "right_sole_link")]
        import pinocchio as pin

        out["talos, feet welded"] = (model, q, welds,
                                     pin.buildModelFromUrdf(path[0], pin.JointModelFreeFlyer()))
    return out


def pinocchio_call(model, q, cs, pmodel, v, tau):
    """A zero-argument call of ``pin.constraintDynamics`` on the same rows, or None."""
    try:
        from test_constraints_pinocchio import Twin
    except ImportError:
        return None
    twin = Twin(model, cs if cs else list(model.constraints), q, pmodel)
    rank = rbd.constrained_dynamics(model, q, v, tau, cs or None).rank
    settings = twin.settings(rank)
    m = twin.map
    qp, vp, tp = m.to_q(q), m.to_v(None, v), m.to_v(None, tau)
    import pinocchio as pin

    return lambda: pin.constraintDynamics(twin.P, twin.D, qp, vp, tp, twin.cms, twin.cds,
                                          settings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeat = 5 if args.quick else 21
    print(f"# constrained dynamics, {datetime.date.today()}, {platform.processor() or 'cpu'}, "
          f"load {os.getloadavg()[0]:.1f}\n")
    print("| model | nv | rows | " + " | ".join(f"rbd {m} (µs)" for m in METHODS)
          + " | Pinocchio (µs) | " + " | ".join(f"{m} / Pinocchio" for m in METHODS) + " |")
    print("|---|---|---|" + "---|" * (2 * len(METHODS) + 1))
    for name, (model, q, cs, pmodel) in cases().items():
        rng = np.random.default_rng(0)
        v = consistent_velocity(model, q, cs or None, rng)
        tau = rng.normal(size=model.nv)
        calls = [rbd_call(model, q, v, tau, cs or None, m) for m in METHODS]
        rows = rbd.constraint_jacobian(model, q, cs or None).shape[0]
        theirs = pinocchio_call(model, q, cs, pmodel, v, tau)
        times = median_times(calls + ([theirs] if theirs is not None else []), repeat)
        pin_time = times[len(METHODS)] if theirs is not None else float("nan")
        print(f"| {name} | {model.nv} | {rows} | "
              + " | ".join(f"{t:.1f}" for t in times[:len(METHODS)])
              + f" | {pin_time:.1f} | "
              + " | ".join(f"{t / pin_time:.2f}" for t in times[:len(METHODS)]) + " |")


if __name__ == "__main__":
    main()
