# cython: language_level=3
"""MuJoCo's fluid forces, compiled (``fluid.pyx``): the static data of one model's fluid
bodies and the C entry point the compiled forward pass calls."""

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work


cdef struct FluidC:
    # ``<option density viscosity wind>`` and the bodies they act on (``FluidModel`` fills it)
    double density
    double viscosity
    double wind[3]
    Py_ssize_t n                  # boxes and ellipsoids, in the reference's order
    const int64_t* kind           # n: 0 an inertia box, 1 an ellipsoid geom
    const int64_t* body           # n: rbd body index
    const double* frame           # n × 12: the box's or geom's axes in the body frame (3×3),
                                  #   then its centre in the body frame
    const double* shape           # n × 14: box sides (3); or semi-axes (3), fluidcoef (5),
                                  #   virtual mass (3) and inertia (3) per unit density


cdef void fluid_force(const FluidC* fl, const ModelC* model, Work* w, const double* v,
                      double* out) noexcept nogil


cdef class FluidModel:
    cdef FluidC c
    cdef object keep


cdef inline const FluidC* fluid_c(object model):
    # the static data of a FluidModel, NULL for None
    return NULL if model is None else &(<FluidModel>model).c
