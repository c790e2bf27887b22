# cython: language_level=3
"""GJK (Gilbert–Johnson–Keerthi) on support functions, compiled.

The compiled twin of ``rbd/constraints/collision_gjk.py`` (MuJoCo's
``engine_collision_gjk.c``): the support functions of the primitives
(``mjc_<kind>Support``), the Minkowski-difference vertex, the signed-volume distance
subalgorithm (Montanari, Petrinic & Barbieri, ACM ToG 2017: ``S1D``, ``S2D``, ``S3D``),
``gjk`` (distance, with the Frank–Wolfe duality-gap stop) and ``gjkIntersect``.  Sums
and products in the reference's (MuJoCo's) order; rotations row-major (columns: the
geom axes); a simplex is at most four :c:type:`Vertex` records in a :c:type:`GJKStatus`.
The support dispatch (``_support``) is by kind code; a mesh's (``_mesh_support``) searches
its hull's vertices.
"""

from libc.float cimport DBL_MAX
from libc.math cimport fabs, sqrt

from rbd._kernels._spatial cimport cross3, dot3

#: MuJoCo's ccd_tolerance default (mjOption)
cdef double TOLERANCE = 1e-6
#: mjMAX_LIMIT: GJK's "no distance"
cdef double MAX_LIMIT = DBL_MAX
#: MuJoCo's mjMINVAL
cdef double MINVAL = 1e-15
#: the faces of a tetrahedron (s indices) that gjkIntersect measures, in MuJoCo's order
cdef int TETRA_FACES[12]
TETRA_FACES[:] = [2, 1, 3, 0, 2, 3, 1, 0, 3, 0, 1, 2]


# ----------------------------------------------------------------------------- support functions

cdef inline void _to_world(const double* mat, const double* local, const double* pos,
                           double* out) noexcept nogil:
    # mat @ local + pos in MuJoCo's order of operations (localToGlobal)
    cdef int k
    for k in range(3):
        out[k] = (mat[3 * k] * local[0] + mat[3 * k + 1] * local[1]
                  + mat[3 * k + 2] * local[2]) + pos[k]


cdef inline void _to_local(const double* mat, const double* d, double* out) noexcept nogil:
    # mat.T @ d in MuJoCo's order of operations (mulMatTVec3)
    cdef int k
    for k in range(3):
        out[k] = mat[k] * d[0] + mat[3 + k] * d[1] + mat[6 + k] * d[2]


cdef void _support(ConvexGeom* g, const double* d, double* out) noexcept nogil:
    """World point of the geom farthest along the unit direction ``d`` (MuJoCo's
    ``mjc_<kind>Support``); a point and a line are a sphere's centre and a capsule's
    segment."""
    cdef double local[3]
    cdef double supp[3]
    cdef double norm2, n2, scl, h, c
    cdef int k
    if g.kind == CCD_POINT:
        out[0], out[1], out[2] = g.pos[0], g.pos[1], g.pos[2]
        return
    if g.kind == CCD_LINE:
        # axis · (±half length) + pos
        c = g.mat[2] * d[0] + g.mat[5] * d[1] + g.mat[8] * d[2]
        h = g.size[1] if c >= 0 else -g.size[1]
        for k in range(3):
            out[k] = g.mat[3 * k + 2] * h + g.pos[k]
        return
    if g.kind == CCD_SPHERE:
        for k in range(3):
            out[k] = g.size[0] * d[k] + g.pos[k]
        return
    _to_local(g.mat, d, local)
    if g.kind == CCD_CAPSULE:
        for k in range(3):
            supp[k] = local[k] * g.size[0]
        supp[2] += g.size[1] if local[2] >= 0 else -g.size[1]
    elif g.kind == CCD_ELLIPSOID:
        for k in range(3):
            supp[k] = local[k] * g.size[k]
        norm2 = dot3(supp, supp)
        if norm2 < MINVAL * MINVAL:
            for k in range(3):
                out[k] = g.mat[3 * k] * g.size[0] + g.pos[k]
            return
        for k in range(3):
            supp[k] = supp[k] * ((1 / sqrt(norm2)) * g.size[k])
    elif g.kind == CCD_CYLINDER:
        n2 = local[0] * local[0] + local[1] * local[1]
        scl = g.size[0] / sqrt(n2) if n2 >= MINVAL * MINVAL else 0.0
        supp[0], supp[1] = scl * local[0], scl * local[1]
        supp[2] = g.size[1] if local[2] >= 0 else -g.size[1]
    elif g.kind == CCD_MESH:
        _mesh_support(g, local, supp)
    else:
        # CCD_BOX; its corner (box_corner_index: bit 0, 1, 2 on the +x, +y, +z side)
        for k in range(3):
            supp[k] = g.size[k] if local[k] >= 0 else -g.size[k]
        g.vertindex = (local[0] >= 0) | (2 if local[1] >= 0 else 0) | (4 if local[2] >= 0
                                                                         else 0)
    _to_world(g.mat, supp, g.pos, out)


cdef inline void _mesh_support(ConvexGeom* g, const double* local,
                               double* supp) noexcept nogil:
    # ConvexGeom._mesh_support (mjc_meshSupport): the hull vertex farthest along local (the
    # first of equally far ones), kept at the last support vertex when that one is as far
    cdef const double* v = g.vert
    cdef Py_ssize_t i, best = farthest_vertex(v, g.nvert, local)
    i = g.vertindex
    if i >= 0 and dot3(v + 3 * i, local) >= dot3(v + 3 * best, local):
        best = i
    g.vertindex = best
    for i in range(3):
        supp[i] = v[3 * best + i]


cdef inline void geom_support(ConvexGeom* g, const double* d,
                              double* out) noexcept nogil:
    # ConvexGeom.support: _support, grown by half the pair margin
    cdef int k
    _support(g, d, out)
    if g.margin > 0:
        for k in range(3):
            out[k] = out[k] + d[k] * (0.5 * g.margin)


cdef void vertex(ConvexGeom* g1, ConvexGeom* g2, const double* d,
                 Vertex* out) noexcept nogil:
    """Support of the Minkowski difference along unit ``d``: (s1(d) - s2(-d), s1, s2,
    index1, index2), the indices the geoms' ``vertindex``."""
    cdef double minus[3]
    cdef int k
    for k in range(3):
        minus[k] = -d[k]
    geom_support(g1, d, out.w1)
    geom_support(g2, minus, out.w2)
    for k in range(3):
        out.w[k] = out.w1[k] - out.w2[k]
    out.index1, out.index2 = g1.vertindex, g2.vertindex


cdef bint discrete(const ConvexGeom* g1, const ConvexGeom* g2) noexcept nogil:
    """Whether GJK and EPA end in finitely many steps: two polytopes without margin
    (``discreteGeoms``)."""
    return (g1.margin == 0 and g2.margin == 0 and (g1.kind == CCD_BOX or g1.kind == CCD_MESH)
            and (g2.kind == CCD_BOX or g2.kind == CCD_MESH))


# ----------------------------------------------------------------------------- subdistance

cdef inline int _same_sign(double a, double b) noexcept nogil:
    if a > 0 and b > 0:
        return 1
    if a < 0 and b < 0:
        return -1
    return 0


cdef double det3(const double* a, const double* b, const double* c) noexcept nogil:
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


cdef inline void _project_origin_line(const double* s1, const double* s2,
                                      double* out) noexcept nogil:
    cdef double diff[3]
    cdef double t
    cdef int k
    for k in range(3):
        diff[k] = s2[k] - s1[k]
    t = -(dot3(s2, diff) / dot3(diff, diff))
    for k in range(3):
        out[k] = s2[k] + t * diff[k]


cdef bint project_origin_plane(const double* s1, const double* s2, const double* s3,
                               double* out) noexcept nogil:
    """The origin projected on the plane of three points into ``out``; False if they are
    collinear (the reference's None)."""
    cdef double d21[3]
    cdef double d31[3]
    cdef double d32[3]
    cdef double n[3]
    cdef double nv, nn
    cdef int k, case
    for k in range(3):
        d21[k], d31[k], d32[k] = s2[k] - s1[k], s3[k] - s1[k], s3[k] - s2[k]
    for case in range(2):
        if case == 0:
            cross3(d32, d21, n)
            nv = dot3(n, s2)
        else:
            cross3(d21, d31, n)
            nv = dot3(n, s1)
        nn = dot3(n, n)
        if nn == 0:
            return False
        if nv != 0 and nn > MINVAL:
            for k in range(3):
                out[k] = n[k] * (nv / nn)
            return True
    cross3(d31, d32, n)
    nv, nn = dot3(n, s3), dot3(n, n)
    for k in range(3):
        out[k] = n[k] * (nv / nn)
    return True


cdef void _s1d(const double* s1, const double* s2, double* lam) noexcept nogil:
    """Barycentric coordinates of the point of segment (s1, s2) closest to the origin."""
    cdef double p[3]
    cdef double mu[3]
    cdef double c1, c2
    cdef int k, index = 0
    _project_origin_line(s1, s2, p)
    for k in range(3):
        mu[k] = s1[k] - s2[k]
    for k in range(1, 3):
        if fabs(mu[k]) >= fabs(mu[index]):
            index = k
    c1, c2 = p[index] - s2[index], s1[index] - p[index]
    if _same_sign(mu[index], c1) and _same_sign(mu[index], c2):
        lam[0], lam[1] = c1 / mu[index], c2 / mu[index]
    else:
        lam[0], lam[1] = 0.0, 1.0


cdef void _closest_face(const double* const* simplex, int n, const int* comps,
                        double* best) noexcept nogil:
    """Of the faces opposite each vertex whose sign test failed, the one closest to the
    origin (Montanari et al.: recursion on the lower simplex: _s1d or _s2d)."""
    cdef const double* rest[3]
    cdef double lam[3]
    cdef double x[3]
    cdef double d, dmin = MAX_LIMIT
    cdef int i, j, m, k
    for i in range(n):
        best[i] = 0.0
    for i in range(n):
        if comps[i]:
            continue
        m = 0
        for j in range(n):
            if j != i:
                rest[m] = simplex[j]
                m += 1
        if n == 3:
            _s1d(rest[0], rest[1], lam)
        else:
            _s2d(rest[0], rest[1], rest[2], lam)
        for k in range(3):
            x[k] = lam[0] * rest[0][k]
            for j in range(1, n - 1):
                x[k] = x[k] + lam[j] * rest[j][k]
        d = dot3(x, x)
        if d < dmin:
            m = 0
            for j in range(n):
                if j == i:
                    best[j] = 0.0
                else:
                    best[j] = lam[m]
                    m += 1
            dmin = d


cdef inline double _area(const double* o, const double* u, const double* v, int x,
                         int y) noexcept nogil:
    # signed area of the triangle (o, u, v) on the axes x, y, as MuJoCo's
    return (o[x] * u[y] + o[y] * v[x] + u[x] * v[y] - o[x] * v[y] - o[y] * u[x]
            - v[x] * u[y])


cdef inline double _minor(const double* s1, const double* s2, const double* s3, int x,
                          int y) noexcept nogil:
    # the triangle's projected area on axes x, y (m14, m24, m34 of MuJoCo's S2D)
    return (s2[x] * s3[y] - s2[y] * s3[x] - s1[x] * s3[y] + s1[y] * s3[x] + s1[x] * s2[y]
            - s1[y] * s2[x])


cdef inline double _largest_minor(const double* s1, const double* s2, const double* s3,
                                  int* x, int* y) noexcept nogil:
    # the projection of largest area: its minor and the two axes kept
    cdef double m14 = _minor(s1, s2, s3, 1, 2)
    cdef double m24 = _minor(s1, s2, s3, 0, 2)
    cdef double m34 = _minor(s1, s2, s3, 0, 1)
    cdef double mu1 = fabs(m14), mu2 = fabs(m24), mu3 = fabs(m34)
    if mu1 >= mu2 and mu1 >= mu3:
        x[0], y[0] = 1, 2
        return m14
    if mu2 >= mu3:
        x[0], y[0] = 0, 2
        return m24
    x[0], y[0] = 0, 1
    return m34


cdef void _s2d(const double* s1, const double* s2, const double* s3,
               double* lam) noexcept nogil:
    cdef double p[3]
    cdef double cofactors[3]
    cdef const double* simplex[3]
    cdef int comps[3]
    cdef double m_max
    cdef int x, y, k
    if not project_origin_plane(s1, s2, s3, p):
        _s1d(s1, s2, lam)
        lam[2] = 0.0
        return
    m_max = _largest_minor(s1, s2, s3, &x, &y)
    cofactors[0] = _area(p, s2, s3, x, y)
    cofactors[1] = _area(p, s3, s1, x, y)
    cofactors[2] = _area(p, s1, s2, x, y)
    for k in range(3):
        comps[k] = _same_sign(m_max, cofactors[k])
    if comps[0] and comps[1] and comps[2]:
        for k in range(3):
            lam[k] = cofactors[k] / m_max
        return
    simplex[0], simplex[1], simplex[2] = s1, s2, s3
    _closest_face(simplex, 3, comps, lam)


cdef void _s3d(const double* s1, const double* s2, const double* s3, const double* s4,
               double* lam) noexcept nogil:
    cdef double cofactors[4]
    cdef const double* simplex[4]
    cdef int comps[4]
    cdef double m_det
    cdef int k
    cofactors[0] = -det3(s2, s3, s4)
    cofactors[1] = det3(s1, s3, s4)
    cofactors[2] = -det3(s1, s2, s4)
    cofactors[3] = det3(s1, s2, s3)
    m_det = ((cofactors[0] + cofactors[1]) + cofactors[2]) + cofactors[3]
    for k in range(4):
        comps[k] = _same_sign(m_det, cofactors[k])
    if comps[0] and comps[1] and comps[2] and comps[3]:
        for k in range(4):
            lam[k] = cofactors[k] / m_det
        return
    simplex[0], simplex[1], simplex[2], simplex[3] = s1, s2, s3, s4
    _closest_face(simplex, 4, comps, lam)


cdef void _subdistance(const Vertex* points, int n, double* lam) noexcept nogil:
    """Barycentric coordinates of the simplex point closest to the origin (``subdistance``)."""
    if n == 4:
        _s3d(points[0].w, points[1].w, points[2].w, points[3].w, lam)
    elif n == 3:
        _s2d(points[0].w, points[1].w, points[2].w, lam)
    elif n == 2:
        _s1d(points[0].w, points[1].w, lam)
    else:
        lam[0] = 1.0


# ----------------------------------------------------------------------------- GJK

cdef double _signed_distance(const double* v1, const double* v2, const double* v3,
                             double* normal) noexcept nogil:
    """Distance of the origin below the face (v1, v2, v3) and its unit normal."""
    cdef double a[3]
    cdef double b[3]
    cdef double norm2, scale
    cdef int k
    for k in range(3):
        a[k], b[k] = v3[k] - v1[k], v2[k] - v1[k]
    cross3(a, b, normal)
    norm2 = dot3(normal, normal)
    if MINVAL * MINVAL < norm2 < 1e20:
        # mjMINVAL², mjMAXVAL²
        scale = 1 / sqrt(norm2)
        for k in range(3):
            normal[k] = normal[k] * scale
        return dot3(normal, v1)
    return MAX_LIMIT


cdef int _gjk_intersect(GJKStatus* status, ConvexGeom* g1,
                        ConvexGeom* g2) noexcept nogil:
    """1 if the tetrahedron can be grown to hold the origin, 0 if a separating plane is
    found, -1 if inconclusive (``gjkIntersect``)."""
    cdef Vertex simplex[4]
    cdef double normals[12]
    cdef double dist[4]
    cdef int s[4]
    cdef const int* faces = TETRA_FACES
    cdef int f, m, i, j, index, k = status.iterations
    for m in range(4):
        simplex[m], s[m] = status.simplex[m], m
    while k < ITERATIONS:
        for f in range(4):
            dist[f] = _signed_distance(simplex[s[faces[3 * f]]].w, simplex[s[faces[3 * f + 1]]].w,
                                       simplex[s[faces[3 * f + 2]]].w, normals + 3 * f)
        if not (dist[0] and dist[1] and dist[2] and dist[3]):
            status.iterations = k
            return -1
        i = 0 if dist[0] < dist[1] else 1
        j = 2 if dist[2] < dist[3] else 3
        index = i if dist[i] < dist[j] else j
        if dist[index] > 0:
            for m in range(4):
                status.simplex[m] = simplex[s[m]]
            status.nsimplex, status.iterations = 4, k
            return 1
        vertex(g1, g2, normals + 3 * index, &simplex[s[index]])
        if dot3(normals + 3 * index, simplex[s[index]].w) < 0:
            status.nsimplex, status.iterations = 0, k
            return 0
        i, j = (index + 1) & 3, (index + 2) & 3
        s[i], s[j] = s[j], s[i]
        k += 1
    status.iterations = k
    return -1


cdef inline void _direction(const double* x_k, double x_norm, double* d) noexcept nogil:
    # -(x_k * (1 / x_norm))
    cdef int k
    for k in range(3):
        d[k] = -(x_k[k] * (1 / x_norm))


cdef inline int _keep(Vertex* simplex, double* lam, int n) noexcept nogil:
    # drop the vertices of zero weight (simplex and lam compacted); the number kept
    cdef int i, m = 0
    for i in range(n):
        if lam[i]:
            simplex[m], lam[m] = simplex[i], lam[i]
            m += 1
    return m


cdef inline void _witness(GJKStatus* status, const Vertex* simplex, const double* lam,
                          int n) noexcept nogil:
    # status.x1, status.x2: the weights on the geoms' points of the simplex
    cdef const double* v1[4]
    cdef const double* v2[4]
    cdef int i
    for i in range(n):
        v1[i], v2[i] = simplex[i].w1, simplex[i].w2
    lincomb(lam, v1, n, status.x1)
    lincomb(lam, v2, n, status.x2)


cdef void gjk(GJKStatus* status, ConvexGeom* g1, ConvexGeom* g2) noexcept nogil:
    """MuJoCo's ``gjk``: the distance between the geoms (``dist_cutoff`` > 0) or whether
    they touch (``dist_cutoff`` = 0, through ``_gjk_intersect`` once a tetrahedron forms);
    witness points in ``status.x1``, ``status.x2``, the final simplex in ``status.simplex``."""
    cdef bint get_dist = status.dist_cutoff > 0
    cdef bint backup = not get_dist
    cdef Vertex simplex[4]
    cdef const double* ws[4]
    cdef double lam[4]
    cdef double x_k[3]
    cdef double d[3]
    cdef double gap[3]
    cdef double tol2 = TOLERANCE * TOLERANCE
    cdef double epsilon = 0.5 * tol2, min_norm = TOLERANCE
    cdef double x_norm, x_norm_prev = 0.0, lower
    cdef int n = 0, k = 0, i, ret
    lam[0] = 1.0
    if discrete(g1, g2):
        # finite convergence: no tolerance
        epsilon, min_norm = 0.0, MINVAL
    for i in range(3):
        x_k[i] = status.x1[i] - status.x2[i]
    x_norm = sqrt(dot3(x_k, x_k))
    while k < ITERATIONS:
        if x_norm < min_norm or fabs(x_norm_prev - x_norm) < MINVAL:
            break
        _direction(x_k, x_norm, d)
        vertex(g1, g2, d, &simplex[n])
        for i in range(3):
            gap[i] = x_k[i] - simplex[n].w[i]
        if dot3(x_k, gap) < epsilon:
            # Frank–Wolfe duality gap
            break
        lower = dot3(x_k, simplex[n].w)
        n += 1
        if (not get_dist and lower > 0) or (
                get_dist and status.dist_cutoff < MAX_LIMIT and lower > 0
                and lower >= status.dist_cutoff * x_norm):
            status.separated, status.iterations, status.nsimplex = 1, k, 0
            status.dist = MAX_LIMIT
            return
        if n == 4 and backup:
            status.iterations, status.nsimplex = k, 4
            for i in range(4):
                status.simplex[i] = simplex[i]
            ret = _gjk_intersect(status, g1, g2)
            if ret != -1:
                status.separated = ret == 0
                status.dist = 0.0 if ret > 0 else MAX_LIMIT
                return
            k, backup = status.iterations, False
        _subdistance(simplex, n, lam)
        n = _keep(simplex, lam, n)
        if n == 0:
            status.separated, status.iterations, status.nsimplex = 1, k, 0
            status.dist = MAX_LIMIT
            return
        for i in range(n):
            ws[i] = simplex[i].w
        lincomb(lam, ws, n, x_k)
        x_norm_prev, x_norm = x_norm, sqrt(dot3(x_k, x_k))
        k += 1
        if n == 4:
            break
    _finish(status, g1, g2, simplex, lam, n, x_k, x_norm, k)


cdef inline void _finish(GJKStatus* status, ConvexGeom* g1, ConvexGeom* g2,
                         const Vertex* simplex, const double* lam, int n, const double* x_k,
                         double x_norm, int k) noexcept nogil:
    # gjk's end: witness points, the separation test, the distance and the simplex
    cdef Vertex probe
    cdef double d[3]
    cdef int i
    if n:
        _witness(status, simplex, lam, n)
    if x_norm > 0:
        # separated?
        _direction(x_k, x_norm, d)
        vertex(g1, g2, d, &probe)
        if dot3(x_k, probe.w) > 0:
            status.separated = 1
    status.iterations, status.nsimplex = k, n
    for i in range(n):
        status.simplex[i] = simplex[i]
    status.dist = 0.0 if (n == 4 and not status.separated) else x_norm


cdef void lincomb(const double* coef, const double* const* vectors, int n,
                  double* out) noexcept nogil:
    """``coef[0] v[0] + coef[1] v[1] + ...`` in MuJoCo's order of operations (``lincomb``)."""
    cdef double acc[3]
    cdef int i, k
    for k in range(3):
        acc[k] = coef[0] * vectors[0][k]
    for i in range(1, n):
        for k in range(3):
            acc[k] = acc[k] + coef[i] * vectors[i][k]
    for k in range(3):
        out[k] = acc[k]
