"""The stage pipeline and ``rbd.compute_all`` agree with the one-call functions.

Every quantity ``compute_all`` leaves in ``Data`` is compared with the public
function that computes it alone (``crba``, ``nonlinear_effects``,
``gravity_forces``, ``jacobian``, ``forward_kinematics``, ``body_centers_of_mass``,
``aba``), on random trees with every joint type, on both backends; the factor is
checked by rebuilding ``M`` from it; the kernel stages against their reference
text; the reference on sympy symbols against the symbolic one-call functions.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import EVERY_JOINT, RTOL_EXACT, assert_close, every_joint_zoo

import rbd
from rbd.spatial import plux

#: A trailing free joint and universal/planar joints give the most varied trees.
ZOO = every_joint_zoo(18, (5, EVERY_JOINT, False), (3, ("universal", "planar"), True))


def with_frames(model: rbd.Model) -> tuple[rbd.Model, tuple]:
    """A copy of ``model`` with an offset frame on its last body; the names to ask for."""
    model = model.copy()
    X = plux(np.eye(3), np.array([0.1, -0.2, 0.3]))
    model.add_frame("tool", model.nbodies - 1, X)
    return model, ("tool", model.body_names[0], model.nbodies - 1)


def rebuilt(data) -> np.ndarray:
    """``M`` from its factor: ``Lᵀ L`` or ``L Lᵀ`` as ``factor_kind`` says."""
    L = data.L
    return L.T @ L if data.factor_kind == "LtL" else L @ L.T


@pytest.mark.parametrize("index", range(len(ZOO)), ids=lambda k: ZOO[k].name)
def test_compute_all_agrees_with_the_one_call_functions(index, backend):
    model, frames = with_frames(ZOO[index])
    q, v, tau = rbd.testing.random_state(model, index)
    data = rbd.compute_all(model, q, v, frames=frames, tau=tau, backend=backend)
    assert_close(data.M, rbd.crba(model, q, backend=backend), RTOL_EXACT, "M")
    assert_close(data.h, rbd.nonlinear_effects(model, q, v, backend=backend), RTOL_EXACT, "h")
    assert_close(data.g, rbd.gravity_forces(model, q, backend=backend), RTOL_EXACT, "g")
    assert_close(data.poses, rbd.forward_kinematics(model, q, backend=backend), RTOL_EXACT,
                 "world poses")
    assert_close(data.C, rbd.body_centers_of_mass(model, q, backend=backend), RTOL_EXACT,
                 "centres of mass")
    for name in frames:
        assert data.jacobians[name].shape == (6, model.nv)
        assert_close(data.jacobians[name], rbd.jacobian(model, q, name, backend=backend),
                     RTOL_EXACT, f"J of {name!r}")
    assert data.factor_kind in ("LtL", "LLt")
    assert np.all(np.triu(data.L, 1) == 0), "L is lower triangular"
    assert_close(rebuilt(data), data.M, RTOL_EXACT, "factor")
    # q̈ from the factor: compared in torque space (docs/design.md), M q̈ + h = τ
    assert_close(data.M @ data.qdd + data.h, tau, RTOL_EXACT, "M q̈ + h")
    assert_close(data.qdd, rbd.aba(model, q, v, tau, backend=backend), 1e-8, "q̈ against ABA")


@pytest.mark.parametrize("model, expected", [
    (rbd.models.revolute_chain(20), "LLt"),
    (rbd.models.binary_tree(4), "LtL"),
    (rbd.models.humanoid(), "LtL"),
    (rbd.models.revolute_chain(12), "LtL"),
], ids=lambda x: getattr(x, "name", x))
def test_both_factorizations_occur_and_agree_across_backends(model, expected, require_kernels):
    """RC20 takes the dense Cholesky, the trees and short chains the sparse LᵀL (the
    crossover ``factor_sparse``): each backend the same one, with the same numbers."""
    q, v, tau = rbd.testing.random_state(model, 3)
    kernel = rbd.compute_all(model, q, v, tau=tau, backend="kernel")
    reference = rbd.compute_all(model, q, v, tau=tau, backend="reference")
    assert kernel.factor_kind == reference.factor_kind == expected
    assert_close(kernel.L, reference.L, RTOL_EXACT, "L")
    for field in ("M", "h", "g", "qdd", "R", "p", "S0", "c", "v"):
        assert_close(getattr(kernel, field), getattr(reference, field), RTOL_EXACT, field)


def test_every_stage_field_matches_its_reference(require_kernels):
    """Not just the results: X_up, S, the composite inertias and the forces of each stage."""
    model, frames = with_frames(ZOO[1])
    q, v, _ = rbd.testing.random_state(model, 5)
    kernel = rbd.compute_all(model, q, v, frames=frames, backend="kernel")
    reference = rbd.compute_all(model, q, v, frames=frames, backend="reference")
    for field in ("E_up", "r_up", "S_cols", "c_J", "m_C", "h_C", "I_C", "F0", "a", "f", "q",
                  "qd"):
        assert_close(getattr(kernel, field), getattr(reference, field), RTOL_EXACT, field)


def test_batched_states_are_the_single_states(backend):
    model, frames = with_frames(ZOO[0])
    rng = np.random.default_rng(7)
    states = [rbd.testing.random_state(model, rng) for _ in range(3)]
    Q, V, T = (np.array([s[k] for s in states]) for k in range(3))
    data = rbd.compute_all(model, Q, V, frames=frames, tau=T, backend=backend)
    assert data.M.shape == (3, model.nv, model.nv)
    assert data.jacobians["tool"].shape == (3, 6, model.nv)
    assert data.poses.shape == (3, model.nbodies, 4, 4)
    for k in range(3):
        one = rbd.compute_all(model, Q[k], V[k], frames=frames, tau=T[k], backend=backend)
        for field in ("M", "h", "g", "L", "qdd"):
            assert_close(getattr(data, field)[k], getattr(one, field), RTOL_EXACT, field)
        assert_close(data.jacobians["tool"][k], one.jacobians["tool"], RTOL_EXACT, "J")
        assert_close(data.state(k).M, one.M, RTOL_EXACT, "state(k)")


def test_a_shared_configuration_with_batched_velocities(require_kernels):
    model = ZOO[1]
    q, _, _ = rbd.testing.random_state(model, 2)
    V = np.random.default_rng(2).normal(size=(4, model.nv))
    data = rbd.compute_all(model, q, V)
    for k in range(4):
        assert_close(data.h[k], rbd.nonlinear_effects(model, q, V[k]), RTOL_EXACT, "h")
        assert_close(data.M[k], rbd.crba(model, q), RTOL_EXACT, "M")


def test_an_empty_batch(backend):
    model = ZOO[2]
    data = rbd.compute_all(model, np.zeros((0, model.nq)), np.zeros((0, model.nv)),
                           backend=backend)
    assert data.M.shape == (0, model.nv, model.nv)


@pytest.mark.slow
def test_the_reference_runs_on_symbols_for_a_two_link_arm():
    sympy = pytest.importorskip("sympy", reason="symbolic reference")
    model = rbd.models.double_pendulum()
    q1, q2, u1, u2 = sympy.symbols("q1 q2 u1 u2")
    q, v = [q1, q2], [u1, u2]
    data = rbd.compute_all(model, q, v, frames=("link2",), backend="reference")
    assert data.dtype == object and data.factor_kind is None
    expected = {
        "M": rbd.crba(model, q, backend="reference"),
        "h": rbd.nonlinear_effects(model, q, v, backend="reference"),
        "g": rbd.gravity_forces(model, q, backend="reference"),
        "J": rbd.jacobian(model, q, "link2", backend="reference"),
    }
    got = {"M": data.M, "h": data.h, "g": data.g, "J": data.jacobians["link2"]}
    # gravity is the float 9.81, so simplify leaves rounding residues: compare the
    # formulas at random points instead (each side evaluated in double precision)
    points = np.random.default_rng(0).uniform(-3, 3, size=(4, 4))
    for name, value in got.items():
        difference = sympy.Matrix(value) - sympy.Matrix(expected[name])
        for point in points:
            at = difference.subs(dict(zip((q1, q2, u1, u2), point, strict=True)))
            assert np.max(np.abs(np.array(at, dtype=float))) < RTOL_EXACT, name
    assert sympy.simplify(sympy.Matrix(data.M) - sympy.Matrix(expected["M"])) == sympy.zeros(2)
    # and it is the closed form: M[1, 1] = m₂ l₂², M[0, 1] = m₂ (l₂² + l₁ l₂ cos q₂)
    assert sympy.simplify(data.M[0, 1] - (1 + sympy.cos(q2))) == 0


def test_mimic_joints_are_projected_onto_the_independent_coordinates(backend):
    """The stages run on the full tree; M, h, g, J, q̈ equal the coupled one-call functions."""
    from test_mimic import gripper

    model = gripper()
    rng = np.random.default_rng(4)
    states = [(rbd.random_configuration(model, rng), rng.normal(size=model.nv),
               rng.normal(size=model.nv)) for _ in range(2)]
    Q, V, T = (np.array([s[k] for s in states]) for k in range(3))
    data = rbd.compute_all(model, Q, V, frames=("fingertip",), tau=T, backend=backend)
    for k, (q, v, tau) in enumerate(states):
        assert_close(data.M[k], rbd.crba(model, q, backend=backend), RTOL_EXACT, "M")
        assert_close(data.h[k], rbd.nonlinear_effects(model, q, v, backend=backend),
                     RTOL_EXACT, "h")
        assert_close(data.g[k], rbd.gravity_forces(model, q, backend=backend), RTOL_EXACT, "g")
        assert_close(data.jacobians["fingertip"][k],
                     rbd.jacobian(model, q, "fingertip", backend=backend), RTOL_EXACT, "J")
        assert_close(data.M[k] @ data.qdd[k] + data.h[k], tau, RTOL_EXACT, "M q̈ + h")
        assert_close(data.poses[k], rbd.forward_kinematics(model, q, backend=backend),
                     RTOL_EXACT, "poses")
    assert data.factor_kind == "LLt"
    assert_close(data.L[0] @ data.L[0].T, data.M[0], RTOL_EXACT, "factor")


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: rbd.models.mechanisms.torus_chain(4),
                                  lambda: rbd.models.mechanisms.windmill(3)],
                         ids=["torus_chain", "windmill"])
def test_generated_joints_give_their_velocity_product_terms(make, backend):
    """Symbolic joints (S depends on q): c_J comes from their generated function in the
    velocity stage, so h and q̈ agree with the one-call functions."""
    model = make()
    q, v, tau = rbd.testing.random_state(model, 2)
    data = rbd.compute_all(model, q, v, tau=tau, backend=backend)
    assert_close(data.M, rbd.crba(model, q, backend=backend), RTOL_EXACT, "M")
    assert_close(data.h, rbd.nonlinear_effects(model, q, v, backend=backend), RTOL_EXACT, "h")
    assert_close(data.g, rbd.gravity_forces(model, q, backend=backend), RTOL_EXACT, "g")
    assert_close(data.M @ data.qdd + data.h, tau, RTOL_EXACT, "M q̈ + h")
