"""Consistency of the README, the CI script, the tutorials and the equation labels."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
THEORY = ROOT / "docs" / "theory.md"
TUTORIALS = ROOT / "tutorials"

# `# S&G (27)` -> label sg-27; a range `(19)-(20)` or `(19)–(20)` cites every number in it.
TAG = re.compile(r"\b(S&G|L&J|Pai|GL|SPW)\s*\((\d+)\)(?:\s*[-–]\s*\((\d+)\))?")
LABEL_KEY = {"S&G": "sg", "L&J": "lj", "Pai": "pai", "GL": "gl", "SPW": "spw"}

needs_sources = pytest.mark.skipif(not (README.exists() and CI.exists() and THEORY.exists()),
                                   reason="run from a source checkout (README, .ci, docs)")


def fenced_blocks(text: str, language: str) -> list[list[str]]:
    """The lines of each ```language block of a Markdown text."""
    blocks, current = [], None
    for line in text.splitlines():
        if current is None and line.strip() == f"```{language}":
            current = []
        elif current is not None and line.startswith("```"):
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def quick_start_commands() -> list[str]:
    """Non-comment lines of the first ```bash block under '## Quick start'."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quick start", 1)[1].split("\n## ", 1)[0]
    block = fenced_blocks(section, "bash")[0]
    return [line for line in block if line.strip() and not line.startswith("#")]


@needs_sources
def test_readme_has_exactly_two_quick_start_commands():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install .") and "rbd simulate" in commands[0]
    assert commands[1].startswith('pip install ".[test]"') and commands[1].endswith("pytest")


@needs_sources
@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None,
                    reason="needs bash and awk")
def test_ci_runs_the_readme_commands_verbatim():
    assert os.access(CI, os.X_OK), ".ci/run must be executable"
    script = CI.read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in script
    assert "RBD_NO_EXTENSIONS=1 pytest" in script
    assert "sphinx-build -W --keep-going -b html docs docs/_build/html" in script
    printed = subprocess.run([str(CI), "--print-quick-start"], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.splitlines()
    assert printed == quick_start_commands()


@needs_sources
def test_readme_tour_runs():
    """The first Python example of the README runs as written."""
    code = "\n".join(fenced_blocks(README.read_text(encoding="utf-8"), "python")[0])
    exec(compile(code, "README.md", "exec"), {})


def cited_labels() -> dict[str, set[str]]:
    """Every label cited by an equation tag in the package, its kernels or the tutorials."""
    files = [*(ROOT / "rbd").rglob("*.py"), *(ROOT / "rbd").rglob("*.pyx"),
             *TUTORIALS.glob("*.md")]
    cited: dict[str, set[str]] = {}
    for path in files:
        for match in TAG.finditer(path.read_text(encoding="utf-8")):
            first = int(match.group(2))
            last = int(match.group(3) or first)
            for number in range(first, last + 1):
                label = f"{LABEL_KEY[match.group(1)]}-{number}"
                cited.setdefault(label, set()).add(str(path.relative_to(ROOT)))
    return cited


@needs_sources
def test_every_cited_equation_has_a_label_on_the_theory_page():
    defined = set(re.findall(r"^\(([a-z]+-[0-9a-z-]+)\)=$", THEORY.read_text(encoding="utf-8"),
                             flags=re.M))
    cited = cited_labels()
    assert cited, "no equation tags found: the pattern or the layout changed"
    missing = {label: sorted(files) for label, files in cited.items() if label not in defined}
    assert not missing, f"equations cited without a label in docs/theory.md: {missing}"


@needs_sources
def test_theory_labels_are_unique_and_tagged():
    text = THEORY.read_text(encoding="utf-8")
    labels = re.findall(r"^\(([a-z]+-[0-9a-z-]+)\)=$", text, flags=re.M)
    assert len(labels) == len(set(labels))
    for label in labels:
        key, _, number = label.partition("-")
        if number.isdigit() and key in LABEL_KEY.values():
            paper = {v: k for k, v in LABEL_KEY.items()}[key].replace("&", r"\&")
            assert rf"\tag{{{paper} {number}}}" in text, label


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="run from a source checkout (tutorials/)")
def test_tutorials_are_numbered_myst_notebooks():
    tutorials = sorted(TUTORIALS.glob("*.md"))
    assert len(tutorials) >= 2
    for path in tutorials:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+\.md", path.name), path.name
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\njupytext:"), f"{path.name}: no jupytext header"
        assert "format_name: myst" in text and "name: python3" in text, path.name
        assert "```{code-cell} ipython3" in text, f"{path.name}: no code cells"
        assert re.search(r"^# \S", text, flags=re.M), f"{path.name}: no title"
