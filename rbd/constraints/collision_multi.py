r"""Several contacts of two polytopes from one EPA run, as MuJoCo's ``multicontact``.

When a box or a mesh lies flat on a box or a mesh, EPA's one contact (the deepest
point) leaves the pair free to rock about it.  MuJoCo (``multicontact`` and its helpers
in ``engine_collision_gjk.c``) recovers the whole patch of contact from the face EPA
ends on, in five steps:

1. **Features.**  Each corner of EPA's closest face is a Minkowski difference
   :math:`w = s_1 - s_2` of support points, each the index of a box corner or a hull
   vertex.  The distinct indices on each geom give its touching feature: a vertex, an
   edge or a face (:func:`simplex_dim`).
2. **Candidate faces.**  For each geom, the outward normals of the faces holding that
   feature (:func:`box_normals`, :func:`mesh_normals`): the one face through three
   vertices, the two faces along an edge, every face at a vertex.
3. **Alignment.**  A face of geom 1 and a face of geom 2 whose normals are opposed
   within :data:`FACE_TOL` (:math:`n_1 \cdot n_2 < -0.996`, about 5°) touch flat
   (:func:`aligned_faces`).  Failing that, when one feature is an edge or a vertex, its
   edges (:func:`box_edges`, :func:`mesh_edges`) are tested for lying in a face of the
   other geom, :math:`|e \cdot n| <` :data:`EDGE_TOL` (:func:`aligned_face_edge`).
   Neither: EPA's contact stands alone.
4. **Clipping.**  Face on face, geom 1's face is clipped to the prism over geom 2's
   face whose walls stand on geom 2's edges perpendicular to geom 1's face
   (Sutherland–Hodgman, :func:`clip_to_face`: each wall keeps its inner side); the
   points left below geom 2's face (penetrating) are the contacts, on geom 1's face.
   An edge on a face is clipped to the prism over the face, walls perpendicular to it.
   More than four points are reduced to the quadrilateral of largest area found by
   MuJoCo's rotating search (:func:`polygon_quad`), an edge's to its two farthest points.
5. **Witness points.**  Each contact point :math:`v` lies on the clipped face or edge;
   its depth is its distance :math:`d = (v - p) \cdot n` below the other face (plane
   through :math:`p`, outward normal :math:`n`), and the witness on that face is
   :math:`v` moved by :math:`|d|` along :math:`n` (:func:`witness_on_face`).  The
   contact is then as EPA's: the witnesses' midpoint, the normal from geom 1 to
   geom 2, the signed distance :math:`d`.

MuJoCo runs these steps only for a pair of boxes and meshes without margin (its
``maxContacts``: up to four contacts), after EPA.  Steps 1–3 and the edge clipping
follow the source of MuJoCo 3.12 (``engine_collision_gjk.c``).  MuJoCo 4.0, the peer,
differs from that source in three ways, measured on its ``d.contact`` (positions and
depths that equal rbd's to rounding once the rule is right) and followed here:

* face on face it clips geom 1's face against geom 2's (the source clips geom 2's face
  against geom 1's, which puts the contacts on the other face);
* when geom 1's edge lies in no face of geom 2, it tries geom 2's edge against geom 1's
  faces (the source stops);
* its quadrilateral search measures the true area of the quadrilateral (the source's
  ``area4`` adds the cross products of another split, which is not the area).

The corner at which each face is entered (:func:`clipped_face`, :func:`clipping_face`)
sets the order of the contacts and, above four points, which four are kept.  The
entries used were fitted to MuJoCo 4.0's order, not derived: they reproduce it on the
states measured below but not for every vertex order of a mesh (the same cube listed in
another vertex order: 14 of 36 cube-on-cube states in MuJoCo's order, 34 of 36 as a
set).  Measured over 384 random touching states (a box or a cube or hexagonal-prism
mesh pressed on such a mesh, turned by up to 0.2 rad): the number of contacts is
MuJoCo's in 383, the contact set in 362, the set in MuJoCo's order in 338.  What is not
reproduced: MuJoCo lists a mesh's polygons in the order of a hash map
(:mod:`rbd.model.mesh_hull`), which decides which edge at a vertex is tried first when
two lie in the other geom's face; the order of the contacts in general; and, on some
polygons of more than four clipped points, the choice of four.
"""

from __future__ import annotations

import numpy as np

from .collision_gjk import ConvexGeom, dot3
from .collision_primitive import MINVAL, cross, normalize

#: Two face normals this opposed (cosine, about 5.1°) make the faces flat on each other.
FACE_TOL = 0.996
#: An edge this close to perpendicular to a face normal (cosine) lies in the face.
EDGE_TOL = 0.0888
#: At most this many contacts come from one pair (``mjMAXCONPAIR``).
MAX_CONTACTS_PER_PAIR = 50
#: Polytope pairs without margin ask EPA's face for up to this many contacts
#: (MuJoCo's ``maxContacts``); more clipped points are reduced to a quadrilateral.
MAX_CONTACTS = 4

#: The six face normals of a box in its frame, in MuJoCo's face order (+x, −x, +y, −y, +z, −z).
_BOX_NORMALS = np.array([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
#: The corners of each box face as signs of the half sizes, in MuJoCo's order (``boxFace``).
_BOX_FACES = (
    ((1, 1, 1), (1, 1, -1), (1, -1, -1), (1, -1, 1)),
    ((-1, 1, -1), (-1, 1, 1), (-1, -1, 1), (-1, -1, -1)),
    ((-1, 1, -1), (1, 1, -1), (1, 1, 1), (-1, 1, 1)),
    ((-1, -1, 1), (1, -1, 1), (1, -1, -1), (-1, -1, -1)),
    ((-1, 1, 1), (1, 1, 1), (1, -1, 1), (-1, -1, 1)),
    ((1, 1, -1), (-1, 1, -1), (-1, -1, -1), (1, -1, -1)),
)


def _rotate(mat, local) -> np.ndarray:
    """``mat @ local`` in MuJoCo's order of operations (``globalcoord`` without a position)."""
    return np.array([mat[0, 0] * local[0] + mat[0, 1] * local[1] + mat[0, 2] * local[2],
                     mat[1, 0] * local[0] + mat[1, 1] * local[1] + mat[1, 2] * local[2],
                     mat[2, 0] * local[0] + mat[2, 1] * local[1] + mat[2, 2] * local[2]])


def _place(g: ConvexGeom, local) -> np.ndarray:
    """World point of a point in the geom's frame (``globalcoord``)."""
    return _rotate(g.mat, local) + g.pos


def _unit(v) -> np.ndarray:
    return normalize(v)[0]


# ----------------------------------------------------------------------------- 1. features

def simplex_dim(indices: list, points: list) -> int:
    """Dimension + 1 of a geom's feature on EPA's face (1 vertex, 2 edge, 3 face) from the
    support indices of the face's three corners (``simplexDim``).  An edge whose first two
    corners repeat is moved to the front: ``indices[:2]``, ``points[:2]`` are then its ends.
    """
    if indices[0] == indices[1]:
        if indices[0] == indices[2]:
            return 1
        indices[1], points[1] = indices[2], points[2]
        return 2
    return 2 if indices[2] in (indices[0], indices[1]) else 3


# ----------------------------------------------------------------------------- 2. candidate faces

def _box_face_along(g: ConvexGeom, direction) -> tuple:
    """The box face whose normal is within :data:`FACE_TOL` of ``direction``, when a
    feature's corners do not name one face (``boxNormals2``): ``([normal], [index])``."""
    local = _rotate(g.mat.T, direction)
    local = local * (1 / np.sqrt(dot3(local, local)))
    for i, n in enumerate(_BOX_NORMALS):
        if dot3(local, n) > FACE_TOL:
            return [_rotate(g.mat, n)], [i]
    return [], []


def box_normals(g: ConvexGeom, dim: int, corners: list, direction) -> tuple:
    """World normals and indices of the box faces holding a feature (``boxNormals``).

    A box corner's index has bit 0, 1, 2 set on the +x, +y, +z side.  Three corners span
    the face along the axis whose bit they share; two corners the two faces along their
    shared bits; one corner its three faces.  When the corners share no such bits (a
    feature across the box, possible when EPA's face is not on the boundary), the face
    nearest ``direction`` is taken, if any.
    """
    if dim == 1:
        c = corners[0]
        signs = [1 if c & bit else -1 for bit in (1, 2, 4)]
        normals = [_rotate(g.mat, s * _BOX_NORMALS[2 * k]) for k, s in enumerate(signs)]
        return normals, [2 * k + (s < 0) for k, s in enumerate(signs)]
    used = corners[:dim]
    normals, index = [], []
    for k, bit in enumerate((1, 2, 4)):
        side = all(c & bit for c in used) - all(not c & bit for c in used)
        if side:
            normals.append(_rotate(g.mat, side * _BOX_NORMALS[2 * k]))
            index.append(2 * k + (side < 0))
    if len(normals) == (1 if dim == 3 else 2):
        return normals, index
    return _box_face_along(g, direction)


def mesh_normals(g: ConvexGeom, dim: int, vertices: list) -> tuple:
    """World normals and indices of the hull polygons holding a feature (``meshNormals``):
    the polygon common to three vertices, the (up to two) polygons common to an edge's
    ends, or every polygon at a vertex."""
    hull = g.size
    at = [list(hull.vertex_polygons[v]) for v in vertices[:dim]]
    common = at[0]
    for others in at[1:]:
        common = [p for p in common if p in others][:2]
        if not common:
            return [], []
    if dim == 3:
        common = common[:1]
    return [_rotate(g.mat, hull.normals[p]) for p in common], common


def face_normals(g: ConvexGeom, dim: int, indices: list, direction) -> tuple:
    """:func:`box_normals` or :func:`mesh_normals` by the geom's kind."""
    if g.kind == "box":
        return box_normals(g, dim, indices, direction)
    return mesh_normals(g, dim, indices)


# ----------------------------------------------------------------------------- 3. alignment

def aligned_faces(normals1: list, normals2: list):
    """First pair ``(i, j)`` of opposed face normals within :data:`FACE_TOL`
    (``alignedFaces``), or None."""
    for i, n1 in enumerate(normals1):
        for j, n2 in enumerate(normals2):
            if dot3(n1, n2) < -FACE_TOL:
                return i, j
    return None


def aligned_face_edge(edges: list, normals: list):
    """First ``(edge, face)`` pair with the edge in the face's plane within
    :data:`EDGE_TOL` (``alignedFaceEdge``), faces in the outer loop; or None."""
    for i, n in enumerate(normals):
        for j, e in enumerate(edges):
            if abs(dot3(e, n)) < EDGE_TOL:
                return j, i
    return None


def box_edges(g: ConvexGeom, dim: int, points: list, corner: int) -> tuple:
    """Unit directions and far ends of the box edges of a feature (``boxEdgeNormals``): the
    edge itself, or the three edges from a corner to its neighbours."""
    if dim == 2:
        return [_unit(points[1] - points[0])], [points[1]]
    if dim != 1:
        return [], []
    half = [s if corner & bit else -s for s, bit in zip(g.size[:3], (1, 2, 4), strict=True)]
    ends = [_place(g, [-half[0], half[1], half[2]]), _place(g, [half[0], -half[1], half[2]]),
            _place(g, [half[0], half[1], -half[2]])]
    return [_unit(e - points[0]) for e in ends], ends


def mesh_edges(g: ConvexGeom, dim: int, points: list, vertex: int) -> tuple:
    """Unit directions and far ends of the hull edges of a feature (``meshEdgeNormals``):
    the edge itself, or, for a vertex, the edge to its predecessor in each polygon at it."""
    if dim == 2:
        return [_unit(points[1] - points[0])], [points[1]]
    if dim != 1:
        return [], []
    hull = g.size
    directions, ends = [], []
    for p in hull.vertex_polygons[vertex]:
        loop = list(hull.polygons[p])
        previous = loop[loop.index(vertex) - 1]
        end = _place(g, hull.vertices[previous])
        ends.append(end)
        directions.append(_unit(end - points[0]))
    return directions, ends


def feature_edges(g: ConvexGeom, dim: int, points: list, index: int) -> tuple:
    """:func:`box_edges` or :func:`mesh_edges` by the geom's kind."""
    if g.kind == "box":
        return box_edges(g, dim, points, index)
    return mesh_edges(g, dim, points, index)


def box_face(g: ConvexGeom, index: int) -> np.ndarray:
    """World corners of box face ``index`` in MuJoCo's order (``boxFace``): clockwise seen
    from outside."""
    return np.array([_place(g, np.multiply(signs, g.size[:3])) for signs in _BOX_FACES[index]])


def mesh_face(g: ConvexGeom, index: int) -> np.ndarray:
    """World corners of hull polygon ``index`` in reverse order, clockwise seen from outside
    (``meshFace``)."""
    hull = g.size
    return np.array([_place(g, hull.vertices[v]) for v in hull.polygons[index][::-1]])


def face(g: ConvexGeom, index: int) -> np.ndarray:
    """:func:`box_face` or :func:`mesh_face` by the geom's kind (an edge's clipping face)."""
    return box_face(g, index) if g.kind == "box" else mesh_face(g, index)


def clipped_face(g: ConvexGeom, index: int) -> np.ndarray:
    """Geom 1's face as MuJoCo 4.0 clips it, counter-clockwise seen from outside: a box
    face from its third ``boxFace`` corner backwards, a hull polygon from its last vertex
    on (measured, module notes)."""
    if g.kind == "box":
        return np.roll(box_face(g, index)[::-1], -1, axis=0)
    loop = g.size.polygons[index]
    return np.array([_place(g, g.size.vertices[v]) for v in np.roll(loop, 1)])


def clipping_face(g: ConvexGeom, index: int, after_box: bool) -> np.ndarray:
    """Geom 2's hull polygon as MuJoCo 4.0 clips against it, counter-clockwise seen from
    outside: from its last vertex on, or from the one before it when geom 1 is a box
    (measured, module notes)."""
    loop = g.size.polygons[index]
    return np.array([_place(g, g.size.vertices[v]) for v in np.roll(loop, 2 if after_box else 1)])


# ----------------------------------------------------------------------------- 4. clipping

def _area4(a, b, c, d) -> float:
    """Area of the quadrilateral (a, b, c, d), corners in order: half the norm of the cross
    product of its diagonals, :math:`\\tfrac12 \\|(c - a) \\times (d - b)\\|`.  (The
    source's ``area4`` sums the cross products of another split, which is not this area;
    MuJoCo 4.0's choices of four corners are this area's, measured.)"""
    g = cross(c - a, d - b)
    return 0.5 * np.sqrt(dot3(g, g))


def polygon_quad(polygon: np.ndarray, tie_rtol: float = 0.0) -> tuple[list, bool]:
    """Indices of four corners of a convex polygon enclosing the largest area found by
    MuJoCo's rotating search (``polygonQuad``): for each first corner ``a``, the fourth,
    third and second corners advance while the area grows.

    Also whether a comparison of the search hung on a tie: two areas equal within
    ``tie_rtol`` relative (at 0, exactly equal).  The search goes on as rounding turns the
    comparison; on a regular polygon (a cylinder's cap,
    :func:`.collision_multiccd.cap_clip`) MuJoCo's rounding may turn it the other way, and
    its search then goes on from the other of two equal areas, to four corners that may
    differ from these (the module notes of :mod:`.collision_multiccd` count them)."""
    n = len(polygon)
    tied = False

    def step(i):
        return (i + 1) % n

    def area(i, j, k, m):
        return _area4(polygon[i], polygon[j], polygon[k], polygon[m])

    def grows(m_next, m):
        nonlocal tied
        tied = tied or abs(m_next - m) <= tie_rtol * max(m, m_next)
        return not m_next <= m

    b, c, d = 1, 2, 3
    best = [0, 1, 2, 3]
    m = area(0, 1, 2, 3)
    for a in range(n):
        while grows(m_next := area(a, b, c, step(d)), m):
            m, d = m_next, step(d)
            best = [a, b, c, d]
            while grows(m_next := area(a, b, step(c), d), m):
                m, c = m_next, step(c)
                best = [a, b, c, d]
            while grows(m_next := area(a, step(b), c, d), m):
                m, b = m_next, step(b)
                best = [a, b, c, d]
        if b == a:
            b = step(b)
            if c == b:
                c = step(c)
                if d == c:
                    d = step(d)
    return best, tied


def side_plane(v1, v2, n) -> tuple:
    """Unit normal and offset of the plane through the edge (v1, v2) perpendicular to a face
    of normal ``n`` (``planeNormal``); the face's inside is where ``p · normal`` is larger
    for a clockwise face seen along ``-n``."""
    normal = _unit(cross(v2 - v1, (v1 + n) - v1))
    return normal, dot3(normal, v1)


def _inside(a, n, p) -> bool:
    """Whether ``p`` is on the inner side of the plane through ``a`` with normal ``n``, to
    ``mjMINVAL`` (``halfspace``)."""
    return dot3(p - a, n) > -MINVAL


def witness_on_face(v, p, n, direction) -> tuple:
    """Signed distance of the clipped point ``v`` from the clipping face (plane through
    ``p``, normal ``n``), and its witness points: ``v`` moved by that distance against
    ``direction`` (on the clipping face), and ``v`` (``witnessOnFace``)."""
    dist = dot3(v - p, n)
    return dist, v + direction * (-abs(dist)), v.copy()


def clip_to_face(clipping: np.ndarray, polygon: np.ndarray, n, side_normal=None,
                 margin: float = 0.0) -> list:
    """The part of ``polygon`` inside the prism over the face ``clipping`` (outward normal
    ``n``), one wall at a time (Sutherland–Hodgman), then the points at most ``margin``
    above the face (none above it by default).  The walls stand on the face's edges
    perpendicular to ``side_normal`` (default ``n``), a face whose corners turn clockwise
    about it seen from its tip."""
    side = n if side_normal is None else side_normal
    planes = [side_plane(clipping[i], clipping[(i + 1) % len(clipping)], side)
              for i in range(len(clipping))]
    points = [np.array(v, float) for v in polygon]
    for e, (pn, pd) in enumerate(planes):
        kept = []
        for i, p in enumerate(points):
            q = points[i + 1] if i < len(points) - 1 else points[0]
            pq = q - p
            inside1, inside2 = _inside(clipping[e], pn, p), _inside(clipping[e], pn, q)
            if not inside1 and not inside2:
                continue
            if inside1 and inside2:
                kept.append(q)
                continue
            along = dot3(pn, pq)
            if along != 0.0:
                t = (pd - dot3(pn, p)) / along
                if 0.0 <= t <= 1.0:
                    kept.append(p + pq * t)
            if inside2:
                kept.append(q)
        points = kept
    return [p for p in points if dot3(p - clipping[0], n) <= margin]


def polygon_clip(clipping: np.ndarray, polygon: np.ndarray, n, direction,
                 max_contacts: int = MAX_CONTACTS, side_normal=None):
    """Contacts ``[(dist, x1, x2), ...]`` of a face or edge ``polygon`` against the face
    ``clipping`` of outward normal ``n`` (``polygonClip``; walls as :func:`clip_to_face`):
    ``x2`` the clipped point, ``x1`` its witness on the face (:func:`witness_on_face`);
    None when the clipping face is not a polygon or nothing is left (EPA's contact stands).
    More than ``max_contacts`` points become :func:`polygon_quad`'s four; a clipped edge
    keeps its two farthest points."""
    if len(clipping) < 3:
        return None
    points = clip_to_face(clipping, polygon, n, side_normal)
    if not points:
        return None
    if max_contacts < 5 and len(points) > 4:
        chosen = [points[i] for i in polygon_quad(np.array(points))[0]]
    elif len(polygon) == 2 and len(points) > 2:
        best, d = (0, 1), 0.0
        for i in range(len(points)):
            for j in range(i + 1, len(points)):
                diff = points[j] - points[i]
                if dot3(diff, diff) > d:
                    best, d = (i, j), dot3(diff, diff)
        chosen = [points[best[0]], points[best[1]]]
    else:
        chosen = points[:MAX_CONTACTS_PER_PAIR]
    return [witness_on_face(v, clipping[0], n, direction) for v in chosen]


# ----------------------------------------------------------------------------- the driver

def _swapped(found):
    """Witness pairs of a clipping done with the geoms' roles exchanged, put back in order."""
    return None if found is None else [(d, w2, w1) for d, w1, w2 in found]


def multicontact(face_verts: list, x1, x2, g1: ConvexGeom, g2: ConvexGeom):
    """Contacts ``[(dist, x1, x2), ...]`` of two boxes or meshes from EPA's closest face, or
    None when no faces or edges line up and EPA's one contact stands (``multicontact``;
    module notes).

    Parameters
    ----------
    face_verts : list of 3 tuples
        EPA's closest face: ``(w, w1, w2, index1, index2)`` per corner.
    x1, x2 : (3,) ndarray
        EPA's witness points on geom 1 and geom 2.
    g1, g2 : ConvexGeom
        The geoms, a box or a mesh each (size: half sizes or the hull).
    """
    idx1 = [v[3] for v in face_verts]
    idx2 = [v[4] for v in face_verts]
    pts1 = [np.asarray(v[1]) for v in face_verts]
    pts2 = [np.asarray(v[2]) for v in face_verts]
    dim1, dim2 = simplex_dim(idx1, pts1), simplex_dim(idx2, pts2)
    normals1, faces1 = face_normals(g1, dim1, idx1, x1 - x2)
    normals2, faces2 = face_normals(g2, dim2, idx2, x2 - x1)

    pair = aligned_faces(normals1, normals2)
    if pair is not None:                 # face on face: geom 1's face in geom 2's prism
        i, j = pair
        n1, n2 = normals1[i], normals2[j]
        return _swapped(polygon_clip(clipping_face(g2, faces2[j], g1.kind == "box"),
                                     clipped_face(g1, faces1[i]), n2, -n2, side_normal=n1))
    if dim1 < 3 and dim1 <= dim2:        # an edge of geom 1 in a face of geom 2
        edges, ends = feature_edges(g1, dim1, pts1, idx1[0])
        pair = aligned_face_edge(edges, normals2)
        if pair is not None:
            i, j = pair
            return _swapped(polygon_clip(face(g2, faces2[j]), np.array([pts1[0], ends[i]]),
                                         normals2[j], -normals2[j]))
    if dim2 < 3:                         # an edge of geom 2 in a face of geom 1
        edges, ends = feature_edges(g2, dim2, pts2, idx2[0])
        pair = aligned_face_edge(edges, normals1)
        if pair is not None:
            i, j = pair
            return polygon_clip(face(g1, faces1[j]), np.array([pts2[0], ends[i]]),
                                normals1[j], -normals1[j])
    return None
