"""Pai, Ascher & Kry's augmented system and its eliminations (rbd.reference.block_elimination).

The direct sparse solve, CRBM, ABM and Modified ABM are four ways of solving
one linear system (Pai Eq. 5); each is checked against the others, against
Featherstone's ABA, and against properties of the system itself.
"""


import helpers
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from helpers import ALL_JOINTS, RTOL_EXACT, RTOL_FD, assert_close, state_with_forces

import rbd
from rbd.reference import aba as aba_module
from rbd.reference import block_elimination as be
from rbd.reference import ploen
from rbd.reference.crba import crba

VARIANTS = {
    "pai-dense": be.forward_dynamics_dense,
    "pai-crbm": be.forward_dynamics_crbm,
    "pai-abm": be.forward_dynamics_abm,
    "pai-modified-abm": be.forward_dynamics_modified_abm,
    "aba-modified-pivot": be.aba_modified,
}


def with_fixed_joint(seed=5):
    """A random tree with a welded body in the middle (a 0-DoF joint block)."""
    model = rbd.testing.random_model(seed, 4, ALL_JOINTS)
    rng = np.random.default_rng(seed)
    welded = model.add_body(1, rbd.Fixed(), rbd.spatial.plux(rbd.testing.random_rotation(rng),
                                                             [0.1, 0.2, 0.0]),
                            rbd.testing.random_inertia(rng), "welded")
    model.add_body(welded, rbd.Revolute([0, 1, 0]), rbd.spatial.xlt([0.2, 0, 0]),
                   rbd.testing.random_inertia(rng), "tip")
    return model


MODELS = [
    rbd.testing.random_model(11, 7, ALL_JOINTS),
    rbd.testing.random_model(12, 5, ALL_JOINTS, floating_base=True),
    rbd.testing.random_model(13, 5, ALL_JOINTS, chain=True),
    with_fixed_joint(),
    rbd.models.double_pendulum(),
]
IDS = [f"{i}-{m.name}" for i, m in enumerate(MODELS)]


@pytest.fixture(params=range(len(MODELS)), ids=IDS)
def model(request):
    return MODELS[request.param]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant_agrees_with_aba(model, name):
    for seed in range(2):
        q, v, tau, f_ext = state_with_forces(model, seed)
        expected = aba_module.aba(model, q, v, tau, f_ext)
        assert_close(VARIANTS[name](model, q, v, tau, f_ext), expected, what=name)
        assert_close(VARIANTS[name](model, q, v, tau), aba_module.aba(model, q, v, tau),
                     what=f"{name} without f_ext")


def test_crbm_mass_matrix_is_crba(model):
    q, _, _, _ = state_with_forces(model, 3)
    assert_close(be.mass_matrix_crbm(model, q), crba(model, q), what="HᵀAᵀMAH vs CRBA")


def test_augmented_matrix_blocks(model):
    """Eq. (5): the diagonal block [[1, M, 0], [0, 1, H], [Hᵀ, 0, 0]] and the couplings."""
    q, v, tau, f_ext = state_with_forces(model, 4)
    system = be.augmented_system(model, q, v, tau, f_ext)
    K = be.kkt_matrix(system).toarray()
    offsets = be.block_offsets(system)
    assert K.shape == (12 * model.nbodies + model.nv,) * 2
    for i, body in enumerate(model.bodies):
        o, d = offsets[i], body.joint.nv
        S = body.joint.S(q[model.q_index(i)]).reshape(6, d)
        block = K[o:o + 12 + d, o:o + 12 + d]
        assert np.array_equal(block[:6, :6], np.eye(6))
        assert np.array_equal(block[:6, 6:12], body.inertia)
        assert np.array_equal(block[6:12, 6:12], np.eye(6))
        assert_close(block[6:12, 12:], S)
        assert_close(block[12:, :6], S.T)
        assert not block[12:, 6:].any() and not block[:6, 12:].any()
        p = body.parent
        if p >= 0:
            X = (body.joint.X_J(q[model.q_index(i)]) @ body.X_tree)
            assert_close(K[offsets[p]:offsets[p] + 6, o:o + 6], -X.T)
            assert_close(K[o + 6:o + 12, offsets[p] + 6:offsets[p] + 12], -X)
    # nothing else: one coupling pair per joint with a parent
    coupled = sum(1 for b in model.bodies if b.parent >= 0)
    diagonal = sum(np.count_nonzero(K[offsets[i]:offsets[i] + 12 + b.joint.nv,
                                      offsets[i]:offsets[i] + 12 + b.joint.nv])
                   for i, b in enumerate(model.bodies))
    assert np.count_nonzero(K) <= diagonal + 72 * coupled


def test_symmetric_arrangement_is_symmetric_kkt(model):
    """Pai: Eq. (5) is a permutation of a symmetric matrix in KKT form (Eq. 7)."""
    q, v, tau, f_ext = state_with_forces(model, 5)
    system = be.augmented_system(model, q, v, tau, f_ext)
    K_sym, rhs, _ = be.symmetric_kkt(system)
    # symmetric up to the rounding asymmetry of the stored inertias
    assert abs(K_sym - K_sym.T).max() <= 1e-15 * max(1.0, abs(K_sym).max())
    x = spla.spsolve(K_sym.tocsc(), rhs)
    n6 = 12 * model.nbodies
    assert_close(x[n6:], aba_module.aba(model, q, v, tau, f_ext), what="Eq. (7) solve")


def test_every_elimination_gives_the_same_unknowns(model):
    """Dense LU, CRBM and ABM agree on φ̇ and f too, and f satisfies Pai Eq. (4)."""
    q, v, tau, f_ext = state_with_forces(model, 6)
    system = be.augmented_system(model, q, v, tau, f_ext)
    dense = be.solve_dense(system)
    for other in (be.solve_crbm(system), be.solve_abm(system),
                  be.solve_abm(system, "modified")):
        assert_close(other.phidot, dense.phidot, rtol=1e-9, what="φ̇")
        assert_close(other.f, dense.f, rtol=1e-9, what="f")
    for i, s in enumerate(system.v_slices()):
        assert_close(system.H[i].T @ dense.f[i], tau[s], what="Hᵀ f = τ")


def test_body_accelerations_match_finite_differences():
    """φ̇_i = d/dt v_i in body coordinates (no gravity), an independent check of Eq. (3)."""
    model = rbd.testing.random_model(21, 5, ("revolute", "prismatic", "helical"),
                                     gravity=(0, 0, 0))
    q, v, tau, _ = state_with_forces(model, 7)
    sol = be.solve_dense(be.augmented_system(model, q, v, tau))
    h = 1e-5

    def velocities(sign):
        q_t = q + sign * h * v + 0.5 * h * h * sol.qdd
        return rbd.reference.kinematics.body_velocities(model, q_t, v + sign * h * sol.qdd)

    fd = (np.asarray(velocities(1)) - np.asarray(velocities(-1))) / (2 * h)
    assert_close(sol.phidot, fd, rtol=RTOL_FD, what="φ̇ vs finite differences")


def _featherstone_IA(model, q):
    """The articulated inertias IA of rbd.reference.aba, from its inspectable workspace."""
    data = {}
    aba_module.aba(model, q, np.zeros(model.nv), np.zeros(model.nv), data=data)
    return data["IA"]


def test_abm_blocks_are_featherstone_articulated_inertias(model):
    q, _, _, _ = state_with_forces(model, 8)
    M_hat = be.articulated_inertias(model, q)
    for i, IA in enumerate(_featherstone_IA(model, q)):
        assert_close(M_hat[i], IA, what=f"M̂_{i} vs IA_{i}")


def _floating_subtree(model, i, q):
    """Body i's subtree with a free joint at i (body-frame coordinates) and its q."""
    sub, index, qs = rbd.Model(gravity=(0, 0, 0)), {}, []
    for j in model.subtree(i):
        b = model.bodies[j]
        if j == i:
            index[j] = sub.add_body(-1, rbd.Free(), None, b.inertia, b.name)
            qs.append(rbd.Free().neutral())
        else:
            index[j] = sub.add_body(index[b.parent], b.joint, b.X_tree, b.inertia, b.name)
            qs.append(q[model.q_index(j)])
    return sub, np.concatenate(qs)


def test_abm_blocks_are_schur_complements(model):
    """Independent check: IA_i is the Schur complement of the free-floating subtree's M."""
    q, _, _, _ = state_with_forces(model, 9)
    M_hat = be.articulated_inertias(model, q)
    for i in range(model.nbodies):
        sub, q_sub = _floating_subtree(model, i, q)
        M = crba(sub, q_sub)
        schur = M[:6, :6] - M[:6, 6:] @ np.linalg.solve(M[6:, 6:], M[6:, :6]) \
            if sub.nv > 6 else M[:6, :6]
        assert_close(M_hat[i], schur, rtol=1e-9, what=f"M̂_{i} vs Schur complement")


def test_eliminated_system_is_block_upper_triangular(model):
    q, v, tau, f_ext = state_with_forces(model, 10)
    system = be.augmented_system(model, q, v, tau, f_ext)
    for pivot in be.PIVOTS:
        elim = be.eliminate(system, pivot)
        U, rhs = be.eliminated_matrix(system, elim)
        offsets = be.block_offsets(system)
        dense = U.toarray()
        for i in range(model.nbodies):
            o, d = offsets[i], model.bodies[i].joint.nv
            assert not dense[o:o + 12 + d, :o].any(), "entries left of the diagonal block"
            block = dense[o:o + 12 + d, o:o + 12 + d]
            assert not block[6:12, :6].any() and not block[12:, :12].any()
            assert_close(block[12:, 12:], elim.D[i], what="D_k on the diagonal")
        assert U.nnz <= be.kkt_matrix(system).nnz + 36 * model.nbodies
        x = spla.spsolve(U.tocsc(), rhs)
        assert_close(be.unpack(system, x).qdd, aba_module.aba(model, q, v, tau, f_ext),
                     what=f"back-substitution ({pivot})")


def test_modified_pivot_equals_standard_pivot(model):
    q, v, tau, _ = state_with_forces(model, 11)
    system = be.augmented_system(model, q, v, tau)
    standard, modified = be.eliminate(system), be.eliminate(system, "modified")
    for Ds, Dm, M_hat in zip(standard.D, modified.D, standard.M_hat, strict=True):
        assert_close(Dm, Ds, rtol=RTOL_EXACT * max(1.0, np.abs(M_hat).max()), what="D")


def test_crbm_factor_A_is_si_guenter_G(model):
    """Pai's A (Eq. 7) is Si & Guenter's G_λ = (1 − Γ_λ)⁻¹ (Appendix A, Eq. 44)."""
    q, _, _, _ = state_with_forces(model, 12)
    zero = np.zeros(model.nv)
    A_inv, _, H, _, _ = be.global_blocks(be.augmented_system(model, q, zero, zero))
    g = ploen.global_matrices(model, q)
    assert_close(np.linalg.inv(A_inv.toarray()), g["G"], what="A vs G_λ")
    assert_close(H, g["S"], what="H vs S")


def test_public_aba_modified_pivot_reference_backend():
    model = MODELS[0]
    q, v, tau, f_ext = state_with_forces(model, 13)
    got = rbd.aba(model, q, v, tau, f_ext, backend="reference", pivot="modified")
    assert_close(got, aba_module.aba(model, q, v, tau, f_ext), what="aba(pivot='modified')")


def test_unknown_pivot_is_rejected():
    model = MODELS[4]
    q, v, tau, _ = state_with_forces(model, 14)
    system = be.augmented_system(model, q, v, tau)
    before = [M.copy() for M in system.M]
    with pytest.raises(rbd.InputError, match="pivot must be one of"):
        be.eliminate(system, "partial")
    assert all(np.array_equal(a, b) for a, b in zip(before, system.M, strict=True))


@pytest.mark.slow
def test_sparsity_figure():
    from rbd.plotting import plot_sparsity

    model = rbd.models.revolute_chain(4)
    q = np.array([0.1, 0.2, 0.3, 0.4])
    axes = plot_sparsity(model, q).get_axes()
    assert len(axes) == 3
    assert "Eq. (5)" in axes[0].get_title()
    K = be.kkt_matrix(be.augmented_system(model, q, np.zeros(4), np.zeros(4)))
    assert f"{K.nnz} non-zeros" in axes[0].get_title()


# --- the compiled modified-pivot ABA --------------------------------------------------------
#: Same three passes as the reference, different operation order: rounding-level agreement.
RTOL_KERNEL = 1e-12


def test_kernel_agrees_with_reference(model, require_kernels):
    from rbd._kernels import block_elimination as kernel

    helpers.assert_forward_twins(kernel.aba_modified, be.aba_modified, model, (30, 31),
                                 RTOL_KERNEL, what="modified-pivot kernel")


def test_kernel_batch_registry_and_errors(require_kernels):
    from rbd._kernels import block_elimination as kernel

    model = MODELS[1]
    (Q, V, T), out = helpers.assert_forward_batch(kernel.aba_modified, be.aba_modified,
                                                  model, 4, RTOL_KERNEL)
    fn = rbd.registry.implementations("forward_dynamics")["aba-modified-pivot-kernel"]
    assert_close(fn(model, Q[1], V[1], T[1]), out[1], rtol=RTOL_KERNEL)
    with pytest.raises(rbd.InputError, match=r"f_ext must have shape"):
        kernel.aba_modified(model, Q[0], V[0], T[0], np.zeros((model.nbodies, 5)))
    idle = rbd.Model()
    idle.add_body(-1, rbd.Prismatic([1, 0, 0]), None, None, "massless", "slider")
    with pytest.raises(rbd.ModelError, match="'slider' is not positive definite"):
        kernel.aba_modified(idle, np.zeros(1), np.zeros(1), np.zeros(1))
