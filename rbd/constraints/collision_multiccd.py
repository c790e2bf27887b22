r"""Several contacts of convex pairs beyond two bare polytopes, as MuJoCo 4.0's multi-CCD.

Two boxes or meshes without margin get their contact patch from the face EPA ends on
(:mod:`.collision_multi`).  MuJoCo 4.0 runs the same recovery for every pair with a
*face* (a box, a mesh, or a cylinder, whose caps count as 16-gons) against a face or an
*edge* (a capsule's segment), with or without margin (the 3.12 source read here,
``engine_collision_convex.c``, turns both geoms slightly instead; its contacts are not
4.0's: a capsule flat on a cylinder gets two contacts at the capsule's ends and loses
the first).  The rule was read in the MuJoCo 4.0 engine's Warp port (``mujoco_warp``
4.0.0, ``collision_gjk.py``: ``gjk_phase``, ``multicontact``, ``_cylinder_face``,
``_cylinder_edge_normals``, ``_capsule_edge_normals``, ``_polygon_clip``) and checked on
MuJoCo 4.0's ``d.contact``, where the two differ MuJoCo 4.0's C engine decides.  The
collision stage runs it for the pairs with a mesh (:mod:`.collision_mesh`), on both paths:
the compiled twin ``rbd/_kernels/collision_multiccd.pyx`` gives the same contacts bit for
bit, tied states too (``tests/test_collision_multiccd_kernel.py``), and
:mod:`.collision_convex` runs it for the primitive pairs it covers (capsule–cylinder,
cylinder–cylinder, cylinder–box) on both paths.


1. **Distance** (:func:`penetration`).  A sphere or capsule shrinks to its core, as for
   one contact; with a margin, the other geoms of the pair shrink to their bare shape
   too.  GJK on what is left gives the distance; while it is positive the witness points
   are grown back by the radii and half margins, and GJK's final simplex (up to three
   support points) stands for the touching features.  Otherwise EPA on the whole geoms
   gives the depth and its closest face.
2. **Features.**  A support point carries an index: a box corner, a hull vertex, or
   for a cylinder the cap it lies on (0 the top, 1 the bottom; :func:`cylinder_index`).
   A cylinder whose three corners share a cap touches with that cap; a capsule always
   with its surface line through the witness point.
3. **Alignment** (:func:`multicontact`).  Faces opposed within 5° are clipped against
   each other as :mod:`.collision_multi` does (geom 1's face in the prism over geom 2's).
   Otherwise, when geom 1's feature is an edge or a vertex, geom 2 has face normals and
   geom 1's feature is no larger than geom 2's (or geom 1 has no face), geom 1's edges
   are tried against geom 2's faces: a box or hull edge, a cylinder's side line through
   the corner (:func:`cylinder_edges`), a capsule's surface line
   (:func:`capsule_edges`).  Failing that geom 2's edges are tried against geom 1's
   faces (MuJoCo 4.0 does; the Warp port stops).
4. **Clipping with margin** (:func:`clip`).  Points up to the two half margins above the
   clipping face are kept; each contact's witness on the clipping face is the clipped
   point projected on it, and both witnesses are then moved out by their geom's half
   margin (a capsule's is already grown).  All contacts take the first one's normal.
5. **A cylinder's cap clipped to more than four points** (:func:`cap_clip`).  MuJoCo 4.0
   clips the other way then, as the source's ``_polygon_clip`` reads: geom 1's face (each
   face clockwise from MuJoCo's first corner, :func:`edge_face`) cuts geom 2's, and its
   rotating search (``_polygon_quad``, the area :math:`\tfrac12\|(c-a)\times(d-b)\|`)
   keeps four of the points in that order; each is projected on geom 1's face and its
   distance measured along geom 2's normal (``_witness_on_face``), so that the contacts
   take geom 2's normal.  On a regular 16-gon the search compares areas equal but for
   rounding (two corners symmetric about a diagonal), and each engine's rounding then turns
   the comparison: rbd keeps the four its own search gives
   (:func:`.collision_multi.polygon_quad`, which also tells whether its choice hung on such
   a tie, to a relative gap of 1e-9: the tests' ``TIE_RTOL``).  Those are corners of the
   clipped polygon MuJoCo's come from, with MuJoCo's normal; MuJoCo's four, or another four
   of the same area, or, where the search's paths part at the tie and each goes on
   growing, four of another area (the counts below).  (Measured on a cylinder turned about
   its axis on a larger box, MuJoCo's own poses: with the cap partly off the face the
   search's four are MuJoCo's in 54 of 60 states, with the whole cap on it in 19 of 60, the
   others parting from MuJoCo's at a tied step; 60 variants of the order of operations
   (the 16-gon's corners, the walls, the areas) matched the whole cap in at most 27 of 60:
   MuJoCo's rounding is not reproduced.)

What is reproduced (``tests/test_collision_multiccd.py``), over random and nearly
aligned touching states at two depths, with and without a margin of 0.01 (the
``_touching`` states: seeds 0-19 for the primitive pairs, 0-7 per mesh; random, upright
and on-side bases): states with MuJoCo 4.0's contact count and every contact within the
tolerances of :mod:`.collision_convex` for EPA (2e-6 on distances, 1e-3 on points, 2e-2
on normals).  A cap clipped to more than four points and decided gives MuJoCo's contacts
to rounding (2e-16 on points and distances, 3e-15 on normals).  The tied states (a tie in
the cap's choice of four, the last column) are counted by what rbd's four are: MuJoCo's
(also counted as reproduced), another four of the polygon of the same area (to 1e-12
relative), four of another area; in every tied state MuJoCo gives four contacts and rbd
four, each a corner of the clipped polygon, with MuJoCo's normal (to 1e-9).

=========================== ====== ========== ======================================
pair                        states reproduced tied: MuJoCo's, same area, other area
=========================== ====== ========== ======================================
capsule–cylinder            240    240        0
cylinder–cylinder           240    233        21: 19, 1, 1
cylinder–box                240    231        10: 6, 1, 3
capsule–mesh (cube, prism)  192    188        0
cylinder–mesh               192    182        19: 16, 3, 0
box–mesh, with margin       96     93         0
mesh–mesh, with margin      96     92         0
cylinder upright on a box   80     69         22: 11, 5, 6
=========================== ====== ========== ======================================

(The last row: a cylinder 0.1 0.15 under a box 0.2 0.2 0.08, both within 0.05 rad of
upright.  Before the cap's choice was reproduced these states declined 28, 25, 24 and 26
of the four cylinder rows, 1245 of the 1376 states reproduced; with the decided cases
reproduced, 1276, and the 72 tied states declined (no contact; a can standing on a table
fell through it); now 1328, none declined: 52 of the tied states get MuJoCo's set, 20
another four of the polygon.)  The other misses (28 of 1376 states) are states where rbd's
EPA (the 3.12 source's iterates) ends on another face than MuJoCo 4.0's: a cylinder's side
line then lies elsewhere on its rim (distances off by up to 2e-4), or features line up on
one side only.  (The turned-geom test this replaces gave a wrong contact set silently on
91 of the 923 primitive states measured then and declined every touching mesh pair.)
"""

from __future__ import annotations

import numpy as np

from . import collision_epa as _epa
from . import collision_multi as _multi
from .collision_gjk import MAX_LIMIT, TOLERANCE, ConvexGeom, GJKStatus, dot3, gjk
from .collision_primitive import MINVAL, normalize

#: Kinds with faces (a cylinder's caps) and kinds with an edge (a capsule's side).
FACE_KINDS = ("box", "mesh", "cylinder")
EDGE_KINDS = ("capsule",)
#: A cylinder's cap is clipped as this regular polygon (MuJoCo 4.0's ``_cylinder_face``).
CYLINDER_SIDES = 16
#: The cores GJK uses for spheres and capsules (grown back by the radius afterwards).
_CORE = {"sphere": "point", "capsule": "line"}


def supported(kind1: str, kind2: str) -> bool:
    """Whether MuJoCo 4.0 looks for several contacts of the pair: a face against a face,
    or a face against an edge (``_supports_multiccd``)."""
    face1, face2 = kind1 in FACE_KINDS, kind2 in FACE_KINDS
    return (face1 and face2) or (face1 and kind2 in EDGE_KINDS) or (
        kind1 in EDGE_KINDS and face2)


# ----------------------------------------------------------------------------- 1. distance

def penetration(g1: ConvexGeom, g2: ConvexGeom, margin: float):
    """``(dist, x1, x2, corners)`` of a supported pair or None when apart: the distance
    less the margin, the witness points, and the three corners ``(w, w1, w2, index1,
    index2)`` of GJK's simplex (None if it is empty) or EPA's closest face
    (``gjk_phase``, ``epa_phase``)."""
    full, cores = [0.0, 0.0], []
    for k, g in enumerate((g1, g2)):
        if g.kind in _CORE:
            full[k] = g.size[0] + 0.5 * margin
            cores.append(ConvexGeom(_CORE[g.kind], g.pos, g.mat, g.size, 0.0))
        elif margin > 0:
            full[k] = 0.5 * margin
            cores.append(ConvexGeom(g.kind, g.pos, g.mat, g.size, 0.0))
        else:
            cores.append(g)
    if full[0] + full[1] > 0:
        status = GJKStatus(*cores, dist_cutoff=full[0] + full[1])
        gjk(status, *cores)
        if status.dist > TOLERANCE:                      # shallow: grow back
            if status.dist == MAX_LIMIT:
                return None
            n, _ = normalize(status.x2 - status.x1)
            dist = status.dist - (full[0] + full[1])
            if not dist < 0:
                return None
            s = status.simplex
            corners = [s[0], s[min(1, len(s) - 1)], s[min(2, len(s) - 1)]] if s else None
            return dist, status.x1 + full[0] * n, status.x2 - full[1] * n, corners
    status = GJKStatus(g1, g2, dist_cutoff=0.0)           # deep: EPA on the whole geoms
    gjk(status, g1, g2)
    if status.dist <= TOLERANCE and len(status.simplex) > 1 and not status.separated:
        found = _epa.penetration_face(status.simplex, g1, g2)
        if found is not None and found[0] < 0:
            return found
    return None


# ----------------------------------------------------------------------------- 2. features

def cylinder_index(g: ConvexGeom, point) -> int:
    """The cap a cylinder's support point lies on: 0 the top (+z), 1 the bottom."""
    return 0 if dot3(g.mat[:, 2], point - g.pos) >= 0 else 1


def features(g: ConvexGeom, corners: list, side: int) -> tuple:
    """Support indices and points of one geom (``side`` 0 or 1) at the three corners."""
    points = [np.asarray(c[1 + side]) for c in corners]
    if g.kind == "cylinder":
        return [cylinder_index(g, p) for p in points], points
    if g.kind == "capsule":
        return [-1, -1, -1], points
    return [c[3 + side] for c in corners], points


def normals(g: ConvexGeom, dim: int, indices: list, direction) -> tuple:
    """World normals and indices of the faces holding a feature: a box's or a hull's
    (:func:`.collision_multi.face_normals`), a cylinder's cap when all three corners are
    on it (``_cylinder_normals``); a capsule has none."""
    if g.kind in ("box", "mesh"):
        return _multi.face_normals(g, dim, indices, direction)
    if g.kind == "cylinder" and dim == 1:
        return [g.mat[:, 2] * (-1.0 if indices[0] else 1.0)], [indices[0]]
    return [], []


def cylinder_edges(g: ConvexGeom, dim: int, points: list, index: int, margin: float) -> tuple:
    """The cylinder's side line at a corner (``_cylinder_edge_normals``): unit direction
    from the corner's cap to the other, its far end, and its start (with a margin, the
    corner moved onto the rim of its cap)."""
    if dim not in (1, 2):
        return [], [], None
    sign = 1.0 if index else -1.0
    start = points[0]
    if margin > 0:
        rel = start - g.pos
        x, y = dot3(g.mat[:, 0], rel), dot3(g.mat[:, 1], rel)
        n2 = x * x + y * y
        scale = g.size[0] / np.sqrt(n2) if n2 >= MINVAL * MINVAL else 0.0
        start = _multi._place(g, np.array([scale * x, scale * y, -sign * g.size[1]]))
    axis = g.mat[:, 2] * sign
    return [axis], [start + axis * (2 * g.size[1])], start


def capsule_edges(g: ConvexGeom, witness) -> tuple:
    """The capsule's surface line through its witness point, end to end
    (``_capsule_edge_normals``): its direction, far end and start."""
    axis = g.mat[:, 2]
    along = dot3(witness - g.pos, axis)
    return [axis], [witness + axis * (g.size[1] - along)], witness - axis * (along + g.size[1])


def edges(g: ConvexGeom, dim: int, points: list, indices: list, witness, margin) -> tuple:
    """Unit directions, far ends and the start of the edges of a feature, by kind."""
    if g.kind in ("box", "mesh"):
        directions, ends = _multi.feature_edges(g, dim, points, indices[0])
        return directions, ends, points[0]
    if g.kind == "cylinder":
        return cylinder_edges(g, dim, points, indices[0], margin)
    return capsule_edges(g, witness)


def cylinder_face(g: ConvexGeom, index: int) -> np.ndarray:
    """A cylinder's cap as a regular 16-gon, counter-clockwise seen from outside (the
    corners of MuJoCo 4.0's ``_cylinder_face`` in reverse order)."""
    sign = -1.0 if index else 1.0
    centre = g.mat[:, 2] * (sign * g.size[1]) + g.pos
    angle = np.arange(CYLINDER_SIDES) * (2 * np.pi / CYLINDER_SIDES)
    x, y = g.mat[:, 0] * g.size[0], g.mat[:, 1] * (g.size[0] * sign)
    return np.array([x * np.cos(a) - y * np.sin(a) + centre for a in angle])[::-1]


def flat_face(g: ConvexGeom, index: int, clipping: bool, after_box: bool = False) -> np.ndarray:
    """A face clipped flat on another, counter-clockwise seen from outside, from the corner
    MuJoCo 4.0 starts at where that is known (:func:`.collision_multi.clipped_face` for
    geom 1, :func:`.collision_multi.clipping_face` for geom 2's hull)."""
    if g.kind == "cylinder":
        return cylinder_face(g, index)
    if g.kind == "box" or not clipping:
        return _multi.clipped_face(g, index)
    return _multi.clipping_face(g, index, after_box)


def edge_face(g: ConvexGeom, index: int) -> np.ndarray:
    """A face in MuJoCo's order, clockwise seen from outside from MuJoCo's first corner (an
    edge's clipping face, and both faces of :func:`cap_clip`; walls perpendicular to its
    own normal): :func:`.collision_multi.face`, a cylinder's cap reversed
    (``_cylinder_face``)."""
    if g.kind == "cylinder":
        return cylinder_face(g, index)[::-1]
    return _multi.face(g, index)


# ----------------------------------------------------------------------------- 4. clipping

def clip(clipping: np.ndarray, polygon: np.ndarray, n, margin: float, side_normal=None,
         reduce: bool = True) -> list:
    """Witness pairs ``[(dist, on_face, point), ...]`` of the part of ``polygon`` (a face,
    or an edge of two points) inside the prism over the face ``clipping`` (outward normal
    ``n``; walls perpendicular to ``side_normal``, default ``n``) and at most ``margin``
    above it: its signed height, its projection on the face, itself (``_polygon_clip``).
    An edge keeps its two farthest points; more than four points of a face become
    :func:`.collision_multi.polygon_quad`'s four, or None when ``reduce`` is False (a
    cylinder's cap: MuJoCo clips the other way, :func:`cap_clip`)."""
    if len(clipping) < 3:
        return []
    # --- walls: the polygon cut by the prism's walls, one at a time (Sutherland–Hodgman)
    points = _multi.clip_to_face(clipping, polygon, n, side_normal, margin)
    if len(polygon) == 2 and len(points) > 2:
        pairs = [(i, j) for i in range(len(points)) for j in range(i + 1, len(points))]
        i, j = max(pairs, key=lambda ij: dot3(points[ij[1]] - points[ij[0]],
                                             points[ij[1]] - points[ij[0]]))
        points = [points[i], points[j]]
    elif len(points) > _multi.MAX_CONTACTS:
        if not reduce:
            return None
        points = [points[i] for i in _multi.polygon_quad(np.array(points))[0]]
    # --- witnesses: each point's height above the face and its projection on it
    out = []
    for v in points:
        height = dot3(v - clipping[0], n)
        out.append((height, v - height * n, v))
    return out


def cap_clip(face1: np.ndarray, face2: np.ndarray, n1, n2, margin: float) -> list:
    """Witness pairs ``[(dist, x1, x2), ...]`` of two faces, one a cylinder's cap, clipped as
    MuJoCo 4.0 does when they give more than four points (``multicontact``,
    ``_polygon_clip``): geom 1's face ``face1`` (outward normal ``n1``) cuts geom 2's
    ``face2`` (normal ``n2``), both clockwise seen from outside from MuJoCo's first corner
    (:func:`edge_face`); the points at most ``margin`` above ``face1``, reduced to the
    rotating search's four (:func:`.collision_multi.polygon_quad`; on a tie, the four its
    own rounding gives, module notes); each projected on ``face1`` (``x1``) and its distance
    measured along ``n2`` back to ``x2`` (``_witness_on_face``)."""
    points = _multi.clip_to_face(face1, face2, n1, None, margin)
    if len(points) > _multi.MAX_CONTACTS:
        points = [points[i] for i in _multi.polygon_quad(np.array(points))[0]]
    out = []
    for v in points:
        x1 = v - dot3(v - face1[0], n1) * n1
        dist = dot3(x1 - v, n2)
        out.append((dist, x1, x1 - dist * n2))
    return out


def _grown(found: list, half1: float, half2: float, normal) -> list:
    """Witness pairs ``(dist, x1, x2)`` moved out by the geoms' half margins along the
    normal from geom 1 to geom 2."""
    return [(d - (half1 + half2), x1 + half1 * normal, x2 - half2 * normal)
            for d, x1, x2 in found]


def multicontact(corners: list, x1, x2, g1: ConvexGeom, g2: ConvexGeom, margin: float):
    """Witness pairs ``[(dist, x1, x2), ...]`` of the touching features (module notes), or
    an empty list when nothing lines up and the one contact stands."""
    idx1, pts1 = features(g1, corners, 0)
    idx2, pts2 = features(g2, corners, 1)
    dim1, dim2 = _multi.simplex_dim(idx1, pts1), _multi.simplex_dim(idx2, pts2)
    normals1, faces1 = normals(g1, dim1, idx1, x1 - x2)
    normals2, faces2 = normals(g2, dim2, idx2, x2 - x1)
    half1 = 0.0 if g1.kind in EDGE_KINDS else 0.5 * margin
    half2 = 0.0 if g2.kind in EDGE_KINDS else 0.5 * margin
    pair = _multi.aligned_faces(normals1, normals2)
    if pair is not None:                 # face on face: geom 1's face in geom 2's prism
        i, j = pair
        n2 = normals2[j]
        found = clip(flat_face(g2, faces2[j], True, g1.kind == "box"),
                     flat_face(g1, faces1[i], False),
                     n2, half1 + half2, side_normal=normals1[i],
                     reduce="cylinder" not in (g1.kind, g2.kind))
        if found is None:                # a cap clipped to more than four points
            return _grown(cap_clip(edge_face(g1, faces1[i]), edge_face(g2, faces2[j]),
                                   normals1[i], n2, half1 + half2), half1, half2, -n2)
        return _grown([(d, p, q) for d, q, p in found], half1, half2, -n2)
    if dim1 < 3 and normals2 and (dim1 <= dim2 or not normals1):   # geom 1's edge
        directions, ends, start = edges(g1, dim1, pts1, idx1, x1, margin)
        pair = _multi.aligned_face_edge(directions, normals2)
        if pair is not None:
            i, j = pair
            n2 = normals2[j]
            found = clip(edge_face(g2, faces2[j]), np.array([start, ends[i]]), n2,
                         half1 + half2)
            return _grown([(d, p, q) for d, q, p in found], half1, half2, -n2)
    if dim2 < 3:                                                    # geom 2's edge
        directions, ends, start = edges(g2, dim2, pts2, idx2, x2, margin)
        pair = _multi.aligned_face_edge(directions, normals1)
        if pair is not None:
            i, j = pair
            n1 = normals1[j]
            found = clip(edge_face(g1, faces1[j]), np.array([start, ends[i]]), n1,
                         half1 + half2)
            return _grown(found, half1, half2, n1)
    return []


def contacts(g1: ConvexGeom, g2: ConvexGeom, margin: float) -> list:
    """Contacts ``[(dist, pos, normal), ...]`` of a :func:`supported` pair with multi-CCD:
    the clipped features' or, when nothing lines up, the one of :func:`penetration`; each
    at its witnesses' midpoint, with the first one's normal and ``margin + dist``."""
    found = penetration(g1, g2, margin)
    if found is None:
        return []
    dist, x1, x2, corners = found
    pairs = (corners and multicontact(corners, x1, x2, g1, g2, margin)) or [(dist, x1, x2)]
    normal = normalize(pairs[0][1] - pairs[0][2])[0]
    return [(margin + d, (w1 + w2) * 0.5, normal) for d, w1, w2 in pairs]
