"""The world geometry of a motion, ready to draw: links, inertia-equivalent boxes, trails.

:func:`motion` turns a trajectory (or a motion in pieces, one model per piece)
into the points of every frame, in a viewing frame turned so that gravity
points down its ``z`` (the notes of :mod:`rbd.animation` describe the
shapes).  The HTML page and the movies only draw what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import algorithms
from ..errors import InputError
from ..model import Model
from ..spatial import plux_parts
from ._shapes import _BOX_CORNERS, body_surfaces, floor_patch, select_geoms

#: At most this many frames are kept (the trajectory is subsampled evenly).
MAX_FRAMES = 200
#: Default frame counts: the HTML page (small file, smooth slider), a GIF or MP4.
HTML_FRAMES, MOVIE_FRAMES = 120, 80
#: Largest number of mesh triangles drawn by the HTML page and by a movie.
HTML_TRIANGLES, MOVIE_TRIANGLES = 6000, 2500
#: What :func:`motion` draws of a model: its visual or collision geoms, or its inertia boxes.
GEOMETRIES = ("visual", "collision", "inertia")
#: Body colours, in body order (matched by name across the pieces of a motion).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
#: A length below this fraction of the scene's size is drawn as nothing (segments) or
#: as this thickness (the thin sides of a box).
THIN = 0.02

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
    surfaces : list of (V, 3) ndarray
        The vertices of the drawn geoms at each frame (empty without geoms).
    surface_triangles, surface_colours : list of (n, 3) int ndarray, list of (n, 4) ndarray
        Their triangles and RGBA colours at each frame.
    floor : list of (vertices, triangles, colours), or None
        The checker patch of the floor at each frame.
    target : (F, 3) ndarray or None
        The point the camera looks at in each frame (the followed body's
        origin), with ``view_half`` the half side of the cube it shows; None
        to frame the whole motion.
    followed : str or None
        The name of the followed body.
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
    surfaces: list[np.ndarray] = field(default_factory=list)
    surface_triangles: list[np.ndarray] = field(default_factory=list)
    surface_colours: list[np.ndarray] = field(default_factory=list)
    floor: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
    target: np.ndarray | None = None
    view_half: float | None = None
    followed: str | None = None

    def __len__(self) -> int:
        return len(self.t)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of a box holding every point of every frame."""
        parts = [self.com, self.anchors.reshape(-1, 3)]
        parts += [s.reshape(-1, 3) for s in self.segments] + list(self.origins)
        parts += [c for frame in self.boxes for _, c in frame] + list(self.masses)
        parts += list(self.surfaces)
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


def _piece_geometry(model: Model, q: np.ndarray, R: np.ndarray, index: dict, trail,
                    surfaces=None):
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
            if body.joint.kind != "free":           # a free root hangs from nothing
                anchors.append(joint_origin)
            if body.joint.kind not in ("free", "planar"):
                segments.append(np.stack([np.broadcast_to(joint_origin, pos[:, i].shape),
                                          pos[:, i]], axis=1))
        else:
            segments.append(np.stack([to_world(body.parent, joint_origin), pos[:, i]], axis=1))
    boxes, dots = [], []
    for i, body in enumerate(model.bodies):
        sides, axes = inertia_box(body.mass, body.I_com)
        if surfaces is not None:
            continue                              # the geoms are drawn instead
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
    drawn = _place_surfaces(surfaces or [], rot, pos, R)
    return dict(segments=np.stack(segments, axis=1) @ R.T, origins=pos @ R.T, **drawn,
                masses=coms[:, dots] @ R.T, com=com @ R.T, trail=traced,
                anchors=np.array(anchors).reshape(-1, 3) @ R.T,
                box_specs=boxes, rot=R @ rot, pos=pos @ R.T)


def _place_surfaces(surfaces, rot, pos, R) -> dict:
    """World (viewing-frame) vertices of the geom surfaces at every frame, their triangles."""
    F = len(pos)
    if not surfaces:
        return dict(surfaces=np.zeros((F, 0, 3)), tri=np.zeros((0, 3), int),
                    colours=np.zeros((0, 4)))
    placed, triangles, colours, start = [], [], [], 0
    for body, v, tri, rgba in surfaces:
        if body < 0:
            placed.append(np.broadcast_to(v, (F, *v.shape)))
        else:
            placed.append(np.einsum("fij,vj->fvi", rot[:, body], v) + pos[:, body, None])
        triangles.append(tri + start)
        colours.append(np.broadcast_to(rgba, (len(tri), 4)))
        start += len(v)
    return dict(surfaces=np.concatenate(placed, axis=1) @ R.T, tri=np.vstack(triangles),
                colours=np.vstack(colours))


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


def check_frames(frames) -> int:
    """``frames`` as an int from 1 to :data:`MAX_FRAMES`; :class:`~rbd.InputError` if not."""
    if (isinstance(frames, (bool, np.bool_)) or not isinstance(frames, (int, np.integer))
            or not 1 <= frames <= MAX_FRAMES):
        raise InputError(f"animate: frames must be an integer from 1 to {MAX_FRAMES}, "
                         f"got {frames!r}")
    return int(frames)


def check_choices(geometry, follow, floor) -> None:
    """``geometry``, ``follow`` and ``floor`` of :func:`motion`; :class:`~rbd.InputError` if bad."""
    if geometry not in GEOMETRIES:
        raise InputError(f"animate: geometry must be one of {', '.join(map(repr, GEOMETRIES))}, "
                         f"got {geometry!r}")
    if not (follow is None or isinstance(follow, (str, bool))):
        raise InputError(f"animate: follow must be a body name, True, False or None, got "
                         f"{follow!r}")
    if not (floor is None or isinstance(floor, bool)):
        ground_plane(floor)


def ground_plane(floor) -> tuple[np.ndarray, np.ndarray]:
    """``floor=(point, normal)``: a point of the ground and its unit normal (world coordinates)."""
    try:
        point, normal = (np.asarray(a, dtype=float) for a in floor)
    except (TypeError, ValueError):
        point = normal = None
    if (point is None or point.shape != (3,) or normal.shape != (3,)
            or not np.all(np.isfinite([point, normal])) or not np.any(normal)):
        raise InputError(f"animate: floor must be True, False, None or (point, normal) with "
                         f"two 3-vectors (normal not zero), got {floor!r}")
    return point, normal / np.linalg.norm(normal)


def _followed(model: Model, follow) -> str | None:
    """The body the camera follows: ``follow`` by name, or the root of a floating base."""
    if isinstance(follow, str):
        if follow not in model.body_names:
            raise InputError(f"animate: follow={follow!r} is not a body of {model.name!r}; "
                             f"bodies: {', '.join(model.body_names)}")
        return follow
    if follow is False:
        return None
    roots = [b for b in model.bodies if b.parent < 0 and b.joint.kind == "free"]
    return roots[0].name if roots else None


def _floor_plane(model: Model, R: np.ndarray, floor, lowest: float):
    """``(origin, axes)`` of the floor in the viewing frame, or None (see :func:`motion`)."""
    if floor is False:
        return None
    if floor is not None and floor is not True:
        point, normal = ground_plane(floor)
        n = R @ normal
        u = R @ np.array([1.0, 0.0, 0.0]) if abs(n @ R[:, 0]) < 0.9 else R[:, 1]
        u = u - (u @ n) * n
        u /= np.linalg.norm(u)
        return R @ point, np.column_stack([u, np.cross(n, u), n])
    planes = [g for g in model.geoms if g.kind == "plane" and g.body is None]
    if planes:
        return R @ planes[0].pose[:3, 3], R @ planes[0].pose[:3, :3]
    floating = any(b.parent < 0 and b.joint.kind == "free" for b in model.bodies)
    if floor or floating:
        return np.array([0.0, 0.0, min(0.0, lowest)]), np.eye(3)
    return None


def motion(model, trajectory, *, t=None, frames: int = HTML_FRAMES, trail: str | None = None,
           title: str | None = None, geometry: str = "visual", follow=None, floor=None,
           triangles: int = HTML_TRIANGLES) -> Motion:
    """The world geometry of ``trajectory`` at (at most) ``frames`` evenly spread samples.

    Parameters are those of :func:`figure`; ``triangles`` bounds the number of
    mesh triangles drawn (meshes above it are simplified).
    """
    frames = check_frames(frames)
    check_choices(geometry, follow, floor)
    pieces = _choose(_pieces(model, trajectory, t), frames)
    first = pieces[0][0]
    R = _up_rotation(first.gravity)
    followed = _followed(first, follow)
    names: list[str] = []
    for m, _, _ in pieces:
        names += [n for n in m.body_names if n not in names]
    index = {n: k for k, n in enumerate(names)}
    drawn = None if geometry == "inertia" else select_geoms(first, geometry)
    shapes = {}
    if drawn and any(g.kind != "plane" for g in drawn):
        for m, _, _ in pieces:
            if id(m) not in shapes:
                shapes[id(m)] = body_surfaces(m, select_geoms(m, geometry), triangles) or None
    parts = [_piece_geometry(m, q, R, index, trail, shapes.get(id(m))) for m, q, _ in pieces]
    result = Motion(
        t=np.concatenate([times for _, _, times in pieces]), body_names=names,
        segments=[s for p in parts for s in p["segments"]],
        origins=[o for p in parts for o in p["origins"]],
        boxes=[[] for p in parts for _ in p["pos"]],
        masses=[d for p in parts for d in p["masses"]],
        com=np.vstack([p["com"] for p in parts]),
        trail=None if trail is None else np.vstack([p["trail"] for p in parts]),
        anchors=np.unique(np.vstack([p["anchors"] for p in parts]).round(12), axis=0),
        title=title if title is not None else first.name,
        surfaces=[v for p in parts for v in p["surfaces"]],
        surface_triangles=[p["tri"] for p in parts for _ in p["pos"]],
        surface_colours=[p["colours"] for p in parts for _ in p["pos"]])
    lo, hi = result.bounds()
    size = max(float(np.max(hi - lo)), 1e-9)
    result.boxes = [b for p in parts for b in _place_boxes(p, THIN * size)]
    result.segments = [s[np.linalg.norm(s[:, 1] - s[:, 0], axis=1) > 1e-9 * size]
                       for s in result.segments]
    _frame_camera(result, pieces, parts, followed, index)
    plane = _floor_plane(first, R, floor, float(result.bounds()[0][2]))   # under everything
    if plane is not None:
        result.floor = [floor_patch(*plane, target, _floor_half(result))
                        for target in _targets(result)]
    return result


def _frame_points(m: Motion, f: int) -> np.ndarray:
    """Every point drawn at frame ``f``."""
    parts = [m.segments[f].reshape(-1, 3), m.origins[f], m.masses[f], m.surfaces[f],
             m.com[f:f + 1]] + [c for _, c in m.boxes[f]]
    return np.vstack([p for p in parts if p.size])


def _frame_camera(m: Motion, pieces, parts, followed: str | None, index: dict) -> None:
    """Set ``m.target`` and ``m.view_half`` when the camera follows a body."""
    if followed is None:
        return
    targets = []
    for (model, _, _), part in zip(pieces, parts, strict=True):
        k = model.body_names.index(followed) if followed in model.body_names else None
        targets.append(part["pos"][:, k] if k is not None else part["com"])
    m.target = np.vstack(targets)
    reach = max(float(np.max(np.abs(_frame_points(m, f) - m.target[f]))) for f in range(len(m)))
    m.view_half = 1.15 * max(reach, 1e-3)
    m.followed = followed


def _targets(m: Motion) -> np.ndarray:
    """The camera's target at each frame (the centre of the whole motion without following)."""
    if m.target is not None:
        return m.target
    lo, hi = m.bounds()
    return np.broadcast_to(0.5 * (lo + hi), (len(m), 3))


def _floor_half(m: Motion) -> float:
    """Half side of the floor patch: what the camera shows."""
    if m.view_half is not None:
        return m.view_half
    lo, hi = m.bounds()
    return 0.55 * max(float(np.max(hi - lo)), 1e-3)


def _flat_axis(m: Motion) -> int | None:
    """The axis along which the motion is thin (a planar motion is best seen along it)."""
    lo, hi = m.bounds()
    extent = hi - lo
    k = int(np.argmin(extent))
    return k if extent[k] < 0.3 * extent.max() else None
