"""Analytical derivatives of the dynamics: rbd.rnea_derivatives, rbd.aba_derivatives,
rbd.linearize.

Checked against central finite differences on the configuration manifold
(``integrate(q, ±h e_c)``), against the algorithms they differentiate (``∂τ/∂a = M``,
``∂q̈/∂τ = M⁻¹``), against Pinocchio's ``computeRNEADerivatives`` /
``computeABADerivatives`` (whose tangent increments are local, as ours), batched against
per call, the kernel against the reference, and on a pendulum whose linearization is
known in closed form.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ALL_JOINTS, RTOL_EXACT, RTOL_FD, assert_close, random_models

import rbd

#: Central-difference step: truncation error O(h²) ~ 1e-12 and rounding error
#: O(eps/h) ~ 1e-10 on O(1) quantities, so RTOL_FD = 1e-6 (tests/helpers.py) leaves a
#: margin of 10⁴ (measured disagreements are ≤ 1e-8).
H = 1e-6

#: Pinocchio computes the same derivatives by a different recursion (world frame); both
#: are exact in double precision, and forward dynamics multiplies by M⁻¹ (κ(M) ≲ 1e4 on
#: these trees and robots), so 1e-9 relative leaves a margin over rounding (measured
#: disagreements are below 1e-11).
RTOL_PIN = 1e-9


def models():
    zoo = random_models(3)
    armed = rbd.testing.random_model(5, 6, ALL_JOINTS, floating_base=True)
    armed.set_joint_properties(armed.joint_names[1], armature=0.3)
    armed.set_joint_properties(armed.joint_names[-1], armature=0.05)
    assert armed.bodies[0].joint.kind == "free"
    armed.set_joint_properties(armed.joint_names[0], armature=0.2)  # and its velocity product
    return [*zoo, armed]


MODELS = models()
IDS = [f"{m.nbodies}:{'-'.join(b.joint.kind[:3] for b in m.bodies)}" for m in MODELS]


def external_forces(model, seed=0):
    return np.random.default_rng(seed).normal(size=(model.nbodies, 6))


def central_difference(fn, model, q, v, x, backend):
    """``(∂fn/∂q, ∂fn/∂v)`` by central differences, ``q`` moved on its manifold."""
    nv = model.nv
    dq, dv = np.zeros((nv, nv)), np.zeros((nv, nv))
    for c in range(nv):
        e = np.zeros(nv)
        e[c] = H
        q_plus = rbd.integrate(model, q, e, backend=backend)
        q_minus = rbd.integrate(model, q, -e, backend=backend)
        dq[:, c] = (fn(q_plus, v, x) - fn(q_minus, v, x)) / (2 * H)
        dv[:, c] = (fn(q, v + e, x) - fn(q, v - e, x)) / (2 * H)
    return dq, dv


# --- finite differences on the manifold ------------------------------------------------------
# (derivative, the function it differentiates, the matrix its last output equals, symbol)
DIFFERENTIATED = {
    "rnea": (rbd.rnea_derivatives, rbd.rnea, rbd.crba, "τ"),
    "aba": (rbd.aba_derivatives, rbd.aba, rbd.mass_matrix_inverse, "q̈"),
}


def check_against_finite_differences(model, which, q, v, x, f, backend):
    """The three outputs of a derivative function: central differences and the matrix."""
    derivatives, fn, last, y = DIFFERENTIATED[which]
    dq, dv, dx = derivatives(model, q, v, x, f, backend=backend)
    fd_q, fd_v = central_difference(
        lambda q, v, x: fn(model, q, v, x, f, backend=backend), model, q, v, x, backend)
    assert_close(dq, fd_q, RTOL_FD, f"∂{y}/∂q")
    assert_close(dv, fd_v, RTOL_FD, f"∂{y}/∂v")
    assert_close(dx, last(model, q, backend=backend), RTOL_EXACT, f"last output = {last.__name__}")


@pytest.mark.slow
@pytest.mark.parametrize("which", DIFFERENTIATED)
@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_derivatives_match_finite_differences(model, which, backend):
    q, v, x = rbd.testing.random_state(model, 1)
    check_against_finite_differences(model, which, q, v, x, external_forces(model), backend)


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_forward_derivatives_are_minus_inverse_mass_times_inverse_ones(model, backend):
    """∂q̈/∂x = −M⁻¹ ∂τ/∂x at q̈ = FD(q, v, τ): the identity, checked at 1e-10."""
    q, v, tau = rbd.testing.random_state(model, 3)
    qdd = rbd.aba(model, q, v, tau, backend=backend)
    dq, dv, M = rbd.rnea_derivatives(model, q, v, qdd, backend=backend)
    fq, fv, M_inv = rbd.aba_derivatives(model, q, v, tau, backend=backend)
    assert_close(M @ fq, -dq, RTOL_EXACT, "M ∂q̈/∂q")
    assert_close(M @ fv, -dv, RTOL_EXACT, "M ∂q̈/∂v")
    assert_close(M @ M_inv, np.eye(model.nv), RTOL_EXACT, "M M⁻¹")


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_kernel_equals_reference(model, require_kernels):
    q, v, a = rbd.testing.random_state(model, 4)
    f = external_forces(model, 2)
    for fn in (rbd.rnea_derivatives, rbd.aba_derivatives):
        ref = fn(model, q, v, a, f, backend="reference")
        ker = fn(model, q, v, a, f, backend="kernel")
        for r, k, what in zip(ref, ker, ("q", "v", "a/τ"), strict=True):
            assert_close(k, r, RTOL_EXACT, f"{fn.__name__} ∂/∂{what}")


@pytest.mark.parametrize("model", MODELS, ids=IDS)
def test_world_frame_sweeps_equal_the_column_by_column_derivation(model):
    """Two derivations in the reference: W (1)–(11) in one sweep each way, D (1)–(8) per column."""
    from rbd.reference import derivatives, derivatives_tangent

    q, v, a = rbd.testing.random_state(model, 8)
    f = external_forces(model, 3)
    world = derivatives.rnea_derivatives(model, q, v, a, f)
    columns = derivatives_tangent.rnea_derivatives(model, q, v, a, f)
    for w, c, what in zip(world, columns, ("q", "v", "a"), strict=True):
        assert_close(w, c, RTOL_EXACT, f"∂τ/∂{what}")


def test_the_kernel_workspace_is_clean_between_calls(require_kernels):
    """A call leaves nothing behind that changes the next one (the composite inertia
    variation once kept stale rows from the previous call): repeated calls are bit-equal."""
    model = MODELS[-1]
    q, v, x = rbd.testing.random_state(model, 9)
    for fn in (rbd.aba_derivatives, rbd.rnea_derivatives):
        first = fn(model, q, v, x, backend="kernel")
        rbd.rnea_derivatives(model, *rbd.testing.random_state(model, 10), backend="kernel")
        again = fn(model, q, v, x, backend="kernel")
        for a, b in zip(first, again, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["tree31", "humanoid", "RC20"])
def test_sparse_factorization_keeps_the_tree_pattern(name):
    """M = Lᵀ L with L[k, i] = 0 (exactly) unless i is on k's path to the root: no fill-in;
    solves and inverse agree with dense linear algebra to rounding (κ(M) ≲ 1e4 here)."""
    from rbd.reference.crba import ltl, ltl_inverse, ltl_solve

    model = rbd.models.get(name)
    M = rbd.crba(model, rbd.random_configuration(model, 13), backend="reference")
    L = ltl(model, M)
    on_path = np.eye(model.nv, dtype=bool)
    for k in range(model.nv):
        i = model.dof_parent[k]
        while i >= 0:
            on_path[k, i] = True
            i = model.dof_parent[i]
    assert np.all(L[~on_path] == 0.0)
    assert_close(L.T @ L, M, RTOL_EXACT, "Lᵀ L")
    B = np.random.default_rng(14).normal(size=(model.nv, 3))
    assert_close(M @ ltl_solve(model, L, B), B, RTOL_EXACT, "M M⁻¹ B")
    assert_close(M @ ltl_inverse(model, L), np.eye(model.nv), RTOL_EXACT, "M M⁻¹")


@pytest.mark.parametrize("name", ["arm7", "tree31", "RC20", "humanoid"])
def test_both_factorizations_of_the_kernel_equal_the_reference(name, require_kernels):
    """The kernel factors M sparsely (small or branched trees: arm7, tree31) or densely with
    LAPACK (long chains: RC20); both equal the reference's sparse factorization."""
    model = rbd.models.get(name)
    q, v, tau = rbd.testing.random_state(model, 15)
    ref = rbd.aba_derivatives(model, q, v, tau, backend="reference")
    ker = rbd.aba_derivatives(model, q, v, tau, backend="kernel")
    for r, k, what in zip(ref, ker, ("q", "v", "τ"), strict=True):
        assert_close(k, r, RTOL_EXACT, f"∂q̈/∂{what}")


def test_gravity_stiffness_is_the_hessian_of_the_potential(backend):
    """At rest, ∂τ/∂q = ∂g/∂q = ∂²U/∂q²: symmetric (a check independent of the RNEA)."""
    model = rbd.testing.random_model(6, 6, ("revolute", "prismatic", "helical"))
    q = rbd.random_configuration(model, 6)
    zero = np.zeros(model.nv)
    dq, dv, _ = rbd.rnea_derivatives(model, q, zero, zero, backend=backend)
    assert_close(dq, dq.T, RTOL_EXACT, "∂g/∂q symmetric")
    assert_close(dv, np.zeros_like(dv), RTOL_EXACT, "∂τ/∂v at rest")


# --- batches ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("fn", [rbd.rnea_derivatives, rbd.aba_derivatives])
@pytest.mark.parametrize("model", [MODELS[1], rbd.models.get("RC20")], ids=["tree", "RC20"])
def test_batched_equals_per_call(fn, model, backend):
    """Per-thread workspaces; RC20 takes the kernel's dense LAPACK path inside the threads."""
    rng = np.random.default_rng(5)
    states = [rbd.testing.random_state(model, rng) for _ in range(5)]
    q, v, x = (np.array(s) for s in zip(*states, strict=True))
    f = np.random.default_rng(6).normal(size=(5, model.nbodies, 6))
    batched = fn(model, q, v, x, f, backend=backend)
    assert all(b.shape == (5, model.nv, model.nv) for b in batched)
    for k in range(5):
        single = fn(model, q[k], v[k], x[k], f[k], backend=backend)
        for b, s in zip(batched, single, strict=True):
            assert_close(b[k], s, RTOL_EXACT, f"{fn.__name__} state {k}")
    empty = fn(model, q[:0], v[:0], x[:0], backend=backend)
    assert all(e.shape == (0, model.nv, model.nv) for e in empty)


def test_linearize_batched_equals_per_call(backend):
    model = rbd.models.double_pendulum()
    q = np.array([[0.1, -0.2], [0.5, 0.3]])
    A, B = rbd.linearize(model, q, np.zeros((2, 2)), np.zeros(2), backend=backend)
    assert A.shape == (2, 4, 4) and B.shape == (2, 4, 2)
    for k in range(2):
        A_k, B_k = rbd.linearize(model, q[k], np.zeros(2), np.zeros(2), backend=backend)
        assert_close(A[k], A_k, RTOL_EXACT, "A")
        assert_close(B[k], B_k, RTOL_EXACT, "B")


# --- linearization -----------------------------------------------------------------------------
def point_pendulum(mass=2.0, length=0.7, g=9.81):
    model = rbd.Model(name="point pendulum", gravity=(0.0, 0.0, -g))
    model.add_body(-1, rbd.Revolute([0, 1, 0]), None, (mass, [0, 0, -length], np.zeros((3, 3))),
                   "bob", "hinge")
    return model


def test_pendulum_at_the_bottom_oscillates_at_sqrt_g_over_l(backend):
    g, length = 9.81, 0.7
    model = point_pendulum(2.0, length, g)
    A, B = rbd.linearize(model, [0.0], [0.0], [0.0], backend=backend)
    eig = np.sort_complex(np.linalg.eigvals(A))
    omega = np.sqrt(g / length)
    assert_close(eig.real, [0.0, 0.0], RTOL_EXACT, "eigenvalues: real parts")
    assert_close(eig.imag, [-omega, omega], RTOL_EXACT, "eigenvalues: ±i√(g/l)")
    assert_close(B, [[0.0], [1.0 / (2.0 * length**2)]], RTOL_EXACT, "B = [0; M⁻¹]")


def test_pendulum_on_top_is_unstable(backend):
    g, length = 9.81, 0.7
    model = point_pendulum(2.0, length, g)
    A, _ = rbd.linearize(model, [np.pi], [0.0], [0.0], backend=backend)
    eig = np.sort(np.linalg.eigvals(A).real)
    assert_close(eig, [-np.sqrt(g / length), np.sqrt(g / length)], RTOL_EXACT, "eigenvalues")


def test_linearize_predicts_a_small_step_of_a_ball_joint(backend):
    """The tangent-space state: x(dt) ≈ x + dt (A x + B u + drift) with δq local."""
    model = rbd.models.pendulum(2)
    rng = np.random.default_rng(8)
    q = rbd.random_configuration(model, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    A, B = rbd.linearize(model, q, v, tau, backend=backend)
    dx, du = 1e-5 * rng.normal(size=2 * model.nv), 1e-5 * rng.normal(size=model.nv)
    q1 = rbd.integrate(model, q, dx[:model.nv], backend=backend)
    qdd0 = rbd.aba(model, q, v, tau, backend=backend)
    qdd1 = rbd.aba(model, q1, v + dx[model.nv:], tau + du, backend=backend)
    predicted = (A @ dx + B @ du)[model.nv:]
    # the remainder is second order: relative to the first-order change it is of order
    # |dx| · (second over first derivatives) ~ 1e-5 · O(10); a wrong column shows at O(1)
    error = np.max(np.abs(qdd1 - qdd0 - predicted)) / np.max(np.abs(predicted))
    assert error < 1e-3, f"δq̈: relative error {error:.2e} of the linear prediction"


# --- Pinocchio ------------------------------------------------------------------------------------
def _pinocchio():
    return pytest.importorskip("pinocchio", reason="the Pinocchio cross-check needs `pin`")


def compare_with_pinocchio(model, pmodel, rng, nstates, backend):
    from test_pinocchio import PinMap

    pin = _pinocchio()
    pm = PinMap(model, pmodel)
    worst = 0.0
    for _ in range(nstates):
        q, v, a = rbd.testing.random_state(model, rng)
        f = rng.normal(size=(model.nbodies, 6))
        qp, vp, ap = pm.q(q), pm.v(v), pm.v(a)
        # external forces in each joint's (= body's) frame, Pinocchio's order [f; n]
        args = (pin.StdVec_Force([pin.Force.Zero()] * pmodel.njoints),)
        for i in range(model.nbodies):
            args[0][pm.joint_id[i]] = pin.Force(f[i, 3:], f[i, :3])
        pin.computeRNEADerivatives(pmodel, pm.pdata, qp, vp, ap, *args)
        ours = rbd.rnea_derivatives(model, q, v, a, f, backend=backend)
        theirs = (pm.pdata.dtau_dq, pm.pdata.dtau_dv, np.triu(pm.pdata.M))
        theirs = (*theirs[:2], theirs[2] + np.triu(theirs[2], 1).T)
        for o, t, what in zip(ours, theirs, ("dtau_dq", "dtau_dv", "M"), strict=True):
            worst = max(worst, rbd.testing.relative_difference(o, pm.M_back(t)))
            assert_close(o, pm.M_back(t), RTOL_PIN, what)
        tau = rng.normal(size=model.nv)
        pin.computeABADerivatives(pmodel, pm.pdata, qp, vp, pm.v(tau), *args)
        ours = rbd.aba_derivatives(model, q, v, tau, f, backend=backend)
        M_inv = np.triu(pm.pdata.Minv)
        theirs = (pm.pdata.ddq_dq, pm.pdata.ddq_dv, M_inv + np.triu(M_inv, 1).T)
        for o, t, what in zip(ours, theirs, ("ddq_dq", "ddq_dv", "Minv"), strict=True):
            worst = max(worst, rbd.testing.relative_difference(o, pm.M_back(t)))
            assert_close(o, pm.M_back(t), RTOL_PIN, what)
    return worst


@pytest.mark.parametrize("seed", range(8))
def test_random_tree_matches_pinocchio(seed, backend):
    pin = _pinocchio()
    from test_pinocchio import random_tree

    model, text, root_joint = random_tree(seed)
    pmodel = (pin.buildModelFromXML(text) if root_joint is None
              else pin.buildModelFromXML(text, root_joint))
    compare_with_pinocchio(model, pmodel, np.random.default_rng(seed), 2, backend)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ur5", "panda", "solo12", "talos"])
def test_real_robot_matches_pinocchio(name, backend):
    pin = _pinocchio()
    from test_pinocchio import ROBOTS, _robot_path

    path = _robot_path(name)
    floating = ROBOTS[name][1]
    model = rbd.load_urdf(path, floating_base=floating).full_model()
    pmodel = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
              else pin.buildModelFromUrdf(path))
    compare_with_pinocchio(model, pmodel, np.random.default_rng(11), 1, backend)


# --- mimic joints, refusals, bad input ------------------------------------------------------------
def test_mimic_model_derivatives_match_finite_differences(backend):
    from test_mimic import gripper

    model = gripper()
    rng = np.random.default_rng(12)
    q = rbd.random_configuration(model, rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    for which in DIFFERENTIATED:
        check_against_finite_differences(model, which, q, v, a, None, backend)


def test_symbolic_joints_are_refused_by_name(backend):
    sympy = pytest.importorskip("sympy")
    from rbd.symbolic import SymbolicJoint

    a = sympy.Symbol("a")
    G = sympy.eye(4)
    G[:3, :3] = sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0],
                              [0, 0, 1]])
    G[0, 3] = 0.2 * a
    model = rbd.Model(name="cam")
    model.add_body(-1, SymbolicJoint(G, [a], name="cam"), None,
                   (1.0, [0.1, 0, 0], 0.01 * np.eye(3)), "follower", "cam_joint")
    for fn in (rbd.rnea_derivatives, rbd.aba_derivatives):
        with pytest.raises(rbd.ModelError, match="'cam_joint'.*not 'symbolic'.*finite differences"):
            fn(model, [0.1], [0.2], [0.3], backend=backend)


def test_bad_input_names_the_argument(backend):
    model = rbd.models.double_pendulum()
    with pytest.raises(rbd.InputError, match="^v must have shape"):
        rbd.rnea_derivatives(model, [0.0, 0.0], [0.0], [0.0, 0.0], backend=backend)
    with pytest.raises(rbd.InputError, match="tau has non-finite"):
        rbd.aba_derivatives(model, [0.0, 0.0], [0.0, 0.0], [np.nan, 0.0], backend=backend)
    with pytest.raises(rbd.InputError, match="f_ext must have shape"):
        rbd.linearize(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], np.zeros((3, 6)),
                      backend=backend)


# --- the implicit Euler integrator (Newton on the analytical Jacobian) ----------------------------
def stiff_chain():
    """Two 1 m links and a 1 cm tip link: hanging modes at 2.7, 9.6 and 32 rad/s."""
    from rbd.spatial import plux

    z = np.array([0.0, 0.0, 1.0])
    model = rbd.Model(name="stiff chain")
    b = model.add_body(-1, rbd.Revolute([0, 1, 0]), None, (1.0, -0.5 * z, 0.02 * np.eye(3)),
                       "l1", "j1")
    b = model.add_body(b, rbd.Revolute([0, 1, 0]), plux(np.eye(3), -z),
                       (1.0, -0.5 * z, 0.02 * np.eye(3)), "l2", "j2")
    model.add_body(b, rbd.Revolute([0, 1, 0]), plux(np.eye(3), -z),
                   (0.05, -0.01 * z, 1e-6 * np.eye(3)), "tip", "j3")
    return model


@pytest.mark.slow
def test_implicit_euler_dissipates_energy_on_a_stiff_chain(backend):
    """dt = 0.05 s is 1.6/ω of the fastest mode: semi-implicit Euler gains energy, backward
    Euler loses it monotonically (it is L-stable and first order)."""
    model = stiff_chain()
    q0, v0 = np.array([0.5, -0.3, 0.8]), np.zeros(3)

    def energy(traj):
        return (rbd.kinetic_energy(model, traj.q, traj.v, backend=backend)
                + rbd.potential_energy(model, traj.q, backend=backend))

    implicit = energy(rbd.simulate(model, q0, v0, 2.0, 0.05, integrator="implicit_euler",
                                   backend=backend))
    explicit = energy(rbd.simulate(model, q0, v0, 2.0, 0.05, integrator="euler",
                                   backend=backend))
    assert len(implicit) == 41 and np.all(np.isfinite(implicit))
    # non-increasing up to the Newton tolerance (1e-12 on v) times the energy scale
    assert np.all(np.diff(implicit) <= 1e-9 * abs(implicit[0]))
    assert implicit[-1] < implicit[0] - 0.1          # visibly dissipative at this step
    assert explicit.max() > explicit[0] + 1.0         # the explicit method gains > 1 J
