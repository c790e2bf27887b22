"""The entry point :func:`simulate`: arguments, the run, and the error report.

See :mod:`rbd.simulation` for the integrators, events and impacts.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import InputError, SimulationError
from ..model import Model
from .drivers import Progress, Recorder, Run, run_adaptive, run_fixed
from .dynamics import Dynamics, StopError, check_quaternions, checked, magnitudes, positive_number
from .events import Events, impact_table
from .integrators import FIXED_STEP
from .trajectory import Trajectory

__all__ = ["simulate", "INTEGRATORS", "IVP_METHODS", "PROGRESS_THRESHOLD", "EVALUATION_FLOOR",
           "EVALUATIONS_PER_SECOND"]

#: Names accepted by ``simulate(..., integrator=...)``.
INTEGRATORS = ("euler", "rk4", "implicit_euler", "solve_ivp")
#: Adaptive methods of :func:`scipy.integrate.solve_ivp` usable with ``integrator="solve_ivp"``.
IVP_METHODS = ("RK45", "DOP853", "RK23", "Radau", "BDF", "LSODA")
#: A run with more steps than this shows a progress bar (when stderr is a terminal).
PROGRESS_THRESHOLD = 2000
#: Default ``max_evaluations`` of ``solve_ivp``: this many, plus the two terms below.
EVALUATION_FLOOR = 10_000
#: Default ``max_evaluations`` of ``solve_ivp``: this many per simulated second (+2 per sample).
EVALUATIONS_PER_SECOND = 100_000


def _force_argument(value, shape: tuple, name: str):
    if value is None or callable(value):
        return value
    return checked(value, shape, name)


def _validate(model, q0, v0, duration, dt, integrator, tau, f_ext, events, event_tol, method):
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    q0 = checked(q0, (model.nq,), "q0")
    v0 = checked(v0, (model.nv,), "v0")
    check_quaternions(model, q0, "q0")
    duration = positive_number(duration, "duration", allow_zero=True)
    dt = positive_number(dt, "dt")
    if integrator not in INTEGRATORS:
        raise InputError(f"unknown integrator {integrator!r}; choose from {INTEGRATORS}")
    if method not in IVP_METHODS:
        raise InputError(f"unknown solve_ivp method {method!r}; choose from {IVP_METHODS}")
    tau = _force_argument(tau, (model.nv,), "tau")
    f_ext = _force_argument(f_ext, (model.nbodies, 6), "f_ext")
    if callable(events):
        events = [events]
    events = list(events)
    for k, g in enumerate(events):
        if not callable(g):
            raise InputError(f"events[{k}] must be a callable g(t, q, v) -> float")
    event_tol = positive_number(event_tol, "event_tol")
    return q0, v0, duration, dt, tau, f_ext, events, event_tol



def _evaluation_limit(value, integrator: str, duration: float, dt: float) -> float:
    """``max_evaluations`` as given, or its default (see :func:`simulate`)."""
    if value is None:
        if integrator != "solve_ivp":
            return math.inf
        samples = math.ceil(duration / dt) + 1
        return float(EVALUATION_FLOOR + math.ceil(EVALUATIONS_PER_SECOND * duration)
                     + 2 * samples)
    if isinstance(value, bool):
        raise InputError(f"max_evaluations must be a positive integer or None, got {value!r}")
    limit = positive_number(value, "max_evaluations") if value != math.inf else math.inf
    if limit != math.inf and limit != int(limit):
        raise InputError(f"max_evaluations must be a positive integer or None, got {value!r}")
    return limit


def _keep_last_state(run: Run, recorder: Recorder) -> None:
    """Record the last accepted state when it lies past the last sample (solve_ivp)."""
    t, q, v = run.last
    if q is None or t <= recorder.last_time:
        return
    run.dyn.max_evaluations = math.inf
    try:
        recorder.add(run.dyn, t, q, v)
    except StopError:
        pass


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


def _stop_message(stop: StopError, run: Run, name: str, limits: dict, samples: tuple) -> str:
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


def simulate(
    model: Model,
    q0,
    v0,
    duration: float,
    dt: float,
    integrator: str = "rk4",
    tau=None,
    f_ext=None,
    events: Sequence[Callable] | Callable = (),
    impact=None,
    progress: bool | None = None,
    backend: str | None = None,
    *,
    event_tol: float = 1e-10,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-10,
    max_step: float = np.inf,
    max_evaluations: int | None = None,
    min_step: float = 0.0,
) -> Trajectory:
    """Integrate the equations of motion of ``model`` from ``(q0, v0)`` for ``duration`` seconds.

    Parameters
    ----------
    model : Model
    q0 : (nq,) array_like
        Initial configuration (unit quaternions for spherical and free joints).
    v0 : (nv,) array_like
        Initial joint velocities.
    duration : float
        Simulated time in seconds, ``>= 0``.
    dt : float
        Step size of ``"euler"``, ``"rk4"`` and ``"implicit_euler"``; sampling interval of the
        trajectory for every integrator (``"solve_ivp"`` chooses its own steps).
    integrator : {"rk4", "euler", "implicit_euler", "solve_ivp"}
        See the module documentation; ``"implicit_euler"`` is backward Euler solved
        by Newton's method with the analytical Jacobian of :func:`rbd.aba_derivatives`
        (stable on stiff mechanisms; dissipates energy).
    tau : (nv,) array_like or callable, optional
        Joint forces: constant, or ``tau(t, q, v) -> (nv,)`` (zero by default).
    f_ext : (nbodies, 6) array_like or callable, optional
        External body-frame spatial forces, constant or ``f_ext(t, q, v)``.
    events : callable or sequence of callables, optional
        Event functions ``g(t, q, v) -> float`` with optional ``terminal`` and
        ``direction`` attributes (as in :func:`scipy.integrate.solve_ivp`).
    impact : callable, mapping or sequence, optional
        Impact map applied at events: ``impact(q, v) -> (q, v)`` or
        ``-> (model, q, v)`` (the new model must have the same ``nq``, ``nv``).
        A single callable serves every event; ``{index: callable}`` or a
        sequence aligned with ``events`` selects per event.
    progress : bool, optional
        Show a progress bar; by default it is shown when the run has more than
        2000 steps and stderr is a terminal.
    backend : {None, "kernel", "reference"}
        Passed to :func:`rbd.aba`, :func:`rbd.integrate` and the energies.
    event_tol : float, keyword-only
        Time tolerance of event location (seconds).
    method : str, keyword-only
        The solve_ivp method for ``integrator="solve_ivp"`` (one of :data:`IVP_METHODS`).
    rtol, atol, max_step : float, keyword-only
        Tolerances and largest step of ``"solve_ivp"``.
    max_evaluations : int, optional, keyword-only
        Largest number of forward-dynamics evaluations (the count in
        :attr:`Trajectory.evaluations`) before the run stops with a
        :class:`~rbd.SimulationError`.  Default for ``"solve_ivp"``:
        ``10_000 + 10⁵ · duration / (1 s) + 2 · (duration / dt + 1)``
        (:data:`EVALUATION_FLOOR`, :data:`EVALUATIONS_PER_SECOND`): some 100
        times what a non-stiff run needs (the example pendulums take ~10³ a
        simulated second at ``rtol = 1e-10``), and reached within seconds of
        wall time when the step size collapses.  ``"euler"`` and ``"rk4"`` do a fixed amount of work
        (1 or 4 evaluations a step, plus event location) and have no limit by
        default.  ``math.inf`` removes the limit.
    min_step : float, keyword-only
        Smallest accepted step of ``"solve_ivp"`` (seconds); a shorter step
        stops the run with a :class:`~rbd.SimulationError`, except the first
        step after a (re)start of the solver (its initial guess) and the last
        step of the run (clipped to the duration).  Default 0: only the solver's own limit
        (a step below the floating-point spacing of ``t``) applies.

    Returns
    -------
    Trajectory

    Raises
    ------
    InputError
        On a bad argument (``dt <= 0``, ``duration < 0``, a wrong shape, a
        non-unit quaternion, an unknown integrator, a bad impact map ...).
    SimulationError
        When the run cannot go on: the state, the acceleration or ``tau`` /
        ``f_ext`` became non-finite (the simulation diverged), the run reached
        ``max_evaluations``, a ``solve_ivp`` step fell below ``min_step``, or the
        solver failed.  The message says when, at which step, and what to try;
        the error's ``trajectory`` attribute holds the :class:`Trajectory` up to
        the last finite state (``None`` when not even the initial state could
        be evaluated).

    Examples
    --------
    A double pendulum released from a tilt, and the energy error of RK4:

    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> traj = rbd.simulate(model, [0.5, -0.3], [0.0, 0.0], duration=1.0, dt=0.01)
    >>> traj.q.shape, bool(traj.energy_drift < 1e-6)
    ((101, 2), True)
    """
    q0, v0, duration, dt, tau, f_ext, events, event_tol = _validate(
        model, q0, v0, duration, dt, integrator, tau, f_ext, events, event_tol, method)
    impacts = impact_table(impact, len(events))
    rtol = positive_number(rtol, "rtol")
    atol = positive_number(atol, "atol")
    max_step = positive_number(max_step, "max_step") if np.isfinite(max_step) else np.inf
    limit = _evaluation_limit(max_evaluations, integrator, duration, dt)
    min_step = positive_number(min_step, "min_step", allow_zero=True)
    if progress is None:
        progress = duration / dt > PROGRESS_THRESHOLD and sys.stderr.isatty()
    dyn = Dynamics(model, tau, f_ext, backend, limit)
    recorder = Recorder(keep_tau=tau is not None)
    bar = Progress(bool(progress), duration)
    run = Run(dyn, recorder, Events(events, event_tol), impacts, bar, duration, dt)
    run.last = (0.0, q0, v0)
    name = integrator if integrator != "solve_ivp" else f"solve_ivp ({method})"
    meta = dict(model_name=model.name, integrator=name, dt=dt)
    try:
        if integrator == "solve_ivp":
            run_adaptive(run, q0, v0, method, rtol, atol, max_step, min_step)
        else:
            run_fixed(run, FIXED_STEP[integrator], q0, v0)
    except StopError as stop:
        run.evaluations_at_stop = dyn.evaluations
        _keep_last_state(run, recorder)
        partial = (recorder.trajectory(backend, events=run.records, steps=run.steps,
                                       evaluations=dyn.evaluations, **meta)
                   if recorder.t else None)
        limits = dict(max_evaluations=limit,
                      hint=_hint(stop, integrator == "solve_ivp", method))
        message = _stop_message(stop, run, name, limits, (recorder.last_time, len(recorder.t)))
        raise SimulationError(message, partial) from stop.__cause__
    finally:
        bar.close()
    return recorder.trajectory(backend, events=run.records, steps=run.steps,
                               evaluations=dyn.evaluations, **meta)
