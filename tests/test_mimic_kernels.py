"""Mimic robots through the compiled kernels, and through ``rbd check`` and ``rbd bench``.

A model with mimic joints runs its single-state dynamics in compiled code
(``rbd._kernels._coupled``: the full tree's CRBA and RNEA, the projection
``Gᵀ (·) G`` and a Cholesky solve in preallocated buffers); batches keep the
NumPy mapping.  Both are compared here with the reference backend, and the
command line is run on example-robot-data's Panda (one mimic finger joint).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close, example_robot_data_dir
from test_mimic import gripper, state

import rbd
from rbd.cli import main


@pytest.fixture
def kernels():
    if not rbd.has_kernels():
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")


def panda_path():
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed (the [test] extra has it)")
    return robots / "panda_description" / "urdf" / "panda.urdf"


QUANTITIES = {
    "rnea": lambda m, q, v, x, b: rbd.rnea(m, q, v, x, backend=b),
    "rnea_f": lambda m, q, v, x, b: rbd.rnea(m, q, v, x, np.full((m.nbodies, 6), 0.3),
                                             backend=b),
    "nonlinear_effects": lambda m, q, v, x, b: rbd.nonlinear_effects(m, q, v, backend=b),
    "gravity_forces": lambda m, q, v, x, b: rbd.gravity_forces(m, q, backend=b),
    "crba": lambda m, q, v, x, b: rbd.crba(m, q, backend=b),
    "aba": lambda m, q, v, x, b: rbd.aba(m, q, v, x, backend=b),
    "aba_f": lambda m, q, v, x, b: rbd.aba(m, q, v, x, np.full((m.nbodies, 6), -0.2),
                                           backend=b),
    "mass_matrix_inverse": lambda m, q, v, x, b: rbd.mass_matrix_inverse(m, q, backend=b),
}


@pytest.mark.parametrize("quantity", sorted(QUANTITIES))
def test_the_compiled_coupling_agrees_with_the_reference(kernels, quantity, rng):
    model = gripper()   # a free base (a quaternion in q), two mimic joints, armature
    fn = QUANTITIES[quantity]
    for _ in range(3):
        q, v, x = state(model, rng)
        assert_close(fn(model, q, v, x, "kernel"), fn(model, q, v, x, "reference"),
                     RTOL_EXACT, quantity)


@pytest.mark.parametrize("quantity", sorted(QUANTITIES))
def test_single_states_run_compiled_and_batches_keep_the_mapping(kernels, quantity, rng):
    """The compiled coupling answers single states; a batch gets None from it and runs the
    mapping, and both give the same numbers per state."""
    model = gripper()
    fn = QUANTITIES[quantity]
    states = [state(model, rng) for _ in range(3)]
    q, v, x = (np.array(a) for a in zip(*states, strict=True))
    batch = fn(model, q, v, x, "kernel")
    fast = rbd.algorithms.compiled(model).fast
    assert type(fast).__name__ == "CoupledKernel"
    assert fast.crba(q) is None and fast.crba(q[0]) is not None
    for k in range(3):
        assert_close(batch[k], fn(model, q[k], v[k], x[k], "kernel"), RTOL_EXACT, quantity)


def test_the_compiled_coupling_checks_its_arguments_as_the_kernels_do(kernels):
    model = gripper()
    q = rbd.neutral(model)
    with pytest.raises(rbd.InputError, match=r"q must have shape \(9,\)"):
        rbd.aba(model, q[:-1], np.zeros(8), np.zeros(8))
    with pytest.raises(rbd.InputError, match="tau has non-finite"):
        rbd.aba(model, q, np.zeros(8), np.full(8, np.inf))
    with pytest.raises(rbd.InputError, match="f_ext"):
        rbd.rnea(model, q, np.zeros(8), np.zeros(8), np.zeros((3, 6)))
    bad = q.copy()
    bad[3:7] *= 1.1   # a quaternion 10 % off unit norm
    with pytest.raises(rbd.InputError, match="quaternion of joint 'base'"):
        rbd.crba(model, bad)
    slightly = q.copy()
    slightly[3:7] *= 1 + 1e-9   # within the tolerance: normalized, on a copy
    before = slightly.copy()
    assert_close(rbd.crba(model, slightly), rbd.crba(model, q), RTOL_EXACT, "normalized q")
    assert np.array_equal(slightly, before)


def test_a_singular_coupled_mass_matrix_gives_nan_on_the_compiled_path(kernels):
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute([0, 0, 1]), None, None, "a", "j1")
    model.add_body("a", rbd.Revolute([0, 0, 1]), None, None, "b", "j2")
    model.add_mimic("j2", "j1", 2.0)
    assert np.isnan(rbd.aba(model, [0.0], [0.0], [1.0])).all()
    assert np.isnan(rbd.mass_matrix_inverse(model, [0.0])).all()


@pytest.mark.slow
def test_rbd_check_passes_on_the_panda(capsys):
    """It stopped with a message about slices the user never used."""
    code = main(["check", str(panda_path()), "--trials", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "FAIL" not in out and "ERROR" not in out
    assert "ploen-kernel" in out and "pai-crbm" in out


def test_rbd_bench_compares_the_panda_with_pinocchio_s_mimic_model(capsys):
    pytest.importorskip("pinocchio", reason="the peer of the benchmark (the [test] extra)")
    code = main(["bench", str(panda_path()), "--budget", "0.002"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "pinocchio's mimic model" in out
    header = next(line for line in out.splitlines() if line.startswith("algorithm"))
    column = re.split(r"\s{2,}", header).index("pinocchio")
    rows = {line.split()[0]: re.split(r"\s{2,}", line) for line in out.splitlines()
            if line.startswith(("rnea", "crba", "aba"))}
    assert set(rows) == {"rnea", "crba", "aba"}
    assert all(re.fullmatch(r"[\d.]+ \S+", cells[column]) for cells in rows.values()), out


def test_pinocchio_s_mimic_model_is_the_same_dynamics(rng):
    """The peer the benchmark times computes what rbd computes (so the ratio compares like
    with like): M, h and q̈ of Pinocchio's mimic model against rbd's, at 1e-12."""
    pin = pytest.importorskip("pinocchio", reason="the peer of the benchmark")
    from rbd._cli_bench import _pinocchio, _pinocchio_mimic_aba

    model = rbd.load_urdf(panda_path())
    (pin_module, pmodel), reason = _pinocchio(model)
    assert reason == "" and pmodel.nv == model.nv == 8
    pdata = pmodel.createData()
    q, v, tau = state(model, rng)
    M = pin.crba(pmodel, pdata, q)
    M = np.triu(M) + np.triu(M, 1).T
    assert_close(M, rbd.crba(model, q), 1e-12, "M")
    assert_close(pin.nonLinearEffects(pmodel, pdata, q, v), rbd.nonlinear_effects(model, q, v),
                 1e-12, "h")
    assert_close(_pinocchio_mimic_aba(pin_module, pmodel, pdata, q, v, tau),
                 rbd.aba(model, q, v, tau), 1e-10, "qdd")
