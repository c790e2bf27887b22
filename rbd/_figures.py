"""The pyplot-managed figures of :mod:`rbd.plotting` and :meth:`rbd.sweeps.SweepResult.plot`.

A module of its own, below both, so that a sweep's figure behaves as a plot's (shown once in
a notebook whatever the backend, ``plt.show()`` and ``plt.gcf()`` work) without the sweeps
importing the presentation layer.
"""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["PlotFigure"]


#: Backends that draw only into files: a notebook shows their figures as PNG images.
_FILE_BACKENDS = frozenset({"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"})


class PlotFigure(Figure):
    """A pyplot figure that a notebook shows exactly once, whatever the backend.

    Every function of this module that makes its own figure returns one.  In a
    notebook it is shown as a PNG image: under the inline backend (then closed,
    as the backend closes every figure at the end of a cell, so that it is not
    shown a second time) and under a file-only backend such as Agg (as set in
    continuous integration), which would show nothing or the text
    ``<Figure size ...>``.  A widget or window backend shows it itself.
    """

    def _ipython_display_(self) -> None:
        from IPython.display import display

        backend = plt.get_backend().lower()
        inline = "inline" in backend
        manager = self.canvas.manager
        managed = manager is not None and plt.fignum_exists(manager.num)
        if managed and not inline and backend not in _FILE_BACKENDS:
            return                       # a widget or a window shows it
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", bbox_inches="tight")
        display({"image/png": buffer.getvalue(), "text/plain": repr(self)}, raw=True)
        if managed and inline:
            plt.close(self)              # shown: the end of the cell must not show it again


def _new_figure(**kwargs) -> Figure:
    """A new pyplot-managed :class:`PlotFigure` (``kwargs`` of :func:`matplotlib.pyplot.figure`)."""
    return plt.figure(FigureClass=PlotFigure, **kwargs)
