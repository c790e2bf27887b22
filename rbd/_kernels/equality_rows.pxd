# cython: language_level=3
"""MuJoCo's soft equality rows, compiled (``equality_rows.pyx``): the static data of one
model's active equality constraints and the C entry point the compiled forward pass calls."""

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.constraints cimport Rows


cdef struct EqualityC:
    # the active equality constraints of one model (``EqualityModel`` fills it once)
    Rows rows                     # the packed records (constraints.pxd): kind, a, b, T_a, T_b
    const double* k               # n: reference stiffness and damping (solref)
    const double* b
    const double* solimp          # n × 5, clamped
    const double* torquescale     # n (welds)
    const double* weight          # n × 2: Â of the translation rows and of the rotation rows
    const double* sign0           # n: sign of MuJoCo's weld error at qpos0 (0: never flips)
    const double* frame_quat      # n × 8: rotations of T_a and T_b, (w, x, y, z)
    const double* tree_quat       # nb × 4: rotation of X_treeᵀ, (w, x, y, z)
    const int64_t* chain_kind     # nb: 0 no rotation (slide, fixed), 1 hinge, 2 quaternion
    const int64_t* chain_q        # nb: the hinge's angle or the quaternion's first entry in q
    const double* axis            # nb × 3: the hinges' axes


cdef Py_ssize_t equality_rows(const EqualityC* e, const ModelC* model, Work* w, const double* q,
                              const double* v, double* J, double* aref, double* R,
                              int64_t* ids) noexcept nogil


cdef class EqualityModel:
    cdef EqualityC c
    cdef object keep
    cdef readonly Py_ssize_t m    # rows in all


cdef inline const EqualityC* equality_c(object model):
    # the static data of an EqualityModel, NULL for None
    return NULL if model is None else &(<EqualityModel>model).c
