"""Every registered implementation agrees with every other one.

A derivation is tested here the moment it is listed in ``rbd.registry``.
"""

import numpy as np
import pytest
from helpers import ALL_JOINTS, RTOL_EXACT, assert_close

import rbd
from rbd import registry

MODELS = [
    rbd.testing.random_model(101, 5, ALL_JOINTS),
    rbd.testing.random_model(102, 4, ALL_JOINTS, floating_base=True),
    rbd.testing.random_model(103, 4, ("revolute", "prismatic"), chain=True),
    rbd.models.double_pendulum(),
]


def _armed(model):
    """``model`` with a rotor inertia on every joint (refused by the derivations that
    build M from the bodies alone, through their registry predicate)."""
    model = model.copy()
    for k, body in enumerate(model.bodies):
        if body.joint.nv:
            model.set_joint_properties(body.joint_name, armature=0.1 * (k + 1))
    return model


MODELS.append(_armed(MODELS[1]))

#: The registered derivations are all exact algorithms; a few factor or invert
#: matrices whose condition number on these small random trees stays below ~1e4.
RTOL_REGISTRY = 1e-9


def cases():
    """Every implementation but the reference, each compared with the reference below: the
    reference itself is then checked against all the others, and never with itself."""
    for quantity in registry.QUANTITIES:
        for name in registry.implementations(quantity):
            if name == "reference":
                continue
            for k in range(len(MODELS)):
                yield pytest.param(quantity, name, k, id=f"{quantity}-{name}-model{k}")


def evaluate(quantity, fn, model, q, v, a, f_ext=None):
    if quantity == "inverse_dynamics":
        return fn(model, q, v, a) if f_ext is None else fn(model, q, v, a, f_ext)
    if quantity in ("forward_dynamics", "constrained_dynamics"):
        return fn(model, q, v, a) if f_ext is None else fn(model, q, v, a, f_ext)
    if quantity == "mass_matrix":
        return fn(model, q)
    return fn(model, q, v)


@pytest.mark.parametrize("quantity, name, k", list(cases()))
def test_implementation_agrees_with_reference(quantity, name, k):
    model = MODELS[k]
    if not registry.supports(quantity, name, model):
        pytest.skip(f"{name} does not handle {model.name} (its registry predicate says so)")
    fn = registry.implementations(quantity)[name]
    reference = registry.implementations(quantity)["reference"]
    rng = np.random.default_rng(k)
    for _ in range(2):
        q, v, a = rbd.testing.random_state(model, rng)
        got = np.asarray(evaluate(quantity, fn, model, q, v, a), dtype=float)
        assert_close(got, evaluate(quantity, reference, model, q, v, a), rtol=RTOL_REGISTRY,
                     what=f"{name} {quantity}")


def test_every_quantity_has_reference_and_kernel():
    for quantity in registry.QUANTITIES:
        names = registry.implementations(quantity)
        assert "reference" in names
        if rbd.has_kernels():
            assert "kernel" in names


def test_no_implementation_is_compared_with_itself():
    """Each case pairs a derivation with a different one (the reference), and every
    derivation of every quantity, the reference included, takes part in some case."""
    ids = [(p.values[0], p.values[1]) for p in cases()]
    assert all(name != "reference" for _, name in ids)
    for quantity in registry.QUANTITIES:
        others = {name for q, name in ids if q == quantity}
        assert others == set(registry.implementations(quantity)) - {"reference"}
        assert others, f"{quantity}: the reference is compared with nothing"


def test_user_registration_and_consistency_report():
    model = rbd.models.double_pendulum(1.0, 1.0, 1.0, 1.0)

    def hand_derived(model, q):
        c2 = np.cos(q[1])
        return np.array([[3 + 2 * c2, 1 + c2], [1 + c2, 1.0]])

    def wrong(model, q):
        return np.array([[3.0, 1.0], [1.0, 1.0]])

    report = rbd.testing.check_consistency(model, "mass_matrix", hand_derived)
    assert report.ok and report.max_difference < RTOL_EXACT
    assert "reference" in str(report)
    bad = rbd.testing.check_consistency(model, "mass_matrix", wrong)
    assert not bad.ok and "DIFFERS" in str(bad)

    registry.register("mass_matrix", "student", hand_derived)
    try:
        assert "student" in registry.implementations("mass_matrix")
    finally:
        registry.unregister("mass_matrix", "student")
    assert "student" not in registry.implementations("mass_matrix")
    with pytest.raises(KeyError, match="unknown quantity"):
        registry.implementations("torque")


@pytest.mark.slow
def test_forward_dynamics_compared_in_torque_space():
    model = MODELS[0]
    q, v, tau = rbd.testing.random_state(model, 5)
    a = rbd.aba(model, q, v, tau, backend="reference")
    M = rbd.crba(model, q, backend="reference")
    state = (q, v, tau)
    # a 1e-6 relative error in the accelerations is a torque error of the same order
    wrong = a * (1 + 1e-6)
    expected = np.max(np.abs(M @ (wrong - a))) / max(1, np.abs(tau).max(),
                                                     np.abs(M @ a - tau).max())
    diff = rbd.testing.quantity_difference("forward_dynamics", model, state, wrong, a)
    assert np.isclose(diff, expected, rtol=1e-6) and diff > 1e-8
    assert rbd.testing.quantity_difference("forward_dynamics", model, state, a, a) == 0.0
    report = rbd.testing.check_consistency(
        model, "forward_dynamics", lambda m, q, v, t: 1.001 * rbd.aba(m, q, v, t))
    assert not report.ok
