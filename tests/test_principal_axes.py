"""MuJoCo's principal axes (rbd.mjcf._principal): inertial frames and mesh frames of real files.

MuJoCo's compiler diagonalizes a body's inertia summed from its geoms (``body_iquat``,
``body_inertia``) and a mesh's inertia (``mesh_quat``) by a Jacobi iteration whose
stopping rule decides the axes where two moments are close (dm_control's dog: 3e-11 apart
in its tail vertebrae; gymnasium's humanoid arms: equal).  rbd runs the same iteration on
the same sums, so its frames are MuJoCo's to rounding.
"""

from __future__ import annotations

import importlib.util
import pathlib
import warnings

import numpy as np
import pytest
from helpers import dm_control_asset

from rbd.errors import MJCFError
from rbd.mjcf import _Context, _defaults, _document, _read_assets, _read_compiler, _read_world
from rbd.mjcf._principal import BODY_TOL, MESH_TOL, eig3, principal_frame, quat_rotation

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")

#: Inertial and mesh frames against MuJoCo 4.0's: the same iteration on tensors summed in
#: MuJoCo's order, what is left is rounding in the tensors (rbd reads meshes and composes
#: frames with rotation matrices where MuJoCo uses quaternions).  Measured over the 69
#: gymnasium and dm_control files MuJoCo loads: 251 inertial frames within 3.4e-13, 572
#: mesh frames within 1.0e-12 (the fruit fly's smallest tarsus meshes).
FRAME_ATOL = 5e-12

#: Moments (largest-element relative) of the same bodies: 1.2e-15 measured on dog.
MOMENTS_RTOL = 1e-13


def _package_file(package: str, *parts: str) -> pathlib.Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed: its MJCFs are the test models")
    return pathlib.Path(list(spec.submodule_search_locations)[0], *parts)


FILES = {
    "dog": lambda: dm_control_asset("dog"),
    "humanoid_CMU": lambda: dm_control_asset("humanoid_CMU"),
    "fruitfly": lambda: _package_file("dm_control", "locomotion", "walkers", "assets",
                                      "fruitfly_v2", "fruitfly.xml"),
    "gymnasium-humanoid": lambda: _package_file("gymnasium", "envs", "mujoco", "assets",
                                                "humanoid.xml"),
    "manipulator": lambda: dm_control_asset("manipulator"),
}


def _read(path):
    """rbd's reading of ``path`` (its bodies and assets) and MuJoCo's model."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mujoco.MjModel.from_xml_path(str(path))
    root, directory = _document(path, None)
    ctx = _Context(_read_compiler(root), _defaults(root), {})
    ctx.assets = _read_assets(root, ctx, directory)
    _read_world(root, ctx)
    return ctx, m


def _axes(body):
    """The body's inertial axes, None without (one geom's frame; an inertia rbd refuses on
    a body welded to the world, which it never uses)."""
    try:
        return body.inertial_axes
    except MJCFError:
        return None


def _same_rotation(R, quat, label):
    np.testing.assert_allclose(R, quat_rotation(quat), rtol=0, atol=FRAME_ATOL, err_msg=label)


@pytest.mark.slow
@pytest.mark.parametrize("name", FILES)
def test_inertial_frames_are_mujocos(name):
    """Each body whose inertial frame MuJoCo diagonalizes (several geoms, a fullinertia):
    rbd's axes are ``body_iquat``'s, its central inertia has ``body_inertia`` as moments."""
    ctx, m = _read(FILES[name]())
    compared = 0
    for b, body in enumerate(ctx.bodies, start=1):
        R = _axes(body)
        if R is None:
            continue
        _same_rotation(R, m.body_iquat[b], body.name)
        moments = np.diag(R.T @ body.link.I_com @ R)
        np.testing.assert_allclose(moments, m.body_inertia[b], rtol=0,
                                   atol=MOMENTS_RTOL * m.body_inertia[b].max(),
                                   err_msg=body.name)
        compared += 1
    assert compared > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dog", "fruitfly"])
def test_mesh_frames_are_mujocos(name):
    """Every mesh whose inertia rbd computes: its frame is ``mesh_quat``."""
    ctx, m = _read(FILES[name]())
    compared = 0
    for body in ctx.bodies:
        _axes(body)                                     # computes the meshes it needs
    for mesh_name, mesh in ctx.assets.meshes.items():
        k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_MESH, mesh_name)
        if mesh._properties is None or k < 0:
            continue
        _same_rotation(principal_frame(mesh._properties[2]), m.mesh_quat[k], mesh_name)
        compared += 1
    assert compared > 50


@pytest.mark.slow
def test_dog_tail_capsules_sit_at_mujocos_inertial_frames():
    """dog's tail capsules are snapped to their vertebrae's inertial frames
    (``mjSAMEFRAME_INERTIA``): their world rotations are MuJoCo's ``geom_xmat`` to
    rounding, where numpy's eigenvectors of the same tensors put them 4e-11 away."""
    import rbd

    model, mm, d = rbd.testing.mujoco_pair(dm_control_asset("dog"))
    rng = np.random.default_rng(0)
    q = rbd.random_configuration(model, rng)
    d.qpos[:] = rbd.mjcf.to_mujoco_state(model, q)[0]
    mujoco.mj_kinematics(mm, d)
    poses = rbd.geom_poses(model, q)
    names = [g.name for g in model.geoms]
    tails = [g for g in range(mm.ngeom)
             if mm.geom_sameframe[g] == mujoco.mjtSameFrame.mjSAMEFRAME_INERTIA
             and mm.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE
             and (mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_GEOM, g) or "").startswith("Ca_")]
    assert len(tails) >= 10
    for g in tails:
        k = names.index(mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_GEOM, g))
        np.testing.assert_allclose(poses[k, :3, :3].ravel(), d.geom_xmat[g], rtol=0,
                                   atol=FRAME_ATOL, err_msg=names[k])


@pytest.mark.parametrize("tol", [BODY_TOL, MESH_TOL])
def test_eig3_diagonalizes_to_its_tolerance(tol, rng):
    """Physics, not MuJoCo: ``Eᵀ I E`` is diagonal up to the stopping threshold (the
    iteration stops once the largest off-diagonal element is at most ``max(4e-15, tol)``
    of the largest element; rounding in ``E`` adds a few 1e-16), its diagonal is the
    moments, decreasing (but for two within the sort's ``max(1e-12, tol)`` of the largest
    element), and ``E`` is a rotation.  Nearly equal moments included.  (The
    moments are read before the sort's quarter turns, whose ``cos(π/4)`` has 15 digits:
    the turned ``E`` reproduces them to a few 1e-15.)"""
    for spread in (1.0, 1e-6, 1e-11, 0.0):
        Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
        I = (Q * (np.array([1.0, 1.0 + spread, 0.3]))) @ Q.T
        I = 0.5 * (I + I.T)
        moments, quat, _ = eig3(I, tol)
        E = quat_rotation(quat)
        D = E.T @ I @ E
        scale = np.abs(I).max()
        assert np.abs(D - np.diag(np.diag(D))).max() <= max(4e-15, tol) * scale + 1e-14 * scale
        np.testing.assert_allclose(np.diag(D), moments, rtol=0, atol=1e-14 * scale)
        gap = max(1e-12, tol) * scale                   # the sort leaves closer moments be
        assert moments[0] >= moments[1] - gap and moments[1] >= moments[2] - gap
        np.testing.assert_allclose(E.T @ E, np.eye(3), rtol=0, atol=1e-14)
        assert np.linalg.det(E) > 0


def test_eig3_needs_nine_numbers():
    with pytest.raises(ValueError, match="3 x 3"):
        eig3(np.eye(2))


def test_an_overflowing_geom_sum_names_the_body():
    """Masses and lengths whose inertia overflows: an MJCFError naming the body, before the
    iteration would run on infinities."""
    import rbd

    xml = ("<mujoco><worldbody><body name='huge'><joint/><geom size='1e200' mass='1e200'/>"
           "<geom pos='1 0 0' size='0.1'/></body></worldbody></mujoco>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)         # numpy's overflow notes
        with pytest.raises(MJCFError, match="^body 'huge': its geoms' inertia: the mass of "
                                            "links '#0', '#1' is beyond"):
            rbd.load_mjcf(xml)


@pytest.mark.parametrize("frame", ["", "euler='10 20 30'"])
def test_fullinertia_axes_are_mujocos(frame):
    """``<inertial fullinertia>`` with two moments 1e-13 apart, alone and in a turned
    ``<frame>``: rbd's inertial axes are ``body_iquat``'s (mjuu_fullInertia on the six
    numbers as written, then the frame)."""
    xml = (f"<mujoco><worldbody><body><joint/><frame {frame}><inertial pos='0 0 0' mass='1' "
           "fullinertia='0.3 0.3000000000001 0.2 1e-13 0.002 0'/></frame></body></worldbody>"
           "</mujoco>")
    m = mujoco.MjModel.from_xml_string(xml)
    root, directory = _document(xml, None)
    ctx = _Context(_read_compiler(root), _defaults(root), {})
    ctx.assets = _read_assets(root, ctx, directory)
    _read_world(root, ctx)
    _same_rotation(ctx.bodies[0].inertial_axes, m.body_iquat[1], "fullinertia")


@pytest.mark.parametrize("fromto", ["0 0 0 3e-8 0 1", "0 0 0 3e-8 0 -1", "0 0 0 2e-7 1e-7 1",
                                    "0 0 0 0.3 0.4 1"])
def test_fromto_frames_are_mujocos_quaternion(fromto):
    """A fromto capsule's frame is ``mjuu_z2quat``'s (the sums of geom inertias start from
    it): within 1e-7 of the z axis it is z itself or a half turn about x, as MuJoCo's
    ``mjuu_normvec`` returns a zero norm there; elsewhere the same rotation to the bit."""
    import rbd

    xml = (f"<mujoco><worldbody><body><joint/><geom type='capsule' size='0.1' "
           f"fromto='{fromto}'/><geom size='0.1' pos='1 0 0'/></body></worldbody></mujoco>")
    m = mujoco.MjModel.from_xml_string(xml)
    R = rbd.load_mjcf(xml).geoms[0].pose[:3, :3]
    np.testing.assert_array_equal(R, quat_rotation(m.geom_quat[0]))
