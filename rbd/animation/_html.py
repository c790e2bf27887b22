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
from ._geometry import _BOX_TRIANGLES, HTML_FRAMES, PALETTE, Motion, _flat_axis, motion


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
    speed = positive_number(speed, "animate: speed")
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


def write_page(fig, path: Path) -> None:
    """Write ``fig`` to ``path`` as a self-contained page (plotly's JavaScript inside)."""
    fig.write_html(str(path), include_plotlyjs=True, full_html=True, auto_play=False,
                   post_script=_INITIAL_FRAME_SCRIPT, config=dict(displaylogo=False))
