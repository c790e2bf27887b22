"""Cross-check against Pinocchio, a peer implementation written by others.

Random trees are exported with :func:`rbd.to_urdf` and read by Pinocchio's
URDF parser; real robot URDFs (the ``example-robot-data`` package) are read by
both libraries.  Every quantity is then compared state by state.

Pinocchio's conventions, mapped by :mod:`rbd.interop` by joint *names* (never
by position):

* joints are ordered depth-first as ours, but children in a different order,
  so ``q`` and ``v`` are permuted through ``model.idx_qs`` / ``model.idx_vs``;
* a free joint has the same ``q = [p; x y z w]`` but ``v = [v_lin; ω]`` (body
  frame), ours ``[ω; v_lin]``; generalized forces map the same way;
* a URDF ``continuous`` joint is Pinocchio's unbounded revolute, with
  ``q = [cos θ, sin θ]`` (nq = 2, nv = 1);
* Jacobians in ``LOCAL_WORLD_ALIGNED`` have rows ``[v; ω]``, ours ``[ω; v]``;
* ``pinocchio.crba`` fills the upper triangle only.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close, example_robot_data_dir

import rbd
from rbd import interop
from rbd.spatial import homogeneous, plux_parts

pin = pytest.importorskip("pinocchio", reason="the Pinocchio cross-check needs the `pin` package")

#: Trees exported to Pinocchio and the states compared on each.
NTREES = 24
NSTATES = 2


# --- the convention map --------------------------------------------------------------------
class PinMap:
    """Pinocchio twin of an rbd model: the conventions mapped by :mod:`rbd.interop`."""

    def __init__(self, model: rbd.Model, pmodel):
        self.model, self.pmodel = model, pmodel
        self.pdata = pmodel.createData()
        self.map = interop.pinocchio_map(model, pmodel)
        self.inv = np.argsort(self.map.permutation)   # v = v_pin[inv]
        self.joint_id = {}
        for i, body in enumerate(model.bodies):
            assert body.joint.nv > 0, "bodies on fixed joints are frames in Pinocchio"
            self.joint_id[i] = pmodel.getJointId(body.joint_name)

    def q(self, q: np.ndarray) -> np.ndarray:
        return self.map.to_q(q)

    def v(self, v: np.ndarray) -> np.ndarray:
        return self.map.to_v(None, v)

    def tau_back(self, tau_pin: np.ndarray) -> np.ndarray:
        return self.map.from_tau(None, tau_pin)

    def M_back(self, M_pin: np.ndarray) -> np.ndarray:
        return M_pin[np.ix_(self.inv, self.inv)]

    def J_back(self, J_pin: np.ndarray) -> np.ndarray:
        """[v; ω] rows and Pinocchio columns -> [ω; v] rows and our columns."""
        return np.vstack([J_pin[3:], J_pin[:3]])[:, self.inv]


def compare_all(pm: PinMap, backend: str, rng, nstates: int = NSTATES, rtol=RTOL_EXACT):
    """Every public quantity of rbd against Pinocchio on random states."""
    model, P, D = pm.model, pm.pmodel, pm.pdata
    for _ in range(nstates):
        q, v, a = rbd.testing.random_state(model, rng)
        qp, vp, ap = pm.q(q), pm.v(v), pm.v(a)

        tau = rbd.rnea(model, q, v, a, backend=backend)
        assert_close(tau, pm.tau_back(pin.rnea(P, D, qp, vp, ap)), rtol, "rnea")
        M_pin = np.triu(pin.crba(P, D, qp))
        M_pin = M_pin + np.triu(M_pin, 1).T
        assert_close(rbd.crba(model, q, backend=backend), pm.M_back(M_pin), rtol, "crba")
        assert_close(rbd.aba(model, q, v, tau, backend=backend),
                     pm.tau_back(pin.aba(P, D, qp, vp, pm.v(tau))), rtol, "aba")
        assert_close(rbd.nonlinear_effects(model, q, v, backend=backend),
                     pm.tau_back(pin.nonLinearEffects(P, D, qp, vp)), rtol, "nonlinear_effects")
        assert_close(rbd.gravity_forces(model, q, backend=backend),
                     pm.tau_back(pin.computeGeneralizedGravity(P, D, qp)), rtol, "gravity")
        assert_close(rbd.kinetic_energy(model, q, v, backend=backend),
                     pin.computeKineticEnergy(P, D, qp, vp), rtol, "kinetic energy")
        assert_close(rbd.potential_energy(model, q, backend=backend),
                     pin.computePotentialEnergy(P, D, qp), rtol, "potential energy")
        assert_close(rbd.center_of_mass(model, q, backend=backend),
                     pin.centerOfMass(P, D, qp), rtol, "centre of mass")
        compare_kinematics(pm, q, qp, backend, rtol)


def compare_kinematics(pm: PinMap, q, qp, backend, rtol):
    model, P, D = pm.model, pm.pmodel, pm.pdata
    pin.framesForwardKinematics(P, D, qp)
    pin.computeJointJacobians(P, D, qp)
    T = rbd.forward_kinematics(model, q, backend=backend)
    for i, name in enumerate(model.body_names):
        jid = pm.joint_id[i]
        assert_close(T[i], D.oMi[jid].homogeneous, rtol, f"pose of body {name}")
        J_pin = pin.getJointJacobian(P, D, jid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        assert_close(rbd.jacobian(model, q, i, backend=backend), pm.J_back(J_pin), rtol,
                     f"jacobian of body {name}")
    for name, frame in model.frames.items():
        if name in model.body_names:
            continue
        E, r = plux_parts(frame.X)
        fid = P.getFrameId(name, pin.FrameType.BODY)
        assert fid < len(P.frames), f"Pinocchio has no body frame {name!r}"
        assert_close(T[frame.body] @ homogeneous(E.T, r), D.oMf[fid].homogeneous, rtol,
                     f"pose of frame {name}")
        J_pin = pin.getFrameJacobian(P, D, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        assert_close(rbd.jacobian(model, q, name, backend=backend), pm.J_back(J_pin), rtol,
                     f"jacobian of frame {name}")


# --- random trees ------------------------------------------------------------------------------
def _identity_root(model: rbd.Model) -> rbd.Model:
    """The same tree with the free root's X_tree set to the identity, named root_joint."""
    new = rbd.Model(name=model.name)
    for b in model.bodies:
        root = b.parent == -1
        new.add_body(b.parent, b.joint, None if root else b.X_tree, b.inertia, b.name,
                     "root_joint" if root else b.joint_name)
    return new


def random_tree(seed: int):
    """Tree ``seed``: chains and trees of revolute/prismatic joints; every third floating.

    Returns ``(model, urdf_text, root_joint)`` where ``root_joint`` is the Pinocchio
    root joint to pass to the parser (None for a fixed base or a floating joint
    written in the URDF).
    """
    rng = np.random.default_rng(1000 + seed)
    nbodies = int(rng.integers(2, 8))
    floating = seed % 3 != 0
    model = rbd.testing.random_model(rng, nbodies, ("revolute", "prismatic"),
                                     floating_base=floating, chain=seed % 4 == 1)
    for k in range(int(rng.integers(0, 3))):
        model.add_frame(f"marker{k}", int(rng.integers(model.nbodies)),
                        rbd.spatial.plux(rbd.testing.random_rotation(rng),
                                         rng.uniform(-0.3, 0.3, 3)))
    if floating and seed % 2 == 0:  # the free joint implicit, given to the parser
        model = _identity_root(model)
        return model, rbd.to_urdf(model, floating_base=True), pin.JointModelFreeFlyer()
    return model, rbd.to_urdf(model), None  # fixed base, or a URDF floating joint


@pytest.mark.parametrize("seed", range(NTREES))
def test_random_tree_matches_pinocchio(seed, backend):
    model, text, root_joint = random_tree(seed)
    pmodel = (pin.buildModelFromXML(text) if root_joint is None
              else pin.buildModelFromXML(text, root_joint))
    compare_all(PinMap(model, pmodel), backend, np.random.default_rng(seed))


def test_random_trees_cover_both_bases():
    trees = [random_tree(s) for s in range(NTREES)]
    kinds = [(model.bodies[0].joint.kind, root_joint is None) for model, _, root_joint in trees]
    assert ("free", True) in kinds and ("free", False) in kinds
    assert any(kind != "free" for kind, _ in kinds)


# --- real robots ---------------------------------------------------------------------------------
ROBOTS = {
    # name: (path below robots/, floating base, states)
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, 2),
    "panda": ("panda_description/urdf/panda.urdf", False, 2),
    "kinova": ("kinova_description/robots/kinova.urdf", False, 2),  # continuous joints
    "solo12": ("solo_description/robots/solo12.urdf", True, 2),
    "talos": ("talos_data/robots/talos_reduced.urdf", True, 1),
}


def _robot_path(name: str) -> str:
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip("the example-robot-data package is not installed")
    matches = glob.glob(os.path.join(robots, ROBOTS[name][0]))
    if not matches:
        pytest.fail(f"example-robot-data has no {ROBOTS[name][0]} under {robots}")
    return matches[0]


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_real_robot_matches_pinocchio(name, backend):
    path = _robot_path(name)
    _, floating, nstates = ROBOTS[name]
    # panda's finger joints mimic each other: the full tree (every joint independent)
    # is what Pinocchio's default reader builds; test_example_robot_data compares the
    # mimic model with Pinocchio's mimic mode
    model = rbd.load_urdf(path, floating_base=floating).full_model()
    pmodel = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
              else pin.buildModelFromUrdf(path))
    assert {pmodel.names[k] for k in range(1, pmodel.njoints)} == set(model.joint_names)
    compare_all(PinMap(model, pmodel), backend, np.random.default_rng(7), nstates)


def test_real_robot_round_trip_through_rbd_writer(backend):
    """ur5 read by rbd, written by rbd, read by Pinocchio: still the same robot."""
    path = _robot_path("ur5")
    model = rbd.load_urdf(rbd.to_urdf(rbd.load_urdf(path)))
    compare_all(PinMap(model, pin.buildModelFromUrdf(path)), backend,
                np.random.default_rng(8), 1)


def test_bundled_models_match_pinocchio(backend):
    for name in ("arm6", "planar2"):
        resource = os.path.join(os.path.dirname(rbd.models.__file__), "urdf", f"{name}.urdf")
        model = rbd.models.bundled_urdf(name)
        compare_all(PinMap(model, pin.buildModelFromUrdf(resource)), backend,
                    np.random.default_rng(9), 1)
