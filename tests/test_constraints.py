"""Bilateral constraints: rows against finite differences, the three solvers, impulses, assembly."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from constraint_cases import closing_anchor, consistent_velocity, mechanisms, random_loops
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd import constraints as rc
from rbd.constraints import mechanisms as mech

#: Central differences with step 1e-6 on O(1) quantities: truncation ~1e-12, rounding ~1e-10.
H_FD = 1e-6
RTOL_FD = 1e-6

#: Joint kinds of the finite-difference trees: every kind with a coordinate.
FD_JOINTS = ("revolute", "prismatic", "helical", "universal", "spherical", "planar", "free")

METHODS = ("kkt", "schur", "proximal")

#: The proximal method's force on redundant rows: each step adds the rounding error of
#: γ − J q̈₀ in the null space of G divided by μ = 1e-6 max(diag G), ~1e-10 relative, over
#: 3–5 steps (measured at most 7e-10 on 40 random loops); the generalized force Jᵀ f and
#: q̈ are unaffected and compared at RTOL_EXACT.
RTOL_PROXIMAL_FORCE = 1e-8


def torque_difference(M, scale, x, y) -> float:
    """Accelerations compared in torque space, as rbd.testing.quantity_difference does."""
    return float(np.abs(M @ (x - y)).max() / scale)


def _fd_cases():
    """Random trees over every joint kind with point, frame and coupling rows."""
    cases = []
    for seed in range(6):
        rng = np.random.default_rng(300 + seed)
        model = rbd.testing.random_model(rng, 6, FD_JOINTS, floating_base=seed % 2 == 1)
        q0 = rbd.random_configuration(model, rng)
        constraints = [closing_anchor(model, q0, rng, "point", 5, None),
                       closing_anchor(model, q0, rng, "frame", 4, 1),
                       closing_anchor(model, q0, rng, "frame", 3, None),
                       closing_anchor(model, q0, rng, "point", 2, 0)]
        ones = [b.joint_name for b in model.bodies if b.joint.kind in rc.kinds.COUPLED_KINDS]
        if len(ones) >= 2:
            constraints.append(rc.JointCoupling(ones[1], ones[0], [0.1, -0.7, 0.3, 0.2]))
        cases.append((model, q0, constraints, rng))
    return cases


@pytest.mark.parametrize("k", range(6))
def test_jacobian_is_the_derivative_of_the_error(k):
    """J v = dφ/dt along q(t) = integrate(q, t v); the anchors hold at q, so the rotation
    error's logarithm is differentiated at the identity, where its derivative is ω."""
    model, q, constraints, rng = _fd_cases()[k]
    v = rng.normal(size=model.nv)
    J = rbd.constraint_jacobian(model, q, constraints)
    plus = rbd.constraint_error(model, rbd.integrate(model, q, v, H_FD), constraints)
    minus = rbd.constraint_error(model, rbd.integrate(model, q, v, -H_FD), constraints)
    assert J.shape == (sum(c.rows for c in constraints), model.nv)
    assert_close(J @ v, (plus - minus) / (2 * H_FD), RTOL_FD, "J v against dφ/dt")


@pytest.mark.parametrize("k", range(6))
def test_gamma_is_minus_jdot_v(k):
    """γ = −J̇ v: the derivative of J(q(t)) v along the motion with v̇ = 0 (q̈ = 0)."""
    model, q, constraints, rng = _fd_cases()[k]
    v = rng.normal(size=model.nv)
    q_plus, q_minus = rbd.integrate(model, q, v, H_FD), rbd.integrate(model, q, v, -H_FD)
    Jdot_v = (rbd.constraint_jacobian(model, q_plus, constraints) @ v
              - rbd.constraint_jacobian(model, q_minus, constraints) @ v) / (2 * H_FD)
    _, _, gamma = _rows(model, q, v, constraints)
    assert_close(gamma, -Jdot_v, RTOL_FD, "γ against −J̇ v")


def _rows(model, q, v, constraints):
    from rbd.reference.constraints import constraint_rows

    records = [c.resolve(model) for c in constraints]
    return constraint_rows(model, q, v, records)


@pytest.mark.parametrize("seed", range(8))
def test_methods_and_backends_agree_and_satisfy_the_equations(seed, backend):
    model, q, constraints = random_loops(seed)
    rng = np.random.default_rng(seed)
    v = consistent_velocity(model, q, constraints, rng)
    tau = rng.normal(size=model.nv)
    phi, J, gamma = _rows(model, q, v, constraints)
    assert np.abs(phi).max() < 1e-12
    M, h = rbd.crba(model, q), rbd.nonlinear_effects(model, q, v)
    first = None
    for method in METHODS:
        res = rbd.constrained_dynamics(model, q, v, tau, constraints, method=method,
                                       backend=backend)
        scale = max(1.0, np.abs(tau).max(), np.abs(h).max(), np.abs(J.T @ res.force).max())
        assert np.abs(M @ res.qdd + h - tau - J.T @ res.force).max() <= RTOL_EXACT * scale
        assert np.abs(J @ res.qdd - gamma).max() <= RTOL_EXACT * max(1.0, np.abs(gamma).max())
        if first is None:
            first = res
            reference = rbd.constrained_dynamics(model, q, v, tau, constraints,
                                                 backend="reference")
            assert torque_difference(M, scale, res.qdd, reference.qdd) <= RTOL_EXACT
        assert torque_difference(M, scale, res.qdd, first.qdd) <= RTOL_EXACT, method
        assert_close(J.T @ res.force, J.T @ first.force, RTOL_EXACT, f"{method} Jᵀ force")
        assert_close(res.force, first.force,
                     RTOL_PROXIMAL_FORCE if method == "proximal" else RTOL_EXACT,
                     f"{method} force")


@pytest.mark.parametrize("case", range(2))
def test_redundant_rows_give_the_least_norm_force(case, backend):
    """A planar loop closed by a point anchor: 3 rows, rank 2; every method returns the
    force orthogonal to the null space of Jᵀ (the out-of-plane row carries nothing)."""
    model, q = mechanisms()[case]
    rng = np.random.default_rng(case)
    v = consistent_velocity(model, q, None, rng)
    tau = rng.normal(size=model.nv)
    J = rbd.constraint_jacobian(model, q)
    U, s, _ = np.linalg.svd(J)
    assert np.sum(s > 1e-10 * s[0]) == 2
    left_null = U[:, 2]
    forces = []
    for method in METHODS:
        res = rbd.constrained_dynamics(model, q, v, tau, method=method, backend=backend)
        assert res.rank == 2
        assert abs(left_null @ res.force) < 1e-12 * max(1.0, np.abs(res.force).max())
        forces.append(res.force)
    assert_close(forces[1], forces[0], RTOL_EXACT, "schur against kkt")
    assert_close(forces[2], forces[0], RTOL_PROXIMAL_FORCE, "proximal against kkt")


def _four_bar_path(theta, h=1e-4):
    """Closed-form q(θ) and its first two derivatives (central differences, error ~h²)."""
    q = [mech.four_bar_angles(theta + k * h) for k in (-1, 0, 1)]
    return q[1], (q[2] - q[0]) / (2 * h), (q[2] - 2 * q[1] + q[0]) / (h * h)


def test_four_bar_follows_its_one_degree_of_freedom_equation(backend):
    """The closed four-bar is a one-coordinate system q = q(θ): Lagrange's equation in θ,
    m(θ) θ̈ = q'ᵀ(τ − h − M q'' θ̇²) with m = q'ᵀ M q', gives the same θ̈ and q̈ = q' θ̈ + q'' θ̇²."""
    model = mech.four_bar()
    theta, theta_dot = 0.7, 1.3
    q, dq, ddq = _four_bar_path(theta)
    v = dq * theta_dot
    tau = np.array([0.4, -0.1, 0.2])
    M, h = rbd.crba(model, q), rbd.nonlinear_effects(model, q, v)
    theta_ddot = dq @ (tau - h - M @ ddq * theta_dot**2) / (dq @ M @ dq)
    res = rbd.constrained_dynamics(model, q, v, tau, backend=backend)
    # the closed-form derivatives come from differences with h = 1e-4: error ~1e-8
    assert_close(res.qdd, dq * theta_ddot + ddq * theta_dot**2, 1e-6, "four-bar q̈")


def test_slider_crank_closed_form():
    """The slider's position is x = a cos θ + √(b² − a² sin² θ); the constraint holds on it
    and the crank's acceleration matches the one-coordinate equation."""
    model = mech.slider_crank()
    for theta in (0.0, 0.9, 2.5):
        q = mech.slider_crank_coordinates(theta)
        assert np.abs(rbd.constraint_error(model, q)).max() < 1e-14
    h = 1e-4
    qs = [mech.slider_crank_coordinates(0.9 + k * h) for k in (-1, 0, 1)]
    q, dq, ddq = qs[1], (qs[2] - qs[0]) / (2 * h), (qs[2] - 2 * qs[1] + qs[0]) / h**2
    M, hh = rbd.crba(model, q), rbd.nonlinear_effects(model, q, dq)
    tau = np.array([1.0, 0.0, 0.0])
    theta_ddot = dq @ (tau - hh - M @ ddq) / (dq @ M @ dq)
    res = rbd.constrained_dynamics(model, q, dq, tau, method="schur")
    assert_close(res.qdd, dq * theta_ddot + ddq, 1e-6, "slider-crank q̈")


def test_joint_coupling_rows():
    """q_j = c0 + c1 q_s + c2 q_s²: φ, J = e_j − p'(q_s) e_s and γ = p''(q_s) q̇_s²."""
    model = rbd.models.revolute_chain(3)
    names = model.joint_names
    c = rc.JointCoupling(names[2], names[0], [0.1, 2.0, 0.5])
    q, v = np.array([0.3, -0.2, 0.9]), np.array([0.7, 0.1, -0.4])
    phi, J, gamma = _rows(model, q, v, [c])
    assert phi == pytest.approx([0.9 - (0.1 + 2.0 * 0.3 + 0.5 * 0.09)], abs=1e-15)
    assert J.tolist() == [[-(2.0 + 2 * 0.5 * 0.3), 0.0, 1.0]]
    assert gamma == pytest.approx([2 * 0.5 * 0.7**2], abs=1e-15)
    held = rc.JointCoupling(names[1], None, [0.25])
    phi, J, gamma = _rows(model, q, v, [held])
    assert phi == pytest.approx([-0.45]) and J.tolist() == [[0.0, 1.0, 0.0]]


def test_baumgarte_gains_enter_the_acceleration_rows(backend):
    model, q = mechanisms()[0]
    q = q + np.array([0.01, -0.02, 0.0])                  # the loop is open by a little
    rng = np.random.default_rng(5)
    v, tau = rng.normal(size=3), rng.normal(size=3)
    kp, kd = 100.0, 20.0
    phi, J, gamma = _rows(model, q, v, model.constraints)
    res = rbd.constrained_dynamics(model, q, v, tau, baumgarte=(kp, kd), backend=backend)
    target = gamma - kd * J @ v - kp * phi
    assert np.abs(J @ res.qdd - target).max() < 1e-10 * np.abs(target).max()


def test_impulse_makes_the_velocity_consistent_and_loses_energy(backend):
    for seed in range(4):
        model, q, constraints = random_loops(seed)
        rng = np.random.default_rng(seed)
        v_minus = rng.normal(size=model.nv)
        J = rbd.constraint_jacobian(model, q, constraints)
        M = rbd.crba(model, q)
        plastic = rbd.impulse_dynamics(model, q, v_minus, constraints, backend=backend)
        assert np.abs(J @ plastic.v).max() < 1e-10 * np.abs(J @ v_minus).max()
        assert_close(M @ (plastic.v - v_minus), J.T @ plastic.impulse, RTOL_EXACT, "impulse")
        assert plastic.v @ M @ plastic.v < v_minus @ M @ v_minus
        elastic = rbd.impulse_dynamics(model, q, v_minus, constraints, 1.0, backend=backend)
        assert_close(J @ elastic.v, -(J @ v_minus), RTOL_EXACT, "restitution 1")
        assert elastic.v @ M @ elastic.v == pytest.approx(v_minus @ M @ v_minus, rel=1e-10)


def test_delassus_is_j_minv_jt(backend):
    model, q, constraints = random_loops(3)
    J = rbd.constraint_jacobian(model, q, constraints)
    G = rbd.delassus(model, q, constraints, backend=backend)
    assert_close(G, J @ np.linalg.solve(rbd.crba(model, q), J.T), RTOL_EXACT, "delassus")
    four_bar, q4 = mechanisms()[0]
    assert np.linalg.matrix_rank(rbd.delassus(four_bar, q4), tol=1e-12) == 2


def test_assemble_closes_the_loop_from_a_guess():
    model, q = mechanisms()[0]
    guess = q + np.array([0.1, -0.15, 0.2])
    closed = rbd.assemble(model, guess)
    assert np.abs(rbd.constraint_error(model, closed)).max() <= 1e-12
    model, q, constraints = random_loops(4, kinds=("revolute", "spherical", "free"))
    rng = np.random.default_rng(4)
    guess = rbd.integrate(model, q, 0.02 * rng.normal(size=model.nv))
    closed = rbd.assemble(model, guess, constraints)
    assert np.abs(rbd.constraint_error(model, closed, constraints)).max() <= 1e-12


def test_assemble_names_the_loop_that_cannot_close():
    model = mech.four_bar()
    too_far = rc.PointAnchor("rocker", None, [0.8, 0, 0], [5.0, 0, 0], name="reach")
    guess = mech.four_bar_angles(0.7)
    with pytest.raises(rbd.ModelError, match=r"PointAnchor 'reach'.*cannot close"):
        rbd.assemble(model, guess, [too_far])


def test_model_constraints_default_builder_and_pickle():
    assert rbd.models.double_pendulum().constraints == ()
    model = mech.four_bar()
    (loop,) = model.constraints
    assert isinstance(loop, rc.PointAnchor) and loop.name == "loop"
    copy = pickle.loads(pickle.dumps(model))
    assert [c.name for c in copy.constraints] == ["loop"]
    q = mech.four_bar_angles(0.7)
    assert_close(rbd.constraint_jacobian(copy, q), rbd.constraint_jacobian(model, q))
    with pytest.raises(rbd.ModelError, match="'nowhere' is neither a body nor a frame"):
        model.add_constraint(rc.PointAnchor("nowhere", None, [0, 0, 0], [0, 0, 0]))
    assert len(model.constraints) == 1                      # unchanged by the refused one
    with pytest.raises(rbd.ModelError, match="takes an rbd.constraints kind"):
        model.add_constraint("loop")


def test_inactive_constraints_are_kept_but_not_enforced():
    model = mech.four_bar()
    model.add_constraint(rc.JointCoupling("crank_joint", None, [0.0], active=False))
    q = mech.four_bar_angles(0.7)
    assert rbd.constraint_jacobian(model, q).shape == (3, 3)


def test_frames_name_attachment_points():
    """A constraint may name a frame; its point is then in the frame's coordinates."""
    model = rbd.models.revolute_chain(2)
    E_z = rbd.spatial.axis_angle_rotation(np.array([0.0, 0.0, 1.0]), 0.4)
    X = rbd.spatial.plux(E_z, np.array([0.1, 0.2, 0.0]))
    model.add_frame("tip", model.body_names[1], X)
    q = np.array([0.3, 0.5])
    by_frame = rc.PointAnchor("tip", None, [0.3, 0.0, 0.0], [0.0, 0.0, 0.0])
    T = rbd.frame_pose(model, q, "tip")
    assert_close(rbd.constraint_error(model, q, [by_frame]), T[:3, :3] @ [0.3, 0, 0] + T[:3, 3])
    E, r = rbd.spatial.plux_parts(X)
    by_body = rc.PointAnchor(model.body_names[1], None, E.T @ [0.3, 0, 0] + r, [0, 0, 0])
    assert_close(rbd.constraint_jacobian(model, q, [by_frame]),
                 rbd.constraint_jacobian(model, q, [by_body]))


def test_mimic_models_project_the_rows():
    """With a mimic joint the rows are those of the full tree times the coupling G."""
    model = rbd.models.revolute_chain(3)
    names = model.joint_names
    model.add_mimic(names[2], names[1], multiplier=-0.5, offset=0.1)
    loop = rc.PointAnchor(model.body_names[2], None, [0.5, 0, 0], [0.2, 0.0, -0.3])
    q = np.array([0.2, 0.4])
    full = model.full_model()
    G = model.coupling().G
    q_full = model.coupling().full_q(q)
    assert_close(rbd.constraint_jacobian(model, q, [loop]),
                 rbd.constraint_jacobian(full, q_full, [loop]) @ G)
    res = rbd.constrained_dynamics(model, q, np.zeros(2), np.zeros(2), [loop])
    assert res.qdd.shape == (2,)


def test_batches_stack_per_state_results(backend):
    model, q = mechanisms()[1]
    rng = np.random.default_rng(2)
    Q = np.stack([q, mech.slider_crank_coordinates(0.3)])
    V = rng.normal(size=(2, model.nv))
    T = rng.normal(size=(2, model.nv))
    res = rbd.constrained_dynamics(model, Q, V, T, method="schur", backend=backend)
    assert res.qdd.shape == (2, 3) and res.force.shape == (2, 3)
    for k in range(2):
        one = rbd.constrained_dynamics(model, Q[k], V[k], T[k], method="schur", backend=backend)
        assert_close(res.qdd[k], one.qdd) and assert_close(res.force[k], one.force)
    imp = rbd.impulse_dynamics(model, Q, V)
    assert imp.v.shape == (2, 3) and imp.impulse.shape == (2, 3)


# --- bad input ---------------------------------------------------------------------------------
def test_bad_arguments_raise_named_errors():
    model, q = mechanisms()[0]
    z = np.zeros(3)
    with pytest.raises(rbd.InputError, match="method must be one of kkt, schur, proximal"):
        rbd.constrained_dynamics(model, q, z, z, method="lu")
    with pytest.raises(rbd.InputError, match=r"baumgarte must be None or \(kp, kd\)"):
        rbd.constrained_dynamics(model, q, z, z, baumgarte=3.0)
    with pytest.raises(rbd.InputError, match="baumgarte gains must be finite and >= 0"):
        rbd.constrained_dynamics(model, q, z, z, baumgarte=(-1.0, 2.0))
    with pytest.raises(rbd.InputError, match=r"constraints\[1\] is str"):
        rbd.constrained_dynamics(model, q, z, z, [model.constraints[0], "loop"])
    with pytest.raises(rbd.InputError, match="v must have shape"):
        rbd.constrained_dynamics(model, q, np.zeros(4), z)
    with pytest.raises(rbd.InputError, match="restitution must be a number in"):
        rbd.impulse_dynamics(model, q, z, restitution=1.5)
    with pytest.raises(rbd.InputError, match="PointAnchor point_a must be 3 finite numbers"):
        rc.PointAnchor("crank", None, [0, 0], [0, 0, 0])
    with pytest.raises(rbd.InputError, match="FrameAnchor pose_b: the rotation block"):
        rc.FrameAnchor("crank", None, None, 2 * np.eye(4))
    with pytest.raises(rbd.InputError, match="JointCoupling coefficients must be numbers"):
        rc.JointCoupling("a", "b", ["x"])
    with pytest.raises(rbd.InputError, match="q_guess: assemble takes one configuration"):
        rbd.assemble(model, np.stack([q, q]))


def test_coupling_refuses_joints_without_one_coordinate():
    rng = np.random.default_rng(1)
    model = rbd.testing.random_model(rng, 3, ("spherical",))
    coupling = rc.JointCoupling(model.joint_names[1], model.joint_names[0], [0.0, 1.0])
    with pytest.raises(rbd.ModelError, match="is spherical; a coupling ties one-coordinate"):
        rbd.constraint_jacobian(model, rbd.neutral(model), [coupling])
    with pytest.raises(rbd.ModelError, match="'nope' is not a joint with a coordinate"):
        rbd.constraint_jacobian(model, rbd.neutral(model), [rc.JointCoupling("nope", None)])


def test_pai_simulator_is_contact_coordinates_and_contact_is_free():
    from rbd import contact_coordinates as cc

    assert hasattr(cc, "ContactPair") and hasattr(cc, "simulate")
    assert getattr(rbd, "contact", None) is not cc


# --- the registry quantity -----------------------------------------------------------------------
def null_space_dynamics(model, q, v, tau, constraints=None):
    """An independent derivation: q̈ = J⁺γ + N y with Nᵀ M N y = Nᵀ(τ − h − M J⁺γ)."""
    J = rbd.constraint_jacobian(model, q, constraints)
    _, _, gamma = _rows(model, q, v, model.constraints if constraints is None else constraints)
    M, h = rbd.crba(model, q), rbd.nonlinear_effects(model, q, v)
    _, s, Vt = np.linalg.svd(J)
    N = Vt[int(np.sum(s > 1e-10 * s[0])):].T
    particular = np.linalg.lstsq(J, gamma, rcond=1e-10)[0]
    y = np.linalg.solve(N.T @ M @ N, N.T @ (tau - h - M @ particular))
    return particular + N @ y


@pytest.mark.parametrize("case", range(2))
def test_registry_entries_agree_on_closed_loops(case):
    model, q = mechanisms()[case]
    rng = np.random.default_rng(case)
    v = consistent_velocity(model, q, None, rng)
    tau = rng.normal(size=model.nv)
    impls = rbd.registry.implementations("constrained_dynamics")
    assert {"reference", "schur", "proximal", "kernel", "schur-kernel",
            "proximal-kernel"} <= set(impls)
    expected = null_space_dynamics(model, q, v, tau)
    for name, fn in impls.items():
        if rbd.registry.supports("constrained_dynamics", name, model):
            diff = rbd.testing.quantity_difference("constrained_dynamics", model, (q, v, tau),
                                                   fn(model, q, v, tau), expected)
            assert diff <= RTOL_EXACT, name


@pytest.mark.slow
def test_check_consistency_takes_a_users_constrained_dynamics():
    model = mech.four_bar()
    report = rbd.testing.check_consistency(model, "constrained_dynamics", null_space_dynamics)
    assert report.ok, str(report)

    def forgot_the_loop(model, q, v, tau, constraints=None):
        return rbd.aba(model, q, v, tau)

    assert not rbd.testing.check_consistency(model, "constrained_dynamics", forgot_the_loop).ok


def test_external_forces_enter_like_aba(backend):
    """Without constraints the result is aba's with f_ext; with them, f_ext moves h."""
    model, q, constraints = random_loops(5)
    rng = np.random.default_rng(8)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.nbodies, 6))
    free = rbd.constrained_dynamics(model, q, v, tau, [], f_ext=f_ext, backend=backend)
    assert_close(free.qdd, rbd.aba(model, q, v, tau, f_ext), RTOL_EXACT, "no constraints")
    res = rbd.constrained_dynamics(model, q, v, tau, constraints, f_ext=f_ext, backend=backend)
    J = rbd.constraint_jacobian(model, q, constraints)
    tau_ext = tau - rbd.rnea(model, q, v, np.zeros(model.nv), f_ext) + rbd.nonlinear_effects(
        model, q, v)   # τ plus the joint-space image of f_ext
    same = rbd.constrained_dynamics(model, q, v, tau_ext, constraints, backend=backend)
    assert_close(res.qdd, same.qdd, RTOL_EXACT, "f_ext as a joint force")
    assert J.shape[0] == res.force.shape[0]


# --- simulation ---------------------------------------------------------------------------------
#: A passive four-bar (RK4, dt = 1 ms, Baumgarte "auto"): measured energy drift 1.1e-9 and
#: constraint drift 5.5e-10 over 1 s, 1.4e-9 and 5.5e-10 over the issue's 10 s; bounds of the issue.
FOUR_BAR_ENERGY_DRIFT = 1e-6
FOUR_BAR_CONSTRAINT_DRIFT = 1e-8


@pytest.mark.slow
@pytest.mark.parametrize("compiled, duration", [(True, 10.0), (False, 1.0)],
                         ids=["compiled-10s", "python-1s"])
def test_simulated_four_bar_keeps_its_loop_and_energy(compiled, duration):
    """The issue's physics check; the Python loop (some 0.4 s a simulated second) over 1 s."""
    if compiled and not rbd.has_kernels():
        pytest.skip("the compiled constrained rollout needs the kernels")
    model, q0 = mechanisms()[0]
    v0 = 3.0 * consistent_velocity(model, q0, None, np.random.default_rng(0))
    traj = rbd.simulate(model, q0, v0, duration, 1e-3, compiled=compiled)
    assert traj.constraint_error.shape == (len(traj.t), 3)
    assert traj.constraint_drift <= FOUR_BAR_CONSTRAINT_DRIFT
    assert traj.energy_drift <= FOUR_BAR_ENERGY_DRIFT
    J = rbd.constraint_jacobian(model, traj.q[-1])
    assert np.abs(J @ traj.v[-1]).max() < 1e-7
    assert_close(traj.constraint_velocity_error[-1], J @ traj.v[-1], RTOL_EXACT, "J v")


#: The compiled constrained rollout and the Python loop: the same steps (the rollout renders
#: rbd.simulation.integrators operation for operation) around the same compiled solve
#: (kkt_acceleration is the body of constrained_dynamics' kkt), so they agree to round-off.
RTOL_PATHS = 1e-12


def _no_python_loop(monkeypatch):
    """Make the Python path of simulate fail, so a run that passes ran compiled."""
    import rbd.simulation.core as core

    def refuse(*args, **kwargs):
        raise AssertionError("the Python loop ran")

    monkeypatch.setattr(core, "_run_python", refuse)


@pytest.mark.parametrize("case", [0, 1], ids=["four-bar", "slider-crank"])
@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_compiled_constrained_rollout_equals_the_python_loop(case, integrator,
                                                             require_kernels, monkeypatch):
    model, q0 = mechanisms()[case]
    v0 = 3.0 * consistent_velocity(model, q0, None, np.random.default_rng(1))
    # contact=False: Euler on a model with constraints would take the contact path
    run = dict(integrator=integrator, record_every=3, contact=False)
    slow = rbd.simulate(model, q0, v0, 0.2, 1e-3, compiled=False, **run)
    _no_python_loop(monkeypatch)
    fast = rbd.simulate(model, q0, v0, 0.2, 1e-3, **run)
    assert fast.evaluations == slow.evaluations and np.array_equal(fast.t, slow.t)
    for name in ("q", "v", "a", "kinetic", "potential", "constraint_error",
                 "constraint_velocity_error"):
        ours, theirs = getattr(fast, name), getattr(slow, name)
        scale = max(1.0, float(np.abs(theirs).max()))
        assert np.abs(ours - theirs).max() <= RTOL_PATHS * scale, name


def test_compiled_constrained_batch_rows_are_single_runs(require_kernels, monkeypatch):
    """Each row of a batch (in threads or not) is the single run from its state, bitwise."""
    model, q0 = mechanisms()[0]
    rng = np.random.default_rng(2)
    Q = np.stack([mech.four_bar_angles(theta) for theta in (0.5, 0.7, 0.9)])
    V = np.stack([consistent_velocity(model, q, None, rng) for q in Q])
    _no_python_loop(monkeypatch)
    singles = [rbd.simulate(model, q, v, 0.05, 1e-3) for q, v in zip(Q, V, strict=True)]
    for threads in (1, 2):
        batch = rbd.simulate(model, Q, V, 0.05, 1e-3, num_threads=threads)
        for k, one in enumerate(singles):
            for name in ("q", "v", "a", "constraint_error", "constraint_velocity_error"):
                assert np.array_equal(getattr(batch, name)[k], getattr(one, name)), (threads, k)


def test_compiled_constrained_rollout_with_a_singular_inertia(require_kernels):
    """A joint that moves no mass: the constrained run stops with constrained_dynamics' error."""
    model = rbd.Model()
    b = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, (1.0, [0.2, 0, 0], 0.01 * np.eye(3)))
    model.add_body(b, rbd.Revolute([1, 0, 0]), None, None, "massless", "idle_joint")
    pin = rc.PointAnchor(model.body_names[0], None, [0.2, 0, 0], [0.2, 0, 0])
    for q0 in ([0.0, 0.1], [[0.0, 0.1], [0.0, 0.2]]):
        with pytest.raises(rbd.ModelError, match="constrained dynamics is undefined"):
            rbd.simulate(model, q0, np.zeros_like(q0), 0.01, 1e-3, constraints=[pin])


@pytest.mark.slow
def test_simulation_without_constraints_or_stabilization():
    """constraints=() ignores the model's own (the chain falls open); baumgarte=None lets the
    error grow from a loop opened by 1e-6 rad, the default gains pull it back."""
    model, q0 = mechanisms()[0]
    opened = q0 + np.array([1e-6, 0.0, 0.0])
    free = rbd.simulate(model, q0, np.zeros(3), 0.2, 1e-3, constraints=())
    assert free.constraint_error is None and free.constraint_drift == 0.0
    assert np.abs(rbd.constraint_error(model, free.q[-1])).max() > 1e-2
    loose = rbd.simulate(model, opened, np.zeros(3), 0.2, 1e-3, baumgarte=None)
    held = rbd.simulate(model, opened, np.zeros(3), 0.2, 1e-3)
    assert np.abs(held.constraint_error[-1]).max() < 1e-3 * np.abs(loose.constraint_error[-1]).max()
    with pytest.raises(rbd.InputError, match="baumgarte must be 'auto', \\(kp, kd\\) or None"):
        rbd.simulate(model, q0, np.zeros(3), 0.1, 1e-3, baumgarte="strong")


# --- the compiled twin of the rows ---------------------------------------------------------------
def _both_rows(model, q, v, constraints):
    from rbd._kernels.constraints import constraint_rows as compiled_rows

    packed = rc.kinds.pack_records([c.resolve(model) for c in constraints])
    return (_rows(model, q, v, constraints),
            compiled_rows(rbd.algorithms.compiled(model), q, v, packed))


@pytest.mark.parametrize("k", range(6))
def test_compiled_rows_equal_the_reference(k, require_kernels):
    model, q, constraints, rng = _fd_cases()[k]
    v = rng.normal(size=model.nv)
    for ours, theirs, name in zip(*_both_rows(model, q, v, constraints), ("φ", "J", "γ"),
                                  strict=True):
        assert_close(theirs, ours, RTOL_EXACT, name)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1.3, np.pi - 1e-7, np.pi])
def test_compiled_rotation_error_near_zero_and_pi(angle, require_kernels):
    """The frame anchor's log(R_a R_bᵀ) on both sides of the branches of so3_log."""
    model = rbd.models.revolute_chain(2)
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    pose_b = np.eye(4)
    pose_b[:3, :3] = rbd.spatial.axis_angle_rotation(axis, angle).T
    weld = rc.FrameAnchor(model.body_names[1], None, None, pose_b @ rbd.frame_pose(
        model, np.zeros(2), model.body_names[1]))
    q = np.zeros(2)
    (phi, _, _), (phi_k, _, _) = _both_rows(model, q, np.zeros(2), [weld])
    assert_close(phi_k, phi, RTOL_EXACT, "φ")
    assert np.linalg.norm(phi[:3]) == pytest.approx(angle, abs=1e-8)


def test_kernel_backend_uses_the_compiled_rows(require_kernels, monkeypatch):
    from rbd._kernels import constraints as compiled_module

    calls = []
    original = compiled_module.constraint_rows
    monkeypatch.setattr(compiled_module, "constraint_rows",
                        lambda *a: calls.append(1) or original(*a))
    model, q = mechanisms()[0]
    rbd.constraint_jacobian(model, q, backend="kernel")
    rbd.constraint_jacobian(model, q, backend="reference")
    assert len(calls) == 1

