"""The interactive figure (plotly): a 3-D view with a time slider and play/pause buttons.

:func:`figure` draws a :class:`~rbd.animation.Motion`;
:func:`write_page` writes it as a self-contained HTML page that opens
offline and can start at a given frame (``run.html#frame=K``); :func:`embed`
shows it in a notebook or a documentation page.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..simulation.dynamics import positive_number
from ._geometry import HTML_FRAMES, PALETTE, Motion, _flat_axis, motion
from ._shapes import BOX_TRIANGLES as _BOX_TRIANGLES


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


def _colours(rgba: np.ndarray) -> list[str]:
    """CSS colours of RGBA rows in [0, 1] (opaque)."""
    return [f"rgb({r},{g},{b})" for r, g, b in (255 * rgba[:, :3]).round().astype(int)]


def _surface(vertices: np.ndarray, triangles: np.ndarray, colours: np.ndarray, point,
             digits: int, topology: bool) -> dict:
    """A mesh3d trace's data; without ``topology`` only its vertices (a frame's update).

    Surfaces are drawn to ``digits`` decimals (1e-4 of the scene's size: below a pixel).
    """
    if not len(triangles):
        return _mesh([], point)
    v = vertices.round(digits).astype(np.float32)     # sent as 4-byte numbers: a smaller page
    data = dict(x=v[:, 0], y=v[:, 1], z=v[:, 2])
    if topology:
        data.update(i=triangles[:, 0], j=triangles[:, 1], k=triangles[:, 2],
                    facecolor=_colours(colours))
    return data


def _frame_traces(go, m: Motion, f: int, digits: int, topology: bool = True) -> list:
    """The moving traces at frame ``f`` (same order in every frame)."""
    x, y, z = _polyline(m.segments[f].round(digits))
    o, c, d = (a.round(digits) for a in (m.origins[f], m.com[f], m.masses[f]))
    trail = m.trail[: f + 1].round(digits) if m.trail is not None else np.zeros((0, 3))
    boxes = [(k, corners.round(digits)) for k, corners in m.boxes[f]]
    solid = bool(len(m.surface_triangles[f])) if m.surface_triangles else False
    overlay = "legendonly" if solid else True          # links and joints under the surfaces
    floor = m.floor[f] if m.floor is not None else (np.zeros((0, 3)), np.zeros((0, 3)), None)
    return [
        go.Scatter3d(x=x, y=y, z=z, mode="lines", line=dict(color="#333333", width=6),
                     name="links", hoverinfo="skip", visible=overlay),
        go.Mesh3d(**_mesh(boxes, c), opacity=0.55, flatshading=True,
                  name="inertia boxes", showlegend=any(m.boxes), hoverinfo="skip"),
        go.Scatter3d(x=o[:, 0], y=o[:, 1], z=o[:, 2], mode="markers", name="joints",
                     marker=dict(size=4, color="#333333"), visible=overlay),
        go.Scatter3d(x=d[:, 0], y=d[:, 1], z=d[:, 2], mode="markers", name="point masses",
                     marker=dict(size=7, color="#1f77b4", line=dict(color="black", width=1))),
        go.Scatter3d(x=[c[0]], y=[c[1]], z=[c[2]], mode="markers", name="centre of mass",
                     marker=dict(size=6, color="#d62728", symbol="diamond")),
        go.Scatter3d(x=trail[:, 0], y=trail[:, 1], z=trail[:, 2], mode="lines", name="trail",
                     line=dict(color="#2ca02c", width=3), visible=m.trail is not None),
        go.Mesh3d(**_surface(m.surfaces[f] if m.surfaces else np.zeros((0, 3)),
                             m.surface_triangles[f] if solid else np.zeros((0, 3), int),
                             m.surface_colours[f] if solid else None, c, digits - 1,
                             topology),
                  flatshading=True, name="geometry", showlegend=solid, hoverinfo="skip",
                  lighting=dict(ambient=0.45, diffuse=0.8, specular=0.15, roughness=0.6),
                  lightposition=dict(x=1000, y=-500, z=2000)),
        go.Mesh3d(**_surface(floor[0], floor[1], floor[2], c, digits - 1, topology or f == 0),
                  name="floor", showlegend=m.floor is not None, hoverinfo="skip",
                  lighting=dict(ambient=0.9, diffuse=0.1, specular=0.0)),
    ]


#: The number of moving traces (:func:`_frame_traces`).
MOVING = 8


def _camera(m: Motion) -> dict:
    """plotly camera: across the plane of a planar motion, else from the front right."""
    k = _flat_axis(m)
    eye = np.array([1.4, -1.6, 0.6]) if k is None or k == 2 else np.array([0.25, 0.25, 0.3])
    if k is not None and k != 2:
        eye[k] = -2.2
    return dict(eye=dict(x=float(eye[0]), y=float(eye[1]), z=float(eye[2])))


def _ranges(m: Motion, f: int) -> dict:
    """The axis ranges of a following camera at frame ``f``."""
    c, h = m.target[f], m.view_half
    return {f"{a}axis": dict(range=[float(c[k] - h), float(c[k] + h)]) for k, a in enumerate("xyz")}


def _time(m: Motion, f: int) -> str:
    return f"{m.title}   t = {m.t[f]:.2f} s"


def _scene(m: Motion) -> dict:
    ticks = dict(nticks=5, tickfont=dict(size=12), tickformat=".3~g")
    if m.target is not None:
        axes = {k: dict(v, title=f"{k[0]} [m]", autorange=False, **ticks)
                for k, v in _ranges(m, 0).items()}
        return dict(**axes, aspectmode="cube")
    lo, hi = m.bounds()
    centre, half = 0.5 * (lo + hi), 0.55 * (hi - lo)
    half = np.maximum(half, 0.15 * max(float(half.max()), 1e-9))   # a flat motion's thin axis
    ratio = half / half.max()
    axes = {f"{a}axis": dict(range=[float(centre[k] - half[k]), float(centre[k] + half[k])],
                             title=f"{a} [m]", autorange=False, **ticks)
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
                    pad=dict(t=30), currentvalue=dict(prefix="t = ", suffix=" s",
                                                      font=dict(color="#333333", size=14)))]
    return menus, sliders


def figure(model, trajectory, *, t=None, frames: int = HTML_FRAMES, trail: str | None = None,
           title: str | None = None, speed: float = 1.0, height: int | None = 600,
           geometry: str = "visual", follow: str | bool | None = None,
           floor=None):
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
    height : int or None
        Figure height in pixels (None: the height of its container, as the
        page :func:`animate` writes).
    geometry : {"visual", "collision", "inertia"}
        What is drawn of each body: its visual geoms (default; for an MJCF
        model the geoms of groups 0 to 2, those MuJoCo shows by default), its
        collision geoms, or the teaching drawing of links and
        inertia-equivalent boxes.  Primitives are drawn as surfaces and meshes
        in their colours (a mesh with more triangles than the drawing carries
        is simplified); a model without geoms of that kind gets the inertia
        drawing.  The links and joints stay in the legend (click to show them).
    follow : str, bool or None
        The body the camera follows (keeping it in the middle, at a fixed
        zoom that holds the whole robot); None (default) follows the root of a
        floating base and frames the whole motion otherwise; False always
        frames the whole motion.
    floor : bool, None or (point, normal)
        Draw a checker floor: the model's plane geom where it has one, else
        the plane ``z = 0`` (or lower, under the lowest point drawn).  None
        (default): where the model has a plane geom or a floating base.  A
        ``(point, normal)`` pair (world coordinates) draws that plane, such
        as the walker's slope.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    go = _plotly()
    speed = positive_number(speed, "animate: speed")
    m = motion(model, trajectory, t=t, frames=frames, trail=trail, title=title,
               geometry=geometry, follow=follow, floor=floor)
    return _figure(go, m, speed, height)


def _figure(go, m: Motion, speed: float, height: int | None):
    """The figure of a :class:`Motion` (:func:`figure`)."""
    menus, sliders = _controls(m, speed)
    digits = _digits(m)
    # the triangles and colours go with the first frame only when no frame changes them
    same = all(tri is m.surface_triangles[0] for tri in m.surface_triangles)
    frames = []
    for f in range(len(m)):
        layout = dict(title=dict(text=_time(m, f)))
        if m.target is not None:
            layout["scene"] = _ranges(m, f)
        frames.append(go.Frame(data=_frame_traces(go, m, f, digits, topology=not same),
                               name=str(f), traces=list(range(MOVING)), layout=layout))
    fig = go.Figure(data=_frame_traces(go, m, 0, digits), frames=frames)
    anchors = m.anchors
    fig.add_trace(go.Scatter3d(x=anchors[:, 0], y=anchors[:, 1], z=anchors[:, 2],
                               mode="markers", name="fixed joints",
                               marker=dict(size=5, color="black", symbol="square")))
    fig.update_layout(title=_time(m, 0), scene=_scene(m), updatemenus=menus, sliders=sliders,
                      height=height, autosize=True, margin=dict(l=0, r=0, t=40, b=80),
                      uirevision="view",
                      legend=dict(x=1.0, xanchor="right", y=0.95),
                      scene_camera=_camera(m))
    return fig


class Embedded:
    """A plotly figure shown in a notebook or a documentation page as self-contained HTML.

    ``_repr_html_`` embeds plotly's JavaScript and no MathJax, so a page built
    from the notebook (Sphinx, myst-nb) shows the figure offline.
    """

    def __init__(self, fig, plotlyjs: bool = True):
        self.figure = fig
        self.plotlyjs = plotlyjs

    def _repr_html_(self) -> str:
        return self.figure.to_html(include_plotlyjs=self.plotlyjs, full_html=False,
                                   include_mathjax=False, auto_play=False)


def embed(fig, plotlyjs: bool = True) -> Embedded:
    """``fig`` (from :func:`figure`) as a self-contained HTML cell output (:class:`Embedded`).

    ``plotlyjs=False`` leaves plotly's JavaScript (about 4.6 MB) out, for a second
    animation on a page whose earlier output already carries it.
    """
    return Embedded(fig, plotlyjs)


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


def write_page(fig, path: Path) -> None:
    """Write ``fig`` to ``path`` as a self-contained page (plotly's JavaScript inside).

    The plot fills the browser window (full width, full height).
    """
    fig = go_copy(fig)
    fig.update_layout(height=None, autosize=True)
    fig.write_html(str(path), include_plotlyjs=True, full_html=True, auto_play=False,
                   post_script=_PAGE_STYLE + _INITIAL_FRAME_SCRIPT, config=dict(
                       displaylogo=False, responsive=True),
                   default_width="100%", default_height="100vh")


def go_copy(fig):
    """A copy of ``fig`` (the caller's figure is left as it is)."""
    return type(fig)(fig)


# The page has no margin, so the scene fills the window (plotly sizes the plot to it).
_PAGE_STYLE = """
document.body.style.margin = '0';
document.body.style.overflow = 'hidden';
"""
