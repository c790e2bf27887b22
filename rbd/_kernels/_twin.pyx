# cython: language_level=3
"""A compiled twin of a Model for the forward-dynamics variant kernels (see ``_twin.pxd``).

Built from the same flat arrays as ``CompiledModel`` (``Model.flat_arrays()``:
parent array, joint codes and parameters, tree transforms as ``(E, r)``,
inertias) and bound to one :class:`rbd.data.Data` workspace.  ``twin(model)``
caches it on the model (rebuilt when the model changes), ``arguments``
validates a call exactly as the reference path of :mod:`rbd.algorithms` does.
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.math cimport fabs, isfinite, sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from rbd._kernels._model cimport J_SYMBOLIC, MAX_JOINT_NV, jcalc_fn

import numpy as np

from rbd.algorithms import QUATERNION_TOLERANCE, _validate
from rbd.data import Data
from rbd.errors import ModelError

cnp.import_array()

cdef double _QUATERNION_TOLERANCE = QUATERNION_TOLERANCE

__all__ = ["KernelTwin", "twin", "arguments"]


cdef inline const int64_t* _ints(object arr):
    return <const int64_t*>cnp.PyArray_DATA(arr)


cdef inline const double* _reals(object arr):
    return <const double*>cnp.PyArray_DATA(arr)


cdef class KernelTwin:
    """``ModelC`` and a ``Work`` workspace for one model (see the module docstring)."""

    def __cinit__(self):
        self.jfun = NULL

    def __init__(self, model):
        flat = model.flat_arrays()
        nb = model.nbodies
        ints = {k: np.ascontiguousarray(flat[k], dtype=np.int64) for k in
                ("parent", "jtype", "q_start", "v_start", "nq_j", "nv_j")}
        reals = {k: np.ascontiguousarray(flat[k], dtype=np.float64) for k in
                 ("jparams", "E_tree", "r_tree", "com", "inertia")}
        inertia = reals["inertia"].reshape(nb, 6, 6)
        # m, h = m c and Ī from the spatial inertia [[Ī, h̃], [h̃ᵀ, m 1]]
        reals["mass"] = np.ascontiguousarray(inertia[:, 5, 5])
        reals["h"] = np.ascontiguousarray(
            np.stack([inertia[:, 2, 4], inertia[:, 0, 5], inertia[:, 1, 3]], axis=-1))
        reals["Ibar"] = np.ascontiguousarray(inertia[:, :3, :3])
        self._joint_names = [b.joint_name for b in model.bodies]
        # where each unit quaternion sits in q (spherical: q_i, free: q_i[3:7])
        quats = [(model.q_index(i).start + (3 if b.joint.kind == "free" else 0), b.joint_name)
                 for i, b in enumerate(model.bodies) if b.joint.kind in ("spherical", "free")]
        ints["quat_start"] = np.array([start for start, _ in quats] or [0], dtype=np.int64)
        self.nquat = len(quats)
        self.quat_start = _ints(ints["quat_start"])
        self._quat_names = [name for _, name in quats]
        self._arrays = (ints, reals)
        self.model = model
        memset(&self.m, 0, sizeof(ModelC))
        self.m.nb = nb
        self.m.nq = model.nq
        self.m.nv = model.nv
        self.m.parent = _ints(ints["parent"])
        self.m.jtype = _ints(ints["jtype"])
        self.m.q_start = _ints(ints["q_start"])
        self.m.v_start = _ints(ints["v_start"])
        self.m.nq_j = _ints(ints["nq_j"])
        self.m.nv_j = _ints(ints["nv_j"])
        self.m.jparams = _reals(reals["jparams"])
        self.m.E_tree = _reals(reals["E_tree"])
        self.m.r_tree = _reals(reals["r_tree"])
        self.m.mass = _reals(reals["mass"])
        self.m.com = _reals(reals["com"])
        self.m.h = _reals(reals["h"])
        self.m.Ibar = _reals(reals["Ibar"])
        self.m.inertia = _reals(reals["inertia"])
        g = np.asarray(flat["gravity"], dtype=np.float64)
        for k in range(3):
            # a_0 = [0; -g]
            self.m.gravity[k] = g[k]
            self.m.a0[k] = 0.0
            self.m.a0[3 + k] = -g[k]
        self._joint_functions(model)
        self.data = Data(model)
        self._bind()

    def __dealloc__(self):
        free(self.jfun)

    cdef int _joint_functions(self, model) except -1:
        # the generated C jcalc of each symbolic joint (NULL for the built-in joints)
        cdef Py_ssize_t i, nb = self.m.nb
        self.jfun = <jcalc_fn*>malloc(max(nb, 1) * sizeof(jcalc_fn))
        if self.jfun == NULL:
            raise MemoryError()
        self.m.jfun = self.jfun
        self._capsules = []
        for i, body in enumerate(model.bodies):
            self.jfun[i] = NULL
            if self.m.nv_j[i] > MAX_JOINT_NV:
                raise ModelError(f"joint {body.joint_name!r} has {self.m.nv_j[i]} degrees of "
                                 f"freedom; the kernels handle at most {MAX_JOINT_NV}")
            if self.m.jtype[i] == J_SYMBOLIC:
                make = getattr(body.joint, "kernel_capsule", None)
                capsule = make() if make is not None else None
                if capsule is None or not PyCapsule_IsValid(capsule, b"rbd.jcalc"):
                    raise ModelError(f"symbolic joint {body.joint_name!r} has no compiled C "
                                     f"function; use the reference derivations for this model")
                self.jfun[i] = <jcalc_fn>PyCapsule_GetPointer(capsule, b"rbd.jcalc")
                self._capsules.append(capsule)
        return 0

    cdef int _bind(self) except -1:
        # point the workspace arrays used by the variant kernels into data.buffer
        cdef double* base = <double*>cnp.PyArray_DATA(self.data.buffer)
        off = {name: offset for name, (offset, _) in self.data.offsets.items()}
        memset(&self.w, 0, sizeof(Work))
        self.w.E_up = base + <Py_ssize_t>off["E_up"]
        self.w.r_up = base + <Py_ssize_t>off["r_up"]
        self.w.S = base + <Py_ssize_t>off["S_cols"]
        self.w.c_J = base + <Py_ssize_t>off["c_J"]
        self.w.v = base + <Py_ssize_t>off["v"]
        self.w.a = base + <Py_ssize_t>off["a"]
        self.w.f = base + <Py_ssize_t>off["f"]
        self.w.c = base + <Py_ssize_t>off["c"]
        self.w.pA = base + <Py_ssize_t>off["pA"]
        self.w.IA = base + <Py_ssize_t>off["IA"]
        self.w.U = base + <Py_ssize_t>off["U_cols"]
        self.w.D = base + <Py_ssize_t>off["D"]
        self.w.D_inv = base + <Py_ssize_t>off["D_inv"]
        self.w.u = base + <Py_ssize_t>off["u"]
        self.w.scratch = base + <Py_ssize_t>off["scratch"]
        return 0

    cdef int raise_status(self, int status) except -1:
        raise ModelError(
            f"forward dynamics is undefined: the articulated inertia D of joint "
            f"{self._joint_names[status - 1]!r} is not positive definite "
            f"(the joint moves no inertia)")


def twin(model):
    """The cached :class:`KernelTwin` of ``model``."""
    try:
        return model._cache["kernel-twin"]
    except KeyError:
        model._cache["kernel-twin"] = KernelTwin(model)
        return model._cache["kernel-twin"]


cdef inline bint _plain(object x, Py_ssize_t n):
    # a C-contiguous float64 vector of length n, usable without a copy
    return (type(x) is cnp.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1 and cnp.PyArray_DIMS(<cnp.ndarray>x)[0] == n
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>x))


cdef bint _finite(object x):
    cdef const double* p = <const double*>cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    for i in range(n):
        if not isfinite(p[i]):
            return False
    return True


cdef bint _unit_quaternions(KernelTwin t, object q):
    cdef const double* p = <const double*>cnp.PyArray_DATA(<cnp.ndarray>q)
    cdef const double* quat
    cdef Py_ssize_t j
    for j in range(t.nquat):
        quat = p + t.quat_start[j]
        if fabs(sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                     + quat[3] * quat[3]) - 1.0) > _QUATERNION_TOLERANCE:
            return False
    return True


def arguments(model, q, v, tau, f_ext):
    """Validated C-contiguous ``(q, v, tau, f_ext)`` with a leading batch axis, and ``N``.

    ``N`` is ``-1`` for a single state (the arrays then have one row).  One state
    given as float64 vectors is checked here in compiled code; anything else (and
    every failure, for its message) goes through :func:`rbd.algorithms._validate`.
    """
    cdef KernelTwin t = twin(model)
    if (f_ext is None and _plain(q, t.m.nq) and _plain(v, t.m.nv) and _plain(tau, t.m.nv)
            and _finite(q) and _finite(v) and _finite(tau) and _unit_quaternions(t, q)):
        return [q.reshape(1, -1), v.reshape(1, -1), tau.reshape(1, -1), None], -1
    specs = (("q", "q"), ("v", "v"), ("tau", "v"), ("f_ext", "f"))
    arrays, batch = _validate(model, specs, (q, v, tau, f_ext))
    rows = 1 if batch is None else batch
    out = [None if a is None else np.ascontiguousarray(a, dtype=np.float64).reshape(rows, -1)
           for a in arrays]
    return out, (-1 if batch is None else batch)
