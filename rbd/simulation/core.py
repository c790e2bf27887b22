"""The entry point :func:`simulate`: arguments, the run, and the error report.

See :mod:`rbd.simulation` for the integrators, events and impacts.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .. import algorithms
from ..errors import InputError, SimulationError
from ..model import Model
from .control import forcing
from .drivers import Progress, Recorder, Run, run_adaptive, run_fixed
from .dynamics import Dynamics, StopError, check_quaternions, checked, magnitudes, positive_number
from .events import Events, impact_table
from .integrators import FIXED_STEP
from .rollouts import compiled_kernel, grid_times, run_compiled
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
    f_ext = _force_argument(f_ext, (model.nbodies, 6), "f_ext")
    if callable(events):
        events = [events]
    events = list(events)
    for k, g in enumerate(events):
        if not callable(g):
            raise InputError(f"events[{k}] must be a callable g(t, q, v) -> float")
    event_tol = positive_number(event_tol, "event_tol")
    return q0, v0, duration, dt, f_ext, events, event_tol


def _record_options(damping, record_every, num_threads, integrator: str) -> None:
    """Check ``damping``, ``record_every`` and ``num_threads``."""
    if not isinstance(damping, (bool, np.bool_)):
        raise InputError(f"damping must be True or False, got {damping!r}")
    for name, value in (("record_every", record_every), ("num_threads", num_threads)):
        if value is None and name == "num_threads":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{name} must be a positive integer, got {value!r}")
    if record_every != 1 and integrator == "solve_ivp":
        raise InputError("record_every needs integrator='euler' or 'rk4' (with 'solve_ivp', "
                         "dt is only the sampling interval: use a larger dt)")



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
    damping: bool = False,
    record_every: int = 1,
    num_threads: int | None = None,
    compiled: bool = True,
    constraints=None,
    baumgarte="auto",
) -> Trajectory:
    """Integrate the equations of motion of ``model`` from ``(q0, v0)`` for ``duration`` seconds.

    Parameters
    ----------
    model : Model
    q0 : (nq,) or (N, nq) array_like
        Initial configuration (unit quaternions for spherical and free joints);
        ``N`` of them for a batch of ``N`` rollouts (see Notes).
    v0 : (nv,) or (N, nv) array_like
        Initial joint velocities.
    duration : float
        Simulated time in seconds, ``>= 0``.
    dt : float
        Step size of ``"euler"``, ``"rk4"`` and ``"implicit_euler"``; sampling interval of the
        trajectory for every integrator (``"solve_ivp"`` chooses its own steps).
    integrator : {"rk4", "euler", "implicit_euler", "solve_ivp"}
        See the module documentation; ``"implicit_euler"`` is backward Euler solved
        by Newton's method with the analytical Jacobian of :func:`rbd.aba_derivatives`
        (stable on stiff mechanisms; dissipates energy; Python path).
    tau : array_like, PD or callable, optional
        Joint forces (zero by default): constant ``(nv,)``; one row per step
        ``(steps, nv)`` with ``"euler"`` / ``"rk4"`` (``steps = ceil(duration / dt)``,
        row ``k`` acts from ``k dt`` to ``(k + 1) dt``); a
        :class:`~rbd.simulation.PD` law ``kp (q_ref ⊖ q) - kd v``
        (:mod:`rbd.simulation.control`); or a callable ``tau(t, q, v) -> (nv,)``,
        called at every stage (four times a step with RK4) on the Python path:
        it costs its own run time plus some 20 µs a call of Python overhead,
        where the compiled path takes a few µs for the whole step.
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
    damping : bool, keyword-only
        Apply the joint damping ``-model.damping * v`` (off by default).
    record_every : int, keyword-only
        Keep a sample every this many steps, and the last one (``"euler"``,
        ``"rk4"``); memory and the energy evaluations scale with the samples.
    num_threads : int, optional, keyword-only
        Threads for a batch on the compiled path (default: the compiled
        model's ``num_threads``).
    compiled : bool, keyword-only
        ``False`` runs the Python path even where the compiled one could (for
        comparisons; see Notes).
    constraints : sequence of constraint kinds, optional, keyword-only
        Bilateral constraints (:mod:`rbd.constraints`) enforced by
        :func:`rbd.constrained_dynamics` at every stage; default: the model's
        active :attr:`~rbd.Model.constraints` (``()`` for none).  Such a run
        takes the Python path, and :attr:`Trajectory.constraint_error` holds
        ``φ(q)`` at each sample.
    baumgarte : "auto", (kp, kd) or None, keyword-only
        Stabilization of the constraints, ``J q̈ = γ − kd J v − kp φ``
        (RBDA §8.3): ``"auto"`` is ``kp = ω²``, ``kd = 2ω`` with
        ``ω = 1 / (20 dt)`` (critically damped, slow against the step); None
        integrates ``J q̈ = γ`` alone, whose error drifts.

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

    Notes
    -----
    **Compiled path.**  With ``"euler"`` or ``"rk4"``, the compiled kernels
    (default backend), no events, and ``tau`` / ``f_ext`` that are not
    callables, the whole run happens in compiled code without the GIL
    (``rbd/_kernels/rollout.pyx``, :mod:`rbd.simulation.rollouts`): the same
    steps as the Python path, equal to round-off, some 10-100 times faster.
    Everything else - callables, events and impacts (located and applied on
    the Python path), ``"solve_ivp"``, ``backend="reference"``, models with
    mimic joints - runs on the Python path, as does ``progress=True`` (the bar
    is drawn there).

    **Batches.**  ``q0`` of shape ``(N, nq)`` and ``v0`` of shape ``(N, nv)``
    run ``N`` rollouts (in threads on the compiled path, one after the other
    otherwise) and return one :class:`Trajectory` with ``q`` of shape
    ``(N, T, nq)``, ``v``, ``a`` and ``tau`` likewise, ``kinetic`` and
    ``potential`` of shape ``(N, T)`` and the times ``t`` shared.  A batch
    cannot have events.

    Examples
    --------
    A double pendulum released from a tilt, and the energy error of RK4:

    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> traj = rbd.simulate(model, [0.5, -0.3], [0.0, 0.0], duration=1.0, dt=0.01)
    >>> traj.q.shape, bool(traj.energy_drift < 1e-6)
    ((101, 2), True)
    """
    options = dict(integrator=integrator, tau=tau, f_ext=f_ext, events=events, impact=impact,
                   progress=progress, backend=backend, event_tol=event_tol, method=method,
                   rtol=rtol, atol=atol, max_step=max_step, max_evaluations=max_evaluations,
                   min_step=min_step, damping=damping, record_every=record_every,
                   num_threads=num_threads, compiled=compiled, constraints=constraints,
                   baumgarte=baumgarte)
    if np.ndim(q0) == 2 or np.ndim(v0) == 2:
        return _simulate_batch(model, q0, v0, duration, dt, options)
    return _simulate_one(model, q0, v0, duration, dt, **options)


def _simulate_one(model, q0, v0, duration, dt, integrator, tau, f_ext, events, impact,
                  progress, backend, event_tol, method, rtol, atol, max_step,
                  max_evaluations, min_step, damping, record_every, num_threads,
                  compiled, constraints, baumgarte) -> Trajectory:
    """One run of :func:`simulate` (arguments as there)."""
    q0, v0, duration, dt, f_ext, events, event_tol = _validate(
        model, q0, v0, duration, dt, integrator, tau, f_ext, events, event_tol, method)
    _record_options(damping, record_every, num_threads, integrator)
    if not isinstance(compiled, (bool, np.bool_)):
        raise InputError(f"compiled must be True or False, got {compiled!r}")
    impacts = impact_table(impact, len(events))
    solver = (positive_number(rtol, "rtol"), positive_number(atol, "atol"),
              positive_number(max_step, "max_step") if np.isfinite(max_step) else np.inf,
              _evaluation_limit(max_evaluations, integrator, duration, dt),
              positive_number(min_step, "min_step", allow_zero=True))
    times = grid_times(duration, dt) if integrator != "solve_ivp" else None
    force = forcing(model, tau, bool(damping), None if times is None else len(times) - 1)
    active, gains = _constraint_options(model, constraints, baumgarte, dt)
    kernel = None
    if compiled and not progress and times is not None and not active:
        evaluations = 1 + (len(times) - 1) * (4 if integrator == "rk4" else 1)
        if evaluations <= solver[3]:    # else the Python path stops at the limit
            kernel = compiled_kernel(model, backend, integrator, tau, f_ext, events)
    if kernel is not None:
        traj, status = run_compiled(kernel, model, q0, v0, times, dt, integrator, force,
                                    f_ext, record_every, tau is not None, num_threads)
        if status == 0:
            return traj
        # diverged: the Python path runs it again for its report (SimulationError)
    run = _PythonRun(integrator, tau if force is None else force, f_ext, events, impacts,
                     progress, backend, event_tol, method, solver, record_every, active, gains)
    traj = _run_python(model, q0, v0, duration, dt, run)
    if active:
        traj.constraint_error = algorithms.constraint_error(model, traj.q, active)
    return traj


def _constraint_options(model, constraints, baumgarte, dt) -> tuple[tuple, object]:
    """The active constraints of the run and the Baumgarte gains (see :func:`simulate`)."""
    from ..constraints.kinds import active_constraints

    active = tuple(active_constraints(model, constraints)) if isinstance(model, Model) else ()
    if isinstance(baumgarte, str):
        if baumgarte != "auto":
            raise InputError(f"baumgarte must be 'auto', (kp, kd) or None, got {baumgarte!r}")
        omega = 1.0 / (20.0 * float(dt))
        baumgarte = (omega * omega, 2.0 * omega)
    return active, baumgarte


@dataclass
class _PythonRun:
    """The validated options of a run on the Python path."""

    integrator: str
    tau: object
    f_ext: object
    events: list
    impacts: list
    progress: bool | None
    backend: str | None
    event_tol: float
    method: str
    solver: tuple           # rtol, atol, max_step, the evaluation limit, min_step
    record_every: int
    constraints: tuple = ()
    baumgarte: object = None


def _run_python(model, q0, v0, duration, dt, options: _PythonRun) -> Trajectory:
    """The Python path of :func:`simulate` (validated arguments)."""
    o = options
    integrator, tau, f_ext, events, impacts = o.integrator, o.tau, o.f_ext, o.events, o.impacts
    progress, backend, event_tol, method = o.progress, o.backend, o.event_tol, o.method
    rtol, atol, max_step, limit, min_step = o.solver
    keep_tau = tau is not None and not (hasattr(tau, "command") and tau.tau is None
                                        and tau.q_ref is None)
    if progress is None:
        progress = duration / dt > PROGRESS_THRESHOLD and sys.stderr.isatty()
    dyn = Dynamics(model, tau, f_ext, backend, limit, o.constraints, o.baumgarte)
    recorder = Recorder(keep_tau=keep_tau)
    bar = Progress(bool(progress), duration)
    run = Run(dyn, recorder, Events(events, event_tol), impacts, bar, duration, dt,
              o.record_every)
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


def _batch_states(model, q0, v0) -> tuple[np.ndarray, np.ndarray]:
    """``q0`` ``(N, nq)`` and ``v0`` ``(N, nv)`` of a batch, checked and named."""
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if np.ndim(q0) != 2 or np.shape(q0)[1] != model.nq:
        raise InputError(f"q0 of a batch (v0 of shape (N, nv)) must have shape "
                         f"(N, {model.nq}), got {np.shape(q0)}")
    q0 = checked(q0, np.shape(q0), "q0")
    v0 = checked(v0, (len(q0), model.nv), "v0 (one row per row of q0)")
    for k, q in enumerate(q0):
        check_quaternions(model, q, f"q0[{k}]")
    return q0, v0


def _simulate_batch(model, q0, v0, duration, dt, options: dict) -> Trajectory:
    """``N`` runs of :func:`simulate` in one :class:`Trajectory` (see its Notes)."""
    q0, v0 = _batch_states(model, q0, v0)
    events = options["events"]
    if callable(events) or len(events):
        raise InputError("a batch (q0 of shape (N, nq)) cannot have events: run the initial "
                         "states one at a time")
    if len(q0) == 0:
        raise InputError("a batch needs at least one initial state (q0 has shape (0, nq))")
    # every argument checked as for one run (on the first state)
    _validate(model, q0[0], v0[0], duration, dt, options["integrator"], options["tau"],
              options["f_ext"], (), options["event_tol"], options["method"])
    _record_options(options["damping"], options["record_every"], options["num_threads"],
                    options["integrator"])
    integrator, tau = options["integrator"], options["tau"]
    f_ext = _force_argument(options["f_ext"], (model.nbodies, 6), "f_ext")
    active, _ = _constraint_options(model, options["constraints"], options["baumgarte"], dt)
    kernel = (compiled_kernel(model, options["backend"], integrator, tau, f_ext, ())
              if options["compiled"] and not active else None)
    if kernel is None:
        return _stack([_simulate_one(model, q, v, duration, dt, **options)
                       for q, v in zip(q0, v0, strict=True)])
    times = grid_times(positive_number(duration, "duration", allow_zero=True), dt)
    force = forcing(model, tau, bool(options["damping"]), len(times) - 1)
    traj, status = run_compiled(kernel, model, q0, v0, times, float(dt), integrator, force,
                                f_ext, options["record_every"], tau is not None,
                                options["num_threads"])
    for k in np.flatnonzero(status):
        try:
            _simulate_one(model, q0[k], v0[k], duration, dt, **options)
        except SimulationError as exc:
            raise SimulationError(f"rollout {k} of the batch: {exc}", exc.trajectory) from exc
    traj.evaluations *= len(q0)     # over the batch, as for the runs one at a time
    return traj


def _stack(runs: list[Trajectory]) -> Trajectory:
    """One batch :class:`Trajectory` of runs with the same sample times."""
    first = runs[0]
    return Trajectory(t=first.t, q=np.stack([r.q for r in runs]),
                      v=np.stack([r.v for r in runs]), a=np.stack([r.a for r in runs]),
                      kinetic=np.stack([r.kinetic for r in runs]),
                      potential=np.stack([r.potential for r in runs]),
                      tau=None if first.tau is None else np.stack([r.tau for r in runs]),
                      model_name=first.model_name, integrator=first.integrator, dt=first.dt,
                      steps=first.steps, evaluations=sum(r.evaluations for r in runs),
                      constraint_error=None if first.constraint_error is None
                      else np.stack([r.constraint_error for r in runs]))
