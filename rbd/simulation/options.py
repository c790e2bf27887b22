"""The options of :func:`rbd.simulate`, checked once: :class:`SimulationOptions`.

``simulate`` turns its keywords into one frozen :class:`SimulationOptions`
(:meth:`SimulationOptions.build`) before anything runs; the contact path, the
compiled rollout and the Python path all read that one object.  Every check
raises :class:`~rbd.InputError` naming the argument, and nothing is checked
again further down.

The integrators are the rows of :data:`~rbd.simulation.integrators.FIXED_STEP`
(the Python path) and ``"solve_ivp"``; a fixed-step one whose name is a member
of :class:`rbd.reference.rollout.Integrator` (the enum the compiled rollout
declares with the same values) also runs compiled (:attr:`SimulationOptions.rollout`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..constraints.kinds import active_constraints
from ..errors import InputError
from ..model import Model
from ..reference.rollout import Integrator
from .control import Forcing, forcing
from .dynamics import checked, positive_number
from .events import impact_table
from .integrators import FIXED_STEP
from .rollouts import grid_steps

__all__ = ["SimulationOptions", "INTEGRATORS", "IVP_METHODS", "EVALUATION_FLOOR",
           "EVALUATIONS_PER_SECOND", "Integrator"]

#: Names accepted by ``simulate(..., integrator=...)``: the fixed-step methods, then the
#: adaptive solvers of SciPy.
INTEGRATORS = (*FIXED_STEP, "solve_ivp")
#: Adaptive methods of :func:`scipy.integrate.solve_ivp` usable with ``integrator="solve_ivp"``.
IVP_METHODS = ("RK45", "DOP853", "RK23", "Radau", "BDF", "LSODA")
#: Default ``max_evaluations`` of ``solve_ivp``: this many, plus the two terms below.
EVALUATION_FLOOR = 10_000
#: Default ``max_evaluations`` of ``solve_ivp``: this many per simulated second (+2 per sample).
EVALUATIONS_PER_SECOND = 100_000


@dataclass(frozen=True)
class SimulationOptions:
    """Everything :func:`rbd.simulate` was given besides the model and the initial state.

    Made by :meth:`build`, which checks each value; the fields hold the checked
    values (arrays as float arrays, defaults filled in).
    """

    duration: float
    dt: float
    integrator: str
    #: The joint force as the steppers evaluate it: a :class:`~rbd.simulation.control.Forcing`
    #: (a table, a PD law, the damping), a callable ``tau(t, q, v)``, or None.
    tau: Forcing | Callable | None
    keep_tau: bool              #: ``tau`` was given: the trajectory records it
    f_ext: np.ndarray | Callable | None
    events: tuple
    impacts: tuple              #: one impact map (or None) per event
    progress: bool | None
    backend: str | None
    event_tol: float
    method: str
    rtol: float
    atol: float
    max_step: float
    max_evaluations: float      #: the limit, ``math.inf`` for none
    min_step: float
    damping: bool
    record_every: int
    num_threads: int | None
    compiled: bool
    constraints: tuple          #: the active constraint kinds
    baumgarte: tuple | None     #: the gains ``(kp, kd)``, or None
    steps: int | None           #: steps of the fixed-step grid; None for ``"solve_ivp"``
    given_constraints: bool = False    #: ``constraints`` was given (else the model's own)

    @property
    def contact_constraints(self) -> tuple | None:
        """``constraints`` for the contact step: None when the caller gave none, so that the
        forward pass adds the model's tendon equalities too (they are rows of the model,
        not constraint objects)."""
        return self.constraints if self.given_constraints else None

    @property
    def rollout(self) -> Integrator | None:
        """The member of the rollouts' enum that runs this integrator compiled, or None."""
        return Integrator.__members__.get(self.integrator.upper())

    @property
    def evaluations_per_step(self) -> int | None:
        """Forward-dynamics evaluations of one fixed step; None when it varies."""
        return None if self.integrator == "solve_ivp" else FIXED_STEP[self.integrator].evaluations

    @property
    def label(self) -> str:
        """The integrator's name in the trajectory and the messages."""
        return self.integrator if self.integrator != "solve_ivp" else \
            f"solve_ivp ({self.method})"

    @classmethod
    def build(cls, model: Model, duration, dt, *, integrator: str = "rk4", tau=None,
              f_ext=None, events=(), impact=None, progress=None, backend=None,
              event_tol=1e-10, method: str = "DOP853", rtol=1e-10, atol=1e-10,
              max_step=np.inf, max_evaluations=None, min_step=0.0, damping=False,
              record_every=1, num_threads=None, compiled=True, constraints=None,
              baumgarte="auto") -> SimulationOptions:
        """Check :func:`rbd.simulate`'s arguments (its docstring) and keep them.

        Raises
        ------
        InputError
            On the first bad argument, named.
        """
        if not isinstance(model, Model):
            raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
        duration = positive_number(duration, "duration", allow_zero=True)
        dt = positive_number(dt, "dt")
        if integrator not in INTEGRATORS:
            raise InputError(f"unknown integrator {integrator!r}; choose from {INTEGRATORS}")
        if method not in IVP_METHODS:
            raise InputError(f"unknown solve_ivp method {method!r}; choose from {IVP_METHODS}")
        if not (f_ext is None or callable(f_ext)):
            f_ext = checked(f_ext, (model.nbodies, 6), "f_ext")
        events = _events(events)
        event_tol = positive_number(event_tol, "event_tol")
        _flags(damping, compiled, record_every, num_threads, integrator)
        impacts = tuple(impact_table(impact, len(events)))
        rtol, atol = positive_number(rtol, "rtol"), positive_number(atol, "atol")
        finite_step = (math.isfinite(max_step) if type(max_step) is float   # without NumPy
                       else np.isfinite(max_step))
        max_step = positive_number(max_step, "max_step") if finite_step else np.inf
        limit = _evaluation_limit(max_evaluations, integrator, duration, dt)
        min_step = positive_number(min_step, "min_step", allow_zero=True)
        steps = None if integrator == "solve_ivp" else grid_steps(duration, dt)
        force = forcing(model, tau, bool(damping), steps)
        active, gains = _constraints(model, constraints, baumgarte, dt)
        return cls(duration, dt, integrator, tau if force is None else force, tau is not None,
                   f_ext, events, impacts, progress, backend, event_tol, method, rtol, atol,
                   max_step, limit, min_step, bool(damping), int(record_every), num_threads,
                   bool(compiled), active, gains, steps, constraints is not None)


def _events(events) -> tuple:
    """``events`` as a tuple of callables."""
    events = (events,) if callable(events) else tuple(events)
    for k, g in enumerate(events):
        if not callable(g):
            raise InputError(f"events[{k}] must be a callable g(t, q, v) -> float")
    return events


def _flags(damping, compiled, record_every, num_threads, integrator: str) -> None:
    """Check ``damping``, ``compiled``, ``record_every`` and ``num_threads``."""
    for name, value in (("damping", damping), ("compiled", compiled)):
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(f"{name} must be True or False, got {value!r}")
    for name, value in (("record_every", record_every), ("num_threads", num_threads)):
        if value is None and name == "num_threads":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{name} must be a positive integer, got {value!r}")
    if record_every != 1 and integrator == "solve_ivp":
        raise InputError("record_every needs integrator='euler' or 'rk4' (with 'solve_ivp', "
                         "dt is only the sampling interval: use a larger dt)")


def _evaluation_limit(value, integrator: str, duration: float, dt: float) -> float:
    """``max_evaluations`` as given, or its default (see :func:`rbd.simulate`)."""
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


def _constraints(model: Model, constraints, baumgarte, dt: float) -> tuple[tuple, object]:
    """The active constraints of the run and the Baumgarte gains (see :func:`rbd.simulate`)."""
    active = tuple(active_constraints(model, constraints))
    if isinstance(baumgarte, str):
        if baumgarte != "auto":
            raise InputError(f"baumgarte must be 'auto', (kp, kd) or None, got {baumgarte!r}")
        omega = 1.0 / (20.0 * float(dt))
        baumgarte = (omega * omega, 2.0 * omega)
    return active, baumgarte
