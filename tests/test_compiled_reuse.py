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
