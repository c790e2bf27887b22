"""Sphinx configuration for the rbd documentation.

The tutorials live in ``../tutorials`` (MyST notebooks, text files).  Sphinx
only reads sources inside ``docs/``, so each build first mirrors every
``tutorials/NN_*.md`` into ``docs/tutorials/`` (a generated directory) and
myst-nb executes them there.  Each is also converted to a Jupyter notebook in
``docs/tutorials/notebooks/`` (excluded from the sources), which every tutorial
page offers for download through a line inserted under its title.

MathJax is served from the build itself (``_static/mathjax``), so formulas
render without a network connection.

The build may read in parallel (``sphinx-build -j 2``, as CI does): myst-nb then
executes the tutorials in the reading processes, two at a time.  For that the
execution cache's database is created here, before the processes start, the
tutorials are spread over the reading order (Sphinx hands each process a run of
consecutive documents), and the offline MathJax extension, which only copies files
once the build has finished, is declared safe to run in parallel.
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
from pathlib import Path

from jupyter_cache import get_cache

import rbd
from rbd.notebooks import tutorial_notebook

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


mirror_tutorials()
write_notebooks()

# The execution cache (myst-nb's "cache" mode, below).  Its database is created now, in
# the one process: two reading processes that each found it missing would both create
# its tables.  No connection is kept open into the processes.
EXECUTION_CACHE = DOCS / "_build" / ".jupyter_cache"
get_cache(EXECUTION_CACHE).db.dispose()

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


def spread_tutorials(app, env, docnames: list[str]) -> None:
    """Reorder the documents to read so that the tutorials are evenly spaced among them.

    A parallel build reads the sorted list in runs of consecutive documents, one run
    per process at a time; sorted, the executed tutorials would all fall in the last
    run or two and execute one after another in one process.
    """
    tutorials = [d for d in docnames if d.startswith("tutorials/")]
    others = [d for d in docnames if not d.startswith("tutorials/")]
    if app.parallel < 2 or not tutorials:
        return
    step = (len(others) + len(tutorials)) / len(tutorials)
    order = list(others)
    for k, docname in enumerate(tutorials):
        order.insert(int(k * step), docname)
    docnames[:] = order


def drop_unlinked_sources(app, env) -> None:
    """Leave out viewcode's source pages that no documented object links to.

    A serial build drops them as it goes (viewcode forgets a module without links
    whenever it purges a document before reading it); a parallel build purges every
    document before reading any, and would keep them (``_modules/functools.html``, the
    module of the ``cached_property`` members of ``rbd.symbolic.GuenterLee``).  Either
    way the pages are the same.
    """
    modules = getattr(env, "_viewcode_modules", {})
    for name, entry in list(modules.items()):
        if entry and not entry[2]:      # (code, tags, used, refname): no object links here
            del modules[name]


def setup(app) -> None:
    # sphinx-mathjax-offline declares nothing about parallel builds (Sphinx then reads
    # serially, and -W makes its notice an error); it copies MathJax into the output
    # once, on build-finished, in the main process, so it is safe to read and write
    # in parallel.
    mathjax = app.extensions.get("sphinx-mathjax-offline")
    if mathjax is not None:
        mathjax.parallel_read_safe = mathjax.parallel_write_safe = True
    app.connect("env-before-read-docs", spread_tutorials)
    app.connect("env-updated", drop_unlinked_sources)
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
nb_execution_cache_path = str(EXECUTION_CACHE)
nb_merge_streams = True

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
