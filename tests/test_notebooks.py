"""The tutorials as notebooks: plain Markdown, exercise stubs that grade, ``rbd grade``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import rbd
from rbd import exercises, notebooks
from rbd.cli import main

TUTORIALS = sorted((Path(__file__).resolve().parents[1] / "tutorials").glob("[0-9][0-9]_*.md"))
GRADED = [p for p in TUTORIALS if "check_consistency(" in p.read_text(encoding="utf-8")
          or any(p.name.startswith(k.split(".")[0] + "_") for k in exercises.CUSTOM_CHECKS)]

#: what MyST leaves when a role or directive is not rewritten
RAW_MYST = re.compile(r"\{[a-z]+(?::[a-z]+)?\}`|^\s*(:::|```)\{|^\([A-Za-z0-9_.:-]+\)=\s*$", re.M)


def _text(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def test_tutorials_found():
    assert len(TUTORIALS) >= 20


def test_every_tutorial_has_a_graded_exercise():
    """Each tutorial ends with an exercise whose check grades it (a stub in the notebook)."""
    assert [p.name for p in TUTORIALS if p not in GRADED] == []
    for path in TUTORIALS:
        assert notebooks.tutorial_notebook(path)["metadata"]["rbd"]["exercises"], path.name


@pytest.mark.parametrize("solutions", [False, True], ids=["stub", "solution"])
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem[:2])
def test_markdown_cells_hold_no_myst(path, solutions):
    nb = notebooks.tutorial_notebook(path, solutions=solutions)
    assert nb["nbformat"] == 4
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            leftover = RAW_MYST.search(_text(cell))
            assert leftover is None, f"{path.name}: raw MyST {leftover.group(0)!r} in a cell"
    cells = [_text(c) for c in nb["cells"] if c["cell_type"] == "code"]
    code = "\n".join(cells)
    assert "```" not in code and ":tags:" not in code
    assert cells[0].startswith("%matplotlib inline"), f"{path.name}: figures not inline"


@pytest.mark.parametrize("solutions", [False, True], ids=["stub", "solution"])
def test_notebooks_are_valid_nbformat(solutions):
    """Each cell carries the id nbformat 4.5 asks for, unique in its notebook."""
    nbformat = pytest.importorskip("nbformat", reason="validates against the nbformat schema")
    for path in TUTORIALS:
        nb = notebooks.tutorial_notebook(path, solutions=solutions)
        ids = [cell.get("id") for cell in nb["cells"]]
        assert None not in ids and len(set(ids)) == len(ids), path.name
        nbformat.validate(nbformat.from_dict(nb), version=4, version_minor=5)


def test_roles_and_dropdowns_rewritten():
    text = ("See {func}`rbd.aba`, {ref}`GL (8) <gl-8>`, {class}`~rbd.Model`, {math}`x^2`.\n"
            "(sec-a)=\n:::{dropdown} Worked solution\nbody $M$\n:::\n")
    out = notebooks.myst_to_markdown(text)
    assert "`rbd.aba()`" in out and "GL (8)" in out and "`Model`" in out and "$x^2$" in out
    assert "<details><summary>Worked solution</summary>" in out and "</details>" in out
    assert "(sec-a)=" not in out
    assert "body" not in notebooks.myst_to_markdown(text, drop=("Worked solution",))


def test_stub_hides_the_solution():
    nb = notebooks.tutorial_notebook(TUTORIALS[2], solutions=False)   # 10: double pendulum
    answers = [_text(c) for c in nb["cells"] if c["metadata"].get("rbd_role") == "answer"]
    assert len(answers) == 2 and all("raise NotImplementedError" in a for a in answers)
    joined = "\n".join(_text(c) for c in nb["cells"])
    assert "2 * l1 * l2 * c" not in joined and "Worked solution" not in joined
    assert nb["metadata"]["rbd"]["exercises"] == ["10.1", "10.2"]


def _write(folder: Path, name: str, nb: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("path", GRADED, ids=lambda p: p.stem[:2])
def test_stub_not_done_and_solution_passes(path, tmp_path, monkeypatch):
    if path.stem.startswith("52") and not rbd.has_kernels():
        pytest.skip("tutorial 52's exercise sweeps a grid of simulations on Dask workers: "
                    "over ten minutes on the pure-Python path (the grading is the same)")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for solutions, status in ((False, exercises.TODO), (True, exercises.PASS)):
        nb = notebooks.tutorial_notebook(path, solutions=solutions)
        rows = notebooks._run_exercises(str(_write(tmp_path, f"{solutions}.ipynb", nb)))
        assert [r["exercise"] for r in rows] == nb["metadata"]["rbd"]["exercises"]
        for r in rows:
            assert r["status"] == status, (path.name, solutions, r)
            if not solutions:
                assert "stub" in r["message"] or "replace the ..." in r["message"]


def _wrong_double_pendulum(tmp_path) -> Path:
    """Tutorial 10 with the usual slip: the cross term of M[0, 0] without its factor 2."""
    nb = notebooks.tutorial_notebook(TUTORIALS[2], solutions=True)
    for cell in nb["cells"]:
        if cell["metadata"].get("rbd_exercise") == "10.1" and \
                cell["metadata"]["rbd_role"] == "answer":
            assert "2 * l1 * l2 * c" in cell["source"]
            cell["source"] = cell["source"].replace("2 * l1 * l2 * c", "l1 * l2 * c")
    return _write(tmp_path, "wrong.ipynb", nb)


@pytest.mark.slow
def test_wrong_answer_names_the_entry(tmp_path):
    rows = notebooks._run_exercises(str(_wrong_double_pendulum(tmp_path)))
    by = {r["exercise"]: r for r in rows}
    assert by["10.1"]["status"] == exercises.FAIL and "M[0, 0]" in by["10.1"]["message"]
    assert by["10.2"]["status"] == exercises.PASS


def test_check_reports_instead_of_raising():
    model = rbd.models.double_pendulum()

    def broken(model, q):
        return np.zeros(3)[5]

    result = exercises.check(model, "mass_matrix", broken, exercise="x")
    assert result.status == exercises.FAIL and "IndexError" in result.message
    assert exercises.check(model, "mass_matrix", ..., exercise="x").status == exercises.TODO
    assert not result.ok and "exercise x: FAIL" in str(result)


def test_custom_check_names_the_entry():
    def halved(model, q, v, a):
        return 0.5 * rbd.rnea_derivatives(model, q, v, a)[1]

    result = exercises.check_dtau_dv(halved)
    assert result.status == exercises.FAIL and result.message.startswith("worst entry dtau/dv[")


def _five_bar(anchor="point"):
    """Tutorial 41's five-bar (two cranks on the ground, a rod on each), closed at the tips."""
    model = rbd.Model(gravity=(0, 0, -9.81), name="five-bar")
    inertia = (0.5, np.array([0.2, 0.0, 0.0]), 0.01 * np.eye(3))
    for side, x in ((1, 0.0), (2, 0.6)):
        crank = model.add_body(-1, rbd.Revolute([0.0, 1.0, 0.0]), (np.eye(3), [x, 0.0, 0.0]),
                               inertia, f"crank{side}", f"motor{side}")
        model.add_body(crank, rbd.Revolute([0.0, 1.0, 0.0]), (np.eye(3), [0.4, 0.0, 0.0]),
                       inertia, f"rod{side}", f"elbow{side}")
    if anchor == "point":
        model.add_constraint(rbd.constraints.PointAnchor("rod1", "rod2", [0.8, 0, 0],
                                                         [0.8, 0, 0]))
    elif anchor == "weld":
        tip = np.eye(4)
        tip[0, 3] = 0.8
        model.add_constraint(rbd.constraints.FrameAnchor("rod1", "rod2", tip, tip))
    return model


def test_five_bar_check_names_the_wrong_count_and_the_wrong_model():
    ok = exercises.check_five_bar(_five_bar, (3, 2, 2), exercise="41.1")
    assert ok.status == exercises.PASS, ok
    wrong = exercises.check_five_bar(_five_bar, (3, 3, 1), exercise="41.1")
    assert wrong.status == exercises.FAIL and "rows" not in wrong.message
    assert "rank of the Delassus matrix: yours 3, expected 2" in wrong.message
    assert "degrees of freedom left: yours 1, expected 2" in wrong.message
    todo = exercises.check_five_bar(_five_bar, ..., exercise="41.1")
    assert todo.status == exercises.TODO and "my_loop_counts" in todo.message
    open_loop = exercises.check_five_bar(lambda: _five_bar(None), (3, 2, 2))
    assert open_loop.status == exercises.FAIL and "PointAnchor" in open_loop.message
    welded = exercises.check_five_bar(lambda: _five_bar("weld"), (3, 2, 2))
    assert welded.status == exercises.FAIL, welded
    assert "Delassus matrix has rank 3, leaving 1 degree(s)" in welded.message
    from rbd.constraints.mechanisms import four_bar

    result = exercises.check_five_bar(four_bar, (3, 2, 1))
    assert result.status == exercises.FAIL and "four moving rods" in result.message


def test_crank_drive_check_names_the_slow_crank():
    def lazy_drive(model):          # no motor torque: the cranks fall, they do not turn at 2 rad/s
        start = rbd.assemble(model, [-2.0, 1.0, -1.1, -1.0])
        return rbd.simulate(model, start, np.zeros(model.nv), 1.6, 4e-3)

    result = exercises.check_crank_drive(lazy_drive, _five_bar)
    assert result.status == exercises.FAIL and result.message.startswith("crank 'motor1' turns")
    assert "asked 2 rad/s" in result.message
    todo = exercises.check_crank_drive(lazy_drive, ...)
    assert todo.status == exercises.TODO and "first exercise" in todo.message


def test_mass_sweep_check_names_the_point_and_the_axes():
    from rbd.sweeps import SweepResult

    grid = {"m2": np.linspace(0.2, 2.0, 10), "theta1": np.linspace(1.6, 3.1, 12)}
    zeros = exercises.check_mass_sweep(lambda: SweepResult(np.zeros((10, 12)), grid))
    assert zeros.status == exercises.FAIL and zeros.message.startswith("flip time at m2 = ")
    assert "yours 0 s" in zeros.message
    renamed = {"mass": grid["m2"], "theta1": grid["theta1"]}
    axes = exercises.check_mass_sweep(lambda: SweepResult(np.zeros((10, 12)), renamed))
    assert axes.status == exercises.FAIL and "asked ('m2', 'theta1')" in axes.message


def test_frictionless_lcp_check_names_the_violated_condition():
    """Tutorial 42's check: Gauss–Seidel without the projection lets an impulse pull;
    a linear solve of A λ = -b on the stack's singular A does too; stopping too early
    leaves a contact penetrating."""
    def unprojected(A, b):
        lam = np.zeros(len(b))
        for _ in range(500):
            for i in range(len(b)):
                lam[i] -= (A[i] @ lam + b[i]) / A[i, i]
        return lam

    def one_sweep(A, b):
        lam = np.zeros(len(b))
        for i in range(len(b)):
            lam[i] = max(0.0, lam[i] - (A[i] @ lam + b[i]) / A[i, i])
        return lam

    pulls = exercises.check_frictionless_lcp(unprojected)
    assert pulls.status == exercises.FAIL and "< 0; project" in pulls.message, pulls
    early = exercises.check_frictionless_lcp(one_sweep)
    assert early.status == exercises.FAIL and "the two-box stack" in early.message, early
    assert exercises.check_frictionless_lcp(...).status == exercises.TODO


def _solution_namespace(path: Path, label: str) -> dict:
    """The namespace of a tutorial's exercise cells up to ``label``'s answer, solutions run."""
    nb = notebooks.tutorial_notebook(path, solutions=True)
    namespace: dict = {"__name__": "__main__"}
    for cell in nb["cells"]:
        meta = cell["metadata"]
        if meta.get("rbd_role") == "answer":
            exec(_text(cell), namespace)
            if meta["rbd_exercise"] == label:
                return namespace
    raise AssertionError(f"{path.name} has no answer cell {label}")


@pytest.mark.parametrize("slip, named", [
    ("no gravity", "outward pass: acceleration a_0 of body 'b0'"),
    ("no v x vJ", "outward pass: acceleration a_"),
    ("children lost", "inward pass: force f_3 across the joint of body 'b3'"),
])
def test_rnea_passes_check_names_the_pass_and_the_body(slip, named):
    """Tutorial 01's RNEA with a usual slip: the check names the pass, quantity and body."""
    source = _text(next(c for c in notebooks.tutorial_notebook(TUTORIALS[0], solutions=True)
                        ["cells"] if c["metadata"].get("rbd_exercise") == "01.2"
                        and c["metadata"]["rbd_role"] == "answer"))
    edits = {"no gravity": ("a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity)])",
                            "a0 = np.zeros(6)"),
             "no v x vJ": (" + c_J + crm(v[i]) @ v_J", " + c_J"),
             "children lost": ("f[p] += X_up[i].T @ f[i]", "pass")}
    old, new = edits[slip]
    assert old in source
    namespace = _solution_namespace(TUTORIALS[0], "01.2")
    exec(source.replace(old, new), namespace)
    result = exercises.check_rnea_passes(namespace["my_rnea"])
    assert result.status == exercises.FAIL and result.message.startswith(named), result.message
    assert "yours" in result.message and "expected" in result.message


def test_rnea_passes_check_refuses_a_bare_tau():
    def tau_only(model, q, qd, qdd):
        return rbd.rnea(model, q, qd, qdd)

    result = exercises.check_rnea_passes(tau_only)
    assert result.status == exercises.FAIL and "return (tau, v, a, f)" in result.message


@pytest.mark.slow
def test_grade_table_of_three_submissions(tmp_path, capsys):
    folder = tmp_path / "submitted"
    _write(folder, "alice.ipynb", notebooks.tutorial_notebook(TUTORIALS[2], solutions=False))
    _write(folder, "bob.ipynb", notebooks.tutorial_notebook(TUTORIALS[2], solutions=True))
    wrong = _wrong_double_pendulum(tmp_path)
    (folder / "carol.ipynb").write_text(wrong.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["grade", str(folder), "--width", "160"]) == 0
    out = capsys.readouterr().out
    table = {tuple(line.split()[:2]): line for line in out.splitlines() if ".ipynb  " in line}
    assert "not done" in table[("alice.ipynb", "10.1")]
    assert " pass " in table[("bob.ipynb", "10.1")] and " pass " in table[("bob.ipynb", "10.2")]
    assert " fail " in table[("carol.ipynb", "10.1")] and "M[0, 0]" in table[("carol.ipynb",
                                                                              "10.1")]
    assert " pass " in table[("carol.ipynb", "10.2")]
    assert "alice.ipynb: 0 of 2 passed" in out and "bob.ipynb: 2 of 2 passed" in out
    assert "carol.ipynb: 1 of 2 passed" in out


def test_grade_refuses_a_missing_folder(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "nowhere")]) == 2
    assert "FOLDER" in capsys.readouterr().err


def test_installed_package_finds_the_tutorials_of_the_current_directory(tmp_path, monkeypatch):
    """An installed rbd carries no tutorials: the default is then ./tutorials."""
    monkeypatch.setattr(exercises, "__file__", str(tmp_path / "site-packages" / "rbd" / "x.py"))
    monkeypatch.chdir(TUTORIALS[0].parent.parent)
    assert notebooks.default_tutorials() == TUTORIALS[0].parent.parent / "tutorials"


def test_notebooks_command_writes_both_variants(tmp_path, capsys):
    assert main(["notebooks", str(tmp_path), "--solutions"]) == 0
    assert len(list(tmp_path.glob("*.ipynb"))) == len(TUTORIALS)
    assert len(list((tmp_path / "solutions").glob("*.ipynb"))) == len(TUTORIALS)
    assert main(["notebooks", str(tmp_path / "x"), "--tutorials", str(tmp_path)]) == 2


# -- plots label by joint without the model, sweeps' figures managed by pyplot -----------------


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_trajectory_plot_names_joints_and_units_without_model(tmp_path):
    plotting = pytest.importorskip("rbd.plotting", reason="matplotlib draws the figures")
    import matplotlib.pyplot as plt

    cartpole = rbd.Model(gravity=(0, 0, -9.81), name="cart-pole")
    cart = cartpole.add_body(-1, rbd.Prismatic([1.0, 0.0, 0.0]), None,
                             (1.0, np.zeros(3), 0.01 * np.eye(3)), "cart")
    cartpole.add_body(cart, rbd.Revolute([0.0, 1.0, 0.0]), None,
                      (0.3, np.array([0.0, 0.0, 0.7]), 0.01 * np.eye(3)), "pole")
    traj = rbd.simulate(cartpole, [0.0, 0.2], [0.0, 0.0], 0.1, 0.01)
    names = [j[0] for j in traj.joints]
    fig = plotting.plot_trajectory(traj)
    ax_q, ax_v = fig.axes[:2]
    assert _legend(ax_q) == [f"{names[0]} [m]", f"{names[1]} [rad]"]
    assert _legend(ax_v) == [f"{names[0]} [m/s]", f"{names[1]} [rad/s]"]
    assert ax_q.get_ylabel() == "q [m, rad]" and ax_v.get_ylabel() == "v [m/s, rad/s]"
    with_model = plotting.plot_trajectory(traj, model=cartpole)
    assert _legend(with_model.axes[0]) == _legend(ax_q)
    plt.close("all")
    for suffix in (".npz", ".csv"):          # the joints survive a file
        loaded = rbd.simulation.Trajectory.load(traj.save(tmp_path / f"t{suffix}"))
        assert loaded.joints == traj.joints


def test_free_joint_labels_rotation_first_without_model():
    plotting = pytest.importorskip("rbd.plotting", reason="matplotlib draws the figures")
    import matplotlib.pyplot as plt

    model = rbd.testing.random_model(8, 2, ("revolute",), floating_base=True)
    q, v, _ = rbd.testing.random_state(model, 1)
    traj = rbd.simulate(model, q, v, 0.02, 0.01)
    fig = plotting.plot_trajectory(traj)
    q_labels, v_labels = _legend(fig.axes[0]), _legend(fig.axes[1])
    assert q_labels[0].endswith("θx [rad]") and q_labels[3].endswith("x [m]")
    assert v_labels[0].endswith("ωx [rad/s]") and v_labels[3].endswith("vx [m/s]")
    assert len(q_labels) == len(v_labels) == model.nv
    plt.close("all")


def test_sweep_plot_is_managed_by_pyplot():
    pytest.importorskip("matplotlib", reason="matplotlib draws the figures")
    import matplotlib.pyplot as plt

    from rbd.plotting import PlotFigure
    from rbd.sweeps import SweepResult

    fig = SweepResult(np.array([1.0, 4.0]), {"x": np.array([1.0, 2.0])}).plot()
    assert isinstance(fig, PlotFigure) and plt.gcf() is fig
    plt.close(fig)


@pytest.mark.slow
def test_stub_notebook_runs_top_to_bottom_in_a_kernel(tmp_path, monkeypatch):
    """A student's notebook, run whole in a Jupyter kernel: the checks report, nothing raises,
    and the figures are images although the kernel's default backend (Agg) shows none."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nbformat = pytest.importorskip("nbformat", reason="runs a notebook in a Jupyter kernel")
    nbclient = pytest.importorskip("nbclient", reason="runs a notebook in a Jupyter kernel")
    pytest.importorskip("ipykernel", reason="runs a notebook in a Jupyter kernel")
    source = next(p for p in TUTORIALS if p.name.startswith("11_"))
    nb = nbformat.reads(json.dumps(notebooks.tutorial_notebook(source)), as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    check = next(c for c in nb.cells if c.metadata.get("rbd_role") == "check")
    printed = "".join(o.get("text", "") for o in check.outputs)
    assert "exercise 11.1: NOT DONE: my_inertia is still the stub" in printed
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    as_text = [o for o in outputs if "Figure size" in str(o.get("data", {}).get("text/plain", ""))
               and "image/png" not in o.get("data", {})]
    assert images and not as_text        # figures inline, none printed as text only
