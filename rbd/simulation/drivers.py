r"""The drivers of :func:`rbd.simulation.simulate`: fixed steps and adaptive solvers.

:func:`run_fixed` takes steps of ``dt`` (shorter before an event or at the
end) with :data:`~rbd.simulation.integrators.FIXED_STEP`; :func:`run_adaptive`
drives a :mod:`scipy.integrate` solver class one accepted step at a time in a
re-centred chart ``q = q_c ⊕ ξ`` (:mod:`rbd.simulation.lie`).  Both sample
the state at ``k dt``, locate events with :class:`~rbd.simulation.events.Events`
and apply impacts, which may switch the model.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import scipy.integrate

from .. import algorithms
from ..model import Model
from .dynamics import NONFINITE_A, Dynamics, StopError, finite, require_finite_state
from .events import apply_impact
from .lie import chart_angle, chart_velocity, curved_joints
from .trajectory import EventRecord, Trajectory

__all__ = ["Recorder", "Progress", "Run", "run_fixed", "run_adaptive", "CHART_RADIUS"]

#: Largest rotation angle (rad) of a joint inside one chart before ``solve_ivp`` re-centres it.
CHART_RADIUS = 1.0


class Recorder:
    """Collects samples and the model in force for each run of samples."""

    def __init__(self, keep_tau: bool):
        self.t, self.q, self.v, self.a, self.tau = [], [], [], [], []
        self.keep_tau = keep_tau
        self.segments: list[tuple[int, Model]] = []

    def add(self, dyn: Dynamics, t: float, q, v, keep: bool = True) -> np.ndarray:
        """Record ``(t, q, v)`` with its acceleration (unless not ``keep``); return it.

        Nothing is recorded when the state or its acceleration is not finite.
        """
        a, tau = dyn(t, q, v)
        if not finite(a):
            raise StopError("diverged", t, NONFINITE_A)
        if not keep:
            return a
        if not self.segments or self.segments[-1][1] is not dyn.model:
            self.segments.append((len(self.t), dyn.model))
        self.t.append(t)
        self.q.append(np.array(q, dtype=float))
        self.v.append(np.array(v, dtype=float))
        self.a.append(a)
        if self.keep_tau:
            self.tau.append(np.array(tau, dtype=float))
        return a

    def truncate(self) -> None:
        """Drop the parts of a sample that an interrupt cut short (lists of equal length)."""
        lists = [self.t, self.q, self.v, self.a] + ([self.tau] if self.keep_tau else [])
        n = min(len(x) for x in lists)
        for x in lists:
            del x[n:]
        self.segments = [(start, model) for start, model in self.segments if start < n]

    @property
    def last_time(self) -> float:
        return self.t[-1] if self.t else -math.inf

    def trajectory(self, backend, **meta) -> Trajectory:
        t = np.array(self.t, dtype=float)
        q, v = np.array(self.q), np.array(self.v)
        kinetic, potential = np.zeros(len(t)), np.zeros(len(t))
        bounds = [start for start, _ in self.segments] + [len(t)]
        for (start, model), stop in zip(self.segments, bounds[1:], strict=True):
            kinetic[start:stop] = algorithms.kinetic_energy(model, q[start:stop], v[start:stop],
                                                            backend=backend)
            potential[start:stop] = algorithms.potential_energy(model, q[start:stop],
                                                                backend=backend)
        return Trajectory(t=t, q=q, v=v, a=np.array(self.a), kinetic=kinetic,
                          potential=potential, tau=np.array(self.tau) if self.keep_tau else None,
                          **meta)


class Progress:
    """A tqdm bar over simulated time, or nothing."""

    def __init__(self, show: bool, duration: float):
        self.bar = None
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=duration, unit="s", file=sys.stderr, leave=False,
                            bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s simulated "
                                       "[{elapsed}<{remaining}]")

    def advance_to(self, t: float) -> None:
        if self.bar is not None:
            self.bar.update(t - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class Run:
    """State shared by the drivers: the current model, recorder, events, impacts, clock."""

    def __init__(self, dyn, recorder, events, impacts, progress, duration, dt, stride=1):
        self.dyn, self.recorder, self.events, self.impacts = dyn, recorder, events, impacts
        self.progress, self.duration, self.dt = progress, duration, dt
        self.stride = stride                     # fixed steps: a grid sample every stride steps
        self.records: list[EventRecord] = []
        self.steps = 0
        self.stopped = False
        self.last: tuple = (0.0, None, None)   # the last accepted state (t, q, v)
        self.last_step = math.nan                # the last step size
        self.evaluations_at_stop = 0

    def grid(self, k: int) -> float:
        """The k-th sample time ``k dt``, clipped to the duration."""
        t = k * self.dt
        return self.duration if t > self.duration - 1e-9 * self.dt else t

    def handle_event(self, t_event: float, index: int, q, v):
        """Record an event at the pre-impact state; return the post-impact state and model."""
        self.records.append(EventRecord(t_event, index, np.array(q), np.array(v)))
        fn = self.impacts[index]
        if fn is not None:
            model, q, v = apply_impact(fn, self.dyn.model, q, v)
            self.dyn.model = model
        if self.events.terminal[index]:
            self.stopped = True
        return q, v, fn is not None


def run_fixed(run: Run, step, q, v):
    """Fixed steps of ``dt`` (shorter before an event or at the end), samples at ``k dt``.

    A grid sample is kept every ``run.stride`` steps and at the end; event samples always.
    """
    dyn, recorder, events = run.dyn, run.recorder, run.events
    t, k = 0.0, 0
    dyn.at_step(0)
    a = recorder.add(dyn, t, q, v)
    events.reset(t, (q, v))
    lie = curved_joints(dyn.model)
    while t < run.duration and not run.stopped:
        dyn.at_step(k)
        t_next = run.grid(k + 1)
        run.steps += 1
        run.last_step = t_next - t
        q1, v1 = step(dyn, lie, t, q, v, a, t_next - t)
        found = None
        if events.functions:
            require_finite_state(t_next, q1, v1)   # before the event functions see it
            def state_at(s, t0=t, q0=q, v0=v, a0=a, lie=lie):
                if s <= t0:
                    return q0, v0
                q_s, v_s = step(dyn, lie, t0, q0, v0, a0, s - t0)
                require_finite_state(s, q_s, v_s)
                return q_s, v_s

            found = events.first_crossing(t, t_next, (q1, v1), state_at)
        if found is None:
            t, q, v, k = t_next, q1, v1, k + 1
            dyn.at_step(k)
            a = recorder.add(dyn, t, q, v, keep=k % run.stride == 0 or t >= run.duration)
        else:
            t, index = found
            q, v = state_at(t)
            a = recorder.add(dyn, t, q, v)
            if t >= t_next:          # the event sample stands for the grid sample
                k += 1
            q, v, jumped = run.handle_event(t, index, q, v)
            if jumped:
                lie = curved_joints(dyn.model)
                a = recorder.add(dyn, t, q, v)
            events.reset(t, (q, v))
        run.last = (t, q, v)
        run.progress.advance_to(t)


def ivp_step(run: Run, solver) -> None:
    """One accepted step of ``solver``; a failure or a non-finite state stops the run."""
    t0 = solver.t
    run.steps += 1
    message = solver.step()
    if solver.status == "failed":
        raise StopError("failed", t0, str(message))
    run.last_step = solver.step_size
    if not finite(solver.y):
        raise StopError("diverged", solver.t, "the solver's state became non-finite")


def run_adaptive(run: Run, q, v, method: str, rtol: float, atol: float, max_step: float,
                  min_step: float):
    """An adaptive solve_ivp solver in re-centred charts ``q = q_c ⊕ ξ``; samples at ``k dt``."""
    dyn, recorder, events = run.dyn, run.recorder, run.events
    solver_class = getattr(scipy.integrate, method)
    t, k, first_step = 0.0, 1, None
    recorder.add(dyn, t, q, v)
    events.reset(t, (q, v))
    nv = dyn.model.nv
    while t < run.duration and not run.stopped:
        q_c, lie = q, curved_joints(dyn.model)

        def chart(y, q_c=q_c):
            return algorithms.integrate(dyn.model, q_c, y[:nv], 1.0, backend=dyn.backend), y[nv:]

        def rhs(s, y, chart=chart, lie=lie):
            q_s, v_s = chart(y)
            a_s, _ = dyn(s, q_s, v_s)
            if not finite(a_s):
                raise StopError("diverged", s, NONFINITE_A)
            return np.concatenate([chart_velocity(lie, y[:nv], v_s), a_s])

        if first_step is not None:   # the last step size, within what is left of the run
            first_step = min(first_step, run.duration - t)
        t_start = t
        solver = solver_class(rhs, t, np.concatenate([np.zeros(nv), v]), run.duration,
                              rtol=rtol, atol=atol, max_step=max_step,
                              first_step=first_step or None)
        while solver.status == "running":
            t0 = solver.t
            ivp_step(run, solver)
            first_step = solver.step_size or None
            t1, dense = solver.t, solver.dense_output()

            def state_at(s, dense=dense, chart=chart):
                return chart(dense(s))

            q1, v1 = chart(solver.y)
            if solver.step_size < min_step and t0 > t_start and t1 < solver.t_bound:
                run.last = (t1, q1, v1)
                raise StopError("min_step", t1, f"its step size {solver.step_size:.3g} s fell "
                                                f"below min_step = {min_step:g} s")
            found = events.first_crossing(t0, t1, (q1, v1), state_at) if events.functions else None
            t_stop = t1 if found is None else found[0]
            # grid samples inside the step (an event sample replaces one at the same time)
            while True:
                t_k = run.grid(k)
                if t_k > t_stop or (found is not None and t_k == t_stop):
                    break
                if t_k > t0:
                    recorder.add(dyn, t_k, *state_at(t_k))
                k += 1
                if t_k >= run.duration:
                    break
            run.progress.advance_to(t_stop)
            if found is None:
                t, q, v = t1, q1, v1
                run.last = (t, q, v)
                if chart_angle(lie, solver.y[:nv]) > CHART_RADIUS:
                    break                          # re-centre the chart at q
                continue
            t, index = found
            q, v = state_at(t)
            recorder.add(dyn, t, q, v)
            if run.grid(k) <= t:
                k += 1
            q, v, jumped = run.handle_event(t, index, q, v)
            if jumped:
                recorder.add(dyn, t, q, v)
            run.last = (t, q, v)
            events.reset(t, (q, v))
            break                                  # restart the solver at the event
