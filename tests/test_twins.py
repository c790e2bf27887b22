"""Every compiled kernel renders a reference text: the twin rules, checked on the sources.

The kernels (``rbd/_kernels/X.pyx``) and the reference derivations
(``rbd/reference/X.py``) are two renderings of one text (docs: DESIGN.md,
"Reference and kernel of one algorithm").  These tests read the sources (no
build needed) and check the rules a reader relies on:

* each ``X.pyx`` has a ``reference/X.py``, except the modules of the
  dispatch and validation layer (``_model.pyx`` and the ``_args``, ``_base``
  and ``_rollout_batch`` modules split from it; their docstrings say so);
* each compiled entry point of a kernel module (a module-level ``def``,
  ``cpdef`` or non-inline ``cdef`` function) has a reference function of the
  same name; a ``cdef`` named ``c_X`` is the nogil body of the ``def X`` beside it, one
  named ``X_into`` is reference ``X`` writing into its caller's arrays;
* twins have the same passes (``# --- <pass>:`` headers) in the same order and
  the same equation tags, of every family the reference texts use
  (:data:`TAG_FAMILIES`); a reference function with two or more passes (loops at
  its top level) names each with a header;
* where twins differ on purpose, the difference is a row of one list, the table
  "Where the twins differ" of ``docs/design.md``: read here, it exempts its twin from
  the rule it names (and a row whose twin or difference is gone fails);
* no kernel module imports the Python layer above it;
* functions stay small: kernels ≤ 80 lines, reference functions ≤ 60 lines of code;
* the suite's named tolerance ``RTOL_EXACT`` is defined once (``tests/helpers.py``).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

# Source texts only: the same on both backends (CI reads them once).
pytestmark = pytest.mark.single_pass

ROOT = Path(__file__).resolve().parents[1] / "rbd"
KERNELS = ROOT / "_kernels"
REFERENCE = ROOT / "reference"

#: The dispatch / validation layer: no derivation, so no reference twin.
NO_TWIN = {"_model", "_args", "_base", "_rollout_batch", "_coupled", "_constrained_batch",
           "_constrained_state",
           # three builds of the lane texts soa.pxi, soa_rollout.pxi and soa_crba.pxi
           # (checked against rnea.pyx, aba.pyx, rollout.pyx and crba.pyx in
           # tests/test_soa.py and tests/test_soa_rollout.py)
           "_soa_portable", "_soa_avx2", "_soa_avx512"}
#: Kernels whose reference text lives beside its pipeline rather than in ``rbd/reference``:
#: the contact pipeline's stages (``rbd/constraints``, docs/design.md, "Collision detection
#: and the soft-constraint solvers").
REFERENCE_HOMES = {stem: ROOT / "constraints"
                   for stem in ("solver_newton", "solver_pgs", "collision_primitive",
                                "collision_box", "collision", "forward", "tendon_rows",
                                "collision_gjk", "collision_epa", "collision_convex",
                                "collision_mesh", "collision_multi", "collision_multiccd")}
#: The compiled contact step's text is the contact simulation loop.
REFERENCE_HOMES["contact"] = ROOT / "simulation"
#: The compiled pass's equality rows, fluid and passive forces (``forward.pyx`` calls them).
REFERENCE_HOMES.update({stem: ROOT / "constraints" for stem in ("equality_rows", "fluid",
                                                                "passive")})

#: What a kernel module may import at run time (``import`` / ``from … import``, not
#: ``cimport``): the standard library and NumPy, its own package, and the low layers.
ALLOWED_RBD_IMPORTS = ("rbd._kernels", "rbd.data", "rbd.errors", "rbd._validation")

KERNEL_MAX_LINES = 80
REFERENCE_MAX_CODE_LINES = 60

_ENTRY = re.compile(
    r"^(?:def\s+|cpdef\s+[\w\.\*\s]*?\b|cdef\s+(?!inline\b|class\b|struct\b|enum\b|extern\b)"
    r"[\w\.\*\s]*?\b)(\w+)\s*\(")
_ANY_FUNCTION = re.compile(r"^(\s*)(?:def|cpdef|cdef)\s+(?!class\b|struct\b|enum\b)"
                           r"[\w\.\*\s]*?\b(\w+)\s*\(")
_HEADER = re.compile(r"^\s*# --- ([^:]+?)\s*(?::|$)")
#: The equation-tag families of the texts: Si & Guenter, Liu & Jain, Pai, Ascher & Kry,
#: Guenter & Lee, Spong et al.'s walker (SPW), the numbered notes of the derivative
#: modules (``W (n)``: rbd/reference/derivatives.py, ``D (n)``: derivatives_tangent.py);
#: then Featherstone's tables (``RBDA T5.1``) and Pai's sections (``Pai §7``).
TAG_FAMILIES = ("S&G", "L&J", "Pai", "GL", "SPW", "W", "D", "Tonon")
_TAG = re.compile(rf"(?<![\w&])(?:{'|'.join(re.escape(f) for f in TAG_FAMILIES)}) \(\d+\)"
                  r"(?:–\(\d+\))?|RBDA T\d+\.\d+|Pai §\d+")
#: Anything shaped like a tag at the end of a code line: ``Name (n)`` or ``Name Tn.m``.
_TAG_LIKE = re.compile(r"(?<![\w&])([A-Z][A-Za-z&]*) (?:\(\d+\)|T\d+\.\d+)")

DOC = ROOT.parent / "docs" / "design.md"
DIVERGENCE_SECTION = "## Where the twins differ"
#: The rules a row of the divergence list may name.
RULES = ("passes", "tags", "text")
_IMPORT = re.compile(r"^\s*(?:from\s+([\w\.]+)\s+import\b|import\s+([\w\.]+))")


def reference_path(stem: str) -> Path:
    """The reference text of kernel ``stem`` (``rbd/reference/<stem>.py`` unless listed in
    :data:`REFERENCE_HOMES`)."""
    return REFERENCE_HOMES.get(stem, REFERENCE) / f"{stem}.py"


def kernel_modules() -> list[Path]:
    return sorted(KERNELS.glob("*.pyx"))


def twin_modules() -> list[Path]:
    return [p for p in kernel_modules() if p.stem not in NO_TWIN]


def entry_points(source: str) -> list[str]:
    """Names of the module-level def, cpdef and non-inline cdef functions."""
    return [m.group(1) for line in source.splitlines() if (m := _ENTRY.match(line))]


def kernel_functions(source: str) -> dict[str, list[str]]:
    """Every function (also inline, also methods) of a .pyx/.pxd: name -> its lines."""
    lines = source.splitlines()
    functions = {}
    for k, line in enumerate(lines):
        m = _ANY_FUNCTION.match(line)
        if not m:
            continue
        indent, end = len(m.group(1)), k + 1
        while end < len(lines) and lines[end - 1].count("(") > lines[end - 1].count(")") \
                or lines[end - 1].rstrip().endswith(","):
            end += 1       # the rest of the signature
        if not lines[end - 1].rstrip().endswith(":"):
            continue       # a declaration (.pxd), not a definition
        while end < len(lines):
            text = lines[end]
            if text.strip() and not text.lstrip().startswith("#") \
                    and len(text) - len(text.lstrip()) <= indent:
                break
            end += 1
        functions[m.group(2)] = [t for t in lines[k:end] if t.strip()]
    return functions


def reference_functions(path: Path) -> dict[str, tuple[ast.FunctionDef, list[str]]]:
    source = path.read_text()
    lines = source.splitlines()
    return {node.name: (node, lines[node.lineno - 1:node.end_lineno])
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)}


_CALL = re.compile(r"\b(\w+)\s*\(")
_CIMPORT = re.compile(r"from rbd\._kernels\.(\w+) cimport (\([^)]*\)|[\w, ]+)")
_REF_IMPORT = re.compile(r"^from \.(\w+) import ([\w, ]+)$", re.M)

#: Entry points that only hand their arguments to the compiled model, and the kernel
#: function that runs for them (``c_X`` runs for ``def X`` without being listed).
DELEGATES = {("block_elimination", "aba_modified"): ("aba", "aba")}


@functools.cache
def kernel_namespace(stem: str,
                     _visiting: frozenset = frozenset()) -> dict[str, tuple[list[str], str]]:
    """The functions a kernel module can call (its own, its .pxd's, those it cimports):
    name -> (lines, the module that defines it).  ``.pxd`` files may cimport each other
    both ways; a module already being read is not followed again.  Cached: the texts do
    not change during a run, and every function a twin calls looks its module up here."""
    own = "".join((KERNELS / f"{stem}{ext}").read_text()
                  for ext in (".pxd", ".pyx") if (KERNELS / f"{stem}{ext}").exists())
    table = {}
    visiting = _visiting | {stem}
    for module, names in _CIMPORT.findall(own):
        theirs = kernel_namespace(module, visiting) if module not in visiting else {}
        table.update({n: theirs[n] for n in re.findall(r"\w+", names) if n in theirs})
    table.update({name: (lines, stem) for name, lines in kernel_functions(own).items()})
    return table


@functools.cache
def reference_namespace(stem: str) -> dict[str, tuple[list[str], str]]:
    """The functions a reference module can call (its own, those it imports from a
    sibling): name -> (lines, the module that defines it)."""
    path = reference_path(stem)
    table = {}
    for module, names in _REF_IMPORT.findall(path.read_text()):
        if not reference_path(module).is_file():     # a module of another layer
            continue
        theirs = reference_namespace(module)
        table.update({n.strip(): theirs[n.strip()] for n in names.split(",")
                      if n.strip() in theirs})
    table.update({name: (text, stem) for name, (_, text) in reference_functions(path).items()})
    return table


def tags_with_helpers(name: str, stem: str, namespace) -> set[str]:
    """The equation tags of ``name`` (module ``stem``) and of every function it calls,
    each callee looked up where its caller is defined."""
    seen, todo, found = {(name, stem)}, [(name, stem)], set()
    while todo:
        fname, module = todo.pop()
        table = namespace(module)
        lines, _ = table[fname]
        found |= tags(lines)
        for line in lines[1:]:
            for callee in _CALL.findall(line.split("#")[0]):
                if callee in table and (callee, table[callee][1]) not in seen:
                    seen.add((callee, table[callee][1]))
                    todo.append((callee, table[callee][1]))
    return found


def passes(lines: list[str]) -> list[str]:
    return [m.group(1) for line in lines if (m := _HEADER.match(line))]


def tags(lines: list[str]) -> set[str]:
    """The equation tags at the ends of ``lines``; a range ``S&G (18)–(21)`` counts each."""
    found = set()
    for line in lines:
        if "#" not in line:
            continue
        for tag in _TAG.findall(line.split("#", 1)[1]):
            if m := re.fullmatch(r"(.+) \((\d+)\)–\((\d+)\)", tag):
                found |= {f"{m[1]} ({n})" for n in range(int(m[2]), int(m[3]) + 1)}
            else:
                found.add(tag)
    return found


def divergences() -> dict[tuple[str, str], str]:
    """The table "Where the twins differ" of docs/design.md: ``(module.function, rule) -> why``."""
    text = DOC.read_text()
    assert DIVERGENCE_SECTION in text, f"docs/design.md has no section {DIVERGENCE_SECTION!r}"
    section = text.split(DIVERGENCE_SECTION, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[1] in RULES:
            rows[(cells[0].strip("`"), cells[1])] = cells[2]
    return rows


def top_level_loops(node: ast.FunctionDef) -> int:
    """The passes of a reference function: the loops at the top level of its body."""
    return sum(isinstance(n, (ast.For, ast.While)) for n in node.body)


def twins():
    """(module, kernel name, reference name) for every compiled entry point."""
    for path in twin_modules():
        source = path.read_text()
        defs = set(entry_points(source))
        for name in entry_points(source):
            target = name[2:] if name.startswith("c_") and name[2:] in defs else name
            target = target[:-5] if target.endswith("_into") else target
            yield pytest.param(path.stem, name, target, id=f"{path.stem}.{name}")


# --- the rules -------------------------------------------------------------------------------
@pytest.mark.parametrize("path", twin_modules(), ids=lambda p: p.name)
def test_every_kernel_module_has_a_reference_module(path):
    assert reference_path(path.stem).is_file(), \
        f"{path.name} has no twin {reference_path(path.stem).relative_to(ROOT.parent)}"


def test_the_dispatch_layer_says_it_has_no_twin():
    for stem in NO_TWIN:
        doc = (KERNELS / f"{stem}.pyx").read_text()
        assert "no reference twin" in doc, f"{stem}.pyx must say it has no reference twin"
        assert not (REFERENCE / f"{stem}.py").exists()


def test_the_parser_finds_entry_points_and_skips_the_rest():
    source = ("cdef int aba(const ModelC* m) noexcept nogil:\n"
              "cdef inline void pivot(double* x) noexcept nogil:\n"
              "cdef double* scratch(int n) noexcept nogil:\n"
              "cdef bint _flag = False\ncdef class K:\n    def method(self):\n"
              "cpdef double energy(double x):\ndef forward_dynamics(model, q):\n")
    assert entry_points(source) == ["aba", "scratch", "energy", "forward_dynamics"]


@pytest.mark.slow
@pytest.mark.parametrize("module, name, target", list(twins()))
def test_every_entry_point_has_a_reference_twin(module, name, target):
    reference = reference_functions(reference_path(module))
    assert target in reference, \
        f"rbd/_kernels/{module}.pyx:{name} has no rbd.reference.{module}.{target}"
    kernel = kernel_functions((KERNELS / f"{module}.pyx").read_text())[name]
    node, text = reference[target]
    exempt = {rule for (twin, rule) in divergences() if twin == f"{module}.{target}"}
    if "passes" not in exempt:
        assert passes(kernel) == passes(text), f"{module}.{name}: passes differ"
        assert len(passes(text)) >= top_level_loops(node) or top_level_loops(node) < 2, (
            f"rbd.reference.{module}.{target} has {top_level_loops(node)} passes and "
            f"{len(passes(text))} '# --- <pass>:' headers")
    kernel_module, runs = DELEGATES.get((module, name), (module, name))
    if f"c_{name}" in entry_points((KERNELS / f"{module}.pyx").read_text()):
        runs = f"c_{name}"
    kernel_tags = tags_with_helpers(runs, kernel_module, kernel_namespace)
    reference_tags = tags_with_helpers(target, module, reference_namespace)
    assert "tags" in exempt or kernel_tags == reference_tags, (
        f"{module}.{name}: equation tags differ: kernel only "
        f"{sorted(kernel_tags - reference_tags)}, reference only "
        f"{sorted(reference_tags - kernel_tags)}")


def test_the_checker_knows_every_tag_family_of_the_texts():
    """A new family of equation tags (``XY (n)``) must join TAG_FAMILIES, or it goes unchecked."""
    unknown = {}
    for path in [*REFERENCE.glob("*.py"), *map(reference_path, REFERENCE_HOMES),
                 *KERNELS.glob("*.p[yx][xd]")]:
        for line in path.read_text().splitlines():
            code, _, comment = line.partition("#")
            if not code.strip():
                continue   # a comment line, not a tag at the end of a statement
            for family in _TAG_LIKE.findall(comment):
                if family not in (*TAG_FAMILIES, "RBDA"):
                    unknown.setdefault(family, path.name)
    assert not unknown, f"tag families the twin checker does not know: {unknown}"


def test_the_tag_parser_reads_every_family_and_range():
    lines = ["x = 1  # S&G (8), L&J (72)", "y = 2  # W (7)–(9); D (2), GL (14)",
             "z = 3  # RBDA T5.1, Pai §7, Pai (5), SPW (3)", "# S&G (99) in a comment line"]
    assert tags(lines) == {"S&G (8)", "L&J (72)", "W (7)", "W (8)", "W (9)", "D (2)",
                           "GL (14)", "RBDA T5.1", "Pai §7", "Pai (5)", "SPW (3)", "S&G (99)"}


def test_every_divergence_row_names_a_twin_and_a_real_difference():
    """A row of docs/design.md's list must name an existing twin pair, and a row that
    exempts a rule must be needed (the twins really differ there)."""
    pairs = {f"{p.values[0]}.{p.values[2]}": p.values for p in twins()}
    rows = divergences()
    assert rows, "the divergence list is empty or unreadable"
    for (twin, rule), why in rows.items():
        assert twin in pairs, f"divergence row {twin!r}: no such twin pair"
        assert why, f"divergence row {twin!r} says nothing"
        module, name, target = pairs[twin]
        kernel = kernel_functions((KERNELS / f"{module}.pyx").read_text())[name]
        _, text = reference_functions(reference_path(module))[target]
        if rule == "passes":
            assert passes(kernel) != passes(text), f"{twin}: passes agree, drop the row"
        if rule == "tags":
            kernel_module, runs = DELEGATES.get((module, name), (module, name))
            assert (tags_with_helpers(runs, kernel_module, kernel_namespace)
                    != tags_with_helpers(target, module, reference_namespace)), \
                f"{twin}: tags agree, drop the row"


def test_the_aba_twins_say_the_same_about_the_pivot_inverse():
    """The reference solves with the factor of D_i, the kernel multiplies by D_i⁻¹ formed
    from that factor: both texts say so and point at the one list of divergences."""
    assert ("aba.aba", "text") in divergences()
    reference = (REFERENCE / "aba.py").read_text()
    kernel = (KERNELS / "aba.pxd").read_text() + (KERNELS / "aba.pyx").read_text()
    for text, where in ((reference, "rbd/reference/aba.py"), (kernel, "rbd/_kernels/aba")):
        assert "Where the twins differ" in text, f"{where} does not point at the list"
    assert "never inverted explicitly" not in reference


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.p[yx][xd]")), ids=lambda p: p.name)
def test_no_kernel_module_imports_the_python_layer(path):
    for line in path.read_text().splitlines():
        m = _IMPORT.match(line)
        if not m or "cimport" in line:
            continue
        module = m.group(1) or m.group(2)
        if module == "rbd" or module.startswith("rbd."):
            assert module.startswith(ALLOWED_RBD_IMPORTS), \
                f"{path.name} imports {module}, above the kernels: {line.strip()}"


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.p[yx][xd]")), ids=lambda p: p.name)
def test_kernel_functions_are_small(path):
    for name, lines in kernel_functions(path.read_text()).items():
        assert len(lines) <= KERNEL_MAX_LINES, \
            f"{path.name}:{name} has {len(lines)} lines (at most {KERNEL_MAX_LINES})"


@pytest.mark.parametrize("path", sorted({*REFERENCE.glob("*.py"),
                                          *map(reference_path, REFERENCE_HOMES)}),
                         ids=lambda p: p.name)
def test_reference_functions_are_small(path):
    for name, (node, lines) in reference_functions(path).items():
        skip = node.body[0].end_lineno - node.lineno + 1 if ast.get_docstring(node) else 0
        code = [t for t in lines[skip:] if t.strip() and not t.lstrip().startswith("#")]
        if not ast.get_docstring(node):
            code = code[1:]   # the def line
        assert len(code) <= REFERENCE_MAX_CODE_LINES, \
            f"{path.name}:{name} has {len(code)} lines of code (at most 60)"


def test_the_exact_tolerance_is_defined_once():
    tests = Path(__file__).resolve().parent
    defining = sorted(path.name for path in tests.glob("*.py")
                      if re.search(r"^RTOL_EXACT\s*=", path.read_text(), re.M))
    assert defining == ["helpers.py"], f"RTOL_EXACT defined in {defining}"


def test_rnea_tags_the_bias_force_not_the_force_line():
    """S&G (21) is the bias force ``v ×* I v``; the force ``f = I a + …`` is RBDA T5.1."""
    source = (REFERENCE / "rnea.py").read_text().splitlines()
    bias = [line for line in source if "crf(" in line and "=" in line]
    force = [line for line in source if "inertia @ a[i]" in line]
    assert bias and all("S&G (21)" in line for line in bias)
    assert force and all("RBDA T5.1" in line and "S&G (21)" not in line for line in force)


# --- the renderings that gained a reference text compute the same numbers ------------------
#: Exact algorithms on these small trees (κ(M) ≲ 1e4): see tests/helpers.py.
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reference_mass_matrix_inverse_by_the_aba_on_unit_forces(seed):
    import numpy as np
    from helpers import ALL_JOINTS, RTOL_EXACT, assert_close

    import rbd
    from rbd.reference import aba, crba, ploen

    model = rbd.testing.random_model(seed, 6, ALL_JOINTS, floating_base=seed == 1)
    q, _, _ = rbd.testing.random_state(model, seed)
    M_inv = aba.mass_matrix_inverse(model, q)
    assert_close(M_inv, crba.mass_matrix_inverse(model, q), RTOL_EXACT, "ABA vs Cholesky")
    assert_close(M_inv, ploen.mass_matrix_inverse_factorized(model, q), RTOL_EXACT,
                 "ABA on unit forces vs S&G (58)")
    assert_close(M_inv @ crba.crba(model, q), np.eye(model.nv), RTOL_EXACT, "M⁻¹ M")


def test_reference_modified_pivot_is_the_aba_flag():
    from helpers import ALL_JOINTS, RTOL_EXACT, assert_close

    import rbd
    from rbd.reference import aba, block_elimination

    model = rbd.testing.random_model(4, 6, ALL_JOINTS)
    q, v, tau = rbd.testing.random_state(model, 4)
    plain = aba.aba(model, q, v, tau)
    assert_close(block_elimination.aba_modified(model, q, v, tau), plain, RTOL_EXACT,
                 "modified pivot")
    assert_close(aba.aba(model, q, v, tau, modified_pivot=True), plain, RTOL_EXACT, "flag")


def test_reference_world_poses_are_the_forward_kinematics():
    from helpers import ALL_JOINTS, RTOL_EXACT, assert_close

    import rbd
    from rbd.reference import kinematics

    model = rbd.testing.random_model(5, 6, ALL_JOINTS, floating_base=True)
    q, _, _ = rbd.testing.random_state(model, 5)
    T = kinematics.forward_kinematics(model, q)
    R, p = kinematics.world_poses(model, q, 3)
    assert len(R) == 4
    for i in range(4):
        assert_close(R[i], T[i, :3, :3], RTOL_EXACT, f"R_{i}")
        assert_close(p[i], T[i, :3, 3], RTOL_EXACT, f"p_{i}")
