"""rbd.testing.check_consistency finds the wrong term of a hand derivation."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import rbd
from rbd.errors import InputError
from rbd.testing import check_consistency, state_symbols

# Unit masses and lengths, masses at the link tips, gravity 9.81 along -z: the textbook
# double pendulum, whose M has the closed form below (Spong, Hutchinson & Vidyasagar §7.4).
PENDULUM = rbd.models.double_pendulum(1.0, 1.0, 1.0, 1.0)


def textbook_M(model, q):
    c = np.cos(q[1])
    return np.array([[3 + 2 * c, 1 + c], [1 + c, 1.0]])


def with_entry(value):
    """The textbook M with entry (0, 1) replaced by ``value(q, M)``."""
    def fn(model, q):
        M = textbook_M(model, q)
        M[0, 1] = value(q, M)
        return M
    return fn


def test_the_textbook_matrix_agrees():
    report = check_consistency(PENDULUM, "mass_matrix", textbook_M)
    assert report.ok and report.compared >= 2 and "agreement: yes" in str(report)


@pytest.mark.parametrize("planted, slip", [
    (with_entry(lambda q, M: -M[0, 1]), "a sign"),
    (with_entry(lambda q, M: 2 * M[0, 1]), "a factor of 2 (yours is twice"),
    (with_entry(lambda q, M: 0.5 * M[0, 1]), "a factor of 2 (yours is half"),
    (with_entry(lambda q, M: 1 + np.sin(q[1])), "a swapped index (transpose)"),
    (with_entry(lambda q, M: 1 + np.sin(q[1])), "cos written for sin (and sin for cos) in the "
                                                 "term cos(q2)"),
])
def test_a_planted_slip_in_M_is_named_at_its_entry(planted, slip):
    report = check_consistency(PENDULUM, "mass_matrix", planted)
    assert not report.ok
    worst = report.worst
    assert worst.entry == "M[0, 1]" and worst.index == (0, 1)
    q = worst.state["q"]
    assert worst.yours == pytest.approx(planted(PENDULUM, q)[0, 1], rel=1e-12)
    assert worst.expected == pytest.approx(1 + np.cos(q[1]), rel=1e-12)
    assert any(s.startswith(slip) for s in worst.slips), worst.slips
    text = str(report)
    assert "1 differing entry, worst first:" in text
    assert "worst entry: M[0, 1] (row q1 'joint1', column q2 'joint2') at q = [" in text
    assert "yours" in text and "expected" in text
    assert "likely slip: " + slip in text


def gravity_and_coriolis(model, q, v):
    g = rbd.gravity_forces(model, q, backend="reference")
    return g, rbd.nonlinear_effects(model, q, v, backend="reference") - g


@pytest.mark.slow
@pytest.mark.parametrize("quantity, planted, slip", [
    ("inverse_dynamics",
     lambda m, q, v, a: rbd.rnea(m, q, v, a) - gravity_and_coriolis(m, q, v)[0],
     "the gravity term"),
    ("inverse_dynamics",
     lambda m, q, v, a: rbd.rnea(m, q, v, a) - 0.5 * gravity_and_coriolis(m, q, v)[1],
     "the velocity terms C(q, q̇) q̇ halved"),
    ("bias_forces",
     lambda m, q, v: rbd.nonlinear_effects(m, q, v) - 2 * gravity_and_coriolis(m, q, v)[0],
     "a sign error in the gravity term"),
    ("forward_dynamics",
     lambda m, q, v, tau: rbd.aba(m, q, v, tau + gravity_and_coriolis(m, q, v)[0]),
     "the gravity term g(q) missing"),
    ("forward_dynamics",
     lambda m, q, v, tau: rbd.aba(m, q, v, tau + 0.5 * gravity_and_coriolis(m, q, v)[1]),
     "the Coriolis/centrifugal term C(q, q̇) q̇ halved"),
])
def test_missing_gravity_and_halved_coriolis_are_named(quantity, planted, slip):
    model = rbd.testing.random_model(3, 3, ("revolute", "prismatic"), chain=True)
    report = check_consistency(model, quantity, planted)
    assert not report.ok
    assert len(report.entries) == model.nv         # every entry differs, and is listed
    for entry in report.entries:
        assert [s for s in entry.slips if s.startswith(slip)], str(report)


def test_a_symbolic_slip_is_reported_as_a_formula():
    q, _, _ = state_symbols(PENDULUM)
    c = sympy.cos(q[1])
    right = sympy.Matrix([[3 + 2 * c, 1 + c], [1 + c, 1]])
    assert check_consistency(PENDULUM, "mass_matrix", right).ok
    wrong = sympy.Matrix([[3 + 2 * c, 1 + 2 * c], [1 + 2 * c, 1]])
    report = check_consistency(PENDULUM, "mass_matrix", wrong)
    assert not report.ok
    assert set(report.formulas) == {(0, 1), (1, 0)}
    assert sympy.simplify(report.formulas[(0, 1)] - c) == 0
    assert "M[0, 1] = cos(q2)" in str(report)       # symbols numbered from 1, as the joints


def test_a_function_returning_sympy_and_the_users_own_symbol_names():
    q2 = sympy.Symbol("q_2")
    v1, v2 = sympy.symbols("v1 v2")

    def h(model, q, v):   # the centrifugal terms forgotten
        g0 = 2 * 9.81 * sympy.sin(q[0]) + 9.81 * sympy.sin(q[0] + q2)
        return sympy.Matrix([-2 * v1 * v2 * sympy.sin(q2) + g0,
                             9.81 * sympy.sin(q[0] + q2)])

    report = check_consistency(PENDULUM, "bias_forces", h)
    assert not report.ok and set(report.formulas) == {(0,), (1,)}
    q, qd, _ = state_symbols(PENDULUM)
    assert sympy.simplify(report.formulas[(0,)] - qd[1] ** 2 * sympy.sin(q[1])) == 0
    assert sympy.simplify(report.formulas[(1,)] + qd[0] ** 2 * sympy.sin(q[1])) == 0
    assert any("the centrifugal term in q̇2²" in s and "missing" in s
               for s in report.entries[0].slips + report.entries[1].slips), str(report)


@pytest.mark.slow
def test_one_symbol_convention_from_1():
    """rbd's own equations are accepted as an answer; joints are named in the report."""
    from rbd.symbolic import equations_of_motion, planar_arm

    assert check_consistency(PENDULUM, "mass_matrix", equations_of_motion(PENDULUM).M).ok
    arm = planar_arm()
    eom = equations_of_motion(arm)
    assert check_consistency(arm, "mass_matrix", eom.M).ok
    assert check_consistency(arm, "bias_forces", eom.h).ok
    assert tuple(state_symbols(arm)[0]) == eom.q and tuple(state_symbols(arm)[1]) == eom.qd
    assert eom.joints == ("joint1", "joint2")
    wrong = eom.M.copy()
    wrong[1, 1] = wrong[1, 1].subs(eom.q[1], eom.q[0])        # no q2 in M[1, 1]: unchanged
    wrong[0, 1] = wrong[1, 0] = eom.M[0, 1] + sympy.sin(eom.q[1])
    report = check_consistency(arm, "mass_matrix", wrong)
    assert "M[0, 1] = sin(q2)" in str(report)                  # the elbow is q2
    assert "column q2 'joint2'" in str(report)
    q0 = sympy.Symbol("q0")
    with pytest.raises(InputError, match="numbers the state symbols from 1"):
        check_consistency(arm, "mass_matrix", sympy.Matrix([[q0, 0], [0, 1]]))


def test_implementations_that_do_not_handle_the_model_are_counted_apart():
    model = rbd.testing.random_model(1, 3, ("spherical", "revolute"))
    report = check_consistency(model, "mass_matrix", rbd.crba)
    na = [name for name, _, note in report.rows if note]
    assert "symbolic-guenter-lee" in na
    assert report.ok and report.not_applicable == len(na) and report.compared >= 2
    assert f"{report.compared} compared, {len(na)} n/a" in str(report)
    assert "n/a (does not handle this model)" in str(report)


def test_clear_errors():
    with pytest.raises(InputError, match="did you mean 'mass_matrix'"):
        check_consistency(PENDULUM, "mass matrix", textbook_M)
    with pytest.raises(InputError, match=r"fn\(model, q, v, a\).*inverse_dynamics"):
        check_consistency(PENDULUM, "inverse_dynamics", textbook_M)
    with pytest.raises(InputError, match=r"shape \(3,\).*expected \(2, 2\)"):
        check_consistency(PENDULUM, "mass_matrix", lambda model, q: np.zeros(3))
    with pytest.raises(InputError, match="not a state symbol"):
        check_consistency(PENDULUM, "mass_matrix", sympy.Matrix([[sympy.Symbol("x"), 0],
                                                                 [0, 1]]))
    with pytest.raises(InputError, match="a function or a sympy Matrix"):
        check_consistency(PENDULUM, "mass_matrix", np.eye(2))


def test_a_model_with_mimic_joints_gets_the_whole_quantity_slips():
    """No symbolic record for mimic joints: the entries are still listed, the slip of the
    whole quantity named, and the coordinate carries the name of the joint that owns it."""
    model = rbd.models.double_pendulum()
    model.add_mimic("joint2", "joint1")
    report = check_consistency(model, "mass_matrix", lambda model, q: 2 * rbd.crba(model, q))
    assert [e.entry for e in report.entries] == ["M[0, 0]"]
    assert report.worst.coordinates == "row q1 'joint1', column q1 'joint1'"
    assert report.worst.slips == ["a factor of 2 (yours is twice the expected value) "
                                  "(in every entry)"]
