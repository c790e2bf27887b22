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

A constraint force ``f`` of these rows acts as :math:`J^T f` in joint space
(:math:`M\ddot q + h = \tau + J^T f`): for an anchor, ``f`` is the force
(and moment) on body A, in world axes; body B receives its opposite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError, ModelError
from ..spatial import plux_parts

__all__ = ["Constraint", "PointAnchor", "FrameAnchor", "JointCoupling", "active_constraints",
           "resolve_all", "pack_records"]

#: Joint kinds whose single coordinate has ``q̇ = v`` (a coupling needs one).
COUPLED_KINDS = ("revolute", "prismatic", "helical")


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


class Constraint:
    """Base of the constraint kinds: ``rows`` of ``J``, a ``name`` and an ``active`` flag."""

    rows: int = 0
    kind: str = ""

    def resolve(self, model) -> tuple:  # pragma: no cover - every kind overrides it
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class PointAnchor(Constraint):
    """A point of body A coincides with a point of body B (3 rows; MJCF ``connect``).

    Parameters
    ----------
    body_a, body_b : str or None
        Names of bodies or frames of the model; ``body_b=None`` is the world.
    point_a, point_b : (3,) array_like
        The point in ``body_a``'s frame, and in ``body_b``'s frame (world
        coordinates when ``body_b`` is None).
    name : str, optional
    active : bool, optional
        An inactive constraint is kept on the model but never enforced.

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
    rows = 3
    kind = "point"

    def __post_init__(self):
        object.__setattr__(self, "body_a", _name(self.body_a, "PointAnchor body_a"))
        object.__setattr__(self, "body_b", _name(self.body_b, "PointAnchor body_b", True))
        object.__setattr__(self, "point_a", _point(self.point_a, "PointAnchor point_a"))
        object.__setattr__(self, "point_b", _point(self.point_b, "PointAnchor point_b"))
        object.__setattr__(self, "active", bool(self.active))

    def resolve(self, model) -> tuple:
        """``("point", a, b, T_a, T_b)``: bodies and point poses in their body frames."""
        a, Ta = _attachment(model, self.body_a, "body_a", self)
        b, Tb = _attachment(model, self.body_b, "body_b", self)
        Ta, Tb = Ta.copy(), Tb.copy()
        Ta[:3, 3] = Ta[:3, :3] @ self.point_a + Ta[:3, 3]
        Tb[:3, 3] = Tb[:3, :3] @ self.point_b + Tb[:3, 3]
        Ta[:3, :3], Tb[:3, :3] = np.eye(3), np.eye(3)
        return ("point", a, b, Ta, Tb)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"PointAnchor{label}({self.body_a!r}, {self.body_b!r})"


@dataclass(frozen=True, eq=False)
class FrameAnchor(Constraint):
    """A frame on body A coincides with a frame on body B (6 rows; MJCF ``weld``).

    Parameters
    ----------
    body_a, body_b : str or None
        Names of bodies or frames; ``body_b=None`` is the world.
    pose_a, pose_b : (4, 4) array_like or None
        The frames' poses in ``body_a``'s and ``body_b``'s frames (world when
        ``body_b`` is None); None is the identity.
    name : str, optional
    active : bool, optional
    """

    body_a: str
    body_b: str | None
    pose_a: np.ndarray | None = None
    pose_b: np.ndarray | None = None
    name: str = ""
    active: bool = True
    rows = 6
    kind = "frame"

    def __post_init__(self):
        object.__setattr__(self, "body_a", _name(self.body_a, "FrameAnchor body_a"))
        object.__setattr__(self, "body_b", _name(self.body_b, "FrameAnchor body_b", True))
        object.__setattr__(self, "pose_a", _pose(self.pose_a, "FrameAnchor pose_a"))
        object.__setattr__(self, "pose_b", _pose(self.pose_b, "FrameAnchor pose_b"))
        object.__setattr__(self, "active", bool(self.active))

    def resolve(self, model) -> tuple:
        """``("frame", a, b, T_a, T_b)``: bodies and frame poses in their body frames."""
        a, Ta = _attachment(model, self.body_a, "body_a", self)
        b, Tb = _attachment(model, self.body_b, "body_b", self)
        return ("frame", a, b, Ta @ self.pose_a, Tb @ self.pose_b)

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
                             "(PointAnchor, FrameAnchor, JointCoupling)")
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
