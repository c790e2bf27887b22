"""Movies of a motion for slides: a GIF (pillow) or an MP4 (``ffmpeg``), drawn by matplotlib."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._geometry import _BOX_TRIANGLES, PALETTE, Motion, _flat_axis


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


def write_movie(m: Motion, out: Path, fps: float, size: float, dpi: int) -> None:
    """Write ``m`` to ``out``: a GIF (pillow) or, for any other suffix, an MP4 (``ffmpeg``)."""
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
    label = m.title.replace("$", r"\$")          # drawn as written, not as mathtext
    failed = None
    try:
        with writer.saving(fig, str(out), dpi):
            try:
                _draw_frames(m, writer, links, boxes, joints, dots, com, trail, title, label)
            except BaseException as exc:
                failed = exc
                raise
    except Exception as exc:
        # a writer that saw no frame fails in its own way (pillow: IndexError) while
        # closing; the error that stopped the drawing is the one to report
        if failed is not None and exc is not failed:
            raise failed from None
        raise


def _draw_frames(m: Motion, writer, links, boxes, joints, dots, com, trail, title,
                 label: str) -> None:
    """Draw each frame of ``m`` into the artists and grab it."""
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
        title.set_text(f"{label}   t = {m.t[f]:.2f} s")
        writer.grab_frame()
