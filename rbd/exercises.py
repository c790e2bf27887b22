"""Tutorial exercises as notebooks a student fills in, and the checks that grade them.

The MyST tutorials in ``tutorials/`` hold each exercise's worked solution (folded on the web
page, executed by the docs build). :func:`tutorial_notebook` turns a tutorial into a Jupyter
notebook: MyST roles and directives become plain Markdown, and with ``solutions=False`` every
function of an exercise's answer cell becomes a stub that raises :class:`NotImplementedError`,
its check cell a call of :func:`check` that reports "not done yet" instead of failing.
:func:`grade` runs the exercise cells of a folder of submitted notebooks, one process each,
and tabulates *student file × exercise → pass / fail / not done* with the check's message.

From the shell: ``rbd notebooks OUT_DIR`` writes the notebooks, ``rbd grade FOLDER`` grades.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rbd.errors import InputError

__all__ = ["ExerciseResult", "check", "check_against", "tutorial_notebook", "write_notebooks",
           "grade", "format_grade_table", "check_dtau_dv", "check_post_impact_rates",
           "check_five_bar", "check_crank_drive", "check_mass_sweep", "check_rnea_passes"]

#: status words of an :class:`ExerciseResult`
PASS, FAIL, TODO = "pass", "fail", "not done"

# -- checks -------------------------------------------------------------------------------------


@dataclass
class ExerciseResult:
    """The outcome of one exercise's check.

    ``status`` is ``"pass"``, ``"fail"`` or ``"not done"``; ``message`` is one line in the
    student's terms (the worst entry and the slip behind it, or what is missing); ``report``
    the full :class:`rbd.testing.ConsistencyReport` when there is one.
    """

    exercise: str | None
    status: str
    message: str
    report: Any = None

    @property
    def ok(self) -> bool:
        return self.status == PASS

    def __str__(self) -> str:
        head = f"exercise {self.exercise}: " if self.exercise else ""
        text = f"{head}{self.status.upper()}: {self.message}"
        if self.report is not None and not self.ok:
            text += "\n" + str(self.report)
        return text


_RECORDED: list[ExerciseResult] | None = None


def _record(result: ExerciseResult) -> ExerciseResult:
    if _RECORDED is not None:
        _RECORDED.append(result)
    return result


def _fn_name(fn) -> str:
    return getattr(fn, "__name__", "your function") if callable(fn) else "your answer"


def _not_done(fn) -> str | None:
    """Why ``fn`` is still the stub, or None."""
    if fn is None or fn is Ellipsis:
        return "no answer yet: replace the ... with your own"
    return None


def _summary(report) -> str:
    """The report's lines below its table (the worst entry, the slip), on one line."""
    lines = [ln.strip() for ln in str(report).splitlines()]
    for k, line in enumerate(lines):
        if line.startswith("agreement:"):
            tail = [ln for ln in lines[k + 1:] if ln]
            if tail:
                return "; ".join(tail)
    named = [ln for ln in lines if "entry" in ln or "slip" in ln]
    return "; ".join(named) if named else (lines[0] if lines else "differs")


def check(model, quantity: str, fn, *, exercise: str | None = None,
          **kwargs) -> ExerciseResult:
    """Check an exercise answer with :func:`rbd.testing.check_consistency`.

    Parameters
    ----------
    model, quantity, fn
        As for :func:`rbd.testing.check_consistency`: the model, the quantity
        (``"mass_matrix"`` M(q), ``"bias_forces"`` h(q, q̇) = C(q, q̇) q̇ + g(q) of
        M q̈ + h = τ, ``"forward_dynamics"``, ...) and the student's function or sympy
        matrix.
    exercise
        The exercise's label, e.g. ``"10.1"`` (tutorial 10, exercise 1), shown in the result.
    **kwargs
        Passed on (``trials``, ``tolerance``, ``rng``).

    Returns
    -------
    ExerciseResult
        ``"not done"`` when ``fn`` is the stub (it raises :class:`NotImplementedError` or is
        ``...``), ``"fail"`` with the worst entry and the slip when it differs or raises,
        ``"pass"`` otherwise. Never raises for a wrong answer.
    """
    from rbd.testing import check_consistency

    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    try:
        report = check_consistency(model, quantity, fn, **kwargs)
    except NotImplementedError:
        return _record(ExerciseResult(exercise, TODO, f"{name} is still the stub: write its body"))
    except Exception as exc:  # the student's code raised: say what, do not stop the notebook
        return _record(ExerciseResult(exercise, FAIL, f"{name} raised {type(exc).__name__}: {exc}"))
    if report.ok:
        return _record(ExerciseResult(exercise, PASS, f"{name} agrees ({quantity})", report))
    return _record(ExerciseResult(exercise, FAIL, _summary(report), report))


def check_against(fn: Callable, expected: Callable, cases: Iterable[tuple], *,
                  tolerance: float, what: str, exercise: str | None = None) -> ExerciseResult:
    """Check ``fn(*case)`` against ``expected(*case)`` on each case, naming the worst entry.

    For exercises whose answer is not one of :func:`rbd.testing.check_consistency`'s
    quantities (a derivative, an impact map). ``tolerance`` bounds the largest absolute
    difference; ``what`` names the result in the message (``"dtau/dv"``).
    """
    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    worst = (0.0, None, None, None, None)
    for case in cases:
        try:
            yours = np.asarray(fn(*case), dtype=float)
        except NotImplementedError:
            return _record(ExerciseResult(exercise, TODO, f"{name} is still the stub: "
                                                          "write its body"))
        except Exception as exc:
            return _record(ExerciseResult(exercise, FAIL,
                                          f"{name} raised {type(exc).__name__}: {exc}"))
        want = np.asarray(expected(*case), dtype=float)
        if yours.shape != want.shape:
            return _record(ExerciseResult(exercise, FAIL, f"{name} returned shape {yours.shape}, "
                                                          f"{what} has shape {want.shape}"))
        diff = np.abs(yours - want)
        k = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else None
        if k is not None and diff[k] > worst[0]:
            worst = (float(diff[k]), k, float(yours[k]), float(want[k]), case)
    if worst[0] <= tolerance:
        return _record(ExerciseResult(exercise, PASS, f"{name} agrees with {what} "
                                                      f"(largest difference {worst[0]:.1e})"))
    entry = ", ".join(str(int(i)) for i in worst[1])
    return _record(ExerciseResult(exercise, FAIL, f"worst entry {what}[{entry}]: yours "
                                                  f"{worst[2]:.9g}, expected {worst[3]:.9g}"))


def check_dtau_dv(fn, *, exercise: str | None = "60.1") -> ExerciseResult:
    """Tutorial 60's exercise: ∂τ/∂q̇ of inverse dynamics against :func:`rbd.rnea_derivatives`."""
    import rbd

    tree = rbd.testing.random_model(3, 6)
    cases = [(tree, *rbd.testing.random_state(tree, seed)) for seed in (4, 5)]
    # central differences of a polynomial of degree 2 in v are exact but for rounding (1e-9)
    return check_against(fn, lambda m, q, v, a: rbd.rnea_derivatives(m, q, v, a)[1], cases,
                         tolerance=1e-8, what="dtau/dv", exercise=exercise)


def _rnea_passes(model, q, qd, qdd):
    """``(v, a, f)`` of RNEA's two passes (RBDA Table 5.1), each ``(nbodies, 6)`` in body
    coordinates: the body velocities and accelerations of the outward pass (gravity as the
    base acceleration ``a_0 = -[0; g]``) and the forces across the joints after the inward
    pass added the children's."""
    from rbd.reference.rnea import outward_step

    nb = model.nbodies
    X_up, S, v = [None] * nb, [None] * nb, [None] * nb
    a, f = np.zeros((nb, 6)), np.zeros((nb, 6))
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
    for i, body in enumerate(model.bodies):
        c, f[i] = outward_step(model, i, q, qd, None, X_up, S, v)
        p = body.parent
        a[i] = X_up[i] @ (a0 if p < 0 else a[p]) + c + S[i] @ qdd[model.v_index(i)]
        f[i] = body.inertia @ a[i] + f[i]                      # RBDA T5.1
    for i in range(nb - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            f[p] = f[p] + X_up[i].T @ f[i]                       # RBDA T5.1
    return np.array(v), a, f


#: what each array of tutorial 01's second exercise is, in the order the passes compute them
_PASSES = (("outward pass", "velocity v", "of body"),
           ("outward pass", "acceleration a", "of body"),
           ("inward pass", "force f", "across the joint of body"))


def check_rnea_passes(fn: Callable, *, exercise: str | None = "01.2") -> ExerciseResult:
    """Tutorial 01's second exercise: ``fn(model, q, qd, qdd) -> (tau, v, a, f)``, RNEA
    written as its two passes, compared pass by pass with :mod:`rbd.reference.rnea`.

    On a random tree of 5 bodies (joints of 1 to 6 degrees of freedom) at two random states,
    the first quantity that differs is named in the order the algorithm computes it: the
    outward pass's velocities, then its accelerations (body 0 first), then the inward pass's
    forces (from the leaves in), then ``τ_i = S_iᵀ f_i``. The tolerance, 1e-9 relative to
    the largest entry of the quantity, is rounding for derivations in double precision.
    """
    import rbd

    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    model = rbd.testing.random_model(1, 5)
    for seed in (1, 2):
        q, qd, qdd = rbd.testing.random_state(model, seed)
        answer = _answer_of(fn, exercise, model, q, qd, qdd)
        if isinstance(answer, ExerciseResult):
            return answer
        expected = (*_rnea_passes(model, q, qd, qdd), rbd.rnea(model, q, qd, qdd))
        try:
            tau, *arrays = answer
            if len(arrays) != 3:
                raise ValueError
            yours = [np.asarray(x, dtype=float) for x in (*arrays, tau)]
        except (TypeError, ValueError):
            return _record(ExerciseResult(exercise, FAIL, f"{name} returned {type(answer).__name__}"
                                                          "; return (tau, v, a, f)"))
        at = f"at the state random_state(model, {seed})"
        for k, (mine, want) in enumerate(zip(yours, expected, strict=True)):
            what = _PASSES[k][1].split()[0] if k < 3 else "tau"
            if mine.shape != want.shape:
                return _record(ExerciseResult(exercise, FAIL, f"{what} has shape {mine.shape}, "
                                                              f"expected {want.shape}"))
            tol = 1e-9 * max(1.0, float(np.abs(want).max()))
            if np.abs(mine - want).max() <= tol:
                continue
            if k == 3:
                j = int(np.argmax(np.abs(mine - want)))
                return _record(ExerciseResult(
                    exercise, FAIL, f"v, a and f agree but tau[{j}] does not {at}: yours "
                    f"{mine[j]:.6g}, expected {want[j]:.6g} (the projection τ_i = S_iᵀ f_i)"))
            order = range(model.nbodies) if k < 2 else range(model.nbodies - 1, -1, -1)
            i = next(i for i in order if np.abs(mine[i] - want[i]).max() > tol)
            c = int(np.argmax(np.abs(mine[i] - want[i])))
            passname, quantity, where = _PASSES[k]
            return _record(ExerciseResult(
                exercise, FAIL, f"{passname}: {quantity}_{i} {where} {model.body_names[i]!r} "
                f"differs first {at}, component {c}: yours {mine[i][c]:.6g}, expected "
                f"{want[i][c]:.6g}"))
    return _record(ExerciseResult(exercise, PASS, f"{name}: both passes agree with the "
                                                  "reference RNEA"))


def check_post_impact_rates(fn, *, exercise: str | None = "51.1") -> ExerciseResult:
    """Tutorial 51's exercise: the heel strike against :func:`rbd.walker.heel_strike`."""
    from rbd import walker

    model = walker.compass_gait()
    near = walker.find_limit_cycle().fixed_point
    rng = np.random.default_rng(51)
    states = [walker.PAPER_STATE, near] + [near + rng.normal(scale=0.02, size=4)
                                           for _ in range(3)]
    cases = [(model, x[:2], x[2:]) for x in states]
    # two exact derivations in double precision on rates of order 1 rad/s: rounding only
    return check_against(fn, lambda m, q, v: walker.heel_strike(m, q, v)[2], cases,
                         tolerance=1e-12, what="v+", exercise=exercise)


def _answer_of(fn, exercise: str | None, *args):
    """``fn(*args)``, or the :class:`ExerciseResult` that says why there is no answer to check."""
    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    try:
        return fn(*args)
    except NotImplementedError:
        return _record(ExerciseResult(exercise, TODO, f"{name} is still the stub: "
                                                      "write its body"))
    except Exception as exc:
        return _record(ExerciseResult(exercise, FAIL, f"{name} raised {type(exc).__name__}: {exc}"))


def _closed_configuration(model, tries: int = 8) -> np.ndarray:
    """A configuration of ``model`` that satisfies its constraints, by :func:`rbd.assemble`
    from seeded random guesses; the last :class:`rbd.ModelError` when none closes."""
    import rbd

    rng = np.random.default_rng(41)
    error = None
    for _ in range(tries):
        try:
            return rbd.assemble(model, rng.uniform(-np.pi, np.pi, model.nq))
        except rbd.ModelError as exc:
            error = exc
    raise error


def check_five_bar(fn: Callable, counts: Any, *,
                   exercise: str | None = "41.1") -> ExerciseResult:
    """Tutorial 41's first exercise: the five-bar ``fn()`` and the student's
    ``counts = (rows, rank, dof)`` of its closing anchor.

    The model must have four hinges, two of them on the ground, and constraints that
    close (:func:`rbd.assemble`); at the closed configuration the constraint Jacobian's
    rows, the rank of the Delassus matrix ``G = J M⁻¹ Jᵀ`` (RBDA §8.2) and ``nv − rank``
    are computed from the student's own model and compared with ``counts``. A planar
    five-bar closed by a point anchor keeps 2 degrees of freedom.
    """
    import rbd

    model = _answer_of(fn, exercise)
    if isinstance(model, ExerciseResult):
        return model
    if not isinstance(model, rbd.Model):
        return _record(ExerciseResult(exercise, FAIL, f"{_fn_name(fn)} returned "
                                                      f"{type(model).__name__}, not an rbd.Model"))
    roots = sum(p < 0 for p in model.parent)
    if model.nbodies != 4 or model.nv != 4 or roots != 2:
        return _record(ExerciseResult(
            exercise, FAIL, f"a five-bar has four moving rods on one hinge each, two of them "
            f"cranks on the ground; yours has {model.nbodies} bodies, nv = {model.nv} and "
            f"{roots} on the ground"))
    if not model.constraints:
        return _record(ExerciseResult(exercise, FAIL, "no constraint closes the loop: pin the "
                                                      "two rods' tips with a PointAnchor"))
    try:
        q = _closed_configuration(model)
    except rbd.ModelError as exc:
        return _record(ExerciseResult(exercise, FAIL, f"the loop does not close: {exc}"))
    rows = rbd.constraint_jacobian(model, q).shape[0]
    rank = int(np.linalg.matrix_rank(rbd.delassus(model, q)))
    at = f"at the closed configuration q = {np.array2string(q, precision=3, separator=', ')}"
    if rank != 2:
        return _record(ExerciseResult(
            exercise, FAIL, f"{at} the Delassus matrix has rank {rank}, leaving "
            f"{model.nv - rank} degree(s) of freedom; a planar five-bar keeps 2 (all hinge "
            "axes parallel, the rods' tips pinned by a point, not welded)"))
    why = _not_done(counts)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, f"the five-bar closes; my_loop_counts: "
                                                      f"{why}"))
    try:
        given = tuple(int(c) for c in counts)
    except (TypeError, ValueError):
        given = ()
    if len(given) != 3:
        return _record(ExerciseResult(exercise, FAIL, f"my_loop_counts is {counts!r}; give "
                                                      "three integers (rows, rank, dof)"))
    truth = {"rows of the closing constraint": (given[0], rows, "J is "
                                                f"{rows} × {model.nv}"),
             "rank of the Delassus matrix": (given[1], rank, f"G = J M⁻¹ Jᵀ {at}"),
             "degrees of freedom left": (given[2], model.nv - rank, "nv − rank")}
    wrong = [f"{what}: yours {mine}, expected {want} ({why})"
             for what, (mine, want, why) in truth.items() if mine != want]
    if wrong:
        return _record(ExerciseResult(exercise, FAIL, "; ".join(wrong)))
    return _record(ExerciseResult(exercise, PASS, f"the five-bar closes: {rows} rows, rank "
                                                  f"{rank}, {model.nv - rank} degrees of freedom"))


#: crank speeds of tutorial 41's second exercise (rad/s), and the settling time the check
#: allows the PD law before it compares (s)
CRANK_SPEEDS, SETTLING = (2.0, 2.0), 0.5


def check_crank_drive(fn: Callable, five_bar: Callable, *,
                      exercise: str | None = "41.2") -> ExerciseResult:
    """Tutorial 41's second exercise: ``fn(model)`` drives the five-bar ``five_bar()`` and
    returns the :class:`~rbd.simulation.Trajectory`.

    After :data:`SETTLING` seconds each crank (the hinges on the ground) must turn at its
    speed of :data:`CRANK_SPEEDS` to 0.2 rad/s, and the loop must stay closed to 1e-6 m
    (RK4 with Baumgarte's stabilization keeps it near 1e-8).
    """
    import rbd

    model = _answer_of(five_bar, exercise)
    if isinstance(model, ExerciseResult):
        model.message = f"needs the five-bar of the first exercise: {model.message}"
        return model
    name = _fn_name(fn)
    traj = _answer_of(fn, exercise, model)
    if isinstance(traj, ExerciseResult):
        return traj
    if not isinstance(traj, rbd.simulation.Trajectory):
        return _record(ExerciseResult(exercise, FAIL, f"{name} returned {type(traj).__name__}, "
                                                      "not the Trajectory of rbd.simulate"))
    late = traj.t >= SETTLING
    if traj.t[-1] < 1.0 + SETTLING or traj.q.ndim != 2:
        return _record(ExerciseResult(exercise, FAIL, f"{name} simulated {traj.t[-1]:.3g} s of "
                                                      f"one run; run at least {1 + SETTLING:g} s"))
    cranks = [i for i, p in enumerate(model.parent) if p < 0]
    for i, speed in zip(cranks, CRANK_SPEEDS, strict=True):
        k = model.v_index(i).start
        off = np.abs(traj.v[late, k] - speed)
        if off.max() > 0.2:          # a PD law with a few tens of N m/rad tracks to ~0.1 rad/s
            j = int(np.argmax(off))
            return _record(ExerciseResult(
                exercise, FAIL, f"crank {model.joint_names[i]!r} turns at "
                f"{traj.v[late, k][j]:.3g} rad/s at t = {traj.t[late][j]:.3g} s, asked "
                f"{speed:g} rad/s"))
    gap = np.abs(traj.constraint_error).max()
    if gap > 1e-6:
        return _record(ExerciseResult(exercise, FAIL, f"the loop opens by {gap:.1e} m: simulate "
                                                      "enforces model.constraints unless told "
                                                      "otherwise"))
    return _record(ExerciseResult(exercise, PASS, f"both cranks turn at {CRANK_SPEEDS} rad/s, "
                                                  f"the loop stays closed to {gap:.0e} m"))


def check_mass_sweep(fn: Callable, *, exercise: str | None = "52.1") -> ExerciseResult:
    """Tutorial 52's exercise: the flip-time map ``fn()`` over ``m2 × theta1``.

    The :class:`~rbd.sweeps.SweepResult` must have the axes ``("m2", "theta1")`` over
    [0.2, 2] kg × [1.6, 3.1] rad; four of its points, drawn at random, are compared with the
    tutorial's simulation run directly (3 s, RK4 at 2 ms, every 5th sample kept). The same
    steps in another process give the same numbers, so the tolerance is rounding (1e-12 s).
    """
    import rbd
    from rbd.sweeps import SweepResult

    result = _answer_of(fn, exercise)
    if isinstance(result, ExerciseResult):
        return result
    if not isinstance(result, SweepResult):
        return _record(ExerciseResult(exercise, FAIL, f"{_fn_name(fn)} returned "
                                                      f"{type(result).__name__}, not the result "
                                                      "of rbd.sweep"))
    if tuple(result.names) != ("m2", "theta1"):
        return _record(ExerciseResult(exercise, FAIL, f"the axes are named {result.names}, "
                                                      "asked ('m2', 'theta1')"))
    for axis, (low, high) in (("m2", (0.2, 2.0)), ("theta1", (1.6, 3.1))):
        values = np.asarray(result.grid[axis], dtype=float)
        if not (np.isclose(values.min(), low) and np.isclose(values.max(), high)):
            return _record(ExerciseResult(exercise, FAIL, f"axis {axis} runs from "
                                                          f"{values.min():g} to {values.max():g}, "
                                                          f"asked {low:g} to {high:g}"))
    rng = np.random.default_rng(52)
    shape = np.shape(result.values)
    for i, j in zip(rng.integers(0, shape[0], 4), rng.integers(0, shape[1], 4), strict=True):
        m2, th1 = float(result.grid["m2"][i]), float(result.grid["theta1"][j])
        traj = rbd.simulate(rbd.models.double_pendulum(m2=m2), [th1, -th1], [0.0, 0.0], 3.0,
                            2e-3, record_every=5)
        over = (np.abs(np.cumsum(traj.q, axis=1)) > np.pi).any(axis=1)
        expected = traj.t[over.argmax()] if over.any() else np.nan
        yours = float(result.values[i, j])
        if not np.allclose(yours, expected, rtol=0, atol=1e-12, equal_nan=True):
            return _record(ExerciseResult(
                exercise, FAIL, f"flip time at m2 = {m2:.3g} kg, theta1 = {th1:.3g} rad: yours "
                f"{yours:.6g} s, direct simulation {expected:.6g} s"))
    return _record(ExerciseResult(exercise, PASS, f"the map {shape} agrees with direct "
                                                  "simulations at four points"))


#: exercises whose check cell is replaced by a call of a dedicated check: label -> (function,
#: the answers in the notebook it is called with)
CUSTOM_CHECKS = {"01.2": ("check_rnea_passes", "my_rnea"),
                 "41.1": ("check_five_bar", "my_five_bar, my_loop_counts"),
                 "41.2": ("check_crank_drive", "my_drive, my_five_bar"),
                 "51.1": ("check_post_impact_rates", "my_post_impact_rates"),
                 "52.1": ("check_mass_sweep", "my_mass_map"),
                 "60.1": ("check_dtau_dv", "my_dtau_dv")}

# -- MyST to plain Markdown ---------------------------------------------------------------------

_ROLE = re.compile(r"\{([a-z]+(?::[a-z]+)?)\}`([^`]*)`")
_DIRECTIVE = re.compile(r"^(:{3,}|`{3,})\{([a-z-]+)\}[ \t]*(.*)$")
_TARGET = re.compile(r"^\([A-Za-z0-9_.:-]+\)=\s*$")


def _role(match: re.Match) -> str:
    role, text = match.group(1), match.group(2)
    shown = re.match(r"^(.*?)\s*<([^>]*)>$", text, re.S)
    if role in ("math",):
        return f"${text}$"
    if role in ("ref", "doc", "numref", "eq", "cite"):
        if shown:
            return shown.group(1)
        return f"({text})" if role == "eq" else text.rsplit("/", 1)[-1]
    target = shown.group(1) if shown else text
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    if role.endswith(("func", "meth")) and not target.endswith(")"):
        target += "()"
    return f"`{target}`"


def myst_to_markdown(text: str, *, drop: Iterable[str] = ()) -> str:
    """Plain Markdown for a MyST Markdown text: roles, directives and targets rewritten.

    ``{func}`rbd.aba``` becomes ```rbd.aba()```, ``{ref}`(12) <pai-12>``` becomes ``(12)``,
    ``{math}`x``` becomes ``$x$``; a ``:::{dropdown} Title`` block becomes an HTML
    ``<details>`` (shown folded by JupyterLab), ``{math}`` blocks ``$$ … $$``, admonitions a
    bold heading; ``(label)=`` targets are dropped. Directives whose title starts with one of
    ``drop`` are left out with their body.
    """
    out: list[str] = []
    stack: list[tuple[str, str]] = []          # (fence, closing text)
    skipping: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if skipping is not None:
            if stripped == skipping:
                skipping = None
            continue
        if _TARGET.match(stripped):
            continue
        m = _DIRECTIVE.match(stripped)
        if m:
            fence, name, arg = m.groups()
            if any(arg.startswith(d) for d in drop):
                skipping = fence
                continue
            if name == "dropdown":
                out += [f"<details><summary>{arg or 'Details'}</summary>", ""]
                stack.append((fence, "</details>"))
            elif name == "math":
                out.append("$$")
                stack.append((fence, "$$"))
            else:
                title = arg or name.capitalize()
                out += [f"**{_ROLE.sub(_role, title)}**", ""]
                stack.append((fence, ""))
            continue
        if stack and stripped == stack[-1][0]:
            closing = stack.pop()[1]
            if closing == "</details>":
                out += ["", closing]
            elif closing:
                out.append(closing)
            continue
        if stack and re.match(r"^:[a-z-]+:", stripped):   # directive options
            continue
        out.append(_ROLE.sub(_role, line))
    return "\n".join(out).strip("\n")


# -- notebooks ----------------------------------------------------------------------------------

_CHECK_CALL = re.compile(r"rbd\.testing\.check_consistency\((.*)\)\s*$")


def _stub_source(source: str) -> str:
    """The answer cell with every function body replaced by a stub, ``my_*`` values by ``...``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    edits: list[tuple[int, int, list[str]]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            first = node.body[0]
            start = first.lineno - 1
            indent = " " * first.col_offset
            keep = []
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                keep = lines[start:first.end_lineno]
            body = keep + [f"{indent}# your derivation here",
                           f'{indent}raise NotImplementedError("{node.name}: write its body")']
            edits.append((start, node.end_lineno, body))
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("my_")):
            name = node.targets[0].id
            edits.append((node.lineno - 1, node.end_lineno,
                          [f"{name} = ...  # your answer here"]))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    return "\n".join(lines)


def _check_source(source: str, label: str, answer: str | None) -> str:
    """The check cell as a call of :func:`check` that reports instead of asserting."""
    if label in CUSTOM_CHECKS:
        fn, name = CUSTOM_CHECKS[label]
        return (f'import rbd.exercises\n\nresult = rbd.exercises.{fn}({name}, '
                f'exercise="{label}")\nprint(result)')
    out = ["import rbd.exercises", ""]
    for line in source.splitlines():
        m = _CHECK_CALL.search(line)
        if m:
            line = line[:m.start()] + f'rbd.exercises.check({m.group(1)}, exercise="{label}")'
        if line.lstrip().startswith("assert report"):
            continue
        out.append(line)
    return "\n".join(out)


def _is_check(source: str, label: str) -> bool:
    return "check_consistency(" in source or label in CUSTOM_CHECKS


def _cell(kind: str, source: str, **metadata) -> dict:
    cell = {"cell_type": kind, "metadata": metadata, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _split_myst(text: str) -> tuple[str, list[tuple[str, str, list[str]]]]:
    """Front matter and the (kind, source, tags) blocks of a MyST notebook."""
    front = ""
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4)
        front, text = text[4:end], text[end + 5:]
    blocks: list[tuple[str, str, list[str]]] = []
    md: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```{code-cell}"):
            if "".join(md).strip():
                blocks.append(("markdown", "\n".join(md).strip("\n"), []))
            md = []
            i += 1
            tags: list[str] = []
            while i < len(lines) and re.match(r"^:[a-z-]+:", lines[i]):
                m = re.match(r"^:tags:\s*\[(.*)\]", lines[i])
                if m:
                    tags = [t.strip().strip("'\"") for t in m.group(1).split(",") if t.strip()]
                i += 1
            code: list[str] = []
            while i < len(lines) and lines[i] != "```":
                code.append(lines[i])
                i += 1
            blocks.append(("code", "\n".join(code).strip("\n"), tags))
        elif lines[i].strip() == "+++":
            if "".join(md).strip():
                blocks.append(("markdown", "\n".join(md).strip("\n"), []))
            md = []
        else:
            md.append(lines[i])
        i += 1
    if "".join(md).strip():
        blocks.append(("markdown", "\n".join(md).strip("\n"), []))
    return front, blocks


def tutorial_notebook(path: str | os.PathLike, *, solutions: bool = False) -> dict:
    """A Jupyter notebook (nbformat 4, as a dict) of the MyST tutorial at ``path``.

    Markdown cells are plain Markdown (:func:`myst_to_markdown`). In the exercise section
    (from the ``## Exercise`` heading on), the answer cells (tagged ``hide-input``) and check
    cells carry the metadata ``rbd_exercise`` (``"10.1"``, ...) and ``rbd_role`` (``"answer"``
    / ``"check"``); each check calls :func:`check`. With ``solutions=False`` the answers are
    stubs and the worked-solution dropdowns are left out; with ``solutions=True`` both stay,
    the dropdowns folded as ``<details>``.
    """
    path = Path(path)
    _, blocks = _split_myst(path.read_text(encoding="utf-8"))
    number = path.name.split("_", 1)[0]
    cells: list[dict] = []
    in_exercises, k, answer = False, 0, None
    drop = () if solutions else ("Worked solution",)
    for index, (kind, source, tags) in enumerate(blocks):
        if kind == "markdown":
            if re.search(r"^## Exercises?\s*$", source, re.M):
                in_exercises = True
            found = re.findall(r"\*\*Exercise (\d+)\.\*\*", source)
            if found:
                k = int(found[-1])
            cells.append(_cell("markdown", myst_to_markdown(source, drop=drop)))
            continue
        label = f"{number}.{k}"
        following = next((b for b in blocks[index + 1:] if b[0] == "code"), None)
        if (in_exercises and k and "hide-input" in tags and following is not None
                and _is_check(following[1], label)):
            names = re.findall(r"^(?:def )?(my_\w+)", source, re.M)
            answer = names[-1] if names else None
            code = source if solutions else _stub_source(source)
            meta = {"rbd_exercise": label, "rbd_role": "answer"}
            if solutions:
                meta["jupyter"] = {"source_hidden": True}
            cells.append(_cell("code", code, **meta))
        elif in_exercises and k and _is_check(source, label):
            cells.append(_cell("code", _check_source(source, label, answer),
                               rbd_exercise=label, rbd_role="check"))
        else:
            meta = {"tags": tags} if tags else {}
            if "hide-input" in tags:
                meta["jupyter"] = {"source_hidden": True}
            cells.append(_cell("code", source, **meta))
    code = [c for c in cells if c["cell_type"] == "code"]
    if code and not any("%matplotlib" in c["source"] for c in code):
        # figures as images in the notebook whatever backend MPLBACKEND names
        code[0]["source"] = "%matplotlib inline\n" + code[0]["source"]
    labels = sorted({c["metadata"]["rbd_exercise"] for c in cells
                     if c["metadata"].get("rbd_role") == "check"})
    for k, cell in enumerate(cells):     # nbformat 4.5: every cell has an id, unique in it
        cell["id"] = f"{number}-{k:03d}"
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"},
                         "rbd": {"tutorial": path.name, "exercises": labels,
                                 "solutions": solutions}}}


def default_tutorials() -> Path:
    """The ``tutorials/`` folder of a source checkout of rbd: the one beside the package when
    it runs from the checkout, else ``tutorials/`` of the current directory (an installed
    package does not carry the tutorials; run from the clone, or pass the folder)."""
    beside = Path(__file__).resolve().parents[1] / "tutorials"
    if any(beside.glob("[0-9][0-9]_*.md")):
        return beside
    return Path.cwd() / "tutorials"


def write_notebooks(out_dir: str | os.PathLike, tutorials: str | os.PathLike | None = None, *,
                    solutions: bool = False) -> list[Path]:
    """Write one ``.ipynb`` per tutorial into ``out_dir`` (stubs), and with ``solutions`` also
    ``out_dir/solutions/`` (worked solutions). Returns the paths written."""
    src = Path(tutorials) if tutorials is not None else default_tutorials()
    sources = sorted(src.glob("[0-9][0-9]_*.md"))
    if not sources:
        raise InputError(f"tutorials folder {str(src)!r} holds no NN_*.md tutorial")
    out = Path(out_dir)
    written = []
    for variant, folder in ((False, out), (True, out / "solutions")) if solutions else \
            ((False, out),):
        folder.mkdir(parents=True, exist_ok=True)
        for md in sources:
            target = folder / (md.stem + ".ipynb")
            nb = tutorial_notebook(md, solutions=variant)
            target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
            written.append(target)
    return written


# -- grading ------------------------------------------------------------------------------------

#: seconds one submitted notebook's exercises may run before it is marked failed
GRADE_TIMEOUT = 300.0


@dataclass
class GradeRow:
    """One line of the grade table."""

    file: str
    exercise: str
    status: str
    message: str = ""
    extra: dict = field(default_factory=dict)


def _exercise_code(nb: dict) -> str:
    """The code of the exercise section (from the first exercise cell on), magics removed."""
    cells = nb.get("cells", [])
    start = next((i for i, c in enumerate(cells) if c.get("metadata", {}).get("rbd_exercise")),
                 None)
    if start is None:
        return ""
    chunks = []
    for c in cells[start:]:
        if c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        chunks.append(src)
    return "\n\n".join(chunks)


def _run_exercises(path: str) -> list[dict]:
    """Run one notebook's exercise cells here and return the recorded results (as dicts)."""
    global _RECORDED
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    code = _exercise_code(nb)
    _RECORDED = []
    error = None
    try:
        exec(compile(code, path, "exec"), {"__name__": "__main__"})
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    rows = [{"exercise": r.exercise or "?", "status": r.status, "message": r.message}
            for r in _RECORDED]
    _RECORDED = None
    done = {r["exercise"] for r in rows}
    for label in nb.get("metadata", {}).get("rbd", {}).get("exercises", []):
        if label not in done:
            rows.append({"exercise": label, "status": FAIL,
                         "message": f"check not reached: {error or 'no check cell ran'}"})
    return rows


def grade(folder: str | os.PathLike, *, timeout: float = GRADE_TIMEOUT) -> list[GradeRow]:
    """Grade every ``.ipynb`` in ``folder``: run its exercise cells in a fresh Python process
    each and collect the results of their checks (:func:`check`), one row per exercise."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"FOLDER {str(folder)!r} is not a directory")
    rows: list[GradeRow] = []
    env = dict(os.environ, MPLBACKEND="Agg")
    for nb in sorted(folder.glob("*.ipynb")):
        try:
            run = subprocess.run([sys.executable, "-m", "rbd.exercises", str(nb)], env=env,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            rows.append(GradeRow(nb.name, "*", FAIL, f"ran longer than {timeout:g} s"))
            continue
        marker = run.stdout.rfind("\n@@rbd-grade@@")
        if run.returncode != 0 or marker < 0:
            last = (run.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append(GradeRow(nb.name, "*", FAIL, f"could not be run: {last}"))
            continue
        for r in json.loads(run.stdout[marker + len("\n@@rbd-grade@@"):]):
            rows.append(GradeRow(nb.name, r["exercise"], r["status"], r["message"]))
    return rows


def format_grade_table(rows: list[GradeRow], width: int = 100) -> str:
    """The grade table: file, exercise, status, message (cut to fit ``width``), and a
    passed-of-total line per file."""
    if not rows:
        return "no notebooks (.ipynb) to grade"
    fw = max(len("file"), *(len(r.file) for r in rows))
    ew = max(len("exercise"), *(len(r.exercise) for r in rows))
    lines = [f"{'file':<{fw}}  {'exercise':<{ew}}  {'status':<8}  message"]
    room = max(20, width - fw - ew - 14)
    for r in rows:
        msg = r.message if len(r.message) <= room else r.message[:room - 1] + "…"
        lines.append(f"{r.file:<{fw}}  {r.exercise:<{ew}}  {r.status:<8}  {msg}")
    lines.append("")
    for name in dict.fromkeys(r.file for r in rows):
        mine = [r for r in rows if r.file == name]
        lines.append(f"{name}: {sum(r.status == PASS for r in mine)} of {len(mine)} passed")
    return "\n".join(lines)


if __name__ == "__main__":   # one submitted notebook, run by grade() in its own process
    from rbd import exercises as _module  # the module the notebook's checks record into

    results = _module._run_exercises(sys.argv[1])
    print("\n@@rbd-grade@@" + json.dumps(results))
