"""The code cache survives corrupt modules; the generated wrapper rejects overflowing sizes.

Every scenario runs in a child process with its own ``$RBD_CACHE_DIR``: loading a
corrupt shared object kills the process that loads it (SIGBUS, SIGILL, SIGSEGV),
and a child that dies must fail the test, not take the test runner down with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from helpers import python_child

import rbd
from rbd.symbolic import build

needs_compiler = pytest.mark.skipif(not build.compiler_available(), reason="no C compiler")

#: The code cache (its files, digests and locks) has no backend branch: CI's pure-Python
#: pass leaves these child-process scenarios out (docs/design.md, "CI runs each test
#: where it can fail").
pytestmark = pytest.mark.single_pass

#: Deriving the joint with sympy, compiling it and importing rbd take a few seconds;
#: the margin allows for a loaded two-core machine.
TIMEOUT = 240

#: Compiled C and the reference algorithms evaluate the same closed forms in double
#: precision, in a different order: they agree to rounding (see helpers.RTOL_EXACT).
RTOL = 1e-10

#: A joint with coupled rotation and translation, a one-body model on it, and a
#: state; prints the compiled and reference results as JSON on the last line.
CHILD = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    import sympy
    import rbd
    from rbd.symbolic import SymbolicJoint

    a, b = sympy.symbols("a b")
    R = sympy.rot_axis3(-a) * sympy.rot_axis1(-b)
    G = sympy.eye(4)
    G[:3, :3] = R
    G[:3, 3] = sympy.Matrix([0.3 * sympy.cos(a) * (1 + 0.2 * sympy.sin(b)),
                             0.5 * sympy.sin(a), 0.1 * a * b])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        joint = SymbolicJoint(G, [a, b], name="cam")
        q, qd, qdd = np.array([0.4, -0.3]), np.array([1.5, 0.7]), np.array([-0.2, 0.9])
        E, r, S, cJ = joint.jcalc_compiled(q, qd)
        model = rbd.Model()
        model.add_body(-1, joint, None, (1.3, [0.1, 0.05, -0.2], np.diag([0.02, 0.03, 0.04])))
        R, p = joint.transform(q)
        result = {"E": E.tolist(), "r": r.tolist(), "S": S.tolist(), "cJ": cJ.tolist(),
                  "E_ref": R.T.tolist(), "r_ref": p.tolist(),
                  "S_ref": joint.S(q).tolist(), "cJ_ref": joint.c_J(q, qd).tolist(),
                  "tau_ref": rbd.rnea(model, q, qd, qdd, backend="reference").tolist()}
        if rbd.has_kernels():
            result["tau"] = rbd.rnea(model, q, qd, qdd, backend="kernel").tolist()
    result["warnings"] = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    print(json.dumps(result))
""")


def run_child(cache: Path, code: str = CHILD) -> subprocess.CompletedProcess:
    env = dict(os.environ, RBD_CACHE_DIR=str(cache))
    return python_child(code, timeout=TIMEOUT, env=env)


def modules(cache: Path) -> list[Path]:
    return sorted((cache / "generated").glob("_rbd_generated_*.so"))


def assert_digest_matches(module: Path) -> None:
    recorded = build.digest_path(module).read_text().strip()
    assert hashlib.sha256(module.read_bytes()).hexdigest() == recorded, (
        f"{module.name}: the module on disk does not match its recorded digest")


def assert_right_numbers(result: dict) -> None:
    import numpy as np

    for key in ("E", "r", "S", "cJ") + (("tau",) if "tau" in result else ()):
        compiled, reference = np.array(result[key]), np.array(result[key + "_ref"])
        err = np.max(np.abs(compiled - reference)) / max(1.0, np.max(np.abs(reference)))
        assert err <= RTOL, f"{key}: compiled differs from reference by {err:.3e}"


def truncate(module: Path) -> None:
    """Keep the first half of the file: a crash of the compiler or of the disk."""
    os.truncate(module, module.stat().st_size // 2)


def scribble(module: Path) -> None:
    """Overwrite the middle third with 0xFF (an undefined opcode on x86) in place."""
    size = module.stat().st_size
    with open(module, "r+b") as fh:
        fh.seek(size // 3)
        fh.write(b"\xff" * (size // 3))


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("corrupt", [truncate, scribble], ids=["truncated", "overwritten"])
def test_a_corrupt_cached_module_is_rebuilt(corrupt, tmp_path):
    built = run_child(tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    (module,) = modules(tmp_path)
    original = module.read_bytes()
    corrupt(module)
    fresh = run_child(tmp_path)
    assert fresh.returncode == 0, (
        f"a process using the corrupt cache died with code {fresh.returncode}:\n"
        f"{fresh.stderr[-3000:]}")
    result = json.loads(fresh.stdout.strip().splitlines()[-1])
    assert_right_numbers(result)
    assert modules(tmp_path) == [module]
    assert_digest_matches(module)
    assert module.read_bytes() == original      # the same source compiles to the same bytes
    assert any("digest" in w and "rebuil" in w for w in result["warnings"]), result["warnings"]
    again = run_child(tmp_path)       # the rebuilt module loads without a further rebuild
    assert again.returncode == 0, again.stderr[-3000:]
    assert not any("digest" in w for w in json.loads(again.stdout.splitlines()[-1])["warnings"])


@pytest.mark.slow
@needs_compiler
def test_a_module_without_a_digest_is_rebuilt(tmp_path):
    """A module cached before digests were recorded (or whose digest was lost)."""
    built = run_child(tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    (module,) = modules(tmp_path)
    build.digest_path(module).unlink()
    scribble(module)
    fresh = run_child(tmp_path)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    assert_right_numbers(json.loads(fresh.stdout.strip().splitlines()[-1]))
    assert_digest_matches(module)


@pytest.mark.slow
@needs_compiler
def test_clear_cache_removes_modules_and_digests(tmp_path):
    built = run_child(tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    count = run_child(tmp_path, "from rbd.symbolic import build; print(build.clear_cache())")
    assert count.stdout.split() == ["1"], count.stderr[-3000:]
    assert not list((tmp_path / "generated").iterdir())


#: Calls the generated jcalc with n = 2**61 + 1 states and buffers sized for one state.
#: n * size * 8 wraps around 2**64 to size * 8, so without an overflow check every size
#: test passes and the loops run far past the buffers.
OVERFLOW = CHILD + textwrap.dedent("""
    outcomes = []
    for n in (2**61 + 1, -1):
        bufs = [np.zeros(2), np.zeros(2), np.zeros(9), np.zeros(3), np.zeros(12), np.zeros(6)]
        try:
            joint.compiled_module().jcalc(n, *bufs)
        except Exception as exc:
            outcomes.append({"type": type(exc).__name__, "message": str(exc),
                             "input_error": isinstance(exc, rbd.InputError)})
        else:
            outcomes.append({"type": None})
    print(json.dumps(outcomes))
""")


@pytest.mark.slow
@needs_compiler
def test_wrapper_rejects_a_state_count_whose_size_overflows(tmp_path):
    child = run_child(tmp_path, OVERFLOW)
    assert child.returncode == 0, (
        f"the child died with code {child.returncode}:\n{child.stderr[-3000:]}")
    huge, negative = json.loads(child.stdout.strip().splitlines()[-1])
    assert huge["input_error"] and negative["input_error"], (huge, negative)
    assert huge["message"].startswith(
        "jcalc: n = 2305843009213693953 states overflow the size of a buffer"), huge
    assert negative["message"].startswith("jcalc: n = -1 is negative"), negative


#: Generated C of Guenter–Lee models with random geometry and inertias (float constants
#: everywhere): one-body revolute models and a two-body chain of mixed joints in both
#: renderings.  Prints ``{label: source}`` as JSON on the last line; nothing is compiled.
SOURCES = textwrap.dedent("""
    import json
    from rbd.symbolic import build, lagrangian
    from rbd.testing import random_model

    models = {f"revolute {seed}": random_model(seed, nbodies=1, joint_types=("revolute",))
              for seed in range(4)}
    models["mixed chain"] = random_model(0, nbodies=2, chain=True, joint_types=(
        "revolute", "prismatic", "helical", "universal"))
    sources = {}
    for label, model in models.items():
        for recursion in ("body", "trace"):
            functions = lagrangian(model, recursion).c_functions()
            sources[f"{label}, {recursion}"] = build._module_source("M", functions)
    print(json.dumps(sources))
""")


def run_with_hash_seed(code: str, seed: int, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, RBD_CACHE_DIR=str(cache), PYTHONHASHSEED=str(seed))
    return python_child(code, timeout=TIMEOUT, env=env)


def first_difference(a: str, b: str) -> str:
    for k, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if x != y:
            return f"line {k + 1}:\n  {x}\n  {y}"
    return "one source is a prefix of the other"


@pytest.mark.slow
def test_generated_source_is_the_same_in_every_process(tmp_path):
    """String hashes (hence set order) change with ``PYTHONHASHSEED``; the source must not.

    Summing float coefficients in set order gave constants that differ in the last
    digit from one process to the next (``M[0] = 0.15433688457400804`` or ``...802``),
    so every process had its own cache key and rebuilt the module.
    """
    first, second = (run_with_hash_seed(SOURCES, seed, tmp_path) for seed in (0, 1))
    assert first.returncode == 0, first.stderr[-3000:]
    assert second.returncode == 0, second.stderr[-3000:]
    a = json.loads(first.stdout.strip().splitlines()[-1])
    b = json.loads(second.stdout.strip().splitlines()[-1])
    assert a.keys() == b.keys()
    for label in a:
        assert a[label] == b[label], f"{label}: {first_difference(a[label], b[label])}"


#: Compiles the Guenter–Lee equations of a one-body model (whose source used to depend
#: on the hash seed) and prints how many modules this process compiled.
REUSE = textwrap.dedent("""
    import json
    import rbd
    from rbd.symbolic import build, lagrangian
    from rbd.testing import random_model

    compiled = []
    compile_module = build._compile

    def counting_compile(*args):
        compiled.append(args[-1])
        return compile_module(*args)

    build._compile = counting_compile
    model = random_model(0, nbodies=1, joint_types=("revolute",))
    lagrangian(model).compile()
    print(json.dumps({"compiled": len(compiled)}))
""")


@pytest.mark.slow
@needs_compiler
def test_a_module_built_by_one_process_is_loaded_by_another(tmp_path):
    first, second = (run_with_hash_seed(REUSE, seed, tmp_path) for seed in (0, 1))
    assert first.returncode == 0, first.stderr[-3000:]
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads(first.stdout.strip().splitlines()[-1]) == {"compiled": 1}
    assert json.loads(second.stdout.strip().splitlines()[-1]) == {"compiled": 0}, (
        "the second process rebuilt the module the first one had cached")
    assert len(modules(tmp_path)) == 1


# --- the cache directory and a compiler that hangs ---------------------------------------------
def test_missing_parents_of_the_cache_are_created_owner_only(tmp_path, monkeypatch):
    # before: only the last two directories were 0o700, the ones above them had the umask's
    # modes (0o755: listable and enterable by everyone)
    base = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("RBD_CACHE_DIR", str(base))
    old = os.umask(0o022)
    try:
        build.cache_directory()
    finally:
        os.umask(old)
    for path in (tmp_path / "a", tmp_path / "a" / "b", base, base / "generated"):
        assert path.stat().st_mode & 0o777 == 0o700, f"{path}: {path.stat().st_mode:o}"


def test_a_relative_cache_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RBD_CACHE_DIR", "cache")
    with pytest.raises(rbd.InputError, match="RBD_CACHE_DIR must be an absolute path, got 'cache'"):
        build.cache_directory()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_the_compile_timeout_must_be_a_positive_number(monkeypatch, value):
    monkeypatch.setenv("RBD_COMPILE_TIMEOUT", value)
    with pytest.raises(rbd.InputError, match="RBD_COMPILE_TIMEOUT must be a positive number"):
        build.compile_timeout()


#: A joint derived with sympy and used by the kernels (which compile its jcalc first);
#: prints how long the first and a second model took and the warnings.
HANGING = textwrap.dedent("""
    import json, time, warnings
    import numpy as np
    import sympy
    import rbd
    from rbd.symbolic import SymbolicJoint

    def model_of(name):
        a = sympy.symbols("a")
        G = sympy.eye(4)
        G[:3, :3] = sympy.rot_axis3(-a)
        G[:3, 3] = sympy.Matrix([0.2 * sympy.cos(a), 0.0, 0.1 * a])
        model = rbd.Model(name=name)
        model.add_body(-1, SymbolicJoint(G, [a], name=name), None,
                       (1.0, [0.1, 0.0, 0.0], np.diag([0.01, 0.02, 0.03])))
        return model

    q, v, a = np.array([0.3]), np.array([0.5]), np.array([-1.0])
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for key in ("first", "second"):
            model = model_of(key)
            start = time.perf_counter()
            tau = rbd.rnea(model, q, v, a)
            out[key] = time.perf_counter() - start
            out[key + "_agrees"] = bool(np.allclose(
                tau, rbd.rnea(model, q, v, a, backend="reference"), rtol=1e-12, atol=0))
    out["warnings"] = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    print(json.dumps(out))
""")


@pytest.mark.slow
@pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")
def test_a_hanging_compiler_is_killed_and_the_reference_path_used(tmp_path):
    # before: the first call waited for the compiler forever
    pidfile = tmp_path / "sleeper.pid"
    fake = tmp_path / "hanging-cc"
    fake.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(0o755)
    env = dict(os.environ, CC=str(fake), RBD_COMPILE_TIMEOUT="2",
               RBD_CACHE_DIR=str(tmp_path / "cache"))
    proc = python_child(HANGING, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["first_agrees"] and out["second_agrees"]
    assert 2.0 <= out["first"] < 30.0          # the timeout, then the reference path
    assert out["second"] < 1.9                 # no second wait for the same compiler
    # one warning per model that falls back (as without a compiler), each saying why
    falls_back = [w for w in out["warnings"] if "using the reference implementation" in w]
    assert len(falls_back) == 2, out["warnings"]
    assert all("did not finish within 2 s" in w for w in falls_back), falls_back
    # the compiler's own children were killed with it
    sleeper = pidfile.read_text().strip()
    status = Path(f"/proc/{sleeper}/status")
    assert not status.exists() or "\nState:\tZ" in status.read_text()
