"""MJCF reader: cross-checks against MuJoCo, conventions, includes, errors and warnings."""

from __future__ import annotations

import os
import pathlib
import warnings

import numpy as np
import pytest
from helpers import RTOL_EXACT

import rbd
from rbd import mjcf
from rbd.errors import InputError, MJCFError, ModelError
from rbd.spatial import plux_parts

mujoco = pytest.importorskip("mujoco", reason="the MuJoCo cross-checks need PyPI 'mujoco'")

DATA = pathlib.Path(__file__).parent / "data" / "mjcf"

# Poses compose a handful of rotations: round-off only.
ATOL_POSE = 1e-12
STATES = 3  # random states per model


def _gymnasium_assets() -> list[pathlib.Path]:
    try:
        import gymnasium
    except ImportError:
        return []
    folder = pathlib.Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
    return sorted(folder.glob("*.xml"))


ASSETS = _gymnasium_assets()


def _quiet_load(path) -> rbd.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the unsupported-features warning
        return mjcf.load_mjcf(path)


def _mujoco(path, armature: bool):
    """MuJoCo model and data with only the tree dynamics left (no constraints or passive forces)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mujoco.MjModel.from_xml_path(str(path))
    if not armature:
        m.dof_armature[:] = 0.0
    disable = mujoco.mjtDisableBit
    m.opt.disableflags |= (disable.mjDSBL_CONSTRAINT | disable.mjDSBL_SPRING
                           | disable.mjDSBL_DAMPER)
    d = mujoco.MjData(m)
    mujoco.mj_setConst(m, d)  # MuJoCo caches armature in dof_M0 for simple bodies
    return m, d


def _relative(x, reference) -> float:
    return float(np.abs(x - reference).max() / max(np.abs(reference).max(), 1e-300))


def _compare(model, m, d, rng, backend) -> list[float]:
    """Largest relative differences of M, bias forces and inverse dynamics over random states."""
    worst = [0.0, 0.0, 0.0]
    for _ in range(STATES):
        q = rbd.random_configuration(model, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        qpos, qvel, qacc = mjcf.to_mujoco_state(model, q, v, a)
        _, _, qacc0 = mjcf.to_mujoco_state(model, q, v, np.zeros(model.nv))
        d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc0
        mujoco.mj_inverse(m, d)  # M qacc0 + qfrc_bias: rbd's bias forces at a = 0
        h_mj = mjcf.from_mujoco_force(model, qpos, d.qfrc_inverse)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        d.qacc[:] = qacc
        mujoco.mj_inverse(m, d)
        tau_mj = mjcf.from_mujoco_force(model, qpos, d.qfrc_inverse)
        T = mjcf.mujoco_velocity_map(model, q)
        worst[0] = max(worst[0], _relative(rbd.crba(model, q, backend=backend), T.T @ M_mj @ T))
        worst[1] = max(worst[1], _relative(rbd.nonlinear_effects(model, q, v, backend=backend),
                                           h_mj))
        worst[2] = max(worst[2], _relative(rbd.rnea(model, q, v, a, backend=backend), tau_mj))
    return worst


def _zero_armature(model) -> None:
    for name in model.joint_names:
        model.set_joint_properties(name, armature=0.0)


#: The assets whose joints have armature (the others would pass without it).
ARMATURE_ASSETS = [p for p in ASSETS if np.any(_quiet_load(p).armature)]


# --- gymnasium's models -----------------------------------------------------------------------
def test_gymnasium_assets_found():
    pytest.importorskip("gymnasium", reason="the asset cross-check needs PyPI 'gymnasium'")
    assert len(ASSETS) >= 10, f"expected gymnasium's MuJoCo assets, found {ASSETS}"


@pytest.mark.parametrize("path", ASSETS, ids=[p.name for p in ASSETS])
def test_gymnasium_asset_matches_mujoco(path, backend, rng):
    model = _quiet_load(path)
    _zero_armature(model)
    m, d = _mujoco(path, armature=False)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    worst = _compare(model, m, d, rng, backend)
    assert max(worst) < RTOL_EXACT, f"M, h, tau relative differences {worst}"


@pytest.mark.parametrize("path", ARMATURE_ASSETS, ids=[p.name for p in ARMATURE_ASSETS])
def test_gymnasium_asset_with_armature_matches_mujoco(path, backend, rng):
    model = _quiet_load(path)
    m, d = _mujoco(path, armature=True)
    np.testing.assert_allclose(model.armature, m.dof_armature, rtol=0, atol=0)
    worst = _compare(model, m, d, rng, backend)
    assert max(worst) < RTOL_EXACT, f"M, h, tau relative differences {worst}"


def test_armature_is_read():
    """The armature of gymnasium's pusher is 0.04 on every joint (its joint default)."""
    path = next((p for p in ASSETS if p.name == "pusher.xml"), None)
    if path is None:
        pytest.skip("gymnasium's pusher.xml is not installed")
    model = _quiet_load(path)
    np.testing.assert_array_equal(model.armature, np.full(model.nv, 0.04))


@pytest.mark.parametrize("path", ASSETS, ids=[p.name for p in ASSETS])
def test_gymnasium_joint_layout_is_mujocos(path):
    model = _quiet_load(path)
    m, _ = _mujoco(path, armature=True)
    kinds = {0: "free", 1: "spherical", 2: "prismatic", 3: "revolute"}
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        i = model.body_index(name) if name in model.body_names else model._joint_body(name)
        assert model.bodies[i].joint.kind == kinds[int(m.jnt_type[j])]
        assert model.q_slice(name).start == m.jnt_qposadr[j]
        assert model.v_slice(name).start == m.jnt_dofadr[j]
    for b in range(1, m.nbody):  # an unnamed body is called "body<id>"
        assert (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}") in model.frames


def test_humanoid_warns_once_listing_what_is_left_out():
    path = next((p for p in ASSETS if p.name == "humanoid.xml"), None)
    if path is None:
        pytest.skip("gymnasium's humanoid.xml is not installed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mjcf.load_mjcf(path)
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    text = str(caught[0].message)
    assert "actuators (17" in text
    # hinge springs and fixed tendons are modelled (rbd.forward): abdomen_z's stiffness
    # and the tendons left_hipknee, right_hipknee are not listed
    assert "joint springs" not in text and "tendons" not in text


# --- every construct, against MuJoCo ---------------------------------------------------------
FEATURE_FILES = ["features.xml", "radian.xml", "with_include.xml"]


def _pose(model, X_world, name):
    """World rotation and position of a body or an attached frame."""
    if name in model.body_names:
        T = X_world[model.body_names.index(name)]
        return T[:3, :3], T[:3, 3]
    frame = model.frames[name]
    E, r = plux_parts(frame.X)
    T = X_world[frame.body]
    return T[:3, :3] @ E.T, T[:3, 3] + T[:3, :3] @ r


@pytest.mark.parametrize("name", FEATURE_FILES)
def test_feature_model_poses_match_mujoco(name, rng):
    """Body and site poses: orientations, joint anchors, ref, frames, welded bodies."""
    model = mjcf.load_mjcf(DATA / name)
    m, d = _mujoco(DATA / name, armature=False)
    for _ in range(STATES):
        q = rbd.random_configuration(model, rng)
        d.qpos[:] = mjcf.to_mujoco_state(model, q)[0]
        mujoco.mj_kinematics(m, d)
        X = rbd.forward_kinematics(model, q)
        for kind, count, xmat, xpos in ((mujoco.mjtObj.mjOBJ_BODY, m.nbody, d.xmat, d.xpos),
                                        (mujoco.mjtObj.mjOBJ_SITE, m.nsite, d.site_xmat,
                                         d.site_xpos)):
            for i in range(count):
                label = mujoco.mj_id2name(m, kind, i)
                if label not in model.frames:
                    continue  # the world and bodies welded to it
                R, p = _pose(model, X, label)
                np.testing.assert_allclose(R, xmat[i].reshape(3, 3), atol=ATOL_POSE,
                                           err_msg=label)
                np.testing.assert_allclose(p, xpos[i], atol=ATOL_POSE, err_msg=label)


@pytest.mark.parametrize("name", FEATURE_FILES)
def test_feature_model_dynamics_match_mujoco(name, backend, rng):
    model = mjcf.load_mjcf(DATA / name)
    _zero_armature(model)
    m, d = _mujoco(DATA / name, armature=False)
    np.testing.assert_allclose(model.gravity, m.opt.gravity, rtol=0, atol=0)
    worst = _compare(model, m, d, rng, backend)
    assert max(worst) < RTOL_EXACT, f"M, h, tau relative differences {worst}"


def test_feature_model_properties():
    model = mjcf.load_mjcf(DATA / "features.xml")
    m, _ = _mujoco(DATA / "features.xml", armature=True)
    assert model.name == "features"
    assert model.joint_names == [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
                                 for j in range(m.njnt)]
    np.testing.assert_allclose(model.armature, m.dof_armature, rtol=1e-15)
    np.testing.assert_allclose(model.damping, m.dof_damping, rtol=1e-15)
    np.testing.assert_allclose(model.friction, m.dof_frictionloss, rtol=1e-15)
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        qs = model.q_slice(name)
        if m.jnt_limited[j] and m.jnt_type[j] in (2, 3):  # slide, hinge
            np.testing.assert_allclose([model.lower[qs][0], model.upper[qs][0]],
                                       m.jnt_range[j], rtol=1e-15)
        else:
            assert np.all(np.isinf(model.lower[qs])) and np.all(np.isinf(model.upper[qs]))
    # the tool welded to "arm" and its inertia, the sites as frames
    assert {"tool", "tip", "imu"} <= set(model.frames)
    total = sum(m.body_mass[1:])
    assert model.total_mass == pytest.approx(total, rel=1e-14)


# --- MuJoCo's conventions --------------------------------------------------------------------
def test_state_conversions_round_trip_and_keep_power(rng):
    model = mjcf.load_mjcf(DATA / "features.xml")
    q = np.stack([rbd.random_configuration(model, rng) for _ in range(4)])
    v, a, tau = (rng.normal(size=(4, model.nv)) for _ in range(3))
    qpos, qvel, qacc = mjcf.to_mujoco_state(model, q, v, a)
    back = mjcf.from_mujoco_state(model, qpos, qvel, qacc)
    # a rotation and its inverse: a few units in the last place of entries up to ~5
    for x, y in zip(back, (q, v, a), strict=True):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-14)
    qfrc = mjcf.to_mujoco_force(model, q, tau)
    np.testing.assert_allclose(mjcf.from_mujoco_force(model, qpos, qfrc), tau, atol=1e-14)
    # power is the same in both coordinates, and qvel = T v
    np.testing.assert_allclose(np.sum(qfrc * qvel, axis=1), np.sum(tau * v, axis=1),
                               rtol=1e-14)
    np.testing.assert_allclose(qvel[0], mjcf.mujoco_velocity_map(model, q[0]) @ v[0],
                               atol=1e-14)
    # quaternions: MuJoCo's (w, x, y, z) at rbd's (x, y, z, w)
    np.testing.assert_array_equal(qpos[:, 3], q[:, 6])
    np.testing.assert_array_equal(qpos[:, 4:7], q[:, 3:6])


def test_conversions_refuse_joints_mujoco_lacks():
    model = rbd.Model()
    model.add_body(-1, rbd.Helical([0, 0, 1], 0.1), None, (1.0, [0, 0, 0], np.eye(3)))
    with pytest.raises(InputError, match="helical joint has no MuJoCo equivalent"):
        mjcf.to_mujoco_state(model, [0.0])
    with pytest.raises(InputError, match="qacc needs qvel"):
        mjcf.from_mujoco_state(mjcf.load_mjcf(DATA / "radian.xml"), [0, 0], None, [0, 0])


# --- choosing the reader ----------------------------------------------------------------------
def test_load_chooses_the_reader(tmp_path):
    urdf = pathlib.Path(__file__).parent / "data" / "meshes.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert mjcf.load(urdf).body_names == rbd.load_urdf(urdf).body_names
    assert mjcf.load(DATA / "radian.xml").joint_names == ["pivot", "second"]
    copy = tmp_path / "robot.xml"  # a URDF without the suffix: the root element decides
    copy.write_bytes(urdf.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert mjcf.load(copy).body_names == rbd.load_urdf(urdf).body_names
    text = "<?xml version='1.0'?>\n<!-- a pendulum -->\n" + (DATA / "radian.xml").read_text()
    assert mjcf.load(text).nq == 2
    with pytest.raises(InputError, match="root element is <sdf>"):
        mjcf.load("<sdf version='1.6'/>")


# --- bad files ----------------------------------------------------------------------------------
def _body(inner: str) -> str:
    return f"<mujoco><worldbody><body name='b'>{inner}</body></worldbody></mujoco>"


def _body_cases(table: str) -> dict[str, tuple[str, str]]:
    """Lines ``name: <body name='b'> content``, each followed by the pattern its error matches."""
    lines = [line.strip() for line in table.strip().splitlines()]
    cases = [line.partition(": ") for line in lines[0::2]]
    return {name: (_body(inner), pattern)
            for (name, _, inner), pattern in zip(cases, lines[1::2], strict=True)}


BAD = {
    **_body_cases(r"""
unknown joint type: <joint name='j' type='screw'/><geom size='0.1'/>
    <joint name='j'> of body 'b'.*unknown joint type 'screw'
non-physical inertia: <joint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 3'/>
    body 'b': non-physical inertia.*triangle inequality
negative mass: <joint/><inertial pos='0 0 0' mass='-1' diaginertia='1 1 1'/>
    body 'b': negative mass
unknown mesh: <joint/><geom name='shell' type='mesh' mesh='m'/>
    <geom name='shell'> of body 'b'.*unknown mesh 'm'
free joint below the top: <geom size='0.1'/><body name='c'><freejoint/><geom size='0.1'/></body>
    body 'c': a free joint is allowed only
inverted range: <joint name='j' range='1 -1'/><geom size='0.1'/>
    <joint name='j'>.*range\[0\] < range\[1\]
unknown class: <joint class='nope'/><geom size='0.1'/>
    unknown default class 'nope'
composite: <composite type='grid' count='2 2 1'/>
    body 'b': <composite> is not supported
misspelt element: <jiont/><geom size='0.1'/>
    <body name='b'> in <worldbody>: unknown element <jiont>
two orientations: <joint/><geom size='0.1' quat='1 0 0 0' euler='0 0 1'/>
    <geom #0> of body 'b': more than one orientation
"""),
    "DOCTYPE": ("<!DOCTYPE mujoco>" + _body("<joint/>"), r"unsafe XML refused.*DOCTYPE"),
    "entities": ('<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
                 "<mujoco model='&b;'/>", r"unsafe XML refused"),
    "include from a string": ("<mujoco><include file='x.xml'/></mujoco>",
                              r"<include file='x.xml'>: a model given as a string"),
    "wrong root": ("<robot name='r'/>", r"root element is <robot>, expected <mujoco>"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_mjcf_is_refused(case):
    xml, message = BAD[case]
    with pytest.raises(MJCFError, match=message):
        mjcf.load_mjcf(xml)


def _write(folder: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_includes_go_up_and_read_mujocoinclude_fragments(tmp_path):
    """As MuJoCo: paths relative to the main file's folder may leave it (metaworld's tasks
    include ``../objects/...``), and an included file's root may be <mujocoinclude>."""
    _write(tmp_path, "assets/arm.xml",
           "<mujocoinclude><body name='arm'><joint name='j'/><geom size='0.1'/></body>"
           "</mujocoinclude>")
    _write(tmp_path, "assets/defaults.xml",
           "<mujoco><default><joint damping='0.5'/></default></mujoco>")
    main = _write(tmp_path, "tasks/main.xml",
                  "<mujoco><include file='../assets/defaults.xml'/>"
                  "<worldbody><include file='../assets/arm.xml'/></worldbody></mujoco>")
    model = mjcf.load_mjcf(main)
    m = mujoco.MjModel.from_xml_path(str(main))
    assert model.joint_names == ["j"] and m.njnt == 1
    np.testing.assert_array_equal(model.damping, m.dof_damping)


def test_repeated_top_level_defaults_add_to_main():
    """MuJoCo reads a second top-level <default> into the same class 'main'."""
    xml = ("<mujoco><default><joint damping='2'/></default>"
           "<default><geom density='10'/><default class='c'><joint armature='1'/></default>"
           "</default><worldbody><body><joint name='a'/><geom size='0.1'/></body>"
           "<body><joint name='b' class='c'/><geom size='0.1'/></body></worldbody></mujoco>")
    model = mjcf.load_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    np.testing.assert_array_equal(model.damping, m.dof_damping)
    np.testing.assert_array_equal(model.armature, m.dof_armature)
    assert model.bodies[0].mass == pytest.approx(m.body_mass[1])


def test_renamed_top_level_default_is_refused():
    with pytest.raises(MJCFError, match="top-level class is 'main'"):
        mjcf.load_mjcf("<mujoco><default class='x'/></mujoco>")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_as_model_or_include_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    with pytest.raises(MJCFError, match="not a regular file"):
        mjcf.load_mjcf(fifo)
    main = _write(tmp_path, "main.xml", "<mujoco><include file='pipe.xml'/></mujoco>")
    with pytest.raises(MJCFError, match="not a regular file"):
        mjcf.load_mjcf(main)


def test_deep_include_nesting_is_read_without_recursion(tmp_path):
    depth = 300
    for k in range(depth):
        inner = f"<include file='f{k + 1}.xml'/>" if k + 1 < depth else ""
        _write(tmp_path, f"f{k}.xml", f"<mujocoinclude>{inner}</mujocoinclude>")
    main = _write(tmp_path, "main.xml", "<mujoco><include file='f0.xml'/></mujoco>")
    assert mjcf.load_mjcf(main).nbodies == 0


def test_include_cycle_is_refused(tmp_path):
    a = _write(tmp_path, "a.xml", "<mujoco><include file='b.xml'/></mujoco>")
    _write(tmp_path, "b.xml", "<mujoco><include file='a.xml'/></mujoco>")
    with pytest.raises(MJCFError, match=r"include cycle: 'a.xml' -> 'b.xml' -> 'a.xml'"):
        mjcf.load_mjcf(a)
    self_loop = _write(tmp_path, "self.xml", "<mujoco><include file='self.xml'/></mujoco>")
    with pytest.raises(MJCFError, match="include cycle"):
        mjcf.load_mjcf(self_loop)


def test_include_with_doctype_is_refused(tmp_path):
    main = _write(tmp_path, "main.xml", "<mujoco><include file='part.xml'/></mujoco>")
    _write(tmp_path, "part.xml", "<!DOCTYPE mujoco><mujoco/>")
    with pytest.raises(MJCFError, match="included file 'part.xml': unsafe XML refused"):
        mjcf.load_mjcf(main)


def test_include_from_a_string_with_a_directory():
    text = (DATA / "with_include.xml").read_text()
    model = mjcf.load_mjcf(text, directory=DATA)
    assert model.joint_names == ["shoulder", "elbow"]
    np.testing.assert_array_equal(model.damping, [0.5, 0.5])


def test_a_clean_model_loads_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mjcf.load_mjcf(DATA / "features.xml")


# --- every MJCF of gymnasium's and dm-control's packages ---------------------------------------
def _package_files(name: str, below: str = "") -> list[pathlib.Path]:
    """The ``.xml`` files of an installed package, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(pathlib.Path(list(spec.submodule_search_locations)[0], below).rglob("*.xml"))


CORPUS = _package_files("gymnasium", "envs") + _package_files("dm_control")
CORPUS_IDS = [f"{p.parent.name}/{p.name}" for p in CORPUS]

#: A mesh body's inertia: MuJoCo keeps a mesh's moments in a principal frame found by Jacobi
#: rotations that stop at 1e-7 of the largest element, dropping what is left off the
#: diagonal, and rbd runs the same iteration (``rbd.mjcf._principal.eig3``), so the kept
#: tensors agree to rounding: measured 1.5e-15 relative on the turned boxes below (the exact
#: tensor differs by up to 9e-8), 8e-14 over the corpus (dm-control's fruit fly).
RTOL_MESH_INERTIA = 1e-12


#: MuJoCo places a geom whose frame is within 1e-6 of its body's frame or inertial frame
#: (``geom_sameframe`` not 0) *at* that frame; its own compiled frame is the reference there.


def test_corpus_is_installed():
    pytest.importorskip("gymnasium", reason="the corpus needs PyPI 'gymnasium'")
    if not _package_files("dm_control"):
        pytest.skip("dm-control is not installed (pip install dm-control)")
    assert len(CORPUS) > 60


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_every_file_mujoco_loads_rbd_loads_with_mujocos_dynamics(path, backend, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m = mujoco.MjModel.from_xml_path(str(path))
        except ValueError:
            pytest.skip("MuJoCo refuses this file too")
    model = _quiet_load(path)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    if model.nv == 0:
        return
    np.testing.assert_array_equal(model.armature, m.dof_armature)  # compared with it
    disable = mujoco.mjtDisableBit
    m.opt.disableflags |= (disable.mjDSBL_CONSTRAINT | disable.mjDSBL_SPRING
                           | disable.mjDSBL_DAMPER)
    d = mujoco.MjData(m)
    mujoco.mj_setConst(m, d)
    worst = _compare(model, m, d, rng, backend)
    assert max(worst) < RTOL_EXACT, f"M, h, tau relative differences {worst}"


def _mj_pose(pos, quat):
    T = np.eye(4)
    w, x, y, z = quat
    T[:3, :3] = rbd.spatial.quat_to_rot(np.array([x, y, z, w]))
    T[:3, 3] = pos
    return T


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_geom_and_body_world_poses_match_mujoco(path, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m = mujoco.MjModel.from_xml_path(str(path))
        except ValueError:
            pytest.skip("MuJoCo refuses this file too")
    model = _quiet_load(path)
    d = mujoco.MjData(m)
    skipped = (int(mujoco.mjtGeom.mjGEOM_HFIELD), int(mujoco.mjtGeom.mjGEOM_SDF))
    theirs = [g for g in range(m.ngeom) if int(m.geom_type[g]) not in skipped]
    assert len(theirs) == len(model.geoms)
    for k, g in enumerate(theirs):
        assert model.geoms[k].kind == mujoco.mjtGeom(m.geom_type[g]).name[7:].lower()
    for _ in range(2):
        q = rbd.random_configuration(model, rng)
        d.qpos[:] = mjcf.to_mujoco_state(model, q)[0]
        mujoco.mj_kinematics(m, d)
        W = rbd.geom_poses(model, q)
        for k, g in enumerate(theirs):
            P = W[k]
            if model.geoms[k].kind == "mesh":  # MuJoCo re-centres it on the mesh's inertia
                mesh = m.geom_dataid[g]
                P = P @ _mj_pose(m.mesh_pos[mesh], m.mesh_quat[mesh])
            expected = _mj_pose(d.geom_xpos[g], [1, 0, 0, 0])
            expected[:3, :3] = d.geom_xmat[g].reshape(3, 3)
            if model.geoms[k].kind == "mesh" and m.geom_sameframe[g]:
                # MuJoCo snaps the re-centred mesh frame, which rbd does not keep: compare
                # with the mesh's own pose in its body
                body = _mj_pose(d.xpos[m.geom_bodyid[g]], [1, 0, 0, 0])
                body[:3, :3] = d.xmat[m.geom_bodyid[g]].reshape(3, 3)
                expected = body @ _mj_pose(m.geom_pos[g], m.geom_quat[g])
            label = model.geoms[k].name
            np.testing.assert_allclose(P, expected, atol=ATOL_POSE, err_msg=label)
        for b in range(1, m.nbody):  # body frames too, where rbd keeps them
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
            if name in model.frames:
                T = rbd.frame_pose(model, q, name)
                np.testing.assert_allclose(T[:3, :3], d.xmat[b].reshape(3, 3), atol=ATOL_POSE,
                                           err_msg=name)
                np.testing.assert_allclose(T[:3, 3], d.xpos[b], atol=ATOL_POSE, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=CORPUS_IDS)
def test_body_mass_properties_match_mujoco(path):
    """``body_mass``, ``body_ipos`` and the inertia tensor of ``body_iquat``/``body_inertia``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m = mujoco.MjModel.from_xml_path(str(path))
        except ValueError:
            pytest.skip("MuJoCo refuses this file too")
    links = mjcf._body_inertias(path)
    for b, link in enumerate(links, start=1):
        if link is None:
            continue  # welded to the world: its inertia is never used
        w, x, y, z = m.body_iquat[b]
        R = rbd.spatial.quat_to_rot(np.array([x, y, z, w]))
        I = R @ np.diag(m.body_inertia[b]) @ R.T
        label = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        assert link.mass == pytest.approx(m.body_mass[b], rel=RTOL_EXACT), label
        np.testing.assert_allclose(link.com, m.body_ipos[b],
                                   atol=RTOL_EXACT * max(1.0, np.abs(m.body_ipos[b]).max()),
                                   err_msg=label)
        np.testing.assert_allclose(link.I_com, I, atol=RTOL_EXACT * max(np.abs(I).max(), 1e-300),
                                   err_msg=label)


_BOX_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                        dtype=float) * [0.5, 1.0, 1.5]
_BOX_FACES = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7],
              [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]


@pytest.mark.parametrize("scale", [1.0, 1e-3])
@pytest.mark.parametrize("angle", [1e-3, 1e-5, 1e-6, 5e-7, 1e-7])
def test_mesh_inertia_is_mujocos_principal_moments(scale, angle):
    """A box mesh turned slightly off its axes: MuJoCo's Jacobi iteration leaves up to 1e-7 of
    the tensor off its principal frame (or does not turn at all) and drops it; rbd keeps the
    same tensor, to RTOL_MESH_INERTIA (the exact one differs by 3e-8 to 9e-8 at 1e-3, 5e-7
    and 1e-7 rad)."""
    axis = np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    turn = rbd.spatial.quat_to_rot(np.concatenate([np.sin(angle / 2) * axis,
                                                   [np.cos(angle / 2)]]))
    vertices = ((scale * _BOX_CORNERS) @ turn.T).astype(np.float32)
    numbers = " ".join(map(repr, vertices.ravel().tolist()))
    xml = (f"<mujoco><asset><mesh name='m' vertex='{numbers}'"
           f" face='{' '.join(str(i) for i in np.ravel(_BOX_FACES))}'/></asset><worldbody>"
           "<body><joint/><geom type='mesh' mesh='m'/></body></worldbody></mujoco>")
    m = mujoco.MjModel.from_xml_string(xml)
    (link,) = mjcf._body_inertias(xml)
    w, x, y, z = m.body_iquat[1]
    R = rbd.spatial.quat_to_rot(np.array([x, y, z, w]))
    I = R @ np.diag(m.body_inertia[1]) @ R.T
    assert link.mass == pytest.approx(m.body_mass[1], rel=RTOL_EXACT)
    np.testing.assert_allclose(link.I_com, I, rtol=0, atol=RTOL_MESH_INERTIA * np.abs(I).max())


_MOCAP = ("<mujoco><worldbody><body name='target' mocap='true' pos='1 2 3' euler='0.1 0.2 0.3'>"
          "<geom size='0.1'/><site name='tip' pos='0 0 0.5'/><body name='badge' pos='0 1 0'>"
          "<geom size='0.1'/></body></body><body name='arm' pos='0 0 1'><joint name='j'/>"
          "<geom type='capsule' size='0.1' fromto='0 0 0 1 0 0'/></body></worldbody></mujoco>")


def test_mocap_bodies_are_frames_at_their_pose(rng):
    """A mocap body is welded to the world at its pose (MuJoCo's default ``mocap_pos``): it,
    its sites and its welded children are frames where MuJoCo puts them; no mass is added."""
    with pytest.warns(RuntimeWarning, match="mocap motion"):
        model = mjcf.load_mjcf(_MOCAP)
    m = mujoco.MjModel.from_xml_string(_MOCAP)
    d = mujoco.MjData(m)
    q = rbd.random_configuration(model, rng)
    d.qpos[:] = mjcf.to_mujoco_state(model, q)[0]
    mujoco.mj_kinematics(m, d)
    for name, xpos, xmat in (("target", d.body("target").xpos, d.body("target").xmat),
                             ("badge", d.body("badge").xpos, d.body("badge").xmat),
                             ("tip", d.site("tip").xpos, d.site("tip").xmat),
                             ("arm", d.body("arm").xpos, d.body("arm").xmat)):
        T = rbd.frame_pose(model, q, name)
        np.testing.assert_allclose(T[:3, 3], xpos, atol=ATOL_POSE, err_msg=name)
        np.testing.assert_allclose(T[:3, :3], xmat.reshape(3, 3), atol=ATOL_POSE, err_msg=name)
    assert (model.nq, model.nv) == (m.nq, m.nv)
    assert model.total_mass == pytest.approx(m.body("arm").mass[0], rel=RTOL_EXACT)
    # the mocap bodies' geoms are where MuJoCo draws them
    W = rbd.geom_poses(model, q)
    for k in range(m.ngeom):
        np.testing.assert_allclose(W[k][:3, 3], d.geom_xpos[k], atol=ATOL_POSE)


def test_dm_control_mocap_bodies_are_frames():
    path = next((p for p in CORPUS if p.name == "cartpole.xml" and p.parent.name == "assets"
                 and "testing" in p.parts), None)
    if path is None:
        pytest.skip("dm-control's testing cartpole.xml is not installed")
    model = _quiet_load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    q = mjcf.from_mujoco_state(model, d.qpos)[0]
    for name in ("mocap1", "mocap2"):
        assert m.body(name).mocapid[0] >= 0
        np.testing.assert_allclose(rbd.frame_pose(model, q, name)[:3, 3], d.body(name).xpos,
                                   atol=ATOL_POSE)


# --- deep files and the file's own names in messages -------------------------------------------
@pytest.mark.slow
def test_thousands_of_nested_bodies_and_frames_are_read():
    depth = 3000
    bodies = ("<body><joint/><geom size='0.1'/>" * depth + "</body>" * depth)
    model = mjcf.load_mjcf(f"<mujoco><worldbody>{bodies}</worldbody></mujoco>")
    assert model.nbodies == depth
    frames = ("<frame pos='0 0 1'>" * depth + "<geom size='0.1'/>" + "</frame>" * depth)
    model = mjcf.load_mjcf(f"<mujoco><worldbody><body><joint/>{frames}</body></worldbody>"
                           "</mujoco>")
    assert model.geoms[0].pose[2, 3] == depth


@pytest.mark.parametrize("inner, message", [
    ("<body><joint type='screw'/></body>",
     "<joint #0> of <body #0> (unnamed) of body 'top': unknown joint type 'screw'"),
    ("<body/><body><geom size='0.1' quat='0 0 0 0'/></body>",
     "<geom #0> of <body #1> (unnamed) of body 'top': quat is zero"),
    ("<body><inertial pos='0 0 0' mass='-1' diaginertia='1 1 1'/><joint/></body>",
     "<body #0> (unnamed) of body 'top': negative mass"),
])
def test_messages_name_the_files_elements_not_generated_names(inner, message):
    xml = f"<mujoco><worldbody><body name='top'>{inner}</body></worldbody></mujoco>"
    with pytest.raises(MJCFError) as info:
        mjcf.load_mjcf(xml)
    assert message in str(info.value)
    assert "body2" not in str(info.value)


def test_sites_keep_their_names():
    """A site named like a joint is that name's frame; one named like a body is "site:<name>"."""
    xml = ("<mujoco><worldbody><body name='thigh'><joint name='knee'/><geom size='0.1'/>"
           "<site name='knee' pos='0 0 -0.4'/><site name='thigh' pos='0 0 0.1'/></body>"
           "</worldbody></mujoco>")
    model = mjcf.load_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    q = np.array([0.7])
    d.qpos[:] = q
    mujoco.mj_kinematics(m, d)
    for frame, site in (("knee", "knee"), ("site:thigh", "thigh")):
        T = rbd.frame_pose(model, q, frame)
        np.testing.assert_allclose(T[:3, 3], d.site(site).xpos, atol=ATOL_POSE)
    assert "knee_0" not in model.frames


def test_a_site_clashing_twice_is_refused():
    xml = ("<mujoco><worldbody><body name='a'><joint/><geom size='0.1'/><site name='a'/>"
           "</body><body name='site:a'><joint/><geom size='0.1'/></body></worldbody></mujoco>")
    with pytest.raises(MJCFError, match=r"<site name='a'> of body 'a': body 'site:a' already"):
        mjcf.load_mjcf(xml)


def test_the_warning_points_at_the_callers_line():
    path = DATA / "features.xml"
    xml = path.read_text().replace("</worldbody>", "</worldbody><actuator><motor name='m'/>"
                                   "</actuator>", 1)
    for load in (mjcf.load_mjcf, rbd.load, mjcf.load):
        with pytest.warns(RuntimeWarning, match="leaves out") as record:
            load(xml)
        assert record[0].filename == __file__, load


# --- unknown elements, attributes and values: refused, as MuJoCo refuses them ------------------
@pytest.mark.parametrize("inner, message", [
    ("<joint/><geom type='cylindre' size='0.1 0.2'/>", "unknown geom type 'cylindre'"),
    ("<joint/><geom size='0.1' densty='100'/>",
     "<geom> in <body name='b'>: unknown attribute 'densty' (did you mean 'density'?)"),
    ("<joint/><geom size='0.1'/><jiont/>",
     "<body name='b'> in <worldbody>: unknown element <jiont> (did you mean <joint>?)"),
    ("<joint limited='maybe'/><geom size='0.1'/>", "limited='maybe' must be one of"),
])
def test_unknown_elements_attributes_and_values_are_refused_like_mujoco(inner, message):
    xml = _body(inner)
    with pytest.raises(ValueError):  # MuJoCo refuses the file too
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(MJCFError) as info:
        mjcf.load_mjcf(xml)
    assert message in str(info.value)


def test_unknown_attribute_in_a_default_class_is_refused():
    xml = ("<mujoco><default><default class='c'><geom densty='5'/></default></default>"
           "<worldbody/></mujoco>")
    with pytest.raises(MJCFError,
                       match=r"<geom> in <default class='c'>: unknown attribute 'densty'"):
        mjcf.load_mjcf(xml)


# --- free-joint armature ----------------------------------------------------------------------
_ARMED = ("<mujoco><option gravity='0 0 -9.81'/><worldbody><body pos='0 0 1'>"
          "<joint name='root' type='free'/><geom type='box' size='0.1 0.2 0.3'/>"
          "<body pos='0.2 0 0'><joint name='h' axis='0 1 0'/><geom size='0.05'/></body>"
          "</body></worldbody><default><joint armature='0.3'/></default></mujoco>")


def _armed_state(model, m, rng):
    d = mujoco.MjData(m)
    q, v = rbd.random_configuration(model, rng), rng.normal(size=model.nv)
    qpos, qvel, _ = mjcf.to_mujoco_state(model, q, v)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    return q, v, qpos, d


def test_free_joint_armature_enters_m_as_in_mujoco(rng):
    """An isotropic armature on the free joint's linear part is the same in the body and the
    world frame, so M agrees (M_rbd = Tᵀ M_mj T)."""
    model, m = mjcf.load_mjcf(_ARMED), mujoco.MjModel.from_xml_string(_ARMED)
    np.testing.assert_array_equal(model.armature, m.dof_armature)
    q, _, _, d = _armed_state(model, m, rng)
    M_mj = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M_mj)
    T = mjcf.mujoco_velocity_map(model, q)
    assert _relative(rbd.crba(model, q), T.T @ M_mj @ T) < RTOL_EXACT


def test_free_joint_armature_bias_is_mujocos(rng, backend):
    """MuJoCo applies a free joint's armature to the world-frame linear velocity ``R u``:
    the bias gains ``a (ω × u)`` in rbd's body-frame coordinates (h, τ and q̈ all see it)."""
    model, m = mjcf.load_mjcf(_ARMED), mujoco.MjModel.from_xml_string(_ARMED)
    q, v, qpos, d = _armed_state(model, m, rng)
    M_mj = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M_mj)
    _, _, qacc0 = mjcf.to_mujoco_state(model, q, v, np.zeros(model.nv))
    h_mj = mjcf.from_mujoco_force(model, qpos, d.qfrc_bias + M_mj @ qacc0)
    assert _relative(rbd.nonlinear_effects(model, q, v, backend=backend), h_mj) < RTOL_EXACT
    # forward dynamics at zero force: MuJoCo's qacc (smooth dynamics, no constraints here)
    qdd = rbd.aba(model, q, v, np.zeros(model.nv), backend=backend)
    qacc = mjcf.to_mujoco_state(model, q, v, qdd)[2]
    assert _relative(qacc, d.qacc_smooth) < RTOL_EXACT
    tau = rbd.rnea(model, q, v, qdd, backend=backend)
    assert np.abs(tau).max() < RTOL_EXACT * np.abs(h_mj).max()


def test_free_joint_armature_must_be_isotropic_on_the_linear_part():
    model = mjcf.load_mjcf(_ARMED)
    with pytest.raises(ModelError, match="'root': a free joint's armature .* same on its "
                                         "three linear degrees of freedom"):
        model.set_joint_properties("root", armature=[0.1, 0.1, 0.1, 0.3, 0.3, 0.4])
    np.testing.assert_array_equal(model.armature[:6], np.full(6, 0.3))  # unchanged
    model.set_joint_properties("root", armature=[0.1, 0.2, 0.3, 0.4, 0.4, 0.4])


def test_a_huge_axis_is_a_direction():
    """Its norm overflows (MuJoCo 4.0 itself compiles a zero axis); rbd keeps the direction."""
    xml = _body("<joint name='j' axis='1e300 0 1e300'/><geom size='0.1'/>")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        axis = mjcf.load_mjcf(xml).bodies[0].joint.axis
    np.testing.assert_allclose(axis, np.array([1.0, 0.0, 1.0]) / np.sqrt(2), atol=1e-15)
