"""The ``rbd`` command.

::

    rbd info MODEL               the kinematic tree, degrees of freedom and masses
    rbd simulate [MODEL]         simulate from a tilted state; print a summary, write a plot
                                 (and, with --animate, an HTML page or a GIF of the motion)
    rbd check MODEL              every registered implementation against the first one
    rbd bench [MODEL]            time rnea/crba/aba: kernel, reference, Pinocchio
    rbd walker [--out DIR]       the passive compass-gait walker (--animate: it walks)

``MODEL`` is a URDF file (``*.urdf``), an MJCF file (``*.xml``, ``*.mjcf``;
an existing file is recognized by its root element, ``<robot>`` or
``<mujoco>``) or the name of a bundled model (``rbd info`` lists them; a
model is also found by the name it reports).  ``--floating-base`` puts a free
joint at the root of a URDF model, and ``rbd simulate --floor DEPTH`` a ground plane
``DEPTH`` metres below its root, which then falls onto it through its collision geoms
(the contact step, ``integrator="euler"``).  Output paths are checked before a long
run starts, numbers when they are parsed (finite, in range), and the work a
command may start is bounded (:data:`MAX_SIMULATE_STEPS`,
:data:`MAX_SIMULATE_BYTES`, :data:`MAX_CHECK_DOF`, :data:`MAX_BENCH_BUDGET`).
Errors are reported on stderr with exit status 2; ``rbd check`` exits with 1
when implementations disagree.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from . import __version__, _backend, algorithms, models, registry, testing
from ._cli_bench import bench_rows as bench_rows
from ._cli_checks import MAX_BENCH_BUDGET as MAX_BENCH_BUDGET
from ._cli_checks import MAX_CHECK_DOF as MAX_CHECK_DOF
from ._cli_checks import MAX_DPI as MAX_DPI
from ._cli_checks import MAX_SIMULATE_BYTES as MAX_SIMULATE_BYTES
from ._cli_checks import MAX_SIMULATE_STEPS as MAX_SIMULATE_STEPS
from ._cli_checks import (
    check_animation_path,
    check_plot_path,
    check_run_size,
    number,
    simulate_steps,
)
from ._cli_checks import check_output_path as check_output_path
from ._cli_course import add_course_commands
from ._cli_info import _table, _vec, info_tables
from ._cli_info import body_rows as body_rows
from ._cli_info import inertia_rows as inertia_rows
from ._cli_info import limit_rows as limit_rows
from .errors import InputError, ModelError, RbdError
from .model import Model

__all__ = ["main", "load_model", "displaced_state"]

#: ``rbd check`` fails when an implementation differs from the reference by more than this.
CHECK_TOLERANCE = 1e-8

# --- shared helpers ------------------------------------------------------------------------------
URDF_SUFFIXES = (".urdf",)
MJCF_SUFFIXES = (".xml", ".mjcf")


def _file_format(spec: str) -> str | None:
    """``"urdf"`` or ``"mjcf"`` for a model file (existing or by its suffix), None for a name."""
    lower = spec.lower()
    if os.path.isfile(spec):
        with open(spec, "rb") as f:
            head = f.read(4096).decode("utf-8", errors="replace")
        if "<mujoco" in head:
            return "mjcf"
        if "<robot" in head:
            return "urdf"
        return "mjcf" if lower.endswith(MJCF_SUFFIXES) else "urdf"
    if lower.endswith(URDF_SUFFIXES):
        raise InputError(f"no such URDF file: {spec!r}")
    if lower.endswith(MJCF_SUFFIXES):
        raise InputError(f"no such MJCF file: {spec!r}")
    return None


def _load_mjcf(path: str) -> Model:
    """Read an MJCF file with ``rbd.mjcf.load``, or explain why it cannot be read."""
    try:
        mjcf = importlib.import_module("rbd.mjcf")
    except ModuleNotFoundError as exc:
        if exc.name not in ("rbd.mjcf", None):
            raise InputError(f"{path!r} is an MJCF file, but the MJCF reader could not be "
                             f"imported: {exc}") from None
        raise InputError(f"{path!r} is an MJCF file, but this installation of rbd has no MJCF "
                         "reader (rbd.mjcf); convert the model to URDF or upgrade rbd") from None
    load = getattr(mjcf, "load", None) or getattr(mjcf, "load_mjcf", None)
    if load is None:
        raise InputError(f"{path!r} is an MJCF file, but rbd.mjcf has no load function")
    return load(path)


def _floating(model: Model) -> bool:
    return model.nbodies > 0 and all(b.joint.kind == "free" for b in model.bodies
                                     if b.parent == -1)


def load_model(spec: str, floating_base: bool = False) -> Model:
    """A URDF or MJCF file, or a bundled model name (see the module notes).

    ``floating_base=True`` puts a free joint at the root of a URDF file or a
    bundled URDF; a model that already floats is returned as it is; any other
    model raises :class:`~rbd.errors.InputError` (an MJCF file declares its own
    free joints with ``<freejoint/>``).
    """
    kind = _file_format(spec)
    if kind == "urdf":
        from .urdf import load_urdf

        return load_urdf(spec, floating_base=floating_base)
    if kind == "mjcf":
        model = _load_mjcf(spec)
    else:
        name = _bundled_name(spec)
        if floating_base and name in _bundled_urdfs():
            return models.bundled_urdf(name, floating_base=True)
        model = models.get(name)
    if floating_base and not _floating(model):
        what = "an MJCF file declares it with <freejoint/>" if kind else \
            f"the bundled model {model.name!r} is built with a fixed base"
        raise InputError(f"--floating-base applies to URDF models; {what}")
    return model


def _bundled_name(spec: str) -> str:
    """The bundled model ``spec`` names; a directory is reported as one, not as a model name."""
    try:
        return models.resolve(spec)
    except ModelError:
        if os.path.isdir(spec):
            raise InputError(f"{spec!r} is a directory, not a model; give a URDF or MJCF file "
                             "in it, or a bundled model name") from None
        raise


def _bundled_urdfs() -> set[str]:
    from importlib.resources import files

    folder = files(models.__name__) / "urdf"
    return {entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".urdf")}


def displaced_state(model: Model, tilt: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    """A fixed start away from equilibrium: every joint moved by ``tilt``, at rest.

    ``q0 = neutral ⊕ tilt·1`` (a rotation of ``tilt·√3`` rad about ``(1, 1, 1)``
    for a ball joint); free joints stay at their neutral pose.
    """
    displacement = np.full(model.nv, float(tilt))
    for i, body in enumerate(model.bodies):
        if body.joint.kind == "free":
            displacement[model.v_index(i)] = 0.0
    q0 = algorithms.integrate(model, algorithms.neutral(model), displacement, 1.0)
    return q0, np.zeros(model.nv)


def _backend_name(backend: str | None) -> str:
    return _backend.resolve(backend)


def _describe_size(model: Model) -> str:
    return f"{model.nbodies} bodies, nq = {model.nq}, nv = {model.nv}"


# --- rbd info ----------------------------------------------------------------------------------
def cmd_info(args) -> int:
    if args.model is None:
        print("bundled models: " + ", ".join(models.names()))
        print("(or give the path of a URDF or MJCF file)")
        return 0
    model = load_model(args.model, args.floating_base)
    print(model.describe())
    print(f"degrees of freedom: nq = {model.nq}, nv = {model.nv}")
    print("joints (q order): " + (", ".join(model.joint_names) or "none"))
    print(f"total mass: {model.total_mass:.6g} kg, gravity {_vec(model.gravity)} m/s^2")
    print(f"backend: {_backend_name(None)}")
    print("\n" + info_tables(model))
    return 0


# --- rbd simulate ------------------------------------------------------------------------------
def cmd_simulate(args) -> int:
    from .plotting import plot_summary
    from .simulation import simulate

    if args.save and not args.save.lower().endswith((".npz", ".csv")):
        raise InputError(f"--save: the path must end in .npz or .csv, got {args.save!r}")
    check_plot_path(args.out)
    if args.save:
        check_output_path(args.save, "--save")
    check_animation_path(args.animate)
    integrator = args.integrator or ("euler" if args.floor is not None else "rk4")
    if args.floor is not None and integrator != "euler":
        raise InputError(f"--floor needs --integrator euler (the contact step), got "
                         f"{integrator!r}")
    model = load_model(args.model, args.floating_base)
    _refuse_walker(model)
    check_run_size(model, args.duration, args.dt)
    q0, v0 = displaced_state(model, args.tilt)
    if args.floor is not None:
        _add_floor(model, args.floor)
    backend = _backend_name(args.backend)
    start = time.perf_counter()
    traj = simulate(model, q0, v0, args.duration, args.dt, integrator=integrator,
                    progress=args.progress, backend=backend)
    sim_time = time.perf_counter() - start
    _save_figure(plot_summary(traj, model=model), args.out, args.dpi)
    if args.save:
        traj.save(args.save)
    if args.animate:
        from .animation import animate

        animate(model, traj, args.animate)
    wall = time.perf_counter() - start
    rows = [
        ("model", f"{model.name}: {_describe_size(model)}"),
        ("start", f"every joint coordinate moved by {args.tilt:g} from neutral, at rest"),
        ("integrator", f"{traj.integrator}, dt = {args.dt:g} s, {traj.steps} steps, "
                       f"{traj.t[-1]:g} s simulated"),
        ("backend", backend),
        ("energy drift", f"{traj.energy_drift:.3e} (relative: max|E - E0| / max(|E0|, max T)"
                         + ("; contacts and limits take energy out)"
                            if traj.contact_count is not None else ")")),
        *([("contacts", f"{int(traj.contact_count[-1])} at the end, at most "
                        f"{int(traj.contact_count.max())}")]
          if traj.contact_count is not None else []),
        ("wall time", f"{wall:.2f} s (simulation {sim_time:.2f} s)"),
        ("plot", str(args.out)),
    ]
    if args.save:
        rows.append(("trajectory", str(args.save)))
    if args.animate:
        rows.append(("animation", str(args.animate)))
    print("rbd simulate")
    for key, value in rows:
        print(f"  {key:<13}{value}")
    return 0


def _add_floor(model: Model, depth: float) -> None:
    """``--floor DEPTH``: a ground plane ``depth`` metres below the world origin, where the
    root starts (``model.add_geom``, MuJoCo's default contact parameters)."""
    model.add_geom("floor", None, "plane", size=(0, 0, 1),
                   pose=(np.eye(3), np.array([0.0, 0.0, -float(depth)])))


def _save_figure(fig, path: str, dpi: int) -> None:
    """Write a pyplot-managed figure and close it (a command draws no window)."""
    import matplotlib.pyplot as plt

    try:
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)


def _refuse_walker(model: Model) -> None:
    """The compass gait falls over without its heel strikes: ``rbd walker`` walks it."""
    if model.name == "compass gait":
        raise InputError("the compass gait walks only with its heel-strike impacts, which "
                         "'rbd simulate' does not apply; run 'rbd walker' (with --animate "
                         "walk.html to watch it walk)")


# --- rbd check ---------------------------------------------------------------------------------
def _evaluate(quantity: str, fn: Callable, model: Model, state) -> np.ndarray:
    q, v, a = state
    if quantity == "mass_matrix":
        return np.asarray(fn(model, q), dtype=float)
    if quantity == "bias_forces":
        return np.asarray(fn(model, q, v), dtype=float)
    return np.asarray(fn(model, q, v, a), dtype=float)   # a is the acceleration or tau


def check_rows(model: Model, trials: int, seed: int, tolerance: float):
    """``(quantity, name, difference or None, status)`` for every registered implementation."""
    rng = np.random.default_rng(seed)
    states = [testing.random_state(model, rng) for _ in range(trials)]
    rows = []
    for quantity in registry.QUANTITIES:
        impls = registry.implementations(quantity)
        usable = [n for n in impls if registry.supports(quantity, n, model)]
        reference, expected = None, None
        for name in impls:
            if name not in usable:
                rows.append((quantity, name, None, "n/a"))
                continue
            try:
                values = [_evaluate(quantity, impls[name], model, s) for s in states]
            except Exception as exc:   # a broken derivation is reported, not raised
                rows.append((quantity, name, None, f"ERROR {type(exc).__name__}: {exc}"))
                continue
            if reference is None:
                reference, expected = name, values
                rows.append((quantity, name, 0.0, "reference"))
                continue
            diff = max(testing.quantity_difference(quantity, model, s, x, y)
                       for s, x, y in zip(states, values, expected, strict=True))
            rows.append((quantity, name, diff, "ok" if diff <= tolerance else "DIFFERS"))
    return rows


def cmd_check(args) -> int:
    model = load_model(args.model, args.floating_base)
    if model.nv > MAX_CHECK_DOF:
        raise InputError(f"{model.name!r} has {model.nv} degrees of freedom; rbd check runs the "
                         f"pure-Python derivations and takes models of at most {MAX_CHECK_DOF} "
                         "(check a smaller model of the same kind)")
    rows = check_rows(model, args.trials, args.seed, args.tolerance)
    print(f"rbd check: {model.name} ({_describe_size(model)}), {args.trials} random states, "
          f"tolerance {args.tolerance:.0e}")
    print("max relative difference against the first implementation of each quantity:\n"
          "max|x - x_ref| / max(1, max|x_ref|); accelerations in torque space,\n"
          "max|M (a - a_ref)| / max(1, max|tau|, max|h|) (see rbd.testing.quantity_difference)\n")
    table = [(q, n, "-" if d is None else f"{d:.2e}", status) for q, n, d, status in rows]
    print(_table(("quantity", "implementation", "max rel. diff", "status"), table, "<<><"))
    na = [r for r in rows if r[3].startswith("n/a")]
    failed = [r for r in rows if r[3] not in ("ok", "reference") and r not in na]
    compared = len(rows) - len(na)
    print(f"\n{compared - len(failed)} of {compared} compared rows pass; {len(na)} n/a "
          "(the implementation does not handle this model)" +
          ("" if not failed else f"; {len(failed)} FAIL"))
    return 1 if failed else 0


# --- rbd bench ---------------------------------------------------------------------------------
def _micro() -> str:
    """``µ``, or ``u`` when standard output cannot encode it (an ASCII terminal)."""
    return "µ" if _encodes(sys.stdout, "µ") else "u"


def _format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} {_micro()}s"
    return f"{seconds * 1e3:.2f} ms"


def cmd_bench(args) -> int:
    model = load_model(args.model, args.floating_base)
    rows = bench_rows(model, args.budget)
    names = list(rows[0][1])
    header = ["algorithm", *names, "kernel / pinocchio"]
    table = []
    for algorithm, cells in rows:
        line = [algorithm] + [c if isinstance(c, str) else _format_time(c)
                              for c in (cells[n] for n in names)]
        kernel, peer = cells.get("kernel"), cells.get("pinocchio")
        ratio = (f"{kernel / peer:.2f}" if not isinstance(kernel, str | None)
                 and not isinstance(peer, str | None) else "n/a")
        table.append([*line, ratio])
    print(f"rbd bench: {model.name} ({_describe_size(model)}); median time per call "
          f"(single state, validation included)\n")
    if model.mimic:
        print("mimic joints: pinocchio's mimic model (its aba refuses mimic joints: crba, "
              "nonLinearEffects and a NumPy solve)\n")
    print(_table(header, table, "<" + ">" * (len(header) - 1)))
    return 0


# --- rbd walker --------------------------------------------------------------------------------
def cmd_walker(args) -> int:
    """The limit cycle of SPW Table 1 and the figures 10 and 11 as PNG files."""
    from . import walker
    from .plotting import plot_walker_energy, plot_walker_phase_portrait

    check_output_path(args.out, "--out", directory=True)
    check_animation_path(args.animate)
    cycle = walker.find_limit_cycle()
    print(cycle)
    label = "SPW Table 1 (pre-impact, 4 decimals):".ljust(39)
    print(f"  {label} " + ", ".join(f"{a:+.4f}" for a in walker.PAPER_STATE))
    for name, make in (("walker_phase_portrait.png", plot_walker_phase_portrait),
                       ("walker_energy.png", plot_walker_energy)):
        path = os.path.join(args.out, name)
        _save_figure(make(cycle), path, 120)
        print(f"wrote {path}")
    if args.animate:
        from .animation import animate, walker_motion

        models, q, t = walker_motion(cycle, steps=args.steps)
        title = f"compass gait: {args.steps} steps down a slope of {cycle.params.slope:g} rad"
        animate(models, q, args.animate, t=t, trail="hip", title=title,
                floor=(np.zeros(3), cycle.params.normal))       # the slope
        print(f"wrote {args.animate}")
    return 0


# --- the parser --------------------------------------------------------------------------------
MODEL_HELP = ("a URDF file (.urdf), an MJCF file (.xml, .mjcf) or a bundled model name "
              "(list them with 'rbd info')")


def _model_arguments(p: argparse.ArgumentParser, default: str | None, what: str) -> None:
    """The MODEL positional and ``--floating-base``."""
    if default is None:
        p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    else:
        p.add_argument("model", nargs="?", default=default, metavar="MODEL",
                       help=f"{MODEL_HELP}; default: {default}, {what}")
    p.add_argument("--floating-base", action="store_true",
                   help="put a free joint (6 DoF) at the root of a URDF model")


def _add_info(sub) -> None:
    """The ``rbd info`` subcommand and its options."""
    p = sub.add_parser("info", help="describe a model: tree, link lengths, masses, centres of "
                       "mass, inertias, joint limits (no MODEL: list the bundled models)")
    p.add_argument("model", nargs="?", metavar="MODEL",
                   help=f"{MODEL_HELP}; omit it to list the bundled models")
    p.add_argument("--floating-base", action="store_true",
                   help="put a free joint (6 DoF) at the root of a URDF model")
    p.set_defaults(func=cmd_info)


def _add_simulate(sub) -> None:
    """The ``rbd simulate`` subcommand and its options."""
    p = sub.add_parser("simulate", help="simulate a model from a tilted state and plot it")
    _model_arguments(p, "pendulum3", "a 3-link spherical pendulum")
    p.add_argument("--duration", type=number(float, 0.0), default=5.0,
                   help="simulated seconds (default 5)")
    p.add_argument("--dt", type=number(float, 0.0, low_open=True), default=1e-3,
                   help="time step (default 1e-3 s)")
    p.add_argument("--integrator", choices=("rk4", "euler", "solve_ivp"), default=None,
                   help="time integrator (default rk4; euler, the contact step, with "
                        "--floor)")
    p.add_argument("--floor", type=number(float, 0.0), default=None, metavar="DEPTH",
                   help="add a ground plane DEPTH metres below the root (a floating base "
                        "falls onto it; contacts through the collision geoms)")
    p.add_argument("--tilt", type=number(float), default=0.4,
                   help="initial displacement of every joint coordinate (default 0.4)")
    p.add_argument("--out", default="rbd_simulate.png",
                   help="plot file, its format from the suffix (default %(default)s)")
    p.add_argument("--dpi", type=number(int, 1, MAX_DPI), default=100,
                   help=f"resolution of the plot in dots per inch, 1 to {MAX_DPI} "
                        "(default %(default)s)")
    p.add_argument("--save", metavar="PATH", help="also save the trajectory (.npz or .csv)")
    p.add_argument("--animate", metavar="PATH",
                   help="also write an animation: .html (3-D, time slider; opens offline), "
                        ".gif or .mp4 (needs ffmpeg)")
    p.add_argument("--backend", choices=("kernel", "reference"), default=None,
                   help="compiled kernels or the pure-Python reference (default: kernels "
                        "when built)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: on long runs in a terminal)")
    p.set_defaults(func=cmd_simulate)


def _add_check(sub) -> None:
    """The ``rbd check`` subcommand and its options."""
    p = sub.add_parser("check", help="compare every registered implementation")
    _model_arguments(p, None, "")
    p.add_argument("--trials", type=number(int, 1, 1000), default=3,
                   help="random states, 1 to 1000 (default 3)")
    p.add_argument("--seed", type=number(int, 0), default=0,
                   help="seed of the random states, >= 0 (default %(default)s)")
    p.add_argument("--tolerance", type=number(float, 0.0), default=CHECK_TOLERANCE,
                   help="largest relative difference (default %(default).0e)")
    p.set_defaults(func=cmd_check)


def _add_bench(sub) -> None:
    """The ``rbd bench`` subcommand and its options."""
    p = sub.add_parser("bench", help="time rnea, crba and aba")
    _model_arguments(p, "RC20", "a 20-link revolute chain")
    p.add_argument("--budget", type=number(float, 0.0, MAX_BENCH_BUDGET, low_open=True),
                   default=0.2, help=f"seconds spent timing each cell, at most "
                                     f"{MAX_BENCH_BUDGET:g} (default 0.2)")
    p.set_defaults(func=cmd_bench)


def _add_walker(sub) -> None:
    """The ``rbd walker`` subcommand and its options."""
    p = sub.add_parser("walker", help="the passive compass-gait walker")
    p.add_argument("--out", default=".",
                   help="directory for the figures, created if missing (default: current)")
    p.add_argument("--animate", metavar="PATH",
                   help="also write the walker walking: .html (3-D, time slider; opens "
                        "offline), .gif or .mp4 (needs ffmpeg)")
    p.add_argument("--steps", type=number(int, 1, 1000), default=6,
                   help="steps walked in the animation (default %(default)s)")
    p.set_defaults(func=cmd_walker)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rbd", description="Rigid-body dynamics: models, simulation, cross-checks, timing.",
        epilog="MODEL: a URDF or MJCF file or a bundled model name (see 'rbd info').")
    parser.add_argument("--version", action="version", version=f"rbd {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_info(sub)
    _add_simulate(sub)
    _add_check(sub)
    _add_bench(sub)
    _add_walker(sub)
    add_course_commands(sub)
    return parser


def _validate_args(args) -> None:
    """Checks that need two arguments (each alone is checked by its argparse type)."""
    if getattr(args, "command", None) == "simulate":
        steps = simulate_steps(args.duration, args.dt)
        if steps > MAX_SIMULATE_STEPS:
            raise InputError(f"--duration {args.duration:g} at --dt {args.dt:g} is {steps:.3g} "
                             f"steps; rbd simulate takes at most {MAX_SIMULATE_STEPS:,}: "
                             "raise --dt or shorten --duration")


def _encodes(stream, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _tolerant_output() -> None:
    """On a terminal that cannot encode rbd's symbols (ASCII), escape them instead of failing.

    Joint names from a file, ``λ`` in the walker's summary, ... print as ``\\u03bb``.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not _encodes(stream, "µλθω"):
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rbd`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    _tolerant_output()
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:          # --help, --version, or a usage error (status 2)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        _validate_args(args)
        return args.func(args)
    except (RbdError, OSError, NotImplementedError) as exc:
        print(f"rbd {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rbd {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
