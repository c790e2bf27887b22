r"""Rolling without slip: a velocity constraint with Lagrange multipliers (GL Eq. 16).

A body whose surface touches a fixed surface, frames aligned, is a
four-coordinate joint ``q = (u₁, v₁, u₂, v₂)``: the contact point on the
ground and on the body (GL Eq. 15).  Rolling without slip adds a condition
no choice of coordinates removes.  The material point of the body at the
contact must not move, i.e. the contact point must travel equally fast on
both surfaces, measured in the common contact frame (GL Eq. 16):

.. math::

    R_1^T\dot{\mathbf t}_1 = R_2^T\dot{\mathbf t}_2
    \quad\Longleftrightarrow\quad
    P(q)\,\dot q = 0,\qquad
    P = \Big[R_1^T\frac{\partial\mathbf t_1}{\partial(u_1, v_1)}\;\;
             -R_2^T\frac{\partial\mathbf t_2}{\partial(u_2, v_2)}\Big],

with :math:`\mathbf t_i, R_i` the contact point and frame of surface ``i``
(surface 2 in the body's own coordinates).  Only the two tangential rows
count: both velocities lie in the tangent plane.

The constrained equations of motion are the KKT system

.. math::

    \begin{bmatrix} M & P^T \\ P & 0 \end{bmatrix}
    \begin{bmatrix} \ddot q \\ -\lambda \end{bmatrix} =
    \begin{bmatrix} \tau - c \\ -\dot P\dot q - \beta P\dot q \end{bmatrix},

with ``M`` and ``c`` from any registered algorithm and :math:`\dot P\dot q`
derived symbolically.  The constraint is on velocities only, so only the
velocity error :math:`e = P\dot q` can drift.  The term :math:`-\beta e`
(Baumgarte's stabilization at velocity level) turns the constraint's second
derivative into :math:`\dot e = -\beta e`: any drift decays at rate
:math:`\beta`.  There is no position-level error to correct, which is why
the position term of Baumgarte's scheme is absent.
"""

from __future__ import annotations

import numpy as np
import sympy

from .. import algorithms, geometry
from ..constraints.kinds import Rolling
from ..errors import InputError, ModelError, SimulationError
from ..model import Model
from .frames import _coordinates, inverse, surface_frame
from .joint import SymbolicJoint
from .program import Program

__all__ = ["RollingContact", "kkt_forward_dynamics", "ellipsoid_in_bowl", "simulate_rolling"]

#: Default Baumgarte rate (1/s) for the velocity constraint.
BETA = 20.0


class RollingContact:
    """A body rolling without slip on a fixed surface (GL Eqs. 15 and 16).

    Parameters
    ----------
    ground : rbd.geometry.Surface
        The fixed surface (world coordinates).
    surface : rbd.geometry.Surface
        The rolling body's surface (body coordinates).
    ground_outward : bool
        ``True``: the body rolls on the outside of ``ground`` (on top of a
        hill); ``False``: on the inside (in a bowl).
    neutral : (4,) sequence
        ``(u₁, v₁, u₂, v₂)`` at the neutral configuration.

    Attributes
    ----------
    joint : rbd.symbolic.joint.SymbolicJoint
        The four-coordinate contact joint, ``G = S₁ S₂⁻¹`` (GL (15)).
    """

    def __init__(self, ground, surface, ground_outward: bool = True,
                 neutral=(0.0, 0.0, 0.0, 0.0)):
        u1, v1, u2, v2 = q = _coordinates("u1 v1 u2 v2", 4)
        S1 = surface_frame(ground, u1, v1, outward=ground_outward)
        # the body's frame with its normal pointing into the body: aligned with the ground's
        # normal, the two bodies lie on opposite sides of the contact plane
        S2 = surface_frame(surface, u2, v2, outward=False)
        self.joint = SymbolicJoint(S1 * inverse(S2), list(q), neutral=neutral,
                                   name="rolling contact")                 # GL (15)
        P = sympy.zeros(2, 4)
        P[:, :2] = (S1[:3, :3].T * S1[:3, 3].jacobian([u1, v1]))[:2, :]    # GL (16)
        P[:, 2:] = -(S2[:3, :3].T * S2[:3, 3].jacobian([u2, v2]))[:2, :]  # GL (16)
        qd = sympy.symbols("qd0:4", real=True)
        P_dot_qd = sum((P.diff(qk) * qdk for qk, qdk in zip(q, qd, strict=True)),
                       sympy.zeros(2, 4)) * sympy.Matrix(qd)
        prog = Program([("q", 4), ("qd", 4)])
        sub = dict(zip(q, prog["q"], strict=True)) | dict(zip(qd, prog["qd"], strict=True))
        values = prog.bind_all([e.xreplace(sub) for e in [*P, *P_dot_qd]])
        prog.set_output("P", values[:8])
        prog.set_output("Pdq", values[8:])
        self._P = prog.only(("P",)).restricted(("q",)).python_function("P")
        self._P_dot_qd = prog.only(("Pdq",)).python_function("P_dot_qd")
        self.P_expr, self.P_dot_qd_expr = P, P_dot_qd

    def constraint(self, model: Model, name: str = "") -> Rolling:
        """This contact's rows as a constraint kind of :mod:`rbd.constraints`.

        The :class:`rbd.constraints.Rolling` kind on the model's joint that is
        :attr:`joint`, with ``P`` and ``Ṗq̇`` of this contact: then
        :func:`rbd.constrained_dynamics` (any method) and
        :func:`rbd.impulse_dynamics` enforce GL (16), and
        ``baumgarte=(0, beta)`` is the stabilization of
        :func:`kkt_forward_dynamics`.
        """
        index = next((i for i, body in enumerate(model.bodies) if body.joint is self.joint),
                     None)
        if index is None:
            raise ModelError("the model has no body on this rolling contact's joint")
        return Rolling(model.bodies[index].joint_name, self.P, self.P_dot_qd, 2, name=name)

    def P(self, q) -> np.ndarray:
        """The constraint matrix, shape ``(2, 4)``: ``P(q) q̇ = 0``."""
        (P,) = self._P(np.asarray(q, dtype=float).tolist())
        return np.array(P).reshape(2, 4)

    def P_dot_qd(self, q, qd) -> np.ndarray:
        """``Ṗ q̇``, shape ``(2,)``."""
        (out,) = self._P_dot_qd(np.asarray(q, dtype=float).tolist(),
                                np.asarray(qd, dtype=float).tolist())
        return np.array(out)


def _slice(model: Model, contact: RollingContact) -> slice:
    for i, body in enumerate(model.bodies):
        if body.joint is contact.joint:
            return model.v_index(i)
    raise ModelError("the model has no body on this rolling contact's joint")


def kkt_forward_dynamics(model: Model, contacts, q, qd, tau, beta: float = BETA,
                         backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and multipliers of a model with rolling constraints (KKT system).

    Parameters
    ----------
    model : Model
    contacts : RollingContact or sequence of them
        Each must be the joint of one body of ``model``.
    q, qd, tau : (nv,) array_like
    beta : float
        Baumgarte rate (1/s) pulling the velocity error ``P q̇`` to zero.
    backend : {None, "kernel", "reference"}
        For ``M`` (CRBA) and ``c`` (RNEA).

    Returns
    -------
    qdd : (nv,) ndarray
    lam : (2 k,) ndarray
        Constraint forces (the multipliers), two per contact.
    """
    contacts = [contacts] if isinstance(contacts, RollingContact) else list(contacts)
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    if beta < 0:
        raise InputError(f"beta must be non-negative, got {beta}")
    n, k = model.nv, 2 * len(contacts)
    M = algorithms.crba(model, q, backend=backend)
    c = algorithms.nonlinear_effects(model, q, qd, backend=backend)
    P = np.zeros((k, n))
    rhs = np.zeros(k)
    for j, contact in enumerate(contacts):
        sl = _slice(model, contact)
        P[2 * j:2 * j + 2, sl] = contact.P(q[sl])
        rhs[2 * j:2 * j + 2] = -contact.P_dot_qd(q[sl], qd[sl])
    rhs -= beta * (P @ qd)
    K = np.block([[M, P.T], [P, np.zeros((k, k))]])
    x = np.linalg.solve(K, np.concatenate([tau - c, rhs]))
    return x[:n], -x[n:]


def simulate_rolling(model: Model, contacts, q0, qd0, duration: float, dt: float,
                     beta: float = BETA, backend: str | None = None):
    """RK4 on the KKT dynamics; returns ``(t, q, qd)`` arrays (``q`` is flat: vector space).

    The steps are those of :func:`rbd.simulation.fixed_steps` (samples at ``k dt``).
    A state that becomes non-finite raises :class:`~rbd.SimulationError`.
    """
    from ..simulation import fixed_steps
    from ..simulation.dynamics import StopError, finite

    def f(t, x):
        if not finite(x):
            raise StopError("diverged", t, "a stage state became non-finite")
        q, qd = x[:model.nq], x[model.nq:]
        qdd, _ = kkt_forward_dynamics(model, contacts, q, qd, np.zeros(model.nv), beta,
                                      backend)
        return np.concatenate([qd, qdd])

    x0 = np.concatenate([np.asarray(q0, float), np.asarray(qd0, float)])
    run = fixed_steps(f, x0, duration, dt)
    X = np.array(run.y)
    t, q, qd = np.array(run.t), X[:, :model.nq], X[:, model.nq:]
    if run.failure is not None:
        raise SimulationError(f"the rolling simulation diverged at t = {run.t[-1]:.6g} s "
                              f"({run.failure}); try a smaller dt or beta. The samples up to "
                              "there are in this error's .trajectory as (t, q, qd).",
                              (t, q, qd)) from run.failure
    return t, q, qd


def ellipsoid_in_bowl(mass: float = 1.0) -> tuple[Model, RollingContact]:
    """An ellipsoidal ball rolling inside an ellipsoidal bowl (GL Fig. 5e).

    The bowl is an ellipsoid of semi-axes (1.0, 0.8, 0.6) turned so that its
    lowest point is the chart point ``(u, v) = (0, 0)``; the ball has semi-axes
    (0.2, 0.15, 0.12).  Returns the model (one body on the contact joint) and
    the contact, whose constraint :func:`kkt_forward_dynamics` enforces.
    """
    down = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # x axis -> -z
    bowl = geometry.Ellipsoid(1.0, 0.8, 0.6).transformed(down, (0.0, 0.0, 1.0))
    ball = geometry.Ellipsoid(0.2, 0.15, 0.12)
    contact = RollingContact(bowl, ball, ground_outward=False, neutral=(0.0, 0.0, 0.0, 0.0))
    a, b, c = 0.2, 0.15, 0.12
    inertia = (mass, np.zeros(3), mass / 5 * np.diag([b * b + c * c, a * a + c * c,
                                                      a * a + b * b]))
    model = Model(name="ellipsoid_in_bowl")
    model.add_body(-1, contact.joint, None, inertia, "ball", "contact")
    return model, contact
