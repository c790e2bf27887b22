r"""Narrow-phase collision of boxes with spheres, capsules and boxes, as MuJoCo does it.

The three routines of MuJoCo's ``engine_collision_box.c``, with its inputs and
outputs (see :mod:`rbd.constraints.collision_primitive` for the conventions):

* :func:`sphere_box` — clamp the sphere centre into the box (``mjraw_SphereBox``);
* :func:`capsule_box` — the capsule segment's nearest point to the box by faces
  and edges, then a second point along the segment where it lies flat on a face
  or an edge (``mjraw_CapsuleBox``);
* :func:`box_box` — separating-axis test over the 15 axes, then either the
  incident face clipped against the reference face (Sutherland–Hodgman) or one
  edge–edge contact (``mjc_BoxBox``).
"""

from __future__ import annotations

import numpy as np

from .collision_primitive import MINVAL, PairContacts, normalize, pack

_ZERO = np.zeros(3)


# ----------------------------------------------------------------------------- sphere : box

def _sphere_box(pos1, mat1, size1, pos2, mat2, size2, margin):
    """One contact of a sphere and a box (``mjraw_SphereBox``)."""
    center = mat2.T @ (pos1 - pos2)                   # sphere centre in the box frame
    clamped = np.array([np.clip(center[i], -size2[i], size2[i]) if size2[i] > 0 else center[i]
                        for i in range(3)])
    direction, dist = normalize(clamped - center)
    if dist - size1[0] > margin:
        return []
    if dist <= MINVAL:                                # centre inside: nearest face
        closest = (size2[0] + size2[1] + size2[2]) * 2
        k = 0
        for i in range(6):
            face = abs((1 if i % 2 else -1) * size2[i // 2] - center[i // 2])
            if closest > face:
                closest, k = face, i
        nearest = np.zeros(3)
        nearest[k // 2] = -1.0 if k % 2 else 1.0
        pos = center + nearest * ((size1[0] - closest) / 2)
        normal = mat2 @ nearest
        dist = -closest
    else:
        deepest = center + direction * size1[0]
        pos = 0.5 * clamped + 0.5 * deepest
        normal = mat2 @ direction
    return [(dist - size1[0], mat2 @ pos + pos2, normal, _ZERO)]


def sphere_box(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Sphere (geom 1) and box: MuJoCo's ``mjc_SphereBox``.

    The nearest box point is the sphere centre clamped into the box; a centre
    inside the box takes the nearest face, and its normal points into the box.
    """
    return pack(_sphere_box(pos1, mat1, size1, pos2, mat2, size2, margin))


# ----------------------------------------------------------------------------- capsule : box

def _capsule_box_nearest(pos, halfaxis, radius, halflength, size2, margin):
    """The segment point nearest the box, by faces then edges (first half of ``mjraw_CapsuleBox``).

    Returns ``(cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos)`` in
    MuJoCo's coding: ``cltype`` -3 or -1 when an end of the segment is nearest a
    face, 0..8 when an edge is nearest (``cltype // 3``: where on the segment,
    ``cltype % 3``: where on the edge), -4 when nothing was found.
    """
    bestdist = margin + 2 * (radius + halflength + size2[0] + size2[1] + size2[2])
    cltype, clface, clcorner, cledge = -4, -1, 0, 0
    bestsegmentpos, bestboxpos = 0.0, 0.0
    # --- segment ends: against the faces
    for i in (-1, 1):
        end = pos + halfaxis * i
        clamped = end.copy()
        nclamp, axis_clamped = 0, -1
        for j in range(3):
            if end[j] < -size2[j] or end[j] > size2[j]:
                nclamp += 1
                axis_clamped = j
                clamped[j] = np.clip(end[j], -size2[j], size2[j])
        if nclamp > 1:
            continue
        dist = (clamped - end) @ (clamped - end)
        if dist < bestdist:
            bestdist, bestsegmentpos, cltype, clface = dist, float(i), -2 + i, axis_clamped
    # --- box edges: the twelve against the segment
    for j in range(3):
        for i in range(8):
            if i & (1 << j):
                continue
            start = np.array([size2[k] if i & (1 << k) else -size2[k] for k in range(3)])
            start[j] = 0.0
            dif = start - pos
            ma = size2[j] * size2[j]
            mb = -size2[j] * halfaxis[j]
            mc = halflength * halflength
            u = -size2[j] * dif[j]
            v = halfaxis @ dif
            det = ma * mc - mb * mb
            if abs(det) < MINVAL:
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
                x2, s2 = (1.0, 2) if x2 > 1 else (-1.0, 0)
                x1 = (u - mb) * (1 / ma) if x2 > 0 else (u + mb) * (1 / ma)
                if x1 > 1:
                    x1, s1 = 1.0, 2
                elif x1 < -1:
                    x1, s1 = -1.0, 0
            gap = start - pos - halfaxis * x2
            gap[j] += size2[j] * x1
            dist = gap @ gap
            code = s1 * 3 + s2
            if dist < bestdist - MINVAL:
                bestdist, bestsegmentpos, bestboxpos = dist, x2, x1
                clcorner = i + (1 << j) * (code // 6)
                cledge, cltype = j, code
    return cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos


def _capsule_box_second(pos, axis, halfaxis, size2, nearest):
    """Where along the segment a second contact goes, or None (second half of ``mjraw_CapsuleBox``).

    The segment coordinate (-1..1 from the first point's) of the farthest point
    still over the box face or edge the capsule lies along.
    """
    cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos = nearest
    axisdir = (halfaxis[0] > 0) + 2 * (halfaxis[1] > 0) + 4 * (halfaxis[2] > 0)
    if cltype >= 0 and cltype // 3 != 1:              # a box corner is nearest
        c1 = axisdir ^ clcorner
        if c1 in (0, 7):                              # pointing at or away from the corner
            return None
        if c1 in (1, 2, 4):
            mul, de, dp = 1, 1 - bestsegmentpos, 1 + bestsegmentpos
        else:
            mul, c1 = -1, 7 - c1
            dp, de = 1 - bestsegmentpos, 1 + bestsegmentpos
        ax, ax1, ax2 = {1: (0, 1, 2), 2: (1, 2, 0), 4: (2, 0, 1)}[c1]
        if axis[ax] * axis[ax] > 0.5:                 # along the edge
            return min(de, 2 * size2[ax] / abs(halfaxis[ax])) * mul
        second = min(dp, 2 * size2[ax1] / abs(halfaxis[ax1]), 2 * size2[ax2] / abs(halfaxis[ax2]))
        return second * -mul                          # across a face
    if cltype >= 0:                                   # the middle of an edge is nearest
        c1 = (axisdir ^ clcorner) & (7 - (1 << cledge))
        if c1 not in (1, 2, 4):                       # T configuration: one contact
            return None
        ax = cledge
        ax1, ax2 = {0: (1, 2), 1: (2, 0), 2: (0, 1)}[cledge]
        if abs(axis[ax1]) > abs(axis[ax2]):
            ax1 = ax2
        ax2 = 3 - ax - ax1
        if c1 & (1 << ax2):
            mul, second = 1, 1 - bestsegmentpos
        else:
            mul, second = -1, 1 + bestsegmentpos
        second = min(second, 2 * size2[ax2] / abs(halfaxis[ax2]))
        same = ((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0)
        e2 = 1 - bestboxpos if same else 1 + bestboxpos
        return min(second, size2[ax] * e2 / abs(halfaxis[ax])) * mul
    if clface == -1:                                  # an end inside the box: one contact
        return None
    mul = 1 if cltype == -3 else -1                   # an end over a face
    second = 2.0
    other = pos - halfaxis * mul
    for i in range(3):
        if i == clface:
            continue
        for bound in (size2[i], -size2[i]):
            e1 = (bound - other[i]) / halfaxis[i] * mul
            if 0 < e1 < second:
                second = e1
    return second * mul


def capsule_box(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Capsule (geom 1) and box: MuJoCo's ``mjc_CapsuleBox``.

    In the box frame, the segment point nearest the box is found among the
    segment's ends against the faces and the segment against the twelve edges;
    a sphere there is collided with the box (:func:`sphere_box`).  Where the
    capsule lies along a face or an edge, a second sphere at the farthest point
    of the segment still over that face or edge gives a second contact.
    """
    pos = mat2.T @ (pos1 - pos2)                      # capsule centre and axis, box frame
    axis = mat2.T @ mat1[:, 2]
    halfaxis = axis * size1[1]
    nearest = _capsule_box_nearest(pos, halfaxis, size1[0], size1[1], size2, margin)
    if nearest[0] == -4:
        return pack([])
    with np.errstate(divide="ignore", invalid="ignore"):   # an axis along a box axis: 1/0
        second = _capsule_box_second(pos, axis, halfaxis, size2, nearest)
    bestsegmentpos = nearest[4]
    center = mat2 @ (pos + halfaxis * bestsegmentpos) + pos2
    contacts = _sphere_box(center, mat1, size1, pos2, mat2, size2, margin)
    if second is not None:
        center = mat2 @ (pos + halfaxis * (second + bestsegmentpos)) + pos2
        contacts += _sphere_box(center, mat1, size1, pos2, mat2, size2, margin)
    return pack(contacts)


# ----------------------------------------------------------------------------- box : box

#: MuJoCo's rounding allowances in ``mjc_BoxBox`` (double precision).
BOXBOX_SEPEPS = 1e-13     # slack of the separation tests, times the summed half-sizes
BOXBOX_PAREPS = 1e-16     # squared sine below which an edge-cross axis is noise
BOXBOX_SGNEPS = 1e-9      # axis component below which a support corner is ambiguous
BOXBOX_DUPEPS = 1e-14     # squared relative radius of duplicate clipped vertices
BOXBOX_EDGEBIAS = 1e-6    # relative handicap of an edge axis against a face axis


def _box_box_axis(rot, pos21, pos12, size1, size2, septol):
    """Separating-axis test: ``(code, code_face, sep_best, sep_face)`` or None if separated.

    ``code`` 0..2: face of box 1; 3..5: face of box 2; 6 + 3 i + j: edge i of
    box 1 × edge j of box 2 (``mjc_BoxBox``, stage 1).
    """
    rotabs = np.abs(rot)
    sep_best, code = -np.inf, -1
    # --- faces of box 1
    for i in range(3):
        sep = abs(pos21[i]) - size1[i] - rotabs[i] @ size2
        if sep > septol:
            return None
        if sep > sep_best:
            sep_best, code = sep, i
    # --- faces of box 2
    for j in range(3):
        sep = abs(pos12[j]) - size2[j] - rotabs[:, j] @ size1
        if sep > septol:
            return None
        if sep > sep_best:
            sep_best, code = sep, 3 + j
    sep_face, code_face = sep_best, code
    # --- edge cross products
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            ax1, ax2 = -rot[i2, j], rot[i1, j]          # e_i × (axis j of box 2), box-1 frame
            norm2 = ax1 * ax1 + ax2 * ax2
            if norm2 < BOXBOX_PAREPS:
                continue
            inv = 1 / np.sqrt(norm2)
            ax1, ax2 = ax1 * inv, ax2 * inv
            radius1 = size1[i1] * abs(ax1) + size1[i2] * abs(ax2)
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            a2_1 = ax1 * rot[i1, j1] + ax2 * rot[i2, j1]
            a2_2 = ax1 * rot[i1, j2] + ax2 * rot[i2, j2]
            radius2 = size2[j1] * abs(a2_1) + size2[j2] * abs(a2_2)
            sep = abs(ax1 * pos21[i1] + ax2 * pos21[i2]) - radius1 - radius2
            if sep > septol:
                return None
            if sep - BOXBOX_EDGEBIAS * abs(sep) > sep_best and sep > sep_face:
                sep_best, code = sep, 6 + 3 * i + j
    return code, code_face, sep_best, sep_face


def _edge_axis(rot, code):
    """Unit cross-product axis of edge code ``code`` in the box-1 frame."""
    i, j = divmod(code - 6, 3)
    axis = np.zeros(3)
    axis[(i + 1) % 3] = -rot[(i + 2) % 3, j]
    axis[(i + 2) % 3] = rot[(i + 1) % 3, j]
    return normalize(axis)[0]


def _box_box_edge(rot, pos21, size1, size2, code, septol, pos1, mat1):
    """One edge–edge contact at the middle of the closest points (``mjc_BoxBox``, stage 2a)."""
    i, j = divmod(code - 6, 3)
    i1, i2 = (i + 1) % 3, (i + 2) % 3
    j1, j2 = (j + 1) % 3, (j + 2) % 3
    axis = _edge_axis(rot, code)
    if axis @ pos21 < 0:
        axis = -axis
    a2 = axis @ rot                                   # the axis in box-2 coordinates
    amb1 = i1 if abs(axis[i1]) < BOXBOX_SGNEPS else (i2 if abs(axis[i2]) < BOXBOX_SGNEPS else -1)
    amb2 = j1 if abs(a2[j1]) < BOXBOX_SGNEPS else (j2 if abs(a2[j2]) < BOXBOX_SGNEPS else -1)
    d2 = rot[:, j]
    b = d2[i]
    denom = 1 - b * b
    best, w1, w2 = np.inf, None, None
    for v1 in range(2 if amb1 >= 0 else 1):
        for v2 in range(2 if amb2 >= 0 else 1):
            c1 = np.zeros(3)
            c1[i1] = size1[i1] if axis[i1] >= 0 else -size1[i1]
            c1[i2] = size1[i2] if axis[i2] >= 0 else -size1[i2]
            if amb1 >= 0 and v1:
                c1[amb1] = -c1[amb1]
            cc = np.zeros(3)
            cc[j1] = -size2[j1] if a2[j1] >= 0 else size2[j1]
            cc[j2] = -size2[j2] if a2[j2] >= 0 else size2[j2]
            if amb2 >= 0 and v2:
                cc[amb2] = -cc[amb2]
            c2 = rot @ cc + pos21
            e = c2 - c1
            d1e, d2e = e[i], d2 @ e
            s = 0.0 if denom < MINVAL else (d1e - b * d2e) / denom
            s = np.clip(s, -size1[i], size1[i])
            t = np.clip(b * s - d2e, -size2[j], size2[j])
            s = np.clip(d1e + b * t, -size1[i], size1[i])
            p1 = c1.copy()
            p1[i] += s
            p2 = c2 + d2 * t
            gap2 = (p2 - p1) @ (p2 - p1)
            if gap2 < best:
                best, w1, w2 = gap2, p1, p2
    dist = (w2 - w1) @ axis
    if dist > septol:
        return []
    mid = 0.5 * (w1 + w2)
    return [(dist, mat1 @ mid + pos1, mat1 @ axis, _ZERO)]


def _clip_half_plane(poly, coord, sign, limit):
    """Sutherland–Hodgman step: keep ``sign * v[coord] <= limit`` (``clipHalfPlane``)."""
    d = [sign * p[coord] - limit for p in poly]
    if all(dk <= 0 for dk in d):
        return poly
    out = []
    n = len(poly)
    for k in range(n):
        k1 = 0 if k + 1 == n else k + 1
        dp, dq = d[k], d[k1]
        if dp <= 0 and len(out) < 12:
            out.append(poly[k])
        if ((dp < 0 < dq) or (dq < 0 < dp)) and len(out) < 12:
            t = dp / (dp - dq)
            out.append(poly[k] + t * (poly[k1] - poly[k]))
    return out


def _box_box_face(rot, pos21, pos12, size1, size2, code, margin, pos1, mat1, pos2, mat2):
    """Incident face clipped by the reference face (``mjc_BoxBox``, stage 2b)."""
    ref1 = code < 3
    a = code if ref1 else code - 3
    sizeref, sizeinc = (size1, size2) if ref1 else (size2, size1)
    posref, matref = (pos1, mat1) if ref1 else (pos2, mat2)
    posoi = pos21 if ref1 else pos12                  # incident centre, reference frame
    rinc = rot if ref1 else rot.T                     # incident axes (columns), reference frame
    # --- incident face: the face of the other box most opposed to the reference face
    sgn = 1.0 if posoi[a] >= 0 else -1.0
    binc = 0
    for k in (1, 2):
        if abs(rinc[a, k]) > abs(rinc[a, binc]):
            binc = k
    tinc = -1.0 if sgn * rinc[a, binc] > 0 else 1.0
    ax, ay = (a + 1) % 3, (a + 2) % 3
    bu, bv = (binc + 1) % 3, (binc + 2) % 3
    rows = (ax, ay, a)
    cx = np.array([posoi[c] + tinc * sizeinc[binc] * rinc[c, binc] for c in rows])
    du = np.array([sizeinc[bu] * rinc[c, bu] for c in rows])
    dv = np.array([sizeinc[bv] * rinc[c, bv] for c in rows])
    cx[2] = sgn * cx[2] - sizeref[a]
    du[2] *= sgn
    dv[2] *= sgn
    poly = [cx + su * du + sv * dv for su, sv in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    poly = _clip_half_plane(poly, 0, 1, sizeref[ax])
    poly = _clip_half_plane(poly, 0, -1, sizeref[ax])
    poly = _clip_half_plane(poly, 1, 1, sizeref[ay])
    poly = _clip_half_plane(poly, 1, -1, sizeref[ay])
    dupe2 = BOXBOX_DUPEPS * (sizeref[ax] ** 2 + sizeref[ay] ** 2)
    # --- clipped vertices within the margin, duplicates left out
    accepted = []
    for v in poly:
        if v[2] > margin:
            continue
        if any((w[0] - v[0]) ** 2 + (w[1] - v[1]) ** 2 < dupe2 for w in accepted):
            continue
        accepted.append(v)
    normal = (sgn if ref1 else -sgn) * matref[:, a]
    # --- contacts: midway between the surfaces
    contacts = []
    for v in accepted:
        posc = np.zeros(3)
        posc[ax], posc[ay] = v[0], v[1]
        posc[a] = sgn * (sizeref[a] + 0.5 * v[2])
        contacts.append((v[2], matref @ posc + posref, normal, _ZERO))
    return contacts


def box_box(pos1, mat1, size1, pos2, mat2, size2, margin) -> PairContacts:
    """Two boxes: MuJoCo's ``mjc_BoxBox``.

    Stage 1 finds the axis of largest separation among the three face normals
    of each box and the nine edge cross products (an edge axis must beat the
    faces by a small relative bias, and yields to a nearly parallel face axis
    within 5 % of its depth).  Stage 2: for a face axis, the incident box's face
    most opposed to the reference face is clipped against the reference face's
    sides and every vertex within ``margin`` becomes a contact, midway between
    the surfaces; for an edge axis, one contact at the middle of the two
    edges' closest points.
    """
    rot = mat1.T @ mat2                               # box-2 axes in the box-1 frame
    pos21 = mat1.T @ (pos2 - pos1)                    # box-2 centre in the box-1 frame
    pos12 = mat2.T @ (pos1 - pos2)
    septol = margin + BOXBOX_SEPEPS * (np.sum(size1[:3]) + np.sum(size2[:3]))
    found = _box_box_axis(rot, pos21, pos12, size1, size2, septol)
    if found is None:
        return pack([])
    code, code_face, sep_best, sep_face = found
    if code >= 6:                                     # a nearly parallel face takes over
        axis = _edge_axis(rot, code)
        if code_face < 3:
            face_dot = abs(axis[code_face])
        else:
            face_dot = abs(axis @ rot[:, code_face - 3])
        if face_dot > 0.99 and sep_best < sep_face + 0.05 * abs(sep_face) + MINVAL:
            code = code_face
    if code >= 6:
        return pack(_box_box_edge(rot, pos21, size1, size2, code, septol, pos1, mat1))
    return pack(_box_box_face(rot, pos21, pos12, size1, size2, code, margin,
                              pos1, mat1, pos2, mat2))
