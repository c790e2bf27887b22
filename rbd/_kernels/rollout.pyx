# cython: language_level=3
r"""Fixed-step rollouts, compiled: whole simulations of the ABA without the GIL.

The compiled twin of ``rbd/reference/rollout.py``, and the compiled form of the
fixed-step integrators of :mod:`rbd.simulation.integrators` (the Python path):
the same steps, operation for operation, so that both agree to round-off.

* Semi-implicit Euler: ``v₁ = v + h a``, ``q₁ = q ⊕ h v₁``.
* RK4 in the Runge–Kutta–Munthe-Kaas form: stages ``x ⊕ c k`` with
  ``x = (q, v)``, stage velocities moved into the chart at ``q`` by the
  truncated series ``dexp⁻¹_{-ξ}(v) ≈ v + ½[ξ, v] + 1/12 [ξ, [ξ, v]]`` on
  spherical (``so(3)``) and free (``se(3)``) joints (``transport``, the twin
  of ``rbd.reference.rollout.transport``, which the Python path calls too),
  and ``q₁ = q ⊕ h k̄`` with ``k̄ = (k₁ + 2k₂ + 2k₃ + k₄) / 6``.

The method is ``Plan.integrator``, a member of ``cpdef enum Integrator``
(``rollout.pxd``: the members and values of ``rbd.reference.rollout.Integrator``);
``take_step`` is the one place that dispatches on it.

The joint force at step ``k`` and state ``(q, v)`` is
``τ = τ_ff[k] + K_p (q_ref ⊖ q) - K_d v - D v`` (``Control`` in
``rollout.pxd``), with ``q_ref ⊖ q`` the velocity that moves ``q`` to
``q_ref`` in unit time (``Joint.difference``: ``log(R_qᵀ R_ref)`` on a
quaternion, the ``se(3)`` logarithm on a free joint).  Samples are the state
after every ``stride``-th step and after the last one, with the acceleration,
the commanded force and the energies.

With bilateral constraints (``Control.rows``) every evaluation is the
acceleration of :func:`rbd.constrained_dynamics` (method ``"kkt"``, the
Baumgarte gains of ``Control``) instead of the ABA's: ``kkt_acceleration`` of
``_constrained_state.pyx``, the rows, the CRBA, the tree-sparse factor of ``M`` and the
solve; the steppers are the same.  Each sample then holds ``φ(q)`` and ``J(q) v``.

``rollout`` returns 0, ``1 + i`` when the pivot ``D_i`` of body ``i`` is not
positive definite, ``NOT_DEFINITE`` (-3) when ``M`` is not (with constraints), ``DIVERGED`` (-1) when the state or the acceleration became
non-finite, or ``INTERRUPTED`` (-2) when a signal handler raised (the check of
``_base.pyx``, every ``INTERRUPT_STEPS`` steps); the samples written and the
steps done are in the ``Record``, so the caller keeps what was computed.
"""

from libc.math cimport atan2, isfinite, sqrt, tan
from libc.string cimport memcpy

from rbd._kernels._base cimport interrupted
from rbd._kernels._model cimport J_FREE, J_SPHERICAL, ModelC, Work
from rbd._kernels._spatial cimport cross3, dot3, mat3_vec, quat_to_rot_T
from rbd._kernels.aba cimport aba
from rbd._kernels._constrained_state cimport kkt_acceleration
from rbd._kernels.constrained cimport Arena, arena
from rbd._kernels.constraints cimport c_constraint_rows
from rbd._kernels.kinematics cimport integrate, kinetic_energy, potential_energy


# --- q_ref ⊖ q -----------------------------------------------------------------------------
cdef inline void rotation_difference(const double* q0, const double* q1,
                                     double* w) noexcept nogil:
    # w = log(R(q0)ᵀ R(q1)) from the quaternion d = q0* ⊗ q1 (w ≥ 0):  w = 2 atan2(|d⃗|, d_w) d⃗/|d⃗|
    cdef double d[4]
    cdef double n, s
    cdef int k
    d[0] = q0[3] * q1[0] - q0[0] * q1[3] - q0[1] * q1[2] + q0[2] * q1[1]
    d[1] = q0[3] * q1[1] + q0[0] * q1[2] - q0[1] * q1[3] - q0[2] * q1[0]
    d[2] = q0[3] * q1[2] - q0[0] * q1[1] + q0[1] * q1[0] - q0[2] * q1[3]
    d[3] = q0[3] * q1[3] + q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2]
    if d[3] < 0:
        for k in range(4):
            d[k] = -d[k]
    n = sqrt(dot3(d, d))
    # s = θ / |d⃗|, with θ = 2 atan2(|d⃗|, d_w) → 2 / d_w as |d⃗| → 0
    s = 2.0 / d[3] if n < 1e-12 else 2.0 * atan2(n, d[3]) / n
    for k in range(3):
        w[k] = s * d[k]


cdef inline void free_difference(const double* q0, const double* q1, double* out) noexcept nogil:
    # [w; V(w)⁻¹ R0ᵀ (p1 - p0)],  V⁻¹ = 1 - W/2 + β W²,  β = (1 - (θ/2) cot(θ/2)) / θ²
    cdef double E[9]
    cdef double dp[3]
    cdef double x[3]
    cdef double wx[3]
    cdef double wwx[3]
    cdef double theta, beta
    cdef int k
    rotation_difference(q0 + 3, q1 + 3, out)
    theta = sqrt(dot3(out, out))
    if theta < 1e-3:
        beta = 1.0 / 12.0 + theta * theta / 720.0
    else:
        beta = (1.0 - 0.5 * theta / tan(0.5 * theta)) / (theta * theta)
    for k in range(3):
        dp[k] = q1[k] - q0[k]
    # x = R0ᵀ (p1 - p0) = E0 (p1 - p0)
    quat_to_rot_T(q0 + 3, E)
    mat3_vec(E, dp, x)
    cross3(out, x, wx)
    cross3(out, wx, wwx)
    for k in range(3):
        out[3 + k] = x[k] - 0.5 * wx[k] + beta * wwx[k]


cdef inline void difference(const ModelC* m, const double* q0, const double* q1,
                            double* out) noexcept nogil:
    # out = q1 ⊖ q0 on each joint's manifold (Joint.difference)
    cdef Py_ssize_t i, k, qi, vi
    for i in range(m.nb):
        qi = m.q_start[i]
        vi = m.v_start[i]
        if m.jtype[i] == J_SPHERICAL:
            rotation_difference(q0 + qi, q1 + qi, out + vi)
        elif m.jtype[i] == J_FREE:
            free_difference(q0 + qi, q1 + qi, out + vi)
        else:
            for k in range(m.nv_j[i]):
                out[vi + k] = q1[qi + k] - q0[qi + k]


# --- the joint force and the forward dynamics --------------------------------------------
cdef void joint_force(const ModelC* m, const Control* ctl, Py_ssize_t k,
                      const double* q, const double* v, double* tau,
                      double* tau_total, double* err) noexcept nogil:
    # τ = τ_ff[k] + K_p (q_ref ⊖ q) - K_d v;  τ_total = τ - D v
    cdef Py_ssize_t j, nv = m.nv
    cdef const double* ff = NULL
    if ctl.tau != NULL and ctl.tau_rows > 0:
        ff = ctl.tau + nv * (k if k < ctl.tau_rows else ctl.tau_rows - 1)
    if ctl.q_ref != NULL:
        difference(m, q, ctl.q_ref, err)
    for j in range(nv):
        tau[j] = 0.0 if ff == NULL else ff[j]
        if ctl.q_ref != NULL:
            tau[j] = tau[j] + ctl.kp[j] * err[j] - ctl.kd[j] * v[j]
        tau_total[j] = tau[j]
        if ctl.damping != NULL:
            tau_total[j] = tau[j] - ctl.damping[j] * v[j]


cdef int evaluate(const ModelC* m, Work* w, const Control* ctl, Py_ssize_t k,
                  const double* q, const double* v, double* a,
                  double* scratch) noexcept nogil:
    # a = ABA(q, v, τ(k, q, v), f_ext), or with constraints (ctl.rows) the q̈ of the
    # stabilized KKT system (kkt_acceleration, constrained.pyx); τ in scratch[0:nv], τ_total
    # and q_ref ⊖ q after it; a non-finite state (a stage of a diverging step) is a
    # divergence (-1), not a pivot error (1 + i) or an M that is not definite (NOT_DEFINITE)
    cdef Py_ssize_t nv = m.nv
    cdef int status
    joint_force(m, ctl, k, q, v, scratch, scratch + nv, scratch + 2 * nv)
    if ctl.rows == NULL:
        status = aba(m, w, q, v, scratch + nv, ctl.f_ext, a, False)
    elif kkt_acceleration(m, w, ctl.rows, ctl.arena, q, v, scratch + nv, ctl.f_ext,
                          ctl.baumgarte_kp, ctl.baumgarte_kd, a):
        status = NOT_DEFINITE
    else:
        status = 0
    if status and not (all_finite(q, m.nq) and all_finite(v, nv)
                       and all_finite(scratch + nv, nv)):
        return DIVERGED
    return status


cdef inline bint all_finite(const double* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        if not isfinite(x[j]):
            return False
    return True


# --- the steps -----------------------------------------------------------------------------
cdef void transport(const ModelC* m, double c, const double* k_prev,
                    double* k) noexcept nogil:
    # k = dexp⁻¹_{-ξ}(k) ≈ k + ½[ξ, k] + 1/12 [ξ, [ξ, k]],  ξ = c k_prev, on curved joints
    cdef Py_ssize_t i, j, vi
    cdef double xi[6]
    cdef double ad[6]
    cdef double ad2[6]
    cdef double t[3]
    for i in range(m.nb):
        if m.jtype[i] != J_SPHERICAL and m.jtype[i] != J_FREE:
            continue
        vi = m.v_start[i]
        for j in range(m.nv_j[i]):
            xi[j] = c * k_prev[vi + j]
        # [ξ, k]: ξ × k on so(3);  crm(ξ) k = [ω × k_ω; u × k_ω + ω × k_u] on se(3)
        cross3(xi, k + vi, ad)
        cross3(xi, ad, ad2)
        if m.jtype[i] == J_FREE:
            cross3(xi + 3, k + vi, ad + 3)
            cross3(xi, k + vi + 3, t)
            for j in range(3):
                ad[3 + j] += t[j]
            cross3(xi + 3, ad, ad2 + 3)
            cross3(xi, ad + 3, t)
            for j in range(3):
                ad2[3 + j] += t[j]
        for j in range(m.nv_j[i]):
            k[vi + j] = k[vi + j] + 0.5 * ad[j] + ad2[j] / 12.0


cdef inline int fail(Record* rec, int what, double t) noexcept nogil:
    # note what became non-finite first, and when; the status of a divergence
    rec.failure = what
    rec.failure_t = t
    return DIVERGED


cdef inline int check_state(Record* rec, const ModelC* m, const double* q, const double* v,
                            double t) noexcept nogil:
    # DIVERGED (noted) when q or v has a non-finite entry, else 0
    if not all_finite(q, m.nq):
        return fail(rec, FAIL_Q, t)
    if not all_finite(v, m.nv):
        return fail(rec, FAIL_V, t)
    return 0


cdef inline int stage(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                      Py_ssize_t step, double t, const double* q, const double* v, double c,
                      const double* kq_prev, const double* ka_prev, double* kq, double* ka,
                      double* qs, double* scratch, Record* rec) noexcept nogil:
    # x_s = x ⊕ c k_prev = (q ⊕ c k_q, v + c k_a);  k = [v_s; a(x_s)] in the chart at q
    cdef Py_ssize_t j
    cdef int status
    integrate(m, q, kq_prev, c, qs)
    for j in range(m.nv):
        kq[j] = v[j] + c * ka_prev[j]
    if check_state(rec, m, qs, kq, t + c):
        return DIVERGED
    status = evaluate(m, w, ctl, step, qs, kq, ka, scratch)
    if status == DIVERGED:
        return fail(rec, FAIL_A, t + c)
    if plan.curved:
        transport(m, c, kq_prev, kq)
    return status


cdef inline int rk4_step(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                         Py_ssize_t step, double t, double h, double* q, double* v,
                         const double* a, double* buf, Record* rec) noexcept nogil:
    # k₂ = f(x ⊕ h/2 k₁), k₃ = f(x ⊕ h/2 k₂), k₄ = f(x ⊕ h k₃);  x₁ = x ⊕ h (k₁+2k₂+2k₃+k₄)/6
    cdef Py_ssize_t nv = m.nv, j
    cdef double* k2 = buf
    cdef double* k3 = buf + 2 * nv
    cdef double* k4 = buf + 4 * nv
    cdef double* kb = buf + 6 * nv
    cdef double* qs = buf + 8 * nv
    cdef double* scratch = qs + m.nq
    cdef int status = stage(m, w, ctl, plan, step, t, q, v, 0.5 * h, v, a, k2, k2 + nv, qs,
                            scratch, rec)
    if status == 0:
        status = stage(m, w, ctl, plan, step, t, q, v, 0.5 * h, k2, k2 + nv, k3, k3 + nv, qs,
                       scratch, rec)
    if status == 0:
        status = stage(m, w, ctl, plan, step, t, q, v, h, k3, k3 + nv, k4, k4 + nv, qs,
                       scratch, rec)
    if status:
        return status
    for j in range(nv):
        kb[j] = (v[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]) / 6.0
        kb[nv + j] = (a[j] + 2.0 * k2[nv + j] + 2.0 * k3[nv + j] + k4[nv + j]) / 6.0
    integrate(m, q, kb, h, qs)
    memcpy(q, qs, m.nq * sizeof(double))
    for j in range(nv):
        v[j] = v[j] + h * kb[nv + j]
    return 0


cdef inline int euler_step(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                           Py_ssize_t step, double t, double h, double* q, double* v,
                           const double* a, double* buf, Record* rec) noexcept nogil:
    # v₁ = v + h a;  q₁ = q ⊕ h v₁
    cdef Py_ssize_t j
    for j in range(m.nv):
        v[j] = v[j] + h * a[j]
    integrate(m, q, v, h, buf)
    memcpy(q, buf, m.nq * sizeof(double))
    return 0


cdef inline int take_step(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                          Py_ssize_t step, double t, double h, double* q, double* v,
                          const double* a, double* buf, Record* rec) noexcept nogil:
    # (q, v) ← one step of plan.integrator: the one dispatch, a case per member of Integrator
    # (rollout.pxd), each step with this signature; 0, or the status of a failed stage
    if plan.integrator == RK4:
        return rk4_step(m, w, ctl, plan, step, t, h, q, v, a, buf, rec)
    return euler_step(m, w, ctl, plan, step, t, h, q, v, a, buf, rec)


# --- samples -------------------------------------------------------------------------------
cdef void record(const ModelC* m, Work* w, const Control* ctl, const Record* rec,
                 Py_ssize_t r, const double* q, const double* v, const double* a,
                 const double* tau) noexcept nogil:
    # sample r: q, v, a, τ, T = ½ vᵀ M v, U = -Σ m_i gᵀ c_i; with constraints φ(q) and J(q) v
    cdef Py_ssize_t nq = m.nq, nv = m.nv, i, j
    cdef Arena s
    cdef double x
    if rec.phi != NULL:
        arena(ctl.arena, ctl.rows.m, nv, &s)
        c_constraint_rows(m, w, ctl.rows, q, v, rec.phi + r * ctl.rows.m, s.J, s.gamma)
        for i in range(ctl.rows.m):
            x = 0.0
            for j in range(nv):
                x += s.J[i * nv + j] * v[j]
            rec.jv[r * ctl.rows.m + i] = x
    memcpy(rec.q + r * nq, q, nq * sizeof(double))
    memcpy(rec.v + r * nv, v, nv * sizeof(double))
    memcpy(rec.a + r * nv, a, nv * sizeof(double))
    if rec.tau != NULL:
        memcpy(rec.tau + r * nv, tau, nv * sizeof(double))
    rec.kinetic[r] = kinetic_energy(m, w, q, v)
    rec.potential[r] = potential_energy(m, w, q)


cdef int rollout(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                 const double* q0, const double* v0, double* scratch,
                 Record* rec) noexcept nogil:
    """Steps from (q0, v0) over the grid of plan; scratch: 3 nq + 20 nv doubles.

    When the run diverges after an unrecorded step (stride > 1), that step's state
    is recorded as the last sample (``rec.steps`` tells its step).
    """
    cdef Py_ssize_t nq = m.nq, nv = m.nv, k, n = plan.n_steps
    cdef double* q = scratch
    cdef double* v = q + nq
    cdef double* a = v + nv
    cdef double* tau = a + nv
    cdef double* buf = tau + 3 * nv
    cdef double* last = buf + 11 * nv + nq       # q, v, a, τ of the last unrecorded step
    cdef double t, h
    cdef int status
    rec.samples = 0
    rec.steps = 0
    rec.failure = 0
    if plan.interrupt != NULL and interrupted(plan.interrupt):
        return INTERRUPTED
    memcpy(q, q0, nq * sizeof(double))
    memcpy(v, v0, nv * sizeof(double))
    # --- the initial sample: a = FD(q₀, v₀, τ)
    status = evaluate(m, w, ctl, 0, q, v, a, tau)
    if status == DIVERGED or (status == 0 and not all_finite(a, nv)):
        return fail(rec, FAIL_A, grid_time(plan, 0))
    if status:
        return status
    record(m, w, ctl, rec, 0, q, v, a, tau)
    rec.samples = 1
    # --- the steps: x_{k+1} = step(x_k), a_{k+1} = FD(x_{k+1}), a sample every stride steps
    for k in range(n):
        if (k % INTERRUPT_STEPS == INTERRUPT_STEPS - 1 and plan.interrupt != NULL
                and interrupted(plan.interrupt)):
            status = INTERRUPTED
            break
        t = grid_time(plan, k)
        h = grid_time(plan, k + 1) - t
        status = take_step(m, w, ctl, plan, k, t, h, q, v, a, buf, rec)
        if status:
            break
        status = check_state(rec, m, q, v, t + h)
        if status:
            break
        status = evaluate(m, w, ctl, k + 1, q, v, a, tau)
        if status == DIVERGED or (status == 0 and not all_finite(a, nv)):
            status = fail(rec, FAIL_A, t + h)
        if status:
            break
        rec.steps = k + 1
        if (k + 1) % plan.stride == 0 or k + 1 == n:
            record(m, w, ctl, rec, rec.samples, q, v, a, tau)
            rec.samples += 1
        elif plan.stride > 1:
            memcpy(last, q, nq * sizeof(double))
            memcpy(last + nq, v, 3 * nv * sizeof(double))     # v, a, τ are contiguous
    if status == DIVERGED and rec.steps % plan.stride:
        record(m, w, ctl, rec, rec.samples, last, last + nq, last + nq + nv,
               last + nq + 2 * nv)
        rec.samples += 1
    return status
