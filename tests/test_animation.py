"""Tests of rbd.animation: the geometry drawn, the HTML page, GIF and MP4 (``--animate`` on the
command line is tested in test_cli.py)."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import rbd
import rbd.cli
from rbd import animation

# Geometry is compared to the kinematics it is drawn from: the same floating-point
# operations in another order, so agreement to 1e-12 m on metre-sized models.
ATOL_GEOMETRY = 1e-12

plotly = pytest.importorskip("plotly", reason="plotly (the 'animate' extra) is not installed")


@pytest.fixture(scope="module")
def swing():
    """A double pendulum swinging for 1 s, 101 samples."""
    model = rbd.models.double_pendulum()
    return model, rbd.simulate(model, [1.2, -0.4], [0.0, 0.0], 1.0, 0.01)


# --- the inertia-equivalent box ----------------------------------------------------------------
def test_inertia_box_recovers_a_box():
    """The inertia of a uniform 2 kg box 0.1 × 0.2 × 0.3 m, turned, gives back its sides."""
    m, sides = 2.0, np.array([0.1, 0.2, 0.3])
    I_box = m / 12 * np.diag([sides[1]**2 + sides[2]**2, sides[0]**2 + sides[2]**2,
                              sides[0]**2 + sides[1]**2])
    R = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]
    found, axes = animation.inertia_box(m, R @ I_box @ R.T)
    np.testing.assert_allclose(np.sort(found), sides, rtol=1e-12)
    np.testing.assert_allclose(axes @ axes.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(axes) > 0
    # each side lies along the principal axis it belongs to
    for k in range(3):
        assert np.isclose(axes[:, k] @ (R @ I_box @ R.T) @ axes[:, k],
                          m / 12 * (np.sum(found**2) - found[k]**2), rtol=1e-10)


def test_inertia_box_of_a_point_mass_and_a_massless_body():
    assert np.all(animation.inertia_box(3.0, np.zeros((3, 3)))[0] == 0)
    assert np.all(animation.inertia_box(0.0, np.eye(3))[0] == 0)


# --- the geometry drawn --------------------------------------------------------------------------
def test_motion_follows_the_kinematics(swing, backend):
    model, traj = swing
    m = animation.motion(model, traj, frames=11, trail="link2")
    keep = np.linspace(0, len(traj.t) - 1, 11).round().astype(int)
    np.testing.assert_array_equal(m.t, traj.t[keep])
    q = traj.q[keep]
    T = rbd.forward_kinematics(model, q, backend=backend)
    np.testing.assert_allclose(np.array(m.origins), T[:, :, :3, 3], atol=ATOL_GEOMETRY)
    np.testing.assert_allclose(m.com, rbd.center_of_mass(model, q, backend=backend),
                               atol=ATOL_GEOMETRY)
    np.testing.assert_allclose(m.trail, rbd.body_centers_of_mass(model, q)[:, 1],
                               atol=ATOL_GEOMETRY)
    # every link segment ends at a body origin or at the leaf's centre of mass, and the
    # link from the first body to the second has the fixed length of the first link
    for f in range(len(m)):
        ends = np.vstack([T[f, :, :3, 3], rbd.body_centers_of_mass(model, q[f])])
        for a, b in m.segments[f]:
            for p in (a, b):
                assert np.min(np.linalg.norm(ends - p, axis=1)) < 1e-9
    lengths = [np.linalg.norm(T[f, 1, :3, 3] - T[f, 0, :3, 3]) for f in range(len(m))]
    assert np.ptp(lengths) < 1e-12
    # the last link reaches its bob (its centre of mass; the body's own frame, at its
    # origin, is no end)
    bob = rbd.body_centers_of_mass(model, q)[:, 1]
    for f in range(len(m)):
        assert len(m.segments[f]) == 2
        np.testing.assert_allclose(m.segments[f][1], [T[f, 1, :3, 3], bob[f]],
                                   atol=ATOL_GEOMETRY)


@pytest.mark.slow
def test_a_model_of_point_masses_still_has_a_mesh(swing):
    """plotly draws nothing at all when a mesh is empty: a zero-area triangle stands in."""
    fig = animation.figure(*swing, frames=3)
    for data in [fig.data, *(frame.data for frame in fig.frames)]:
        mesh = next(trace for trace in data if trace.type == "mesh3d")
        assert len(mesh.i) >= 1 and len(mesh.x) >= 3


def test_boxes_are_rigid_and_move_with_their_body():
    """A box keeps its shape; its centre is its body's centre of mass; point masses are dots."""
    model = rbd.models.get("pendulum3")            # three rods on ball joints
    q0, v0 = rbd.cli.displaced_state(model, 0.8)
    traj = rbd.simulate(model, q0, v0, 0.4, 0.01)
    m = animation.motion(model, traj, frames=5)
    coms = rbd.body_centers_of_mass(model, traj.q[np.linspace(0, 40, 5).round().astype(int)])
    first = None
    for f in range(len(m)):
        assert [k for k, _ in m.boxes[f]] == [0, 1, 2] and m.masses[f].shape == (0, 3)
        for k, c in m.boxes[f]:
            np.testing.assert_allclose(c.mean(axis=0), coms[f, k], atol=ATOL_GEOMETRY)
        c = m.boxes[f][2][1]
        shape = np.linalg.norm(c[:, None] - c[None], axis=2)
        first = shape if first is None else first
        np.testing.assert_allclose(shape, first, atol=1e-12)
    # its edges are the sides of the body's inertia box: as long as the rod (0.5 m)
    edges = np.sort(np.linalg.norm(c[[4, 2, 1]] - c[0], axis=1))
    sides = np.sort(animation.inertia_box(model.bodies[2].mass, model.bodies[2].I_com)[0])
    np.testing.assert_allclose(edges, sides, rtol=1e-12)
    assert np.isclose(sides[2], 0.5, rtol=1e-9)
    point = animation.motion(rbd.models.double_pendulum(), np.zeros((2, 2)))
    assert point.boxes == [[], []] and point.masses[0].shape == (2, 3)


@pytest.mark.parametrize("gravity", [(9.81, 0.0, 0.0), (0.0, 3.0, -4.0), (0.0, 0.0, 9.81)])
def test_view_turns_gravity_down(gravity):
    """The view is a rotation of the world that makes height against gravity its z."""
    model = rbd.models.double_pendulum()
    model.gravity = gravity
    q = np.array([[0.3, -1.1], [1.0, 0.2]])
    m = animation.motion(model, q)
    np.testing.assert_array_equal(m.t, [0.0, 1.0])
    up = -np.asarray(gravity) / np.linalg.norm(gravity)
    for f in range(2):
        world = rbd.center_of_mass(model, q[f])
        assert np.isclose(m.com[f][2], world @ up, atol=1e-12)
        assert np.isclose(np.linalg.norm(m.com[f]), np.linalg.norm(world), atol=1e-12)


def test_at_most_max_frames_first_and_last_kept(swing):
    model, traj = swing
    m = animation.motion(model, traj, frames=7)
    assert len(m) == 7 and m.t[0] == traj.t[0] and m.t[-1] == traj.t[-1]
    with pytest.raises(rbd.InputError, match="frames must be an integer from 1 to 200"):
        animation.motion(model, traj, frames=animation.MAX_FRAMES + 1)


# --- the HTML page ----------------------------------------------------------------------------
@pytest.mark.slow
def test_html_is_self_contained_with_slider_and_buttons(swing, tmp_path):
    model, traj = swing
    out = rbd.animate(model, traj, tmp_path / "swing.html", frames=30, trail="link2")
    html = out.read_text()
    assert not re.search(r"<script[^>]+src=", html), "a script is loaded from elsewhere"
    assert not re.search(r"<link[^>]+href=[\"']?https?:", html)
    assert "Plotly.newPlot" in html and "data-rbd-frame" in html
    fig = animation.figure(model, traj, frames=30, trail="link2")
    assert len(fig.frames) == 30
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["▶ play", "❚❚ pause"]
    assert len(fig.layout.sliders[0].steps) == 30
    assert fig.layout.sliders[0].steps[-1].label == f"{traj.t[-1]:.2f}"
    # the page is dominated by plotly's JavaScript, not by the frames
    assert out.stat().st_size < 6_000_000


@pytest.mark.slow
@pytest.mark.single_pass
def test_walker_motion_keeps_each_stance_foot_still():
    models, q, t = animation.walker_motion(steps=3, samples=8)
    assert len(models) == len(q) == 3 and len(t) == 24 and np.all(np.diff(t) >= 0)
    m = animation.motion(models, q, t=t, trail="foot1")
    # the feet land further and further downhill: one anchor (footprint) per step
    assert len(m.anchors) == 3 and np.all(np.diff(m.anchors[:, 0]) > 0.3)
    # during each step the stance leg's root does not move
    for k in range(3):
        roots = np.array(m.origins[8 * k:8 * k + 8])[:, 0]
        assert np.ptp(roots, axis=0).max() < 1e-12


# --- movies ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_gif_has_its_frames_and_they_move(swing, tmp_path):
    from PIL import Image, ImageChops

    model, traj = swing
    out = rbd.animate(model, traj, tmp_path / "swing.gif", frames=12, size=3, dpi=50)
    with Image.open(out) as im:
        assert im.n_frames == 12 and im.size == (150, 150)
        im.seek(0)
        first = im.convert("RGB")
        im.seek(11)
        last = im.convert("RGB")
    assert ImageChops.difference(first, last).getbbox() is not None


def test_mp4_without_ffmpeg_is_a_clear_error(swing, tmp_path, monkeypatch):
    monkeypatch.setattr(animation.shutil, "which", lambda name: None)
    with pytest.raises(rbd.InputError, match="ffmpeg"):
        rbd.animate(*swing, tmp_path / "swing.mp4")
    assert not (tmp_path / "swing.mp4").exists()


@pytest.mark.skipif(animation.shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
def test_mp4_with_ffmpeg(swing, tmp_path):
    out = rbd.animate(*swing, tmp_path / "swing.mp4", frames=10, size=2, dpi=50)
    assert out.stat().st_size > 1000


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(out="run.png"), r"write a \.html, \.gif, \.mp4 file"),
    (dict(out="no_such_dir/run.html"), "does not exist"),
    (dict(out="run.html", trail="hand"), "trail='hand' is neither a body nor a frame"),
    (dict(out="run.html", frames=0), "frames must be an integer from 1 to"),
    (dict(out="run.html", speed=0.0), r"speed must be finite and > 0"),
    (dict(out="run.gif", fps=-1.0), r"fps must be finite and > 0"),
    # before: TypeError, ValueError or pillow's IndexError after the drawing started
    (dict(out="run.gif", frames="10"), "frames must be an integer from 1 to .*got '10'"),
    (dict(out="run.gif", frames=2.5), "frames must be an integer"),
    (dict(out="run.html", speed="fast"), "speed must be a real number, got 'fast'"),
    (dict(out="run.gif", fps="20"), "fps must be a real number, got '20'"),
    (dict(out="run.gif", dpi=0), r"dpi must be finite and > 0, got 0"),
    (dict(out="run.gif", dpi=-50), r"dpi must be finite and > 0"),
    (dict(out="run.gif", dpi=float("nan")), r"dpi must be finite and > 0"),
    (dict(out="run.gif", size=0), r"size must be finite and > 0"),
    (dict(out="run.gif", size=True), "size must be a real number"),
    (dict(out="run.gif", size=1000, dpi=80), r"80000 pixels; a GIF or MP4 side must be"),
    (dict(out="run.gif", size=0.1, dpi=80), r"8 pixels"),
    (dict(out="run.gif", title=3), "title must be a string or None"),
])
def test_bad_arguments_write_nothing(swing, tmp_path, monkeypatch, kwargs, match):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(rbd.InputError, match=match):
        rbd.animate(*swing, **kwargs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(animation.os, "geteuid") or animation.os.geteuid() == 0,
                    reason="the superuser may write anywhere: no directory is read-only to it")
def test_a_directory_that_cannot_be_written_is_refused_first(swing, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(rbd.InputError, match="cannot be written"):
            rbd.animate(*swing, locked / "run.gif")
    finally:
        locked.chmod(0o700)


@pytest.mark.slow
def test_names_with_dollar_signs_are_drawn_as_written(swing, tmp_path):
    # before: matplotlib read '$x' as an unfinished formula, and pillow's IndexError hid it
    model, traj = swing
    out = rbd.animate(model, traj, tmp_path / "x.gif", frames=3, size=2, dpi=40, title="$x")
    assert out.stat().st_size > 0


def test_an_error_while_drawing_a_movie_is_reported_as_itself(swing, tmp_path, monkeypatch):
    from rbd.animation import _movie

    def broken(*args, **kwargs):
        raise RuntimeError("the drawing failed")

    monkeypatch.setattr(_movie, "_draw_frame", broken)
    with pytest.raises(RuntimeError, match="the drawing failed"):
        rbd.animate(*swing, tmp_path / "x.gif", frames=3, size=2, dpi=40)
    assert not (tmp_path / "x.gif").exists()          # no half-written GIF


def test_bad_trajectories(swing, tmp_path):
    model, traj = swing
    out = tmp_path / "x.html"
    with pytest.raises(rbd.InputError, match=r"batch of 3 rollouts.*traj\.q\[k\]"):
        rbd.animate(model, np.zeros((3, 5, model.nq)), out)
    with pytest.raises(rbd.InputError, match=r"shape \(T, nq\) = \(T, 2\)"):
        rbd.animate(model, np.zeros((5, 3)), out)
    with pytest.raises(rbd.InputError, match="non-finite"):
        rbd.animate(model, np.full((5, 2), np.nan), out)
    with pytest.raises(rbd.InputError, match="one model per piece"):
        rbd.animate([model, model], [traj], out)
    with pytest.raises(rbd.InputError, match="t must hold 5 finite non-decreasing times"):
        rbd.animate(model, np.zeros((5, 2)), out, t=[0, 1, 2])
    assert not out.exists()


def test_without_plotly_the_error_names_the_extra(swing, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)
    with pytest.raises(ImportError, match=r'pip install "rbd\[animate\]"'):
        rbd.animate(*swing, tmp_path / "x.html")
    with pytest.raises(ImportError, match="animate"):
        animation.figure(*swing)


def test_animate_is_exported_lazily():
    assert rbd.animate is animation.animate
    assert "animate" in rbd.__all__


@pytest.mark.slow
def test_embedded_figure_is_offline_html(swing):
    """The notebook/docs output: plotly's JavaScript inside, no script fetched from elsewhere."""
    html = animation.embed(animation.figure(*swing, frames=3))._repr_html_()
    assert "Plotly.newPlot" in html and len(html) > 1_000_000
    assert not re.search(r"<script[^>]+src=", html)
    # a second animation of the same page can leave plotly's JavaScript to the first
    lean = animation.embed(animation.figure(*swing, frames=3), plotlyjs=False)._repr_html_()
    assert "Plotly.newPlot" in lean and len(lean) < len(html) - 1_000_000


# --- the robot's own geometry --------------------------------------------------------------------
# A vertex of a drawn primitive lies on the primitive's surface: the same pose products in
# another order, so to 1e-9 m on metre-sized robots.
ATOL_SURFACE = 1e-9


def _ant():
    gymnasium = pytest.importorskip("gymnasium", reason="gymnasium's ant.xml is the test model")
    from pathlib import Path
    with pytest.warns(RuntimeWarning, match="actuators"):
        model = rbd.load_mjcf(Path(gymnasium.__file__).parent / "envs/mujoco/assets/ant.xml")
    q0 = np.zeros(model.nq)
    q0[2], q0[3] = 0.75, 1.0                       # standing height, upright
    # the tree falling without its floor and limits (contact=False): a drawing test
    return model, rbd.simulate(model, q0, np.zeros(model.nv), 0.5, 5e-3, contact=False)


@pytest.fixture(scope="module")
def ant():
    """gymnasium's ant falling for 0.5 s from its standing height."""
    return _ant()


@pytest.fixture(scope="module")
def ur5():
    """example-robot-data's UR5 (visual meshes: Collada) swinging down for 0.5 s."""
    return _ur5()


def _ur5():
    import importlib.metadata

    pytest.importorskip("trimesh", reason="meshes are read with trimesh (the 'mesh' extra)")
    pytest.importorskip("collada", reason="the UR5's visual meshes are Collada (pycollada)")
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    robots = dist.locate_file("cmeel.prefix/share/example-robot-data/robots")
    model = rbd.load_urdf(str(robots / "ur_description/urdf/ur5_robot.urdf"),
                          package_dirs=[str(robots.parent.parent)])
    return model, rbd.simulate(model, [0.0, -1.0, 1.0, 0.0, 0.0, 0.0], np.zeros(6), 0.5, 5e-3)


def _trace(fig, name):
    return next(tr for tr in fig.data if tr.name == name)


@pytest.mark.slow
@pytest.mark.single_pass
def test_ur5_page_draws_its_meshes(ur5, tmp_path):
    model, traj = ur5
    fig = animation.figure(model, traj, frames=4)
    robot = _trace(fig, "geometry")
    # the 7 visual meshes (94 000 triangles in the files), simplified to the page's budget
    assert robot.type == "mesh3d" and robot.showlegend
    assert 2000 < len(robot.i) <= animation._geometry.HTML_TRIANGLES
    assert not any(_trace(fig, "inertia boxes").showlegend for _ in [0])
    assert _trace(fig, "links").visible == "legendonly"     # under the meshes, on request
    # frames move the vertices and keep the triangles of the first frame
    assert fig.frames[-1].data[6].i is None
    assert not np.allclose(fig.frames[-1].data[6].x, robot.x)
    out = rbd.animate(model, traj, tmp_path / "ur5.html", frames=4)
    assert '"type":"mesh3d"' in out.read_text().replace(" ", "")
    # collision geometry: the coarse STL meshes and the tool's box
    collision = _trace(animation.figure(model, traj, frames=2, geometry="collision"), "geometry")
    assert 0 < len(collision.i) < len(robot.i)


@pytest.mark.slow
@pytest.mark.single_pass
def test_mesh_simplification_keeps_the_shape(ur5):
    from rbd.animation import _shapes

    geom = next(g for g in ur5[0].geoms if g.visual and g.body == "upper_arm_link")
    v, tri = rbd.model.geoms.load_mesh(geom)
    sv, stri = _shapes.simplify(np.asarray(v), np.asarray(tri), 1000)
    assert 300 < len(stri) <= 1000 < len(tri)
    # merged vertices are means of vertices: inside the mesh's bounding box, and spread over it
    assert np.all(sv >= v.min(axis=0) - 1e-12) and np.all(sv <= v.max(axis=0) + 1e-12)
    np.testing.assert_allclose(np.ptp(sv, axis=0), np.ptp(v, axis=0), rtol=0.1)


def _distance_to_surface(points, geom, pose):
    """Distance of world points to a sphere or capsule geom at world pose ``pose``."""
    local = (points - pose[:3, 3]) @ pose[:3, :3]
    half = geom.size[1] if geom.kind == "capsule" else 0.0
    axial = np.clip(local[:, 2], -half, half)
    core = local - np.column_stack([np.zeros((len(local), 2)), axial])
    return np.abs(np.linalg.norm(core, axis=1) - geom.size[0])


@pytest.mark.slow
@pytest.mark.single_pass
def test_ant_is_drawn_as_its_capsules_on_its_floor(ant):
    model, traj = ant
    m = animation.motion(model, traj, frames=5)
    keep = np.linspace(0, len(traj.t) - 1, 5).round().astype(int)
    poses = rbd.geom_poses(model, traj.q[keep])
    solids = [k for k, g in enumerate(model.geoms) if g.kind in ("sphere", "capsule")]
    assert len(solids) == 13 and not m.boxes[0]          # the surfaces replace the boxes
    for f in range(5):
        gaps = np.min([_distance_to_surface(m.surfaces[f], model.geoms[k], poses[f, k])
                       for k in solids], axis=0)
        assert np.max(gaps) < ATOL_SURFACE
        # every geom is drawn: some vertex lies on each of them
        for k in solids:
            assert np.min(_distance_to_surface(m.surfaces[f], model.geoms[k],
                                               poses[f, k])) < ATOL_SURFACE
    # the floor is the model's plane z = 0, a checker patch under the torso
    for f, (v, tri, colours) in enumerate(m.floor):
        np.testing.assert_array_equal(v[:, 2], 0.0)
        torso = m.target[f]
        assert v[:, 0].min() < torso[0] < v[:, 0].max()
        assert len(np.unique(colours, axis=0)) == 2 and len(colours) == len(tri)
    fig = animation.figure(model, traj, frames=5)
    assert _trace(fig, "floor").showlegend and len(_trace(fig, "floor").i) > 100


def test_inertia_drawing_on_request(ant):
    m = animation.motion(*ant, frames=3, geometry="inertia")
    assert len(m.boxes[0]) == 9 and m.surfaces[0].shape == (0, 3)


@pytest.mark.slow
def test_time_readout(swing, tmp_path):
    model, traj = swing
    fig = animation.figure(model, traj, frames=6)
    keep = np.linspace(0, len(traj.t) - 1, 6).round().astype(int)
    assert fig.layout.title.text.endswith("t = 0.00 s")
    for frame, k in zip(fig.frames, keep, strict=True):
        assert frame.layout.title.text.endswith(f"t = {traj.t[k]:.2f} s")
    assert fig.layout.sliders[0].currentvalue.font.color == "#333333"   # not transparent


@pytest.mark.slow
def test_camera_follows_the_floating_base(ant):
    model, traj = ant
    fig = animation.figure(model, traj, frames=5)
    keep = np.linspace(0, len(traj.t) - 1, 5).round().astype(int)
    torso = rbd.forward_kinematics(model, traj.q[keep])[:, 0, :3, 3]
    for frame, p in zip(fig.frames, torso, strict=True):
        centre = [np.mean(frame.layout.scene[f"{a}axis"].range) for a in "xyz"]
        np.testing.assert_allclose(centre, p, atol=ATOL_SURFACE)
    # it falls about g t^2 / 2 = 1.2 m in 0.5 s: the view goes with it, at a fixed zoom
    assert torso[0, 2] - torso[-1, 2] > 1.0
    widths = {round(np.ptp(f.layout.scene.zaxis.range), 12) for f in fig.frames}
    assert len(widths) == 1
    # another body on request; none at all with follow=False
    leg = animation.motion(model, traj, frames=5, follow="aux_1")
    np.testing.assert_allclose(leg.target, rbd.forward_kinematics(model, traj.q[keep])[:, 1, :3, 3],
                               atol=ATOL_SURFACE)
    assert animation.motion(model, traj, frames=5, follow=False).target is None
    assert all("scene" not in f.layout or f.layout.scene.xaxis.range is None
               for f in animation.figure(model, traj, frames=3, follow=False).frames)


def test_floor_on_request_under_a_fixed_base(swing):
    model, traj = swing
    assert animation.motion(model, traj, frames=3).floor is None
    m = animation.motion(model, traj, frames=3, floor=True)
    lowest = min([s[..., 2].min() for s in m.segments] + [d[:, 2].min() for d in m.masses]
                 + [c[:, 2].min() for frame in m.boxes for _, c in frame])
    np.testing.assert_allclose(m.floor[0][0][:, 2], min(0.0, lowest), atol=ATOL_GEOMETRY)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(geometry="mesh"), "geometry must be one of"),
    (dict(follow="nope"), "follow='nope' is not a body"),
    (dict(follow=3), "follow must be"),
    (dict(floor="yes"), "floor must be"),
])
def test_bad_drawing_choices_write_nothing(ant, tmp_path, kwargs, match):
    with pytest.raises(rbd.InputError, match=match):
        rbd.animate(*ant, tmp_path / "x.gif", **kwargs)
    assert not (tmp_path / "x.gif").exists()


@pytest.mark.slow
@pytest.mark.single_pass
def test_gif_of_the_ant(ant, tmp_path):
    import time

    from PIL import Image

    start = time.perf_counter()
    out = rbd.animate(*ant, tmp_path / "ant.gif", frames=80)
    print(f"80-frame GIF of the ant: {time.perf_counter() - start:.1f} s")
    with Image.open(out) as im:
        assert im.n_frames == 80
        first = np.asarray(im.convert("RGB"))
        im.seek(79)
        last = np.asarray(im.convert("RGB"))
    # the ant's tan capsules are drawn (red well above blue), and the picture changes
    tan = (first[..., 0].astype(int) - first[..., 2] > 60).sum()
    assert tan > 2000
    assert np.any(first != last, axis=2).sum() > 1000


@pytest.mark.slow
@pytest.mark.single_pass
def test_walker_slope_is_drawn_under_its_feet():
    """``floor=(point, normal)`` draws the walker's slope: every foot it lands on lies on it."""
    from rbd import walker

    cycle = walker.find_limit_cycle()
    models, q, t = animation.walker_motion(cycle, steps=2, samples=5)
    normal = cycle.params.normal
    m = animation.motion(models, q, t=t, floor=(np.zeros(3), normal))
    assert cycle.params.slope > 0 and len(m.anchors) == 2       # a foothold per step
    for v, _, _ in m.floor:                                     # gravity is -z: R = I
        np.testing.assert_allclose(v @ normal, 0.0, atol=ATOL_GEOMETRY)
    np.testing.assert_allclose(m.anchors @ normal, 0.0, atol=1e-9)
    assert not np.allclose(m.floor[0][0][:, 2], m.floor[0][0][0, 2])   # tilted, not level
    with pytest.raises(rbd.InputError, match=r"floor must be .*\(point, normal\)"):
        animation.motion(models, q, t=t, floor=((0, 0), normal))
