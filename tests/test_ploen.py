"""Si & Guenter's O(n) recursion, global matrix form and M⁻¹ factorization (rbd.reference.ploen).

Also checks each entry of the Lie-group ↔ spatial-algebra dictionary against
the paper's own definitions (S&G Eqs. 2, 3, 5 and Appendix C).
"""

import helpers
import numpy as np
import pytest
from helpers import ALL_JOINTS, RTOL_EXACT, RTOL_FD, assert_close, state_with_forces

import rbd
from rbd import spatial as sp
from rbd.reference import aba as aba_module
from rbd.reference import ploen
from rbd.reference.crba import crba
from rbd.reference.rnea import nonlinear_effects

MODELS = [
    rbd.testing.random_model(31, 7, ALL_JOINTS),
    rbd.testing.random_model(32, 5, ALL_JOINTS, floating_base=True),
    rbd.testing.random_model(33, 6, ("universal", "planar", "helical"), chain=True),
    rbd.models.binary_tree(3),
    rbd.models.double_pendulum(),
]
IDS = [f"{i}-{m.name}" for i, m in enumerate(MODELS)]


@pytest.fixture(params=range(len(MODELS)), ids=IDS)
def model(request):
    return MODELS[request.param]


# --- the dictionary ------------------------------------------------------------------------
def ad_inverse(R, t):
    """S&G Eq. (2) for T⁻¹ = (Rᵀ, −Rᵀt): Ad_{T⁻¹} = [[Rᵀ, 0], [[−Rᵀt] Rᵀ, Rᵀ]]."""
    Rt, tt = R.T, -R.T @ t
    return np.block([[Rt, np.zeros((3, 3))], [sp.skew(tt) @ Rt, Rt]])


def test_ad_of_inverse_joint_transform_is_X_J(rng):
    for joint in (rbd.Revolute(rng.normal(size=3)), rbd.Free(), rbd.Planar(rng.normal(size=3)),
                  rbd.Helical(rng.normal(size=3), 0.3)):
        q = joint.random(rng)
        R, t = joint.transform(q)
        assert_close(joint.X_J(q), ad_inverse(R, t), what=f"{joint.kind} Ad_(G⁻¹)")


def test_lie_bracket_is_crm_and_coadjoint_is_minus_crf(rng):
    for _ in range(5):
        g1, g2 = rng.normal(size=6), rng.normal(size=6)
        ad = np.block([[sp.skew(g1[:3]), np.zeros((3, 3))],
                       [sp.skew(g1[3:]), sp.skew(g1[:3])]])                 # S&G (3)
        assert_close(sp.crm(g1), ad)
        assert_close(-sp.crf(g1), ad.T, what="ad*_v = adᵀ = −crf")
        hat = lambda g: np.block([[sp.skew(g[:3]), g[3:, None]], [np.zeros((1, 4))]])  # noqa: E731
        bracket = hat(g1) @ hat(g2) - hat(g2) @ hat(g1)
        assert_close(sp.crm(g1) @ g2,
                     np.concatenate([sp.unskew(bracket[:3, :3]), bracket[:3, 3]]))


def test_generalized_inertia_is_mcI(rng):
    m, r, I = rbd.testing.random_inertia(rng)
    R = sp.skew(r)
    J = np.block([[I - m * R @ R, m * R], [-m * R, m * np.eye(3)]])          # S&G (5)
    assert_close(sp.mcI(m, r, I), J)


def test_derivative_of_adjoint_appendix_C(rng):
    """d/dt Ad_{T⁻¹} = −ad_v Ad_{T⁻¹} along T(t) = T₀ exp(t v̂) (S&G Appendix C)."""
    T0, xi, h = sp.se3_exp(rng.normal(size=6)), rng.normal(size=6), 1e-6

    def X(t):
        T = T0 @ sp.se3_exp(t * xi)
        return ad_inverse(T[:3, :3], T[:3, 3])

    dX = (X(h) - X(-h)) / (2 * h)
    assert_close(dX, -sp.crm(xi) @ X(0.0), rtol=RTOL_FD)


# --- the recursion -------------------------------------------------------------------------
def test_recursion_agrees_with_aba(model):
    for seed in range(2):
        q, v, tau, f_ext = state_with_forces(model, seed)
        assert_close(ploen.forward_dynamics(model, q, v, tau, f_ext),
                     aba_module.aba(model, q, v, tau, f_ext), what="S&G (18)–(35)")
        assert_close(ploen.forward_dynamics(model, q, v, tau),
                     aba_module.aba(model, q, v, tau), what="without f_ext")


def test_reduced_torques_are_tau_minus_bias(model):
    q, v, tau, _ = state_with_forces(model, 2)
    assert_close(ploen.reduced_torques(model, q, v, tau), tau - nonlinear_effects(model, q, v),
                 what="τ̄ (Eq. 26)")


def test_articulated_factors(model):
    """J̄ (Eq. 27) are articulated inertias: Ω_k = S_kᵀ J̄_k S_k is ABA's D_k; M⁻¹ τ̄ is q̈."""
    q, _, _, _ = state_with_forces(model, 3)
    X_up, S = ploen.joint_quantities(model, q)
    F = ploen.articulated_factors(model, X_up, S)
    rng = np.random.default_rng(0)
    tau_bar = rng.normal(size=model.nv)
    assert_close(ploen.apply_inverse(model, F, S, tau_bar),
                 np.linalg.solve(crba(model, q), tau_bar), what="recursions 5–6")
    for k in range(model.nbodies):
        assert_close(F.Omega[k], S[k].T @ F.J_bar[k] @ S[k])


def test_motion_transform_reading_of_eq_30_is_wrong():
    """Eq. (30) needs the force transform X_upᵀ: the motion transform X_up breaks Eq. (35)."""
    model = MODELS[0]
    q, v, tau, _ = state_with_forces(model, 4)
    X_up, S = ploen.joint_quantities(model, q)
    F = ploen.articulated_factors(model, X_up, S)
    wrong = ploen.Factors(F.J_bar, F.Omega, F.Omega_inv, F.Y,
                          [X_up[k] @ F.J_bar[k] @ S[k] @ F.Omega_inv[k]
                           for k in range(model.nbodies)])
    tau_bar = ploen.reduced_torques(model, q, v, tau)
    exact = aba_module.aba(model, q, v, tau)
    assert rbd.testing.relative_difference(ploen.apply_inverse(model, wrong, S, tau_bar),
                                           exact) > 1e-3
    assert_close(ploen.apply_inverse(model, F, S, tau_bar), exact)


# --- global matrix form (Appendix A) -------------------------------------------------------
def test_global_mass_matrix_and_bias(model):
    q, v, _, _ = state_with_forces(model, 5)
    assert_close(ploen.mass_matrix_global(model, q), crba(model, q), what="Eq. (51)")
    assert_close(ploen.bias_forces_global(model, q, v), nonlinear_effects(model, q, v),
                 what="Eqs. (52)–(53)")


def test_gamma_is_nilpotent_and_G_is_its_series(model):
    """Eqs. (44)–(45) and (59): G = Σ Γᵏ, blocks are transforms along the tree paths."""
    q, _, _, _ = state_with_forces(model, 6)
    g = ploen.global_matrices(model, q)
    n, Gamma = model.nbodies, g["Gamma"]
    power, series = np.eye(6 * n), np.eye(6 * n)
    for _ in range(n - 1):
        power = power @ Gamma
        series = series + power
    assert not np.any(power @ Gamma), "Γ_λⁿ = 0"
    assert_close(g["G"], series, what="Eq. (45)")
    X_up, _ = ploen.joint_quantities(model, q)
    for i in range(n):
        path, j = np.eye(6), i
        while j >= 0:
            assert_close(g["G"][6 * i:6 * i + 6, 6 * j:6 * j + 6], path, what="Eq. (59)")
            path, j = path @ X_up[j], model.parent[j]


# --- factorization of M⁻¹ (Appendix B) -----------------------------------------------------
def test_inverse_mass_factorization(model):
    q, _, _, _ = state_with_forces(model, 7)
    M = crba(model, q)
    assert_close(ploen.mass_matrix_inverse_factorized(model, q), np.linalg.inv(M),
                 rtol=RTOL_EXACT * np.linalg.cond(M), what="Eq. (58) vs inv(crba)")
    f = ploen.inverse_mass_factors(model, q)
    L, Y, Pi = f["L"], f["Y_lambda"], f["Pi_lambda"]
    assert np.array_equal(np.triu(L), L) and np.allclose(np.diag(L), 1.0), "unit upper triangular"
    assert np.array_equal(np.triu(Y), Y), "Y_λ upper triangular"
    for k in range(model.nbodies):           # Π_λ: one block per joint, in its parent's rows
        column = Pi[:, model.v_index(k)].copy()
        p = model.parent[k]
        if p >= 0:
            assert p < k
            column[6 * p:6 * p + 6] = 0.0
        assert not column.any(), "Π_λ has a block outside (λ(k), k)"


def test_factorized_forward_dynamics(model):
    q, v, tau, f_ext = state_with_forces(model, 8)
    assert_close(ploen.forward_dynamics_factorized(model, q, v, tau, f_ext),
                 aba_module.aba(model, q, v, tau, f_ext), what="Appendix B steps 1–9")


def test_fixed_joint_is_handled():
    model = rbd.testing.random_model(34, 3, ALL_JOINTS)
    rng = np.random.default_rng(1)
    model.add_body(2, rbd.Fixed(), None, rbd.testing.random_inertia(rng), "welded")
    q, v, tau, f_ext = state_with_forces(model, 9)
    expected = aba_module.aba(model, q, v, tau, f_ext)
    assert_close(ploen.forward_dynamics(model, q, v, tau, f_ext), expected)
    assert_close(ploen.forward_dynamics_factorized(model, q, v, tau, f_ext), expected)


# --- the compiled recursion ------------------------------------------------------------------
#: Kernel and reference evaluate the same recursion in a different operation order
#: (operators applied instead of formed, compact inertias): rounding-level agreement.
RTOL_KERNEL = 1e-12


def test_kernel_agrees_with_reference(model, require_kernels):
    from rbd._kernels import ploen as kernel

    helpers.assert_forward_twins(kernel.forward_dynamics, ploen.forward_dynamics, model,
                                 (20, 21), RTOL_KERNEL, what="ploen kernel")


def test_kernel_batch_and_registry(require_kernels):
    from rbd._kernels import ploen as kernel

    model = MODELS[1]
    (Q, V, T), out = helpers.assert_forward_batch(kernel.forward_dynamics,
                                                  ploen.forward_dynamics, model, 3, RTOL_KERNEL)
    fn = rbd.registry.implementations("forward_dynamics")["ploen-kernel"]
    assert rbd.registry.supports("forward_dynamics", "ploen-kernel", model)
    assert_close(fn(model, Q[0], V[0], T[0]), out[0], rtol=RTOL_KERNEL)


def test_kernel_rejects_bad_input(require_kernels):
    from rbd._kernels import ploen as kernel

    model = MODELS[1]
    q, v, tau, _ = state_with_forces(model, 5)
    q_before = q.copy()
    with pytest.raises(rbd.InputError, match=r"tau must have shape"):
        kernel.forward_dynamics(model, q, v, tau[:-1])
    bad = q.copy()
    bad[3:7] *= 2.0
    with pytest.raises(rbd.InputError, match="quaternion"):
        kernel.forward_dynamics(model, bad, v, tau)
    v_nan = v.copy()
    v_nan[0] = np.nan
    with pytest.raises(rbd.InputError, match="v has non-finite entries"):
        kernel.forward_dynamics(model, q, v_nan, tau)
    assert np.array_equal(q, q_before)


def test_kernel_reports_a_joint_without_inertia(require_kernels):
    from rbd._kernels import ploen as kernel

    model = rbd.Model()
    inertia = rbd.testing.random_inertia(np.random.default_rng(1))
    model.add_body(-1, rbd.Revolute([0, 0, 1]), None, inertia, "base")
    model.add_body(0, rbd.Revolute([0, 0, 1]), None, None, "massless", "idle")
    with pytest.raises(rbd.ModelError, match="'idle' is not positive definite"):
        kernel.forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2))
