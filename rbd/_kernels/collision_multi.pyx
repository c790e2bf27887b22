# cython: language_level=3
"""Several contacts of two polytopes from one EPA run, compiled: MuJoCo's ``multicontact``.

The compiled twin of ``rbd/constraints/collision_multi.py`` (``multicontact`` and its
helpers in ``engine_collision_gjk.c``, as MuJoCo 4.0 runs them; the reference's notes say
where that differs from the 3.12 source): the features of each geom on EPA's closest face
(``simplex_dim``), the outward normals of the faces holding them (``box_normals``,
``mesh_normals``), aligned faces or an edge in a face (``aligned_faces``,
``aligned_face_edge``), then Sutherland–Hodgman clipping of one face or edge against the
other (``clip_to_face``, ``polygon_clip``), more than four points reduced by MuJoCo's
quadrilateral search (``polygon_quad``).  Points are rows of 3 doubles; a mesh's polygons
are read from its hull (``ConvexGeom.hull``).  The lists that grow with the mesh (faces at
a vertex, clipped polygons) live in scratch memory of one call; where it cannot be had
:c:func:`multicontact` gives no contacts and EPA's contact stands.
"""

from libc.math cimport fabs, sqrt
from libc.stdlib cimport free, malloc

from rbd._kernels._spatial cimport cross3, dot3
from rbd._kernels.collision_gjk cimport CCD_BOX, ConvexGeom, Vertex

#: two face normals this opposed (cosine, about 5.1°) make the faces flat on each other
cdef double FACE_TOL = 0.996
#: an edge this close to perpendicular to a face normal (cosine) lies in the face
cdef double EDGE_TOL = 0.0888
#: MuJoCo's mjMINVAL
cdef double MINVAL = 1e-15
#: the six face normals of a box in its frame, in MuJoCo's face order (+x, −x, +y, −y, +z, −z)
cdef double BOX_NORMALS[18]
BOX_NORMALS[:] = [1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1]
#: the corners of each box face as signs of the half sizes, in MuJoCo's order (boxFace)
cdef double BOX_FACES[72]
BOX_FACES[:] = [1, 1, 1, 1, 1, -1, 1, -1, -1, 1, -1, 1,
                -1, 1, -1, -1, 1, 1, -1, -1, 1, -1, -1, -1,
                -1, 1, -1, 1, 1, -1, 1, 1, 1, -1, 1, 1,
                -1, -1, 1, 1, -1, 1, 1, -1, -1, -1, -1, -1,
                -1, 1, 1, 1, 1, 1, 1, -1, 1, -1, -1, 1,
                1, 1, -1, -1, 1, -1, -1, -1, -1, 1, -1, -1]


cdef inline Py_ssize_t _count(const ConvexGeom* g, Py_ssize_t v) noexcept nogil:
    # the number of hull polygons at vertex v
    return g.hull.vpoly_start[v + 1] - g.hull.vpoly_start[v]


cdef inline Py_ssize_t _polygon_size(const ConvexGeom* g, Py_ssize_t f) noexcept nogil:
    # corners of face f: 4 on a box, the hull polygon's count on a mesh
    if g.kind == CCD_BOX:
        return 4
    return g.hull.poly_start[f + 1] - g.hull.poly_start[f]


# ----------------------------------------------------------------------------- 1. features

cdef int simplex_dim(Py_ssize_t* indices, double* points) noexcept nogil:
    """Dimension + 1 of a geom's feature on EPA's face (1 vertex, 2 edge, 3 face) from the
    support indices of the face's three corners (``simplexDim``); an edge whose first two
    corners repeat is moved to the front (``points``: three rows of 3)."""
    cdef int k
    if indices[0] == indices[1]:
        if indices[0] == indices[2]:
            return 1
        indices[1] = indices[2]
        for k in range(3):
            points[3 + k] = points[6 + k]
        return 2
    return 2 if indices[2] == indices[0] or indices[2] == indices[1] else 3


# ----------------------------------------------------------------------------- 2. candidate faces

cdef inline void _box_face_along(const ConvexGeom* g, const double* direction,
                                 Normals* out) noexcept nogil:
    # the box face within FACE_TOL of direction (boxNormals2), or none
    cdef double local[3]
    cdef double scale
    cdef int i, k
    for k in range(3):
        local[k] = g.mat[k] * direction[0] + g.mat[3 + k] * direction[1] \
            + g.mat[6 + k] * direction[2]
    scale = 1 / sqrt(dot3(local, local))
    for k in range(3):
        local[k] = local[k] * scale
    out.n = 0
    for i in range(6):
        if dot3(local, BOX_NORMALS + 3 * i) > FACE_TOL:
            _rotate(g.mat, BOX_NORMALS + 3 * i, out.normal)
            out.index[0], out.n = i, 1
            return


cdef void box_normals(const ConvexGeom* g, int dim, const Py_ssize_t* corners,
                      const double* direction, Normals* out) noexcept nogil:
    """World normals and indices of the box faces holding a feature (``boxNormals``): a
    corner's three faces, the faces along the bits an edge's or a face's corners share,
    else the face nearest ``direction``."""
    cdef double n[3]
    cdef int k, j, side, all_in, all_out, bit
    out.n = 0
    for k in range(3):
        bit = 1 << k
        if dim == 1:
            side = 1 if corners[0] & bit else -1
        else:
            all_in, all_out = 1, 1
            for j in range(dim):
                all_in = all_in and (corners[j] & bit) != 0
                all_out = all_out and (corners[j] & bit) == 0
            side = all_in - all_out
        if side:
            for j in range(3):
                n[j] = side * BOX_NORMALS[6 * k + j]
            _rotate(g.mat, n, out.normal + 3 * out.n)
            out.index[out.n] = 2 * k + (side < 0)
            out.n += 1
    if dim == 1 or out.n == (1 if dim == 3 else 2):
        return
    _box_face_along(g, direction, out)


cdef void mesh_normals(const ConvexGeom* g, int dim, const Py_ssize_t* vertices,
                       Normals* out) noexcept nogil:
    """World normals and indices of the hull polygons holding a feature (``meshNormals``):
    the polygon common to three vertices, the (up to two) common to an edge's ends, or
    every polygon at a vertex."""
    cdef const Py_ssize_t* start = g.hull.vpoly_start
    cdef const Py_ssize_t* vpoly = g.hull.vpoly
    cdef Py_ssize_t a, b, p
    cdef int d, m, kept
    out.n = 0
    for a in range(start[vertices[0]], start[vertices[0] + 1]):
        out.index[out.n] = vpoly[a]
        out.n += 1
    for d in range(1, dim):
        kept = 0
        for m in range(out.n):
            p = out.index[m]
            for b in range(start[vertices[d]], start[vertices[d] + 1]):
                if vpoly[b] == p and kept < 2:
                    out.index[kept] = p
                    kept += 1
                    break
        out.n = kept
        if not kept:
            return
    if dim == 3:
        out.n = 1
    for m in range(out.n):
        _rotate(g.mat, g.hull.normal + 3 * out.index[m], out.normal + 3 * m)


cdef void face_normals(const ConvexGeom* g, int dim, const Py_ssize_t* indices,
                       const double* direction, Normals* out) noexcept nogil:
    """``box_normals`` or ``mesh_normals`` by the geom's kind."""
    if g.kind == CCD_BOX:
        box_normals(g, dim, indices, direction, out)
    else:
        mesh_normals(g, dim, indices, out)


# ----------------------------------------------------------------------------- 3. alignment

cdef bint aligned_faces(const Normals* normals1, const Normals* normals2, int* i,
                        int* j) noexcept nogil:
    """First pair ``(i, j)`` of opposed face normals within FACE_TOL (``alignedFaces``);
    False: none."""
    cdef int a, b
    for a in range(normals1.n):
        for b in range(normals2.n):
            if dot3(normals1.normal + 3 * a, normals2.normal + 3 * b) < -FACE_TOL:
                i[0], j[0] = a, b
                return True
    return False


cdef bint aligned_face_edge(const Edges* edges, const Normals* normals, int* edge,
                            int* face) noexcept nogil:
    """First (edge, face) pair with the edge in the face's plane within EDGE_TOL
    (``alignedFaceEdge``), faces in the outer loop; False: none."""
    cdef int f, e
    for f in range(normals.n):
        for e in range(edges.n):
            if fabs(dot3(edges.direction + 3 * e, normals.normal + 3 * f)) < EDGE_TOL:
                edge[0], face[0] = e, f
                return True
    return False


cdef void box_edges(const ConvexGeom* g, int dim, const double* points, Py_ssize_t corner,
                    Edges* out) noexcept nogil:
    """Unit directions and far ends of the box edges of a feature (``boxEdgeNormals``): the
    edge itself, or the three edges from a corner to its neighbours."""
    cdef double half[3]
    cdef double local[3]
    cdef int k, e
    out.n = 0
    if dim == 2:
        _unit_from(points, points + 3, out.direction)
        for k in range(3):
            out.end[k] = points[3 + k]
        out.n = 1
    if dim != 1:
        return
    for k in range(3):
        half[k] = g.size[k] if corner & (1 << k) else -g.size[k]
    for e in range(3):
        for k in range(3):
            local[k] = -half[k] if k == e else half[k]
        _place(g, local, out.end + 3 * e)
        _unit_from(points, out.end + 3 * e, out.direction + 3 * e)
    out.n = 3


cdef void mesh_edges(const ConvexGeom* g, int dim, const double* points, Py_ssize_t vertex,
                     Edges* out) noexcept nogil:
    """Unit directions and far ends of the hull edges of a feature (``meshEdgeNormals``):
    the edge itself, or, for a vertex, the edge to its predecessor in each polygon at it."""
    cdef Py_ssize_t a, p, start, n, i, previous
    cdef int k
    out.n = 0
    if dim == 2:
        _unit_from(points, points + 3, out.direction)
        for k in range(3):
            out.end[k] = points[3 + k]
        out.n = 1
    if dim != 1:
        return
    for a in range(g.hull.vpoly_start[vertex], g.hull.vpoly_start[vertex + 1]):
        p = g.hull.vpoly[a]
        start, n = g.hull.poly_start[p], g.hull.poly_start[p + 1] - g.hull.poly_start[p]
        i = 0
        while g.hull.poly_vert[start + i] != vertex:
            i += 1
        previous = g.hull.poly_vert[start + (i - 1 + n) % n]
        _place(g, g.hull.vert + 3 * previous, out.end + 3 * out.n)
        _unit_from(points, out.end + 3 * out.n, out.direction + 3 * out.n)
        out.n += 1


cdef void feature_edges(const ConvexGeom* g, int dim, const double* points, Py_ssize_t index,
                        Edges* out) noexcept nogil:
    """``box_edges`` or ``mesh_edges`` by the geom's kind."""
    if g.kind == CCD_BOX:
        box_edges(g, dim, points, index, out)
    else:
        mesh_edges(g, dim, points, index, out)


cdef int box_face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil:
    """World corners of box face ``index`` in MuJoCo's order (``boxFace``), clockwise seen
    from outside, into ``out``; their number (4)."""
    cdef double local[3]
    cdef int c, k
    for c in range(4):
        for k in range(3):
            local[k] = BOX_FACES[12 * index + 3 * c + k] * g.size[k]
        _place(g, local, out + 3 * c)
    return 4


cdef inline int _loop(const ConvexGeom* g, Py_ssize_t index, int shift, int step,
                      double* out) noexcept nogil:
    # the corners of hull polygon index placed in the world, corner i from its loop's
    # (shift + step * i) mod n; their number
    cdef Py_ssize_t start = g.hull.poly_start[index]
    cdef Py_ssize_t n = g.hull.poly_start[index + 1] - start, i
    for i in range(n):
        _place(g, g.hull.vert + 3 * g.hull.poly_vert[start + ((shift + step * i) % n + n) % n],
               out + 3 * i)
    return <int>n


cdef int mesh_face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil:
    """World corners of hull polygon ``index`` in reverse order, clockwise seen from outside
    (``meshFace``)."""
    return _loop(g, index, -1, -1, out)


cdef int face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil:
    """``box_face`` or ``mesh_face`` by the geom's kind (an edge's clipping face)."""
    if g.kind == CCD_BOX:
        return box_face(g, index, out)
    return mesh_face(g, index, out)


cdef int clipped_face(const ConvexGeom* g, Py_ssize_t index, double* out) noexcept nogil:
    """Geom 1's face as MuJoCo 4.0 clips it, counter-clockwise seen from outside: a box
    face from its third ``boxFace`` corner backwards, a hull polygon from its last vertex
    on (the reference's notes)."""
    cdef double corners[12]
    cdef int c, k
    if g.kind != CCD_BOX:
        return _loop(g, index, -1, 1, out)
    box_face(g, index, corners)
    for c in range(4):
        for k in range(3):
            out[3 * c + k] = corners[3 * (3 - (c + 1) % 4) + k]
    return 4


cdef int clipping_face(const ConvexGeom* g, Py_ssize_t index, bint after_box,
                       double* out) noexcept nogil:
    """Geom 2's hull polygon as MuJoCo 4.0 clips against it, counter-clockwise seen from
    outside: from its last vertex on, or from the one before it when geom 1 is a box."""
    return _loop(g, index, -2 if after_box else -1, 1, out)


# ----------------------------------------------------------------------------- 4. clipping

cdef inline double _area4(const double* a, const double* b, const double* c,
                          const double* d) noexcept nogil:
    # area of the quadrilateral (a, b, c, d): ½ ‖(c − a) × (d − b)‖
    cdef double u[3]
    cdef double v[3]
    cdef double g[3]
    cdef int k
    for k in range(3):
        u[k], v[k] = c[k] - a[k], d[k] - b[k]
    cross3(u, v, g)
    return 0.5 * sqrt(dot3(g, g))


cdef inline double _area(const double* p, int n, int a, int b, int c, int d) noexcept nogil:
    return _area4(p + 3 * (a % n), p + 3 * (b % n), p + 3 * (c % n), p + 3 * (d % n))


cdef void polygon_quad(const double* polygon, int n, int* best) noexcept nogil:
    """Indices of four corners of a convex polygon enclosing the largest area found by
    MuJoCo's rotating search (``polygonQuad``), into ``best`` (the reference's, which also
    tells whether a comparison hung on a tie)."""
    cdef int a, b = 1, c = 2, d = 3
    cdef double m = _area(polygon, n, 0, 1, 2, 3), m_next
    best[0], best[1], best[2], best[3] = 0, 1, 2, 3
    for a in range(n):
        while True:
            m_next = _area(polygon, n, a, b, c, (d + 1) % n)
            if m_next <= m:
                break
            m, d = m_next, (d + 1) % n
            best[0], best[1], best[2], best[3] = a, b, c, d
            while True:
                m_next = _area(polygon, n, a, b, (c + 1) % n, d)
                if m_next <= m:
                    break
                m, c = m_next, (c + 1) % n
                best[0], best[1], best[2], best[3] = a, b, c, d
            while True:
                m_next = _area(polygon, n, a, (b + 1) % n, c, d)
                if m_next <= m:
                    break
                m, b = m_next, (b + 1) % n
                best[0], best[1], best[2], best[3] = a, b, c, d
        if b == a:
            b = (b + 1) % n
            if c == b:
                c = (c + 1) % n
                if d == c:
                    d = (d + 1) % n


cdef double side_plane(const double* v1, const double* v2, const double* n,
                       double* normal) noexcept nogil:
    """Unit normal (into ``normal``) and offset (returned) of the plane through the edge
    (v1, v2) perpendicular to a face of normal ``n`` (``planeNormal``)."""
    cdef double e[3]
    cdef double up[3]
    cdef double t[3]
    cdef int k
    for k in range(3):
        e[k], up[k] = v2[k] - v1[k], (v1[k] + n[k]) - v1[k]
    cross3(e, up, t)
    _unit(t, normal)
    return dot3(normal, v1)


cdef inline bint _inside(const double* a, const double* n, const double* p) noexcept nogil:
    # p on the inner side of the plane through a with normal n, to mjMINVAL (halfspace)
    cdef double d[3]
    cdef int k
    for k in range(3):
        d[k] = p[k] - a[k]
    return dot3(d, n) > -MINVAL


cdef double witness_on_face(const double* v, const double* p, const double* n,
                            const double* direction, double* x1,
                            double* x2) noexcept nogil:
    """Signed distance (returned) of the clipped point ``v`` from the clipping face (plane
    through ``p``, normal ``n``), and its witness points: ``v`` moved by that distance
    against ``direction`` (``x1``, on the clipping face), and ``v`` (``x2``)
    (``witnessOnFace``)."""
    cdef double d[3]
    cdef double dist
    cdef int k
    for k in range(3):
        d[k] = v[k] - p[k]
    dist = dot3(d, n)
    for k in range(3):
        x1[k] = v[k] + direction[k] * (-fabs(dist))
        x2[k] = v[k]
    return dist


cdef inline int _clip_edge(const double* a, const double* pn, double pd, const double* p,
                           const double* q, double* kept) noexcept nogil:
    # one edge (p, q) of the polygon against one wall (through a, normal pn, offset pd):
    # the points it keeps (q, the crossing, or both) into kept; their number
    cdef double pq[3]
    cdef double along, t
    cdef bint inside1 = _inside(a, pn, p), inside2 = _inside(a, pn, q)
    cdef int k, m = 0
    if not inside1 and not inside2:
        return 0
    if inside1 and inside2:
        kept[0], kept[1], kept[2] = q[0], q[1], q[2]
        return 1
    for k in range(3):
        pq[k] = q[k] - p[k]
    along = dot3(pn, pq)
    if along != 0.0:
        t = (pd - dot3(pn, p)) / along
        if 0.0 <= t <= 1.0:
            for k in range(3):
                kept[k] = p[k] + pq[k] * t
            m = 1
    if inside2:
        kept[3 * m], kept[3 * m + 1], kept[3 * m + 2] = q[0], q[1], q[2]
        m += 1
    return m


cdef int clip_to_face(const double* clipping, int nclip, const double* polygon, int npoly,
                      const double* n, const double* side, double margin,
                      double** result) noexcept nogil:
    """The part of ``polygon`` inside the prism over the face ``clipping`` (outward normal
    ``n``), one wall at a time (Sutherland–Hodgman), then the points at most ``margin``
    above the face: their number, the points in ``result[0]`` (the caller frees it; -1: no
    memory).  The walls stand on the face's edges perpendicular to ``side``."""
    cdef double pn[3]
    cdef double below[3]
    cdef double pd
    cdef double* points = <double*>malloc(3 * npoly * sizeof(double))
    cdef double* kept
    cdef int e, i, k, count = npoly, m
    if points == NULL:
        return -1
    for i in range(3 * npoly):
        points[i] = polygon[i]
    for e in range(nclip):
        pd = side_plane(clipping + 3 * e, clipping + 3 * ((e + 1) % nclip), side, pn)
        kept = <double*>malloc((6 * count + 3) * sizeof(double))
        if kept == NULL:
            free(points)
            return -1
        m = 0
        for i in range(count):
            m += _clip_edge(clipping + 3 * e, pn, pd, points + 3 * i,
                            points + 3 * (i + 1 if i < count - 1 else 0), kept + 3 * m)
        free(points)
        points, count = kept, m
    m = 0
    for i in range(count):
        for k in range(3):
            below[k] = points[3 * i + k] - clipping[k]
        if dot3(below, n) <= margin:
            for k in range(3):
                points[3 * m + k] = points[3 * i + k]
            m += 1
    result[0] = points
    return m


cdef inline void _farthest_pair(const double* points, int count, int* best) noexcept nogil:
    # the two points farthest apart (the first such pair)
    cdef double diff[3]
    cdef double d = 0.0, dd
    cdef int i, j, k
    best[0], best[1] = 0, 1
    for i in range(count):
        for j in range(i + 1, count):
            for k in range(3):
                diff[k] = points[3 * j + k] - points[3 * i + k]
            dd = dot3(diff, diff)
            if dd > d:
                best[0], best[1], d = i, j, dd


cdef int polygon_clip(const double* clipping, int nclip, const double* polygon, int npoly,
                      const double* n, const double* direction, const double* side,
                      double* dist, double* x1, double* x2) noexcept nogil:
    """Contacts of a face or edge ``polygon`` against the face ``clipping`` of outward normal
    ``n`` (``polygonClip``; walls as ``clip_to_face``): their number (at most
    MAX_CONTACTS; 0: EPA's contact stands), ``x2`` the clipped points, ``x1`` their
    witnesses on the face (``witness_on_face``), ``dist`` their distances.  More than four
    points become ``polygon_quad``'s four; a clipped edge keeps its two farthest points."""
    cdef double* points = NULL
    cdef int chosen[4]
    cdef int count, m, i
    if nclip < 3:
        return 0
    count = clip_to_face(clipping, nclip, polygon, npoly, n, side, 0.0, &points)
    if count <= 0:
        free(points)
        return 0
    m = count
    if count > MAX_CONTACTS:
        polygon_quad(points, count, chosen)
        m = 4
    elif npoly == 2 and count > 2:
        _farthest_pair(points, count, chosen)
        m = 2
    else:
        for i in range(count):
            chosen[i] = i
    for i in range(m):
        dist[i] = witness_on_face(points + 3 * chosen[i], clipping, n, direction,
                                  x1 + 3 * i, x2 + 3 * i)
    free(points)
    return m


# ----------------------------------------------------------------------------- the driver

cdef inline int _capacity(const ConvexGeom* g, Py_ssize_t vertex) noexcept nogil:
    # room for the faces or edges at a feature: 3 on a box, the polygons at a mesh vertex
    if g.kind == CCD_BOX:
        return 3
    return <int>max(3, _count(g, vertex))


cdef inline int _face_on_face(ConvexGeom* g1, ConvexGeom* g2, const Normals* n1,
                              const Normals* n2, int i, int j, double* dist, double* w1,
                              double* w2) noexcept nogil:
    # geom 1's face clipped to the prism over geom 2's (the witnesses swapped back)
    cdef double minus[3]
    cdef double* clipping = <double*>malloc(3 * _polygon_size(g2, n2.index[j]) * sizeof(double))
    cdef double* clipped = <double*>malloc(3 * _polygon_size(g1, n1.index[i]) * sizeof(double))
    cdef int k, nclip, npoly, found = 0
    if clipping != NULL and clipped != NULL:
        for k in range(3):
            minus[k] = -n2.normal[3 * j + k]
        nclip = clipping_face(g2, n2.index[j], g1.kind == CCD_BOX, clipping)
        npoly = clipped_face(g1, n1.index[i], clipped)
        found = polygon_clip(clipping, nclip, clipped, npoly, n2.normal + 3 * j, minus,
                             n1.normal + 3 * i, dist, w2, w1)
    free(clipping)
    free(clipped)
    return found


cdef inline int _edge_on_face(ConvexGeom* g, const Normals* normals, int j,
                              const double* start, const double* end, double* dist,
                              double* x1, double* x2) noexcept nogil:
    # the edge (start, end) clipped to the prism over face j of g (witnesses: x1 on it)
    cdef double edge[6]
    cdef double minus[3]
    cdef double* clipping = <double*>malloc(3 * _polygon_size(g, normals.index[j])
                                            * sizeof(double))
    cdef int k, nclip, found = 0
    if clipping != NULL:
        for k in range(3):
            edge[k], edge[3 + k] = start[k], end[k]
            minus[k] = -normals.normal[3 * j + k]
        nclip = face(g, normals.index[j], clipping)
        found = polygon_clip(clipping, nclip, edge, 2, normals.normal + 3 * j, minus,
                             normals.normal + 3 * j, dist, x1, x2)
    free(clipping)
    return found


cdef inline int _aligned(ConvexGeom* g1, ConvexGeom* g2, int dim1, int dim2,
                         const double* pts1, const double* pts2, const Py_ssize_t* idx1,
                         const Py_ssize_t* idx2, const Normals* n1, const Normals* n2,
                         Edges* edges, double* dist, double* w1, double* w2) noexcept nogil:
    # multicontact's three cases once the candidate faces are known: face on face, an edge
    # of geom 1 in a face of geom 2, an edge of geom 2 in a face of geom 1
    cdef int i, j
    if aligned_faces(n1, n2, &i, &j):
        return _face_on_face(g1, g2, n1, n2, i, j, dist, w1, w2)
    if dim1 < 3 and dim1 <= dim2:
        feature_edges(g1, dim1, pts1, idx1[0], edges)
        if aligned_face_edge(edges, n2, &i, &j):
            return _edge_on_face(g2, n2, j, pts1, edges.end + 3 * i, dist, w2, w1)
    if dim2 < 3:
        feature_edges(g2, dim2, pts2, idx2[0], edges)
        if aligned_face_edge(edges, n1, &i, &j):
            return _edge_on_face(g1, n1, j, pts2, edges.end + 3 * i, dist, w1, w2)
    return 0


cdef int multicontact(const Vertex* face_verts, const double* x1, const double* x2,
                      ConvexGeom* g1, ConvexGeom* g2, double* dist, double* w1,
                      double* w2) noexcept nogil:
    """Contacts of two boxes or meshes from EPA's closest face (``multicontact``; the
    reference's notes): their number (at most MAX_CONTACTS), the distances in ``dist``,
    witness pairs in ``w1``, ``w2`` (rows of 3); 0 when no faces or edges line up (EPA's
    one contact stands)."""
    cdef Py_ssize_t idx1[3]
    cdef Py_ssize_t idx2[3]
    cdef double pts1[9]
    cdef double pts2[9]
    cdef double d12[3]
    cdef double d21[3]
    cdef Normals n1, n2
    cdef Edges edges
    cdef int k, m, dim1, dim2, cap1, cap2, found = 0
    for k in range(3):
        idx1[k], idx2[k] = face_verts[k].index1, face_verts[k].index2
        for m in range(3):
            pts1[3 * k + m], pts2[3 * k + m] = face_verts[k].w1[m], face_verts[k].w2[m]
        d12[k], d21[k] = x1[k] - x2[k], x2[k] - x1[k]
    dim1, dim2 = simplex_dim(idx1, pts1), simplex_dim(idx2, pts2)
    cap1, cap2 = _capacity(g1, idx1[0]), _capacity(g2, idx2[0])
    n1.normal = <double*>malloc(3 * cap1 * sizeof(double))
    n1.index = <Py_ssize_t*>malloc(cap1 * sizeof(Py_ssize_t))
    n2.normal = <double*>malloc(3 * cap2 * sizeof(double))
    n2.index = <Py_ssize_t*>malloc(cap2 * sizeof(Py_ssize_t))
    edges.direction = <double*>malloc(3 * max(cap1, cap2) * sizeof(double))
    edges.end = <double*>malloc(3 * max(cap1, cap2) * sizeof(double))
    if (n1.normal != NULL and n1.index != NULL and n2.normal != NULL and n2.index != NULL
            and edges.direction != NULL and edges.end != NULL):
        face_normals(g1, dim1, idx1, d12, &n1)
        face_normals(g2, dim2, idx2, d21, &n2)
        found = _aligned(g1, g2, dim1, dim2, pts1, pts2, idx1, idx2, &n1, &n2, &edges, dist,
                         w1, w2)
    free(n1.normal)
    free(n1.index)
    free(n2.normal)
    free(n2.index)
    free(edges.direction)
    free(edges.end)
    return found
