"""Rotor inertia (``model.armature``) in every core algorithm, on both backends.

Convention: the armature ``a_k`` of degree of freedom ``k`` adds ``a_k`` to
``M_kk`` (a rotor spinning with the joint, its gyroscopic terms neglected, as in
MuJoCo and Pinocchio).  Hence ``rnea`` gains ``a ⊙ q̈``, the ABA pivot ``D_i``
gains ``diag(a_i)``, gravity is unchanged, and the kinetic energy is
``½ q̇ᵀ M q̇`` with the armature in ``M`` (MuJoCo's convention; Pinocchio 4.1's
``computeKineticEnergy`` adds the term for some joint types only).  The one
velocity term: a free joint's linear armature acts, as in MuJoCo, on the
parent-frame velocity ``R u`` of its origin, so the bias gains ``a (ω × u)`` on
those rows (the free joint's ``q̇ = [ω; u]`` in the body frame).
"""

import numpy as np
import pytest
from helpers import ALL_JOINTS, RTOL_EXACT, assert_close

import rbd
from rbd import registry


def with_armature(model, seed=0):
    """A copy of ``model`` with a random armature on every joint; returns (copy, armature)."""
    model = model.copy()
    rng = np.random.default_rng(seed)
    for body in model.bodies:
        if body.joint.nv:
            values = rng.uniform(0.05, 2.0, body.joint.nv)
            if body.joint.kind == "free":
                values[4:] = values[3]  # one linear armature (MuJoCo's meaning)
            model.set_joint_properties(body.joint_name, armature=values)
    return model, np.array(model.armature)


def free_joint_bias(model, v):
    """``a (ω × u)`` on the linear rows of each free joint, zero elsewhere."""
    bias = np.zeros(model.nv)
    for i, body in enumerate(model.bodies):
        if body.joint.kind == "free":
            rows = model.v_index(i)
            w, u = v[rows][:3], v[rows][3:]
            bias[rows.start + 3:rows.stop] = model.armature[rows][3:] * np.cross(w, u)
    return bias


MODELS = [
    rbd.testing.random_model(11, 6, ALL_JOINTS),
    rbd.testing.random_model(12, 5, ALL_JOINTS, floating_base=True),
    rbd.testing.random_model(13, 5, ("revolute", "prismatic"), chain=True),
]


@pytest.fixture(params=range(len(MODELS)))
def models(request):
    plain = MODELS[request.param]
    armed, armature = with_armature(plain, request.param)
    return plain, armed, armature


def test_mass_matrix_gains_the_diagonal(models, backend):
    plain, armed, armature = models
    q, _, _ = rbd.testing.random_state(plain, 1)
    M0 = rbd.crba(plain, q, backend=backend)
    M = rbd.crba(armed, q, backend=backend)
    assert_close(M, M0 + np.diag(armature), what="M(armature) = M(0) + diag(armature)")
    assert_close(rbd.mass_matrix_inverse(armed, q, backend=backend), np.linalg.inv(M),
                 rtol=RTOL_EXACT * np.linalg.cond(M), what="M⁻¹ with armature")


def test_inverse_dynamics_adds_armature_times_acceleration(models, backend):
    plain, armed, armature = models
    q, v, a = rbd.testing.random_state(plain, 2)
    tau0 = rbd.rnea(plain, q, v, a, backend=backend)
    extra = free_joint_bias(armed, v)
    assert_close(rbd.rnea(armed, q, v, a, backend=backend), tau0 + armature * a + extra,
                 what="rnea")
    # bias forces gain the free joints' velocity product only; gravity does not change
    assert_close(rbd.nonlinear_effects(armed, q, v, backend=backend),
                 rbd.nonlinear_effects(plain, q, v, backend=backend) + extra, what="h")
    assert_close(rbd.gravity_forces(armed, q, backend=backend),
                 rbd.gravity_forces(plain, q, backend=backend), what="g")


@pytest.mark.parametrize("pivot", ["standard", "modified"])
def test_forward_dynamics_inverts_inverse_dynamics(models, backend, pivot):
    _, armed, _ = models
    q, v, tau = rbd.testing.random_state(armed, 3)
    qdd = rbd.aba(armed, q, v, tau, backend=backend, pivot=pivot)
    assert_close(rbd.rnea(armed, q, v, qdd, backend=backend), tau, what="rnea(aba(tau))")
    M = rbd.crba(armed, q, backend=backend)
    h = rbd.nonlinear_effects(armed, q, v, backend=backend)
    assert_close(qdd, np.linalg.solve(M, tau - h), rtol=RTOL_EXACT * np.linalg.cond(M),
                 what="aba = M⁻¹(τ - h)")


def test_kinetic_energy_is_half_vMv_with_armature(models, backend):
    plain, armed, armature = models
    q, v, _ = rbd.testing.random_state(plain, 4)
    T = rbd.kinetic_energy(armed, q, v, backend=backend)
    assert_close(T, 0.5 * v @ rbd.crba(armed, q, backend=backend) @ v, what="½ vᵀ M v")
    assert_close(T - rbd.kinetic_energy(plain, q, v, backend=backend),
                 0.5 * armature @ (v * v), what="rotor energy")


def test_batches_use_the_armature(backend):
    armed, _ = with_armature(MODELS[0], 5)
    states = [rbd.testing.random_state(armed, s) for s in range(3)]
    Q, V, A = (np.stack(x) for x in zip(*states, strict=True))
    tau = rbd.rnea(armed, Q, V, A, backend=backend)
    assert_close(rbd.aba(armed, Q, V, tau, backend=backend), A, what="batched aba(rnea)")


def test_registry_implementations_handle_or_refuse_armature():
    """Every registered derivation either matches the reference on a model with armature
    or refuses it through its registry predicate (so the cross-checks stay honest)."""
    armed, _ = with_armature(MODELS[1], 6)
    q, v, a = rbd.testing.random_state(armed, 7)
    refused = set()
    for quantity in registry.QUANTITIES:
        impls = registry.implementations(quantity)
        for name, fn in impls.items():
            if not registry.supports(quantity, name, armed):
                refused.add((quantity, name))
                continue
            args = {"inverse_dynamics": (q, v, a), "forward_dynamics": (q, v, a),
                    "mass_matrix": (q,), "bias_forces": (q, v),
                    "constrained_dynamics": (q, v, a)}[quantity]
            got = np.asarray(fn(armed, *args), dtype=float)
            assert_close(got, impls["reference"](armed, *args), rtol=1e-9,
                         what=f"{quantity} {name}")
    # the derivations that build M from the bodies alone refuse armature ...
    assert ("mass_matrix", "pai-crbm") in refused
    assert ("inverse_dynamics", "lagrangian-jacobian") in refused
    # ... and accept the same model without it
    assert registry.supports("mass_matrix", "pai-crbm", MODELS[1])
    # bias forces involve only a free joint's armature: nothing refuses them for the others
    unfree, _ = with_armature(MODELS[0], 6)
    assert not any(b.joint.kind == "free" for b in unfree.bodies)
    assert not any(quantity == "bias_forces" and not registry.supports(quantity, name, unfree)
                   for quantity, name in refused)


def test_against_pinocchio(backend):
    """Pinocchio (3+) adds ``model.armature`` to M in crba, rnea and aba."""
    pin = pytest.importorskip("pinocchio")
    from rbd import interop

    plain = rbd.testing.random_model(5, 5, ("revolute", "prismatic"), chain=True)
    armed, armature = with_armature(plain, 8)
    P = pin.buildModelFromXML(rbd.to_urdf(armed))    # armature written, Pinocchio ignores it
    mp = interop.pinocchio_map(armed, P)
    P.armature = mp.to_v(None, armature)
    D = P.createData()
    inv = np.argsort(mp.permutation)
    q, v, a = rbd.testing.random_state(armed, 9)
    qp, vp, ap = mp.to_q(q), mp.to_v(None, v), mp.to_v(None, a)
    M_pin = np.triu(pin.crba(P, D, qp))
    M_pin = M_pin + np.triu(M_pin, 1).T
    assert_close(rbd.crba(armed, q, backend=backend), M_pin[np.ix_(inv, inv)], what="crba")
    tau = rbd.rnea(armed, q, v, a, backend=backend)
    assert_close(tau, mp.from_tau(None, pin.rnea(P, D, qp, vp, ap)), what="rnea")
    assert_close(rbd.aba(armed, q, v, tau, backend=backend),
                 mp.from_tau(None, pin.aba(P, D, qp, vp, mp.to_v(None, tau))), what="aba")


def test_free_joint_armature_bias_does_no_work(backend):
    """``u · (ω × u) = 0``: the armature's velocity product keeps ``dT/dt = τ · v`` with
    ``T = ½ vᵀ M v`` (one linear armature per free joint makes it so)."""
    plain = MODELS[1]
    armed, _ = with_armature(plain, 10)
    q, v, _ = rbd.testing.random_state(plain, 11)
    extra = (rbd.nonlinear_effects(armed, q, v, backend=backend)
             - rbd.nonlinear_effects(plain, q, v, backend=backend))
    assert np.abs(extra).max() > 1e-3  # the term is there ...
    assert abs(extra @ v) < RTOL_EXACT * np.abs(extra).max() * np.abs(v).max()  # ... workless


def test_free_joint_linear_armature_is_one_value():
    model = MODELS[1].copy()
    free = next(b.joint_name for b in model.bodies if b.joint.kind == "free")
    with pytest.raises(rbd.ModelError, match="same on its three linear degrees of freedom"):
        model.set_joint_properties(free, armature=[0.1, 0.1, 0.1, 0.2, 0.3, 0.2])
    assert not np.any(model.armature)
