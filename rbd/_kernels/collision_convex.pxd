# cython: language_level=3
# The convex pairs of collision_convex.pyx (MuJoCo's mjc_Convex through GJK and EPA), each in
# pair_function's signature for collision.pyx's pair table.  A routine returns the number of
# contacts (0 or 1; up to MAX_CONTACTS for two boxes or meshes without margin and, through
# MuJoCo 4.0's multi-CCD, for a cylinder with a capsule, a cylinder or a box), or -1 when a
# cylinder's cap is clipped to more than four points (unsupported).
from rbd._kernels.collision_gjk cimport (CCD_BOX, CCD_CAPSULE, CCD_CYLINDER, CCD_ELLIPSOID,
                                         CCD_MESH, CCD_SPHERE, ConvexGeom, geom_init)
from rbd._kernels.collision_multi cimport MAX_CONTACTS
from rbd._kernels.collision_primitive cimport PairOut


cdef double bounding_radius(int kind, const double* size) noexcept nogil
cdef int c_convex(ConvexGeom* g1, ConvexGeom* g2, double margin, double rbound1,
                  double rbound2, bint multiccd, PairOut* out) noexcept nogil


cdef inline int max_contacts(int kind1, int kind2, double margin, bint multiccd) noexcept nogil:
    # how many contacts one GJK/EPA run may give (MuJoCo's maxContacts): MAX_CONTACTS for two
    # boxes or meshes without margin and with multi-CCD, else one
    if ((kind1 == CCD_BOX or kind1 == CCD_MESH) and (kind2 == CCD_BOX or kind2 == CCD_MESH)
            and multiccd and not margin > 0):
        return MAX_CONTACTS
    return 1


cdef inline int _pair(int kind1, int kind2, const double* pos1, const double* mat1,
                      const double* size1, const double* pos2, const double* mat2,
                      const double* size2, double margin, PairOut* out) noexcept nogil:
    # _pair_routine: convex with the pair's kinds, bounding radii and multi-CCD on
    cdef ConvexGeom g1, g2
    geom_init(&g1, kind1, pos1, mat1, size1, margin)
    geom_init(&g2, kind2, pos2, mat2, size2, margin)
    return c_convex(&g1, &g2, margin, bounding_radius(kind1, size1),
                    bounding_radius(kind2, size2), True, out)


cdef inline int convex_sphere_ellipsoid(const double* pos1, const double* mat1,
                                        const double* size1, const double* pos2,
                                        const double* mat2, const double* size2,
                                        double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_SPHERE, CCD_ELLIPSOID, pos1, mat1, size1, pos2, mat2, size2, margin, out)


cdef inline int convex_capsule_ellipsoid(const double* pos1, const double* mat1,
                                         const double* size1, const double* pos2,
                                         const double* mat2, const double* size2,
                                         double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_CAPSULE, CCD_ELLIPSOID, pos1, mat1, size1, pos2, mat2, size2, margin, out)


cdef inline int convex_capsule_cylinder(const double* pos1, const double* mat1,
                                        const double* size1, const double* pos2,
                                        const double* mat2, const double* size2,
                                        double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_CAPSULE, CCD_CYLINDER, pos1, mat1, size1, pos2, mat2, size2, margin, out)


cdef inline int convex_ellipsoid_ellipsoid(const double* pos1, const double* mat1,
                                           const double* size1, const double* pos2,
                                           const double* mat2, const double* size2,
                                           double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_ELLIPSOID, CCD_ELLIPSOID, pos1, mat1, size1, pos2, mat2, size2, margin,
                 out)


cdef inline int convex_ellipsoid_cylinder(const double* pos1, const double* mat1,
                                          const double* size1, const double* pos2,
                                          const double* mat2, const double* size2,
                                          double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_ELLIPSOID, CCD_CYLINDER, pos1, mat1, size1, pos2, mat2, size2, margin,
                 out)


cdef inline int convex_ellipsoid_box(const double* pos1, const double* mat1,
                                     const double* size1, const double* pos2,
                                     const double* mat2, const double* size2,
                                     double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_ELLIPSOID, CCD_BOX, pos1, mat1, size1, pos2, mat2, size2, margin, out)


cdef inline int convex_cylinder_cylinder(const double* pos1, const double* mat1,
                                         const double* size1, const double* pos2,
                                         const double* mat2, const double* size2,
                                         double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_CYLINDER, CCD_CYLINDER, pos1, mat1, size1, pos2, mat2, size2, margin, out)


cdef inline int convex_cylinder_box(const double* pos1, const double* mat1,
                                    const double* size1, const double* pos2,
                                    const double* mat2, const double* size2,
                                    double margin, PairOut* out) noexcept nogil:
    return _pair(CCD_CYLINDER, CCD_BOX, pos1, mat1, size1, pos2, mat2, size2, margin, out)
