"""Tutorials as Jupyter notebooks a student fills in, and the grading of submitted ones.

The MyST tutorials in ``tutorials/`` hold each exercise's worked solution (folded on the web
page, executed by the docs build). :func:`tutorial_notebook` turns a tutorial into a Jupyter
notebook: MyST roles and directives become plain Markdown, and with ``solutions=False`` every
function of an exercise's answer cell becomes a stub that raises :class:`NotImplementedError`,
its check cell a call of :func:`rbd.exercises.check` that reports "not done yet" instead of
failing. :func:`grade` runs the exercise cells of a folder of submitted notebooks, one process
each, and tabulates *student file x exercise -> pass / fail / not done* with the check's message.

From the shell: ``rbd notebooks OUT_DIR`` writes the notebooks, ``rbd grade FOLDER`` grades.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rbd import exercises
from rbd.errors import InputError
from rbd.exercises import CUSTOM_CHECKS, FAIL, PASS

__all__ = ["tutorial_notebook", "write_notebooks", "grade", "format_grade_table",
           "myst_to_markdown"]


# -- MyST to plain Markdown ---------------------------------------------------------------------

_ROLE = re.compile(r"\{([a-z]+(?::[a-z]+)?)\}`([^`]*)`")
_DIRECTIVE = re.compile(r"^(:{3,}|`{3,})\{([a-z-]+)\}[ \t]*(.*)$")
_TARGET = re.compile(r"^\([A-Za-z0-9_.:-]+\)=\s*$")


def _role(match: re.Match) -> str:
    role, text = match.group(1), match.group(2)
    shown = re.match(r"^(.*?)\s*<([^>]*)>$", text, re.S)
    if role in ("math",):
        return f"${text}$"
    if role in ("ref", "doc", "numref", "eq", "cite"):
        if shown:
            return shown.group(1)
        return f"({text})" if role == "eq" else text.rsplit("/", 1)[-1]
    target = shown.group(1) if shown else text
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    if role.endswith(("func", "meth")) and not target.endswith(")"):
        target += "()"
    return f"`{target}`"


def myst_to_markdown(text: str, *, drop: Iterable[str] = ()) -> str:
    """Plain Markdown for a MyST Markdown text: roles, directives and targets rewritten.

    ``{func}`rbd.aba``` becomes ```rbd.aba()```, ``{ref}`(12) <pai-12>``` becomes ``(12)``,
    ``{math}`x``` becomes ``$x$``; a ``:::{dropdown} Title`` block becomes an HTML
    ``<details>`` (shown folded by JupyterLab), ``{math}`` blocks ``$$ … $$``, admonitions a
    bold heading; ``(label)=`` targets are dropped. Directives whose title starts with one of
    ``drop`` are left out with their body.
    """
    out: list[str] = []
    stack: list[tuple[str, str]] = []          # (fence, closing text)
    skipping: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if skipping is not None:
            if stripped == skipping:
                skipping = None
            continue
        if _TARGET.match(stripped):
            continue
        m = _DIRECTIVE.match(stripped)
        if m:
            fence, name, arg = m.groups()
            if any(arg.startswith(d) for d in drop):
                skipping = fence
                continue
            if name == "dropdown":
                out += [f"<details><summary>{arg or 'Details'}</summary>", ""]
                stack.append((fence, "</details>"))
            elif name == "math":
                out.append("$$")
                stack.append((fence, "$$"))
            else:
                title = arg or name.capitalize()
                out += [f"**{_ROLE.sub(_role, title)}**", ""]
                stack.append((fence, ""))
            continue
        if stack and stripped == stack[-1][0]:
            closing = stack.pop()[1]
            if closing == "</details>":
                out += ["", closing]
            elif closing:
                out.append(closing)
            continue
        if stack and re.match(r"^:[a-z-]+:", stripped):   # directive options
            continue
        out.append(_ROLE.sub(_role, line))
    return "\n".join(out).strip("\n")


# -- notebooks ----------------------------------------------------------------------------------

_CHECK_CALL = re.compile(r"rbd\.testing\.check_consistency\((.*)\)\s*$")


def _stub_source(source: str) -> str:
    """The answer cell with every function body replaced by a stub, ``my_*`` values by ``...``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    edits: list[tuple[int, int, list[str]]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            first = node.body[0]
            start = first.lineno - 1
            indent = " " * first.col_offset
            keep = []
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                keep = lines[start:first.end_lineno]
            body = keep + [f"{indent}# your derivation here",
                           f'{indent}raise NotImplementedError("{node.name}: write its body")']
            edits.append((start, node.end_lineno, body))
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("my_")):
            name = node.targets[0].id
            edits.append((node.lineno - 1, node.end_lineno,
                          [f"{name} = ...  # your answer here"]))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    return "\n".join(lines)


def _check_source(source: str, label: str, answer: str | None) -> str:
    """The check cell as a call of :func:`check` that reports instead of asserting."""
    if label in CUSTOM_CHECKS:
        fn, name = CUSTOM_CHECKS[label]
        return (f'import rbd.exercises\n\nresult = rbd.exercises.{fn}({name}, '
                f'exercise="{label}")\nprint(result)')
    out = ["import rbd.exercises", ""]
    for line in source.splitlines():
        m = _CHECK_CALL.search(line)
        if m:
            line = line[:m.start()] + f'rbd.exercises.check({m.group(1)}, exercise="{label}")'
        if line.lstrip().startswith("assert report"):
            continue
        out.append(line)
    return "\n".join(out)


def _is_check(source: str, label: str) -> bool:
    return "check_consistency(" in source or label in CUSTOM_CHECKS


def _cell(kind: str, source: str, **metadata) -> dict:
    cell = {"cell_type": kind, "metadata": metadata, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _split_myst(text: str) -> tuple[str, list[tuple[str, str, list[str]]]]:
    """Front matter and the (kind, source, tags) blocks of a MyST notebook."""
    front = ""
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4)
        front, text = text[4:end], text[end + 5:]
    blocks: list[tuple[str, str, list[str]]] = []
    md: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```{code-cell}"):
            if "".join(md).strip():
                blocks.append(("markdown", "\n".join(md).strip("\n"), []))
            md = []
            i += 1
            tags: list[str] = []
            while i < len(lines) and re.match(r"^:[a-z-]+:", lines[i]):
                m = re.match(r"^:tags:\s*\[(.*)\]", lines[i])
                if m:
                    tags = [t.strip().strip("'\"") for t in m.group(1).split(",") if t.strip()]
                i += 1
            code: list[str] = []
            while i < len(lines) and lines[i] != "```":
                code.append(lines[i])
                i += 1
            blocks.append(("code", "\n".join(code).strip("\n"), tags))
        elif lines[i].strip() == "+++":
            if "".join(md).strip():
                blocks.append(("markdown", "\n".join(md).strip("\n"), []))
            md = []
        else:
            md.append(lines[i])
        i += 1
    if "".join(md).strip():
        blocks.append(("markdown", "\n".join(md).strip("\n"), []))
    return front, blocks


def tutorial_notebook(path: str | os.PathLike, *, solutions: bool = False) -> dict:
    """A Jupyter notebook (nbformat 4, as a dict) of the MyST tutorial at ``path``.

    Markdown cells are plain Markdown (:func:`myst_to_markdown`). In the exercise section
    (from the ``## Exercise`` heading on), the answer cells (tagged ``hide-input``) and check
    cells carry the metadata ``rbd_exercise`` (``"10.1"``, ...) and ``rbd_role`` (``"answer"``
    / ``"check"``); each check calls :func:`check`. With ``solutions=False`` the answers are
    stubs and the worked-solution dropdowns are left out; with ``solutions=True`` both stay,
    the dropdowns folded as ``<details>``.
    """
    path = Path(path)
    _, blocks = _split_myst(path.read_text(encoding="utf-8"))
    number = path.name.split("_", 1)[0]
    cells: list[dict] = []
    in_exercises, k, answer = False, 0, None
    drop = () if solutions else ("Worked solution",)
    for index, (kind, source, tags) in enumerate(blocks):
        if kind == "markdown":
            if re.search(r"^## Exercises?\s*$", source, re.M):
                in_exercises = True
            found = re.findall(r"\*\*Exercise (\d+)\.\*\*", source)
            if found:
                k = int(found[-1])
            cells.append(_cell("markdown", myst_to_markdown(source, drop=drop)))
            continue
        label = f"{number}.{k}"
        following = next((b for b in blocks[index + 1:] if b[0] == "code"), None)
        if (in_exercises and k and "hide-input" in tags and following is not None
                and _is_check(following[1], label)):
            names = re.findall(r"^(?:def )?(my_\w+)", source, re.M)
            answer = names[-1] if names else None
            code = source if solutions else _stub_source(source)
            meta = {"rbd_exercise": label, "rbd_role": "answer"}
            if solutions:
                meta["jupyter"] = {"source_hidden": True}
            cells.append(_cell("code", code, **meta))
        elif in_exercises and k and _is_check(source, label):
            cells.append(_cell("code", _check_source(source, label, answer),
                               rbd_exercise=label, rbd_role="check"))
        else:
            meta = {"tags": tags} if tags else {}
            if "hide-input" in tags:
                meta["jupyter"] = {"source_hidden": True}
            cells.append(_cell("code", source, **meta))
    code = [c for c in cells if c["cell_type"] == "code"]
    if code and not any("%matplotlib" in c["source"] for c in code):
        # figures as images in the notebook whatever backend MPLBACKEND names
        code[0]["source"] = "%matplotlib inline\n" + code[0]["source"]
    labels = sorted({c["metadata"]["rbd_exercise"] for c in cells
                     if c["metadata"].get("rbd_role") == "check"})
    for k, cell in enumerate(cells):     # nbformat 4.5: every cell has an id, unique in it
        cell["id"] = f"{number}-{k:03d}"
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"},
                         "rbd": {"tutorial": path.name, "exercises": labels,
                                 "solutions": solutions}}}


def default_tutorials() -> Path:
    """The ``tutorials/`` folder of a source checkout of rbd: the one beside the package when
    it runs from the checkout, else ``tutorials/`` of the current directory (an installed
    package does not carry the tutorials; run from the clone, or pass the folder)."""
    beside = Path(__file__).resolve().parents[1] / "tutorials"
    if any(beside.glob("[0-9][0-9]_*.md")):
        return beside
    return Path.cwd() / "tutorials"


def write_notebooks(out_dir: str | os.PathLike, tutorials: str | os.PathLike | None = None, *,
                    solutions: bool = False) -> list[Path]:
    """Write one ``.ipynb`` per tutorial into ``out_dir`` (stubs), and with ``solutions`` also
    ``out_dir/solutions/`` (worked solutions). Returns the paths written."""
    src = Path(tutorials) if tutorials is not None else default_tutorials()
    sources = sorted(src.glob("[0-9][0-9]_*.md"))
    if not sources:
        raise InputError(f"tutorials folder {str(src)!r} holds no NN_*.md tutorial")
    out = Path(out_dir)
    written = []
    for variant, folder in ((False, out), (True, out / "solutions")) if solutions else \
            ((False, out),):
        folder.mkdir(parents=True, exist_ok=True)
        for md in sources:
            target = folder / (md.stem + ".ipynb")
            nb = tutorial_notebook(md, solutions=variant)
            target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
            written.append(target)
    return written


# -- grading ------------------------------------------------------------------------------------

#: seconds one submitted notebook's exercises may run before it is marked failed
GRADE_TIMEOUT = 300.0


@dataclass
class GradeRow:
    """One line of the grade table."""

    file: str
    exercise: str
    status: str
    message: str = ""
    extra: dict = field(default_factory=dict)


def _exercise_code(nb: dict) -> str:
    """The code of the exercise section (from the first exercise cell on), magics removed."""
    cells = nb.get("cells", [])
    start = next((i for i, c in enumerate(cells) if c.get("metadata", {}).get("rbd_exercise")),
                 None)
    if start is None:
        return ""
    chunks = []
    for c in cells[start:]:
        if c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        chunks.append(src)
    return "\n\n".join(chunks)


def _run_exercises(path: str) -> list[dict]:
    """Run one notebook's exercise cells here and return the recorded results (as dicts)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    code = _exercise_code(nb)
    recorded = exercises._RECORDED = []      # the checks append their results here
    error = None
    try:
        exec(compile(code, path, "exec"), {"__name__": "__main__"})
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    rows = [{"exercise": r.exercise or "?", "status": r.status, "message": r.message}
            for r in recorded]
    exercises._RECORDED = None
    done = {r["exercise"] for r in rows}
    for label in nb.get("metadata", {}).get("rbd", {}).get("exercises", []):
        if label not in done:
            rows.append({"exercise": label, "status": FAIL,
                         "message": f"check not reached: {error or 'no check cell ran'}"})
    return rows


def grade(folder: str | os.PathLike, *, timeout: float = GRADE_TIMEOUT) -> list[GradeRow]:
    """Grade every ``.ipynb`` in ``folder``: run its exercise cells in a fresh Python process
    each and collect the results of their checks (:func:`check`), one row per exercise."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"FOLDER {str(folder)!r} is not a directory")
    rows: list[GradeRow] = []
    env = dict(os.environ, MPLBACKEND="Agg")
    for nb in sorted(folder.glob("*.ipynb")):
        try:
            run = subprocess.run([sys.executable, "-m", "rbd.notebooks", str(nb)], env=env,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            rows.append(GradeRow(nb.name, "*", FAIL, f"ran longer than {timeout:g} s"))
            continue
        marker = run.stdout.rfind("\n@@rbd-grade@@")
        if run.returncode != 0 or marker < 0:
            last = (run.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append(GradeRow(nb.name, "*", FAIL, f"could not be run: {last}"))
            continue
        for r in json.loads(run.stdout[marker + len("\n@@rbd-grade@@"):]):
            rows.append(GradeRow(nb.name, r["exercise"], r["status"], r["message"]))
    return rows


def format_grade_table(rows: list[GradeRow], width: int = 100) -> str:
    """The grade table: file, exercise, status, message (cut to fit ``width``), and a
    passed-of-total line per file."""
    if not rows:
        return "no notebooks (.ipynb) to grade"
    fw = max(len("file"), *(len(r.file) for r in rows))
    ew = max(len("exercise"), *(len(r.exercise) for r in rows))
    lines = [f"{'file':<{fw}}  {'exercise':<{ew}}  {'status':<8}  message"]
    room = max(20, width - fw - ew - 14)
    for r in rows:
        msg = r.message if len(r.message) <= room else r.message[:room - 1] + "…"
        lines.append(f"{r.file:<{fw}}  {r.exercise:<{ew}}  {r.status:<8}  {msg}")
    lines.append("")
    for name in dict.fromkeys(r.file for r in rows):
        mine = [r for r in rows if r.file == name]
        lines.append(f"{name}: {sum(r.status == PASS for r in mine)} of {len(mine)} passed")
    return "\n".join(lines)


if __name__ == "__main__":   # one submitted notebook, run by grade() in its own process
    from rbd import notebooks as _module  # the imported module, not this __main__ copy

    results = _module._run_exercises(sys.argv[1])
    print("\n@@rbd-grade@@" + json.dumps(results))
