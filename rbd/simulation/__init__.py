r"""Time integration of the equations of motion, with events and impacts.

The package behind :func:`rbd.simulate`:

* :mod:`~rbd.simulation.core` — :func:`simulate`, its arguments and error reports;
* :mod:`~rbd.simulation.integrators` — one RK4 text (:func:`~rbd.simulation.integrators.rk4`)
  for models, contact coordinates and constrained systems, semi-implicit Euler, and
  :func:`~rbd.simulation.integrators.fixed_steps` for first-order systems ``y' = f(t, y)``;
* :mod:`~rbd.simulation.events` — the one event locator and the impact maps;
* :mod:`~rbd.simulation.drivers` — fixed-step and adaptive (``solve_ivp``) runs;
* :mod:`~rbd.simulation.lie` — charts of the joint manifolds (``dexp⁻¹``);
* :mod:`~rbd.simulation.trajectory` — :class:`Trajectory` and its ``.npz`` / ``.csv`` files;
* :mod:`~rbd.simulation.control` — joint forces evaluated in the run: tables per step,
  the :class:`PD` law, joint damping;
* :mod:`~rbd.simulation.rollouts` — the compiled path: whole fixed-step runs, and
  batches of them in threads, in ``rbd/_kernels/rollout.pyx``.

:func:`simulate` integrates

.. math::

    \dot q = v \;(\text{on the joint manifolds}), \qquad
    \dot v = \mathrm{ABA}(q, v, \tau(t, q, v), f^{ext}(t, q, v))

with the articulated-body algorithm (:func:`rbd.aba`) as the forward
dynamics.  Configurations always move with :func:`rbd.integrate`, so the
unit quaternions of spherical and free joints stay on the unit sphere.

.. rubric:: Integrators

``"euler"``
    Semi-implicit Euler: :math:`v_{n+1} = v_n + h\,a(q_n, v_n)`,
    :math:`q_{n+1} = q_n \oplus h\,v_{n+1}`.  First order.  Symplectic, with an
    energy error that oscillates without growing, only for a separable system
    in canonical coordinates with a constant mass matrix (a pendulum); with
    body-frame angular velocities (spherical and free joints) it is not: the
    energy of a torque-free tumbling body grows without bound.
``"rk4"``
    The classical fourth-order Runge–Kutta method on the manifold
    (Runge–Kutta–Munthe-Kaas): stage configurations are
    :math:`q_n \oplus \xi_k` through :func:`rbd.integrate`, and the final
    update moves :math:`q_n` with the weighted average of the stage velocities.
    For quaternion joints the stage velocities are first mapped into the chart
    at :math:`q_n` by the inverse differential of the exponential map,
    :math:`\dot\xi = \mathrm{dexp}^{-1}_{-\xi}(v) = v + \tfrac12[\xi, v]
    + \tfrac1{12}[\xi, [\xi, v]] + \dots`, truncated after the second bracket
    as Munthe-Kaas shows is enough for order four.  For joints whose
    configuration space is flat (revolute, prismatic, ...) this is exactly
    the textbook RK4.
``"solve_ivp"``
    An adaptive method of :func:`scipy.integrate.solve_ivp` (``method``,
    default ``"DOP853"``).  Its solver class (:class:`scipy.integrate.DOP853`,
    ...) is driven one accepted step at a time, so that events, impacts and
    chart changes happen between steps.  The state is integrated in a local
    chart :math:`q = q_c \oplus \xi` with
    :math:`\dot\xi = \mathrm{dexp}^{-1}_{-\xi}(v)` (closed forms for SO(3)
    and SE(3)).  The chart is re-centred (:math:`q_c \leftarrow q`,
    :math:`\xi \leftarrow 0`) whenever a joint's rotation in the chart
    exceeds :data:`~rbd.simulation.drivers.CHART_RADIUS`, and after every event.  Re-centring keeps
    the state a smooth function of time inside each solver run, so the
    adaptive error control sees the true error; projecting quaternions back
    onto the unit sphere after each step would be a non-smooth correction the
    error estimate never sees.

.. rubric:: Events

An event is a function ``g(t, q, v) -> float``, with optional attributes
``terminal`` (stop the simulation at the event, default False) and
``direction`` (fire only on crossings from negative to positive values when
``> 0``, from positive to negative when ``< 0``; default 0: both), as for
:func:`scipy.integrate.solve_ivp`.  After each step the sign of each ``g`` is
compared with its last non-zero sign; on a change the crossing is bracketed
to ``event_tol`` (Brent's method, then a bracket check with a bisection
fallback) on the step's dense output (``solve_ivp``) or by re-integrating the
step with a shorter step (``euler``, ``rk4``).  The recorded event time is the
end of the final bracket that lies past the crossing, so it is within
``event_tol`` after the true root.  An event that crosses zero twice inside
one step is not seen: keep ``dt`` (or ``max_step``) below the time scale of
the event function.

At an event the optional impact map is applied to the state; it may also
return a new model (for example a walker re-rooted on its new stance foot).
"""


from .control import PD
from .core import (
    EVALUATION_FLOOR,
    EVALUATIONS_PER_SECOND,
    INTEGRATORS,
    IVP_METHODS,
    PROGRESS_THRESHOLD,
    simulate,
)
from .drivers import CHART_RADIUS
from .integrators import FixedRun, fixed_steps, rk4
from .trajectory import EventRecord, Trajectory

__all__ = [
    "simulate",
    "Trajectory",
    "EventRecord",
    "INTEGRATORS",
    "IVP_METHODS",
    "CHART_RADIUS",
    "PROGRESS_THRESHOLD",
    "EVALUATION_FLOOR",
    "EVALUATIONS_PER_SECOND",
    "PD",
    "rk4",
    "fixed_steps",
    "FixedRun",
]
