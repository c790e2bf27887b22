"""What a stopped simulation reports: what happened, what to try, what was kept."""

from __future__ import annotations

import math
from types import SimpleNamespace

from ..errors import SimulationError
from .dynamics import NONFINITE_A, StopError, magnitudes
from .rollouts import CompiledRun

_STIFF_HINT = ("if the system is stiff (fast stable modes), an implicit method handles it: "
               "integrator='solve_ivp' with method='Radau' or 'BDF'")


def _hint(stop: StopError, adaptive: bool, method: str) -> str:
    """What to try after ``stop``."""
    forces = ("tau(t, q, v), f_ext(t, q, v) and the model (a destabilizing gain, a near-zero "
              "mass or inertia)")
    if stop.kind == "diverged":
        if adaptive:
            return f"Check {forces}; {_STIFF_HINT}."
        return (f"Try a smaller dt (an explicit method blows up once dt exceeds about 2/|λ| of "
                f"the fastest mode λ); check {forces}; {_STIFF_HINT}.")
    if not adaptive:
        return "Raise max_evaluations or use a larger dt."
    implicit = method in ("Radau", "BDF", "LSODA")
    return ("The step size collapsed: the problem is stiff or diverging, and a smaller rtol or "
            "atol will not help. "
            + ("" if implicit else "Try method='Radau' or 'BDF' (implicit, for stiff problems) "
                                   "or a fixed-step integrator with a small dt; ")
            + f"check {forces}; raise max_evaluations (or lower min_step) only if the run really "
              "needs that much work.")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _stop_message(stop: StopError, run, name: str, limits: dict, samples: tuple) -> str:
    """What happened, what to try, and what the error's trajectory holds."""
    t_last, count = samples
    kept = (f"The trajectory up to the last finite state (t = {t_last:.6g} s, "
            f"{_plural(count, 'sample')}) is in this error's .trajectory." if count
            else "No state was recorded.")
    work = f"{_plural(run.steps, 'step')} and {run.evaluations_at_stop} evaluations"
    if stop.kind == "diverged":
        head = (f"The simulation diverged at t = {stop.t:.6g} s (step {run.steps}, "
                f"{name}, dt = {run.dt:g}): {stop.detail}.")
    elif stop.kind == "evaluations":
        head = (f"{name} stopped at t = {run.last[0]:.6g} s of {run.duration:g} s after {work}: "
                f"it reached max_evaluations = {limits['max_evaluations']:.0f} (last step "
                f"{run.last_step:.3g} s, {magnitudes(run.last)}).")
    elif stop.kind == "min_step":
        head = (f"{name} stopped at t = {stop.t:.6g} s of {run.duration:g} s after {work}: "
                f"{stop.detail}.")
    else:
        head = (f"{name} failed at t = {stop.t:.6g} s of {run.duration:g} s after {work}: "
                f"{stop.detail}")
    return f"{head} {limits['hint']} {kept}"


_FAILURES = {"q": "q became non-finite", "v": "v became non-finite", "a": NONFINITE_A}


def _compiled_divergence(run: CompiledRun, integrator: str, duration: float,
                         dt: float) -> SimulationError:
    """The report of a compiled run that diverged, worded as the Python path's."""
    traj = run.trajectory
    stop = StopError("diverged", run.failure_t,
                     _FAILURES.get(run.failure, "the state became non-finite"))
    steps = run.steps + 1 if len(traj.t) else 0       # the step that failed
    state = SimpleNamespace(steps=steps, dt=dt, duration=duration,
                            evaluations_at_stop=run.trajectory.evaluations)
    limits = dict(hint=_hint(stop, False, ""))
    t_last = traj.t[-1] if len(traj.t) else -math.inf
    message = _stop_message(stop, state, integrator, limits, (t_last, len(traj.t)))
    return SimulationError(message, traj if len(traj.t) else None,
                           diverged_at=run.failure_t)
