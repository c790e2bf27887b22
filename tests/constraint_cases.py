"""Closed-loop test cases: random trees closed by anchors that hold at a drawn state."""

from __future__ import annotations

import numpy as np

import rbd
from rbd import constraints as rc
from rbd.constraints import mechanisms as mech

#: Joint kinds of the random loops (those Pinocchio models too).
LOOP_JOINTS = ("revolute", "prismatic", "spherical", "free")


def closing_anchor(model, q, rng, kind: str, a: int, b: int | None):
    """A point or frame anchor between bodies ``a`` and ``b`` (None: world) that holds at ``q``."""
    T = rbd.forward_kinematics(model, q, backend="reference")
    R = rbd.testing.random_rotation(rng)
    pose_a = np.eye(4)
    pose_a[:3, :3], pose_a[:3, 3] = R, rng.uniform(-0.4, 0.4, 3)
    world = T[a] @ pose_a
    pose_b = world if b is None else np.linalg.solve(T[b], world)
    name_b = None if b is None else model.body_names[b]
    if kind == "point":
        return rc.PointAnchor(model.body_names[a], name_b, pose_a[:3, 3], pose_b[:3, 3])
    return rc.FrameAnchor(model.body_names[a], name_b, pose_a, pose_b)


def random_loops(seed: int, nloops: int | None = None, kinds=LOOP_JOINTS,
                 floating: bool | None = None, world: bool = False):
    """``(model, q, constraints)``: a random tree with 1–3 closures that hold at ``q``
    (``world=True``: each closure ties a body to the world)."""
    rng = np.random.default_rng(7000 + seed)
    floating = bool(seed % 2) if floating is None else floating
    model = rbd.testing.random_model(rng, int(rng.integers(4, 8)), kinds, floating_base=floating)
    q = rbd.random_configuration(model, rng)
    nloops = int(rng.integers(1, 4)) if nloops is None else nloops
    constraints = []
    for _ in range(nloops):
        a = int(rng.integers(1, model.nbodies))
        b = -1 if world else int(rng.integers(-1, a))
        kind = ("point", "frame")[int(rng.integers(2))]
        constraints.append(closing_anchor(model, q, rng, kind, a, None if b < 0 else b))
    return model, q, constraints


def consistent_velocity(model, q, constraints, rng) -> np.ndarray:
    """A random velocity in the null space of ``J(q)``."""
    J = rbd.constraint_jacobian(model, q, constraints)
    _, s, Vt = np.linalg.svd(J)
    rank = int(np.sum(s > 1e-10 * s[0])) if s.size else 0
    N = Vt[rank:].T
    return N @ rng.normal(size=N.shape[1])


def mechanisms():
    """The four-bar and the slider-crank, each at a closed configuration."""
    return [(mech.four_bar(), mech.four_bar_angles(0.7)),
            (mech.slider_crank(), mech.slider_crank_coordinates(0.9))]
