"""Collision detection against MuJoCo: every primitive pair, filters, broad phase, the ant.

MuJoCo (``mujoco`` in the test extra) is the peer: its ``d.geom_xpos``,
``d.geom_xmat`` and ``m.geom_size`` are the inputs, its ``d.contact`` the
expected output.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from rbd.constraints import collision as col

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the peer for the contact set")

#: Contact points, distances and frames: the same formulas in the same order as MuJoCo,
#: so only the last bits of rounding differ (sizes and distances are O(1)).
TOL = 1e-9

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
    bodies = col.BodyTree(tuple(names), tuple(int(p) if b else -1 for b, p in
                                              enumerate(m.body_parentid)), tuple(int(x) for x in dofs))
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

@pytest.mark.parametrize("kinds", PAIRS, ids=lambda k: "-".join(k))
def test_pair_routines_match_mujoco(kinds):
    """Each pair routine, fed MuJoCo's poses and sizes, returns MuJoCo's contacts."""
    rng = np.random.default_rng(abs(hash(kinds)) % 2**32)
    function = col.PAIR_FUNCTIONS[kinds]
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


@pytest.mark.parametrize("kinds", PAIRS, ids=lambda k: "-".join(k))
def test_collide_matches_mujoco_on_pairs(kinds):
    """The whole stage (filters, broad phase, margins, parameters) on random pairs."""
    rng = np.random.default_rng(1 + abs(hash(kinds)) % 2**32)
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
SPECIAL = {
    "parallel capsules": '<body pos="0 0 0"><freejoint/><geom type="capsule" size=".1 .3"/></body>'
                         '<body pos="0.05 0.15 0.1"><freejoint/><geom type="capsule" size=".1 .2"/></body>',
    "crossed capsules": '<body><freejoint/><geom type="capsule" size=".1 .3"/></body>'
                        '<body pos="0 0 0.15" euler="90 0 0"><freejoint/>'
                        '<geom type="capsule" size=".1 .3"/></body>',
    "standing cylinder": '<geom type="plane" size="5 5 .1"/><body pos="0 0 0.29"><freejoint/>'
                         '<geom type="cylinder" size=".2 .3"/></body>',
    "lying cylinder": '<geom type="plane" size="5 5 .1"/><body pos="0 0 0.19" euler="90 0 0">'
                      '<freejoint/><geom type="cylinder" size=".2 .3"/></body>',
    "stacked boxes": '<body><freejoint/><geom type="box" size=".3 .3 .1"/></body>'
                     '<body pos="0.05 0.02 0.19"><freejoint/><geom type="box" size=".2 .2 .1"/></body>',
    "twisted stack": '<body><freejoint/><geom type="box" size=".3 .3 .1"/></body>'
                     '<body pos="0 0 0.19" euler="0 0 30"><freejoint/><geom type="box" size=".2 .2 .1"/>'
                     '</body>',
    "crossed box edges": '<body><freejoint/><geom type="box" size=".2 .2 .2" euler="45 0 0"/></body>'
                         '<body pos="0 0 0.55"><freejoint/><geom type="box" size=".2 .2 .2" euler="0 45 0"/>'
                         '</body>',
    "box on plane": '<geom type="plane" size="5 5 .1"/><body pos="0 0 0.09"><freejoint/>'
                    '<geom type="box" size=".2 .3 .1"/></body>',
    "capsule along box face": '<body><freejoint/><geom type="box" size=".4 .3 .1"/></body>'
                              '<body pos="0.1 0 0.18" euler="0 90 0"><freejoint/>'
                              '<geom type="capsule" size=".1 .2"/></body>',
    "capsule past box edge": '<body><freejoint/><geom type="box" size=".2 .3 .1"/></body>'
                             '<body pos="0.3 0 0.18" euler="0 90 0"><freejoint/>'
                             '<geom type="capsule" size=".1 .2"/></body>',
    "capsule upright on box": '<body><freejoint/><geom type="box" size=".2 .3 .1"/></body>'
                              '<body pos="0.05 0 0.35"><freejoint/><geom type="capsule" size=".1 .2"/>'
                              '</body>',
    "sphere inside box": '<body><freejoint/><geom type="box" size=".2 .3 .1"/></body>'
                         '<body pos="0.05 0.1 0.02"><freejoint/><geom type="sphere" size=".1"/></body>',
    "concentric spheres": '<body><freejoint/><geom type="sphere" size=".2"/></body>'
                          '<body euler="30 0 0"><freejoint/><geom type="sphere" size=".1"/></body>',
    "sphere on cylinder cap": '<body><freejoint/><geom type="cylinder" size=".3 .2" euler="180 0 0"/>'
                              '</body><body pos="0.1 0 0.28"><freejoint/><geom type="sphere" size=".1"/>'
                              '</body>',
    "sphere at cylinder rim": '<body><freejoint/><geom type="cylinder" size=".3 .2"/></body>'
                              '<body pos="0.35 0 0.25"><freejoint/><geom type="sphere" size=".1"/></body>',
    "sphere inside cylinder": '<body><freejoint/><geom type="cylinder" size=".3 .2"/></body>'
                              '<body pos="0.25 0 0.05"><freejoint/><geom type="sphere" size=".1"/></body>',
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_configurations_match_mujoco(name):
    m, d = _forward(f"<mujoco><worldbody>{SPECIAL[name]}</worldbody></mujoco>")
    want = _expected(d)
    assert len(want.dist) > 0
    got = _collide_mujoco(m, d)
    _assert_same_contacts(got, want)
    np.testing.assert_array_equal(got.geom, want.geom)


def test_parallel_capsules_match_mujoco():
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
        _assert_same_contacts(_collide_mujoco(m, d), want)
    assert tested >= 30
