r"""General convex collision (GJK and EPA), as MuJoCo's native ``mjc_Convex``.

MuJoCo collides the pairs it has no primitive routine for (ellipsoids with anything
but a plane; a cylinder with a capsule, a cylinder or a box; meshes) through one
algorithm on *support functions*: the point :math:`s_A(d)` of a convex set
:math:`A` farthest along a direction :math:`d`.  Two geoms are apart when the
origin is outside their Minkowski difference :math:`A - B`, whose support is
:math:`s_A(d) - s_B(-d)`.  This module is MuJoCo's driver (``mjc_Convex``,
``mjc_penetration``, ``mjc_ccd`` of ``engine_collision_convex.c`` and
``engine_collision_gjk.c``, defaults ``ccd_tolerance`` 1e-6, ``ccd_iterations`` 35) on
:mod:`.collision_gjk` (support functions, GJK) and :mod:`.collision_epa` (EPA):

* **A sphere or a capsule** shrinks to its centre or segment; GJK gives the distance
  between that core and the other geom (grown by half the margin), and while the
  core stays apart the contact is *inflated* by the radii: ``dist`` = core distance −
  radii, the witness points moved by the radii along :math:`x_2 - x_1`.
* **Otherwise** (and for a core that touches), GJK on the whole geoms decides whether
  they touch (separated: no contact) and, from its final simplex, EPA gives the
  penetration depth and witness points.
* The contact point is the witness points' midpoint, the normal
  :math:`(x_1 - x_2)/\|x_1 - x_2\|` (from geom 1 to geom 2), ``dist`` the signed
  distance; one contact per pair.
* **Several contacts** (MuJoCo's multi-CCD, on unless ``multiccd`` is disabled).  Two
  boxes or meshes without margin (:func:`max_contacts`) get them in one pass: the face
  EPA ends on names the touching features, and aligned faces or edges are clipped
  against each other (:mod:`.collision_multi`, MuJoCo's ``multicontact``).  MuJoCo 4.0
  does the same for every pair of a face (box, mesh, a cylinder's cap) against a face or
  a capsule's side, with or without margin: :mod:`.collision_multiccd`, which gives
  MuJoCo 4.0's contact set on 1328 of 1376 random and nearly aligned states measured.  Of
  those, 72 have a cylinder's cap clipped to more than four points where MuJoCo's choice
  of four hangs on a tie its rounding turns: rbd keeps its own search's four, MuJoCo's in
  52, another four corners of the same clipped polygon in 20 (four contacts and MuJoCo's
  normal in every one).  It runs for the pairs with a mesh and the primitive pairs it
  covers (capsule–cylinder, cylinder–cylinder, cylinder–box), on both paths (compiled:
  ``rbd/_kernels/collision_multiccd.pyx``).  On the 800 primitive states of
  :mod:`.collision_multiccd`'s table it gives MuJoCo's set in 773, another four of a tied
  cap in 17, and misses 10; the 3.12 source's search it replaces
  (``engine_collision_convex.c``: both geoms turned by ±1e-3 rad about the first contact;
  a capsule flat on a cylinder gets two contacts at the capsule's ends and loses the
  first), which rbd ran as a test only, returned a wrong single contact on 91 of 923
  primitive states measured then.

Agreement with MuJoCo 4.0 (``tests/test_collision_convex.py``), not to rounding: GJK
stops at a Frank–Wolfe gap of ``ccd_tolerance``²/2 and EPA once its depth bounds are
within ``ccd_tolerance``; the distance is then that accurate but the witness points
only to about the square root, and MuJoCo 4.0's iterates differ slightly from those of
the 3.12 source followed.  Measured worst over 20–30 random states per pair: sphere or
capsule cores (GJK only) 4e-9 on distances, 2e-6 on points, 2e-5 on normals; EPA
pairs 8e-7 on distances, 2.6e-4 on points, 7e-3 on normals; a sphere or capsule
whose core is inside the other geom (EPA on a round shape, which 35 iterations leave
coarse) 3e-5 on distances, 7e-4 on points, 5e-2 on normals.
"""

from __future__ import annotations

import numpy as np

from . import collision_epa as _epa
from . import collision_gjk as _gjk
from . import collision_multi as _multi
from . import collision_multiccd as _multiccd
from .collision_gjk import MAX_LIMIT, TOLERANCE, ConvexGeom, GJKStatus, gjk
from .collision_primitive import PairContacts, normalize, pack


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


# ----------------------------------------------------------------------------- the pair routine

#: The cores GJK uses for spheres and capsules (grown back by the radius afterwards).
_CORE = {"sphere": "point", "capsule": "line"}


def _ccd(g1: ConvexGeom, g2: ConvexGeom, max_contacts: int = 1):
    """MuJoCo's ``mjc_ccd`` with ``dist_cutoff`` 0: the signed distance (less the margin)
    and witness points of the pair, or None when the geoms do not touch.  With
    ``max_contacts`` > 1 (two polytopes, :func:`max_contacts`), a list of such triples
    from EPA's face (:func:`rbd.constraints.collision_multi.multicontact`)."""
    if g1.kind in _CORE or g2.kind in _CORE:
        full = []
        cores = []
        for g in (g1, g2):
            if g.kind in _CORE:
                full.append(g.size[0] + 0.5 * g.margin)
                cores.append(ConvexGeom(_CORE[g.kind], g.pos, g.mat, g.size, 0.0))
            else:
                full.append(0.0)
                cores.append(g)
        status = GJKStatus(*cores, dist_cutoff=full[0] + full[1])
        gjk(status, *cores)
        if status.dist > TOLERANCE:                      # shallow: inflate by the radii
            if status.dist == MAX_LIMIT:
                return None
            n, _ = normalize(status.x2 - status.x1)
            x1 = status.x1 + full[0] * n if full[0] else status.x1
            x2 = status.x2 - full[1] * n if full[1] else status.x2
            dist = status.dist - (full[0] + full[1])
            return (dist, x1, x2) if dist <= 0 else None
    status = GJKStatus(g1, g2, dist_cutoff=0.0)          # the whole geoms: GJK, then EPA
    gjk(status, g1, g2)
    if status.dist <= TOLERANCE and len(status.simplex) > 1 and not status.separated:
        found = _epa.penetration_face(status.simplex, g1, g2)
        if max_contacts == 1 or found is None:
            return None if found is None else found[:3]
        dist, x1, x2, face = found
        return _multi.multicontact(face, x1, x2, g1, g2) or [(dist, x1, x2)]
    return None


def _penetrations(g1: ConvexGeom, g2: ConvexGeom, margin: float, max_contacts: int) -> list:
    """Contacts ``[(dist, pos, normal), ...]`` of the pair (``mjc_penetration``): one per
    witness pair, at their midpoint, normal from geom 1's witness to geom 2's; none unless
    the deepest is below zero."""
    found = _ccd(g1, g2, max_contacts)
    if found is None:
        return []
    witnesses = found if max_contacts > 1 else [found]
    if not min(w[0] for w in witnesses) < 0:
        return []
    return [(margin + dist, (x1 + x2) * 0.5, normalize(x1 - x2)[0])
            for dist, x1, x2 in witnesses]


def max_contacts(kind1: str, kind2: str, margin: float, multiccd: bool = True) -> int:
    """How many contacts one GJK/EPA run may give (MuJoCo's ``maxContacts``): up to
    :data:`~rbd.constraints.collision_multi.MAX_CONTACTS` for two boxes or meshes without
    margin and with multi-CCD, else one (MuJoCo 4.0's multi-CCD of a face against a face
    or a capsule's side may add more: :mod:`.collision_multiccd`)."""
    polytopes = kind1 in _gjk.DISCRETE and kind2 in _gjk.DISCRETE
    return _multi.MAX_CONTACTS if polytopes and multiccd and not margin > 0 else 1


def convex(kind1, kind2, pos1, mat1, size1, pos2, mat2, size2, margin, rbound1, rbound2,
           multiccd: bool = True) -> PairContacts:
    """Contacts of two convex geoms by GJK and EPA, as MuJoCo's ``mjc_Convex`` (module notes).

    Parameters
    ----------
    kind1, kind2 : str
        Geom kinds, geom 1 before geom 2 in MuJoCo's order.
    pos1, mat1, size1, pos2, mat2, size2 : array_like
        World poses and sizes (:mod:`rbd.constraints.collision_primitive`).
    margin : float
        The pair's ``margin + gap``.
    rbound1, rbound2 : float
        Bounding radii (``geom_rbound``); unused by MuJoCo 4.0's multi-CCD (the 3.12
        source's turned-geom search scales its "new contact" test by them), kept for the
        pair routines' signature.
    multiccd : bool
        MuJoCo's multi-CCD (its ``multiccd`` disable flag off).
    """
    g1 = ConvexGeom(kind1, pos1, mat1, size1, margin)
    g2 = ConvexGeom(kind2, pos2, mat2, size2, margin)
    most = max_contacts(kind1, kind2, margin, multiccd)
    if most == 1 and multiccd and _multiccd.supported(kind1, kind2):
        found = _multiccd.contacts(g1, g2, margin)     # MuJoCo 4.0's multi-CCD
        return pack([(dist, pos, normal, np.zeros(3)) for dist, pos, normal in found])
    found = _penetrations(g1, g2, margin, most)
    if not found:
        return pack([])
    # EPA's face gave them all (two polytopes), or one contact (a sphere or an ellipsoid)
    return pack([(dist, pos, normal, np.zeros(3)) for dist, pos, normal in found])


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
