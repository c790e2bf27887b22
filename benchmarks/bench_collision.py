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


def main() -> None:
    import mujoco

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
        print(f"| {name} | {len(model.geoms)} | {table.npairs} | {ncon} | {reference:.0f} | "
              f"{kernel:.1f} | {into * 1e6:.2f} | {collision:.2f} | {both:.2f} |")


if __name__ == "__main__":
    main()
