"""Helpers for testing dynamics code: random models and states, consistency reports.

>>> import numpy as np, rbd
>>> rng = np.random.default_rng(0)
>>> model = rbd.testing.random_model(rng, nbodies=4)
>>> report = rbd.testing.check_consistency(model, "mass_matrix", rbd.reference.crba.crba)
>>> report.ok
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .algorithms import random_configuration
from .joints import Free, Helical, Joint, Planar, Prismatic, Revolute, Spherical, Universal
from .model import Model
from .spatial import plux, so3_exp

__all__ = [
    "JOINT_FACTORIES",
    "random_rotation",
    "random_inertia",
    "random_joint",
    "random_model",
    "random_state",
    "check_consistency",
    "ConsistencyReport",
    "relative_difference",
    "quantity_difference",
]


def _axis(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


#: Factories of random joints of each type, keyed by kind.
JOINT_FACTORIES: dict[str, Callable[[np.random.Generator], Joint]] = {
    "revolute": lambda rng: Revolute(_axis(rng)),
    "prismatic": lambda rng: Prismatic(_axis(rng)),
    "helical": lambda rng: Helical(_axis(rng), pitch=rng.uniform(-0.2, 0.2)),
    "universal": lambda rng: Universal(*np.linalg.qr(rng.normal(size=(3, 3)))[0][:, :2].T),
    "spherical": lambda rng: Spherical(),
    "free": lambda rng: Free(),
    "planar": lambda rng: Planar(_axis(rng)),
}


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A random rotation matrix."""
    return so3_exp(rng.normal(size=3))


def random_inertia(rng: np.random.Generator):
    """``(mass, com, I_com)`` of a random solid box (so the inertia is physical)."""
    m = rng.uniform(0.5, 2.0)
    a, b, c = rng.uniform(0.1, 0.6, 3)
    principal = m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    return m, rng.uniform(-0.3, 0.3, 3), R @ np.diag(principal) @ R.T


def random_joint(rng: np.random.Generator, kinds: Sequence[str]) -> Joint:
    """A random joint of one of ``kinds``."""
    return JOINT_FACTORIES[kinds[rng.integers(len(kinds))]](rng)


def random_model(
    rng: np.random.Generator | int | None = None,
    nbodies: int = 6,
    joint_types: Sequence[str] = ("revolute", "prismatic", "helical", "universal",
                                  "spherical", "planar"),
    floating_base: bool = False,
    chain: bool = False,
    gravity=(0.0, 0.0, -9.81),
) -> Model:
    """A random tree with random geometry and inertias.

    Parameters
    ----------
    rng : Generator or seed
    nbodies : int
        Number of bodies (including a floating base when requested).
    joint_types : sequence of str
        Kinds to draw from (keys of :data:`JOINT_FACTORIES`).
    floating_base : bool
        Give body 0 a free joint.
    chain : bool
        Make a serial chain instead of a random tree.
    """
    rng = np.random.default_rng(rng)
    model = Model(gravity=gravity, name=f"random tree ({nbodies} bodies)")
    for i in range(nbodies):
        parent = -1 if i == 0 else (i - 1 if chain else int(rng.integers(0, i)))
        joint = Free() if (i == 0 and floating_base) else random_joint(rng, joint_types)
        X_tree = plux(random_rotation(rng), rng.uniform(-0.5, 0.5, 3))
        model.add_body(parent, joint, X_tree, random_inertia(rng), f"b{i}")
    return model


def random_state(model: Model, rng: np.random.Generator | int | None = None, scale: float = 1.0):
    """Random ``(q, v, a)`` (use ``a`` as ``tau`` where a force is needed)."""
    rng = np.random.default_rng(rng)
    q = random_configuration(model, rng)
    v = scale * rng.normal(size=model.nv)
    a = scale * rng.normal(size=model.nv)
    return q, v, a


def relative_difference(x, y) -> float:
    """``max|x - y| / max(1, max|y|)``: the error measure used across the suite."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        return float("inf")
    if x.size == 0:
        return 0.0
    return float(np.max(np.abs(x - y)) / max(1.0, float(np.max(np.abs(y)))))


def quantity_difference(quantity: str, model: Model, state, x, y) -> float:
    """Difference of two results for ``quantity`` at ``state = (q, v, a_or_tau)``.

    For inverse dynamics, mass matrices and bias forces this is
    :func:`relative_difference`.  Accelerations are compared in torque space,
    ``max|M (x - y)| / max(1, max|tau|, max|h|)``: forward dynamics amplifies
    rounding by the condition number of ``M`` (a torus chain reaches 1e6 with
    velocity terms 1e4 times the torques), while two exact algorithms agree in
    torque space to rounding whatever the conditioning.
    """
    if quantity != "forward_dynamics":
        return relative_difference(x, y)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        return float("inf")
    if x.size == 0:
        return 0.0
    from .reference.crba import crba
    from .reference.rnea import nonlinear_effects

    q, v, tau = state
    M, h = crba(model, q), nonlinear_effects(model, q, v)
    scale = max(1.0, float(np.max(np.abs(tau))), float(np.max(np.abs(h))))
    return float(np.max(np.abs(M @ (x - y))) / scale)


@dataclass
class ConsistencyReport:
    """Agreement of one function with every registered implementation."""

    quantity: str
    tolerance: float
    rows: list[tuple[str, float, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(err <= self.tolerance for _, err, note in self.rows if not note)

    @property
    def max_difference(self) -> float:
        errs = [err for _, err, note in self.rows if not note]
        return max(errs) if errs else 0.0

    def __str__(self) -> str:
        width = max([len(n) for n, _, _ in self.rows] + [14])
        lines = [f"{self.quantity}: max relative difference against each implementation "
                 f"(tolerance {self.tolerance:.1e})"]
        for name, err, note in self.rows:
            verdict = note or ("ok" if err <= self.tolerance else "DIFFERS")
            lines.append(f"  {name:<{width}}  {err:10.3e}  {verdict}")
        lines.append("agreement: " + ("yes" if self.ok else "NO"))
        return "\n".join(lines)


def _call(quantity: str, fn: Callable, model: Model, q, v, a):
    if quantity == "inverse_dynamics":
        return fn(model, q, v, a)
    if quantity == "mass_matrix":
        return fn(model, q)
    if quantity == "forward_dynamics":
        return fn(model, q, v, a)
    return fn(model, q, v)


def check_consistency(
    model: Model,
    quantity: str,
    fn: Callable,
    rng: np.random.Generator | int | None = 0,
    trials: int = 5,
    tolerance: float = 1e-8,
) -> ConsistencyReport:
    """Compare ``fn`` with every registered implementation of ``quantity``.

    ``fn`` has the registry signature of ``quantity`` (see :mod:`rbd.registry`).
    Returns a :class:`ConsistencyReport`; print it for a table.
    """
    from . import registry

    rng = np.random.default_rng(rng)
    states = [random_state(model, rng) for _ in range(trials)]
    mine = [np.asarray(_call(quantity, fn, model, *s), dtype=float) for s in states]
    report = ConsistencyReport(quantity, tolerance)
    for name, other in registry.implementations(quantity).items():
        if not registry.supports(quantity, name, model):
            report.rows.append((name, 0.0, "does not support this model"))
            continue
        err = max(quantity_difference(quantity, model, s, m, _call(quantity, other, model, *s))
                  for m, s in zip(mine, states, strict=True))
        report.rows.append((name, err, ""))
    return report
