# cython: language_level=3
"""Narrow-phase collision of boxes with spheres, capsules and boxes, compiled.

The compiled twin of ``rbd/constraints/collision_box.py`` (MuJoCo's
``engine_collision_box.c``): the same routines, branches and rounding
allowances, with the conventions of ``collision_primitive.pyx`` (row-major
3×3 rotations whose columns are the geom axes, contacts in a
:c:type:`PairOut`).  Where the reference returns ``None`` (no second capsule
point, separated boxes) a routine here returns 0.
"""

cimport numpy as cnp
from libc.math cimport INFINITY, fabs, sqrt

from rbd._kernels._spatial cimport dot3, mat3_vec, mat3T_mul, mat3T_vec
from rbd._kernels.collision_primitive cimport (PairOut, add_contact, normalize,
                                               run_pair)

cnp.import_array()

#: MuJoCo's mjMINVAL
cdef double MINVAL = 1e-15
#: MuJoCo's rounding allowances in mjc_BoxBox (double precision)
cdef double BOXBOX_SEPEPS = 1e-13
cdef double BOXBOX_PAREPS = 1e-16
cdef double BOXBOX_SGNEPS = 1e-9
cdef double BOXBOX_DUPEPS = 1e-14
cdef double BOXBOX_EDGEBIAS = 1e-6
#: a zero tangent: make_frame picks one
cdef double ZERO3[3]


cdef inline double clip(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


# ----------------------------------------------------------------------------- sphere : box

cdef int _sphere_box(const double* pos1, const double* mat1, const double* size1,
                     const double* pos2, const double* mat2, const double* size2,
                     double margin, PairOut* out) noexcept nogil:
    """One contact of a sphere and a box (mjraw_SphereBox)."""
    cdef double d[3]
    cdef double center[3]
    cdef double clamped[3]
    cdef double direction[3]
    cdef double nearest[3]
    cdef double pos[3]
    cdef double normal[3]
    cdef double world[3]
    cdef double dist, closest, face
    cdef int i, k = 0
    for i in range(3):
        d[i] = pos1[i] - pos2[i]
    # the sphere centre in the box frame, clamped into the box
    mat3T_vec(mat2, d, center)
    for i in range(3):
        clamped[i] = clip(center[i], -size2[i], size2[i]) if size2[i] > 0 else center[i]
        direction[i] = clamped[i] - center[i]
    dist = normalize(direction)
    if dist - size1[0] > margin:
        return 0
    if dist <= MINVAL:
        # centre inside: the nearest face
        closest = (size2[0] + size2[1] + size2[2]) * 2
        for i in range(6):
            face = fabs((1 if i % 2 else -1) * size2[i // 2] - center[i // 2])
            if closest > face:
                closest, k = face, i
        nearest[0] = nearest[1] = nearest[2] = 0.0
        nearest[k // 2] = -1.0 if k % 2 else 1.0
        for i in range(3):
            pos[i] = center[i] + nearest[i] * ((size1[0] - closest) / 2)
        mat3_vec(mat2, nearest, normal)
        dist = -closest
    else:
        for i in range(3):
            # midway between the clamped point and the sphere's deepest point
            pos[i] = 0.5 * clamped[i] + 0.5 * (center[i] + direction[i] * size1[0])
        mat3_vec(mat2, direction, normal)
    mat3_vec(mat2, pos, world)
    for i in range(3):
        world[i] = world[i] + pos2[i]
    add_contact(out, dist - size1[0], world, normal, ZERO3)
    return 1


cdef int c_sphere_box(const double* pos1, const double* mat1, const double* size1,
                      const double* pos2, const double* mat2, const double* size2,
                      double margin, PairOut* out) noexcept nogil:
    return _sphere_box(pos1, mat1, size1, pos2, mat2, size2, margin, out)


# ----------------------------------------------------------------------------- capsule : box

cdef struct Nearest:
    int cltype, clface, clcorner, cledge
    double bestsegmentpos, bestboxpos


cdef int _capsule_box_nearest(const double* pos, const double* halfaxis, double radius,
                              double halflength, const double* size2, double margin,
                              Nearest* r) noexcept nogil:
    """The segment point nearest the box: ends against faces, then the twelve edges."""
    cdef double bestdist = margin + 2 * (radius + halflength + size2[0] + size2[1] + size2[2])
    cdef double end[3]
    cdef double clamped[3]
    cdef double start[3]
    cdef double dif[3]
    cdef double gap[3]
    cdef double dist, ma, mb, mc, u, v, det, idet, x1, x2
    cdef int i, j, k, nclamp, axis_clamped, s1, s2, code
    r.cltype, r.clface, r.clcorner, r.cledge = -4, -1, 0, 0
    r.bestsegmentpos, r.bestboxpos = 0.0, 0.0
    # --- segment ends: against the faces
    for i in range(-1, 2, 2):
        nclamp, axis_clamped = 0, -1
        for j in range(3):
            end[j] = pos[j] + halfaxis[j] * i
            clamped[j] = end[j]
            if end[j] < -size2[j] or end[j] > size2[j]:
                nclamp += 1
                axis_clamped = j
                clamped[j] = clip(end[j], -size2[j], size2[j])
        if nclamp > 1:
            continue
        for j in range(3):
            gap[j] = clamped[j] - end[j]
        dist = dot3(gap, gap)
        if dist < bestdist:
            bestdist, r.bestsegmentpos, r.cltype, r.clface = dist, <double> i, -2 + i, axis_clamped
    # --- box edges: the twelve against the segment
    for j in range(3):
        for i in range(8):
            if i & (1 << j):
                continue
            for k in range(3):
                start[k] = size2[k] if i & (1 << k) else -size2[k]
            start[j] = 0.0
            for k in range(3):
                dif[k] = start[k] - pos[k]
            ma = size2[j] * size2[j]
            mb = -size2[j] * halfaxis[j]
            mc = halflength * halflength
            u = -size2[j] * dif[j]
            v = dot3(halfaxis, dif)
            det = ma * mc - mb * mb
            if fabs(det) < MINVAL:
                continue
            idet = 1 / det
            x1 = (mc * u - mb * v) * idet
            x2 = (ma * v - mb * u) * idet
            s1 = s2 = 1
            if x1 > 1:
                x1, s1, x2 = 1.0, 2, (v - mb) * (1 / mc)
            elif x1 < -1:
                x1, s1, x2 = -1.0, 0, (v + mb) * (1 / mc)
            if x2 > 1 or x2 < -1:
                if x2 > 1:
                    x2, s2 = 1.0, 2
                else:
                    x2, s2 = -1.0, 0
                x1 = (u - mb) * (1 / ma) if x2 > 0 else (u + mb) * (1 / ma)
                if x1 > 1:
                    x1, s1 = 1.0, 2
                elif x1 < -1:
                    x1, s1 = -1.0, 0
            for k in range(3):
                gap[k] = start[k] - pos[k] - halfaxis[k] * x2
            gap[j] += size2[j] * x1
            dist = dot3(gap, gap)
            code = s1 * 3 + s2
            if dist < bestdist - MINVAL:
                bestdist, r.bestsegmentpos, r.bestboxpos = dist, x2, x1
                r.clcorner = i + (1 << j) * (code // 6)
                r.cledge, r.cltype = j, code
    return 0


cdef int _capsule_box_second(const double* pos, const double* axis, const double* halfaxis,
                             const double* size2, const Nearest* r,
                             double* second) noexcept nogil:
    """Where along the segment a second contact goes; returns 0 when there is none."""
    cdef int axisdir = (halfaxis[0] > 0) + 2 * (halfaxis[1] > 0) + 4 * (halfaxis[2] > 0)
    cdef int c1, mul, ax, ax1, ax2, i, b
    cdef double de, dp, e1, e2, bound
    cdef double other[3]
    cdef bint same
    if r.cltype >= 0 and r.cltype // 3 != 1:
        # a box corner is nearest
        c1 = axisdir ^ r.clcorner
        if c1 == 0 or c1 == 7:
            return 0
        if c1 == 1 or c1 == 2 or c1 == 4:
            mul, de, dp = 1, 1 - r.bestsegmentpos, 1 + r.bestsegmentpos
        else:
            mul, c1 = -1, 7 - c1
            dp, de = 1 - r.bestsegmentpos, 1 + r.bestsegmentpos
        ax = 0 if c1 == 1 else (1 if c1 == 2 else 2)
        ax1, ax2 = (ax + 1) % 3, (ax + 2) % 3
        if axis[ax] * axis[ax] > 0.5:
            # along the edge
            second[0] = min(de, 2 * size2[ax] / fabs(halfaxis[ax])) * mul
            return 1
        second[0] = min(dp, 2 * size2[ax1] / fabs(halfaxis[ax1]),
                        2 * size2[ax2] / fabs(halfaxis[ax2])) * -mul
        return 1
    if r.cltype >= 0:
        # the middle of an edge is nearest
        c1 = (axisdir ^ r.clcorner) & (7 - (1 << r.cledge))
        if not (c1 == 1 or c1 == 2 or c1 == 4):
            return 0
        ax = r.cledge
        ax1, ax2 = (ax + 1) % 3, (ax + 2) % 3
        if fabs(axis[ax1]) > fabs(axis[ax2]):
            ax1 = ax2
        ax2 = 3 - ax - ax1
        if c1 & (1 << ax2):
            mul, de = 1, 1 - r.bestsegmentpos
        else:
            mul, de = -1, 1 + r.bestsegmentpos
        de = min(de, 2 * size2[ax2] / fabs(halfaxis[ax2]))
        same = ((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0)
        e2 = 1 - r.bestboxpos if same else 1 + r.bestboxpos
        second[0] = min(de, size2[ax] * e2 / fabs(halfaxis[ax])) * mul
        return 1
    if r.clface == -1:
        return 0
    # an end over a face: the segment's exit through the other faces' planes
    mul = 1 if r.cltype == -3 else -1
    second[0] = 2.0
    for i in range(3):
        other[i] = pos[i] - halfaxis[i] * mul
    for i in range(3):
        if i == r.clface:
            continue
        for b in range(2):
            bound = size2[i] if b == 0 else -size2[i]
            e1 = (bound - other[i]) / halfaxis[i] * mul
            if 0 < e1 < second[0]:
                second[0] = e1
    second[0] = second[0] * mul
    return 1


cdef int c_capsule_box(const double* pos1, const double* mat1, const double* size1,
                       const double* pos2, const double* mat2, const double* size2,
                       double margin, PairOut* out) noexcept nogil:
    # in the box frame: the nearest segment point, a sphere there against the box, and a
    # second sphere where the capsule lies along a face or an edge
    cdef double d[3]
    cdef double pos[3]
    cdef double zaxis[3]
    cdef double axis[3]
    cdef double halfaxis[3]
    cdef double local[3]
    cdef double center[3]
    cdef double second = 0.0
    cdef Nearest r
    cdef int k, has_second
    for k in range(3):
        d[k] = pos1[k] - pos2[k]
        zaxis[k] = mat1[3 * k + 2]
    mat3T_vec(mat2, d, pos)
    mat3T_vec(mat2, zaxis, axis)
    for k in range(3):
        halfaxis[k] = axis[k] * size1[1]
    _capsule_box_nearest(pos, halfaxis, size1[0], size1[1], size2, margin, &r)
    if r.cltype == -4:
        return 0
    has_second = _capsule_box_second(pos, axis, halfaxis, size2, &r, &second)
    for k in range(3):
        local[k] = pos[k] + halfaxis[k] * r.bestsegmentpos
    mat3_vec(mat2, local, center)
    for k in range(3):
        center[k] = center[k] + pos2[k]
    _sphere_box(center, mat1, size1, pos2, mat2, size2, margin, out)
    if has_second:
        for k in range(3):
            local[k] = pos[k] + halfaxis[k] * (second + r.bestsegmentpos)
        mat3_vec(mat2, local, center)
        for k in range(3):
            center[k] = center[k] + pos2[k]
        _sphere_box(center, mat1, size1, pos2, mat2, size2, margin, out)
    return out.n


# ----------------------------------------------------------------------------- box : box

cdef struct Axis:
    int code, code_face
    double sep_best, sep_face


cdef int _box_box_axis(const double* rot, const double* pos21, const double* pos12,
                       const double* size1, const double* size2, double septol,
                       Axis* found) noexcept nogil:
    """Separating-axis test over the 15 axes; returns 0 when the boxes are separated."""
    cdef double sep, ax1, ax2, norm2, inv, radius1, radius2, a2_1, a2_2
    cdef int i, j, i1, i2, j1, j2
    found.sep_best, found.code = -INFINITY, -1
    # --- faces of box 1
    for i in range(3):
        sep = (fabs(pos21[i]) - size1[i]
               - (fabs(rot[3 * i]) * size2[0] + fabs(rot[3 * i + 1]) * size2[1]
                  + fabs(rot[3 * i + 2]) * size2[2]))
        if sep > septol:
            return 0
        if sep > found.sep_best:
            found.sep_best, found.code = sep, i
    # --- faces of box 2
    for j in range(3):
        sep = (fabs(pos12[j]) - size2[j]
               - (fabs(rot[j]) * size1[0] + fabs(rot[3 + j]) * size1[1]
                  + fabs(rot[6 + j]) * size1[2]))
        if sep > septol:
            return 0
        if sep > found.sep_best:
            found.sep_best, found.code = sep, 3 + j
    found.sep_face, found.code_face = found.sep_best, found.code
    # --- edge cross products
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            # e_i × (axis j of box 2), box-1 frame
            ax1, ax2 = -rot[3 * i2 + j], rot[3 * i1 + j]
            norm2 = ax1 * ax1 + ax2 * ax2
            if norm2 < BOXBOX_PAREPS:
                continue
            inv = 1 / sqrt(norm2)
            ax1, ax2 = ax1 * inv, ax2 * inv
            radius1 = size1[i1] * fabs(ax1) + size1[i2] * fabs(ax2)
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            a2_1 = ax1 * rot[3 * i1 + j1] + ax2 * rot[3 * i2 + j1]
            a2_2 = ax1 * rot[3 * i1 + j2] + ax2 * rot[3 * i2 + j2]
            radius2 = size2[j1] * fabs(a2_1) + size2[j2] * fabs(a2_2)
            sep = fabs(ax1 * pos21[i1] + ax2 * pos21[i2]) - radius1 - radius2
            if sep > septol:
                return 0
            if sep - BOXBOX_EDGEBIAS * fabs(sep) > found.sep_best and sep > found.sep_face:
                found.sep_best, found.code = sep, 6 + 3 * i + j
    return 1


cdef int _edge_axis(const double* rot, int code, double* axis) noexcept nogil:
    """Unit cross-product axis of edge code ``code`` in the box-1 frame."""
    cdef int i = (code - 6) // 3, j = (code - 6) % 3
    axis[0] = axis[1] = axis[2] = 0.0
    axis[(i + 1) % 3] = -rot[3 * ((i + 2) % 3) + j]
    axis[(i + 2) % 3] = rot[3 * ((i + 1) % 3) + j]
    normalize(axis)
    return 0


cdef inline void edge_candidate(const double* rot, const double* pos21, const double* size1,
                                const double* size2, const double* axis, const double* a2,
                                int i, int j, int amb1, int amb2, int v1, int v2,
                                double* p1, double* p2) noexcept nogil:
    # closest points of edge i of box 1 and edge j of box 2 through the support corners
    cdef int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3, k
    cdef double cc[3]
    cdef double e[3]
    cdef double d2[3]
    cdef double b, denom, d1e, d2e, s, t
    p1[0] = p1[1] = p1[2] = 0.0
    p1[i1] = size1[i1] if axis[i1] >= 0 else -size1[i1]
    p1[i2] = size1[i2] if axis[i2] >= 0 else -size1[i2]
    if amb1 >= 0 and v1:
        p1[amb1] = -p1[amb1]
    cc[0] = cc[1] = cc[2] = 0.0
    cc[j1] = -size2[j1] if a2[j1] >= 0 else size2[j1]
    cc[j2] = -size2[j2] if a2[j2] >= 0 else size2[j2]
    if amb2 >= 0 and v2:
        cc[amb2] = -cc[amb2]
    mat3_vec(rot, cc, p2)
    for k in range(3):
        p2[k] = p2[k] + pos21[k]
        d2[k] = rot[3 * k + j]
        e[k] = p2[k] - p1[k]
    b = d2[i]
    denom = 1 - b * b
    d1e, d2e = e[i], dot3(d2, e)
    s = 0.0 if denom < MINVAL else (d1e - b * d2e) / denom
    s = clip(s, -size1[i], size1[i])
    t = clip(b * s - d2e, -size2[j], size2[j])
    s = clip(d1e + b * t, -size1[i], size1[i])
    p1[i] += s
    for k in range(3):
        p2[k] = p2[k] + d2[k] * t


cdef int _box_box_edge(const double* rot, const double* pos21, const double* size1,
                       const double* size2, int code, double septol, const double* pos1,
                       const double* mat1, PairOut* out) noexcept nogil:
    """One edge–edge contact at the middle of the closest points (mjc_BoxBox, stage 2a)."""
    cdef int i = (code - 6) // 3, j = (code - 6) % 3, amb1, amb2, v1, v2, k
    cdef int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3
    cdef double axis[3]
    cdef double a2[3]
    cdef double p1[3]
    cdef double p2[3]
    cdef double w1[3]
    cdef double w2[3]
    cdef double mid[3]
    cdef double pos[3]
    cdef double normal[3]
    cdef double gap[3]
    cdef double best = INFINITY, gap2, dist
    _edge_axis(rot, code, axis)
    if dot3(axis, pos21) < 0:
        for k in range(3):
            axis[k] = -axis[k]
    # the axis in box-2 coordinates
    mat3T_vec(rot, axis, a2)
    amb1 = i1 if fabs(axis[i1]) < BOXBOX_SGNEPS else (i2 if fabs(axis[i2]) < BOXBOX_SGNEPS
                                                       else -1)
    amb2 = j1 if fabs(a2[j1]) < BOXBOX_SGNEPS else (j2 if fabs(a2[j2]) < BOXBOX_SGNEPS else -1)
    for v1 in range(2 if amb1 >= 0 else 1):
        for v2 in range(2 if amb2 >= 0 else 1):
            edge_candidate(rot, pos21, size1, size2, axis, a2, i, j, amb1, amb2, v1, v2, p1, p2)
            for k in range(3):
                gap[k] = p2[k] - p1[k]
            gap2 = dot3(gap, gap)
            if gap2 < best:
                best = gap2
                for k in range(3):
                    w1[k], w2[k] = p1[k], p2[k]
    for k in range(3):
        gap[k] = w2[k] - w1[k]
    dist = dot3(gap, axis)
    if dist > septol:
        return 0
    for k in range(3):
        mid[k] = 0.5 * (w1[k] + w2[k])
    mat3_vec(mat1, mid, pos)
    for k in range(3):
        pos[k] = pos[k] + pos1[k]
    mat3_vec(mat1, axis, normal)
    add_contact(out, dist, pos, normal, ZERO3)
    return 1


cdef int _clip_half_plane(const double* poly, int n, int coord, double sign, double limit,
                          double* out) noexcept nogil:
    """Sutherland–Hodgman step: keep sign v[coord] ≤ limit (clipHalfPlane); returns the
    new vertex count (vertices of 3, at most 12)."""
    cdef double d[12]
    cdef int k, k1, m = 0, c
    cdef double dp, dq, t
    cdef bint inside = True
    for k in range(n):
        d[k] = sign * poly[3 * k + coord] - limit
        inside = inside and d[k] <= 0
    if inside:
        for k in range(3 * n):
            out[k] = poly[k]
        return n
    for k in range(n):
        k1 = 0 if k + 1 == n else k + 1
        dp, dq = d[k], d[k1]
        if dp <= 0 and m < 12:
            for c in range(3):
                out[3 * m + c] = poly[3 * k + c]
            m += 1
        if ((dp < 0 < dq) or (dq < 0 < dp)) and m < 12:
            t = dp / (dp - dq)
            for c in range(3):
                out[3 * m + c] = poly[3 * k + c] + t * (poly[3 * k1 + c] - poly[3 * k + c])
            m += 1
    return m


cdef inline int incident_face(const double* rot, const double* pos21, const double* pos12,
                              const double* size1, const double* size2, int code,
                              double* poly, double* sgn_out) noexcept nogil:
    # the incident box's face most opposed to the reference face, in the reference face's
    # coordinates (ax, ay, depth below the face); returns the reference axis a
    cdef bint ref1 = code < 3
    cdef int a = code if ref1 else code - 3, binc = 0, k, ax, ay, bu, bv, c, corner
    cdef const double* sizeref = size1 if ref1 else size2
    cdef const double* sizeinc = size2 if ref1 else size1
    cdef const double* posoi = pos21 if ref1 else pos12
    cdef double rinc[9]
    cdef double cx[3]
    cdef double du[3]
    cdef double dv[3]
    cdef double sgn, tinc, su, sv
    cdef int rows[3]
    for k in range(9):
        # incident axes (columns) in the reference frame
        rinc[k] = rot[k] if ref1 else rot[3 * (k % 3) + k // 3]
    sgn = 1.0 if posoi[a] >= 0 else -1.0
    for k in range(1, 3):
        if fabs(rinc[3 * a + k]) > fabs(rinc[3 * a + binc]):
            binc = k
    tinc = -1.0 if sgn * rinc[3 * a + binc] > 0 else 1.0
    ax, ay = (a + 1) % 3, (a + 2) % 3
    bu, bv = (binc + 1) % 3, (binc + 2) % 3
    rows[0], rows[1], rows[2] = ax, ay, a
    for k in range(3):
        c = rows[k]
        cx[k] = posoi[c] + tinc * sizeinc[binc] * rinc[3 * c + binc]
        du[k] = sizeinc[bu] * rinc[3 * c + bu]
        dv[k] = sizeinc[bv] * rinc[3 * c + bv]
    cx[2] = sgn * cx[2] - sizeref[a]
    du[2] *= sgn
    dv[2] *= sgn
    for corner in range(4):
        # corners (1, 1), (−1, 1), (−1, −1), (1, −1) of the incident face
        su = 1.0 if corner == 0 or corner == 3 else -1.0
        sv = 1.0 if corner < 2 else -1.0
        for k in range(3):
            poly[3 * corner + k] = cx[k] + su * du[k] + sv * dv[k]
    sgn_out[0] = sgn
    return a


cdef int _box_box_face(const double* rot, const double* pos21, const double* pos12,
                       const double* size1, const double* size2, int code, double margin,
                       const double* pos1, const double* mat1, const double* pos2,
                       const double* mat2, PairOut* out) noexcept nogil:
    """Incident face clipped by the reference face (mjc_BoxBox, stage 2b)."""
    cdef bint ref1 = code < 3
    cdef const double* sizeref = size1 if ref1 else size2
    cdef const double* posref = pos1 if ref1 else pos2
    cdef const double* matref = mat1 if ref1 else mat2
    cdef double poly[36]
    cdef double other[36]
    cdef double accepted[36]
    cdef double posc[3]
    cdef double pos[3]
    cdef double normal[3]
    cdef double sgn, dupe2
    cdef int a, ax, ay, n, m = 0, k, w, c
    cdef bint dup
    # --- incident face: the face of the other box most opposed to the reference face
    a = incident_face(rot, pos21, pos12, size1, size2, code, poly, &sgn)
    ax, ay = (a + 1) % 3, (a + 2) % 3
    n = _clip_half_plane(poly, 4, 0, 1.0, sizeref[ax], other)
    n = _clip_half_plane(other, n, 0, -1.0, sizeref[ax], poly)
    n = _clip_half_plane(poly, n, 1, 1.0, sizeref[ay], other)
    n = _clip_half_plane(other, n, 1, -1.0, sizeref[ay], poly)
    dupe2 = BOXBOX_DUPEPS * (sizeref[ax] ** 2 + sizeref[ay] ** 2)
    # --- clipped vertices within the margin, duplicates left out
    for k in range(n):
        if poly[3 * k + 2] > margin:
            continue
        dup = False
        for w in range(m):
            if ((accepted[3 * w] - poly[3 * k]) ** 2
                    + (accepted[3 * w + 1] - poly[3 * k + 1]) ** 2 < dupe2):
                dup = True
                break
        if dup:
            continue
        for c in range(3):
            accepted[3 * m + c] = poly[3 * k + c]
        m += 1
    for c in range(3):
        normal[c] = (sgn if ref1 else -sgn) * matref[3 * c + a]
    # --- contacts: midway between the surfaces
    for k in range(m):
        posc[ax], posc[ay] = accepted[3 * k], accepted[3 * k + 1]
        posc[a] = sgn * (sizeref[a] + 0.5 * accepted[3 * k + 2])
        mat3_vec(matref, posc, pos)
        for c in range(3):
            pos[c] = pos[c] + posref[c]
        add_contact(out, accepted[3 * k + 2], pos, normal, ZERO3)
    return m


cdef int c_box_box(const double* pos1, const double* mat1, const double* size1,
                   const double* pos2, const double* mat2, const double* size2,
                   double margin, PairOut* out) noexcept nogil:
    # the axis of largest separation (an edge axis yields to a nearly parallel face
    # within 5 % of its depth), then face clipping or one edge–edge contact
    cdef double rot[9]
    cdef double d[3]
    cdef double pos21[3]
    cdef double pos12[3]
    cdef double axis[3]
    cdef double septol, face_dot
    cdef Axis found
    cdef int k, code
    mat3T_mul(mat1, mat2, rot)
    for k in range(3):
        d[k] = pos2[k] - pos1[k]
    mat3T_vec(mat1, d, pos21)
    for k in range(3):
        d[k] = pos1[k] - pos2[k]
    mat3T_vec(mat2, d, pos12)
    septol = margin + BOXBOX_SEPEPS * ((size1[0] + size1[1] + size1[2])
                                       + (size2[0] + size2[1] + size2[2]))
    if not _box_box_axis(rot, pos21, pos12, size1, size2, septol, &found):
        return 0
    code = found.code
    if code >= 6:
        _edge_axis(rot, code, axis)
        if found.code_face < 3:
            face_dot = fabs(axis[found.code_face])
        else:
            k = found.code_face - 3
            face_dot = fabs(axis[0] * rot[k] + axis[1] * rot[3 + k] + axis[2] * rot[6 + k])
        if face_dot > 0.99 and found.sep_best < (found.sep_face + 0.05 * fabs(found.sep_face)
                                                 + MINVAL):
            code = found.code_face
    if code >= 6:
        return _box_box_edge(rot, pos21, size1, size2, code, septol, pos1, mat1, out)
    return _box_box_face(rot, pos21, pos12, size1, size2, code, margin, pos1, mat1, pos2, mat2,
                         out)


# ----------------------------------------------------------------------------- Python entry points

def sphere_box(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Sphere and box (mjc_SphereBox): ``(dist, pos, frame)``."""
    return run_pair(c_sphere_box, pos1, mat1, size1, pos2, mat2, size2, margin)


def capsule_box(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Capsule and box (mjc_CapsuleBox): ``(dist, pos, frame)``."""
    return run_pair(c_capsule_box, pos1, mat1, size1, pos2, mat2, size2, margin)


def box_box(pos1, mat1, size1, pos2, mat2, size2, margin):
    """Two boxes (mjc_BoxBox): ``(dist, pos, frame)``."""
    return run_pair(c_box_box, pos1, mat1, size1, pos2, mat2, size2, margin)
