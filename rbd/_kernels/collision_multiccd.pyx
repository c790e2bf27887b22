# cython: language_level=3
"""Several contacts of a face against a face or a capsule's side, compiled: MuJoCo 4.0's
multi-CCD.

The compiled twin of ``rbd/constraints/collision_multiccd.py`` (its notes say what is
reproduced of MuJoCo 4.0 and how): the distance from GJK on the cores and bare shapes
(a capsule's segment; with a margin every geom unshrunk by it), grown back while apart,
else EPA on the whole geoms (``penetration``); the features of each geom at GJK's final
simplex or EPA's closest face, a cylinder's by the cap its corners lie on
(``features``); the faces holding them (``normals``: a box's or a hull's from
``collision_multi.pyx``, a cylinder's cap); aligned faces clipped against each other (a
cylinder's cap as a 16-gon, ``cylinder_face``), else an edge in a face (a cylinder's side
line, ``cylinder_edges``; a capsule's surface line, ``capsule_edges``), clipped with the
two half margins (``clip``).  A cap clipped to more than four points is clipped the
other way, MuJoCo's (``cap_clip``; on a tie of the rotating search, the four its own
rounding gives, as the reference).  The growing lists (clipped polygons, a hull's faces at a
vertex) live in scratch memory of one call; where it cannot be had the one contact of
``penetration`` stands.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport cos, sin, sqrt
from libc.stdlib cimport free, malloc

from rbd._kernels._spatial cimport cross3, dot3
from rbd._kernels.collision_epa cimport penetration_face
from rbd._kernels.collision_gjk cimport (CCD_ELLIPSOID, CCD_LINE, CCD_POINT, CCD_SPHERE,
                                         GJKStatus, Vertex, geom_init, gjk, status_init)
from rbd._kernels.collision_multi cimport (MAX_CONTACTS, Edges, Normals, _place,
                                           aligned_face_edge, aligned_faces, clip_to_face,
                                           clipped_face, clipping_face, face, face_normals,
                                           feature_edges, polygon_quad, simplex_dim)
from rbd._kernels.collision_primitive cimport PairOut, add_contact, as_doubles, normalize, pack

cnp.import_array()

#: MuJoCo's ccd_tolerance default; mjMAX_LIMIT; mjMINVAL
cdef double TOLERANCE = 1e-6
cdef double MAX_LIMIT = 1.7976931348623157e308
cdef double MINVAL = 1e-15
#: a cylinder's cap is clipped as this regular polygon (MuJoCo 4.0's _cylinder_face)
DEF CYLINDER_SIDES = 16
cdef double PI = 3.141592653589793
#: a zero tangent: make_frame picks one
cdef double ZERO3[3]
#: kind codes of the primitives (contacts' Python entry point)
KIND_CODES = {"sphere": CCD_SPHERE, "capsule": CCD_CAPSULE, "ellipsoid": CCD_ELLIPSOID,
              "cylinder": CCD_CYLINDER, "box": CCD_BOX}


# ----------------------------------------------------------------------------- 1. distance

cdef inline ConvexGeom* _core(ConvexGeom* g, ConvexGeom* core, double margin,
                              double* full) noexcept nogil:
    # the shape GJK measures: a sphere's centre or a capsule's segment (full: its radius and
    # half the margin), with a margin the bare geom (a copy without margin, its support
    # search fresh; full: half the margin), else the geom itself (the same record)
    if g.kind == CCD_SPHERE or g.kind == CCD_CAPSULE:
        geom_init(core, CCD_POINT if g.kind == CCD_SPHERE else CCD_LINE, g.pos, g.mat,
                  g.size, 0.0)
        full[0] = g.size[0] + 0.5 * margin
        return core
    if margin > 0:
        core[0] = g[0]
        core.margin, core.vertindex = 0.0, -1
        full[0] = 0.5 * margin
        return core
    full[0] = 0.0
    return g


cdef int penetration(ConvexGeom* g1, ConvexGeom* g2, double margin, double* dist,
                     double* x1, double* x2, Vertex* corners) noexcept nogil:
    """``penetration``: 0 when apart; else the distance less the margin, the witness
    points and, returning 1, the three corners of GJK's simplex or EPA's closest face (2:
    GJK's simplex is empty, no corners)."""
    cdef ConvexGeom c1, c2
    cdef ConvexGeom* core1
    cdef ConvexGeom* core2
    cdef GJKStatus status
    cdef double n[3]
    cdef double full1, full2
    cdef int k
    core1, core2 = _core(g1, &c1, margin, &full1), _core(g2, &c2, margin, &full2)
    if full1 + full2 > 0:
        status_init(&status, core1, core2, full1 + full2)
        gjk(&status, core1, core2)
        if status.dist > TOLERANCE:
            # shallow: grow back
            if status.dist == MAX_LIMIT:
                return 0
            for k in range(3):
                n[k] = status.x2[k] - status.x1[k]
            normalize(n)
            dist[0] = status.dist - (full1 + full2)
            if not dist[0] < 0:
                return 0
            for k in range(3):
                x1[k] = status.x1[k] + full1 * n[k]
                x2[k] = status.x2[k] - full2 * n[k]
            if status.nsimplex == 0:
                return 2
            for k in range(3):
                corners[k] = status.simplex[min(k, status.nsimplex - 1)]
            return 1
    # deep: EPA on the whole geoms
    status_init(&status, g1, g2, 0.0)
    gjk(&status, g1, g2)
    if status.dist <= TOLERANCE and status.nsimplex > 1 and not status.separated:
        if penetration_face(status.simplex, status.nsimplex, g1, g2, dist, x1, x2, corners) \
                and dist[0] < 0:
            return 1
    return 0


# ----------------------------------------------------------------------------- 2. features

cdef inline void _column(const ConvexGeom* g, int c, double* out) noexcept nogil:
    # geom axis c (g.mat[:, c])
    out[0], out[1], out[2] = g.mat[c], g.mat[3 + c], g.mat[6 + c]


cdef int cylinder_index(const ConvexGeom* g, const double* point) noexcept nogil:
    """The cap a cylinder's support point lies on: 0 the top (+z), 1 the bottom."""
    cdef double axis[3]
    cdef double rel[3]
    cdef int k
    _column(g, 2, axis)
    for k in range(3):
        rel[k] = point[k] - g.pos[k]
    return 0 if dot3(axis, rel) >= 0 else 1


cdef void features(const ConvexGeom* g, const Vertex* corners, int side, Py_ssize_t* indices,
                   double* points) noexcept nogil:
    """Support indices and points (three rows) of one geom (``side`` 0 or 1) at the three
    corners."""
    cdef int c, k
    for c in range(3):
        for k in range(3):
            points[3 * c + k] = corners[c].w2[k] if side else corners[c].w1[k]
        if g.kind == CCD_CYLINDER:
            indices[c] = cylinder_index(g, points + 3 * c)
        elif g.kind == CCD_CAPSULE:
            indices[c] = -1
        else:
            indices[c] = corners[c].index2 if side else corners[c].index1


cdef void normals(const ConvexGeom* g, int dim, const Py_ssize_t* indices,
                  const double* direction, Normals* out) noexcept nogil:
    """World normals and indices of the faces holding a feature: a box's or a hull's
    (``face_normals``), a cylinder's cap when all three corners are on it; a capsule has
    none."""
    cdef int k
    out.n = 0
    if g.kind == CCD_BOX or g.kind == CCD_MESH:
        face_normals(g, dim, indices, direction, out)
    elif g.kind == CCD_CYLINDER and dim == 1:
        _column(g, 2, out.normal)
        for k in range(3):
            out.normal[k] = out.normal[k] * (-1.0 if indices[0] else 1.0)
        out.index[0], out.n = indices[0], 1


cdef void cylinder_edges(const ConvexGeom* g, int dim, const double* points,
                         Py_ssize_t index, double margin, Edges* out,
                         double* start) noexcept nogil:
    """The cylinder's side line at a corner (``_cylinder_edge_normals``): unit direction
    from the corner's cap to the other, its far end, and its start (with a margin, the
    corner moved onto the rim of its cap); none unless the feature is a vertex or an
    edge."""
    cdef double sign = 1.0 if index else -1.0
    cdef double axis[3]
    cdef double rel[3]
    cdef double local[3]
    cdef double x, y, n2, scale
    cdef int k
    out.n = 0
    if dim != 1 and dim != 2:
        return
    for k in range(3):
        start[k] = points[k]
    if margin > 0:
        for k in range(3):
            rel[k] = start[k] - g.pos[k]
        _column(g, 0, axis)
        x = dot3(axis, rel)
        _column(g, 1, axis)
        y = dot3(axis, rel)
        n2 = x * x + y * y
        scale = g.size[0] / sqrt(n2) if n2 >= MINVAL * MINVAL else 0.0
        local[0], local[1], local[2] = scale * x, scale * y, -sign * g.size[1]
        _place(g, local, start)
    _column(g, 2, axis)
    for k in range(3):
        out.direction[k] = axis[k] * sign
        out.end[k] = start[k] + out.direction[k] * (2 * g.size[1])
    out.n = 1


cdef void capsule_edges(const ConvexGeom* g, const double* witness, Edges* out,
                        double* start) noexcept nogil:
    """The capsule's surface line through its witness point, end to end
    (``_capsule_edge_normals``): its direction, far end and start."""
    cdef double axis[3]
    cdef double rel[3]
    cdef double along
    cdef int k
    _column(g, 2, axis)
    for k in range(3):
        rel[k] = witness[k] - g.pos[k]
    along = dot3(rel, axis)
    for k in range(3):
        out.direction[k] = axis[k]
        out.end[k] = witness[k] + axis[k] * (g.size[1] - along)
        start[k] = witness[k] - axis[k] * (along + g.size[1])
    out.n = 1


cdef void edges(const ConvexGeom* g, int dim, const double* points,
                const Py_ssize_t* indices, const double* witness, double margin, Edges* out,
                double* start) noexcept nogil:
    """Unit directions, far ends and the start of the edges of a feature, by kind."""
    cdef int k
    if g.kind == CCD_BOX or g.kind == CCD_MESH:
        feature_edges(g, dim, points, indices[0], out)
        for k in range(3):
            start[k] = points[k]
    elif g.kind == CCD_CYLINDER:
        cylinder_edges(g, dim, points, indices[0], margin, out, start)
    else:
        capsule_edges(g, witness, out, start)


cdef int cylinder_face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil:
    """A cylinder's cap as a regular 16-gon, counter-clockwise seen from outside (the
    corners of MuJoCo 4.0's ``_cylinder_face`` in reverse order), into ``out``; 16."""
    cdef double sign = -1.0 if index else 1.0
    cdef double centre[3]
    cdef double x[3]
    cdef double y[3]
    cdef double a
    cdef int i, k
    _column(g, 2, centre)
    _column(g, 0, x)
    _column(g, 1, y)
    for k in range(3):
        centre[k] = centre[k] * (sign * g.size[1]) + g.pos[k]
        x[k] = x[k] * g.size[0]
        y[k] = y[k] * (g.size[0] * sign)
    for i in range(CYLINDER_SIDES):
        a = i * (2 * PI / CYLINDER_SIDES)
        for k in range(3):
            out[3 * (CYLINDER_SIDES - 1 - i) + k] = x[k] * cos(a) - y[k] * sin(a) + centre[k]
    return CYLINDER_SIDES


cdef inline int _face_size(const ConvexGeom* g, Py_ssize_t index) noexcept nogil:
    # corners of a face: a cylinder's 16-gon, a box's 4, a hull polygon's count
    if g.kind == CCD_CYLINDER:
        return CYLINDER_SIDES
    if g.kind == CCD_BOX:
        return 4
    return <int>(g.hull.poly_start[index + 1] - g.hull.poly_start[index])


cdef int flat_face(const ConvexGeom* g, Py_ssize_t index, bint clipping, bint after_box,
                   double* out) noexcept nogil:
    """A face clipped flat on another, counter-clockwise seen from outside, from the corner
    MuJoCo 4.0 starts at where that is known (``clipped_face`` for geom 1,
    ``clipping_face`` for geom 2's hull), into ``out``; its corner count."""
    if g.kind == CCD_CYLINDER:
        return cylinder_face(g, index, out)
    if g.kind == CCD_BOX or not clipping:
        return clipped_face(g, index, out)
    return clipping_face(g, index, after_box, out)


cdef int edge_face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil:
    """A face an edge is clipped against, clockwise seen from outside (``face``, a
    cylinder's cap reversed), into ``out``; its corner count."""
    cdef double ccw[3 * CYLINDER_SIDES]
    cdef int i, k
    if g.kind != CCD_CYLINDER:
        return face(g, index, out)
    cylinder_face(g, index, ccw)
    for i in range(CYLINDER_SIDES):
        for k in range(3):
            out[3 * i + k] = ccw[3 * (CYLINDER_SIDES - 1 - i) + k]
    return CYLINDER_SIDES


# ----------------------------------------------------------------------------- 4. clipping

cdef inline void _farthest_pair(const double* points, int count, int* best) noexcept nogil:
    # the two points farthest apart (the first such pair)
    cdef double diff[3]
    cdef double d = -1.0, dd
    cdef int i, j, k
    for i in range(count):
        for j in range(i + 1, count):
            for k in range(3):
                diff[k] = points[3 * j + k] - points[3 * i + k]
            dd = dot3(diff, diff)
            if dd > d:
                best[0], best[1], d = i, j, dd


cdef inline int _four_of(const double* points, int count, int* chosen) noexcept nogil:
    # the indices of the points kept into chosen, and their number: all of up to four, else
    # polygon_quad's four
    cdef int i
    if count > MAX_CONTACTS:
        polygon_quad(points, count, chosen)
        return 4
    for i in range(count):
        chosen[i] = i
    return count


cdef int clip(const double* clipping, int nclip, const double* polygon, int npoly,
              const double* n, double margin, const double* side, bint reduce, double* dist,
              double* on_face, double* point) noexcept nogil:
    """Witness pairs of the part of ``polygon`` (a face, or an edge of two points) inside
    the prism over the face ``clipping`` (outward normal ``n``, walls perpendicular to
    ``side``) and at most ``margin`` above it (``_polygon_clip``): their number (at most
    MAX_CONTACTS), signed heights in ``dist``, projections on the face in ``on_face``, the
    points in ``point``.  An edge keeps its two farthest points; more than four points of a
    face become ``polygon_quad``'s four, or -1 when ``reduce`` is False (a cylinder's cap:
    ``cap_clip``)."""
    cdef double* points = NULL
    cdef double above[3]
    cdef int chosen[MAX_CONTACTS]
    cdef int count, m, i, k
    if nclip < 3:
        return 0
    # --- walls: the polygon cut by the prism's walls, one at a time (Sutherland–Hodgman)
    count = clip_to_face(clipping, nclip, polygon, npoly, n, side, margin, &points)
    if count <= 0:
        free(points)
        return 0
    m = count
    if npoly == 2 and count > 2:
        _farthest_pair(points, count, chosen)
        m = 2
    elif count > MAX_CONTACTS and not reduce:
        free(points)
        return -1
    else:
        m = _four_of(points, count, chosen)
    # --- witnesses: each point's height above the face and its projection on it
    for i in range(m):
        for k in range(3):
            point[3 * i + k] = points[3 * chosen[i] + k]
            above[k] = point[3 * i + k] - clipping[k]
        dist[i] = dot3(above, n)
        for k in range(3):
            on_face[3 * i + k] = point[3 * i + k] - dist[i] * n[k]
    free(points)
    return m


cdef int cap_clip(const double* face1, int nface1, const double* face2, int nface2,
                  const double* n1, const double* n2, double margin, double* dist,
                  double* x1, double* x2) noexcept nogil:
    """Witness pairs of two faces, one a cylinder's cap, clipped as MuJoCo 4.0 does when
    they give more than four points (the reference's ``cap_clip``): geom 1's face cuts geom
    2's, the points reduced by ``polygon_quad``, each projected on geom 1's face (``x1``)
    and its distance measured along ``n2`` back to ``x2``; their number."""
    cdef double* points = NULL
    cdef double diff[3]
    cdef int chosen[MAX_CONTACTS]
    cdef int count, m, i, k
    cdef double h
    count = clip_to_face(face1, nface1, face2, nface2, n1, n1, margin, &points)
    if count <= 0:
        free(points)
        return 0
    m = _four_of(points, count, chosen)
    for i in range(m):
        for k in range(3):
            diff[k] = points[3 * chosen[i] + k] - face1[k]
        h = dot3(diff, n1)
        for k in range(3):
            x1[3 * i + k] = points[3 * chosen[i] + k] - h * n1[k]
            diff[k] = x1[3 * i + k] - points[3 * chosen[i] + k]
        dist[i] = dot3(diff, n2)
        for k in range(3):
            x2[3 * i + k] = x1[3 * i + k] - dist[i] * n2[k]
    free(points)
    return m


cdef inline void _grown(int found, double half1, double half2, const double* normal,
                        double* dist, double* x1, double* x2) noexcept nogil:
    # witness pairs moved out by the geoms' half margins along normal (geom 1 to geom 2)
    cdef int c, k
    for c in range(found):
        dist[c] = dist[c] - (half1 + half2)
        for k in range(3):
            x1[3 * c + k] = x1[3 * c + k] + half1 * normal[k]
            x2[3 * c + k] = x2[3 * c + k] - half2 * normal[k]


# ----------------------------------------------------------------------------- 3. alignment

cdef inline int _face_on_face(ConvexGeom* g1, ConvexGeom* g2, const Normals* n1, const Normals* n2,
                       int i, int j, double half, double* dist, double* w1,
                       double* w2) noexcept nogil:
    # geom 1's face clipped to the prism over geom 2's (witnesses: w2 on geom 2's face)
    # (a cylinder's cap clipped to more than four points: geom 2's face cut by geom 1's,
    # cap_clip)
    cdef double* clipping = <double*>malloc(3 * _face_size(g2, n2.index[j]) * sizeof(double))
    cdef double* clipped = <double*>malloc(3 * _face_size(g1, n1.index[i]) * sizeof(double))
    cdef int nclip, npoly, found = 0
    if clipping != NULL and clipped != NULL:
        nclip = flat_face(g2, n2.index[j], True, g1.kind == CCD_BOX, clipping)
        npoly = flat_face(g1, n1.index[i], False, False, clipped)
        found = clip(clipping, nclip, clipped, npoly, n2.normal + 3 * j, half,
                     n1.normal + 3 * i, g1.kind != CCD_CYLINDER and g2.kind != CCD_CYLINDER,
                     dist, w2, w1)
        if found < 0:
            nclip = edge_face(g1, n1.index[i], clipped)
            npoly = edge_face(g2, n2.index[j], clipping)
            found = cap_clip(clipped, nclip, clipping, npoly, n1.normal + 3 * i,
                             n2.normal + 3 * j, half, dist, w1, w2)
    free(clipping)
    free(clipped)
    return found


cdef inline int _edge_on_face(ConvexGeom* g, const Normals* normals, int j, const double* start,
                       const double* end, double half, double* dist, double* on_face,
                       double* point) noexcept nogil:
    # the edge (start, end) clipped to the prism over face j of g
    cdef double edge[6]
    cdef double* clipping = <double*>malloc(3 * _face_size(g, normals.index[j])
                                            * sizeof(double))
    cdef int k, nclip, found = 0
    if clipping != NULL:
        for k in range(3):
            edge[k], edge[3 + k] = start[k], end[k]
        nclip = edge_face(g, normals.index[j], clipping)
        found = clip(clipping, nclip, edge, 2, normals.normal + 3 * j, half,
                     normals.normal + 3 * j, True, dist, on_face, point)
    free(clipping)
    return found


cdef inline int _capacity(const ConvexGeom* g, Py_ssize_t index) noexcept nogil:
    # room for the faces or edges at a feature: 3, or the polygons at a mesh vertex
    if g.kind != CCD_MESH or index < 0:
        return 3
    return <int>max(3, g.hull.vpoly_start[index + 1] - g.hull.vpoly_start[index])


cdef inline int _aligned(ConvexGeom* g1, ConvexGeom* g2, int dim1, int dim2, const double* pts1,
                  const double* pts2, const Py_ssize_t* idx1, const Py_ssize_t* idx2,
                  const double* x1, const double* x2, double margin, const Normals* n1,
                  const Normals* n2, Edges* found_edges, double* dist, double* w1,
                  double* w2, double* grow) noexcept nogil:
    # multicontact's three cases once the faces are known: face on face, an edge of geom 1
    # in a face of geom 2, an edge of geom 2 in a face of geom 1 (witnesses not yet grown;
    # the normal from geom 1 to geom 2 they grow along into grow)
    cdef double half = (0.0 if g1.kind == CCD_CAPSULE else 0.5 * margin) + (
        0.0 if g2.kind == CCD_CAPSULE else 0.5 * margin)
    cdef double start[3]
    cdef int i, j, k
    if aligned_faces(n1, n2, &i, &j):
        for k in range(3):
            grow[k] = -n2.normal[3 * j + k]
        return _face_on_face(g1, g2, n1, n2, i, j, half, dist, w1, w2)
    if dim1 < 3 and n2.n and (dim1 <= dim2 or not n1.n):
        edges(g1, dim1, pts1, idx1, x1, margin, found_edges, start)
        if aligned_face_edge(found_edges, n2, &i, &j):
            for k in range(3):
                grow[k] = -n2.normal[3 * j + k]
            return _edge_on_face(g2, n2, j, start, found_edges.end + 3 * i, half, dist, w2,
                                 w1)
    if dim2 < 3:
        edges(g2, dim2, pts2, idx2, x2, margin, found_edges, start)
        if aligned_face_edge(found_edges, n1, &i, &j):
            for k in range(3):
                grow[k] = n1.normal[3 * j + k]
            return _edge_on_face(g1, n1, j, start, found_edges.end + 3 * i, half, dist, w1,
                                 w2)
    return 0


cdef int multicontact(const Vertex* corners, const double* x1, const double* x2,
                      ConvexGeom* g1, ConvexGeom* g2, double margin, double* dist, double* w1,
                      double* w2) noexcept nogil:
    """Witness pairs of the touching features (the reference's notes): their number (at
    most MAX_CONTACTS; 0 when nothing lines up and the one contact stands), distances in
    ``dist``, witnesses in ``w1``, ``w2``."""
    cdef Py_ssize_t idx1[3]
    cdef Py_ssize_t idx2[3]
    cdef double pts1[9]
    cdef double pts2[9]
    cdef double d12[3]
    cdef double d21[3]
    cdef double grow[3]
    cdef Normals n1, n2
    cdef Edges found_edges
    cdef int k, dim1, dim2, cap1, cap2, found = 0
    features(g1, corners, 0, idx1, pts1)
    features(g2, corners, 1, idx2, pts2)
    dim1, dim2 = simplex_dim(idx1, pts1), simplex_dim(idx2, pts2)
    for k in range(3):
        d12[k], d21[k] = x1[k] - x2[k], x2[k] - x1[k]
    cap1, cap2 = _capacity(g1, idx1[0]), _capacity(g2, idx2[0])
    n1.normal = <double*>malloc(3 * cap1 * sizeof(double))
    n1.index = <Py_ssize_t*>malloc(cap1 * sizeof(Py_ssize_t))
    n2.normal = <double*>malloc(3 * cap2 * sizeof(double))
    n2.index = <Py_ssize_t*>malloc(cap2 * sizeof(Py_ssize_t))
    found_edges.direction = <double*>malloc(3 * max(cap1, cap2) * sizeof(double))
    found_edges.end = <double*>malloc(3 * max(cap1, cap2) * sizeof(double))
    if (n1.normal != NULL and n1.index != NULL and n2.normal != NULL and n2.index != NULL
            and found_edges.direction != NULL and found_edges.end != NULL):
        normals(g1, dim1, idx1, d12, &n1)
        normals(g2, dim2, idx2, d21, &n2)
        found = _aligned(g1, g2, dim1, dim2, pts1, pts2, idx1, idx2, x1, x2, margin, &n1,
                         &n2, &found_edges, dist, w1, w2, grow)
        _grown(found, 0.0 if g1.kind == CCD_CAPSULE else 0.5 * margin,
               0.0 if g2.kind == CCD_CAPSULE else 0.5 * margin, grow, dist, w1, w2)
    free(n1.normal)
    free(n1.index)
    free(n2.normal)
    free(n2.index)
    free(found_edges.direction)
    free(found_edges.end)
    return found



# ----------------------------------------------------------------------------- the pair

cdef int c_contacts(ConvexGeom* g1, ConvexGeom* g2, double margin,
                    PairOut* out) noexcept nogil:
    """Contacts of a ``supported`` pair (``geom_init``, a mesh's hull set) with multi-CCD,
    written to ``out``: the clipped features' or, when nothing lines up, the one of
    ``penetration``; each at its witnesses' midpoint, with the first one's normal and
    ``margin + dist``.  Their number."""
    cdef Vertex corners[3]
    cdef double dist[MAX_CONTACTS]
    cdef double w1[3 * MAX_CONTACTS]
    cdef double w2[3 * MAX_CONTACTS]
    cdef double x1[3]
    cdef double x2[3]
    cdef double normal[3]
    cdef double pos[3]
    cdef int found = penetration(g1, g2, margin, dist, x1, x2, corners), m = 0, c, k
    if not found:
        return 0
    if found == 1:
        m = multicontact(corners, x1, x2, g1, g2, margin, dist, w1, w2)
    if m == 0:
        # nothing lines up: the one contact
        for k in range(3):
            w1[k], w2[k] = x1[k], x2[k]
        m = 1
    for k in range(3):
        normal[k] = w1[k] - w2[k]
    normalize(normal)
    for c in range(m):
        for k in range(3):
            pos[k] = (w1[3 * c + k] + w2[3 * c + k]) * 0.5
        add_contact(out, margin + dist[c], pos, normal, ZERO3)
    return m


def contacts(g1, g2, double margin):
    """:c:func:`c_contacts` on two primitive geoms given as the reference's ``ConvexGeom``
    (kind, pos, mat, size; the mesh pairs through ``collision_mesh.mesh_pair``):
    ``(dist, pos, frame)`` arrays."""
    cdef const double[::1] p1 = as_doubles(g1.pos).reshape(3)
    cdef const double[::1] m1 = as_doubles(g1.mat).reshape(9)
    cdef const double[::1] s1 = np.resize(as_doubles(g1.size), 3)
    cdef const double[::1] p2 = as_doubles(g2.pos).reshape(3)
    cdef const double[::1] m2 = as_doubles(g2.mat).reshape(9)
    cdef const double[::1] s2 = np.resize(as_doubles(g2.size), 3)
    cdef ConvexGeom c1, c2
    cdef PairOut out
    if g1.kind not in KIND_CODES or g2.kind not in KIND_CODES:
        raise ValueError(f"contacts takes primitive geoms ({', '.join(KIND_CODES)}), not "
                         f"{g1.kind!r} and {g2.kind!r}: a mesh pair goes through "
                         "collision_mesh.mesh_pair")
    out.n = 0
    geom_init(&c1, KIND_CODES[g1.kind], &p1[0], &m1[0], &s1[0], margin)
    geom_init(&c2, KIND_CODES[g2.kind], &p2[0], &m2[0], &s2[0], margin)
    c_contacts(&c1, &c2, margin, &out)
    return pack(&out)
