r"""The passive compass-gait biped: heel strikes, Poincaré map, limit cycle.

The walker of Stępień, Polański & Wojciechowski §8 (after Goswami et al. and
Hiskens): two straight legs of length ``l`` joined at a hip, point feet, a
point mass ``m_h`` at the hip and a point mass ``m`` on each leg, walking
down a slope of angle γ with no actuation at all.

The model is an ordinary :class:`rbd.Model` of two bodies:

* the *stance* leg, pinned to the ground at its foot by a revolute joint
  (the paper's B3: resting contact does not slip), carrying the hip mass;
* the *swing* leg, hinged at the hip.

Both hinges turn about the world's ``-y`` axis, so the joint coordinates are
the paper's (SPW Fig. 8, Table 1): ``q_st`` is the stance leg's angle from the
vertical, positive when the leg leans back (the hip behind the foot, uphill),
and ``q_sw`` is the hip angle, the swing leg's angle relative to the stance
leg.  The world keeps ``z`` vertical and gravity ``(0, 0, -g)``; the ground is
the line through the stance foot that falls by γ in the walking direction
``+x``.  (Gravity stays vertical, rather than the ground horizontal, so the
leg angles are angles from the vertical, as in the paper.)

One step (SPW §8.4–8.5):

1. *Swing phase*: forward dynamics by :func:`rbd.aba` on the current model,
   integrated by :func:`rbd.simulate` (``solve_ivp``, DOP853), until the swing
   foot reaches the ground (an event of the simulation).  Scuffing — the swing
   foot dipping below the ground while the legs pass each other near
   mid-stance (B2) — is ignored: heel strike only counts with the swing leg
   ahead of the stance leg by at least :data:`SCUFF_ANGLE`.
2. *Heel strike*: the impact map of that event, which switches the model.
   The tree is re-rooted at the new stance foot
   (:func:`rbd.topology.reroot`, a revolute top joint) — the legs exchange
   roles (B4) and the configuration is kept.
3. *Impact*: a plastic, slipless collision (B1), an impulse that stops the
   landing foot (:func:`rbd.impulse_dynamics` with a
   :class:`rbd.constraints.PointAnchor` to the world) on the walker freed at
   that foot, so that no impulse acts at the foot that leaves the ground.
   Eliminating the impulse gives SPW (23): the whole walker's angular
   momentum about the new contact point and that of the leg leaving the
   ground about the hip are conserved; in the post-impact coordinates they
   are the generalized momenta :math:`H(q)\,\dot q^+`.

The Poincaré section is the start of a step (just after heel strike); on it
``q_sw = -2 q_st - 2γ`` (both feet on the ground), so the map acts on
``(q_st, q̇_st, q̇_sw)``.  :func:`find_limit_cycle` solves ``P(x) = x`` by
Newton's method with a finite-difference Jacobian, whose eigenvalues are the
Floquet multipliers of the gait; :func:`section_jacobian` computes the same
Jacobian from the variational equations (:mod:`rbd.walker.floquet`), and
:class:`LimitCycle` reports both sets of multipliers.

References
----------
J. Stępień, A. Polański and K. Wojciechowski, "A general on-the-fly
algorithm for modifying the kinematic tree hierarchy", *Int. J. Appl. Math.
Comput. Sci.* 22(1), 2012, §8 and Table 1.
A. Goswami, B. Thuilot and B. Espiau, "Compass-like biped robot, Part I",
INRIA RR-2996, 1996.  I. Hiskens, "Stability of hybrid system limit cycles:
application to the compass gait biped robot", CDC 2001.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..algorithms import aba, forward_kinematics, impulse_dynamics, jacobian
from ..constraints.kinds import PointAnchor
from ..errors import InputError, SimulationError
from ..joints import Revolute
from ..model import Model
from ..spatial import mcI, plux_parts
from ..topology import reroot
from .floquet import ALGEBRAIC_STEP, central_jacobian, hybrid_jacobian  # noqa: F401

__all__ = ["PAPER_PARAMETERS", "PAPER_STATE", "WalkerParameters", "Step", "LimitCycle", "Basin",
           "FallError", "compass_gait", "stance_leg", "swing_leg", "frame_position",
           "foot_clearance", "leg_angles", "angular_momentum", "swing_dynamics", "on_section",
           "basin_cell", "heel_strike", "step", "walk", "poincare_map", "section_jacobian",
           "find_limit_cycle", "basin_of_attraction"]

#: The hinge axis of both joints, in world coordinates: angles grow as a leg leans back.
AXIS = np.array([0.0, -1.0, 0.0])

#: Heel strike counts only with the swing leg this far (rad) ahead of the stance leg (B2).
SCUFF_ANGLE = 0.1

#: The walker has fallen when the hip is lower than this fraction of the leg length.
FALL_HEIGHT = 0.5

#: Longest step (in units of sqrt(l / g)) before the walker is declared stuck.
MAX_STEP_TIME = 10.0

#: solve_ivp tolerances of the swing phase.
RTOL, ATOL = 1e-10, 1e-12

#: Time tolerance (s) of heel-strike location, far below what Jacobians of P can see.
EVENT_TOL = 1e-13


@dataclass(frozen=True)
class WalkerParameters:
    """Physical parameters of the compass gait (SPW Table 1).

    ``mass_position`` is the distance of each leg's point mass from the hip
    (the paper's ``d``).  The paper's walker has ``d = l/2``, where measuring
    from the hip or from the foot (Goswami's ``b`` or ``a``) is the same.
    """

    slope: float = 0.0524
    hip_mass: float = 2.0
    leg_mass: float = 1.0
    leg_length: float = 1.0
    mass_position: float = 0.5
    gravity: float = 9.81

    def __post_init__(self):
        for name in ("hip_mass", "leg_mass", "leg_length", "gravity"):
            value = getattr(self, name)
            if not np.isfinite(value) or value <= 0:
                raise InputError(f"{name} must be a positive number, got {value!r}")
        if not np.isfinite(self.slope) or not 0 <= self.slope < 0.5:
            raise InputError(f"slope must be in [0, 0.5) rad, got {self.slope!r}")
        if not 0 <= self.mass_position <= self.leg_length:
            raise InputError(f"mass_position must lie on the leg, in [0, {self.leg_length}], "
                             f"got {self.mass_position!r}")

    @property
    def normal(self) -> np.ndarray:
        """Unit normal of the ground (world coordinates)."""
        return np.array([np.sin(self.slope), 0.0, np.cos(self.slope)])

    @property
    def downhill(self) -> np.ndarray:
        """Unit vector along the ground in the walking direction."""
        return np.array([np.cos(self.slope), 0.0, -np.sin(self.slope)])

    @property
    def time_scale(self) -> float:
        return float(np.sqrt(self.leg_length / self.gravity))


#: The walker of SPW Table 1.
PAPER_PARAMETERS = WalkerParameters()

#: The initial state of SPW Table 1 (from Hiskens 2001): ``(q_st, q_sw, q̇_st, q̇_sw)``.
PAPER_STATE = np.array([-0.3236, 0.5424, -1.4939, -0.3117])


class FallError(RuntimeError):
    """The walker fell (or stopped) before the next heel strike."""


# --- the model -----------------------------------------------------------------------------
def compass_gait(params: WalkerParameters = PAPER_PARAMETERS, foot=(0.0, 0.0, 0.0)) -> Model:
    """The compass-gait walker as an :class:`rbd.Model` (SPW Fig. 8).

    Body ``leg1`` stands on its foot at ``foot`` (revolute joint ``stance``);
    body ``leg2`` hangs from the hip (revolute joint ``hip``).  At ``q = 0`` both
    legs are vertical, ``leg1`` with its hip above its foot.  Frames ``hip``,
    ``foot1`` and ``foot2`` mark the hip and the feet.
    """
    l, d = params.leg_length, params.mass_position
    z = np.array([0.0, 0.0, 1.0])
    zero = np.zeros((3, 3))
    model = Model(gravity=(0.0, 0.0, -params.gravity), name="compass gait")
    leg1_inertia = mcI(params.hip_mass, l * z, zero) + mcI(params.leg_mass, (l - d) * z, zero)
    leg1 = model.add_body(-1, Revolute(AXIS), (np.eye(3), np.asarray(foot, dtype=float)),
                          leg1_inertia, "leg1", "stance")
    model.add_body(leg1, Revolute(AXIS), (np.eye(3), l * z),
                   mcI(params.leg_mass, -d * z, zero), "leg2", "hip")
    model.add_frame("foot1", "leg1", (np.eye(3), np.zeros(3)))
    model.add_frame("hip", "leg1", (np.eye(3), l * z))
    model.add_frame("foot2", "leg2", (np.eye(3), -l * z))
    return model


def stance_leg(model: Model) -> str:
    """Name of the leg pinned to the ground (the root of the tree)."""
    return model.body_names[0]


def swing_leg(model: Model) -> str:
    """Name of the leg hanging from the hip."""
    return model.body_names[1]


def _foot(leg: str) -> str:
    return "foot" + leg[-1]


def frame_position(model: Model, q, frame: str) -> np.ndarray:
    """World position of the origin of a named frame."""
    return _frame_positions(model, (frame,))(q)[0]


def _frame_positions(model: Model, frames: Sequence[str]) -> Callable:
    """``q -> (len(frames), 3)`` world positions of frame origins, one kinematics pass."""
    where = [(model.frames[f].body, plux_parts(model.frames[f].X)[1]) for f in frames]

    def positions(q) -> np.ndarray:
        T = forward_kinematics(model, q)
        return np.array([T[i, :3, :3] @ r + T[i, :3, 3] for i, r in where])

    return positions


def foot_clearance(model: Model, q, params: WalkerParameters = PAPER_PARAMETERS) -> float:
    """Height of the swing foot above the ground (along the ground normal)."""
    stance, swing = _frame_positions(model, (_foot(stance_leg(model)),
                                             _foot(swing_leg(model))))(q)
    return float(params.normal @ (swing - stance))


def leg_angles(model: Model, q, v) -> dict[str, tuple[float, float]]:
    """Each leg's angle from the vertical (positive leaning back) and its rate."""
    T = forward_kinematics(model, q)
    out = {}
    for i, name in enumerate(model.body_names):
        R = T[i, :3, :3]
        omega = jacobian(model, q, i)[:3] @ v
        out[name] = (float(np.arctan2(-R[0, 2], R[2, 2])), float(AXIS @ omega))
    return out


def angular_momentum(model: Model, q, v, point, bodies: Sequence[str] | None = None
                     ) -> np.ndarray:
    r"""Angular momentum about a world ``point`` of some bodies (all by default).

    :math:`L = \sum_i m_i (c_i - o) \times \dot c_i + R_i I_{c,i} R_i^T \omega_i`, with
    :math:`[\omega_i; \dot c_i] = J_i(q)\, v` the Jacobian at body ``i``'s centre of mass.
    """
    T = forward_kinematics(model, q)
    L = np.zeros(3)
    for i, body in enumerate(model.bodies):
        if bodies is not None and body.name not in bodies:
            continue
        twist = jacobian(model, q, i, body.com) @ v
        c = T[i, :3, :3] @ body.com + T[i, :3, 3]
        R = T[i, :3, :3]
        L += body.mass * np.cross(c - point, twist[3:]) + R @ body.I_com @ R.T @ twist[:3]
    return L


# --- heel strike (SPW §8.5) -----------------------------------------------------------------
def heel_strike(model: Model, q, v, params: WalkerParameters = PAPER_PARAMETERS
                ) -> tuple[Model, np.ndarray, np.ndarray]:
    r"""Exchange the legs and apply the impact: the post-impact model and state.

    The impact is a plastic impulse (B1) posed on the constraint layer:

    1. the walker is re-rooted at the swing foot with a free top joint
       (:func:`rbd.topology.reroot`), which releases the old stance foot
       and keeps the state (SPW A3);
    2. :func:`rbd.impulse_dynamics` stops the landing foot with a
       :class:`rbd.constraints.PointAnchor` to the world at ``restitution=0``:
       :math:`M(\dot q^+ - \dot q^-) = J^T\Lambda`, :math:`J\dot q^+ = 0`;
    3. the free top joint becomes a revolute one about the hinge axis, which
       carries all of the post-impact motion (the foot is at rest).

    Eliminating :math:`\Lambda` gives SPW (23): in the post-impact coordinates
    :math:`H(q)\dot q^+ = [L_{tot}^-, L_{sw}^-]`, the whole walker's angular
    momentum about the new stance foot and that of the leg leaving the ground
    about the hip, both conserved because no impulse acts at the old foot.
    """
    old_swing = swing_leg(model)
    foot = frame_position(model, q, _foot(old_swing))
    free, q_free, v_free = reroot(model, q, v, old_swing, foot, "free")         # SPW A3
    landing = PointAnchor(_foot(old_swing), None, np.zeros(3), foot)
    v_plus = impulse_dynamics(free, q_free, v_free, [landing]).v               # B1, SPW (23)
    return reroot(free, q_free, v_plus, old_swing, foot, "revolute", axis=AXIS)


# --- one step ---------------------------------------------------------------------------------
@dataclass
class Step:
    """One step: the swing phase from ``t = 0`` to heel strike, and the impact."""

    model: Model                 # the model of the swing phase (stance leg at the root)
    t: np.ndarray                # (N,) sample times of the swing phase
    x: np.ndarray                # (N, 4) states (q_st, q_sw, q̇_st, q̇_sw) of ``model``
    duration: float              # time to heel strike
    x_minus: np.ndarray          # (4,) pre-impact state, coordinates of ``model``
    next_model: Model            # the model after the legs exchange roles
    x_plus: np.ndarray           # (4,) post-impact state, coordinates of ``next_model``
    length: float                # distance between the feet at heel strike


def _events(model: Model, params: WalkerParameters) -> list[Callable]:
    """Heel strike and fall as event functions ``g(t, q, v)`` of :func:`rbd.simulate`."""
    positions = _frame_positions(
        model, ("hip", _foot(stance_leg(model)), _foot(swing_leg(model))))
    n = params.normal

    def strike(t, q, v):
        # clearance of the swing foot, masked while the legs pass each other (B2)
        _, stance, swing = positions(q)
        return max(n @ (swing - stance), SCUFF_ANGLE - q[1])

    def fall(t, q, v):
        hip, stance, _ = positions(q)
        return n @ (hip - stance) - FALL_HEIGHT * params.leg_length

    for event in (strike, fall):
        event.terminal, event.direction = True, -1
    return [strike, fall]


def swing_dynamics(model: Model) -> Callable:
    """The first-order system ``ẋ = [q̇; ABA(q, q̇, 0)]`` of the swing phase."""
    tau = np.zeros(model.nv)

    def f(t, x):
        return np.concatenate([x[2:], aba(model, x[:2], x[2:], tau)])

    return f


def _swing(model: Model, x: np.ndarray, duration: float, dt: float, **options):
    """The swing phase from ``x`` by :func:`rbd.simulate` (DOP853, the walker's tolerances)."""
    from ..simulation import simulate

    try:
        return simulate(model, x[:2], x[2:], duration, dt, integrator="solve_ivp",
                        method="DOP853", rtol=RTOL, atol=ATOL, progress=False, **options)
    except SimulationError as exc:
        raise FallError(f"the walker fell: the swing phase could not be integrated ({exc})"
                        ) from exc


def step(model: Model, x, params: WalkerParameters = PAPER_PARAMETERS, samples: int = 0
         ) -> Step:
    """Integrate one step from state ``x = (q_st, q_sw, q̇_st, q̇_sw)`` of ``model``.

    The swing phase ends at the heel-strike event, whose impact map
    (:func:`heel_strike`) switches to the model with the legs exchanged.
    ``samples > 0`` also records that many equally spaced states of the swing
    phase (for plots; a second run to the strike).  Raises :class:`FallError`
    if the hip drops below ``FALL_HEIGHT * l`` or no heel strike comes within
    ``MAX_STEP_TIME``.
    """
    x = np.asarray(x, dtype=float)
    t_max = MAX_STEP_TIME * params.time_scale
    after: list[Model] = []

    def impact(q, v):
        new_model, q_plus, v_plus = heel_strike(model, q, v, params)
        after.append(new_model)
        return new_model, q_plus, v_plus

    traj = _swing(model, x, t_max, t_max, events=_events(model, params), impact={0: impact},
                  event_tol=EVENT_TOL)
    if not after:
        why = "the hip dropped" if traj.events else f"no heel strike within {t_max:.3g} s"
        raise FallError(f"the walker fell: {why}")
    strike = traj.events[0]
    x_minus = np.concatenate([strike.q, strike.v])
    feet = [frame_position(model, strike.q, _foot(leg)) for leg in model.body_names]
    t, states = np.zeros(0), np.zeros((0, 4))
    if samples:
        run = _swing(model, x, strike.t, strike.t / max(samples - 1, 1))
        t, states = run.t[:samples], np.hstack([run.q, run.v])[:samples]
    return Step(model, t, states, strike.t, x_minus, after[0],
                np.concatenate([traj.q[-1], traj.v[-1]]), float(np.linalg.norm(feet[1] - feet[0])))


def walk(x0, steps: int, params: WalkerParameters = PAPER_PARAMETERS, samples: int = 0,
         model: Model | None = None) -> list[Step]:
    """Take ``steps`` steps from the post-impact state ``x0``; the legs swap every step.

    Stops early (returning the steps taken) if the walker falls.
    """
    model = compass_gait(params) if model is None else model
    out: list[Step] = []
    x = np.asarray(x0, dtype=float)
    for _ in range(steps):
        try:
            s = step(model, x, params, samples)
        except FallError:
            break
        out.append(s)
        model, x = s.next_model, s.x_plus
    return out


# --- the Poincaré map and its fixed point ----------------------------------------------------
def on_section(z, params: WalkerParameters = PAPER_PARAMETERS) -> np.ndarray:
    """Full state from section coordinates ``z = (q_st, q̇_st, q̇_sw)``: both feet down."""
    z = np.asarray(z, dtype=float)
    return np.array([z[0], -2.0 * z[0] - 2.0 * params.slope, z[1], z[2]])


@functools.lru_cache(maxsize=8)
def _standing_model(params: WalkerParameters) -> Model:
    """The walker on ``leg1`` at the origin, built (and compiled) once per parameter set."""
    return compass_gait(params)


def poincare_map(x, params: WalkerParameters = PAPER_PARAMETERS) -> np.ndarray:
    """Post-impact state after one step from the post-impact state ``x``."""
    return step(_standing_model(params), x, params).x_plus


def _section_map(z, params):
    x = poincare_map(on_section(z, params), params)
    return x[[0, 2, 3]]


def section_jacobian(z, params: WalkerParameters | None = None) -> np.ndarray:
    """Jacobian of the section map ``(q_st, q̇_st, q̇_sw) ↦ P`` from the variational equations:
    ``x₀ = E z`` (both feet down), one step (:func:`rbd.walker.floquet.hybrid_jacobian`).

    Examples
    --------
    >>> from rbd import walker
    >>> cycle = walker.find_limit_cycle()
    >>> J = walker.section_jacobian(cycle.post_impact[[0, 2, 3]])
    >>> bool(abs(J - cycle.jacobian).max() < 1e-4)
    True
    """
    params = PAPER_PARAMETERS if params is None else params
    model, x0 = _standing_model(params), on_section(np.asarray(z, dtype=float), params)
    s = step(model, x0, params)

    def height(x):                                   # the strike event's active branch
        return np.array([foot_clearance(model, x[:2], params)])

    def impact(x):
        _, q_plus, v_plus = heel_strike(model, x[:2], x[2:], params)
        return np.concatenate([q_plus, v_plus])

    E = np.array([[1.0, 0, 0], [-2.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])  # x₀ = E z
    return (hybrid_jacobian(model, x0, s.duration, s.x_minus, swing_dynamics(model), height,
                            impact, RTOL, ATOL, FallError) @ E)[[0, 2, 3]]


def _section_jacobian(z, params, h=1e-5):
    """Central differences of the section map (3 × 3): smooth to ~1e-10 (``rtol = 1e-10``),
    so ``h`` from 3e-5 to 1e-6 give the same multipliers to ~1e-7; 1e-5 is mid-plateau."""
    return central_jacobian(lambda y: _section_map(y, params), np.asarray(z, dtype=float), h)


@dataclass
class LimitCycle:
    """A period-one gait: fixed point of the Poincaré map and its stability."""

    fixed_point: np.ndarray      # (4,) (q_st, q_sw, q̇_st, q̇_sw) at heel strike (SPW Table 1)
    post_impact: np.ndarray      # (4,) the state just after heel strike: a step's initial state
    step_period: float           # seconds
    step_length: float           # metres between the feet at heel strike
    multipliers: np.ndarray      # (3,) eigenvalues of the section map's Jacobian
    jacobian: np.ndarray         # (3, 3) Jacobian of the map on (q_st, q̇_st, q̇_sw)
    params: WalkerParameters
    residual: float              # |P(x) - x| at the fixed point
    iterations: int
    #: (3, 3) the same Jacobian by :func:`section_jacobian` (variational equations)
    variational_jacobian: np.ndarray | None = None
    #: (3,) its eigenvalues, ordered like ``multipliers``
    variational_multipliers: np.ndarray | None = None

    @property
    def stable(self) -> bool:
        return bool(np.max(np.abs(self.multipliers)) < 1.0)

    def __str__(self) -> str:
        x, xm = self.post_impact, self.fixed_point
        fmt = ", ".join
        return "\n".join([
            "compass-gait limit cycle "
            f"(slope {self.params.slope:g} rad, m_h {self.params.hip_mass:g} kg, "
            f"m {self.params.leg_mass:g} kg, l {self.params.leg_length:g} m, "
            f"d {self.params.mass_position:g} m)",
            "  fixed point at heel strike (q_st, q_sw, dq_st, dq_sw): "
            + fmt(f"{a:+.6f}" for a in xm),
            "  after the impact           (q_st, q_sw, dq_st, dq_sw): "
            + fmt(f"{a:+.6f}" for a in x),
            f"  step period {self.step_period:.6f} s, step length {self.step_length:.6f} m",
            "  Floquet multipliers: " + fmt(f"{m:.6f}" for m in self.multipliers)
            + f"  (max |λ| = {np.max(np.abs(self.multipliers)):.4f}, "
            + ("stable)" if self.stable else "unstable)"),
            *(["  from the variational equations: "
               + fmt(f"{m:.6f}" for m in self.variational_multipliers)]
              if self.variational_multipliers is not None else []),
            f"  Newton iterations {self.iterations}, residual {self.residual:.2e}",
        ])


def _guess(params: WalkerParameters) -> np.ndarray:
    """A starting point: the impact applied to the paper's pre-impact state, on the section."""
    model = compass_gait(params)
    q = np.array([PAPER_STATE[0], -2 * PAPER_STATE[0] - 2 * params.slope])
    _, q_plus, v_plus = heel_strike(model, q, PAPER_STATE[2:], params)
    return np.array([q_plus[0], v_plus[0], v_plus[1]])


def find_limit_cycle(slope: float = 0.0524, hip_mass: float = 2.0, leg_mass: float = 1.0,
                     leg_length: float = 1.0, mass_position: float = 0.5,
                     gravity: float = 9.81, guess=None, tol: float = 1e-10,
                     max_iterations: int = 25) -> LimitCycle:
    """The period-one gait by Newton shooting on the Poincaré map.

    Parameters
    ----------
    slope, hip_mass, leg_mass, leg_length, mass_position, gravity : float
        The walker (SPW Table 1 by default; ``mass_position`` from the hip).
    guess : (4,) array_like, optional
        A post-impact state near the cycle (default: the impact applied to
        the paper's Table 1 state).
    tol : float
        Stop when ``|P(x) - x| < tol``.

    Returns
    -------
    LimitCycle
        ``fixed_point`` (the state at heel strike, before the impact: the
        section of SPW Table 1), ``post_impact`` (after it), ``step_period`` (s),
        ``step_length`` (m) and the Floquet ``multipliers``.

    Raises
    ------
    FallError
        If a step from an iterate falls.
    RuntimeError
        If Newton's method does not converge.

    Examples
    --------
    >>> from rbd import walker
    >>> cycle = walker.find_limit_cycle()
    >>> round(cycle.step_period, 3), round(cycle.step_length, 3), cycle.stable
    (0.734, 0.536, True)
    >>> cycle.fixed_point.round(3)         # SPW Table 1: -0.3236, 0.5424, -1.4939, -0.3117
    array([-0.323,  0.542, -1.495, -0.312])
    """
    params = WalkerParameters(slope, hip_mass, leg_mass, leg_length, mass_position, gravity)
    z = _guess(params) if guess is None else np.asarray(guess, dtype=float)[[0, 2, 3]]
    iteration = 0
    for iteration in range(1, max_iterations + 1):  # noqa: B007
        r = _section_map(z, params) - z
        J = _section_jacobian(z, params)
        z = z - np.linalg.solve(J - np.eye(3), r)
        if np.linalg.norm(r) < tol * 1e3:
            r = _section_map(z, params) - z
            if np.linalg.norm(r) < tol:
                break
    else:
        raise RuntimeError(f"no limit cycle found: |P(x) - x| = {np.linalg.norm(r):.3g} after "
                           f"{max_iterations} Newton iterations")
    J = _section_jacobian(z, params)
    multipliers = np.linalg.eigvals(J)
    multipliers = multipliers[np.argsort(-np.abs(multipliers))]
    J_var = section_jacobian(z, params)
    by_variation = np.linalg.eigvals(J_var)
    by_variation = by_variation[np.argsort(-np.abs(by_variation))]
    s = step(_standing_model(params), on_section(z, params), params)
    return LimitCycle(s.x_minus, on_section(z, params), s.duration, s.length, multipliers, J,
                      params, float(np.linalg.norm(r)), iteration, J_var, by_variation)


# --- basin of attraction (Dask) --------------------------------------------------------------
@dataclass
class Basin:
    """Outcome of a grid of initial states.

    ``steps_taken[i, j]`` is the number of steps walked from
    ``(stance_angles[i], swing_rates[j])`` (``steps`` if it did not fall);
    ``converged[i, j]`` says the state ended within ``tolerance`` of the cycle.
    """

    stance_angles: np.ndarray
    swing_rates: np.ndarray
    steps: int
    steps_taken: np.ndarray
    distance: np.ndarray
    converged: np.ndarray
    cycle: LimitCycle
    tolerance: float = 1e-3
    meta: dict = field(default_factory=dict)


def basin_cell(stance_angle: float, swing_rate: float, stance_rate: float, steps: int,
               fixed_point: Sequence[float], params: WalkerParameters) -> tuple[int, float]:
    """Walk ``steps`` steps from one initial state; return (steps taken, final distance)."""
    x0 = on_section([stance_angle, stance_rate, swing_rate], params)
    taken = walk(x0, steps, params, model=_standing_model(params))
    if not taken:
        return 0, float("inf")
    distance = float(np.linalg.norm(taken[-1].x_plus - np.asarray(fixed_point)))
    return len(taken), distance


def basin_of_attraction(stance_angles: Sequence[float], swing_rates: Sequence[float],
                        steps: int = 10, cycle: LimitCycle | None = None,
                        tolerance: float = 1e-3, scheduler=None, progress: bool = True,
                        n_workers: int | None = None) -> Basin:
    """Sweep a grid of post-impact states through :func:`rbd.sweeps.sweep` and classify each.

    Each cell starts on the Poincaré section with the given stance angle
    ``q_st`` and swing rate ``q̇_sw`` (the hip angle from the feet-on-the-ground
    condition, the stance rate from the limit cycle) and walks ``steps``
    steps.

    Parameters
    ----------
    stance_angles, swing_rates : sequence of float
        The grid axes (rad, rad/s).
    steps : int
        Steps simulated per cell.
    cycle : LimitCycle, optional
        The gait to converge to (default: :func:`find_limit_cycle`).
    tolerance : float
        A cell converged if it walked every step and ended within this
        distance of the fixed point.
    scheduler : None, str or dask.distributed.Client
        ``None`` starts a :class:`dask.distributed.LocalCluster` (one process
        per worker) for this call; a string is the address of a running
        scheduler (``"tcp://host:8786"``); a Client is used as is.
    progress : bool
        Show a progress bar (tqdm over the finished tasks).
    n_workers : int, optional
        Workers of the local cluster (default: the number of CPUs).

    Returns
    -------
    Basin

    Raises
    ------
    ImportError
        If ``dask.distributed`` is not installed (extra ``parallel``).
    """
    from ..sweeps import sweep

    if int(steps) < 1:
        raise InputError(f"steps must be at least 1, got {steps!r}")
    cycle = find_limit_cycle() if cycle is None else cycle
    angles = np.asarray(stance_angles, dtype=float).reshape(-1)
    rates = np.asarray(swing_rates, dtype=float).reshape(-1)
    cell = functools.partial(basin_cell, stance_rate=float(cycle.post_impact[2]),
                             steps=int(steps), fixed_point=cycle.post_impact.tolist(),
                             params=cycle.params)
    results = sweep(cell, {"stance_angle": angles, "swing_rate": rates}, scheduler=scheduler,
                    progress=progress, n_workers=n_workers, desc="basin")
    taken = np.array([[r[0] for r in row] for row in results], dtype=int)
    distance = np.array([[r[1] for r in row] for row in results], dtype=float)
    converged = (taken == int(steps)) & (distance < tolerance)
    return Basin(angles, rates, int(steps), taken, distance, converged, cycle, tolerance)
