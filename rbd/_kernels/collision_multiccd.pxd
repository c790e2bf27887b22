# cython: language_level=3
# MuJoCo 4.0's multi-CCD of a face against a face or a capsule's side
# (collision_multiccd.pyx), for the mesh pairs of collision_mesh.pyx.
from rbd._kernels.collision_gjk cimport CCD_BOX, CCD_CAPSULE, CCD_CYLINDER, CCD_MESH, ConvexGeom
from rbd._kernels.collision_primitive cimport PairOut


cdef int c_contacts(ConvexGeom* g1, ConvexGeom* g2, double margin,
                    PairOut* out) noexcept nogil


cdef inline bint _face_kind(int kind) noexcept nogil:
    # a kind with faces: a box, a mesh, a cylinder's caps (FACE_KINDS)
    return kind == CCD_BOX or kind == CCD_MESH or kind == CCD_CYLINDER


cdef inline bint supported(int kind1, int kind2) noexcept nogil:
    # whether MuJoCo 4.0 looks for several contacts of the pair: a face against a face or
    # against a capsule's side (_supports_multiccd)
    return ((_face_kind(kind1) and (_face_kind(kind2) or kind2 == CCD_CAPSULE))
            or (kind1 == CCD_CAPSULE and _face_kind(kind2)))
