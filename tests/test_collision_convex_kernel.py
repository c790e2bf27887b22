"""The compiled GJK/EPA collider (``rbd/_kernels/collision_gjk.pyx``, ``collision_epa.pyx``,
``collision_convex.pyx``) against its reference text (``rbd.constraints.collision_convex``),
and the models it brings onto the compiled collision stage, forward pass and step.

These tests need the kernels (``require_kernels``): on the pure-Python path there is no
twin to compare.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import RTOL_EXACT
from scipy.spatial.transform import Rotation

import rbd
from rbd.constraints import collision_convex as cvx
from rbd.constraints.forward_compiled import compiled_forward
from rbd.simulation.contact import compiled_runs, euler_step

pytestmark = pytest.mark.usefixtures("require_kernels")

#: The twins evaluate the same formulas in the same order; they differ only where the
#: reference's NumPy rounds otherwise than sequential sums (``vec @ vec`` in ``normalize``):
#: measured worst 9e-16 over 200 random states per pair.
TWIN_ATOL = 1e-12
#: Through a model the two stages see geom poses from the compiled and the NumPy
#: kinematics (1e-16 apart); EPA's closest face turns that into 1e-11 on a normal (measured).
STAGE_ATOL = 1e-9

SIZES = {"sphere": [0.1, 0, 0], "capsule": [0.05, 0.1, 0], "ellipsoid": [0.1, 0.2, 0.15],
         "cylinder": [0.1, 0.15, 0], "box": [0.1, 0.12, 0.08]}


def _kernel():
    from rbd._kernels import collision_convex

    return collision_convex


def _outcomes(k1, k2, states, seed=0):
    """(reference, kernel) results of ``convex`` on random poses within reach of each other:
    a PairContacts and ``(dist, pos, frame)`` arrays."""
    rng = np.random.default_rng(seed)
    s1, s2 = np.array(SIZES[k1]), np.array(SIZES[k2])
    r1, r2 = cvx.bounding_radius(k1, s1), cvx.bounding_radius(k2, s2)
    for _ in range(states):
        R1, R2 = Rotation.random(2, random_state=rng.integers(2**31)).as_matrix()
        direction = rng.standard_normal(3)
        p1 = 0.01 * rng.standard_normal(3)
        p2 = direction / np.linalg.norm(direction) * rng.uniform(0.05, 0.4)
        margin = float(rng.choice([0.0, 0.01]))
        ref = cvx.convex(k1, k2, p1, R1, s1, p2, R2, s2, margin, r1, r2)
        yield ref, _kernel().convex(k1, k2, p1, R1, s1, p2, R2, s2, margin, r1, r2)


@pytest.mark.slow
@pytest.mark.parametrize("pair", sorted(cvx.PAIR_FUNCTIONS), ids="-".join)
def test_kernel_convex_equals_the_reference(pair):
    """Every convex pair on 40 random states: the same outcome (contacts or none) and the
    same contacts to TWIN_ATOL."""
    seen = {"contact": 0, "none": 0}
    for ref, ker in _outcomes(*pair, states=40):
        assert len(ker[0]) == len(ref.dist)
        seen["contact" if len(ref.dist) else "none"] += 1
        for got, want in zip(ker, ref, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)
    assert seen["contact"] >= 5 and seen["none"] >= 5, seen
    # random states seldom line features up: the multi-CCD pairs' several contacts are
    # compared on aligned states in tests/test_collision_multiccd_kernel.py


#: EPA on two round shapes: 35 iterations leave the polytope coarse (module notes of
#: collision_convex: 3e-5 on distances, 5e-2 on normals against MuJoCo); measured here
#: 8.5e-6, 4e-2 and 5e-5 on the point.  GJK on a sphere's core is exact to rounding.
EPA_ROUND = {"dist": 5e-5, "normal": 5e-2, "pos": 1e-4}
CORE = {"dist": 1e-12, "normal": 1e-12, "pos": 1e-12}


@pytest.mark.parametrize("kind1, size1, atol", [("sphere", [0.1, 0, 0], CORE),
                                               ("ellipsoid", [0.1, 0.1, 0.1], EPA_ROUND)])
def test_kernel_convex_penetration_is_the_closed_form_one(kind1, size1, atol):
    """A ball of radius 0.1 pressed 1 cm into a ball of radius 0.2 given as an ellipsoid
    (turned): distance -0.01, the centre line as normal, the point midway in the overlap."""
    R = Rotation.from_euler("xyz", [0.2, -0.4, 0.3]).as_matrix()
    pos2 = np.array([0.0, 0.0, 0.29])
    dist, pos, frame = _kernel().convex(kind1, "ellipsoid", np.zeros(3), np.eye(3), size1,
                                        pos2, R, np.full(3, 0.2), 0.0, 0.1, 0.2)
    np.testing.assert_allclose(dist, [-0.01], rtol=0, atol=atol["dist"])
    np.testing.assert_allclose(frame[0, 0], [0, 0, 1], rtol=0, atol=atol["normal"])
    np.testing.assert_allclose(pos[0], [0, 0, 0.095], rtol=0, atol=atol["pos"])


SCENE = """<mujoco><option timestep="0.002"/><worldbody>
<geom name="floor" type="box" size="1 1 0.1" pos="0 0 -0.1"/>
<geom name="pillar" type="cylinder" size="0.1 0.1" pos="0.5 0 0.1"/>
<geom name="mound" type="ellipsoid" size="0.15 0.15 0.05" pos="-0.4 0 0"/>
<body name="egg" pos="0 0 0.16" euler="30 20 0"><freejoint/>
  <geom type="ellipsoid" size="0.1 0.12 0.15"/></body>
<body name="ball" pos="0.02 0.01 0.35"><freejoint/><geom type="sphere" size="0.05"/></body>
<body name="top" pos="0.55 0 0.24" euler="10 0 0"><freejoint/>
  <geom type="ellipsoid" size="0.06 0.05 0.04"/></body>
<body name="pill" pos="-0.4 0 0.1" euler="0 70 0"><freejoint/>
  <geom type="capsule" size="0.04 0.1"/></body>
</worldbody></mujoco>"""


@pytest.fixture(scope="module")
def settled(tmp_path_factory):
    """The scene 0.12 s into a MuJoCo run: ellipsoid–box, sphere–ellipsoid,
    ellipsoid–cylinder and capsule–ellipsoid contacts, all GJK pairs."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the state")
    path = tmp_path_factory.mktemp("convex") / "scene.xml"
    path.write_text(SCENE)
    model, mm, d = rbd.testing.mujoco_pair(path)
    for _ in range(60):
        mujoco.mj_step(mm, d)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    return model, mm, q, v


def test_compiled_stage_collides_the_gjk_pairs(settled):
    """The model takes the compiled stage and pass (no longer reference only), with the
    readable stage's contacts, in its order, none left out."""
    model, _, q, v = settled
    assert compiled_forward(model) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        ref = rbd.collide(model, q, backend="reference")
        ker = rbd.collide(model, q, backend="kernel")
    kinds = {(model.geoms[i].kind, model.geoms[j].kind) for i, j in ref.geom}
    assert kinds >= {("ellipsoid", "box"), ("sphere", "ellipsoid"), ("ellipsoid", "cylinder"),
                     ("capsule", "ellipsoid")}
    np.testing.assert_array_equal(ker.geom, ref.geom)
    assert ker.unsupported == ref.unsupported == ()
    for field in ("dist", "pos", "frame"):
        np.testing.assert_allclose(getattr(ker, field), getattr(ref, field), rtol=0,
                                   atol=STAGE_ATOL)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_compiled_forward_equals_the_reference_with_gjk_contacts(settled, cone):
    model, _, q, v = settled
    ref = rbd.forward(model, q, v, backend="reference", cone=cone)
    ker = rbd.forward(model, q, v, backend="kernel", cone=cone)
    assert len(ref.contacts) >= 4
    np.testing.assert_array_equal(ker.kinds, ref.kinds)
    scale = 1 + np.abs(ref.qdd).max()
    # the contact frames agree to STAGE_ATOL (EPA), which bounds the accelerations' agreement
    np.testing.assert_allclose(ker.qdd, ref.qdd, rtol=0, atol=STAGE_ATOL * scale)
    np.testing.assert_allclose(ker.force, ref.force, rtol=0,
                               atol=STAGE_ATOL * (1 + np.abs(ref.force).max()))


@pytest.mark.slow
def test_compiled_step_equals_the_python_step_with_gjk_contacts(settled):
    """Each step of the compiled rollout (``collide_into`` without the GIL) gives the next
    state of the Python step on the compiled pass.  (Against the readable stage a step is
    only as close as EPA's ccd_tolerance: poses 1e-16 apart can pick another closest face
    of the coarse polytope, 2.6e-6 on a normal at the second state here.)"""
    model, mm, q, v = settled
    steps = 3
    traj = compiled_runs(model, q[None], v[None], steps, mm.opt.timestep)[0]
    for k in range(steps):
        q1, v1, a, ncon = euler_step(model, traj.q[k], traj.v[k], None, mm.opt.timestep,
                                     backend="kernel")
        assert traj.contact_count[k] == ncon >= 4
        np.testing.assert_allclose(traj.q[k + 1], q1, rtol=0, atol=RTOL_EXACT)
        np.testing.assert_allclose(traj.v[k + 1], v1, rtol=0,
                                   atol=RTOL_EXACT * (1 + np.abs(v1).max()))


def _cap_on_box(tmp_path):
    """A box 1 mm into an upright cylinder's cap (clipped to the cap's 16 corners, of which
    MuJoCo 4.0's rotating search keeps four, meeting a tie on the way;
    tests/test_collision_convex.py): rbd's model and q, v."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the state")
    path = tmp_path / "cap.xml"
    path.write_text('<mujoco><worldbody><body><freejoint/><geom type="cylinder" size="0.1 0.15"/>'
                    '</body><body pos="0.01 0.02 0.229"><freejoint/>'
                    '<geom type="box" size="0.2 0.2 0.08"/></body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path)
    mujoco.mj_forward(mm, d)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    return model, q, v


def test_compiled_stage_gives_the_readable_four_cap_contacts(tmp_path):
    """The compiled stage keeps the readable stage's four of the cap's corners (the same
    search on a tie), lists nothing and warns of nothing; the forward pass has them."""
    model, q, v = _cap_on_box(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = {backend: rbd.collide(model, q, backend=backend)
                 for backend in ("reference", "kernel")}
        result = rbd.forward(model, q, v, backend="kernel")
    for got in found.values():
        assert len(got.dist) == 4 and got.unsupported == ()
    np.testing.assert_allclose(found["kernel"].pos, found["reference"].pos, rtol=0,
                               atol=STAGE_ATOL)
    assert len(result.contacts) == 4


def test_compiled_run_keeps_the_four_cap_contacts(tmp_path):
    """The compiled rollout (collide_into without the GIL) has the four contacts at every
    step and warns of nothing."""
    model, q, v = _cap_on_box(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traj = compiled_runs(model, q[None], v[None], 2, 0.002)[0]
    assert list(traj.contact_count) == [4, 4, 4]
