"""Tests of the ``rbd`` command (rbd.cli) and of the figures it draws (rbd.plotting)."""

from __future__ import annotations

import argparse
import re
import sys
import types

import numpy as np
import pytest

import rbd
import rbd.cli
from rbd import registry
from rbd.cli import main
from rbd.simulation import Trajectory, simulate

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- rbd info ----------------------------------------------------------------------------------
def test_info_bundled_model(capsys):
    code, out, err = run(capsys, "info", "pendulum3")
    assert code == 0 and err == ""
    assert "nq = 12, nv = 9" in out
    for name in ("link1", "link2", "link3", "ball1"):
        assert name in out
    assert "total mass: 3 kg" in out


def test_info_lists_bundled_models(capsys):
    code, out, _ = run(capsys, "info")
    assert code == 0
    for name in ("pendulum3", "double_pendulum", "RC20"):
        assert name in out


def test_info_urdf_file(capsys, tmp_path):
    path = tmp_path / "double.urdf"
    path.write_text(rbd.to_urdf(rbd.models.double_pendulum()))
    code, out, _ = run(capsys, "info", str(path))
    assert code == 0
    assert "nq = 2, nv = 2" in out


# A two-link arm whose numbers a student would use to derive M by hand.
ARM_URDF = """<robot name="two_link">
  <link name="base">
    <inertial><mass value="5.0"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <link name="upper">
    <inertial><origin xyz="0.25 0 0"/><mass value="2.0"/>
      <inertia ixx="0.02" iyy="0.05" izz="0.04" ixy="0.002" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="fore">
    <inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
      <inertia ixx="0.005" iyy="0.02" izz="0.022" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="2.0" velocity="3.0" effort="40.0"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="fore"/><origin xyz="0.3 0.4 0"/><axis xyz="0 0 1"/>
  </joint>
</robot>
"""


def table_row(out: str, first: str) -> list[str]:
    """The cells (split on runs of 2+ spaces) of the table line starting with ``first``."""
    line = next(ln for ln in out.splitlines() if ln.split() and ln.split()[0] == first
                and not ln.startswith("-"))
    return re.split(r"\s{2,}", line.strip())


def test_info_shows_what_a_hand_derivation_needs(capsys, tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM_URDF)
    code, out, err = run(capsys, "info", str(path))
    assert code == 0, err
    # body, parent, joint, axis, joint origin in parent, link length, mass, centre of mass
    assert table_row(out, "fore") == ["fore", "upper", "revolute elbow", "0 0 1", "0.3 0.4 0",
                                      "0.5", "1.5", "0.2 0 0"]
    assert table_row(out, "upper")[4:] == ["0 0 0.1", "0.1", "2", "0.25 0 0"]
    # Ixx, Iyy, Izz, Ixy, Ixz, Iyz about the centre of mass
    inertia_block = out.split("inertia about the centre of mass")[1]
    assert table_row(inertia_block, "upper") == ["upper", "0.02", "0.05", "0.04", "0.002",
                                                 "0", "0"]
    # joint, kind, coordinates, lower, upper, max speed, max effort, armature
    limits_block = out.split("joint limits")[1]
    assert table_row(limits_block, "shoulder") == ["shoulder", "revolute", "q[0]", "-1.5", "2",
                                                   "3", "40", "0"]
    assert table_row(limits_block, "elbow")[3:5] == ["-", "-"]      # continuous: no limits


def test_info_floating_base(capsys, tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM_URDF)
    code, out, _ = run(capsys, "info", str(path), "--floating-base")
    assert code == 0
    assert "nq = 9, nv = 8" in out
    assert table_row(out.split("joint limits")[1], "root_joint")[:3] == ["root_joint", "free",
                                                                       "q[0:7]"]
    code, out, _ = run(capsys, "info", "arm6", "--floating-base")
    assert code == 0 and "nq = 13, nv = 12" in out
    code, out, _ = run(capsys, "info", "humanoid", "--floating-base")    # floats already
    # free 7/6, neck 1/1, per side ball 4/3 + elbow 1/1 + ball 4/3 + knee 1/1 + ankle 2/2
    assert code == 0 and "nq = 32, nv = 27" in out


def test_floating_base_on_a_fixed_base_builder_is_an_error(capsys):
    code, _, err = run(capsys, "info", "RC20", "--floating-base")
    assert code == 2
    assert "--floating-base applies to URDF models" in err and "'RC20'" in err


@pytest.mark.slow
@pytest.mark.single_pass
def test_every_model_is_reachable_by_the_name_it_reports():
    for name in rbd.models.names():
        model = rbd.models.get(name)
        assert rbd.models.resolve(model.name) == name, (name, model.name)


def test_bundled_urdf_by_its_reported_name(capsys):
    code, out, _ = run(capsys, "info", "arm6")
    assert code == 0 and "model 'arm6'" in out
    code, out, _ = run(capsys, "info", "arm6_urdf")                   # the earlier name
    assert code == 0 and "model 'arm6'" in out


def test_unknown_name_suggests_close_names(capsys):
    code, _, err = run(capsys, "info", "arm")
    assert code == 2
    assert "unknown model 'arm'; did you mean" in err and "'arm6'" in err and "'arm7'" in err
    code, _, err = run(capsys, "info", "xyzzy")
    assert code == 2 and "did you mean" not in err and "known models:" in err


# --- MJCF ----------------------------------------------------------------------------------
MJCF_TEXT = "<mujoco model='m'><worldbody/></mujoco>"


def test_mjcf_file_goes_to_the_mjcf_reader(capsys, monkeypatch, tmp_path):
    calls = []
    fake = types.ModuleType("rbd.mjcf")
    fake.load = lambda path: calls.append(path) or rbd.models.double_pendulum()
    monkeypatch.setitem(sys.modules, "rbd.mjcf", fake)
    path = tmp_path / "robot.xml"
    path.write_text(MJCF_TEXT)
    code, out, err = run(capsys, "info", str(path))
    assert code == 0, err
    assert calls == [str(path)] and "nq = 2, nv = 2" in out
    code, _, err = run(capsys, "info", str(path), "--floating-base")
    assert code == 2 and "<freejoint/>" in err


def test_mjcf_without_a_reader_is_a_clear_error(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "rbd.mjcf", None)            # import raises ImportError
    path = tmp_path / "robot.mjcf"
    path.write_text(MJCF_TEXT)
    code, _, err = run(capsys, "info", str(path))
    assert code == 2
    assert "is an MJCF file, but this installation of rbd has no MJCF reader" in err
    assert "Traceback" not in err


def test_an_existing_file_is_read_by_its_root_element(capsys, tmp_path):
    path = tmp_path / "arm.xml"                                   # a URDF named .xml
    path.write_text(ARM_URDF)
    code, out, _ = run(capsys, "info", str(path))
    assert code == 0 and "model 'two_link'" in out


# --- options and output paths ------------------------------------------------------------------
def test_every_option_has_help_text():
    from rbd.cli import _parser

    parser = _parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in [("rbd", parser), *subparsers.choices.items()]:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help.strip(), (name, action.dest)
    for choice in subparsers._choices_actions:
        assert choice.help, choice.dest


@pytest.fixture
def no_simulation(monkeypatch):
    """Fail the test if a simulation starts."""
    import rbd.simulation as simulate_module

    def refuse(*args, **kwargs):
        raise AssertionError("the simulation started before the paths were checked")

    monkeypatch.setattr(simulate_module, "simulate", refuse)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--out", "{tmp}", "is a directory; give a file name"),
    ("--out", "{tmp}/plot.nope", "cannot write a .nope plot"),
    ("--save", "{tmp}/file.txt/run.npz", "cannot create the directory"),
    ("--out", "{tmp}/file.txt/plot.png", "cannot create the directory"),
])
def test_output_paths_are_checked_before_simulating(capsys, tmp_path, no_simulation, option,
                                                    value, message):
    (tmp_path / "file.txt").write_text("")
    argv = ["simulate", "double_pendulum", "--duration", "1000", option,
            value.format(tmp=tmp_path)]
    if option != "--out":
        argv += ["--out", str(tmp_path / "plot.png")]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert f"{option}:" in err and message in err


def test_unwritable_output_directory(capsys, tmp_path, monkeypatch, no_simulation):
    import tempfile

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "TemporaryFile", denied)
    code, _, err = run(capsys, "simulate", "--out", str(tmp_path / "plot.png"))
    assert code == 2
    assert "cannot write in the directory" in err and "Permission denied" in err


def test_walker_output_directory_is_checked_first(capsys, monkeypatch, tmp_path):
    from rbd import walker

    calls = []
    monkeypatch.setattr(walker, "find_limit_cycle", lambda: calls.append(1))
    (tmp_path / "file.txt").write_text("")
    code, _, err = run(capsys, "walker", "--out", str(tmp_path / "file.txt" / "figures"))
    assert code == 2 and "cannot create the directory" in err and calls == []


def test_walker_creates_a_missing_output_directory(capsys, monkeypatch, tmp_path):
    # `rbd walker --out walker/` (the README's line) in a directory without walker/
    from rbd import walker

    def stop():
        raise rbd.errors.RbdError("stopped after the output check")

    monkeypatch.setattr(walker, "find_limit_cycle", stop)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "walker", "--out", "walker/")
    assert "stopped after the output check" in err and code == 2
    assert (tmp_path / "walker").is_dir()


@pytest.mark.slow
def test_simulate_creates_the_directories_of_its_outputs(capsys, tmp_path):
    png, saved = tmp_path / "plots" / "run" / "dp.png", tmp_path / "runs" / "dp.npz"
    code, _, err = run(capsys, "simulate", "double_pendulum", "--duration", "0.02", "--dt",
                       "0.01", "--out", str(png), "--save", str(saved))
    assert code == 0, err
    assert png.read_bytes()[:8] == PNG_MAGIC and saved.is_file()


# --- rbd simulate ------------------------------------------------------------------------------
@pytest.mark.slow
def test_simulate_writes_plot_and_prints_summary(capsys, tmp_path):
    png, saved = tmp_path / "sim.png", tmp_path / "traj.npz"
    code, out, err = run(capsys, "simulate", "--duration", "0.05", "--dt", "0.01",
                         "--out", str(png), "--save", str(saved))
    assert code == 0, err
    assert png.read_bytes()[:8] == PNG_MAGIC
    for text in ("pendulum3", "nq = 12, nv = 9", "rk4", "5 steps", "energy drift",
                 "wall time", str(png), str(saved)):
        assert text in out
    traj = Trajectory.load(saved)
    assert traj.model_name == "pendulum3" and traj.t[-1] == pytest.approx(0.05)
    drift = float(out.split("energy drift")[1].split()[0])
    assert drift == pytest.approx(traj.energy_drift, rel=1e-3)


#: A ball on a floating base, its collision sphere of radius 0.1 m at the root.
BALL_URDF = """<robot name="ball"><link name="ball"><inertial><mass value="1"/>
  <inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>"""


def test_simulate_drops_a_urdf_robot_onto_a_floor(capsys, tmp_path):
    """--floor 0.3: the ball starts 0.3 m above a ground plane and lands on it (the contact
    step, euler by default there); it rests at its radius above the floor, within the
    soft contact's resting depth (MuJoCo's default solimp width, 1 mm)."""
    urdf = tmp_path / "ball.urdf"
    urdf.write_text(BALL_URDF)
    save = tmp_path / "ball.npz"
    code, out, err = run(capsys, "simulate", str(urdf), "--floating-base", "--floor", "0.3",
                         "--duration", "1", "--dt", "0.002", "--out", str(tmp_path / "b.png"),
                         "--save", str(save))
    assert code == 0, err
    assert "euler, dt = 0.002 s" in out and "contacts     1 at the end, at most 1" in out
    traj = Trajectory.load(save)
    height = traj.q[-1, 2] + 0.3                          # above the floor
    assert 0.1 - 1e-3 < height < 0.1


def test_simulate_floor_needs_the_contact_step(capsys, tmp_path):
    urdf = tmp_path / "ball.urdf"
    urdf.write_text(BALL_URDF)
    code, _, err = run(capsys, "simulate", str(urdf), "--floating-base", "--floor", "0.3",
                       "--integrator", "rk4", "--out", str(tmp_path / "b.png"))
    assert code == 2
    assert "--floor needs --integrator euler (the contact step), got 'rk4'" in err


@pytest.mark.slow
def test_simulate_other_model_and_integrator(capsys, tmp_path):
    png = tmp_path / "dp.png"
    code, out, _ = run(capsys, "simulate", "double_pendulum", "--integrator", "euler",
                       "--duration", "0.02", "--dt", "0.01", "--out", str(png),
                       "--backend", "reference")
    assert code == 0
    assert "euler" in out and "reference" in out
    assert png.exists()


# --- rbd check ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_check_passes_on_a_bundled_model(capsys):
    code, out, _ = run(capsys, "check", "double_pendulum", "--trials", "2")
    assert code == 0
    assert "reference" in out and "FAIL" not in out
    for quantity in registry.QUANTITIES:
        assert quantity in out


@pytest.mark.slow
def test_check_counts_implementations_that_do_not_apply_apart(capsys):
    # the humanoid has a free joint, which the symbolic Guenter–Lee derivation refuses
    code, out, _ = run(capsys, "check", "humanoid", "--trials", "1")
    assert code == 0
    na = sum(line.split()[-1].startswith("n/a") or " n/a" in line
             for line in out.splitlines() if line.startswith(tuple(registry.QUANTITIES)))
    summary = out.strip().splitlines()[-1]
    compared, total = (int(x) for x in summary.split(" compared rows")[0].split(" of "))
    assert na > 0 and compared == total
    assert summary.endswith(f"{na} n/a (the implementation does not handle this model)")


@pytest.fixture
def registered():
    """Register implementations for one test and remove them afterwards."""
    added = []

    def add(quantity, name, fn, supports=None):
        registry.register(quantity, name, fn, supports=supports)
        added.append((quantity, name))

    yield add
    for quantity, name in added:
        registry.unregister(quantity, name)


@pytest.mark.slow
def test_check_fails_on_a_wrong_implementation(capsys, registered):
    registered("mass_matrix", "off-by-1e-6", lambda model, q: rbd.crba(model, q) + 1e-6)
    code, out, _ = run(capsys, "check", "double_pendulum", "--trials", "2")
    assert code == 1
    line = next(ln for ln in out.splitlines() if "off-by-1e-6" in ln)
    assert "DIFFERS" in line
    reported = float(line.split()[2])       # 1e-6 / max(1, max|M|), M of order one
    assert 1e-7 < reported <= 1e-6


def test_check_reports_a_crashing_implementation(capsys, registered):
    def crash(model, q, v):
        raise RuntimeError("not written yet")

    registered("bias_forces", "crashes", crash)
    code, out, err = run(capsys, "check", "double_pendulum", "--trials", "1")
    assert code == 1
    assert "ERROR RuntimeError: not written yet" in out and "Traceback" not in err


def test_check_marks_unsupported_models_not_applicable(capsys, registered):
    def never(model, q, v, a, f_ext=None):
        raise rbd.ModelError("chains only")

    registered("inverse_dynamics", "chains-only", never, supports=lambda model: False)
    code, out, _ = run(capsys, "check", "double_pendulum", "--trials", "1")
    assert code == 0
    line = next(ln for ln in out.splitlines() if "chains-only" in ln)
    assert "n/a" in line


def test_check_tolerance_option(capsys, registered):
    registered("mass_matrix", "off-by-1e-6", lambda model, q: rbd.crba(model, q) + 1e-6)
    code, _, _ = run(capsys, "check", "double_pendulum", "--trials", "1", "--tolerance", "1e-5")
    assert code == 0


# --- rbd bench ---------------------------------------------------------------------------------
def test_bench_prints_a_table(capsys):
    code, out, _ = run(capsys, "bench", "double_pendulum", "--budget", "0.002")
    assert code == 0
    for text in ("rnea", "crba", "aba", "kernel", "reference", "pinocchio"):
        assert text in out
    if not rbd.has_kernels():
        assert "n/a (not built)" in out


def test_bench_model_without_urdf_prints_na(capsys):
    code, out, _ = run(capsys, "bench", "pendulum3", "--budget", "0.002")
    assert code == 0
    assert "n/a" in out          # ball joints have no URDF form (or Pinocchio is absent)


# --- rbd walker --------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.single_pass
def test_walker_prints_the_cycle_and_writes_two_pngs(capsys, tmp_path):
    code, out, _ = run(capsys, "walker", "--out", str(tmp_path))
    assert code == 0
    assert "step period" in out and "Floquet multipliers" in out and "SPW Table 1" in out
    for name in ("walker_phase_portrait.png", "walker_energy.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "message"), [
    (["info", "no_such_model"], "unknown model 'no_such_model'"),
    (["info", "missing.urdf"], "no such URDF file: 'missing.urdf'"),
    (["simulate", "double_pendulum", "--dt", "0"], "argument --dt: must be > 0"),
    (["simulate", "double_pendulum", "--duration", "-1"], "argument --duration: must be >= 0"),
    (["simulate", "double_pendulum", "--duration", "nan"], "argument --duration: must be finite"),
    (["simulate", "double_pendulum", "--duration", "0.01", "--save", "x.txt"],
     r".npz or .csv"),
    (["check", "double_pendulum", "--trials", "0"], "argument --trials: must be >= 1"),
    (["bench", "double_pendulum", "--budget", "0"], "argument --budget: must be > 0"),
])
def test_errors_exit_2_with_a_message(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_bad_urdf_file_is_a_clean_error(capsys, tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text("<robot name='r'><link name='a'/><joint/></robot>")
    code, _, err = run(capsys, "info", str(path))
    assert code == 2
    assert err.startswith("rbd info: error:") and "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["simulate", "--integrator", "verlet"]])
def test_usage_errors_exit_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "usage: rbd" in err


def test_help_and_version_exit_0(capsys):
    assert run(capsys, "--help")[0] == 0
    code, out, _ = run(capsys, "--version")
    assert code == 0 and rbd.__version__ in out


# --- rbd simulate/walker --animate -------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.single_pass
def test_simulate_animate_html_and_gif(capsys, tmp_path):
    pytest.importorskip("plotly", reason="plotly (the 'animate' extra) is not installed")
    pytest.importorskip("PIL", reason="pillow (the 'animate' extra) is not installed")
    for name in ("run.html", "run.gif"):
        code, out, err = run(capsys, "simulate", "double_pendulum", "--duration", "0.5",
                             "--dt", "0.01", "--out", str(tmp_path / "plot.png"),
                             "--animate", str(tmp_path / name))
        assert code == 0, err
        assert re.search(rf"animation +{re.escape(str(tmp_path / name))}", out)
        assert (tmp_path / name).stat().st_size > 10_000


@pytest.mark.parametrize("path, match", [("run.png", r"must end in \.html, \.gif, \.mp4"),
                                         ("file.txt/run.html", "cannot create the directory")])
def test_simulate_animate_path_checked_before_the_run(capsys, tmp_path, monkeypatch, path,
                                                      match):
    import rbd.simulation

    (tmp_path / "file.txt").write_text("")

    def refuse(*args, **kwargs):
        raise AssertionError("the simulation ran before the path was checked")

    monkeypatch.setattr(rbd.simulation, "simulate", refuse)
    code, _, err = run(capsys, "simulate", "--out", str(tmp_path / "p.png"),
                       "--animate", str(tmp_path / path))
    assert code == 2 and re.search(match, err)


def test_simulate_compass_gait_points_to_the_walker(capsys, tmp_path):
    code, _, err = run(capsys, "simulate", "compass_gait", "--out", str(tmp_path / "p.png"))
    assert code == 2 and "rbd walker" in err and "heel-strike" in err
    assert not (tmp_path / "p.png").exists()


@pytest.mark.slow
@pytest.mark.single_pass
def test_walker_animate(capsys, tmp_path):
    pytest.importorskip("plotly", reason="plotly (the 'animate' extra) is not installed")
    code, out, err = run(capsys, "walker", "--out", str(tmp_path), "--steps", "2",
                         "--animate", str(tmp_path / "walk.html"))
    assert code == 0, err
    html = (tmp_path / "walk.html").read_text()
    assert "compass gait: 2 steps" in html
    code, _, err = run(capsys, "walker", "--out", str(tmp_path), "--animate",
                       str(tmp_path / "walk.png"))
    assert code == 2 and "--animate" in err


# --- rbd.plotting ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.single_pass
def test_plotting_functions_make_pyplot_figures(tmp_path):
    import matplotlib.pyplot as plt

    from rbd import plotting

    model = rbd.models.double_pendulum()

    def g(t, q, v):
        return q[0]

    traj = simulate(model, [0.4, 0.0], [0.0, 0.0], 0.6, 0.02, events=[g])
    assert traj.events
    makers = {
        "trajectory": (lambda: plotting.plot_trajectory(traj), 2),
        "phase": (lambda: plotting.plot_phase(traj, q_index=1), 1),
        "energy": (lambda: plotting.plot_energy(traj), 2),
        "model": (lambda: plotting.plot_model(model, traj.q[-1], label_bodies=True), 1),
        "summary": (lambda: plotting.plot_summary(traj), 4),
        "sparsity": (lambda: plotting.plot_sparsity(rbd.models.revolute_chain(3)), 3),
    }
    plt.close("all")
    for name, (make, n_axes) in makers.items():
        fig = make()
        assert len(fig.axes) == n_axes, name
        # pyplot manages it: plt.gcf() is the new figure, so plt.savefig/plt.show reach it
        assert plt.gcf() is fig and isinstance(fig, plotting.PlotFigure), name
        path = tmp_path / f"{name}.png"
        plt.gcf().savefig(path)
        assert path.read_bytes()[:8] == PNG_MAGIC
        # not blank: more than a handful of distinct colours were drawn
        image = plt.imread(path)
        assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 20, name
        plt.close(fig)
    assert plt.get_fignums() == []


@pytest.fixture
def shown(monkeypatch):
    """What a notebook would receive from ``display``: a list of MIME bundles."""
    pytest.importorskip("IPython", reason="IPython displays notebook output")
    import IPython.display

    bundles = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, raw=False, **kw: bundles.append(obj))
    return bundles


def _energy_figure():
    from rbd.plotting import plot_energy

    return plot_energy(rbd.simulate(rbd.models.double_pendulum(), [0.5, 0.0], [0.0, 0.0],
                                    0.1, 0.01))


@pytest.mark.slow
def test_a_notebook_shows_a_figure_as_png_under_agg(shown):
    import matplotlib.pyplot as plt

    assert plt.get_backend().lower() == "agg"          # set by conftest, as in CI
    fig = _energy_figure()
    fig._ipython_display_()
    assert len(shown) == 1 and shown[0]["image/png"].startswith(PNG_MAGIC)
    assert plt.fignum_exists(fig.number)                # the user's figure stays open
    plt.close(fig)


@pytest.mark.slow
def test_a_notebook_shows_a_figure_once_under_the_inline_backend(shown, monkeypatch):
    import matplotlib.pyplot as plt

    fig = _energy_figure()
    monkeypatch.setattr(plt, "get_backend", lambda: "module://matplotlib_inline.backend_inline")
    fig._ipython_display_()
    # shown now and closed, so the inline backend's end-of-cell flush does not repeat it
    assert len(shown) == 1 and shown[0]["image/png"].startswith(PNG_MAGIC)
    assert not plt.fignum_exists(fig.number)


@pytest.mark.slow
def test_a_widget_or_window_backend_shows_the_figure_itself(shown, monkeypatch):
    import matplotlib.pyplot as plt

    fig = _energy_figure()
    monkeypatch.setattr(plt, "get_backend", lambda: "widget")
    fig._ipython_display_()
    assert shown == []
    plt.close(fig)
    fig._ipython_display_()                            # closed: only a PNG can show it
    assert len(shown) == 1


def test_plot_model_joins_parent_and_child_origins():
    from rbd import plotting

    model = rbd.models.double_pendulum()
    q = np.array([0.3, -0.2])
    fig = plotting.plot_model(model, q)
    lines = fig.axes[0].get_lines()
    origins = rbd.forward_kinematics(model, q)[:, :3, 3]
    segment = np.array(lines[1].get_data_3d()).T       # link1 origin -> link2 origin
    np.testing.assert_allclose(segment, origins, atol=1e-12)


def test_ball_joints_are_drawn_as_rotation_vectors():
    """A ball joint turned by θ = 0.4 about each axis (rotation vector (0.4, 0.4, 0.4))."""
    from rbd.plotting import readable_coordinates

    model = rbd.models.get("pendulum3")
    q0, v0 = rbd.cli.displaced_state(model, 0.4)
    q, v, q_labels, v_labels, q_units, v_units = readable_coordinates(
        model, q0[None], v0[None])
    np.testing.assert_allclose(q[0], np.full(9, 0.4), atol=1e-12)   # exact exp/log pair
    assert q_labels[:3] == ["ball1 θx [rad]", "ball1 θy [rad]", "ball1 θz [rad]"]
    assert v_labels[0] == "ball1 ωx [rad/s]" and set(v_units) == {"rad/s"}


def test_free_and_prismatic_joints_have_units():
    from rbd.plotting import readable_coordinates

    model = rbd.Model()
    base = model.add_body(-1, rbd.Free(), np.eye(6), rbd.spatial.mcI(1.0, [0, 0, 0],
                                                                      np.eye(3)), "base", "root")
    model.add_body(base, rbd.Prismatic([1.0, 0, 0]), np.eye(6),
                   rbd.spatial.mcI(1.0, [0, 0, 0], np.eye(3)), "slider", "rail")
    q = rbd.neutral(model)[None]
    _, _, q_labels, v_labels, q_units, _ = readable_coordinates(model, q, np.zeros((1, 7)))
    assert q_labels == ["root θx [rad]", "root θy [rad]", "root θz [rad]", "root x [m]",
                        "root y [m]", "root z [m]", "rail [m]"]
    assert v_labels[3:] == ["root vx [m/s]", "root vy [m/s]", "root vz [m/s]", "rail [m/s]"]


def test_free_joint_positions_and_velocities_are_drawn_in_one_order():
    # column k of the drawn q and of v name the same motion: rotation (θ, ω), then translation
    from rbd.plotting import readable_coordinates

    model = rbd.Model()
    model.add_body(-1, rbd.Free(), np.eye(6), rbd.spatial.mcI(1.0, [0, 0, 0], np.eye(3)),
                   "base", "root")
    q = np.concatenate([[1.0, 2.0, 3.0], rbd.spatial.rot_to_quat(rbd.spatial.rotz(0.5)[:3, :3].T)])
    drawn, _, q_labels, v_labels, _, _ = readable_coordinates(model, q[None], np.zeros((1, 6)))
    np.testing.assert_allclose(drawn[0], [0.0, 0.0, 0.5, 1.0, 2.0, 3.0], atol=1e-15)
    assert [label.split()[1][-1] for label in q_labels] == ["x", "y", "z", "x", "y", "z"]
    assert [label.split()[1][0] for label in q_labels[:3]] == ["θ"] * 3
    assert [label.split()[1][0] for label in v_labels] == ["ω"] * 3 + ["v"] * 3


@pytest.mark.parametrize("name, n", [("pendulum3", 9), ("RC20", 20)])
def test_summary_draws_every_coordinate_and_says_how_many_are_named(name, n):
    import matplotlib.pyplot as plt

    from rbd.plotting import MAX_LABELLED, plot_summary

    model = rbd.models.get(name)
    q0, v0 = rbd.cli.displaced_state(model)
    fig = plot_summary(rbd.simulate(model, q0, v0, 0.02, 0.01), model=model)
    for ax in fig.axes[:2]:
        assert len(ax.get_lines()) == n                 # every coordinate has its curve
        legend = ax.get_legend()
        named = len(legend.get_texts())
        assert named == min(n, MAX_LABELLED)
        title = legend.get_title().get_text()
        assert title == ("" if named == n else f"{n} drawn, first {named} named")
    plt.close(fig)


@pytest.mark.slow
@pytest.mark.single_pass
def test_walker_energy_figure_says_what_its_marks_are():
    import matplotlib.pyplot as plt

    from rbd.plotting import plot_walker_energy

    fig = plot_walker_energy(steps=2)
    ax = fig.axes[0]
    marks = sorted(t.get_text() for t in ax.texts)
    assert marks == ["A", "A'", "B", "B'", "C", "C'"]
    legend = ax.get_legend()
    entries = [t.get_text() for t in legend.get_texts()]
    assert "step begins, just after heel strike" in entries
    assert "top of the stance arc (most potential energy)" in entries
    assert "just before heel strike" in entries
    assert "A', B', C'" in legend.get_title().get_text()
    plt.close(fig)


@pytest.mark.slow
def test_summary_names_joints_and_puts_legends_beside_the_data():
    from rbd.plotting import plot_summary

    model = rbd.models.double_pendulum()
    traj = rbd.simulate(model, [0.5, 0.0], [0.0, 0.0], 0.2, 0.01)
    fig = plot_summary(traj, model=model)
    ax_q, ax_v = fig.axes[:2]
    assert [t.get_text() for t in ax_q.get_legend().get_texts()] == [
        f"{name} [rad]" for name in model.joint_names]
    assert ax_q.get_ylabel() == "q [rad]" and ax_v.get_ylabel() == "v [rad/s]"
    fig.canvas.draw()
    for ax in fig.axes[:3]:
        legend = ax.get_legend().get_window_extent()
        assert legend.x0 >= ax.get_window_extent().x1        # beside, not over, the curves


# --- rbd simulate on every bundled model ---------------------------------------------------------
@pytest.mark.slow
@pytest.mark.single_pass
@pytest.mark.parametrize("name", rbd.models.names())
def test_simulate_every_bundled_model(capsys, tmp_path, name):
    # a short run on each model the CLI lists, through the plot: no traceback anywhere
    out_png = tmp_path / "plot.png"
    code, out, err = run(capsys, "simulate", name, "--duration", "0.02", "--dt", "0.01",
                         "--out", str(out_png), "--no-progress")
    if rbd.models.get(name).name == "compass gait":
        assert code == 2 and "rbd walker" in err
        return
    assert code == 0, err
    assert "energy drift" in out
    assert out_png.read_bytes().startswith(PNG_MAGIC)


# --- arguments that once traced back or ran without bound ----------------------------------------
@pytest.mark.parametrize(("argv", "message"), [
    (["simulate", "--dpi", "0"], "argument --dpi: must be >= 1, got '0'"),
    (["simulate", "--dpi", "-3"], "argument --dpi: must be >= 1"),
    (["simulate", "--dpi", "100000"], "argument --dpi: must be at most 1600"),
    (["simulate", "--dpi", "7.5"], "argument --dpi: must be a whole number"),
    (["simulate", "--dt", "5e-324"], "inf steps; rbd simulate takes at most 10,000,000"),
    (["simulate", "--duration", "1e300"], "1e+303 steps; rbd simulate takes at most"),
    (["simulate", "--duration", "1e7"], "1e+10 steps; rbd simulate takes at most"),
    (["simulate", "RC100", "--duration", "5000"], "GiB); rbd simulate stores at most 1 GiB"),
    (["simulate", "--tilt", "inf"], "argument --tilt: must be finite"),
    (["check", "double_pendulum", "--seed", "-1"], "argument --seed: must be >= 0, got '-1'"),
    (["check", "double_pendulum", "--tolerance", "nan"], "argument --tolerance: must be finite"),
    (["check", "double_pendulum", "--tolerance=-1e-8"], "argument --tolerance: must be >= 0"),
    (["check", "double_pendulum", "--trials", "1e9"], "argument --trials: must be a whole"),
    (["bench", "--budget", "1e9"], "argument --budget: must be at most 10, got '1e9'"),
    (["walker", "--steps", "10000000"], "argument --steps: must be at most 1000"),
])
def test_bad_numbers_are_refused_in_one_line_before_any_work(capsys, tmp_path, monkeypatch,
                                                             no_simulation, argv, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    # one error line (argparse adds its usage line above a refused value)
    assert len([line for line in err.splitlines() if "error:" in line]) == 1


@pytest.mark.slow
def test_check_refuses_a_model_too_large_to_check(capsys, tmp_path):
    path = tmp_path / "long_chain.urdf"
    path.write_text(rbd.to_urdf(rbd.models.revolute_chain(rbd.cli.MAX_CHECK_DOF + 1)))
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == ""
    assert f"has {rbd.cli.MAX_CHECK_DOF + 1} degrees of freedom" in err
    assert f"at most {rbd.cli.MAX_CHECK_DOF}" in err


@pytest.mark.parametrize("command", ["info", "check", "simulate", "bench"])
def test_a_directory_is_reported_as_a_directory(capsys, tmp_path, command):
    code, _, err = run(capsys, command, str(tmp_path))
    assert code == 2
    assert "is a directory, not a model" in err and "unknown model" not in err


def test_a_bundled_name_wins_over_a_directory_of_that_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "double_pendulum").mkdir()
    code, out, _ = run(capsys, "info", "double_pendulum")
    assert code == 0 and "nq = 2, nv = 2" in out


@pytest.mark.slow
def test_bench_on_an_ascii_terminal_writes_us():
    import os
    import subprocess

    env = dict(os.environ, PYTHONIOENCODING="ascii")
    result = subprocess.run([sys.executable, "-m", "rbd.cli", "bench", "double_pendulum",
                             "--budget", "0.002"], capture_output=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr.decode("ascii", "replace")
    out = result.stdout.decode("ascii")                    # pure ASCII: decodes strictly
    assert re.search(r"\d us", out) and "Traceback" not in result.stderr.decode("ascii", "replace")


@pytest.mark.slow
def test_non_ascii_names_on_an_ascii_terminal_are_escaped(tmp_path):
    import os
    import subprocess

    path = tmp_path / "arm.urdf"
    model = rbd.models.double_pendulum()
    path.write_text(rbd.to_urdf(model).replace("link2", "avant-bras_λ"), encoding="utf-8")
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    result = subprocess.run([sys.executable, "-m", "rbd.cli", "info", str(path)],
                            capture_output=True, env=env, timeout=300)
    err = result.stderr.decode("ascii", "replace")
    assert result.returncode == 0 and "Traceback" not in err, err
    assert "avant-bras_\\u03bb" in result.stdout.decode("ascii")


def test_bench_on_a_unicode_terminal_writes_micro(capsys):
    code, out, _ = run(capsys, "bench", "double_pendulum", "--budget", "0.002")
    assert code == 0 and re.search(r"\d µs", out)
