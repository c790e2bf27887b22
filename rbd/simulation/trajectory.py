"""Simulation results: :class:`Trajectory` and :class:`EventRecord`, and their files."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError

__all__ = ["EventRecord", "Trajectory", "joint_layout"]


def joint_layout(model) -> tuple[tuple[str, str, int, int, int, int], ...]:
    """``(name, kind, q start, nq, v start, nv)`` of each joint with coordinates of its own.

    In body order; fixed joints and mimic joints (no coordinate of their own) are left out.
    Stored on a :class:`Trajectory` by :func:`rbd.simulate` so that a plot names the curves
    after the joints, with units, without the model at hand.  The model keeps it (a tree
    change clears it).
    """
    if hasattr(model, "_derived"):
        return model._derived("joint_layout", lambda: _joint_layout(model))
    return _joint_layout(model)


def _joint_layout(model) -> tuple[tuple[str, str, int, int, int, int], ...]:
    """:func:`joint_layout`, computed."""
    layout = []
    for i, body in enumerate(model.bodies):
        joint = body.joint
        if joint.nv == 0 or body.joint_name in model.mimic:
            continue
        qs, vs = model.q_index(i), model.v_index(i)
        layout.append((body.joint_name, joint.kind, qs.start, qs.stop - qs.start, vs.start,
                       vs.stop - vs.start))
    return tuple(layout)


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
        Sample times (non-decreasing).  A batch of ``B`` rollouts
        (:func:`rbd.simulate` with ``q0`` of shape ``(B, nq)``) shares them and
        has a leading axis ``B`` on ``q``, ``v``, ``a``, ``tau``, ``kinetic``
        and ``potential`` (and on the contact run's ``contact_count``,
        ``constraint_force`` and ``contact_force``).
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
    constraint_error : (N, m) ndarray or None
        The position error ``φ(q)`` of the enforced constraints (``m`` rows) at
        each sample (None without constraints; :meth:`save` does not write it).
    constraint_velocity_error : (N, m) ndarray or None
        The velocity error ``J(q) v`` of the enforced constraints at each sample
        (None without constraints; :meth:`save` does not write it).
    contact_count : (N,) int ndarray or None
        The number of contacts at each sample of a contact run
        (``simulate(..., contact=...)``; None otherwise).
    constraint_force : (N, nv) ndarray or None
        The generalized force :math:`J^T f` of the constraint rows (contacts, joint
        limits, friction loss, equality constraints) at each sample of a contact run,
        MuJoCo's ``qfrc_constraint`` in rbd's coordinates
        (:func:`rbd.mjcf.to_mujoco_force` gives MuJoCo's); None otherwise.
    contact_force : (N, K, 6) ndarray or None
        The force of each contact at each sample of a contact run, in the contact's frame:
        normal, two tangents, torsion, two rolling components (MuJoCo's
        ``mj_contactForce``; components past a contact's ``condim`` are zero).  Contact
        ``i`` of sample ``j`` is the ``i``-th of :func:`rbd.collide` at ``q[j]``; ``K`` is
        the most contacts of any sample, at most
        :data:`rbd.simulation.contact.RECORDED_CONTACTS` (32: the first ones are kept),
        and rows past ``contact_count[j]`` are zero.
        None otherwise.  :meth:`save` writes both forces and ``contact_count``.
    joints : tuple
        The simulated model's joints, :func:`joint_layout` (empty when not known): the
        names and units :func:`rbd.plotting.plot_trajectory` labels the curves with.
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
    constraint_error: np.ndarray | None = None
    contact_count: np.ndarray | None = None
    joints: tuple = ()
    constraint_velocity_error: np.ndarray | None = None
    constraint_force: np.ndarray | None = None
    contact_force: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.t)

    @property
    def nq(self) -> int:
        return self.q.shape[-1]

    @property
    def nv(self) -> int:
        return self.v.shape[-1]

    @property
    def batch(self) -> int | None:
        """The number of rollouts of a batch (``q`` of shape ``(B, N, nq)``), else None."""
        return self.q.shape[0] if self.q.ndim == 3 else None

    @property
    def total(self) -> np.ndarray:
        """Total mechanical energy ``kinetic + potential``, ``(N,)`` (``(B, N)``)."""
        return self.kinetic + self.potential

    @property
    def energy_scale(self) -> float | np.ndarray:
        """``max(|E(0)|, T(0))``: the scale relative energy errors are measured in, in joules.

        Taken from the initial state only, so an energy that blows up cannot
        grow its own yardstick; 1 (errors in joules) when both vanish (a start
        at rest at the zero of the potential).  One per rollout, ``(B, 1)``,
        for a batch.
        """
        if len(self.t) == 0:
            return 1.0
        total, kinetic = np.atleast_2d(self.total), np.atleast_2d(self.kinetic)
        scale = np.maximum(np.abs(total[:, :1]), kinetic[:, :1])
        scale = np.where(scale > 0, scale, 1.0)
        return float(scale[0, 0]) if self.batch is None else scale

    @property
    def energy_error(self) -> np.ndarray:
        """Relative energy error ``(E(t) - E(0)) / energy_scale``, ``(N,)`` (``(B, N)``)."""
        if len(self.t) == 0:
            return np.zeros(self.total.shape)
        return (self.total - self.total[..., :1]) / self.energy_scale

    @property
    def energy_drift(self) -> float:
        """Largest relative energy error ``max_t |E(t) - E(0)| / max(|E(0)|, T(0))``.

        Meaningful for a passive system (no ``tau``, no ``f_ext``, no impacts).
        A drift of 10 means the energy error is ten times the initial energy;
        NaN samples (after a rollout of a batch stopped) are left out.
        """
        err = self.energy_error
        return float(np.nanmax(np.abs(err))) if np.any(np.isfinite(err)) else 0.0

    @property
    def constraint_drift(self) -> float:
        """Largest position error ``max_t max|φ(q(t))|`` of the constraints (0 without)."""
        err = self.constraint_error
        return float(np.max(np.abs(err))) if err is not None and err.size else 0.0

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
            "joints": [list(j) for j in self.joints],
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
        arrays.update({name: value for name, value in self._contact_fields().items()
                       if value is not None})
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)

    def _contact_fields(self) -> dict:
        """The records of a contact run (None each on other runs)."""
        return {"contact_count": self.contact_count, "constraint_force": self.constraint_force,
                "contact_force": self.contact_force}

    def _columns(self) -> list[str]:
        names = ["t"] + [f"q{i}" for i in range(self.nq)] + [f"v{i}" for i in range(self.nv)]
        names += [f"a{i}" for i in range(self.nv)]
        if self.tau is not None:
            names += [f"tau{i}" for i in range(self.nv)]
        names += ["kinetic", "potential", "total"]
        if self.contact_count is not None:
            names.append("contact_count")
        if self.constraint_force is not None:
            names += [f"constraint_force{i}" for i in range(self.nv)]
        if self.contact_force is not None:
            names += [f"contact_force{k}_{c}" for k in range(self.contact_force.shape[1])
                      for c in range(6)]
        return names

    def _save_csv(self, path: Path) -> None:
        if self.batch is not None:
            raise InputError("a batch trajectory is saved as .npz (a .csv file holds one run)")
        meta = self._meta()
        meta["events"] = [{"t": e.t, "index": e.index, "q": e.q.tolist(), "v": e.v.tolist()}
                          for e in self.events]
        blocks = [self.t[:, None], self.q, self.v, self.a]
        if self.tau is not None:
            blocks.append(self.tau)
        blocks += [self.kinetic[:, None], self.potential[:, None], self.total[:, None]]
        if self.contact_count is not None:
            blocks.append(np.reshape(self.contact_count, (-1, 1)))
        if self.constraint_force is not None:
            blocks.append(self.constraint_force)
        if self.contact_force is not None:
            blocks.append(np.reshape(self.contact_force, (len(self.t), -1)))
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
                       evaluations=int(meta.get("evaluations", 0)), joints=_joints(meta),
                       **{name: data[name] if name in data.files else None
                          for name in ("contact_count", "constraint_force", "contact_force")})

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
                   evaluations=int(meta.get("evaluations", 0)), joints=_joints(meta),
                   **_contact_columns(data, col, nv))


def _contact_columns(data: np.ndarray, col: dict, nv: int) -> dict:
    """A ``.csv`` file's records of a contact run (:meth:`Trajectory._contact_fields`;
    None each where the file has no such columns, as files of other runs and older ones)."""
    out = {"contact_count": None, "constraint_force": None, "contact_force": None}
    if "contact_count" in col:
        out["contact_count"] = data[:, col["contact_count"]].astype(np.int64)
    if "constraint_force0" in col:
        out["constraint_force"] = data[:, [col[f"constraint_force{i}"] for i in range(nv)]]
    contact = sorted((k for k in col if k.startswith("contact_force")), key=col.get)
    if contact:
        out["contact_force"] = data[:, [col[k] for k in contact]].reshape(len(data), -1, 6)
    return out


def _joints(meta: dict) -> tuple:
    """The joint layout of a trajectory file's metadata (older files have none)."""
    return tuple((str(n), str(k), int(a), int(b), int(c), int(d))
                 for n, k, a, b, c, d in meta.get("joints", ()))


def stack_runs(model, runs: list, times: np.ndarray, steps: int) -> Trajectory:
    """One batch :class:`Trajectory` of runs on the sample ``times``: NaN where a run has
    no sample (it stopped early, or never ran: ``None``)."""
    some = next(r for r in runs if r is not None and len(r.t)) if any(
        r is not None and len(r.t) for r in runs) else None
    keep_tau = some is not None and some.tau is not None

    def column(name, width):
        tail = () if width is None else (width,) if np.ndim(width) == 0 else tuple(width)
        out = np.full((len(runs), len(times)) + tail, np.nan)
        for k, r in enumerate(runs):
            if r is None:
                continue
            rows = min(len(r.t), len(times))
            n = int(np.argmin(np.append(r.t[:rows] == times[:rows], False)))
            value = getattr(r, name)[:n]
            if name == "contact_force":          # zero for the contacts a run has fewer of
                out[k, :n] = 0.0
                out[k, :n, :value.shape[1]] = value
            else:
                out[k, :n] = value
        return out

    forces = some is not None and some.constraint_force is not None
    widest = max((r.contact_force.shape[1] for r in runs
                  if r is not None and r.contact_force is not None), default=0)

    nq, nv = model.nq, model.nv
    return Trajectory(t=times, q=column("q", nq), v=column("v", nv), a=column("a", nv),
                      kinetic=column("kinetic", None), potential=column("potential", None),
                      tau=column("tau", nv) if keep_tau else None,
                      model_name=some.model_name if some else "",
                      integrator=some.integrator if some else "",
                      dt=some.dt if some else math.nan, steps=steps,
                      evaluations=sum(r.evaluations for r in runs if r is not None),
                      constraint_error=None if some is None or some.constraint_error is None
                      else column("constraint_error", some.constraint_error.shape[-1]),
                      constraint_velocity_error=None if some is None
                      or some.constraint_velocity_error is None
                      else column("constraint_velocity_error",
                                  some.constraint_velocity_error.shape[-1]),
                      contact_count=None if some is None or some.contact_count is None
                      else _counts(column("contact_count", None)),
                      constraint_force=column("constraint_force", nv) if forces else None,
                      contact_force=column("contact_force", (widest, 6)) if forces else None)


def _counts(column: np.ndarray) -> np.ndarray:
    """Contact counts as integers, unless a rollout left samples out (NaN there)."""
    return column.astype(int) if np.all(np.isfinite(column)) else column
