# cython: language_level=3
"""General convex collision (GJK and EPA), compiled: MuJoCo's native ``mjc_Convex``.

The compiled twin of ``rbd/constraints/collision_convex.py`` (``mjc_Convex``,
``mjc_penetration``, ``mjc_ccd`` of ``engine_collision_convex.c``) on
``collision_gjk.pyx`` and ``collision_epa.pyx``: a sphere or a capsule shrinks to its
centre or segment and GJK's distance is inflated by the radii while the core stays
apart; otherwise GJK on the whole geoms, then EPA, gives the penetration.  Two boxes or
meshes without margin under multi-CCD get up to four contacts from EPA's closest face
(``collision_multi.pyx``, MuJoCo's ``multicontact``); a face against a face or a
capsule's side otherwise gets them from MuJoCo 4.0's multi-CCD
(``collision_multiccd.pyx``); other pairs one.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport hypot, sqrt

from rbd._kernels.collision_epa cimport penetration, penetration_face
from rbd._kernels.collision_gjk cimport (
    CCD_LINE,
    CCD_POINT,
    ConvexGeom,
    GJKStatus,
    Vertex,
    geom_init,
    gjk,
    status_init,
)
from rbd._kernels.collision_multi cimport multicontact
from rbd._kernels.collision_multiccd cimport c_contacts, supported
from rbd._kernels.collision_primitive cimport PairOut, add_contact, as_doubles, normalize, pack

cnp.import_array()

#: MuJoCo's ccd_tolerance default; mjMAX_LIMIT
cdef double TOLERANCE = 1e-6
cdef double MAX_LIMIT = 1.7976931348623157e308
#: a zero tangent: make_frame picks one
cdef double ZERO3[3]
#: kind codes of rbd.constraints.collision.KINDS (convex's Python entry point)
KIND_CODES = {"sphere": CCD_SPHERE, "capsule": CCD_CAPSULE, "ellipsoid": CCD_ELLIPSOID,
              "cylinder": CCD_CYLINDER, "box": CCD_BOX}


cdef double bounding_radius(int kind, const double* size) noexcept nogil:
    """Radius of the bounding sphere about the geom's centre (``geom_rbound``)."""
    if kind == CCD_SPHERE:
        return size[0]
    if kind == CCD_CAPSULE:
        return size[0] + size[1]
    if kind == CCD_CYLINDER:
        return hypot(size[0], size[1])
    if kind == CCD_ELLIPSOID:
        return max(size[0], max(size[1], size[2]))
    if kind == CCD_BOX:
        return sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2])
    return 0.0


# ----------------------------------------------------------------------------- the pair routine

cdef inline ConvexGeom* _core(ConvexGeom* g, ConvexGeom* core, double* full) noexcept nogil:
    # the core GJK uses for a sphere or a capsule, written to core (its radius + half the
    # margin into full); any other geom is its own core (the same record, so that a mesh's
    # last support vertex carries over to the run on the whole geoms, as the reference's)
    if g.kind == CCD_SPHERE or g.kind == CCD_CAPSULE:
        geom_init(core, CCD_POINT if g.kind == CCD_SPHERE else CCD_LINE, g.pos, g.mat, g.size,
                  0.0)
        full[0] = g.size[0] + 0.5 * g.margin
        return core
    full[0] = 0.0
    return g


cdef int _ccd(ConvexGeom* g1, ConvexGeom* g2, int most, double* dist, double* x1,
              double* x2) noexcept nogil:
    """MuJoCo's ``mjc_ccd`` with ``dist_cutoff`` 0: the signed distances (less the margin)
    and witness points of the pair (rows of 3), their number returned (0: the geoms do not
    touch).  With ``most`` > 1 (two polytopes, ``max_contacts``), up to that many from
    EPA's face (``collision_multi.multicontact``), else one."""
    cdef ConvexGeom c1, c2
    cdef ConvexGeom* core1
    cdef ConvexGeom* core2
    cdef GJKStatus status
    cdef Vertex face[3]
    cdef double n[3]
    cdef double full1, full2
    cdef int k
    if g1.kind == CCD_SPHERE or g1.kind == CCD_CAPSULE or g2.kind == CCD_SPHERE \
            or g2.kind == CCD_CAPSULE:
        core1, core2 = _core(g1, &c1, &full1), _core(g2, &c2, &full2)
        status_init(&status, core1, core2, full1 + full2)
        gjk(&status, core1, core2)
        if status.dist > TOLERANCE:
            # shallow: inflate by the radii
            if status.dist == MAX_LIMIT:
                return 0
            for k in range(3):
                n[k] = status.x2[k] - status.x1[k]
            normalize(n)
            for k in range(3):
                x1[k] = status.x1[k] + full1 * n[k] if full1 else status.x1[k]
                x2[k] = status.x2[k] - full2 * n[k] if full2 else status.x2[k]
            dist[0] = status.dist - (full1 + full2)
            return dist[0] <= 0
    # the whole geoms: GJK, then EPA
    status_init(&status, g1, g2, 0.0)
    gjk(&status, g1, g2)
    if not (status.dist <= TOLERANCE and status.nsimplex > 1 and not status.separated):
        return 0
    if most == 1:
        return penetration(status.simplex, status.nsimplex, g1, g2, dist, x1, x2)
    if not penetration_face(status.simplex, status.nsimplex, g1, g2, dist, x1, x2, face):
        return 0
    return _multi(face, g1, g2, dist, x1, x2)


cdef inline int _multi(const Vertex* face, ConvexGeom* g1, ConvexGeom* g2, double* dist,
                       double* x1, double* x2) noexcept nogil:
    # multicontact on EPA's face and witnesses (row 0 of dist, x1, x2), its contacts written
    # over them; else EPA's one contact stands
    cdef double d[MAX_CONTACTS]
    cdef double w1[3 * MAX_CONTACTS]
    cdef double w2[3 * MAX_CONTACTS]
    cdef int found = multicontact(face, x1, x2, g1, g2, d, w1, w2), c
    if not found:
        return 1
    for c in range(found):
        dist[c] = d[c]
    for c in range(3 * found):
        x1[c], x2[c] = w1[c], w2[c]
    return found


cdef int _penetrations(ConvexGeom* g1, ConvexGeom* g2, double margin, int most,
                       double* dist, double* pos, double* normal) noexcept nogil:
    """Contacts of the pair (``mjc_penetration``): one per witness pair of ``_ccd``, at their
    midpoint, normal from geom 1's witness to geom 2's (rows of 3); their number, none
    unless the deepest is below zero."""
    cdef double x1[3 * MAX_CONTACTS]
    cdef double x2[3 * MAX_CONTACTS]
    cdef double deepest
    cdef int found = _ccd(g1, g2, most, dist, x1, x2), c, k
    if not found:
        return 0
    deepest = dist[0]
    for c in range(1, found):
        deepest = min(deepest, dist[c])
    if not deepest < 0:
        return 0
    for c in range(found):
        dist[c] = margin + dist[c]
        for k in range(3):
            pos[3 * c + k] = (x1[3 * c + k] + x2[3 * c + k]) * 0.5
            normal[3 * c + k] = x1[3 * c + k] - x2[3 * c + k]
        normalize(normal + 3 * c)
    return found


cdef int c_convex(ConvexGeom* g1, ConvexGeom* g2, double margin, double rbound1,
                  double rbound2, bint multiccd, PairOut* out) noexcept nogil:
    """Contacts of two convex geoms (``geom_init``, a mesh's hull set) by GJK and EPA, as
    MuJoCo's ``mjc_Convex``: their number written to ``out`` (up to MAX_CONTACTS from EPA's
    face for two boxes or meshes without margin, ``max_contacts``; under multi-CCD, a face
    against a face or a capsule's side through MuJoCo 4.0's multi-CCD,
    ``collision_multiccd.pyx``; else 0 or 1).  ``rbound1``, ``rbound2`` are unused (the reference's signature)."""
    cdef double pos[3 * MAX_CONTACTS]
    cdef double normal[3 * MAX_CONTACTS]
    cdef double dist[MAX_CONTACTS]
    cdef int most = max_contacts(g1.kind, g2.kind, margin, multiccd), found, c
    if most == 1 and multiccd and supported(g1.kind, g2.kind):
        # MuJoCo 4.0's multi-CCD
        return c_contacts(g1, g2, margin, out)
    found = _penetrations(g1, g2, margin, most, dist, pos, normal)
    # EPA's face gave them all (two polytopes), or one contact (a sphere or an ellipsoid)
    for c in range(found):
        add_contact(out, dist[c], pos + 3 * c, normal + 3 * c, ZERO3)
    return found


def convex(str kind1, str kind2, pos1, mat1, size1, pos2, mat2, size2, double margin,
           double rbound1, double rbound2, bint multiccd=True):
    """:c:func:`c_convex` on array_like poses and sizes (kinds by name, as the reference's
    ``convex``): ``(dist, pos, frame)`` arrays."""
    cdef const double[::1] p1 = as_doubles(pos1).reshape(3)
    cdef const double[::1] m1 = as_doubles(mat1).reshape(9)
    cdef const double[::1] s1 = np.resize(as_doubles(size1), 3)
    cdef const double[::1] p2 = as_doubles(pos2).reshape(3)
    cdef const double[::1] m2 = as_doubles(mat2).reshape(9)
    cdef const double[::1] s2 = np.resize(as_doubles(size2), 3)
    cdef PairOut out
    cdef ConvexGeom g1, g2
    out.n = 0
    geom_init(&g1, KIND_CODES[kind1], &p1[0], &m1[0], &s1[0], margin)
    geom_init(&g2, KIND_CODES[kind2], &p2[0], &m2[0], &s2[0], margin)
    c_convex(&g1, &g2, margin, rbound1, rbound2, multiccd, &out)
    return pack(&out)
