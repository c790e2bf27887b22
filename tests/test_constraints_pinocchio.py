"""Constrained and impulse dynamics and the Delassus matrix against Pinocchio 4.1.

Pinocchio's ``RigidConstraintModel`` rows are in the frame of the first
placement (``LOCAL``), linear rows first: a ``CONTACT_3D`` row block is
``Rᵀ (v_a − v_b)`` and a ``CONTACT_6D`` block ``[Rᵀ(v_a − v_b); Rᵀ(ω_a − ω_b)]``,
with ``R`` the world rotation of the frame on body A.  rbd's rows are world
axes, ``[ω; v]`` (:mod:`rbd.constraints`), so ``J_pin = T J`` with a
block-diagonal ``T`` at every state, and ``G_pin = T G Tᵀ``, ``f = Tᵀ λ_pin``.
The acceleration rows agree where the constraints hold (both frames coincide)
and the velocity is consistent, which is where the states below are drawn.

``pin.computeDelassusMatrix`` and ``pin.impulseDynamics`` are compared on
constraints to the world only: for a ``CONTACT_3D`` between two moving bodies (the
slider-crank's wrist), Pinocchio 4.1 returns a Delassus matrix that leaves out the
second body's mobility (its trace falls short of ``J M⁻¹ Jᵀ`` by exactly
``1/m_slider``) and a post-impact velocity that violates the constraint
(``J v⁺ ≠ 0``), while its own ``constraintDynamics`` agrees with rbd's q̈ and forces
on the same rows.  Two-body rows are therefore compared in q̈ and force only.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from constraint_cases import consistent_velocity, mechanisms, random_loops
from helpers import RTOL_EXACT, assert_close, example_robot_data_dir
from test_interop import pinocchio_twin

import rbd
from rbd import constraints as rc
from rbd import interop

pin = pytest.importorskip("pinocchio", reason="the Pinocchio cross-check needs the `pin` package")

#: Pinocchio's proximal solver on redundant rows (its direct solve, mu = 0, divides by a
#: zero pivot there): mu and iterations as rbd's own proximal method.
PIN_PROXIMAL = (1e-14, 1e-14, 1e-6, 200)

#: Pinocchio 4.1's impulseDynamics makes one regularized solve on redundant rows (its
#: ProximalSettings.iter stays 0): its error is proportional to mu (measured 4.8e-7 at 1e-6,
#: 4.8e-11 at 1e-10), so it gets a mu far below the tolerance.
PIN_IMPULSE = (1e-14, 1e-14, 1e-13, 1)


class Twin:
    """An rbd model with constraints and its Pinocchio twin with the same rows."""

    def __init__(self, model, constraints, q, pmodel=None):
        if pmodel is None:
            _, pmodel = pinocchio_twin(model, continuous=())
        self.model, self.P, self.D = model, pmodel, pmodel.createData()
        self.map = interop.pinocchio_map(model, pmodel)
        self.constraints = constraints
        self.records = [c.resolve(model) for c in constraints]
        self.cms = pin.StdVec_RigidConstraintModel()
        poses = rbd.forward_kinematics(model, q)
        for kind, a, b, Ta, Tb in self.records:
            if kind == "point":   # the second frame turned as the first at q (Pinocchio's rows
                Tb = Tb.copy()    # subtract the two frames' local velocities)
                Tb[:3, :3] = (poses[a][:3, :3] if b < 0
                              else poses[b][:3, :3].T @ poses[a][:3, :3])
            ctype = pin.ContactType.CONTACT_3D if kind == "point" else pin.ContactType.CONTACT_6D
            self.cms.append(pin.RigidConstraintModel(
                ctype, pmodel, self._joint(a), pin.SE3(Ta), self._joint(b), pin.SE3(Tb),
                pin.ReferenceFrame.LOCAL))
        self.cds = pin.StdVec_RigidConstraintData()
        for cm in self.cms:
            self.cds.append(cm.createData())
        pin.initConstraintDynamics(self.P, self.D, self.cms, self.cds)

    def _joint(self, body: int) -> int:
        return 0 if body < 0 else self.P.getJointId(self.model.bodies[body].joint_name)

    def T(self, q) -> np.ndarray:
        """``J_pin = T J_rbd`` at ``q``."""
        poses = rbd.forward_kinematics(self.model, q)
        blocks = []
        for kind, a, _, Ta, _ in self.records:
            R = (poses[a][:3, :3] @ Ta[:3, :3]).T
            if kind == "point":
                blocks.append(R)
            else:
                blocks.append(np.block([[np.zeros((3, 3)), R], [R, np.zeros((3, 3))]]))
        from scipy.linalg import block_diag

        return block_diag(*blocks)

    def settings(self, rank: int, redundant=PIN_PROXIMAL):
        full = rank == sum(c.rows for c in self.constraints)
        return pin.ProximalSettings() if full else pin.ProximalSettings(*redundant)

    def dynamics(self, q, v, tau, rank: int):
        m = self.map
        a = pin.constraintDynamics(self.P, self.D, m.to_q(q), m.to_v(None, v),
                                   m.to_v(None, tau), self.cms, self.cds, self.settings(rank))
        return m.from_tau(None, a), np.array(self.D.lambda_c)

    def impulse(self, q, v, e: float, rank: int):
        m = self.map
        v_plus = pin.impulseDynamics(self.P, self.D, m.to_q(q), m.to_v(None, v), self.cms,
                                     self.cds, e, self.settings(rank, PIN_IMPULSE))
        return m.from_tau(None, v_plus), np.array(self.D.impulse_c)

    def delassus(self, q):
        return pin.computeDelassusMatrix(self.P, self.D, self.map.to_q(q), self.cms, self.cds)


def torque_difference(M, scale, x, y) -> float:
    return float(np.abs(M @ (x - y)).max() / scale)


def compare(twin: Twin, q, rng, backend: str):
    model, cs = twin.model, twin.constraints
    v = consistent_velocity(model, q, cs, rng)
    tau = rng.normal(size=model.nv)
    T = twin.T(q)
    res = rbd.constrained_dynamics(model, q, v, tau, cs, backend=backend)
    qdd_pin, lam_pin = twin.dynamics(q, v, tau, res.rank)
    M, h = rbd.crba(model, q), rbd.nonlinear_effects(model, q, v)
    J = rbd.constraint_jacobian(model, q, cs)
    scale = max(1.0, np.abs(tau).max(), np.abs(h).max(), np.abs(J.T @ res.force).max())
    assert torque_difference(M, scale, res.qdd, qdd_pin) <= RTOL_EXACT, "q̈ (torque space)"
    assert_close(res.qdd, qdd_pin, RTOL_EXACT, "q̈")
    assert_close(J.T @ res.force, J.T @ (T.T @ lam_pin), RTOL_EXACT, "Jᵀ f")
    if res.rank == J.shape[0]:
        assert_close(res.force, T.T @ lam_pin, RTOL_EXACT, "constraint force")
    if any(b >= 0 for _, _, b, _, _ in twin.records):
        return
    G = rbd.delassus(model, q, cs, backend=backend)
    assert_close(T @ G @ T.T, twin.delassus(q), RTOL_EXACT, "Delassus")
    v_minus = rng.normal(size=model.nv)
    for e in (0.0, 0.5):
        imp = rbd.impulse_dynamics(model, q, v_minus, cs, e, backend=backend)
        v_pin, impulse_pin = twin.impulse(q, v_minus, e, res.rank)
        assert_close(imp.v, v_pin, RTOL_EXACT, f"post-impact v (e = {e})")
        if res.rank == J.shape[0]:
            assert_close(imp.impulse, T.T @ impulse_pin, RTOL_EXACT, f"impulse (e = {e})")


@pytest.mark.parametrize("case", ["four-bar", "slider-crank"])
def test_mechanisms_match_pinocchio(case, backend):
    model, q = mechanisms()[["four-bar", "slider-crank"].index(case)]
    compare(Twin(model, list(model.constraints), q), q, np.random.default_rng(3), backend)


@pytest.mark.parametrize("seed", range(12))
def test_random_loops_match_pinocchio(seed, backend):
    model, q, cs = random_loops(seed)
    compare(Twin(model, cs, q), q, np.random.default_rng(seed), backend)


@pytest.mark.parametrize("seed", range(8))
def test_random_world_closures_match_pinocchio(seed, backend):
    """Closures to the world: q̈, forces, Delassus matrix and impulses all compared."""
    model, q, cs = random_loops(100 + seed, world=True)
    compare(Twin(model, cs, q), q, np.random.default_rng(seed), backend)


def test_random_loops_cover_the_cases():
    kinds, closures, redundant = set(), set(), 0
    for seed in range(12):
        model, q, cs = random_loops(seed)
        kinds.update(b.joint.kind for b in model.bodies)
        closures.add(len(cs))
        J = rbd.constraint_jacobian(model, q, cs)
        redundant += np.linalg.matrix_rank(J) < J.shape[0]
    assert kinds == {"revolute", "prismatic", "spherical", "free"}
    assert closures == {1, 2, 3}
    assert 0 < redundant < 12


def _talos():
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip("the example-robot-data package is not installed")
    matches = glob.glob(os.path.join(robots, "talos_data/robots/talos_reduced.urdf"))
    if not matches:
        pytest.fail(f"example-robot-data has no talos_reduced.urdf under {robots}")
    return matches[0]


def test_biped_with_both_feet_welded_matches_pinocchio(backend):
    """Talos on a free base, both soles welded to the ground where they stand (12 rows)."""
    path = _talos()
    model = rbd.load_urdf(path, floating_base=True)
    pmodel = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    rng = np.random.default_rng(11)
    q = rbd.random_configuration(model, rng)
    welds = [rc.FrameAnchor(foot, None, None, rbd.frame_pose(model, q, foot))
             for foot in ("left_sole_link", "right_sole_link")]
    assert np.abs(rbd.constraint_error(model, q, welds)).max() < 1e-12
    compare(Twin(model, welds, q, pmodel), q, rng, backend)
