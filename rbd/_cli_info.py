"""The tables of ``rbd info``: link lengths, masses, centres of mass, inertias, joint limits.

Every number is printed with 4 significant digits and round-off (below 1e-12
of the largest magnitude in its row) as 0, so that a hand derivation can be
checked against the table.  :func:`_table` lays out the other commands'
tables too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .model import Model
from .spatial import plux_parts

__all__ = ["body_rows", "inertia_rows", "limit_rows", "info_tables"]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A plain-text table; ``align`` holds one of ``<`` or ``>`` per column."""
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    lines = ["  ".join(f"{str(c):{a}{w}}" for c, a, w in zip(row, align, widths, strict=True))
             .rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)




def _num(x: float) -> str:
    return f"{x:.4g}" if np.isfinite(x) else ("inf" if x > 0 else "-inf")


def _clean(values) -> np.ndarray:
    """Floats with round-off (below 1e-12 of the largest finite magnitude) set to 0."""
    x = np.array(values, dtype=float).ravel()
    finite = np.isfinite(x)
    scale = np.abs(x[finite]).max(initial=0.0)
    x[finite & (np.abs(x) <= 1e-12 * scale)] = 0.0
    return x + 0.0


def _vec(values) -> str:
    return " ".join(_num(x) for x in _clean(values))


def _limits(values: np.ndarray) -> str:
    """A joint's limits: ``-`` when there are none, else one number per coordinate."""
    return "-" if np.all(np.isinf(values)) else _vec(values)


def body_rows(model: Model) -> list[tuple[str, ...]]:
    """Per body: name, parent, joint, joint axis, offset and distance from the parent's
    joint origin (the link length), mass and centre of mass (body frame)."""
    rows = []
    for b in model.bodies:
        _, r = plux_parts(b.X_tree)
        parent = "world" if b.parent < 0 else model.bodies[b.parent].name
        axis = getattr(b.joint, "axis", None)
        rows.append((b.name, parent, f"{b.joint.kind} {b.joint_name}",
                     "-" if axis is None else _vec(axis), _vec(r), _num(float(np.linalg.norm(r))),
                     _num(b.mass), _vec(b.com)))
    return rows


def inertia_rows(model: Model) -> list[tuple[str, ...]]:
    """Per body: the rotational inertia about the centre of mass, in body axes."""
    rows = []
    for b in model.bodies:
        I = b.I_com
        rows.append((b.name, *(_num(x) for x in
                               _clean([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]))))
    return rows


def limit_rows(model: Model) -> list[tuple[str, ...]]:
    """Per joint with degrees of freedom: position, speed and effort limits, armature."""
    rows = []
    mimic = model.mimic
    for i, b in enumerate(model.bodies):
        if b.joint.nv == 0 or b.joint_name in mimic:    # a mimic joint has no coordinate
            continue
        qs, vs = model.q_index(i), model.v_index(i)
        index = f"q[{qs.start}]" if b.joint.nq == 1 else f"q[{qs.start}:{qs.stop}]"
        armature = model.armature[vs]
        rows.append((b.joint_name, b.joint.kind, index,
                     _limits(model.lower[qs]), _limits(model.upper[qs]),
                     _limits(model.velocity_limit[vs]), _limits(model.effort_limit[vs]),
                     "0" if not armature.any() else _vec(armature)))
    return rows


def info_tables(model: Model) -> str:
    """The bodies, inertias and joint limits of ``model`` as three titled plain-text tables."""
    return "\n\n".join([
        "bodies (body frame = frame of the body's joint; lengths in m, masses in kg)\n" +
        _table(("body", "parent", "joint", "axis", "joint origin in parent",
                "link length", "mass", "centre of mass"), body_rows(model), "<<<<>>>>"),
        "inertia about the centre of mass, body axes (kg m^2)\n" +
        _table(("body", "Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"), inertia_rows(model),
               "<>>>>>>"),
        "joint limits ('-': none; per coordinate, q order for positions)\n" +
        _table(("joint", "kind", "coordinates", "lower", "upper", "max speed", "max effort",
                "armature"), limit_rows(model), "<<>>>>>>"),
    ])
