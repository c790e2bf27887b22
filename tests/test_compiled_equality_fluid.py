"""The compiled forward pass and step with equality constraints and fluid forces
(``rbd/_kernels/equality_rows.pyx``, ``rbd/_kernels/fluid.pyx`` inside ``forward.pyx``):
against the reference pass (``backend="reference"``), against the Python step, and
against MuJoCo's ``mj_step`` over 0.2 s.

The models: the suite's MJCFs with every equality kind (``EQUALITIES``: connect with site
semantics, welds with torquescale 0.3 and 0, a polynomial joint coupling, a one-joint
equality, with contacts, limits, springs and friction loss; ``WORLD_SIDES``: sides fixed
to the world; the weld-sign model past a half turn), the inertia-box and ellipsoid fluid
models (``FREE_BODY``, ``ELLIPSOIDS``) and gymnasium's swimmer (viscosity).  The compiled
pass runs on the kernel backend only: these tests skip on the pure-Python path.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import gymnasium_asset, mujoco_qpos_path
from test_fluid import ELLIPSOIDS, FREE_BODY
from test_forward_contact import EQUALITIES, WORLD_SIDES
from test_weld_sign import XML as WELD_SIGN

import rbd
from rbd.constraints.forward_compiled import compiled_forward
from rbd.simulation.contact import compiled_runs, euler_step

pytestmark = pytest.mark.usefixtures("require_kernels")

mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the reference trajectories")

#: Compiled against reference pass, relative to 1 + the largest entry.  The two texts
#: evaluate the same formulas in another order (tree-sparse LᵀL against a dense solve,
#: sequential sums against NumPy's), so they differ by rounding amplified by the
#: conditioning of M and of the Newton system: measured 2e-16 to 3e-14 on these models
#: (qdd_smooth of ELLIPSOIDS 2.9e-14, forces ≤ 4e-15).  1e-12 leaves a margin of 30; a
#: missing or wrong term (a sign of a weld row, a J̇v, a fluid wrench) shows at 1e-4 or more.
RTOL_COMPILED = 1e-12

#: The issue's bound on qpos over 0.2 s against MuJoCo (as tests/test_contact_trajectories.py);
#: measured: equalities 2.0e-14 (with contacts), world sides 1.7e-15, ellipsoids 1.0e-15,
#: swimmer 2.8e-17.
ATOL_TRAJECTORY = 1e-6


def _swimmer() -> str:
    return str(gymnasium_asset("swimmer"))


SOURCES = {"equalities": EQUALITIES, "world sides": WORLD_SIDES, "weld sign": WELD_SIGN,
           "free body": FREE_BODY, "ellipsoids": ELLIPSOIDS, "swimmer": _swimmer}


def _load(name: str):
    source = SOURCES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)          # the swimmer's actuators
        return rbd.load_mjcf(source() if callable(source) else source)


def _close(ker, ref, what: str):
    ref = np.asarray(ref)
    scale = 1 + (np.abs(ref).max() if ref.size else 0.0)
    np.testing.assert_allclose(ker, ref, rtol=0, atol=RTOL_COMPILED * scale, err_msg=what)


def _assert_same_pass(model, q, v, tau, **kwargs):
    # the twins compared at the converged solution (tolerance 0: Newton runs until a step
    # no longer moves q̈): MuJoCo's stopping rule compares a cost decrease with the
    # tolerance, and near convergence that decrease is rounding, so at any tolerance the
    # two solves may stop a step apart (forces then differ by up to 1e-10 relative)
    kwargs.setdefault("tolerance", 0.0)
    ref = rbd.forward(model, q, v, tau, backend="reference", **kwargs)
    ker = rbd.forward(model, q, v, tau, backend="kernel", **kwargs)
    np.testing.assert_array_equal(ker.kinds, ref.kinds)
    np.testing.assert_array_equal(ker.ids, ref.ids)
    assert ker.rows.ne == ref.rows.ne and ker.rows.nf == ref.rows.nf
    for what in ("J", "aref", "R"):
        _close(getattr(ker.rows, what), getattr(ref.rows, what), what)
    for what in ("qdd", "qdd_smooth", "force"):
        _close(getattr(ker, what), getattr(ref, what), what)
    return ref


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("name", list(SOURCES))
def test_compiled_pass_equals_the_reference(name, cone):
    """At three random states (configurations past half turns included), random velocities
    and joint forces: rows, accelerations and forces."""
    model = _load(name)
    assert compiled_forward(model) is not None
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = rbd.random_configuration(model, rng)
        v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        ref = _assert_same_pass(model, q, v, tau, cone=cone)
        assert ref.rows.ne > 0 or name in ("free body", "ellipsoids", "swimmer")


@pytest.mark.slow
def test_compiled_pass_with_pgs_and_switches():
    """PGS, limits or contacts off, and the equality rows dropped (``constraints=()``), or
    kept in part, each by its own compiled pass."""
    model = _load("equalities")
    rng = np.random.default_rng(3)
    q, v = rbd.random_configuration(model, rng), rng.normal(size=model.nv)
    for kwargs in ({"solver": "pgs", "iterations": 3000, "tolerance": 1e-15},
                   {"limits": False}, {"contacts": False}, {"constraints": ()},
                   {"constraints": model.constraints[2:4]}):
        _assert_same_pass(model, q, v, None, **kwargs)
    assert compiled_forward(model, ()) is not compiled_forward(model)
    assert compiled_forward(model) is compiled_forward(model)       # built once


def test_rolling_constraints_keep_the_python_pass():
    """A kind without MuJoCo rows (rolling) is left to the reference pass."""
    model = _load("equalities")
    rolling = rbd.constraints.Rolling("rail", lambda q: np.ones((1, 1)),
                                      lambda q, v: np.zeros(1), rows=1)
    assert compiled_forward(model, [rolling]) is None


def test_weld_sign_flips_as_mujocos_in_the_compiled_rows():
    """Past a half turn of the weld error (the hinge wound once, the free body's quaternion
    negated) the compiled rotation rows change sign with the reference's."""
    model = _load("weld sign")
    q = rbd.mjcf.from_mujoco_state(model, mujoco.MjModel.from_xml_string(WELD_SIGN).qpos0)[0]
    v = np.linspace(-0.5, 0.5, model.nv)
    first = _assert_same_pass(model, q, v, None)
    q[3:7] *= -1.0                                       # the same rotation, other sign
    q[model.q_slice("hinge")] += 2 * np.pi
    flipped = _assert_same_pass(model, q, v, None)
    np.testing.assert_allclose(flipped.rows.J[3:6], -first.rows.J[3:6], atol=1e-12)
    np.testing.assert_allclose(flipped.rows.J[9:12], -first.rows.J[9:12], atol=1e-12)


@pytest.mark.parametrize("name", ["equalities", "ellipsoids", "swimmer"])
def test_compiled_step_equals_the_python_step(name):
    """Each compiled step from a recorded state gives the Python step's next state."""
    model = _load(name)
    rng = np.random.default_rng(2)
    q0, v0 = rbd.random_configuration(model, rng), 0.5 * rng.normal(size=model.nv)
    dt, steps = 0.005, 4
    traj = compiled_runs(model, q0[None], v0[None], steps, dt)[0]
    assert len(traj.t) == steps + 1
    for k in range(steps):
        q1, v1, a, ncon = euler_step(model, traj.q[k], traj.v[k], None, dt, backend="reference")
        _close(traj.q[k + 1], q1, "q")
        _close(traj.v[k + 1], v1, "v")
        _close(traj.a[k], a, "a")
        assert traj.contact_count[k] == ncon


@pytest.mark.parametrize("name", ["equalities", "world sides", "ellipsoids", "swimmer"])
def test_compiled_run_follows_mujoco_for_0_2_s(name, tmp_path):
    """The compiled step (``compiled_runs``, the path of ``rbd.simulate``) and MuJoCo's
    Euler from one state of a noisy MuJoCo run: qpos after each step within the issue's
    bound."""
    from rbd.mjcf import from_mujoco_state, to_mujoco_state

    source = SOURCES[name]
    if callable(source):
        source = source()
    else:
        (tmp_path / "model.xml").write_text(source)
        source = tmp_path / "model.xml"
    model, mm, d = rbd.testing.mujoco_pair(source, integrator="euler")
    rng = np.random.default_rng(0)
    d.qvel[:] = 0.5 * rng.normal(size=mm.nv)
    for _ in range(20):
        mujoco.mj_step(mm, d)
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    steps = round(0.2 / mm.opt.timestep)
    expected = mujoco_qpos_path(mm, d, steps)
    traj = compiled_runs(model, q0[None], v0[None], steps, mm.opt.timestep)[0]
    assert len(traj.t) == steps + 1
    qpos = to_mujoco_state(model, traj.q)[0]
    np.testing.assert_allclose(qpos, expected, rtol=0, atol=ATOL_TRAJECTORY)


@pytest.mark.parametrize("name", ["equalities", "ellipsoids"])
def test_batched_runs_on_two_threads_equal_single_runs(name):
    """Each thread has its own workspace (the equality rows' and fluid forces' scratch
    included): a batch of three states on two threads gives each state's own run."""
    model = _load(name)
    rng = np.random.default_rng(5)
    q0 = np.array([rbd.random_configuration(model, rng) for _ in range(3)])
    v0 = 0.5 * rng.normal(size=(3, model.nv))
    batch = compiled_runs(model, q0, v0, 5, 0.005, num_threads=2)
    for k in range(3):
        single = compiled_runs(model, q0[k:k + 1], v0[k:k + 1], 5, 0.005)[0]
        np.testing.assert_array_equal(batch[k].q, single.q)
        np.testing.assert_array_equal(batch[k].v, single.v)
