# cython: language_level=3
"""Narrow-phase collision of primitive geoms, compiled.

The compiled twin of ``rbd/constraints/collision_primitive.py``: the same pair
routines (MuJoCo's ``engine_collision_primitive.c``), branches, clamps and
tolerances, on raw 3-vectors and row-major 3×3 rotations (``mat[3 i + j]``;
column ``j`` is geom axis ``j`` in world coordinates, so the z axis is
``mat[2], mat[5], mat[8]``).  Each ``c_X`` writes the pair's contacts into a
:c:type:`PairOut`; the ``def X`` beside it takes NumPy arrays and returns
``(dist, pos, frame)`` as the reference's ``PairContacts``.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, sqrt

from rbd._kernels._spatial cimport cross3, dot3

cnp.import_array()

#: MuJoCo's mjMINVAL: the smallest value it divides by
cdef double MINVAL = 1e-15
#: squared sine of the angle between two capsule axes below which they count as parallel
cdef double PARALLEL_SIN2 = 1e-8
#: a zero tangent: make_frame picks one
cdef double ZERO3[3]


cdef inline void column(const double* mat, int j, double* out) noexcept nogil:
    # out = mat[:, j] (geom axis j)
    out[0], out[1], out[2] = mat[j], mat[3 + j], mat[6 + j]


cdef inline double clip(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef double normalize(double* vec) noexcept nogil:
    """vec ← vec / ‖vec‖ (x when ‖vec‖ < MINVAL); returns ‖vec‖ (mju_normalize3)."""
    cdef double norm = sqrt(dot3(vec, vec))
    if norm < MINVAL:
        vec[0], vec[1], vec[2] = 1.0, 0.0, 0.0
        return norm
    vec[0] *= 1.0 / norm
    vec[1] *= 1.0 / norm
    vec[2] *= 1.0 / norm
    return norm


cdef int make_frame(const double* normal, const double* tangent, double* frame) noexcept nogil:
    """Contact frame rows (normal, tangent 1, normal × tangent 1) as ``mju_makeFrame``."""
    cdef double x[3]
    cdef double y[3]
    cdef double xy
    cdef int k
    for k in range(3):
        x[k], y[k] = normal[k], tangent[k]
    normalize(x)
    if dot3(y, y) < 0.25:
        # a short tangent: world y, or z when the normal is within 60° of y
        if -0.5 < x[1] < 0.5:
            y[0], y[1], y[2] = 0.0, 1.0, 0.0
        else:
            y[0], y[1], y[2] = 0.0, 0.0, 1.0
    # y ← normalize(y − x (x·y))
    xy = dot3(x, y)
    for k in range(3):
        y[k] = y[k] - x[k] * xy
    normalize(y)
    for k in range(3):
        frame[k], frame[3 + k] = x[k], y[k]
    cross3(x, y, frame + 6)
    return 0


cdef object pack(const PairOut* out):
    """``(dist, pos, frame)`` arrays of a pair's contacts."""
    cdef Py_ssize_t n = out.n, k
    cdef cnp.ndarray dist = np.empty(n)
    cdef cnp.ndarray pos = np.empty((n, 3))
    cdef cnp.ndarray frame = np.empty((n, 3, 3))
    cdef double* d = <double*> cnp.PyArray_DATA(dist)
    cdef double* p = <double*> cnp.PyArray_DATA(pos)
    cdef double* f = <double*> cnp.PyArray_DATA(frame)
    for k in range(n):
        d[k] = out.dist[k]
    for k in range(3 * n):
        p[k] = out.pos[k]
    for k in range(9 * n):
        f[k] = out.frame[k]
    return dist, pos, frame


# ----------------------------------------------------------------------------- plane

cdef int _plane_sphere(const double* pos1, const double* mat1, const double* pos2,
                       double radius, double margin, const double* tangent,
                       PairOut* out) noexcept nogil:
    """One contact of a sphere of ``radius`` at ``pos2`` with a plane (mjraw_PlaneSphere)."""
    cdef double normal[3]
    cdef double d[3]
    cdef double pos[3]
    cdef double cdist, dist
    cdef int k
    column(mat1, 2, normal)
    for k in range(3):
        d[k] = pos2[k] - pos1[k]
    cdist = dot3(d, normal)
    if cdist > margin + radius:
        return 0
    dist = cdist - radius
    for k in range(3):
        # midway between the plane and the sphere's lowest point
        pos[k] = pos2[k] + normal[k] * (-dist / 2 - radius)
    add_contact(out, dist, pos, normal, tangent)
    return 1


cdef int c_plane_sphere(const double* pos1, const double* mat1, const double* size1,
                        const double* pos2, const double* mat2, const double* size2,
                        double margin, PairOut* out) noexcept nogil:
    return _plane_sphere(pos1, mat1, pos2, size2[0], margin, ZERO3, out)


cdef int c_plane_capsule(const double* pos1, const double* mat1, const double* size1,
                         const double* pos2, const double* mat2, const double* size2,
                         double margin, PairOut* out) noexcept nogil:
    # the two end spheres, each frame with the capsule axis as its first tangent
    cdef double axis[3]
    cdef double end[3]
    cdef int k
    column(mat2, 2, axis)
    for k in range(3):
        end[k] = pos2[k] + size2[1] * axis[k]
    _plane_sphere(pos1, mat1, end, size2[0], margin, axis, out)
    for k in range(3):
        end[k] = pos2[k] - size2[1] * axis[k]
    _plane_sphere(pos1, mat1, end, size2[0], margin, axis, out)
    return out.n


cdef int c_plane_cylinder(const double* pos1, const double* mat1, const double* size1,
                          const double* pos2, const double* mat2, const double* size2,
                          double margin, PairOut* out) noexcept nogil:
    cdef double normal[3]
    cdef double axis[3]
    cdef double vec[3]
    cdef double side[3]
    cdef double pos[3]
    cdef double d[3]
    cdef double prjaxis, dist0, len_sqr, prjvec, prjvec1, dist, sign
    cdef int k, s
    column(mat1, 2, normal)
    column(mat2, 2, axis)
    prjaxis = dot3(normal, axis)
    if prjaxis > 0:
        # the axis points towards the plane
        for k in range(3):
            axis[k] = -axis[k]
        prjaxis = -prjaxis
    for k in range(3):
        d[k] = pos2[k] - pos1[k]
    dist0 = dot3(d, normal)
    for k in range(3):
        # −normal with its axial component removed
        vec[k] = axis[k] * prjaxis - normal[k]
    len_sqr = dot3(vec, vec)
    if len_sqr >= MINVAL * MINVAL:
        for k in range(3):
            vec[k] = vec[k] * (size2[0] / sqrt(len_sqr))
    else:
        # disk parallel to the plane: the cylinder's x axis
        column(mat2, 0, vec)
        for k in range(3):
            vec[k] = vec[k] * size2[0]
    prjvec = dot3(vec, normal)
    for k in range(3):
        axis[k] = axis[k] * size2[1]
    prjaxis *= size2[1]
    # lowest point of the near rim
    dist = dist0 + prjaxis + prjvec
    if dist > margin:
        return 0
    for k in range(3):
        pos[k] = pos2[k] + vec[k] + axis[k] - normal[k] * (dist * 0.5)
    add_contact(out, dist, pos, normal, ZERO3)
    # lowest point of the far rim
    dist = dist0 - prjaxis + prjvec
    if dist <= margin:
        for k in range(3):
            pos[k] = pos2[k] + vec[k] - axis[k] - normal[k] * (dist * 0.5)
        add_contact(out, dist, pos, normal, ZERO3)
    # the two other corners of the triangle inscribed in the near disk
    prjvec1 = -prjvec * 0.5
    dist = dist0 + prjaxis + prjvec1
    if dist <= margin:
        cross3(vec, axis, side)
        normalize(side)
        for k in range(3):
            side[k] = side[k] * (size2[0] * sqrt(3.0) / 2)
        for s in range(2):
            sign = 1.0 if s == 0 else -1.0
            for k in range(3):
                pos[k] = (pos2[k] + sign * side[k] + axis[k] - 0.5 * vec[k]
                          - normal[k] * (dist * 0.5))
            add_contact(out, dist, pos, normal, ZERO3)
    return out.n


cdef int c_plane_box(const double* pos1, const double* mat1, const double* size1,
                     const double* pos2, const double* mat2, const double* size2,
                     double margin, PairOut* out) noexcept nogil:
    # corners in MuJoCo's order (bit k of i: the sign on axis k), at most four contacts
    cdef double normal[3]
    cdef double d[3]
    cdef double local[3]
    cdef double corner[3]
    cdef double pos[3]
    cdef double dist0, ldist, dist
    cdef int i, k, j
    column(mat1, 2, normal)
    for k in range(3):
        d[k] = pos2[k] - pos1[k]
    dist0 = dot3(d, normal)
    for i in range(8):
        for k in range(3):
            local[k] = size2[k] if i & (1 << k) else -size2[k]
        for k in range(3):
            # corner = mat2 local
            corner[k] = 0.0
            for j in range(3):
                corner[k] += mat2[3 * k + j] * local[j]
        ldist = dot3(normal, corner)
        if dist0 + ldist > margin or ldist > 0:
            continue
        dist = dist0 + ldist
        for k in range(3):
            pos[k] = corner[k] + pos2[k] - normal[k] * (dist / 2)
        add_contact(out, dist, pos, normal, ZERO3)
        if out.n >= 4:
            break
    return out.n


cdef int c_plane_ellipsoid(const double* pos1, const double* mat1, const double* size1,
                           const double* pos2, const double* mat2, const double* size2,
                           double margin, PairOut* out) noexcept nogil:
    # the ellipsoid's support point along −normal: p = R S normalize(S Rᵀ d)
    cdef double normal[3]
    cdef double unit[3]
    cdef double support[3]
    cdef double pos[3]
    cdef double d[3]
    cdef double dist
    cdef int k, j
    column(mat1, 2, normal)
    for k in range(3):
        unit[k] = 0.0
        for j in range(3):
            unit[k] += mat2[3 * j + k] * -normal[j]
        unit[k] = unit[k] * size2[k]
    normalize(unit)
    for k in range(3):
        unit[k] = unit[k] * size2[k]
    for k in range(3):
        support[k] = 0.0
        for j in range(3):
            support[k] += mat2[3 * k + j] * unit[j]
        support[k] += pos2[k]
        d[k] = support[k] - pos1[k]
    dist = dot3(d, normal)
    if dist > margin:
        return 0
    for k in range(3):
        pos[k] = support[k] - 0.5 * dist * normal[k]
    add_contact(out, dist, pos, normal, ZERO3)
    return 1


# ----------------------------------------------------------------------------- spheres, capsules

cdef int _sphere_sphere(const double* pos1, const double* mat1, double r1, const double* pos2,
                        const double* mat2, double r2, double margin,
                        PairOut* out) noexcept nogil:
    """One contact of two spheres (mjraw_SphereSphere)."""
    cdef double dif[3]
    cdef double normal[3]
    cdef double a[3]
    cdef double b[3]
    cdef double pos[3]
    cdef double cdist_sqr, min_dist, dist, length
    cdef int k
    for k in range(3):
        dif[k] = pos1[k] - pos2[k]
    cdist_sqr = dot3(dif, dif)
    min_dist = margin + r1 + r2
    if cdist_sqr > min_dist * min_dist:
        return 0
    dist = sqrt(cdist_sqr) - r1 - r2
    for k in range(3):
        normal[k] = pos2[k] - pos1[k]
    length = normalize(normal)
    if length < MINVAL:
        # same centres: the cross product of the z axes
        column(mat1, 2, a)
        column(mat2, 2, b)
        cross3(a, b, normal)
        normalize(normal)
    for k in range(3):
        pos[k] = normal[k] * (r1 + dist / 2) + pos1[k]
    add_contact(out, dist, pos, normal, ZERO3)
    return 1


cdef int c_sphere_sphere(const double* pos1, const double* mat1, const double* size1,
                         const double* pos2, const double* mat2, const double* size2,
                         double margin, PairOut* out) noexcept nogil:
    return _sphere_sphere(pos1, mat1, size1[0], pos2, mat2, size2[0], margin, out)


cdef int c_sphere_capsule(const double* pos1, const double* mat1, const double* size1,
                          const double* pos2, const double* mat2, const double* size2,
                          double margin, PairOut* out) noexcept nogil:
    # the capsule's sphere at the axis point nearest the sphere centre
    cdef double axis[3]
    cdef double d[3]
    cdef double centre[3]
    cdef double x
    cdef int k
    column(mat2, 2, axis)
    for k in range(3):
        d[k] = pos1[k] - pos2[k]
    x = clip(dot3(axis, d), -size2[1], size2[1])
    for k in range(3):
        centre[k] = axis[k] * x + pos2[k]
    return _sphere_sphere(pos1, mat1, size1[0], centre, mat2, size2[0], margin, out)


cdef int c_sphere_cylinder(const double* pos1, const double* mat1, const double* size1,
                           const double* pos2, const double* mat2, const double* size2,
                           double margin, PairOut* out) noexcept nogil:
    # by where the sphere centre projects: beside the side, over a cap, beyond the rim
    cdef double axis[3]
    cdef double vec[3]
    cdef double a_proj[3]
    cdef double p_proj[3]
    cdef double point[3]
    cdef double mat_cap[9]
    cdef double radius = size2[0], height = size2[1], x, p_proj_sqr, h
    cdef bint collide_side, collide_cap
    cdef int k, first = out.n
    column(mat2, 2, axis)
    for k in range(3):
        vec[k] = pos1[k] - pos2[k]
    x = dot3(axis, vec)
    for k in range(3):
        a_proj[k] = axis[k] * x
        p_proj[k] = vec[k] - a_proj[k]
    p_proj_sqr = dot3(p_proj, p_proj)
    collide_side = fabs(x) < height
    collide_cap = p_proj_sqr < radius * radius
    if collide_side and collide_cap:
        # centre inside: keep the nearer feature
        if height - fabs(x) < radius - sqrt(p_proj_sqr):
            collide_side = False
        else:
            collide_cap = False
    if collide_side:
        for k in range(3):
            point[k] = a_proj[k] + pos2[k]
        return _sphere_sphere(pos1, mat1, size1[0], point, mat2, size2[0], margin, out)
    if collide_cap:
        h = height if x > 0 else -height
        for k in range(9):
            # bottom cap: the frame turned over about y
            mat_cap[k] = mat2[k] if x > 0 or k % 3 == 1 else -mat2[k]
        for k in range(3):
            point[k] = pos2[k] + axis[k] * h
        _plane_sphere(point, mat_cap, pos1, size1[0], margin, ZERO3, out)
        for k in range(first, out.n):
            # normal from the sphere to the cylinder: frame rows 1 and 2 turn with it
            make_frame_flipped(out.frame + 9 * k)
        return out.n
    h = height if x > 0 else -height
    for k in range(3):
        point[k] = p_proj[k] * (size2[0] / sqrt(p_proj_sqr)) + axis[k] * h + pos2[k]
    return _sphere_sphere(pos1, mat1, size1[0], point, mat2, 0.0, margin, out)


cdef inline void make_frame_flipped(double* frame) noexcept nogil:
    # the frame of the negated normal (make_frame(−n, 0))
    cdef double normal[3]
    normal[0], normal[1], normal[2] = -frame[0], -frame[1], -frame[2]
    make_frame(normal, ZERO3, frame)


cdef int c_capsule_capsule(const double* pos1, const double* mat1, const double* size1,
                           const double* pos2, const double* mat2, const double* size2,
                           double margin, PairOut* out) noexcept nogil:
    # skew axes: the nearest points of the segments; nearly parallel: the overlap's ends
    cdef double axis1[3]
    cdef double axis2[3]
    cdef double dif[3]
    cdef double ma, mb, mc, u, v, det, x1, x2, xa, xb
    cdef int k
    column(mat1, 2, axis1)
    column(mat2, 2, axis2)
    for k in range(3):
        axis1[k] = axis1[k] * size1[1]
        axis2[k] = axis2[k] * size2[1]
        dif[k] = pos1[k] - pos2[k]
    ma = dot3(axis1, axis1)
    mb = -dot3(axis1, axis2)
    mc = dot3(axis2, axis2)
    u = -dot3(axis1, dif)
    v = dot3(axis2, dif)
    det = ma * mc - mb * mb
    if det >= PARALLEL_SIN2 * ma * mc:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1, x2 = 1.0, (v - mb) / mc
        elif x1 < -1:
            x1, x2 = -1.0, (v + mb) / mc
        if x2 > 1:
            x2, x1 = 1.0, clip((u - mb) / ma, -1, 1)
        elif x2 < -1:
            x2, x1 = -1.0, clip((u + mb) / ma, -1, 1)
        capsule_pair(pos1, mat1, size1[0], axis1, x1, pos2, mat2, size2[0], axis2, x2,
                     margin, out)
        return out.n
    # ends x2 = +1, −1 of segment 2 on segment 1
    xa, xb = (u - mb) / ma, (u + mb) / ma
    if min(xa, xb) > -1:
        capsule_pair(pos1, mat1, size1[0], axis1, clip(min(xa, xb), -1, 1), pos2, mat2,
                     size2[0], axis2, 1.0 if xa < xb else -1.0, margin, out)
    else:
        capsule_pair(pos1, mat1, size1[0], axis1, -1.0, pos2, mat2, size2[0], axis2,
                     clip((v + mb) / mc, -1, 1), margin, out)
    if max(xa, xb) < 1:
        capsule_pair(pos1, mat1, size1[0], axis1, clip(max(xa, xb), -1, 1), pos2, mat2,
                     size2[0], axis2, 1.0 if xa > xb else -1.0, margin, out)
    else:
        capsule_pair(pos1, mat1, size1[0], axis1, 1.0, pos2, mat2, size2[0], axis2,
                     clip((v - mb) / mc, -1, 1), margin, out)
    return out.n


cdef inline void capsule_pair(const double* pos1, const double* mat1, double r1,
                              const double* axis1, double x1, const double* pos2,
                              const double* mat2, double r2, const double* axis2, double x2,
                              double margin, PairOut* out) noexcept nogil:
    # sphere–sphere at segment points axis1 x1 + pos1 and axis2 x2 + pos2
    cdef double c1[3]
    cdef double c2[3]
    cdef int k
    for k in range(3):
        c1[k] = axis1[k] * x1 + pos1[k]
        c2[k] = axis2[k] * x2 + pos2[k]
    _sphere_sphere(c1, mat1, r1, c2, mat2, r2, margin, out)


# ----------------------------------------------------------------------------- Python entry points

def plane_sphere(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Plane and sphere (mjc_PlaneSphere): ``(dist, pos, frame)``."""
    return run_pair(c_plane_sphere, pos1, mat1, size1, pos2, mat2, size2, margin)


def plane_capsule(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Plane and capsule (mjc_PlaneCapsule): ``(dist, pos, frame)``."""
    return run_pair(c_plane_capsule, pos1, mat1, size1, pos2, mat2, size2, margin)


def plane_cylinder(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Plane and cylinder (mjc_PlaneCylinder): ``(dist, pos, frame)``."""
    return run_pair(c_plane_cylinder, pos1, mat1, size1, pos2, mat2, size2, margin)


def plane_box(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Plane and box (mjc_PlaneBox): ``(dist, pos, frame)``."""
    return run_pair(c_plane_box, pos1, mat1, size1, pos2, mat2, size2, margin)


def plane_ellipsoid(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Plane and ellipsoid (mjc_PlaneConvex with the ellipsoid's support)."""
    return run_pair(c_plane_ellipsoid, pos1, mat1, size1, pos2, mat2, size2, margin)


def sphere_sphere(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Two spheres (mjc_SphereSphere): ``(dist, pos, frame)``."""
    return run_pair(c_sphere_sphere, pos1, mat1, size1, pos2, mat2, size2, margin)


def sphere_capsule(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Sphere and capsule (mjc_SphereCapsule): ``(dist, pos, frame)``."""
    return run_pair(c_sphere_capsule, pos1, mat1, size1, pos2, mat2, size2, margin)


def sphere_cylinder(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Sphere and cylinder (mjc_SphereCylinder): ``(dist, pos, frame)``."""
    return run_pair(c_sphere_cylinder, pos1, mat1, size1, pos2, mat2, size2, margin)


def capsule_capsule(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Two capsules (mjc_CapsuleCapsule): ``(dist, pos, frame)``."""
    return run_pair(c_capsule_capsule, pos1, mat1, size1, pos2, mat2, size2, margin)
