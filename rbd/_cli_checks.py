"""Checks of the ``rbd`` command's arguments, made before any work starts.

Numbers are checked when argparse parses them (:func:`number`: finite, in
range); output paths before a long run (:func:`check_output_path`); the size of
the work a command may start against the bounds below.  Each failure is an
:class:`~rbd.errors.InputError` (or argparse's usage error) that the command
reports in one line with exit status 2.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable

import numpy as np

from .errors import InputError
from .model import Model

# --- bounds on the work one command may start ----------------------------------------------------
#: ``rbd simulate`` stores every step; it refuses runs of more steps than this ...
MAX_SIMULATE_STEPS = 10**7
#: ... or whose stored samples (t, q, v, a and the energies) would take more bytes than this.
MAX_SIMULATE_BYTES = 2**30
#: ``rbd check`` runs the pure-Python derivations (O(n²) per call); larger models are refused.
MAX_CHECK_DOF = 300
#: ``rbd bench``: most seconds spent timing one cell (nine cells in all).
MAX_BENCH_BUDGET = 10.0
#: ``rbd simulate --dpi``: a plot of 9 × 9 inches at this resolution is ~15,000 pixels square.
MAX_DPI = 1600


def check_output_path(path: str, option: str, directory: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written.

    A file's directory is created when missing (with its parents, as
    ``mkdir -p``) and must accept a new file (tried with a temporary file), and
    the file, if it exists, must be a writable file; with ``directory=True``
    the path itself is that directory.
    """
    target = os.path.abspath(path)
    if directory:
        folder = target
        if os.path.exists(target) and not os.path.isdir(target):
            raise InputError(f"{option}: {path!r} exists and is not a directory")
    else:
        folder = os.path.dirname(target)
        if os.path.isdir(target):
            raise InputError(f"{option}: {path!r} is a directory; give a file name")
        if os.path.exists(target) and not os.access(target, os.W_OK):
            raise InputError(f"{option}: {path!r} exists and is not writable")
    if not os.path.isdir(folder):
        try:
            os.makedirs(folder)
        except OSError as exc:   # a file in the way, no permission, ...
            raise InputError(f"{option}: cannot create the directory {folder!r} "
                             f"({exc.strerror or exc})") from None
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(f"{option}: cannot write in the directory {folder!r} "
                         f"({exc.strerror or exc})") from None


def simulate_steps(duration: float, dt: float) -> float:
    """Steps of a run of ``duration`` seconds at ``dt`` (a float: may be huge or infinite)."""
    with np.errstate(over="ignore"):
        return float(np.ceil(np.float64(duration) / np.float64(dt)))


def check_run_size(model: Model, duration: float, dt: float) -> None:
    """Refuse a run whose stored samples would not fit in :data:`MAX_SIMULATE_BYTES`."""
    samples = simulate_steps(duration, dt) + 2
    per_sample = 8 * (model.nq + 2 * model.nv + 3)          # t, q, v, a, kinetic, potential
    need = samples * per_sample
    if need > MAX_SIMULATE_BYTES:
        raise InputError(f"--duration {duration:g} at --dt {dt:g} stores {samples:.3g} samples "
                         f"of {model.name!r} ({need / 2**30:.3g} GiB); rbd simulate stores at "
                         f"most {MAX_SIMULATE_BYTES / 2**30:g} GiB: raise --dt or shorten "
                         "--duration")


def check_animation_path(path: str | None) -> None:
    """``--animate``: a writable ``.html``, ``.gif`` or ``.mp4`` path whose writer is installed."""
    if not path:
        return
    from .animation import SUFFIXES, check_output

    if not path.lower().endswith(SUFFIXES):
        raise InputError(f"--animate: the path must end in {', '.join(SUFFIXES)}, got {path!r}")
    check_output_path(path, "--animate")
    try:
        check_output(path)
    except ImportError as exc:
        raise InputError(f"--animate: {exc}") from None


def check_plot_path(path: str) -> None:
    """The plot's directory is writable and matplotlib can write its format."""
    check_output_path(path, "--out")
    from matplotlib.figure import Figure

    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    formats = Figure().canvas.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise InputError(f"--out: cannot write a .{suffix} plot; use one of "
                         f"{', '.join('.' + f for f in sorted(formats))}")


def number(kind: type, low: float | None = None, high: float | None = None,
            low_open: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite ``kind`` (int or float) in ``[low, high]`` (``(low, high]``)."""
    what = "a whole number" if kind is int else "a number"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not np.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
        if low is not None and (value <= low if low_open else value < low):
            raise argparse.ArgumentTypeError(
                f"must be {'>' if low_open else '>='} {low:g}, got {text!r}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}, got {text!r}")
        return value

    return parse
