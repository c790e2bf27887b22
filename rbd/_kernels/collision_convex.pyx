# cython: language_level=3
"""General convex collision (GJK and EPA), compiled: MuJoCo's native ``mjc_Convex``.

The compiled twin of ``rbd/constraints/collision_convex.py`` (``mjc_Convex``,
``mjc_penetration``, ``mjc_ccd`` of ``engine_collision_convex.c``) on
``collision_gjk.pyx`` and ``collision_epa.pyx``: a sphere or a capsule shrinks to its
centre or segment and GJK's distance is inflated by the radii while the core stays
apart; otherwise GJK on the whole geoms, then EPA, gives the penetration.  One contact
per pair; where the reference raises ``ConvexUnsupportedError`` (MuJoCo's multi-contact
search would find a second contact) :c:func:`c_convex` returns -1 and writes none, and
the collision stage lists the pair as unsupported (``collision.pyx``).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport cos, hypot, sin, sqrt

from rbd._kernels._spatial cimport dot3, mat3_mul, mat3_vec
from rbd._kernels.collision_epa cimport penetration
from rbd._kernels.collision_gjk cimport (
    CCD_LINE,
    CCD_POINT,
    ConvexGeom,
    GJKStatus,
    geom_init,
    gjk,
    status_init,
)
from rbd._kernels.collision_primitive cimport (PairOut, add_contact, as_doubles, make_frame,
                                               normalize, pack)

cnp.import_array()

#: Multi-CCD: turn angle and the relative distance that makes a contact new
cdef double PERTURBATION_ANGLE = 1e-3
cdef double RELATIVE_TOLERANCE = 1e-3
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


cdef bint _ccd(ConvexGeom* g1, ConvexGeom* g2, double* dist, double* x1,
               double* x2) noexcept nogil:
    """MuJoCo's ``mjc_ccd`` with ``dist_cutoff`` 0: the signed distance (less the margin)
    and witness points of the pair; False when the geoms do not touch."""
    cdef ConvexGeom c1, c2
    cdef ConvexGeom* core1
    cdef ConvexGeom* core2
    cdef GJKStatus status
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
                return False
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
    if status.dist <= TOLERANCE and status.nsimplex > 1 and not status.separated:
        return penetration(status.simplex, status.nsimplex, g1, g2, dist, x1, x2)
    return False


cdef bint _penetration(ConvexGeom* g1, ConvexGeom* g2, double margin,
                       double* dist, double* pos, double* normal) noexcept nogil:
    """One contact (dist, pos, normal) of the pair; False: none (``mjc_penetration``)."""
    cdef double x1[3]
    cdef double x2[3]
    cdef int k
    if not _ccd(g1, g2, dist, x1, x2) or not dist[0] < 0:
        return False
    dist[0] = margin + dist[0]
    for k in range(3):
        pos[k] = (x1[k] + x2[k]) * 0.5
        normal[k] = x1[k] - x2[k]
    normalize(normal)
    return True


cdef void _quat_to_mat(const double* q, double* R) noexcept nogil:
    """``mju_quat2Mat`` (its order of operations), row-major."""
    cdef double q00 = q[0] * q[0], q01 = q[0] * q[1], q02 = q[0] * q[2], q03 = q[0] * q[3]
    cdef double q11 = q[1] * q[1], q12 = q[1] * q[2], q13 = q[1] * q[3]
    cdef double q22 = q[2] * q[2], q23 = q[2] * q[3], q33 = q[3] * q[3]
    R[0], R[1], R[2] = q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02)
    R[3], R[4], R[5] = 2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01)
    R[6], R[7], R[8] = 2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33


cdef void _turned(ConvexGeom* g, const double* origin, const double* rot,
                  ConvexGeom* out) noexcept nogil:
    """The geom turned by ``rot`` about the point ``origin`` (``mju_rotateFrame``)."""
    cdef double rel[3]
    cdef double moved[3]
    cdef int k
    out[0] = g[0]
    out.vertindex = -1
    for k in range(3):
        rel[k] = origin[k] - g.pos[k]
    mat3_vec(rot, rel, moved)
    for k in range(3):
        out.pos[k] = g.pos[k] - (moved[k] - rel[k])
    mat3_mul(rot, g.mat, out.mat)


cdef inline bint _second_contact(ConvexGeom* g1, ConvexGeom* g2, double margin,
                                 const double* pos, const double* normal,
                                 double tolerance) noexcept nogil:
    # multi-CCD's test: turned about the contact, do the geoms touch farther than tolerance?
    cdef double frame[9]
    cdef double q[4]
    cdef double rot[9]
    cdef double rotT[9]
    cdef double extra[3]
    cdef double unused[3]
    cdef double diff[3]
    cdef double angle, s, dist
    cdef ConvexGeom t1, t2
    cdef int a, sign, i, j
    make_frame(normal, ZERO3, frame)
    for a in range(1, 3):
        for sign in range(-1, 2, 2):
            angle = sign * PERTURBATION_ANGLE
            s = sin(angle * 0.5)
            q[0], q[1], q[2], q[3] = (cos(angle * 0.5), frame[3 * a] * s, frame[3 * a + 1] * s,
                                      frame[3 * a + 2] * s)
            _quat_to_mat(q, rot)
            for i in range(3):
                for j in range(3):
                    rotT[3 * i + j] = rot[3 * j + i]
            _turned(g1, pos, rot, &t1)
            _turned(g2, pos, rotT, &t2)
            if _penetration(&t1, &t2, margin, &dist, extra, unused):
                for i in range(3):
                    diff[i] = pos[i] - extra[i]
                if sqrt(dot3(diff, diff)) > tolerance:
                    return True
    return False


cdef int c_convex(ConvexGeom* g1, ConvexGeom* g2, double margin, double rbound1,
                  double rbound2, bint multiccd, PairOut* out) noexcept nogil:
    """Contacts of two convex geoms (``geom_init``, a mesh's hull vertices set) by GJK and
    EPA, as MuJoCo's ``mjc_Convex``: 0 or 1 written to ``out``, or -1 (none written) when
    the pair needs MuJoCo's multi-contact search (the reference's
    ``ConvexUnsupportedError``)."""
    cdef double pos[3]
    cdef double normal[3]
    cdef double dist
    if not _penetration(g1, g2, margin, &dist, pos, normal):
        return 0
    if multiccd and g1.kind != CCD_SPHERE and g1.kind != CCD_ELLIPSOID \
            and g2.kind != CCD_SPHERE and g2.kind != CCD_ELLIPSOID:
        if _second_contact(g1, g2, margin, pos, normal,
                           RELATIVE_TOLERANCE * min(rbound1, rbound2)):
            return -1
    add_contact(out, dist, pos, normal, ZERO3)
    return 1


def convex(str kind1, str kind2, pos1, mat1, size1, pos2, mat2, size2, double margin,
           double rbound1, double rbound2, bint multiccd=True):
    """:c:func:`c_convex` on array_like poses and sizes (kinds by name, as the reference's
    ``convex``): ``(dist, pos, frame)`` arrays, or None where the reference raises
    ``ConvexUnsupportedError``."""
    cdef const double[::1] p1 = as_doubles(pos1).reshape(3)
    cdef const double[::1] m1 = as_doubles(mat1).reshape(9)
    cdef const double[::1] s1 = np.resize(as_doubles(size1), 3)
    cdef const double[::1] p2 = as_doubles(pos2).reshape(3)
    cdef const double[::1] m2 = as_doubles(mat2).reshape(9)
    cdef const double[::1] s2 = np.resize(as_doubles(size2), 3)
    cdef PairOut out
    cdef ConvexGeom g1, g2
    cdef int found
    out.n = 0
    geom_init(&g1, KIND_CODES[kind1], &p1[0], &m1[0], &s1[0], margin)
    geom_init(&g2, KIND_CODES[kind2], &p2[0], &m2[0], &s2[0], margin)
    found = c_convex(&g1, &g2, margin, rbound1, rbound2, multiccd, &out)
    return None if found < 0 else pack(&out)
