"""Mesh geoms on the collision stage and the contact step: compiled against the readable path
and MuJoCo, in one process.

Three scenes: two of the tests (``tests/test_collision_mesh_kernel.py``'s drops), an
irregular convex mesh (30 vertices) resting on a tilted floor (plane–mesh, two or three
contacts) and a ball resting on a static mesh (sphere–mesh, GJK on the hull); and the mesh
resting on a tilted box (box–mesh: GJK/EPA and MuJoCo's one-pass multi-contact,
``rbd/_kernels/collision_multi.pyx``).  Printed, in µs:

* ``collide_into`` alone (the nogil C call of the compiled step, body poses given) and
  MuJoCo's ``mj_collision`` (geom poses given);
* ``rbd.collide(model, q)`` as the default backend runs it now (the compiled stage,
  ``rbd/_kernels/collision_mesh.pyx``) and as it ran before mesh pairs were compiled (the
  same build with the former dispatch: ``collision.reference_only`` true for any mesh
  pair, so the readable stage in Python; for the box, the readable stage it took until
  the multi-contact was compiled), and MuJoCo's ``mj_kinematics`` + ``mj_collision``;
* one contact step: ``rbd.simulate(..., integrator="euler")`` per step (the compiled
  rollout now, the Python step on the readable stage before) and ``mj_step``.

Usage::

    python benchmarks/bench_mesh.py            # median of 7 rounds
    python benchmarks/bench_mesh.py --quick
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import sys
import tempfile
from pathlib import Path

from bench_contact import median_time

import rbd
from rbd.constraints import collision, forward_compiled

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_collision_mesh import _cloud, _vertex_text  # noqa: E402

#: (world geoms and the body's opening tag, the body's geom, MuJoCo steps to a resting
#: contact, steps of a timed run): the ball rolls off the mesh's top after 94 steps, so its
#: runs start at 50 and are 40 steps long.
SCENES = {
    "mesh on a floor": ('<geom type="plane" size="0 0 1" euler="5 3 0"/>'
                        '<body pos="0 0 0.12" euler="20 40 10">', '<geom type="mesh" mesh="m"/>',
                        100, 250),
    "ball on a mesh": ('<geom type="mesh" mesh="m" euler="10 5 0"/><body pos="0.01 0.005 0.2">',
                       '<geom type="sphere" size="0.03"/>', 50, 40),
    "mesh on a box": ('<geom type="box" size="0.3 0.3 0.05" pos="0 0 -0.05" euler="5 3 0"/>'
                      '<body pos="0 0 0.12" euler="20 40 10">', '<geom type="mesh" mesh="m"/>',
                      100, 250),
}


@contextlib.contextmanager
def former_dispatch():
    """The dispatch before mesh pairs were compiled: any mesh pair keeps the readable stage."""
    saved = collision.reference_only, forward_compiled.reference_only

    def reference_only(model):
        return saved[0](model) or any(g.kind == "mesh" for g in model.geoms)

    collision.reference_only = forward_compiled.reference_only = reference_only
    try:
        yield
    finally:
        collision.reference_only, forward_compiled.reference_only = saved


def scene(name: str, directory: Path):
    """rbd and MuJoCo models of a scene, settled in MuJoCo (resting contact)."""
    import mujoco

    world, geom, settle, _ = SCENES[name]
    path = directory / "scene.xml"
    path.write_text(f'<mujoco><option timestep="0.004"/><asset><mesh name="m" '
                    f'vertex="{_vertex_text(_cloud())}"/></asset><worldbody>{world}'
                    f'<freejoint/>{geom}</body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler")
    for _ in range(settle):
        mujoco.mj_step(mm, d)
    mujoco.mj_forward(mm, d)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    return model, mm, d, q, v


def row(name: str, repeat: int) -> str:
    import mujoco

    with tempfile.TemporaryDirectory() as directory:
        model, mm, d, q, v = scene(name, Path(directory))
    steps, dt = SCENES[name][3], mm.opt.timestep
    assert not collision.reference_only(model)
    now = median_time(lambda: rbd.collide(model, q), repeat, 200)
    run = median_time(lambda: rbd.simulate(model, q, v, steps * dt, dt, integrator="euler"),
                      repeat, 3) / steps
    with former_dispatch():
        assert collision.reference_only(model)
        before = median_time(lambda: rbd.collide(model, q), repeat, 20)
        run_before = median_time(lambda: rbd.simulate(model, q, v, steps * dt, dt,
                                                      integrator="euler"), repeat, 1) / steps

    def kinematics_and_collision():
        mujoco.mj_kinematics(mm, d)
        mujoco.mj_collision(mm, d)

    peer = median_time(kinematics_and_collision, repeat, 2000)
    T = rbd.forward_kinematics(model, q)
    into = min(collision.compiled_collision(model)._time_into(T[:, :3, :3], T[:, :3, 3], 20000)
               for _ in range(repeat)) * 1e6
    alone = median_time(lambda: mujoco.mj_collision(mm, d), repeat, 2000)
    start = (d.qpos.copy(), d.qvel.copy())

    def mj_steps():
        d.qpos[:], d.qvel[:] = start
        for _ in range(steps):
            mujoco.mj_step(mm, d)

    step = median_time(mj_steps, repeat, 20) / steps
    ncon = len(rbd.collide(model, q))
    return (f"| {name} | {ncon} | {into:.2f} | {alone:.2f} | {into / alone:.2f} | "
            f"{before:.0f} | {now:.1f} | {peer:.1f} | {now / peer:.2f} | "
            f"{run_before:.0f} | {run:.1f} | {step:.1f} | {run / step:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    machine = platform.processor() or platform.machine()
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {machine}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print("| scene | contacts | collide_into (µs) | mj_collision (µs) | ratio | collide "
          "before (µs) | collide now (µs) | mj_kinematics + mj_collision (µs) | ratio | step "
          "before (µs) | step now (µs) | mj_step (µs) | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in SCENES:
        print(row(name, repeat))


if __name__ == "__main__":
    main()
