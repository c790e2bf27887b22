r"""Events and impacts: the one event locator of :mod:`rbd.simulation`.

An event is a function ``g(t, *state) -> float`` (``g(t, q, v)`` for a
:class:`~rbd.Model`, ``g(t, y)`` for a first-order system), with optional
attributes ``terminal`` and ``direction`` as for :func:`scipy.integrate.solve_ivp`.
:class:`Events` compares the sign of each ``g`` after a step with its last
non-zero sign; on a change it brackets the crossing to ``tol`` (Brent's
method, then a bracket check with a bisection fallback) on a function
``state_at(t)`` that gives the state inside the step (a dense output, or the
step re-taken with a shorter length).  The reported time is the end of the
final bracket that lies past the crossing, so it is within ``tol`` after the
true root and the event function has already changed sign there.

An impact map ``impact(q, v) -> (q, v)`` or ``-> (model, q, v)`` is applied to
the state at an event (:func:`apply_impact`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import scipy.optimize

from ..errors import InputError
from ..model import Model
from .dynamics import check_quaternions, checked

__all__ = ["Events", "impact_table", "apply_impact"]


def _sign(x: float) -> int:
    return 1 if x > 0 else (-1 if x < 0 else 0)


class Events:
    """Sign tracking and root bracketing for a list of event functions.

    Parameters
    ----------
    functions : sequence of callables ``g(t, *state) -> float``
    tol : float
        Width (seconds) of the bracket around each located crossing.
    """

    def __init__(self, functions: Sequence[Callable], tol: float):
        self.functions = list(functions)
        self.terminal = [bool(getattr(g, "terminal", False)) for g in self.functions]
        self.direction = [float(getattr(g, "direction", 0.0)) for g in self.functions]
        self.tol = tol
        self.last = [0] * len(self.functions)

    def value(self, k: int, t: float, state: tuple) -> float:
        """``g_k(t, *state)`` as a finite float, or :class:`~rbd.InputError`."""
        value = self.functions[k](t, *state)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"event {k} must return a number, got {value!r}") from None
        if not math.isfinite(value):
            raise InputError(f"event {k} returned a non-finite value at t = {t:g}")
        return value

    def reset(self, t: float, state: tuple) -> None:
        """Take the signs at a new starting state (after an impact or at t = 0)."""
        for k in range(len(self.functions)):
            s = _sign(self.value(k, t, state))
            if s != 0:
                self.last[k] = s

    def first_crossing(self, t0: float, t1: float, state1: tuple, state_at: Callable):
        """The earliest event in ``(t0, t1]``: ``(time, index)`` or None.

        ``state1`` is the state at ``t1``; ``state_at(t)`` gives the state
        inside the step as a tuple.  Signs are updated to ``t1`` when nothing fires.
        """
        found, new_signs = None, list(self.last)
        for k in range(len(self.functions)):
            s1 = _sign(self.value(k, t1, state1))
            if s1 == 0:
                continue
            before = self.last[k]
            new_signs[k] = s1
            if before == 0 or s1 == before:
                continue
            if self.direction[k] * s1 < 0:   # a crossing in the ignored direction
                continue
            t_event = self._locate(k, t0, t1, before, state_at)
            if found is None or t_event < found[0]:
                found = (t_event, k)
        if found is None:
            self.last = new_signs
        return found

    def _locate(self, k: int, t0: float, t1: float, before: int, state_at) -> float:
        """The end past the root of a bracket of width ≤ tol around g_k's crossing."""
        def G(t):   # > 0 (or 0) before the crossing, < 0 after it
            return before * self.value(k, t, state_at(t))

        tol = self.tol
        try:
            root = scipy.optimize.brentq(G, t0, t1, xtol=0.25 * tol, rtol=4 * np.finfo(float).eps)
            lo, hi = max(t0, root - 0.5 * tol), min(t1, root + 0.5 * tol)
            if G(lo) >= 0 and G(hi) < 0:
                return hi
        except ValueError:   # G(t0) == 0 or no sign change seen by brentq
            pass
        a, b = t0, t1        # bisection keeps G(a) >= 0 > G(b)
        while b - a > tol:
            c = 0.5 * (a + b)
            if G(c) < 0:
                b = c
            else:
                a = c
        return b


def impact_table(impact, n_events: int) -> list:
    """One impact map (or None) per event, from ``simulate``'s ``impact`` argument."""
    if impact is None:
        return [None] * n_events
    if callable(impact):
        return [impact] * n_events
    if isinstance(impact, Mapping):
        table = [None] * n_events
        for k, fn in impact.items():
            if not isinstance(k, int | np.integer) or not 0 <= k < n_events:
                raise InputError(f"impact: key {k!r} is not the index of an event "
                                 f"(there are {n_events} events)")
            if fn is not None and not callable(fn):
                raise InputError(f"impact[{k}] must be callable or None")
            table[int(k)] = fn
        return table
    if isinstance(impact, Sequence) and not isinstance(impact, str):
        if len(impact) != n_events:
            raise InputError(f"impact: a sequence of impact maps needs one entry per event "
                             f"({n_events}), got {len(impact)}")
        for k, fn in enumerate(impact):
            if fn is not None and not callable(fn):
                raise InputError(f"impact[{k}] must be callable or None")
        return list(impact)
    raise InputError("impact must be None, a callable, a mapping {event index: callable} or a "
                     f"sequence of callables, got {type(impact).__name__}")


def apply_impact(fn, model: Model, q, v):
    """Call an impact map ``(q, v) -> (q, v)`` or ``(q, v) -> (model, q, v)``."""
    out = fn(np.array(q), np.array(v))
    if not isinstance(out, tuple | list) or len(out) not in (2, 3):
        raise InputError("impact map must return (q, v) or (model, q, v)")
    if len(out) == 3:
        new_model, q_new, v_new = out
        if not isinstance(new_model, Model):
            raise InputError(f"impact map returned a model of type {type(new_model).__name__}")
        if (new_model.nq, new_model.nv) != (model.nq, model.nv):
            raise InputError(f"impact map changed (nq, nv) from {(model.nq, model.nv)} to "
                             f"{(new_model.nq, new_model.nv)}")
        model = new_model
    else:
        q_new, v_new = out
    q_new = checked(q_new, (model.nq,), "q returned by the impact map")
    v_new = checked(v_new, (model.nv,), "v returned by the impact map")
    check_quaternions(model, q_new, "q returned by the impact map")
    return model, q_new, v_new
