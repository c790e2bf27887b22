"""Consistency of the README, the CI script, the tutorials and the equation labels."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

# Source texts only: the same on both backends (CI reads them once).
pytestmark = pytest.mark.single_pass

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
    assert commands[1].startswith('pip install ".[test]"')
    # the whole suite, on every core: no marker or keyword selection, no path
    assert commands[1].endswith("&& pytest -n auto"), commands[1]


@needs_sources
@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None,
                    reason="needs bash and awk")
def test_ci_runs_the_readme_commands_verbatim():
    assert os.access(CI, os.X_OK), ".ci/run must be executable"
    script = CI.read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in script
    assert "RBD_NO_EXTENSIONS=1 pytest" in script
    assert "sphinx-build -W --keep-going -b html docs docs/_build/html" in script
    # the pure-Python stage leaves out only the single_pass tests
    assert 'RBD_NO_EXTENSIONS=1 pytest -q -p no:cacheprovider -n 2 -m "not single_pass"' in script
    printed = subprocess.run([str(CI), "--print-quick-start"], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.splitlines()
    assert printed == quick_start_commands()


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


@pytest.mark.slow
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


# --- the built HTML: math rendered offline, no raw LaTeX ----------------------------------------
BUILT_HTML = ROOT / "docs" / "_build" / "html"
RAW_MATH = re.compile(r"\\\(|\\\[|\$\$")
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}


class _PageText(HTMLParser):
    """The text of a page outside math, code and scripts, and its remote resources."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._open: list[bool] = []
        self._hidden = 0
        self.text: list[str] = []
        self.remote: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = {k: v or "" for k, v in attrs}
        source = attributes.get("src", "") if tag == "script" else (
            attributes.get("href", "") if tag == "link"
            and "stylesheet" in attributes.get("rel", "") else "")
        if source.startswith(("http:", "https:", "//")):
            self.remote.append(f"<{tag}> {source}")
        if tag in VOID_TAGS:
            return
        hidden = (tag in {"script", "style", "pre", "code", "textarea"}
                  or "math" in attributes.get("class", "").split())
        self._open.append(hidden)
        self._hidden += hidden

    def handle_endtag(self, tag):
        if tag not in VOID_TAGS and self._open:
            self._hidden -= self._open.pop()

    def handle_data(self, data):
        if not self._hidden:
            self.text.append(data)


def html_problems(root: Path) -> list[str]:
    """Raw ``\\(``, ``\\[`` or ``$$`` outside math elements, and remote scripts or styles."""
    problems = []
    for page in sorted(root.rglob("*.html")):
        parser = _PageText()
        parser.feed(page.read_text(encoding="utf-8"))
        text = "".join(parser.text)
        name = page.relative_to(root)
        for match in RAW_MATH.finditer(text):
            context = " ".join(text[max(0, match.start() - 50):match.end() + 50].split())
            problems.append(f"{name}: raw math {match.group()!r} in '{context}'")
        problems += [f"{name}: remote {source}" for source in parser.remote]
    if not (root / "_static" / "mathjax" / "tex-chtml.js").exists():
        problems.append(f"{root}: _static/mathjax/tex-chtml.js missing (MathJax not bundled)")
    return problems


def test_the_html_checker_finds_raw_math_and_remote_scripts(tmp_path):
    (tmp_path / "_static" / "mathjax").mkdir(parents=True)
    (tmp_path / "_static" / "mathjax" / "tex-chtml.js").write_text("")
    (tmp_path / "good.html").write_text(
        '<title>M⁻¹</title><span class="math notranslate">\\(M^{-1}\\)</span>'
        '<pre>print("$$")</pre><script src="_static/mathjax/tex-chtml.js"></script>')
    assert html_problems(tmp_path) == []
    (tmp_path / "bad.html").write_text(
        '<title>\\(M^{-1}\\) - rbd</title><p>hence $$x</p>'
        '<script src="https://cdn.example/mathjax.js"></script>')
    problems = html_problems(tmp_path)
    assert len(problems) == 3 and all(p.startswith("bad.html") for p in problems)


@pytest.mark.skipif(not (BUILT_HTML / "index.html").exists(),
                    reason="no built documentation in docs/_build/html (CI checks it after "
                           "sphinx-build with `python tests/test_docs.py docs/_build/html`)")
def test_built_html_has_no_raw_math_and_no_remote_scripts():
    problems = html_problems(BUILT_HTML)
    assert not problems, "\n".join(problems[:30])


@pytest.mark.skipif(not (BUILT_HTML / "index.html").exists(),
                    reason="no built documentation in docs/_build/html")
def test_every_built_tutorial_offers_its_notebook():
    pages = sorted((BUILT_HTML / "tutorials").glob("[0-9][0-9]_*.html"))
    assert len(pages) == len(list(TUTORIALS.glob("[0-9][0-9]_*.md")))
    for page in pages:
        html = page.read_text(encoding="utf-8")
        link = re.search(r'href="(\.\./_downloads/[0-9a-f]+/' + page.stem + r'\.ipynb)"', html)
        assert link, f"{page.name}: no notebook download link"
        assert (page.parent / link.group(1)).resolve().is_file(), link.group(1)


# --- the built tutorials: every figure an image ---------------------------------------------------
#: Figure-making calls of a tutorial's code: pyplot's constructors, and rbd.plotting's
#: ``plot_*`` functions and a result's ``.plot(...)`` when not given an ``ax=``/``fig=``
#: to draw into.  ``ax.plot``, ``ax[0].plot`` and ``plt.plot`` draw into an existing figure.
PYPLOT_MAKERS = {"figure", "subplots", "subplot_mosaic"}
PLOTTING_MAKERS = {"plot_trajectory", "plot_phase", "plot_energy", "plot_model", "plot_summary",
                   "plot_walker_phase_portrait", "plot_walker_energy", "plot_basin",
                   "plot_sparsity", "plot_contacts"}
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", flags=re.M | re.S)
FIGURE_AS_TEXT = re.compile(r"<(?:[\w.]+\.)?\w*Figure size \d")


def code_cells(markdown: str) -> list[tuple[str, str]]:
    """``(options, code)`` of each MyST code cell; magics (``%...``) left out of the code."""
    cells = []
    for body in CODE_CELL.findall(markdown):
        lines = body.split("\n")
        options = []
        while lines and lines[0].startswith(":"):
            options.append(lines.pop(0))
        code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
        cells.append((" ".join(options), code))
    return cells


def figures_made(code: str) -> int:
    """How many figures ``code`` makes (calls in :data:`PYPLOT_MAKERS`, ...; see above)."""
    count = 0
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call):
            continue
        func, keywords = node.func, {k.arg for k in node.keywords}
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = func.value if isinstance(func, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id == "plt":
            count += name in PYPLOT_MAKERS
        elif name in PLOTTING_MAKERS or (
                name == "plot" and isinstance(owner, ast.Name) and not owner.id.startswith("ax")):
            count += not keywords & {"ax", "fig"}
    return count


def tutorial_figures(markdown: str) -> int:
    """Figures a tutorial shows: those made by its cells whose output is kept."""
    return sum(figures_made(code) for options, code in code_cells(markdown)
               if not re.search(r"remove-(output|cell)", options))


class _CellOutputs(HTMLParser):
    """Images and text inside the code-cell outputs of a built page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._stack: list[bool] = []
        self.images = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        inside = bool(self._stack) and self._stack[-1]
        if tag == "img" and inside:
            self.images += 1
        if tag in VOID_TAGS:
            return
        classes = (dict(attrs).get("class") or "").split()
        self._stack.append(inside or "cell_output" in classes)

    def handle_endtag(self, tag):
        if tag not in VOID_TAGS and self._stack:
            self._stack.pop()

    def handle_data(self, data):
        if self._stack and self._stack[-1]:
            self.text.append(data)


def figure_problems(root: Path, tutorials: Path = TUTORIALS) -> list[str]:
    """Figures printed as text, and tutorial pages with fewer or more images than figures."""
    problems = []
    for page in sorted((root / "tutorials").glob("[0-9][0-9]_*.html")):
        outputs = _CellOutputs()
        outputs.feed(page.read_text(encoding="utf-8"))
        text = "".join(outputs.text)
        for match in FIGURE_AS_TEXT.finditer(text):
            problems.append(f"{page.name}: a figure printed as text: "
                            f"{text[match.start():text.find('>', match.start()) + 1]!r}")
        source = tutorials / (page.stem + ".md")
        if source.exists():
            expected = tutorial_figures(source.read_text(encoding="utf-8"))
            if outputs.images != expected:
                problems.append(f"{page.name}: {outputs.images} images in the cell outputs, "
                                f"but its code makes {expected} figures")
    return problems


@pytest.mark.slow
def test_the_figure_makers_are_rbd_plottings_functions():
    plotting = pytest.importorskip("rbd.plotting", reason="counts the figures rbd.plotting makes")
    assert PLOTTING_MAKERS == {name for name in dir(plotting) if name.startswith("plot_")}


@pytest.mark.skipif(not TUTORIALS.is_dir(), reason="run from a source checkout (tutorials/)")
def test_tutorials_with_figures_select_the_inline_backend():
    # under MPLBACKEND=Agg (CI) a kernel draws pyplot figures nowhere unless the notebook
    # asks for the inline backend itself
    for path in sorted(TUTORIALS.glob("[0-9][0-9]_*.md")):
        markdown = path.read_text(encoding="utf-8")
        if tutorial_figures(markdown):
            first = CODE_CELL.search(markdown).group(1)
            assert "%matplotlib inline" in first.splitlines(), path.name


def test_figures_are_counted_from_the_code():
    code = """
fig, ax = plt.subplots()
ax.plot(t, x); ax[0].plot(t, x); plt.plot(t, x)
plot_energy(traj)
rbd.plotting.plot_model(model, q, ax=ax3d)
result.plot(label="a map")
result.plot(ax=ax)
"""
    assert figures_made(code) == 3
    markdown = ("```{code-cell} ipython3\n%matplotlib inline\nplt.figure()\n```\n"
                "```{code-cell} ipython3\n:tags: [remove-output]\nplt.figure()\n```\n")
    assert tutorial_figures(markdown) == 1


def test_the_figure_checker_finds_text_figures_and_missing_images(tmp_path):
    (tmp_path / "tutorials").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "01_a.md").write_text(
        "```{code-cell} ipython3\nfig, ax = plt.subplots()\n```\n"
        "```{code-cell} ipython3\nplot_energy(traj)\n```\n")
    cell = '<div class="cell docutils container"><div class="cell_output docutils container">'
    good = (f'{cell}<img alt="a" src="../_images/a.png" /></div></div>'
            f'{cell}<img alt="b" src="../_images/b.png" /></div></div>'
            '<p><img src="../_static/logo.png" /> Figure size 5x5 in prose is fine</p>')
    page = tmp_path / "tutorials" / "01_a.html"
    page.write_text(good)
    assert figure_problems(tmp_path, tmp_path / "src") == []
    page.write_text(f'{cell}<img alt="a" src="../_images/a.png" /></div></div>'
                    f'{cell}<div class="output text_plain"><pre>&lt;Figure size 600x450 with '
                    f'1 Axes&gt;</pre></div></div></div>')
    problems = figure_problems(tmp_path, tmp_path / "src")
    assert len(problems) == 2
    assert "printed as text: '<Figure size 600x450 with 1 Axes>'" in problems[0]
    assert "1 images in the cell outputs, but its code makes 2 figures" in problems[1]


@pytest.mark.skipif(not (BUILT_HTML / "index.html").exists(),
                    reason="no built documentation in docs/_build/html (CI checks it after "
                           "sphinx-build with `python tests/test_docs.py docs/_build/html`)")
def test_every_figure_of_the_built_tutorials_is_an_image():
    problems = figure_problems(BUILT_HTML)
    assert not problems, "\n".join(problems)


def main(argv: list[str]) -> int:
    """``python tests/test_docs.py HTML_DIR``: list the problems of a built HTML tree."""
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python tests/test_docs.py HTML_DIR", file=sys.stderr)
        return 2
    problems = html_problems(Path(argv[0])) + figure_problems(Path(argv[0]))
    print("\n".join(problems) or f"{argv[0]}: no raw math, no remote scripts, every figure "
                                  "of the tutorials an image")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
