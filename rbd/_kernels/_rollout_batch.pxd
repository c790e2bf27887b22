# cython: language_level=3
"""The checks and batch runner of ``CompiledModel.rollout`` (``_rollout_batch.pyx``)."""

from rbd._kernels._base cimport CompiledBase
from rbd._kernels._soa cimport SoaKernels


cdef tuple run_rollout(CompiledBase km, object q0, object v0, object times,
                       object integrator, Py_ssize_t stride, object tau, object f_ext,
                       object q_ref, object kp, object kd, object damping, bint keep_tau,
                       object num_threads, object grid, const SoaKernels* lanes,
                       object constraints=*, object baumgarte=*)
