"""The measurements of ``rbd bench``: rnea, crba and aba timed on the kernels, the readable
reference and Pinocchio (built from :func:`rbd.to_urdf` of the model)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from . import _backend, algorithms, testing
from .model import Model

__all__ = ["bench_rows"]


def _time_call(fn: Callable, budget: float, repeat: int = 5) -> float:
    """Median seconds per call over ``repeat`` runs taking about ``budget`` seconds in all."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-9)
    number = max(1, int(budget / repeat / once))
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def _pinocchio(model: Model):
    """``(pinocchio module, pinocchio Model)`` built from ``rbd.to_urdf(model)``, or a reason."""
    try:
        import pinocchio as pin
    except ImportError:
        return None, "n/a (pinocchio not installed)"
    try:
        from .urdf import to_urdf

        xml = to_urdf(model)
    except Exception as exc:   # no URDF writer yet, or a model URDF cannot describe
        return None, f"n/a (no URDF: {type(exc).__name__})"
    try:
        root_free = model.nbodies > 0 and model.bodies[0].joint.kind == "free"
        mimic = bool(model.mimic)   # pinocchio's mimic model: the same independent coordinates
        pmodel = (pin.buildModelFromXML(xml, pin.JointModelFreeFlyer(), mimic=mimic)
                  if root_free else pin.buildModelFromXML(xml, mimic=mimic))
    except Exception as exc:   # pinocchio rejects the document
        return None, f"n/a (pinocchio: {type(exc).__name__})"
    if pmodel.nv != model.nv:
        return None, f"n/a (pinocchio nv = {pmodel.nv})"
    return (pin, pmodel), ""


def _pinocchio_mimic_aba(pin, pmodel, pdata, q, v, tau):
    """Pinocchio 4.1's ``aba`` refuses mimic joints: its ``M`` and ``h``, then a solve."""
    M = pin.crba(pmodel, pdata, q)
    M = np.triu(M) + np.triu(M, 1).T
    return np.linalg.solve(M, tau - pin.nonLinearEffects(pmodel, pdata, q, v))


def bench_rows(model: Model, budget: float, seed: int = 0):
    """``(algorithm, {column: seconds or reason})`` for rnea, crba and aba."""
    q, v, a = testing.random_state(model, seed)
    columns: dict[str, dict[str, Callable] | str] = {}
    if _backend.has_kernels():
        columns["kernel"] = {
            "rnea": lambda: algorithms.rnea(model, q, v, a, backend="kernel"),
            "crba": lambda: algorithms.crba(model, q, backend="kernel"),
            "aba": lambda: algorithms.aba(model, q, v, a, backend="kernel"),
        }
    else:
        columns["kernel"] = "n/a (not built)"
    columns["reference"] = {
        "rnea": lambda: algorithms.rnea(model, q, v, a, backend="reference"),
        "crba": lambda: algorithms.crba(model, q, backend="reference"),
        "aba": lambda: algorithms.aba(model, q, v, a, backend="reference"),
    }
    peer, reason = _pinocchio(model)
    if peer is None:
        columns["pinocchio"] = reason
    else:
        pin, pmodel = peer
        pdata = pmodel.createData()
        rng = np.random.default_rng(seed)
        pq = pin.integrate(pmodel, pin.neutral(pmodel), rng.normal(size=pmodel.nv))
        pv, pa = rng.normal(size=pmodel.nv), rng.normal(size=pmodel.nv)
        columns["pinocchio"] = {
            "rnea": lambda: pin.rnea(pmodel, pdata, pq, pv, pa),
            "crba": lambda: pin.crba(pmodel, pdata, pq),
            "aba": (lambda: pin.aba(pmodel, pdata, pq, pv, pa)) if not model.mimic else
            (lambda: _pinocchio_mimic_aba(pin, pmodel, pdata, pq, pv, pa)),
        }
    rows = []
    for algorithm in ("rnea", "crba", "aba"):
        cells = {}
        for column, fns in columns.items():
            cells[column] = fns if isinstance(fns, str) else _time_call(fns[algorithm], budget)
        rows.append((algorithm, cells))
    return rows
