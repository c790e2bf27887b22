# cython: language_level=3
"""Expanding polytope algorithm (EPA): penetration depth, compiled.

The compiled twin of ``rbd/constraints/collision_epa.py`` (MuJoCo's
``engine_collision_gjk.c``): the polytope grown inside the Minkowski difference from
GJK's final simplex (``polytope2``, ``polytope3``, ``polytope4``), the horizon of the
support point, and the witness points on the closest face (``epaWitness``).  Faces are
records in one array that only grows (a face is deleted by leaving the map, as the
reference's), the map holds the indices of the live faces, and everything lives in one
allocation per call sized for ``ITERATIONS`` support points (:c:func:`penetration`
reports no contact, as when EPA fails, if a polytope would outgrow it).
"""

from libc.math cimport sqrt
from libc.stdlib cimport free, malloc

from rbd._kernels._spatial cimport cross3, dot3
from rbd._kernels.collision_gjk cimport (
    ITERATIONS,
    ConvexGeom,
    Vertex,
    det3,
    discrete,
    lincomb,
    project_origin_plane,
    vertex,
)

#: MuJoCo's mjMINVAL; mjMINDIST2/3/4 (= mjMINVAL²): a face this close to the origin holds it
cdef double MINVAL = 1e-15
cdef double MINDIST2 = 1e-30
#: MuJoCo's ccd_tolerance default; mjMAX_LIMIT
cdef double TOLERANCE = 1e-6
cdef double MAX_LIMIT = 1.7976931348623157e308

cdef enum:
    # vertices: GJK's simplex, three more for a hexahedron, one per iteration
    MAX_VERTS = 8 + ITERATIONS
    # faces: the hexahedron's six, then per iteration at most one per horizon edge
    MAX_FACES = 6 + ITERATIONS * MAX_VERTS
    # horizon edges of one iteration
    MAX_EDGES = 3 * MAX_FACES


cdef struct Face:
    int verts[3]
    int adj[3]                # adjacent faces per edge
    double v[3]               # the origin's projection on the face's plane, outwards
    double dist2              # its squared norm
    int index                 # place in the map (-1: not in it, -2: deleted)


cdef struct Polytope:
    Vertex* verts
    int nverts
    Face* faces
    int nfaces
    int* map                  # live faces
    int nmap
    int* edges                # horizon: (face index, edge) pairs
    int nedges
    double center[3]
    int full                  # 1: an array would have overflowed


cdef inline int _support(Polytope* pt, ConvexGeom* g1, ConvexGeom* g2,
                         const double* d, double dnorm) noexcept nogil:
    # add the support vertex along d (epaSupport); its index
    cdef double direction[3]
    if pt.nverts >= MAX_VERTS:
        pt.full = 1
        return pt.nverts - 1
    if dnorm > MINVAL:
        direction[0], direction[1], direction[2] = d[0] / dnorm, d[1] / dnorm, d[2] / dnorm
    else:
        direction[0], direction[1], direction[2] = 1.0, 0.0, 0.0
    vertex(g1, g2, direction, &pt.verts[pt.nverts])
    pt.nverts += 1
    return pt.nverts - 1


cdef double attach(Polytope* pt, int v1, int v2, int v3, int a1, int a2,
                    int a3) noexcept nogil:
    """New face (v1, v2, v3); its squared distance to the origin, 0 if degenerate
    (``attachFace``)."""
    cdef Face* face
    cdef double rel[3]
    cdef double p[3]
    cdef int k
    if pt.nfaces >= MAX_FACES:
        pt.full = 1
        return 0.0
    face = &pt.faces[pt.nfaces]
    pt.nfaces += 1
    face.verts[0], face.verts[1], face.verts[2] = v1, v2, v3
    face.adj[0], face.adj[1], face.adj[2] = a1, a2, a3
    face.v[0], face.v[1], face.v[2], face.dist2, face.index = 0.0, 0.0, 0.0, 0.0, -1
    if not project_origin_plane(pt.verts[v3].w, pt.verts[v2].w, pt.verts[v1].w, p):
        return 0.0
    for k in range(3):
        rel[k] = pt.verts[v1].w[k] - pt.center[k]
    if dot3(p, rel) < 0:
        for k in range(3):
            p[k] = p[k] * -1
    for k in range(3):
        face.v[k] = p[k]
    face.dist2 = dot3(p, p)
    return face.dist2


cdef inline void _index_all(Polytope* pt) noexcept nogil:
    cdef int i
    for i in range(pt.nfaces):
        pt.map[i], pt.faces[i].index = i, i
    pt.nmap = pt.nfaces


cdef inline void _delete(Polytope* pt, int f) noexcept nogil:
    cdef Face* face = &pt.faces[f]
    cdef int last
    if face.index >= 0:
        pt.nmap -= 1
        last = pt.map[pt.nmap]
        if last != f:
            pt.map[face.index] = last
            pt.faces[last].index = face.index
    face.index = -2


cdef inline int _edge(const Face* face, int vert) noexcept nogil:
    return 0 if face.verts[0] == vert else (1 if face.verts[1] == vert else 2)


cdef inline void _add_edge(Polytope* pt, int f, int e) noexcept nogil:
    if pt.nedges >= MAX_EDGES:
        pt.full = 1
        return
    pt.edges[2 * pt.nedges], pt.edges[2 * pt.nedges + 1] = f, e
    pt.nedges += 1


cdef bint horizon_rec(Polytope* pt, int f, int e, const double* w) noexcept nogil:
    cdef Face* face = &pt.faces[f]
    cdef int verts[3]
    cdef int k, i, a, edge
    if dot3(face.v, w) - face.dist2 > MINVAL:
        verts[0], verts[1], verts[2] = face.verts[0], face.verts[1], face.verts[2]
        _delete(pt, f)
        for k in range(1, 3):
            i = (e + k) % 3
            a = face.adj[i]
            if pt.faces[a].index > -2:
                edge = _edge(&pt.faces[a], verts[(i + 1) % 3])
                if not horizon_rec(pt, a, edge, w):
                    _add_edge(pt, a, edge)
        return True
    return False


cdef void horizon(Polytope* pt, int f, const double* w) noexcept nogil:
    cdef Face* face = &pt.faces[f]
    cdef int i, a, edge
    _delete(pt, f)
    for i in range(3):
        a = face.adj[i]
        edge = _edge(&pt.faces[a], face.verts[(i + 1) % 3])
        if (i == 0 or pt.faces[a].index > -2) and not horizon_rec(pt, a, edge, w):
            _add_edge(pt, a, edge)


cdef bint _same_side(const double* p0, const double* p1, const double* p2,
                     const double* p3) noexcept nogil:
    cdef double a[3]
    cdef double b[3]
    cdef double n[3]
    cdef double c[3]
    cdef double m[3]
    cdef double dot1, dot2
    cdef int k
    for k in range(3):
        a[k], b[k], c[k], m[k] = p1[k] - p0[k], p2[k] - p0[k], p3[k] - p0[k], p0[k] * -1
    cross3(a, b, n)
    dot1, dot2 = dot3(n, c), dot3(n, m)
    return (dot1 > 0 and dot2 > 0) or (dot1 < 0 and dot2 < 0)


cdef bint _in_tetra(const double* p0, const double* p1, const double* p2,
                    const double* p3) noexcept nogil:
    return (_same_side(p0, p1, p2, p3) and _same_side(p1, p2, p3, p0)
            and _same_side(p2, p3, p0, p1) and _same_side(p3, p0, p1, p2))


cdef void _turn120(const double* axis, double* R) noexcept nogil:
    """Rotation by 120° about ``axis`` (``rotmat``, its constants), row-major."""
    cdef double n = sqrt(dot3(axis, axis))
    cdef double u1 = axis[0] / n, u2 = axis[1] / n, u3 = axis[2] / n
    cdef double s = 0.86602540378, c = -0.5
    cdef double k = 1 - c
    R[0], R[1], R[2] = c + u1 * u1 * k, u1 * u2 * k - u3 * s, u1 * u3 * k + u2 * s
    R[3], R[4], R[5] = u2 * u1 * k + u3 * s, c + u2 * u2 * k, u2 * u3 * k - u1 * s
    R[6], R[7], R[8] = u1 * u3 * k - u2 * s, u2 * u3 * k + u1 * s, c + u3 * u3 * k


cdef inline void _mat_vec(const double* R, const double* x, double* out) noexcept nogil:
    cdef int k
    for k in range(3):
        out[k] = R[3 * k] * x[0] + R[3 * k + 1] * x[1] + R[3 * k + 2] * x[2]


cdef int _ray_triangle(const double* v1, const double* v2, const double* v3,
                       const double* v4, const double* v5) noexcept nogil:
    cdef double d12[3]
    cdef double d13[3]
    cdef double d14[3]
    cdef double d15[3]
    cdef double vol1, vol2, vol3
    cdef int k
    for k in range(3):
        d12[k], d13[k] = v2[k] - v1[k], v3[k] - v1[k]
        d14[k], d15[k] = v4[k] - v1[k], v5[k] - v1[k]
    vol1, vol2, vol3 = det3(d13, d14, d12), det3(d14, d15, d12), det3(d15, d13, d12)
    if vol1 >= 0 and vol2 >= 0 and vol3 >= 0:
        return 1
    if vol1 <= 0 and vol2 <= 0 and vol3 <= 0:
        return -1
    return 0


cdef void tri_affine(const double* v1, const double* v2, const double* v3, const double* p,
                     double* lam) noexcept nogil:
    """Affine coordinates of ``p`` on the triangle (``triAffineCoord``)."""
    cdef double m14 = (v2[1] * v3[2] - v2[2] * v3[1] - v1[1] * v3[2] + v1[2] * v3[1]
                       + v1[1] * v2[2] - v1[2] * v2[1])
    cdef double m24 = (v2[0] * v3[2] - v2[2] * v3[0] - v1[0] * v3[2] + v1[2] * v3[0]
                       + v1[0] * v2[2] - v1[2] * v2[0])
    cdef double m34 = (v2[0] * v3[1] - v2[1] * v3[0] - v1[0] * v3[1] + v1[1] * v3[0]
                       + v1[0] * v2[1] - v1[1] * v2[0])
    cdef double mu1 = fabs_(m14), mu2 = fabs_(m24), mu3 = fabs_(m34), m_max
    cdef int x, y
    if mu1 >= mu2 and mu1 >= mu3:
        m_max, x, y = m14, 1, 2
    elif mu2 >= mu3:
        m_max, x, y = m24, 0, 2
    else:
        m_max, x, y = m34, 0, 1
    lam[0] = _area(p, v2, v3, x, y) / m_max
    lam[1] = _area(p, v3, v1, x, y) / m_max
    lam[2] = _area(p, v1, v2, x, y) / m_max


cdef inline double fabs_(double x) noexcept nogil:
    return -x if x < 0 else x


cdef inline double _area(const double* p, const double* u, const double* w, int x,
                         int y) noexcept nogil:
    return p[x] * u[y] + p[y] * w[x] + u[x] * w[y] - p[x] * w[y] - p[y] * u[x] - w[x] * u[y]


cdef bint _on_triangle(const double* v1, const double* v2, const double* v3,
                       const double* p) noexcept nogil:
    cdef double lam[3]
    cdef double diff[3]
    cdef int k
    tri_affine(v1, v2, v3, p, lam)
    if lam[0] < 0 or lam[1] < 0 or lam[2] < 0:
        return False
    for k in range(3):
        diff[k] = (v1[k] * lam[0] + v2[k] * lam[1] + v3[k] * lam[2]) - p[k]
    return sqrt(dot3(diff, diff)) < MINVAL


#: the faces of polytope2 and polytope4: vertex slots and adjacent faces, in MuJoCo's order
cdef int SEGMENT_VERTS[18]
SEGMENT_VERTS[:] = [0, 2, 3, 0, 4, 2, 0, 3, 4, 1, 3, 2, 1, 2, 4, 1, 4, 3]
cdef int HEXA_ADJ[18]
HEXA_ADJ[:] = [1, 3, 2, 2, 4, 0, 0, 5, 1, 5, 0, 4, 3, 1, 5, 4, 2, 3]
cdef int TETRA_VERTS[12]
TETRA_VERTS[:] = [0, 1, 2, 0, 3, 1, 0, 2, 3, 3, 2, 1]
cdef int TETRA_ADJ[12]
TETRA_ADJ[:] = [1, 3, 2, 2, 3, 0, 0, 3, 1, 2, 0, 1]


cdef bint _polytope3(Polytope* pt, const Vertex* simplex, ConvexGeom* g1,
                     ConvexGeom* g2, double dist) noexcept nogil:
    """Hexahedron from a triangle; False when it cannot be built (``polytope3``)."""
    cdef double a[3]
    cdef double b[3]
    cdef double n[3]
    cdef double m[3]
    cdef double n_norm
    cdef const double* v1 = simplex[0].w
    cdef const double* v2 = simplex[1].w
    cdef const double* v3 = simplex[2].w
    cdef int k, i4, i5
    pt.nverts, pt.nfaces, pt.nmap = 0, 0, 0
    for k in range(3):
        pt.center[k] = ((v1[k] + v2[k]) + v3[k]) * (1.0 / 3.0)
        a[k], b[k] = v2[k] - v1[k], v3[k] - v1[k]
    cross3(a, b, n)
    n_norm = sqrt(dot3(n, n))
    if n_norm < MINVAL:
        return False
    for k in range(3):
        pt.verts[k], m[k] = simplex[k], n[k] * -1
    pt.nverts = 3
    v1, v2, v3 = pt.verts[0].w, pt.verts[1].w, pt.verts[2].w
    i5 = _support(pt, g1, g2, m, n_norm)
    i4 = _support(pt, g1, g2, n, n_norm)
    if (_on_triangle(v1, v2, v3, pt.verts[i4].w)
            or _on_triangle(v1, v2, v3, pt.verts[i5].w)):
        return False
    if (dist > 10 * MINVAL and not _in_tetra(v1, v2, v3, pt.verts[i4].w)
            and not _in_tetra(v1, v2, v3, pt.verts[i5].w)):
        return False
    if (attach(pt, i4, 0, 1, 1, 3, 2) < MINDIST2 or attach(pt, i4, 2, 0, 2, 4, 0) < MINDIST2
            or attach(pt, i4, 1, 2, 0, 5, 1) < MINDIST2
            or attach(pt, i5, 1, 0, 5, 0, 4) < MINDIST2
            or attach(pt, i5, 0, 2, 3, 1, 5) < MINDIST2
            or attach(pt, i5, 2, 1, 4, 2, 3) < MINDIST2):
        return False
    _index_all(pt)
    return True


cdef bint _reduce(Polytope* pt, const int* face, ConvexGeom* g1, ConvexGeom* g2,
                  double dist) noexcept nogil:
    # polytope3 on the vertices of a degenerate face
    cdef Vertex simplex[3]
    cdef int k
    for k in range(3):
        simplex[k] = pt.verts[face[k]]
    return _polytope3(pt, simplex, g1, g2, dist)


cdef inline bint _attach_all(Polytope* pt, const int* slots, const int* verts, const int* adj,
                      int nfaces, ConvexGeom* g1, ConvexGeom* g2,
                      double dist, bint* reduced) noexcept nogil:
    # the faces verts (slot numbers) with adjacency adj; a degenerate one: _reduce on it
    cdef int face[3]
    cdef int f, k
    reduced[0] = False
    for f in range(nfaces):
        for k in range(3):
            face[k] = slots[verts[3 * f + k]]
        if attach(pt, face[0], face[1], face[2], adj[3 * f], adj[3 * f + 1],
                   adj[3 * f + 2]) < MINDIST2:
            reduced[0] = True
            return _reduce(pt, face, g1, g2, dist)
    return True


cdef bint _polytope2(Polytope* pt, const Vertex* simplex, ConvexGeom* g1,
                     ConvexGeom* g2, double dist) noexcept nogil:
    """Hexahedron about a segment (``polytope2``)."""
    cdef double diff[3]
    cdef double e[3]
    cdef double d1[3]
    cdef double d2[3]
    cdef double d3[3]
    cdef double R[9]
    cdef int slots[5]
    cdef int k, index = 0
    cdef bint reduced, built
    for k in range(3):
        pt.center[k] = (simplex[0].w[k] + simplex[1].w[k]) * 0.5
        diff[k], e[k] = simplex[1].w[k] - simplex[0].w[k], 0.0
    for k in range(1, 3):
        # the first smallest component, as MuJoCo's loop
        if fabs_(diff[k]) < fabs_(diff[index]):
            index = k
    e[index] = 1.0
    cross3(e, diff, d1)
    _turn120(diff, R)
    _mat_vec(R, d1, d2)
    _mat_vec(R, d2, d3)
    pt.verts[0], pt.verts[1], pt.nverts = simplex[0], simplex[1], 2
    slots[0], slots[1] = 0, 1
    slots[2] = _support(pt, g1, g2, d1, sqrt(dot3(d1, d1)))
    slots[3] = _support(pt, g1, g2, d2, sqrt(dot3(d2, d2)))
    slots[4] = _support(pt, g1, g2, d3, sqrt(dot3(d3, d3)))
    built = _attach_all(pt, slots, SEGMENT_VERTS, HEXA_ADJ, 6, g1, g2, dist, &reduced)
    if reduced:
        return built
    if not _ray_triangle(pt.verts[0].w, pt.verts[1].w, pt.verts[slots[2]].w,
                         pt.verts[slots[3]].w, pt.verts[slots[4]].w):
        return False
    _index_all(pt)
    return True


cdef bint _polytope4(Polytope* pt, const Vertex* simplex, ConvexGeom* g1,
                     ConvexGeom* g2, double dist) noexcept nogil:
    """The tetrahedron itself (``polytope4``)."""
    cdef int slots[4]
    cdef int k
    cdef bint reduced, built
    for k in range(4):
        pt.verts[k], slots[k] = simplex[k], k
    pt.nverts = 4
    for k in range(3):
        pt.center[k] = (((simplex[0].w[k] + simplex[1].w[k]) + simplex[2].w[k])
                        + simplex[3].w[k]) * 0.25
    built = _attach_all(pt, slots, TETRA_VERTS, TETRA_ADJ, 4, g1, g2, dist, &reduced)
    if reduced:
        return built
    if not _in_tetra(simplex[0].w, simplex[1].w, simplex[2].w, simplex[3].w):
        return False
    _index_all(pt)
    return True


cdef inline int _closest(const Polytope* pt, double* lower2) noexcept nogil:
    # the live face closest to the origin (-1: none below MAX_LIMIT), its dist2 in lower2
    cdef int i, face = -1
    lower2[0] = MAX_LIMIT
    for i in range(pt.nmap):
        if pt.faces[pt.map[i]].dist2 < lower2[0]:
            face, lower2[0] = pt.map[i], pt.faces[pt.map[i]].dist2
    return face


cdef inline bint _expand(Polytope* pt, int wi, double lower2, double upper2) noexcept nogil:
    # the new faces from the support point wi to the horizon edges; False on a degenerate one
    cdef int nfaces = pt.nfaces, nedges = pt.nedges, i, cur, nxt, prev, h_index, h_edge, a, b
    cdef double d2
    for i in range(nedges):
        h_index, h_edge = pt.edges[2 * i], pt.edges[2 * i + 1]
        cur, nxt = nfaces + i, nfaces + (i + 1) % nedges
        a = pt.faces[h_index].verts[h_edge]
        b = pt.faces[h_index].verts[(h_edge + 1) % 3]
        pt.faces[h_index].adj[h_edge] = cur
        prev = nfaces + nedges - 1 if i == 0 else cur - 1
        d2 = attach(pt, wi, b, a, prev, h_index, nxt)
        if d2 == 0:
            return False
        if lower2 <= d2 <= upper2:
            pt.faces[pt.nfaces - 1].index = pt.nmap
            pt.map[pt.nmap] = pt.nfaces - 1
            pt.nmap += 1
    return True


cdef inline bint _seen(const Polytope* pt, int wi) noexcept nogil:
    # a support point found before (the same box corner or hull vertex on both geoms)
    cdef int i
    for i in range(pt.nverts - 1):
        if (pt.verts[i].index1 == pt.verts[wi].index1
                and pt.verts[i].index2 == pt.verts[wi].index2):
            return True
    return False


cdef inline int _grow(Polytope* pt, ConvexGeom* g1, ConvexGeom* g2) noexcept nogil:
    # EPA's loop: the index of the closest face at the end, or -1 (no contact).  Two
    # polytopes converge in finitely many steps: a tolerance of mjMINVAL only keeps the
    # bounds from getting absurdly small (mjMINEPATOL)
    cdef double upper = MAX_LIMIT, upper2 = MAX_LIMIT, lower2, lower, upper_k
    cdef bint finite = discrete(g1, g2)
    cdef double tolerance = MINVAL if finite else TOLERANCE
    cdef int k, previous, found, wi, face = -1
    for k in range(ITERATIONS):
        previous = face
        found = _closest(pt, &lower2)
        face = found if found >= 0 else face
        if lower2 > upper2 or face < 0:
            face = previous
            break
        if lower2 <= 0:
            break
        lower = sqrt(lower2)
        wi = _support(pt, g1, g2, pt.faces[face].v, lower)
        upper_k = dot3(pt.faces[face].v, pt.verts[wi].w) / lower
        if upper_k < upper:
            upper, upper2 = upper_k, upper_k * upper_k
        if upper - lower < tolerance:
            if k == 0 and upper < lower - 1e-10:
                face = -1
            break
        if finite and _seen(pt, wi):
            # a support point found before: done
            break
        pt.nedges = 0
        horizon(pt, face, pt.verts[wi].w)
        if pt.nedges < 3 or not _expand(pt, wi, lower2, upper2):
            face = -1
            break
        if pt.nmap == 0:
            break
    return -1 if pt.full else face


cdef bint penetration(const Vertex* simplex, int nsimplex, ConvexGeom* g1,
                      ConvexGeom* g2, double* dist, double* x1,
                      double* x2) noexcept nogil:
    """EPA from GJK's final simplex (2 to 4 vertices): the signed distance (minus the
    penetration depth) into ``dist`` and the witness points into ``x1``, ``x2``; False: no
    contact, as MuJoCo when the polytope cannot be built or EPA fails.  GJK's distance
    counts as 0 here (MuJoCo's "assume touching")."""
    return penetration_face(simplex, nsimplex, g1, g2, dist, x1, x2, NULL)


cdef bint penetration_face(const Vertex* simplex, int nsimplex, ConvexGeom* g1,
                           ConvexGeom* g2, double* dist, double* x1, double* x2,
                           Vertex* face_verts) noexcept nogil:
    """:c:func:`penetration` and, into ``face_verts`` (3 records, or NULL: not asked), the
    closest face's vertices (what MuJoCo's ``multicontact`` starts from)."""
    cdef Polytope pt
    cdef double lam[3]
    cdef const double* w1[3]
    cdef const double* w2[3]
    cdef const Face* f
    cdef bint built
    cdef int face = -1, k
    pt.verts = <Vertex*>malloc(MAX_VERTS * sizeof(Vertex))
    pt.faces = <Face*>malloc(MAX_FACES * sizeof(Face))
    pt.map = <int*>malloc(MAX_FACES * sizeof(int))
    pt.edges = <int*>malloc(2 * MAX_EDGES * sizeof(int))
    pt.nverts, pt.nfaces, pt.nmap, pt.nedges, pt.full = 0, 0, 0, 0, 0
    if pt.verts != NULL and pt.faces != NULL and pt.map != NULL and pt.edges != NULL:
        if nsimplex == 2:
            built = _polytope2(&pt, simplex, g1, g2, 0.0)
        elif nsimplex == 3:
            built = _polytope3(&pt, simplex, g1, g2, 0.0)
        else:
            built = _polytope4(&pt, simplex, g1, g2, 0.0)
        face = _grow(&pt, g1, g2) if built and not pt.full else -1
    if face >= 0:
        f = &pt.faces[face]
        tri_affine(pt.verts[f.verts[0]].w, pt.verts[f.verts[1]].w, pt.verts[f.verts[2]].w,
                   f.v, lam)
        for k in range(3):
            w1[k], w2[k] = pt.verts[f.verts[k]].w1, pt.verts[f.verts[k]].w2
        lincomb(lam, w1, 3, x1)
        lincomb(lam, w2, 3, x2)
        dist[0] = -sqrt(f.dist2)
        if face_verts != NULL:
            for k in range(3):
                face_verts[k] = pt.verts[f.verts[k]]
    free(pt.verts)
    free(pt.faces)
    free(pt.map)
    free(pt.edges)
    return face >= 0
