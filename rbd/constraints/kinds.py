r"""Bilateral constraint kinds: what must hold, named by bodies and joints of a model.

A constraint is a rule :math:`\phi(q) = 0` on the configuration.  Its rows
act on the velocity: :math:`J(q)\,v = 0` and, differentiated once more,
:math:`J\dot v = \gamma` with :math:`\gamma = -\dot J v` (RBDA §8.1–8.2,
spatial_v2's ``gamma_q``).  A kind here only names what it ties together;
:meth:`resolve` turns the names into body indices and body-frame poses of one
model, and :mod:`rbd.reference.constraints` computes :math:`\phi`, :math:`J`
and :math:`\gamma` from the resolved record.

Row frames (fixed, the tests rely on them):

* :class:`PointAnchor` — 3 rows, world axes: :math:`\phi = p_a - p_b`, the
  world position of the point on body A minus that on body B.
* :class:`FrameAnchor` — 6 rows ``[ω; v]``, world axes: the rotation error
  :math:`\log(R_a R_b^T)^\vee` and the origin error :math:`p_a - p_b`; the
  rows of :math:`J` are :math:`\omega_a - \omega_b` and the velocity
  difference of the two frame origins, both in world axes.
* :class:`JointCoupling` — 1 row: :math:`\phi = q_j - p(q_s)` with
  :math:`p(x) = \sum_k c_k x^k`.
* :class:`Rolling` — the rows :math:`P(q_j)\,\dot q_j = 0` of a velocity
  (nonholonomic) constraint on one joint's coordinates, in the joint's own
  row frame (for :class:`rbd.symbolic.rolling.RollingContact`, the two
  tangential rows of Guenter & Lee's Eq. 16).  No position error exists:
  :math:`\phi` is reported as zeros and :func:`rbd.assemble` leaves these rows
  out of its position projection (``holonomic = False``); their drift is the
  velocity error :math:`J v`, which Baumgarte's ``kd`` term pulls to zero.

A constraint force ``f`` of these rows acts as :math:`J^T f` in joint space
(:math:`M\ddot q + h = \tau + J^T f`): for an anchor, ``f`` is the force
(and moment) on body A, in world axes; body B receives its opposite.

Every kind also carries MuJoCo's softness, ``solref`` and ``solimp`` (MuJoCo's
defaults ``(0.02, 1)`` and ``(0.9, 0.95, 0.001, 0.5, 2)``), and a frame anchor
its ``torquescale`` (default 1).  The rigid solvers
(:func:`rbd.constrained_dynamics`) do not use them; :func:`rbd.forward` makes
soft rows of them as MuJoCo does (:mod:`rbd.constraints.equality_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, ModelError
from ..spatial import plux_parts

__all__ = ["Constraint", "PointAnchor", "FrameAnchor", "JointCoupling", "Rolling",
           "active_constraints", "resolve_all", "pack_records"]

#: Joint kinds whose single coordinate has ``q̇ = v`` (a coupling needs one).
COUPLED_KINDS = ("revolute", "prismatic", "helical")

#: MuJoCo's default softness of an equality constraint (``mj_defaultSolRefImp``).
DEFAULT_SOLREF = (0.02, 1.0)
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


def _soft(kind, value, size: int, what: str) -> np.ndarray:
    """``solref`` (2 numbers, both positive or both non-positive) or ``solimp`` (5 numbers)."""
    try:
        s = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{kind} {what} must be {size} numbers, got {value!r}") from None
    if s.shape != (size,) or not np.all(np.isfinite(s)):
        raise InputError(f"{kind} {what} must be {size} finite numbers, got {value!r}")
    if size == 2 and (s[0] > 0) != (s[1] > 0):
        raise InputError(f"{kind} solref {s.tolist()} mixes the standard form (time constant "
                         "and damping ratio, both positive) and the direct form (-stiffness, "
                         "-damping)")
    s.setflags(write=False)
    return s


def _set_soft(obj, kind: str) -> None:
    object.__setattr__(obj, "solref", _soft(kind, obj.solref, 2, "solref"))
    object.__setattr__(obj, "solimp", _soft(kind, obj.solimp, 5, "solimp"))


def _point(value, name: str) -> np.ndarray:
    try:
        p = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be 3 numbers, got {value!r}") from None
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise InputError(f"{name} must be 3 finite numbers, got shape {p.shape}")
    p.setflags(write=False)
    return p


def _pose(value, name: str) -> np.ndarray:
    if value is None:
        T = np.eye(4)
    else:
        try:
            T = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a (4, 4) pose, got {value!r}") from None
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise InputError(f"{name} must be a finite (4, 4) pose, got shape {T.shape}")
        R = T[:3, :3]
        if (np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0
                or np.abs(T[3] - [0, 0, 0, 1]).max() > 0):
            raise InputError(f"{name}: the rotation block must be a rotation and the last row "
                             "(0, 0, 0, 1)")
    T.setflags(write=False)
    return T


def _name(value, what: str, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not value:
        raise InputError(f"{what} must be a name (str), got {value!r}")
    return value


def _attachment(model, ref: str | None, what: str, constraint) -> tuple[int, np.ndarray]:
    """Body index (-1: world) and the (4, 4) pose of the named body or frame in its body."""
    if ref is None:
        return -1, np.eye(4)
    try:
        index = model.body_index(ref)                 # a body, or an attached frame's body
    except ModelError:
        raise ModelError(f"{constraint!r}: {what} {ref!r} is neither a body nor a frame of "
                         f"model {model.name!r}") from None
    if model.bodies[index].name == ref:
        return index, np.eye(4)
    E, r = plux_parts(model.frames[ref].X)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = E.T, r
    return int(index), T


def _sides(obj, kind: str) -> None:
    """Check the two attachment names of an anchor: names, or None (the world) on one side."""
    object.__setattr__(obj, "body_a", _name(obj.body_a, f"{kind} body_a", True))
    object.__setattr__(obj, "body_b", _name(obj.body_b, f"{kind} body_b", True))
    if obj.body_a is None and obj.body_b is None:
        raise InputError(f"{kind}: body_a and body_b cannot both be the world (None)")


def _world_second(record: tuple) -> tuple:
    """An anchor record with the world, if it is a side, as side B (the sides swapped: the
    rows change sign, the constraint does not)."""
    kind, a, b, Ta, Tb = record
    return (kind, b, a, Tb, Ta) if a < 0 else record


class Constraint:
    """Base of the constraint kinds: ``rows`` of ``J``, a ``name`` and an ``active`` flag.

    ``holonomic`` is False for a kind that constrains velocities only (no ``φ(q)``).
    """

    rows: int = 0
    kind: str = ""
    holonomic: bool = True

    def resolve(self, model) -> tuple:  # pragma: no cover - every kind overrides it
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class PointAnchor(Constraint):
    """A point of body A coincides with a point of body B (3 rows; MJCF ``connect``).

    Parameters
    ----------
    body_a, body_b : str or None
        Names of bodies or frames of the model; None is the world (one side at
        most).
    point_a, point_b : (3,) array_like
        The point in ``body_a``'s frame, and in ``body_b``'s frame (world
        coordinates on a side that is None).
    name : str, optional
    active : bool, optional
        An inactive constraint is kept on the model but never enforced.
    solref, solimp : array_like, optional
        MuJoCo's softness of the rows in :func:`rbd.forward` (2 and 5 numbers).

    Examples
    --------
    >>> from rbd import constraints as rc
    >>> rc.PointAnchor("link3", None, [1.0, 0, 0], [2.0, 0, 0]).rows
    3
    """

    body_a: str
    body_b: str | None
    point_a: np.ndarray
    point_b: np.ndarray
    name: str = ""
    active: bool = True
    solref: np.ndarray = DEFAULT_SOLREF
    solimp: np.ndarray = DEFAULT_SOLIMP
    rows = 3
    kind = "point"

    def __post_init__(self):
        _sides(self, "PointAnchor")
        object.__setattr__(self, "point_a", _point(self.point_a, "PointAnchor point_a"))
        object.__setattr__(self, "point_b", _point(self.point_b, "PointAnchor point_b"))
        object.__setattr__(self, "active", bool(self.active))
        _set_soft(self, "PointAnchor")

    def anchors(self, model) -> tuple:
        """``("point", a, b, T_a, T_b)``: bodies (-1: world) and point poses in their frames."""
        a, Ta = _attachment(model, self.body_a, "body_a", self)
        b, Tb = _attachment(model, self.body_b, "body_b", self)
        Ta, Tb = Ta.copy(), Tb.copy()
        Ta[:3, 3] = Ta[:3, :3] @ self.point_a + Ta[:3, 3]
        Tb[:3, 3] = Tb[:3, :3] @ self.point_b + Tb[:3, 3]
        Ta[:3, :3], Tb[:3, :3] = np.eye(3), np.eye(3)
        return ("point", a, b, Ta, Tb)

    def resolve(self, model) -> tuple:
        """:meth:`anchors`, with the world as side B (the rows of the rigid solvers)."""
        return _world_second(self.anchors(model))

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"PointAnchor{label}({self.body_a!r}, {self.body_b!r})"


@dataclass(frozen=True, eq=False)
class FrameAnchor(Constraint):
    """A frame on body A coincides with a frame on body B (6 rows; MJCF ``weld``).

    Parameters
    ----------
    body_a, body_b : str or None
        Names of bodies or frames; None is the world (one side at most).
    pose_a, pose_b : (4, 4) array_like or None
        The frames' poses in ``body_a``'s and ``body_b``'s frames (world on a
        side that is None); None is the identity.
    name : str, optional
    active : bool, optional
    solref, solimp : array_like, optional
        MuJoCo's softness of the rows in :func:`rbd.forward` (2 and 5 numbers).
    torquescale : float, optional
        MuJoCo's weight of the rotation rows (default 1).  At 0 the rotation is
        free: the rigid solvers see a point anchor at the frames' origins (3
        rows), :func:`rbd.forward` keeps MuJoCo's six rows, the last three zero.
    """

    body_a: str
    body_b: str | None
    pose_a: np.ndarray | None = None
    pose_b: np.ndarray | None = None
    name: str = ""
    active: bool = True
    solref: np.ndarray = DEFAULT_SOLREF
    solimp: np.ndarray = DEFAULT_SOLIMP
    torquescale: float = 1.0
    kind = "frame"

    def __post_init__(self):
        _sides(self, "FrameAnchor")
        object.__setattr__(self, "pose_a", _pose(self.pose_a, "FrameAnchor pose_a"))
        object.__setattr__(self, "pose_b", _pose(self.pose_b, "FrameAnchor pose_b"))
        object.__setattr__(self, "active", bool(self.active))
        _set_soft(self, "FrameAnchor")
        try:
            scale = float(self.torquescale)
        except (TypeError, ValueError):
            scale = np.nan
        if not np.isfinite(scale) or scale < 0:
            raise InputError("FrameAnchor torquescale must be a finite number >= 0, got "
                             f"{self.torquescale!r}")
        object.__setattr__(self, "torquescale", scale)

    @property
    def rows(self) -> int:
        """6, or 3 when ``torquescale`` is 0 (the rotation is free)."""
        return 3 if self.torquescale == 0 else 6

    def anchors(self, model) -> tuple:
        """``("frame", a, b, T_a, T_b)``: bodies (-1: world) and frame poses in their frames."""
        a, Ta = _attachment(model, self.body_a, "body_a", self)
        b, Tb = _attachment(model, self.body_b, "body_b", self)
        return ("frame", a, b, Ta @ self.pose_a, Tb @ self.pose_b)

    def resolve(self, model) -> tuple:
        """:meth:`anchors` with the world as side B (the rows of the rigid solvers); a
        point record of the two origins when ``torquescale`` is 0."""
        record = _world_second(self.anchors(model))
        if self.torquescale != 0:
            return record
        _, a, b, Ta, Tb = record
        Pa, Pb = np.eye(4), np.eye(4)
        Pa[:3, 3], Pb[:3, 3] = Ta[:3, 3], Tb[:3, 3]
        return ("point", a, b, Pa, Pb)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"FrameAnchor{label}({self.body_a!r}, {self.body_b!r})"


@dataclass(frozen=True, eq=False)
class JointCoupling(Constraint):
    """``q_joint = c_0 + c_1 q_source + c_2 q_source² + …`` (1 row; MJCF ``joint`` equality).

    Parameters
    ----------
    joint, source : str
        Joint names (revolute, prismatic or helical); ``source=None`` holds
        ``joint`` at ``c_0``.
    coefficients : sequence of float
        The polynomial's coefficients, constant first.
    name : str, optional
    active : bool, optional
    solref, solimp : array_like, optional
        MuJoCo's softness of the row in :func:`rbd.forward` (2 and 5 numbers).

    Notes
    -----
    A mimic joint (:meth:`rbd.Model.add_mimic`) is the linear case solved
    explicitly: it removes the coordinate instead of adding a row.
    """

    joint: str
    source: str | None
    coefficients: tuple = (0.0, 1.0)
    name: str = ""
    active: bool = True
    solref: np.ndarray = DEFAULT_SOLREF
    solimp: np.ndarray = DEFAULT_SOLIMP
    rows = 1
    kind = "coupling"

    def __post_init__(self):
        object.__setattr__(self, "joint", _name(self.joint, "JointCoupling joint"))
        object.__setattr__(self, "source", _name(self.source, "JointCoupling source", True))
        try:
            c = np.array(self.coefficients, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InputError("JointCoupling coefficients must be numbers, got "
                             f"{self.coefficients!r}") from None
        if c.size == 0 or not np.all(np.isfinite(c)):
            raise InputError("JointCoupling coefficients must be at least one finite number")
        c.setflags(write=False)
        object.__setattr__(self, "coefficients", c)
        object.__setattr__(self, "active", bool(self.active))
        _set_soft(self, "JointCoupling")

    def _coordinate(self, model, name: str) -> tuple[int, int]:
        if name not in model.joint_names:
            raise ModelError(f"{self!r}: {name!r} is not a joint with a coordinate of model "
                             f"{model.name!r}")
        body = model.bodies[model.body_index(model._joint_body(name))]
        if body.joint.kind not in COUPLED_KINDS:
            raise ModelError(f"{self!r}: joint {name!r} is {body.joint.kind}; a coupling ties "
                             f"one-coordinate joints ({', '.join(COUPLED_KINDS)})")
        return model.q_slice(name).start, model.v_slice(name).start

    def resolve(self, model) -> tuple:
        """``("coupling", (iq, iv) of the joint, (iq, iv) of the source or None, coefficients)``."""
        j = self._coordinate(model, self.joint)
        s = None if self.source is None else self._coordinate(model, self.source)
        if s == j:
            raise ModelError(f"{self!r}: a joint cannot be coupled to itself")
        return ("coupling", j, s, self.coefficients)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"JointCoupling{label}({self.joint!r}, {self.source!r})"


@dataclass(frozen=True, eq=False)
class Rolling(Constraint):
    r"""A velocity constraint :math:`P(q_j)\,\dot q_j = 0` on one joint's coordinates.

    Rolling without slip (Guenter & Lee's Eq. 16) is the example: a body on a
    contact joint ``q_j = (u₁, v₁, u₂, v₂)`` may not slide, so the contact point
    travels equally fast on both surfaces.  The constraint is nonholonomic
    (``holonomic = False``): it has rows ``J`` (``P`` in the joint's columns)
    and the bias :math:`\gamma = -\dot P\dot q_j`, but no position error, so
    ``φ`` is zeros.  :meth:`rbd.symbolic.rolling.RollingContact.constraint`
    builds one from a symbolic contact.

    Parameters
    ----------
    joint : str
        The joint whose coordinates ``P`` acts on; it needs ``q̇ = v`` there
        (``nq = nv``).
    jacobian : callable
        ``P(q_j)``, an array ``(rows, nv_j)``.
    jacobian_rate : callable
        ``Ṗ q̇_j`` from ``(q_j, q̇_j)``, an array ``(rows,)``.
    rows : int
        Number of rows of ``P``.
    name : str, optional
    active : bool, optional

    Notes
    -----
    ``P`` and ``Ṗq̇`` are Python callables, so the rows are computed by the
    reference text on every backend (:mod:`rbd.reference.constraints`); the
    solvers are the same for all kinds.  A model carrying one in
    :attr:`rbd.Model.constraints` pickles only if the callables do.
    """

    joint: str
    jacobian: Callable
    jacobian_rate: Callable
    rows: int = 2
    name: str = ""
    active: bool = True
    kind = "rolling"
    holonomic = False

    def __post_init__(self):
        object.__setattr__(self, "joint", _name(self.joint, "Rolling joint"))
        for what in ("jacobian", "jacobian_rate"):
            if not callable(getattr(self, what)):
                raise InputError(f"Rolling {what} must be callable, got "
                                 f"{type(getattr(self, what)).__name__}")
        if isinstance(self.rows, bool) or not isinstance(self.rows, int | np.integer) \
                or self.rows < 1:
            raise InputError(f"Rolling rows must be a positive integer, got {self.rows!r}")
        object.__setattr__(self, "rows", int(self.rows))
        object.__setattr__(self, "active", bool(self.active))

    def resolve(self, model) -> tuple:
        """``("rolling", q slice, v slice, P, Ṗq̇, rows)`` of the joint's coordinates."""
        if self.joint not in model.joint_names:
            raise ModelError(f"{self!r}: {self.joint!r} is not a joint with coordinates of "
                             f"model {model.name!r}")
        sq, sv = model.q_slice(self.joint), model.v_slice(self.joint)
        if sq.stop - sq.start != sv.stop - sv.start:
            raise ModelError(f"{self!r}: joint {self.joint!r} has nq != nv; a velocity "
                             "constraint here acts on q̇ = v")
        return ("rolling", sq, sv, self.jacobian, self.jacobian_rate, self.rows)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"Rolling{label}({self.joint!r})"


def active_constraints(model, constraints) -> list[Constraint]:
    """The active kinds of ``constraints`` (default: the model's), checked to be kinds."""
    if constraints is None:
        constraints = getattr(model, "constraints", ())
    if isinstance(constraints, Constraint):
        constraints = (constraints,)
    try:
        items = list(constraints)
    except TypeError:
        raise InputError("constraints must be a sequence of rbd.constraints kinds, got "
                         f"{type(constraints).__name__}") from None
    out = []
    for k, c in enumerate(items):
        if not isinstance(c, Constraint):
            raise InputError(f"constraints[{k}] is {type(c).__name__}, not a constraint kind "
                             "(PointAnchor, FrameAnchor, JointCoupling, Rolling)")
        if c.active:
            out.append(c)
    return out


def resolve_all(model, constraints) -> list[tuple]:
    """The active constraints of ``constraints`` (default: the model's) resolved on ``model``."""
    return [c.resolve(model) for c in active_constraints(model, constraints)]


def pack_records(records: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Resolved records as the three arrays the compiled rows read (``Rows`` of
    ``rbd/_kernels/constraints.pxd``).

    An int64 table (n, 8) ``kind, rows, a, b, q_s, v_s, first coefficient, count``
    (kind 0 point, 1 frame, 2 coupling; a coupling keeps its joint's ``(q_j, v_j)`` in
    ``a, b``, and ``q_s = v_s = -1`` without a source), the two 4×4 poses of each
    anchor (n, 32), and the couplings' coefficients one after the other.
    """
    code = np.zeros((len(records), 8), dtype=np.int64)
    T = np.zeros((len(records), 32))
    coef = []
    for k, r in enumerate(records):
        if r[0] == "coupling":
            s = r[2] if r[2] is not None else (-1, -1)
            c = np.asarray(r[3], dtype=float).ravel()
            code[k] = (2, 1, r[1][0], r[1][1], s[0], s[1], len(coef), c.size)
            coef.extend(c.tolist())
        else:
            code[k, :4] = (0 if r[0] == "point" else 1,
                           3 if r[0] == "point" else 6, r[1], r[2])
            T[k, :16] = np.asarray(r[3], dtype=float).ravel()
            T[k, 16:] = np.asarray(r[4], dtype=float).ravel()
    return code, T, np.array(coef + [0.0])
