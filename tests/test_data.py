"""``rbd.Data``: a caller-owned workspace, reused across states, refused for another model."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd.data import Data


@pytest.fixture
def arm():
    return rbd.models.arm7()


def test_the_layout_has_the_stage_fields(arm):
    data = rbd.Data(arm)
    assert data.M.shape == data.L.shape == (arm.nv, arm.nv)
    assert data.h.shape == data.g.shape == data.qd.shape == data.qdd.shape == (arm.nv,)
    assert data.q.shape == (arm.nq,)
    assert data.R.shape == (arm.nbodies, 3, 3) and data.E_up.shape == (arm.nbodies, 3, 3)
    assert data.jacobians == {} and data.frames == () and data.factor_kind is None
    # the M⁻¹ kernel's per-body columns are the compiled model's business, not the stages'
    assert data.F.shape == (0, arm.nv, 6)
    # every field is a view of the one buffer: a write shows in the buffer
    data.M[0, 0] = 7.0
    offset, _ = data.offsets["M"]
    assert data.buffer[offset] == 7.0
    table = Data.describe(arm.nbodies, arm.nv, nq=arm.nq)
    for name in ("M", "L", "h", "g", "q", "qd"):
        assert f"\n{name} " in f"\n{table}"


def test_a_batch_is_a_leading_axis_of_each_field(arm):
    data = rbd.Data(arm, batch=3)
    assert data.M.shape == (3, arm.nv, arm.nv) and data.E_up.shape == (3, arm.nbodies, 3, 3)
    # structure of arrays: state k of field M is one contiguous block
    offset, shape = data.offsets["M"]
    size = int(np.prod(shape))
    data.M[2] = 1.0
    assert np.all(data.buffer[offset * 3 + 2 * size:offset * 3 + 3 * size] == 1.0)
    one = data.state(2)
    assert one.batch is None and np.all(one.M == 1.0)
    one.h[:] = 5.0                     # a view: writes go to the batch
    assert np.all(data.h[2] == 5.0) and np.all(data.h[:2] == 0.0)
    with pytest.raises(rbd.InputError, match="state index 3"):
        data.state(3)


def test_a_state_view_is_not_a_workspace_of_its_own(arm, require_kernels):
    q, v, _ = rbd.testing.random_state(arm, 0)
    with pytest.raises(rbd.InputError, match="one state of a batch"):
        rbd.compute_all(arm, q, v, data=rbd.Data(arm, batch=2).state(0))


def test_reuse_gives_the_new_state(arm, backend):
    data = rbd.Data(arm)
    first = rbd.testing.random_state(arm, 1)
    second = rbd.testing.random_state(arm, 2)
    out = rbd.compute_all(arm, first[0], first[1], data=data, frames=("arm_link7",),
                          backend=backend)
    assert out is data
    M_first = data.M.copy()
    J = data.jacobians["arm_link7"]
    rbd.compute_all(arm, second[0], second[1], data=data, frames=("arm_link7",), backend=backend)
    assert data.jacobians["arm_link7"] is J, "the same frames reuse their arrays"
    assert_close(data.M, rbd.crba(arm, second[0]), RTOL_EXACT, "M at the second state")
    assert_close(data.h, rbd.nonlinear_effects(arm, second[0], second[1]), RTOL_EXACT, "h")
    assert_close(J, rbd.jacobian(arm, second[0], "arm_link7"), RTOL_EXACT, "J")
    assert rbd.testing.relative_difference(M_first, data.M) > 1e-3, "the states differ"
    rbd.compute_all(arm, second[0], second[1], data=data, frames=["arm_link3"], backend=backend)
    assert list(data.jacobians) == ["arm_link3"]


def test_data_of_another_model_is_refused(arm, backend):
    other = rbd.models.revolute_chain(7)       # same nv, another model
    data = rbd.Data(other)
    q, v, _ = rbd.testing.random_state(arm, 0)
    before = data.buffer.copy()
    with pytest.raises(rbd.InputError, match="data was made for another model"):
        rbd.compute_all(arm, q, v, data=data, backend=backend)
    assert np.array_equal(data.buffer, before), "nothing written"
    with pytest.raises(rbd.InputError, match="data was made for another model"):
        rbd.compute_all(arm, q, v, data=rbd.Data(arm.copy()), backend=backend)


def test_a_model_changed_after_its_data_is_refused(backend):
    model = rbd.models.pendulum(2)
    data = rbd.Data(model)
    model.add_body(model.nbodies - 1, rbd.Revolute([0, 1, 0]),
                   rbd.spatial.xlt([0, 0, -0.5]), np.eye(6) * 0.1, "tip")
    q, v, _ = rbd.testing.random_state(model, 0)
    with pytest.raises(rbd.InputError, match="data was made for another model"):
        rbd.compute_all(model, q, v, data=data, backend=backend)


@pytest.mark.parametrize("case, match", [
    ("q shape", "q must have shape"),
    ("v shape", "v must have shape"),
    ("tau shape", "tau must have shape"),
    ("q nan", "q has non-finite"),
    ("v batch", "batch size"),
    ("data batch", "data holds"),
    ("frame", "frames: no body or frame 'nowhere'"),
    ("data type", "data must be an rbd.Data"),
])
def test_bad_arguments_are_named(arm, backend, case, match):
    q, v, tau = rbd.testing.random_state(arm, 0)
    args = {"q": q, "v": v, "tau": tau, "data": None, "frames": ()}
    if case == "q shape":
        args["q"] = q[:-1]
    elif case == "v shape":
        args["v"] = np.zeros(arm.nv + 1)
    elif case == "tau shape":
        args["tau"] = np.zeros((2, 3))
    elif case == "q nan":
        args["q"] = np.where(np.arange(arm.nq) == 0, np.nan, q)
    elif case == "v batch":
        args["q"], args["v"] = np.array([q, q]), np.zeros((3, arm.nv))
    elif case == "data batch":
        args["data"] = rbd.Data(arm, batch=2)
    elif case == "frame":
        args["frames"] = ("nowhere",)
    elif case == "data type":
        args["data"] = {"M": None}
    with pytest.raises(rbd.InputError, match=match):
        rbd.compute_all(arm, args["q"], args["v"], data=args["data"], frames=args["frames"],
                        tau=args["tau"], backend=backend)


def test_symbols_need_an_object_workspace(arm):
    sympy = pytest.importorskip("sympy", reason="symbolic reference")
    model = rbd.models.double_pendulum()
    q = sympy.symbols("q1 q2")
    with pytest.raises(rbd.InputError, match="dtype=object"):
        rbd.compute_all(model, q, [0, 0], data=rbd.Data(model), backend="reference")


def test_the_kernels_refuse_an_object_workspace(arm, require_kernels):
    q, v, _ = rbd.testing.random_state(arm, 0)
    with pytest.raises(rbd.InputError, match="dtype=object"):
        rbd.compute_all(arm, q, v, data=rbd.Data(arm, dtype=object), backend="kernel")


def test_constructor_errors_are_named(arm):
    with pytest.raises(rbd.InputError, match="model must be an rbd.Model"):
        rbd.Data("arm")
    with pytest.raises(rbd.InputError, match="batch must be"):
        rbd.Data(arm, batch=-1)
    with pytest.raises(rbd.InputError, match="dtype must be"):
        rbd.Data(arm, dtype=np.int32)


def test_a_mass_matrix_that_is_not_positive_definite_raises(backend):
    """A joint that moves no inertia: M is singular, the factor stage says so."""
    model = rbd.Model(name="massless")
    model.add_body(-1, rbd.Revolute([0, 0, 1]), None, np.zeros((6, 6)), "link")
    with pytest.raises(rbd.ModelError, match="not positive definite"):
        rbd.compute_all(model, [0.1], [0.0], backend=backend)


@pytest.mark.slow
def test_the_compiled_workspace_stays_linear_in_the_model(require_kernels):
    """The one-call kernels' own workspace has no nv × nv fields (docs/design.md,
    "Building is linear"); the kernel stages refuse it as a Data of their own."""
    model = rbd.models.revolute_chain(400)
    own = rbd.algorithms.compiled(model).data
    assert own.M.size == own.L.size == 0
    assert own.size < 100 * model.nv * 6      # ~linear: the per-dof and per-body fields
    q, v, _ = rbd.testing.random_state(model, 0)
    from rbd._kernels import stages

    with pytest.raises(rbd.InputError, match="no room for M"):
        stages.compute_all(rbd.algorithms.compiled(model), own, q, v)


def test_the_compiled_model_keeps_its_own_workspace(arm, require_kernels):
    """The one-call kernels still write ``compiled(model).data``, not a caller's Data."""
    q, v, a = rbd.testing.random_state(arm, 0)
    mine = rbd.compute_all(arm, q, v)
    rbd.rnea(arm, q, v, a)
    own = rbd.algorithms.compiled(arm).data
    assert own is not mine
    assert_close(own.v, mine.v, RTOL_EXACT, "body velocities of the last RNEA")


def test_the_compiled_entry_point_checks_the_sizes_itself(require_kernels):
    """Called directly (not through rbd.compute_all), the kernel still refuses a workspace
    whose sizes are not its model's, before writing a byte."""
    from rbd._kernels import stages

    arm, small = rbd.models.arm7(), rbd.models.revolute_chain(3)
    data = rbd.Data(small)
    q, v, _ = rbd.testing.random_state(arm, 0)
    with pytest.raises(rbd.InputError, match="data was made for another model"):
        stages.compute_all(rbd.algorithms.compiled(arm), data, q, v)
    assert not data.buffer.any()


def test_copies_and_pickles_keep_the_fields_views_of_the_buffer(arm, backend):
    """A deep copy shares the (read-only) model and works with it; a pickle carries the
    model along; in both the fields are views of the new buffer, so a run fills them."""
    import copy
    import pickle

    q, v, _ = rbd.testing.random_state(arm, 0)
    data = rbd.compute_all(arm, q, v, frames=("arm_link7",), backend=backend)
    snapshot = copy.deepcopy(data)
    assert snapshot.model is arm and np.shares_memory(snapshot.M, snapshot.buffer)
    assert not np.shares_memory(snapshot.buffer, data.buffer)
    q2, v2, _ = rbd.testing.random_state(arm, 1)
    rbd.compute_all(arm, q2, v2, data=snapshot, frames=("arm_link7",), backend=backend)
    assert_close(snapshot.M, rbd.crba(arm, q2), RTOL_EXACT, "the copy's M")
    assert_close(data.M, rbd.crba(arm, q), RTOL_EXACT, "the original is untouched")
    restored = pickle.loads(pickle.dumps(data))
    assert np.shares_memory(restored.jacobians["arm_link7"], restored.J_frames)
    assert np.shares_memory(restored.M, restored.buffer)
    assert_close(restored.h, data.h, RTOL_EXACT, "pickled h")
    rbd.compute_all(restored.model, q2, v2, data=restored, backend=backend)
    assert_close(restored.M, rbd.crba(arm, q2), RTOL_EXACT, "the unpickled workspace runs")
