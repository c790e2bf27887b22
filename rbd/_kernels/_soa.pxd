# cython: language_level=3
"""What the structure-of-arrays modules export to ``_model.pyx``.

``soa.pxi`` and ``soa_aba.pxi`` (batched RNEA and ABA, the state index innermost), with
``soa_derivatives.pxi`` (their derivatives), ``soa_rollout.pxi`` (rollouts) and
``soa_crba.pxi`` (CRBA), is compiled three
times, as ``_soa_portable``, ``_soa_avx2`` and ``_soa_avx512`` (the same C with
different instruction sets; ``setup.py``).  Each module hands ``_model.pyx`` one
``SoaKernels`` table in a PyCapsule named ``"rbd.soa"``; ``_model.pyx`` picks the
module at import from the CPU's features (docs/design.md, "Batches in lanes").
"""

# The tasks of run_block.
cdef enum:
    SOA_RNEA = 0                  # tau = ID(q, q̇, q̈, f_ext); x[1], x[2], x[3] may be NULL
    SOA_ABA = 1                   # q̈ = FD(q, q̇, τ, f_ext); x[3] may be NULL
    SOA_CRBA = 2                  # M = CRBA(q), rows of nv²; x[1], x[2], x[3] unused (crba)
    # the tasks of run_derivatives (soa_derivatives.pxi): out = 3 nv × nv blocks a state
    SOA_RNEA_DERIVATIVES = 8      # [∂τ/∂q, ∂τ/∂q̇, M] at (q, q̇, q̈, f_ext); x[3] may be NULL
    SOA_ABA_DERIVATIVES = 9       # [∂q̈/∂q, ∂q̈/∂q̇, M⁻¹] at (q, q̇, τ, f_ext); x[3] may be NULL


# The model argument is the ModelC record of _model.pxd (passed untyped: this file is
# cimported by _model.pyx itself, before ModelC is declared there).
ctypedef Py_ssize_t (*soa_size_fn)(const void* model) noexcept nogil
ctypedef int (*soa_run_fn)(const void* model, double* work, int task, const double** x,
                           const Py_ssize_t* stride, double* out, Py_ssize_t out_stride,
                           Py_ssize_t k0, Py_ssize_t n) noexcept nogil
# Rollouts k0 .. k0 + n - 1 (n ≤ W) of a batch, in lanes (soa_rollout.pxi): job is the
# RolloutJob of rollout.pxd, thread the index of its scalar workspace (job.works).
ctypedef void (*soa_rollout_fn)(const void* job, int thread, double* work, Py_ssize_t k0,
                                Py_ssize_t n) noexcept nogil


cdef struct SoaKernels:
    int lanes                     # W: states per block
    soa_size_fn size              # doubles of one block's workspace
    soa_run_fn run                # states k0 .. k0 + n - 1 (n ≤ W) of a batch; 0 or 1 + body
    soa_size_fn derivatives_size  # doubles of one block's workspace for the derivatives
    soa_run_fn run_derivatives    # run's twin for SOA_RNEA_DERIVATIVES, SOA_ABA_DERIVATIVES
    soa_size_fn rollout_size      # doubles of one block's rollout workspace
    soa_rollout_fn rollout        # rollouts k0 .. k0 + n - 1 (n ≤ W) of a batch
    soa_run_fn crba               # SOA_CRBA's run (soa_crba.pxi): states k0 .. k0 + n - 1
