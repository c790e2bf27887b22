"""The collision stage alone: rbd.collide (reference, kernel) against MuJoCo's mj_collision.

gymnasium's ant and humanoid at the touching states of ``bench_contact.py`` (a
MuJoCo run of 300 and 400 steps).  Printed, in µs per call:

* ``rbd.collide(model, q, backend="reference")``: the readable stage in Python
  (filters, sweep and prune, parameter mixing, assembly; compiled pair routines);
* ``rbd.collide(model, q)`` on the kernel backend: forward kinematics, the compiled
  stage (``rbd/_kernels/collision.pyx``) and the ``Contacts`` arrays;
* ``collide_into`` alone (the nogil C call a compiled step makes, body poses given,
  contact set allocated once);
* MuJoCo's ``mj_collision`` (geom poses given), and ``mj_kinematics`` +
  ``mj_collision`` (the same work as ``rbd.collide``'s).

Then ``collide_into`` on heaps of n free bodies (spheres, capsules, boxes in a bin
over a floor; every pair passes the filters), with the box test as a sweep and prune
and pair by pair.

Usage::

    python benchmarks/bench_collision.py            # both robots
    python benchmarks/bench_collision.py --quick    # fewer repetitions
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform

from bench_contact import ROBOTS, median_time, setup

import rbd
from rbd.constraints.collision import compiled_collision


def robot_row(name: str, warm: int, repeat: int) -> str:
    """The table row of one robot at its touching state."""
    import mujoco

    model, mm, d, q, _ = setup(name, warm)
    reference = median_time(lambda: rbd.collide(model, q, backend="reference"),
                            max(1, repeat // 2))
    kernel = median_time(lambda: rbd.collide(model, q, backend="kernel"), repeat, 200)
    table = compiled_collision(model)
    T = rbd.forward_kinematics(model, q, backend="kernel")
    into = min(table._time_into(T[:, :3, :3], T[:, :3, 3], 20000) for _ in range(repeat))
    collision = median_time(lambda: mujoco.mj_collision(mm, d), repeat, 2000)

    def kinematics_and_collision():
        mujoco.mj_kinematics(mm, d)
        mujoco.mj_collision(mm, d)

    both = median_time(kinematics_and_collision, repeat, 2000)
    ncon = len(rbd.collide(model, q))
    assert ncon == d.ncon, (ncon, d.ncon)
    return (f"| {name} | {len(model.geoms)} | {table.npairs} | {ncon} | {reference:.0f} | "
            f"{kernel:.1f} | {into * 1e6:.2f} | {collision:.2f} | {both:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    machine = platform.processor() or platform.machine()
    print(f"# bench_collision ({datetime.date.today()}, {machine}, "
          f"load average {os.getloadavg()[0]:.1f}, kernels: {rbd.has_kernels()})\n")
    print("| robot | geoms | table pairs | contacts | rbd.collide reference | rbd.collide kernel "
          "| collide_into | mj_collision | mj_kinematics + mj_collision |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, warm in ROBOTS.items():
        print(robot_row(name, warm, repeat))
    heaps(repeat)


def heaps(repeat: int) -> None:
    """``collide_into`` on heaps of free bodies: sweep and prune against per-pair box tests."""
    import numpy as np

    from rbd._kernels.collision import CollisionModel
    from rbd.constraints.collision import body_tree, static_table

    print("\n| free bodies | table pairs | contacts | sweep and prune (µs) | per pair (µs) |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n in (10, 40, 160):
        model = rbd.Model()
        model.add_geom("floor", None, "plane", (5.0, 5.0, 0.1))
        sizes = {"sphere": (0.1,), "capsule": (0.05, 0.1), "box": (0.08, 0.05, 0.1)}
        for k in range(n):
            model.add_body(None, rbd.Free(), name=f"b{k}")
            kind = list(sizes)[k % 3]
            model.add_geom(f"g{k}", f"b{k}", kind, sizes[kind])
        q = np.zeros(model.nq)
        side = 0.3 * n ** (1 / 3)                       # about the same crowding at every n
        for k in range(n):
            quat = rng.normal(size=4)
            q[7 * k:7 * k + 3] = rng.uniform(-side, side, 3) + [0.0, 0.0, side]
            q[7 * k + 3:7 * k + 7] = quat / np.linalg.norm(quat)
        T = rbd.forward_kinematics(model, q)
        R, p = T[:, :3, :3], T[:, :3, 3]
        arrays = static_table(model.geoms, body_tree(model))
        times = [min(CollisionModel(**arrays, sweep=s)._time_into(R, p, 200)
                     for _ in range(repeat)) * 1e6 for s in (1, 0)]
        ncon = len(rbd.collide(model, q))
        print(f"| {n} | {len(arrays['pair_geom'])} | {ncon} | {times[0]:.1f} | {times[1]:.1f} |")


if __name__ == "__main__":
    main()
