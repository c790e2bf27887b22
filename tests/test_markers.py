"""The suite's own configuration: the ``slow`` marker, the quick loop, the per-test time limit.

Tests of a second or more (setup and call) carry ``@pytest.mark.slow``;
``pytest -m "not slow"`` runs the rest as a quick inner loop, while CI
(``.ci/run``) runs the README's ``pytest -n auto`` and so every test (its second,
pure-Python pass leaves out only the ``single_pass`` tests).  Markers are strict, so a
misspelt ``@pytest.mark.slwo`` is an error rather than a test that silently stays
in the quick loop.  A test that hangs fails after ``timeout`` seconds
(pytest-timeout) with its traceback instead of holding CI until CI's own limit.
"""

from __future__ import annotations

import pathlib
import re
import shlex
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PYTEST_INI = PYPROJECT["tool"]["pytest"]["ini_options"]
QUICK_LOOP = 'pytest -m "not slow"'


def _registered_markers(lines: list[str]) -> dict[str, str]:
    """``name: description`` lines of the ``markers`` option, as a mapping."""
    pairs = (line.split(":", 1) for line in lines if ":" in line)
    return {name.strip(): text.strip() for name, text in pairs}


def test_slow_marker_is_registered_with_a_description(request):
    markers = _registered_markers(request.config.getini("markers"))
    assert "slow" in markers, "pyproject.toml [tool.pytest.ini_options] markers: no 'slow'"
    assert "second" in markers["slow"] and QUICK_LOOP in markers["slow"], markers["slow"]


def test_markers_are_strict():
    assert "--strict-markers" in shlex.split(PYTEST_INI["addopts"])


def test_quick_loop_is_documented_for_contributors():
    text = (ROOT / "docs" / "installation.md").read_text()
    section = text.split("## Working on rbd", 1)[1]
    assert QUICK_LOOP in section


def test_ci_runs_every_test():
    """CI runs every test: the README's quick start (``pytest -n auto``, which ``.ci/run``
    runs as written) selects nothing, so the slow tests run there; the only selection
    in ``.ci/run`` is its pure-Python pass leaving out the ``single_pass`` tests (which
    check what does not change with the backend), and no call selects by keyword.
    """
    script = (ROOT / ".ci" / "run").read_text()
    quick_start = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    quick_start = quick_start.split("```bash", 1)[1].split("```", 1)[0]

    def calls(text: str) -> list[list[str]]:
        return [shlex.split(line) for line in text.splitlines()
                if re.search(r"\bpytest\b", line) and not line.lstrip().startswith("#")]

    assert calls(quick_start), "README quick start: no pytest call found"
    for words in calls(quick_start):
        assert not {"-m", "-k"} & set(words), f"the quick start selects tests: {words}"
    assert calls(script), ".ci/run: no pytest call found"
    for words in calls(script):
        assert "-k" not in words, f".ci/run selects tests by keyword: {words}"
        if "-m" in words:
            assert "RBD_NO_EXTENSIONS=1" in words, f"only the pure-Python pass selects: {words}"
            assert words[words.index("-m") + 1] == "not single_pass", words


def test_a_hanging_test_fails_after_the_time_limit(request):
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed"
    assert float(request.config.getini("timeout")) == 1200
    test_extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    assert any(re.match(r"pytest-timeout\b", req) for req in test_extra), test_extra
