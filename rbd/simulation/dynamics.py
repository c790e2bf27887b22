"""The right-hand side of :func:`rbd.simulation.simulate`: forward dynamics with safeguards.

:class:`Dynamics` evaluates ``(t, q, v) -> (a, tau)`` by the articulated-body
algorithm, counts its evaluations against a cap, and turns a non-finite
state, force or acceleration into a :class:`StopError` the drivers report as
a :class:`~rbd.SimulationError`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import algorithms
from .._validation import check_quaternions
from ..errors import InputError, RbdError
from ..model import Model

__all__ = ["Dynamics", "StopError", "finite", "require_finite_state", "checked", "magnitudes",
           "NONFINITE_A", "check_quaternions", "positive_number"]


class StopError(Exception):
    """Ends a run early: ``kind`` is "diverged", "evaluations", "min_step" or "failed"."""

    def __init__(self, kind: str, t: float, detail: str):
        super().__init__(detail)
        self.kind, self.t, self.detail = kind, float(t), detail


NONFINITE_A = "the forward dynamics gave a non-finite acceleration"


def finite(x) -> bool:
    """Whether every entry of ``x`` is finite, by the sum (a few times faster in the hot loop).

    A sum of finite entries overflows only past ~1e308, a state that has diverged anyway.
    """
    return math.isfinite(np.add.reduce(x, axis=None))


def require_finite_state(t: float, q, v) -> None:
    """Raise a divergence stop when ``q`` or ``v`` has a non-finite entry."""
    if not math.isfinite(np.add.reduce(q, axis=None) + np.add.reduce(v, axis=None)):
        name = "q" if not finite(q) else "v"
        raise StopError("diverged", t, f"{name} became non-finite")


def magnitudes(state: tuple) -> str:
    """``max|q|`` and ``max|v|`` of a state ``(t, q, v)``, a sign of divergence when huge."""
    _, q, v = state
    q_max, v_max = np.max(np.abs(q), initial=0.0), np.max(np.abs(v), initial=0.0)
    return f"max|q| = {q_max:.3g}, max|v| = {v_max:.3g}"


def checked(value, shape: tuple, name: str, finite_only: bool = True) -> np.ndarray:
    """``value`` as a float array of ``shape``; :class:`~rbd.InputError` naming ``name`` if not.

    Complex values are refused (not cut to their real part), as are ragged and
    non-numeric sequences.
    """
    try:
        arr = np.asarray(value)
        if arr.dtype.kind == "c":
            raise InputError(f"{name} must be real, got complex entries")
        arr = arr.astype(float, copy=False)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{name} must be a numeric array, got {type(value).__name__}") from None
    if arr.shape != shape:
        raise InputError(f"{name} must have shape {shape}, got {arr.shape}")
    if finite_only and not finite(arr):
        raise InputError(f"{name} has non-finite entries")
    return arr


class Dynamics:
    """``(t, q, v) -> (a, tau)`` by the articulated-body algorithm, with a cap on evaluations.

    ``tau`` is None, a constant, a callable ``tau(t, q, v)`` or a
    :class:`~rbd.simulation.control.Forcing` (a table per step, a PD law, the
    damping); the returned ``tau`` is the commanded force, without the damping.
    """

    def __init__(self, model: Model, tau, f_ext, backend, max_evaluations: float = math.inf,
                 constraints=(), baumgarte=None):
        self.model, self.tau, self.f_ext, self.backend = model, tau, f_ext, backend
        self.zero = np.zeros(model.nv)
        self.evaluations = 0
        self.max_evaluations = max_evaluations
        self.constraints, self.baumgarte = tuple(constraints), baumgarte

    def _callable_force(self, fn, shape: tuple, name: str, t: float, q, v) -> np.ndarray:
        arr = checked(fn(t, q, v), shape, name, finite_only=False)
        if not finite(arr):
            require_finite_state(t, q, v)
            raise StopError("diverged", t, f"{name} returned non-finite entries at a finite state")
        return arr

    def forces(self, t: float, q: np.ndarray, v: np.ndarray):
        """``(τ, τ_total, f_ext)``: the commanded joint force, with the damping, and f_ext."""
        tau = self.tau
        total = None
        if hasattr(tau, "command"):     # a Forcing (rbd.simulation.control)
            tau, total = tau.command(self.model, q, v), tau
            total = total.total(tau, v)
        elif callable(tau):
            tau = self._callable_force(tau, (self.model.nv,), "tau(t, q, v)", t, q, v)
        f_ext = self.f_ext
        if callable(f_ext):
            f_ext = self._callable_force(f_ext, (self.model.nbodies, 6), "f_ext(t, q, v)",
                                         t, q, v)
        tau = self.zero if tau is None else tau
        return tau, (tau if total is None else total), f_ext

    def at_step(self, k: int) -> None:
        """Select row ``k`` of a per-step ``tau`` table (the fixed-step driver's step)."""
        if hasattr(self.tau, "step"):
            self.tau.step = k

    def __call__(self, t: float, q: np.ndarray, v: np.ndarray):
        if self.evaluations >= self.max_evaluations:
            raise StopError("evaluations", t, "max_evaluations reached")
        tau, total, f_ext = self.forces(t, q, v)
        self.evaluations += 1
        try:
            if self.constraints:    # rbd.constrained_dynamics, stabilized (RBDA §8.3)
                a = algorithms.constrained_dynamics(
                    self.model, q, v, total, self.constraints, baumgarte=self.baumgarte,
                    f_ext=f_ext, backend=self.backend).qdd
            else:
                a = algorithms.aba(self.model, q, v, total, f_ext, backend=self.backend)
        except RbdError:
            require_finite_state(t, q, v)   # a genuine input error is re-raised below
            raise
        except (ValueError, ArithmeticError) as exc:   # overflow inside the algorithm
            require_finite_state(t, q, v)
            raise StopError("diverged", t, f"the forward dynamics failed at "
                                           f"{magnitudes((t, q, v))}: {exc}") from exc
        return np.asarray(a, dtype=float), tau


def positive_number(value, name: str, allow_zero: bool = False) -> float:
    """``value`` as a finite float ``> 0`` (``>= 0``); :class:`~rbd.InputError` naming ``name``.

    Only real numbers count: ``True``, ``"0.1"`` and complex numbers are refused.
    """
    if type(value) is float:           # the common case, without the type inspection
        x = value
    else:
        is_real = (isinstance(value, (numbers.Real, np.ndarray))
                   and not isinstance(value, (bool, np.bool_))
                   and np.ndim(value) == 0 and np.asarray(value).dtype.kind in "iuf")
        if not is_real:
            raise InputError(f"{name} must be a real number, got {value!r}")
        x = float(value)
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{name} must be finite and {bound}, got {value!r}")
    return x

