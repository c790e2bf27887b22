r"""Spatial (6-D) vector algebra in Featherstone's notation.

Spatial vectors are stacked ``[angular; linear]``: a motion vector is
``[ω; v]`` and a force vector is ``[n; f]``.  A Plücker motion transform
``X`` from frame A to frame B, where B's origin sits at ``r`` (A coordinates)
and ``E`` rotates A coordinates into B coordinates, is

.. math::

    {}^B X_A = \begin{bmatrix} E & 0 \\ -E \tilde r & E \end{bmatrix}
             = \mathrm{rot}(E)\,\mathrm{xlt}(r),

and the matching force transform is :math:`{}^B X_A^{*} = {}^B X_A^{-T}`.

Notation dictionary (Si & Guenter, Eqs. 1–5, and Stępień et al. use the
Lie-group names; Featherstone and Liu & Jain the matrix names):

=============================  =========================================
Lie group (Si & Guenter)        this module
=============================  =========================================
:math:`Ad_{G^{-1}}`              ``X_up`` = ``plux(E, r)`` (motion transform)
:math:`ad_v`                     ``crm(v)``  (motion cross product ``v×``)
:math:`ad^{*}_v`                 ``-crf(v)`` (``crf(v) = -crm(v).T`` is ``v×*``)
twist :math:`\xi`                spatial motion vector ``[ω; v]``
wrench                          spatial force vector ``[n; f]``
:math:`\exp(\hat\xi)`            ``se3_exp(xi)``
=============================  =========================================

All functions accept NumPy arrays.  The algebra is scalar-generic: the
skew and Plücker builders, the cross products, :func:`mcI`, the rotations about
an axis and :func:`quat_to_rot` also take ``dtype=object`` arrays (or scalars)
of sympy expressions and then return object arrays of formulas, exact where the
numbers are integral (an identity block holds the integers 0 and 1, not
``1.0``), so that the reference algorithms run on symbols unchanged.  Float
input takes the float path, bit for bit as before.  The exponential and
logarithm maps (:func:`so3_exp` excepted), the quaternion normalisation and
:func:`rot_to_quat` are numeric only.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "is_symbolic",
    "exact",
    "identity",
    "as_scalar",
    "skew",
    "unskew",
    "rotx",
    "roty",
    "rotz",
    "rot",
    "xlt",
    "plux",
    "plux_parts",
    "inv_plux",
    "crm",
    "crf",
    "mcI",
    "inertia_parts",
    "spatial_inertia_from_rotation",
    "axis_angle_rotation",
    "so3_exp",
    "so3_log",
    "se3_exp",
    "quat_to_rot",
    "rot_to_quat",
    "quat_multiply",
    "quat_normalize",
    "quat_integrate",
    "rpy_to_rot",
    "rot_to_rpy",
    "homogeneous",
]


_NUMBERS = (float, int, np.floating, np.integer)


def is_symbolic(x) -> bool:
    """True when ``x`` holds symbolic entries: an object array, or a scalar that is not a number."""
    if isinstance(x, np.ndarray):
        return x.dtype == object
    if isinstance(x, list | tuple):   # a plain sequence is symbolic if any entry is
        return any(is_symbolic(item) for item in x)
    return not isinstance(x, _NUMBERS)


def exact(a) -> np.ndarray:
    """``a`` as an object array whose integral numbers are Python ints (exact in sympy).

    Symbolic entries are kept; other floats stay floats.  Products with sympy
    expressions then carry ``0`` and ``1`` exactly instead of ``1.0``.
    """
    a = np.asarray(a)
    flat = [(int(x) if float(x).is_integer() else float(x)) if isinstance(x, _NUMBERS) else x
            for x in a.ravel().tolist()]
    return np.array(flat, dtype=object).reshape(a.shape)


def identity(n: int, like=None) -> np.ndarray:
    """``np.eye(n)``, or its exact object version when ``like`` is symbolic."""
    return np.eye(n, dtype=object) if like is not None and is_symbolic(like) else np.eye(n)


def as_scalar(x):
    """``float(x)`` of a number; a symbolic expression unchanged."""
    return x if is_symbolic(x) else float(x)


def _sympy():
    import sympy

    return sympy


def _cos_sin(theta):
    """``(cos θ, sin θ)``: NumPy for numbers, sympy for symbols."""
    if is_symbolic(theta):
        sympy = _sympy()
        return sympy.cos(theta), sympy.sin(theta)
    return np.cos(theta), np.sin(theta)


def skew(w: np.ndarray) -> np.ndarray:
    """Return the 3×3 matrix ``w̃`` with ``w̃ @ x == cross(w, x)``."""
    z = w[0] * 0
    return np.array([[z, -w[2], w[1]], [w[2], z, -w[0]], [-w[1], w[0], z]])


def unskew(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`skew` (uses the antisymmetric part)."""
    if is_symbolic(W):
        w = np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]], dtype=object)
        return w * _sympy().Rational(1, 2)
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


def _block(E: np.ndarray, lower_left: np.ndarray) -> np.ndarray:
    dtype = np.result_type(E, lower_left)
    X = np.zeros((6, 6), dtype=dtype)
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = lower_left
    return X


def rot(E: np.ndarray) -> np.ndarray:
    """Plücker transform of a pure rotation: coordinates change by ``E``."""
    return _block(E, np.zeros((3, 3), dtype=np.result_type(E)))


def xlt(r: np.ndarray) -> np.ndarray:
    """Plücker transform of a pure translation of the origin by ``r``."""
    return _block(identity(3, np.asarray(r)), -skew(r))


def plux(E: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``rot(E) @ xlt(r)``: rotate by ``E`` after moving the origin by ``r``."""
    return _block(E, -E @ skew(r))


def plux_parts(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split a Plücker motion transform into ``(E, r)`` with ``X = plux(E, r)``."""
    E = X[:3, :3]
    r = -unskew(E.T @ X[3:, :3])
    return E, r


def inv_plux(X: np.ndarray) -> np.ndarray:
    """Inverse of a Plücker motion transform, without a general solve."""
    E, r = plux_parts(X)
    return plux(E.T, -E @ r)


def _axis_rotation(axis: int, theta: float) -> np.ndarray:
    c, s = _cos_sin(theta)
    E = identity(3, theta)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    E[i, i], E[i, j], E[j, i], E[j, j] = c, s, -s, c
    return E


def rotx(theta: float) -> np.ndarray:
    """Coordinate transform to a frame rotated by ``theta`` about x (Featherstone's rotx)."""
    return rot(_axis_rotation(0, theta))


def roty(theta: float) -> np.ndarray:
    """Coordinate transform to a frame rotated by ``theta`` about y."""
    return rot(_axis_rotation(1, theta))


def rotz(theta: float) -> np.ndarray:
    """Coordinate transform to a frame rotated by ``theta`` about z."""
    return rot(_axis_rotation(2, theta))


def crm(v: np.ndarray) -> np.ndarray:
    """Spatial motion cross-product matrix ``v×`` (Lie algebra ``ad_v``)."""
    w, u = v[:3], v[3:]
    X = np.zeros((6, 6), dtype=np.result_type(v))
    X[:3, :3] = skew(w)
    X[3:, 3:] = skew(w)
    X[3:, :3] = skew(u)
    return X


def crf(v: np.ndarray) -> np.ndarray:
    """Spatial force cross-product matrix ``v×* = -crm(v).T`` (``-ad*_v``)."""
    return -crm(v).T


def mcI(m: float, c: np.ndarray, Ic: np.ndarray) -> np.ndarray:
    r"""Spatial inertia about the body origin from mass, COM and inertia at the COM.

    .. math::

        I = \begin{bmatrix} I_c + m\tilde c\tilde c^T & m\tilde c \\
                            m\tilde c^T & m\,\mathbf 1 \end{bmatrix}
    """
    C = skew(np.asarray(c))
    dtype = np.result_type(C, np.asarray(Ic), np.asarray(m))
    I = np.zeros((6, 6), dtype=dtype)
    I[:3, :3] = Ic + m * C @ C.T
    I[:3, 3:] = m * C
    I[3:, :3] = m * C.T
    I[3:, 3:] = m * identity(3, I)
    return I


def inertia_parts(I: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Inverse of :func:`mcI`: return ``(m, c, Ic)`` of a spatial inertia."""
    m = I[5, 5]
    if m == 0:
        return 0.0, np.zeros(3), I[:3, :3].copy()
    C = I[:3, 3:] / m
    c = unskew(C)
    Ic = I[:3, :3] - m * C @ C.T
    return as_scalar(m), c, Ic


def spatial_inertia_from_rotation(m: float, c: np.ndarray, I_rot: np.ndarray, R: np.ndarray):
    """Spatial inertia of a body whose COM frame is rotated by ``R`` from the body frame.

    ``I_rot`` is the rotational inertia about the COM in the rotated frame.
    """
    return mcI(m, c, R @ I_rot @ R.T)


def axis_angle_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    r"""Rotation matrix (active, Rodrigues) of ``angle`` about the unit ``axis``.

    A symbolic angle (or axis) gives :math:`\cos θ\,1 + \sin θ\,\tilde a + (1 - \cos θ)\,a a^T`
    with exact integral entries (about ``z``: ``[[c, -s, 0], [s, c, 0], [0, 0, 1]]``).
    """
    if is_symbolic(angle) or is_symbolic(np.asarray(axis)):
        a = exact(axis)
        c, s = _cos_sin(angle)
        return identity(3, a) * c + skew(a) * s + np.outer(a, a) * (1 - c)
    return so3_exp(np.asarray(axis, dtype=float) * angle)


def so3_exp(w: np.ndarray) -> np.ndarray:
    """Exponential map of so(3): rotation matrix of the rotation vector ``w``.

    A symbolic ``w`` gives Rodrigues' formula with ``θ = sqrt(wᵀw)`` (no small-angle branch).
    """
    if is_symbolic(np.asarray(w)):
        w = np.asarray(w, dtype=object)
        theta = _sympy().sqrt(w @ w)
        return axis_angle_rotation(w / theta, theta)
    w = np.asarray(w, dtype=float)
    theta = float(np.linalg.norm(w))
    W = skew(w)
    if theta < 1e-8:
        return np.eye(3) + W + 0.5 * W @ W
    return np.eye(3) + np.sin(theta) / theta * W + (1 - np.cos(theta)) / theta**2 * W @ W


def so3_log(R: np.ndarray) -> np.ndarray:
    r"""Logarithm of SO(3): the rotation vector ``w`` with ``so3_exp(w) == R`` and ``|w| ≤ π``.

    Accurate to round-off for every angle.  With the skew part
    :math:`s = \mathrm{vee}(R - R^T)/2 = \sin θ\,a` and
    :math:`\cos θ = (\mathrm{tr} R - 1)/2`, the angle is
    :math:`θ = \mathrm{atan2}(|s|, \cos θ)`, well conditioned everywhere.
    Up to a right angle the axis is :math:`s/|s|`.  Beyond it :math:`|s|` is
    small and its round-off would tilt the axis, so the axis is read from the
    symmetric part, :math:`(R + R^T)/2 - \cos θ\,1 = (1 - \cos θ)\,a a^T`, at its
    largest diagonal entry, and only its sign from :math:`s`.
    """
    R = np.asarray(R, dtype=float)
    s = unskew(R)
    cos_theta = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sin_theta = float(np.linalg.norm(s))
    theta = float(np.arctan2(sin_theta, cos_theta))
    if cos_theta >= 0.0:
        # θ/sin θ → 1 as θ → 0, where s is already the rotation vector
        return s * (theta / sin_theta) if sin_theta > 0.0 else s
    S = 0.5 * (R + R.T) - cos_theta * np.eye(3)
    k = int(np.argmax(np.diag(S)))
    a = S[:, k] / np.linalg.norm(S[:, k])
    if a @ s < 0.0:
        a = -a
    return theta * a


def se3_exp(xi: np.ndarray) -> np.ndarray:
    """Exponential map of se(3): the 4×4 pose of the body twist ``xi = [ω; v]``."""
    xi = np.asarray(xi, dtype=float)
    w, v = xi[:3], xi[3:]
    theta = float(np.linalg.norm(w))
    W = skew(w)
    if theta < 1e-8:
        V = np.eye(3) + 0.5 * W + W @ W / 6.0
    else:
        V = (
            np.eye(3)
            + (1 - np.cos(theta)) / theta**2 * W
            + (theta - np.sin(theta)) / theta**3 * W @ W
        )
    T = np.eye(4)
    T[:3, :3] = so3_exp(w)
    T[:3, 3] = V @ v
    return T


def quat_to_rot(quat: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion stored scalar-last ``(x, y, z, w)``."""
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def rot_to_quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion ``(x, y, z, w)`` of a rotation matrix, with ``w >= 0``."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        quat = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                         (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        quat = np.zeros(4)
        quat[i] = 0.25 * s
        quat[j] = (R[j, i] + R[i, j]) / s
        quat[k] = (R[k, i] + R[i, k]) / s
        quat[3] = (R[k, j] - R[j, k]) / s
    if quat[3] < 0:
        quat = -quat
    return quat / np.linalg.norm(quat)


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of scalar-last quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quat_normalize(quat: np.ndarray) -> np.ndarray:
    """Return ``quat / |quat|``."""
    return np.asarray(quat, dtype=float) / np.linalg.norm(quat)


def quat_integrate(quat: np.ndarray, omega_body: np.ndarray, dt: float) -> np.ndarray:
    """Rotate ``quat`` by the body-frame angular velocity held for ``dt``: ``q ⊗ exp(ω dt)``."""
    w = np.asarray(omega_body, dtype=float) * dt
    theta = float(np.linalg.norm(w))
    if theta < 1e-12:
        dq = np.array([0.5 * w[0], 0.5 * w[1], 0.5 * w[2], 1.0])
    else:
        axis = w / theta
        dq = np.concatenate([np.sin(theta / 2) * axis, [np.cos(theta / 2)]])
    return quat_normalize(quat_multiply(quat, dq))


def rpy_to_rot(rpy: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw to a rotation matrix: ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    if all(isinstance(x, float | int | np.floating | np.integer) for x in (r, p, y)):
        # the product below written out (numbers only; symbols take the product)
        c_r, s_r, c_p, s_p = np.cos(r), np.sin(r), np.cos(p), np.sin(p)
        c_y, s_y = np.cos(y), np.sin(y)
        return np.array([
            [c_y * c_p, c_y * s_p * s_r - s_y * c_r, c_y * s_p * c_r + s_y * s_r],
            [s_y * c_p, s_y * s_p * s_r + c_y * c_r, s_y * s_p * c_r - c_y * s_r],
            [-s_p, c_p * s_r, c_p * c_r],
        ])
    return (
        axis_angle_rotation(np.array([0.0, 0.0, 1.0]), y)
        @ axis_angle_rotation(np.array([0.0, 1.0, 0.0]), p)
        @ axis_angle_rotation(np.array([1.0, 0.0, 0.0]), r)
    )


def rot_to_rpy(R: np.ndarray) -> np.ndarray:
    """Inverse of :func:`rpy_to_rot`, exact to rounding also near gimbal lock.

    Roll is read first; pitch and yaw then come from ``R Rx(roll)ᵀ = Rz(yaw) Ry(pitch)``,
    whose entries give them through well-conditioned ``atan2`` calls.
    """
    roll = np.arctan2(R[2, 1], R[2, 2])
    M = R @ axis_angle_rotation(np.array([1.0, 0.0, 0.0]), roll).T
    pitch = np.arctan2(-M[2, 0], M[2, 2])
    yaw = np.arctan2(-M[0, 1], M[1, 1])
    return np.array([roll, pitch, yaw])


def homogeneous(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """4×4 homogeneous matrix of rotation ``R`` and translation ``p``."""
    symbolic = is_symbolic(np.asarray(R)) or is_symbolic(np.asarray(p))
    T = np.eye(4, dtype=object if symbolic else float)
    T[:3, :3] = R
    T[:3, 3] = p
    return T
