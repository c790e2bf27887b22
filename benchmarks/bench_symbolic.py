"""Symbolic dynamics: operation counts, preprocessing time and run time.

Prints Markdown tables:

1. Guenter & Lee's Table 1 setting — operation counts of the generated inverse
   dynamics and equations of motion of the 6-DoF revolute chain, ours beside
   the paper's;
2. symbolic preprocessing per model (joint derivation, code generation and
   compilation, with an empty code cache);
3. time per forward-dynamics call on Si & Guenter's Table 1 models (RC20, RC50,
   RC100, TC10, TC20, windmill): the compiled ABA with built-in joints, the same
   kernel with symbolic joints (generated C ``jcalc``), the compiled
   Guenter–Lee equations (small chains only: their size grows as n²), the
   reference Si–Guenter recursion and Pinocchio.

Usage::

    python benchmarks/bench_symbolic.py            # full run, prints the tables
    python benchmarks/bench_symbolic.py --quick    # fewer repetitions
    python benchmarks/bench_symbolic.py --write    # also replace the "Symbolic dynamics"
                                                   # section of docs/benchmarks.md
    python benchmarks/bench_symbolic.py --eom 8 [--write]
        # only table 4: rbd.symbolic.equations_of_motion against sympy.physics.mechanics'
        # Kane method on the n-link spatial chain, n = 2..8, in this one process
        # (--write: replace the "Symbolic equations of motion" section)
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import rbd
from rbd.models import mechanisms
from rbd.reference import ploen
from rbd.symbolic import build, lagrangian, twin

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Symbolic dynamics"

# Guenter & Lee, Table 1 (6-DoF revolute chain): (additions, multiplications)
PAPER = {
    "inverse_dynamics": {"GL symbolic, best": (328, 365), "Balafoutis & Patel": (386, 450),
                         "GL symbolic, worst": (509, 971)},
    "forward_dynamics": {"GL symbolic, best": (818, 943), "Balafoutis & Patel": (790, 956),
                         "GL symbolic, worst": (1875, 2389)},
}
# Si & Guenter, Table 1: DoF and their Method I (generated code), ms on a 2.67 GHz Core 2
SG_TABLE = {"RC20": (20, 0.020), "RC50": (50, 0.050), "RC100": (100, 0.112),
            "TC10": (38, 0.055), "TC20": (78, 0.115), "WM": (73, 0.108)}
GL_CHAINS = (6, 12, 20)
RATIO = "ratio: symbolic / built-in joints, kernel ABA (interleaved, median)"


def twinned_chain(n: int) -> rbd.Model:
    """RC<n> with every revolute joint written as its symbolic twin."""
    chain = rbd.models.revolute_chain(n)
    model = rbd.Model(gravity=chain.gravity, name=f"RC{n} (symbolic joints)")
    for body in chain.bodies:
        model.add_body(body.parent, twin(body.joint), body.X_tree, body.inertia, body.name,
                       body.joint_name)
    return model


def median_time(fn, repeats: int, target: float = 0.02) -> float:
    """Median seconds per call over ``repeats`` blocks of about ``target`` seconds each."""
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - t0 > target or number > 1 << 20:
            break
        number *= 2
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


# --- 1. operation counts --------------------------------------------------------------------
def counts_table() -> str:
    model = rbd.models.revolute_chain(6)
    rows = []
    for quantity, label in (("inverse_dynamics", "inverse dynamics τ(q, q̇, q̈)"),
                            ("forward_dynamics", "M (lower triangle) and c")):
        for recursion, name in (("body", "rbd, body-frame recursion (default)"),
                                ("trace", "rbd, trace recursion GL (13) as written")):
            c = lagrangian(model, recursion).operation_count(detail=True)[quantity]
            f = c["functions"]
            rows.append(f"| {label} | {name} | {c['additions']} | {c['multiplications']} | "
                        f"{f.get('sin', 0)} sin, {f.get('cos', 0)} cos |")
        for name, (a, m) in PAPER[quantity].items():
            rows.append(f"| {label} | {name} (GL Table 1) | {a} | {m} | |")
    return "\n".join(["| equations | code | ± | × | functions |", "|---|---|---:|---:|---|",
                      *rows])


# --- 2. preprocessing -----------------------------------------------------------------------
MODELS = {
    "RC20": lambda: twinned_chain(20),
    "RC50": lambda: twinned_chain(50),
    "RC100": lambda: twinned_chain(100),
    "TC10": lambda: mechanisms.torus_chain(10),
    "TC20": lambda: mechanisms.torus_chain(20),
    "WM": mechanisms.windmill,
}


def preprocessing(names) -> tuple[dict, str]:
    """Build every model and compile its joints into a fresh cache; time both stages."""
    models, rows = {}, []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["RBD_CACHE_DIR"] = cache
        for name in names:
            t0 = time.perf_counter()
            model = MODELS[name]()
            t1 = time.perf_counter()
            joints = {b.joint._key: b.joint for b in model.bodies if b.joint.kind == "symbolic"}
            for joint in joints.values():
                joint.kernel_capsule()
            t2 = time.perf_counter()
            if rbd.has_kernels():
                rbd.aba(model, *rbd.testing.random_state(model, 0)[:2], np.zeros(model.nv),
                        backend="kernel")
            models[name] = model
            rows.append(f"| {name} | {model.nv} | {len(joints)} | {t1 - t0:.1f} | "
                        f"{t2 - t1:.1f} | {t2 - t0:.1f} |")
        for n in GL_CHAINS:
            model = rbd.models.revolute_chain(n)
            t0 = time.perf_counter()
            gl = lagrangian(model)
            gl.operation_count()
            t1 = time.perf_counter()
            gl.compile()
            t2 = time.perf_counter()
            models[f"GL{n}"] = gl
            rows.append(f"| Guenter–Lee RC{n} | {n} | – | {t1 - t0:.1f} | {t2 - t1:.1f} | "
                        f"{t2 - t0:.1f} |")
        del os.environ["RBD_CACHE_DIR"]
    table = "\n".join(["| model | DoF | distinct joint transforms | derive (s) | "
                       "generate C + compile (s) | total (s) |",
                       "|---|---:|---:|---:|---:|---:|", *rows])
    return models, table


# --- 3. run time ----------------------------------------------------------------------------
def pinocchio_aba(model):
    try:
        import pinocchio as pin
    except ImportError:
        return None
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_core import to_pinocchio

    try:
        pm, order = to_pinocchio(model)
    except ValueError:
        return None
    pd = pm.createData()
    return lambda q, v, tau: pin.aba(pm, pd, q[order], v[order], tau[order])


def timed(fn, *args, repeats: int, batch: int = 1) -> float:
    """Median seconds per state of ``fn(*args)`` (``batch`` states per call)."""
    return median_time(lambda: fn(*args), repeats) / batch


def interleaved_ratio(fa, fb, rounds: int, number: int = 200) -> float:
    """Median over rounds of time(fa) / time(fb), the two timed back to back."""
    ratios = []
    for _ in range(rounds):
        ta = median_time(fa, 1, target=0.005)
        tb = median_time(fb, 1, target=0.005)
        ratios.append(ta / tb)
    return statistics.median(ratios)


def _kernel_aba(model, q, v, tau):
    return rbd.aba(model, q, v, tau, backend="kernel")


def _states(model, seed: int, batch: int = 1000):
    q, v, tau = rbd.testing.random_state(model, np.random.default_rng(seed), scale=0.3)
    q = rbd.neutral(model) + 0.1 * (q - rbd.neutral(model))
    return (q, v, tau), tuple(np.tile(x, (batch, 1)) for x in (q, v, tau))


def run_times(models: dict, names, repeats: int) -> str:
    few = max(3, repeats // 4)
    rows: dict[str, dict[str, float]] = {}
    columns = list(names)
    for name in names:
        model = models[name]
        state, batch = _states(model, 1)
        if rbd.has_kernels():
            if name.startswith("RC"):
                builtin = rbd.models.revolute_chain(int(name[2:]))
                rows.setdefault("ABA kernel, built-in joints", {})[name] = timed(
                    _kernel_aba, builtin, *state, repeats=repeats)
            rows.setdefault("ABA kernel, symbolic joints (generated jcalc)", {})[name] = timed(
                _kernel_aba, model, *state, repeats=repeats)
            rows.setdefault("ABA kernel, symbolic joints, per state in a batch of 1000", {})[
                name] = timed(_kernel_aba, model, *batch, repeats=few, batch=1000)
            if name.startswith("RC"):
                rows.setdefault(RATIO, {})[name] = (
                    interleaved_ratio(lambda m=model, s=state: _kernel_aba(m, *s),
                                             lambda m=builtin, s=state: _kernel_aba(m, *s),
                                             repeats))
        if name.startswith("RC"):
            pin_fn = pinocchio_aba(rbd.models.revolute_chain(int(name[2:])))
            if pin_fn is not None:
                rows.setdefault("Pinocchio ABA (Python call)", {})[name] = timed(
                    pin_fn, *state, repeats=repeats)
        rows.setdefault("S&G recursion, reference (Python)", {})[name] = timed(
            ploen.forward_dynamics, model, *state, repeats=few)
    for n in GL_CHAINS:
        key = f"RC{n}"
        if key not in columns:
            columns.append(key)
        compiled = models[f"GL{n}"].compile()
        model = rbd.models.revolute_chain(n)
        state, batch = _states(model, 2)
        rows.setdefault("Guenter–Lee generated C (M, c + Cholesky)", {})[key] = timed(
            compiled.forward_dynamics, *state, repeats=repeats)
        rows.setdefault("Guenter–Lee generated C, per state in a batch of 1000", {})[key] = (
            timed(compiled.forward_dynamics, *batch, repeats=few, batch=1000))
        if rbd.has_kernels():
            rows.setdefault("ABA kernel, built-in joints", {}).setdefault(key, timed(
                _kernel_aba, model, *state, repeats=repeats))
    order = sorted(columns, key=lambda c: (not c.startswith("RC"),
                                           int(c[2:]) if c.startswith("RC") else 0))
    lines = ["| µs per call (DoF) | " + " | ".join(
        f"{c} ({SG_TABLE[c][0] if c in SG_TABLE else c[2:]})" for c in order) + " |",
             "|---|" + "---:|" * len(order)]
    for label, values in rows.items():
        scale = 1.0 if label == RATIO else 1e6
        lines.append(f"| {label} | " + " | ".join(
            f"{values[c] * scale:,.2f}" if c in values else "–" for c in order) + " |")
    lines.append("| S&G Table 1, Method I (2.67 GHz Core 2) | " + " | ".join(
        f"{SG_TABLE[c][1] * 1e3:,.0f}" if c in SG_TABLE else "–" for c in order) + " |")
    return "\n".join(lines)


NOTES = """Reading the tables:

* **Operation counts.** `rbd.symbolic.lagrangian(model)` generates the 6-DoF
  chain's inverse dynamics with fewer operations than both the paper's best
  symbolic result and Balafoutis & Patel's hand-derived algorithm, after
  common-subexpression elimination. The same holds for the equations of
  motion (M's lower triangle and c, without the solve). Rules: a
  subtraction counts as an addition, a division as a multiplication; a
  negation is free; sin/cos are counted apart. The default recursion
  carries GL (13) in body coordinates. The trace recursion as written, with
  world-frame 4×4 poses and their derivatives, lands near the paper's worst
  case. `tests/test_guenter_lee.py` pins both counts and checks them by
  running the printed program on counting numbers.
* **Preprocessing.** A derived joint is shared by all joints with the same
  transform. Its compiled module is keyed by a hash of its source, so every
  chain here compiles two small modules (one per axis, or one torus contact
  and one peg), and later models reuse them. The windmill has five distinct
  contact joints; the two with the egg-shaped ellipsoid have frames with
  square roots and take longest.
  The Guenter–Lee equations of motion grow as n², and so do their
  derivation, common-subexpression elimination and compilation. Chains
  beyond RC20 are not run.
* **Run time.** The machine was shared (load average in the header), so
  single timings scatter. The interleaved ratio is the robust number: the
  compiled ABA runs symbolic joints (generated `jcalc`, called through a
  function pointer) as fast as its built-in revolute joints. The generated
  Guenter–Lee code is fastest per state in a batch; a single call is
  dominated by the Python call. Si & Guenter's Method I times, from a
  2.67 GHz Core 2, are given for scale only.
"""


# --- 4. equations of motion as formulas: rbd against Kane's method -----------------------------
EOM_SECTION = "## Symbolic equations of motion"


def kane_chain(n: int, link_length: float = 0.1, link_mass: float = 1.0, radius: float = 0.02):
    """``revolute_chain(n)`` by sympy.physics.mechanics' Kane method: ``(M, forcing)``.

    Body ``i`` turns about its parent's ``z`` (even ``i``) or ``y`` (odd ``i``) axis at
    ``link_length`` along the parent's ``x``; a rod of ``link_mass`` with its centre of mass
    at mid-length along ``x``, the inertia of :func:`rbd.models.rod_inertia`; gravity
    ``-9.81`` along ``z``.
    """
    import sympy
    from sympy.physics import mechanics as me

    q, u = me.dynamicsymbols(f"q1:{n + 1}"), me.dynamicsymbols(f"u1:{n + 1}")
    N, O = me.ReferenceFrame("N"), me.Point("O")
    O.set_vel(N, 0)
    L, m, d = (sympy.Float(x) for x in (link_length, link_mass, 2 * radius))
    I_axial, I_transverse = m * (d * d + d * d) / 12, m * (L * L + d * d) / 12
    bodies, loads, parent, origin = [], [], N, O
    for i in range(n):
        axis = "z" if i % 2 == 0 else "y"
        A = parent.orientnew(f"A{i + 1}", "Axis", [q[i], getattr(parent, axis)])
        A.set_ang_vel(parent, u[i] * getattr(A, axis))
        P = origin if i == 0 else origin.locatenew(f"P{i + 1}", L * parent.x)
        if i:
            P.v2pt_theory(origin, N, parent)
        C = P.locatenew(f"C{i + 1}", L / 2 * A.x)
        C.v2pt_theory(P, N, A)
        inertia = me.inertia(A, I_axial, I_transverse, I_transverse)
        bodies.append(me.RigidBody(f"B{i + 1}", C, A, m, (inertia, C)))
        loads.append((C, -9.81 * m * N.z))
        parent, origin = A, P
    kane = me.KanesMethod(N, q_ind=q, u_ind=u,
                          kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u, strict=True)])
    kane.kanes_equations(bodies, loads)
    return kane.mass_matrix, kane.forcing, q, u


def _agree(eom, kane, rng) -> float:
    """Largest difference of M and h between rbd's formulas and Kane's at a random state."""
    import sympy

    M_k, forcing, q, u = kane
    n = len(q)
    qv, uv = rng.uniform(-2, 2, n), rng.uniform(-2, 2, n)
    ours = dict(zip(eom.q, qv, strict=True)) | dict(zip(eom.qd, uv, strict=True))
    theirs = dict(zip(q, qv, strict=True)) | dict(zip(u, uv, strict=True))

    def f(values, matrix):       # (lambdify's compiler recurses too deep on RC6 and beyond)
        values = {k: sympy.Float(v) for k, v in values.items()}
        return np.array([[float(x.xreplace(values)) for x in row]
                         for row in matrix.tolist()], dtype=float)

    M1, h1 = f(ours, eom.M), f(ours, eom.h).ravel()
    M2, h2 = f(theirs, M_k), -f(theirs, forcing).ravel()
    return float(max(np.abs(M1 - M2).max(), np.abs(h1 - h2).max()))


def eom_table(largest: int) -> str:
    """Seconds to derive ``M, h, g`` of RC2..RC<largest>: rbd against Kane's method."""
    import sympy

    from rbd.symbolic import equations_of_motion

    rng = np.random.default_rng(0)
    rows = []
    for n in range(2, largest + 1):
        model = rbd.models.revolute_chain(n)
        t0 = time.perf_counter()
        eom = equations_of_motion(model)
        t1 = time.perf_counter()
        kane = kane_chain(n)
        t2 = time.perf_counter()
        size = sum(sympy.count_ops(x) for x in eom.M)
        size_k = sum(sympy.count_ops(x) for x in kane[0])
        rows.append(f"| RC{n} | {t1 - t0:.2f} | {t2 - t1:.2f} | {(t2 - t1) / (t1 - t0):.1f} | "
                    f"{size} | {size_k} | {_agree(eom, kane, rng):.1e} |")
        print(rows[-1], flush=True)
    return "\n".join(["| chain | rbd `equations_of_motion` (s) | Kane's method (s) | "
                      "Kane / rbd | ops in M, rbd | ops in M, Kane | max diff. M, h |",
                      "|---|---:|---:|---:|---:|---:|---:|", *rows])


EOM_NOTES = """`rbd.symbolic.equations_of_motion(rbd.models.revolute_chain(n))` (default
arguments: polynomial normal form, tidied only for at most 2 DoF) against
`sympy.physics.mechanics.KanesMethod` on the same chain (`kane_chain` in the
script: `kanes_equations`, then `mass_matrix` and `forcing`, no
simplification), both in one process, models built inside the timing. "ops in
M" is `sympy.count_ops` summed over the entries of M; "max diff." compares M
and h = −forcing at one random state (the two derivations agree to rounding).
Before the polynomial normal form (sympy trees and `sympy.simplify` per
entry), RC3 took 3.7 s and RC4 69.6 s.
"""


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
            f"average {load:.1f}; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"compiler {' '.join(build.compiler_command() or ['none'])} {' '.join(build.CFLAGS)}")


def write_section(text: str, path: Path = DOC, heading: str = SECTION) -> None:
    """Replace (or append) a section of ``docs/benchmarks.md`` this script owns."""
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    start = doc.find(heading + "\n")
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + len(heading))
        doc = doc[:start] + text + ("" if end < 0 else doc[end:])
    path.write_text(doc.rstrip("\n") + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--eom", type=int, metavar="N",
                        help="only the equations-of-motion table, chains of 2..N links")
    args = parser.parse_args(argv)
    if args.eom:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        table = eom_table(args.eom)
        print(f"\n{stamp}; {machine()}")
        if args.write:
            command = f"python benchmarks/bench_symbolic.py --eom {args.eom} --write"
            write_section(f"{EOM_SECTION}\n\n<!-- generated by benchmarks/bench_symbolic.py -->"
                          f"\n\nMeasured {stamp} on {machine()}; command `{command}`."
                          f"\n\n{table}\n\n{EOM_NOTES}", heading=EOM_SECTION)
        return 0
    repeats = 5 if args.quick else 15
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    counts = counts_table()
    print(counts, "\n")
    models, prep = preprocessing(args.models)
    print(prep, "\n")
    runs = run_times(models, args.models, repeats)
    print(runs)
    print(f"\n{stamp}; {machine()}")
    if args.write:
        write_section(f"{SECTION}\n\n<!-- generated by benchmarks/bench_symbolic.py; "
                      f"{stamp}; {machine()} -->\n\n### Operation counts (GL Table 1 setting)"
                      f"\n\n{counts}\n\n### Preprocessing\n\n{prep}\n\n### Run time\n\n"
                      f"{runs}\n\n{NOTES}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
