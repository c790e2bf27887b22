r"""Closed-loop mechanisms: a planar four-bar and a slider-crank, with their closed forms.

Both move in the ``xz``-plane (revolute axes along ``y``, gravity along
``-z``); an angle ``ψ`` about ``y`` turns the ``x`` axis to
``(cos ψ, 0, -sin ψ)``.  Each is an open tree closed by one
:class:`~rbd.constraints.PointAnchor`, whose out-of-plane row is identically
zero: 3 rows, rank 2, one degree of freedom left.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..joints import Prismatic, Revolute
from ..model import Model
from .kinds import PointAnchor

__all__ = ["four_bar", "four_bar_angles", "slider_crank", "slider_crank_coordinates"]

_Y = (0.0, 1.0, 0.0)


def _rod(mass: float, length: float):
    """A slender rod along ``x`` from the body origin (``(m, c, I_c)``)."""
    Ic = mass * length * length / 12.0 * np.diag([1e-3, 1.0, 1.0])
    return mass, np.array([length / 2, 0.0, 0.0]), Ic


def four_bar(ground: float = 1.0, crank: float = 0.4, coupler: float = 1.0,
             rocker: float = 0.8, mass_per_length: float = 1.0) -> Model:
    """A four-bar linkage: crank, coupler and rocker in a chain, the rocker's tip pinned.

    The crank turns about the origin, the rocker's tip is held at
    ``(ground, 0, 0)`` by the constraint ``"loop"`` (:attr:`Model.constraints`).
    """
    model = Model(name="four-bar")
    links = (("crank", crank, None), ("coupler", coupler, crank), ("rocker", rocker, coupler))
    parent = -1
    for name, length, offset in links:
        X = None if offset is None else (np.eye(3), [offset, 0.0, 0.0])
        parent = model.add_body(parent, Revolute(_Y), X, _rod(mass_per_length * length, length),
                                name, f"{name}_joint")
    model.add_constraint(PointAnchor("rocker", None, [rocker, 0.0, 0.0], [ground, 0.0, 0.0],
                                     name="loop"))
    return model


def _direction(psi):
    return np.array([np.cos(psi), -np.sin(psi)])          # (x, z) of the rotated x axis


def four_bar_angles(theta: float, ground: float = 1.0, crank: float = 0.4,
                    coupler: float = 1.0, rocker: float = 0.8, branch: int = 1) -> np.ndarray:
    """The joint angles ``(q_crank, q_coupler, q_rocker)`` of the closed four-bar at crank angle
    ``theta``: the coupler's far end is where the circles about the crank's tip (radius
    ``coupler``) and the ground pivot (radius ``rocker``) meet; ``branch=±1`` picks the
    intersection."""
    A = crank * _direction(theta)                          # crank tip (x, z)
    D = np.array([ground, 0.0])                            # ground pivot
    d = np.linalg.norm(D - A)
    if not abs(coupler - rocker) <= d <= coupler + rocker:
        raise ModelError(f"four_bar_angles: the loop cannot close at theta = {theta:.6g} "
                         f"(pivots {d:.6g} apart, links {coupler} and {rocker})")
    along = (coupler**2 - rocker**2 + d * d) / (2 * d)     # law of cosines
    e = (D - A) / d
    B = A + along * e + branch * np.sqrt(max(coupler**2 - along**2, 0.0)) * np.array([-e[1], e[0]])
    psi_coupler = np.arctan2(-(B - A)[1], (B - A)[0])
    psi_rocker = np.arctan2(-(D - B)[1], (D - B)[0])
    return np.array([theta, psi_coupler - theta, psi_rocker - psi_coupler])


def slider_crank(crank: float = 0.3, rod: float = 1.0, mass_per_length: float = 1.0,
                 slider_mass: float = 0.5) -> Model:
    """A slider-crank: a crank and a connecting rod, whose tip is pinned to a slider on ``x``.

    Two roots: the crank (revolute about ``y`` at the origin) and the slider
    (prismatic along ``x``); the constraint ``"wrist"`` pins the rod's tip to
    the slider's origin.
    """
    model = Model(name="slider-crank")
    c = model.add_body(-1, Revolute(_Y), None, _rod(mass_per_length * crank, crank), "crank",
                       "crank_joint")
    model.add_body(c, Revolute(_Y), (np.eye(3), [crank, 0.0, 0.0]),
                   _rod(mass_per_length * rod, rod), "rod", "rod_joint")
    model.add_body(-1, Prismatic((1.0, 0.0, 0.0)), None,
                   (slider_mass, np.zeros(3), 1e-3 * np.eye(3)), "slider", "slider_joint")
    model.add_constraint(PointAnchor("rod", "slider", [rod, 0.0, 0.0], [0.0, 0.0, 0.0],
                                     name="wrist"))
    return model


def slider_crank_coordinates(theta: float, crank: float = 0.3, rod: float = 1.0) -> np.ndarray:
    """``(q_crank, q_rod, x_slider)`` in closed form: ``x = a cos θ + √(b² − a² sin² θ)``."""
    s = crank * np.sin(theta)
    x = crank * np.cos(theta) + np.sqrt(rod * rod - s * s)
    psi_rod = np.arctan2(-s, x - crank * np.cos(theta))   # the rod points back to z = 0
    return np.array([theta, psi_rod - theta, x])
