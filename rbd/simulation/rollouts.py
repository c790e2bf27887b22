"""The compiled path of :func:`rbd.simulate`: whole fixed-step runs in the kernels.

A fixed-step run (``"euler"`` or ``"rk4"``) whose joint force the kernels can
evaluate themselves - none, constant, a table per step, a :class:`PD` law,
the damping, a constant ``f_ext`` - and which has no events runs inside
``CompiledModel.rollout`` (``rbd/_kernels/rollout.pyx``) without the GIL:
the same steps as :mod:`rbd.simulation.integrators`, equal to round-off.
A batch of initial states runs there in threads.  Everything else (callables,
events and impacts, ``solve_ivp``, ``backend="reference"``, models with mimic
joints) takes the Python path of :mod:`rbd.simulation.drivers`.  Bilateral
constraints run compiled too (the stabilized KKT acceleration at every stage,
``φ(q)`` and ``J(q) v`` recorded at each sample) where the compiled
:func:`rbd.constrained_dynamics` would (no mimic joints, no rolling rows).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import _backend, algorithms
from ..errors import SimulationInterrupted
from ..model import Model
from .control import Forcing
from .trajectory import Trajectory

__all__ = ["grid_times", "grid_steps", "grid_time", "compiled_kernel", "run_compiled",
           "sample_indices", "sample_times", "CompiledRun"]


def grid_time(k, duration: float, dt: float):
    """``k dt`` clipped to ``duration`` (within ``1e-9 dt`` of it): the fixed-step grid.

    The same times as :meth:`rbd.simulation.drivers.Run.grid`; ``k`` an int or an array.
    """
    if type(k) is int:                 # one step, in Python floats (the same doubles)
        t = float(k) * dt
        return float(duration) if t > duration - 1e-9 * dt else float(t)
    t = np.array(k, dtype=float)                # a new array: clipped in place
    t *= dt
    np.putmask(t, t > duration - 1e-9 * dt, duration)
    return float(t) if t.ndim == 0 else t


def grid_steps(duration: float, dt: float) -> int:
    """The number of steps of the fixed-step grid: the first ``k >= 1`` at the duration.

    0 for ``duration == 0``.  Found without building the grid.
    """
    if duration <= 0:
        return 0
    k = max(1, math.ceil(duration / dt) - 1)
    while grid_time(k, duration, dt) < duration:
        k += 1
    while k > 1 and grid_time(k - 1, duration, dt) >= duration:
        k -= 1
    return k


def grid_times(duration: float, dt: float) -> np.ndarray:
    """The whole fixed-step grid ``t_k = k dt`` for ``k`` from 0 to ``grid_steps(duration, dt)``."""
    return grid_time(np.arange(grid_steps(duration, dt) + 1), duration, dt)


def sample_indices(steps: int, stride: int) -> np.ndarray:
    """Steps after which a sample is kept: every ``stride``-th and the last (0 included)."""
    idx = np.arange(0, steps + 1, stride)
    return idx if idx[-1] == steps else np.append(idx, steps)


def sample_times(steps: int, stride: int, duration: float, dt: float) -> np.ndarray:
    """The times of the samples of a run of ``steps`` steps kept every ``stride`` (and the
    last): ``grid_time(sample_indices(steps, stride), duration, dt)``, a new array.

    A grid of up to :data:`KEPT_GRID` samples is computed once and copied after that: a
    batch call on the compiled path then spends one array copy on its times.
    """
    key = (int(steps), int(stride), float(duration), float(dt))
    if steps // stride + 2 > KEPT_GRID:
        return grid_time(sample_indices(*key[:2]), *key[2:])
    return _kept_times(*key).copy()


#: The longest grid (in samples) :func:`sample_times` keeps (80 kB).
KEPT_GRID = 10_000


@functools.lru_cache(maxsize=16)
def _kept_times(steps: int, stride: int, duration: float, dt: float) -> np.ndarray:
    times = grid_time(sample_indices(steps, stride), duration, dt)
    times.setflags(write=False)
    return times


def compiled_kernel(model: Model, options) -> object:
    """The :class:`CompiledModel` that can run this simulation whole, or None.

    ``options``: the :class:`~rbd.simulation.options.SimulationOptions` of the run; its
    integrator must be a member of the rollouts' enum (``options.rollout``).
    """
    if options.rollout is None or options.events:
        return None
    if callable(options.tau) and not isinstance(options.tau, Forcing):
        return None
    if (callable(options.f_ext) or _backend.resolve(options.backend) != "kernel"
            or model._mimic):
        return None
    kernel = algorithms._kernel(model, options.backend)
    if kernel is None or not hasattr(kernel, "rollout"):
        return None
    if options.constraints and _constraint_records(model, options) is None:
        return None          # rows only Python derives (Rolling's P(q))
    return kernel


def _constraint_records(model: Model, options):
    """The packed records of the run's constraints for ``CompiledModel.rollout``: those of
    the compiled solvers of :func:`rbd.constrained_dynamics` (the same qualification:
    no mimic joints, no :class:`~rbd.constraints.Rolling` rows), or None."""
    from ..algorithms.constrained import _solvers

    solver = _solvers(model, options.constraints, options.backend)
    return None if solver is None else solver.packed


@dataclass
class CompiledRun:
    """The outcome of ``CompiledModel.rollout``, one rollout or a batch (arrays then).

    ``trajectory`` holds every sample computed: a single run is cut after its
    last sample, a batch keeps the full grid with NaN after each rollout's last
    sample.  ``status`` is 0, -1 (diverged) or -2 (interrupted); ``steps`` the
    steps done to a finite state; ``failure`` ("q", "v", "a") and ``failure_t``
    what became non-finite first and when.
    """

    trajectory: Trajectory
    status: object
    steps: object
    failure: object
    failure_t: object


def run_compiled(kernel, model: Model, q0, v0, options) -> CompiledRun:
    """Run ``CompiledModel.rollout`` over the grid of ``options.duration`` and ``options.dt``.

    ``options``: the :class:`~rbd.simulation.options.SimulationOptions` of the run;
    the integrator reaches the kernel as its member of the rollouts' enum.

    Raises
    ------
    SimulationInterrupted
        On Ctrl-C (another exception raised by a signal handler is re-raised
        with the partial trajectory in its ``trajectory`` attribute).
    """
    duration, dt, stride = options.duration, options.dt, options.record_every
    f = options.tau if isinstance(options.tau, Forcing) else Forcing()
    steps = options.steps
    kwargs = dict(integrator=options.rollout, stride=stride, tau=f.tau, f_ext=options.f_ext,
                  q_ref=f.q_ref, kp=f.kp, kd=f.kd, damping=f.damping,
                  keep_tau=options.keep_tau, num_threads=options.num_threads,
                  grid=(dt, duration, steps))
    if options.constraints:
        kwargs.update(constraints=_constraint_records(model, options),
                      baumgarte=options.baumgarte)
    try:
        out = kernel.rollout(q0, v0, **kwargs)
    except BaseException as exc:
        if not isinstance(getattr(exc, "rollout", None), tuple):
            raise
        run = _compiled_run(exc.rollout, model, options, steps)
        new = interruption(exc, run.trajectory, duration)
        if new is exc:
            raise
        raise new from exc
    return _compiled_run(out, model, options, steps)


def _compiled_run(out: tuple, model: Model, options, steps: int) -> CompiledRun:
    """A :class:`CompiledRun` of the kernel's result tuple."""
    q, v, a, tau, kinetic, potential, status, samples, done, failure, failure_t = out[:11]
    arrays = dict(q=q, v=v, a=a, tau=tau, kinetic=kinetic, potential=potential)
    if len(out) > 11:                # with constraints: φ(q) and J(q) v at each sample
        arrays.update(constraint_error=out[11], constraint_velocity_error=out[12])
    duration, dt, stride = options.duration, options.dt, options.record_every
    per_step = options.evaluations_per_step
    if np.ndim(status) == 0 and status != 0:     # one rollout cut short: its samples only
        idx = np.arange(samples) * stride
        if status == -1 and samples and done % stride:
            idx[-1] = done                       # the off-stride last finite state
        times = grid_time(idx, duration, dt)
    else:
        times = sample_times(steps, stride, duration, dt)
    if np.ndim(status) == 0:         # one rollout: its samples, cut
        t = times[:samples]
        arrays = {name: None if x is None else x[:samples] for name, x in arrays.items()}
        evaluations = 1 + steps * per_step if status == 0 else 1 + done * per_step
    else:                            # a batch: the grid, NaN after each rollout's samples
        t = times
        for k in np.flatnonzero(samples < len(times)):
            for x in arrays.values():
                if x is not None:
                    x[k, samples[k]:] = np.nan
            if status[k] == -1 and samples[k] and done[k] % stride:
                # the off-stride last finite state: not on the shared grid
                for x in arrays.values():
                    if x is not None:
                        x[k, samples[k] - 1:] = np.nan
        evaluations = int(np.sum(np.where(status == 0, 1 + steps * per_step,
                                          1 + done * per_step)))
    traj = Trajectory(t=t, **arrays, model_name=model.name, integrator=options.label, dt=dt,
                      steps=steps if np.ndim(status) else (steps if status == 0 else done),
                      evaluations=evaluations)
    return CompiledRun(traj, status, done, failure, failure_t)


def interruption(exc: BaseException, trajectory: Trajectory, duration: float) -> BaseException:
    """The exception to raise when a signal handler raised ``exc`` during a run.

    ``KeyboardInterrupt`` becomes :class:`~rbd.SimulationInterrupted` carrying
    ``trajectory``; anything else gets a ``trajectory`` attribute and a note.
    """
    if trajectory.batch is not None:
        text = (f"simulation interrupted (duration {duration:g} s): the samples computed so "
                f"far, NaN where a rollout had not got that far, are in this exception's "
                f".trajectory")
    else:
        done = trajectory.t[-1] if len(trajectory.t) else 0.0
        text = (f"simulation interrupted at t = {done:.6g} s of {duration:g} s: the samples "
                f"up to there are in this exception's .trajectory")
    if isinstance(exc, KeyboardInterrupt):
        return SimulationInterrupted(text, trajectory)
    try:
        exc.trajectory = trajectory
        exc.add_note(text)
    except AttributeError:
        pass
    return exc
