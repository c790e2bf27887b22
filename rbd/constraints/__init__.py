"""Constraints on a model: bilateral kinds (anchors, couplings) and their dynamics.

``from rbd import constraints as rc``; the kinds are :class:`PointAnchor`,
:class:`FrameAnchor`, :class:`JointCoupling` and the velocity constraint
:class:`Rolling` (:mod:`rbd.constraints.kinds`).
A model carries its own in :attr:`rbd.Model.constraints`; the dynamics are
:func:`rbd.constrained_dynamics`, :func:`rbd.impulse_dynamics`,
:func:`rbd.delassus`, :func:`rbd.constraint_jacobian` and :func:`rbd.assemble`.
"""

from .kinds import Constraint, FrameAnchor, JointCoupling, PointAnchor, Rolling

__all__ = ["Constraint", "PointAnchor", "FrameAnchor", "JointCoupling", "Rolling"]
