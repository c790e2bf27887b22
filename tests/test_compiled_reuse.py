"""What the compiled forward pass and contact step keep between calls: the static data of a
model (``compiled_forward``) and its workspace (``ForwardModel.take_workspace``).

A kept value must never outlive what it was built from: a new dict of joint softness or of
options, a disable flag, a geom added later each give new static data; a kept workspace
gives the same runs as a new one, whatever ran in it before.  Kernel backend only
(``require_kernels``).
"""

from __future__ import annotations

import numpy as np
from helpers import RTOL_EXACT

import rbd
from rbd.constraints.forward_compiled import compiled_forward
from rbd.simulation.contact import compiled_runs

XML = """<mujoco><worldbody><geom type="plane" size="2 2 .1"/>
  <body pos="0 0 0.3"><joint name="j" type="hinge" axis="0 1 0" range="-10 10" damping="0.2"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 -0.25" size="0.05"/></body>
  <body pos="1 0 0.05"><freejoint/><geom type="sphere" size="0.1"/></body>
</worldbody></mujoco>"""


def _state(model):
    """The hinge at 0.5 rad, past its range (±10°: a limit row), the ball touching the
    plane, at rest."""
    q = rbd.neutral(model)
    q[0] = 0.5
    return q, np.zeros(model.nv)


def _agree(model, q, v):
    """The compiled pass (kernel backend) equals the readable one: the same rows, q̈ to
    RTOL_EXACT (both solve the same small problem to the solver's tolerance)."""
    ker = rbd.forward(model, q, v, backend="kernel")
    ref = rbd.forward(model, q, v, backend="reference")
    np.testing.assert_array_equal(ker.kinds, ref.kinds)
    assert len(ker.contacts) == len(ref.contacts)
    np.testing.assert_allclose(ker.qdd, ref.qdd, rtol=0,
                               atol=RTOL_EXACT * (1 + np.abs(ref.qdd).max()))
    return ker


def test_the_compiled_pass_follows_new_dicts_flags_and_geoms(require_kernels):
    model = rbd.load_mjcf(XML)
    q, v = _state(model)
    before = compiled_forward(model)
    assert "limit" in _agree(model, q, v).kinds
    # a disable flag in a new options dict: no limit rows
    model.mujoco_options = dict(model.mujoco_options or {}, disable=("limit",))
    assert "limit" not in _agree(model, q, v).kinds
    assert compiled_forward(model) is not before
    # a new joint dict: a spring on the hinge
    model.mujoco_options = dict(model.mujoco_options, disable=())
    model.mujoco_joints = {"j": {"stiffness": 5.0, "springref": 0.0}}
    spring = _agree(model, q, v).qdd
    model.mujoco_joints = {}
    # the spring's torque (−5 · 0.5 N m) moves the hinge's q̈, though its limit row takes
    # most of it back: far above the agreement tolerance
    assert abs(spring[0] - _agree(model, q, v).qdd[0]) > 0.05
    # a geom added after the static data were built (its body and weight are read per geom)
    model.add_geom("extra", 1, "sphere", (0.05, 0.0, 0.0))
    assert len(_agree(model, q, v).contacts) == len(rbd.collide(model, q))


def test_the_same_model_kept_twice_is_one_compiled_pass(require_kernels):
    model = rbd.load_mjcf(XML)
    assert compiled_forward(model) is compiled_forward(model)


def test_a_kept_workspace_gives_the_runs_of_a_new_one(require_kernels):
    """Runs on one model, options and thread counts changing between them, each equal to
    the same run on a model loaded afresh (its first workspace); a forward pass after a
    run (which leaves its warm start in the workspace) equals one before any run."""
    model = rbd.load_mjcf(XML)
    q, v = _state(model)
    v[1] = 0.3
    first = rbd.forward(model, q, v).qdd
    q2, v2 = np.array([q, q]), np.array([v, -v])
    calls = [dict(cone="pyramidal"), dict(cone="elliptic"), dict(solver="pgs"),
             dict(num_threads=2, batch=True), dict(cone="pyramidal")]
    for call in calls:
        call = dict(call)
        states = (q2, v2) if call.pop("batch", False) else (q[None], v[None])
        kept = compiled_runs(model, *states, 20, 0.002, **call)
        fresh = compiled_runs(rbd.load_mjcf(XML), *states, 20, 0.002, **call)
        for a, b in zip(kept, fresh, strict=True):
            np.testing.assert_array_equal(a.q, b.q)
            np.testing.assert_array_equal(a.contact_force, b.contact_force)
            np.testing.assert_array_equal(a.kinetic, b.kinetic)
    np.testing.assert_array_equal(rbd.forward(model, q, v).qdd, first)


#: A box sliding on a plane (μ = 0.3): its runs differ between the cones by ~0.1 m.
SLIDING = """<mujoco><worldbody><geom type="plane" size="5 5 .1" friction="0.3"/>
  <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>"""


def test_threads_running_one_model_with_different_options_get_their_own(require_kernels):
    """Two threads run one compiled model at once, one with the pyramidal cone, one with the
    elliptic (a run of 2000 steps each, without the GIL, then forward passes): each gets
    bit for bit what the same calls give one after the other.  The options of a call live
    in the call's own copy of the static data (``ForwardModel.call_options``); written into
    the shared one, the second thread's cone reached the first's run (this test failed
    3 times in 3 so)."""
    import threading

    model = rbd.load_mjcf(SLIDING)
    q0 = rbd.neutral(model)
    q0[2] = 0.1
    v0 = np.array([0.0, 0.0, 0.0, 2.0, 1.0, 0.0])         # sliding along x and y
    states = [(q0 + k * np.array([0, 0, -1e-3, 0, 0, 0, 0]), v0 * (1 + 0.1 * k))
              for k in range(5)]

    def calls(cone):
        run = compiled_runs(model, q0[None], v0[None], 2000, 0.002, cone=cone)[0]
        return run.q, [rbd.forward(model, q, v, cone=cone).qdd for q, v in states]

    serial = {cone: calls(cone) for cone in ("pyramidal", "elliptic")}
    assert np.abs(serial["pyramidal"][0] - serial["elliptic"][0]).max() > 0.01
    for _ in range(3):
        out = {}

        def call(cone, out=out):
            out[cone] = calls(cone)

        threads = [threading.Thread(target=call, args=(cone,)) for cone in serial]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for cone, (q, qdd) in serial.items():
            np.testing.assert_array_equal(out[cone][0], q)
            np.testing.assert_array_equal(np.array(out[cone][1]), np.array(qdd))
