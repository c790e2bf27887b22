r"""Time integration of the equations of motion, with events and impacts.

:func:`simulate` integrates

.. math::

    \dot q = v \;(\text{on the joint manifolds}), \qquad
    \dot v = \mathrm{ABA}(q, v, \tau(t, q, v), f^{ext}(t, q, v))

with the articulated-body algorithm (:func:`rbd.aba`) as the forward
dynamics.  Configurations always move with :func:`rbd.integrate`, so the
unit quaternions of spherical and free joints stay on the unit sphere.

.. rubric:: Integrators

``"euler"``
    Semi-implicit (symplectic) Euler: :math:`v_{n+1} = v_n + h\,a(q_n, v_n)`,
    :math:`q_{n+1} = q_n \oplus h\,v_{n+1}`.  First order; for a system with a
    constant mass matrix it is symplectic and its energy error stays bounded.
``"rk4"``
    The classical fourth-order Runge–Kutta method on the manifold
    (Runge–Kutta–Munthe-Kaas): stage configurations are
    :math:`q_n \oplus \xi_k` through :func:`rbd.integrate`, and the final
    update moves :math:`q_n` with the weighted average of the stage velocities.
    For quaternion joints the stage velocities are first mapped into the chart
    at :math:`q_n` by the inverse differential of the exponential map,
    :math:`\dot\xi = \mathrm{dexp}^{-1}_{-\xi}(v) = v + \tfrac12[\xi, v]
    + \tfrac1{12}[\xi, [\xi, v]] + \dots`, truncated after the second bracket
    as Munthe-Kaas shows is enough for order four.  For joints whose
    configuration space is flat (revolute, prismatic, ...) this is exactly
    the textbook RK4.
``"solve_ivp"``
    An adaptive method of :func:`scipy.integrate.solve_ivp` (``method``,
    default ``"DOP853"``).  Its solver class (:class:`scipy.integrate.DOP853`,
    ...) is driven one accepted step at a time, so that events, impacts and
    chart changes happen between steps.  The state is integrated in a local
    chart :math:`q = q_c \oplus \xi` with
    :math:`\dot\xi = \mathrm{dexp}^{-1}_{-\xi}(v)` (closed forms for SO(3)
    and SE(3)).  The chart is re-centred (:math:`q_c \leftarrow q`,
    :math:`\xi \leftarrow 0`) whenever a joint's rotation in the chart
    exceeds :data:`CHART_RADIUS`, and after every event.  Re-centring keeps
    the state a smooth function of time inside each solver run, so the
    adaptive error control sees the true error; projecting quaternions back
    onto the unit sphere after each step would be a non-smooth correction the
    error estimate never sees.

.. rubric:: Events

An event is a function ``g(t, q, v) -> float``, with optional attributes
``terminal`` (stop the simulation at the event, default False) and
``direction`` (fire only on crossings from negative to positive values when
``> 0``, from positive to negative when ``< 0``; default 0: both), as for
:func:`scipy.integrate.solve_ivp`.  After each step the sign of each ``g`` is
compared with its last non-zero sign; on a change the crossing is bracketed
to ``event_tol`` (Brent's method, then a bracket check with a bisection
fallback) on the step's dense output (``solve_ivp``) or by re-integrating the
step with a shorter step (``euler``, ``rk4``).  The recorded event time is the
end of the final bracket that lies past the crossing, so it is within
``event_tol`` after the true root.  An event that crosses zero twice inside
one step is not seen: keep ``dt`` (or ``max_step``) below the time scale of
the event function.

At an event the optional impact map is applied to the state; it may also
return a new model (for example a walker re-rooted on its new stance foot).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.integrate
import scipy.optimize

from . import algorithms
from .errors import InputError, RbdError, SimulationError
from .model import Model
from .spatial import crm, skew

__all__ = [
    "simulate",
    "Trajectory",
    "EventRecord",
    "INTEGRATORS",
    "IVP_METHODS",
    "CHART_RADIUS",
]

#: Names accepted by ``simulate(..., integrator=...)``.
INTEGRATORS = ("euler", "rk4", "solve_ivp")
#: Adaptive methods of :func:`scipy.integrate.solve_ivp` usable with ``integrator="solve_ivp"``.
IVP_METHODS = ("RK45", "DOP853", "RK23", "Radau", "BDF", "LSODA")
#: Largest rotation angle (rad) of a joint inside one chart before ``solve_ivp`` re-centres it.
CHART_RADIUS = 1.0
#: A run with more steps than this shows a progress bar (when stderr is a terminal).
PROGRESS_THRESHOLD = 2000
#: Default ``max_evaluations`` of ``solve_ivp``: this many, plus the two terms below.
EVALUATION_FLOOR = 10_000
#: Default ``max_evaluations`` of ``solve_ivp``: this many per simulated second (+2 per sample).
EVALUATIONS_PER_SECOND = 100_000
#: Largest accepted deviation of a quaternion's norm from one in ``q0`` and after an impact.
QUATERNION_TOLERANCE = algorithms.QUATERNION_TOLERANCE


# --- results ---------------------------------------------------------------------------------
@dataclass
class EventRecord:
    """One event: when it happened, which event function fired, the state before any impact.

    Attributes
    ----------
    t : float
        Event time (within ``event_tol`` after the zero crossing).
    index : int
        Position of the event function in ``events``.
    q : (nq,) ndarray
    v : (nv,) ndarray
        The state at ``t`` before the impact map.
    """

    t: float
    index: int
    q: np.ndarray
    v: np.ndarray

    def __eq__(self, other) -> bool:
        return (isinstance(other, EventRecord) and self.t == other.t
                and self.index == other.index and np.array_equal(self.q, other.q)
                and np.array_equal(self.v, other.v))


@dataclass(eq=False)
class Trajectory:
    """A simulated trajectory: samples of the state, accelerations and energies.

    Samples are taken every ``dt`` (times ``k * dt``), at the final time and at
    every event (an event with an impact gives two samples at the same time:
    before and after the impact).

    Attributes
    ----------
    t : (N,) ndarray
        Sample times (non-decreasing).
    q : (N, nq) ndarray
    v : (N, nv) ndarray
    a : (N, nv) ndarray
        Joint accelerations from the forward dynamics at each sample.
    tau : (N, nv) ndarray or None
        Applied joint forces at each sample (None when ``tau`` was not given).
    kinetic, potential : (N,) ndarray
        Kinetic energy ``½ vᵀM(q)v`` and gravitational potential energy.
    events : list of EventRecord
    model_name : str
    integrator : str
    dt : float
    steps : int
        Number of integrator steps taken.
    evaluations : int
        Number of forward-dynamics (ABA) evaluations, including those that give ``a``.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    tau: np.ndarray | None = None
    events: list[EventRecord] = field(default_factory=list)
    model_name: str = ""
    integrator: str = ""
    dt: float = float("nan")
    steps: int = 0
    evaluations: int = 0

    def __len__(self) -> int:
        return len(self.t)

    @property
    def nq(self) -> int:
        return self.q.shape[1]

    @property
    def nv(self) -> int:
        return self.v.shape[1]

    @property
    def total(self) -> np.ndarray:
        """Total mechanical energy ``kinetic + potential``, ``(N,)``."""
        return self.kinetic + self.potential

    @property
    def energy_scale(self) -> float:
        """``max(|E(0)|, max_t T(t))``: the scale relative energy errors are measured in."""
        if len(self.t) == 0:
            return 1.0
        scale = max(abs(float(self.total[0])), float(np.max(self.kinetic)))
        return scale if scale > 0 else 1.0

    @property
    def energy_error(self) -> np.ndarray:
        """Relative energy error ``(E(t) - E(0)) / energy_scale``, ``(N,)``."""
        if len(self.t) == 0:
            return np.zeros(0)
        return (self.total - self.total[0]) / self.energy_scale

    @property
    def energy_drift(self) -> float:
        """Largest relative energy error ``max_t |E(t) - E(0)| / energy_scale``.

        Meaningful for a passive system (no ``tau``, no ``f_ext``, no impacts).
        """
        err = self.energy_error
        return float(np.max(np.abs(err))) if err.size else 0.0

    # --- files ---------------------------------------------------------------------------
    def _meta(self) -> dict:
        return {
            "format": "rbd-trajectory-1",
            "model_name": self.model_name,
            "integrator": self.integrator,
            "dt": self.dt,
            "steps": self.steps,
            "evaluations": self.evaluations,
            "nq": self.nq,
            "nv": self.nv,
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write the trajectory to ``path`` (``.npz`` or ``.csv``, by suffix).

        The ``.csv`` file has one comment line with the metadata and the events
        (JSON), one header line with the column names ``t, q0.., v0.., a0..,
        [tau0..,] kinetic, potential, total`` and one row per sample written with
        17 significant digits, so :meth:`load` restores every number exactly.

        Returns
        -------
        Path
            The path written.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".npz":
            self._save_npz(path)
        elif suffix == ".csv":
            self._save_csv(path)
        else:
            raise InputError(f"path must end in .npz or .csv, got {str(path)!r}")
        return path

    def _event_arrays(self):
        k = len(self.events)
        return (np.array([e.t for e in self.events], dtype=float),
                np.array([e.index for e in self.events], dtype=np.int64),
                np.array([e.q for e in self.events], dtype=float).reshape(k, self.nq),
                np.array([e.v for e in self.events], dtype=float).reshape(k, self.nv))

    def _save_npz(self, path: Path) -> None:
        event_t, event_index, event_q, event_v = self._event_arrays()
        arrays = dict(t=self.t, q=self.q, v=self.v, a=self.a, kinetic=self.kinetic,
                      potential=self.potential, event_t=event_t, event_index=event_index,
                      event_q=event_q, event_v=event_v, meta=np.array(json.dumps(self._meta())))
        if self.tau is not None:
            arrays["tau"] = self.tau
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)

    def _columns(self) -> list[str]:
        names = ["t"] + [f"q{i}" for i in range(self.nq)] + [f"v{i}" for i in range(self.nv)]
        names += [f"a{i}" for i in range(self.nv)]
        if self.tau is not None:
            names += [f"tau{i}" for i in range(self.nv)]
        return names + ["kinetic", "potential", "total"]

    def _save_csv(self, path: Path) -> None:
        meta = self._meta()
        meta["events"] = [{"t": e.t, "index": e.index, "q": e.q.tolist(), "v": e.v.tolist()}
                          for e in self.events]
        blocks = [self.t[:, None], self.q, self.v, self.a]
        if self.tau is not None:
            blocks.append(self.tau)
        blocks += [self.kinetic[:, None], self.potential[:, None], self.total[:, None]]
        data = np.hstack(blocks) if len(self.t) else np.zeros((0, len(self._columns())))
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("# " + json.dumps(meta) + "\n")
            fh.write(",".join(self._columns()) + "\n")
            np.savetxt(fh, data, delimiter=",", fmt="%.17g")

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trajectory:
        """Read a trajectory written by :meth:`save` (``.npz`` or ``.csv``)."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".npz", ".csv"):
            raise InputError(f"path must end in .npz or .csv, got {str(path)!r}")
        if not path.is_file():
            raise InputError(f"no trajectory file at {str(path)!r}")
        try:
            return cls._load_npz(path) if suffix == ".npz" else cls._load_csv(path)
        except (KeyError, ValueError, json.JSONDecodeError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{str(path)!r} is not an rbd trajectory file ({exc})") from None

    @classmethod
    def _load_npz(cls, path: Path) -> Trajectory:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            events = [EventRecord(float(t), int(i), q, v) for t, i, q, v in
                      zip(data["event_t"], data["event_index"], data["event_q"],
                          data["event_v"], strict=True)]
            return cls(t=data["t"], q=data["q"], v=data["v"], a=data["a"],
                       kinetic=data["kinetic"], potential=data["potential"],
                       tau=data["tau"] if "tau" in data.files else None, events=events,
                       model_name=meta["model_name"], integrator=meta["integrator"],
                       dt=float(meta["dt"]), steps=int(meta["steps"]),
                       evaluations=int(meta.get("evaluations", 0)))

    @classmethod
    def _load_csv(cls, path: Path) -> Trajectory:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
            header = fh.readline().strip().split(",")
            if not first.startswith("# "):
                raise ValueError("missing metadata line")
            meta = json.loads(first[2:])
            data = np.loadtxt(fh, delimiter=",", ndmin=2).reshape(-1, len(header))
        col = {name: k for k, name in enumerate(header)}

        def block(prefix: str, n: int) -> np.ndarray:
            return data[:, [col[f"{prefix}{i}"] for i in range(n)]].reshape(-1, n)

        nq, nv = int(meta["nq"]), int(meta["nv"])
        events = [EventRecord(float(e["t"]), int(e["index"]), np.array(e["q"], dtype=float),
                              np.array(e["v"], dtype=float)) for e in meta["events"]]
        return cls(t=data[:, col["t"]], q=block("q", nq), v=block("v", nv), a=block("a", nv),
                   kinetic=data[:, col["kinetic"]], potential=data[:, col["potential"]],
                   tau=block("tau", nv) if "tau0" in col else None, events=events,
                   model_name=meta["model_name"], integrator=meta["integrator"],
                   dt=float(meta["dt"]), steps=int(meta["steps"]),
                       evaluations=int(meta.get("evaluations", 0)))


# --- the chart: local coordinates of the configuration manifold ---------------------------
def _lie_joints(model: Model) -> list[tuple[str, slice]]:
    """``(kind, v-slice)`` of every joint whose configuration space is curved."""
    return [(b.joint.kind, model.v_index(i)) for i, b in enumerate(model.bodies)
            if b.joint.kind in ("spherical", "free")]


def _ad(kind: str, xi: np.ndarray) -> np.ndarray:
    """The Lie-algebra adjoint ``ad_ξ``: ``ξ×`` on so(3), ``crm(ξ)`` on se(3)."""
    return skew(xi) if kind == "spherical" else crm(xi)


def _dexp_inv_series(kind: str, xi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``dexp⁻¹_{-ξ}(v) ≈ v + ½[ξ, v] + 1/12 [ξ, [ξ, v]]`` (enough for RKMK order 4)."""
    ad = _ad(kind, xi)
    adv = ad @ v
    return v + 0.5 * adv + (ad @ adv) / 12.0


def _so3_dexp_inv(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``J_r(φ)⁻¹ x = x + ½ φ×x + (1 - (θ/2) cot(θ/2)) / θ² φ×(φ×x)`` on so(3)."""
    theta = float(np.linalg.norm(phi))
    if theta < 1e-4:
        c = 1.0 / 12.0 + theta**2 / 720.0
    else:
        c = (1.0 - 0.5 * theta / math.tan(0.5 * theta)) / theta**2
    px = np.cross(phi, x)
    return x + 0.5 * px + c * np.cross(phi, px)


def _se3_coupling(phi: np.ndarray, rho: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``Q_r(φ, ρ) x``: the lower-left block of the right Jacobian of se(3), ``Q_l(-φ, -ρ)``."""
    a, b = -phi, -rho
    theta = float(np.linalg.norm(a))
    if theta < 1e-3:
        t2 = theta**2
        c1, c2, c3 = 1 / 6 - t2 / 120, 1 / 24 - t2 / 720, 1 / 120 - t2 / 2520
    else:
        s, c = math.sin(theta), math.cos(theta)
        c1 = (theta - s) / theta**3
        c2 = (theta**2 + 2 * c - 2) / (2 * theta**4)
        c3 = (2 * theta - 3 * s + theta * c) / (2 * theta**5)
    ax = np.cross(a, x)
    bx = np.cross(b, x)
    abax = np.cross(a, np.cross(b, ax))
    p1 = np.cross(a, bx) + np.cross(b, ax) + abax
    p2 = np.cross(a, np.cross(a, bx)) + np.cross(b, np.cross(a, ax)) - 3 * abax
    p3 = np.cross(a, np.cross(b, np.cross(a, ax))) + np.cross(a, abax)
    return 0.5 * bx + c1 * p1 + c2 * p2 + c3 * p3


def _dexp_inv_exact(kind: str, xi: np.ndarray, v: np.ndarray) -> np.ndarray:
    r"""``dexp⁻¹_{-ξ}(v) = J_r(ξ)⁻¹ v``: the chart velocity ``ξ̇`` of ``q = q_c ⊕ ξ``.

    so(3): closed form.  se(3) (``ξ = [φ; ρ]``): ``J_r = [[A, 0], [B, A]]`` with
    ``A = J_r(φ)`` of so(3) and ``B = Q_r(φ, ρ)``, inverted blockwise.
    """
    if kind == "spherical":
        return _so3_dexp_inv(xi, v)
    phi, rho = xi[:3], xi[3:]
    w = _so3_dexp_inv(phi, v[:3])
    return np.concatenate([w, _so3_dexp_inv(phi, v[3:] - _se3_coupling(phi, rho, w))])


def _chart_velocity(lie: list, xi: np.ndarray, v: np.ndarray, exact: bool) -> np.ndarray:
    """``ξ̇`` of every joint: ``v`` on flat joints, ``dexp⁻¹_{-ξ}(v)`` on curved ones."""
    if not lie:
        return v
    xi_dot = np.array(v, dtype=float)
    dexp_inv = _dexp_inv_exact if exact else _dexp_inv_series
    for kind, s in lie:
        xi_dot[s] = dexp_inv(kind, xi[s], v[s])
    return xi_dot


def _chart_angle(lie: list, xi: np.ndarray) -> float:
    """Largest rotation angle of a curved joint in the chart coordinates ``ξ``."""
    return max((float(np.linalg.norm(xi[s][:3])) for _, s in lie), default=0.0)


# --- the right-hand side ---------------------------------------------------------------------
class _StopError(Exception):
    """Ends a run early: ``kind`` is "diverged", "evaluations", "min_step" or "failed"."""

    def __init__(self, kind: str, t: float, detail: str):
        super().__init__(detail)
        self.kind, self.t, self.detail = kind, float(t), detail


_NONFINITE_A = "the forward dynamics gave a non-finite acceleration"


def _finite(x) -> bool:
    """Whether every entry of ``x`` is finite, by the sum (a few times faster in the hot loop).

    A sum of finite entries overflows only past ~1e308, a state that has diverged anyway.
    """
    return math.isfinite(np.add.reduce(x, axis=None))


def _require_finite_state(t: float, q, v) -> None:
    """Raise a divergence stop when ``q`` or ``v`` has a non-finite entry."""
    if not math.isfinite(np.add.reduce(q, axis=None) + np.add.reduce(v, axis=None)):
        name = "q" if not _finite(q) else "v"
        raise _StopError("diverged", t, f"{name} became non-finite")


class _Dynamics:
    """``(t, q, v) -> (a, tau)`` by the articulated-body algorithm, with a cap on evaluations."""

    def __init__(self, model: Model, tau, f_ext, backend, max_evaluations: float = math.inf):
        self.model, self.tau, self.f_ext, self.backend = model, tau, f_ext, backend
        self.zero = np.zeros(model.nv)
        self.evaluations = 0
        self.max_evaluations = max_evaluations

    def _callable_force(self, fn, shape: tuple, name: str, t: float, q, v) -> np.ndarray:
        arr = _checked(fn(t, q, v), shape, name, finite=False)
        if not _finite(arr):
            _require_finite_state(t, q, v)
            raise _StopError("diverged", t, f"{name} returned non-finite entries at a finite state")
        return arr

    def forces(self, t: float, q: np.ndarray, v: np.ndarray):
        tau = self.tau
        if callable(tau):
            tau = self._callable_force(tau, (self.model.nv,), "tau(t, q, v)", t, q, v)
        f_ext = self.f_ext
        if callable(f_ext):
            f_ext = self._callable_force(f_ext, (self.model.nbodies, 6), "f_ext(t, q, v)",
                                         t, q, v)
        return (self.zero if tau is None else tau), f_ext

    def __call__(self, t: float, q: np.ndarray, v: np.ndarray):
        if self.evaluations >= self.max_evaluations:
            raise _StopError("evaluations", t, "max_evaluations reached")
        tau, f_ext = self.forces(t, q, v)
        self.evaluations += 1
        try:
            a = algorithms.aba(self.model, q, v, tau, f_ext, backend=self.backend)
        except RbdError:
            _require_finite_state(t, q, v)   # a genuine input error is re-raised below
            raise
        except (ValueError, ArithmeticError) as exc:   # overflow inside the algorithm
            _require_finite_state(t, q, v)
            raise _StopError("diverged", t, f"the forward dynamics failed at "
                                            f"{_magnitudes((t, q, v))}: {exc}") from exc
        return np.asarray(a, dtype=float), tau


def _checked(value, shape: tuple, name: str, finite: bool = True) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric array, got {type(value).__name__}") from None
    if arr.shape != shape:
        raise InputError(f"{name} must have shape {shape}, got {arr.shape}")
    if finite and not _finite(arr):
        raise InputError(f"{name} has non-finite entries")
    return arr


# --- fixed-step integrators ------------------------------------------------------------------
def _euler_step(dyn, lie, t, q, v, a, h):
    """Semi-implicit Euler: ``v₁ = v + h a``, ``q₁ = q ⊕ h v₁``."""
    v1 = v + h * a
    q1 = algorithms.integrate(dyn.model, q, v1, h, backend=dyn.backend)
    return q1, v1


def _rk4_step(dyn, lie, t, q, v, a1, h):
    """Classical RK4 on the manifold (RKMK4): stages ``q ⊕ c h k``, final ``q ⊕ h k̄``."""
    model, backend = dyn.model, dyn.backend
    k1 = v
    q2 = algorithms.integrate(model, q, k1, 0.5 * h, backend=backend)
    v2 = v + 0.5 * h * a1
    a2, _ = dyn(t + 0.5 * h, q2, v2)
    k2 = _chart_velocity(lie, 0.5 * h * k1, v2, exact=False)
    q3 = algorithms.integrate(model, q, k2, 0.5 * h, backend=backend)
    v3 = v + 0.5 * h * a2
    a3, _ = dyn(t + 0.5 * h, q3, v3)
    k3 = _chart_velocity(lie, 0.5 * h * k2, v3, exact=False)
    q4 = algorithms.integrate(model, q, k3, h, backend=backend)
    v4 = v + h * a3
    a4, _ = dyn(t + h, q4, v4)
    k4 = _chart_velocity(lie, h * k3, v4, exact=False)
    k_mean = (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
    q1 = algorithms.integrate(model, q, k_mean, h, backend=backend)
    v1 = v + h * (a1 + 2.0 * a2 + 2.0 * a3 + a4) / 6.0
    return q1, v1


_FIXED_STEP = {"euler": _euler_step, "rk4": _rk4_step}


# --- events ------------------------------------------------------------------------------------
def _sign(x: float) -> int:
    return 1 if x > 0 else (-1 if x < 0 else 0)


class _Events:
    """Sign tracking and root bracketing for the event functions."""

    def __init__(self, functions: Sequence[Callable], tol: float):
        self.functions = list(functions)
        self.terminal = [bool(getattr(g, "terminal", False)) for g in self.functions]
        self.direction = [float(getattr(g, "direction", 0.0)) for g in self.functions]
        self.tol = tol
        self.last = [0] * len(self.functions)

    def value(self, k: int, t: float, q, v) -> float:
        value = self.functions[k](t, q, v)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"event {k} must return a number, got {value!r}") from None
        if not math.isfinite(value):
            raise InputError(f"event {k} returned a non-finite value at t = {t:g}")
        return value

    def reset(self, t: float, q, v) -> None:
        """Take the signs at a new starting state (after an impact or at t = 0)."""
        for k in range(len(self.functions)):
            s = _sign(self.value(k, t, q, v))
            if s != 0:
                self.last[k] = s

    def first_crossing(self, t0: float, t1: float, q1, v1, state_at):
        """The earliest event in ``(t0, t1]``: ``(time, index)`` or None.

        ``state_at(t)`` gives the state inside the step.  Signs are updated
        to ``t1`` when nothing fires.
        """
        found, new_signs = None, list(self.last)
        for k in range(len(self.functions)):
            s1 = _sign(self.value(k, t1, q1, v1))
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
            return before * self.value(k, t, *state_at(t))

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


# --- impacts ------------------------------------------------------------------------------------
def _impact_table(impact, n_events: int) -> list:
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


def _apply_impact(fn, model: Model, q, v):
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
    q_new = _checked(q_new, (model.nq,), "q returned by the impact map")
    v_new = _checked(v_new, (model.nv,), "v returned by the impact map")
    _check_quaternions(model, q_new, "q returned by the impact map")
    return model, q_new, v_new


# --- recording -----------------------------------------------------------------------------------
class _Recorder:
    """Collects samples and the model in force for each run of samples."""

    def __init__(self, keep_tau: bool):
        self.t, self.q, self.v, self.a, self.tau = [], [], [], [], []
        self.keep_tau = keep_tau
        self.segments: list[tuple[int, Model]] = []

    def add(self, dyn: _Dynamics, t: float, q, v) -> np.ndarray:
        """Record ``(t, q, v)`` with its acceleration; return the acceleration.

        Nothing is recorded when the state or its acceleration is not finite.
        """
        a, tau = dyn(t, q, v)
        if not _finite(a):
            raise _StopError("diverged", t, _NONFINITE_A)
        if not self.segments or self.segments[-1][1] is not dyn.model:
            self.segments.append((len(self.t), dyn.model))
        self.t.append(t)
        self.q.append(np.array(q, dtype=float))
        self.v.append(np.array(v, dtype=float))
        self.a.append(a)
        if self.keep_tau:
            self.tau.append(np.array(tau, dtype=float))
        return a

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


class _Progress:
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


# --- validation ----------------------------------------------------------------------------------
def _check_quaternions(model: Model, q: np.ndarray, name: str) -> None:
    for i, body in enumerate(model.bodies):
        if body.joint.kind in ("spherical", "free"):
            start = model.q_index(i).start + (3 if body.joint.kind == "free" else 0)
            norm = float(np.linalg.norm(q[start:start + 4]))
            if abs(norm - 1.0) > QUATERNION_TOLERANCE:
                raise InputError(f"{name}: the quaternion of joint {body.joint_name!r} "
                                 f"(entries {start}..{start + 3}) has norm {norm:.9g}, not 1")


def _positive_number(value, name: str, allow_zero: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{name} must be finite and {bound}, got {value!r}")
    return x


def _force_argument(value, shape: tuple, name: str):
    if value is None or callable(value):
        return value
    return _checked(value, shape, name)


def _validate(model, q0, v0, duration, dt, integrator, tau, f_ext, events, event_tol, method):
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    q0 = _checked(q0, (model.nq,), "q0")
    v0 = _checked(v0, (model.nv,), "v0")
    _check_quaternions(model, q0, "q0")
    duration = _positive_number(duration, "duration", allow_zero=True)
    dt = _positive_number(dt, "dt")
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
    event_tol = _positive_number(event_tol, "event_tol")
    return q0, v0, duration, dt, tau, f_ext, events, event_tol


# --- the drivers ---------------------------------------------------------------------------------
class _Run:
    """State shared by the drivers: the current model, recorder, events, impacts, clock."""

    def __init__(self, dyn, recorder, events, impacts, progress, duration, dt):
        self.dyn, self.recorder, self.events, self.impacts = dyn, recorder, events, impacts
        self.progress, self.duration, self.dt = progress, duration, dt
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
            model, q, v = _apply_impact(fn, self.dyn.model, q, v)
            self.dyn.model = model
        if self.events.terminal[index]:
            self.stopped = True
        return q, v, fn is not None


def _run_fixed(run: _Run, step, q, v):
    """Fixed steps of ``dt`` (shorter before an event or at the end), samples at ``k dt``."""
    dyn, recorder, events = run.dyn, run.recorder, run.events
    t, k = 0.0, 0
    a = recorder.add(dyn, t, q, v)
    events.reset(t, q, v)
    lie = _lie_joints(dyn.model)
    while t < run.duration and not run.stopped:
        t_next = run.grid(k + 1)
        run.steps += 1
        run.last_step = t_next - t
        q1, v1 = step(dyn, lie, t, q, v, a, t_next - t)
        found = None
        if events.functions:
            _require_finite_state(t_next, q1, v1)   # before the event functions see it
            def state_at(s, t0=t, q0=q, v0=v, a0=a, lie=lie):
                if s <= t0:
                    return q0, v0
                q_s, v_s = step(dyn, lie, t0, q0, v0, a0, s - t0)
                _require_finite_state(s, q_s, v_s)
                return q_s, v_s

            found = events.first_crossing(t, t_next, q1, v1, state_at)
        if found is None:
            t, q, v, k = t_next, q1, v1, k + 1
            a = recorder.add(dyn, t, q, v)
        else:
            t, index = found
            q, v = state_at(t)
            a = recorder.add(dyn, t, q, v)
            if t >= t_next:          # the event sample stands for the grid sample
                k += 1
            q, v, jumped = run.handle_event(t, index, q, v)
            if jumped:
                lie = _lie_joints(dyn.model)
                a = recorder.add(dyn, t, q, v)
            events.reset(t, q, v)
        run.last = (t, q, v)
        run.progress.advance_to(t)


def _ivp_step(run: _Run, solver) -> None:
    """One accepted step of ``solver``; a failure or a non-finite state stops the run."""
    t0 = solver.t
    run.steps += 1
    message = solver.step()
    if solver.status == "failed":
        raise _StopError("failed", t0, str(message))
    run.last_step = solver.step_size
    if not _finite(solver.y):
        raise _StopError("diverged", solver.t, "the solver's state became non-finite")


def _run_adaptive(run: _Run, q, v, method: str, rtol: float, atol: float, max_step: float,
                  min_step: float):
    """An adaptive solve_ivp solver in re-centred charts ``q = q_c ⊕ ξ``; samples at ``k dt``."""
    dyn, recorder, events = run.dyn, run.recorder, run.events
    solver_class = getattr(scipy.integrate, method)
    t, k, first_step = 0.0, 1, None
    recorder.add(dyn, t, q, v)
    events.reset(t, q, v)
    nv = dyn.model.nv
    while t < run.duration and not run.stopped:
        q_c, lie = q, _lie_joints(dyn.model)

        def chart(y, q_c=q_c):
            return algorithms.integrate(dyn.model, q_c, y[:nv], 1.0, backend=dyn.backend), y[nv:]

        def rhs(s, y, chart=chart, lie=lie):
            q_s, v_s = chart(y)
            a_s, _ = dyn(s, q_s, v_s)
            if not _finite(a_s):
                raise _StopError("diverged", s, _NONFINITE_A)
            return np.concatenate([_chart_velocity(lie, y[:nv], v_s, exact=True), a_s])

        if first_step is not None:   # the last step size, within what is left of the run
            first_step = min(first_step, run.duration - t)
        t_start = t
        solver = solver_class(rhs, t, np.concatenate([np.zeros(nv), v]), run.duration,
                              rtol=rtol, atol=atol, max_step=max_step,
                              first_step=first_step or None)
        while solver.status == "running":
            t0 = solver.t
            _ivp_step(run, solver)
            first_step = solver.step_size or None
            t1, dense = solver.t, solver.dense_output()

            def state_at(s, dense=dense, chart=chart):
                return chart(dense(s))

            q1, v1 = chart(solver.y)
            if solver.step_size < min_step and t0 > t_start and t1 < solver.t_bound:
                run.last = (t1, q1, v1)
                raise _StopError("min_step", t1, f"its step size {solver.step_size:.3g} s fell "
                                                 f"below min_step = {min_step:g} s")
            found = events.first_crossing(t0, t1, q1, v1, state_at) if events.functions else None
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
                if _chart_angle(lie, solver.y[:nv]) > CHART_RADIUS:
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
            events.reset(t, q, v)
            break                                  # restart the solver at the event


# --- stopping early ------------------------------------------------------------------------------
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
    limit = _positive_number(value, "max_evaluations") if value != math.inf else math.inf
    if limit != math.inf and limit != int(limit):
        raise InputError(f"max_evaluations must be a positive integer or None, got {value!r}")
    return limit


def _keep_last_state(run: _Run, recorder: _Recorder) -> None:
    """Record the last accepted state when it lies past the last sample (solve_ivp)."""
    t, q, v = run.last
    if q is None or t <= recorder.last_time:
        return
    run.dyn.max_evaluations = math.inf
    try:
        recorder.add(run.dyn, t, q, v)
    except _StopError:
        pass


_STIFF_HINT = ("if the system is stiff (fast stable modes), an implicit method handles it: "
               "integrator='solve_ivp' with method='Radau' or 'BDF'")


def _hint(stop: _StopError, adaptive: bool, method: str) -> str:
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


def _magnitudes(state: tuple) -> str:
    """``max|q|`` and ``max|v|`` of a state, a sign of divergence when huge."""
    _, q, v = state
    q_max, v_max = np.max(np.abs(q), initial=0.0), np.max(np.abs(v), initial=0.0)
    return f"max|q| = {q_max:.3g}, max|v| = {v_max:.3g}"


def _stop_message(stop: _StopError, run: _Run, name: str, limits: dict, samples: tuple) -> str:
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
                f"{run.last_step:.3g} s, {_magnitudes(run.last)}).")
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
        Step size of ``"euler"`` and ``"rk4"``; sampling interval of the
        trajectory for every integrator (``"solve_ivp"`` chooses its own steps).
    integrator : {"rk4", "euler", "solve_ivp"}
        See the module documentation.
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
    >>> from rbd.simulate import simulate
    >>> model = rbd.models.double_pendulum()
    >>> traj = simulate(model, [0.5, -0.3], [0.0, 0.0], duration=1.0, dt=0.01)
    >>> traj.q.shape, bool(traj.energy_drift < 1e-6)
    ((101, 2), True)
    """
    q0, v0, duration, dt, tau, f_ext, events, event_tol = _validate(
        model, q0, v0, duration, dt, integrator, tau, f_ext, events, event_tol, method)
    impacts = _impact_table(impact, len(events))
    rtol = _positive_number(rtol, "rtol")
    atol = _positive_number(atol, "atol")
    max_step = _positive_number(max_step, "max_step") if np.isfinite(max_step) else np.inf
    limit = _evaluation_limit(max_evaluations, integrator, duration, dt)
    min_step = _positive_number(min_step, "min_step", allow_zero=True)
    if progress is None:
        progress = duration / dt > PROGRESS_THRESHOLD and sys.stderr.isatty()
    dyn = _Dynamics(model, tau, f_ext, backend, limit)
    recorder = _Recorder(keep_tau=tau is not None)
    bar = _Progress(bool(progress), duration)
    run = _Run(dyn, recorder, _Events(events, event_tol), impacts, bar, duration, dt)
    run.last = (0.0, q0, v0)
    name = integrator if integrator != "solve_ivp" else f"solve_ivp ({method})"
    meta = dict(model_name=model.name, integrator=name, dt=dt)
    try:
        if integrator == "solve_ivp":
            _run_adaptive(run, q0, v0, method, rtol, atol, max_step, min_step)
        else:
            _run_fixed(run, _FIXED_STEP[integrator], q0, v0)
    except _StopError as stop:
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
