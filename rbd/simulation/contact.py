r"""Stepping with contacts, joint limits, friction loss, equality constraints, joint
springs and fluid forces: MuJoCo's semi-implicit Euler.

Each step (``mj_step`` with ``integrator="Euler"``, ``engine_forward.c``):

1. :func:`rbd.forward` gives the constrained acceleration :math:`a`;
2. joint damping :math:`D` is taken implicitly (``mj_EulerSkip``):
   :math:`a_E = (M + h D)^{-1} M a` (explicitly when the model's ``damper`` or
   ``eulerdamp`` flag is disabled);
3. :math:`v_{k+1} = v_k + h\,a_E` and :math:`q_{k+1} = q_k \oplus h\,v_{k+1}`
   (``mj_integratePos``).

The velocity and position updates happen in MuJoCo's coordinates (a free
joint's linear velocity in the world frame), through
:func:`rbd.mjcf.from_mujoco_state`, so that a run follows MuJoCo's step by step.

On the kernel backend the whole run is compiled (``rbd/_kernels/contact.pyx``, the
twin of this module: :func:`compiled_runs`, N initial states batched without the GIL)
for every model :func:`rbd.constraints.forward_compiled.compiled_forward` takes (fixed tendons,
disable flags, equality constraints and fluid forces included); the others run this module's
loop.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import algorithms
from .._backend import resolve
from ..constraints.collision import compiled_collision
from ..constraints.fluid import has_fluid
from ..constraints.forward import disabled, forward, joint_softness, options, own_slices
from ..constraints.forward_compiled import compiled_forward, kernel_tolerance
from ..constraints.kinds import active_constraints
from ..constraints.mujoco_model import solver_settings
from ..constraints.tendon_rows import tendons
from ..errors import InputError, SimulationError
from .rollouts import grid_steps, grid_time, sample_indices, sample_times
from .trajectory import Trajectory

#: The contacts of a sample whose force a contact run records
#: (``Trajectory.contact_force``: the first ones, in :func:`rbd.collide`'s order): a bound
#: on the memory of long runs of models with many candidate pairs (a humanoid's bound is
#: 190 contacts, 9 kB a sample).  ``contact_count`` and ``constraint_force`` hold them all.
RECORDED_CONTACTS = 32


def has_springs(model) -> bool:
    """True when a joint of the model has a spring (MJCF ``stiffness``)."""
    return bool(np.any(joint_softness(model)["stiffness"]))


def contact_only_terms(model) -> list[str]:
    """What of ``model`` only :func:`rbd.forward` holds and no other path approximates, in
    words: collision geoms, finite joint limits, joint springs, fluid forces."""
    return list(_contact_only_terms(model))


def _contact_only_terms(model):
    # lazily, so that has_contact_terms stops at the first
    if any(g.contype or g.conaffinity for g in getattr(model, "geoms", ()) or ()):
        yield "collision geoms (contacts)"
    lower, upper = np.asarray(model.lower, float), np.asarray(model.upper, float)
    if np.any(np.isfinite(lower)) or np.any(np.isfinite(upper)):
        yield "joint limits"
    if has_springs(model):
        yield "joint springs (stiffness)"
    if has_fluid(model):
        yield "fluid forces (<option density viscosity>)"


def has_contact_terms(model) -> bool:
    """True when the model has collision geoms, finite joint limits, active equality
    constraints, joint springs, fluid forces or fixed tendons: terms only
    :func:`rbd.forward` holds."""
    return (any(_contact_only_terms(model)) or bool(active_constraints(model, None))
            or bool(tendons(model)))


def limited_coordinates(model) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """The revolute and prismatic joints with a coordinate of their own, those
    :func:`warn_outside_limits` checks: their names, their coordinates' indices in ``q``
    and those coordinates' ``lower`` and ``upper`` limits.

    In body order; the model keeps them (they depend on the tree and the joint
    properties, whose changes clear its cache, as they clear ``model.lower``'s)."""
    def build():
        joints = [(body.joint_name, qs.start) for _, body, qs in own_slices(model, "q")
                  if body.joint.kind in ("revolute", "prismatic")]
        cols = np.array([k for _, k in joints], dtype=int)
        out = (cols, np.asarray(model.lower, float)[cols], np.asarray(model.upper, float)[cols])
        for array in out:
            array.setflags(write=False)
        return (tuple(name for name, _ in joints), *out)

    return model._derived("limited_coordinates", build) if hasattr(model, "_derived") \
        else build()


def warn_outside_limits(model, q, stacklevel: int = 1) -> None:
    """A ``RuntimeWarning`` naming the joints whose value is outside ``[lower, upper]``
    (``stacklevel`` as :func:`warnings.warn`'s, 1 being the function that calls this one);
    ``q`` one state or a batch ``(N, nq)``: one warning per state outside, checked at once
    (the joints of :func:`limited_coordinates`)."""
    names, cols, lower, upper = limited_coordinates(model)
    values = np.asarray(q, float)[..., cols]
    outside = (values < lower) | (values > upper)
    if not outside.any():
        return
    batch, outside = np.atleast_2d(values), np.atleast_2d(outside)
    for row in np.flatnonzero(outside.any(axis=1)):
        text = "; ".join(f"{name} = {x:.4g} not in [{lo:.4g}, {hi:.4g}]" for
                         name, x, lo, hi, out in
                         zip(names, batch[row], lower, upper, outside[row], strict=True) if out)
        warnings.warn("simulate: the initial state is outside joint limits: " + text,
                      RuntimeWarning, stacklevel=stacklevel + 1)


def _quat_integrate(quat, omega, h):
    """``mju_quatIntegrate``: ``quat ⊗ exp(h ω / 2)`` with ``quat = (w, x, y, z)``, normalized."""
    angle = np.linalg.norm(omega) * h
    if angle > 0:
        axis = omega / np.linalg.norm(omega)
        rot = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
        w1, v1 = quat[0], quat[1:]
        w2, v2 = rot[0], rot[1:]
        quat = np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])
    return quat / np.linalg.norm(quat)


def integrate_position(model, qpos, qvel, h):
    """MuJoCo's ``mj_integratePos`` in MuJoCo's coordinates (quaternions w first)."""
    from ..mjcf._state import _layout

    qpos = np.array(qpos, float)
    for kind, qs, vs in _layout(model):
        if kind == "free":
            qpos[qs.start:qs.start + 3] += h * qvel[vs.start:vs.start + 3]
            qpos[qs.start + 3:qs.stop] = _quat_integrate(qpos[qs.start + 3:qs.stop],
                                                         qvel[vs.start + 3:vs.stop], h)
        elif kind == "spherical":
            qpos[qs] = _quat_integrate(qpos[qs], qvel[vs], h)
        else:
            qpos[qs] += h * qvel[vs]
    return qpos


def euler_step(model, q, v, tau, h, *, backend=None, solver="newton", cone=None,
               constraints=None):
    """One semi-implicit Euler step; returns ``(q, v, a, ncon)`` (``a`` at the start state)."""
    q_next, v_next, result = step_with_forward(model, q, v, tau, h, backend=backend,
                                               solver=solver, cone=cone,
                                               constraints=constraints)
    return q_next, v_next, result.qdd, len(result.contacts)


def constraint_force(result) -> np.ndarray:
    r"""The generalized constraint force :math:`J^T f` of a :func:`rbd.forward` result
    (MuJoCo's ``qfrc_constraint``, in rbd's coordinates: :func:`rbd.mjcf.to_mujoco_force`
    gives MuJoCo's), ``(nv,)``."""
    return result.rows.J.T @ result.force if len(result.force) else np.zeros(len(result.qdd))


def contact_frame_forces(result) -> np.ndarray:
    r"""The force of each contact of a :func:`rbd.forward` result in the contact's frame
    (normal first, then the tangents, torsion and rolling), as MuJoCo's
    ``mj_contactForce``: ``(ncon, 6)``, zero past a contact's ``condim`` and for a contact
    with no rows (in the gap).

    An elliptic (or frictionless) contact's rows are these components already.  A
    pyramidal contact's :math:`2(d-1)` rows are the forces along the edges of the pyramid,
    decoded as ``mju_decodePyramid``: :math:`f_n = \sum_i f_i` and
    :math:`f_{t,k} = (f_{2k} - f_{2k+1})\,\mu_k`.
    """
    out = np.zeros((len(result.contacts), 6))
    rows = np.flatnonzero(np.asarray(result.kinds) == "contact")
    ids = np.asarray(result.ids)[rows]
    for c in np.unique(ids):
        f = np.asarray(result.force)[rows[ids == c]]
        dim = int(result.contacts.condim[c])
        if len(f) == dim:
            out[c, :dim] = f
        else:
            out[c, 0] = f.sum()
            out[c, 1:dim] = (f[0::2] - f[1::2]) * result.contacts.friction[c, :dim - 1]
    return out


def step_with_forward(model, q, v, tau, h, *, backend=None, solver="newton", cone=None,
                      constraints=None):
    """One semi-implicit Euler step (:func:`euler_step`); returns ``(q, v, result)`` with
    the :func:`rbd.forward` result at the start state."""
    from ..mjcf._state import from_mujoco_state, to_mujoco_state

    result = forward(model, q, v, tau, backend=backend, solver=solver, cone=cone,
                     constraints=constraints)
    a = result.qdd
    damping = np.asarray(model.damping, float)
    if np.any(damping > 0) and not (disabled(model, "damper") or disabled(model, "eulerdamp")):
        M = result.M if result.M is not None else algorithms.crba(model, q, backend=backend)
        a_step = a - np.linalg.solve(M + h * np.diag(damping), h * damping * a)
    else:
        a_step = a
    if model.mimic:       # no MuJoCo layout: the same step on rbd's joint manifolds
        v_next = v + h * a_step
        return algorithms.integrate(model, q, v_next, h), v_next, result
    qpos, qvel, qacc = to_mujoco_state(model, q, v, a_step)
    qvel = qvel + h * qacc
    qpos = integrate_position(model, qpos, qvel, h)
    q_next, v_next, _ = from_mujoco_state(model, qpos, qvel)
    return q_next, v_next, result


def simulate_contact(model, q0, v0, duration, dt, tau=None, record_every=1, backend=None,
                     solver="newton", cone=None, constraints=None) -> Trajectory:
    """One run of :func:`rbd.simulate` with contacts and limits (``integrator="euler"``).

    ``tau``: None, a constant ``(nv,)`` or one row per step ``(steps, nv)``.
    The trajectory's ``contact_count`` holds the number of contacts at each sample, its
    ``constraint_force`` the generalized constraint force (:func:`constraint_force`) and
    its ``contact_force`` each contact's force in its frame (:func:`contact_frame_forces`).
    A run whose state stops being finite, or whose step fails on a state running away,
    raises :class:`~rbd.SimulationError` with the samples computed until then.
    ``constraints``: the equality constraints made soft rows (default the model's active
    ones).  :func:`rbd.simulate` stacks batches of these runs, records the bilateral
    constraints' error and warns of a start outside the joint limits.  The run is the
    compiled one (:func:`compiled_runs`) when the model qualifies, with the same samples.
    """
    if callable(tau):
        raise InputError("tau: a contact run takes a constant tau or one row per step, "
                         "not a callable")
    steps = grid_steps(duration, dt)
    runs = compiled_runs(model, np.array(q0, float)[None], np.array(v0, float)[None], steps, dt,
                         tau, record_every, backend, solver, cone, constraints,
                         duration=duration)
    if runs is not None:
        if isinstance(runs[0], SimulationError):
            raise runs[0]
        return runs[0]
    tau_rows = None
    if tau is not None:
        tau_rows = np.asarray(tau, float)
        if tau_rows.shape[-1:] != (model.nv,) or tau_rows.ndim > 2:
            raise InputError(f"tau: expected shape ({model.nv},) or (steps, {model.nv}), "
                             f"got {tau_rows.shape}")
        if tau_rows.ndim == 1:
            tau_rows = np.broadcast_to(tau_rows, (steps + 1, model.nv))
    q, v = np.array(q0, float), np.array(v0, float)
    samples = []                # per sample: t, q, v, a, ncon, Jᵀ f, contact forces

    def keep(k, q, v, result):
        samples.append((grid_time(k, duration, dt), q, v, result.qdd, len(result.contacts),
                        constraint_force(result), contact_frame_forces(result)))

    for k in range(steps + 1):
        tk = None if tau_rows is None else tau_rows[min(k, len(tau_rows) - 1)]
        try:
            q_next, v_next, result = step_with_forward(model, q, v, tk, dt, backend=backend,
                                                       solver=solver, cone=cone,
                                                       constraints=constraints)
        except (ValueError, ArithmeticError) as exc:   # rbd's errors, LinAlgError, overflow
            raise SimulationError(
                f"simulate: the contact run stopped at t = {k * dt:g} (step {k}): its step "
                f"failed ({type(exc).__name__}: {exc}); the state is running away, try a "
                "smaller dt. The samples before there are in this error's .trajectory.",
                _trajectory(model, samples, dt, k, backend) if samples else None,
                diverged_at=k * dt) from exc
        kept = k % record_every == 0 or k == steps
        if kept:
            keep(k, q, v, result)
        if k == steps:
            break
        if not (np.all(np.isfinite(q_next)) and np.all(np.isfinite(v_next))):
            if not kept:                                # keep the last finite state
                keep(k, q, v, result)
            raise SimulationError(f"simulate: the contact run diverged at t = {k * dt:g} "
                                  f"(step {k}); try a smaller dt. The samples up to there "
                                  "are in this error's .trajectory.",
                                  _trajectory(model, samples, dt, k, backend),
                                  diverged_at=k * dt)
        q, v = q_next, v_next
    return _trajectory(model, samples, dt, steps, backend)


def _trajectory(model, samples, dt, steps, backend, energies=None) -> Trajectory:
    """The :class:`Trajectory` of a contact run's ``samples`` (columns ``t, q, v, a, ncon,
    Jᵀ f, contact forces``; ``steps`` taken; ``energies``: the kinetic and potential energy
    of each sample when already computed)."""
    ts, qs, vs, accs, counts, forces, frames = (list(x) for x in zip(*samples, strict=True))
    q_arr, v_arr = np.array(qs), np.array(vs)
    if energies is None:
        energies = (algorithms.kinetic_energy(model, q_arr, v_arr, backend=backend),
                    algorithms.potential_energy(model, q_arr, backend=backend))
    counts = np.array(counts, dtype=int)
    table = np.zeros((len(counts), min(int(counts.max(initial=0)), RECORDED_CONTACTS), 6))
    for j, (f, n) in enumerate(zip(frames, counts, strict=True)):
        n = min(n, table.shape[1])
        table[j, :n] = f[:n]
    return _trajectory_of(model, dt, steps, np.array(ts), q_arr, v_arr, np.array(accs),
                          energies, counts, np.array(forces).reshape(len(counts), model.nv),
                          table)


def _trajectory_of(model, dt, steps, t, q, v, a, energies, counts, forces,
                   table) -> Trajectory:
    """The :class:`Trajectory` of a contact run from its arrays (one row per sample;
    ``table``: the recorded contacts' frame forces, (samples, contacts, 6))."""
    return Trajectory(t=t, q=q, v=v, a=a, kinetic=np.asarray(energies[0]),
                      potential=np.asarray(energies[1]), model_name=model.name,
                      integrator="euler", dt=dt, steps=steps, evaluations=steps + 1,
                      contact_count=counts, constraint_force=forces, contact_force=table)


#: Why a compiled run stopped early (``rbd._kernels.contact.simulate_contact``'s status).
_STOPPED = {1: "the mass matrix is not positive definite",
            2: "the constraint solver failed",
            3: "more contacts than the compiled step holds",
            4: "the state is not finite"}


def compiled_runs(model, q0, v0, steps: int, dt: float, tau=None, record_every: int = 1,
                  backend=None, solver: str = "newton", cone=None, constraints=None,
                  num_threads=None, duration=None):
    """N contact runs by the compiled step (``rbd/_kernels/contact.pyx``), batched without
    the GIL, or None when the model needs the Python step (see
    :func:`rbd.constraints.forward.forward`'s Notes).

    Returns a list with, per initial state, its :class:`Trajectory` or, for a run that
    stopped early, the :class:`SimulationError` that holds its samples (as
    :func:`simulate_contact` raises it).  The samples are at the times of
    :func:`rbd.simulate`'s grid (``k dt``, the last one ``duration``: default
    ``steps dt``).
    """
    out = _run_compiled(model, q0, v0, steps, dt, tau, record_every, backend, solver, cone,
                        constraints, num_threads)
    if out is None:
        return None
    duration = steps * dt if duration is None else duration
    return [_compiled_trajectory(model, out, s, steps, dt, record_every, duration)
            for s in range(len(q0))]


def compiled_batch(model, q0, v0, duration: float, dt: float, tau=None,
                   record_every: int = 1, backend=None, constraints=None, num_threads=None):
    """N contact runs by the compiled step as one batch :class:`Trajectory`, or None when the
    model needs the Python step.

    The batch is the one :func:`rbd.simulate` stacks from :func:`compiled_runs`'s
    trajectories, built on the kernel's own arrays (``contact_force`` cut by the kernel to
    the most contacts of any sample, the totals counted there): the calling thread does
    no per-sample work after the runs, and, when every run finished, no array operation
    but the copy of the times, so that a batch keeps its speed-up on more threads.  The
    samples are at the times of :func:`rbd.simulate`'s grid (one per sample of a finished
    run).

    Returns
    -------
    (Trajectory, ndarray, dict)
        The batch (NaN after each run's last sample on the grid: a run that stopped early
        loses the sample of the state it stopped at when that is not on the grid, and its
        ``contact_count`` holds NaN there, as floats); the samples each run has on the grid;
        the :class:`SimulationError` of each run that stopped early, by index.
    """
    steps = grid_steps(duration, dt)
    out = _run_compiled(model, q0, v0, steps, dt, tau, record_every, backend, "newton", None,
                        constraints, num_threads)
    if out is None:
        return None
    columns = {name: out[name] for name in ("q", "v", "a", "kinetic", "potential",
                                            "constraint_force", "contact_force")}
    counts, lengths, failed = out["contact_count"], out["recorded"], {}
    if out["failures"]:
        stopped, status = out["stopped"], out["status"]
        failed = {int(k): _compiled_trajectory(model, out, int(k), steps, dt, record_every,
                                               duration) for k in np.flatnonzero(status)}
        lengths = lengths - np.where(status != 0, stopped % record_every != 0, 0)
        counts = counts.astype(float)
        for k in failed:          # the sample it stopped at, off the grid
            for x in (*columns.values(), counts):
                x[k, lengths[k]:] = np.nan
    batch = Trajectory(t=sample_times(steps, record_every, duration, dt), **columns,
                       model_name=model.name, integrator="euler", dt=dt, steps=steps,
                       evaluations=out["evaluations"], contact_count=counts)
    return batch, lengths, failed


def _run_compiled(model, q0, v0, steps: int, dt: float, tau, record_every: int, backend,
                  solver: str, cone, constraints, num_threads):
    """The result dict of ``rbd._kernels.contact.simulate_contact`` for these runs, or None
    when the model needs the Python step."""
    fm = compiled_forward(model, constraints) if resolve(backend) == "kernel" else None
    if fm is None:
        return None
    table = None if tau is None else np.atleast_2d(np.asarray(tau, float))
    collide, cone, iterations, tolerance = _kernel_settings(model, fm, solver, cone)
    run = _contact_kernel().simulate_contact
    return run(fm, q0, v0, table, float(dt), steps, int(record_every), collide, cone, solver,
               iterations, tolerance, num_threads, contact_width=RECORDED_CONTACTS)


def _kernel_settings(model, fm, solver: str, cone) -> tuple:
    """What the compiled step takes besides the forward model ``fm``: the compiled collision
    stage (None without contacts), the cone (``cone`` or the model's), the solver's iteration
    bound and its tolerance as the kernel takes it.

    Kept by the model beside ``fm``: they are read from what ``fm`` is built from (the
    geoms, contact pairs and excludes, the MJCF options and disable flags, the tree), and
    :func:`.compiled_forward` builds a new ``fm`` when one of those changes, so that a call
    with the model unchanged finds them in one look."""
    def build():
        collide = (compiled_collision(model) if getattr(model, "geoms", ()) and not (
            disabled(model, "contact") or disabled(model, "constraint")) else None)
        iterations, tolerance = solver_settings(model)      # the model's, as rbd.forward's
        return (collide, cone or options(model)["cone"], iterations,
                kernel_tolerance(model, solver, tolerance))

    # the entry holds fm, so that its id stays its own while the entry is kept
    return model._derived(("contact_step", id(fm), solver, cone), lambda: (fm, build()))[1]


def _contact_kernel():
    """The module ``rbd._kernels.contact``, imported on first use (the kernels are optional;
    its functions are read from it at each call)."""
    global _KERNEL
    if _KERNEL is None:
        from .._kernels import contact

        _KERNEL = contact
    return _KERNEL


_KERNEL = None


def _compiled_trajectory(model, out, s: int, steps: int, dt: float, every: int,
                         duration: float):
    """Run ``s`` of a compiled batch as :func:`simulate_contact` returns or raises it.

    Its columns are copies of the rows of the batch's arrays (``rbd._kernels.contact``'s
    ``simulate_contact``), taken whole: no loop over samples, so that the work left to the
    calling thread after the runs is a few copies per run, whatever their length.  A batch
    of one run whose every sample is kept gives its arrays' rows as they are (views that
    hold nothing more than the run)."""
    n, stop, status = int(out["recorded"][s]), int(out["stopped"][s]), int(out["status"][s])
    done = stop if status else steps
    whole = len(out["status"]) == 1 and n == out["q"].shape[1]    # one run, every row kept

    def column(name):
        row = out[name][s, :n]
        return row if whole else row.copy()

    counts = column("contact_count")
    width = min(int(counts.max(initial=0)), RECORDED_CONTACTS)
    t = grid_time(sample_indices(stop, every)[:n], duration, dt)
    traj = Trajectory(t=t, q=column("q"), v=column("v"),
                      a=column("a"), kinetic=column("kinetic"), potential=column("potential"),
                      model_name=model.name, integrator="euler", dt=dt, steps=done,
                      evaluations=done + 1, contact_count=counts,
                      constraint_force=column("constraint_force"),
                      contact_force=out["contact_force"][s, :n, :width].copy())
    if status == 0:
        return traj
    what = ("diverged" if status == 4 else f"stopped ({_STOPPED[status]})")
    return SimulationError(f"simulate: the contact run {what} at t = {stop * dt:g} "
                           f"(step {stop}); try a smaller dt. The samples up to there are in "
                           "this error's .trajectory.", traj, diverged_at=stop * dt)
