"""The README runs as written: its quick start is deterministic and its tour's code executes.

Every ```python block of README.md runs, in order, in one namespace (as when pasted into
one session); a block that needs a peer package that is not installed is skipped with its
name.  The ``rbd`` lines of the tour's ```bash block parse, and all but the timing one run.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shlex
import traceback
from pathlib import Path

import pytest
from hypothesis import settings

import rbd.cli

README = Path(__file__).resolve().parents[1] / "README.md"
needs_readme = pytest.mark.skipif(not README.exists(), reason="run from a source checkout")

#: Peer packages a README block may use: (import name, distribution name).
PEERS = {"gymnasium": "gymnasium", "pinocchio": "pin", "mujoco": "mujoco",
         "example_robot_data": "example-robot-data"}


def readme_text() -> str:
    return README.read_text(encoding="utf-8") if README.exists() else ""


def fenced(text: str, language: str) -> list[str]:
    """The bodies of the ```language blocks of a Markdown text, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def missing_peers(code: str) -> list[str]:
    """Peer packages ``code`` imports or locates that are not installed."""
    wanted = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, flags=re.M))
    wanted |= {module for module, dist in PEERS.items()
               if f'distribution("{dist}")' in code}
    missing = []
    for module in sorted(wanted & set(PEERS)):
        try:
            importlib.metadata.distribution(PEERS[module])
        except importlib.metadata.PackageNotFoundError:
            if importlib.util.find_spec(module) is None:
                missing.append(PEERS[module])
    return missing


PYTHON_BLOCKS = fenced(readme_text(), "python")


@pytest.fixture(scope="module")
def readme_session():
    """Run every Python block in order in one namespace: ``{index: None | skip | error}``."""
    namespace: dict = {"__name__": "__readme__"}
    outcome: dict[int, str | None] = {}
    for i, code in enumerate(PYTHON_BLOCKS):
        missing = missing_peers(code)
        if missing:
            outcome[i] = "skip: needs " + ", ".join(missing)
            continue
        try:
            exec(compile(code, f"README.md python block {i + 1}", "exec"), namespace)
        except Exception:
            outcome[i] = traceback.format_exc()
        else:
            outcome[i] = None
    return outcome


@needs_readme
def test_the_readme_has_python_blocks():
    assert len(PYTHON_BLOCKS) >= 3


@needs_readme
@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)),
                         ids=[f"block{i + 1}" for i in range(len(PYTHON_BLOCKS))])
def test_readme_python_block_runs(readme_session, index):
    result = readme_session[index]
    if result is not None and result.startswith("skip: "):
        pytest.skip(f"README block {index + 1} {result[6:]} (a peer package)")
    assert result is None, f"README python block {index + 1} failed:\n{result}"


def tour_commands() -> list[list[str]]:
    """The ``rbd`` lines of the ```bash block of '## A short tour', as argument lists."""
    text = readme_text()
    if "\n## A short tour" not in text:
        return []
    section = text.split("\n## A short tour", 1)[1].split("\n## ", 1)[0]
    lines = [line for block in fenced(section, "bash") for line in block.splitlines()]
    return [shlex.split(line, comments=True)[1:] for line in lines
            if line.strip().startswith("rbd ")]


TOUR = tour_commands()


@needs_readme
def test_the_tour_shows_the_commands():
    assert {argv[0] for argv in TOUR} >= {"info", "check", "bench", "simulate", "walker"}


@pytest.mark.slow
@needs_readme
@pytest.mark.parametrize("argv", TOUR, ids=[" ".join(a) for a in TOUR])
def test_readme_tour_command(argv, tmp_path, monkeypatch, capsys):
    args = rbd.cli._parser().parse_args(argv)       # a usage error raises SystemExit
    assert args.command == argv[0]
    if argv[0] == "bench":
        return                                      # a timing loop: parsing is the check
    monkeypatch.chdir(tmp_path)                     # fresh directory: --out walker/ is new
    code = rbd.cli.main(argv)
    err = capsys.readouterr().err
    assert code == 0, err


def test_hypothesis_profile_is_derandomized_without_a_database(request):
    # `pytest` from the README must draw the same examples on every run and machine:
    # no random seed, and no `.hypothesis/` database replaying an old failure
    if request.config.getoption("hypothesis_profile", default=None):
        pytest.skip("a Hypothesis profile was chosen on the command line")
    assert settings.get_current_profile_name() == "ci"
    assert settings.default.derandomize is True
    assert settings.default.database is None
