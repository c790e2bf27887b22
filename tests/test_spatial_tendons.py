"""Spatial tendons (issue 21): MuJoCo's ``ten_length`` and ``ten_J`` for straight paths
between sites, pulleys and wrapping around spheres and cylinders (with and without a
side site, outside and inside, on moving bodies and on the world), and their springs,
damping, friction loss, limits and equalities in rbd.forward against mj_forward."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_forward_matches_mujoco

import rbd
from rbd.constraints.forward import passive_force
from rbd.constraints.forward_compiled import compiled_forward
from rbd.constraints.tendon_rows import tendon_state
from rbd.constraints.tendon_spatial import spatial_tendons, wrap
from rbd.mjcf import from_mujoco_force, from_mujoco_state, mujoco_velocity_map

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference for tendons")

#: Lengths and moments: both sides evaluate the same closed forms (square roots, arc
#: cosines) on the same kinematics, rounding apart (measured below 1e-15).
TENDON_ATOL = 1e-12
#: The moment of a path through the inside of a wrap geom (``sidesite`` inside it): the
#: one point on the circle is a Newton root (``wrap_inside``, stopped at
#: :math:`|f| < 10^{-6}`).  rbd's root has :math:`|f| \approx 5\cdot 10^{-10}`; MuJoCo's
#: point, read back from ``d.wrap_xpos``, sits where :math:`f \approx -7\cdot 10^{-8}`
#: (same code, its arithmetic of ``asin`` apart), 3e-9 m away.  The length is stationary
#: in that point (equal to 1e-15); the moment moves with it linearly (measured up to
#: 5e-9).  A wrong point or side shows at 1e-2.
INSIDE_ATOL = 1e-7

#: Straight paths between sites on hinges, a ball joint, a free body and the world, and
#: a path with two pulleys.
CHAIN = """<mujoco><option><flag contact="disable"/></option><worldbody>
  <site name="anchor" pos="0 0.1 2"/>
  <body name="arm" pos="0 0 1"><joint name="a" axis="0 1 0"/><joint name="a2" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
    <site name="s1" pos="0.2 0.05 0"/>
    <body pos="0.4 0 0"><joint name="b" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <site name="s2" pos="0.3 0 0.02"/></body></body>
  <body name="box" pos="1 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/>
    <site name="s3" pos="0.1 0 0.05"/></body>
</worldbody>
<tendon>
  <spatial name="straight" stiffness="40" damping="2" frictionloss="0.3">
    <site site="anchor"/><site site="s1"/><site site="s2"/><site site="s3"/></spatial>
  <spatial name="pulleys" limited="true" range="0 1.7" solreflimit="0.05 1">
    <site site="anchor"/><site site="s1"/><pulley divisor="2"/><site site="s2"/>
    <site site="s3"/><pulley divisor="3"/><site site="s1"/><site site="s3"/></spatial>
</tendon>
<equality><tendon tendon1="straight" tendon2="pulleys" polycoef="0.01 0.5 0.3 0 0"/>
</equality></mujoco>"""

#: A sphere and a cylinder (axis along world y) on a hinged drum; the tendons run from
#: a world site to a site on a moving arm across them.  ``side_in`` lies inside both.
#: ``post``: a sphere of the world between the arm and a second world site.
WRAP = """<mujoco><option><flag contact="disable"/></option><worldbody>
  <site name="w0" pos="-0.3 0.02 1.01"/>
  <site name="w1" pos="0.8 -0.03 1.02"/>
  <geom name="post" type="sphere" size="0.15" pos="0.55 0 1"/>
  <body name="drum" pos="0 0 1"><joint name="h" axis="0 1 0"/>
    <geom name="ball" type="sphere" size="0.1"/>
    <geom name="cyl" type="cylinder" size="0.08 0.2" euler="90 0 0"/>
    <site name="side_out" pos="0.05 0 0.3"/>
    <site name="side_in" pos="0.01 0 -0.02"/></body>
  <body name="arm" pos="0.3 0 1"><joint name="s" type="slide" axis="0 0 1"/>
    <joint name="r" axis="0 1 0"/><geom type="sphere" size="0.02"/>
    <site name="e0" pos="0.05 0.06 0"/></body>
</worldbody>
<tendon>
  <spatial name="sphere" stiffness="30" damping="1" frictionloss="0.2" limited="true"
           range="0.66 0.69"><site site="w0"/><geom geom="ball"/><site site="e0"/></spatial>
  <spatial name="sphere_side"><site site="w0"/><geom geom="ball" sidesite="side_out"/>
    <site site="e0"/></spatial>
  <spatial name="cylinder" damping="0.5"><site site="w0"/><geom geom="cyl"/>
    <site site="e0"/></spatial>
  <spatial name="cylinder_side" stiffness="10" springlength="0.5 0.6">
    <site site="w0"/><geom geom="cyl" sidesite="side_out"/><site site="e0"/></spatial>
  <spatial name="cylinder_inside"><site site="w0"/><geom geom="cyl" sidesite="side_in"/>
    <site site="e0"/></spatial>
  <spatial name="sphere_inside"><site site="w0"/><geom geom="ball" sidesite="side_in"/>
    <site site="e0"/><geom geom="post"/><site site="w1"/></spatial>
</tendon></mujoco>"""

SCENES = {"chain": CHAIN, "wrap": WRAP}


def _pair(xml: str):
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    mm.opt.tolerance, mm.opt.iterations, mm.opt.ls_tolerance = 1e-15, 1000, 1e-12
    return model, mm, mujoco.MjData(mm)


def _random_state(mm, d, seed: int) -> None:
    """Hinges, slides and the ball joint moved at random, the free body displaced and
    turned, random velocities; then ``mj_forward``."""
    rng = np.random.default_rng(seed)
    kinds = mujoco.mjtJoint
    for j in range(mm.njnt):
        adr, kind = mm.jnt_qposadr[j], int(mm.jnt_type[j])
        if kind in (int(kinds.mjJNT_HINGE), int(kinds.mjJNT_SLIDE)):
            d.qpos[adr] += rng.uniform(-0.6, 0.6)
        else:
            n = 3 if kind == int(kinds.mjJNT_FREE) else 0
            d.qpos[adr:adr + n] += rng.uniform(-0.2, 0.2, n)
            quat = rng.normal(size=4)
            d.qpos[adr + n:adr + n + 4] = quat / np.linalg.norm(quat)
    d.qvel[:] = rng.normal(size=mm.nv)
    mujoco.mj_forward(mm, d)


def _dense_ten_J(mm, d) -> np.ndarray:
    J = np.zeros((mm.ntendon, mm.nv))
    mujoco.mju_sparse2dense(J, d.ten_J, mm.ten_J_rownnz, mm.ten_J_rowadr, mm.ten_J_colind)
    return J


SEEDS = range(6)


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_length_and_moment_match_mujoco(scene):
    """``ten_length`` and ``ten_J`` (over MuJoCo's ``qvel``: rbd's ``J T⁻¹``) at random
    states."""
    model, mm, d = _pair(SCENES[scene])
    for seed in SEEDS:
        _random_state(mm, d, seed)
        q, _, _ = from_mujoco_state(model, d.qpos, d.qvel)
        state = tendon_state(model, q)
        T_inv = np.linalg.inv(mujoco_velocity_map(model, q))
        lengths = np.array([L for L, _ in state])
        J = np.array([Jv for _, Jv in state]) @ T_inv
        np.testing.assert_allclose(lengths, d.ten_length, rtol=0, atol=TENDON_ATOL)
        atol = np.array([[INSIDE_ATOL if name.endswith("inside") else TENDON_ATOL]
                         for name in (t["name"] for t in model.mujoco_tendons)])
        assert np.all(np.abs(J - _dense_ten_J(mm, d)) <= atol)


def test_wrap_states_cover_every_case():
    """The random states of the wrap scene wrap each tendon at some states and not at
    others (MuJoCo's path of one geom has 4 points when wrapped, 2 when straight; the
    last tendon's two geoms give 3, 5 or 7 points, 7 with both wrapped)."""
    _, mm, d = _pair(WRAP)
    counts = []
    for seed in SEEDS:
        _random_state(mm, d, seed)
        counts.append(d.ten_wrapnum.copy())
    counts = np.array(counts)
    assert set(np.unique(counts[:, :-1])) <= {2, 4}
    assert np.all((counts[:, :-1] == 4).any(axis=0))    # every tendon wraps somewhere
    assert np.any(counts[:, 0] == 2)                    # and the plain sphere is straight once
    assert np.any(counts[:, -1] == 7)                   # the world's post and the inside path


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scene", sorted(SCENES))
def test_spatial_tendon_passive_force_matches_qfrc_passive(scene, seed):
    model, mm, d = _pair(SCENES[scene])
    _random_state(mm, d, seed)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    expected = from_mujoco_force(model, d.qpos, d.qfrc_passive)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(passive_force(model, q, v), expected, rtol=0,
                               atol=RTOL_EXACT * np.abs(expected).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("scene", sorted(SCENES))
def test_spatial_tendon_rows_match_mujoco(scene, seed):
    """Friction-loss, limit and equality rows of spatial tendons: counts, R, aref, qacc and
    forces (the weights are ``tendon_invweight0`` from the moment at ``qpos0``)."""
    model, mm, d = _pair(SCENES[scene])
    _random_state(mm, d, seed)
    assert_forward_matches_mujoco(model, mm, d, "pyramidal", "newton")


def test_compared_states_have_tendon_rows():
    """Some compared state has each kind of tendon row the scenes declare."""
    kinds = set()
    for xml in SCENES.values():
        _, mm, d = _pair(xml)
        for seed in (0, 1, 2):
            _random_state(mm, d, seed)
            kinds.update(int(t) for t in d.efc_type)
    C = mujoco.mjtConstraint
    assert {int(C.mjCNSTR_EQUALITY), int(C.mjCNSTR_FRICTION_TENDON),
            int(C.mjCNSTR_LIMIT_TENDON)} <= kinds


def test_wrap_is_not_taken_when_the_segment_misses_the_sphere():
    """A segment passing beside a sphere is straight; across it, the wrapped path is longer
    than the chord and its tangent points lie on the sphere."""
    x0, x1 = np.array([-1.0, 0.0, 0.5]), np.array([1.0, 0.0, 0.5])
    assert wrap(x0, x1, np.zeros(3), np.eye(3), 0.3, "sphere")[0] == -1
    length, points = wrap(x0, x1, np.zeros(3), np.eye(3), 0.6, "sphere")
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 0.6, rtol=1e-14)
    total = np.linalg.norm(points[0] - x0) + length + np.linalg.norm(x1 - points[1])
    assert total > 2.0


def test_spatial_tendon_models_take_the_python_pass():
    """The compiled forward pass refuses a model with a spatial tendon; the kernel backend
    gives the Python pass's result."""
    xml = WRAP.replace('<option><flag contact="disable"/></option>', "")
    plain = rbd.load_mjcf(xml.replace("<tendon>", "<!--").replace("</tendon>", "-->"))
    spatial = rbd.load_mjcf(xml)
    assert spatial_tendons(spatial) and not spatial_tendons(plain)
    assert compiled_forward(spatial) is None
    if not rbd.has_kernels():
        pytest.skip("kernels not built: the compiled pass is refused for every model")
    assert compiled_forward(plain) is not None
    q, v = np.full(spatial.nq, 0.1), np.full(spatial.nv, 0.2)
    kernel = rbd.constraints.forward.forward(spatial, q, v, backend="kernel")
    reference = rbd.constraints.forward.forward(spatial, q, v, backend="reference")
    np.testing.assert_allclose(kernel.qdd, reference.qdd, rtol=0,
                               atol=RTOL_EXACT * np.abs(reference.qdd).max())


BAD_PATHS = {
    "unknown site": ('<site site="w0"/><site site="nowhere"/>', "nowhere"),
    "box geom": ('<site site="w0"/><geom geom="box"/><site site="e0"/>', "sphere"),
    "geom at the end": ('<site site="w0"/><geom geom="ball"/>', "between two sites"),
    "pulley at the end": ('<site site="w0"/><site site="e0"/><pulley divisor="2"/>',
                          "ends the path"),
    "zero divisor": ('<site site="w0"/><site site="e0"/><pulley divisor="0"/>'
                     '<site site="w0"/><site site="e0"/>', "divisor"),
    "one element": ('<site site="w0"/>', "at least two"),
}


@pytest.mark.parametrize("case", sorted(BAD_PATHS))
def test_bad_spatial_path_is_refused(case):
    path, words = BAD_PATHS[case]
    xml = ("""<mujoco><worldbody><site name="w0" pos="0 0 1"/>
      <body name="b"><joint axis="0 1 0"/><geom name="ball" type="sphere" size="0.1"/>
      <geom name="box" type="box" size="0.1 0.1 0.1"/><site name="e0" pos="0.3 0 0"/>
      </body></worldbody><tendon><spatial name="bad">""" + path
           + "</spatial></tendon></mujoco>")
    with pytest.raises(rbd.MJCFError, match=words) as raised:
        rbd.load_mjcf(xml)
    assert "bad" in str(raised.value)
    if case != "zero divisor":          # MuJoCo takes 0 (an infinite length); rbd does not
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_string(xml)


#: CHAIN with armature on both tendons (straight sites over hinges, a ball joint and a free
#: body; pulleys): MuJoCo adds a JᵀJ to ``qM`` and a Jᵀ(J̇ q̇) to ``qfrc_bias``.
ARMED = CHAIN.replace('<spatial name="straight"', '<spatial name="straight" armature="0.3"'
                      ).replace('<spatial name="pulleys"', '<spatial name="pulleys" armature="0.8"')


def _velocity_map(model, q) -> np.ndarray:
    """``T`` with MuJoCo's ``qvel = T v`` (columns: the images of rbd's unit velocities)."""
    from rbd.mjcf import to_mujoco_state

    return np.array([to_mujoco_state(model, q, e)[1] for e in np.eye(model.nv)]).T


def _full_M(mm, d) -> np.ndarray:
    qM = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, d, qM)
    return qM


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spatial_tendon_armature_matches_mujoco(seed):
    """``<spatial armature>``: the mass matrix gains MuJoCo's Σ a JᵀJ at ``q`` (``qM`` minus
    that of the model without armature, in rbd's coordinates ``Tᵀ qM T``), the bias force
    MuJoCo's ``mj_tendonBias`` (``qfrc_bias`` minus that without armature, with the
    ``qM Ṫ v`` of the coordinate map: :mod:`rbd.mjcf`), and ``rbd.forward`` gives
    ``mj_forward``'s rows and ``qacc``.  The armature moves ``qacc`` by ~50 % here."""
    from rbd.constraints.forward import free_joint_bias
    from rbd.constraints.tendon_rows import tendon_armature, tendon_bias

    model, mm, d = _pair(ARMED)
    _, mm0, d0 = _pair(CHAIN)
    _random_state(mm, d, seed)
    d0.qpos[:], d0.qvel[:] = d.qpos, d.qvel
    mujoco.mj_forward(mm0, d0)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    T = _velocity_map(model, q)
    dM = T.T @ (_full_M(mm, d) - _full_M(mm0, d0)) @ T
    A = tendon_armature(model, q)
    np.testing.assert_allclose(A, dM, rtol=0, atol=RTOL_EXACT * np.abs(dM).max())
    expected = (from_mujoco_force(model, d.qpos, d.qfrc_bias - d0.qfrc_bias)
                + dM @ free_joint_bias(model, v))
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(tendon_bias(model, q, v), expected, rtol=0,
                               atol=RTOL_EXACT * np.abs(expected).max())
    result = assert_forward_matches_mujoco(model, mm, d, "pyramidal", "newton")
    assert np.abs(d.qacc - d0.qacc).max() > 0.1 * np.abs(d.qacc).max()
    np.testing.assert_allclose(result.M - rbd.crba(model, q), A, rtol=0,
                               atol=RTOL_EXACT * np.abs(A).max())


def test_moment_rate_is_the_time_derivative_of_the_moment():
    """``moment_rate`` (J̇ v on rbd's v) equals the central difference of the moment along
    ``q(t) = integrate(q, v t)`` (v held: v̇ = 0), dotted with ``v``, for both tendons at
    a random state (the free body's v is in its own frame: MuJoCo's J̇ q̇ differs there)."""
    from helpers import H_FD, RTOL_FD

    from rbd.constraints.tendon_spatial import length_and_moment, moment_rate

    model, mm, d = _pair(ARMED)
    _random_state(mm, d, 3)
    q, v, _ = from_mujoco_state(model, d.qpos, d.qvel)
    for tendon in model.mujoco_tendons:
        ahead = length_and_moment(model, tendon, rbd.integrate(model, q, v, H_FD))[1]
        behind = length_and_moment(model, tendon, rbd.integrate(model, q, v, -H_FD))[1]
        expected = (ahead - behind) @ v / (2 * H_FD)
        assert abs(expected) > 0.1
        assert moment_rate(model, tendon, q, v) == pytest.approx(expected, rel=RTOL_FD)


def test_spatial_armature_models_take_the_python_pass():
    """A model with spatial-tendon armature is refused by the compiled forward pass and the
    compiled rollouts; ``rbd.forward`` on the kernel backend (the Python pass with compiled
    pieces) and on the reference backend give the same accelerations."""
    from rbd.constraints.forward import forward

    model = rbd.load_mjcf(ARMED)
    assert compiled_forward(model) is None
    q, v = rbd.neutral(model), np.full(model.nv, 0.3)
    q[:2] = 0.4, -0.2
    reference = forward(model, q, v, backend="reference")
    if rbd.has_kernels():
        kernel = forward(model, q, v, backend="kernel")
        np.testing.assert_allclose(kernel.qdd, reference.qdd, rtol=0,
                                   atol=RTOL_EXACT * np.abs(reference.qdd).max())
    plain = forward(rbd.load_mjcf(CHAIN), q, v, backend="reference")
    assert np.abs(plain.qdd - reference.qdd).max() > 0.1 * np.abs(plain.qdd).max()


def test_run_with_spatial_tendon_armature_follows_mujoco():
    """0.05 s of semi-implicit Euler from a random state: ``rbd.simulate`` (which takes the
    Python pass for this model on every backend) against ``mj_step``, to the issue's
    trajectory bound (measured 6e-16 on both backends).  The model keeps its tendon
    equality: ``rbd.simulate`` once dropped it (it handed the contact step an empty tuple
    of constraint objects, which also switched the model's tendon equalities off)."""
    from helpers import mujoco_qpos_path

    xml = ARMED.replace("<option>", '<option integrator="Euler">')
    assert "<equality><tendon" in xml
    model, mm, d = _pair(xml)
    _random_state(mm, d, 1)
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    steps = 25
    expected = mujoco_qpos_path(mm, d, steps)
    traj = rbd.simulate(model, q0, v0, steps * mm.opt.timestep, mm.opt.timestep,
                        integrator="euler")
    q_mj = np.array([from_mujoco_state(model, x, d.qvel)[0] for x in expected])
    np.testing.assert_allclose(traj.q, q_mj, rtol=0, atol=ATOL_TRAJECTORY)


def test_spatial_tendon_armature_on_a_wrap_is_refused():
    """MuJoCo has no moment rate through a wrapping geom and refuses armature there; so does
    rbd, naming the tendon (armature without the geom loads)."""
    xml = WRAP.replace('<spatial name="cylinder" damping="0.5"',
                       '<spatial name="cylinder" damping="0.5" armature="0.1"')
    with pytest.raises(rbd.MJCFError, match="cylinder.*armature"):
        rbd.load_mjcf(xml)
    with pytest.raises(ValueError, match="armature"):
        mujoco.MjModel.from_xml_string(xml)


#: rbd's Euler run against MuJoCo's: the same steps of the same problem, rounding apart
#: (measured 1.4e-17 over 0.2 s); the issue's trajectory bound.
ATOL_TRAJECTORY = 1e-6


@pytest.mark.slow
def test_ball_in_cup_run_follows_mujoco():
    """0.2 s of semi-implicit Euler on dm_control's ball_in_cup from a state with the
    string taut (its limit row active), rbd.simulate against mj_step."""
    from helpers import dm_control_asset, mujoco_run

    model, mm, d = rbd.testing.mujoco_pair(dm_control_asset("ball_in_cup"),
                                           integrator="euler")
    mujoco_run(mm, d, 300, seed=0, qvel_noise=0.1)
    d.ctrl[:] = 0
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    steps, limit_rows = int(round(0.2 / mm.opt.timestep)), 0
    qpos = [d.qpos.copy()]
    for _ in range(steps):
        mujoco.mj_step(mm, d)
        qpos.append(d.qpos.copy())
        limit_rows = max(limit_rows, d.nl)
    traj = rbd.simulate(model, q0, v0, steps * mm.opt.timestep, mm.opt.timestep,
                        integrator="euler")
    assert limit_rows == 1
    np.testing.assert_allclose(traj.q, np.array(qpos), rtol=0, atol=ATOL_TRAJECTORY)


def test_mujoco_testdata_model_tendons_match():
    """MuJoCo's own test model (``mujoco/testdata/model.xml``): a spatial tendon over free
    bodies wrapping a ``fromto`` cylinder with a side site, before a fixed tendon;
    ``ten_length`` and ``ten_J`` along a MuJoCo run."""
    import pathlib
    import warnings

    path = pathlib.Path(mujoco.__file__).parent / "testdata" / "model.xml"
    if not path.exists():
        pytest.skip("this MuJoCo wheel ships no testdata/model.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # actuators, gravcomp, ...
        model = rbd.load_mjcf(str(path))
    mm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mm)
    rng = np.random.default_rng(0)
    wrapped = 0
    for _ in range(3):
        for _ in range(100):
            d.ctrl[:] = rng.uniform(-1, 1, mm.nu)
            mujoco.mj_step(mm, d)
        mujoco.mj_forward(mm, d)
        q, _, _ = from_mujoco_state(model, d.qpos, d.qvel)
        state = tendon_state(model, q)
        J = np.array([Jv for _, Jv in state]) @ np.linalg.inv(mujoco_velocity_map(model, q))
        np.testing.assert_allclose([L for L, _ in state], d.ten_length, rtol=0,
                                   atol=TENDON_ATOL)
        np.testing.assert_allclose(J, _dense_ten_J(mm, d), rtol=0, atol=TENDON_ATOL)
        wrapped += int(d.ten_wrapnum[0] == 5)             # 3 sites and 2 tangent points
    assert wrapped > 0


def test_friction_rows_of_a_spatial_tendon_need_q():
    """Without ``q`` the friction-loss row of a spatial tendon cannot be formed: the call
    says so instead of failing inside the kinematics."""
    from rbd.constraints.tendon_rows import tendon_friction_rows

    model = rbd.load_mjcf(CHAIN)
    with pytest.raises(rbd.InputError, match="straight"):
        tendon_friction_rows(model, np.zeros(model.nv), 0.002)
