"""Sphinx configuration for the rbd documentation.

The tutorials live in ``../tutorials`` (MyST notebooks, text files).  Sphinx
only reads sources inside ``docs/``, so each build first mirrors every
``tutorials/NN_*.md`` into ``docs/tutorials/`` (a generated directory) and
myst-nb executes them there.
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import rbd

DOCS = Path(__file__).resolve().parent
TUTORIALS = DOCS.parent / "tutorials"
TUTORIALS_COPY = DOCS / "tutorials"


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


mirror_tutorials()

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
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
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
