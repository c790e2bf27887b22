"""Movies of a motion for slides: a GIF (pillow) or an MP4 (``ffmpeg``), drawn by matplotlib."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._geometry import PALETTE, Motion, _flat_axis
from ._shapes import BOX_TRIANGLES as _BOX_TRIANGLES


def _movie_axes(m: Motion, size: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(size, size), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(projection="3d")
    lo, hi = m.bounds()
    centre, half = 0.5 * (lo + hi), 0.55 * max(float(np.max(hi - lo)), 1e-3)
    if m.target is not None:
        centre, half = m.target[0], m.view_half
    for k, (setter, label) in enumerate(((ax.set_xlim, "x [m]"), (ax.set_ylim, "y [m]"),
                                         (ax.set_zlim, "z [m]"))):
        setter(centre[k] - half, centre[k] + half)
        (ax.set_xlabel, ax.set_ylabel, ax.set_zlabel)[k](label)
        (ax.xaxis, ax.yaxis, ax.zaxis)[k].set_major_locator(MaxNLocator(4))
    ax.set_box_aspect((1, 1, 1))
    flat = _flat_axis(m)
    ax.view_init(elev=10 if flat in (0, 1) else 20, azim={0: -180, 1: -90}.get(flat, -60))
    return fig, ax


#: Direction of the light that shades the surfaces of a movie (towards the light).
LIGHT = np.array([0.35, -0.45, 0.82]) / np.linalg.norm([0.35, -0.45, 0.82])


def shaded(vertices: np.ndarray, triangles: np.ndarray, rgba: np.ndarray) -> np.ndarray:
    """Face colours lit by :data:`LIGHT` (Lambert, both sides lit, with ambient light)."""
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    n = np.cross(b - a, c - a)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    light = 0.45 + 0.55 * np.abs(n @ LIGHT)
    out = np.array(rgba, dtype=float)
    out[:, :3] *= light[:, None]
    out[:, 3] = 1.0
    return out


def write_movie(m: Motion, out: Path, fps: float, size: float, dpi: int) -> None:
    """Write ``m`` to ``out``: a GIF (pillow) or, for any other suffix, an MP4 (``ffmpeg``)."""
    from matplotlib import animation as mpl_animation
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    fig, ax = _movie_axes(m, size)
    ax.computed_zorder = False          # the floor under everything, the robot over its links
    empty = [np.zeros((3, 3))]
    floor = Poly3DCollection(empty, linewidths=0, zorder=0)
    links = Line3DCollection(list(m.segments[0]) or [np.zeros((2, 3))], colors="#333333",
                             linewidths=2.5, zorder=1)
    boxes = Poly3DCollection([c[tri] for _, c in m.boxes[0] for tri in _BOX_TRIANGLES]
                             or empty, alpha=0.5, edgecolors="0.3", linewidths=0.3, zorder=2)
    solid = Poly3DCollection(empty, linewidths=0, zorder=3)
    for artist in (floor, links, boxes, solid):
        ax.add_collection3d(artist)
    links.set_visible(not len(m.surface_triangles[0]) if m.surface_triangles else True)
    if len(m.anchors):
        ax.plot(*m.anchors.T, "s", color="k", ms=5, zorder=4)
    joints, = ax.plot([], [], [], "o", color="#333333", ms=3, zorder=4)
    joints.set_visible(links.get_visible())
    dots, = ax.plot([], [], [], "o", color=PALETTE[0], mec="k", ms=7, zorder=4)
    com, = ax.plot([], [], [], "D", color="#d62728", ms=6, label="centre of mass", zorder=5)
    trail, = ax.plot([], [], [], "-", color="#2ca02c", lw=1.5, zorder=5)
    ax.legend(loc="upper left", fontsize="small")
    if m.floor is not None:
        ax.set_axis_off()               # the floor's checker gives the scale
    title = ax.set_title("", fontsize="small")
    artists = dict(floor=floor, links=links, boxes=boxes, solid=solid, joints=joints, dots=dots,
                   com=com, trail=trail, title=title, ax=ax)
    label = m.title.replace("$", r"\$")          # drawn as written, not as mathtext
    if out.suffix.lower() == ".gif":
        _write_gif(m, fig, artists, label, out, fps, dpi)
        return
    writer = mpl_animation.FFMpegWriter(fps=fps, codec="h264", extra_args=["-pix_fmt",
                                                                          "yuv420p"])
    failed = None
    try:
        with writer.saving(fig, str(out), dpi):
            try:
                for f in range(len(m)):
                    _draw_frame(m, f, artists, label)
                    writer.grab_frame()
            except BaseException as exc:
                failed = exc
                raise
    except Exception as exc:
        # a writer that saw no frame fails in its own way while closing; the error that
        # stopped the drawing is the one to report
        if failed is not None and exc is not failed:
            raise failed from None
        raise


def _write_gif(m: Motion, fig, artists: dict, label: str, out: Path, fps: float,
               dpi: int) -> None:
    """Draw every frame on the figure's canvas and write them as one GIF with pillow.

    The figure's layout is computed once (on the first frame) and then kept, so
    each frame is one draw of the moved artists.
    """
    from PIL import Image

    fig.set_dpi(dpi)
    images: list = []
    # A still camera, or a moving one without axes drawn: the axes, panes and ticks are drawn
    # once as the background, and each frame redraws only the moving artists over it (in the
    # order the axes would), projected with the frame's camera.
    moving = [artists[k] for k in ("floor", "links", "boxes", "solid", "joints", "dots", "com",
                                   "trail", "title")]
    background = None
    ax = artists["ax"]
    if m.target is None or not ax.axison:
        _draw_frame(m, 0, artists, label)
        for artist in moving:
            artist.set_animated(True)
        fig.canvas.draw()
        fig.set_layout_engine("none")
        background = fig.canvas.copy_from_bbox(fig.bbox)
    for f in range(len(m)):
        _draw_frame(m, f, artists, label)
        if background is None:
            fig.canvas.draw()
            fig.set_layout_engine("none")
        else:
            fig.canvas.restore_region(background)
            ax.M = ax.get_proj()                  # the frame's view limits
            for artist in moving:
                if artist.get_visible():
                    if hasattr(artist, "do_3d_projection"):
                        artist.do_3d_projection()
                    fig.draw_artist(artist)
        images.append(Image.fromarray(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()))
    # one palette for the whole GIF, from frames spread over it (the trail grows, the robot
    # moves): no flicker between frames, a small file
    sample = [images[k] for k in sorted({0, len(images) // 3, 2 * len(images) // 3,
                                         len(images) - 1})]
    strip = Image.new("RGB", (sum(im.width for im in sample), sample[0].height))
    for k, im in enumerate(sample):
        strip.paste(im, (k * im.width, 0))
    palette = strip.quantize(colors=255, method=Image.Quantize.FASTOCTREE,
                             dither=Image.Dither.NONE)
    images = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    images[0].save(out, save_all=True, append_images=images[1:], loop=0,
                   duration=round(1000 / fps), optimize=False)


def _draw_frame(m: Motion, f: int, a: dict, label: str) -> None:
    """Move the artists to frame ``f`` of ``m``."""
    a["links"].set_segments(list(m.segments[f]))
    faces = [c[tri] for _, c in m.boxes[f] for tri in _BOX_TRIANGLES]
    a["boxes"].set_verts(faces)
    a["boxes"].set_facecolor([PALETTE[k % len(PALETTE)] for k, _ in m.boxes[f]
                              for _ in range(12)])
    if m.surface_triangles and len(m.surface_triangles[f]):
        v, tri = m.surfaces[f], m.surface_triangles[f]
        a["solid"].set_verts(v[tri])
        a["solid"].set_facecolor(shaded(v, tri, m.surface_colours[f]))
    if m.floor is not None:
        v, tri, colours = m.floor[f]
        a["floor"].set_verts(v[tri])
        a["floor"].set_facecolor(colours)
    a["joints"].set_data_3d(*m.origins[f].T)
    a["dots"].set_data_3d(*m.masses[f].T)
    a["com"].set_data_3d(*m.com[f:f + 1].T)
    if m.trail is not None:
        a["trail"].set_data_3d(*m.trail[:f + 1].T)
    a["title"].set_text(f"{label}   t = {m.t[f]:.2f} s")
    if m.target is not None:
        c, h = m.target[f], m.view_half
        for k, setter in enumerate((a["ax"].set_xlim, a["ax"].set_ylim, a["ax"].set_zlim)):
            setter(c[k] - h, c[k] + h)
