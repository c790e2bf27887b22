"""Batched RNEA, ABA and CRBA over lanes of states (``rbd/_kernels/soa.pxi``, ``soa_crba.pxi``).

A stacked call of ``rbd.rnea`` / ``rbd.aba`` (and ``nonlinear_effects``,
``gravity_forces``) and ``rbd.crba`` on the kernels runs blocks of W states in lanes; these tests
compare every build of the lane kernels that this machine runs with the one-state
kernel run state by state (``set_simd("off")``), check that the thread count does
not change a bit of the result, that ``RBD_SIMD`` picks the build, and that the
lane text keeps the passes and tags of its scalar twins.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import RTOL_LANES, python_child, random_models

import rbd

pytestmark = pytest.mark.usefixtures("require_kernels")

#: States per test batch: not a multiple of the lane count W (8), so the last block is
#: partly filled.
N_STATES = 21

MODELS = {
    "arm7": rbd.models.arm7,
    "tree31": lambda: rbd.models.binary_tree(5),
    "humanoid": rbd.models.humanoid,
    "RC20": lambda: rbd.models.revolute_chain(20),
    "arm6-floating": lambda: rbd.models.bundled_urdf("arm6", floating_base=True),
}


def _model_module():
    from rbd._kernels import _model

    return _model


def builds() -> list[str]:
    """The lane builds this machine runs (portable always; AVX2, AVX-512 by the CPU)."""
    from rbd._kernels import _simd

    return [b for b in _simd.SIMD_BUILDS if _simd.runnable(b)]


@pytest.fixture
def simd():
    """Set the lane build for one test; put the previous choice back afterwards."""
    _model = _model_module()
    previous = _model.simd()
    yield _model.set_simd
    _model.set_simd(previous)


def batch(model, seed: int = 0, n: int = N_STATES):
    rng = np.random.default_rng(seed)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(n)])
    V, A = rng.normal(size=(2, n, model.nv))
    F = rng.normal(size=(n, model.nbodies, 6))
    return Q, V, A, F


def results(model, Q, V, A, F) -> dict[str, np.ndarray]:
    return {
        "rnea": rbd.rnea(model, Q, V, A),
        "rnea f_ext": rbd.rnea(model, Q, V, A, F),
        "aba": rbd.aba(model, Q, V, A),
        "aba f_ext": rbd.aba(model, Q, V, A, F),
        "nonlinear_effects": rbd.nonlinear_effects(model, Q, V),
        "gravity_forces": rbd.gravity_forces(model, Q),
        "crba": rbd.crba(model, Q),
    }


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_build_matches_the_one_state_kernel(name, simd):
    model = MODELS[name]()
    state = batch(model)
    simd("off")
    expected = results(model, *state)
    for build in builds():
        simd(build)
        got = results(model, *state)
        for key, value in expected.items():
            err = rbd.testing.relative_difference(got[key], value)
            assert err <= RTOL_LANES, f"{name} {build} {key}: {err:.2e}"


@pytest.mark.parametrize("seed", [0, 1])
def test_every_joint_kind_runs_in_lanes(seed, simd):
    """Random trees of every joint kind, free bases, chains: q̈ compared in torque space."""
    for model in random_models(seed):
        Q, V, TAU, F = batch(model, seed)
        simd("off")
        tau_ref, qdd_ref = rbd.rnea(model, Q, V, TAU, F), rbd.aba(model, Q, V, TAU, F)
        for build in builds():
            simd(build)
            tau, qdd = rbd.rnea(model, Q, V, TAU, F), rbd.aba(model, Q, V, TAU, F)
            assert rbd.testing.relative_difference(tau, tau_ref) <= RTOL_LANES, build
            for k in range(len(Q)):
                err = rbd.testing.quantity_difference(
                    "forward_dynamics", model, (Q[k], V[k], TAU[k]), qdd[k], qdd_ref[k])
                assert err <= RTOL_LANES, f"{model.name} {build} state {k}: {err:.2e}"


def _armed(model, seed: int = 0):
    """A copy of ``model`` with a random armature on every joint's degrees of freedom."""
    model = model.copy()
    rng = np.random.default_rng(seed)
    for body in model.bodies:
        if body.joint.nv:
            values = rng.uniform(0.05, 2.0, body.joint.nv)
            if body.joint.kind == "free":
                values[4:] = values[3]  # one linear armature (MuJoCo's meaning)
            model.set_joint_properties(body.joint_name, armature=values)
    return model


@pytest.mark.parametrize("armature", [False, True], ids=["bare", "armature"])
def test_ball_and_free_pivots_in_lanes_match_the_one_state_kernel(armature, simd):
    """The multi-degree-of-freedom pivots of the lane ABA take their own paths: a free
    joint's D_i is factored and solved with (also below the root, where U_i D_i⁻¹ is solved
    row by row), and a spherical joint without armature passes on only the lower-right
    block of its articulated inertia; with armature both take the general path.  Each
    agrees with the one-state kernel to RTOL_LANES (a different order of operations), q̈
    compared in torque space as for the other random models."""
    rng = np.random.default_rng(7)
    model = rbd.testing.random_model(rng, 6, ("free", "spherical", "revolute"),
                                     floating_base=True)
    assert sum(b.joint.kind == "free" for b in model.bodies) >= 2      # one below the root
    assert any(b.joint.kind == "spherical" for b in model.bodies)
    if armature:
        model = _armed(model)
    Q, V, TAU, F = batch(model, 3)
    simd("off")
    expected = rbd.aba(model, Q, V, TAU), rbd.aba(model, Q, V, TAU, F)
    for build in builds():
        simd(build)
        for got, want in zip((rbd.aba(model, Q, V, TAU), rbd.aba(model, Q, V, TAU, F)),
                             expected, strict=True):
            for k in range(len(Q)):
                err = rbd.testing.quantity_difference(
                    "forward_dynamics", model, (Q[k], V[k], TAU[k]), got[k], want[k])
                assert err <= RTOL_LANES, f"{build} state {k}: {err:.2e}"




#: Evaluations of the dynamics in the quaternion test's rollouts: 5 RK4 steps of 4, and the
#: initial sample.
ROLLOUT_EVALUATIONS = 21


def test_lanes_take_quaternions_within_the_tolerance_as_unit_quaternions(simd):
    """A batch reads quaternions of norm 1 + 1e-7 (accepted: the tolerance is 1e-6) as
    their unit multiples (the lanes' ``quat_to_rot_T`` scales by 2/|q|², so they take q
    as given once ``_args.check_rows`` passed its norms; the one-state kernel gets a
    normalized copy); every build and the one-state kernel
    agree with the unit input, and the caller's q is left as it was.  Only rounding
    separates the two inputs' results, amplified in the derivatives (M⁻¹) as by any
    change of operation order: RTOL_LANES; a rollout's samples add it up over its
    ``ROLLOUT_EVALUATIONS`` evaluations."""
    model = rbd.testing.random_model(np.random.default_rng(5), 5,
                                     ("spherical", "revolute"), floating_base=True)
    Q, V, A, _ = batch(model, 4, n=11)
    quats = [model.q_index(i).start + (3 if b.joint.kind == "free" else 0)
             for i, b in enumerate(model.bodies) if b.joint.kind in ("spherical", "free")]
    assert len(quats) == 4                                  # the free joint, three balls
    Q_off = Q.copy()
    for k in quats:
        Q_off[:, k:k + 4] *= 1 + 1e-7
    Q_before = Q_off.copy()
    Q_unit = Q_off.copy()
    for k in quats:
        Q_unit[:, k:k + 4] /= np.linalg.norm(Q_unit[:, k:k + 4], axis=1)[:, None]
    calls = {
        "rnea": lambda q: rbd.rnea(model, q, V, A),
        "aba": lambda q: rbd.aba(model, q, V, A),
        "crba": lambda q: rbd.crba(model, q),
        "rnea_derivatives": lambda q: rbd.rnea_derivatives(model, q, V, A),
        "aba_derivatives": lambda q: rbd.aba_derivatives(model, q, V, A),
        "nonlinear_effects": lambda q: rbd.nonlinear_effects(model, q, V),
        "gravity_forces": lambda q: rbd.gravity_forces(model, q),
        "rollout": lambda q: _model_module().compiled_model(model).rollout(
            q, V, grid=(1e-3, 5e-3, 5))[:3],
    }
    for build in [*builds(), "off"]:
        simd(build)
        for name, call in calls.items():
            got, want = call(Q_off), call(Q_unit)
            tol = RTOL_LANES * (ROLLOUT_EVALUATIONS if name == "rollout" else 1)
            for g, u in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,), strict=True):
                err = rbd.testing.relative_difference(g, u)
                assert err <= tol, f"{build} {name}: {err:.2e}"
            assert np.array_equal(Q_off, Q_before), f"{build} {name}: q was modified"


@pytest.mark.parametrize("name", ["humanoid", "RC20"])
def test_the_thread_count_changes_no_bit(name, simd):
    model = MODELS[name]()
    Q, V, A, _ = batch(model, n=61)
    kernel = rbd.algorithms.compiled(model)
    saved = kernel.num_threads
    try:
        for build in builds():
            simd(build)
            out = []
            for threads in (1, 2, 3):
                kernel.num_threads = threads
                out.append((rbd.rnea(model, Q, V, A), rbd.aba(model, Q, V, A),
                            rbd.crba(model, Q)))
            for other in out[1:]:
                assert all(np.array_equal(x, y) for x, y in zip(out[0], other, strict=True)), build
    finally:
        kernel.num_threads = saved


@pytest.mark.parametrize("seed", [0, 1])
def test_crba_runs_in_lanes_on_every_joint_kind(seed, simd):
    """Random trees of every joint kind, free bases, chains: the mass matrices of a stack."""
    for model in random_models(seed):
        Q = batch(model, seed)[0]
        simd("off")
        expected = rbd.crba(model, Q)
        for build in builds():
            simd(build)
            err = rbd.testing.relative_difference(rbd.crba(model, Q), expected)
            assert err <= RTOL_LANES, f"{model.name} {build}: {err:.2e}"


def test_a_batch_of_one_and_an_empty_batch(simd):
    model = rbd.models.arm7()
    Q, V, A, _ = batch(model, n=1)
    simd("off")
    expected = rbd.aba(model, Q, V, A)
    simd(builds()[0])
    assert rbd.testing.relative_difference(rbd.aba(model, Q, V, A), expected) <= RTOL_LANES
    assert rbd.aba(model, Q[:0], V[:0], A[:0]).shape == (0, model.nv)


def test_shared_arguments_broadcast_over_the_lanes(simd):
    """One ``v`` for the whole batch (stride 0) gives the same as ``v`` repeated."""
    model = rbd.models.humanoid()
    Q, V, A, _ = batch(model)
    simd(builds()[0])
    shared = rbd.rnea(model, Q, V[0], A)
    repeated = rbd.rnea(model, Q, np.repeat(V[:1], len(Q), axis=0), A)
    assert np.array_equal(shared, repeated)


def massless_child(name: str, joint) -> rbd.Model:
    """A unit body on a revolute joint carrying a massless body on ``joint``: the child's
    D_i is singular at every state."""
    model = rbd.Model(name=name)
    body = model.add_body(-1, rbd.joints.Revolute([0, 0, 1]), None,
                          (1.0, np.zeros(3), np.diag([1.0, 1.0, 1.0])), "b1", "j1")
    model.add_body(body, joint, None, (0.0, np.zeros(3), np.zeros((3, 3))), "b2", "j2")
    return model


def assert_lanes_raise_as_the_one_state_kernel(simd, call) -> None:
    """``call()`` raises ModelError on every lane build with the one-state kernel's message."""
    simd("off")
    with pytest.raises(rbd.ModelError) as scalar:
        call()
    for build in builds():
        simd(build)
        with pytest.raises(rbd.ModelError) as lanes:
            call()
        assert str(lanes.value) == str(scalar.value)


def test_a_singular_pivot_is_named_as_in_the_one_state_kernel(simd):
    model = massless_child("massless", rbd.joints.Revolute([1, 0, 0]))
    Q, V, A, _ = batch(model, n=9)
    assert_lanes_raise_as_the_one_state_kernel(simd, lambda: rbd.aba(model, Q, V, A))


def test_a_singular_spherical_pivot_is_named_as_in_the_one_state_kernel(simd):
    """A massless body on a spherical joint: its 3×3 D_i (inverted in closed form in
    lanes, by Cholesky in the one-state kernel) is refused with the same message."""
    model = massless_child("massless-ball", rbd.joints.Spherical())
    Q, V, A, _ = batch(model, n=9)
    assert_lanes_raise_as_the_one_state_kernel(simd, lambda: rbd.aba(model, Q, V, A))


def test_the_fma_builds_take_the_lane_path(simd):
    """The AVX2/AVX-512 builds fuse multiply-adds, the one-state kernel (baseline flags)
    does not: their results differ in the last bits, which shows the lanes ran."""
    fused = [b for b in builds() if b != "portable"]
    if not fused:
        pytest.skip("this CPU runs only the portable build")
    model = rbd.models.revolute_chain(20)
    Q, V, A, _ = batch(model)
    simd("off")
    scalar = rbd.aba(model, Q, V, A)
    for build in fused:
        simd(build)
        assert not np.array_equal(rbd.aba(model, Q, V, A), scalar), build

    simd("off")
    scalar = rbd.crba(model, Q)
    for build in fused:
        simd(build)
        assert not np.array_equal(rbd.crba(model, Q), scalar), f"crba {build}"


def test_choices_are_checked(simd):
    with pytest.raises(rbd.InputError, match="simd choice"):
        simd("avx1024")
    from rbd._kernels import _simd

    assert simd("auto") in _simd.SIMD_CHOICES
    assert _model_module().simd() == builds()[0]


def _child(choice: str | None):
    code = """
        import json, warnings
        import numpy as np
        warnings.simplefilter("always")
        with warnings.catch_warnings(record=True) as caught:
            import rbd
            from rbd._kernels import _model
        model = rbd.models.humanoid()
        rng = np.random.default_rng(5)
        Q = np.array([rbd.random_configuration(model, rng) for _ in range(11)])
        V, T = rng.normal(size=(2, 11, model.nv))
        print(json.dumps({"simd": _model.simd(), "warnings": [str(w.message) for w in caught],
                          "qdd": rbd.aba(model, Q, V, T).tolist()}))
    """
    env = dict(os.environ)
    env.pop("RBD_SIMD", None)
    if choice is not None:
        env["RBD_SIMD"] = choice
    env["PYTHONPATH"] = str(Path(rbd.__file__).parents[1])
    done = python_child(code, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_environment_forces_the_portable_path(simd):
    forced = _child("portable")
    assert forced["simd"] == "portable" and forced["warnings"] == []
    simd("portable")
    model = rbd.models.humanoid()
    rng = np.random.default_rng(5)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(11)])
    V, T = rng.normal(size=(2, 11, model.nv))
    assert np.array_equal(np.array(forced["qdd"]), rbd.aba(model, Q, V, T))
    assert _child(None)["simd"] == builds()[0]


@pytest.mark.slow
def test_an_unknown_environment_choice_warns_and_chooses(simd):
    child = _child("avx1024")
    assert child["simd"] == builds()[0]
    assert any("RBD_SIMD='avx1024'" in w for w in child["warnings"])


def test_the_lane_text_keeps_the_passes_and_tags_of_its_twins():
    """``soa.pxi`` and ``soa_aba.pxi`` render ``rnea.pyx`` and ``aba.pyx``: same pass headers,
    same tags."""
    from test_twins import KERNELS, kernel_functions, passes, tags

    lanes = {**kernel_functions((KERNELS / "soa.pxi").read_text()),
             **kernel_functions((KERNELS / "soa_aba.pxi").read_text())}
    assert "rnea" in lanes and "aba" in lanes
    for stem in ("rnea", "aba"):
        scalar = kernel_functions((KERNELS / f"{stem}.pyx").read_text())
        assert passes(lanes[stem]) == passes(scalar[stem]), stem
        assert tags(lanes[stem]) == tags(scalar[stem]), stem


def test_the_lane_crba_keeps_the_passes_and_tags_of_its_twin():
    """``soa_crba.pxi`` renders ``crba.pyx``: same pass headers, and the tags of the scalar
    CRBA and of the passes it calls from ``crba.pxd``."""
    from test_twins import KERNELS, kernel_functions, passes, tags

    lanes = kernel_functions((KERNELS / "soa_crba.pxi").read_text())["crba"]
    scalar = kernel_functions((KERNELS / "crba.pyx").read_text())["crba"]
    helpers = kernel_functions((KERNELS / "crba.pxd").read_text())
    assert passes(lanes) == passes(scalar)
    assert tags(lanes) == (tags(scalar) | tags(helpers["composite_inertias"])
                           | tags(helpers["block_rows"]))


@pytest.mark.slow
def test_ctrl_c_stops_a_batch_in_lanes():
    """SIGINT during a long lane batch raises KeyboardInterrupt within the check interval."""
    code = """
        import json, os, signal, threading, time
        import numpy as np
        import rbd
        from rbd._kernels import _model
        model = rbd.models.arm7()
        rng = np.random.default_rng(0)
        qs = np.array([rbd.random_configuration(model, rng) for _ in range(8)])
        many = np.repeat(qs, 1_000_000, axis=0)
        zeros = np.zeros(7)
        rbd.aba(model, qs, zeros, zeros)
        signal.signal(signal.SIGINT, signal.default_int_handler)    # as in a terminal
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        start = time.perf_counter()
        timer.start()
        try:
            rbd.aba(model, many, zeros, zeros)
            out = {"finished": time.perf_counter() - start}
        except KeyboardInterrupt:
            out = {"stopped_after": time.perf_counter() - start}
        print(json.dumps({"simd": _model.simd(), **out}))
    """
    done = python_child(code, timeout=300,
                        env={**os.environ, "PYTHONPATH": str(Path(rbd.__file__).parents[1])})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["simd"] != "off"
    # the loop checks every 8 blocks and runs the handlers at most every 20 ms; 2 s leaves
    # room for a loaded machine (the whole batch takes several seconds)
    assert out.get("stopped_after", float("inf")) < 2.0, out


#: Largest distance, in units in the last place, between the lane sine/cosine
#: (``_lanes.pxd``'s ``sincos_lanes``) and libm's: each is within about one ulp of the
#: exact value (fdlibm's kernels claim < 1 ulp, glibc's sin/cos are correctly rounded
#: in practice), so two apart at most.
ULP_SINCOS = 2


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between two float64 arrays (doubles ordered as integers)."""
    def ordered(x):
        i = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
        return np.where(i < 0, np.int64(-(2**63)) - i, i)

    return np.abs(ordered(a) - ordered(b))


@pytest.fixture(scope="module")
def angles_and_libm():
    """10⁶ angles (small, joint-sized, up to and past the 2¹⁹ reduction bound, nearest
    doubles to multiples of π/2, subnormal-to-one magnitudes) with libm's sin and cos."""
    import math

    rng = np.random.default_rng(23)
    k = rng.integers(-300_000, 300_000, 100_000)
    x = np.concatenate([
        rng.uniform(-np.pi, np.pi, 400_000),
        rng.uniform(-100.0, 100.0, 200_000),
        rng.uniform(-2.0**19, 2.0**19, 150_000),
        rng.uniform(-1e12, 1e12, 50_000) * rng.choice([1.0, 1e-6], 50_000),
        k * (np.pi / 2),
        rng.choice([-1.0, 1.0], 100_000) * 10.0 ** rng.uniform(-310, 0, 100_000),
    ])
    return x, np.array([math.sin(t) for t in x]), np.array([math.cos(t) for t in x])


@pytest.mark.slow
@pytest.mark.parametrize("build", ["portable", "avx2", "avx512"])
def test_lane_sine_and_cosine_agree_with_libm_to_two_ulp(build, angles_and_libm):
    """The vectorized sin/cos of the revolute joints is libm's to ``ULP_SINCOS``."""
    import importlib

    from rbd._kernels import _simd

    if not _simd.runnable(build):
        pytest.skip(f"this CPU does not run the {build} build")
    module = importlib.import_module(f"rbd._kernels._soa_{build}")
    x, sin_ref, cos_ref = angles_and_libm
    s, c = module.lane_sincos(x)
    for name, ours, ref in (("sin", s, sin_ref), ("cos", c, cos_ref)):
        ulps = _ulp_distance(ours, ref)
        worst = int(np.argmax(ulps))
        assert ulps[worst] <= ULP_SINCOS, f"{build} {name}({x[worst]!r}): {ulps[worst]} ulp"


def test_lane_sine_and_cosine_of_non_finite_angles_are_nan():
    """inf and nan take libm's path and give nan, as the scalar kernel's sin/cos do."""
    import math

    from rbd._kernels import _soa_portable

    s, c = _soa_portable.lane_sincos(np.array([np.inf, -np.inf, np.nan, 0.5]))
    assert np.isnan(s[:3]).all() and np.isnan(c[:3]).all()
    assert _ulp_distance(np.array([s[3], c[3]]), np.array([math.sin(0.5), math.cos(0.5)])).max() \
        <= ULP_SINCOS
