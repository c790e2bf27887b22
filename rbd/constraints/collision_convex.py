r"""General convex collision (GJK), as MuJoCo's native ``mjc_Convex``.

MuJoCo collides the pairs it has no primitive routine for (ellipsoids with anything
but a plane; a cylinder with a capsule, a cylinder or a box; meshes) through one
algorithm on *support functions*: the point :math:`s_A(d)` of a convex set
:math:`A` farthest along a direction :math:`d`.  Two geoms are apart when the
origin is outside their Minkowski difference :math:`A - B`, whose support is
:math:`s_A(d) - s_B(-d)`; Gilbert–Johnson–Keerthi (GJK, 1988) walks a simplex of
such points towards the origin.  This module follows ``engine_collision_gjk.c``
(``mjc_ccd``, ``gjk``, ``gjkIntersect``, the signed-volume distance subalgorithm of
Montanari et al., ACM ToG 2017) and ``engine_collision_convex.c`` (``mjc_Convex``,
``mjc_penetration``, the support functions), with MuJoCo's defaults
``ccd_tolerance`` 1e-6 and ``ccd_iterations`` 35.

What is covered, and how:

* **A sphere or a capsule against any convex geom** (MuJoCo's special case): the
  sphere shrinks to its centre and the capsule to its segment, GJK finds the
  distance :math:`\|x_1 - x_2\|` between those cores and the other geom (grown by
  half the margin), and the contact is *inflated* by the radii: while the cores
  stay apart (penetration shallower than the radii), ``dist`` = core distance −
  radii, the witness points move by the radii along :math:`x_2 - x_1`, the contact
  point is their midpoint and the normal :math:`(x_1 - x_2)/\|x_1 - x_2\|` (from
  geom 1 to geom 2).
* **Any other pair** (and a sphere or capsule whose core touches the other geom)
  needs the penetration depth of the expanding-polytope algorithm (EPA), not
  reproduced here.  GJK still decides whether the geoms touch: when they do not
  the pair has no contact (exactly MuJoCo's answer); when they do the routine
  raises :class:`ConvexUnsupportedError`, and the narrow phase lists the pair in
  ``Contacts.unsupported``.
* **Several contacts** (MuJoCo's multi-CCD, on unless ``multiccd`` is disabled): for
  pairs without a sphere or an ellipsoid, MuJoCo turns both geoms slightly about the
  first contact and searches again for contacts farther than 1e-3 of the smaller
  bounding radius from it.  MuJoCo 4.0's rule (measured: a capsule flat on a cylinder
  gets two contacts at the capsule's ends and loses the first) is not the one of the
  source read here (``engine_collision_convex.c`` as of 3.12, which keeps the first
  and adds the turned ones), so rbd runs the source's search only as a test: when it
  finds no second contact the single contact is MuJoCo's (on 21 of 30 random
  capsule–cylinder states); when it finds one, the pair raises
  :class:`ConvexUnsupportedError` rather than give another contact set.

The agreement with MuJoCo 4.0 (``tests/test_collision_convex.py``): distances to 1e-8,
contact points to 1e-5 and normals to 1e-4 — not to rounding.  GJK stops once the
Frank–Wolfe gap falls below :math:`\tfrac12` ``ccd_tolerance``:math:`^2` = 5e-13, which
bounds the distance's error by about that over the distance but the witness points'
only by about its square root (1e-6 times the geoms' scale); MuJoCo 4.0's iterates
differ from those of the source followed here (one more or one fewer iteration), so
points and normals agree to that bound (measured worst over 30 random states per pair:
2e-6 on points, 2e-5 on normals, 4e-9 on distances).
"""

from __future__ import annotations

import numpy as np

from .collision_primitive import MINVAL, PairContacts, cross, make_frame, normalize, pack

#: MuJoCo's ``ccd_tolerance`` and ``ccd_iterations`` defaults (``mjOption``).
TOLERANCE = 1e-6
ITERATIONS = 35
#: ``mjMAX_LIMIT``: GJK's "no distance".
MAX_LIMIT = np.finfo(float).max
#: Multi-CCD: turn angle and the relative distance that makes a contact new.
PERTURBATION_ANGLE = 1e-3
RELATIVE_TOLERANCE = 1e-3


def bounding_radius(kind: str, size) -> float:
    """Radius of the bounding sphere about the geom's centre (``geom_rbound``; plane: 0)."""
    s = np.asarray(size, dtype=float)
    if kind == "sphere":
        return float(s[0])
    if kind == "capsule":
        return float(s[0] + s[1])
    if kind == "cylinder":
        return float(np.hypot(s[0], s[1]))
    if kind == "ellipsoid":
        return float(np.max(s[:3]))
    if kind == "box":
        return float(np.linalg.norm(s[:3]))
    return 0.0


class ConvexUnsupportedError(Exception):
    """The geoms touch and their contacts need EPA's penetration depth or MuJoCo's
    multi-contact search, which rbd does not reproduce (module notes)."""


# ----------------------------------------------------------------------------- support functions

def _dot(a, b) -> float:
    """``a · b`` summed left to right, as MuJoCo's ``dot3`` (rounding as MuJoCo's)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _to_world(mat, local, pos) -> np.ndarray:
    """``mat @ local + pos`` in MuJoCo's order of operations (``localToGlobal``)."""
    return np.array([mat[0, 0] * local[0] + mat[0, 1] * local[1] + mat[0, 2] * local[2],
                     mat[1, 0] * local[0] + mat[1, 1] * local[1] + mat[1, 2] * local[2],
                     mat[2, 0] * local[0] + mat[2, 1] * local[1] + mat[2, 2] * local[2]]) + pos


def _to_local(mat, d) -> np.ndarray:
    """``mat.T @ d`` in MuJoCo's order of operations (``mulMatTVec3``)."""
    return np.array([mat[0, 0] * d[0] + mat[1, 0] * d[1] + mat[2, 0] * d[2],
                     mat[0, 1] * d[0] + mat[1, 1] * d[1] + mat[2, 1] * d[2],
                     mat[0, 2] * d[0] + mat[1, 2] * d[1] + mat[2, 2] * d[2]])


def _support(kind: str, pos, mat, size, d) -> np.ndarray:
    """World point of the geom farthest along the unit direction ``d`` (MuJoCo's
    ``mjc_<kind>Support``); ``"point"`` and ``"line"`` are a sphere's centre and a
    capsule's segment."""
    if kind == "point":
        return pos.copy()
    if kind == "line":
        axis = mat[:, 2]
        return axis * (size[1] if _dot(axis, d) >= 0 else -size[1]) + pos
    if kind == "sphere":
        return size[0] * d + pos
    local = _to_local(mat, d)
    if kind == "capsule":
        supp = local * size[0]
        supp[2] += size[1] if local[2] >= 0 else -size[1]
    elif kind == "ellipsoid":
        supp = local * size
        norm2 = _dot(supp, supp)
        if norm2 < MINVAL * MINVAL:
            return mat[:, 0] * size[0] + pos
        supp = supp * ((1 / np.sqrt(norm2)) * size)
    elif kind == "cylinder":
        n2 = local[0] * local[0] + local[1] * local[1]
        scl = size[0] / np.sqrt(n2) if n2 >= MINVAL * MINVAL else 0.0
        supp = np.array([scl * local[0], scl * local[1],
                         size[1] if local[2] >= 0 else -size[1]])
    elif kind == "box":
        supp = np.where(local >= 0, size, -size)
    else:
        raise ValueError(f"no support function for geom kind {kind!r}")
    return _to_world(mat, supp, pos)


class _Geom:
    """One side of the pair: kind, world pose, size and margin (MuJoCo's ``mjCCDObj``)."""

    def __init__(self, kind, pos, mat, size, margin):
        self.kind, self.pos, self.mat = kind, np.array(pos, float), np.array(mat, float)
        self.size, self.margin = np.asarray(size, float), margin

    def support(self, d: np.ndarray) -> np.ndarray:
        point = _support(self.kind, self.pos, self.mat, self.size, d)
        if self.margin > 0:                               # grown by half the pair margin
            point = point + d * (0.5 * self.margin)
        return point


def _vertex(g1: _Geom, g2: _Geom, d: np.ndarray) -> tuple:
    """Support of the Minkowski difference along unit ``d``: (s1(d) - s2(-d), s1, s2)."""
    v1, v2 = g1.support(d), g2.support(-d)
    return (v1 - v2, v1, v2)


# ----------------------------------------------------------------------------- subdistance

def _same_sign(a: float, b: float) -> int:
    if a > 0 and b > 0:
        return 1
    if a < 0 and b < 0:
        return -1
    return 0


def _det3(a, b, c) -> float:
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


def _project_origin_line(s1, s2) -> np.ndarray:
    diff = s2 - s1
    return s2 + (-(_dot(s2, diff) / _dot(diff, diff))) * diff


def _project_origin_plane(s1, s2, s3):
    """The origin projected on the plane of three points, or None if they are collinear."""
    d21, d31, d32 = s2 - s1, s3 - s1, s3 - s2
    for n, v in ((cross(d32, d21), s2), (cross(d21, d31), s1)):
        nv, nn = _dot(n, v), _dot(n, n)
        if nn == 0:
            return None
        if nv != 0 and nn > MINVAL:
            return n * (nv / nn)
    n = cross(d31, d32)
    return n * (_dot(n, s3) / _dot(n, n))


def _s1d(s1, s2) -> np.ndarray:
    """Barycentric coordinates of the point of segment (s1, s2) closest to the origin."""
    p = _project_origin_line(s1, s2)
    mu = s1 - s2
    index = 0
    for k in (1, 2):
        if abs(mu[k]) >= abs(mu[index]):
            index = k
    c1, c2 = p[index] - s2[index], s1[index] - p[index]
    if _same_sign(mu[index], c1) and _same_sign(mu[index], c2):
        return np.array([c1 / mu[index], c2 / mu[index]])
    return np.array([0.0, 1.0])


def _closest_face(simplex, comps, lower) -> np.ndarray:
    """Of the faces opposite each vertex whose sign test failed, the one closest to the
    origin (Montanari et al.: recursion on the lower simplex)."""
    n = len(simplex)
    best, dmin = np.zeros(n), MAX_LIMIT
    for i in range(n):
        if comps[i]:
            continue
        rest = [simplex[j] for j in range(n) if j != i]
        lam = lower(*rest)
        x = sum(l * s for l, s in zip(lam, rest, strict=True))
        d = _dot(x, x)
        if d < dmin:
            best = np.insert(lam, i, 0.0)
            dmin = d
    return best


def _s2d(s1, s2, s3) -> np.ndarray:
    p = _project_origin_plane(s1, s2, s3)
    if p is None:
        return np.array([*_s1d(s1, s2), 0.0])
    m14 = s2[1] * s3[2] - s2[2] * s3[1] - s1[1] * s3[2] + s1[2] * s3[1] + s1[1] * s2[2] \
        - s1[2] * s2[1]
    m24 = s2[0] * s3[2] - s2[2] * s3[0] - s1[0] * s3[2] + s1[2] * s3[0] + s1[0] * s2[2] \
        - s1[2] * s2[0]
    m34 = s2[0] * s3[1] - s2[1] * s3[0] - s1[0] * s3[1] + s1[1] * s3[0] + s1[0] * s2[1] \
        - s1[1] * s2[0]
    mu1, mu2, mu3 = abs(m14), abs(m24), abs(m34)
    if mu1 >= mu2 and mu1 >= mu3:
        m_max, keep = m14, [1, 2]
    elif mu2 >= mu3:
        m_max, keep = m24, [0, 2]
    else:
        m_max, keep = m34, [0, 1]
    a, b, c, o = s1[keep], s2[keep], s3[keep], p[keep]

    def area(u, v):                     # signed area of the triangle (o, u, v), as MuJoCo's
        return o[0] * u[1] + o[1] * v[0] + u[0] * v[1] - o[0] * v[1] - o[1] * u[0] - v[0] * u[1]

    cofactors = (area(b, c), area(c, a), area(a, b))
    comps = [_same_sign(m_max, cf) for cf in cofactors]
    if all(comps):
        return np.array(cofactors) / m_max
    return _closest_face([s1, s2, s3], comps, _s1d)


def _s3d(s1, s2, s3, s4) -> np.ndarray:
    cofactors = (-_det3(s2, s3, s4), _det3(s1, s3, s4), -_det3(s1, s2, s4), _det3(s1, s2, s3))
    m_det = sum(cofactors[1:], cofactors[0])
    comps = [_same_sign(m_det, cf) for cf in cofactors]
    if all(comps):
        return np.array(cofactors) / m_det
    return _closest_face([s1, s2, s3, s4], comps, _s2d)


def _subdistance(points: list) -> np.ndarray:
    """Barycentric coordinates of the simplex point closest to the origin (``subdistance``)."""
    if len(points) == 4:
        return _s3d(*points)
    if len(points) == 3:
        return _s2d(*points)
    if len(points) == 2:
        return _s1d(*points)
    return np.array([1.0])


# ----------------------------------------------------------------------------- GJK

class _Status:
    """GJK's state and result (MuJoCo's ``mjCCDStatus``)."""

    def __init__(self, g1: _Geom, g2: _Geom, dist_cutoff: float):
        self.x1, self.x2 = g1.pos.copy(), g2.pos.copy()      # start at the centres
        self.dist_cutoff = dist_cutoff
        self.dist, self.separated, self.simplex, self.iterations = MAX_LIMIT, False, [], 0


def _signed_distance(v1, v2, v3):
    """Distance of the origin below the face (v1, v2, v3) and its unit normal."""
    normal = cross(v3 - v1, v2 - v1)
    norm2 = _dot(normal, normal)
    if MINVAL * MINVAL < norm2 < 1e20:                   # mjMINVAL², mjMAXVAL²
        normal = normal * (1 / np.sqrt(norm2))
        return _dot(normal, v1), normal
    return MAX_LIMIT, normal


def _gjk_intersect(status: _Status, g1: _Geom, g2: _Geom) -> int:
    """1 if the tetrahedron can be grown to hold the origin, 0 if a separating plane is
    found, -1 if inconclusive (``gjkIntersect``)."""
    simplex = list(status.simplex)
    s = [0, 1, 2, 3]
    k = status.iterations
    while k < ITERATIONS:
        faces = ((2, 1, 3), (0, 2, 3), (1, 0, 3), (0, 1, 2))
        found = [_signed_distance(*(simplex[s[f]][0] for f in face)) for face in faces]
        dist = [f[0] for f in found]
        if not all(dist):
            status.iterations = k
            return -1
        i = 0 if dist[0] < dist[1] else 1
        j = 2 if dist[2] < dist[3] else 3
        index = i if dist[i] < dist[j] else j
        if dist[index] > 0:
            status.simplex = [simplex[s[m]] for m in range(4)]
            status.iterations = k
            return 1
        normal = found[index][1]
        simplex[s[index]] = _vertex(g1, g2, normal)
        if _dot(normal, simplex[s[index]][0]) < 0:
            status.simplex, status.iterations = [], k
            return 0
        i, j = (index + 1) & 3, (index + 2) & 3
        s[i], s[j] = s[j], s[i]
        k += 1
    status.iterations = k
    return -1


def _gjk(status: _Status, g1: _Geom, g2: _Geom) -> None:
    """MuJoCo's ``gjk``: the distance between the geoms (``dist_cutoff`` > 0) or whether
    they touch (``dist_cutoff`` = 0, through :func:`_gjk_intersect` once a tetrahedron
    forms); witness points in ``status.x1``, ``status.x2``."""
    get_dist = status.dist_cutoff > 0
    backup = not get_dist
    simplex: list = []
    lam = np.array([1.0])
    tol2 = TOLERANCE * TOLERANCE
    epsilon, min_norm = 0.5 * tol2, TOLERANCE       # smooth geoms (no box-box or mesh here)
    x_k = status.x1 - status.x2
    x_norm, x_norm_prev = float(np.sqrt(_dot(x_k, x_k))), 0.0
    k = 0
    while k < ITERATIONS:
        if x_norm < min_norm or abs(x_norm_prev - x_norm) < MINVAL:
            break
        v = _vertex(g1, g2, -(x_k * (1 / x_norm)))
        simplex.append(v)
        s_k = v[0]
        if _dot(x_k, x_k - s_k) < epsilon:                 # Frank–Wolfe duality gap
            simplex.pop()
            break
        lower = _dot(x_k, s_k)
        if (not get_dist and lower > 0) or (
                get_dist and status.dist_cutoff < MAX_LIMIT and lower > 0
                and lower >= status.dist_cutoff * x_norm):
            status.separated, status.iterations, status.simplex = True, k, []
            status.dist = MAX_LIMIT
            return
        if len(simplex) == 4 and backup:
            status.iterations, status.simplex = k, simplex
            ret = _gjk_intersect(status, g1, g2)
            if ret != -1:
                status.separated = ret == 0
                status.dist = 0.0 if ret > 0 else MAX_LIMIT
                return
            k, backup = status.iterations, False
        lam = _subdistance([p[0] for p in simplex])
        kept = [(lm, p) for lm, p in zip(lam, simplex, strict=True) if lm]
        if not kept:
            status.separated, status.iterations, status.simplex = True, k, []
            status.dist = MAX_LIMIT
            return
        lam = np.array([lm for lm, _ in kept])
        simplex = [p for _, p in kept]
        x_k = _lincomb(lam, [p[0] for p in simplex])
        x_norm_prev, x_norm = x_norm, float(np.sqrt(_dot(x_k, x_k)))
        k += 1
        if len(simplex) == 4:
            break
    if simplex:
        status.x1 = _lincomb(lam, [p[1] for p in simplex])
        status.x2 = _lincomb(lam, [p[2] for p in simplex])
    if x_norm > 0 and _dot(x_k, _vertex(g1, g2, -(x_k * (1 / x_norm)))[0]) > 0:  # separated?
        status.separated = True
    status.iterations, status.simplex = k, simplex
    status.dist = 0.0 if (len(simplex) == 4 and not status.separated) else x_norm


def _lincomb(coef, vectors) -> np.ndarray:
    """``coef[0] v[0] + coef[1] v[1] + ...`` in MuJoCo's order of operations (``lincomb``)."""
    out = coef[0] * vectors[0]
    for c, v in zip(coef[1:], vectors[1:], strict=True):
        out = out + c * v
    return out


# ----------------------------------------------------------------------------- the pair routine

#: The cores GJK uses for spheres and capsules (grown back by the radius afterwards).
_CORE = {"sphere": "point", "capsule": "line"}


def _ccd(g1: _Geom, g2: _Geom):
    """MuJoCo's ``mjc_ccd`` with ``dist_cutoff`` 0: the signed distance (less the margin)
    and witness points of the pair, or None when the geoms do not touch.

    Raises
    ------
    ConvexUnsupportedError
        When the answer needs EPA.
    """
    if g1.kind in _CORE or g2.kind in _CORE:
        full = []
        cores = []
        for g in (g1, g2):
            if g.kind in _CORE:
                full.append(g.size[0] + 0.5 * g.margin)
                cores.append(_Geom(_CORE[g.kind], g.pos, g.mat, g.size, 0.0))
            else:
                full.append(0.0)
                cores.append(g)
        status = _Status(*cores, dist_cutoff=full[0] + full[1])
        _gjk(status, *cores)
        if status.dist > TOLERANCE:                      # shallow: inflate by the radii
            if status.dist == MAX_LIMIT:
                return None
            n, _ = normalize(status.x2 - status.x1)
            x1 = status.x1 + full[0] * n if full[0] else status.x1
            x2 = status.x2 - full[1] * n if full[1] else status.x2
            dist = status.dist - (full[0] + full[1])
            return (dist, x1, x2) if dist <= 0 else None
        raise ConvexUnsupportedError("the cores of a sphere or capsule pair touch")
    status = _Status(g1, g2, dist_cutoff=0.0)
    _gjk(status, g1, g2)
    if status.dist <= TOLERANCE and len(status.simplex) > 1 and not status.separated:
        raise ConvexUnsupportedError("the geoms touch")
    return None


def _penetration(g1: _Geom, g2: _Geom, margin: float):
    """One contact ``(dist, pos, normal)`` of the pair, or None (``mjc_penetration``)."""
    found = _ccd(g1, g2)
    if found is None or not found[0] < 0:
        return None
    dist, x1, x2 = found
    return margin + dist, (x1 + x2) * 0.5, normalize(x1 - x2)[0]


def _quat_to_mat(q) -> np.ndarray:
    """``mju_quat2Mat`` (its order of operations)."""
    q00, q01, q02, q03 = q[0] * q[0], q[0] * q[1], q[0] * q[2], q[0] * q[3]
    q11, q12, q13 = q[1] * q[1], q[1] * q[2], q[1] * q[3]
    q22, q23, q33 = q[2] * q[2], q[2] * q[3], q[3] * q[3]
    return np.array([[q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02)],
                     [2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01)],
                     [2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33]])


def _turned(g: _Geom, origin, rot) -> _Geom:
    """The geom turned by ``rot`` about the point ``origin`` (``mju_rotateFrame``)."""
    rel = origin - g.pos
    return _Geom(g.kind, g.pos - (rot @ rel - rel), rot @ g.mat, g.size, g.margin)


def convex(kind1, kind2, pos1, mat1, size1, pos2, mat2, size2, margin, rbound1, rbound2,
           multiccd: bool = True) -> PairContacts:
    """Contacts of two convex geoms by GJK, as MuJoCo's ``mjc_Convex`` (module notes).

    Parameters
    ----------
    kind1, kind2 : str
        Geom kinds, geom 1 before geom 2 in MuJoCo's order.
    pos1, mat1, size1, pos2, mat2, size2 : array_like
        World poses and sizes (:mod:`rbd.constraints.collision_primitive`).
    margin : float
        The pair's ``margin + gap``.
    rbound1, rbound2 : float
        Bounding radii (``geom_rbound``): the scale of multi-CCD's "new contact" test.
    multiccd : bool
        MuJoCo's multi-CCD (its ``multiccd`` disable flag off).

    Raises
    ------
    ConvexUnsupportedError
        The geoms touch and the contacts need EPA or MuJoCo's multi-contact search.
    """
    g1 = _Geom(kind1, pos1, mat1, size1, margin)
    g2 = _Geom(kind2, pos2, mat2, size2, margin)
    first = _penetration(g1, g2, margin)
    if first is None:
        return pack([])
    if multiccd and not {kind1, kind2} & {"sphere", "ellipsoid"}:
        frame = make_frame(first[2], np.zeros(3))
        tolerance = RELATIVE_TOLERANCE * min(rbound1, rbound2)
        for axis in (frame[1], frame[2]):
            for angle in (-PERTURBATION_ANGLE, PERTURBATION_ANGLE):
                s = np.sin(angle * 0.5)
                rot = _quat_to_mat(np.array([np.cos(angle * 0.5), *(axis * s)]))
                extra = _penetration(_turned(g1, first[1], rot), _turned(g2, first[1], rot.T),
                                     margin)
                if extra is not None and np.sqrt(_dot(first[1] - extra[1],
                                                      first[1] - extra[1])) > tolerance:
                    raise ConvexUnsupportedError("MuJoCo's multi-contact search applies")
    return pack([(first[0], first[1], first[2], np.zeros(3))])


def _pair_routine(kind1: str, kind2: str):
    """The narrow phase's routine for a kind pair: :func:`convex` with the pair's kinds."""
    def routine(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
        return convex(kind1, kind2, pos1, mat1, size1, pos2, mat2, size2, margin,
                      bounding_radius(kind1, size1), bounding_radius(kind2, size2))

    routine.__name__ = routine.__qualname__ = f"convex_{kind1}_{kind2}"
    routine.__doc__ = f"{kind1}–{kind2} contacts by GJK (:func:`convex`)."
    return routine


#: MuJoCo's ``mjc_Convex`` pairs among the primitives, keyed as
#: :data:`rbd.constraints.collision.PAIR_FUNCTIONS`.
PAIR_FUNCTIONS = {pair: _pair_routine(*pair) for pair in (
    ("sphere", "ellipsoid"), ("capsule", "ellipsoid"), ("capsule", "cylinder"),
    ("ellipsoid", "ellipsoid"), ("ellipsoid", "cylinder"), ("ellipsoid", "box"),
    ("cylinder", "cylinder"), ("cylinder", "box"))}
