# cython: language_level=3
"""The compiled twin of a :class:`rbd.Model`: flat typed arrays, a workspace, validation.

The dispatch and validation layer of the kernels, not a derivation: it has
no reference twin (the reference path validates in :mod:`rbd.algorithms` with
the same conversions from :mod:`rbd._validation`).  ``CompiledModel(model)`` is a
``CompiledBase`` (``_base.pyx``: ``ModelC`` of ``_model.pxd`` filled from
``model.flat_arrays()``, a workspace, an :class:`rbd.data.Data`).  Its methods,
behind ``rbd.rnea``, ``rbd.crba``, ``rbd.aba``, ..., check their arguments in
compiled code (``_args.pyx``; :class:`rbd.InputError` naming the argument), then
run ``rnea.pyx``, ``crba.pyx``, ``aba.pyx``, ``kinematics.pyx``, ``ploen.pyx`` or
``derivatives.pyx``; ``rollout`` runs fixed-step simulations through
``_rollout_batch.pyx``.

* A single state (``q`` of shape ``(nq,)``) runs in the model's own workspace
  with the GIL held; ``CompiledModel.data`` then shows its intermediate quantities.
* A batch (a leading axis ``N``) runs with the GIL released: in lanes of W states
  (``soa*.pxi``, ``_run_lanes``) where a lane kernel exists, else ``prange`` over
  the states, one workspace per thread (serially in a child forked after a parallel
  batch: the fork rule of ``_base.pyx``).  ``N = 0`` gives an empty result.  A
  batch's values (finite entries, unit quaternions) are checked block by block in its
  threads (``_args.check_rows``; ``CompiledBase._settle`` raises what failed).

C-contiguous float64 arrays are used in place; anything else is converted
once.  Inputs are never written to.
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport prange, threadid
from libc.stdlib cimport free, malloc

from rbd._kernels cimport aba as _aba
from rbd._kernels cimport crba as _crba
from rbd._kernels cimport derivatives as _deriv
from rbd._kernels cimport kinematics as _kin
from rbd._kernels cimport ploen as _ploen
from rbd._kernels cimport rnea as _rnea
from rbd._kernels cimport _args
from rbd._kernels._args cimport Call
from rbd._kernels cimport _base
from rbd._kernels cimport _rollout_batch
from rbd._kernels._soa cimport SOA_ABA, SOA_ABA_DERIVATIVES, SOA_CRBA, SOA_RNEA
from rbd._kernels._soa cimport SOA_RNEA_DERIVATIVES, SoaKernels

# ModelC, Work and the joint codes come from _model.pxd (included automatically).

import numpy as np

from rbd._kernels._base import JCALC_CAPSULE, _is_model, column_slots
from rbd._kernels._base import parallel_batches_available
from rbd._kernels._simd import at_import as _simd_at_import
from rbd._kernels._simd import choose as _simd_choose
from rbd._validation import as_time_step
from rbd.errors import InputError, ModelError

cnp.import_array()

__all__ = ["CompiledModel", "compiled_model", "column_slots", "simd", "set_simd"]


# --- batches in lanes: which build of soa.pxi runs (rbd/_kernels/_simd.py) ---------------
cdef const SoaKernels* _soa = NULL
_simd = "off"


def set_simd(choice: str = "auto") -> str:
    """Choose the lane kernels of batches (RNEA, ABA, CRBA, derivatives, rollouts); returns
    the previous choice.

    ``choice`` as the environment variable ``RBD_SIMD`` (``_simd.SIMD_CHOICES``):
    ``"auto"`` picks the widest build this CPU runs (AVX-512, AVX2, else portable),
    ``"off"`` runs batches state by state with the one-state kernels.  A build the
    CPU cannot run, or that was not built, is refused (:class:`rbd.InputError`).
    """
    global _soa, _simd
    build, capsule = _simd_choose(choice)
    previous = _simd
    if capsule is None:
        _soa = NULL
    else:
        if not PyCapsule_IsValid(capsule, b"rbd.soa"):
            raise ModelError(f"rbd._kernels._soa_{build}.kernels() returned no kernel table")
        _soa = <const SoaKernels*>PyCapsule_GetPointer(capsule, b"rbd.soa")
    _simd = build
    return previous


def simd() -> str:
    """The lane kernels batches run on: ``"avx512"``, ``"avx2"``, ``"portable"`` or ``"off"``."""
    return _simd


set_simd(_simd_at_import())


cdef enum Task:
    T_RNEA
    T_NONLINEAR
    T_GRAVITY
    T_CRBA
    T_ABA
    T_ABA_MODIFIED
    T_PLOEN
    T_MINV
    T_KINETIC
    T_POTENTIAL
    T_FK
    T_COM
    T_BODY_COM
    T_JACOBIAN
    T_INTEGRATE
    T_RNEA_DERIVATIVES
    T_ABA_DERIVATIVES


cdef inline int run_one(const ModelC* m, Work* w, const Call* c, Py_ssize_t k) noexcept nogil:
    # Run the task of c on state k in workspace w; returns the kernel's status.
    cdef const double* q = c.x[0] + k * c.stride[0]
    cdef const double* x1 = NULL
    cdef const double* x2 = NULL
    cdef const double* f = NULL
    cdef double* out = c.out + k * c.out_stride
    if c.x[1] != NULL:
        x1 = c.x[1] + k * c.stride[1]
    if c.x[2] != NULL:
        x2 = c.x[2] + k * c.stride[2]
    if c.x[3] != NULL:
        f = c.x[3] + k * c.stride[3]
    w.status = 0
    if c.task == T_RNEA or c.task == T_NONLINEAR or c.task == T_GRAVITY:
        _rnea.rnea(m, w, q, x1, x2, f, out)
    elif c.task == T_CRBA:
        _crba.crba(m, w, q, out)
    elif c.task == T_ABA:
        return _aba.aba(m, w, q, x1, x2, f, out, False)
    elif c.task == T_ABA_MODIFIED:
        return _aba.aba(m, w, q, x1, x2, f, out, True)
    elif c.task == T_PLOEN:
        return _ploen.c_forward_dynamics(m, w, q, x1, x2, f, out)
    elif c.task == T_MINV:
        return _aba.mass_matrix_inverse(m, w, q, out)
    elif c.task == T_KINETIC:
        out[0] = _kin.kinetic_energy(m, w, q, x1)
    elif c.task == T_POTENTIAL:
        out[0] = _kin.potential_energy(m, w, q)
    elif c.task == T_FK:
        _kin.forward_kinematics(m, w, q, out)
    elif c.task == T_COM:
        _kin.center_of_mass(m, w, q, out)
    elif c.task == T_BODY_COM:
        _kin.body_centers_of_mass(m, w, q, out)
    elif c.task == T_JACOBIAN:
        _kin.jacobian(m, w, q, c.body, c.point, out)
    elif c.task == T_INTEGRATE:
        _kin.integrate(m, q, x1, c.dt, out)
    elif c.task == T_RNEA_DERIVATIVES:
        return _deriv.rnea_derivatives(m, w, q, x1, x2, f, out)
    elif c.task == T_ABA_DERIVATIVES:
        return _deriv.aba_derivatives(m, w, q, x1, x2, f, out)
    return 0


cdef class CompiledModel(_base.CompiledBase):
    """The compiled twin of an :class:`rbd.Model` (see the module docstring).

    Parameters
    ----------
    model : Model
        Compiled once; build a new ``CompiledModel`` after changing the model
        (``rbd.algorithms.compiled`` caches one per model and rebuilds it).

    Raises
    ------
    ModelError
        When a joint has more than six degrees of freedom, or a symbolic joint
        has no compiled C function (``joint.kernel_capsule()``).
    """

    # --- running ----------------------------------------------------------------------------
    cdef object _run(self, Call* c, int nd, Py_ssize_t d0, Py_ssize_t d1, Py_ssize_t d2):
        # allocate the result (shape (d0[, d1[, d2]]) per state, a float when nd == 0)
        # and run the task on every state
        cdef cnp.npy_intp dims[4]
        cdef int k = 0
        cdef double scalar = 0.0
        cdef cnp.ndarray out
        if c.N >= 0:
            dims[0] = c.N
            k = 1
        if nd >= 1:
            dims[k] = d0
        if nd >= 2:
            dims[k + 1] = d1
        if nd >= 3:
            dims[k + 2] = d2
        c.out_stride = (d0 if nd >= 1 else 1) * (d1 if nd >= 2 else 1) * (d2 if nd >= 3 else 1)
        if c.N < 0:
            if nd == 0:
                c.out = &scalar
                self._run_single(c)
                return scalar
            out = cnp.PyArray_EMPTY(nd, dims, cnp.NPY_DOUBLE, 0)
            c.out = <double*>cnp.PyArray_DATA(out)
            self._run_single(c)
            return out
        out = cnp.PyArray_EMPTY(nd + 1, dims, cnp.NPY_DOUBLE, 0)
        c.out = <double*>cnp.PyArray_DATA(out)
        if c.N > 0 and not self._run_lanes(c):
            self._run_batch(c)
        return out

    cdef int _run_single(self, Call* c) except -1:
        # one state, GIL held: in the model's workspace (shown by .data), or in a fresh one
        # when that is in use (a generated joint function that runs Python code)
        cdef int status
        cdef Work w
        if not self.w0_busy:
            self.w0_busy = True
            try:
                status = run_one(&self.m, &self.w0, c, 0)
            finally:
                self.w0_busy = False
        else:
            buffer = np.zeros(self.data.size)
            self._bind(&w, buffer)
            status = run_one(&self.m, &w, c, 0)
        if status:
            self._raise_status(status)
        return 0

    cdef int _lane_task(self, const Call* c) noexcept:
        # the lane kernel (SOA_*) that runs c's task, or -1 (see _run_lanes)
        if _soa == NULL:
            return -1
        if c.task == T_RNEA or c.task == T_NONLINEAR or c.task == T_GRAVITY:
            return SOA_RNEA
        if c.task == T_ABA:
            return SOA_ABA
        if c.task == T_CRBA:
            return SOA_CRBA
        if c.task == T_RNEA_DERIVATIVES:
            return SOA_RNEA_DERIVATIVES
        if c.task == T_ABA_DERIVATIVES:
            return SOA_ABA_DERIVATIVES
        return -1

    cdef int _run_lanes(self, Call* c) except -1:
        # RNEA, ABA and CRBA batches in blocks of W states, in lanes (soa.pxi, soa_crba.pxi),
        # and the derivatives (soa_derivatives.pxi); 0 when the task has no lane kernel or the
        # lanes are off (set_simd), else 1
        cdef int status
        cdef int task = self._lane_task(c)
        if task < 0:
            return 0
        if c.pending.q_out != NULL:
            # the lanes read quaternions within the tolerance as they are (_lanes.pxd
            # quat_to_rot_T scales by 2/|q|²): their norms are checked, no normalized copy made
            c.x[0] = c.pending.src[0]
            c.pending.q_out = NULL
        status = _base.run_lanes(&self.m, _soa, task, c.x, c.stride, c.out, c.out_stride, c.N,
                                 self._num_threads, &c.pending)
        if status or c.pending.failed:
            self._settle(c)
        if status:
            self._raise_status(status)
        return 1

    cdef int _run_batch(self, Call* c) except -1:
        # a batch, GIL released: prange over the states, one workspace per thread
        cdef int nt = self._num_threads, t
        cdef Py_ssize_t k, N = c.N, chunk
        cdef Work* works
        cdef const ModelC* m = &self.m
        cdef bint own = False
        cdef int status = 0
        cdef _base.Interrupt intr
        buffer = None
        if nt > N:
            nt = <int>N
        chunk = max(1, N // (16 * nt))
        if _base.omp_unusable():
            # a child forked after this process ran a parallel batch: the OpenMP
            # thread pool did not survive the fork, so the child runs serially
            nt = 1
        if not self.works_busy:
            # claimed before anything that may release the GIL (the allocation below
            # calls into NumPy), so no other thread can free or rebind these workspaces
            self.works_busy = True
            try:
                if self.nworks < nt:
                    self._allocate_works(nt)
            except BaseException:
                self.works_busy = False
                raise
            works = self.works
        else:
            # another thread is running a batch on this model: private workspaces
            own = True
            works = <Work*>malloc(nt * sizeof(Work))
            if works == NULL:
                raise MemoryError()
            buffer = np.zeros((nt, self.data.size))
            for t in range(nt):
                self._bind(&works[t], buffer[t])
        if nt > 1:
            _base.omp_starting()
        _base.interrupt_start(&intr)
        try:
            with nogil:
                if nt == 1:
                    for k in range(N):
                        if c.pending.active and _args.check_rows(&c.pending, k, 1):
                            break
                        works[0].status = run_one(m, &works[0], c, k)
                        if works[0].status or (k % 64 == 63 and _base.interrupted(&intr)):
                            break
                else:
                    for t in range(nt):
                        works[t].status = 0
                    # dynamic chunks keep both threads busy on a machine shared with others;
                    # after an interrupt (seen by the calling thread) the others skip their states
                    for k in prange(N, num_threads=nt, schedule="dynamic", chunksize=chunk):
                        if works[threadid()].status == 0 and not (
                                k % 64 == 63 and _base.interrupted(&intr)) and not intr.stop \
                                and not (c.pending.active and (c.pending.failed or _args.check_rows(
                                    &c.pending, k, 1))):
                            works[threadid()].status = run_one(m, &works[threadid()], c, k)
            error = _base.interrupt_error(&intr)
            if error is not None:
                raise error
            for t in range(nt):
                if works[t].status:
                    status = works[t].status
        finally:
            if own:
                free(works)
            else:
                self.works_busy = False
        if status or c.pending.failed:
            self._settle(c)
        if status:
            self._raise_status(status)
        return 0

    # --- dynamics -------------------------------------------------------------------------
    def rnea(self, q, v, a, f_ext=None):
        """Inverse dynamics ``tau`` (RBDA Table 5.1); see :func:`rbd.rnea`."""
        cdef Call c
        held = self._inputs(&c, q, v, "v", a, "a", f_ext)
        c.task = T_RNEA
        return self._run(&c, 1, self.m.nv, 0, 0)

    def nonlinear_effects(self, q, v):
        """Bias forces ``h = C(q, v) v + g(q)``: RNEA at zero acceleration."""
        cdef Call c
        held = self._inputs(&c, q, v, "v", None, None, None)
        c.task = T_NONLINEAR
        return self._run(&c, 1, self.m.nv, 0, 0)

    def gravity_forces(self, q):
        """Generalized gravity ``g(q)``: RNEA at zero velocity and acceleration."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_GRAVITY
        return self._run(&c, 1, self.m.nv, 0, 0)

    def crba(self, q):
        """Joint-space inertia ``M(q)``, full and symmetric (RBDA Table 6.2)."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_CRBA
        return self._run(&c, 2, self.m.nv, self.m.nv, 0)

    def aba(self, q, v, tau, f_ext=None):
        """Forward dynamics ``qdd`` (RBDA Table 7.1); see :func:`rbd.aba`."""
        cdef Call c
        held = self._inputs(&c, q, v, "v", tau, "tau", f_ext)
        c.task = T_ABA
        return self._run(&c, 1, self.m.nv, 0, 0)

    def aba_modified(self, q, v, tau, f_ext=None):
        """Forward dynamics with Pai, Ascher & Kry's modified pivot (their §7).

        The kernel of ``block_elimination.pyx``; arguments, batches and errors
        as for :meth:`aba`.
        """
        cdef Call c
        held = self._inputs(&c, q, v, "v", tau, "tau", f_ext)
        c.task = T_ABA_MODIFIED
        return self._run(&c, 1, self.m.nv, 0, 0)

    def forward_dynamics_ploen(self, q, v, tau, f_ext=None):
        """Forward dynamics by Si & Guenter's O(n) recursion (their Eqs. 18–35).

        The kernel of ``ploen.pyx``; arguments, batches and errors as for
        :meth:`aba` (a singular pivot ``Ω_k`` is reported as ``D`` of joint k).
        """
        cdef Call c
        held = self._inputs(&c, q, v, "v", tau, "tau", f_ext)
        c.task = T_PLOEN
        return self._run(&c, 1, self.m.nv, 0, 0)

    def mass_matrix_inverse(self, q):
        """``M(q)⁻¹`` by the ABA-based factorization (Si & Guenter, Appendix B, Eq. 58)."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_MINV
        return self._run(&c, 2, self.m.nv, self.m.nv, 0)

    # --- derivatives ----------------------------------------------------------------------
    cdef int _check_differentiable(self) except -1:
        # the derivative kernels know the joint types of rbd.joints, not generated joints
        cdef Py_ssize_t i
        for i in range(self.m.nb):
            if self.m.jtype[i] == J_SYMBOLIC:
                raise ModelError(
                    f"joint {self._joint_names[i]!r}: the analytical derivatives handle the "
                    "joint kinds fixed, revolute, prismatic, helical, universal, spherical, "
                    "free, planar, not 'symbolic'; differentiate such a model by finite "
                    "differences of rbd.rnea / rbd.aba")
        return 0

    cdef tuple _split3(self, object out, Py_ssize_t N):
        # three (nv, nv) blocks of one result array, as views
        if N < 0:
            return (out[0], out[1], out[2])
        return (out[:, 0], out[:, 1], out[:, 2])

    def rnea_derivatives(self, q, v, a, f_ext=None):
        """``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)``; see :func:`rbd.rnea_derivatives`."""
        cdef Call c
        self._check_differentiable()
        held = self._inputs(&c, q, v, "v", a, "a", f_ext)
        c.task = T_RNEA_DERIVATIVES
        return self._split3(self._run(&c, 3, 3, self.m.nv, self.m.nv), c.N)

    def aba_derivatives(self, q, v, tau, f_ext=None):
        """``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)``; see :func:`rbd.aba_derivatives`."""
        cdef Call c
        self._check_differentiable()
        held = self._inputs(&c, q, v, "v", tau, "tau", f_ext)
        c.task = T_ABA_DERIVATIVES
        return self._split3(self._run(&c, 3, 3, self.m.nv, self.m.nv), c.N)

    # --- kinematics and energy --------------------------------------------------------------
    def kinetic_energy(self, q, v):
        """``T = ½ Σ v_iᵀ I_i v_i`` (a float, or ``(N,)``)."""
        cdef Call c
        held = self._inputs(&c, q, v, "v", None, None, None)
        c.task = T_KINETIC
        return self._run(&c, 0, 0, 0, 0)

    def potential_energy(self, q):
        """``U = -Σ m_i gᵀ c_i`` (a float, or ``(N,)``)."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_POTENTIAL
        return self._run(&c, 0, 0, 0, 0)

    def forward_kinematics(self, q):
        """World poses of the body frames, ``(nbodies, 4, 4)``."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_FK
        return self._run(&c, 3, self.m.nb, 4, 4)

    def center_of_mass(self, q):
        """The system's centre of mass, world coordinates, ``(3,)``."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_COM
        return self._run(&c, 1, 3, 0, 0)

    def body_centers_of_mass(self, q):
        """Each body's centre of mass, world coordinates, ``(nbodies, 3)``."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_BODY_COM
        return self._run(&c, 2, self.m.nb, 3, 0)

    def jacobian(self, q, body, point=None):
        """World-aligned ``[ω; v]`` Jacobian ``(6, nv)`` of ``point`` (body frame) on ``body``."""
        cdef Call c
        cdef cnp.ndarray p
        q = self._arg_q(q, &c)
        self._settle(&c)
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)):
            raise InputError(f"body must be a body index, got {body!r}")
        if not 0 <= body < self.m.nb:
            raise InputError(f"body index {body} out of range (model has {self.m.nb} bodies)")
        if point is None:
            p = np.zeros(3)
        else:
            p = _args.as_array(point, "point")
            if cnp.PyArray_NDIM(p) != 1 or cnp.PyArray_DIMS(p)[0] != 3:
                raise InputError(
                    f"point must have shape (3,), got {_args.shape_text((<object>p).shape)}")
            _args.check_finite(p, "point")
        c.body = body
        c.point = <const double*>cnp.PyArray_DATA(p)
        c.task = T_JACOBIAN
        return self._run(&c, 2, 6, self.m.nv, 0)

    def integrate(self, q, v, dt=1.0):
        """``q ⊕ v dt`` on each joint's manifold (quaternions: ``q ⊗ exp(ω dt)``)."""
        cdef Call c
        c.dt = as_time_step(dt)
        held = self._inputs(&c, q, v, "v", None, None, None)
        c.task = T_INTEGRATE
        return self._run(&c, 1, self.m.nq, 0, 0)

    # --- rollouts ---------------------------------------------------------------------------
    def rollout(self, q0, v0, times=None, integrator=1, Py_ssize_t stride=1, tau=None,
                f_ext=None, q_ref=None, kp=None, kd=None, damping=None,
                bint keep_tau=False, num_threads=None, grid=None, constraints=None,
                baumgarte=None):
        """Fixed-step simulations from ``(q0, v0)`` over the grid ``times`` (``rollout.pyx``).

        ``integrator``: ``rbd._kernels.rollout.Integrator`` (= ``rbd.reference.rollout
        .Integrator``) ``EULER`` (0, semi-implicit) or ``RK4`` (1, the default).  Instead of
        ``times``, ``grid = (dt, duration, n_steps)`` is the uniform grid ``t_k = k dt``
        (clipped to ``duration`` within ``1e-9 dt``, as ``rollouts.grid_times``).
        ``q0`` of shape ``(nq,)`` runs one rollout, ``(N, nq)`` (with ``v0`` of
        shape ``(N, nv)``) N rollouts in threads, W at a time in lanes
        (``soa_rollout.pxi``; rollout by rollout with ``set_simd("off")``), serially
        in a child forked after a parallel batch.
        The joint force is ``τ = tau[k] + kp (q_ref ⊖ q) - kd v - damping v``:
        ``tau`` is ``(nv,)`` (constant), ``(n_steps, nv)`` (one row a step) or
        ``(N, n_steps, nv)`` (one table a rollout); ``q_ref``, ``kp``, ``kd`` come
        together.  Samples: every ``stride``-th step and the last one.  ``constraints``
        (``ConstrainedModel.packed``) makes each evaluation the ``q̈`` of
        :func:`rbd.constrained_dynamics` ("kkt", Baumgarte ``(kp, kd)`` or None).

        Returns
        -------
        tuple
            ``(q, v, a, tau, kinetic, potential, status, samples, steps, failure,
            failure_t, φ(q), J(q) v)``: the samples (a leading ``N`` axis for a batch;
            ``tau`` None unless ``keep_tau``; ``φ``, ``J v`` None without constraints);
            per rollout its status (0, -1 diverged, -2 interrupted), the samples
            written (after a divergence the last is the state after ``steps`` steps),
            the steps done to a finite state and acceleration, what became non-finite
            first (``"q"``, ``"v"``, ``"a"`` or ``""``) and when.

        A signal handler that raises (Ctrl-C) stops every rollout within some 20 ms; its
        exception is raised with this tuple, as computed so far, in its ``rollout`` attribute.

        Raises
        ------
        InputError
            On a bad argument, named.
        ModelError
            When the forward dynamics is undefined (see :meth:`aba`).
        """
        return _rollout_batch.run_rollout(self, q0, v0, times, integrator, stride, tau, f_ext,
                                          q_ref, kp, kd, damping, keep_tau, num_threads, grid,
                                          _soa, constraints, baumgarte)


def compiled_model(model):
    """The :class:`CompiledModel` of ``model``, built once and cached on the model.

    The one place a model's compiled twin is built: ``rbd.algorithms.compiled``
    and the compiled variants (``ploen.pyx``, ``block_elimination.pyx``) come
    here, and the model keeps the twin under ``"kernel"`` (``model._derived``)
    until it changes.

    Raises
    ------
    InputError
        When ``model`` is not an :class:`rbd.Model`.
    ModelError
        When the model cannot be compiled: a model with mimic joints (its
        coordinates are not the tree's; ``rbd.algorithms.compiled`` runs it through
        the full tree's twin), a joint with more than six degrees of freedom, a
        symbolic joint without compiled C.
    """
    if not _is_model(model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    kernel = model._derived("kernel", lambda: CompiledModel(model))
    if not isinstance(kernel, CompiledModel):
        raise ModelError(f"model {model.name!r} has mimic joints: its compiled twin is the "
                         "full tree's (rbd.algorithms.compiled(model) runs it with the "
                         "coupling)")
    return kernel
