"""The serial part of a batched call: CPU time of the calling thread outside the block loop.

What the calling thread does before and after the threads run a batch (argument
conversion, checks, copies, allocation, the result) is time a second core cannot
share: by Amdahl's law, with ``s`` of a one-thread time ``t₁`` serial, two threads
reach at most ``t₁ / (s + (t₁ − s) / 2)``.  Unlike a speed-up, this part can be
measured on a busy machine: ``perf`` samples a thread only while it runs.  Needs
``perf`` (``perf record --call-graph dwarf``)::

    python benchmarks/bench_serial.py            # arm7 and humanoid, ABA and RNEA, N = 10,000

Each case runs ``calls`` batched calls on one thread in a child process under
``perf record -e cpu-clock``; a sample of the calling thread counts as *inside*
when its call stack is in the block loop (the lane kernels ``run_block``, the
per-block checks ``check_rows``, the one-state kernels ``run_one``) and as
*outside* when it is elsewhere below ``CompiledModel.aba`` / ``.rnea``.  Printed
per call: both times and the speed-up bound of two threads they imply.
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
INSIDE = re.compile(r"run_block|check_rows|all_finite|run_one|_soa_\w+_run")
HZ = 2000


def attribute(script_text: str, method: str) -> tuple[int, int]:
    """Samples of the calling thread (the first seen) inside and outside the block loop."""
    below = re.compile(r"CompiledModel_\d*" + method + r"\b")
    inside = outside = 0
    main = None
    for sample in script_text.split("\n\n"):
        lines = sample.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        tid = lines[0].split()[0]
        main = main or tid
        stack = "\n".join(lines[1:])
        if tid != main or not below.search(stack):
            continue
        if INSIDE.search(stack):
            inside += 1
        else:
            outside += 1
    return inside, outside


def measure(name: str, fn: str, calls: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(HZ),
                        "--call-graph", "dwarf,16384", "-o", data, sys.executable, "-c", CHILD,
                        name, fn, str(calls)], check=True, capture_output=True)
        text = subprocess.run(["perf", "script", "-i", data, "-F", "tid,ip,sym"], check=True,
                              capture_output=True, text=True).stdout
    inside, outside = attribute(text, fn)
    return inside / HZ / (calls + 1), outside / HZ / (calls + 1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--models", nargs="+", default=["arm7", "humanoid"])
    args = parser.parse_args(argv)
    if shutil.which("perf") is None:
        print("perf is not installed: nothing measured")
        return 1
    print(f"One thread, N = 10,000, {args.calls} calls a case; load average "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| batch | inside the block loop (ms) | outside, serial (ms) | bound for 2 threads |")
    print("|---|---:|---:|---:|")
    for name in args.models:
        for fn in ("aba", "rnea"):
            inside, outside = measure(name, fn, args.calls)
            bound = (inside + outside) / (outside + inside / 2) if inside + outside else 0.0
            print(f"| {fn.upper()} {name} | {inside * 1e3:.2f} | {outside * 1e3:.3f} | "
                  f"{bound:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
