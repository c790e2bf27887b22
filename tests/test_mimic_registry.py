"""Every registered implementation on models with mimic joints, in any order of first calls.

A model caches what it derives (its compiled twin, its full tree, generated
equations), so the first call may decide what later calls run on.  Each test
here builds a fresh model, calls every registry entry of every quantity and
the public functions on both backends in a given order (as listed, reversed,
two shuffles), and compares each result with the value built by hand from
the full tree: ``τ = Gᵀ τ_full``, ``M = Gᵀ M_full G``, ``h = Gᵀ h_full`` and
``q̈`` solving ``(Gᵀ M_full G) q̈ = τ − Gᵀ h_full``, with ``G`` written from
the mimic relations, never from the coupling code.  An implementation
either agrees or raises a named rbd error; none may answer wrongly.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, example_robot_data_dir

import rbd

#: The 3-body chain of the report: the third joint mimics the second.
CHAIN = """<robot name="chain3">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/><origin xyz="0 0 0.2"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="0.8"/><origin xyz="0 0.05 0.2"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l3"><inertial><mass value="0.5"/><origin xyz="0.1 0 0.2"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="0 0 0.4"/><axis xyz="1 0 0"/><mimic joint="j2" multiplier="0.5" offset="0.1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""

#: The chain's coupling, written by hand: v_full = [v1, v2, 0.5 v2].
CHAIN_G = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.5]])

PUBLIC = {"inverse_dynamics": rbd.rnea, "mass_matrix": rbd.crba, "forward_dynamics": rbd.aba,
          "bias_forces": rbd.nonlinear_effects}


def panda_path():
    robots = example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed (the [test] extra has it)")
    return robots / "panda_description" / "urdf" / "panda.urdf"


def coupling_matrix(model) -> np.ndarray:
    """``G`` from the model's mimic relations and its full tree's velocity slices."""
    full = model.full_model()
    independent = model.joint_names
    G = np.zeros((full.nv, model.nv))
    for name in full.joint_names:
        row = full.v_slice(name).start
        if name in independent:
            G[row, model.v_slice(name).start] = 1.0
        else:
            source, multiplier, _ = model.mimic[name]
            G[row, model.v_slice(source).start] = multiplier
    return G


def full_configuration(model, q) -> np.ndarray:
    full = model.full_model()
    qf = np.zeros(full.nq)
    for name in full.joint_names:
        if name in model.joint_names:
            qf[full.q_slice(name)] = q[model.q_slice(name)]
        else:
            source, multiplier, offset = model.mimic[name]
            qf[full.q_slice(name)] = multiplier * q[model.q_slice(source)] + offset
    return qf


def expected_values(model, G, q, v, x):
    """The four quantities at ``(q, v)`` (``x``: acceleration or joint forces), by hand."""
    full = model.full_model()
    qf, vf = full_configuration(model, q), G @ v
    M = G.T @ rbd.crba(full, qf, backend="reference") @ G
    h = G.T @ rbd.nonlinear_effects(full, qf, vf, backend="reference")
    tau = G.T @ rbd.rnea(full, qf, vf, G @ x, backend="reference")
    return {"inverse_dynamics": tau, "mass_matrix": M, "bias_forces": h,
            "forward_dynamics": np.linalg.solve(M, x - h)}, M, h


def calls(model):
    """Every registry entry that handles ``model`` and the public functions on both backends,
    for the four unconstrained quantities (constrained dynamics: test_constraints.py)."""
    found = []
    for quantity in PUBLIC:
        for name, fn in rbd.registry.implementations(quantity).items():
            if rbd.registry.supports(quantity, name, model):
                found.append((quantity, name, fn))
        for backend in ("kernel", "reference") if rbd.has_kernels() else ("reference",):
            found.append((quantity, f"rbd.{PUBLIC[quantity].__name__}({backend})",
                          lambda m, *a, _f=PUBLIC[quantity], _b=backend: _f(m, *a, backend=_b)))
    return found


def arguments(quantity, q, v, x):
    return {"mass_matrix": (q,), "bias_forces": (q, v)}.get(quantity, (q, v, x))


def run_in_order(load, G, order_seed):
    """Call everything in one order on a fresh model; return the failures."""
    model = load()
    rng = np.random.default_rng(7)
    q = rbd.random_configuration(model, rng)
    v, x = rng.normal(size=model.nv), rng.normal(size=model.nv)
    expected, M, h = expected_values(load(), G, q, v, x)
    todo = calls(model)
    if order_seed == "reversed":
        todo = todo[::-1]
    elif order_seed is not None:
        todo = [todo[k] for k in np.random.default_rng(order_seed).permutation(len(todo))]
    wrong = []
    for quantity, name, fn in todo:
        try:
            got = np.asarray(fn(model, *arguments(quantity, q, v, x)), dtype=float)
        except rbd.RbdError:
            continue   # a named refusal is an answer
        want = expected[quantity]
        if quantity == "forward_dynamics":   # compared in torque space (rbd.testing)
            scale = max(1.0, np.max(np.abs(x)), np.max(np.abs(h)))
            error = np.max(np.abs(M @ (got - want))) / scale if got.shape == want.shape else 1
        else:
            error = (np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
                     if got.shape == want.shape else 1)
        if not error <= RTOL_EXACT:
            wrong.append((quantity, name, float(error)))
    return wrong


ORDERS = [None, "reversed", 1, 2]


@pytest.mark.slow
@pytest.mark.parametrize("order", ORDERS, ids=["listed", "reversed", "shuffle1", "shuffle2"])
def test_every_implementation_agrees_on_a_chain_with_a_mimic_joint(order):
    assert run_in_order(lambda: rbd.load_urdf(CHAIN), CHAIN_G, order) == []


def test_the_chain_coupling_written_by_hand_is_the_model_s():
    model = rbd.load_urdf(CHAIN)
    assert model.mimic == {"j3": ("j2", 0.5, 0.1)}
    np.testing.assert_array_equal(coupling_matrix(model), CHAIN_G)


@pytest.mark.slow
@pytest.mark.parametrize("order", ORDERS, ids=["listed", "reversed", "shuffle1", "shuffle2"])
def test_every_implementation_agrees_on_the_panda_with_its_mimic_finger(order):
    path = panda_path()
    model = rbd.load_urdf(path)
    assert list(model.mimic) == ["panda_finger_joint2"]
    assert run_in_order(lambda: rbd.load_urdf(path), coupling_matrix(model), order) == []


def test_the_first_call_of_a_compiled_variant_leaves_the_public_functions_right():
    """The report's sequence: ploen-kernel first, then rbd.aba on the same model."""
    if not rbd.has_kernels():
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")
    model = rbd.load_urdf(CHAIN)
    q, v, tau = np.array([0.3, -0.4]), np.array([0.5, 0.2]), np.array([1.0, -0.5])
    expected = expected_values(rbd.load_urdf(CHAIN), CHAIN_G, q, v, tau)[0]["forward_dynamics"]
    for name in ("ploen-kernel", "aba-modified-pivot-kernel"):
        fn = rbd.registry.implementations("forward_dynamics")[name]
        np.testing.assert_allclose(fn(model, q, v, tau), expected, rtol=RTOL_EXACT)
    np.testing.assert_allclose(rbd.aba(model, q, v, tau), expected, rtol=RTOL_EXACT)


def test_the_compiled_model_refuses_index_arrays_that_do_not_match_its_sizes():
    if not rbd.has_kernels():
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")
    from rbd._kernels import block_elimination, ploen
    from rbd._kernels._model import CompiledModel, compiled_model

    model = rbd.load_urdf(CHAIN)
    with pytest.raises(rbd.ModelError, match=r"nq = Σ nq_j = 3, nv = Σ nv_j = 3, but the "
                                             r"model has nq = 2, nv = 2.*mimic"):
        CompiledModel(model)
    q, v = np.zeros(2), np.zeros(2)
    for fn in (ploen.forward_dynamics, block_elimination.aba_modified):
        with pytest.raises(rbd.ModelError, match="'chain3'"):
            fn(model, q, v, v)
    rbd.aba(model, q, v, v)   # the public call keeps its coupled twin under the same key
    with pytest.raises(rbd.ModelError, match="mimic joints: its compiled twin is the full"):
        compiled_model(model)


def test_nothing_outside_the_model_writes_its_cache():
    """``Model._derived`` is the one writer: no other module assigns into ``_cache``."""
    import pathlib
    import re

    root = pathlib.Path(rbd.__file__).parent
    writes = re.compile(r"_cache(\[[^\]]*\]\s*=[^=]|\.(setdefault|update|pop|clear)\()")
    # an alias (``cache = model._cache``) or a method call would write past that pattern:
    # outside the model the cache is only ever subscripted
    aliases = re.compile(r"\._cache\b(?!\[)")
    owner = root / "model" / "__init__.py"         # the Model class, the cache's owner
    found = [str(p.relative_to(root)) for p in root.rglob("*")
             if p.suffix in (".py", ".pyx") and p != owner
             and (writes.search(p.read_text()) or aliases.search(p.read_text()))]
    assert found == []
    assert aliases.search("cache = model._cache\ncache['kernel'] = None")
    assert not aliases.search("return model._cache['kernel']")
