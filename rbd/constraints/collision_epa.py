r"""Expanding polytope algorithm (EPA): penetration depth, as MuJoCo's ``engine_collision_gjk.c``.

When GJK ends with a simplex holding the origin, the two geoms overlap and the
penetration depth is the distance from the origin to the boundary of their
Minkowski difference.  EPA (van den Bergen 2001) grows a polytope inside that set:
the face closest to the origin gives a lower bound on the depth and, through the
support point along its normal, an upper bound; the support point replaces the
faces it can see (the *horizon*) and the loop ends when the bounds are within
``ccd_tolerance``.  The initial polytope comes from GJK's simplex: a segment is
turned into a hexahedron by three support points 120° apart about it
(``polytope2``), a triangle by the support points on either side (``polytope3``), a
tetrahedron as it is (``polytope4``).  The witness points are the barycentric
combination, on the closest face, of the vertices' points on each geom
(``epaWitness``).  Face records and vertex indices follow MuJoCo's, so that the faces
are visited in MuJoCo's order.
"""

from __future__ import annotations

import numpy as np

from .collision_gjk import (
    ITERATIONS,
    MAX_LIMIT,
    TOLERANCE,
    ConvexGeom,
    det3,
    discrete,
    dot3,
    lincomb,
    project_origin_plane,
    vertex,
)
from .collision_primitive import MINVAL, cross

#: ``mjMINDIST2/3/4`` (``mjMINVAL`` squared): a face this close to the origin holds it.
MINDIST2 = MINVAL * MINVAL


class _Face:
    """One face: vertex indices, adjacent faces per edge, the origin's projection ``v``
    on its plane (pointing outwards), its squared norm, and its place in the map
    (-1: not in it, -2: deleted)."""

    __slots__ = ("verts", "adj", "v", "dist2", "index")

    def __init__(self, verts, adj):
        self.verts, self.adj = verts, list(adj)
        self.v, self.dist2, self.index = np.zeros(3), 0.0, -1


class _Polytope:
    def __init__(self):
        self.verts: list = []          # (w, w1, w2): Minkowski vertex and the geoms' points
        self.faces: list[_Face] = []
        self.map: list[_Face] = []
        self.center = np.zeros(3)
        self.edges: list = []          # horizon: (face index, edge)

    def support(self, g1, g2, d, dnorm) -> int:
        """Add the support vertex along ``d`` (``epaSupport``); its index."""
        direction = (np.array([d[0] / dnorm, d[1] / dnorm, d[2] / dnorm]) if dnorm > MINVAL
                     else np.array([1.0, 0.0, 0.0]))
        self.verts.append(vertex(g1, g2, direction))
        return len(self.verts) - 1

    def attach(self, v1, v2, v3, adj) -> float:
        """New face (v1, v2, v3); its squared distance to the origin, 0 if degenerate
        (``attachFace``)."""
        face = _Face((v1, v2, v3), adj)
        self.faces.append(face)
        p = project_origin_plane(self.verts[v3][0], self.verts[v2][0], self.verts[v1][0])
        if p is None:
            return 0.0
        if dot3(p, self.verts[v1][0] - self.center) < 0:
            p = p * -1
        face.v, face.dist2 = p, dot3(p, p)
        return face.dist2

    def index_all(self) -> None:
        self.map = list(self.faces)
        for i, f in enumerate(self.faces):
            f.index = i

    def delete(self, face: _Face) -> None:
        if face.index >= 0:
            last = self.map.pop()
            if last is not face:
                self.map[face.index] = last
                last.index = face.index
        face.index = -2

    def horizon_rec(self, face: _Face, e: int, w) -> bool:
        if dot3(face.v, w) - face.dist2 > MINVAL:
            verts = face.verts
            self.delete(face)
            for k in (1, 2):
                i = (e + k) % 3
                adj = self.faces[face.adj[i]]
                if adj.index > -2:
                    edge = _edge(adj, verts[(i + 1) % 3])
                    if not self.horizon_rec(adj, edge, w):
                        self.edges.append((face.adj[i], edge))
            return True
        return False

    def horizon(self, face: _Face, w) -> None:
        self.delete(face)
        verts = face.verts
        for i, start in ((0, verts[1]), (1, verts[2]), (2, verts[0])):
            adj = self.faces[face.adj[i]]
            edge = _edge(adj, start)
            if (i == 0 or adj.index > -2) and not self.horizon_rec(adj, edge, w):
                self.edges.append((face.adj[i], edge))


def _edge(face: _Face, vert: int) -> int:
    return 0 if face.verts[0] == vert else 1 if face.verts[1] == vert else 2


def _same_side(p0, p1, p2, p3) -> bool:
    n = cross(p1 - p0, p2 - p0)
    dot1, dot2 = dot3(n, p3 - p0), dot3(n, p0 * -1)
    return (dot1 > 0 and dot2 > 0) or (dot1 < 0 and dot2 < 0)


def _in_tetra(p0, p1, p2, p3) -> bool:
    return (_same_side(p0, p1, p2, p3) and _same_side(p1, p2, p3, p0)
            and _same_side(p2, p3, p0, p1) and _same_side(p3, p0, p1, p2))


def _turn120(axis) -> np.ndarray:
    """Rotation by 120° about ``axis`` (``rotmat``, its constants)."""
    n = np.sqrt(dot3(axis, axis))
    u1, u2, u3 = axis[0] / n, axis[1] / n, axis[2] / n
    s, c = 0.86602540378, -0.5
    k = 1 - c
    return np.array([[c + u1 * u1 * k, u1 * u2 * k - u3 * s, u1 * u3 * k + u2 * s],
                     [u2 * u1 * k + u3 * s, c + u2 * u2 * k, u2 * u3 * k - u1 * s],
                     [u1 * u3 * k - u2 * s, u2 * u3 * k + u1 * s, c + u3 * u3 * k]])


def _mat_vec(R, x) -> np.ndarray:
    return np.array([R[k, 0] * x[0] + R[k, 1] * x[1] + R[k, 2] * x[2] for k in range(3)])


def _ray_triangle(v1, v2, v3, v4, v5) -> int:
    d12, d13, d14, d15 = v2 - v1, v3 - v1, v4 - v1, v5 - v1
    vol1, vol2, vol3 = det3(d13, d14, d12), det3(d14, d15, d12), det3(d15, d13, d12)
    if vol1 >= 0 and vol2 >= 0 and vol3 >= 0:
        return 1
    if vol1 <= 0 and vol2 <= 0 and vol3 <= 0:
        return -1
    return 0


def tri_affine(v1, v2, v3, p) -> np.ndarray:
    """Affine coordinates of ``p`` on the triangle (``triAffineCoord``)."""
    m14 = v2[1] * v3[2] - v2[2] * v3[1] - v1[1] * v3[2] + v1[2] * v3[1] + v1[1] * v2[2] \
        - v1[2] * v2[1]
    m24 = v2[0] * v3[2] - v2[2] * v3[0] - v1[0] * v3[2] + v1[2] * v3[0] + v1[0] * v2[2] \
        - v1[2] * v2[0]
    m34 = v2[0] * v3[1] - v2[1] * v3[0] - v1[0] * v3[1] + v1[1] * v3[0] + v1[0] * v2[1] \
        - v1[1] * v2[0]
    mu1, mu2, mu3 = abs(m14), abs(m24), abs(m34)
    if mu1 >= mu2 and mu1 >= mu3:
        m_max, x, y = m14, 1, 2
    elif mu2 >= mu3:
        m_max, x, y = m24, 0, 2
    else:
        m_max, x, y = m34, 0, 1

    def area(u, w):
        return p[x] * u[y] + p[y] * w[x] + u[x] * w[y] - p[x] * w[y] - p[y] * u[x] - w[x] * u[y]

    return np.array([area(v2, v3) / m_max, area(v3, v1) / m_max, area(v1, v2) / m_max])


def _on_triangle(v1, v2, v3, p) -> bool:
    lam = tri_affine(v1, v2, v3, p)
    if lam[0] < 0 or lam[1] < 0 or lam[2] < 0:
        return False
    pr = np.array([v1[k] * lam[0] + v2[k] * lam[1] + v3[k] * lam[2] for k in range(3)])
    diff = pr - p
    return np.sqrt(dot3(diff, diff)) < MINVAL


def _polytope3(pt: _Polytope, simplex, g1, g2, dist=0.0) -> bool:
    """Hexahedron from a triangle; False when it cannot be built (``polytope3``)."""
    pt.verts, pt.faces, pt.map = [], [], []
    v1, v2, v3 = (s[0] for s in simplex)
    pt.center = (v1 + v2 + v3) * (1.0 / 3.0)
    n = cross(v2 - v1, v3 - v1)
    n_norm = np.sqrt(dot3(n, n))
    if n_norm < MINVAL:
        return False
    pt.verts.extend(simplex)
    i5 = pt.support(g1, g2, n * -1, n_norm)
    i4 = pt.support(g1, g2, n, n_norm)
    v4, v5 = pt.verts[i4][0], pt.verts[i5][0]
    if _on_triangle(v1, v2, v3, v4) or _on_triangle(v1, v2, v3, v5):
        return False
    if dist > 10 * MINVAL and not _in_tetra(v1, v2, v3, v4) and not _in_tetra(v1, v2, v3, v5):
        return False
    for verts, adj in (((i4, 0, 1), (1, 3, 2)), ((i4, 2, 0), (2, 4, 0)),
                       ((i4, 1, 2), (0, 5, 1)), ((i5, 1, 0), (5, 0, 4)),
                       ((i5, 0, 2), (3, 1, 5)), ((i5, 2, 1), (4, 2, 3))):
        if pt.attach(*verts, adj) < MINDIST2:
            return False
    pt.index_all()
    return True


def _reduce(pt, simplex_idx, g1, g2, dist) -> bool:
    return _polytope3(pt, [pt.verts[i] for i in simplex_idx], g1, g2, dist)


def _polytope2(pt: _Polytope, simplex, g1, g2, dist) -> bool:
    """Hexahedron about a segment (``polytope2``)."""
    v1, v2 = simplex[0][0], simplex[1][0]
    pt.center = (v1 + v2) * 0.5
    diff = v2 - v1
    index = int(np.argmin(np.abs(diff)))     # first smallest component, as MuJoCo's loop
    e = np.zeros(3)
    e[index] = 1.0
    d1 = cross(e, diff)
    R = _turn120(diff)
    d2 = _mat_vec(R, d1)
    d3 = _mat_vec(R, d2)
    pt.verts.extend(simplex)
    i3 = pt.support(g1, g2, d1, np.sqrt(dot3(d1, d1)))
    i4 = pt.support(g1, g2, d2, np.sqrt(dot3(d2, d2)))
    i5 = pt.support(g1, g2, d3, np.sqrt(dot3(d3, d3)))
    for verts, adj in (((0, i3, i4), (1, 3, 2)), ((0, i5, i3), (2, 4, 0)),
                       ((0, i4, i5), (0, 5, 1)), ((1, i4, i3), (5, 0, 4)),
                       ((1, i3, i5), (3, 1, 5)), ((1, i5, i4), (4, 2, 3))):
        if pt.attach(*verts, adj) < MINDIST2:
            return _reduce(pt, verts, g1, g2, dist)
    if not _ray_triangle(v1, v2, *(pt.verts[i][0] for i in (i3, i4, i5))):
        return False
    pt.index_all()
    return True


def _polytope4(pt: _Polytope, simplex, g1, g2, dist) -> bool:
    """The tetrahedron itself (``polytope4``)."""
    pt.verts.extend(simplex)
    pt.center = (((simplex[0][0] + simplex[1][0]) + simplex[2][0]) + simplex[3][0]) * 0.25
    for verts, adj in (((0, 1, 2), (1, 3, 2)), ((0, 3, 1), (2, 3, 0)),
                       ((0, 2, 3), (0, 3, 1)), ((3, 2, 1), (2, 0, 1))):
        if pt.attach(*verts, adj) < MINDIST2:
            return _reduce(pt, verts, g1, g2, dist)
    if not _in_tetra(*(s[0] for s in simplex)):
        return False
    pt.index_all()
    return True


def penetration(simplex: list, g1: ConvexGeom, g2: ConvexGeom):
    """EPA from GJK's final simplex (2 to 4 vertices): ``(dist, x1, x2)``, the signed
    distance (minus the penetration depth) and the witness points, or None: no contact, as
    MuJoCo when the polytope cannot be built (its ``mjEPA_P*`` statuses) or EPA fails.
    GJK's distance counts as 0 here (MuJoCo's "assume touching")."""
    found = penetration_face(simplex, g1, g2)
    return None if found is None else found[:3]


def penetration_face(simplex: list, g1: ConvexGeom, g2: ConvexGeom):
    """:func:`penetration` and the closest face's three vertex records
    ``(w, w1, w2, index1, index2)`` (what MuJoCo's ``multicontact`` starts from)."""
    pt = _Polytope()
    # two polytopes converge in finitely many steps: a tolerance of mjMINVAL only keeps the
    # bounds from getting absurdly small (mjMINEPATOL)
    finite = discrete(g1, g2)
    tolerance = MINVAL if finite else TOLERANCE
    build = {2: _polytope2, 3: _polytope3, 4: _polytope4}[len(simplex)]
    if not build(pt, list(simplex), g1, g2, 0.0):
        return None
    upper = upper2 = MAX_LIMIT
    face = None
    for k in range(min(ITERATIONS, 1000)):
        previous = face
        lower2 = MAX_LIMIT
        for f in pt.map:
            if f.dist2 < lower2:
                face, lower2 = f, f.dist2
        if lower2 > upper2 or face is None:
            face = previous
            break
        if lower2 <= 0:
            break
        lower = np.sqrt(lower2)
        wi = pt.support(g1, g2, face.v, lower)
        w = pt.verts[wi][0]
        upper_k = dot3(face.v, w) / lower
        if upper_k < upper:
            upper, upper2 = upper_k, upper_k * upper_k
        if upper - lower < tolerance:
            if k == 0 and upper < lower - 1e-10:
                face = None
            break
        if finite and any(v[3:5] == pt.verts[wi][3:5] for v in pt.verts[:-1]):
            break                                   # a support point found before: done
        pt.edges = []
        pt.horizon(face, w)
        if len(pt.edges) < 3:
            face = None
            break
        nfaces, nedges = len(pt.faces), len(pt.edges)
        for i, (h_index, h_edge) in enumerate(pt.edges):
            cur, nxt = nfaces + i, nfaces + (i + 1) % nedges
            h_face = pt.faces[h_index]
            a, b = h_face.verts[h_edge], h_face.verts[(h_edge + 1) % 3]
            h_face.adj[h_edge] = cur
            prev = nfaces + nedges - 1 if i == 0 else cur - 1
            d2 = pt.attach(wi, b, a, (prev, h_index, nxt))
            if d2 == 0:
                face = None
                break
            if lower2 <= d2 <= upper2:
                new = pt.faces[-1]
                new.index = len(pt.map)
                pt.map.append(new)
        if not pt.map or face is None:
            break
    if face is None:
        return None
    v = [pt.verts[i] for i in face.verts]
    lam = tri_affine(v[0][0], v[1][0], v[2][0], face.v)
    x1 = lincomb(lam, [v[0][1], v[1][1], v[2][1]])
    x2 = lincomb(lam, [v[0][2], v[1][2], v[2][2]])
    return -np.sqrt(face.dist2), x1, x2, v
