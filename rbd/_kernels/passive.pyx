# cython: language_level=3
"""MuJoCo's passive forces, compiled (``mj_passive``, ``engine_passive.c``).

The compiled twin of ``rbd/constraints/passive.py``: joint damping, the springs of
hinges and slides and the fixed tendons' springs and dampers (``tendon_rows.pyx``), as
rbd's generalized force τ_p, read from the static data of the forward pass
(``ForwardC``, ``forward.pxd``).  The fluid forces (``fluid.pyx``) are added by
``forward.pyx`` once it has the world poses.
"""

from rbd._kernels.forward cimport ForwardC
from rbd._kernels.tendon_rows cimport tendon_passive_force


cdef void passive_force(const ForwardC* f, const double* q, const double* v,
                        double* out) noexcept nogil:
    """out = −damping v − k (q − q_spring) on hinges and slides (mj_passive)."""
    cdef Py_ssize_t j, s
    for j in range(f.nv):
        out[j] = -f.damping[j] * v[j]
    for s in range(f.nspring):
        j = f.spring_v[s]
        out[j] -= f.spring_k[s] * (q[f.spring_q[s]] - f.spring_ref[s])
    tendon_passive_force(f.tendon, q, v, out)
