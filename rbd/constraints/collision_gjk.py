r"""GJK (Gilbert–Johnson–Keerthi) on support functions, as MuJoCo's ``engine_collision_gjk.c``.

The pieces of :mod:`rbd.constraints.collision_convex`: the support functions of the
primitives (``mjc_<kind>Support``), the Minkowski-difference vertex, the signed-volume
distance subalgorithm (Montanari, Petrinic & Barbieri, ACM ToG 2017: ``S1D``, ``S2D``,
``S3D``), ``gjk`` (distance, with the Frank–Wolfe duality-gap stop) and ``gjkIntersect``
(whether the origin is in the Minkowski difference).  Sums and products are written in
MuJoCo's order so that rounding is MuJoCo's.
"""

from __future__ import annotations

import numpy as np

from .collision_primitive import MINVAL, cross

#: MuJoCo's ``ccd_tolerance`` and ``ccd_iterations`` defaults (``mjOption``).
TOLERANCE = 1e-6
ITERATIONS = 35
#: ``mjMAX_LIMIT``: GJK's "no distance".
MAX_LIMIT = np.finfo(float).max


# ----------------------------------------------------------------------------- support functions

def dot3(a, b) -> float:
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
    capsule's segment, ``"mesh"`` the farthest vertex of the hull given as ``size``
    (:class:`rbd.model.mesh_hull.MeshHull`, ``mjc_meshSupport``)."""
    if kind == "point":
        return pos.copy()
    if kind == "line":
        axis = mat[:, 2]
        return axis * (size[1] if dot3(axis, d) >= 0 else -size[1]) + pos
    if kind == "sphere":
        return size[0] * d + pos
    local = _to_local(mat, d)
    if kind == "capsule":
        supp = local * size[0]
        supp[2] += size[1] if local[2] >= 0 else -size[1]
    elif kind == "ellipsoid":
        supp = local * size
        norm2 = dot3(supp, supp)
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
    elif kind == "mesh":                                  # size: the MeshHull
        supp = size.vertices[size.support_index(local)]
    else:
        raise ValueError(f"no support function for geom kind {kind!r}")
    return _to_world(mat, supp, pos)


def box_corner_index(local_supp) -> int:
    """Index of a box corner from its local coordinates: bit 0 set for +x, bit 1 for +y,
    bit 2 for +z (the corner numbering of MuJoCo's ``mjc_boxSupport``)."""
    return int(local_supp[0] > 0) | (2 if local_supp[1] > 0 else 0) | (4 if local_supp[2] > 0
                                                                       else 0)


#: Kinds whose support point is one of finitely many vertices (MuJoCo's ``discreteGeoms``).
DISCRETE = ("box", "mesh")


class ConvexGeom:
    """One side of the pair: kind, world pose, size and margin (MuJoCo's ``mjCCDObj``).

    ``vertindex`` is the index of the last support point of a box (its corner,
    :func:`box_corner_index`) or a mesh (its hull vertex), -1 before the first search or
    for a smooth kind.  A mesh's search starts from it and moves only to a vertex strictly
    farther (``mjc_meshSupport``), so that of equally far vertices the last one found stays.
    """

    def __init__(self, kind, pos, mat, size, margin):
        self.kind, self.pos, self.mat = kind, np.array(pos, float), np.array(mat, float)
        self.size = size if kind == "mesh" else np.asarray(size, float)
        self.margin = margin
        self.vertindex = -1

    def support(self, d: np.ndarray) -> np.ndarray:
        if self.kind == "mesh":
            point = self._mesh_support(d)
        else:
            point = _support(self.kind, self.pos, self.mat, self.size, d)
            if self.kind == "box":
                self.vertindex = box_corner_index(np.where(_to_local(self.mat, d) >= 0, 1, -1))
        if self.margin > 0:                               # grown by half the pair margin
            point = point + d * (0.5 * self.margin)
        return point

    def _mesh_support(self, d: np.ndarray) -> np.ndarray:
        """The hull vertex farthest along ``d``; ties keep the previous support vertex."""
        local = _to_local(self.mat, d)
        v = self.size.vertices
        dots = v[:, 0] * local[0] + v[:, 1] * local[1] + v[:, 2] * local[2]
        best = int(np.argmax(dots))
        if self.vertindex >= 0 and dots[self.vertindex] >= dots[best]:
            best = self.vertindex
        self.vertindex = best
        return _to_world(self.mat, v[best], self.pos)


def discrete(g1: ConvexGeom, g2: ConvexGeom) -> bool:
    """Whether GJK and EPA end in finitely many steps: two polytopes without margin
    (``discreteGeoms``)."""
    return (g1.margin == 0 and g2.margin == 0 and g1.kind in DISCRETE
            and g2.kind in DISCRETE)


def vertex(g1: ConvexGeom, g2: ConvexGeom, d: np.ndarray) -> tuple:
    """Support of the Minkowski difference along unit ``d``:
    ``(s1(d) - s2(-d), s1, s2, index1, index2)``, the indices the geoms' ``vertindex``."""
    v1, v2 = g1.support(d), g2.support(-d)
    return (v1 - v2, v1, v2, g1.vertindex, g2.vertindex)


# ----------------------------------------------------------------------------- subdistance

def _same_sign(a: float, b: float) -> int:
    if a > 0 and b > 0:
        return 1
    if a < 0 and b < 0:
        return -1
    return 0


def det3(a, b, c) -> float:
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


def _project_origin_line(s1, s2) -> np.ndarray:
    diff = s2 - s1
    return s2 + (-(dot3(s2, diff) / dot3(diff, diff))) * diff


def project_origin_plane(s1, s2, s3):
    """The origin projected on the plane of three points, or None if they are collinear."""
    d21, d31, d32 = s2 - s1, s3 - s1, s3 - s2
    for n, v in ((cross(d32, d21), s2), (cross(d21, d31), s1)):
        nv, nn = dot3(n, v), dot3(n, n)
        if nn == 0:
            return None
        if nv != 0 and nn > MINVAL:
            return n * (nv / nn)
    n = cross(d31, d32)
    return n * (dot3(n, s3) / dot3(n, n))


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
        d = dot3(x, x)
        if d < dmin:
            best = np.insert(lam, i, 0.0)
            dmin = d
    return best


def _s2d(s1, s2, s3) -> np.ndarray:
    p = project_origin_plane(s1, s2, s3)
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
    cofactors = (-det3(s2, s3, s4), det3(s1, s3, s4), -det3(s1, s2, s4), det3(s1, s2, s3))
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

class GJKStatus:
    """GJK's state and result (MuJoCo's ``mjCCDStatus``)."""

    def __init__(self, g1: ConvexGeom, g2: ConvexGeom, dist_cutoff: float):
        self.x1, self.x2 = g1.pos.copy(), g2.pos.copy()      # start at the centres
        self.dist_cutoff = dist_cutoff
        self.dist, self.separated, self.simplex, self.iterations = MAX_LIMIT, False, [], 0


def _signed_distance(v1, v2, v3):
    """Distance of the origin below the face (v1, v2, v3) and its unit normal."""
    normal = cross(v3 - v1, v2 - v1)
    norm2 = dot3(normal, normal)
    if MINVAL * MINVAL < norm2 < 1e20:                   # mjMINVAL², mjMAXVAL²
        normal = normal * (1 / np.sqrt(norm2))
        return dot3(normal, v1), normal
    return MAX_LIMIT, normal


def _gjk_intersect(status: GJKStatus, g1: ConvexGeom, g2: ConvexGeom) -> int:
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
        simplex[s[index]] = vertex(g1, g2, normal)
        if dot3(normal, simplex[s[index]][0]) < 0:
            status.simplex, status.iterations = [], k
            return 0
        i, j = (index + 1) & 3, (index + 2) & 3
        s[i], s[j] = s[j], s[i]
        k += 1
    status.iterations = k
    return -1


def gjk(status: GJKStatus, g1: ConvexGeom, g2: ConvexGeom) -> None:
    """MuJoCo's ``gjk``: the distance between the geoms (``dist_cutoff`` > 0) or whether
    they touch (``dist_cutoff`` = 0, through :func:`_gjk_intersect` once a tetrahedron
    forms); witness points in ``status.x1``, ``status.x2``."""
    get_dist = status.dist_cutoff > 0
    backup = not get_dist
    simplex: list = []
    lam = np.array([1.0])
    tol2 = TOLERANCE * TOLERANCE
    if discrete(g1, g2):                            # finite convergence: no tolerance
        epsilon, min_norm = 0.0, MINVAL
    else:
        epsilon, min_norm = 0.5 * tol2, TOLERANCE
    x_k = status.x1 - status.x2
    x_norm, x_norm_prev = float(np.sqrt(dot3(x_k, x_k))), 0.0
    k = 0
    while k < ITERATIONS:
        if x_norm < min_norm or abs(x_norm_prev - x_norm) < MINVAL:
            break
        v = vertex(g1, g2, -(x_k * (1 / x_norm)))
        simplex.append(v)
        s_k = v[0]
        if dot3(x_k, x_k - s_k) < epsilon:                 # Frank–Wolfe duality gap
            simplex.pop()
            break
        lower = dot3(x_k, s_k)
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
        x_k = lincomb(lam, [p[0] for p in simplex])
        x_norm_prev, x_norm = x_norm, float(np.sqrt(dot3(x_k, x_k)))
        k += 1
        if len(simplex) == 4:
            break
    if simplex:
        status.x1 = lincomb(lam, [p[1] for p in simplex])
        status.x2 = lincomb(lam, [p[2] for p in simplex])
    if x_norm > 0 and dot3(x_k, vertex(g1, g2, -(x_k * (1 / x_norm)))[0]) > 0:  # separated?
        status.separated = True
    status.iterations, status.simplex = k, simplex
    status.dist = 0.0 if (len(simplex) == 4 and not status.separated) else x_norm


def lincomb(coef, vectors) -> np.ndarray:
    """``coef[0] v[0] + coef[1] v[1] + ...`` in MuJoCo's order of operations (``lincomb``)."""
    out = coef[0] * vectors[0]
    for c, v in zip(coef[1:], vectors[1:], strict=True):
        out = out + c * v
    return out
