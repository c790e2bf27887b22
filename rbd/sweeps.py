"""Map a function over a grid of parameters on Dask (a local cluster or a running scheduler).

:func:`sweep` evaluates ``fn(**point)`` at every point of a Cartesian grid,
``chunk`` points per task, and returns the results in an array shaped like
the grid.  Without a scheduler it starts a
:class:`dask.distributed.LocalCluster` (one single-threaded process per
worker) for the call; give an address (``"tcp://host:8786"``) or a
:class:`dask.distributed.Client` to run on a cluster.  ``fn`` and the grid
values travel to the workers by pickle: use a module-level function (or a
:func:`functools.partial` of one) rather than a lambda.

Example: the walker's basin of attraction (:func:`rbd.walker.basin_of_attraction`)
is ``sweep(partial(basin_cell, ...), {"stance_angle": ..., "swing_rate": ...})``.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .errors import InputError

__all__ = ["sweep"]


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
        client = distributed.Client(scheduler)
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


def _run_chunk(fn: Callable, names: Sequence[str], points: list) -> list:
    """One task: ``fn(**point)`` for each point of a chunk."""
    return [fn(**dict(zip(names, point, strict=True))) for point in points]


def _axes(grid: Mapping) -> tuple[list[str], list[list]]:
    if not isinstance(grid, Mapping) or not grid:
        raise InputError("grid must be a non-empty mapping {argument name: sequence of values}")
    names, axes = [], []
    for name, values in grid.items():
        values = values.reshape(-1).tolist() if isinstance(values, np.ndarray) else list(values)
        if not values:
            raise InputError(f"grid[{name!r}] has no values")
        names.append(str(name))
        axes.append(values)
    return names, axes


def sweep(fn: Callable, grid: Mapping[str, Sequence], chunk: int = 1, scheduler=None,
          progress: bool = True, n_workers: int | None = None, desc: str = "sweep"
          ) -> np.ndarray:
    """Evaluate ``fn(**point)`` at every point of a grid, in parallel on Dask.

    Parameters
    ----------
    fn : callable
        Called with one keyword argument per grid axis; must be picklable.
    grid : mapping {name: sequence}
        The axes; the points are their Cartesian product, in C order.
    chunk : int
        Grid points per Dask task (more points per task, less scheduling overhead).
    scheduler : None, str or dask.distributed.Client
        ``None`` starts a :class:`dask.distributed.LocalCluster` for this call;
        a string is the address of a running scheduler; a Client is used as is.
    progress : bool
        Show a progress bar (tqdm over the finished points).
    n_workers : int, optional
        Workers of the local cluster (default: the number of CPUs).
    desc : str
        Label of the progress bar.

    Returns
    -------
    ndarray of objects, shape ``tuple(len(values) for values in grid.values())``
        ``fn``'s result at each point.

    Raises
    ------
    ImportError
        If ``dask.distributed`` is not installed (extra ``parallel``).
    InputError
        On an empty grid, a bad ``chunk`` or ``scheduler``.

    Examples
    --------
    The period of a pendulum released from rest at a few amplitudes, on a local
    cluster of two worker processes (``fn`` must be importable by the workers,
    so it lives in a module, not in the interactive session)::

        import numpy as np, rbd
        from mymodule import period          # period(amplitude) -> float

        periods = rbd.sweep(period, {"amplitude": np.linspace(0.1, 2.0, 20)},
                            chunk=5, n_workers=2)
        periods.shape                        # (20,)
    """
    names, axes = _axes(grid)
    if isinstance(chunk, bool) or not isinstance(chunk, int | np.integer) or chunk < 1:
        raise InputError(f"chunk must be a positive integer, got {chunk!r}")
    distributed = _require_distributed()
    from tqdm import tqdm

    shape = tuple(len(a) for a in axes)
    points = list(itertools.product(*axes))
    results = np.empty(len(points), dtype=object)
    client, own = _connect(distributed, scheduler, n_workers)
    try:
        futures = {}
        for start in range(0, len(points), int(chunk)):
            part = points[start:start + int(chunk)]
            futures[client.submit(_run_chunk, fn, names, part, pure=False)] = start
        with tqdm(total=len(points), disable=not progress, desc=desc) as bar:
            for future in distributed.as_completed(list(futures)):
                values = future.result()
                start = futures[future]
                for k, value in enumerate(values):
                    results[start + k] = value
                bar.update(len(values))
    finally:
        for thing in own:
            thing.close()
    return results.reshape(shape)
