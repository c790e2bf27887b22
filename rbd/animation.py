"""3-D animations of a motion: an offline HTML page to turn and scrub, a GIF or MP4 for slides.

:func:`animate` writes a file; :func:`figure` returns the interactive
plotly figure itself (the last expression of a notebook cell displays it).

The HTML page is self-contained: plotly's JavaScript is embedded, so it plays
offline, from a file, without a server.  It holds a 3-D view (drag to turn,
scroll to zoom), a time slider and play/pause buttons.  Opening it as
``run.html#frame=K`` (or ``run.html?frame=K``) shows frame ``K`` first.

Shapes
------
A :class:`~rbd.model.Model` keeps no visual geometry (the URDF and MJCF
readers keep only the inertias), so every body is drawn from its kinematics
and its inertia:

* a **link**: line segments from the body's origin to the joint origins of its
  children and to the origins of the frames attached to it (or, with neither,
  to its centre of mass), and from the parent's origin to the body's own joint
  origin;
* its **inertia-equivalent box**: the uniform box with the body's mass and
  principal moments of inertia, centred at its centre of mass along its
  principal axes.  For principal moments :math:`I_1, I_2, I_3` of mass
  :math:`m`, :math:`I_1 = m (b^2 + c^2) / 12` and its two companions give the
  sides :math:`a^2 = 6 (I_2 + I_3 - I_1) / m` (and cyclically).  A slender rod
  becomes a thin box as long as the rod; a point mass (no inertia) is drawn as
  a dot.

The system's centre of mass (:func:`rbd.center_of_mass`) is marked, and
``trail=`` traces the path of a body's centre of mass or a frame's origin.
The view is turned so that gravity points down the screen's ``z``.

plotly (HTML) and pillow (GIF) come with the ``animate`` extra:
``pip install "rbd[animate]"``.  MP4 needs ``ffmpeg`` on the ``PATH``.
One rollout is animated at a time: for a batch ``traj.q`` of shape
``(N, T, nq)`` pass ``traj.q[k]`` with ``t=traj.t``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import algorithms
from .errors import InputError
from .model import Model
from .spatial import plux_parts

__all__ = ["animate", "figure", "embed", "Embedded", "walker_motion", "inertia_box", "Motion",
           "motion", "MAX_FRAMES", "SUFFIXES"]

#: At most this many frames are kept (the trajectory is subsampled evenly).
MAX_FRAMES = 200
#: The file types :func:`animate` writes.
SUFFIXES = (".html", ".gif", ".mp4")
#: Default frame counts: the HTML page (small file, smooth slider), a GIF or MP4.
HTML_FRAMES, MOVIE_FRAMES = 120, 80
#: Body colours, in body order (matched by name across the pieces of a motion).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
#: A length below this fraction of the scene's size is drawn as nothing (segments) or
#: as this thickness (the thin sides of a box).
THIN = 0.02

_BOX_CORNERS = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5)
                         for z in (-0.5, 0.5)])
# The 12 triangles of a box over the corners above (two per face).
_BOX_TRIANGLES = np.array([
    [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
    [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])


# --- the geometry of one motion ---------------------------------------------------------------
def inertia_box(mass: float, I_com) -> tuple[np.ndarray, np.ndarray]:
    r"""Sides and axes of the uniform box with this mass and rotational inertia.

    Parameters
    ----------
    mass : float
    I_com : (3, 3) array_like
        Rotational inertia about the centre of mass.

    Returns
    -------
    sides : (3,) ndarray
        :math:`a_k = \sqrt{6 (I_1 + I_2 + I_3 - 2 I_k) / m}` for the principal
        moments :math:`I_k` (from :math:`I_k = m (a_{k+1}^2 + a_{k+2}^2) / 12`);
        zero for a massless body.
    axes : (3, 3) ndarray
        The principal axes as columns (a rotation matrix).

    Examples
    --------
    A 2 kg rod of length 0.5 m along ``z``:

    >>> import numpy as np
    >>> sides, _ = inertia_box(2.0, np.diag([2 * 0.5**2 / 12, 2 * 0.5**2 / 12, 0.0]))
    >>> np.round(sides, 12)
    array([0. , 0. , 0.5])
    """
    moments, axes = np.linalg.eigh(0.5 * (np.asarray(I_com, float) + np.asarray(I_com, float).T))
    if np.linalg.det(axes) < 0:
        axes[:, 0] = -axes[:, 0]
    if mass <= 0:
        return np.zeros(3), axes
    squares = 6.0 * (moments.sum() - 2.0 * moments) / mass
    return np.sqrt(np.clip(squares, 0.0, None)), axes


def _up_rotation(gravity: np.ndarray) -> np.ndarray:
    """The rotation taking the direction of ``-gravity`` to ``+z`` (identity without gravity)."""
    g = np.asarray(gravity, dtype=float)
    norm = np.linalg.norm(g)
    if norm == 0:
        return np.eye(3)
    up, z = -g / norm, np.array([0.0, 0.0, 1.0])
    axis, c = np.cross(up, z), float(up @ z)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = axis / s
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * K + (1 - c) * K @ K          # Rodrigues


@dataclass
class Motion:
    """The world geometry of a motion at its frames (``F`` frames), ready to draw.

    Attributes
    ----------
    t : (F,) ndarray
        Time of each frame.
    body_names : list of str
        Every body that appears, in order of first appearance (sets its colour).
    segments : list of (L, 2, 3) ndarray
        The links at each frame (their number may change between pieces).
    origins : list of (nb, 3) ndarray
        Body origins (joint markers) at each frame.
    boxes : list of list of (int, (8, 3) ndarray)
        ``(body number, corners)`` of each inertia box at each frame.
    masses : list of (n, 3) ndarray
        Centres of mass of the bodies drawn as dots (point masses).
    com : (F, 3) ndarray
        The system's centre of mass.
    trail : (F, 3) ndarray or None
        The traced point.
    anchors : (n, 3) ndarray
        Fixed world points the roots hang from (drawn once).
    title : str
    """

    t: np.ndarray
    body_names: list[str]
    segments: list[np.ndarray]
    origins: list[np.ndarray]
    boxes: list[list[tuple[int, np.ndarray]]]
    masses: list[np.ndarray]
    com: np.ndarray
    trail: np.ndarray | None
    anchors: np.ndarray
    title: str

    def __len__(self) -> int:
        return len(self.t)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of a box holding every point of every frame."""
        parts = [self.com, self.anchors.reshape(-1, 3)]
        parts += [s.reshape(-1, 3) for s in self.segments] + list(self.origins)
        parts += [c for frame in self.boxes for _, c in frame] + list(self.masses)
        if self.trail is not None:
            parts.append(self.trail)
        points = np.vstack([p for p in parts if p.size])
        return points.min(axis=0), points.max(axis=0)


def _pieces(model, trajectory, t):
    """``[(model, q (T, nq), t (T,))]``: the motion's pieces, validated."""
    if isinstance(model, Model):
        models, trajectories = [model], [trajectory]
    else:
        models, trajectories = list(model), list(trajectory)
        if len(models) != len(trajectories) or not models:
            raise InputError(f"animate: model is a sequence of {len(models)} models, trajectory "
                             f"one of {len(trajectories)}; give one model per piece")
    pieces = []
    for k, (m, traj) in enumerate(zip(models, trajectories, strict=True)):
        if not isinstance(m, Model):
            raise InputError(f"animate: model must be an rbd.Model (or a sequence of them), "
                             f"got {type(m).__name__}")
        q = np.asarray(getattr(traj, "q", traj), dtype=float)
        where = "trajectory" if len(models) == 1 else f"trajectory piece {k}"
        if q.ndim == 3:
            raise InputError(f"animate: {where} is a batch of {q.shape[0]} rollouts; animate "
                             "one at a time: pass traj.q[k] with t=traj.t")
        if q.ndim != 2 or q.shape[1] != m.nq or len(q) == 0:
            raise InputError(f"animate: {where} must hold configurations of shape (T, nq) = "
                             f"(T, {m.nq}) with T >= 1, got shape {q.shape}")
        if not np.all(np.isfinite(q)):
            raise InputError(f"animate: {where} holds non-finite configurations; animate "
                             "the finite part (the simulation may have diverged)")
        times = getattr(traj, "t", None)
        pieces.append((m, q, None if times is None else np.asarray(times, dtype=float)))
    return _times(pieces, t)


def _times(pieces, t):
    """Each piece with its sample times: its own, else from ``t``, else 0, 1, 2, ..."""
    total = sum(len(q) for _, q, _ in pieces)
    if t is not None:
        t = np.asarray(t, dtype=float).ravel()
        if len(t) != total or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
            raise InputError(f"animate: t must hold {total} finite non-decreasing times (one "
                             f"per configuration), got {len(t)}")
    out, start = [], 0
    for m, q, times in pieces:
        if t is not None:
            times = t[start:start + len(q)]
        elif times is None:
            times = float(start) + np.arange(len(q), dtype=float)
        out.append((m, q, times))
        start += len(q)
    return out


def _choose(pieces, frames: int):
    """At most ``frames`` samples spread evenly over all pieces: ``[(model, q, t)]`` kept."""
    total = sum(len(q) for _, q, _ in pieces)
    keep = np.unique(np.linspace(0, total - 1, min(frames, total)).round().astype(int))
    out, start = [], 0
    for m, q, times in pieces:
        mine = keep[(keep >= start) & (keep < start + len(q))] - start
        if len(mine):
            out.append((m, q[mine], times[mine]))
        start += len(q)
    return out


def _trail_point(model: Model, trail: str):
    """``(body, point in body coordinates)`` traced by ``trail``."""
    if trail in model.body_names:
        i = model.body_index(trail)
        return i, np.asarray(model.bodies[i].com, dtype=float)
    if trail in model.frames:
        frame = model.frames[trail]
        return frame.body, plux_parts(frame.X)[1]
    raise InputError(f"animate: trail={trail!r} is neither a body nor a frame of "
                     f"{model.name!r}; bodies: {', '.join(model.body_names)}")


def _link_ends(model: Model, i: int) -> list[np.ndarray]:
    """Points of body ``i`` (body coordinates) its link is drawn to from its origin."""
    ends = [plux_parts(model.bodies[c].X_tree)[1] for c in model.children[i]]
    ends += [r for f in model.frames.values() if f.body == i
             and np.any((r := plux_parts(f.X)[1]) != 0)]
    if not ends:
        ends.append(np.asarray(model.bodies[i].com, dtype=float))
    return ends


def _piece_geometry(model: Model, q: np.ndarray, R: np.ndarray, index: dict, trail):
    """Per-frame geometry of one piece, in the viewing frame (rotation ``R``).

    The boxes are left as ``(colour, body, sides, axes, centre)`` in body
    coordinates with the body poses ``rot``, ``pos``: their thin sides are
    thickened once the size of the whole scene is known (:func:`_place_boxes`).
    """
    T = algorithms.forward_kinematics(model, q).reshape(len(q), model.nbodies, 4, 4)
    rot, pos = T[..., :3, :3], T[..., :3, 3]
    to_world = lambda i, r: np.einsum("fij,j->fi", rot[:, i], r) + pos[:, i]  # noqa: E731
    segments, anchors = [], []
    for i, body in enumerate(model.bodies):
        for r in _link_ends(model, i):
            segments.append(np.stack([pos[:, i], to_world(i, r)], axis=1))
        joint_origin = plux_parts(body.X_tree)[1]
        if body.parent < 0:
            anchors.append(joint_origin)
            if body.joint.kind not in ("free", "planar"):
                segments.append(np.stack([np.broadcast_to(joint_origin, pos[:, i].shape),
                                          pos[:, i]], axis=1))
        else:
            segments.append(np.stack([to_world(body.parent, joint_origin), pos[:, i]], axis=1))
    boxes, dots = [], []
    for i, body in enumerate(model.bodies):
        sides, axes = inertia_box(body.mass, body.I_com)
        if sides.max() > 0:
            boxes.append((index[body.name], i, sides, axes, np.asarray(body.com, float)))
        elif body.mass > 0:
            dots.append(i)
    coms = algorithms.body_centers_of_mass(model, q).reshape(len(q), model.nbodies, 3)
    com = algorithms.center_of_mass(model, q).reshape(len(q), 3)
    traced = None
    if trail is not None:
        b, r = _trail_point(model, trail)
        traced = to_world(b, r) @ R.T
    return dict(segments=np.stack(segments, axis=1) @ R.T, origins=pos @ R.T,
                masses=coms[:, dots] @ R.T, com=com @ R.T, trail=traced,
                anchors=np.array(anchors).reshape(-1, 3) @ R.T,
                box_specs=boxes, rot=R @ rot, pos=pos @ R.T)


def _place_boxes(part: dict, thin: float) -> list[list[tuple[int, np.ndarray]]]:
    """Corners of a piece's boxes at each frame, sides at least ``thin``."""
    frames = []
    for f in range(len(part["pos"])):
        frame = []
        for k, i, sides, axes, centre in part["box_specs"]:
            local = centre + (_BOX_CORNERS * np.maximum(sides, thin)) @ axes.T
            frame.append((k, local @ part["rot"][f, i].T + part["pos"][f, i]))
        frames.append(frame)
    return frames


def motion(model, trajectory, *, t=None, frames: int = HTML_FRAMES, trail: str | None = None,
           title: str | None = None) -> Motion:
    """The world geometry of ``trajectory`` at (at most) ``frames`` evenly spread samples.

    Parameters are those of :func:`figure`.
    """
    frames = int(frames)
    if not 1 <= frames <= MAX_FRAMES:
        raise InputError(f"animate: frames must be between 1 and {MAX_FRAMES}, got {frames}")
    pieces = _choose(_pieces(model, trajectory, t), frames)
    first = pieces[0][0]
    R = _up_rotation(first.gravity)
    names: list[str] = []
    for m, _, _ in pieces:
        names += [n for n in m.body_names if n not in names]
    index = {n: k for k, n in enumerate(names)}
    parts = [_piece_geometry(m, q, R, index, trail) for m, q, _ in pieces]
    result = Motion(
        t=np.concatenate([times for _, _, times in pieces]), body_names=names,
        segments=[s for p in parts for s in p["segments"]],
        origins=[o for p in parts for o in p["origins"]],
        boxes=[[] for p in parts for _ in p["pos"]],
        masses=[d for p in parts for d in p["masses"]],
        com=np.vstack([p["com"] for p in parts]),
        trail=None if trail is None else np.vstack([p["trail"] for p in parts]),
        anchors=np.unique(np.vstack([p["anchors"] for p in parts]).round(12), axis=0),
        title=title if title is not None else first.name)
    lo, hi = result.bounds()
    size = max(float(np.max(hi - lo)), 1e-9)
    result.boxes = [b for p in parts for b in _place_boxes(p, THIN * size)]
    result.segments = [s[np.linalg.norm(s[:, 1] - s[:, 0], axis=1) > 1e-9 * size]
                       for s in result.segments]
    return result


# --- the interactive figure (plotly) ----------------------------------------------------------
def _plotly():
    try:
        import plotly.graph_objects as go
    except ImportError:
        raise ImportError("rbd.animate needs plotly for HTML animations and figures: "
                          'pip install "rbd[animate]" (or pip install plotly)') from None
    return go


def _polyline(segments: np.ndarray) -> tuple[list, list, list]:
    """x, y, z of disjoint segments as one line broken by gaps (None)."""
    xyz: list[list] = [[], [], []]
    for a, b in segments:
        for k in range(3):
            xyz[k] += [float(a[k]), float(b[k]), None]
    return xyz[0], xyz[1], xyz[2]


def _digits(m: Motion) -> int:
    """Decimals that keep coordinates to 1e-5 of the scene's size (a smaller file)."""
    lo, hi = m.bounds()
    return int(5 - np.floor(np.log10(max(float(np.max(hi - lo)), 1e-9))))


def _mesh(boxes, point: np.ndarray) -> dict:
    """One mesh of every box of a frame: vertices, triangles and a colour per triangle.

    Without boxes, one triangle of zero area at ``point`` (plotly cannot draw an
    empty mesh).
    """
    if not boxes:
        x, y, z = ([float(point[k])] * 3 for k in range(3))
        return dict(x=x, y=y, z=z, i=[0], j=[1], k=[2], facecolor=["rgba(0,0,0,0)"])
    corners = np.vstack([c for _, c in boxes])
    tri = np.vstack([_BOX_TRIANGLES + 8 * n for n in range(len(boxes))])
    colors = [PALETTE[k % len(PALETTE)] for k, _ in boxes for _ in range(12)]
    return dict(x=corners[:, 0], y=corners[:, 1], z=corners[:, 2], i=tri[:, 0], j=tri[:, 1],
                k=tri[:, 2], facecolor=colors)


def _frame_traces(go, m: Motion, f: int, digits: int) -> list:
    """The moving traces at frame ``f`` (same order in every frame)."""
    x, y, z = _polyline(m.segments[f].round(digits))
    o, c, d = (a.round(digits) for a in (m.origins[f], m.com[f], m.masses[f]))
    trail = m.trail[: f + 1].round(digits) if m.trail is not None else np.zeros((0, 3))
    boxes = [(k, corners.round(digits)) for k, corners in m.boxes[f]]
    return [
        go.Scatter3d(x=x, y=y, z=z, mode="lines", line=dict(color="#333333", width=6),
                     name="links", hoverinfo="skip"),
        go.Mesh3d(**_mesh(boxes, c), opacity=0.55, flatshading=True,
                  name="inertia boxes", showlegend=any(m.boxes), hoverinfo="skip"),
        go.Scatter3d(x=o[:, 0], y=o[:, 1], z=o[:, 2], mode="markers", name="joints",
                     marker=dict(size=4, color="#333333")),
        go.Scatter3d(x=d[:, 0], y=d[:, 1], z=d[:, 2], mode="markers", name="point masses",
                     marker=dict(size=7, color="#1f77b4", line=dict(color="black", width=1))),
        go.Scatter3d(x=[c[0]], y=[c[1]], z=[c[2]], mode="markers", name="centre of mass",
                     marker=dict(size=6, color="#d62728", symbol="diamond")),
        go.Scatter3d(x=trail[:, 0], y=trail[:, 1], z=trail[:, 2], mode="lines", name="trail",
                     line=dict(color="#2ca02c", width=3), visible=m.trail is not None),
    ]


def _flat_axis(m: Motion) -> int | None:
    """The axis along which the motion is thin (a planar motion is best seen along it)."""
    lo, hi = m.bounds()
    extent = hi - lo
    k = int(np.argmin(extent))
    return k if extent[k] < 0.3 * extent.max() else None


def _camera(m: Motion) -> dict:
    """plotly camera: across the plane of a planar motion, else from the front right."""
    k = _flat_axis(m)
    eye = np.array([1.4, -1.6, 0.6]) if k is None or k == 2 else np.array([0.25, 0.25, 0.3])
    if k is not None and k != 2:
        eye[k] = -2.2
    return dict(eye=dict(x=float(eye[0]), y=float(eye[1]), z=float(eye[2])))


def _scene(m: Motion) -> dict:
    lo, hi = m.bounds()
    centre, half = 0.5 * (lo + hi), 0.55 * (hi - lo)
    half = np.maximum(half, 0.15 * max(float(half.max()), 1e-9))   # a flat motion's thin axis
    ratio = half / half.max()
    axes = {f"{a}axis": dict(range=[float(centre[k] - half[k]), float(centre[k] + half[k])],
                             title=f"{a} [m]", autorange=False)
            for k, a in enumerate("xyz")}
    return dict(**axes, aspectmode="manual",
                aspectratio=dict(x=float(ratio[0]), y=float(ratio[1]), z=float(ratio[2])))


def _controls(m: Motion, speed: float) -> tuple[list, list]:
    """The play/pause buttons and the time slider."""
    span = float(m.t[-1] - m.t[0]) if len(m) > 1 else 0.0
    step_ms = max(20, int(1000 * span / max(len(m) - 1, 1) / speed)) if span > 0 else 100
    still = dict(mode="immediate", frame=dict(duration=0, redraw=True),
                 transition=dict(duration=0))
    buttons = [dict(label="▶ play", method="animate",
                    args=[None, dict(frame=dict(duration=step_ms, redraw=True),
                                     transition=dict(duration=0), fromcurrent=True)]),
               dict(label="❚❚ pause", method="animate", args=[[None], still])]
    menus = [dict(type="buttons", direction="left", x=0.0, y=0.0, xanchor="left",
                  yanchor="top", pad=dict(t=40, r=10), showactive=False, buttons=buttons)]
    steps = [dict(method="animate", label=f"{t:.2f}", args=[[str(f)], still])
             for f, t in enumerate(m.t)]
    sliders = [dict(active=0, steps=steps, x=0.22, len=0.78, y=0.0, yanchor="top",
                    ticklen=0, minorticklen=0, font=dict(color="rgba(0,0,0,0)"),
                    pad=dict(t=30), currentvalue=dict(prefix="t = ", suffix=" s"))]
    return menus, sliders


def figure(model, trajectory, *, t=None, frames: int = HTML_FRAMES, trail: str | None = None,
           title: str | None = None, speed: float = 1.0, height: int = 600):
    """The animation as an interactive plotly figure (3-D view, time slider, play/pause).

    Parameters
    ----------
    model : Model or sequence of Model
        The model, or one model per piece of a motion in pieces (such as the
        walker's steps, whose model changes at each heel strike; bodies are
        matched by name).
    trajectory : Trajectory, (T, nq) array_like, or a sequence of them
        The configurations (``traj.q``) and, for a :class:`Trajectory`, their
        times.
    t : (T,) array_like, optional
        Times of the configurations when ``trajectory`` holds none (all the
        pieces' samples, in order); frame numbers otherwise.
    frames : int
        Largest number of frames (at most :data:`MAX_FRAMES`); the samples are
        thinned evenly.
    trail : str, optional
        Trace the path of this body's centre of mass, or of this frame's origin.
    title : str, optional
        The model's name by default.
    speed : float
        Play-back speed relative to real time.
    height : int
        Figure height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    go = _plotly()
    if not np.isfinite(speed) or speed <= 0:
        raise InputError(f"animate: speed must be a positive number, got {speed}")
    m = motion(model, trajectory, t=t, frames=frames, trail=trail, title=title)
    menus, sliders = _controls(m, speed)
    digits = _digits(m)
    fig = go.Figure(data=_frame_traces(go, m, 0, digits),
                    frames=[go.Frame(data=_frame_traces(go, m, f, digits), name=str(f),
                                     traces=list(range(6))) for f in range(len(m))])
    anchors = m.anchors
    fig.add_trace(go.Scatter3d(x=anchors[:, 0], y=anchors[:, 1], z=anchors[:, 2],
                               mode="markers", name="fixed joints",
                               marker=dict(size=5, color="black", symbol="square")))
    fig.update_layout(title=m.title, scene=_scene(m), updatemenus=menus, sliders=sliders,
                      height=height, margin=dict(l=0, r=0, t=40, b=80), uirevision="view",
                      legend=dict(x=1.0, xanchor="right", y=0.95),
                      scene_camera=_camera(m))
    return fig


class Embedded:
    """A plotly figure shown in a notebook or a documentation page as self-contained HTML.

    ``_repr_html_`` embeds plotly's JavaScript and no MathJax, so a page built
    from the notebook (Sphinx, myst-nb) shows the figure offline.
    """

    def __init__(self, fig):
        self.figure = fig

    def _repr_html_(self) -> str:
        return self.figure.to_html(include_plotlyjs=True, full_html=False,
                                   include_mathjax=False, auto_play=False)


def embed(fig) -> Embedded:
    """``fig`` (from :func:`figure`) as a self-contained HTML cell output (:class:`Embedded`)."""
    return Embedded(fig)


# The page reads ``#frame=K`` or ``?frame=K`` and shows frame K; it then marks the plot
# element with ``data-rbd-frame`` (plotly fills ``{plot_id}``).
_INITIAL_FRAME_SCRIPT = """
(function () {
  var gd = document.getElementById('{plot_id}');
  var match = /[#?&]frame=(\\d+)/.exec(window.location.hash + window.location.search);
  var frames = (gd._transitionData || {})._frames || [];
  if (!match || !frames.length) { gd.setAttribute('data-rbd-frame', '0'); return; }
  var k = Math.min(parseInt(match[1], 10), frames.length - 1);
  Plotly.animate(gd, [String(k)], {mode: 'immediate', frame: {duration: 0, redraw: true},
                                   transition: {duration: 0}})
    .then(function () { return Plotly.relayout(gd, {'sliders[0].active': k}); })
    .then(function () { gd.setAttribute('data-rbd-frame', String(k)); });
})();
"""


# --- movies (matplotlib) ----------------------------------------------------------------------
def _movie_axes(m: Motion, size: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(size, size), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    lo, hi = m.bounds()
    centre, half = 0.5 * (lo + hi), 0.55 * max(float(np.max(hi - lo)), 1e-3)
    for k, (setter, label) in enumerate(((ax.set_xlim, "x [m]"), (ax.set_ylim, "y [m]"),
                                         (ax.set_zlim, "z [m]"))):
        setter(centre[k] - half, centre[k] + half)
        (ax.set_xlabel, ax.set_ylabel, ax.set_zlabel)[k](label)
    ax.set_box_aspect((1, 1, 1))
    flat = _flat_axis(m)
    ax.view_init(elev=10 if flat in (0, 1) else 20, azim={0: -180, 1: -90}.get(flat, -60))
    return fig, ax


def _write_movie(m: Motion, out: Path, fps: float, size: float, dpi: int) -> None:
    from matplotlib import animation as mpl_animation
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    fig, ax = _movie_axes(m, size)
    links = Line3DCollection(list(m.segments[0]) or [np.zeros((2, 3))], colors="#333333",
                             linewidths=2.5)
    boxes = Poly3DCollection([c[tri] for _, c in m.boxes[0] for tri in _BOX_TRIANGLES]
                             or [np.zeros((3, 3))], alpha=0.5, edgecolors="0.3", linewidths=0.3)
    ax.add_collection3d(links)
    ax.add_collection3d(boxes)
    if len(m.anchors):
        ax.plot(*m.anchors.T, "s", color="k", ms=5)
    joints, = ax.plot([], [], [], "o", color="#333333", ms=3)
    dots, = ax.plot([], [], [], "o", color=PALETTE[0], mec="k", ms=7)
    com, = ax.plot([], [], [], "D", color="#d62728", ms=6, label="centre of mass")
    trail, = ax.plot([], [], [], "-", color="#2ca02c", lw=1.5)
    ax.legend(loc="upper left", fontsize="small")
    title = ax.set_title("", fontsize="small")
    if out.suffix.lower() == ".gif":
        writer = mpl_animation.PillowWriter(fps=fps)
    else:
        writer = mpl_animation.FFMpegWriter(fps=fps, codec="h264", extra_args=["-pix_fmt",
                                                                              "yuv420p"])
    with writer.saving(fig, str(out), dpi):
        for f in range(len(m)):
            links.set_segments(list(m.segments[f]))
            faces = [c[tri] for _, c in m.boxes[f] for tri in _BOX_TRIANGLES]
            boxes.set_verts(faces)
            boxes.set_facecolor([PALETTE[k % len(PALETTE)] for k, _ in m.boxes[f]
                                 for _ in range(12)])
            joints.set_data_3d(*m.origins[f].T)
            dots.set_data_3d(*m.masses[f].T)
            com.set_data_3d(*m.com[f:f + 1].T)
            if m.trail is not None:
                trail.set_data_3d(*m.trail[:f + 1].T)
            title.set_text(f"{m.title}   t = {m.t[f]:.2f} s")
            writer.grab_frame()


# --- the file ---------------------------------------------------------------------------------
def check_output(out: str | os.PathLike) -> Path:
    """The output path of an animation, refused before any work if it cannot be written.

    The suffix must be one of :data:`SUFFIXES`, its tool must be installed
    (plotly for ``.html``, pillow for ``.gif``, ``ffmpeg`` for ``.mp4``) and the
    directory must exist.
    """
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"animate: out={str(out)!r}: write a {', '.join(SUFFIXES)} file "
                         "(the suffix picks the format)")
    if not path.parent.resolve().is_dir():
        raise InputError(f"animate: out={str(out)!r}: the directory {str(path.parent)!r} "
                         "does not exist; create it first")
    if path.is_dir():
        raise InputError(f"animate: out={str(out)!r} is a directory; give a file name")
    if suffix == ".html":
        _plotly()
    elif suffix == ".gif":
        try:
            import PIL  # noqa: F401
        except ImportError:
            raise ImportError('rbd.animate needs pillow to write a GIF: pip install '
                              '"rbd[animate]" (or pip install pillow)') from None
    elif shutil.which("ffmpeg") is None:
        raise InputError(f"animate: out={str(out)!r}: an MP4 file needs ffmpeg on the PATH, "
                         "which was not found; install ffmpeg or write a .gif")
    return path


def animate(model, trajectory, out: str | os.PathLike, *, t=None, frames: int | None = None,
            trail: str | None = None, title: str | None = None, speed: float = 1.0,
            fps: float = 20.0, size: float = 5.0, dpi: int = 80) -> Path:
    """Write an animation of ``trajectory``: offline HTML, GIF or MP4 (by the suffix of ``out``).

    Parameters
    ----------
    model, trajectory, t, trail, title, speed
        As for :func:`figure`.
    out : str or path-like
        ``*.html``: a self-contained page (plotly's JavaScript embedded; opens
        offline) with a 3-D view, a time slider and play/pause; ``run.html#frame=K``
        opens at frame ``K``.  ``*.gif`` (pillow) or ``*.mp4`` (``ffmpeg``) for
        slides.
    frames : int, optional
        Largest number of frames, at most :data:`MAX_FRAMES` (default
        :data:`HTML_FRAMES` for HTML, :data:`MOVIE_FRAMES` for a movie).
    fps : float
        Frames per second of a GIF or MP4.
    size, dpi : float, int
        Width and height of a GIF or MP4 in inches, and its dots per inch.

    Returns
    -------
    Path
        The file written.

    Examples
    --------
    >>> import rbd, tempfile, os
    >>> model = rbd.models.double_pendulum()
    >>> traj = rbd.simulate(model, [1.0, 0.5], [0.0, 0.0], 1.0, 0.01)
    >>> out = rbd.animate(model, traj, os.path.join(tempfile.mkdtemp(), "swing.html"))
    >>> out.stat().st_size > 1_000_000         # plotly's JavaScript is in the file
    True
    """
    path = check_output(out)
    html = path.suffix.lower() == ".html"
    frames = (HTML_FRAMES if html else MOVIE_FRAMES) if frames is None else frames
    if html:
        fig = figure(model, trajectory, t=t, frames=frames, trail=trail, title=title,
                     speed=speed)
        fig.write_html(str(path), include_plotlyjs=True, full_html=True, auto_play=False,
                       post_script=_INITIAL_FRAME_SCRIPT, config=dict(displaylogo=False))
        return path
    if not np.isfinite(fps) or fps <= 0:
        raise InputError(f"animate: fps must be a positive number, got {fps}")
    _write_movie(motion(model, trajectory, t=t, frames=frames, trail=trail, title=title),
                 path, fps, size, dpi)
    return path


# --- the walker ---------------------------------------------------------------------------------
def walker_motion(cycle=None, steps: int = 4, samples: int = 30):
    """The compass-gait walker's steps as pieces for :func:`animate` or :func:`figure`.

    Parameters
    ----------
    cycle : rbd.walker.LimitCycle, optional
        The gait to start on (default :func:`rbd.walker.find_limit_cycle`).
    steps : int
        Steps to walk (each swing phase runs through :func:`rbd.simulate`).
    samples : int
        Samples of each swing phase.

    Returns
    -------
    models : list of Model
        The model of each step (the stance leg at the root, its foot where it
        landed).
    q : list of (samples, 2) ndarray
        The configurations of each step.
    t : (steps * samples,) ndarray
        Their times, continuing from step to step.

    Examples
    --------
    >>> models, q, t = walker_motion(steps=2, samples=5)    # doctest: +SKIP
    >>> rbd.animate(models, q, "walk.gif", t=t, trail="hip")  # doctest: +SKIP
    """
    from . import walker

    cycle = walker.find_limit_cycle() if cycle is None else cycle
    taken = walker.walk(cycle.post_impact, int(steps), cycle.params, samples=int(samples))
    if not taken:
        raise InputError("walker_motion: the walker fell before its first heel strike")
    models = [s.model for s in taken]
    q = [s.x[:, :2] for s in taken]
    starts = np.concatenate([[0.0], np.cumsum([s.duration for s in taken])[:-1]])
    return models, q, np.concatenate([start + s.t for start, s in zip(starts, taken,
                                                                        strict=True)])
