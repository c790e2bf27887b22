# cython: language_level=3
"""Fixed-step rollouts: what the caller hands to ``rollout`` (``rollout.pyx``)."""

from rbd._kernels._model cimport ModelC, Work


cdef struct Control:
    # the joint force at step k and state (q, v):
    #   τ = τ_ff[k] + K_p (q_ref ⊖ q) - K_d v,  and the joint damping -D v on top
    const double* tau           # τ_ff: NULL (zero), one (nv) row, or n_steps rows
    Py_ssize_t tau_rows         # 1 (constant) or n_steps (one row per step)
    const double* q_ref         # NULL: no PD law
    const double* kp            # nv
    const double* kd            # nv
    const double* damping       # NULL, or D (nv, the diagonal)
    const double* f_ext         # NULL, or nb × 6 body-frame forces (constant)


cdef struct Plan:
    const double* t             # n_steps + 1 sample times; step k goes from t[k] to t[k+1]
    Py_ssize_t n_steps
    Py_ssize_t stride           # record every stride-th step (and the last one)
    bint rk4                    # RK4 (Munthe-Kaas) steps, else semi-implicit Euler
    bint curved                 # the model has spherical or free joints (RK4 transport)


cdef struct Record:
    double* q                   # samples × nq
    double* v                   # samples × nv
    double* a                   # samples × nv
    double* tau                 # samples × nv (τ_ff + PD, without damping), or NULL
    double* kinetic             # samples
    double* potential           # samples


cdef int rollout(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                 const double* q0, const double* v0, double* scratch, const Record* rec,
                 Py_ssize_t* samples) noexcept nogil
