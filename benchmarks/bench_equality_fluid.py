"""Steps with equality constraints and fluid forces: the compiled step, the Python step, mj_step.

Two models: a closed four-bar (a ``connect``) carrying a box held by a soft ``weld`` and a
slider tied to the crank by a ``joint`` equality, on a floor (equality rows and contacts);
and gymnasium's swimmer (``viscosity``: MuJoCo's inertia-box fluid forces).  From a state
20 steps into a MuJoCo run (random velocities), 100-step runs of

* the compiled step (``rbd.simulation.contact.compiled_runs``: ``rbd/_kernels/contact.pyx``
  with ``equality_rows.pyx`` and ``fluid.pyx``), one state;
* ``mujoco.mj_step`` (Euler, Newton, 100 iterations, tolerance 1e-14 as rbd's), timed in
  alternation with the compiled run: medians and, in brackets, minima over the rounds (on a
  loaded machine the minima are the steadier numbers);
* the Python step (``euler_step``: the readable pass with compiled pieces, as these
  models ran before their rows and forces were compiled), 20 steps.

Usage::

    python benchmarks/bench_equality_fluid.py
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import tempfile
import time
import warnings

import numpy as np

import rbd
import rbd.constraints.forward as forward_module
from rbd.simulation.contact import compiled_runs, euler_step

LINKAGE = """<mujoco model="linkage">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="crank" pos="0 0 1"><joint name="crank" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="coupler" pos="0.3 0 0"><joint name="knee" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.6 0 -0.2" size="0.03"/></body>
    </body>
    <body name="rocker" pos="0.7 0 0.6"><joint name="rocker" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 -0.1 0 0.2" size="0.03"/></body>
    <body name="crate" pos="-0.5 0.4 0.2"><freejoint/>
      <geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="slider" pos="0 -0.5 0.3"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>
  </worldbody>
  <equality>
    <connect body1="coupler" body2="rocker" anchor="0.6 0 -0.2"/>
    <weld body1="crate" relpose="-0.5 0.4 0.2 1 0 0 0" solref="0.05 1" torquescale="0.5"/>
    <joint joint1="slide" joint2="crank" polycoef="0 0.2"/>
  </equality>
</mujoco>"""


def seconds(fn, repeat: int) -> float:
    """Median wall time of ``fn()`` over ``repeat`` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(path: str, steps: int = 100, rounds: int = 7) -> dict:
    import mujoco

    from rbd.mjcf import from_mujoco_state

    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler", tight=False)
    d.qvel[:] = 0.5 * np.random.default_rng(0).normal(size=mm.nv)
    for _ in range(20):
        mujoco.mj_step(mm, d)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    dt = float(mm.opt.timestep)
    mm.opt.iterations, mm.opt.tolerance = 100, 1e-14
    qpos, qvel = d.qpos.copy(), d.qvel.copy()

    def mj_run():
        d.qpos[:], d.qvel[:] = qpos, qvel
        for _ in range(steps):
            mujoco.mj_step(mm, d)

    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(seconds(lambda: compiled_runs(model, q[None], v[None], steps, dt), 1)
                    / (steps + 1))
        theirs.append(seconds(mj_run, 1) / steps)

    def python_run(n=20):
        qq, vv = q, v
        for _ in range(n):
            qq, vv, _, _ = euler_step(model, qq, vv, None, dt, backend="kernel")

    saved, forward_module.COMPILED = forward_module.COMPILED, None     # the Python pass
    try:
        python = seconds(python_run, 3) / 20
    finally:
        forward_module.COMPILED = saved
    rows = len(rbd.forward(model, q, v).rows.aref)
    return {"nv": model.nv, "rows": rows, "compiled": statistics.median(ours) * 1e6,
            "mj_step": statistics.median(theirs) * 1e6, "python": python * 1e6,
            "compiled_min": min(ours) * 1e6, "mj_step_min": min(theirs) * 1e6}


def main() -> None:
    import gymnasium

    swimmer = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                           "swimmer.xml")
    machine = platform.processor() or platform.machine()
    print(f"# bench_equality_fluid ({datetime.date.today()}, {machine}, "
          f"load average {os.getloadavg()[0]:.1f}, kernels: {rbd.has_kernels()})\n")
    print("| model | nv | rows | compiled step (µs) | mj_step (µs) | compiled / mj_step | "
          "Python step (µs) | Python / compiled |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # the swimmer's actuators
        linkage = os.path.join(tmp, "linkage.xml")
        with open(linkage, "w") as f:
            f.write(LINKAGE)
        for name, path in (("linkage (equalities, floor)", linkage),
                           ("swimmer (fluid)", swimmer)):
            r = measure(path)
            print(f"| {name} | {r['nv']} | {r['rows']} | {r['compiled']:.1f} "
                  f"({r['compiled_min']:.1f}) | {r['mj_step']:.1f} ({r['mj_step_min']:.1f}) | "
                  f"{r['compiled'] / r['mj_step']:.2f} "
                  f"({r['compiled_min'] / r['mj_step_min']:.2f}) | "
                  f"{r['python']:.0f} | {r['python'] / r['compiled']:.0f} |")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
