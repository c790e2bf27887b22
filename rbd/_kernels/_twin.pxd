# cython: language_level=3
"""A compiled twin of a Model for the forward-dynamics variant kernels.

``block_elimination.pyx`` and ``ploen.pyx`` run on the same ``ModelC`` /
``Work`` records (``_model.pxd``) as the other kernels.  ``KernelTwin`` fills
them from ``Model.flat_arrays()`` and a :class:`rbd.data.Data` workspace, the
way :class:`~rbd._kernels._model.CompiledModel` does, so that the variants can
be called before they are wired into ``CompiledModel``'s dispatch.
"""

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work, jcalc_fn


cdef class KernelTwin:
    cdef ModelC m
    cdef Work w
    cdef jcalc_fn* jfun
    cdef object _arrays
    cdef object _capsules
    cdef object _joint_names
    cdef object _quat_names
    cdef const int64_t* quat_start
    cdef Py_ssize_t nquat
    cdef readonly object data
    cdef readonly object model

    cdef int _joint_functions(self, model) except -1
    cdef int _bind(self) except -1
    cdef int raise_status(self, int status) except -1
