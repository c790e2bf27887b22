r"""The fixed-step integrators: one Runge–Kutta text for every state space.

:func:`rk4` is the classical fourth-order Runge–Kutta method written once, in
the Runge–Kutta–Munthe-Kaas form that also serves configuration manifolds:

.. math::

    x_2 = x \oplus \tfrac h2 k_1,\quad
    x_3 = x \oplus \tfrac h2 k_2,\quad
    x_4 = x \oplus h\,k_3,\qquad
    x_{n+1} = x \oplus \tfrac h6 (k_1 + 2k_2 + 2k_3 + k_4),

with :math:`k_j = f(t_j, x_j)` mapped back into the chart at ``x`` by
``transport`` (:math:`\mathrm{dexp}^{-1}_{-\xi}`: on a model the RKMK
transport :func:`rbd.reference.rollout.transport`, the text the compiled
rollout renders) where the space is curved.  On a vector space ``⊕`` is ``+`` and this is the
textbook method.  :func:`rk4_step`, :func:`euler_step` and
:func:`implicit_euler_step` (Newton on the analytical Jacobian) step a
:class:`~rbd.Model` (``⊕`` is :func:`rbd.integrate`); :func:`fixed_steps`
drives ``rk4`` over a first-order system ``y' = f(t, y)`` (contact
coordinates, constrained systems) with the event locator of
:mod:`rbd.simulation.events`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .. import algorithms
from ..reference.rollout import transport as rkmk_transport
from .dynamics import StopError, finite
from .events import Events

__all__ = ["rk4", "rk4_step", "euler_step", "implicit_euler_step", "FixedStep", "FIXED_STEP",
           "fixed_steps", "FixedRun"]


def _add(x: np.ndarray, k: np.ndarray, h: float) -> np.ndarray:
    """``x ⊕ h k`` on a vector space."""
    return x + h * k


def rk4(f: Callable, t: float, x, h: float, k1: np.ndarray, retract: Callable = _add,
        transport: Callable | None = None):
    """One classical RK4 step (RKMK4 on a manifold), see the module notes.

    Parameters
    ----------
    f : callable ``f(t, x) -> k``
        The vector field, in the chart at ``x``'s tangent space.
    t, x, h : the time, the state and the step
    k1 : ndarray
        ``f(t, x)``, usually known from the previous step.
    retract : callable ``retract(x, k, c) -> x ⊕ c k``
        Addition by default.
    transport : callable ``transport(ξ, k) -> dexp⁻¹_{-ξ}(k)``, optional
        Maps a stage derivative taken at ``x ⊕ ξ`` back into the chart at ``x``.

    Returns
    -------
    The state at ``t + h``.
    """
    def stage(c: float, k_prev: np.ndarray) -> np.ndarray:
        k = f(t + c, retract(x, k_prev, c))
        return k if transport is None else transport(c * k_prev, k)

    k2 = stage(0.5 * h, k1)
    k3 = stage(0.5 * h, k2)
    k4 = stage(h, k3)
    return retract(x, (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0, h)


# --- a Model: (q, v) with q on the joint manifolds ------------------------------------------
def euler_step(dyn, lie, t, q, v, a, h):
    """Semi-implicit Euler: ``v₁ = v + h a``, ``q₁ = q ⊕ h v₁``."""
    v1 = v + h * a
    q1 = algorithms.integrate(dyn.model, q, v1, h, backend=dyn.backend)
    return q1, v1


def rk4_step(dyn, lie, t, q, v, a1, h):
    """:func:`rk4` on ``x = (q, v)``, ``k = [ξ̇; a]``: stages ``q ⊕ c h k``, final ``q ⊕ h k̄``."""
    model, backend, nv = dyn.model, dyn.backend, dyn.model.nv

    def f(s, x):
        a, _ = dyn(s, *x)
        return np.concatenate([x[1], a])

    def retract(x, k, c):
        return algorithms.integrate(model, x[0], k[:nv], c, backend=backend), x[1] + c * k[nv:]

    def transport(xi, k):
        return np.concatenate([rkmk_transport(model, xi[:nv], k[:nv], lie), k[nv:]])

    return rk4(f, t, (q, v), h, np.concatenate([v, a1]), retract, transport if lie else None)


def implicit_euler_step(dyn, lie, t, q, v, a, h, tol=1e-12, max_iterations=20):
    r"""Implicit (backward) Euler: ``v₁ = v + h a(t + h, q ⊕ h v₁, v₁)``, ``q₁ = q ⊕ h v₁``.

    The residual ``r(v₁) = v₁ − v − h q̈(q ⊕ h v₁, v₁)`` is solved by Newton's
    method with the analytical Jacobian of the forward dynamics
    (:func:`rbd.aba_derivatives`, tangent-space ``∂q̈/∂q`` at ``q₁``):

    .. math::

        J = 1 - h\,\partial\ddot q/\partial v - h^2\,\partial\ddot q/\partial q,

    taking ``∂(q ⊕ h v₁)/∂v₁ ≈ h`` in the chart at ``q₁`` (exact on vector spaces,
    first-order in ``h v₁`` on rotations) and the joint forces' own dependence on the
    state as zero, which only slows convergence.  Newton starts from ``v₁ = v`` and
    halves a step that does not decrease the residual.  L-stable: it damps the fast
    modes of a stiff mechanism instead of amplifying them, and dissipates energy
    (first order).  Raises
    :class:`~rbd.simulation.dynamics.StopError` when Newton does not converge.
    """
    model, backend = dyn.model, dyn.backend

    def residual(v1):
        q1 = algorithms.integrate(model, q, v1, h, backend=backend)
        a1, tau = dyn(t + h, q1, v1)
        return v1 - v - h * a1, q1, tau

    v1 = v.copy()
    r, q1, tau = residual(v1)
    for _ in range(max_iterations):
        if np.max(np.abs(r)) <= tol * max(1.0, np.max(np.abs(v1))):
            return q1, v1
        _, total, f_ext = dyn.forces(t + h, q1, v1)   # total: the commanded force + damping
        dq, dv, _ = algorithms.aba_derivatives(model, q1, v1, total, f_ext, backend=backend)
        step = np.linalg.solve(np.eye(model.nv) - h * dv - h * h * dq, r)
        for _ in range(12):   # damped Newton: halve the step until |r| decreases
            trial = residual(v1 - step)
            if finite(trial[0]) and np.max(np.abs(trial[0])) < np.max(np.abs(r)):
                break
            step = 0.5 * step
        else:
            break
        v1 = v1 - step
        r, q1, tau = trial
    raise StopError("diverged", t + h, f"implicit Euler: Newton did not converge in "
                                       f"{max_iterations} iterations (reduce dt)")


class FixedStep(NamedTuple):
    """A fixed-step method of the Python path: its step and its cost."""

    #: ``step(dyn, lie, t, q, v, a, h) -> (q₁, v₁)``, ``a`` the acceleration at ``(t, q, v)``
    step: Callable
    #: forward-dynamics evaluations a step takes besides ``a``; None when it varies
    evaluations: int | None


#: The fixed-step integrators of :func:`rbd.simulate` by name (its ``integrator=``): a new
#: one is a step function above and a row here; a name that is also a member of
#: :class:`rbd.reference.rollout.Integrator` runs compiled as well (docs/design.md).
FIXED_STEP = {
    "euler": FixedStep(euler_step, 1),
    "rk4": FixedStep(rk4_step, 4),
    "implicit_euler": FixedStep(implicit_euler_step, None),
}


# --- a first-order system y' = f(t, y) ---------------------------------------------------------
@dataclass
class FixedRun:
    """Samples of :func:`fixed_steps`: the grid, the events and how the run ended."""

    t: list[float] = field(default_factory=list)
    y: list[np.ndarray] = field(default_factory=list)
    events: list[tuple[float, int]] = field(default_factory=list)
    failure: Exception | None = None   #: what stopped the run before the end, if anything

    def add(self, t: float, y: np.ndarray) -> None:
        self.t.append(t)
        self.y.append(y)


def fixed_steps(f: Callable, y0, duration: float, dt: float, events: Sequence[Callable] = (),
                event_tol: float = 1e-10, project: Callable | None = None,
                failures: tuple = ()) -> FixedRun:
    """RK4 steps of ``y' = f(t, y)`` from ``t = 0`` on the grid ``k dt`` (the last one shorter).

    Parameters
    ----------
    f : callable ``f(t, y) -> (n,)``
    y0 : (n,) array_like
    duration, dt : float
        Assumed valid (``>= 0``, ``> 0``).
    events : sequence of callables ``g(t, y) -> float``
        Located by :class:`~rbd.simulation.events.Events`; a ``terminal`` one ends the run.
        Each event adds a sample at its time.
    event_tol : float
        Time tolerance of event location.
    project : callable ``y -> y``, optional
        Applied to each step's result (e.g. renormalizing a quaternion).
    failures : tuple of exception types
        Exceptions of ``f`` that end the run (stored in ``failure``) instead of
        propagating; a non-finite state ends it with a :class:`StopError`.

    Returns
    -------
    FixedRun
    """
    watch = Events(events, event_tol)
    n = max(0, math.ceil(duration / dt - 1e-9))
    run = FixedRun()
    t, y = 0.0, np.asarray(y0, dtype=float)
    run.add(t, y)
    watch.reset(t, (y,))
    k = 0
    while k < n:
        t_next = duration if k + 1 == n else (k + 1) * dt
        try:
            k1 = f(t, y)

            def state_at(s, t0=t, y0=y, k1=k1):
                y_s = rk4(f, t0, y0, s - t0, k1)
                y_s = y_s if project is None else project(y_s)
                if not finite(y_s):
                    raise StopError("diverged", s, "the state became non-finite")
                return (y_s,)

            (y1,) = state_at(t_next)
            found = watch.first_crossing(t, t_next, (y1,), state_at) if events else None
            if found is not None:
                t_event, index = found
                (y1,) = state_at(t_event)
        except (StopError, *failures) as exc:
            run.failure = exc
            return run
        if found is None:
            t, y, k = t_next, y1, k + 1
            run.add(t, y)
            continue
        t, y = t_event, y1
        run.add(t, y)
        run.events.append((t, index))
        if watch.terminal[index]:
            return run
        k += t >= t_next            # the event sample stands for the grid sample
        watch.reset(t, (y,))
    return run
