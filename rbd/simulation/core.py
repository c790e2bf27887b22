"""The entry point :func:`simulate`: the run and the error report.

``simulate`` checks its keywords once, into a frozen
:class:`~rbd.simulation.options.SimulationOptions`, and hands that object whole
to the contact path, the compiled rollout or the Python path.  See
:mod:`rbd.simulation` for the integrators, events and impacts.
"""

from __future__ import annotations

import copy
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .. import algorithms
from ..errors import InputError, SimulationError, SimulationInterrupted
from ..model import Model
from .contact import (
    compiled_batch,
    contact_only_terms,
    has_contact_terms,
    simulate_contact,
    warn_outside_limits,
)
from .control import Forcing
from .drivers import Progress, Recorder, Run, run_adaptive, run_fixed
from .dynamics import Dynamics, StopError, check_quaternions, checked
from .events import Events
from .integrators import FIXED_STEP
from .options import (
    EVALUATION_FLOOR,
    EVALUATIONS_PER_SECOND,
    INTEGRATORS,
    IVP_METHODS,
    SimulationOptions,
)
from .reports import _compiled_divergence, _hint, _stop_message
from .rollouts import (
    CompiledRun,
    compiled_kernel,
    grid_steps,
    interruption,
    run_compiled,
    sample_times,
)
from .trajectory import Trajectory, joint_layout, stack_runs

__all__ = ["simulate", "INTEGRATORS", "IVP_METHODS", "PROGRESS_THRESHOLD", "EVALUATION_FLOOR",
           "EVALUATIONS_PER_SECOND", "available_memory", "PYTHON_SAMPLE_OVERHEAD"]

#: A run with more steps than this shows a progress bar (when stderr is a terminal).
PROGRESS_THRESHOLD = 2000


def _ndim(value, name: str) -> int:
    """The number of dimensions of an array-like; a ragged one is named."""
    if type(value) is np.ndarray:
        return value.ndim
    try:
        return np.ndim(value)
    except ValueError:
        raise InputError(f"{name} must be a numeric array of one shape, got a ragged "
                         f"sequence") from None


def _state(model: Model, q0, v0) -> tuple[np.ndarray, np.ndarray]:
    """``q0`` ``(nq,)`` and ``v0`` ``(nv,)`` of one run, checked and named."""
    q0 = checked(q0, (model.nq,), "q0")
    v0 = checked(v0, (model.nv,), "v0")
    check_quaternions(model, q0, "q0", normalize=False)
    return q0, v0


#: Bytes a sample costs on the Python path besides its numbers: one NumPy array
#: header (~110 bytes) for each of q, v, a, tau and the list entries, rounded up.
PYTHON_SAMPLE_OVERHEAD = 600


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux: ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _check_memory(model: Model, duration: float, dt: float, record_every: int, rollouts: int,
                  python: bool) -> None:
    """Refuse a run whose samples would not fit in the available memory, before allocating.

    A sample holds ``q, v, a, tau`` and the two energies (``nq + 3 nv + 3``
    doubles, the time included); the Python path collects samples in lists
    first (:data:`PYTHON_SAMPLE_OVERHEAD` more bytes each) and copies them
    into arrays at the end.  The steps themselves take no memory: the time
    grid is never built.
    """
    steps = grid_steps(duration, dt)
    samples = steps // record_every + 1 + (1 if steps % record_every else 0)
    per_sample = 8 * (model.nq + 3 * model.nv + 3)
    if python:
        per_sample = 2 * per_sample + PYTHON_SAMPLE_OVERHEAD
    need = samples * per_sample * rollouts
    available = available_memory()
    if available is None or need <= available:
        return
    runs = f" for each of {rollouts} rollouts" if rollouts > 1 else ""
    raise InputError(
        f"the trajectory would need about {need / 2**30:.3g} GiB ({need:,} bytes: "
        f"{samples:,} samples{runs}, duration = {duration:g} s / dt = {dt:g} s = {steps:,} "
        f"steps, a sample every record_every = {record_every} steps) but "
        f"{available / 2**30:.3g} GiB are available; keep fewer samples (a larger "
        f"record_every or dt) or simulate a shorter duration")


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
    contact: bool | None = None,
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
        active :attr:`~rbd.Model.constraints` (``()`` for none).
        :attr:`Trajectory.constraint_error` holds ``φ(q)`` and
        :attr:`Trajectory.constraint_velocity_error` ``J(q) v`` at each sample.
        Such a run takes the compiled path (single or batched) where the compiled
        :func:`rbd.constrained_dynamics` would: no mimic joints, no rolling rows.
    baumgarte : "auto", (kp, kd) or None, keyword-only
        Stabilization of the constraints, ``J q̈ = γ − kd J v − kp φ``
        (RBDA §8.3): ``"auto"`` is ``kp = ω²``, ``kd = 2ω`` with
        ``ω = 1 / (20 dt)`` (critically damped, slow against the step); None
        integrates ``J q̈ = γ`` alone, whose error drifts.
    contact : bool, optional
        Contacts, joint limits, dof friction loss, joint springs, fluid forces and the
        equality constraints (``constraints``, soft as in MuJoCo; ``baumgarte`` unused)
        through :func:`rbd.forward` with MuJoCo's semi-implicit Euler
        (:mod:`rbd.simulation.contact`, ``tau`` constant or per step): the compiled step
        (``rbd/_kernels/contact.pyx``, a batch in threads without the GIL) where the model
        compiles, else the Python step, a batch one rollout after the other.  Default: on with
        ``integrator="euler"`` when the model has collision geoms, joint limits,
        joint springs, fluid forces or active constraints; ``False`` switches it off
        (joint springs and fluid forces then act nowhere, and the run warns).  The
        trajectory's ``contact_count`` holds the number of contacts at each sample,
        its ``constraint_force`` the generalized constraint force (MuJoCo's
        ``qfrc_constraint``) and its ``contact_force`` each contact's force in its
        frame (``mj_contactForce``).  A start outside the joint limits warns.

    Returns
    -------
    Trajectory

    Raises
    ------
    InputError
        On a bad argument (``dt <= 0``, ``duration < 0``, a wrong shape, a
        complex or ragged ``q0``, ``dt=True``, a non-unit quaternion, an
        unknown integrator, a bad impact map ...), and before anything is
        allocated when the samples would not fit in the available memory
        (:func:`available_memory`; the message gives the bytes, ``duration``,
        ``dt`` and ``record_every``).  The time grid itself is never built, so
        a long run kept every ``record_every`` steps needs only its samples.
    SimulationError
        When the run cannot go on: the state, the acceleration or ``tau`` /
        ``f_ext`` became non-finite (the simulation diverged), the run reached
        ``max_evaluations``, a ``solve_ivp`` step fell below ``min_step``, or the
        solver failed.  The message says when, at which step, and what to try;
        the error's ``trajectory`` attribute holds the :class:`Trajectory` up to
        the last finite state (``None`` when not even the initial state could
        be evaluated) and ``diverged_at`` the time it stopped.  For a batch,
        ``trajectory`` holds every rollout (NaN after the last finite sample of
        those that stopped), ``diverged`` their indices and ``diverged_at``
        their times; the message reports the first of them in full.
    SimulationInterrupted
        On Ctrl-C (``SIGINT``), within some 20 ms on the compiled path and one
        step on the Python path: a :class:`KeyboardInterrupt` whose
        ``trajectory`` holds the samples computed so far (a batch: every
        rollout, NaN where it had not got that far).

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
    contact_run = _contact_run(model, integrator, contact)
    options = SimulationOptions.build(
        model, duration, dt, integrator=integrator, tau=tau, f_ext=f_ext, events=events,
        impact=impact, progress=progress, backend=backend, event_tol=event_tol, method=method,
        rtol=rtol, atol=atol, max_step=max_step, max_evaluations=max_evaluations,
        min_step=min_step, damping=damping, record_every=record_every,
        num_threads=num_threads, compiled=compiled, constraints=constraints,
        baumgarte=baumgarte)
    batch = _ndim(q0, "q0") == 2 or _ndim(v0, "v0") == 2
    states = _batch_states(model, q0, v0) if batch else _state(model, q0, v0)
    if contact_run:       # warned from here, so that the warning points at the caller
        warn_outside_limits(model, states[0], stacklevel=2)
    elif contact is None and isinstance(model, Model):
        _warn_left_out(model)
    if batch:
        traj = _simulate_batch(model, *states, options, contact_run)
    else:
        traj = _simulate_one(model, *states, options, contact_run)
    traj.joints = joint_layout(model)      # curves named after the joints, with units
    return traj


def _contact_tau(options: SimulationOptions):
    """The ``tau`` of a contact run: None, a constant or a table (a callable it refuses)."""
    tau = options.tau
    if isinstance(tau, Forcing):
        if tau.q_ref is not None:
            raise InputError("tau: a contact run takes a constant tau or one row per step, "
                             "not a PD law")
        tau = tau.tau
    return tau


def _contact_run(model, integrator, contact) -> bool:
    """Whether :func:`simulate` takes the contact path (its ``contact`` keyword)."""
    if contact is False:
        return False
    if contact is None:
        if integrator != "euler" or not isinstance(model, Model):
            return False
        return has_contact_terms(model)
    if integrator != "euler":
        raise InputError(f"contact=True needs integrator='euler', got {integrator!r}")
    return True


def _simulate_one(model: Model, q0: np.ndarray, v0: np.ndarray,
                  options: SimulationOptions, contact: bool = False) -> Trajectory:
    """One run of :func:`simulate` from a checked state: with contacts (MuJoCo's Euler step,
    which records ``contact_count``), compiled when it can, else Python.  The compiled
    rollout records the bilateral constraints' errors itself, the other paths here
    (:func:`_record_constraints`)."""
    o = options
    if contact:
        traj = simulate_contact(model, q0, v0, o.duration, o.dt, tau=_contact_tau(o),
                                record_every=o.record_every, backend=o.backend,
                                constraints=o.contact_constraints)
        return _record_constraints(model, traj, o)
    kernel = None
    if o.compiled and not o.progress and o.steps is not None:
        evaluations = 1 + o.steps * (o.evaluations_per_step or 1)
        if evaluations <= o.max_evaluations:    # else the Python path stops at the limit
            kernel = compiled_kernel(model, o)
    _check_memory(model, o.duration, o.dt, o.record_every, 1, python=kernel is None)
    if kernel is not None:
        run = run_compiled(kernel, model, q0, v0, o)
        if run.status == 0:
            return run.trajectory
        raise _compiled_divergence(run, o.integrator, o.duration, o.dt)
    return _record_constraints(model, _run_python(model, q0, v0, o), o)


def _record_constraints(model: Model, traj: Trajectory, options: SimulationOptions
                        ) -> Trajectory:
    """``traj.constraint_error`` and ``traj.constraint_velocity_error``: ``φ(q)`` and
    ``J(q) v`` of the run's bilateral constraints at each sample."""
    if options.constraints:
        traj.constraint_error, traj.constraint_velocity_error = _constraint_terms(
            model, traj.q, traj.v, options.constraints)
    return traj


def _constraint_terms(model: Model, q, v, constraints) -> tuple[np.ndarray, np.ndarray]:
    """``φ(q)`` and ``J(q) v`` of the bilateral ``constraints`` at samples ``q``, ``v``."""
    J = algorithms.constraint_jacobian(model, q, constraints)
    return (algorithms.constraint_error(model, q, constraints),
            np.einsum("...ij,...j->...i", J, v))


def _run_python(model: Model, q0, v0, options: SimulationOptions) -> Trajectory:
    """The Python path of :func:`simulate` (a checked state)."""
    o = options
    duration, dt = o.duration, o.dt
    progress = o.progress
    if progress is None:
        progress = duration / dt > PROGRESS_THRESHOLD and sys.stderr.isatty()
    tau = copy.copy(o.tau) if isinstance(o.tau, Forcing) else o.tau   # its step is per run
    dyn = Dynamics(model, tau, o.f_ext, o.backend, o.max_evaluations, o.constraints,
                   o.baumgarte)
    recorder = Recorder(keep_tau=o.keep_tau)
    bar = Progress(bool(progress), duration)
    run = Run(dyn, recorder, Events(list(o.events), o.event_tol), list(o.impacts), bar,
              duration, dt, o.record_every)
    run.last = (0.0, q0, v0)
    meta = dict(model_name=model.name, integrator=o.label, dt=dt)
    try:
        if o.integrator == "solve_ivp":
            run_adaptive(run, q0, v0, o.method, o.rtol, o.atol, o.max_step, o.min_step)
        else:
            run_fixed(run, FIXED_STEP[o.integrator].step, q0, v0)
    except StopError as stop:
        run.evaluations_at_stop = dyn.evaluations
        _keep_last_state(run, recorder)
        partial = (recorder.trajectory(o.backend, events=run.records, steps=run.steps,
                                       evaluations=dyn.evaluations, **meta)
                   if recorder.t else None)
        limits = dict(max_evaluations=o.max_evaluations,
                      hint=_hint(stop, o.integrator == "solve_ivp", o.method))
        message = _stop_message(stop, run, o.label, limits,
                                (recorder.last_time, len(recorder.t)))
        raise SimulationError(message, partial, diverged_at=stop.t) from stop.__cause__
    except KeyboardInterrupt as exc:
        recorder.truncate()                # a sample the interrupt cut short
        partial = recorder.trajectory(o.backend, events=run.records, steps=run.steps,
                                      evaluations=dyn.evaluations, **meta)
        raise interruption(exc, partial, duration) from exc
    finally:
        bar.close()
    return recorder.trajectory(o.backend, events=run.records, steps=run.steps,
                               evaluations=dyn.evaluations, **meta)


def _warn_left_out(model: Model) -> None:
    """Warn, at :func:`simulate`'s caller, that a run off the contact path leaves out what
    of the model only that path holds (a body would fall through the floor unannounced)."""
    terms = contact_only_terms(model)
    if terms:
        listed = ", ".join(terms[:-1]) + " and " + terms[-1] if len(terms) > 1 else terms[0]
        warnings.warn(f"simulate: the model's {listed} act only on the contact "
                      "path (integrator='euler', rbd.forward); this run leaves them out "
                      "(contact=False says so and silences this)", RuntimeWarning,
                      stacklevel=3)


def _batch_states(model, q0, v0) -> tuple[np.ndarray, np.ndarray]:
    """``q0`` ``(N, nq)`` and ``v0`` ``(N, nv)`` of a batch, checked and named."""
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if np.ndim(q0) != 2 or np.shape(q0)[1] != model.nq:
        raise InputError(f"q0 of a batch (v0 of shape (N, nv)) must have shape "
                         f"(N, {model.nq}), got {np.shape(q0)}")
    q0 = checked(q0, np.shape(q0), "q0")
    v0 = checked(v0, (len(q0), model.nv), "v0 (one row per row of q0)")
    try:
        check_quaternions(model, q0, "q0", normalize=False)     # the whole batch at once
    except InputError:
        for k, q in enumerate(q0):                  # the error names the first state off
            check_quaternions(model, q, f"q0[{k}]")
        raise
    return q0, v0


def _simulate_batch(model: Model, q0, v0, options: SimulationOptions,
                    contact: bool = False) -> Trajectory:
    """``N`` runs of :func:`simulate` from checked states in one :class:`Trajectory` (see
    its Notes)."""
    o = options
    if o.events:
        raise InputError("a batch (q0 of shape (N, nq)) cannot have events: run the initial "
                         "states one at a time")
    if len(q0) == 0:
        raise InputError("a batch needs at least one initial state (q0 has shape (0, nq))")
    if contact:
        runs = _compiled_contact_runs(model, q0, v0, o)
        return _python_batch(model, q0, v0, o, contact) if runs is None else runs
    kernel = compiled_kernel(model, o) if o.compiled else None
    _check_memory(model, o.duration, o.dt, o.record_every, len(q0), python=kernel is None)
    if kernel is None:
        return _python_batch(model, q0, v0, o)
    run = run_compiled(kernel, model, q0, v0, o)
    diverged = np.flatnonzero(run.status)
    if diverged.size:
        k = int(diverged[0])
        one = CompiledRun(_rollout(run.trajectory, k), int(run.status[k]), int(run.steps[k]),
                          str(run.failure[k]), float(run.failure_t[k]))
        first = _compiled_divergence(one, o.integrator, o.duration, o.dt)
        raise _batch_error(run.trajectory, diverged, run.failure_t[diverged], k, first)
    return run.trajectory


def _rollout(batch: Trajectory, k: int) -> Trajectory:
    """Rollout ``k`` of a batch, cut after its last finite sample."""
    n = int(np.sum(np.isfinite(batch.kinetic[k])))
    return Trajectory(t=batch.t[:n], q=batch.q[k, :n], v=batch.v[k, :n], a=batch.a[k, :n],
                      kinetic=batch.kinetic[k, :n], potential=batch.potential[k, :n],
                      tau=None if batch.tau is None else batch.tau[k, :n],
                      model_name=batch.model_name, integrator=batch.integrator, dt=batch.dt,
                      **{name: getattr(batch, name)[k, :n] for name in
                         ("constraint_error", "constraint_velocity_error")
                         if getattr(batch, name) is not None})


def _batch_error(traj: Trajectory, diverged, times, first: int,
                 error: SimulationError) -> SimulationError:
    """One error for a batch whose rollouts ``diverged`` (at ``times``): every rollout kept."""
    listed = ", ".join(f"{k} (t = {t:.6g} s)" for k, t in zip(diverged[:10], times[:10],
                                                               strict=True))
    more = f" and {len(diverged) - 10} more" if len(diverged) > 10 else ""
    message = (f"{len(diverged)} of {traj.batch} rollouts stopped early: {listed}{more}. "
               f"rollout {first} of the batch: {error} Every rollout's samples are in this "
               f"error's .trajectory (NaN after the last finite sample of a rollout that "
               f"stopped); .diverged and .diverged_at say which rollouts and when.")
    return SimulationError(message, traj, diverged=np.asarray(diverged),
                           diverged_at=np.asarray(times, dtype=float))


def _compiled_contact_runs(model, q0, v0, o: SimulationOptions) -> Trajectory | None:
    """A contact batch by the compiled step, all initial states in one call without the GIL
    (:func:`.contact.compiled_batch`: the batch :func:`_python_batch` would stack, on the
    kernel's arrays); None when the model needs the Python step."""
    found = compiled_batch(model, np.asarray(q0, float), np.asarray(v0, float), o.duration,
                           o.dt, _contact_tau(o), o.record_every, o.backend,
                           constraints=o.contact_constraints, num_threads=o.num_threads)
    if found is None:
        return None
    batch, lengths, failed = found
    if o.constraints:                   # each run's samples on the grid, NaN after them
        terms = [_constraint_terms(model, batch.q[k, :n], batch.v[k, :n], o.constraints)
                 for k, n in enumerate(lengths)]
        for j, name in enumerate(("constraint_error", "constraint_velocity_error")):
            column = np.full(batch.q.shape[:2] + terms[0][j].shape[1:], np.nan)
            for k, n in enumerate(lengths):
                column[k, :n] = terms[k][j]
            setattr(batch, name, column)
    _raise_failed(batch, failed)
    return batch


def _python_batch(model, q0, v0, options: SimulationOptions, contact: bool = False
                  ) -> Trajectory:
    """A batch on the Python path (or with contacts), one rollout after the other, every
    rollout kept."""
    duration, dt = options.duration, options.dt
    steps = grid_steps(duration, dt)           # the sample grid, also of "solve_ivp"
    times = sample_times(steps, options.record_every, duration, dt)
    runs: list[Trajectory | None] = [None] * len(q0)
    failed: dict[int, SimulationError] = {}
    for k, (q, v) in enumerate(zip(q0, v0, strict=True)):
        try:
            runs[k] = _simulate_one(model, q, v, options, contact)
        except SimulationError as exc:
            runs[k], failed[k] = exc.trajectory, exc
        except SimulationInterrupted as exc:
            runs[k] = exc.trajectory
            raise interruption(exc.__cause__ or KeyboardInterrupt(),
                               stack_runs(model, runs, times, steps), duration) from exc
    return _stacked(model, runs, failed, options)


def _stacked(model, runs: list, failed: dict, options: SimulationOptions) -> Trajectory:
    """The batch :class:`Trajectory` of finished ``runs`` (raising for the ``failed`` ones,
    index -> :class:`SimulationError`, with every rollout kept)."""
    steps = grid_steps(options.duration, options.dt)
    times = sample_times(steps, options.record_every, options.duration, options.dt)
    batch = stack_runs(model, runs, times, steps)
    _raise_failed(batch, failed)
    return batch


def _raise_failed(batch: Trajectory, failed: dict) -> None:
    """Raise the error of a batch whose ``failed`` runs (index -> :class:`SimulationError`)
    stopped early, with every rollout kept; nothing when none did."""
    if failed:
        diverged = np.array(sorted(failed))
        at = [failed[k].diverged_at for k in diverged]
        at = np.array([math.nan if t is None else t for t in at])
        first = int(diverged[0])
        raise _batch_error(batch, diverged, at, first, failed[first])
