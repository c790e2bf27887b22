"""Per-step cost of a fixed-step simulation: rbd compiled rollout, rbd Python path, MuJoCo.

Same model and integrator everywhere: RK4, dt = 1 ms, no contact, no damping, no
armature.  The MuJoCo model is written from the rbd model (bodies, joint placements and
axes, inertias; no geoms, so no contacts).  ``mj_step`` is timed in a Python loop (its
call overhead, ~0.3 µs, included) and through ``mujoco.rollout`` when available.
Then 1,000 rollouts of arm7 with 1 and 2 threads.

Run: ``python benchmarks/bench_rollout.py [--seconds 1.0]``
"""

from __future__ import annotations

import argparse
import time

import mujoco
import numpy as np

import rbd
from rbd.spatial import rot_to_quat

MODELS = {
    "arm7": rbd.models.arm7,
    "RC20": lambda: rbd.models.revolute_chain(20),
    "RC50": lambda: rbd.models.revolute_chain(50),
    "tree31": lambda: rbd.models.binary_tree(5),
    "humanoid": rbd.models.humanoid,
}


def mjcf(model: rbd.Model, dt: float) -> str:
    """An MJCF text of ``model``: same tree, placements, axes and inertias, no geoms."""
    flat = model.flat_arrays()
    children: dict[int, list[int]] = {}
    for i, p in enumerate(flat["parent"]):
        children.setdefault(int(p), []).append(i)

    def body(i: int) -> str:
        w = rot_to_quat(flat["E_tree"][i].T)          # body axes in parent coordinates
        pos = " ".join(f"{x:.17g}" for x in flat["r_tree"][i])
        quat = " ".join(f"{x:.17g}" for x in (w[3], w[0], w[1], w[2]))
        kind = model.bodies[i].joint.kind
        if kind == "revolute":
            axis = " ".join(f"{x:.17g}" for x in flat["jparams"][i][:3])
            joint = f'<joint type="hinge" axis="{axis}"/>'
        elif kind == "spherical":
            joint = '<joint type="ball"/>'
        elif kind == "universal":       # two hinges in one body (same cost, same DoF)
            joint = "".join(f'<joint type="hinge" axis="{" ".join(f"{x:.17g}" for x in a)}"/>'
                            for a in (flat["jparams"][i][:3], flat["jparams"][i][3:6]))
        elif kind == "free":
            joint = "<freejoint/>"
        else:
            raise ValueError(f"no MJCF joint for {kind}")
        I_c = flat["I_com"][i]
        full = " ".join(f"{x:.17g}" for x in (I_c[0, 0], I_c[1, 1], I_c[2, 2], I_c[0, 1],
                                              I_c[0, 2], I_c[1, 2]))
        com = " ".join(f"{x:.17g}" for x in flat["com"][i])
        inner = "".join(body(c) for c in children.get(i, []))
        return (f'<body pos="{pos}" quat="{quat}">{joint}'
                f'<inertial pos="{com}" mass="{flat["mass"][i]:.17g}" fullinertia="{full}"/>'
                f"{inner}</body>")

    g = " ".join(f"{x:.17g}" for x in flat["gravity"])
    return (f'<mujoco><option timestep="{dt}" integrator="RK4" gravity="{g}">'
            f'<flag contact="disable"/></option><worldbody>'
            + "".join(body(c) for c in children.get(-1, [])) + "</worldbody></mujoco>")


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def per_step(name: str, seconds: float, dt: float = 1e-3) -> tuple:
    model = MODELS[name]()
    rng = np.random.default_rng(0)
    q0, v0 = rbd.random_configuration(model, rng), 0.1 * rng.normal(size=model.nv)
    steps = round(seconds / dt)
    compiled = best_of(lambda: rbd.simulate(model, q0, v0, seconds, dt)) / steps
    python = best_of(lambda: rbd.simulate(model, q0, v0, 0.2, dt, compiled=False), 2) / 200
    m = mujoco.MjModel.from_xml_string(mjcf(model, dt))
    d = mujoco.MjData(m)

    def loop():
        mujoco.mj_resetData(m, d)
        for _ in range(steps):
            mujoco.mj_step(m, d)

    mj = best_of(loop) / steps
    return name, model.nv, compiled, python, mj


def batch(n: int = 1000, seconds: float = 0.1) -> tuple[float, float]:
    model = rbd.models.arm7()
    rng = np.random.default_rng(1)
    q0 = np.array([rbd.random_configuration(model, rng) for _ in range(n)])
    v0 = 0.1 * rng.normal(size=(n, model.nv))
    one = best_of(lambda: rbd.simulate(model, q0, v0, seconds, 1e-3, record_every=10,
                                       num_threads=1), 3)
    two = best_of(lambda: rbd.simulate(model, q0, v0, seconds, 1e-3, record_every=10,
                                       num_threads=2), 3)
    return one, two


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="simulated time per run")
    args = parser.parse_args()
    print("| model | nv | rbd compiled (µs/step) | rbd Python path (µs/step) | "
          "MuJoCo mj_step RK4 (µs/step) | compiled / mj_step | Python / compiled |")
    print("|---|---|---|---|---|---|---|")
    for name in MODELS:
        name, nv, c, p, mj = per_step(name, args.seconds)
        print(f"| {name} | {nv} | {c * 1e6:.2f} | {p * 1e6:.1f} | {mj * 1e6:.2f} | "
              f"{c / mj:.2f} | {p / c:.1f}× |")
    one, two = batch()
    print(f"\n1000 rollouts of arm7, 100 steps each (RK4, dt = 1 ms): 1 thread {one:.3f} s, "
          f"2 threads {two:.3f} s, speed-up {one / two:.2f}×")


if __name__ == "__main__":
    main()
