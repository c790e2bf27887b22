"""check_consistency names the usual slips of a hand derivation, term by term.

The true equations of motion are derived here independently of rbd: from the
kinetic and potential energy of each model written by hand (world rotations,
centre-of-mass positions, Lagrange's equations by sympy differentiation), split
per link into the rotational part ½ωᵀIω and the translational part ½m|v_c|²
(whose Hessian is the parallel-axis term m·d² of M).  Each slip is planted in
those formulas and handed to check_consistency twice: as a Python function
(numbers) and as a sympy Matrix (formulas).  The slip must be named at every
entry it changes, and no unchanged entry may be reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import sympy

import rbd
from rbd.symbolic import planar_arm, spatial_double_pendulum
from rbd.testing import check_consistency, state_symbols


def rot(axis: str, angle):
    c, s = sympy.cos(angle), sympy.sin(angle)
    return {"x": sympy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "y": sympy.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "z": sympy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


@dataclass
class Truth:
    """Hand-derived M (per-link parts), velocity terms and gravity of a serial chain."""

    model: object            # what check_consistency is given (Model or SymbolicModel)
    q: tuple
    qd: tuple
    M_rot: list              # per link
    M_trans: list            # per link
    coriolis: sympy.Matrix   # terms in q̇_i q̇_j, i ≠ j
    centrifugal: sympy.Matrix  # terms in q̇_i²
    g: sympy.Matrix
    body_names: list

    @property
    def M(self):
        return sum(self.M_rot + self.M_trans, sympy.zeros(len(self.q), len(self.q)))

    @property
    def h(self):
        return self.coriolis + self.centrifugal + self.g

    def christoffel(self):
        """C(q, q̇) of Christoffel symbols of M (its first two indices as in C q̇)."""
        M, q, qd, n = self.M, self.q, self.qd, len(self.q)
        return sympy.Matrix(n, n, lambda i, j: sum(
            (M[i, j].diff(q[k]) + M[i, k].diff(q[j]) - M[j, k].diff(q[i])) * qd[k] / 2
            for k in range(n)))


def derive(model, links, gravity, body_names) -> Truth:
    """Lagrange's equations of a serial chain of revolute joints.

    ``links``: per link ``(axis, offset of the joint in the parent frame, centre of mass in
    the link frame, rotational inertia about it, mass)``.
    """
    n = len(links)
    q, qd, _ = (tuple(c) for c in state_symbols(model))
    R, origin = sympy.eye(3), sympy.zeros(3, 1)
    omega = sympy.zeros(3, 1)
    M_rot, M_trans, U = [], [], 0
    for k, (axis, offset, com, inertia, mass) in enumerate(links):
        origin = origin + R * sympy.Matrix(offset)
        R = R * rot(axis, q[k])
        unit = sympy.Matrix([1 if a == axis else 0 for a in "xyz"])
        omega = omega + R * unit * qd[k]
        c = origin + R * sympy.Matrix(com)
        v = c.jacobian(q) * sympy.Matrix(qd)
        w_body = R.T * omega
        T_rot = (w_body.T * sympy.Matrix(inertia) * w_body)[0] / 2
        T_trans = mass * (v.T * v)[0] / 2
        M_rot.append(sympy.hessian(T_rot, qd).applyfunc(sympy.expand))
        M_trans.append(sympy.hessian(T_trans, qd).applyfunc(sympy.expand))
        U = U - mass * (sympy.Matrix(gravity).T * c)[0]
    M = sum(M_rot + M_trans, sympy.zeros(n, n))
    T = (sympy.Matrix(qd).T * M * sympy.Matrix(qd))[0] / 2
    # d/dt ∂T/∂q̇ − ∂T/∂q at q̈ = 0: the velocity terms
    dT = [T.diff(x) for x in qd]
    velocity = sympy.Matrix([sum(dT[i].diff(q[k]) * qd[k] for k in range(n)) - T.diff(q[i])
                             for i in range(n)]).applyfunc(sympy.expand)
    coriolis, centrifugal = sympy.zeros(n, 1), sympy.zeros(n, 1)
    for i in range(n):
        for term in sympy.Add.make_args(velocity[i]):
            powers = term.as_independent(*qd, as_Add=False)[1].as_powers_dict()
            if len(powers) == 1:
                centrifugal[i] += term
            else:
                coriolis[i] += term
    g = sympy.Matrix([U]).jacobian(q).T.applyfunc(sympy.expand)
    return Truth(model, q, qd, M_rot, M_trans, coriolis, centrifugal, g, body_names)


def named(record, *names):
    found = {s.name: s for s in record.symbols}
    return [found[n] for n in names]


def arm_truth():
    arm = planar_arm()
    m1, m2, l1, lc1, lc2, I1, I2, g = named(arm, "m1", "m2", "l1", "lc1", "lc2", "I1", "I2", "g")
    links = [("z", (0, 0, 0), (lc1, 0, 0), sympy.diag(0, I1, I1), m1),
             ("z", (l1, 0, 0), (lc2, 0, 0), sympy.diag(0, I2, I2), m2)]
    return derive(arm, links, (0, -g, 0), ["link1", "link2"])


def pendulum_truth():
    pendulum = spatial_double_pendulum()
    m1, m2, l1, l2, g = named(pendulum, "m1", "m2", "l1", "l2", "g")
    links = [("x", (0, 0, 0), (0, 0, -l1 / 2), sympy.diag(m1 * l1**2 / 12, m1 * l1**2 / 12, 0),
              m1),
             ("y", (0, 0, -l1), (0, 0, -l2 / 2), sympy.diag(m2 * l2**2 / 12, m2 * l2**2 / 12, 0),
              m2)]
    return derive(pendulum, links, (0, 0, -g), ["rod1", "rod2"])


def chain_truth():
    """rbd.models.revolute_chain(3): axes z, y, z, rods of 1 kg, 0.1 m long, 0.04 m thick."""
    model = rbd.models.revolute_chain(3)
    a, b = sympy.Rational(1, 10), sympy.Rational(4, 100)
    inertia = sympy.diag(b**2 + b**2, a**2 + b**2, a**2 + b**2) / 12
    links = [(axis, offset, (a / 2, 0, 0), inertia, 1)
             for axis, offset in (("z", (0, 0, 0)), ("y", (a, 0, 0)), ("z", (a, 0, 0)))]
    return derive(model, links, (0, 0, -sympy.Rational(981, 100)), model.body_names)


TRUTHS = {"two-link arm": arm_truth, "3-D double pendulum": pendulum_truth,
          "three-link chain": chain_truth}


@pytest.fixture(scope="module", params=list(TRUTHS))
def truth(request):
    return TRUTHS[request.param]()


@pytest.mark.slow
def test_the_hand_derivations_are_right(truth):
    """The independent formulas are rbd's numbers (else the slips below would test nothing)."""
    report_M = check_consistency(truth.model, "mass_matrix", truth.M)
    report_h = check_consistency(truth.model, "bias_forces", truth.h)
    assert report_M.ok and report_h.ok, (str(report_M), str(report_h))


# --- the slips, each a function of the truth: (quantity, wrong formula, expected words) ------
def nonzero(t, expr) -> bool:
    """``expr`` is not zero as a function (checked at random states and parameters: the hand
    formulas are not simplified, so a structural test would see sin² + cos² − 1)."""
    rng = np.random.default_rng(1)
    symbols = sorted(sympy.sympify(expr).free_symbols, key=sympy.default_sort_key)
    f = sympy.lambdify(symbols, expr, modules="numpy")
    return any(abs(float(f(*rng.uniform(0.5, 2.0, len(symbols))))) > 1e-12 for _ in range(3))


def coupling(t, part, off_diagonal=False):
    """The first entry (i, j), i ≤ j, of ``part`` that depends on q, off the diagonal first."""
    n = len(t.q)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not off_diagonal:
        pairs += [(i, i) for i in range(n)]
    for i, j in pairs:
        if part[i, j].free_symbols & set(t.q) and nonzero(t, part[i, j]):
            return i, j
    pytest.skip("this model's M has no q-dependent entry off the diagonal")


def changes(t, delta):
    return {ij for ij in np.ndindex(*delta.shape) if nonzero(t, delta[ij])}


def sign_in_coupling(t):
    """A sign error in the parallel-axis term of the last link, in a coupling entry."""
    part = t.M_trans[-1]
    i, j = coupling(t, part)
    wrong = t.M.copy()
    wrong[i, j] -= 2 * part[i, j]
    if i != j:
        wrong[j, i] -= 2 * part[j, i]
    return "mass_matrix", wrong, {(i, j), (j, i)}, \
        f"a sign error in the parallel-axis term m·d² of {t.body_names[-1]}"


def missing_link_inertia(t):
    wrong = t.M - t.M_rot[-1]
    changed = changes(t, t.M_rot[-1])
    return "mass_matrix", wrong, changed, f"the rotational inertia of {t.body_names[-1]}"


def missing_parallel_axis(t):
    wrong = t.M - t.M_trans[0]
    changed = changes(t, t.M_trans[0])
    return "mass_matrix", wrong, changed, f"the parallel-axis term m·d² of {t.body_names[0]}"


def doubled_parallel_axis(t):
    wrong = t.M + t.M_trans[-1]
    changed = changes(t, t.M_trans[-1])
    return "mass_matrix", wrong, changed, f"the parallel-axis term m·d² of {t.body_names[-1]}"


def cos_for_sin_in_M(t):
    i, j = coupling(t, t.M)
    wrong = t.M.copy()
    swap = {f: (sympy.sin if isinstance(f, sympy.cos) else sympy.cos)(*f.args)
            for f in t.M[i, j].atoms(sympy.sin, sympy.cos)}
    wrong[i, j] = wrong[j, i] = t.M[i, j].xreplace(swap)
    return "mass_matrix", wrong, {(i, j), (j, i)}, "cos written for sin"


def transposed_M(t):
    """M[i, j] filled from the wrong triangle while [j, i] stays right."""
    i, j = coupling(t, t.M, off_diagonal=True)
    wrong = t.M.copy()
    wrong[i, j] = 2 * t.M[i, j]
    return "mass_matrix", wrong, {(i, j)}, "a swapped index (transpose)"


def factor_of_two_in_M(t):
    i, j = coupling(t, t.M)
    wrong = t.M.copy()
    wrong[i, j] = wrong[j, i] = 2 * t.M[i, j]
    return "mass_matrix", wrong, {(i, j), (j, i)}, "a factor of 2 (yours is twice"


def vector_changes(t, delta):
    return {(i,) for i in range(len(t.q)) if nonzero(t, delta[i])}


def missing_gravity(t):
    return "bias_forces", t.h - t.g, vector_changes(t, t.g), "the gravity term"


def gravity_sign(t):
    return "bias_forces", t.h - 2 * t.g, vector_changes(t, t.g), "a sign error in the gravity"


def halved_coriolis(t):
    return "bias_forces", t.h - t.coriolis / 2, vector_changes(t, t.coriolis), "Coriolis"


def missing_centrifugal(t):
    return "bias_forces", t.h - t.centrifugal, vector_changes(t, t.centrifugal), "centrifugal"


def transposed_coriolis(t):
    C = t.christoffel()
    qd = sympy.Matrix(t.qd)
    delta = ((C.T - C) * qd).applyfunc(sympy.expand)
    return "bias_forces", t.h + delta, vector_changes(t, delta), "a swapped index: Cᵀ"


def cos_for_sin_in_gravity(t):
    swap = {f: (sympy.sin if isinstance(f, sympy.cos) else sympy.cos)(*f.args)
            for f in t.g.atoms(sympy.sin, sympy.cos)}
    wrong_g = t.g.xreplace(swap)
    return "bias_forces", t.h - t.g + wrong_g, vector_changes(t, wrong_g - t.g), \
        "cos written for sin"


SLIPS = [sign_in_coupling, missing_link_inertia, missing_parallel_axis, doubled_parallel_axis,
         cos_for_sin_in_M, transposed_M, factor_of_two_in_M, missing_gravity, gravity_sign,
         halved_coriolis, missing_centrifugal, transposed_coriolis, cos_for_sin_in_gravity]
#: What each slip's description must also say (beyond its words above).
VERB = {missing_link_inertia: "missing", missing_parallel_axis: "missing",
        doubled_parallel_axis: "doubled", missing_gravity: "missing", halved_coriolis: "halved",
        missing_centrifugal: "missing"}


def as_function(t, quantity, formula):
    """The wrong formula as the Python function a student would write (numbers in, out)."""
    values = getattr(t.model, "values", {})
    f = sympy.lambdify([t.q, t.qd], formula.xreplace(values), modules="numpy")
    if quantity == "mass_matrix":
        return lambda model, q: np.asarray(f(q, np.zeros(len(q))), dtype=float)
    return lambda model, q, v: np.asarray(f(q, v), dtype=float).ravel()


@pytest.mark.slow
@pytest.mark.parametrize("form", ["function", "sympy"])
@pytest.mark.parametrize("slip", SLIPS, ids=lambda s: s.__name__)
def test_the_slip_is_named_at_every_entry_it_changes(truth, slip, form):
    quantity, wrong, changed, words = slip(truth)
    assert changed, "the slip changes nothing on this model"
    fn = wrong if form == "sympy" else as_function(truth, quantity, wrong)
    report = check_consistency(truth.model, quantity, fn)
    assert not report.ok
    assert {e.index for e in report.entries} == changed, str(report)
    for entry in report.entries:
        assert any(words in s and VERB.get(slip, "") in s for s in entry.slips), str(report)
    text = str(report)
    assert f"{len(changed)} differing" in text and "likely slip: " in text
    if form == "sympy":      # the formula of the difference is reported too
        assert set(report.formulas) == changed


@pytest.mark.slow
def test_arm_terms_are_named_with_their_formula():
    """The textbook's slips on the two-link arm, named with the term of the formula."""
    t = arm_truth()
    m2, l1, lc2 = named(t.model, "m2", "l1", "lc2")
    q2 = t.q[1]
    wrong = t.M.copy()
    wrong[0, 0] -= 4 * l1 * lc2 * m2 * sympy.cos(q2)          # −2 l1 lc2 m2 cos q2
    report = check_consistency(t.model, "mass_matrix", wrong)
    assert [e.entry for e in report.entries] == ["M[0, 0]"]
    assert report.worst.slips[0] == ("a sign error in the term 2*l1*lc2*m2*cos(q2) (of the "
                                     "parallel-axis term m·d² of link2)")
    assert "row q1 'joint1', column q1 'joint1'" in str(report)
    assert sympy.simplify(report.formulas[(0, 0)] + 4 * l1 * lc2 * m2 * sympy.cos(q2)) == 0


def test_every_differing_entry_is_listed_worst_first():
    t = arm_truth()
    wrong = t.M - t.M_rot[1]                # I2 missing from all four entries
    report = check_consistency(t.model, "mass_matrix", as_function(t, "mass_matrix", wrong))
    assert len(report.entries) == 4
    differences = [e.difference for e in report.entries]
    assert differences == sorted(differences, reverse=True)
    assert report.worst is report.entries[0]
    assert all(any("the rotational inertia of link2 (I2) missing" in s for s in e.slips)
               for e in report.entries)
    assert len(report.slips) >= 4 and str(report).count("likely slip") >= 4


@pytest.mark.slow
@pytest.mark.parametrize("form", ["function", "sympy"])
def test_inverse_dynamics_names_a_missing_link_inertia_in_M_qdd(form):
    """τ = M q̈ + h with I2 left out of M: every row, named as a part of M q̈."""
    t = arm_truth()
    qdd = sympy.Matrix(state_symbols(t.model)[2])
    wrong = (t.M - t.M_rot[1]) * qdd + t.h
    if form == "function":
        values = t.model.values
        f = sympy.lambdify([t.q, t.qd, list(qdd)], wrong.xreplace(values), modules="numpy")
        fn = lambda model, q, v, a: np.asarray(f(q, v, a), dtype=float).ravel()  # noqa: E731
    else:
        fn = wrong
    report = check_consistency(t.model, "inverse_dynamics", fn)
    assert {e.index for e in report.entries} == {(0,), (1,)}
    for entry in report.entries:
        assert any(s.startswith("the rotational inertia of link2 in M q̈") and "missing" in s
                   for s in entry.slips), str(report)


def test_a_missing_rotor_inertia_is_named_apart_from_the_links():
    """Armature enters M once, not in every link's part."""
    model = rbd.models.double_pendulum(1.0, 1.0, 1.0, 1.0)
    model.set_joint_properties("joint2", armature=[0.5])

    def without_rotor(model, q):
        c = np.cos(q[1])                        # the textbook M, no armature
        return np.array([[3 + 2 * c, 1 + c], [1 + c, 1.0]])

    report = check_consistency(model, "mass_matrix", without_rotor)
    assert [e.entry for e in report.entries] == ["M[1, 1]"]
    assert report.worst.slips[0] == "the rotor inertia (armature) (0.5) missing"
