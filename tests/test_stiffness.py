"""The formulation-stiffness study (rbd.studies.stiffness).

The 50-digit truth is checked against mpmath's own dense LU and against a
lower precision; the test chains are checked for the geometry they claim; the
measured errors are checked against what a backward-stable method can reach.
"""

import mpmath
import numpy as np
import pytest
from helpers import assert_close

import rbd
from rbd.reference import block_elimination as be
from rbd.studies import stiffness as st

EPS = np.finfo(float).eps

#: Every method here is a sequence of backward-stable small solves; its forward
#: error should stay below a modest multiple of cond₂(M)·eps.  On 4-body coaxial
#: chains the measured worst ratio error / (cond·eps) is 0.08–0.41 (8 seeded
#: cases, ratios 1e-4 and 1e-8); 4 leaves a factor 10.
STABILITY_FACTOR = 4.0


def small_system(ratio=1e-3, pattern="coaxial", seed=0):
    model = st.stiff_chain(ratio, 4, pattern, seed)
    rng = np.random.default_rng(seed)
    q, v, tau = rbd.testing.random_state(model, rng)
    return model, q, v, tau, be.augmented_system(model, q, v, tau)


@pytest.mark.slow
def test_sparse_mp_solve_matches_mpmath_dense_lu():
    _, _, _, _, system = small_system()
    K, rhs = be.kkt_matrix(system), be.kkt_rhs(system)
    x = st.mp_solve(K, rhs, dps=50)
    with mpmath.workdps(50):
        y = mpmath.lu_solve(mpmath.matrix(K.toarray().tolist()), mpmath.matrix(rhs.tolist()))
        assert max(abs(x[i] - y[i]) for i in range(len(x))) < mpmath.mpf(10) ** -40
        Kmp = [[mpmath.mpf(float(v)) for v in row] for row in K.toarray()]
        residual = max(abs(mpmath.fsum(Kmp[i][j] * x[j] for j in range(len(x)))
                           - mpmath.mpf(float(rhs[i]))) for i in range(len(x)))
        assert residual < mpmath.mpf(10) ** -40


def test_truth_does_not_depend_on_precision():
    _, _, _, _, system = small_system(1e-8)
    assert_close(st.mp_forward_dynamics(system, 50), st.mp_forward_dynamics(system, 35),
                 rtol=1e-15, what="50 vs 35 digits")


def test_well_conditioned_chain_all_methods_exact():
    model, q, v, tau, _ = small_system(1.0, "alternating")
    errors = st.forward_dynamics_errors(model, q, v, tau)
    assert set(errors) == set(st.METHODS)
    assert max(errors.values()) < 1e-13, errors


def test_errors_stay_within_the_conditioning_bound():
    for ratio in (1e-4, 1e-8):
        model, q, v, tau, system = small_system(ratio)
        errors = st.forward_dynamics_errors(model, q, v, tau)
        bound = STABILITY_FACTOR * st.mp_condition_number(system) * EPS
        assert max(errors.values()) < bound, (ratio, errors, bound)


def test_coaxial_chain_is_stiff():
    """The study is not vacuous: light-inboard coaxial pairs do cost accuracy."""
    model, q, v, tau, _ = small_system(1e-8)
    assert max(st.forward_dynamics_errors(model, q, v, tau).values()) > 1e-10


def test_condition_number_matches_numpy_when_moderate():
    model, q, _, _, system = small_system(1e-2)
    assert st.mp_condition_number(system) == pytest.approx(
        np.linalg.cond(rbd.reference.crba.crba(model, q)), rel=1e-6)


def test_coaxial_pairs_share_their_axis_line():
    model = st.stiff_chain(1e-6, 6, "coaxial", seed=3)
    q = np.random.default_rng(0).uniform(-np.pi, np.pi, model.nv)
    T = rbd.reference.kinematics.forward_kinematics(model, q)
    for k in range(0, model.nbodies, 2):
        light, heavy = model.bodies[k], model.bodies[k + 1]
        axis_light = T[k, :3, :3] @ light.joint.axis
        axis_heavy = T[k + 1, :3, :3] @ heavy.joint.axis
        assert_close(axis_heavy, axis_light, what="parallel axes")
        offset = T[k + 1, :3, 3] - T[k, :3, 3]
        assert np.linalg.norm(np.cross(offset, axis_light)) < 1e-12, "same line"
    assert_close([b.mass for b in model.bodies], st.link_masses(1e-6, 6, "coaxial"))


def test_link_masses_patterns():
    assert_close(st.link_masses(0.1, 4, "alternating"), [1.0, 0.1, 1.0, 0.1])
    assert_close(st.link_masses(0.1, 3, "light-inboard"), [0.1, 0.1, 1.0])
    assert_close(st.link_masses(0.1, 4, "coaxial"), [0.1, 1.0, 0.1, 1.0])
    with pytest.raises(rbd.InputError, match="unknown pattern 'spiral'"):
        st.link_masses(0.1, 4, "spiral")


def test_stiffness_table_rows():
    rows = st.stiffness_table([1.0, 1e-6], patterns=("coaxial",), n=4, states=1,
                              condition=False)
    assert [(r["pattern"], r["ratio"]) for r in rows] == [("coaxial", 1.0), ("coaxial", 1e-6)]
    for name in st.METHODS:
        assert all(np.isfinite(r[name]) and r[name] >= 0 for r in rows)


def test_reference_holds_derivations_only():
    """The study lives in rbd.studies; rbd.reference has no stiffness module."""
    import importlib.util

    assert importlib.util.find_spec("rbd.reference.stiffness") is None
    assert importlib.util.find_spec("rbd.studies.stiffness") is not None
