"""The compiled constrained solvers (rbd._kernels.constrained) against their reference text."""

from __future__ import annotations

import numpy as np
import pytest
from constraint_cases import consistent_velocity, mechanisms, random_loops
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd.constraints import mechanisms as mech

METHODS = ("kkt", "schur", "proximal")

#: The proximal force on redundant rows (rank below the rows) is fixed only by the
#: regularization μ (``rbd.reference.constrained.PROXIMAL_MU`` = 1e-6): a rounding
#: difference ε between two solves reaches it amplified by up to 1/μ, ε/μ ≈ 2e-10 relative
#: (measured: 1.5e-10 on random-5, whose proximal force is 6,000 where the least-norm one
#: is 8; the accelerations agree to 4e-13).  1e-8 leaves a margin of 50.
RTOL_PROXIMAL_REDUNDANT = 1e-8


def _cases():
    """The four-bar and the slider-crank (3-D, one redundant row each) and random trees with
    one to three closures (revolute, prismatic, ball and free joints)."""
    out = [pytest.param(m, q, None, id=m.name) for m, q in mechanisms()]
    for seed in range(6):
        model, q, cs = random_loops(seed)
        out.append(pytest.param(model, q, cs, id=f"random-{seed}"))
    return out


def _state(model, q, constraints, seed=0):
    rng = np.random.default_rng(seed)
    v = consistent_velocity(model, q, constraints, rng) + 0.1 * rng.normal(size=model.nv)
    return v, rng.normal(size=model.nv)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("model", "q", "constraints"), _cases())
def test_kernel_solvers_equal_the_reference(require_kernels, model, q, constraints, method):
    v, tau = _state(model, q, constraints)
    ker = rbd.constrained_dynamics(model, q, v, tau, constraints, method=method,
                                   backend="kernel")
    ref = rbd.constrained_dynamics(model, q, v, tau, constraints, method=method,
                                   backend="reference")
    assert_close(ker.qdd, ref.qdd, RTOL_EXACT, f"{method} qdd")
    redundant = method == "proximal" and ref.rank < len(ref.force)
    assert_close(ker.force, ref.force, RTOL_PROXIMAL_REDUNDANT if redundant else RTOL_EXACT,
                 f"{method} force")
    assert ker.rank == ref.rank
    if method == "proximal":
        assert 1 <= ker.iterations <= rbd.reference.constrained.PROXIMAL_MAX_ITER


def test_four_bar_in_3d_has_a_redundant_row_with_zero_force(require_kernels):
    # the out-of-plane row of the four-bar's anchor is identically zero: rank 2, and the
    # least-norm force puts nothing on it (the reference's answer, to 1e-10)
    model, q = mechanisms()[0]
    v, tau = _state(model, q, None, 3)
    for method in METHODS:
        res = rbd.constrained_dynamics(model, q, v, tau, method=method, backend="kernel")
        ref = rbd.constrained_dynamics(model, q, v, tau, method=method, backend="reference")
        assert res.rank == 2
        assert res.force[1] == 0.0
        assert_close(res.force, ref.force, RTOL_EXACT, method)


@pytest.mark.parametrize(("model", "q", "constraints"), _cases()[:4])
def test_kernel_impulse_and_delassus_equal_the_reference(require_kernels, model, q,
                                                         constraints):
    v, _ = _state(model, q, constraints, 1)
    for e in (0.0, 0.5):
        ker = rbd.impulse_dynamics(model, q, v, constraints, e, backend="kernel")
        ref = rbd.impulse_dynamics(model, q, v, constraints, e, backend="reference")
        assert_close(ker.v, ref.v, RTOL_EXACT, "v+")
        assert_close(ker.impulse, ref.impulse, RTOL_EXACT, "impulse")
    assert_close(rbd.delassus(model, q, constraints, backend="kernel"),
                 rbd.delassus(model, q, constraints, backend="reference"), RTOL_EXACT, "G")


def test_kernel_baumgarte_and_external_forces_equal_the_reference(require_kernels):
    model, q, cs = random_loops(2)
    v, tau = _state(model, q, cs, 2)
    q = rbd.integrate(model, q, v, 0.01)           # off the constraint manifold: φ ≠ 0
    f_ext = np.random.default_rng(5).normal(size=(model.nbodies, 6))
    for method in METHODS:
        ker, ref = (rbd.constrained_dynamics(model, q, v, tau, cs, method=method,
                                             baumgarte=(30.0, 8.0), f_ext=f_ext, backend=b)
                    for b in ("kernel", "reference"))
        assert_close(ker.qdd, ref.qdd, RTOL_EXACT, method)
        assert_close(ker.force, ref.force, RTOL_EXACT, method)


@pytest.mark.parametrize("method", METHODS)
def test_kernel_batches_equal_per_state_calls(require_kernels, method):
    model = mech.four_bar()
    Q = np.array([mech.four_bar_angles(t) for t in np.linspace(0.2, 2.8, 9)])
    rng = np.random.default_rng(4)
    V = np.array([consistent_velocity(model, q, None, rng) for q in Q])
    T = rng.normal(size=V.shape)
    res = rbd.constrained_dynamics(model, Q, V, T, method=method, backend="kernel")
    assert res.qdd.shape == (9, 3) and res.force.shape == (9, 3) and res.rank.shape == (9,)
    for k in range(9):
        one = rbd.constrained_dynamics(model, Q[k], V[k], T[k], method=method,
                                       backend="kernel")
        np.testing.assert_array_equal(res.qdd[k], one.qdd)
        np.testing.assert_array_equal(res.force[k], one.force)
        assert res.rank[k] == one.rank and res.iterations[k] == one.iterations
    imp = rbd.impulse_dynamics(model, Q, V + 1.0, backend="kernel")
    G = rbd.delassus(model, Q, backend="kernel")
    assert G.shape == (9, 3, 3)
    for k in (0, 8):
        np.testing.assert_array_equal(imp.v[k], rbd.impulse_dynamics(
            model, Q[k], V[k] + 1.0, backend="kernel").v)
        np.testing.assert_array_equal(G[k], rbd.delassus(model, Q[k], backend="kernel"))


def test_kernel_batches_are_the_same_bits_on_one_and_two_threads(require_kernels):
    """Each thread solves in its own arena and workspace rows (a cache line apart): the
    thread count changes no bit of a batch."""
    model = mech.four_bar()
    Q = np.array([mech.four_bar_angles(t) for t in np.linspace(0.2, 2.8, 9)])
    rng = np.random.default_rng(5)
    V = np.array([consistent_velocity(model, q, None, rng) for q in Q])
    T = rng.normal(size=V.shape)
    kernel = rbd.algorithms.compiled(model)
    saved = kernel.num_threads
    results = {}
    try:
        for threads in (1, 2):
            kernel.num_threads = threads
            results[threads] = rbd.constrained_dynamics(model, Q, V, T, backend="kernel")
    finally:
        kernel.num_threads = saved
    for name in ("qdd", "force", "rank", "iterations"):
        np.testing.assert_array_equal(getattr(results[2], name), getattr(results[1], name),
                                      err_msg=name)


@pytest.mark.parametrize(("args", "message"), [
    (lambda q, v, t: (q[:2], v, t), "q must have shape"),
    (lambda q, v, t: (q, np.array([np.nan, 0.0, 0.0]), t), "v has non-finite"),
    (lambda q, v, t: (q, v, np.zeros(4)), "tau must have shape"),
    (lambda q, v, t: (np.array([q, q]), np.array([v, v, v]), t), "batch size"),
])
@pytest.mark.parametrize("backend", [None, "kernel"], ids=["default", "kernel"])
def test_kernel_refuses_bad_states(require_kernels, args, message, backend):
    # the default backend reads the kept solvers first (the hot path): the same checks
    model, q = mechanisms()[0]
    v, tau = np.zeros(3), np.zeros(3)
    rbd.constrained_dynamics(model, q, v, tau, backend=backend)    # the solver is kept
    q_, v_, t_ = args(q, v, tau)
    kept = [np.array(a, copy=True) for a in (q_, v_, t_)]
    with pytest.raises(rbd.InputError, match=message):
        rbd.constrained_dynamics(model, q_, v_, t_, backend=backend)
    for a, b in zip((q_, v_, t_), kept, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(rbd.InputError, match="f_ext must have shape"):
        rbd.constrained_dynamics(model, q, v, tau, f_ext=np.zeros((2, 6)), backend=backend)
    with pytest.raises(rbd.InputError, match="v_minus must have shape"):
        rbd.impulse_dynamics(model, q, np.zeros(2), backend=backend)
    for method in ("KKT", ["kkt"], None):
        with pytest.raises(rbd.InputError, match="method must be one of"):
            rbd.constrained_dynamics(model, q, v, tau, method=method, backend=backend)


def test_kernel_results_are_the_frozen_records(require_kernels):
    """The compiled call builds ConstrainedDynamics and ImpulseDynamics itself: the same
    frozen dataclasses, fields and values as the reference backend's."""
    import dataclasses

    model, q = mechanisms()[0]
    v, tau = _state(model, q, None)
    for fn in (lambda b: rbd.constrained_dynamics(model, q, v, tau, backend=b),
               lambda b: rbd.impulse_dynamics(model, q, v, backend=b)):
        ours, theirs = fn(None), fn("reference")
        assert type(ours) is type(theirs)
        for field in dataclasses.fields(theirs):
            a, b = getattr(ours, field.name), getattr(theirs, field.name)
            assert type(a) is type(b) or np.ndim(a) == np.ndim(b) == 0, field.name
            assert_close(np.asarray(a, dtype=float), np.asarray(b, dtype=float), RTOL_EXACT,
                         field.name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            ours.force = None
        first = dataclasses.fields(theirs)[0].name
        assert getattr(dataclasses.replace(ours), first) is getattr(ours, first)
        assert repr(ours).startswith(type(theirs).__name__ + "(")


def test_kept_solvers_follow_the_model_constraints(require_kernels):
    """A constraint added to the model after a call is in the next call's rows."""
    from rbd import constraints as rc

    model, q = mech.four_bar(), mech.four_bar_angles(0.7)
    v, tau = np.zeros(model.nv), np.zeros(model.nv)
    assert rbd.constrained_dynamics(model, q, v, tau).force.shape == (3,)
    T = rbd.forward_kinematics(model, q)[1]
    model.add_constraint(rc.PointAnchor(model.body_names[1], None, [0.0, 0.0, 0.0], T[:3, 3]))
    assert rbd.constrained_dynamics(model, q, v, tau).force.shape == (6,)
    assert rbd.delassus(model, q).shape == (6, 6)


def test_kernel_solvers_are_kept_per_constraint_tuple(require_kernels, monkeypatch):
    # built once per (model, constraints): the records are resolved and packed once
    from rbd._kernels import _constrained_batch as compiled_module

    built = []

    class Counting(compiled_module.ConstrainedModel):
        def __init__(self, *args):
            built.append(1)
            super().__init__(*args)

    monkeypatch.setattr(compiled_module, "ConstrainedModel", Counting)
    model, q, cs = random_loops(1)
    v, tau = _state(model, q, cs)
    for backend in ("kernel", None, None):
        rbd.constrained_dynamics(model, q, v, tau, cs, backend=backend)
    rbd.constrained_dynamics(model, q, v, tau, tuple(cs), backend=None)
    rbd.constrained_dynamics(model, q, v, tau, cs[:1], backend="kernel")
    rbd.constrained_dynamics(model, q, v, tau, cs, backend="reference")
    assert len(built) == 2


def test_a_joint_without_inertia_is_refused_alike(backend):
    # the tip link has no mass: M is singular, and the anchor on the first link does not
    # hold the tip joint, so the augmented matrix is singular too
    from rbd import constraints as rc
    from rbd.joints import Revolute

    model = rbd.Model(name="massless tip")
    first = model.add_body(-1, Revolute((0, 1, 0)), None,
                           (1.0, np.array([0.5, 0.0, 0.0]), 0.1 * np.eye(3)), "a", "j1")
    model.add_body(first, Revolute((0, 1, 0)), (np.eye(3), [1.0, 0.0, 0.0]),
                   (0.0, np.zeros(3), np.zeros((3, 3))), "b", "j2")
    anchor = rc.PointAnchor("a", None, [1.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    for method in METHODS:
        with pytest.raises(rbd.ModelError, match="joint-space inertia M is not positive"):
            rbd.constrained_dynamics(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [anchor],
                                     method=method, backend=backend)


def _massless_tip():
    """A planar two-link arm whose tip link has no mass: M is singular."""
    from rbd.joints import Revolute

    model = rbd.Model(name="massless tip")
    first = model.add_body(-1, Revolute((0, 1, 0)), None,
                           (1.0, np.array([0.5, 0.0, 0.0]), 0.1 * np.eye(3)), "a", "j1")
    model.add_body(first, Revolute((0, 1, 0)), (np.eye(3), [1.0, 0.0, 0.0]),
                   (0.0, np.zeros(3), np.zeros((3, 3))), "b", "j2")
    return model


def test_kkt_with_a_singular_inertia_and_a_regular_augmented_matrix(backend):
    """M is singular (the tip moves no mass), but the coupling q₂ = q₁ / 2 holds the tip
    joint, so [[M, Jᵀ], [J, 0]] is regular: kkt solves it (an LU of the augmented matrix,
    as the reference's), on both backends alike, stacked and in a compiled rollout; the
    methods that factor M refuse it."""
    from rbd import constraints as rc

    model = _massless_tip()
    coupling = rc.JointCoupling("j2", "j1", [0.0, 0.5])
    q, v, tau = [0.3, 0.15], [0.2, 0.1], [0.1, 0.0]
    f_ext = np.random.default_rng(0).normal(size=(model.nbodies, 6))
    ref = rbd.constrained_dynamics(model, q, v, tau, [coupling], backend="reference")
    # by hand: q̈₂ = q̈₁ / 2 and M₁₁ q̈₁ + h₁ = τ₁ (the tip adds nothing)
    M = rbd.mass_matrix(model, q, backend="reference")
    h = rbd.nonlinear_effects(model, q, v, backend="reference")
    assert_close(ref.qdd, [(tau[0] - h[0]) / M[0, 0], (tau[0] - h[0]) / M[0, 0] / 2],
                 RTOL_EXACT, "q̈ by hand")
    for kw in ({}, {"f_ext": f_ext, "baumgarte": (3.0, 2.0)}):
        ref = rbd.constrained_dynamics(model, q, v, tau, [coupling], backend="reference", **kw)
        res = rbd.constrained_dynamics(model, q, v, tau, [coupling], backend=backend, **kw)
        assert_close(res.qdd, ref.qdd, RTOL_EXACT, "q̈")
        assert_close(res.force, ref.force, RTOL_EXACT, "force")
        assert res.rank == 1
    stack = rbd.constrained_dynamics(model, [q, [0.5, 0.25]], v, tau, [coupling],
                                     backend=backend)
    for k, q_k in enumerate((q, [0.5, 0.25])):
        one = rbd.constrained_dynamics(model, q_k, v, tau, [coupling], backend="reference")
        assert_close(stack.qdd[k], one.qdd, RTOL_EXACT, "stacked")
    for method in ("schur", "proximal"):
        with pytest.raises(rbd.ModelError, match="joint-space inertia M is not positive"):
            rbd.constrained_dynamics(model, q, v, tau, [coupling], method=method,
                                     backend=backend)
    if backend == "kernel":
        traj = rbd.simulate(model, q, v, 0.05, 1e-3, constraints=[coupling], contact=False)
        slow = rbd.simulate(model, q, v, 0.05, 1e-3, constraints=[coupling], contact=False,
                            compiled=False, backend="reference")
        assert_close(traj.q, slow.q, RTOL_EXACT, "rollout q")
