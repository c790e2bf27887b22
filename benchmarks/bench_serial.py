"""The serial part of a batched call: CPU time of the calling thread outside the block loop.

What the calling thread does before and after the threads run a batch (argument
conversion, checks, copies, allocation, the result) is time a second core cannot
share: by Amdahl's law, with ``s`` of a one-thread time ``t₁`` serial, two threads
reach at most ``t₁ / (s + (t₁ − s) / 2)``.  Unlike a speed-up, this part can be
measured on a busy machine: ``perf`` samples a thread only while it runs.  Needs
``perf`` (``perf record --call-graph dwarf``)::

    python benchmarks/bench_serial.py            # arm7 and humanoid, ABA and RNEA, N = 10,000
    python benchmarks/bench_serial.py --contact  # and contact batches of gymnasium's ant

Each case runs ``calls`` batched calls on one thread in a child process under
``perf record -e cpu-clock``; a sample of the calling thread counts as *inside*
when its call stack is in the block loop (the lane kernels ``run_block``, the
per-block checks ``check_rows``, the one-state kernels ``run_one``) and as
*outside* when it is elsewhere below ``CompiledModel.aba`` / ``.rnea``.  Printed
per call: both times and the speed-up bound of two threads they imply.

``--contact``: batches of contact runs of the ant (``rbd.simulate``, the states of
``bench_threads.py``: its standing state, velocities perturbed), recorded at every
step and at every 100th; *inside* is a run (``c_simulate_contact``, what the threads
share), *outside* everything else the calling thread does during the calls (the
Python call, the kernel's allocations, the batch :class:`~rbd.Trajectory`), told from
the set-up by the calls' time window (``perf record -k CLOCK_MONOTONIC``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHILD = """
import sys, numpy as np, rbd
name, fn, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
model = getattr(rbd.models, name)()
kernel = rbd.algorithms.compiled(model)
kernel.num_threads = 1
rng = np.random.default_rng(0)
Q = np.array([rbd.random_configuration(model, rng) for _ in range(10_000)])
V, T = rng.normal(size=(2, 10_000, model.nv))
call = getattr(kernel, fn)
for _ in range(calls + 1):
    call(Q, V, T)
"""
CONTACT_CHILD = """
import os, sys, time, numpy as np, rbd
sys.path.insert(0, sys.argv[1])
from bench_contact import ROBOTS, setup
n, steps, every, calls = (int(x) for x in sys.argv[2:6])
model, mm, _, q, v = setup("ant", ROBOTS["ant"])
dt = float(mm.opt.timestep)
Q = np.repeat(q[None], n, axis=0)
V = v + 0.05 * np.random.default_rng(0).normal(size=(n, model.nv))
def call():
    rbd.simulate(model, Q, V, steps * dt, dt, integrator="euler", record_every=every,
                 num_threads=1)
call()
start = time.clock_gettime(time.CLOCK_MONOTONIC)
for _ in range(calls):
    call()
print(start, time.clock_gettime(time.CLOCK_MONOTONIC))
"""
INSIDE = re.compile(r"run_block|check_rows|all_finite|run_one|_soa_\w+_run")
CONTACT_INSIDE = re.compile(r"c_simulate_contact")
HZ = 2000


def attribute(script_text: str, method: str | None, inside_re=INSIDE,
              window: tuple[float, float] | None = None) -> tuple[int, int]:
    """Samples of the calling thread (the first seen) inside and outside the block loop:
    those below ``CompiledModel.<method>``, or (``method`` None) those in ``window``."""
    below = None if method is None else re.compile(r"CompiledModel_\d*" + method + r"\b")
    inside = outside = 0
    main = None
    for sample in script_text.split("\n\n"):
        lines = sample.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        head = lines[0].split()
        tid = head[0]
        main = main or tid
        stack = "\n".join(lines[1:])
        if tid != main or (below is not None and not below.search(stack)):
            continue
        if window is not None and not window[0] <= float(head[1].rstrip(":")) <= window[1]:
            continue
        if inside_re.search(stack):
            inside += 1
        else:
            outside += 1
    return inside, outside


def record(child: list[str], fields: str) -> tuple[str, str]:
    """``perf script`` of the child run under ``perf record``, and the child's output."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        run = subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e",
                              "cpu-clock", "-F", str(HZ), "--call-graph", "dwarf,16384", "-o",
                              data, sys.executable, "-c", *child], check=True,
                             capture_output=True, text=True)
        text = subprocess.run(["perf", "script", "-i", data, "-F", fields], check=True,
                              capture_output=True, text=True).stdout
    return text, run.stdout


def measure(name: str, fn: str, calls: int) -> tuple[float, float]:
    text, _ = record([CHILD, name, fn, str(calls)], "tid,ip,sym")
    inside, outside = attribute(text, fn)
    return inside / HZ / (calls + 1), outside / HZ / (calls + 1)


def measure_contact(n: int, steps: int, every: int, calls: int) -> tuple[float, float]:
    here = os.path.dirname(os.path.abspath(__file__))
    text, out = record([CONTACT_CHILD, here, str(n), str(steps), str(every), str(calls)],
                       "tid,time,ip,sym")
    start, stop = (float(x) for x in out.split()[-2:])
    inside, outside = attribute(text, None, CONTACT_INSIDE, (start, stop))
    return inside / HZ / calls, outside / HZ / calls


def row(name: str, inside: float, outside: float) -> str:
    bound = (inside + outside) / (outside + inside / 2) if inside + outside else 0.0
    return (f"| {name} | {inside * 1e3:.2f} | {outside * 1e3:.3f} | "
            f"{100 * outside / (inside + outside):.1f} % | {bound:.2f}× |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--models", nargs="*", default=["arm7", "humanoid"])
    parser.add_argument("--contact", action="store_true",
                        help="also contact batches of the ant (MuJoCo and gymnasium needed)")
    args = parser.parse_args(argv)
    if shutil.which("perf") is None:
        print("perf is not installed: nothing measured")
        return 1
    print(f"One thread, N = 10,000, {args.calls} calls a case; load average "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| batch | inside the block loop (ms) | outside, serial (ms) | serial share | "
          "bound for 2 threads |")
    print("|---|---:|---:|---:|---:|")
    for name in args.models:
        for fn in ("aba", "rnea"):
            print(row(f"{fn.upper()} {name}", *measure(name, fn, args.calls)))
    if args.contact:
        for n, steps, every in ((8, 500, 1), (32, 100, 1), (2, 2000, 1), (8, 500, 100)):
            calls = max(1, args.calls // 6)
            print(row(f"contact ant {n} × {steps} steps, recorded every {every}",
                      *measure_contact(n, steps, every, calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
