"""Time a robot with a mimic joint (example-robot-data's Panda) against the UR5 and Pinocchio.

Run from the repository root::

    python benchmarks/bench_mimic.py            # prints a table
    python benchmarks/bench_mimic.py --quick    # fewer repetitions

What is timed, in one process, interleaved round by round (each round in a
shuffled order, so a change in machine load hits every column alike; each
time and each ratio is the median over the rounds):

* ``rbd.aba`` / ``rbd.rnea`` / ``rbd.crba`` on the Panda (nq = nv = 8, a full
  tree of 9 joints whose second finger mimics the first) and on the UR5 (6
  joints, no mimic), the public functions, validation included;
* the same Panda calls on the NumPy mapping (``CoupledDynamics`` without its
  compiled coupling: the full tree's compiled kernels, the mapping and
  projection in NumPy, a NumPy Cholesky), the path every call took before
  the compiled coupling (the script runs on older versions too, without
  these rows);
* Pinocchio on its mimic model of the same file
  (``buildModelFromUrdf(path, mimic=True)``): ``rnea`` and ``crba``; its
  ``aba`` refuses mimic joints, so forward dynamics is ``crba``,
  ``nonLinearEffects`` and a NumPy solve; and ``aba`` on its ordinary model
  of the full tree (9 joints) for scale.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import rbd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers import example_robot_data_dir  # noqa: E402


def _block(fn, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def timings(calls: dict, rounds: int, number: int) -> dict[str, list[float]]:
    """Seconds per call of each named call, one block per round, in a shuffled order."""
    for fn in calls.values():
        fn()
    out: dict[str, list[float]] = {name: [] for name in calls}
    rng = random.Random(0)
    for _ in range(rounds):
        names = list(calls)
        rng.shuffle(names)
        for name in names:
            out[name].append(_block(calls[name], number))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    robots = example_robot_data_dir()
    if robots is None:
        sys.exit("example-robot-data is not installed (pip install example-robot-data)")
    panda_path = robots / "panda_description" / "urdf" / "panda.urdf"
    ur5_path = robots / "ur_description" / "urdf" / "ur5_robot.urdf"
    panda, ur5 = rbd.load_urdf(panda_path), rbd.load_urdf(ur5_path)
    rng = np.random.default_rng(0)
    q, v, tau = rbd.random_configuration(panda, rng), rng.normal(size=8), rng.normal(size=8)
    qu, vu, tu = rbd.random_configuration(ur5, rng), rng.normal(size=6), rng.normal(size=6)
    calls = {
        "panda aba": lambda: rbd.aba(panda, q, v, tau),
        "panda rnea": lambda: rbd.rnea(panda, q, v, tau),
        "panda crba": lambda: rbd.crba(panda, q),
        "ur5 aba": lambda: rbd.aba(ur5, qu, vu, tu),
        "ur5 rnea": lambda: rbd.rnea(ur5, qu, vu, tu),
        "ur5 crba": lambda: rbd.crba(ur5, qu),
    }
    try:   # absent before the compiled coupling: the script then times the public calls only
        from rbd.algorithms._coupled import CoupledDynamics
    except ImportError:
        CoupledDynamics = None
    if CoupledDynamics is not None:
        mapping = CoupledDynamics(panda, rbd.algorithms.compiled(panda._full_tree()), "kernel")
        mapping.fast = None
        calls.update({
            "panda aba (NumPy mapping)": lambda: mapping.aba(q, v, tau),
            "panda rnea (NumPy mapping)": lambda: mapping.rnea(q, v, tau),
            "panda crba (NumPy mapping)": lambda: mapping.crba(q),
        })
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    if pin is not None:
        pm = pin.buildModelFromUrdf(str(panda_path), mimic=True)
        pf = pin.buildModelFromUrdf(str(panda_path))
        pd, pdf = pm.createData(), pf.createData()
        qf = np.concatenate([q, q[-1:]])   # finger 2 = finger 1 (multiplier 1, offset 0)
        vf, tf = np.concatenate([v, v[-1:]]), np.zeros(pf.nv)
        assert pm.nv == 8 and pf.nv == 9

        def pin_mimic_aba():
            M = pin.crba(pm, pd, q)
            M = np.triu(M) + np.triu(M, 1).T
            return np.linalg.solve(M, tau - pin.nonLinearEffects(pm, pd, q, v))

        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.abs(M - rbd.crba(panda, q)).max() < 1e-12
        assert np.abs(pin_mimic_aba() - rbd.aba(panda, q, v, tau)).max() < 1e-9
        calls.update({
            "pinocchio mimic rnea": lambda: pin.rnea(pm, pd, q, v, tau),
            "pinocchio mimic crba": lambda: pin.crba(pm, pd, q),
            "pinocchio mimic aba (crba + nle + solve)": pin_mimic_aba,
            "pinocchio full-tree aba (9 joints)": lambda: pin.aba(pf, pdf, qf, vf, tf),
        })
    rounds, number = (5, 2000) if args.quick else (15, 5000)
    t = timings(calls, rounds, number)
    print(f"median µs per call over {rounds} rounds of {number} calls\n")
    for name, values in t.items():
        print(f"  {name:42s} {statistics.median(values) * 1e6:8.2f}")

    def ratio(a, b):
        return statistics.median(x / y for x, y in zip(t[a], t[b], strict=True))

    print("\nratios (median of per-round ratios)")
    for alg in ("aba", "rnea", "crba"):
        line = f"  panda {alg} / ur5 {alg}: {ratio(f'panda {alg}', f'ur5 {alg}'):.2f}"
        if CoupledDynamics is not None:
            line += (f"   NumPy mapping / compiled: "
                     f"{ratio(f'panda {alg} (NumPy mapping)', f'panda {alg}'):.2f}")
        print(line)
    if pin is not None:
        print(f"  panda aba / pinocchio full-tree aba: "
              f"{ratio('panda aba', 'pinocchio full-tree aba (9 joints)'):.2f}")
        print(f"  panda aba / pinocchio mimic aba: "
              f"{ratio('panda aba', 'pinocchio mimic aba (crba + nle + solve)'):.2f}")
        for alg in ("rnea", "crba"):
            print(f"  panda {alg} / pinocchio mimic {alg}: "
                  f"{ratio(f'panda {alg}', f'pinocchio mimic {alg}'):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
