"""Checks of a mimic joint (:meth:`rbd.model.Model.add_mimic`) before the model takes it."""

from __future__ import annotations

import math

import numpy as np

from .._model_checks import MAX_MAGNITUDE
from ..errors import ModelError
from .coupling import MIMIC_KINDS


def _mimic_number(value, what: str, joint: str) -> float:
    """A mimic multiplier or offset as a finite float, or :class:`ModelError`."""
    try:
        x = float(value) if not isinstance(value, complex | np.complexfloating) else math.nan
    except (TypeError, ValueError, OverflowError):
        x = math.nan
    if not math.isfinite(x) or abs(x) > MAX_MAGNITUDE:
        raise ModelError(f"joint {joint!r}: mimic {what} must be a finite real number, "
                         f"got {value!r}")
    return x


def _check_mimic(bodies: list, mimic: dict, j: int, k: int) -> None:
    """Refuse body ``j``'s joint mimicking body ``k``'s (:meth:`Model.add_mimic`'s rules)."""
    name_j, name_k = bodies[j].joint_name, bodies[k].joint_name
    if j == k:
        raise ModelError(f"joint {name_j!r} cannot mimic itself")
    for i, name in ((j, name_j), (k, name_k)):
        kind = bodies[i].joint.kind
        if kind not in MIMIC_KINDS:
            raise ModelError(f"joint {name!r} is {kind}: only one-coordinate joints "
                             f"({', '.join(MIMIC_KINDS)}) can mimic or be mimicked")
    if j in mimic:
        raise ModelError(f"joint {name_j!r} already mimics "
                         f"{bodies[mimic[j][0]].joint_name!r}")
    if k in mimic:
        raise ModelError(f"joint {name_j!r} cannot mimic {name_k!r}, which mimics "
                         f"{bodies[mimic[k][0]].joint_name!r} itself (a mimic "
                         "of a mimic): mimic that joint directly")
    followers = [bodies[i].joint_name for i, (src, _, _) in mimic.items()
                 if src == j]
    if followers:
        raise ModelError(f"joint {name_j!r} cannot mimic {name_k!r}: {followers[0]!r} "
                         f"mimics {name_j!r} (a mimic of a mimic): mimic {name_k!r} "
                         "directly")
