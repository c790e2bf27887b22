"""rbd.forward against MuJoCo's mj_forward on dm_control's suite MJCFs (issue 21).

At a state 300 random-control steps into a MuJoCo run (initial velocities N(0, 0.1²)),
MuJoCo's Newton tightened: the contact set equals ``d.contact`` and ``qacc`` equals
``mj_forward``'s (:func:`helpers.assert_forward_matches_mujoco`), both cones, Newton and
PGS.  A model that needs what rbd leaves out is listed in :data:`LEFT_OUT` with the words
of its load warning: its comparison is a strict xfail, and a second test checks that
loading it says so (none is left out now).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_forward_matches_mujoco, dm_control_asset, mujoco_run

import rbd

pytest.importorskip("mujoco", reason="MuJoCo is the reference for the forward pass")

#: Models that match MuJoCo.  cartpole, point_mass and reacher set
#: ``<flag contact="disable"/>``, fish ``constraint`` and ``gravity``; humanoid_CMU has
#: ``<contact><exclude>``; fish, manipulator, stacker and quadruped have fixed tendons
#: (a spring, equality constraints on tendons; rbd.constraints.tendon_rows), ball_in_cup
#: a limited spatial tendon (the string, rbd.constraints.tendon_spatial), its limit row
#: active at the state (test_ball_in_cup_string_is_taut_at_the_state); pendulum,
#: acrobot, finger, cheetah, swimmer and fish have no contacts at the state.  dog's fixed
#: tendons carry no force, and its springdamper and ball-joint springs are rbd's
#: (tests/test_joint_springs.py); at the elliptic state its tail capsules touch, at geom
#: frames snapped to their bodies' inertial frames as MuJoCo's compiler does
#: (tests/test_geom_sameframe.py), whose axes come from MuJoCo's own Jacobi iteration
#: (rbd/mjcf/_principal.py: two of a tail vertebra's moments are 3e-11 apart).
PASSING = ("acrobot", "ball_in_cup", "cartpole", "cheetah", "dog", "finger", "fish", "hopper",
           "humanoid", "humanoid_CMU", "manipulator", "pendulum", "point_mass", "quadruped",
           "reacher", "stacker", "swimmer", "walker")

#: Models that need a left-out feature -> what the load warning names.
LEFT_OUT: dict[str, str] = {}

#: Larger models whose four comparisons take over a second with the reference backend.
SLOW = ("humanoid", "humanoid_CMU", "dog", "quadruped", "stacker")

#: The noisy MuJoCo run the states come from.
STEPS, QVEL_NOISE = 300, 0.1


def _state(name: str, cone: str):
    """rbd's model, MuJoCo's model and data at the compared state."""
    model, mm, d = rbd.testing.mujoco_pair(dm_control_asset(name), cone=cone)
    mujoco_run(mm, d, STEPS, seed=0, qvel_noise=QVEL_NOISE)
    return model, mm, d


def _case(name: str, cone: str):
    marks = [pytest.mark.slow] if name in SLOW else []
    reason = f"needs {LEFT_OUT[name]}" if name in LEFT_OUT else None
    if reason:
        marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
    return pytest.param(name, cone, marks=marks, id=f"{cone}-{name}")


@pytest.mark.parametrize(("name", "cone"), [_case(n, c) for c in ("pyramidal", "elliptic")
                                            for n in (*PASSING, *LEFT_OUT)])
def test_suite_model_matches_mujoco(name, cone):
    """Newton and PGS (the minimizer is unique) against MuJoCo's Newton."""
    model, mm, d = _state(name, cone)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # dog: pairs without a routine
        for solver in ("newton", "pgs"):
            assert_forward_matches_mujoco(model, mm, d, cone, solver)


@pytest.mark.slow
def test_suite_states_have_contacts_and_limits():
    """The compared states are not trivial: some have contacts, some limit rows."""
    found = []
    for name in ("hopper", "walker", "cheetah"):
        _, mm, d = _state(name, "pyramidal")
        found.append((d.ncon, d.nl))
    assert any(c > 0 for c, _ in found) and any(n > 0 for _, n in found)


def test_left_out_features_are_named_at_load():
    """Loading a model that cannot match yet warns and names what is left out; ball_in_cup's
    warning names its motors only (its spatial tendon is read)."""
    for name in sorted(LEFT_OUT):
        with pytest.warns(RuntimeWarning, match=LEFT_OUT[name]):
            rbd.load_mjcf(dm_control_asset(name))
    with pytest.warns(RuntimeWarning) as caught:
        model = rbd.load_mjcf(dm_control_asset("ball_in_cup"))
    assert [str(w.message) for w in caught if "tendon" in str(w.message)] == []
    assert [t["kind"] for t in model.mujoco_tendons] == ["spatial"]


def test_ball_in_cup_string_is_taut_at_the_state():
    """The compared ball_in_cup state has the string's limit row: the spatial tendon's
    length and moment are used, not only read."""
    import mujoco

    _, _, d = _state("ball_in_cup", "pyramidal")
    assert list(d.efc_type) == [mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON]


@pytest.mark.slow
def test_dog_collides_its_ellipsoid_pairs():
    """dog's ellipsoid and cylinder pairs go through GJK (rbd.constraints.collision_convex):
    at the run's state none is left out and the contact set is MuJoCo's."""
    path = dm_control_asset("dog")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_mjcf(path)
    import mujoco

    mm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mm)
    mujoco_run(mm, d, STEPS, seed=0, qvel_noise=QVEL_NOISE)
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        contacts = rbd.collide(model, q)
    assert contacts.unsupported == ()
    assert len(contacts.dist) == d.ncon
    np.testing.assert_allclose(contacts.pos, d.contact.pos, rtol=0, atol=1e-9)
