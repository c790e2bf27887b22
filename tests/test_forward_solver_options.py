"""rbd.forward's solver settings: ``<option iterations tolerance>`` and PGS's stopping rule."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import QACC_RTOL, RTOL_EXACT, gymnasium_asset, mujoco_pair

import rbd
from rbd.constraints.forward import forward, solver_settings
from rbd.mjcf import from_mujoco_state

XML = """<mujoco><option {option}/><worldbody><geom type="plane" size="5 5 .1"/>
  <body pos="0 0 0.09"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
  <body pos="0 0 0.3" euler="0 0 20"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>"""


def _stack(option: str = ""):
    """Two boxes stacked on a plane, the upper one turned: 12 contacts."""
    model = rbd.load_mjcf(XML.format(option=option))
    q = rbd.neutral(model)
    q[0:3], q[7:10] = (0, 0, 0.099), (0.02, 0.01, 0.298)
    return model, q, np.zeros(model.nv)


def test_settings_come_from_option_then_defaults():
    model, _, _ = _stack('iterations="7" tolerance="1e-9"')
    assert solver_settings(model) == (7, 1e-9)
    assert solver_settings(model, 3, 1e-5) == (3, 1e-5)
    assert solver_settings(_stack()[0]) == (100, 1e-8)           # MuJoCo's defaults
    with pytest.raises(rbd.MJCFError, match="iterations"):
        _stack('iterations="-1"')


def test_pgs_runs_the_option_iterations():
    """Three sweeps stop short of the solution; before, PGS ran at least 2000."""
    model, q, v = _stack('iterations="3"')
    short = forward(model, q, v, solver="pgs")
    assert len(short.contacts) >= 8
    np.testing.assert_array_equal(short.qdd, forward(model, q, v, solver="pgs",
                                                     iterations=3).qdd)
    converged = forward(model, q, v, solver="pgs", iterations=20000)
    assert np.abs(short.qdd - converged.qdd).max() > 1e-6 * np.abs(converged.qdd).max()


def test_pgs_stops_at_the_tolerance():
    """A million sweeps allowed: PGS stops at the tolerance it is given (a full run would
    take hours); a loose tolerance stops sooner, away from the tight answer, and the tight
    one reaches Newton's (before, PGS ignored the tolerance of forward)."""
    model, q, v = _stack()
    newton = forward(model, q, v)
    scale = np.abs(newton.qdd).max()
    start = time.perf_counter()
    loose = forward(model, q, v, solver="pgs", iterations=10**6, tolerance=1e-4)
    tight = forward(model, q, v, solver="pgs", iterations=10**6, tolerance=1e-14)
    assert time.perf_counter() - start < 60.0
    np.testing.assert_allclose(tight.qdd, newton.qdd, rtol=0, atol=QACC_RTOL * scale)
    assert np.abs(loose.qdd - newton.qdd).max() > 1e-6 * scale


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_pgs_with_default_settings_matches_mujoco_on_the_ant(cone):
    """At rbd's default tolerance PGS still meets the issue's bound against MuJoCo."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = mujoco_pair(gymnasium_asset("ant"), 1000, cone=cone)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = forward(model, q, v, d.qfrc_actuator.copy(), cone=cone, solver="pgs",
                     iterations=20000)
    assert d.ncon > 0
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * np.abs(a).max())


@pytest.mark.parametrize("backend", ["reference", "kernel"])
def test_contact_runs_solve_with_the_option_settings(backend):
    """A contact run's solves take the model's ``<option iterations tolerance>`` as
    rbd.forward's do: sample 0's acceleration is rbd.forward's at the start state, on the
    Python step and on the compiled one (which took a fixed 100 iterations, 1e-14)."""
    if backend == "kernel" and not rbd.has_kernels():
        pytest.skip("the compiled step needs the kernels")
    model, q, v = _stack('iterations="1" tolerance="1e-3"')
    v[:6] = (0.5, 0.0, -0.3, 0.3, -0.2, 0.1)
    traj = rbd.simulate(model, q, v, 0.004, 0.002, integrator="euler", backend=backend)
    one_step = forward(model, q, v, backend=backend)
    solved = forward(model, q, v, backend=backend, iterations=100, tolerance=1e-14)
    assert np.abs(one_step.qdd - solved.qdd).max() > 1e-3         # one iteration is not enough
    # the same pass on the same state: rounding only (2e-12 measured on the compiled step)
    np.testing.assert_allclose(traj.a[0], one_step.qdd, rtol=0,
                               atol=RTOL_EXACT * np.abs(solved.qdd).max())


@pytest.mark.parametrize("name", ["ant", "humanoid"])
def test_solver_scale_is_mujocos(name):
    """The scale of Newton's stopping quantities is MuJoCo's 1 / (meaninertia max(1, nv)),
    meaninertia the mean diagonal of M at qpos0 (a closed form of the same M: rounding)."""
    from rbd.constraints.mujoco_model import solver_scale

    model, mm, _ = mujoco_pair(gymnasium_asset(name))
    np.testing.assert_allclose(solver_scale(model), 1 / (mm.stat.meaninertia * mm.nv),
                               rtol=RTOL_EXACT)
