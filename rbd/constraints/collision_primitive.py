r"""Narrow-phase collision of primitive geoms, as MuJoCo computes it.

Each function tests one pair of geom kinds and returns the pair's contacts
(:class:`PairContacts`): signed distances, points and frames.  The inputs are
world quantities, as MuJoCo's ``d.geom_xpos``, ``d.geom_xmat`` and
``m.geom_size``:

* ``pos`` (3,), the geom centre; ``mat`` (3, 3), its rotation (columns are the
  geom axes in world coordinates); ``size`` (3,), MuJoCo's size convention
  (sphere: radius; capsule and cylinder: radius, half-length; box: half-sizes;
  ellipsoid: semi-axes; plane: unused here);
* ``margin``, the distance below which a contact is reported: MuJoCo calls the
  pair function with ``margin + gap`` of the pair (see
  :func:`rbd.constraints.collision.collide`).

Conventions, those of MuJoCo's ``mjContact``: the normal points from geom 1
to geom 2; ``dist`` is the signed distance between the surfaces along the
normal (negative in penetration); the contact point lies midway between the
two surfaces.  The frame's rows are the normal and two tangents, completed from
the normal (and from a preferred first tangent where MuJoCo gives one, as for
capsules on a plane) by :func:`make_frame`.  Geom 1 is the geom of the lower
kind in MuJoCo's order plane < sphere < capsule < ellipsoid < cylinder < box.

Each function names the MuJoCo function it follows (``engine_collision_primitive.c``,
``engine_collision_convex.c``); the branches, clamps and tolerances are
MuJoCo's, so the contact sets agree to rounding.  Box pairs are in
:mod:`rbd.constraints.collision_box`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: MuJoCo's ``mjMINVAL``: the smallest value it divides by.
MINVAL = 1e-15


class PairContacts(NamedTuple):
    """Contacts between two geoms.

    Attributes
    ----------
    dist : (n,) ndarray
        Signed distance between the surfaces (negative: penetration).
    pos : (n, 3) ndarray
        Contact points, midway between the surfaces, world coordinates.
    frame : (n, 3, 3) ndarray
        Rows: the normal (from geom 1 to geom 2) and two tangents.
    """

    dist: np.ndarray
    pos: np.ndarray
    frame: np.ndarray


def normalize(vec: np.ndarray) -> tuple[np.ndarray, float]:
    """Unit vector and norm, as ``mju_normalize3`` (a null vector becomes x)."""
    norm = float(np.sqrt(vec @ vec))
    if norm < MINVAL:
        return np.array([1.0, 0.0, 0.0]), norm
    return vec * (1.0 / norm), norm


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:math:`a \times b` of two 3-vectors (``mji_cross``; cheaper than ``np.cross``)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def make_frame(normal: np.ndarray, tangent: np.ndarray) -> np.ndarray:
    """Contact frame from a normal and an optional first tangent, as ``mju_makeFrame``.

    The normal is normalized.  A tangent shorter than 1/2 is replaced by the
    world y axis, or by z when the normal is within 60° of y.  The tangent is
    then made orthogonal to the normal (one Gram–Schmidt step) and the third
    axis is their cross product.

    Returns
    -------
    (3, 3) ndarray
        Rows: normal, tangent 1, tangent 2 = normal × tangent 1.
    """
    x, _ = normalize(np.asarray(normal, dtype=float))
    y = np.asarray(tangent, dtype=float)
    if y @ y < 0.25:
        y = np.array([0.0, 1.0, 0.0]) if -0.5 < x[1] < 0.5 else np.array([0.0, 0.0, 1.0])
    y, _ = normalize(y - x * (x @ y))
    return np.array([x, y, cross(x, y)])


_ZERO = np.zeros(3)


def pack(contacts: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]]) -> PairContacts:
    """:class:`PairContacts` from a list of ``(dist, pos, normal, tangent)``."""
    n = len(contacts)
    if n == 0:
        return PairContacts(np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3, 3)))
    dist = np.array([c[0] for c in contacts], dtype=float)
    pos = np.array([c[1] for c in contacts], dtype=float).reshape(n, 3)
    frame = np.array([make_frame(c[2], c[3]) for c in contacts]).reshape(n, 3, 3)
    return PairContacts(dist, pos, frame)


# ----------------------------------------------------------------------------- plane

def _plane_sphere(pos1, mat1, pos2, radius, margin):
    """One contact of a sphere of ``radius`` at ``pos2`` with a plane (``mjraw_PlaneSphere``)."""
    normal = mat1[:, 2]
    cdist = (pos2 - pos1) @ normal
    if cdist > margin + radius:
        return []
    dist = cdist - radius
    pos = pos2 + normal * (-dist / 2 - radius)
    return [(dist, pos, normal.copy(), _ZERO)]


def plane_sphere(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Plane (geom 1) and sphere: MuJoCo's ``mjc_PlaneSphere``.

    The distance is the sphere centre's height above the plane less the radius;
    the point is halfway between the plane and the sphere's lowest point.
    """
    return pack(_plane_sphere(pos1, mat1, pos2, size2[0], margin))


def plane_capsule(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Plane and capsule: MuJoCo's ``mjc_PlaneCapsule``.

    The two end spheres are tested against the plane; each contact frame takes
    the capsule axis as its preferred first tangent.
    """
    axis = mat2[:, 2]
    segment = size2[1] * axis
    contacts = (_plane_sphere(pos1, mat1, pos2 + segment, size2[0], margin)
                + _plane_sphere(pos1, mat1, pos2 - segment, size2[0], margin))
    return pack([(d, p, n, axis) for d, p, n, _ in contacts])


def plane_cylinder(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Plane and cylinder: MuJoCo's ``mjc_PlaneCylinder``.

    Up to four points: the lowest point of the rim of the disk nearer the
    plane, the lowest point of the other rim, and two more points of the near
    rim at ±120° around its axis (a triangle inscribed in the disk).
    """
    normal = mat1[:, 2]
    axis = mat2[:, 2]
    prjaxis = normal @ axis
    if prjaxis > 0:                       # make the axis point towards the plane
        axis = -axis
        prjaxis = -prjaxis
    dist0 = (pos2 - pos1) @ normal        # height of the centre
    vec = axis * prjaxis - normal         # -normal with its axial component removed
    len_sqr = vec @ vec
    if len_sqr >= MINVAL * MINVAL:
        vec = vec * (size2[0] / np.sqrt(len_sqr))
    else:                                 # disk parallel to the plane: cylinder's x axis
        vec = mat2[:, 0] * size2[0]
    prjvec = vec @ normal
    axis = axis * size2[1]
    prjaxis *= size2[1]

    contacts = []
    dist = dist0 + prjaxis + prjvec       # lowest point of the near rim
    if dist > margin:
        return pack(contacts)
    contacts.append((dist, pos2 + vec + axis - normal * (dist * 0.5), normal, _ZERO))
    dist = dist0 - prjaxis + prjvec       # lowest point of the far rim
    if dist <= margin:
        contacts.append((dist, pos2 + vec - axis - normal * (dist * 0.5), normal, _ZERO))
    prjvec1 = -prjvec * 0.5
    dist = dist0 + prjaxis + prjvec1      # the two other corners of the triangle
    if dist <= margin:
        side, _ = normalize(cross(vec, axis))
        side = side * (size2[0] * np.sqrt(3.0) / 2)
        for sign in (1.0, -1.0):
            pos = pos2 + sign * side + axis - 0.5 * vec - normal * (dist * 0.5)
            contacts.append((dist, pos, normal, _ZERO))
    return pack(contacts)


def plane_box(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Plane and box: MuJoCo's ``mjc_PlaneBox``.

    The corners are visited in MuJoCo's order (corner i has sign bit k of i on
    axis k); a corner below ``margin`` that lies on the plane's side of the box
    centre is a contact, at most four.
    """
    normal = mat1[:, 2]
    dist0 = (pos2 - pos1) @ normal
    contacts = []
    for i in range(8):
        local = np.array([size2[k] if i & (1 << k) else -size2[k] for k in range(3)])
        corner = mat2 @ local
        ldist = normal @ corner
        if dist0 + ldist > margin or ldist > 0:
            continue
        dist = dist0 + ldist
        contacts.append((dist, corner + pos2 - normal * (dist / 2), normal, _ZERO))
        if len(contacts) >= 4:
            break
    return pack(contacts)


def plane_ellipsoid(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Plane and ellipsoid: MuJoCo's ``mjc_PlaneConvex`` with the ellipsoid's support.

    MuJoCo has no dedicated routine for this pair; its convex path takes the
    support point of the ellipsoid along the plane's inward normal
    (``mjccd_support`` for ``mjGEOM_ELLIPSOID``: :math:`p = R\\,S\\,\\widehat{S R^T d}`
    with :math:`S = \\mathrm{diag}(a, b, c)`), which is exact, and reports one
    contact there.
    """
    normal = mat1[:, 2]
    local_dir = mat2.T @ (-normal)
    unit, _ = normalize(local_dir * size2)
    support = mat2 @ (unit * size2) + pos2
    dist = (support - pos1) @ normal
    if dist > margin:
        return pack([])
    return pack([(dist, support - 0.5 * dist * normal, normal, _ZERO)])


# ----------------------------------------------------------------------------- spheres, capsules

def _sphere_sphere(pos1, mat1, r1, pos2, mat2, r2, margin):
    """One contact of two spheres (``mjraw_SphereSphere``)."""
    dif = pos1 - pos2
    cdist_sqr = dif @ dif
    min_dist = margin + r1 + r2
    if cdist_sqr > min_dist * min_dist:
        return []
    dist = np.sqrt(cdist_sqr) - r1 - r2
    normal, length = normalize(pos2 - pos1)
    if length < MINVAL:                   # same centres: cross product of the z axes
        normal, _ = normalize(cross(mat1[:, 2], mat2[:, 2]))
    pos = normal * (r1 + dist / 2) + pos1
    return [(dist, pos, normal, _ZERO)]


def sphere_sphere(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Two spheres: MuJoCo's ``mjc_SphereSphere``.

    The normal joins the centres (the cross product of the z axes if they
    coincide); the point is midway between the two surfaces.
    """
    return pack(_sphere_sphere(pos1, mat1, size1[0], pos2, mat2, size2[0], margin))


def _sphere_capsule(pos1, mat1, r1, pos2, mat2, size2, margin):
    """Sphere and capsule as two spheres (``mjraw_SphereCapsule``)."""
    axis = mat2[:, 2]
    x = np.clip(axis @ (pos1 - pos2), -size2[1], size2[1])
    return _sphere_sphere(pos1, mat1, r1, axis * x + pos2, mat2, size2[0], margin)


def sphere_capsule(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Sphere and capsule: MuJoCo's ``mjc_SphereCapsule``.

    The sphere meets the capsule's sphere at the point of the axis segment
    nearest the sphere centre.
    """
    return pack(_sphere_capsule(pos1, mat1, size1[0], pos2, mat2, size2, margin))


def sphere_cylinder(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Sphere and cylinder: MuJoCo's ``mjc_SphereCylinder``.

    By where the sphere centre projects: beside the side (sphere–sphere with
    the axis point), over a cap (plane–sphere with the cap, normal flipped to
    point from the sphere), or beyond the rim (sphere–sphere with the rim
    point); a centre inside the cylinder takes the nearer of side and cap.
    """
    radius, height = size2[0], size2[1]
    axis = mat2[:, 2]
    vec = pos1 - pos2
    x = axis @ vec
    a_proj = axis * x
    p_proj = vec - a_proj
    p_proj_sqr = p_proj @ p_proj
    collide_side = abs(x) < height
    collide_cap = p_proj_sqr < radius * radius
    if collide_side and collide_cap:      # centre inside: keep the nearer feature
        if height - abs(x) < radius - np.sqrt(p_proj_sqr):
            collide_side = False
        else:
            collide_cap = False
    if collide_side:
        return pack(_sphere_sphere(pos1, mat1, size1[0], a_proj + pos2, mat2, size2[0], margin))
    if collide_cap:
        if x > 0:
            pos_cap, mat_cap = pos2 + axis * height, mat2
        else:                             # bottom cap: frame turned over about y
            pos_cap, mat_cap = pos2 - axis * height, mat2 * np.array([-1.0, 1.0, -1.0])
        contacts = _plane_sphere(pos_cap, mat_cap, pos1, size1[0], margin)
        return pack([(d, p, -n, t) for d, p, n, t in contacts])
    rim = p_proj * (size2[0] / np.sqrt(p_proj_sqr)) + axis * (height if x > 0 else -height) + pos2
    return pack(_sphere_sphere(pos1, mat1, size1[0], rim, mat2, 0.0, margin))


#: Squared sine of the angle between two capsule axes below which they count as parallel.
PARALLEL_SIN2 = 1e-8


def capsule_capsule(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Two capsules: MuJoCo's ``mjc_CapsuleCapsule``.

    Skew axes: the nearest points of the two segments (clamped as MuJoCo
    clamps them), then sphere–sphere.  Nearly parallel axes (squared sine of
    their angle below :data:`PARALLEL_SIN2`): one contact at each end of the
    overlap of the two segments along axis 1, lower end first; each end is a
    segment end paired with its projection on the other segment (clamped).

    Notes
    -----
    The parallel branch is MuJoCo 4.0's, as its contacts show (tested on
    random parallel and near-parallel pairs); the 3.12 source tries the four
    segment ends in turn, with a threshold of ``mjMINVAL`` on the determinant.
    """
    axis1 = mat1[:, 2] * size1[1]
    axis2 = mat2[:, 2] * size2[1]
    dif = pos1 - pos2
    ma = axis1 @ axis1
    mb = -(axis1 @ axis2)
    mc = axis2 @ axis2
    u = -(axis1 @ dif)
    v = axis2 @ dif
    det = ma * mc - mb * mb
    r1, r2 = size1[0], size2[0]

    def pair(x1, x2):
        return _sphere_sphere(axis1 * x1 + pos1, mat1, r1, axis2 * x2 + pos2, mat2, r2, margin)

    if det >= PARALLEL_SIN2 * ma * mc:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1, x2 = 1.0, (v - mb) / mc
        elif x1 < -1:
            x1, x2 = -1.0, (v + mb) / mc
        if x2 > 1:
            x2, x1 = 1.0, np.clip((u - mb) / ma, -1, 1)
        elif x2 < -1:
            x2, x1 = -1.0, np.clip((u + mb) / ma, -1, 1)
        return pack(pair(x1, x2))

    xa, xb = (u - mb) / ma, (u + mb) / ma   # ends x2 = +1, -1 of segment 2 on segment 1
    if min(xa, xb) > -1:                    # lower end of the overlap: an end of segment 2
        low = pair(np.clip(min(xa, xb), -1, 1), 1.0 if xa < xb else -1.0)
    else:                                   # or the lower end of segment 1
        low = pair(-1.0, np.clip((v + mb) / mc, -1, 1))
    if max(xa, xb) < 1:
        high = pair(np.clip(max(xa, xb), -1, 1), 1.0 if xa > xb else -1.0)
    else:
        high = pair(1.0, np.clip((v - mb) / mc, -1, 1))
    return pack(low + high)
