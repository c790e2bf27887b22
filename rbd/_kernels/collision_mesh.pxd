# cython: language_level=3
# Mesh geoms through their convex hull (collision_mesh.pyx): the hull in C, its mesh frame,
# and the pair routines of collision.pyx's pair table for pairs with a mesh.
from rbd._kernels._spatial cimport mat3_mul, mat3_vec
from rbd._kernels.collision_gjk cimport HullC
from rbd._kernels.collision_primitive cimport PairOut


cdef class Hull:
    cdef HullC c
    cdef tuple arrays         # the arrays c points into


cdef int c_plane_mesh(const double* pos1, const double* mat1, const double* pos2,
                      const double* mat2, const HullC* hull, double margin,
                      PairOut* out) noexcept nogil
cdef int c_mesh_pair(int kind1, int kind2, const double* pos1, const double* mat1,
                     const double* size1, const HullC* hull1, double rbound1,
                     const double* pos2, const double* mat2, const double* size2,
                     const HullC* hull2, double rbound2, double margin, bint multiccd,
                     PairOut* out) noexcept nogil


cdef inline void placed(const HullC* hull, double* pos, double* mat) noexcept nogil:
    # placed: the mesh frame's world pose from the geom's, in place (pos + mat c, mat R)
    cdef double moved[3]
    cdef double turned[9]
    cdef int k
    mat3_vec(mat, hull.c, moved)
    mat3_mul(mat, hull.R, turned)
    for k in range(3):
        pos[k] = pos[k] + moved[k]
    for k in range(9):
        mat[k] = turned[k]


cdef inline void mesh_world_aabb(const HullC* hull, const double* pos, const double* mat,
                                 double inflate, double* lower,
                                 double* upper) noexcept nogil:
    # mesh_world_aabb (makeAAMM): the hull's box turned to the world, cut by the sphere of
    # radius rbound about the mesh-frame origin, grown by margin + gap
    cdef double centre, half
    cdef int k
    for k in range(3):
        centre = (mat[3 * k] * hull.center[0] + mat[3 * k + 1] * hull.center[1]
                  + mat[3 * k + 2] * hull.center[2]) + pos[k]
        half = (abs(mat[3 * k]) * hull.half[0] + abs(mat[3 * k + 1]) * hull.half[1]
                + abs(mat[3 * k + 2]) * hull.half[2])
        lower[k] = max(pos[k] - hull.rbound, centre - half) - inflate
        upper[k] = min(pos[k] + hull.rbound, centre + half) + inflate
