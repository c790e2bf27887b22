"""Sphinx configuration for the rbd documentation.

The tutorials live in ``../tutorials`` (MyST notebooks, text files).  Sphinx
only reads sources inside ``docs/``, so each build first mirrors every
``tutorials/NN_*.md`` into ``docs/tutorials/`` (a generated directory) and
myst-nb executes them there.  Each is also converted to a Jupyter notebook in
``docs/tutorials/notebooks/`` (excluded from the sources), which every tutorial
page offers for download through a line inserted under its title.

The tutorials are executed before Sphinx reads them, on every core at once, into
myst-nb's execution cache (``execute_tutorials``); Sphinx then reads each one
serially from the cache, as if it had executed it itself.

MathJax is served from the build itself (``_static/mathjax``), so formulas
render without a network connection.
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.executors import load_executor
from sphinx.util import logging

import rbd
from rbd.notebooks import tutorial_notebook

LOGGER = logging.getLogger(__name__)
DOCS = Path(__file__).resolve().parent
TUTORIALS = DOCS.parent / "tutorials"
TUTORIALS_COPY = DOCS / "tutorials"
NOTEBOOKS = TUTORIALS_COPY / "notebooks"


def mirror_tutorials() -> None:
    """Copy ``tutorials/NN_*.md`` into ``docs/tutorials/``; drop copies of deleted ones."""
    TUTORIALS_COPY.mkdir(exist_ok=True)
    sources = {p.name: p for p in sorted(TUTORIALS.glob("[0-9][0-9]_*.md"))}
    for stale in TUTORIALS_COPY.glob("*.md"):
        if stale.name not in sources:
            stale.unlink()
    for name, source in sources.items():
        target = TUTORIALS_COPY / name
        if not target.exists() or not filecmp.cmp(source, target, shallow=False):
            shutil.copy2(source, target)


def write_notebooks() -> None:
    """Convert each tutorial to ``docs/tutorials/notebooks/NN_*.ipynb`` (when it changed).

    As ``rbd notebooks`` writes them: MyST rewritten as plain Markdown, each exercise's
    answer a stub and its check a call of :func:`rbd.exercises.check`.
    """
    NOTEBOOKS.mkdir(parents=True, exist_ok=True)
    sources = {p.stem: p for p in sorted(TUTORIALS.glob("[0-9][0-9]_*.md"))}
    for stale in NOTEBOOKS.glob("*.ipynb"):
        if stale.stem not in sources:
            stale.unlink()
    for stem, source in sources.items():
        # plain Markdown (no MyST roles), exercise answers as stubs: see teaching.md
        text = json.dumps(tutorial_notebook(source), indent=1, ensure_ascii=False) + "\n"
        target = NOTEBOOKS / f"{stem}.ipynb"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


def execute_tutorials(cache_path: Path, timeout: int) -> None:
    """Execute the mirrored tutorials that the cache lacks, one process per core.

    myst-nb's "cache" mode executes a notebook when it reads it, so Sphinx would run
    the tutorials one after another (``sphinx-build -j`` would read in parallel, but
    its processes merge the cross-references of the API pages in whatever order they
    finish).  Here jupyter-cache's parallel executor runs them first, each in its own
    directory as myst-nb does, read by myst-nb's own reader so that the cache matches
    the notebook myst-nb reads.  A tutorial that fails is not cached: myst-nb then
    executes it again while reading and fails the build with its traceback.
    """
    cache = get_cache(cache_path)
    uris = [str(path) for path in sorted(TUTORIALS_COPY.glob("[0-9][0-9]_*.md"))]
    for uri in uris:
        cache.add_nb_to_project(uri, read_data={"name": "myst_nb_md", "type": "plugin"})
    result = load_executor("local-parallel", cache=cache).run_and_cache(filter_uris=uris,
                                                                        timeout=timeout)
    for uri in result.succeeded:
        record = cache.get_cached_project_nb(uri)
        seconds = record.data.get("execution_seconds", float("nan")) if record else float("nan")
        LOGGER.info("%s: executed in %.1f s (in parallel, cached)", Path(uri).name, seconds)
    for uri in result.excepted + result.errored:
        LOGGER.info("%s: failed in parallel; executed again while reading", Path(uri).name)


mirror_tutorials()
write_notebooks()

# A tutorial's title line, before its first code cell.
TITLE = re.compile(r"^# .+$", flags=re.M)


def offer_notebook(app, docname: str, source: list[str]) -> None:
    """Insert a download link to the tutorial's notebook under its title."""
    if not docname.startswith("tutorials/") or docname.count("/") != 1:
        return
    stem = docname.split("/", 1)[1]
    if not (NOTEBOOKS / f"{stem}.ipynb").exists():
        return
    head, fence, rest = source[0].partition("```")
    title = TITLE.search(head)
    if title is None:
        return
    link = (f"\n\n{{download}}`Download this tutorial as a Jupyter notebook "
            f"<notebooks/{stem}.ipynb>` ({stem}.ipynb, exercises as stubs to fill in; see "
            f"{{doc}}`/teaching`).\n")
    source[0] = head[:title.end()] + link + head[title.end():] + fence + rest


def skip_matplotlib_members(app, what, name, obj, skip, options):
    """Leave out what matplotlib defines on rbd's Figure subclass (its generated ``set``)."""
    if what == "class" and getattr(obj, "__module__", "").startswith("matplotlib"):
        return True
    return None


def skip_tuple_fields(app, what, name, obj, skip, options):
    """Leave out a named tuple's field accessors ("Alias for field number k"): the
    class's "Attributes" section documents each field, and a second entry of the same
    name would be a duplicate description."""
    if what == "class" and type(obj).__name__ == "_tuplegetter":
        return True
    return None


def setup(app) -> None:
    app.connect("source-read", offer_notebook)
    app.connect("autodoc-skip-member", skip_matplotlib_members)
    app.connect("autodoc-skip-member", skip_tuple_fields)

# --- project ---------------------------------------------------------------------------------
project = "rbd"
author = "The rbd developers"
copyright = "The rbd developers"
release = rbd.__version__
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx-mathjax-offline",
    "sphinx_design",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md", "tutorials/notebooks"]
root_doc = "index"

# --- MyST and notebook execution ----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "cache"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_merge_streams = True
execute_tutorials(Path(nb_execution_cache_path), nb_execution_timeout)

# MathJax from the build, not a CDN (the extension copies it into _static/mathjax).
mathjax_path = "mathjax/tex-chtml.js"

# --- API reference -------------------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# --- HTML ----------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"rbd {release}"
