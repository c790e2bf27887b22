r"""Joint models: ``jcalc`` in Featherstone's sense.

A joint connects a predecessor frame (the parent body's joint frame, placed
by ``X_tree``) to the successor frame (the body frame).  Each joint type gives

* ``transform(q) -> (R, p)``: the successor frame's orientation ``R`` and
  origin ``p`` in the predecessor frame (an element of SE(3));
* ``X_J(q) = plux(R.T, p)``: the Plücker motion transform of the joint;
* ``S(q)``: the motion subspace, 6 × nv, in successor coordinates, so that the
  joint velocity is ``v_J = S(q) @ v`` (Si & Guenter, Eq. 9);
* ``c_J(q, v) = Ṡ(q, v) @ v``: the velocity-product term of the joint
  acceleration, ``a_J = S v̇ + Ṡ v`` (Si & Guenter, Eq. 12), with Ṡ the
  derivative of the coordinate matrix S in the moving successor frame;
* ``integrate``, ``difference``, ``neutral`` and ``random`` on the joint's
  configuration manifold (quaternions for spherical and free joints).

Spherical and free joints store a unit quaternion scalar-last ``(x, y, z, w)``;
their velocity is the body-frame angular velocity (free: ``[ω; v]`` in the
body frame), so ``nq != nv``.

The geometry (``transform``, ``X_J``, ``S``, ``S_dot``, ``c_J``, ``jcalc``) is
scalar-generic: given ``q`` (and ``v``) as object arrays of sympy expressions it
returns object arrays of formulas, with the joint's numeric axes made exact
(:func:`rbd.spatial.exact`: ``0`` and ``1`` as integers), so that the reference
algorithms run on symbols.  Quaternion symbols are taken as a unit quaternion.
The manifold operations (``integrate``, ``difference``, ``normalize``) are numeric.
"""

from __future__ import annotations

import numpy as np

from ._model_checks import MAX_MAGNITUDE, real_scalar
from .errors import ModelError
from .spatial import (
    _cos_sin,
    axis_angle_rotation,
    exact,
    identity,
    is_symbolic,
    plux,
    quat_integrate,
    quat_normalize,
    quat_to_rot,
    rot_to_quat,
    se3_exp,
    skew,
    so3_log,
)

__all__ = [
    "Joint",
    "Revolute",
    "Prismatic",
    "Helical",
    "Universal",
    "Spherical",
    "Free",
    "Planar",
    "Fixed",
    "JOINT_CODES",
]

#: Integer codes used by the compiled kernels (``rbd._kernels``).
JOINT_CODES = {
    "fixed": 0,
    "revolute": 1,
    "prismatic": 2,
    "helical": 3,
    "universal": 4,
    "spherical": 5,
    "free": 6,
    "planar": 7,
    "symbolic": 8,
}

#: Length of the per-joint parameter block handed to the kernels.
NPARAMS = 9


def _unit(axis, what: str) -> np.ndarray:
    """``axis / |axis|``, refusing non-numeric, complex, non-finite and zero axes."""
    if isinstance(axis, str) or np.iscomplexobj(axis):
        raise ModelError(f"{what} must be a real 3-vector, got {axis!r}")
    try:
        a = np.asarray(axis, dtype=float).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{what} must be a real 3-vector, got {axis!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be a finite 3-vector, got {axis!r}")
    # scale first: the norm of (1e200, 0, 0) overflows, its direction does not
    scale = np.abs(a).max()
    if scale == 0.0:
        raise ModelError(f"{what} must be non-zero, got {axis!r}")
    a = a / scale
    n = np.linalg.norm(a)
    if scale * n < 1e-12:
        raise ModelError(f"{what} must be non-zero, got {axis!r}")
    return a / n


def _like(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The numeric joint constant ``a``, exact (object array) when ``q`` is symbolic."""
    return exact(a) if is_symbolic(q) else a


def _zeros(shape, q: np.ndarray) -> np.ndarray:
    """Zeros of the scalar type of ``q``: floats, or exact integers for symbols."""
    return np.zeros(shape, dtype=object if is_symbolic(q) else float)


class Joint:
    """Base class of all joints.  Subclasses set ``kind``, ``nq``, ``nv``."""

    kind = "joint"
    nq = 0
    nv = 0
    _frozen = False

    # --- immutability ------------------------------------------------------------
    def freeze(self) -> Joint:
        """Make the joint read-only (done by :meth:`rbd.Model.add_body`); return it.

        Array attributes become non-writeable and public attributes cannot be
        reassigned, so a joint inside a model cannot change behind the compiled
        kernels' back.  Build a new joint and use :meth:`rbd.Model.replace_joint`.
        """
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
        object.__setattr__(self, "_frozen", True)
        return self

    def __setattr__(self, name, value):
        if self._frozen and not name.startswith("_"):
            raise AttributeError(
                f"{type(self).__name__}.{name} is read-only: the joint is part of a model; "
                "build a new joint and use Model.replace_joint"
            )
        object.__setattr__(self, name, value)

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._frozen:
            self.freeze()

    # --- geometry -----------------------------------------------------------
    def transform(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Successor orientation ``R`` and origin ``p`` in the predecessor frame."""
        raise NotImplementedError

    def X_J(self, q: np.ndarray) -> np.ndarray:
        """Plücker motion transform from predecessor to successor coordinates."""
        R, p = self.transform(q)
        return plux(R.T, p)

    def S(self, q: np.ndarray) -> np.ndarray:
        """Motion subspace, shape ``(6, nv)``, in successor coordinates."""
        raise NotImplementedError

    def S_dot(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Time derivative of ``S`` along ``v``, shape ``(6, nv)`` (zero by default)."""
        return _zeros((6, self.nv), q)

    def c_J(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Velocity-product acceleration ``Ṡ v`` (Si & Guenter, Eq. 12)."""
        return self.S_dot(q, v) @ v

    def jcalc(self, q, v):
        """Return ``(X_J, S, v_J, c_J)`` (Featherstone's jcalc)."""
        S = self.S(q)
        return self.X_J(q), S, S @ v, self.c_J(q, v)

    # --- configuration manifold ---------------------------------------------
    def neutral(self) -> np.ndarray:
        return np.zeros(self.nq)

    def random(self, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(-np.pi, np.pi, self.nq)

    def integrate(self, q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
        """Configuration reached from ``q`` moving with constant ``v`` for ``dt``."""
        return np.asarray(q, dtype=float) + dt * np.asarray(v, dtype=float)

    def difference(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """The ``v`` with ``integrate(q0, v, 1) == q1``."""
        return np.asarray(q1, dtype=float) - np.asarray(q0, dtype=float)

    def normalize(self, q: np.ndarray) -> np.ndarray:
        return np.asarray(q, dtype=float)

    # --- kernel description -------------------------------------------------
    def kernel_params(self) -> np.ndarray:
        """Parameters packed for the compiled kernels (length ``NPARAMS``)."""
        return np.zeros(NPARAMS)

    @property
    def code(self) -> int:
        return JOINT_CODES[self.kind]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        return (
            type(self) is type(other)
            and np.array_equal(self.kernel_params(), other.kernel_params())
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.kernel_params().tobytes()))


class _AxisJoint(Joint):
    nq = nv = 1

    def __init__(self, axis=(0.0, 0.0, 1.0)):
        self.axis = _unit(axis, f"{type(self).__name__} axis")

    def kernel_params(self) -> np.ndarray:
        params = np.zeros(NPARAMS)
        params[:3] = self.axis
        return params

    def __repr__(self) -> str:
        return f"{type(self).__name__}(axis={self.axis.tolist()})"


class Revolute(_AxisJoint):
    """Rotation about a fixed unit ``axis``: ``S = [a; 0]``."""

    kind = "revolute"

    def transform(self, q):
        return axis_angle_rotation(self.axis, q[0]), _zeros(3, q)

    def S(self, q):
        return _like(np.concatenate([self.axis, np.zeros(3)]).reshape(6, 1), q)


class Prismatic(_AxisJoint):
    """Translation along a fixed unit ``axis``: ``S = [0; a]``."""

    kind = "prismatic"

    def transform(self, q):
        return identity(3, q), _like(self.axis, q) * q[0]

    def S(self, q):
        return _like(np.concatenate([np.zeros(3), self.axis]).reshape(6, 1), q)

    def random(self, rng):
        return rng.uniform(-1.0, 1.0, 1)


class Helical(_AxisJoint):
    """Screw about ``axis`` advancing ``pitch`` metres per radian: ``S = [a; h a]``."""

    kind = "helical"

    def __init__(self, axis=(0.0, 0.0, 1.0), pitch: float = 0.1):
        super().__init__(axis)
        self.pitch = real_scalar(pitch, "Helical pitch", limit=None, text=False,
                                 wording="{what} must be a finite real number, got {value!r}")
        if abs(self.pitch) > MAX_MAGNITUDE:
            raise ModelError(f"Helical pitch {self.pitch:g} is above {MAX_MAGNITUDE:g} in "
                             "magnitude: its products with masses and lengths (M, h) would "
                             "overflow")

    def transform(self, q):
        return axis_angle_rotation(self.axis, q[0]), _like(self.axis * self.pitch, q) * q[0]

    def S(self, q):
        return _like(np.concatenate([self.axis, self.pitch * self.axis]).reshape(6, 1), q)

    def kernel_params(self):
        params = super().kernel_params()
        params[3] = self.pitch
        return params

    def __repr__(self) -> str:
        return f"Helical(axis={self.axis.tolist()}, pitch={self.pitch})"


class Universal(Joint):
    r"""Two revolutes in series, ``R = exp(a₁q₁) exp(a₂q₂)``.

    ``S = [[R₂ᵀa₁, a₂]; 0]`` depends on ``q₂``, so ``Ṡ v = [-(a₂ × R₂ᵀa₁) v₁ v₂; 0]``.
    """

    kind = "universal"
    nq = nv = 2

    def __init__(self, axis1=(1.0, 0.0, 0.0), axis2=(0.0, 1.0, 0.0)):
        self.axis1 = _unit(axis1, "Universal axis1")
        self.axis2 = _unit(axis2, "Universal axis2")
        if np.linalg.norm(np.cross(self.axis1, self.axis2)) < 1e-9:
            raise ModelError("Universal joint axes must not be parallel")

    def transform(self, q):
        R = axis_angle_rotation(self.axis1, q[0]) @ axis_angle_rotation(self.axis2, q[1])
        return R, _zeros(3, q)

    def S(self, q):
        R2 = axis_angle_rotation(self.axis2, q[1])
        S = _zeros((6, 2), q)
        S[:3, 0] = R2.T @ _like(self.axis1, q)
        S[:3, 1] = _like(self.axis2, q)
        return S

    def S_dot(self, q, v):
        R2 = axis_angle_rotation(self.axis2, q[1])
        Sd = _zeros((6, 2), q)
        Sd[:3, 0] = -np.cross(_like(self.axis2, q), R2.T @ _like(self.axis1, q)) * v[1]
        return Sd

    def kernel_params(self):
        params = np.zeros(NPARAMS)
        params[:3] = self.axis1
        params[3:6] = self.axis2
        return params

    def __repr__(self) -> str:
        return f"Universal(axis1={self.axis1.tolist()}, axis2={self.axis2.tolist()})"


class Spherical(Joint):
    """Ball joint: quaternion ``(x, y, z, w)``, body-frame angular velocity."""

    kind = "spherical"
    nq, nv = 4, 3

    def transform(self, q):
        return quat_to_rot(q), _zeros(3, q)

    def S(self, q):
        S = _zeros((6, 3), q)
        S[:3, :3] = identity(3, q)
        return S

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0])

    def random(self, rng):
        return quat_normalize(rng.normal(size=4))

    def integrate(self, q, v, dt):
        return quat_integrate(q, v, dt)

    def difference(self, q0, q1):
        return so3_log(quat_to_rot(q0).T @ quat_to_rot(q1))

    def normalize(self, q):
        return quat_normalize(q)


class Free(Joint):
    """Six-DoF joint: ``q = [p; quat]``, ``v = [ω; v]`` in the body frame."""

    kind = "free"
    nq, nv = 7, 6

    def transform(self, q):
        if is_symbolic(q):
            return quat_to_rot(q[3:7]), np.asarray(q[:3], dtype=object)
        return quat_to_rot(q[3:7]), np.asarray(q[:3], dtype=float)

    def S(self, q):
        return identity(6, q)

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])

    def random(self, rng):
        return np.concatenate([rng.uniform(-1.0, 1.0, 3), quat_normalize(rng.normal(size=4))])

    def integrate(self, q, v, dt):
        R, p = self.transform(q)
        T = se3_exp(np.asarray(v, dtype=float) * dt)
        return np.concatenate([p + R @ T[:3, 3], rot_to_quat(R @ T[:3, :3])])

    def difference(self, q0, q1):
        R0, p0 = self.transform(q0)
        R1, p1 = self.transform(q1)
        w = so3_log(R0.T @ R1)
        theta = np.linalg.norm(w)
        W = skew(w)
        # V⁻¹ = 1 − W/2 + β W², β = (1 − (θ/2) cot(θ/2)) / θ²; its series below 1e-3 rad
        if theta < 1e-3:
            beta = 1.0 / 12.0 + theta**2 / 720.0
        else:
            beta = (1.0 - 0.5 * theta / np.tan(0.5 * theta)) / theta**2
        V_inv = np.eye(3) - 0.5 * W + beta * W @ W
        return np.concatenate([w, V_inv @ (R0.T @ (p1 - p0))])

    def normalize(self, q):
        q = np.array(q, dtype=float)
        q[3:7] = quat_normalize(q[3:7])
        return q


class Planar(Joint):
    r"""Motion in the plane normal to ``normal``: ``q = (x, y, θ)``.

    With in-plane unit axes ``e₁, e₂`` (``e₁ × e₂ = n``): ``R = exp(n θ)``,
    ``p = x e₁ + y e₂``, and ``S = [[0, 0, n]; [Rᵀe₁, Rᵀe₂, 0]]``.
    """

    kind = "planar"
    nq = nv = 3

    def __init__(self, normal=(0.0, 0.0, 1.0)):
        self.normal = _unit(normal, "Planar normal")
        trial = np.array([1.0, 0.0, 0.0]) if abs(self.normal[0]) < 0.9 else np.array(
            [0.0, 1.0, 0.0]
        )
        e1 = trial - self.normal * (trial @ self.normal)
        self.e1 = e1 / np.linalg.norm(e1)
        self.e2 = np.cross(self.normal, self.e1)

    def transform(self, q):
        R = axis_angle_rotation(self.normal, q[2])
        return R, _like(self.e1, q) * q[0] + _like(self.e2, q) * q[1]

    def S(self, q):
        c, s = _cos_sin(q[2])
        e1, e2 = _like(self.e1, q), _like(self.e2, q)
        S = _zeros((6, 3), q)
        S[3:, 0] = e1 * c - e2 * s
        S[3:, 1] = e1 * s + e2 * c
        S[:3, 2] = _like(self.normal, q)
        return S

    def S_dot(self, q, v):
        c, s = _cos_sin(q[2])
        e1, e2 = _like(self.e1, q), _like(self.e2, q)
        Sd = _zeros((6, 3), q)
        Sd[3:, 0] = (-e1 * s - e2 * c) * v[2]
        Sd[3:, 1] = (e1 * c - e2 * s) * v[2]
        return Sd

    def random(self, rng):
        return np.concatenate([rng.uniform(-1.0, 1.0, 2), rng.uniform(-np.pi, np.pi, 1)])

    def kernel_params(self):
        params = np.zeros(NPARAMS)
        params[:3] = self.normal
        params[3:6] = self.e1
        params[6:9] = self.e2
        return params

    def __repr__(self) -> str:
        return f"Planar(normal={self.normal.tolist()})"


class Fixed(Joint):
    """Welds a body to its parent (no degrees of freedom)."""

    kind = "fixed"
    nq = nv = 0

    def transform(self, q):
        return identity(3, q), _zeros(3, q)

    def S(self, q):
        return _zeros((6, 0), q)
