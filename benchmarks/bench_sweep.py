"""Wall time of one ``rbd.sweep`` on a local Dask cluster of 1 and of 2 worker processes.

The sweep: a planar double pendulum released from rest at each point of a grid of
initial angles (q1, q2), simulated for ``--duration`` seconds with RK4 at dt = 0.1 ms
(one compiled rollout per point, one thread each); the result is the largest |q1|
reached.  The same sweep runs as a plain loop in this process (the serial baseline),
then on a warm cluster of one worker and on one of two workers (both started and warmed
up before timing; their start-up time is printed apart).  The three runs are repeated
``--repeat`` times, interleaved, and the median and the best of each are printed; the
results of every run are checked equal to the serial loop's.

Run: ``python benchmarks/bench_sweep.py [--points 48] [--duration 20] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import platform
import statistics
import time
import warnings

import numpy as np

import rbd

DT = 1e-4
RECORD_EVERY = 100


def largest_swing(q1: float, q2: float, duration: float) -> float:
    """The largest |q1| of a double pendulum released from rest at (q1, q2)."""
    traj = rbd.simulate(rbd.models.double_pendulum(), [q1, q2], [0.0, 0.0], duration, DT,
                        record_every=RECORD_EVERY)
    return float(np.max(np.abs(traj.q[:, 0])))


def cpu() -> str:
    """The processor's model name (Linux), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def grid(points: int) -> dict[str, np.ndarray]:
    side = int(np.ceil(np.sqrt(points)))
    other = int(np.ceil(points / side))
    return {"q1": np.linspace(0.5, 2.5, side), "q2": np.linspace(-1.0, 1.0, other)}


def serial_loop(fn, axes) -> np.ndarray:
    return np.array([[fn(a, b) for b in axes["q2"]] for a in axes["q1"]])


def cluster(n_workers: int):
    """A warm local cluster: started, and ``rbd`` imported on its workers."""
    from dask.distributed import Client, LocalCluster

    for name in list(logging.root.manager.loggerDict):      # no start and close chatter
        if name.startswith("distributed"):
            logging.getLogger(name).setLevel(logging.WARNING)
    t0 = time.perf_counter()
    local = LocalCluster(n_workers=n_workers, threads_per_worker=1, dashboard_address=None,
                         silence_logs=logging.CRITICAL)   # back to WARNING at close
    client = Client(local)
    started = time.perf_counter() - t0
    client.run(__import__, "rbd")
    return local, client, started


def seconds(run) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    values = run()
    return time.perf_counter() - t0, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=48)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Port .* is already in use")
    fn = functools.partial(largest_swing, duration=args.duration)
    axes = grid(args.points)
    n = len(axes["q1"]) * len(axes["q2"])
    clusters = {k: cluster(k) for k in (1, 2)}
    runs = {"serial": lambda: serial_loop(fn, axes)}
    for k, (_, client, _) in clusters.items():
        runs[k] = functools.partial(lambda c: rbd.sweep(fn, axes, scheduler=c, chunk=1,
                                                        progress=False).values, client)
    times: dict = {name: [] for name in runs}
    load = [os.getloadavg()[0]]
    reference = serial_loop(fn, axes)
    try:
        for _ in range(args.repeat):          # interleaved, so that a change of load hits all
            for name, run in runs.items():
                elapsed, values = seconds(run)
                times[name].append(elapsed)
                if not np.array_equal(values, reference):
                    raise SystemExit(f"{name}: results differ from the serial loop")
            load.append(os.getloadavg()[0])
    finally:
        for local, client, _ in clusters.values():
            client.close()
            local.close()
    report(args, n, times, load, {k: c[2] for k, c in clusters.items()})


def report(args, n: int, times: dict, load: list, started: dict) -> None:
    print(f"{cpu()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}")
    print("1-minute load average during the runs: "
          + ", ".join(f"{x:.1f}" for x in load)
          + (" (above the number of CPUs: other jobs shared the machine)"
             if max(load) > (os.cpu_count() or 1) else ""))
    print(f"{n} points x {args.duration:g} s of double pendulum (RK4, dt = {DT:g} s), "
          f"{args.repeat} interleaved rounds")
    median = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    print("| run | median (s) | best (s) | speed-up vs 1 worker, median / best "
          "| cluster start (s) |")
    print("|---|---|---|---|---|")
    for name, label in (("serial", "serial loop in this process"),
                        (1, "sweep, 1 worker process"), (2, "sweep, 2 worker processes")):
        start = "-" if name == "serial" else f"{started[name]:.1f}"
        print(f"| {label} | {median[name]:.2f} | {best[name]:.2f} | "
              f"{median[1] / median[name]:.2f} / {best[1] / best[name]:.2f} | {start} |")


if __name__ == "__main__":
    main()
