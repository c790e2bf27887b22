"""Collision detection against MuJoCo: every primitive pair, filters, broad phase, the ant.

MuJoCo (``mujoco`` in the test extra) is the peer: its ``d.geom_xpos``,
``d.geom_xmat`` and ``m.geom_size`` are the inputs, its ``d.contact`` the
expected output.
"""

from __future__ import annotations

import types
import warnings
import zlib

import numpy as np
import pytest

from rbd.constraints import collision as col
from rbd.constraints._backends import pair_functions
from rbd.constraints.collision_primitive import PairContacts

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the peer for the contact set")

#: Contact points, distances and frames: the same formulas in the same order as MuJoCo,
#: so only the last bits of rounding differ (sizes and distances are O(1)).
TOL = 1e-9
#: Compiled pair routine against its reference: the same statements in C, so the same
#: numbers up to a reordered sum or two (observed ≤ 1e-15 on O(1) sizes).
TOL_TWINS = 1e-12

SIZES = {
    "sphere": lambda rng: f"{rng.uniform(0.1, 0.5):.6f}",
    "capsule": lambda rng: f"{rng.uniform(0.05, 0.3):.6f} {rng.uniform(0.1, 0.5):.6f}",
    "cylinder": lambda rng: f"{rng.uniform(0.05, 0.4):.6f} {rng.uniform(0.1, 0.5):.6f}",
    "box": lambda rng: " ".join(f"{x:.6f}" for x in rng.uniform(0.05, 0.5, 3)),
    "ellipsoid": lambda rng: " ".join(f"{x:.6f}" for x in rng.uniform(0.1, 0.5, 3)),
}

PAIRS = [("plane", "sphere"), ("plane", "capsule"), ("plane", "box"), ("plane", "cylinder"),
         ("plane", "ellipsoid"), ("sphere", "sphere"), ("sphere", "capsule"),
         ("sphere", "cylinder"), ("sphere", "box"), ("capsule", "capsule"), ("capsule", "box"),
         ("box", "box")]


def _quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def _fmt(v):
    return " ".join(f"{x:.12f}" for x in v)


def _pair_xml(kind1, kind2, rng, margin, gap):
    """Two geoms near each other at random poses; a plane sits in the world."""
    attrs = f'margin="{margin}" gap="{gap}"'
    if kind1 == "plane":
        first = f'<geom type="plane" size="5 5 0.1" quat="{_fmt(_quat(rng))}" {attrs}/>'
        centre = rng.normal(scale=0.3, size=3)
        first = first.replace("<geom", f'<geom pos="{_fmt(centre)}"', 1)
    else:
        centre = rng.normal(scale=0.3, size=3)
        first = (f'<body pos="{_fmt(centre)}" quat="{_fmt(_quat(rng))}"><freejoint/>'
                 f'<geom type="{kind1}" size="{SIZES[kind1](rng)}" {attrs}/></body>')
    offset = rng.normal(size=3)
    offset *= rng.uniform(0.0, 0.8) / np.linalg.norm(offset)
    second = (f'<body pos="{_fmt(centre + offset)}" quat="{_fmt(_quat(rng))}"><freejoint/>'
              f'<geom type="{kind2}" size="{SIZES[kind2](rng)}" {attrs}/></body>')
    return f"<mujoco><worldbody>{first}{second}</worldbody></mujoco>"


def _forward(xml):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return m, d


def _expected(d):
    """MuJoCo's contacts as arrays."""
    n = d.ncon
    return types.SimpleNamespace(
        dist=np.array([c.dist for c in d.contact[:n]]),
        pos=np.array([c.pos for c in d.contact[:n]]).reshape(n, 3),
        frame=np.array([c.frame for c in d.contact[:n]]).reshape(n, 3, 3),
        geom=np.array([c.geom for c in d.contact[:n]]).reshape(n, 2),
        includemargin=np.array([c.includemargin for c in d.contact[:n]]),
        exclude=np.array([bool(c.exclude) for c in d.contact[:n]]),
        dim=np.array([c.dim for c in d.contact[:n]], dtype=int),
        friction=np.array([c.friction for c in d.contact[:n]]).reshape(n, 5),
        solref=np.array([c.solref for c in d.contact[:n]]).reshape(n, 2),
        solimp=np.array([c.solimp for c in d.contact[:n]]).reshape(n, 5),
    )


def _assert_same_contacts(got, want):
    assert got.dist.shape == want.dist.shape, (got.dist, want.dist)
    np.testing.assert_allclose(got.dist, want.dist, rtol=0, atol=TOL)
    np.testing.assert_allclose(got.pos, want.pos, rtol=0, atol=TOL)
    np.testing.assert_allclose(got.frame, want.frame, rtol=0, atol=TOL)


def _assert_same_set(got, want):
    """The same contacts, geoms and parameters (mixed values: a few roundings of O(1) numbers)."""
    _assert_same_contacts(got, want)
    np.testing.assert_array_equal(got.geom, want.geom)
    np.testing.assert_array_equal(got.condim, want.dim)
    np.testing.assert_array_equal(got.exclude, want.exclude)
    for name in ("friction", "solref", "solimp", "includemargin"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-14, atol=1e-15,
                                   err_msg=name)


def geoms_from_mujoco(m):
    """The geoms of a MuJoCo model as records that :func:`collide` reads (body key = body id)."""
    names = [None, *range(1, m.nbody)]
    kinds = {int(getattr(mujoco.mjtGeom, f"mjGEOM_{k.upper()}")): k for k in col.KINDS}
    geoms = [types.SimpleNamespace(
        name=str(g), body=names[m.geom_bodyid[g]], kind=kinds[int(m.geom_type[g])],
        size=m.geom_size[g].copy(), contype=int(m.geom_contype[g]),
        conaffinity=int(m.geom_conaffinity[g]), condim=int(m.geom_condim[g]),
        friction=m.geom_friction[g].copy(), solref=m.geom_solref[g].copy(),
        solimp=m.geom_solimp[g].copy(), solmix=float(m.geom_solmix[g]),
        margin=float(m.geom_margin[g]), gap=float(m.geom_gap[g]),
        priority=int(m.geom_priority[g])) for g in range(m.ngeom)]
    dofs = m.body_dofnum.copy()
    dofs[m.body_mocapid >= 0] = 0
    parents = tuple(int(p) if b else -1 for b, p in enumerate(m.body_parentid))
    bodies = col.BodyTree(tuple(names), parents, tuple(int(x) for x in dofs))
    pairs = [col.ContactPair(int(m.pair_geom1[k]), int(m.pair_geom2[k]), int(m.pair_dim[k]),
                             tuple(m.pair_friction[k]), tuple(m.pair_solref[k]),
                             tuple(m.pair_solreffriction[k]), tuple(m.pair_solimp[k]),
                             float(m.pair_margin[k]), float(m.pair_gap[k]))
             for k in range(m.npair)]
    excludes = [(names[s >> 16], names[s & 0xFFFF]) for s in m.exclude_signature]
    return geoms, bodies, pairs, excludes


def world_poses(d):
    poses = np.tile(np.eye(4), (d.geom_xpos.shape[0], 1, 1))
    poses[:, :3, :3] = d.geom_xmat.reshape(-1, 3, 3)
    poses[:, :3, 3] = d.geom_xpos
    return poses


def _collide_mujoco(m, d, **kwargs):
    geoms, bodies, pairs, excludes = geoms_from_mujoco(m)
    return col.collide(geoms, world_poses(d), bodies, pairs, excludes, **kwargs)


# ----------------------------------------------------------------------------- pair routines

def _routine(kinds, backend):
    """The pair routine of ``kinds`` on ``backend`` (each has a compiled twin)."""
    function = pair_functions(col.PAIR_FUNCTIONS, backend)[kinds]
    assert backend == "reference" or function is not col.PAIR_FUNCTIONS[kinds], kinds
    return lambda *args: PairContacts(*function(*args))


@pytest.mark.slow
@pytest.mark.parametrize("kinds", PAIRS, ids=lambda k: "-".join(k))
def test_pair_routines_match_mujoco(kinds, backend):
    """Each pair routine, fed MuJoCo's poses and sizes, returns MuJoCo's contacts."""
    rng = np.random.default_rng(zlib.crc32('-'.join(kinds).encode()))
    function = _routine(kinds, backend)
    ncontacts = 0
    for trial in range(60):
        margin, gap = (0.0, 0.0) if trial % 3 == 0 else (rng.uniform(0, 0.1), rng.uniform(0, 0.05))
        m, d = _forward(_pair_xml(*kinds, rng, margin, gap))
        g1, g2 = 0, 1                                   # already in MuJoCo's kind order
        mat = d.geom_xmat.reshape(-1, 3, 3)
        got = function(d.geom_xpos[g1], mat[g1], m.geom_size[g1], d.geom_xpos[g2], mat[g2],
                       m.geom_size[g2], 2 * margin + 2 * gap)
        want = _expected(d)
        if len(want.dist) and not len(got.dist):
            pytest.fail(f"trial {trial}: MuJoCo found {len(want.dist)} contacts, rbd none")
        if len(want.dist) == 0 and len(got.dist):
            # MuJoCo's bounding-sphere filter ran first; the pair routine alone may report
            # a contact it would never be asked for only if the spheres are apart
            assert col.sphere_filtered(kinds[0], m.geom_size[g1], d.geom_xpos[g1], mat[g1],
                                       kinds[1], m.geom_size[g2], d.geom_xpos[g2],
                                       2 * margin + 2 * gap)
            continue
        _assert_same_contacts(got, want)
        ncontacts += len(want.dist)
    assert ncontacts >= 20, "too few contacts to test the routine"


@pytest.mark.slow
@pytest.mark.parametrize("kinds", PAIRS, ids=lambda k: "-".join(k))
def test_collide_matches_mujoco_on_pairs(kinds):
    """The whole stage (filters, broad phase, margins, parameters) on random pairs."""
    rng = np.random.default_rng(1 + zlib.crc32('-'.join(kinds).encode()))
    for trial in range(20):
        margin, gap = (0.0, 0.0) if trial % 2 == 0 else (rng.uniform(0, 0.1), rng.uniform(0, 0.05))
        m, d = _forward(_pair_xml(*kinds, rng, margin, gap))
        got, want = _collide_mujoco(m, d), _expected(d)
        _assert_same_contacts(got, want)
        np.testing.assert_array_equal(got.geom, want.geom)
        np.testing.assert_array_equal(got.exclude, want.exclude)
        np.testing.assert_allclose(got.includemargin, want.includemargin, rtol=0, atol=1e-15)


#: Aligned and degenerate configurations, where the routines take their special branches:
#: parallel capsule axes, a disk flat on a plane, stacked aligned boxes (face ties), a
#: capsule along a box axis (divisions by a zero axis component), centres that coincide.
PLANE = '<geom type="plane" size="5 5 .1"/>'


def _free(geom, pos="0 0 0", euler="0 0 0"):
    """A free body at ``pos`` turned by ``euler`` (degrees) holding one geom."""
    return f'<body pos="{pos}" euler="{euler}"><freejoint/><geom {geom}/></body>'


SPECIAL = {
    "parallel capsules": _free('type="capsule" size=".1 .3"')
    + _free('type="capsule" size=".1 .2"', "0.05 0.15 0.1"),
    "crossed capsules": _free('type="capsule" size=".1 .3"')
    + _free('type="capsule" size=".1 .3"', "0 0 0.15", "90 0 0"),
    "standing cylinder": PLANE + _free('type="cylinder" size=".2 .3"', "0 0 0.29"),
    "lying cylinder": PLANE + _free('type="cylinder" size=".2 .3"', "0 0 0.19", "90 0 0"),
    "stacked boxes": _free('type="box" size=".3 .3 .1"')
    + _free('type="box" size=".2 .2 .1"', "0.05 0.02 0.19"),
    "twisted stack": _free('type="box" size=".3 .3 .1"')
    + _free('type="box" size=".2 .2 .1"', "0 0 0.19", "0 0 30"),
    "crossed box edges": _free('type="box" size=".2 .2 .2"', euler="45 0 0")
    + _free('type="box" size=".2 .2 .2"', "0 0 0.55", "0 45 0"),
    "box on plane": PLANE + _free('type="box" size=".2 .3 .1"', "0 0 0.09"),
    "capsule along box face": _free('type="box" size=".4 .3 .1"')
    + _free('type="capsule" size=".1 .2"', "0.1 0 0.18", "0 90 0"),
    "capsule past box edge": _free('type="box" size=".2 .3 .1"')
    + _free('type="capsule" size=".1 .2"', "0.3 0 0.18", "0 90 0"),
    "capsule upright on box": _free('type="box" size=".2 .3 .1"')
    + _free('type="capsule" size=".1 .2"', "0.05 0 0.35"),
    "sphere inside box": _free('type="box" size=".2 .3 .1"')
    + _free('type="sphere" size=".1"', "0.05 0.1 0.02"),
    "concentric spheres": _free('type="sphere" size=".2"')
    + _free('type="sphere" size=".1"', euler="30 0 0"),
    "sphere on cylinder cap": _free('type="cylinder" size=".3 .2"', euler="180 0 0")
    + _free('type="sphere" size=".1"', "0.1 0 0.28"),
    "sphere at cylinder rim": _free('type="cylinder" size=".3 .2"')
    + _free('type="sphere" size=".1"', "0.35 0 0.25"),
    "sphere inside cylinder": _free('type="cylinder" size=".3 .2"')
    + _free('type="sphere" size=".1"', "0.25 0 0.05"),
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_configurations_match_mujoco(name, backend):
    m, d = _forward(f"<mujoco><worldbody>{SPECIAL[name]}</worldbody></mujoco>")
    want = _expected(d)
    assert len(want.dist) > 0
    got = _collide_mujoco(m, d, backend=backend)
    _assert_same_contacts(got, want)
    np.testing.assert_array_equal(got.geom, want.geom)


@pytest.mark.slow
def test_parallel_capsules_match_mujoco(backend):
    """Exactly and nearly parallel (or antiparallel) capsules: MuJoCo's two-contact branch."""
    rng = np.random.default_rng(11)
    tested = 0
    for trial in range(240):
        angle = (0.0, 1e-9, 1e-6, 5e-5, 9e-5, 3e-4)[trial % 6]  # the last is beyond the branch
        q1 = _quat(rng)
        turn = np.array([0.0, 1.0, 0.0, 0.0]) if trial % 2 else np.array([1.0, 0.0, 0.0, 0.0])
        tilt = np.array([np.cos(angle / 2), 0.0, np.sin(angle / 2), 0.0])
        q2, q3 = np.zeros(4), np.zeros(4)
        mujoco.mju_mulQuat(q2, q1, turn)
        mujoco.mju_mulQuat(q3, q2, tilt)
        h1, h2, r1, r2 = rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5), *rng.uniform(0.05, 0.2, 2)
        xml = (f'<mujoco><worldbody><body quat="{_fmt(q1)}"><freejoint/>'
               f'<geom type="capsule" size="{r1} {h1}"/></body>'
               f'<body pos="{_fmt(rng.normal(size=3) * 0.3)}" quat="{_fmt(q3)}"><freejoint/>'
               f'<geom type="capsule" size="{r2} {h2}"/></body></worldbody></mujoco>')
        m, d = _forward(xml)
        want = _expected(d)
        tested += len(want.dist) == 2
        _assert_same_contacts(_collide_mujoco(m, d, backend=backend), want)
    assert tested >= 30


def _sorted_contacts(found):
    """The contacts ordered by their points (x, then y, then z)."""
    order = np.lexsort(np.round(found.pos, 9).T[::-1])
    return PairContacts(found.dist[order], found.pos[order], found.frame[order])


def _tilt(angle):
    """Rotation by ``angle`` about x."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _random_pose(rng, centre):
    q = _quat(rng)
    w, x, y, z = q
    mat = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return centre, mat


@pytest.mark.parametrize("kinds", PAIRS, ids=lambda k: "-".join(k))
def test_compiled_pair_routines_equal_the_reference(kinds, require_kernels):
    """Each compiled pair routine against its reference on random poses, sizes and
    margins (near, touching, apart), and on poses snapped to the degenerate branches
    (parallel axes, coincident centres, a cap or a disk flat on the other geom)."""
    compiled = _routine(kinds, "kernel")
    reference = col.PAIR_FUNCTIONS[kinds]
    rng = np.random.default_rng(7 + zlib.crc32('-'.join(kinds).encode()))
    contacts = 0
    for trial in range(200):
        size1, size2 = (np.array([float(x) for x in SIZES[kind](rng).split()] + [0.0, 0.0])[:3]
                        if kind != "plane" else np.array([5.0, 5.0, 0.1]) for kind in kinds)
        pos1, mat1 = _random_pose(rng, rng.normal(scale=0.3, size=3))
        offset = rng.normal(size=3)
        offset *= rng.uniform(0.0, 0.8) / np.linalg.norm(offset)
        pos2, mat2 = _random_pose(rng, pos1 + offset)
        if trial % 4 == 1:                                 # aligned axes: special branches
            mat2 = mat1.copy()
            if kinds == ("capsule", "box"):
                # exactly aligned, the capsule axis in the box frame has 1e-17 components
                # whose signs (NumPy's matmul against sequential sums) pick the branch:
                # tilt by 1e-7 rad so geometry decides (the exact cases: SPECIAL, MuJoCo)
                mat2 = mat1 @ _tilt(1e-7)
        if trial % 8 == 3:                                 # coincident centres
            pos2 = pos1.copy()
        margin = 0.0 if trial % 3 == 0 else rng.uniform(0, 0.15)
        got = compiled(pos1, mat1, size1, pos2, mat2, size2, margin)
        want = reference(pos1, mat1, size1, pos2, mat2, size2, margin)
        assert got.dist.shape == want.dist.shape, (trial, got.dist, want.dist)
        if trial % 4 == 1:
            # aligned boxes: the faces of either box tie as reference face up to 1e-17,
            # and rounding picks one; the contact set is the same, its order may not be
            got, want = _sorted_contacts(got), _sorted_contacts(want)
        for name in ("dist", "pos", "frame"):
            np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=0,
                                       atol=TOL_TWINS, err_msg=f"trial {trial}: {name}")
        contacts += len(want.dist)
    assert contacts >= 40, "too few contacts to compare the twins"


# ----------------------------------------------------------------------------- the whole stage

GYM_MODELS = ["ant.xml", "half_cheetah.xml", "hopper.xml", "humanoid.xml", "humanoidstandup.xml",
              "pusher.xml", "walker2d.xml", "point.xml"]


@pytest.mark.slow
@pytest.mark.parametrize("filename", GYM_MODELS)
def test_gymnasium_contact_sets_match_mujoco(filename):
    """States of a MuJoCo run under random controls: the same contact set as ``d.contact``."""
    gymnasium = pytest.importorskip("gymnasium", reason="gymnasium's MJCF files")
    import os

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", filename)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    ncontacts = 0
    for step in range(600):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_step(m, d)
        if step % 25 == 0:
            got = _collide_mujoco(m, d)
            assert got.unsupported == ()
            want = _expected(d)
            _assert_same_set(got, want)
            ncontacts += len(want.dist)
    assert ncontacts >= 10


FILTERS_XML = """
<mujoco>
  <option><flag {flag}/></option>
  <default><geom size=".1"/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1" friction="0.7 0.01 0.001"/>
    <geom name="post" type="box" size=".1 .1 .5" pos="1 0 0.5"/>
    <body name="a" pos="0 0 0.08"><freejoint/>
      <geom name="a0" type="capsule" size=".1 .2" euler="0 90 0" priority="1" condim="4"/>
      <geom name="a1" type="sphere" pos="0.2 0 0" solmix="3" solref="0.01 0.8"
            solimp="0.8 0.9 0.01 0.4 3"/>
      <body name="b" pos="0 0 0.15">
        <geom name="b0" type="box" size=".1 .1 .05" solimp="0.8 0.9 0.01 0.4 3"/>
        <body name="c" pos="0 0.1 0.1"><joint type="hinge" axis="1 0 0"/>
          <geom name="c0" type="sphere" size=".12" contype="2" conaffinity="2"
                friction="2 0.1 0.01"/>
        </body>
      </body>
    </body>
    <body name="d" pos="0.25 0.3 0.05"><freejoint/>
      <geom name="d0" type="box" size=".1 .08 .06" euler="10 20 30" contype="2" conaffinity="1"
            condim="6" solmix="0"/>
      <body name="e" pos="0.15 0 0.02"><joint type="slide" axis="0 0 1"/>
        <geom name="e0" type="sphere" size=".1" solref="-1000 -50"/>
      </body>
    </body>
    <body name="f" pos="0.9 0 0.2"><freejoint/>
      <geom name="f0" type="sphere" size=".15" margin="0.05" gap="0.02" contype="4"
            conaffinity="4"/>
    </body>
    <body name="g" pos="0.3 -0.1 0.2"><freejoint/>
      <geom name="g0" type="capsule" size=".08 .15" euler="30 40 0" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <contact>
    <pair geom1="c0" geom2="b0" condim="1" margin="0.02"/>
    <pair geom1="g0" geom2="a0" friction="0.3 0.3 0.01 0.001 0.001" solref="0.05 0.5"/>
    <pair geom1="f0" geom2="post" gap="0.01" margin="0.04"/>
    <exclude body1="d" body2="a"/>
  </contact>
</mujoco>
"""


@pytest.mark.parametrize("flag", ['filterparent="enable"', 'filterparent="disable"'])
def test_filters_pairs_and_mixing_match_mujoco(flag):
    """contype/conaffinity, welds, parent-child, pairs, excludes, priority, solmix, margins."""
    m = mujoco.MjModel.from_xml_string(FILTERS_XML.format(flag=flag))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    kinds = set()
    for _ in range(30):
        d.qpos[:] = m.qpos0 + rng.normal(scale=0.05, size=m.nq)
        mujoco.mj_forward(m, d)
        got = _collide_mujoco(m, d, filterparent=flag.endswith('enable"'))
        want = _expected(d)
        _assert_same_set(got, want)
        kinds |= {tuple(g) for g in want.geom}
    assert len(kinds) >= 7, "the scene should exercise several pairs"


def test_bitmask_and_body_filters():
    """The filter rules on small cases, each rule on its own."""
    g = types.SimpleNamespace
    assert col.bitmask_compatible(g(contype=1, conaffinity=0), g(contype=0, conaffinity=1))
    assert not col.bitmask_compatible(g(contype=2, conaffinity=2), g(contype=1, conaffinity=1))
    # world 0; body 1 free; body 2 welded to 1; body 3 hinged on 2; body 4 free
    tree = col.BodyTree((None, "a", "b", "c", "d"), (-1, 0, 1, 2, 0), (0, 6, 0, 1, 6))
    weld, parent, ndof = tree.weld, tree.parent, tree.ndof
    np.testing.assert_array_equal(weld, [0, 1, 1, 3, 4])
    assert col.body_pair_filtered(1, 2, weld, parent, ndof)          # welded together
    assert col.body_pair_filtered(2, 3, weld, parent, ndof)          # parent and child
    assert col.body_pair_filtered(1, 3, weld, parent, ndof)          # child of the weld
    assert not col.body_pair_filtered(2, 3, weld, parent, ndof, filterparent=False)
    assert not col.body_pair_filtered(0, 1, weld, parent, ndof)      # world: never a parent
    assert not col.body_pair_filtered(3, 4, weld, parent, ndof)


@pytest.mark.slow
def test_broad_phase_finds_every_overlap_without_testing_every_pair():
    """Sweep and prune: the overlapping pairs of brute force, in far fewer box tests."""
    rng = np.random.default_rng(2)
    n = 400
    centre = rng.uniform(0, 20, size=(n, 3))
    half = rng.uniform(0.05, 0.6, size=(n, 3))
    lower, upper = centre - half, centre + half
    brute = {(i, j) for i in range(n) for j in range(i + 1, n)
             if np.all(lower[i] <= upper[j]) and np.all(lower[j] <= upper[i])}
    found = col.broad_phase(lower, upper)
    assert set(found) == brute and len(found) == len(brute)
    assert len(brute) > 10


def test_sweep_work_grows_slower_than_all_pairs(monkeypatch):
    """The sweep compares a box only with the boxes still open along the sweep axis."""
    compared = []
    real_all = all

    def counting_all(iterable):
        compared.append(1)
        return real_all(iterable)

    monkeypatch.setattr(col, "all", counting_all, raising=False)
    rng = np.random.default_rng(4)
    n = 1000
    centre = np.column_stack([np.linspace(0, 500, n), rng.uniform(0, 1, (n, 2))])
    col.broad_phase(centre - 0.3, centre + 0.3)
    assert len(compared) < n * 3           # all pairs would be n (n - 1) / 2 ~ 500 000


def test_bounding_radius_is_mujocos():
    xml = "<mujoco><worldbody><body><freejoint/>" + "".join(
        f'<geom type="{kind}" size="{SIZES[kind](np.random.default_rng(i))}"/>'
        for i, kind in enumerate(SIZES)) + "</body></worldbody></mujoco>"
    m = mujoco.MjModel.from_xml_string(xml)
    for g, kind in enumerate(SIZES):
        radius = col.bounding_radius(kind, m.geom_size[g])
        assert radius == pytest.approx(m.geom_rbound[g], rel=1e-15)


def test_cylinder_standing_on_a_box_has_four_contacts():
    """A cylinder standing on a box (its cap clipped to the 16-gon's corners, four kept by
    MuJoCo 4.0's rotating search, tests/test_collision_multiccd.py): MuJoCo's number of
    contacts, nothing listed and nothing warned."""
    xml = ('<mujoco><worldbody><body><freejoint/><geom type="box" size=".2 .2 .2"/></body>'
           '<body pos="0 0 .399"><freejoint/><geom type="cylinder" size=".1 .2"/></body>'
           '</worldbody></mujoco>')
    m, d = _forward(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _collide_mujoco(m, d)
    assert got.unsupported == () and len(got.dist) == d.ncon == 4


def test_bad_poses_are_refused():
    from rbd.errors import InputError

    m, d = _forward("<mujoco><worldbody><geom type='sphere' size='.1'/></worldbody></mujoco>")
    geoms, bodies, _, _ = geoms_from_mujoco(m)
    with pytest.raises(InputError, match="poses"):
        col.collide(geoms, np.zeros((2, 4, 4)), bodies)
    poses = world_poses(d)
    poses[0, 0, 3] = np.nan
    with pytest.raises(InputError, match="poses"):
        col.collide(geoms, poses, bodies)


# ----------------------------------------------------------------------------- rbd.collide

def test_rbd_collide_needs_geoms():
    import rbd
    from rbd.errors import ModelError

    with pytest.raises(ModelError, match="model.geoms"):
        rbd.collide(types.SimpleNamespace(name="bare"), np.zeros(0))


@pytest.mark.slow
def test_rbd_collide_on_the_ant_matches_mujoco():
    """``rbd.collide`` on the loaded ant: MuJoCo's contacts at states of a MuJoCo run."""
    gymnasium = pytest.importorskip("gymnasium", reason="gymnasium's ant.xml")
    import os

    import rbd
    from rbd.mjcf._state import from_mujoco_state

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "ant.xml")
    model = rbd.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(path)
    # the loaded model carries every geom of the file, in MuJoCo's order
    assert [g.name for g in model.geoms] == [
        mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom)]
    d = mujoco.MjData(m)
    rng = np.random.default_rng(8)
    name = {g: mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom)}
    ncontacts = 0
    states, expected = [], []
    for step in range(1000):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_step(m, d)
        if step % 20:
            continue
        mujoco.mj_forward(m, d)
        q = from_mujoco_state(model, d.qpos)[0]
        states.append(q)
        got, want = rbd.collide(model, q), _expected(d)
        expected.append(want)
        _assert_same_contacts(got, want)
        for (a, b), (c, e) in zip(got.geom, want.geom, strict=True):
            named = (name[c], name[e])
            assert (model.geoms[a].name, model.geoms[b].name) == named or None in named
        ncontacts += len(want.dist)
    assert ncontacts >= 10
    for got, want in zip(rbd.collide(model, np.array(states)), expected, strict=True):
        _assert_same_contacts(got, want)                 # stacked states: one set each


def test_unknown_kind_is_refused():
    from rbd.errors import InputError

    m, d = _forward("<mujoco><worldbody><geom type='sphere' size='.1'/></worldbody></mujoco>")
    geoms, bodies, _, _ = geoms_from_mujoco(m)
    geoms[0].kind = "torus"
    with pytest.raises(InputError, match="torus"):
        col.collide(geoms, world_poses(d), bodies)


def test_mesh_candidates_are_reported():
    """A mesh geom without its hull (the records read from MuJoCo's model carry none) has no
    routine: a mesh on the floor is reported, not silently dropped."""
    xml = ('<mujoco><asset><mesh name="tet" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>'
           '<worldbody><geom type="plane" size="5 5 .1"/><body pos="0 0 -0.1"><freejoint/>'
           '<geom type="mesh" mesh="tet"/></body></worldbody></mujoco>')
    m, d = _forward(xml)
    assert d.ncon > 0
    with pytest.warns(UserWarning, match="mesh"):
        got = _collide_mujoco(m, d)
    assert got.unsupported == ((0, 1),)


def test_bad_pairs_and_excludes_are_refused():
    from rbd.errors import InputError

    m, d = _forward("<mujoco><worldbody><geom type='sphere' size='.1'/></worldbody></mujoco>")
    geoms, bodies, _, _ = geoms_from_mujoco(m)
    with pytest.raises(InputError, match="excludes"):
        col.collide(geoms, world_poses(d), bodies, excludes=[(None, "nowhere")])
    with pytest.raises(InputError, match="pairs"):
        col.collide(geoms, world_poses(d), bodies, pairs=[col.ContactPair(0, 3)])


def test_body_tree_of_an_rbd_model():
    """World first, parents shifted by one, a fixed joint welds a body to its parent."""
    import rbd
    from rbd.constraints.collision import body_tree

    model = rbd.Model()
    model.add_body(None, rbd.Free(), name="base")
    model.add_body("base", rbd.Fixed(), name="plate")
    model.add_body("plate", rbd.Revolute((0.0, 0.0, 1.0)), name="arm")
    model.add_body(None, rbd.Fixed(), name="table")
    tree = body_tree(model)
    assert tree.names == (None, "base", "plate", "arm", "table")
    assert tree.parent == (-1, 0, 1, 2, 0)
    np.testing.assert_array_equal(tree.weld, [0, 1, 1, 3, 0])
    weld, parent, ndof = tree.weld, tree.parent, tree.ndof
    assert col.body_pair_filtered(1, 2, weld, parent, ndof)        # plate welded to base
    assert col.body_pair_filtered(2, 3, weld, parent, ndof)        # arm's weld parent is base
    assert col.body_pair_filtered(0, 4, weld, parent, ndof)        # table welded to the world
    assert not col.body_pair_filtered(3, 4, weld, parent, ndof)
