"""Bad input at the public boundary: InputError naming the argument, inputs untouched."""

import numpy as np
import pytest

import rbd


@pytest.fixture
def model():
    return rbd.testing.random_model(3, 3, ("revolute", "spherical"), floating_base=True)


def good(model):
    q, v, a = rbd.testing.random_state(model, 0)
    return q, v, a


def calls(model, q, v, a, f):
    return {
        "rnea": lambda b: rbd.rnea(model, q, v, a, f, backend=b),
        "aba": lambda b: rbd.aba(model, q, v, a, f, backend=b),
        "crba": lambda b: rbd.crba(model, q, backend=b),
        "nonlinear_effects": lambda b: rbd.nonlinear_effects(model, q, v, backend=b),
        "kinetic_energy": lambda b: rbd.kinetic_energy(model, q, v, backend=b),
        "forward_kinematics": lambda b: rbd.forward_kinematics(model, q, backend=b),
        "integrate": lambda b: rbd.integrate(model, q, v, 0.1, backend=b),
    }


def check_raises(fn, backend, pattern, *arrays):
    before = [np.array(x, copy=True) for x in arrays]
    with pytest.raises(rbd.InputError, match=pattern):
        fn(backend)
    for x, y in zip(arrays, before, strict=True):
        assert np.array_equal(np.asarray(x), y, equal_nan=True), "input was modified"


def test_wrong_shapes(model, backend):
    q, v, a = good(model)
    check_raises(lambda b: rbd.rnea(model, q[:-1], v, a, backend=b), backend, r"\bq\b", q)
    check_raises(lambda b: rbd.rnea(model, q, v[:-1], a, backend=b), backend, r"\bv\b", v)
    check_raises(lambda b: rbd.rnea(model, q, v, a[:, None], backend=b), backend, r"\ba\b", a)
    check_raises(lambda b: rbd.aba(model, q, v, a[:2], backend=b), backend, r"\btau\b", a)
    f = np.zeros((model.nbodies + 1, 6))
    check_raises(lambda b: rbd.rnea(model, q, v, a, f, backend=b), backend, "f_ext", f)
    check_raises(lambda b: rbd.crba(model, np.zeros((2, 3, model.nq)), backend=b), backend,
                 r"\bq\b")


def test_non_finite_values(model, backend):
    q, v, a = good(model)
    v_bad = v.copy()
    v_bad[1] = np.nan
    for name, fn in calls(model, q, v_bad, a, None).items():
        if name in ("crba", "forward_kinematics"):
            continue
        check_raises(fn, backend, r"\bv\b", v_bad)
    a_bad = a.copy()
    a_bad[0] = np.inf
    check_raises(lambda b: rbd.rnea(model, q, v, a_bad, backend=b), backend, r"\ba\b", a_bad)


def test_non_unit_quaternion(model, backend):
    q, v, a = good(model)
    q_bad = q.copy()
    q_bad[3:7] *= 1.01  # the free joint's quaternion
    for fn in calls(model, q_bad, v, a, None).values():
        check_raises(fn, backend, r"\bq\b.*quaternion", q_bad)
    # within the tolerance is accepted
    q_ok = q.copy()
    q_ok[3:7] *= 1 + 1e-9
    rbd.rnea(model, q_ok, v, a, backend=backend)


def test_non_numeric_and_batch_mismatch(model, backend):
    q, v, a = good(model)
    with pytest.raises(rbd.InputError, match=r"\bq\b"):
        rbd.crba(model, "not an array", backend=backend)
    Q = np.stack([q, q, q])
    V = np.stack([v, v])
    with pytest.raises(rbd.InputError, match="batch"):
        rbd.nonlinear_effects(model, Q, V, backend=backend)


def test_bad_backend_and_model():
    model = rbd.models.double_pendulum()
    with pytest.raises(rbd.InputError, match="backend"):
        rbd.crba(model, [0.0, 0.0], backend="gpu")
    with pytest.raises(rbd.InputError, match="model"):
        rbd.crba("double_pendulum", [0.0, 0.0])
    with pytest.raises(rbd.InputError, match="pivot"):
        rbd.aba(model, [0, 0], [0, 0], [0, 0], pivot="nope")


def test_jacobian_errors(model, backend):
    q, _, _ = good(model)
    with pytest.raises(rbd.InputError, match="body"):
        rbd.jacobian(model, q, "no such body", backend=backend)
    with pytest.raises(rbd.InputError, match="point"):
        rbd.jacobian(model, q, 0, point=[1.0, 2.0], backend=backend)


def test_integrate_dt(model, backend):
    q, v, _ = good(model)
    with pytest.raises(rbd.InputError, match="dt"):
        rbd.integrate(model, q, v, float("nan"), backend=backend)
    with pytest.raises(rbd.InputError, match="dt"):
        rbd.integrate(model, q, v, "soon", backend=backend)
