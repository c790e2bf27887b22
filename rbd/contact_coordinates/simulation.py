"""Simulation in contact coordinates: RK4 until the contact description ends (Pai §6).

The state ``y = [q; q̇]`` (with body 1's pose and twist when it is free) is
integrated by the fixed-step RK4 of :mod:`rbd.simulation` (as in Pai §6),
whose event locator watches two functions that stay positive while the
contact-coordinate model holds: the normal force λ (``"separation"``) and the
distance of the contact parameters to the edges of their charts (``"chart"``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, ModelError
from ..simulation.integrators import fixed_steps
from ..spatial import quat_normalize
from .pair import ContactPair, ContactState

__all__ = ["ContactEvent", "ContactTrajectory", "simulate"]

#: Messages of the events that end a contact simulation.
EVENT_MESSAGES = {
    "separation": "the normal force reached zero: from here body 1 would have to pull",
    "chart": "a contact parameter reached the edge of its surface's chart",
    "singular": "the contact coordinates became singular (a chart pole, or zero relative "
                "curvature): the step could not be completed",
}


@dataclass
class ContactEvent:
    """Something that ends the contact-coordinate description of the motion."""

    time: float
    kind: str  #: ``"separation"`` (λ would turn negative), ``"chart"`` or ``"singular"``
    state: ContactState
    message: str = ""


@dataclass
class ContactTrajectory:
    """Samples of a contact simulation (one row per time step, events last)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    base_q: np.ndarray | None
    base_v: np.ndarray | None
    normal_force: np.ndarray
    energy: np.ndarray
    com: np.ndarray  #: (N, 3) world centre of mass of body 2
    events: list[ContactEvent] = field(default_factory=list)

    def state(self, k: int) -> ContactState:
        """The state of sample ``k``."""
        if self.base_q is None:
            return ContactState(self.q[k], self.qd[k])
        return ContactState(self.q[k], self.qd[k], self.base_q[k], self.base_v[k])


def _wrench_function(f_ext) -> Callable | None:
    """``f_ext`` as ``None`` or a callable ``(t, state) -> (6,)``."""
    if f_ext is None or callable(f_ext):
        return f_ext
    constant = np.asarray(f_ext, dtype=float)
    if constant.shape != (6,):
        raise InputError(f"f_ext must be a (6,) wrench or a callable, got {constant.shape}")
    return lambda t, s: constant


def _project(y: np.ndarray) -> np.ndarray:
    """Renormalize body 1's quaternion after a step (the state is integrated as a vector)."""
    if y.size > 10:
        y = y.copy()
        y[13:17] = quat_normalize(y[13:17])
    return y


def simulate(pair: ContactPair, state0: ContactState, duration: float, dt: float,
             f_ext: np.ndarray | Callable | None = None) -> ContactTrajectory:
    r"""Integrate the contact dynamics with classical RK4 (as Pai §6) until an event.

    Parameters
    ----------
    pair : ContactPair
    state0 : ContactState
    duration, dt : float
        Length of the run and the fixed step.
    f_ext : (6,) array or callable ``f_ext(t, state) -> (6,)``, optional
        External wrench on body 2, body-2 coordinates.

    Returns
    -------
    ContactTrajectory
        Samples at every step.  The run stops early at the first event, located
        inside the step to 1e-12 s by :class:`rbd.simulation.events.Events`:
        ``"separation"`` when the normal force λ reaches zero (from then on
        body 1 would have to pull), ``"chart"`` when a contact parameter
        reaches the edge of its surface's chart, ``"singular"`` when a step
        fails (the contact Jacobian lost rank).
    """
    pair._check_state(state0)
    if not (np.isfinite(duration) and duration >= 0 and np.isfinite(dt) and dt > 0):
        raise InputError(f"need duration >= 0 and dt > 0, got duration={duration}, dt={dt}")
    wrench = _wrench_function(f_ext)
    seen: dict = {}      # (t, y) -> (ẏ, λ): each state's dynamics is evaluated once

    def dynamics(t: float, y: np.ndarray):
        key = (t, y.tobytes())
        if key not in seen:
            s = ContactState.from_vector(y)
            force = None if wrench is None else np.asarray(wrench(t, s), dtype=float)
            ydot, dyn = pair._derivative(s, force)
            seen[key] = (ydot, dyn.normal_force)
        return seen[key]

    def separation(t, y):
        return dynamics(t, y)[1]

    def chart(t, y):
        return pair.chart_margin(y[:5])

    events = {"separation": separation, "chart": chart}
    for g in events.values():
        g.terminal, g.direction = True, -1
    y0 = state0.to_vector()
    already = [kind for kind, g in events.items() if g(0.0, y0) < 0]
    if already:  # e.g. a state whose contact would need pulling from the start
        return _trajectory(pair, [0.0], [y0], [ContactEvent(0.0, already[0], state0,
                                                            EVENT_MESSAGES[already[0]])],
                           dynamics)
    run = fixed_steps(lambda t, y: dynamics(t, y)[0], y0, duration, dt, list(events.values()),
                      event_tol=1e-12 * max(dt, 1.0), project=_project,
                      failures=(ModelError, np.linalg.LinAlgError))
    kinds = list(events)
    found = [ContactEvent(t, kinds[k], ContactState.from_vector(run.y[-1]),
                          EVENT_MESSAGES[kinds[k]]) for t, k in run.events]
    if run.failure is not None:
        found.append(ContactEvent(run.t[-1], "singular", ContactState.from_vector(run.y[-1]),
                                  EVENT_MESSAGES["singular"]))
    return _trajectory(pair, run.t, run.y, found, dynamics)


def _trajectory(pair, ts, ys, events, dynamics) -> ContactTrajectory:
    Y = np.array(ys)
    states = [ContactState.from_vector(y) for y in Y]
    lam = np.array([dynamics(t, y)[1] for t, y in zip(ts, Y, strict=True)])
    energy = np.array([pair.energy(s) for s in states])
    com = np.array([pair.center_of_mass(s, 2) for s in states])
    free = Y.shape[1] > 10
    return ContactTrajectory(
        t=np.array(ts, dtype=float), q=Y[:, :5], qd=Y[:, 5:10],
        base_q=Y[:, 10:17] if free else None, base_v=Y[:, 17:23] if free else None,
        normal_force=lam, energy=energy, com=com, events=events,
    )
