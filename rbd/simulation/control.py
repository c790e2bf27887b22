r"""Joint forces that :func:`rbd.simulate` evaluates itself: tables, a PD law, damping.

:class:`Forcing` is what ``tau=`` becomes after validation: a feedforward
``τ_ff`` (none, constant, or one row per step), an optional :class:`PD` law
and the joint damping.  The joint force at step ``k`` and state ``(q, v)`` is

.. math::

    \tau = \tau_{ff}[k] + K_p\,(q_{ref} \ominus q) - K_d\,v, \qquad
    \tau_{total} = \tau - D\,v,

where :math:`q_{ref} \ominus q` is the velocity that moves ``q`` to
``q_ref`` in unit time (:meth:`rbd.joints.Joint.difference`): ``q_ref - q``
on flat joints, :math:`\log(R_q^\top R_{ref})` on a spherical joint (the
rotation vector in the joint frame, the shortest way round), the ``se(3)``
logarithm on a free joint.  ``D`` is ``model.damping`` when
``simulate(..., damping=True)``.  The recorded ``tau`` is ``τ`` (the command),
the damping force is not part of it.  The compiled rollouts
(``rbd/_kernels/rollout.pyx``) evaluate the same expression.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..model import Model
from ..reference.kinematics import difference
from .dynamics import check_quaternions, checked

__all__ = ["PD", "Forcing", "forcing"]


@dataclass(frozen=True)
class PD:
    """A joint-space PD law ``τ = kp (q_ref ⊖ q) - kd v (+ feedforward)``, for ``simulate(tau=)``.

    Parameters
    ----------
    q_ref : (nq,) array_like
        The reference configuration (unit quaternions on spherical and free joints).
    kp, kd : float or (nv,) array_like
        Stiffness and damping gains per degree of freedom (``>= 0``).
    feedforward : array_like, optional
        Added to the law: constant, shape ``(nv,)``, or one row per step, shape
        ``(steps, nv)``, as ``tau`` itself.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> law = rbd.simulation.PD([0.3, 0.0], kp=50.0, kd=10.0)
    >>> traj = rbd.simulate(model, [0.0, 0.0], [0.0, 0.0], 5.0, 1e-3, tau=law)
    >>> bool(abs(traj.q[-1, 0] - 0.3) < 0.05)
    True
    """

    q_ref: object
    kp: object
    kd: object
    feedforward: object = None


@dataclass
class Forcing:
    """A validated joint force (see the module notes); ``step`` selects the row of ``tau``."""

    tau: np.ndarray | None = None        # (nv,) or (steps, nv)
    q_ref: np.ndarray | None = None
    kp: np.ndarray | None = None
    kd: np.ndarray | None = None
    damping: np.ndarray | None = None
    step: int = 0

    @property
    def per_step(self) -> bool:
        return self.tau is not None and self.tau.ndim == 2

    def command(self, model: Model, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``τ = τ_ff[step] + kp (q_ref ⊖ q) - kd v``."""
        tau = self.tau
        if tau is None or tau.size == 0:
            tau = np.zeros(model.nv)
        elif tau.ndim == 2:
            tau = tau[min(self.step, len(tau) - 1)]
        if self.q_ref is not None:
            tau = tau + self.kp * difference(model, q, self.q_ref) - self.kd * v
        return tau

    def total(self, tau: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``τ - D v``."""
        return tau if self.damping is None else tau - self.damping * v


def _gains(value, nv: int, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float) if np.ndim(value) else np.full(nv, float(value))
    arr = checked(arr, (nv,), name)
    if np.any(arr < 0):
        raise InputError(f"{name} must be non-negative, got {arr.tolist()}")
    return arr


def _table(value, model: Model, steps: int | None, name: str) -> np.ndarray:
    """A constant ``(nv,)`` or, with a fixed-step integrator, a ``(steps, nv)`` table."""
    arr = np.asarray(value, dtype=float) if not callable(value) else value
    if np.ndim(arr) == 2:
        if steps is None:
            raise InputError(f"{name} with one row per step needs integrator='euler' or 'rk4'")
        return checked(arr, (steps, model.nv), f"{name} (one row per step)")
    return checked(arr, (model.nv,), name)


def forcing(model: Model, tau, damping: bool, steps: int | None) -> Forcing | None:
    """``tau`` (and ``damping``) as a :class:`Forcing`; None for a callable or no force.

    ``steps`` is the number of fixed steps (None for an adaptive integrator).
    """
    if (callable(tau) and not isinstance(tau, PD)) or (tau is None and not damping):
        return None
    out = Forcing(damping=np.array(model.damping, dtype=float) if damping else None)
    if isinstance(tau, PD):
        q_ref = checked(tau.q_ref, (model.nq,), "PD q_ref")
        check_quaternions(model, q_ref, "PD q_ref")
        out.q_ref = q_ref
        out.kp = _gains(tau.kp, model.nv, "PD kp")
        out.kd = _gains(tau.kd, model.nv, "PD kd")
        if tau.feedforward is not None:
            out.tau = _table(tau.feedforward, model, steps, "PD feedforward")
    elif tau is not None:
        out.tau = _table(tau, model, steps, "tau")
    return out
