"""The compiled collision stage (``rbd/_kernels/collision.pyx``) against its reference.

``rbd.collide`` on the kernel backend runs the static pair table of
``CollisionModel`` and ``collide_into``; the reference (``collision.py``) runs the
filters, sweep and prune and assembly in Python.  Both must give the same
contact set, in the same order, with the same parameters; MuJoCo is the peer of
both (``tests/test_collision.py`` checks the reference against ``d.contact``,
here the compiled path is checked against it too).
"""

from __future__ import annotations

import os
import types
import warnings

import numpy as np
import pytest
from test_collision import (
    FILTERS_XML,
    _assert_same_set,
    _expected,
    geoms_from_mujoco,
    world_poses,
)

import rbd
from rbd.constraints import collision as col
from rbd.constraints.collision import compiled_collision as table_of
from rbd.constraints.collision import static_table
from rbd.errors import InputError

mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the states and the peer contacts")

#: Kernel against reference: the same statements in the same order except the geom
#: pose (4×4 product in NumPy, 3×3 product plus translation in C): O(1) values that
#: differ in the last bits (observed ≤ 1e-15).
TOL_TWINS = 1e-12

GYM = ["ant", "hopper", "walker2d", "half_cheetah", "humanoid", "humanoidstandup", "pusher",
       "reacher", "inverted_pendulum", "inverted_double_pendulum", "swimmer"]


@pytest.fixture(autouse=True)
def _kernels(require_kernels):
    """Every test here is about the compiled stage: skipped on the pure-Python path."""


def _kernel_module():
    from rbd._kernels import collision

    return collision


def _assert_identical(got, want):
    """The same contact set: arrays of the same shapes, values to TOL_TWINS, same integers."""
    assert got._fields == want._fields
    assert got.unsupported == want.unsupported
    for name in got._fields[:-1]:
        a, b = getattr(got, name), getattr(want, name)
        assert a.shape == b.shape and a.dtype.kind == b.dtype.kind, name
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=0, atol=TOL_TWINS, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)


def _gym(name):
    gymnasium = pytest.importorskip("gymnasium", reason="the models are gymnasium's MJCFs")
    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                        name + ".xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # left-out actuators, springs
        model = rbd.load_mjcf(path)
    return model, mujoco.MjModel.from_xml_path(path)


def _noisy_states(model, m, steps=400, every=40, seed=0):
    """rbd configurations (and MuJoCo's contacts) along a MuJoCo run from a noisy start."""
    from rbd.mjcf import from_mujoco_state

    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    d.qpos[:] = m.qpos0 + rng.uniform(-0.1, 0.1, m.nq)
    d.qvel[:] = rng.normal(size=m.nv)
    mujoco.mj_normalizeQuat(m, d.qpos)
    states, contacts = [], []
    for step in range(steps):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_step(m, d)
        if step % every == every - 1:
            mujoco.mj_forward(m, d)
            states.append(from_mujoco_state(model, d.qpos, d.qvel)[0])
            contacts.append(_expected(d))
    return np.array(states), contacts


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:collide. no primitive routine")   # pusher's cylinders
@pytest.mark.parametrize("name", GYM)
def test_gymnasium_contact_sets_equal_the_reference(name):
    """Kernel and reference: identical contact sets along a noisy MuJoCo run, and MuJoCo's."""
    model, m = _gym(name)
    states, peer = _noisy_states(model, m)
    kernel = rbd.collide(model, states, backend="kernel")
    reference = rbd.collide(model, states, backend="reference")
    assert len(kernel) == len(reference) == len(states)
    for got, want, expected in zip(kernel, reference, peer, strict=True):
        _assert_identical(got, want)
        assert len(got) <= table_of(model).max_contacts
        if [g.name for g in model.geoms] == [
                mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom)]:
            _assert_same_set(got, expected)          # the file's geoms, in MuJoCo's order
    if name in ("ant", "hopper", "walker2d", "humanoid", "half_cheetah"):
        assert sum(len(c) for c in kernel) > 0, "the run should touch the floor"


def _records_with_poses(m):
    """MuJoCo's geoms as collide records, each with its pose in its body's frame."""
    geoms, bodies, pairs, excludes = geoms_from_mujoco(m)
    for g, record in enumerate(geoms):
        pose = np.eye(4)
        mat = np.zeros(9)
        mujoco.mju_quat2Mat(mat, m.geom_quat[g])
        pose[:3, :3], pose[:3, 3] = mat.reshape(3, 3), m.geom_pos[g]
        record.pose = pose
    return geoms, bodies, pairs, excludes


@pytest.mark.parametrize("flag", ['filterparent="enable"', 'filterparent="disable"'])
def test_explicit_pairs_and_excludes_equal_the_reference_and_mujoco(flag):
    """FILTERS_XML's scene (bitmasks, welds, parent-child, pairs, exclude, mixing, margins)."""
    m = mujoco.MjModel.from_xml_string(FILTERS_XML.format(flag=flag))
    d = mujoco.MjData(m)
    geoms, bodies, pairs, excludes = _records_with_poses(m)
    filterparent = flag.endswith('enable"')
    table = _kernel_module().CollisionModel
    compiled = table(**static_table(geoms, bodies, pairs, excludes, filterparent))
    bare = table(**static_table(geoms, bodies, (), (), filterparent))
    rng = np.random.default_rng(5)
    seen, differs = set(), False
    for _ in range(30):
        d.qpos[:] = m.qpos0 + rng.normal(scale=0.05, size=m.nq)
        mujoco.mj_forward(m, d)
        R, p = d.xmat[1:].reshape(-1, 3, 3), d.xpos[1:]
        got = col.Contacts(*compiled.collide(R, p))
        want = col.collide(geoms, world_poses(d), bodies, pairs, excludes, filterparent)
        _assert_identical(got, want)
        _assert_same_set(got, _expected(d))
        seen |= {tuple(g) for g in got.geom}
        without = col.Contacts(*bare.collide(R, p))
        differs |= {tuple(g) for g in without.geom} != {tuple(g) for g in got.geom}
    explicit = {tuple(sorted((p.geom1, p.geom2))) for p in pairs}
    assert explicit & {tuple(sorted(g)) for g in seen}, "an explicit pair should touch"
    assert differs, "pairs and excludes should change the contact set"


def test_routine_table_is_the_references():
    """One compiled routine for each primitive kind pair of PAIR_FUNCTIONS, no other: the GJK
    pairs of collision_convex too (collision_convex.pyx), so that no primitive model is
    reference only (rbd.constraints.collision.reference_only)."""
    found = _kernel_module().CollisionModel.routine_kinds(len(col.KINDS))
    primitive = {pair for pair in col.PAIR_FUNCTIONS if not {"hfield", "mesh"} & set(pair)}
    assert {(col.KINDS[a], col.KINDS[b]) for a, b in found} == primitive


def _box_stack():
    """Two boxes resting on a floor, the top one face down on the bottom one."""
    model = rbd.Model()
    model.add_body(None, rbd.Free(), name="low")
    model.add_body(None, rbd.Free(), name="high")
    model.add_geom("floor", None, "plane", (5.0, 5.0, 0.1))
    model.add_geom("low", "low", "box", (0.2, 0.2, 0.1))
    model.add_geom("high", "high", "box", (0.1, 0.1, 0.1))
    q = np.zeros(model.nq)
    q[[6, 13]] = 1.0                                     # identity quaternions (x, y, z, w)
    q[2], q[9] = 0.099, 0.298                            # slight penetrations
    return model, q


def test_capacity_overflow_is_refused_and_exact_capacity_suffices():
    model, q = _box_stack()
    found = rbd.collide(model, q, backend="kernel")
    assert len(found) == 8                               # 4 box corners on the floor, 4 on the box
    table = table_of(model)
    assert table.max_contacts == 4 + 4 + 8               # plane-box twice, box-box
    T = rbd.forward_kinematics(model, q)
    R, p = T[:, :3, :3], T[:, :3, 3]
    with pytest.raises(InputError, match="capacity"):
        table.collide(R, p, capacity=len(found) - 1)
    _assert_identical(col.Contacts(*table.collide(R, p, capacity=len(found))), found)


def test_a_geom_added_later_is_not_served_stale():
    """The compiled table follows model.geoms: a new geom after the first call collides."""
    model, q = _box_stack()
    before = rbd.collide(model, q, backend="kernel")
    model.add_geom("ball", "high", "sphere", (0.05,), (np.eye(3), [0.0, 0.0, -0.25]))
    after = rbd.collide(model, q, backend="kernel")
    assert len(after) > len(before)
    _assert_identical(after, rbd.collide(model, q, backend="reference"))


def test_excludes_set_later_are_not_served_stale():
    model, q = _box_stack()
    rbd.collide(model, q, backend="kernel")
    model.contact_excludes = (("low", "high"),)
    try:
        got = rbd.collide(model, q, backend="kernel")
        assert not any(set(g) == {1, 2} for g in got.geom.tolist())
        _assert_identical(got, rbd.collide(model, q, backend="reference"))
    finally:
        del model.contact_excludes


def test_cylinder_standing_on_a_table_is_the_reference_stage():
    """A can standing on a table (its cap clipped to more than four points, the rotating
    search on a tie): both stages give the same four contacts, list nothing and warn of
    nothing; high above the table, none."""
    model = rbd.Model()
    model.add_body(None, rbd.Free(), name="can")
    model.add_geom("table", None, "box", (1.0, 1.0, 0.1))
    model.add_geom("can", "can", "cylinder", (0.1, 0.2))
    near = np.array([0.0, 0.0, 0.29, 0.0, 0.0, 0.0, 1.0])   # standing on the table
    far = np.array([0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 1.0])     # high above it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rbd.collide(model, near, backend="kernel")
        away = rbd.collide(model, far, backend="kernel")
        want = rbd.collide(model, near, backend="reference")
    assert len(got.dist) == len(want.dist) == 4 and got.unsupported == want.unsupported == ()
    np.testing.assert_allclose(got.pos, want.pos, rtol=0, atol=1e-12)
    assert len(away.dist) == 0 and away.unsupported == ()


def test_bad_body_poses_are_refused():
    model, q = _box_stack()
    table = table_of(model)
    with pytest.raises(InputError, match="R, p"):
        table.collide(np.zeros((1, 3, 3)), np.zeros((1, 3)))


def test_stacked_states_give_one_set_each():
    model, q = _box_stack()
    lifted = q.copy()
    lifted[[2, 9]] += 1.0
    got = rbd.collide(model, np.array([q, lifted, q]), backend="kernel")
    assert [len(c) for c in got] == [8, 4, 8]            # lifted: only the boxes touch
    for c in got:
        assert isinstance(c, col.Contacts)
    _assert_identical(got[0], got[2])


def test_records_without_poses_are_refused():
    geoms = [types.SimpleNamespace(name="s", body=None, kind="sphere", size=np.ones(3),
                                   pose=np.full((4, 4), np.nan), contype=1, conaffinity=1)]
    with pytest.raises(InputError, match="pose"):
        static_table(geoms, col.BodyTree.free([None]))


def _heap(n, seed):
    """n free bodies (sphere, capsule or box each) dropped into a small bin over a floor."""
    rng = np.random.default_rng(seed)
    model = rbd.Model()
    model.add_geom("floor", None, "plane", (5.0, 5.0, 0.1))
    kinds = {"sphere": (0.1,), "capsule": (0.05, 0.1), "box": (0.08, 0.05, 0.1)}
    for k in range(n):
        model.add_body(None, rbd.Free(), name=f"b{k}")
        kind = list(kinds)[k % 3]
        model.add_geom(f"g{k}", f"b{k}", kind, kinds[kind])
    q = np.zeros(model.nq)
    for k in range(n):
        quat = rng.normal(size=4)
        q[7 * k:7 * k + 3] = rng.uniform(-0.6, 0.6, 3) + [0.0, 0.0, 0.5]
        q[7 * k + 3:7 * k + 7] = quat / np.linalg.norm(quat)
    return model, q


def test_sweep_and_prune_finds_the_references_pairs():
    """Many free bodies: the table is large, the compiled sweep and prune runs, and it keeps
    the very pairs of the reference (and of the box test per pair)."""
    model, q = _heap(40, 3)
    table = table_of(model)
    assert table.sweeps and table.npairs == 40 * 39 // 2 + 40
    got = rbd.collide(model, q, backend="kernel")
    _assert_identical(got, rbd.collide(model, q, backend="reference"))
    touching = {tuple(g) for g in got.geom.tolist() if 0 not in g}
    assert len(touching) >= 5, "bodies should touch each other, not only the floor"
    arrays = static_table(model.geoms, col.body_tree(model))
    per_pair = _kernel_module().CollisionModel(**arrays, sweep=0)
    assert not per_pair.sweeps
    T = rbd.forward_kinematics(model, q)
    _assert_identical(col.Contacts(*per_pair.collide(T[:, :3, :3], T[:, :3, 3])), got)


def test_the_ant_tests_its_few_pairs_one_by_one():
    """A filtered robot: few boxed pairs per geom, no sweep (docs/design.md)."""
    model, _ = _gym("ant")
    table = table_of(model)
    assert not table.sweeps and table.npairs == 13
