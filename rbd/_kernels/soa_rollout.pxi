# Batched fixed-step rollouts over a structure of arrays: W rollouts advance together.
#
# The lane rendering of ``rollout.pyx`` (twin: ``rbd/reference/rollout.py``): the same
# steps, stages, checks and samples, with the state of W rollouts stored ``[component][W]``
# (``_lanes.pxd``) and every evaluation the lane ABA of ``soa_aba.pxi``.  Lane by lane, with
# ``rollout.pyx``'s own functions on one lane's row, run only the parts that are O(nq) or
# rare: the joint force (``joint_force``, PD law and quaternion ``q_ref ⊖ q`` included),
# the configuration update of spherical and free joints (``integrate``), the RK4
# transport on them (``transport``), and an evaluation the lane ABA refuses (a pivot
# that is not positive definite on some lane: ``evaluate`` decides, lane by lane, as the
# one-state rollout does).  A lane whose rollout stops (divergence, pivot, interrupt)
# keeps computing a copy of a running lane, so that its values stay finite, and records
# nothing more; the others go on.  Included by ``_soa_portable.pyx``, ``_soa_avx2.pyx``
# and ``_soa_avx512.pyx`` after ``soa.pxi``.

from libc.math cimport isfinite

from rbd._kernels cimport rollout as _ro
from rbd._kernels._base cimport interrupted
from rbd._kernels._model cimport Work
from rbd._kernels.kinematics cimport integrate


cdef struct Block:
    # the rollouts k0 .. k0 + n - 1 of a batch (lanes past n repeat the last rollout)
    Lanes w                       # the lane ABA's workspace (soa.pxi)
    const ModelC* m
    const _ro.RolloutJob* job
    Work* work                    # the scalar workspace of this thread
    Py_ssize_t n
    _ro.Control ctl[W]            # each lane's control (its own τ table)
    _ro.Record rec[W]             # each lane's samples
    int status[W]                 # each lane's status once it stopped
    bint live[W]                  # the lane's rollout is running
    bint stopped                  # a lane stopped since the last repair
    bint scalar_eval              # the last evaluation ran lane by lane (evaluate)
    Py_ssize_t nstate             # components of the state below (one lane's share / 1)
    # the state, nstate × W, contiguous: q, v, a, τ, τ - D v, then RK4's k₂, k₃, k₄, k̄ (2 nv
    # each: [k_q; k_a]) and the stage configuration qs
    double* q
    double* v
    double* a
    double* tau
    double* tt
    double* k2
    double* k3
    double* k4
    double* kb
    double* qs
    double* last                  # W × (nq + 3 nv): q, v, a, τ of the last unrecorded step
    double* qrow                  # W × nq: each lane's configuration (jcalc reads it)
    double* vrow                  # W × nv
    double* row                   # W × 3 nv: joint_force's τ, τ_total, q_ref ⊖ q
    double* arow                  # W × nv
    double* irow                  # 2 nq + nv: one lane's integrate
    double* f_ext                 # nb × 6 × W, or NULL
    double* R                     # nb × 9 × W: body orientations (world), for the energy
    double* p                     # nb × 3 × W: body origins (world)
    double kinetic[W]
    double potential[W]


cdef Py_ssize_t rollout_size(const void* record) noexcept nogil:
    # doubles of one block's rollout workspace: the lane ABA's, then Block's arrays
    cdef const ModelC* m = <const ModelC*>record
    cdef Py_ssize_t nq = m.nq, nv = m.nv, nb = m.nb
    return (size(record) + 8 + W * (2 * nq + 13 * nv) + W * (nq + 3 * nv)
            + W * (nq + nv + 3 * nv + nv) + 2 * nq + nv + W * nb * (6 + 9 + 3) + 8)


cdef void bind_block(const ModelC* m, double* work, Block* B) noexcept nogil:
    # the arrays of B in work (each lane array 64-byte aligned)
    cdef Py_ssize_t nq = m.nq, nv = m.nv, nb = m.nb
    work = <double*>((<size_t>work + 63) & ~(<size_t>63))
    bind(m, work, &B.w)
    work = <double*>((<size_t>(work + size(m)) + 63) & ~(<size_t>63))
    B.m = m
    B.nstate = 2 * nq + 12 * nv
    B.q = work; work += W * nq
    B.v = work; work += W * nv
    B.a = work; work += W * nv
    B.tau = work; work += W * nv
    B.tt = work; work += W * nv
    B.k2 = work; work += 2 * W * nv
    B.k3 = work; work += 2 * W * nv
    B.k4 = work; work += 2 * W * nv
    B.kb = work; work += 2 * W * nv
    B.qs = work; work += W * nq
    B.f_ext = work; work += 6 * W * nb
    B.R = work; work += 9 * W * nb
    B.p = work; work += 3 * W * nb
    B.last = work; work += W * (nq + 3 * nv)
    B.qrow = work; work += W * nq
    B.vrow = work; work += W * nv
    B.row = work; work += 3 * W * nv
    B.arow = work; work += W * nv
    B.irow = work


# --- one lane's bookkeeping (the tails of rollout.pyx's functions) -------------------------

cdef inline bint lane_finite(const double* x, Py_ssize_t n, Py_ssize_t l) noexcept nogil:
    # every x[k W + l], k < n, is finite
    cdef Py_ssize_t k
    for k in range(n):
        if not isfinite(x[k * W + l]):
            return False
    return True


cdef inline void stop(Block* B, Py_ssize_t l, int status) noexcept nogil:
    # lane l's rollout ends with status; after a divergence after an unrecorded step
    # (stride > 1) that step's state is its last sample (rollout.pyx, the end of rollout)
    cdef _ro.Record* rec = &B.rec[l]
    cdef const ModelC* m = B.m
    cdef const double* last = B.last + l * (m.nq + 3 * m.nv)
    B.status[l] = status
    B.live[l] = False
    B.stopped = True
    if status == _ro.DIVERGED and rec.steps % B.job.plan.stride:
        _ro.record(m, B.work, &B.ctl[l], rec, rec.samples, last, last + m.nq,
                   last + m.nq + m.nv, last + m.nq + 2 * m.nv)
        rec.samples += 1


cdef inline void fail(Block* B, Py_ssize_t l, int what, double t) noexcept nogil:
    # lane l diverged: what became non-finite first, and when
    B.rec[l].failure = what
    B.rec[l].failure_t = t
    stop(B, l, _ro.DIVERGED)


cdef inline void check_state(Block* B, const double* q, const double* v,
                             double t) noexcept nogil:
    # a running lane whose q or v has a non-finite entry diverged at t
    cdef Py_ssize_t l
    for l in range(B.n):
        if B.live[l]:
            if not lane_finite(q, B.m.nq, l):
                fail(B, l, _ro.FAIL_Q, t)
            elif not lane_finite(v, B.m.nv, l):
                fail(B, l, _ro.FAIL_V, t)


cdef bint repair(Block* B) noexcept nogil:
    # every lane not running takes the state of the first running one (its values stay
    # finite and its pivots positive); False when no lane runs
    cdef Py_ssize_t l, src = -1, k
    for l in range(W):
        if B.live[l]:
            src = l
            break
    if src < 0:
        return False
    if B.stopped:
        for l in range(W):
            if not B.live[l]:
                for k in range(B.nstate):
                    B.q[k * W + l] = B.q[k * W + src]
        B.stopped = False
    return True


# --- the evaluation, the configuration update, the transport --------------------------------

cdef void evaluate_lanes(Block* B, Py_ssize_t step, const double* q, const double* v,
                         double* a, int* status) noexcept nogil:
    # a = ABA(q, v, τ(step, q, v), f_ext) on every lane (rollout.pyx's evaluate); τ and
    # τ - D v in B.tau, B.tt.  When the lane ABA meets a pivot that is not positive
    # definite, every lane is evaluated on its own by evaluate (DIVERGED or 1 + i)
    cdef const ModelC* m = B.m
    cdef Py_ssize_t nq = m.nq, nv = m.nv, l, j
    cdef double* qr
    cdef double* vr
    cdef double* rr
    for l in range(W):
        qr = B.qrow + l * nq
        vr = B.vrow + l * nv
        rr = B.row + 3 * l * nv
        lane_get(q, nq, l, qr)
        lane_get(v, nv, l, vr)
        _ro.joint_force(m, &B.ctl[l], step, qr, vr, rr, rr + nv, rr + 2 * nv)
        lane_put(rr, nv, l, B.tau)
        lane_put(rr + nv, nv, l, B.tt)
    B.scalar_eval = aba(m, &B.w, v, B.tt, B.f_ext, a) != 0
    for l in range(W):
        status[l] = 0
    if not B.scalar_eval:
        return
    for l in range(W):
        rr = B.row + 3 * l * nv
        status[l] = _ro.evaluate(m, B.work, &B.ctl[l], step, B.qrow + l * nq, B.vrow + l * nv,
                                 B.arow + l * nv, rr)
        lane_put(B.arow + l * nv, nv, l, a)
        lane_put(rr, nv, l, B.tau)
        if status[l]:
            # a stopping lane: its stand-in values until repair copies a running lane
            for j in range(nv):
                a[j * W + l] = 0.0


cdef void integrate_lanes(Block* B, const double* q, const double* v, double h,
                          double* out) noexcept nogil:
    # out = q ⊕ h v on every lane: q + h v on vector joints in lanes; spherical and free
    # joints lane by lane by kinematics.pyx's integrate
    cdef const ModelC* m = B.m
    cdef Py_ssize_t i, k, l, qi, vi, nq = m.nq, nv = m.nv
    cdef bint curved = False
    for i in range(m.nb):
        qi = m.q_start[i]
        vi = m.v_start[i]
        if m.jtype[i] == J_SPHERICAL or m.jtype[i] == J_FREE:
            curved = True
            continue
        for k in range(m.nq_j[i]):
            for l in range(W):
                # q' = q + v dt
                out[(qi + k) * W + l] = q[(qi + k) * W + l] + v[(vi + k) * W + l] * h
    if not curved:
        return
    for l in range(W):
        lane_get(q, nq, l, B.irow)
        lane_get(v, nv, l, B.irow + nq)
        integrate(m, B.irow, B.irow + nq, h, B.irow + nq + nv)
        for i in range(m.nb):
            if m.jtype[i] == J_SPHERICAL or m.jtype[i] == J_FREE:
                for k in range(m.nq_j[i]):
                    out[(m.q_start[i] + k) * W + l] = B.irow[nq + nv + m.q_start[i] + k]


cdef void transport_lanes(Block* B, double c, const double* k_prev, double* k) noexcept nogil:
    # k = dexp⁻¹_{-ξ}(k), ξ = c k_prev, on curved joints: rollout.pyx's transport, lane by lane
    cdef Py_ssize_t nv = B.m.nv, l
    for l in range(W):
        lane_get(k_prev, nv, l, B.irow)
        lane_get(k, nv, l, B.irow + nv)
        _ro.transport(B.m, c, B.irow, B.irow + nv)
        lane_put(B.irow + nv, nv, l, k)


# --- samples -------------------------------------------------------------------------------

cdef void energies(Block* B, const double* v) noexcept nogil:
    # T = ½ Σ v_iᵀ I_i v_i + ½ Σ armature_k q̇_k²,  U = -Σ m_i gᵀ (R_i c_i + p_i), on every
    # lane, from the body velocities and joint transforms of the last lane ABA
    # (kinematics.pyx's kinetic_energy, potential_energy)
    cdef const ModelC* m = B.m
    cdef Py_ssize_t i, j, k, l, p
    cdef double Iv[6 * W]
    cdef double vI[W]
    cdef double* R_i
    cdef double* p_i
    cdef const double* R_p
    cdef const double* E
    cdef const double* r
    cdef double c
    for l in range(W):
        B.kinetic[l] = 0.0
        B.potential[l] = 0.0
    for i in range(m.nb):
        # ½ v_iᵀ I_i v_i
        rbi_apply(m.mass[i], m.h + 3 * i, m.Ibar + 9 * i, B.w.v + 6 * W * i, Iv)
        dot6(B.w.v + 6 * W * i, Iv, vI)
        for l in range(W):
            B.kinetic[l] += 0.5 * vI[l]
        # R_i = R_λ(i) E_upᵀ,  p_i = p_λ(i) + R_λ(i) r_up   (R = 1, p = 0 for the world)
        p = m.parent[i]
        E = B.w.E_up + 9 * W * i
        r = B.w.r_up + 3 * W * i
        R_i = B.R + 9 * W * i
        p_i = B.p + 3 * W * i
        if p < 0:
            for j in range(3):
                for k in range(3):
                    for l in range(W):
                        R_i[(3 * j + k) * W + l] = E[(3 * k + j) * W + l]
            memcpy(p_i, r, 3 * W * sizeof(double))
        else:
            R_p = B.R + 9 * W * p
            for j in range(3):
                for k in range(3):
                    for l in range(W):
                        R_i[(3 * j + k) * W + l] = (R_p[3 * j * W + l] * E[3 * k * W + l]
                                                    + R_p[(3 * j + 1) * W + l] * E[(3 * k + 1) * W + l]
                                                    + R_p[(3 * j + 2) * W + l] * E[(3 * k + 2) * W + l])
                for l in range(W):
                    p_i[j * W + l] = (B.p[(3 * p + j) * W + l] + R_p[3 * j * W + l] * r[l]
                                      + R_p[(3 * j + 1) * W + l] * r[W + l]
                                      + R_p[(3 * j + 2) * W + l] * r[2 * W + l])
        # U -= m_i gᵀ C_i,  C_i = R_i c_i + p_i
        for j in range(3):
            c = m.mass[i] * m.gravity[j]
            for l in range(W):
                B.potential[l] -= c * (R_i[3 * j * W + l] * m.com[3 * i]
                                       + R_i[(3 * j + 1) * W + l] * m.com[3 * i + 1]
                                       + R_i[(3 * j + 2) * W + l] * m.com[3 * i + 2]
                                       + p_i[j * W + l])
    for j in range(m.nv):
        # rotor kinetic energy ½ armature_k q̇_k²
        for l in range(W):
            B.kinetic[l] += 0.5 * m.armature[j] * v[j * W + l] * v[j * W + l]


cdef void record_lanes(Block* B) noexcept nogil:
    # every running lane's next sample: q, v, a, τ, T, U (rollout.pyx's record)
    cdef const ModelC* m = B.m
    cdef Py_ssize_t nq = m.nq, nv = m.nv, l, r
    cdef _ro.Record* rec
    if not B.scalar_eval:
        energies(B, B.v)
    for l in range(B.n):
        if not B.live[l]:
            continue
        rec = &B.rec[l]
        r = rec.samples
        if B.scalar_eval:
            lane_get(B.q, nq, l, B.irow)
            lane_get(B.v, nv, l, B.irow + nq)
            lane_get(B.a, nv, l, B.arow)
            lane_get(B.tau, nv, l, B.row)
            _ro.record(m, B.work, &B.ctl[l], rec, r, B.irow, B.irow + nq, B.arow, B.row)
        else:
            lane_get(B.q, nq, l, rec.q + r * nq)
            lane_get(B.v, nv, l, rec.v + r * nv)
            lane_get(B.a, nv, l, rec.a + r * nv)
            if rec.tau != NULL:
                lane_get(B.tau, nv, l, rec.tau + r * nv)
            rec.kinetic[r] = B.kinetic[l]
            rec.potential[r] = B.potential[l]
        rec.samples = r + 1


cdef void keep_last(Block* B) noexcept nogil:
    # every running lane's q, v, a, τ of an unrecorded step
    cdef const ModelC* m = B.m
    cdef Py_ssize_t nq = m.nq, nv = m.nv, l
    cdef double* last
    for l in range(B.n):
        if B.live[l]:
            last = B.last + l * (nq + 3 * nv)
            lane_get(B.q, nq, l, last)
            lane_get(B.v, nv, l, last + nq)
            lane_get(B.a, nv, l, last + nq + nv)
            lane_get(B.tau, nv, l, last + nq + 2 * nv)


# --- the steps -----------------------------------------------------------------------------

cdef bint stage(Block* B, Py_ssize_t step, double t, double c, const double* kq_prev,
                const double* ka_prev, double* kq, double* ka) noexcept nogil:
    # x_s = x ⊕ c k_prev = (q ⊕ c k_q, v + c k_a);  k = [v_s; a(x_s)] in the chart at q;
    # False when no lane runs any more
    cdef Py_ssize_t nv = B.m.nv, j, l
    cdef int status[W]
    integrate_lanes(B, B.q, kq_prev, c, B.qs)
    for j in range(nv * W):
        kq[j] = B.v[j] + c * ka_prev[j]
    check_state(B, B.qs, kq, t + c)
    if not repair(B):
        return False
    evaluate_lanes(B, step, B.qs, kq, ka, status)
    for l in range(B.n):
        if B.live[l] and status[l] == _ro.DIVERGED:
            fail(B, l, _ro.FAIL_A, t + c)
        elif B.live[l] and status[l]:
            stop(B, l, status[l])
    if not repair(B):
        return False
    if B.job.plan.curved:
        transport_lanes(B, c, kq_prev, kq)
    return True


cdef bint rk4_step(Block* B, Py_ssize_t step, double t, double h) noexcept nogil:
    # k₂ = f(x ⊕ h/2 k₁), k₃ = f(x ⊕ h/2 k₂), k₄ = f(x ⊕ h k₃);  x₁ = x ⊕ h (k₁+2k₂+2k₃+k₄)/6
    cdef Py_ssize_t n = B.m.nv * W, j
    if not (stage(B, step, t, 0.5 * h, B.v, B.a, B.k2, B.k2 + n)
            and stage(B, step, t, 0.5 * h, B.k2, B.k2 + n, B.k3, B.k3 + n)
            and stage(B, step, t, h, B.k3, B.k3 + n, B.k4, B.k4 + n)):
        return False
    for j in range(n):
        B.kb[j] = (B.v[j] + 2.0 * B.k2[j] + 2.0 * B.k3[j] + B.k4[j]) / 6.0
        B.kb[n + j] = (B.a[j] + 2.0 * B.k2[n + j] + 2.0 * B.k3[n + j] + B.k4[n + j]) / 6.0
    integrate_lanes(B, B.q, B.kb, h, B.qs)
    memcpy(B.q, B.qs, B.m.nq * W * sizeof(double))
    for j in range(n):
        B.v[j] = B.v[j] + h * B.kb[n + j]
    return True


cdef void euler_step(Block* B, double h) noexcept nogil:
    # v₁ = v + h a;  q₁ = q ⊕ h v₁
    cdef Py_ssize_t j
    for j in range(B.m.nv * W):
        B.v[j] = B.v[j] + h * B.a[j]
    integrate_lanes(B, B.q, B.v, h, B.qs)
    memcpy(B.q, B.qs, B.m.nq * W * sizeof(double))


# --- a block of a batch --------------------------------------------------------------------

cdef void after_evaluation(Block* B, const int* status, double t) noexcept nogil:
    # a step's state evaluated: a non-finite acceleration is a divergence at t, a pivot
    # error ends the lane's rollout with its status
    cdef Py_ssize_t l
    for l in range(B.n):
        if not B.live[l]:
            continue
        if status[l] == _ro.DIVERGED or (status[l] == 0
                                         and not lane_finite(B.a, B.m.nv, l)):
            fail(B, l, _ro.FAIL_A, t)
        elif status[l]:
            stop(B, l, status[l])


cdef void rollout_lanes(Block* B) noexcept nogil:
    # rollout.pyx's rollout on every lane: the initial sample, then the steps
    cdef const _ro.Plan* plan = B.job.plan
    cdef Py_ssize_t k, l, n = plan.n_steps
    cdef int status[W]
    cdef double t, h
    if plan.interrupt != NULL and interrupted(plan.interrupt):
        for l in range(B.n):
            stop(B, l, _ro.INTERRUPTED)
        return
    # --- the initial sample: a = FD(q₀, v₀, τ)
    evaluate_lanes(B, 0, B.q, B.v, B.a, status)
    after_evaluation(B, status, _ro.grid_time(plan, 0))
    record_lanes(B)
    if not repair(B):
        return
    # --- the steps: x_{k+1} = step(x_k), a_{k+1} = FD(x_{k+1}), a sample every stride steps
    for k in range(n):
        if (k % _ro.INTERRUPT_STEPS == _ro.INTERRUPT_STEPS - 1 and plan.interrupt != NULL
                and interrupted(plan.interrupt)):
            for l in range(B.n):
                if B.live[l]:
                    stop(B, l, _ro.INTERRUPTED)
            return
        t = _ro.grid_time(plan, k)
        h = _ro.grid_time(plan, k + 1) - t
        if plan.integrator == _ro.RK4:
            if not rk4_step(B, k, t, h):
                return
        else:
            euler_step(B, h)
        check_state(B, B.q, B.v, t + h)
        if not repair(B):
            return
        evaluate_lanes(B, k + 1, B.q, B.v, B.a, status)
        after_evaluation(B, status, t + h)
        for l in range(B.n):
            if B.live[l]:
                B.rec[l].steps = k + 1
        if (k + 1) % plan.stride == 0 or k + 1 == n:
            record_lanes(B)
        elif plan.stride > 1:
            keep_last(B)
        if not repair(B):
            return


cdef void rollout_block(const void* job_record, int thread, double* work, Py_ssize_t k0,
                        Py_ssize_t n) noexcept nogil:
    # rollouts k0 .. k0 + n - 1 (n ≤ W) of the batch job (rollout.pxd's RolloutJob) in
    # lanes; their outputs, statuses and counts written as _rollout_batch.pyx's rollout_one
    # writes them
    cdef const _ro.RolloutJob* job = <const _ro.RolloutJob*>job_record
    cdef const ModelC* m = job.m
    cdef Block B
    cdef Py_ssize_t nq = m.nq, nv = m.nv, rows = job.rows, l, j, r
    cdef _ro.Record* rec
    bind_block(m, work, &B)
    B.job = job
    B.work = &job.works[thread]
    B.n = n
    B.stopped = False
    B.scalar_eval = False
    for l in range(W):
        r = k0 + (l if l < n else n - 1)
        for j in range(nq):
            B.q[j * W + l] = job.q0[r * nq + j]
        for j in range(nv):
            B.v[j * W + l] = job.v0[r * nv + j]
        B.w.q[l] = B.qrow + l * nq
        B.w.qd_row[l] = B.vrow + l * nv
        B.ctl[l] = job.ctl[0]
        if B.ctl[l].tau != NULL:
            B.ctl[l].tau = B.ctl[l].tau + r * job.tau_step
        B.live[l] = l < n
        B.status[l] = 0
        rec = &B.rec[l]
        rec.q = job.out[0] + r * rows * nq
        rec.v = job.out[1] + r * rows * nv
        rec.a = job.out[2] + r * rows * nv
        rec.tau = NULL if job.out[3] == NULL else job.out[3] + r * rows * nv
        rec.kinetic = job.out[4] + r * rows
        rec.potential = job.out[5] + r * rows
        rec.phi = NULL            # the lanes run only without constraints (_rollout_batch.pyx)
        rec.jv = NULL
        rec.samples = 0
        rec.steps = 0
        rec.failure = 0
        rec.failure_t = 0.0
    if job.ctl.f_ext == NULL:
        B.f_ext = NULL
    else:
        for j in range(6 * m.nb):
            for l in range(W):
                B.f_ext[j * W + l] = job.ctl.f_ext[j]
    rollout_lanes(&B)
    for l in range(n):
        rec = &B.rec[l]
        job.status[k0 + l] = B.status[l]
        job.samples[k0 + l] = rec.samples
        job.steps[k0 + l] = rec.steps
        job.failure[k0 + l] = rec.failure
        job.failure_t[k0 + l] = rec.failure_t if rec.failure else 0.0
        if B.status[l] == 0 and rec.samples != rows:
            job.status[k0 + l] = _ro.DIVERGED


_kernels.rollout_size = rollout_size
_kernels.rollout = rollout_block
