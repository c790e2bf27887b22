"""Cost of every forward-dynamics variant on the Si–Guenter chains and the 31-body tree.

Prints a Markdown table of the median time per call (µs) of each variant on
RC20, RC50, RC100 (``rbd.models.revolute_chain``) and tree31
(``rbd.models.binary_tree(5)``), then the per-state cost of the two compiled
articulated-body variants (plain and modified pivot) over a batch of states on
one thread, which leaves out the Python call overhead.

Usage::

    python benchmarks/bench_forward_dynamics.py            # every variant
    python benchmarks/bench_forward_dynamics.py --quick    # fewer repetitions
    python benchmarks/bench_forward_dynamics.py --models RC20 tree31
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

import rbd
from rbd.reference import aba as ref_aba
from rbd.reference import block_elimination as be
from rbd.reference import crba as ref_crba
from rbd.reference import ploen

MODELS = {
    "RC20": lambda: rbd.models.revolute_chain(20),
    "RC50": lambda: rbd.models.revolute_chain(50),
    "RC100": lambda: rbd.models.revolute_chain(100),
    "tree31": lambda: rbd.models.binary_tree(5),
}


def variants() -> dict[str, Callable]:
    """name -> fn(model, q, v, tau); the compiled ones only when the kernels are built."""
    table: dict[str, Callable] = {}
    if rbd.has_kernels():
        from rbd._kernels import block_elimination as k_be
        from rbd._kernels import ploen as k_ploen

        table["ABA (kernel)"] = lambda m, q, v, t: rbd.aba(m, q, v, t, backend="kernel")
        table["ABA modified pivot (kernel)"] = k_be.aba_modified
        table["S&G recursion (kernel)"] = k_ploen.forward_dynamics
    table.update({
        "ABA (reference)": ref_aba.aba,
        "ABA modified pivot (reference)": be.aba_modified,
        "CRBA + Cholesky (reference)": ref_crba.forward_dynamics_crba,
        "S&G recursion (reference)": ploen.forward_dynamics,
        "pai-dense: sparse LU of Eq. 5": be.forward_dynamics_dense,
        "pai-crbm: Eq. 7": be.forward_dynamics_crbm,
        "pai-abm: elimination §5": be.forward_dynamics_abm,
        "pai-modified-abm: §7": be.forward_dynamics_modified_abm,
    })
    return table


def interleaved(calls: dict[str, Callable], rounds: int, block_seconds: float) -> dict[str, float]:
    """Median seconds per call of each callable, timed in turn within every round.

    Each callable runs in blocks of repeated calls lasting about ``block_seconds``
    (at least one call); interleaving the variants round by round exposes them
    all to the same machine load.
    """
    blocks = {}
    for name, fn in calls.items():
        fn()
        t0 = time.perf_counter()
        fn()
        once = max(time.perf_counter() - t0, 1e-7)
        blocks[name] = max(1, int(block_seconds / once))
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            t0 = time.perf_counter()
            for _ in range(blocks[name]):
                fn()
            samples[name].append((time.perf_counter() - t0) / blocks[name])
    return {name: statistics.median(values) for name, values in samples.items()}


def batch_per_state(model, N: int = 500, rounds: int = 41) -> dict[str, float]:
    """Seconds per state of the compiled variants over one batch, one thread.

    The variants are timed back to back within each round, so a change of
    machine load affects them alike; medians over rounds are kept, and so are
    the medians of the per-round ratios to the plain-pivot ABA (keys
    ``"<variant> / plain"``), which are the most robust numbers on a busy machine.
    """
    from rbd._kernels import block_elimination as k_be
    from rbd._kernels import ploen as k_ploen

    rng = np.random.default_rng(1)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(N)])
    V, T = rng.normal(size=(N, model.nv)), rng.normal(size=(N, model.nv))
    cm = rbd.algorithms.compiled(model)
    threads = cm.num_threads
    cm.num_threads = 1
    runs = {
        "ABA plain pivot (kernel)": lambda: cm.aba(Q, V, T),
        "ABA modified pivot (kernel)": lambda: k_be.aba_modified(model, Q, V, T),
        "S&G recursion (kernel)": lambda: k_ploen.forward_dynamics(model, Q, V, T),
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    try:
        for fn in runs.values():
            fn()
        for _ in range(rounds):
            for name, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                samples[name].append((time.perf_counter() - t0) / N)
    finally:
        cm.num_threads = threads
    out = {name: statistics.median(values) for name, values in samples.items()}
    plain = samples["ABA plain pivot (kernel)"]
    for name in list(runs)[1:]:
        out[f"{name} / plain"] = statistics.median(
            [t / p for t, p in zip(samples[name], plain, strict=True)])
    return out


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{cpu}; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"{platform.system()} {platform.release()}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--quick", action="store_true", help="fewer and shorter rounds")
    args = parser.parse_args(argv)

    print(f"# forward dynamics variants, {datetime.date.today().isoformat()}")
    print(f"machine: {machine()}")
    print(f"kernels built: {rbd.has_kernels()}\n")
    models = {name: MODELS[name]() for name in args.models}
    states = {}
    for name, model in models.items():
        rng = np.random.default_rng(0)
        states[name] = (rbd.random_configuration(model, rng), rng.normal(size=model.nv),
                        rng.normal(size=model.nv))

    table = variants()
    rounds, block = (5, 0.005) if args.quick else (21, 0.02)
    results = {}
    for name, model in models.items():
        q, v, tau = states[name]
        calls = {label: (lambda fn=fn, m=model, q=q, v=v, t=tau: fn(m, q, v, t))
                 for label, fn in table.items()}
        results[name] = interleaved(calls, rounds, block)
    print(f"median time per call over {rounds} interleaved rounds, µs "
          "(one state, including the Python call)\n")
    print("| variant | " + " | ".join(models) + " |")
    print("|---|" + "---:|" * len(models))
    for label in table:
        cells = [f"{results[name][label] * 1e6:,.1f}" for name in models]
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)

    if rbd.has_kernels():
        per_model = {name: batch_per_state(model) for name, model in models.items()}
        labels = list(next(iter(per_model.values())))
        print("\nper state in a batch of 500 states, one thread, median of 41 rounds, µs "
              "(ratios: median of the per-round ratios)\n")
        print("| variant | " + " | ".join(models) + " |")
        print("|---|" + "---:|" * len(models))
        for label in labels:
            ratio = label.endswith("/ plain")
            cells = [f"{per_model[name][label]:.2f}" if ratio
                     else f"{per_model[name][label] * 1e6:,.2f}" for name in models]
            print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
