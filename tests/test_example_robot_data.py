"""Every URDF of the example-robot-data package: how many load, and agreement with Pinocchio.

The package (PyPI ``example-robot-data``) ships its robots as data files; its
``robots`` directory is found through the installed distribution.  Each robot
is read once per inertia policy (cached), then compared with Pinocchio's own
URDF parser on a few random states, with a fixed base, and also with a free
flyer for the robots that example-robot-data's loaders give one.

Measured with example-robot-data 6.0.0 (69 URDFs): 65 load with the default
``inertia="strict"`` (``romeo_small`` and ``romeo_laas_small`` have arm and
hip links whose merged inertias break the triangle inequality by 0.2 % to
80 %; ``ur3.urdf`` has no robot name, which URDF requires;
``alex_psyonic_hands.urdf`` has mimic joints of joints it does not define,
which Pinocchio refuses too) and 67 with ``inertia="repair"``.

Nine URDFs have ``<mimic>`` joints.  The eight that are well formed are
compared with Pinocchio's own mimic support
(``buildModelFromUrdf(path, mimic=True)``, same convention ``q_j = m q_k +
o``).  Two things are mapped: Pinocchio's parser visits sibling joints in the
order of their names and refuses a mimic joint met before the joint it
mimics (romeo and talos), so the document given to both libraries has the
mimicked joints and their ancestors renamed with a prefix that sorts first;
and Pinocchio 4.1's ``aba`` refuses mimic joints, so forward dynamics is
compared with the solution of Pinocchio's own ``M`` and ``h``.
"""

from __future__ import annotations

import functools
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from helpers import assert_close, example_robot_data_dir

import rbd

#: M, inverse dynamics and bias forces are sums of O(n) products of the same
#: inputs in both libraries: they agree to rounding, 1e-12 of the largest entry
#: (of at least 1) leaves a margin of ~1e3 over double precision for 50 joints.
RTOL_DIRECT = 1e-12

#: Forward dynamics divides by the articulated inertias, amplifying rounding by
#: up to cond(M): 1e-10 holds up to cond(M) = COND_ABA; above it (icub on a free
#: flyer: 4e7, its finger links weigh grams next to a 30 kg body) the tolerance
#: grows with cond(M), still 10x below the worst case eps * cond(M).
RTOL_ABA = 1e-10
COND_ABA = 1e6

#: M counts as singular, and forward dynamics as undefined, when its smallest
#: eigenvalue is below this fraction of its largest (massless finger links).
SINGULAR = 1e-12

#: Random states compared per robot and base.
NSTATES = 2

#: URDFs that example-robot-data's robot loaders open with a free flyer at the root
#: (``free_flyer = True`` in its ``robots_loader.py``); the others have a fixed base.
FREE_FLYER = {
    "a1_description/urdf/a1.urdf", "anymal_b_simple_description/robots/anymal-kinova.urdf",
    "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_c_simple_description/urdf/anymal.urdf",
    "b1_description/urdf/b1-z1.urdf", "b1_description/urdf/b1.urdf",
    "bolt_description/robots/bolt.urdf", "borinot_description/urdf/borinot_flying_arm_2.urdf",
    "go1_description/urdf/go1.urdf", "go2_description/urdf/go2.urdf",
    "hector_description/robots/quadrotor_base.urdf",
    "hextilt_description/urdf/hextilt_flying_arm_5.urdf",
    "hyq_description/robots/hyq_no_sensors.urdf", "icub_description/robots/icub.urdf",
    "icub_description/robots/icub_reduced.urdf", "iris_description/robots/iris_simple.urdf",
    "laikago_description/urdf/laikago.urdf", "pr2_description/urdf/pr2.urdf",
    "quadruped_description/urdf/quadruped.urdf", "romeo_description/urdf/romeo.urdf",
    "simple_humanoid_description/urdf/simple_humanoid.urdf",
    "simple_humanoid_description/urdf/simple_humanoid_classical.urdf",
    "solo_description/robots/solo.urdf", "solo_description/robots/solo12.urdf",
    "talos_data/robots/talos_full_v2.urdf", "talos_data/robots/talos_full_v2_box.urdf",
    "talos_data/robots/talos_reduced.urdf", "talos_data/robots/talos_reduced_box.urdf",
}


#: The one URDF whose mimic joints name joints it does not define (refused, tested below).
MALFORMED_MIMIC = "alex_description/urdf/alex_psyonic_hands.urdf"


# --- the robots ------------------------------------------------------------------------------
ROBOTS = example_robot_data_dir()
URDFS = sorted(str(p.relative_to(ROBOTS)) for p in ROBOTS.rglob("*.urdf")) if ROBOTS else []
needs_robots = pytest.mark.skipif(ROBOTS is None,
                                  reason="the example-robot-data package is not installed")


@functools.cache
def load(relative: str, floating_base: bool, inertia: str):
    """``(model, None)`` or ``(None, URDFError)``, read once per test session."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # massless bodies, repairs
        try:
            # the dynamics only: the collision meshes' hulls (tests/test_urdf_collision.py)
            # would cost some 40 s over the whole set
            return rbd.load_urdf(ROBOTS / relative, floating_base, inertia=inertia,
                                 collision_meshes=False), None
        except rbd.URDFError as exc:
            return None, exc


def mimic_joints(relative: str) -> list[str]:
    """The moving joints of the robot that mimic another (a fixed one moves nothing)."""
    return [j.get("name") for j in ET.parse(ROBOTS / relative).getroot().iter("joint")
            if j.find("mimic") is not None and j.get("type") != "fixed"]


def test_free_flyer_list_names_shipped_robots():
    if ROBOTS is None:
        pytest.skip("the example-robot-data package is not installed")
    assert FREE_FLYER <= set(URDFS)


# --- how many load ---------------------------------------------------------------------------
@pytest.mark.slow
@needs_robots
def test_how_many_robots_load():
    refused = {policy: {r: load(r, False, policy)[1] for r in URDFS
                        if load(r, False, policy)[0] is None} for policy in ("strict", "repair")}
    report = ", ".join(f"{policy}: {len(URDFS) - len(r)} of {len(URDFS)}"
                       for policy, r in refused.items())
    print(f"example-robot-data URDFs loaded: {report}")
    for relative, error in refused["strict"].items():
        if "non-physical inertia" in str(error):  # names the link, the numbers, the remedy
            assert "link '" in str(error) and "inertia='repair'" in str(error), relative
            assert relative not in refused["repair"]
    assert all("non-physical inertia" not in str(e) for e in refused["repair"].values())
    bad_mimic = {r for r, e in refused["strict"].items() if "<mimic>" in str(e)}
    assert bad_mimic == {MALFORMED_MIMIC}, report
    assert len(refused["strict"]) <= 4, report
    assert len(refused["repair"]) <= 2, report


# --- agreement with Pinocchio ----------------------------------------------------------------
def cases(robots) -> list:
    """Each robot with a fixed base, and also with a free flyer where its loader has one."""
    return [pytest.param(r, False, id=r.split("/")[-1]) for r in robots] + [
        pytest.param(r, True, id=r.split("/")[-1] + "-free_flyer") for r in robots
        if r in FREE_FLYER]


MIMIC_ROBOTS = [r for r in URDFS if mimic_joints(r)]
CASES = cases([r for r in URDFS if r not in MIMIC_ROBOTS])


def rbd_model(relative: str, floating: bool) -> rbd.Model:
    """The robot read as written: strict, or unchecked where strict refuses it."""
    model, error = load(relative, floating, "strict")
    if model is None:
        model, _ = load(relative, floating, "ignore")
    if model is None:
        pytest.skip(f"rbd refuses it under every inertia policy (counted above): {error}")
    return model


def compare(model: rbd.Model, pmodel, backend: str, seed: int) -> None:
    from test_pinocchio import PinMap

    pin = pytest.importorskip("pinocchio")
    pm = PinMap(model, pmodel)
    P, D = pmodel, pm.pdata
    rng = np.random.default_rng(seed)
    for _ in range(NSTATES):
        q, v, a = rbd.testing.random_state(model, rng)
        qp, vp = pm.q(q), pm.v(v)
        M_pin = np.triu(pin.crba(P, D, qp))
        M_pin = M_pin + np.triu(M_pin, 1).T
        M = rbd.crba(model, q, backend=backend)
        assert_close(M, pm.M_back(M_pin), RTOL_DIRECT, "M")
        tau = rbd.rnea(model, q, v, a, backend=backend)
        assert_close(tau, pm.tau_back(pin.rnea(P, D, qp, vp, pm.v(a))), RTOL_DIRECT, "rnea")
        assert_close(rbd.nonlinear_effects(model, q, v, backend=backend),
                     pm.tau_back(pin.nonLinearEffects(P, D, qp, vp)), RTOL_DIRECT, "h")
        compare_frames(model, P, D, q, qp, backend)
        eig = np.linalg.eigvalsh(M)
        if eig[0] <= SINGULAR * eig[-1]:
            continue  # bodies without inertia: forward dynamics is undefined (both libraries)
        rtol = RTOL_ABA * max(1.0, eig[-1] / eig[0] / COND_ABA)
        assert_close(rbd.aba(model, q, v, tau, backend=backend),
                     pm.tau_back(pin.aba(P, D, qp, vp, pm.v(tau))), rtol, "aba")


#: Frame poses: products of O(depth) rotations and translations of O(1 m), so rounding
#: of a few eps per joint; 1e-12 on positions (metres) and rotation entries.
RTOL_POSE = 1e-12


def compare_frames(model: rbd.Model, P, D, q, qp, backend: str) -> int:
    """Every link frame's world pose (bodies and welded links) against Pinocchio's."""
    pin = pytest.importorskip("pinocchio")
    pin.framesForwardKinematics(P, D, qp)
    compared = 0
    for name in model.frames:
        if not P.existFrame(name, pin.FrameType.BODY):
            continue   # rbd's root body of a floating base, named after the world link
        T_pin = D.oMf[P.getFrameId(name, pin.FrameType.BODY)].homogeneous
        assert_close(rbd.frame_pose(model, q, name, backend=backend), T_pin, RTOL_POSE,
                     f"pose of {name}")
        compared += 1
    assert compared > 0
    return compared


def pinocchio_model(relative: str, floating: bool):
    pin = pytest.importorskip("pinocchio", reason="the cross-check needs the `pin` package")
    path = str(ROBOTS / relative)
    if floating:
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(path)


@pytest.mark.slow
@needs_robots
@pytest.mark.parametrize(("relative", "floating"), CASES)
def test_robot_matches_pinocchio(relative, floating, backend):
    """Robots without mimic joints (those are compared below)."""
    model = rbd_model(relative, floating)
    if model.nv == 0:
        pytest.skip("no moving joint")
    compare(model, pinocchio_model(relative, floating), backend, seed=len(relative))


# --- mimic joints against Pinocchio's mimic support -------------------------------------------
#: Prefix that sorts a joint name before any other (digits precede letters in ASCII).
FIRST = "0_"


def pinocchio_order(relative: str) -> str:
    """The robot's URDF with each mimicked joint and its ancestors renamed ``FIRST + name``.

    Pinocchio's parser visits a link's child joints in the order of their names
    and refuses a mimic joint met before the joint it mimics; the renamed
    joints come first among their siblings, so every mimicked joint precedes
    its mimic joints in the depth-first order.  Both libraries read this text.
    """
    root = ET.parse(ROBOTS / relative).getroot()
    joints = {j.get("name"): j for j in root.findall("joint")}  # not a transmission's
    parent_joint = {j.find("child").get("link"): j for j in joints.values()}
    renamed = set()
    for j in joints.values():
        mimic = j.find("mimic")
        name = None if mimic is None else mimic.get("joint")
        while name is not None and name not in renamed:
            renamed.add(name)
            above = parent_joint.get(joints[name].find("parent").get("link"))
            name = None if above is None else above.get("name")
    for j in joints.values():
        if j.get("name") in renamed:
            j.set("name", FIRST + j.get("name"))
        mimic = j.find("mimic")
        if mimic is not None and mimic.get("joint") in renamed:
            mimic.set("joint", FIRST + mimic.get("joint"))
    return ET.tostring(root, encoding="unicode")


def full_configuration(model: rbd.Model, full: rbd.Model, q, v):
    """``q_full``, ``v_full`` of the full tree, written out joint by joint from ``model.mimic``."""
    q_full, v_full = np.zeros(full.nq), np.zeros(full.nv)
    for name in model.joint_names:
        q_full[full.q_slice(name)] = q[model.q_slice(name)]
        v_full[full.v_slice(name)] = v[model.v_slice(name)]
    for name, (source, multiplier, offset) in model.mimic.items():
        q_full[full.q_slice(name)] = multiplier * q[model.q_slice(source)] + offset
        v_full[full.v_slice(name)] = multiplier * v[model.v_slice(source)]
    return q_full, v_full


class MimicMap:
    """Coordinates of an rbd model with mimic joints ↔ those of Pinocchio's mimic model.

    The full trees are paired by :mod:`rbd.interop`; Pinocchio's mimic model
    keeps the coordinates of its joints that are not mimic joints (paired by name).
    """

    def __init__(self, model: rbd.Model, p_full, p_mimic):
        from rbd import interop

        self.model, self.full = model, model.full_model()
        self.full_map = interop.pinocchio_map(self.full, p_full)
        keep_q, keep_v = [], []
        for j in range(1, p_mimic.njoints):
            if p_mimic.nvs[j] == 0:  # a mimic joint: no coordinate of its own
                continue
            k = p_full.getJointId(p_mimic.names[j])
            keep_q += range(p_full.idx_qs[k], p_full.idx_qs[k] + p_full.nqs[k])
            keep_v += range(p_full.idx_vs[k], p_full.idx_vs[k] + p_full.nvs[k])
        self.keep_q = np.array(keep_q)
        # v_pin = v[perm]: through the full tree, v_full[i] = v[independent[i]] on the
        # coordinates Pinocchio keeps
        independent = np.full(self.full.nv, -1)
        for name in model.joint_names:
            independent[self.full.v_slice(name)] = np.arange(model.nv)[model.v_slice(name)]
        perm = independent[self.full_map.permutation[np.array(keep_v)]]
        assert sorted(perm) == list(range(model.nv)), "the independent coordinates pair up"
        self.perm, self.inv = perm, np.argsort(perm)

    def q(self, q, v):
        q_full, _ = full_configuration(self.model, self.full, q, v)
        return self.full_map.to_q(q_full)[self.keep_q]

    def v(self, v):
        return v[self.perm]

    def back(self, tau_pin):
        return tau_pin[self.inv]


def pinocchio_mimic_models(xml: str, floating: bool):
    pin = pytest.importorskip("pinocchio", reason="the cross-check needs the `pin` package")
    root = (pin.JointModelFreeFlyer(),) if floating else ()
    return pin.buildModelFromXML(xml, *root), pin.buildModelFromXML(xml, *root, mimic=True)


def compare_mimic(model: rbd.Model, p_full, p_mimic, backend: str, seed: int) -> dict:
    """Largest relative differences of M, τ, h and q̈ from Pinocchio on a few states."""
    pin = pytest.importorskip("pinocchio")
    pm, D = MimicMap(model, p_full, p_mimic), p_mimic.createData()
    rng = np.random.default_rng(seed)
    worst: dict[str, float | None] = dict.fromkeys(("M", "rnea", "h", "aba"))
    for _ in range(NSTATES):
        q = rbd.random_configuration(model, rng)
        v, a = rng.normal(size=(2, model.nv))
        qp, vp = pm.q(q, v), pm.v(v)
        M_pin = np.triu(pin.crba(p_mimic, D, qp))
        M_pin = pm.back(pm.back(M_pin + np.triu(M_pin, 1).T).T)
        M = rbd.crba(model, q, backend=backend)
        tau = rbd.rnea(model, q, v, a, backend=backend)
        h_pin = pm.back(pin.nonLinearEffects(p_mimic, D, qp, vp))
        checks = [("M", M, M_pin, RTOL_DIRECT),
                  ("rnea", tau, pm.back(pin.rnea(p_mimic, D, qp, vp, pm.v(a))), RTOL_DIRECT),
                  ("h", rbd.nonlinear_effects(model, q, v, backend=backend), h_pin, RTOL_DIRECT)]
        compare_frames(model, p_mimic, D, q, qp, backend)
        eig = np.linalg.eigvalsh(M)
        if eig[0] > SINGULAR * eig[-1]:  # forward dynamics defined (as in compare above)
            rtol = RTOL_ABA * max(1.0, eig[-1] / eig[0] / COND_ABA)
            checks.append(("aba", rbd.aba(model, q, v, tau, backend=backend),
                           np.linalg.solve(M_pin, tau - h_pin), rtol))
        for what, ours, theirs, rtol in checks:
            assert_close(ours, theirs, rtol, what)
            worst[what] = max(worst[what] or 0.0, rbd.testing.relative_difference(ours, theirs))
    return worst


MIMIC_CASES = cases([r for r in MIMIC_ROBOTS if r != MALFORMED_MIMIC])


@pytest.mark.slow
@needs_robots
@pytest.mark.parametrize(("relative", "floating"), MIMIC_CASES)
def test_mimic_robot_matches_pinocchio(relative, floating, backend):
    xml = pinocchio_order(relative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # massless bodies
        model = rbd.load_urdf(xml, floating)
    assert not set(mimic_joints(relative)) & set(model.joint_names)
    p_full, p_mimic = pinocchio_mimic_models(xml, floating)
    assert model.nv == p_mimic.nv
    worst = compare_mimic(model, p_full, p_mimic, backend, seed=len(relative))
    print(f"{relative} (nv {model.nv} of {model.full_model().nv}): largest relative "
          "differences " + ", ".join(f"{k} " + ("singular M" if x is None else f"{x:.1e}")
                                     for k, x in worst.items()))


@needs_robots
def test_malformed_mimic_is_refused_like_pinocchio():
    """alex_psyonic_hands mimics joints named ``index_q1`` etc., which it does not define."""
    relative = MALFORMED_MIMIC
    with pytest.raises(rbd.URDFError, match="'Left_index_q2': <mimic> names an unknown joint "
                                            "'index_q1'"):
        rbd.load_urdf(ROBOTS / relative)
    pin = pytest.importorskip("pinocchio")
    with pytest.raises(ValueError, match="mimic joint is not in the kinematic tree"):
        pin.buildModelFromUrdf(str(ROBOTS / relative), mimic=True)
