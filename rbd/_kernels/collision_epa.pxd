# cython: language_level=3
# EPA (collision_epa.pyx), for the convex driver.
from rbd._kernels.collision_gjk cimport ConvexGeom, Vertex


cdef bint penetration(const Vertex* simplex, int nsimplex, ConvexGeom* g1,
                      ConvexGeom* g2, double* dist, double* x1,
                      double* x2) noexcept nogil
cdef bint penetration_face(const Vertex* simplex, int nsimplex, ConvexGeom* g1,
                           ConvexGeom* g2, double* dist, double* x1, double* x2,
                           Vertex* face_verts) noexcept nogil
