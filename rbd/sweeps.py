"""Map a simulation over a grid of initial states or parameters on Dask.

:func:`sweep` evaluates ``fn(**point)`` at every point of a Cartesian grid and
returns a :class:`SweepResult`: the values shaped like the grid, the grid
itself, and :meth:`SweepResult.plot` for one- and two-axis grids.

The points travel to the workers in chunks, one Dask task per chunk.  By
default a task calls ``fn`` once per point; with ``batched=True`` it calls
``fn`` once per chunk with one array per axis, so that ``fn`` can run the
whole chunk at once, e.g. as one call of :func:`rbd.simulate` with ``q0`` of
shape ``(N, nq)`` (``N`` rollouts in compiled code).

Without a scheduler :func:`sweep` starts a
:class:`dask.distributed.LocalCluster` (one single-threaded process per
worker) for the call; give an address (``"tcp://host:8786"``) or a
:class:`dask.distributed.Client` to run the same sweep on a cluster.  ``fn``
and the grid values travel to the workers by (cloud)pickle: a module-level
function, a :func:`functools.partial` of one, or a function defined in the
notebook all work; the workers must be able to import the modules ``fn`` uses.

Example: the walker's basin of attraction (:func:`rbd.walker.basin_of_attraction`)
is ``sweep(partial(basin_cell, ...), {"stance_angle": ..., "swing_rate": ...})``.
"""

from __future__ import annotations

import logging
import math
import numbers
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .errors import InputError, SweepError

__all__ = ["sweep", "SweepResult", "TASKS_PER_WORKER", "MAX_POINTS", "MAX_TASKS"]

#: With ``chunk=None``, the grid is cut into about this many tasks per worker
#: (a few tasks each keep every worker busy until the end; fewer, larger
#: tasks keep the scheduling overhead small).
TASKS_PER_WORKER = 4
#: Largest grid: its results are held in one array of Python objects (some
#: 100 bytes a point with a float result, so about 1 GB here).
MAX_POINTS = 10_000_000
#: Largest number of Dask tasks of one sweep (the scheduler keeps each one).
MAX_TASKS = 100_000


@dataclass(frozen=True, eq=False)
class SweepResult:
    """The values of a sweep over a grid, with the grid.

    Attributes
    ----------
    values : ndarray, shape ``tuple(len(axis) for axis in grid.values())``
        ``fn``'s result at each point.  A float (or int, bool) array when every
        result is a real number, else an array of objects.
    grid : dict {name: ndarray}
        The axes in the order of ``values``' dimensions; an axis whose values
        are vectors (e.g. initial states) is a 2-D array, one row per value.

    The result also behaves like ``values`` (``shape``, indexing, iteration,
    ``len``, ``numpy.asarray``, ``tolist``).
    """

    values: np.ndarray
    grid: dict

    @property
    def names(self) -> tuple[str, ...]:
        """The axis names, in the order of ``values``' dimensions."""
        return tuple(self.grid)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.values.shape

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __getitem__(self, index):
        return self.values[index]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def tolist(self) -> list:
        return self.values.tolist()

    def plot(self, ax=None, label: str = "value", **kwargs):
        """Draw the values over a one- or two-axis grid.

        One axis: a line of the value against the axis.  Two axes: a colour map
        (``pcolormesh``) with the first axis vertical, as ``values[i, j]`` is
        laid out, and a colour bar.  An axis of vectors is drawn against its
        index.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Draw here (default: a new pyplot-managed figure, as
            :mod:`rbd.plotting` makes: ``plt.show()`` and ``plt.gcf()`` work, a
            notebook shows it once whatever the backend).
        label : str
            Name of the value (the y label, or the colour bar's).
        **kwargs
            Passed to ``Axes.plot`` (one axis) or ``Axes.pcolormesh`` (two).

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        InputError
            If the grid has more than two axes or the values are not numbers.
        """
        if self.values.ndim not in (1, 2):
            raise InputError(f"plot draws one- or two-axis sweeps; this one has "
                             f"{self.values.ndim} axes {self.names}: plot a slice, "
                             "e.g. SweepResult(result.values[:, :, 0], {...})")
        if not (np.issubdtype(self.values.dtype, np.number) or self.values.dtype == bool):
            raise InputError("plot needs a number at every point; fn returned "
                             f"{type(self.values.flat[0]).__name__}: map the results "
                             "to numbers first")
        if ax is None:
            from ._figures import _new_figure

            ax = _new_figure(figsize=(5.5, 4), layout="constrained").add_subplot()
        axes = [(name, _plot_axis(values)) for name, values in self.grid.items()]
        if self.values.ndim == 1:
            (name, x), = axes
            ax.plot(x, self.values, **kwargs)
            ax.set_xlabel(name)
            ax.set_ylabel(label)
        else:
            (name_y, y), (name_x, x) = axes
            mesh = ax.pcolormesh(x, y, self.values.astype(float), shading="nearest", **kwargs)
            ax.set_xlabel(name_x)
            ax.set_ylabel(name_y)
            ax.figure.colorbar(mesh, ax=ax, label=label)
        return ax.figure


def _plot_axis(values: np.ndarray) -> np.ndarray:
    """Coordinates of an axis on a plot: its values if they are numbers, else their index."""
    if values.ndim == 1 and np.issubdtype(values.dtype, np.number):
        return values
    return np.arange(len(values))


def _require_distributed():
    try:
        import dask.distributed
    except ImportError as exc:
        raise ImportError("sweep runs on Dask: install the 'parallel' extra "
                          "(pip install 'rbd[parallel]', i.e. dask[distributed])") from exc
    return dask.distributed


def _connect(distributed, scheduler, n_workers):
    """A client for ``scheduler`` and the objects this call must close."""
    if isinstance(scheduler, distributed.Client):
        return scheduler, []
    if isinstance(scheduler, str):
        try:
            client = distributed.Client(scheduler)
        except ValueError as exc:
            raise InputError(f"scheduler {scheduler!r} is not a scheduler address: give "
                             "'tcp://host:port' (as printed by 'dask scheduler')") from exc
        except OSError as exc:
            raise OSError(f"no Dask scheduler answered at {scheduler!r}: start one "
                          "('dask scheduler') or check the address") from exc
        return client, [client]
    if scheduler is not None:
        raise InputError("scheduler must be None, a scheduler address or a dask Client, "
                         f"got {type(scheduler).__name__}")
    # worker logs are kept quiet (shutdown chatter); a failing task raises from its result
    cluster = distributed.LocalCluster(n_workers=n_workers or os.cpu_count() or 1,
                                       threads_per_worker=1, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    return client, [client, cluster]


def _environment_keeper() -> Callable[[], None]:
    """A function that puts back this process's thread-count variables as they are now.

    Before spawning each worker, a Dask nanny writes its ``pre-spawn-environ`` settings
    (``OMP_NUM_THREADS=1``, ...) into ``os.environ`` of the process that runs it, which for
    a local cluster is the caller's: without this, after a sweep the caller's own batched
    kernels and child processes would start one OpenMP thread.
    """
    import dask

    names = set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    saved = {name: os.environ.get(name) for name in names | {"PYTHONHASHSEED"}}

    def restore() -> None:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    return restore


class _Grid:
    """The points of a Cartesian grid, made on demand from their flat (C-order) index."""

    def __init__(self, axes: dict[str, np.ndarray]):
        self.names = list(axes)
        self.shape = tuple(len(a) for a in axes.values())
        self.size = math.prod(self.shape)
        self._values = [_points_of(a) for a in axes.values()]

    def index(self, flat: int) -> tuple[int, ...]:
        return tuple(int(i) for i in np.unravel_index(flat, self.shape))

    def point(self, flat: int) -> dict:
        """The arguments of ``fn`` at point ``flat``."""
        return {name: values[i] for name, values, i in
                zip(self.names, self._values, self.index(flat), strict=True)}

    def chunk(self, start: int, stop: int) -> list[tuple]:
        """The points ``start .. stop - 1`` as tuples of axis values."""
        idx = np.unravel_index(np.arange(start, stop), self.shape)
        return list(zip(*([values[i] for i in column] for values, column in
                          zip(self._values, idx, strict=True)), strict=True))


def _where(names: Sequence[str], point: tuple, start: int, offset: int) -> str:
    """The point as a reader finds it: its number in the grid and its arguments."""
    arguments = ", ".join(f"{n}={v!r}" for n, v in zip(names, point, strict=True))
    return f"grid point {start + offset} ({arguments})"


def _returnable(value, names: Sequence[str], point: tuple, start: int, offset: int):
    """``value`` if it can travel back from a worker (pickle or cloudpickle), else a
    :class:`~rbd.SweepError` naming the point."""
    try:
        pickle.dumps(value, protocol=5, buffer_callback=lambda buffer: None)
    except Exception:
        try:
            import cloudpickle

            cloudpickle.dumps(value, protocol=5, buffer_callback=lambda buffer: None)
        except Exception as exc:
            raise SweepError(
                f"fn's result at {_where(names, point, start, offset)} cannot be sent back "
                f"from the worker: {type(value).__name__} does not pickle ({exc}); return "
                f"numbers, arrays or other picklable values",
                dict(zip(names, point, strict=True)), start + offset) from None
    return value


def _run_chunk(fn: Callable, names: Sequence[str], points: list, start: int = 0) -> list:
    """One task, point by point: ``fn(**point)`` for each point of a chunk."""
    out = []
    for offset, point in enumerate(points):
        try:
            value = fn(**dict(zip(names, point, strict=True)))
        except Exception as exc:
            exc.add_note(f"rbd.sweep: raised by fn at {_where(names, point, start, offset)}")
            raise
        out.append(_returnable(value, names, point, start, offset))
    return out


def _run_batch(fn: Callable, names: Sequence[str], points: list, start: int = 0) -> list:
    """One task, as a batch: ``fn`` once, with one array per axis over the chunk's points."""
    columns = {name: np.asarray([point[k] for point in points])
               for k, name in enumerate(names)}
    results = list(fn(**columns))
    if len(results) != len(points):
        raise InputError(f"with batched=True, fn must return one result per point: it "
                         f"returned {len(results)} for a batch of {len(points)}")
    return [_returnable(value, names, point, start, offset)
            for offset, (value, point) in enumerate(zip(results, points, strict=True))]


def _axis(name, values) -> np.ndarray:
    """One axis as an array: 1-D for numbers, 2-D (one row per value) for vectors."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray | range):
        raise InputError(f"grid[{name!r}] must be a sequence of values (a list, range or "
                         f"array), got {type(values).__name__}")
    try:
        axis = np.asarray(values)
    except ValueError as exc:
        raise InputError(f"grid[{name!r}] mixes values of different shapes") from exc
    if axis.ndim == 0 or len(axis) == 0:
        raise InputError(f"grid[{name!r}] has no values")
    return axis


def _points_of(axis: np.ndarray) -> list:
    """The values of an axis as handed to ``fn``: Python numbers, or one row per vector."""
    return axis.tolist() if axis.ndim == 1 else list(axis)


def _axes(grid: Mapping) -> dict[str, np.ndarray]:
    if not isinstance(grid, Mapping) or not grid:
        raise InputError("grid must be a non-empty mapping {argument name: sequence of values}")
    axes = {}
    for name, values in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise InputError(f"grid keys are fn's argument names; {name!r} is not a name")
        axes[name] = _axis(name, values)
    return axes


def _positive(value, name: str, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InputError(f"{name} must be a positive integer{' or None' if allow_none else ''}, "
                         f"got {value!r}")
    return int(value)


def _values(results: np.ndarray, shape: tuple) -> np.ndarray:
    """The results shaped like the grid; a numeric array when every result is a real number."""
    if all(isinstance(r, numbers.Real | np.bool_) and not isinstance(r, np.ndarray)
           for r in results):
        return np.array(results.tolist()).reshape(shape)
    return results.reshape(shape)


def _check_arguments(fn, chunk, scheduler, n_workers, batched) -> tuple[int | None, int | None]:
    if not callable(fn):
        raise InputError(f"fn must be callable, got {type(fn).__name__}")
    chunk = _positive(chunk, "chunk", allow_none=True)
    n_workers = _positive(n_workers, "n_workers", allow_none=True)
    if scheduler is not None and n_workers is not None:
        raise InputError("n_workers sizes the local cluster started when scheduler is None; "
                         "with a scheduler, its own workers run the tasks: drop n_workers")
    if not isinstance(batched, bool | np.bool_):
        raise InputError(f"batched must be True or False, got {batched!r}")
    return chunk, n_workers


def sweep(fn: Callable, grid: Mapping[str, Sequence], chunk: int | None = None, scheduler=None,
          progress: bool = True, n_workers: int | None = None, desc: str = "sweep",
          batched: bool = False) -> SweepResult:
    """Evaluate ``fn(**point)`` at every point of a grid, in parallel on Dask.

    Parameters
    ----------
    fn : callable
        Called with one keyword argument per grid axis; must be picklable.
        With ``batched=True`` it receives one array per axis (the values of
        the points of one chunk, ``(k,)`` or ``(k, d)`` for an axis of vectors)
        and returns a sequence of ``k`` results, one per point.
    grid : mapping {name: sequence}
        The axes; the points are their Cartesian product, in C order.  An axis
        may hold numbers or vectors of one length (e.g. a ``(n, nq)`` array of
        initial configurations: ``n`` values).
    chunk : int, optional
        Grid points per Dask task.  Default: the points split into about
        :data:`TASKS_PER_WORKER` tasks per worker.
    scheduler : None, str or dask.distributed.Client
        ``None`` starts a :class:`dask.distributed.LocalCluster` for this call;
        a string is the address of a running scheduler; a Client is used as is.
    progress : bool
        Show a progress bar (tqdm over the finished points).
    n_workers : int, optional
        Workers of the local cluster (default: the number of CPUs); only
        with ``scheduler=None``.
    desc : str
        Label of the progress bar.
    batched : bool
        Call ``fn`` once per chunk with arrays (see ``fn``) instead of once
        per point.

    Returns
    -------
    SweepResult
        ``.values`` (shaped like the grid), ``.grid`` and ``.plot()``.

    Raises
    ------
    ImportError
        If ``dask.distributed`` is not installed (extra ``parallel``).
    InputError
        On an empty or malformed grid, a bad ``chunk``, ``n_workers``,
        ``batched`` or ``scheduler``, or a batched ``fn`` returning the wrong
        number of results; a grid of more than :data:`MAX_POINTS` points or
        more than :data:`MAX_TASKS` tasks (refused before anything runs; the
        points are made chunk by chunk, never listed whole).
    SweepError
        When the process evaluating a point died (a crash, out of memory): the
        error names that grid point (``.point``, ``.index``), found by running
        the points of the failed chunk again, one by one, in a child process of
        the caller; or when ``fn``'s result at a point cannot be pickled back to
        the client.  An exception raised by
        ``fn`` itself propagates with a note naming the point.
    OSError
        If no scheduler answers at the given address.

    Examples
    --------
    The period of a pendulum released from rest at a few amplitudes, on a local
    cluster of two worker processes::

        import numpy as np, rbd
        from mymodule import period          # period(amplitude) -> float

        result = rbd.sweep(period, {"amplitude": np.linspace(0.1, 2.0, 20)},
                           chunk=5, n_workers=2)
        result.values.shape                  # (20,)
        result.plot(label="period (s)")      # a matplotlib Figure
    """
    chunk, n_workers = _check_arguments(fn, chunk, scheduler, n_workers, batched)
    axes = _axes(grid)
    distributed = _require_distributed()
    from tqdm import tqdm

    grid_points = _Grid(axes)
    names, shape, total = grid_points.names, grid_points.shape, grid_points.size
    if total > MAX_POINTS:
        raise InputError(f"the grid has {total:,} points ({' x '.join(map(str, shape))}), more "
                         f"than MAX_POINTS = {MAX_POINTS:,} whose results one sweep holds; "
                         f"sweep it in parts")
    if chunk is not None and math.ceil(total / chunk) > MAX_TASKS:
        raise InputError(f"{total:,} points in chunks of chunk = {chunk} make "
                         f"{math.ceil(total / chunk):,} Dask tasks, more than MAX_TASKS = "
                         f"{MAX_TASKS:,}; use a larger chunk")
    task = _run_batch if batched else _run_chunk
    restore_environment = _environment_keeper()
    client, own = _connect(distributed, scheduler, n_workers)
    futures = {}
    try:
        if chunk is None:
            workers = max(1, sum(client.nthreads().values()))
            chunk = math.ceil(total / (TASKS_PER_WORKER * workers))
        results = np.empty(total, dtype=object)
        for start in range(0, total, chunk):
            points = grid_points.chunk(start, min(start + chunk, total))
            future = client.submit(task, fn, names, points, start, pure=False)
            futures[future] = start
        with tqdm(total=total, disable=not progress, desc=desc) as bar:
            for future in distributed.as_completed(list(futures)):
                start = futures[future]
                try:
                    values = future.result()
                except distributed.KilledWorker as exc:
                    stop = min(start + chunk, total)
                    raise _killed(task, fn, grid_points, start, stop) from exc
                except SweepError as exc:        # the worker knew the flat index only
                    if isinstance(exc.index, int):
                        exc.index = grid_points.index(exc.index)
                    raise
                results[start:start + len(values)] = _as_objects(values)
                bar.update(len(values))
    except BaseException:
        if not own:
            client.cancel(list(futures))
        raise
    finally:
        for thing in own:
            thing.close()
        if own:
            restore_environment()
    return SweepResult(_values(results, shape), dict(axes))


def _killed(task, fn, grid: _Grid, start: int, stop: int) -> SweepError:
    """The error for a chunk whose worker died, naming the point that kills.

    The chunk's points are run again, one call of ``task`` per point and in
    order, in one child process of this one (:func:`_replay`): the point being
    evaluated when that process dies is the culprit.  The replay does not rely
    on the cluster restarting the killed worker.
    """
    culprit = start if stop - start == 1 else _replay(task, fn, grid, start, stop)
    if culprit is None:
        where = (f"one of grid points {start} to {stop - 1} (run again one by one in a "
                 f"fresh process, none crashed: the failure depends on what ran before "
                 f"it in the worker, or on the worker's machine)")
        return SweepError(f"a Dask worker died while evaluating fn at {where}; the process "
                          f"was killed (a crash in compiled code, running out of memory, "
                          f"os._exit ...)", None, None)
    point = grid.point(culprit)
    index = grid.index(culprit)
    arguments = ", ".join(f"{n}={v!r}" for n, v in point.items())
    return SweepError(f"a Dask worker died evaluating fn at grid point {culprit} (index "
                      f"{index}: {arguments}): the process was killed (a crash in compiled "
                      f"code, running out of memory, os._exit ...)", point, index)


#: The child process of :func:`_replay`: it reads this process's ``sys.path``,
#: then the calls, and prints each point's flat index before evaluating it.
_REPLAY_CHILD = """
import pickle, sys
sys.path[:0] = pickle.load(sys.stdin.buffer)
task, fn, names, calls = pickle.load(sys.stdin.buffer)
for k, points in calls:
    print("rbd.sweep point", k, flush=True)
    try:
        task(fn, names, points, k)
    except BaseException:
        pass
print("done", flush=True)
"""


def _replay(task, fn, grid: _Grid, start: int, stop: int) -> int | None:
    """The flat index of the first point of ``start .. stop - 1`` that kills the process
    evaluating it, or ``None`` when none does (each point alone, in order, in one child)."""
    import subprocess
    import sys

    import cloudpickle

    calls = [(k, grid.chunk(k, k + 1)) for k in range(start, stop)]
    payload = pickle.dumps(list(sys.path)) + cloudpickle.dumps((task, fn, grid.names, calls))
    child = subprocess.run([sys.executable, "-c", _REPLAY_CHILD], input=payload,
                           capture_output=True, check=False)
    lines = child.stdout.decode(errors="replace").splitlines()
    if child.returncode == 0 and lines[-1:] == ["done"]:
        return None
    started = [int(line.split()[-1]) for line in lines if line.startswith("rbd.sweep point ")]
    return started[-1] if started else None


def _as_objects(values: list) -> np.ndarray:
    """A 1-D object array of ``values`` (each result one entry, even when it is a sequence)."""
    out = np.empty(len(values), dtype=object)
    for k, value in enumerate(values):
        out[k] = value
    return out
