r"""Local charts of the configuration manifold: the inverse differential of the exponential.

A configuration near :math:`q_c` is written :math:`q = q_c \oplus \xi` (through
:func:`rbd.integrate`).  Along a motion with joint velocity ``v`` the chart
coordinates move with :math:`\dot\xi = \mathrm{dexp}^{-1}_{-\xi}(v)`: ``v``
itself on joints whose configuration space is flat (revolute, prismatic, ...),
the inverse right Jacobian of SO(3) or SE(3) on spherical and free joints.
The adaptive solvers' state uses the closed forms here; the stage
velocities of RK4 use the truncated series, the RKMK transport
:func:`rbd.reference.rollout.transport` (``dexp_inv_series``), the one text
the reference rollout, the Python path and the compiled rollout share.
"""

from __future__ import annotations

import math

import numpy as np

from ..reference.rollout import curved_joints, dexp_inv_series

__all__ = ["curved_joints", "dexp_inv_series", "dexp_inv_exact", "chart_velocity",
           "chart_angle"]


def _so3_dexp_inv(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``J_r(φ)⁻¹ x = x + ½ φ×x + (1 - (θ/2) cot(θ/2)) / θ² φ×(φ×x)`` on so(3)."""
    theta = float(np.linalg.norm(phi))
    if theta < 1e-4:
        c = 1.0 / 12.0 + theta**2 / 720.0
    else:
        c = (1.0 - 0.5 * theta / math.tan(0.5 * theta)) / theta**2
    px = np.cross(phi, x)
    return x + 0.5 * px + c * np.cross(phi, px)


def _se3_coupling(phi: np.ndarray, rho: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``Q_r(φ, ρ) x``: the lower-left block of the right Jacobian of se(3), ``Q_l(-φ, -ρ)``."""
    a, b = -phi, -rho
    theta = float(np.linalg.norm(a))
    if theta < 1e-3:
        t2 = theta**2
        c1, c2, c3 = 1 / 6 - t2 / 120, 1 / 24 - t2 / 720, 1 / 120 - t2 / 2520
    else:
        s, c = math.sin(theta), math.cos(theta)
        c1 = (theta - s) / theta**3
        c2 = (theta**2 + 2 * c - 2) / (2 * theta**4)
        c3 = (2 * theta - 3 * s + theta * c) / (2 * theta**5)
    ax = np.cross(a, x)
    bx = np.cross(b, x)
    abax = np.cross(a, np.cross(b, ax))
    p1 = np.cross(a, bx) + np.cross(b, ax) + abax
    p2 = np.cross(a, np.cross(a, bx)) + np.cross(b, np.cross(a, ax)) - 3 * abax
    p3 = np.cross(a, np.cross(b, np.cross(a, ax))) + np.cross(a, abax)
    return 0.5 * bx + c1 * p1 + c2 * p2 + c3 * p3


def dexp_inv_exact(kind: str, xi: np.ndarray, v: np.ndarray) -> np.ndarray:
    r"""``dexp⁻¹_{-ξ}(v) = J_r(ξ)⁻¹ v``: the chart velocity ``ξ̇`` of ``q = q_c ⊕ ξ``.

    so(3): closed form.  se(3) (``ξ = [φ; ρ]``): ``J_r = [[A, 0], [B, A]]`` with
    ``A = J_r(φ)`` of so(3) and ``B = Q_r(φ, ρ)``, inverted blockwise.
    """
    if kind == "spherical":
        return _so3_dexp_inv(xi, v)
    phi, rho = xi[:3], xi[3:]
    w = _so3_dexp_inv(phi, v[:3])
    return np.concatenate([w, _so3_dexp_inv(phi, v[3:] - _se3_coupling(phi, rho, w))])


def chart_velocity(lie: list, xi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``ξ̇`` of every joint: ``v`` on flat joints, :func:`dexp_inv_exact` on curved ones.

    ``lie``: :func:`curved_joints` of the model.
    """
    if not lie:
        return v
    xi_dot = np.array(v, dtype=float)
    for kind, s in lie:
        xi_dot[s] = dexp_inv_exact(kind, xi[s], v[s])
    return xi_dot


def chart_angle(lie: list, xi: np.ndarray) -> float:
    """Largest rotation angle of a curved joint in the chart coordinates ``ξ``."""
    return max((float(np.linalg.norm(xi[s][:3])) for _, s in lie), default=0.0)
