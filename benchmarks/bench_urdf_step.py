"""Contact steps of URDF robots: ``rbd.simulate(..., integrator="euler")`` against MuJoCo's
``mj_step`` on MuJoCo's reading of the same file.

Two robots of example-robot-data:

* Panda (fixed base, its two fingers coupled by a ``<mimic>``): rbd's default reading
  removes the mimic joint's coordinate (``mimic="exact"``, Pinocchio's), which the
  compiled contact step does not take, so the run takes the readable step; with
  ``mimic="equality"`` (MuJoCo's reading: a coupling row) it runs compiled.
* solo12 on a floor added to both (``model.add_geom`` / ``MjSpec``), dropped from 0.4 m:
  its collision meshes collide through their convex hulls (32 contacts at rest).

Printed: the wall time per step of a run of ``--steps`` steps (one call of
``rbd.simulate``; ``mj_step`` in a Python loop), best of ``--repeat``, and the ratio.
MuJoCo: Euler, Newton, the model's own iterations and tolerance on both sides.

Usage::

    python benchmarks/bench_urdf_step.py
    python benchmarks/bench_urdf_step.py --steps 500 --repeat 5
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import warnings

import numpy as np
from bench_load import _robots_dir, best

import rbd


def _mujoco_model(mujoco, path, robots, floating: bool):
    spec = rbd.testing.mujoco_urdf_spec(path, robots.parent.parent)
    if floating:
        spec.bodies[1].add_freejoint()
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    return spec.compile()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    import mujoco

    robots = _robots_dir()
    if robots is None:
        print("example-robot-data is not installed")
        return 0
    print(f"# bench_urdf_step ({datetime.date.today()}, {platform.machine()}, load average "
          f"{os.getloadavg()[0]:.1f}; {args.steps} steps, best of {args.repeat})\n")
    print("| robot | rbd reading | rbd (µs/step) | mj_step (µs/step) | ratio |")
    print("|---|---|---:|---:|---:|")
    cases = (("panda", "panda_description/urdf/panda.urdf", False,
              [0, 0, 0, -1.0, 0, 1.0, 0, 0.02, 0.01], ("exact", "equality")),
             ("solo12 on a floor", "solo_description/robots/solo12.urdf", True, None,
              ("exact",)))
    for label, relative, floating, start, readings in cases:
        path = robots / relative
        mm = _mujoco_model(mujoco, path, robots, floating)
        d = mujoco.MjData(mm)
        if start is not None:
            d.qpos[:] = start
        else:
            d.qpos[2] = 0.4
        q0 = d.qpos.copy()
        dt = float(mm.opt.timestep)

        def mj(q0=q0, d=d, mm=mm):
            d.qpos[:], d.qvel[:] = q0, 0.0
            for _ in range(args.steps):
                mujoco.mj_step(mm, d)

        theirs = best(mj, args.repeat) / args.steps
        for reading in readings:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                model = rbd.load_urdf(path, floating, mimic=reading)
            if floating:
                model.add_geom("floor", None, "plane", size=(0, 0, 1))
            from rbd.mjcf import from_mujoco_state

            q = from_mujoco_state(model, q0)[0] if model.nq == mm.nq else rbd.neutral(model)
            if start is not None and model.nq < mm.nq:
                q[:] = np.asarray(start)[:model.nq]

            def run(model=model, q=q, dt=dt):
                return rbd.simulate(model, q, np.zeros(model.nv), args.steps * dt, dt,
                                    integrator="euler")

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ours = best(run, args.repeat) / args.steps
            print(f"| {label} | mimic={reading!r} | {ours * 1e6:.1f} | {theirs * 1e6:.1f} | "
                  f"{ours / theirs:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
