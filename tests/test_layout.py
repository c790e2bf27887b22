"""The package's layout: import layers, no import cycles, modules a reader can hold in mind.

The imports are read from the source (``ast``), not executed, so the test sees
function-level (lazy) imports too.  Rules (docs/design.md, "Layout"):

* no cycle among imports, module-level or inside functions (a lazy import is
  still a dependency: a cycle through one is a knot in the design, only hidden
  from the interpreter);
* the model layer (the package ``rbd/model/``: the model and its satellite modules,
  the mimic coupling maps and the geoms; with ``joints``, ``_model_checks`` and
  ``data``) never imports the public functions (``rbd.algorithms``);
* ``rbd/reference`` never imports the kernels, the figures or the command line;
* the kernels import only each other and the layer below every other one
  (``errors``, ``data``, ``_validation``, ``_backend``);
* nothing imports ``cli``; only ``cli`` and ``animation`` import ``plotting``;
* no module is much over 600 lines, and no Cython declaration or include file
  (``.pxd``, ``.pxi``) either: they are read as modules are.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

# Source texts only: the same on both backends (CI reads them once).
pytestmark = pytest.mark.single_pass

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rbd"

#: Lines above which a module is too long to read as one piece (about 600, with the
#: slack of a docstring or two).
MAX_MODULE_LINES = 650

#: What the kernels may import from the Python layer.
KERNEL_DEPENDENCIES = {"rbd.errors", "rbd.data", "rbd._validation", "rbd._backend"}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*"))
            if p.suffix in (".py", ".pyx") and "build" not in p.parts}


MODULES = _sources()


def _python_imports(path: pathlib.Path) -> ast.Module:
    """The module's AST; for Cython, only its plain Python import lines."""
    text = path.read_text()
    if path.suffix == ".pyx":
        text = "\n".join(line for line in text.splitlines()
                         if line.startswith(("import ", "from ")) and " cimport " not in line
                         and not line.startswith(("from libc", "from cpython", "from cython")))
    return ast.parse(text)


def _targets(module: str, node, is_package: bool) -> list[str]:
    """The rbd modules an import statement of ``module`` refers to."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base) + (f".{node.module}" if node.module else "")
    else:
        target = node.module or ""
    names = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        names.append(sub if sub in MODULES else target)
    return names


def _graph(top_level_only: bool) -> dict[str, set[str]]:
    graph = {}
    for module, path in MODULES.items():
        tree = _python_imports(path)
        nodes = tree.body if top_level_only else ast.walk(tree)
        edges = set()
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.update(t for t in _targets(module, node, path.name == "__init__.py")
                             if t in MODULES and t != module)
        graph[module] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_sources_were_found():
    assert "rbd.algorithms" in MODULES and "rbd.reference.rnea" in MODULES
    assert "rbd._kernels.rnea" in MODULES


@pytest.mark.slow
def test_no_cycle_among_module_level_imports():
    assert _cycles(_graph(top_level_only=True)) == []


@pytest.mark.slow
def test_no_cycle_among_all_imports():
    """Imports inside functions and under ``if TYPE_CHECKING:`` count too (``ast.walk``)."""
    assert _cycles(_graph(top_level_only=False)) == []


#: The model layer: the tree and what it is built from.  It sits below the public
#: functions, so it never imports them (not even inside a function).
MODEL_LAYER = ("rbd._model_checks", "rbd.joints", "rbd.data",
               *(module for module in MODULES if module.split(".")[:2] == ["rbd", "model"]))


def test_the_model_package_holds_the_model_and_its_satellites():
    """``rbd/model/`` is a package: the model, its records, coupling maps and geoms."""
    for module in ("rbd.model", "rbd.model._body", "rbd.model.coupling", "rbd.model.geoms",
                   "rbd.model._attachments", "rbd.model._views", "rbd.model._mimic",
                   "rbd.model._joint_properties"):
        assert module in MODEL_LAYER
    assert MODULES["rbd.model"].name == "__init__.py"
    assert "rbd.models" not in MODEL_LAYER      # the named example models are no part of it


@pytest.mark.slow
def test_the_model_layer_does_not_import_the_algorithms():
    graph = _graph(top_level_only=False)
    wrong = [(module, target) for module in MODEL_LAYER if module in graph
             for target in graph[module]
             if target == "rbd.algorithms" or target.startswith("rbd.algorithms.")
             or target == "rbd"]
    assert wrong == []


@pytest.mark.slow
def test_imports_inside_functions_are_read():
    """The graph sees a relative import in a function body, resolved against the package."""
    tree = ast.parse("def f():\n    from .algorithms import rnea\n    from ..errors import X\n")
    targets = {t for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for t in _targets("rbd.symbolic.lagrangian", node, is_package=False)}
    assert targets == {"rbd.symbolic.algorithms", "rbd.errors"}
    assert "rbd.algorithms._coupled" in _graph(top_level_only=False)["rbd.algorithms._dispatch"]


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.slow
def test_nothing_imports_upward():
    graph = _graph(top_level_only=False)
    wrong = []
    for module, targets in graph.items():
        for target in targets:
            if module.startswith("rbd.reference") and (
                    target.startswith("rbd._kernels") or target in ("rbd.plotting", "rbd.cli")):
                wrong.append((module, target))
            if module.startswith("rbd._kernels") and not (
                    target.startswith("rbd._kernels") or target in KERNEL_DEPENDENCIES):
                wrong.append((module, target))
            if target == "rbd.cli":
                wrong.append((module, target))
            if target == "rbd.plotting" and not module.startswith(("rbd.cli", "rbd._cli",
                                                                     "rbd.animation")):
                wrong.append((module, target))
    assert wrong == []


#: The Cython declaration and include files: ``cimport``-ed or ``include``-d, not imported,
#: so not in MODULES, but read as a module is (the lane kernels are mostly ``.pxi`` text).
CYTHON_TEXTS = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*")
                      if p.suffix in (".pxd", ".pxi") and "build" not in p.parts)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_length(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module}: {lines} lines (split it along its seams)"


def test_the_cython_declarations_and_includes_were_found():
    assert "rbd/_kernels/_lanes.pxd" in CYTHON_TEXTS and "rbd/_kernels/soa.pxi" in CYTHON_TEXTS


@pytest.mark.parametrize("path", CYTHON_TEXTS)
def test_cython_text_length(path):
    lines = len((ROOT / path).read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path}: {lines} lines (split it along its seams)"


def test_the_kernels_table_names_existing_functions():
    """The C functions listed in ``rbd/_kernels/__init__.py``'s table are defined in a kernel."""
    doc = (PACKAGE / "_kernels" / "__init__.py").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("``")]
    column = doc.splitlines()[3].index("C functions")
    names = {name for row in rows for name in re.findall(r"``(\w+)``", row[column:])}
    sources = "\n".join(p.read_text() for p in sorted((PACKAGE / "_kernels").iterdir())
                        if p.suffix in (".pyx", ".pxd"))
    defined = set(re.findall(r"^\s*(?:cdef|cpdef|def|ctypedef|class)\b[^\n]*?\b(\w+)\s*[(:]",
                             sources, flags=re.M))
    assert len(names) >= 6 and "ModelC" in names
    assert sorted(names - defined) == []
