"""Contact steps per call: rbd's semi-implicit Euler with contacts against MuJoCo's mj_step.

gymnasium's ant and humanoid, at a state of a MuJoCo run where the robot
touches the floor (the ant standing after 3 s, the humanoid on the floor after
2 s).  Both libraries take the same model file with MuJoCo's Euler integrator
and its Newton solver, and both solve with the model's own iterations and
tolerance (the file's ``<option>``, MuJoCo's defaults where it says nothing:
``rbd.constraints.mujoco_model.solver_settings``; rbd's compiled step stops on
MuJoCo's criterion, the tolerance scaled as MuJoCo scales it), so that both do the
same work.  ``mj_step`` at tolerance 1e-14 is timed too, for information.  Printed:

* the time per step of a 100-step run: ``rbd.simulate(..., integrator="euler")``
  on the reference path (``backend="reference"``: readable solver and narrow
  phase) and on the kernel path (compiled solver and pair routines), and
  ``mujoco.mj_step`` in a loop;
* where one ``rbd.forward`` call spends its time on each backend: the
  collision stage (``rbd.collide``), the solver on the finished rows, and the
  rest (smooth dynamics, rows, Jacobians, argument checks);
* the compiled step alone (``rbd/_kernels/contact.pyx`` through
  ``rbd.simulation.contact.compiled_runs``, one state) against ``mj_step``, both with
  the model's iterations and tolerance, the two timed in alternation, in wall
  time and in the calling thread's CPU time (``time.thread_time``: both calls run in that
  thread; on a loaded machine the wall time also counts the waits for a core); and a
  batch of 8 initial states run on 1 and on 2 threads.  A model the compiled step does not
  take (``compiled_forward`` refuses it) gets no number there, only the reason;
* what one more step costs: the CPU time of a run of ``steps`` steps less one of
  one step, per step, for the compiled run, ``mj_step`` in a Python loop and
  ``mujoco.rollout`` (MuJoCo's loop in C), and what is left of the compiled run's
  time, the fixed cost of a call (argument checks, the cached compiled model's
  lookup, the output arrays and the returned :class:`rbd.Trajectory`).  The time per
  step of a 100-step run above spreads that fixed cost over the steps.

Usage::

    python benchmarks/bench_contact.py            # both robots
    python benchmarks/bench_contact.py --quick    # fewer repetitions
    python benchmarks/bench_contact.py --compiled-only   # only the compiled-step table
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time

import numpy as np

import rbd
from rbd.constraints._backends import solvers
from rbd.constraints.collision import collide_model
from rbd.constraints.forward import forward
from rbd.constraints.mujoco_model import solver_settings

ROBOTS = {"ant": 300, "humanoid": 400}    # MuJoCo steps before the measured state


def median_time(fn, repeat: int, inner: int = 5, clock=time.perf_counter) -> float:
    """Median over ``repeat`` rounds of the time per call (µs) of a round of ``inner`` calls
    (``clock``: wall time by default; ``time.thread_time`` for the calling thread's CPU time)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(inner):
            fn()
        times.append((clock() - t0) / inner * 1e6)
    return statistics.median(times)


def setup(name: str, steps: int):
    """rbd and MuJoCo models of gymnasium's ``name``.xml (Euler, Newton at MuJoCo's own
    tolerance) and a touching state (``rbd.testing.mujoco_pair``, the models the tests use)."""
    import gymnasium
    import mujoco

    from rbd.mjcf import from_mujoco_state

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                        f"{name}.xml")
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler", tight=False)
    for _ in range(steps):
        mujoco.mj_step(mm, d)
    mujoco.mj_forward(mm, d)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    return model, mm, d, q, v


def mujoco_step_time(mm, d, tolerance: float, steps: int, repeat: int) -> float:
    """µs per ``mj_step`` of a ``steps``-step run from the measured state."""
    import mujoco

    qpos, qvel = d.qpos.copy(), d.qvel.copy()
    old = mm.opt.tolerance
    mm.opt.tolerance = tolerance

    def run():
        d.qpos[:], d.qvel[:] = qpos, qvel
        for _ in range(steps):
            mujoco.mj_step(mm, d)

    per_run = median_time(run, repeat, inner=1)
    mm.opt.tolerance = old
    return per_run / steps


def rbd_step_time(model, q, v, dt, backend, steps: int, repeat: int) -> float:
    """µs per step of ``rbd.simulate(..., integrator="euler")`` over ``steps`` steps."""
    def run():
        rbd.simulate(model, q, v, steps * dt, dt, integrator="euler", backend=backend)

    return median_time(run, repeat, inner=1) / (steps + 1)


def forward_breakdown(model, q, v, backend, repeat: int) -> dict:
    """µs of one ``rbd.forward``: total, collision, solver (on the finished rows), the rest."""
    result = forward(model, q, v, backend=backend)
    total = median_time(lambda: forward(model, q, v, backend=backend), repeat)
    collision = median_time(lambda: collide_model(model, q, backend=backend), repeat)
    M = rbd.crba(model, q)
    newton = solvers(backend)[0]
    solve = median_time(lambda: newton(M, result.qdd_smooth, result.rows), repeat)
    return {"total": total, "collision": collision, "solver": solve,
            "rest": total - collision - solve, "ncon": len(result.contacts),
            "nefc": len(result.rows.aref)}


def compiled_step_times(model, mm, d, q, v, steps: int, repeat: int) -> dict | None:
    """µs per step: the compiled run of one state, ``mj_step`` (iterations and tolerance as
    rbd's), timed in alternation; and per state-step of an 8-state batch on 1 and 2 threads.
    None when the model is not on the compiled path (``compiled_runs`` returns None: a
    time would measure nothing)."""
    import mujoco

    from rbd.simulation.contact import compiled_runs

    if compiled_runs(model, q[None], v[None], 1, float(mm.opt.timestep)) is None:
        return None

    dt = float(mm.opt.timestep)
    qpos, qvel = d.qpos.copy(), d.qvel.copy()
    mm.opt.iterations, mm.opt.tolerance = solver_settings(model)   # the settings rbd runs with

    def mj_run():
        d.qpos[:], d.qvel[:] = qpos, qvel
        for _ in range(steps):
            mujoco.mj_step(mm, d)

    ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
    for _ in range(repeat):
        ours.append(median_time(lambda: compiled_runs(model, q[None], v[None], steps, dt),
                                1, inner=1) / (steps + 1))
        theirs.append(median_time(mj_run, 1, inner=1) / steps)
        # the same two calls in CPU time of this thread (both run in it): what a loaded
        # machine's waiting for a core leaves out
        ours_cpu.append(median_time(lambda: compiled_runs(model, q[None], v[None], steps, dt),
                                    1, inner=1, clock=time.thread_time) / (steps + 1))
        theirs_cpu.append(median_time(mj_run, 1, inner=1, clock=time.thread_time) / steps)
    rng = np.random.default_rng(0)
    q8 = np.repeat(q[None], 8, axis=0)
    v8 = v + 0.05 * rng.normal(size=(8, model.nv))
    batch = {nt: median_time(lambda nt=nt: compiled_runs(model, q8, v8, steps, dt,
                                                         num_threads=nt), repeat, inner=1)
             / (8 * (steps + 1)) for nt in (1, 2)}
    return {"compiled": statistics.median(ours), "mj_step": statistics.median(theirs),
            "compiled_cpu": statistics.median(ours_cpu),
            "mj_step_cpu": statistics.median(theirs_cpu), "batch1": batch[1], "batch2": batch[2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--steps", type=int, default=100, help="steps per timed run")
    parser.add_argument("--compiled-only", action="store_true",
                        help="only the compiled step against mj_step")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    machine = platform.processor() or platform.machine()
    print(f"# bench_contact ({datetime.date.today()}, {machine}, "
          f"load average {os.getloadavg()[0]:.1f}, kernels: {rbd.has_kernels()})\n")
    if not args.compiled_only:
        breakdowns = step_tables(args, repeat)
    compiled_table(args, repeat)
    if not args.compiled_only:
        breakdown_table(breakdowns)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


def step_tables(args, repeat: int) -> dict:
    """The per-step table of both backends against mj_step; the forward breakdowns."""
    print("| robot | contacts | rows | rbd reference (µs/step) | rbd kernel (µs/step) | "
          "MuJoCo mj_step, the model's settings (µs/step) | MuJoCo, tol 1e-14 | "
          "kernel / MuJoCo (the model's settings) |")
    print("|---|---|---|---|---|---|---|---|")
    breakdowns = {}
    for name, warm in ROBOTS.items():
        model, mm, d, q, v = setup(name, warm)
        dt = float(mm.opt.timestep)
        model.mujoco_options = {**(model.mujoco_options or {}), "timestep": dt}
        mj_tight = mujoco_step_time(mm, d, 1e-14, args.steps, repeat)
        mj_same = mujoco_step_time(mm, d, solver_settings(model)[1], args.steps, repeat)
        reference = rbd_step_time(model, q, v, dt, "reference", args.steps // 5,
                                  max(1, repeat // 3))
        kernel = rbd_step_time(model, q, v, dt, "kernel", args.steps, repeat)
        breakdowns[name] = {b: forward_breakdown(model, q, v, b, repeat)
                            for b in ("reference", "kernel")}
        info = breakdowns[name]["kernel"]
        print(f"| {name} | {info['ncon']} | {info['nefc']} | {reference:.0f} | {kernel:.0f} | "
              f"{mj_same:.1f} | {mj_tight:.1f} | {kernel / mj_same:.2f} |")
    return breakdowns


def marginal_step_times(model, mm, d, q, v, steps: int, repeat: int) -> dict:
    """CPU µs per step from the difference of two runs from the same state, one step and
    ``steps`` long: what one more step costs over the same steps as the 100-step run,
    without the fixed cost of a call.  For rbd's
    compiled run (``compiled_runs``, one state), ``mj_step`` in a Python loop and
    ``mujoco.rollout`` (MuJoCo's own loop in C, one thread, recording the state each
    step); per round the three in turn, medians over the rounds of the slopes, their
    ratios and rbd's fixed cost per call (``t(1) − slope``)."""
    import mujoco
    from mujoco import rollout

    from rbd.simulation.contact import compiled_runs

    dt = float(mm.opt.timestep)
    qpos, qvel = d.qpos.copy(), d.qvel.copy()
    mm.opt.iterations, mm.opt.tolerance = solver_settings(model)   # the settings rbd runs with
    d.qpos[:], d.qvel[:] = qpos, qvel
    kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
    start = np.zeros(mujoco.mj_stateSize(mm, kind))
    mujoco.mj_getState(mm, d, start, kind)

    def ours(n):
        compiled_runs(model, q[None], v[None], n, dt)

    def loop(n):
        d.qpos[:], d.qvel[:] = qpos, qvel
        for _ in range(n):
            mujoco.mj_step(mm, d)

    def in_c(n):
        rollout.rollout(mm, d, start[None], nstep=n)

    def cpu(fn, n):
        t0 = time.thread_time()
        fn(n)
        return time.thread_time() - t0

    runs = {"ours": ours, "loop": loop, "rollout": in_c}
    for fn in runs.values():
        fn(steps)
    slopes, fixed = {name: [] for name in runs}, []
    for _ in range(repeat):
        for name, fn in runs.items():
            fn(1)                          # warm: the other library's run has just used the caches
            short, long = cpu(fn, 1), cpu(fn, steps)
            slopes[name].append((long - short) / (steps - 1) * 1e6)
            if name == "ours":
                fixed.append(short * 1e6 - slopes[name][-1])
    ratio = {name: statistics.median(a / b for a, b in zip(slopes["ours"], slopes[name],
                                                             strict=True))
             for name in ("loop", "rollout")}
    return {**{name: statistics.median(x) for name, x in slopes.items()},
            "ratio_loop": ratio["loop"], "ratio_rollout": ratio["rollout"],
            "fixed": statistics.median(fixed)}


def compiled_table(args, repeat: int) -> None:
    """The compiled step against mj_step, and its batch on 1 and 2 threads."""
    from rbd.constraints.forward_compiled import compiled_forward

    print("\nThe compiled step (µs/step; batch: µs per state-step of 8 states)\n")
    print("| robot | compiled step | mj_step (the model's iterations, tolerance) | ratio | "
          "CPU time: compiled | "
          "mj_step | ratio | batch, 1 thread | batch, 2 threads | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    marginal = {}
    for name, warm in ROBOTS.items():
        model, mm, d, q, v = setup(name, warm)
        c = compiled_step_times(model, mm, d, q, v, args.steps, repeat)
        if c is None:
            print(f"| {name} | not on the compiled path (compiled_forward: "
                  f"{compiled_forward(model)}) | | | | | | | | |")
            continue
        print(f"| {name} | {c['compiled']:.1f} | {c['mj_step']:.1f} | "
              f"{c['compiled'] / c['mj_step']:.2f} | {c['compiled_cpu']:.1f} | "
              f"{c['mj_step_cpu']:.1f} | {c['compiled_cpu'] / c['mj_step_cpu']:.2f} | "
              f"{c['batch1']:.1f} | {c['batch2']:.1f} | "
              f"{c['batch1'] / c['batch2']:.2f} |")
        marginal[name] = marginal_step_times(model, mm, d, q, v, args.steps, repeat)
    print(f"\nOne more step (CPU µs per step: runs of 1 and {args.steps} steps from the "
          "same state, the difference; per-round ratios, medians)\n")
    print("| robot | compiled | mj_step, Python loop | mujoco.rollout (C loop) | "
          "ratio to the loop | ratio to rollout | rbd's fixed cost per call (µs) |")
    print("|---|---|---|---|---|---|---|")
    for name, m in marginal.items():
        print(f"| {name} | {m['ours']:.1f} | {m['loop']:.1f} | {m['rollout']:.1f} | "
              f"{m['ratio_loop']:.2f} | {m['ratio_rollout']:.2f} | {m['fixed']:.0f} |")


def breakdown_table(breakdowns: dict) -> None:
    """Where one ``rbd.forward`` call spends its time, per robot and backend."""
    print("\nOne `rbd.forward` call (µs): total = collision + solver + rest\n")
    print("| robot | backend | total | collision | solver | rest |")
    print("|---|---|---|---|---|---|")
    for name, rows in breakdowns.items():
        for backend, b in rows.items():
            print(f"| {name} | {backend} | {b['total']:.0f} | {b['collision']:.0f} | "
                  f"{b['solver']:.0f} | {b['rest']:.0f} |")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
