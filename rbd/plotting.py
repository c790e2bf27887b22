"""Matplotlib figures of trajectories, energies and models.

Every function draws into the axes (or figure) it is given or, without one,
into a new figure made by :func:`matplotlib.pyplot.figure`: pyplot manages it,
so ``plt.show()``, ``plt.gcf()`` and ``plt.close()`` work on it as on any
figure.  Each returns the figure, a :class:`PlotFigure`, which a notebook
shows exactly once whatever the backend (inline, a widget, or Agg as in
continuous integration, which alone would show nothing).  Scripts that draw
many figures close them (``plt.close(fig)``) as with any pyplot figure.

>>> import rbd
>>> from rbd import simulate
>>> from rbd.plotting import plot_energy
>>> model = rbd.models.double_pendulum()
>>> fig = plot_energy(simulate(model, [0.5, 0.0], [0.0, 0.0], 0.5, 0.01))
>>> len(fig.axes)
2
>>> import matplotlib.pyplot as plt
>>> plt.gcf() is fig
True
>>> plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from . import algorithms
from ._figures import PlotFigure, _new_figure
from .model import Model
from .simulation import Trajectory
from .simulation.trajectory import joint_layout

__all__ = ["PlotFigure", "plot_trajectory", "readable_coordinates", "plot_phase", "plot_energy",
           "plot_model", "plot_summary", "plot_walker_phase_portrait", "plot_walker_energy",
           "plot_basin", "plot_sparsity", "plot_contacts"]

# The figure factory lives in rbd._figures so that rbd.sweeps makes the same figures; the
# class is documented here, where readers look for it.
PlotFigure.__module__ = __name__

#: Largest number of coordinates named in a legend (all are drawn; the legend says "n of m").
MAX_LABELLED = 10


def _figure(ax: Axes | None, **kwargs) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = _new_figure(**kwargs)
    return fig, fig.add_subplot()


# --- coordinates a person can read ------------------------------------------------------------
# Per joint kind: the names and units of the drawn position and velocity components.  Ball
# and free joints are drawn as rotation vectors θ (axis × angle, from their quaternions),
# not as quaternion components; a free joint's position is drawn rotation first, (θ, x),
# in the order of its velocity (ω, v), so that column k of q and of v name the same motion.
_ROT = ("θx", "θy", "θz")
_POSITIONS = {"revolute": (("",), ("rad",)), "prismatic": (("",), ("m",)),
              "helical": (("",), ("rad",)), "universal": (("1", "2"), ("rad", "rad")),
              "spherical": (_ROT, ("rad",) * 3),
              "free": ((*_ROT, "x", "y", "z"), ("rad",) * 3 + ("m",) * 3),
              "planar": (("x", "y", "θ"), ("m", "m", "rad"))}
_VELOCITIES = {"spherical": (("ωx", "ωy", "ωz"), ("rad/s",) * 3),
               "free": (("ωx", "ωy", "ωz", "vx", "vy", "vz"), ("rad/s",) * 3 + ("m/s",) * 3)}


def _rotation_vectors(quaternions: np.ndarray) -> np.ndarray:
    """Rotation vectors (axis × angle) of unit quaternions ``(x, y, z, w)``, ``(T, 3)``."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_quat(quaternions).as_rotvec()


def readable_coordinates(model: Model, q: np.ndarray, v: np.ndarray):
    """The trajectory as drawn: joint-named components with units.

    Ball and free joints become rotation vectors (axis × angle, rad) instead of
    quaternion components; a joint's velocity components keep their meaning
    (body-frame ω and v for ball and free joints).  A free joint is drawn in
    the order of its velocity, rotation first: ``(θx, θy, θz, x, y, z)`` beside
    ``(ωx, ωy, ωz, vx, vy, vz)``.

    Parameters
    ----------
    model : Model
    q : (T, nq) ndarray
    v : (T, nv) ndarray

    Returns
    -------
    positions, velocities : (T, n) ndarray, (T, nv) ndarray
    position_labels, velocity_labels : list of str
        ``"elbow [rad]"``, ``"ball1 θx [rad]"``, ``"base vx [m/s]"``, ...
    position_units, velocity_units : list of str
    """
    return _readable(joint_layout(model), q, v)


def _readable(layout, q: np.ndarray, v: np.ndarray):
    """:func:`readable_coordinates` from a :func:`~rbd.simulation.trajectory.joint_layout`."""
    columns, labels, units = [], [], []
    v_labels, v_units = [], []
    for name, kind, q_start, nq, _, nv in layout:
        qs = q[:, q_start:q_start + nq]
        if kind in ("spherical", "free"):
            # a free joint's rotation first, as ω leads its velocity v = [ω; v]
            qs = _rotation_vectors(qs) if kind == "spherical" else np.hstack(
                [_rotation_vectors(qs[:, 3:7]), qs[:, :3]])
        parts, part_units = _POSITIONS.get(kind, (tuple(f"[{k}]" for k in range(nq)),
                                                  ("",) * nq))
        for k, (part, unit) in enumerate(zip(parts, part_units, strict=True)):
            columns.append(qs[:, k])
            labels.append(_label(name, part, unit))
            units.append(unit)
        default = (parts[:nv] if nv == nq else tuple(f"[{k}]" for k in range(nv)),
                   tuple(u + "/s" if u else "" for u in part_units)[:nv])
        vparts, vunits = _VELOCITIES.get(kind, default)
        v_labels += [_label(name, part, unit) for part, unit in zip(vparts, vunits, strict=True)]
        v_units += list(vunits)
    positions = np.column_stack(columns) if columns else np.zeros((len(q), 0))
    return positions, np.asarray(v, float), labels, v_labels, units, v_units


def _label(joint: str, part: str, unit: str) -> str:
    name = f"{joint} {part}" if part and not part.startswith("[") else joint + part
    return f"{name} [{unit}]" if unit else name


def _axis_label(symbol: str, units: Sequence[str]) -> str:
    """``"q [rad]"``, or ``"q [rad, m]"`` when the drawn coordinates mix units."""
    found = list(dict.fromkeys(u for u in units if u))
    return f"{symbol} [{', '.join(found)}]" if found else symbol


def _lines(ax: Axes, t: np.ndarray, values: np.ndarray, labels: Sequence[str], ylabel: str,
           indices: Sequence[int] | None) -> None:
    """Curves of ``values[:, indices]`` against ``t``, their legend beside the axes."""
    indices = range(values.shape[1]) if indices is None else indices
    lines = [ax.plot(t, values[:, i], lw=1.0, label=labels[i])[0] for i in indices]
    ax.set_ylabel(ylabel)
    if lines:
        named = lines[:MAX_LABELLED]
        title = (None if len(named) == len(lines) else
                 f"{len(lines)} drawn, first {len(named)} named")
        ax.legend(handles=named, title=title, loc="center left", bbox_to_anchor=(1.01, 0.5),
                  fontsize="small", title_fontsize="small", frameon=False)
    ax.grid(True, alpha=0.3)


def _coordinates(traj: Trajectory, model: Model | None):
    """``(q values, v values, q labels, v labels, q axis label, v axis label)`` to draw."""
    layout = joint_layout(model) if model is not None else traj.joints
    if not layout:              # a trajectory made by hand or read from an older file
        return (traj.q, traj.v, [f"q{i}" for i in range(traj.nq)],
                [f"v{i}" for i in range(traj.nv)], "q", "v")
    q, v, q_labels, v_labels, q_units, v_units = _readable(layout, traj.q, traj.v)
    return q, v, q_labels, v_labels, _axis_label("q", q_units), _axis_label("v", v_units)


def plot_trajectory(traj: Trajectory, q_indices: Sequence[int] | None = None,
                    v_indices: Sequence[int] | None = None, fig: Figure | None = None,
                    model: Model | None = None) -> Figure:
    """Joint coordinates ``q(t)`` (top) and velocities ``v(t)`` (bottom).

    Parameters
    ----------
    traj : Trajectory
    q_indices, v_indices : sequence of int, optional
        Which coordinates to draw (all by default); with ``model``, indices of
        the drawn coordinates (see :func:`readable_coordinates`).
    fig : Figure, optional
        Draw into this (empty) figure instead of a new one.
    model : Model, optional
        The simulated model: curves named after its joints, units on the axes,
        ball and free joints as rotation vectors.  Without it, the joints stored on
        the trajectory by :func:`rbd.simulate` (``traj.joints``) give the same
        labels; ``q0, q1, ...`` only for a trajectory that has none.
    """
    fig = _new_figure(figsize=(8, 5), layout="constrained") if fig is None else fig
    ax_q, ax_v = fig.subplots(2, 1, sharex=True)
    q, v, q_labels, v_labels, q_axis, v_axis = _coordinates(traj, model)
    _lines(ax_q, traj.t, q, q_labels, q_axis, q_indices)
    _lines(ax_v, traj.t, v, v_labels, v_axis, v_indices)
    ax_v.set_xlabel("t [s]")
    ax_q.set_title(f"{traj.model_name}: {traj.integrator}, dt = {traj.dt:g} s")
    _mark_events(traj, (ax_q, ax_v))
    return fig


def _mark_events(traj: Trajectory, axes) -> None:
    for event in traj.events:
        for ax in axes:
            ax.axvline(event.t, color="0.5", lw=0.8, ls=":")


def plot_phase(traj: Trajectory, q_index: int = 0, v_index: int | None = None,
               ax: Axes | None = None) -> Figure:
    """Phase portrait: velocity ``v[v_index]`` against coordinate ``q[q_index]``.

    ``v_index`` defaults to ``q_index``, which pairs a coordinate with its own
    rate for joints where ``q̇ = v`` (revolute, prismatic, ...).  The start is
    marked with a circle and events with crosses.
    """
    v_index = q_index if v_index is None else v_index
    fig, ax = _figure(ax, figsize=(5, 4.5), layout="constrained")
    x, y = traj.q[:, q_index], traj.v[:, v_index]
    ax.plot(x, y, lw=1.0)
    ax.plot(x[:1], y[:1], "o", color="C1", label="start")
    if traj.events:
        ax.plot([e.q[q_index] for e in traj.events], [e.v[v_index] for e in traj.events],
                "x", color="C3", label="events")
    ax.set_xlabel(f"q{q_index}")
    ax.set_ylabel(f"v{v_index}")
    ax.set_title(f"{traj.model_name}: phase portrait")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def _energy_lines(ax, traj: Trajectory) -> None:
    """Kinetic, potential and total energy against time on ``ax``."""
    ax.plot(traj.t, traj.kinetic, lw=1.0, label="kinetic T")
    ax.plot(traj.t, traj.potential, lw=1.0, label="potential U")
    ax.plot(traj.t, traj.total, lw=1.5, color="k", label="total E")
    ax.set_ylabel("energy [J]")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small", frameon=False)
    ax.grid(True, alpha=0.3)


def plot_energy(traj: Trajectory, fig: Figure | None = None) -> Figure:
    """Kinetic, potential and total energy (top) and the relative energy error (bottom).

    The error is ``(E(t) - E(0)) / max(|E(0)|, max T)``
    (:attr:`Trajectory.energy_error`), drawn on a symmetric-log axis.
    """
    fig = _new_figure(figsize=(7, 5), layout="constrained") if fig is None else fig
    ax_e, ax_d = fig.subplots(2, 1, sharex=True)
    _energy_lines(ax_e, traj)
    err = traj.energy_error
    ax_d.plot(traj.t, err, lw=1.0, color="C3")
    scale = float(np.max(np.abs(err))) if err.size else 0.0
    ax_d.set_yscale("symlog", linthresh=max(scale * 1e-3, 1e-16))
    ax_d.set_ylabel("relative error of E")
    ax_d.set_xlabel("t [s]")
    ax_d.grid(True, alpha=0.3)
    ax_e.set_title(f"{traj.model_name}: energy ({traj.integrator}, dt = {traj.dt:g} s; "
                   f"max drift {traj.energy_drift:.2e})")
    _mark_events(traj, (ax_e, ax_d))
    return fig


def plot_model(model: Model, q=None, ax: Axes | None = None, backend: str | None = None,
               color: str = "C0", label_bodies: bool = False, show_com: bool = True) -> Figure:
    """A 3-D stick figure: body origins joined parent → child, from the world origin.

    Parameters
    ----------
    model : Model
    q : (nq,) array_like, optional
        Configuration (neutral by default).
    ax : 3-D Axes, optional
        Axes created with ``projection="3d"``; a new figure otherwise.  Several
        configurations can be drawn into one axes; the limits grow to hold all.
    backend : {None, "kernel", "reference"}
        Passed to :func:`rbd.forward_kinematics`.
    color : str
        Line colour.
    label_bodies : bool
        Write each body's name next to its origin.
    show_com : bool
        Join each body's origin to its centre of mass with a thin line (a
        pendulum bob or the far end of a link that has no child body).
    """
    q = algorithms.neutral(model) if q is None else np.asarray(q, dtype=float)
    T = algorithms.forward_kinematics(model, q, backend=backend)
    reuse = ax is not None and ax.has_data()
    if ax is None:
        fig = _new_figure(figsize=(5, 5), layout="constrained")
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    origins = T[:, :3, 3]
    for i, body in enumerate(model.bodies):
        start = np.zeros(3) if body.parent < 0 else origins[body.parent]
        ax.plot(*np.stack([start, origins[i]]).T, "-", color=color, lw=2.0)
        if label_bodies:
            ax.text(*origins[i], f" {body.name}", fontsize="x-small")
    ax.plot(*origins.T, "o", color=color, ms=4)
    points = [origins, np.zeros((1, 3))]
    if show_com and model.nbodies:
        coms = algorithms.body_centers_of_mass(model, q, backend=backend)
        for i in range(model.nbodies):
            ax.plot(*np.stack([origins[i], coms[i]]).T, "-", color=color, lw=0.8)
        ax.plot(*coms.T, "o", color=color, mfc="white", ms=5)
        points.append(coms)
    ax.plot([0], [0], [0], "s", color="k", ms=5)
    points = np.vstack(points)
    lo, hi = points.min(axis=0), points.max(axis=0)
    if reuse:
        limits = np.array([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
        lo, hi = np.minimum(lo, limits[:, 0]), np.maximum(hi, limits[:, 1])
    center = 0.5 * (lo + hi)
    half = max(0.5 * float(np.max(hi - lo)), 1e-3) * (1.0 if reuse else 1.1)
    ax.set_xlim(center[0] - half, center[0] + half)
    ax.set_ylim(center[1] - half, center[1] + half)
    ax.set_zlim(center[2] - half, center[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    return fig


def plot_summary(traj: Trajectory, fig: Figure | None = None,
                 model: Model | None = None) -> Figure:
    """One page for ``rbd simulate``: ``q(t)``, ``v(t)`` and the energies with their error.

    With ``model``, the curves are named after its joints, the axes carry
    units and ball and free joints are drawn as rotation vectors (as in
    :func:`plot_trajectory`).
    """
    fig = _new_figure(figsize=(9, 9), layout="constrained") if fig is None else fig
    ax_q, ax_v, ax_e, ax_d = fig.subplots(4, 1, sharex=True)
    q, v, q_labels, v_labels, q_axis, v_axis = _coordinates(traj, model)
    _lines(ax_q, traj.t, q, q_labels, q_axis, None)
    _lines(ax_v, traj.t, v, v_labels, v_axis, None)
    _energy_lines(ax_e, traj)
    ax_d.plot(traj.t, traj.energy_error, lw=1.0, color="C3")
    ax_d.set_ylabel("(E - E₀) / scale [1]")
    ax_d.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    ax_d.grid(True, alpha=0.3)
    ax_d.set_xlabel("t [s]")
    ax_q.set_title(f"{traj.model_name}: {traj.integrator}, dt = {traj.dt:g} s, "
                   f"relative energy drift {traj.energy_drift:.2e}")
    _mark_events(traj, (ax_q, ax_v, ax_e, ax_d))
    return fig


def plot_contacts(traj: Trajectory, fig: Figure | None = None) -> Figure:
    """The contacts of a contact run: their number (top) and the sum of their normal
    forces (bottom) over time, one line per rollout of a batch.

    The normal force of a contact is the first component of its force in its frame
    (:attr:`Trajectory.contact_force`, MuJoCo's ``mj_contactForce``); the sum is over the
    recorded contacts (the first :data:`rbd.simulation.contact.RECORDED_CONTACTS` of a
    sample).  A body at rest on the ground carries its weight there.

    Raises
    ------
    rbd.InputError
        If ``traj`` is not a contact run (no ``contact_count``).
    """
    from .errors import InputError

    if traj.contact_count is None or traj.contact_force is None:
        raise InputError("plot_contacts needs a contact run (rbd.simulate with "
                         "integrator='euler' on a model with contacts): this trajectory "
                         "has no contact_count")
    counts = np.asarray(traj.contact_count, dtype=float)
    normal = np.asarray(traj.contact_force)[..., 0].sum(axis=-1)
    fig = _new_figure(figsize=(7, 5), layout="constrained") if fig is None else fig
    ax_n, ax_f = fig.subplots(2, 1, sharex=True)
    rows = [(counts, normal)] if traj.batch is None else list(zip(counts, normal, strict=True))
    for k, (n, f) in enumerate(rows):
        label = None if traj.batch is None or k >= MAX_LABELLED else f"rollout {k}"
        ax_n.step(traj.t, n, where="post", lw=1.0, color=f"C{k % 10}", label=label)
        ax_f.plot(traj.t, f, lw=1.0, color=f"C{k % 10}")
    ax_n.set_ylabel("contacts")
    ax_f.set_ylabel("Σ normal force [N]")
    ax_f.set_xlabel("t [s]")
    for ax in (ax_n, ax_f):
        ax.grid(True, alpha=0.3)
    if traj.batch is not None:
        ax_n.legend(title=f"{min(len(rows), MAX_LABELLED)} of {len(rows)}", fontsize="small")
    ax_n.set_title(f"{traj.model_name}: contacts ({traj.integrator}, dt = {traj.dt:g} s)")
    return fig


# --- the compass-gait walker (SPW Figs. 10 and 11) -------------------------------------------
def _walker_steps(cycle, steps: int):
    """``cycle`` (default: the paper's gait) and ``steps`` sampled steps along it."""
    from . import walker

    cycle = walker.find_limit_cycle() if cycle is None else cycle
    return cycle, walker.walk(cycle.post_impact, steps, cycle.params, samples=300)


def plot_walker_phase_portrait(cycle=None, steps: int = 4, leg: str = "leg1",
                               ax: Axes | None = None) -> Figure:
    """SPW Fig. 10: one leg's angle from the vertical against its rate, over ``steps`` steps.

    The leg alternates between stance (lower branch) and swing (upper branch);
    dashed segments are the velocity jumps at heel strike.  ``cycle`` is a
    :class:`rbd.walker.LimitCycle` (default: :func:`rbd.walker.find_limit_cycle`).
    """
    from .walker import leg_angles, stance_leg

    fig, ax = _figure(ax, figsize=(6, 4.5))
    prev = None
    for k, s in enumerate(_walker_steps(cycle, steps)[1]):
        points = np.array([leg_angles(s.model, x[:2], x[2:])[leg] for x in s.x])
        role = "stance" if stance_leg(s.model) == leg else "swing"
        ax.plot(points[:, 0], points[:, 1], color="C0" if role == "stance" else "C1",
                label=role if k < 2 else None)
        if prev is not None:
            ax.plot([prev[0], points[0, 0]], [prev[1], points[0, 1]], "k--", lw=0.8,
                    label="heel strike" if k == 1 else None)
        prev = points[-1]
    ax.set_xlabel(rf"$\theta$ (rad), angle of {leg} from the vertical")
    ax.set_ylabel(r"$\dot\theta$ (rad/s)")
    ax.set_title("Compass gait: phase portrait of one leg")
    ax.legend()
    fig.tight_layout()
    return fig


#: The points marked on :func:`plot_walker_energy`, with what they mean (SPW Fig. 11).
WALKER_ENERGY_MARKS = (("A", "step begins, just after heel strike"),
                       ("B", "top of the stance arc (most potential energy)"),
                       ("C", "just before heel strike"))


def plot_walker_energy(cycle=None, steps: int = 2, ax: Axes | None = None) -> Figure:
    """SPW Fig. 11: potential against kinetic energy over ``steps`` steps.

    Each step climbs to the top of the stance arc (A → B), falls (B → C) along a
    line of constant total energy, and loses energy at heel strike (C → A'); the
    next step's points are primed.  The legend says what A, B and C are.
    """
    fig, ax = _figure(ax, figsize=(9, 4.5))
    for k, s in enumerate(_walker_steps(cycle, steps)[1]):
        T = algorithms.kinetic_energy(s.model, s.x[:, :2], s.x[:, 2:])
        U = algorithms.potential_energy(s.model, s.x[:, :2])
        ax.plot(T, U, color=f"C{k}", label=f"step {k + 1}")
        tag = "'" * k
        b = int(np.argmax(U))
        for i, name in ((0, "A"), (b, "B"), (-1, "C")):
            ax.annotate(name + tag, (T[i], U[i]), textcoords="offset points", xytext=(5, 5))
            ax.plot(T[i], U[i], "k.")
        T_next = algorithms.kinetic_energy(s.next_model, s.x_plus[:2], s.x_plus[2:])
        ax.plot([T[-1], T_next], [U[-1], U[-1]], "k--", lw=0.8,
                label="heel strike" if k == 0 else None)
    for letter, meaning in WALKER_ENERGY_MARKS:
        ax.plot([], [], ls="none", marker=f"${letter}$", color="k", ms=7, label=meaning)
    ax.set_xlabel("kinetic energy (J)")
    ax.set_ylabel("potential energy (J)")
    ax.set_title("Compass gait: potential against kinetic energy")
    ax.legend(title="A', B', C': the same on the next step", fontsize="small",
              title_fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return fig


def plot_basin(basin, ax: Axes | None = None) -> Figure:
    """Steps walked from each cell of a :class:`rbd.walker.Basin`, converged cells outlined."""
    fig, ax = _figure(ax, figsize=(6, 4.5))

    def edges(centres):                       # cell edges around the grid values
        half = (centres[-1] - centres[0]) / (2 * (len(centres) - 1)) if len(centres) > 1 else 0.5
        return [centres[0] - half, centres[-1] + half]

    extent = edges(basin.swing_rates) + edges(basin.stance_angles)
    image = ax.imshow(basin.steps_taken, origin="lower", extent=extent, aspect="auto",
                      cmap="viridis", vmin=0, vmax=basin.steps, interpolation="nearest")
    fig.colorbar(image, ax=ax, label="steps before falling")
    if basin.converged.any() and min(basin.converged.shape) > 1:
        ax.contour(basin.swing_rates, basin.stance_angles, basin.converged.astype(float),
                   levels=[0.5], colors="w")
    x = basin.cycle.post_impact
    ax.plot(x[3], x[0], "r*", ms=12, label="limit cycle")
    ax.set_xlabel(r"swing rate $\dot q_{sw}$ (rad/s)")
    ax.set_ylabel(r"stance angle $q_{st}$ (rad)")
    ax.set_title(f"Basin of attraction ({basin.steps} steps)")
    ax.legend(loc="upper right")
    fig.tight_layout()
    return fig


def plot_sparsity(model: Model, q=None, markersize: float = 1.5) -> Figure:
    """Non-zero pattern of Pai's system before and after each elimination.

    Three panels from :mod:`rbd.reference.block_elimination`: the augmented
    matrix of Pai Eq. (5) (children first); the block upper-triangular matrix
    left by the ABM elimination (the ``D_k`` pivots on the diagonal); the
    symmetric arrangement of Pai Eq. (7) after CRBM block-row elimination (the
    dense joint-space inertia in the corner).

    Parameters
    ----------
    model : Model
    q : (nq,) ndarray, optional
        Configuration (a random one by default, so no entry is zero by accident).
    markersize : float, optional
        Size of a non-zero's dot.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .reference import block_elimination as be

    if q is None:
        q = algorithms.random_configuration(model, np.random.default_rng(0))
    zero = np.zeros(model.nv)
    system = be.augmented_system(model, q, zero, zero)
    K = be.kkt_matrix(system)
    U, _ = be.eliminated_matrix(system, be.eliminate(system))
    C = be.crbm_eliminated_matrix(system)
    fig = _new_figure(figsize=(12, 4.2))
    axes = fig.subplots(1, 3)
    panels = [(K, f"Pai Eq. (5): {K.nnz} non-zeros"),
              (U, f"after ABM elimination: {U.nnz}"),
              (C, f"Eq. (7) after CRBM elimination: {C.nnz}")]
    for ax, (A, title) in zip(axes, panels, strict=True):
        ax.spy(A, markersize=markersize)
        ax.set_title(title, fontsize=10)
    fig.suptitle(f"{model.name}: {K.shape[0]} unknowns")
    fig.tight_layout(rect=(0, 0, 1, 0.93))   # room for the title above the panel titles
    return fig
