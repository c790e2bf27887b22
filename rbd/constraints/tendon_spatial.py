r"""MuJoCo's spatial tendons: length and moment (``mj_tendon``, ``mju_wrap``).

A ``<tendon><spatial>`` (read by :func:`rbd.load_mjcf` into ``model.mujoco_tendons``,
``kind == "spatial"``) is a path of sites, wrapping geoms and pulleys.  Between two
sites the tendon is the straight segment; a sphere or cylinder between two sites is
wrapped when the segment would cross it (or when a ``sidesite`` asks for the other
side), the tendon running straight to a tangent point, along the surface and straight
from a second tangent point.  A pulley divides the length of the branch after it by its
``divisor``.

Length (MuJoCo's ``ten_length``)
    :math:`L = \sum_{\mathrm{branches}} \frac{1}{d_b}
    \sum_{\mathrm{pieces}} \ell_k`, the pieces' lengths :math:`\ell_k = |x_{k+1} - x_k|`
    (straight) or the arc length of the wrap.

Moment (MuJoCo's ``ten_J``, rows over rbd's velocity ``v``)
    :math:`J = \sum \frac{1}{d_b}\, u_k^T (J_{x_{k+1}} - J_{x_k})` over the straight
    pieces whose ends lie on different bodies, :math:`u_k` the unit vector from
    :math:`x_k` to :math:`x_{k+1}` and :math:`J_x` the linear rows of the Jacobian of the
    point :math:`x` fixed to its body (a tangent point: to the wrapping geom's body).

Wrapping (MuJoCo's ``mju_wrap``, "Computation" chapter, *Tendons*)
    The two sites are taken to the geom's frame.  A sphere wraps in the plane through
    its centre and the two sites, a cylinder in the plane normal to its axis (the
    ``z`` of its frame); there the problem is a circle of radius :math:`r` and two
    outside points :math:`e_0, e_1` (:func:`wrap_circle`): the tangent points of
    :math:`e_i` are

    .. math:: t = \frac{r^2\,e \pm r\,\sqrt{|e|^2 - r^2}\;e^{\perp}}{|e|^2},

    the pair kept is the one closer to the side site (or, without one, the one whose
    tangent points are closer together) that does not cross itself, and the arc length
    is :math:`r\,\theta`.  Without a side site, a segment that misses the circle is not
    wrapped.  A side site inside the circle asks for the path through the inside
    (:func:`wrap_inside`): one point on the circle where
    :math:`\arcsin(Az) + \arcsin(Bz) - 2\arcsin z + G = 0` (:math:`A = r/|e_0|`,
    :math:`B = r/|e_1|`, :math:`G` the angle between :math:`e_0` and :math:`e_1`),
    solved by Newton's method from :math:`z = 1 - 10^{-7}` as MuJoCo does.  On a
    cylinder the tangent points get heights interpolated along the unrolled path and
    the arc becomes the helix :math:`\sqrt{(r\theta)^2 + h^2}`.

Moment rate (MuJoCo's ``mj_tendonDot``, for the armature's bias ``mj_tendonBias``)
    :math:`\dot J v = \sum \frac{1}{d_b} \big(u_k^T (\ddot x_{k+1} - \ddot x_k)
    + |(1 - u_k u_k^T)(\dot x_{k+1} - \dot x_k)|^2 / \ell_k\big)` over the same
    straight pieces, :math:`\dot x` the points' velocities and :math:`\ddot x` their
    accelerations at :math:`\dot v = 0` (:func:`moment_rate`): the chain rule on
    :math:`u_k^T (J_{x_{k+1}} - J_{x_k})`, with
    :math:`\dot u_k = (1 - u_k u_k^T)(\dot x_{k+1} - \dot x_k)/\ell_k`.  MuJoCo has it
    only for paths without wrapping geoms (its compiler refuses ``armature`` on the others,
    and so does :func:`rbd.load_mjcf`).
"""

from __future__ import annotations

import math

import numpy as np

#: MuJoCo's ``mjMINVAL``, the smallest value it divides by.
MINVAL = 1e-15


def spatial_tendons(model) -> bool:
    """True when ``model`` has a spatial tendon (the Python forward pass renders them)."""
    return any(t.get("kind") == "spatial"
               for t in (getattr(model, "mujoco_tendons", None) or ()))


def _normalized(x: np.ndarray) -> tuple[np.ndarray, float]:
    """``x / |x|`` and ``|x|``; ``e_0`` when ``|x| < MINVAL`` (``mju_normalize``)."""
    norm = math.sqrt(float(x @ x))
    if norm < MINVAL:
        out = np.zeros(len(x))
        out[0] = 1.0
        return out, norm
    return x * (1.0 / norm), norm


def _crosses(p1, p2, p3, p4) -> bool:
    """Whether the 2-D segments ``p1 p2`` and ``p3 p4`` meet (``is_intersect``)."""
    det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1])
    if abs(det) < MINVAL:
        return False
    a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / det
    b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / det
    return 0 <= a <= 1 and 0 <= b <= 1


def _arc(p0, p1, second: bool, radius: float) -> float:
    """Arc length from ``p0`` to ``p1`` on the circle, the long way round when the
    turn's sense is not that of the chosen solution (``length_circle``)."""
    u, _ = _normalized(np.array(p0, float))
    w, _ = _normalized(np.array(p1, float))
    angle = math.acos(min(1.0, max(-1.0, float(u @ w))))
    cross = p0[1] * p1[0] - p0[0] * p1[1]
    if (cross > 0 and second) or (cross < 0 and not second):
        angle = 2 * math.pi - angle
    return radius * angle


def wrap_circle(end, side, radius: float):
    r"""Wrap of the 2-D segment ``end = (e0x, e0y, e1x, e1y)`` around the circle of
    ``radius`` at the origin (``wrap_circle``): ``(arc length, tangent points (4,))``,
    or ``(-1, None)`` when the segment is not wrapped.  ``side``: the side site
    projected on the circle, or None."""
    e0, e1 = np.asarray(end[:2], float), np.asarray(end[2:], float)
    sqlen0, sqlen1, sqrad = float(e0 @ e0), float(e1 @ e1), radius * radius
    if sqlen0 < sqrad or sqlen1 < sqrad or radius < MINVAL:
        return -1.0, None                           # an end inside, or no circle
    dif = e1 - e0
    dd = float(dif @ dif)
    if dd < MINVAL:
        return -1.0, None
    a = min(1.0, max(0.0, -float(dif @ e0) / dd))
    nearest = a * dif + e0                          # the segment's point nearest the centre
    if nearest @ nearest > sqrad and (side is None or side @ nearest >= 0):
        return -1.0, None
    root0, root1 = math.sqrt(sqlen0 - sqrad), math.sqrt(sqlen1 - sqrad)
    sols, good = [], []
    for sgn in (1, -1):
        t0 = np.array([e0[0] * sqrad + sgn * radius * e0[1] * root0,
                       e0[1] * sqrad - sgn * radius * e0[0] * root0]) / sqlen0
        t1 = np.array([e1[0] * sqrad - sgn * radius * e1[1] * root1,
                       e1[1] * sqrad + sgn * radius * e1[0] * root1]) / sqlen1
        if side is not None:
            mid, _ = _normalized(t0 + t1)
            score = float(mid @ side)
        else:
            score = -float((t0 - t1) @ (t0 - t1))
        if _crosses(e0, t0, e1, t1):
            score = -10000.0
        sols.append((t0, t1))
        good.append(score)
    i = 0 if good[0] > good[1] else 1
    t0, t1 = sols[i]
    if _crosses(e0, t0, e1, t1):
        return -1.0, None
    return _arc(t0, t1, i == 1, radius), np.concatenate([t0, t1])


def wrap_inside(end, radius: float):
    r"""The path through the inside of the circle, for a side site inside it
    (``wrap_inside``): ``(0, points (4,))`` (both points the same point of the circle)
    or ``(-1, None)``.  Where Newton's method fails the midpoint direction is kept, as
    MuJoCo does."""
    e = np.asarray(end, float)
    len0, len1 = math.hypot(e[0], e[1]), math.hypot(e[2], e[3])
    dif = e[2:] - e[:2]
    dd = float(dif @ dif)
    if (len0 <= radius or len1 <= radius or radius < MINVAL or len0 < MINVAL
            or len1 < MINVAL):
        return -1.0, None
    if dd > MINVAL:
        a = -float(dif @ e[:2]) / dd
        if 0 < a < 1 and math.hypot(*(e[:2] + a * dif)) <= radius:
            return -1.0, None                       # the segment crosses the circle
    mid, _ = _normalized(0.5 * (e[:2] + e[2:]))
    fallback = np.tile(radius * mid, 2)
    A, B = radius / len0, radius / len1
    cos_g = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1)
    if cos_g < -1 + MINVAL:
        return -1.0, None
    if cos_g > 1 - MINVAL:
        return 0.0, fallback
    G = math.acos(cos_g)

    def f(z):
        return math.asin(A * z) + math.asin(B * z) - 2 * math.asin(z) + G

    z = 1 - 1e-7
    value = f(z)
    if value > 0:
        return 0.0, fallback
    iterations = 0
    while iterations < 20 and abs(value) > 1e-6:
        slope = (A / max(MINVAL, math.sqrt(1 - z * z * A * A))
                 + B / max(MINVAL, math.sqrt(1 - z * z * B * B))
                 - 2 / max(MINVAL, math.sqrt(1 - z * z)))
        if slope > -MINVAL:
            return 0.0, fallback
        z_next = z - value / slope
        if z_next > z:
            return 0.0, fallback
        z = z_next
        value = f(z)
        if value > 1e-6:
            return 0.0, fallback
        iterations += 1
    if iterations >= 20:
        return 0.0, fallback
    if e[0] * e[3] - e[1] * e[2] > 0:
        vec, ang = e[:2], math.asin(z) - math.asin(A * z)
    else:
        vec, ang = e[2:], math.asin(z) - math.asin(B * z)
    vec, _ = _normalized(np.array(vec, float))
    c, s = math.cos(ang), math.sin(ang)
    point = radius * np.array([c * vec[0] - s * vec[1], s * vec[0] + c * vec[1]])
    return 0.0, np.tile(point, 2)


def _plane_axes(p0: np.ndarray, p1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two orthonormal axes of the plane through the sphere's centre, ``p0`` and ``p1``
    (the first along ``p0``); for ``p0 ∥ p1`` a plane fixed by ``p0``'s largest
    component, as MuJoCo picks it."""
    a0, _ = _normalized(p0)
    normal, norm = _normalized(np.cross(p0, p1))
    if norm < MINVAL:
        i = 0
        if abs(a0[1]) > abs(a0[0]) and abs(a0[1]) > abs(a0[2]):
            i = 1
        if abs(a0[2]) > abs(a0[0]) and abs(a0[2]) > abs(a0[1]):
            i = 2
        other = np.ones(3)
        other[i] = 0.0
        normal, _ = _normalized(np.cross(a0, other))
    a1, _ = _normalized(np.cross(normal, a0))
    return a0, a1


def wrap(x0, x1, position, rotation, radius: float, kind: str, side=None):
    r"""MuJoCo's ``mju_wrap``: the wrap of the segment ``x0 x1`` (world) around a sphere
    or cylinder (``kind``) at ``position`` with axes ``rotation``.

    Returns ``(length, points)``: the wrapped length and the two tangent points (2, 3)
    in world coordinates, or ``(-1, None)`` when the tendon does not touch the geom.
    ``side``: the world position of the ``sidesite``, or None.
    """
    R = np.asarray(rotation, float)
    p0 = R.T @ (np.asarray(x0, float) - position)
    p1 = R.T @ (np.asarray(x1, float) - position)
    if np.linalg.norm(p0) < MINVAL or np.linalg.norm(p1) < MINVAL:
        return -1.0, None
    if kind == "sphere":
        a0, a1 = _plane_axes(p0, p1)
    else:
        a0, a1 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    end = np.array([p0 @ a0, p0 @ a1, p1 @ a0, p1 @ a1])
    if side is not None:
        s = R.T @ (np.asarray(side, float) - position)
        sd, _ = _normalized(np.array([s @ a0, s @ a1]))
        sd = sd * radius
    if side is not None and np.linalg.norm(s) < radius:
        length, pnt = wrap_inside(end, radius)
    else:
        length, pnt = wrap_circle(end, None if side is None else sd, radius)
    if length < 0:
        return -1.0, None
    res = np.array([a0 * pnt[0] + a1 * pnt[1], a0 * pnt[2] + a1 * pnt[3]])
    if kind == "cylinder":                  # heights along the unrolled path: a helix
        l0 = math.hypot(p0[0] - res[0, 0], p0[1] - res[0, 1])
        l1 = math.hypot(p1[0] - res[1, 0], p1[1] - res[1, 1])
        total = l0 + length + l1
        res[0, 2] = p0[2] + (p1[2] - p0[2]) * l0 / total
        res[1, 2] = p0[2] + (p1[2] - p0[2]) * (l0 + length) / total
        length = math.sqrt(length * length + (res[1, 2] - res[0, 2]) ** 2)
    return length, res @ R.T + position


class _Points:
    """World positions and point Jacobians on the model's bodies at one ``q``."""

    def __init__(self, model, q, poses, backend):
        self.model, self.q, self.poses, self.backend = model, q, poses, backend

    def world(self, body, point) -> np.ndarray:
        """World position of ``point`` given in the coordinates of ``body`` (None: world)."""
        if body is None:
            return np.asarray(point, float)
        T = self.poses[self.model.body_index(body)]
        return T[:3, :3] @ point + T[:3, 3]

    def jacobian(self, body, world_point) -> np.ndarray:
        """Linear rows (3, nv) of the Jacobian of the point fixed to ``body`` now at
        ``world_point`` (zero on the world)."""
        from ..algorithms.kinematics import jacobian

        if body is None:
            return np.zeros((3, self.model.nv))
        T = self.poses[self.model.body_index(body)]
        local = T[:3, :3].T @ (world_point - T[:3, 3])
        return jacobian(self.model, self.q, body, local, backend=self.backend)[3:]


def length_and_moment(model, tendon, q, poses=None, backend=None) -> tuple[float, np.ndarray]:
    r"""``(L, J)`` of one spatial tendon at ``q`` (MuJoCo's ``ten_length``, ``ten_J``;
    ``J`` over rbd's ``v``).  ``poses``: :func:`rbd.forward_kinematics` at ``q`` if known."""
    from ..algorithms.kinematics import forward_kinematics, geom_poses

    q = np.asarray(q, float)
    if poses is None:
        poses = forward_kinematics(model, q, backend=backend)
    at = _Points(model, q, poses, backend)
    path = tendon["path"]
    length, J, divisor, j = 0.0, np.zeros(model.nv), 1.0, 0
    geom_pose = None
    while j < len(path) - 1:
        first, second = path[j], path[j + 1]
        if first[0] == "pulley" or second[0] == "pulley":
            if first[0] == "pulley":
                divisor = first[1]
            j += 1
            continue
        x0 = at.world(first[1], first[2])
        if second[0] == "geom":
            last = path[j + 2]
            x1 = at.world(last[1], last[2])
            if geom_pose is None:
                geom_pose = geom_poses(model, q, body_poses=poses)
            geom = model.geoms[second[1]]
            T = geom_pose[second[1]]
            side = None if second[2] is None else at.world(*second[2])
            wlen, tangent = wrap(x0, x1, T[:3, 3], T[:3, :3], float(geom.size[0]),
                                 geom.kind, side)
            j += 2
        else:
            last, wlen = second, -1.0
            x1 = at.world(last[1], last[2])
            j += 1
        if wlen < 0:
            points, bodies = [x0, x1], [first[1], last[1]]
            length += np.linalg.norm(x1 - x0) / divisor
        else:
            points = [x0, tangent[0], tangent[1], x1]
            bodies = [first[1], geom.body, geom.body, last[1]]
            length += (np.linalg.norm(tangent[0] - x0) + wlen
                       + np.linalg.norm(x1 - tangent[1])) / divisor
        for k in range(len(points) - 1):
            if bodies[k] == bodies[k + 1]:
                continue                    # a piece on one body keeps its length
            u, _ = _normalized(points[k + 1] - points[k])
            J += (1.0 / divisor) * (u @ (at.jacobian(bodies[k + 1], points[k + 1])
                                         - at.jacobian(bodies[k], points[k])))
    return float(length), J


def moment_rate(model, tendon, q, v) -> float:
    r""":math:`\dot J v` of one spatial tendon without wrapping geoms at ``(q, v)``: the
    rate of its moment along ``v`` (MuJoCo's ``mj_tendonDot`` on rbd's velocity), that
    is the tendon's length acceleration :math:`\ddot L` at :math:`\dot v = 0`.

    Per straight piece between points :math:`x_k, x_{k+1}` on different bodies, at distance
    :math:`\ell_k` along :math:`u_k`:
    :math:`\frac{1}{d_b}\big(u_k^T(\ddot x_{k+1} - \ddot x_k)
    + |(1 - u_k u_k^T)(\dot x_{k+1} - \dot x_k)|^2/\ell_k\big)`, the points'
    velocities and accelerations (:math:`\dot v = 0`, no gravity) from the outward
    pass of :func:`rbd.reference.constraints.constraint_motion` (RBDA §8.2).

    Raises
    ------
    ModelError
        When the path wraps a geom (the wrap's tangent points move in a way MuJoCo does
        not differentiate; it refuses armature on such a tendon).
    """
    from ..errors import ModelError
    from ..reference.constraints import constraint_motion, frame_motion

    path = tendon["path"]
    if any(p[0] == "geom" for p in path):
        raise ModelError(f"tendon {tendon['name']!r}: the moment rate of a path that wraps "
                         "a geom is not defined (MuJoCo refuses armature on it too)")
    motion = constraint_motion(model, np.asarray(q, float), np.asarray(v, float))

    def point(body, local):
        """World position, velocity and acceleration at v̇ = 0 of a site."""
        T = np.eye(4)
        T[:3, 3] = local
        index = -1 if body is None else model.body_index(body)
        _, x, _, xd, _, xdd = frame_motion(motion, index, T)
        return x, xd, xdd

    rate, divisor = 0.0, 1.0
    for first, second in zip(path[:-1], path[1:], strict=True):
        if first[0] == "pulley":
            divisor = first[1]
        if "pulley" in (first[0], second[0]) or first[1] == second[1]:
            continue                        # a piece on one body keeps its length
        (x0, xd0, xdd0), (x1, xd1, xdd1) = point(*first[1:]), point(*second[1:])
        u, ell = _normalized(x1 - x0)
        dxd = xd1 - xd0
        across = dxd - (u @ dxd) * u                            # (1 - u uᵀ) ẋ: u̇ ℓ
        bend = float(across @ across) / ell if ell > MINVAL else 0.0
        rate += (float(u @ (xdd1 - xdd0)) + bend) / divisor     # d/dt (uᵀ (J₁ - J₀)) v
    return rate
