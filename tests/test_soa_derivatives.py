"""Batched analytical derivatives over lanes of states (``rbd/_kernels/soa_derivatives.pxi``).

A stacked call of ``rbd.rnea_derivatives`` / ``rbd.aba_derivatives`` on the kernels
runs blocks of W states in lanes.  These tests compare every build of the lane
kernels that this machine runs with the one-state kernel called state by state,
models with universal and planar joints (whose motion subspace moves with their own
coordinate: the terms ``W (8)``) included, check that the thread count does not change a
bit of the result, and that the lane text keeps the passes and tags of
``derivatives.pyx``.

Tolerances: ``∂τ/∂q``, ``∂τ/∂q̇`` and ``M`` agree to :data:`helpers.RTOL_LANES`
entry by entry (the same sums in another order, with fused multiply-adds).  The
forward-dynamics blocks ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` and ``M⁻¹`` are solves with ``M``; the
one-state kernel solves long chains by LAPACK's dense Cholesky factor, the lanes by the
tree-sparse one, and entry by entry the two differ by up to cond(M) times the rounding
(9e-13 relative on the 31-body tree).  They are compared as residuals, the normwise
backward error of a Cholesky solve (Higham, *Accuracy and Stability of Numerical
Algorithms*, Thm 10.4: ``(M + ΔM) X = B`` with ``|ΔM| ≤ c n u |M|``):
``max|M (X − Y)| / max(1, max|M Y|, max|M| max|Y|)`` ≤ RTOL_LANES, which two backward-stable
solves meet whatever the conditioning.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_LANES, random_models
from test_armature import with_armature
from test_soa import (  # noqa: F401  (simd: the fixture)
    assert_lanes_raise_as_the_one_state_kernel,
    batch,
    builds,
    massless_child,
    simd,
)

import rbd

pytestmark = pytest.mark.usefixtures("require_kernels")

MODELS = {
    "arm7": rbd.models.arm7,
    "tree31": lambda: rbd.models.binary_tree(5),
    "RC20": lambda: rbd.models.revolute_chain(20),
    "arm6-floating": lambda: rbd.models.bundled_urdf("arm6", floating_base=True),
    "arm6-floating-armature": lambda: with_armature(
        rbd.models.bundled_urdf("arm6", floating_base=True), 1)[0],
}


def one_by_one(function, model, Q, V, X, F):
    """``function`` called state by state: three stacks of (nv, nv) blocks."""
    rows = [function(model, Q[k], V[k], X[k], None if F is None else F[k])
            for k in range(len(Q))]
    return tuple(np.array([row[j] for row in rows]) for j in range(3))


def rnea_error(got, expected) -> float:
    """Largest relative difference of the three blocks of ``rnea_derivatives``."""
    return max(rbd.testing.relative_difference(g, e) for g, e in zip(got, expected, strict=True))


def aba_error(got, expected, M) -> float:
    """The blocks of ``aba_derivatives`` compared as the residuals of their solves (module
    docstring): ``max|M (X − Y)| / max(1, max|M Y|, max|M| max|Y|)``."""
    worst = 0.0
    for k in range(len(M)):
        for g, e in zip(got, expected, strict=True):
            scale = max(1.0, float(np.max(np.abs(M[k] @ e[k]))),
                        float(np.max(np.abs(M[k])) * np.max(np.abs(e[k]))))
            worst = max(worst, float(np.max(np.abs(M[k] @ (g[k] - e[k])))) / scale)
    return worst


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_build_matches_the_one_state_kernel(name, simd):  # noqa: F811
    model = MODELS[name]()
    Q, V, X, F = batch(model)
    simd("off")
    expected = {(fn, f is None): one_by_one(fn, model, Q, V, X, f)
                for fn in (rbd.rnea_derivatives, rbd.aba_derivatives) for f in (None, F)}
    M = expected[(rbd.rnea_derivatives, True)][2]
    for build in builds():
        simd(build)
        for f in (None, F):
            got = rbd.rnea_derivatives(model, Q, V, X, f)
            err = rnea_error(got, expected[(rbd.rnea_derivatives, f is None)])
            what = f"{name} {build} f_ext={f is not None}"
            assert err <= RTOL_LANES, f"{what} rnea_derivatives: {err:.2e}"
            got = rbd.aba_derivatives(model, Q, V, X, f)
            err = aba_error(got, expected[(rbd.aba_derivatives, f is None)], M)
            assert err <= RTOL_LANES, f"{what} aba_derivatives: {err:.2e}"


@pytest.mark.slow
def test_every_joint_kind(simd):  # noqa: F811
    """Random trees of every joint kind, and one with helical, spherical and free joints."""
    lane_kinds = ("revolute", "prismatic", "helical", "spherical")
    lanes_only = rbd.testing.random_model(np.random.default_rng(7), 6, lane_kinds,
                                          floating_base=True)
    assert {body.joint.kind for body in lanes_only.bodies} >= {"free", "helical", "spherical"}
    for model in [*random_models(0), lanes_only]:
        Q, V, X, F = batch(model, n=11)
        simd("off")
        d_tau = one_by_one(rbd.rnea_derivatives, model, Q, V, X, F)
        d_qdd = one_by_one(rbd.aba_derivatives, model, Q, V, X, F)
        for build in builds():
            simd(build)
            err = rnea_error(rbd.rnea_derivatives(model, Q, V, X, F), d_tau)
            assert err <= RTOL_LANES, f"{model.name} {build}: {err:.2e}"
            err = aba_error(rbd.aba_derivatives(model, Q, V, X, F), d_qdd, d_tau[2])
            assert err <= RTOL_LANES, f"{model.name} {build}: {err:.2e}"


def test_the_thread_count_changes_no_bit(simd):  # noqa: F811
    model = rbd.models.revolute_chain(20)
    Q, V, X, _ = batch(model, n=41)
    kernel = rbd.algorithms.compiled(model)
    saved = kernel.num_threads
    try:
        for build in builds():
            simd(build)
            out = []
            for threads in (1, 2, 3):
                kernel.num_threads = threads
                out.append(rbd.rnea_derivatives(model, Q, V, X)
                           + rbd.aba_derivatives(model, Q, V, X))
            for other in out[1:]:
                assert all(np.array_equal(x, y) for x, y in zip(out[0], other, strict=True)), build
    finally:
        kernel.num_threads = saved


#: Models whose joints move their own axes (``W (8)``): the humanoid (free, spherical,
#: universal and revolute joints) and random trees of universal and planar joints, one of
#: them on a floating base.
MOVING_AXES = {
    "humanoid": rbd.models.humanoid,
    "universal-planar": lambda: rbd.testing.random_model(
        np.random.default_rng(11), 6, ("universal", "planar")),
    "floating-universal-planar": lambda: rbd.testing.random_model(
        np.random.default_rng(12), 6, ("universal", "planar", "revolute"), floating_base=True),
}


@pytest.mark.parametrize("name", sorted(MOVING_AXES))
def test_universal_and_planar_joints_in_lanes_match_the_one_state_kernel(name, simd):  # noqa: F811
    """The lanes' W (8) terms (``joint_partials``) against the one-state kernel's, every
    build (portable included), with and without external forces."""
    model = MOVING_AXES[name]()
    kinds = {body.joint.kind for body in model.bodies}
    assert kinds & {"universal", "planar"}, kinds
    Q, V, X, F = batch(model, n=11)
    simd("off")
    expected = {(fn, f is None): one_by_one(fn, model, Q, V, X, f)
                for fn in (rbd.rnea_derivatives, rbd.aba_derivatives) for f in (None, F)}
    M = expected[(rbd.rnea_derivatives, True)][2]
    for build in builds():
        simd(build)
        for f in (None, F):
            what = f"{name} {build} f_ext={f is not None}"
            err = rnea_error(rbd.rnea_derivatives(model, Q, V, X, f),
                             expected[(rbd.rnea_derivatives, f is None)])
            assert err <= RTOL_LANES, f"{what} rnea_derivatives: {err:.2e}"
            err = aba_error(rbd.aba_derivatives(model, Q, V, X, f),
                            expected[(rbd.aba_derivatives, f is None)], M)
            assert err <= RTOL_LANES, f"{what} aba_derivatives: {err:.2e}"


@pytest.mark.slow
def test_the_fma_builds_take_the_lane_path(simd):  # noqa: F811
    """The AVX2/AVX-512 builds fuse multiply-adds, the one-state kernel does not: their
    results differ in the last bits, which shows the lanes ran, on a model with universal
    joints and on one with planar joints as well."""
    fused = [b for b in builds() if b != "portable"]
    if not fused:
        pytest.skip("this CPU runs only the portable build")
    chosen = (rbd.models.arm7(), rbd.models.humanoid(), MOVING_AXES["universal-planar"]())
    assert any(body.joint.kind == "universal" for body in chosen[1].bodies)
    assert any(body.joint.kind == "planar" for body in chosen[2].bodies)
    states = {m.name: batch(m, n=9)[:3] for m in chosen}
    simd("off")
    scalar = {m.name: rbd.aba_derivatives(m, *states[m.name]) for m in chosen}
    for build in fused:
        simd(build)
        for m in chosen:
            assert not np.array_equal(rbd.aba_derivatives(m, *states[m.name])[0],
                                      scalar[m.name][0]), (build, m.name)


def test_a_batch_of_one_and_an_empty_batch(simd):  # noqa: F811
    model = rbd.models.arm7()
    Q, V, X, _ = batch(model, n=1)
    simd("off")
    single = rbd.aba_derivatives(model, Q[0], V[0], X[0])
    M = rbd.rnea_derivatives(model, Q[0], V[0], X[0])[2]
    simd(builds()[0])
    got = rbd.aba_derivatives(model, Q, V, X)
    assert aba_error(got, tuple(s[None] for s in single), M[None]) <= RTOL_LANES
    assert all(g.shape == (0, model.nv, model.nv)
               for g in rbd.aba_derivatives(model, Q[:0], V[:0], X[:0]))


def test_a_singular_pivot_is_named_as_in_the_one_state_kernel(simd):  # noqa: F811
    model = massless_child("massless", rbd.joints.Revolute([1, 0, 0]))
    Q, V, X, _ = batch(model, n=9)
    assert_lanes_raise_as_the_one_state_kernel(simd, lambda: rbd.aba_derivatives(model, Q, V, X))


def test_the_lane_text_keeps_the_passes_and_tags_of_its_twin():
    """``soa_derivatives.pxi`` renders ``derivatives.pyx``: the same functions carry the same
    pass headers and tags."""
    from test_twins import KERNELS, kernel_functions, passes, tags

    lanes = kernel_functions((KERNELS / "soa_derivatives.pxi").read_text())
    scalar = kernel_functions((KERNELS / "derivatives.pyx").read_text())
    shared = set(lanes) & set(scalar)
    assert {"outward_sweep", "body_sweep", "column_sweep", "own_columns", "diagonal_block",
            "ancestor_blocks", "rnea_derivatives", "aba_derivatives", "joint_partials",
            "planar_partials", "varying_S"} <= shared
    for name in shared:
        assert passes(lanes[name]) == passes(scalar[name]), name
        assert tags(lanes[name]) == tags(scalar[name]), name
    every = set().union(*(tags(lines) for lines in scalar.values()))
    assert set().union(*(tags(lines) for lines in lanes.values())) == every
