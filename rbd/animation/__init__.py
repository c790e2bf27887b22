"""3-D animations of a motion: an offline HTML page to turn and scrub, a GIF or MP4 for slides.

:func:`animate` writes a file; :func:`figure` returns the interactive
plotly figure itself (the last expression of a notebook cell displays it).

The HTML page is self-contained: plotly's JavaScript is embedded, so it plays
offline, from a file, without a server.  It holds a 3-D view (drag to turn,
scroll to zoom), a time slider and play/pause buttons.  Opening it as
``run.html#frame=K`` (or ``run.html?frame=K``) shows frame ``K`` first.

Shapes
------
By default the robot is drawn as it is: the visual geoms of
:attr:`rbd.Model.geoms` (for an MJCF model the geoms of groups 0 to 2, those
MuJoCo shows by default), spheres, ellipsoids, capsules, cylinders and boxes as
shaded surfaces and meshes (read with :func:`rbd.model.geoms.load_mesh`) as triangle
meshes, in their colours.  Every shape is made once in its body's frame and
moved with the body; a mesh with more triangles than the page (6000) or a
movie (2500) carries is simplified by vertex clustering, and a mesh file that
cannot be read (missing, or no reader installed) is left out with a
:class:`RuntimeWarning` naming the geom.
``geometry="collision"`` draws the collision geoms instead, and
``geometry="inertia"`` the teaching drawing below (also used for a model
without geoms, such as the built-in pendulums).  A checker floor is drawn
where the model has a plane geom (or, for a floating base, the plane
``z = 0``; ``floor=``), and the camera follows the root of a floating base
(``follow=``) so that a falling robot stays in view at a fixed zoom; the time
is shown above the scene.

The teaching drawing shows every body from its kinematics and its inertia:

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
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..simulation.dynamics import positive_number
from ._geometry import (
    HTML_FRAMES,
    MAX_FRAMES,
    MOVIE_FRAMES,
    MOVIE_TRIANGLES,
    Motion,
    check_choices,
    check_frames,
    inertia_box,
    motion,
)
from ._html import Embedded, _plotly, embed, figure, write_page
from ._movie import write_movie

__all__ = ["animate", "figure", "embed", "Embedded", "walker_motion", "inertia_box", "Motion",
           "motion", "MAX_FRAMES", "SUFFIXES", "MOVIE_PIXELS"]

#: The file types :func:`animate` writes.
SUFFIXES = (".html", ".gif", ".mp4")
#: Smallest and largest side of a GIF or MP4 in pixels (``size * dpi``).
MOVIE_PIXELS = (64, 8192)

# The public names are documented and shown as members of this package.
for _public in (figure, embed, Embedded, inertia_box, Motion, motion):
    _public.__module__ = __name__
del _public


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
    if not os.access(path.parent.resolve(), os.W_OK | os.X_OK) or (
            path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"animate: out={str(out)!r} cannot be written (no permission "
                         f"to write {'it' if path.exists() else str(path.parent)!r})")
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
            fps: float = 20.0, size: float = 5.0, dpi: int = 80, geometry: str = "visual",
            follow: str | bool | None = None, floor=None) -> Path:
    """Write an animation of ``trajectory``: offline HTML, GIF or MP4 (by the suffix of ``out``).

    Parameters
    ----------
    model, trajectory, t, trail, title, speed, geometry, follow, floor
        As for :func:`figure`: by default the robot's visual geometry (its
        meshes and primitives in their colours), a checker floor where it has
        a plane or a floating base, and a camera following a floating base;
        ``geometry="inertia"`` for the links and inertia-equivalent boxes.
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
    size, dpi : float
        Width and height of a GIF or MP4 in inches, and its dots per inch;
        ``size * dpi`` (its side in pixels) must lie within :data:`MOVIE_PIXELS`.

    Returns
    -------
    Path
        The file written.

    Notes
    -----
    Every argument and the output path (suffix, directory, permission, the tool
    that writes the format) are checked before any drawing, with an
    :class:`~rbd.InputError` naming the argument.  Names and titles are drawn
    as they are written (a ``$`` is not read as the start of a formula).

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
    check_frames(frames)
    speed = positive_number(speed, "animate: speed")
    fps = positive_number(fps, "animate: fps")
    size = positive_number(size, "animate: size")
    dpi = positive_number(dpi, "animate: dpi")
    low, high = MOVIE_PIXELS
    if not html and not low <= size * dpi <= high:
        raise InputError(f"animate: size * dpi = {size:g} * {dpi:g} = {size * dpi:g} pixels; "
                         f"a GIF or MP4 side must be {low} to {high} pixels")
    for name, value in (("title", title), ("trail", trail)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"animate: {name} must be a string or None, got {value!r}")
    check_choices(geometry, follow, floor)
    choices = dict(t=t, frames=frames, trail=trail, title=title, geometry=geometry,
                   follow=follow, floor=floor)
    if html:
        write_page(figure(model, trajectory, speed=speed, **choices), path)
        return path
    write_movie(motion(model, trajectory, triangles=MOVIE_TRIANGLES, **choices),
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
    from .. import walker

    cycle = walker.find_limit_cycle() if cycle is None else cycle
    taken = walker.walk(cycle.post_impact, int(steps), cycle.params, samples=int(samples))
    if not taken:
        raise InputError("walker_motion: the walker fell before its first heel strike")
    models = [s.model for s in taken]
    q = [s.x[:, :2] for s in taken]
    starts = np.concatenate([[0.0], np.cumsum([s.duration for s in taken])[:-1]])
    return models, q, np.concatenate([start + s.t for start, s in zip(starts, taken,
                                                                        strict=True)])
