"""``load_urdf(mimic="equality")``: a mimic joint as MuJoCo's URDF reader makes it, a joint
of its own held by a coupling row (``<equality><joint polycoef="offset multiplier">``).

Checked against the exact mimic (``mimic="exact"``, Pinocchio's reading: the coordinate
removed) through the constrained dynamics, which enforce the row exactly, and against
MuJoCo's reading of example-robot-data's Panda, whose fingers are coupled so.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import example_robot_data_dir

import rbd
from rbd.constraints import JointCoupling

#: A crank driving a follower at -0.5 times its angle plus 0.2 rad (a mimic joint).
MIMIC = """<robot name="pair"><link name="base"/>
  <link name="crank"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.01"
    iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="follower"><inertial><origin xyz="0 0.1 0"/><mass value="0.5"/><inertia
    ixx="0.004" iyy="0.001" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="drive" type="revolute"><parent link="base"/><child link="crank"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="follow" type="revolute"><parent link="crank"/><child link="follower"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/>
    <mimic joint="drive" multiplier="-0.5" offset="0.2"/></joint>
</robot>"""


def test_the_mimic_becomes_a_coupling_row():
    exact = rbd.load_urdf(MIMIC)
    coupled = rbd.load_urdf(MIMIC, mimic="equality")
    assert (exact.nq, coupled.nq) == (1, 2)
    (row,) = coupled.constraints
    assert isinstance(row, JointCoupling)
    assert (row.joint, row.source) == ("follow", "drive")
    np.testing.assert_array_equal(row.coefficients, [0.2, -0.5])    # the file's numbers


def test_the_coupled_model_moves_as_the_exact_mimic(rng):
    """On the coupling's manifold the constrained dynamics of the two-joint model give the
    mimic model's acceleration: q̈_follow = -0.5 q̈_drive, q̈_drive = the reduced one
    (both exact: round-off of a 2 x 2 solve)."""
    exact = rbd.load_urdf(MIMIC)
    coupled = rbd.load_urdf(MIMIC, mimic="equality")
    for _ in range(5):
        x, xd, tau = rng.uniform(-1, 1, 3)
        reduced = rbd.aba(exact, [x], [xd], [tau])
        full = rbd.constrained_dynamics(coupled, [x, 0.2 - 0.5 * x], [xd, -0.5 * xd],
                                        [tau, 0.0]).qdd
        np.testing.assert_allclose(full, [reduced[0], -0.5 * reduced[0]], rtol=1e-12,
                                   atol=1e-12)


def test_an_unknown_mimic_mode_is_refused():
    with pytest.raises(rbd.InputError, match="mimic must be one of 'exact', 'equality'"):
        rbd.load_urdf(MIMIC, mimic="soft")


@pytest.mark.slow
def test_the_panda_follows_mujocos_reading():
    """Panda's fingers start off their coupling (0.02 and 0.01 m) and its fourth joint inside
    its range; 0.2 s of MuJoCo's Euler step from MuJoCo's reading of the same URDF (its
    mimic a joint equality with the default solref and solimp), Newton tightened on both
    sides: the same path to 1e-12 (measured 8e-16; the model has no touching geoms)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo reads the URDF as the reference")
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip("the example-robot-data package is not installed")
    path = robots / "panda_description/urdf/panda.urdf"
    spec = rbd.testing.mujoco_urdf_spec(path, robots.parent.parent)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.option.iterations, spec.option.tolerance = 100, 1e-12
    mm = spec.compile()
    d = mujoco.MjData(mm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_urdf(path, mimic="equality")
    model.mujoco_options = {"iterations": 100, "tolerance": 1e-12}
    assert [mm.joint(i).name for i in range(mm.njnt)] == model.joint_names
    d.qpos[:] = [0, 0, 0, -1.0, 0, 1.0, 0, 0.02, 0.01]
    q0, path_mj = d.qpos.copy(), [d.qpos.copy()]
    for _ in range(100):
        mujoco.mj_step(mm, d)
        path_mj.append(d.qpos.copy())
    traj = rbd.simulate(model, q0, np.zeros(model.nv), 0.2, mm.opt.timestep,
                        integrator="euler")
    np.testing.assert_allclose(traj.q, path_mj, rtol=0, atol=1e-12)
    assert abs(traj.q[-1, 7] - traj.q[-1, 8]) < 0.5 * abs(q0[7] - q0[8])   # pulled together
