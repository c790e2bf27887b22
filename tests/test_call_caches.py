"""What :func:`rbd.simulate`'s checks keep per model, and their fast paths.

The quaternion columns (:func:`rbd._validation.quaternion_columns`), the limited joints and
their limits (:func:`rbd.simulation.contact.limited_coordinates`) and whether the tree has
only compiled joint kinds (:func:`rbd.constraints.forward_compiled.compiled_forward`) are
kept in the model's cache, which a builder method clears: a model changed between two calls
must be seen by the second.  The checks run all joints at once (one state in Python floats,
a batch in arrays); they must refuse, name and normalize as a joint-by-joint check does.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import rbd
from rbd._validation import FEW_QUATERNIONS, check_quaternions
from rbd.simulation.contact import warn_outside_limits
from rbd.simulation.dynamics import positive_number
from rbd.simulation.rollouts import grid_steps, grid_time

POINT = (1.0, [0.0, 0.0, -0.5], 0.01 * np.eye(3))


def _three_quaternions() -> rbd.Model:
    """A free base and two spherical joints below it, a hinge between them."""
    model = rbd.Model()
    base = model.add_body(-1, rbd.Free(), None, POINT, "base", "root")
    s1 = model.add_body(base, rbd.Spherical(), (np.eye(3), [0, 0, -0.5]), POINT, "b1", "s1")
    hinge = model.add_body(s1, rbd.Revolute([0, 1, 0]), (np.eye(3), [0, 0, -0.5]), POINT,
                           "b2", "h")
    model.add_body(hinge, rbd.Spherical(), (np.eye(3), [0, 0, -0.5]), POINT, "b3", "s2")
    return model


def _norm(quat) -> float:
    """The norm as the kernels' check sums it: x² + y² + z² + w², in this order."""
    x, y, z, w = (float(c) for c in quat)
    return math.sqrt(x * x + y * y + z * z + w * w)


def test_the_quaternion_check_names_the_first_joint_off_in_body_order():
    """Two quaternions off (``s2`` in row 0, ``s1`` in row 1): the error names ``s1``, the
    first in body order, with row 1's norm, for one state and for a batch alike."""
    model = _three_quaternions()
    q = np.tile(rbd.neutral(model), (2, 1))       # quaternions at q[3:7], q[7:11], q[12:16]
    q[0, 12:16] *= 2.0
    q[1, 7:11] *= 1.5
    with pytest.raises(rbd.InputError, match=r"q0: the quaternion of joint 's1' "
                                             r"\(q\[7:11\]\) has norm 1.5, not 1"):
        check_quaternions(model, q, "q0")
    with pytest.raises(rbd.InputError, match=r"joint 's1' \(q\[7:11\]\) has norm 1.5"):
        check_quaternions(model, q[1], "q0")
    with pytest.raises(rbd.InputError, match=r"joint 's2' \(q\[12:16\]\) has norm 2,"):
        check_quaternions(model, q[0], "q0")


@pytest.mark.parametrize("rows", [3, FEW_QUATERNIONS])
def test_the_quaternion_check_divides_each_quaternion_by_its_own_norm(rows):
    """Norms off by less than the tolerance: a normalized copy (each quaternion divided by
    its norm, the caller's array untouched), the same for a state alone and in a batch; an
    exact unit state comes back as it is.  A batch of three states has its norms summed in
    Python floats, one of 64 × 3 quaternions in arrays: the same numbers."""
    model = _three_quaternions()
    rng = np.random.default_rng(7)
    q = rng.normal(size=(rows, model.nq))
    for start in (3, 7, 12):
        q[:, start:start + 4] /= np.linalg.norm(q[:, start:start + 4], axis=1)[:, None]
        q[:, start:start + 4] *= 1.0 + rng.uniform(-5e-7, 5e-7, (rows, 1))
    given = q.copy()
    batch = check_quaternions(model, q)
    np.testing.assert_array_equal(q, given)
    for row, out in zip(q, batch, strict=True):
        np.testing.assert_array_equal(check_quaternions(model, row), out)
        expected = row.copy()
        for start in (3, 7, 12):
            expected[start:start + 4] = row[start:start + 4] / _norm(row[start:start + 4])
        np.testing.assert_array_equal(out, expected)
    unit = rbd.neutral(model)
    assert check_quaternions(model, unit) is unit


def test_the_quaternion_check_sees_a_joint_added_later():
    """The quaternion columns are kept by the model: a spherical joint added after a first
    check is checked by the next one."""
    model = rbd.Model()
    model.add_body(-1, rbd.Free(), None, POINT, "base")
    check_quaternions(model, rbd.neutral(model))
    model.add_body(0, rbd.Spherical(), (np.eye(3), [0, 0, -0.5]), POINT, "arm", "ball")
    q = rbd.neutral(model)
    q[7:11] *= 3.0
    with pytest.raises(rbd.InputError, match="joint 'ball'"):
        check_quaternions(model, q)
    with pytest.raises(rbd.InputError, match="joint 'ball'"):
        rbd.simulate(model, q, np.zeros(model.nv), 0.01, 0.01)


def test_the_limit_warning_sees_new_limits_and_new_joints():
    """The limited joints and their limits are kept by the model: limits narrowed by
    ``set_joint_properties``, and a joint added, after a first check are both seen."""
    model = rbd.models.double_pendulum()
    first = model.bodies[0].joint_name
    model.set_joint_properties(first, lower=-1.0, upper=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_outside_limits(model, [0.5, 0.0])
    model.set_joint_properties(first, lower=-0.2, upper=0.2)
    with pytest.warns(RuntimeWarning, match=rf"{first} = 0.5 not in \[-0.2, 0.2\]"):
        warn_outside_limits(model, [0.5, 0.0])
    model.add_body(1, rbd.Prismatic([0, 0, 1]), (np.eye(3), [0, 0, -1]), POINT, "slider",
                   "slide")
    model.set_joint_properties("slide", lower=0.0, upper=0.1)
    with pytest.warns(RuntimeWarning, match=r"outside joint limits: slide = 0.3 not in "
                                            r"\[0, 0.1\]$"):
        warn_outside_limits(model, [0.0, 0.0, 0.3])
    with pytest.warns(RuntimeWarning, match=r"slide = 0.3 not in \[0, 0.1\]"):
        rbd.simulate(model, [0.0, 0.0, 0.3], np.zeros(3), 0.002, 1e-3, integrator="euler")


def test_compiled_forward_sees_a_joint_kind_added_later(require_kernels):
    """Whether the tree has only the compiled step's joint kinds is kept by the model: a
    planar joint added after a first call sends the model to the Python pass."""
    from rbd.constraints.forward_compiled import compiled_forward

    model = rbd.models.double_pendulum()
    assert compiled_forward(model) is not None
    model.add_body(1, rbd.Planar(), (np.eye(3), [0, 0, -1]), POINT, "flat")
    assert compiled_forward(model) is None


@pytest.mark.parametrize("k, duration, dt", [(0, 0.0, 0.01), (2, 0.025, 0.01),
                                             (3, 0.025, 0.01), (10, 0.1, 0.01),
                                             (7, 0.07 * (1 - 1e-12), 0.01), (5, 1.0, 0.3)])
def test_one_grid_time_is_the_grid_s(k, duration, dt):
    """``grid_time`` of one step (Python floats) is the entry of the array grid, a float."""
    one = grid_time(k, duration, dt)
    assert type(one) is float
    assert one == grid_time(np.arange(k + 1), duration, dt)[-1] == grid_time(np.int64(k),
                                                                             duration, dt)
    steps = grid_steps(duration, dt)
    assert grid_time(steps, duration, dt) == duration


@pytest.mark.parametrize("value, allow_zero, message", [
    (float("nan"), False, "dt must be finite and > 0, got nan"),
    (float("inf"), False, "dt must be finite and > 0, got inf"),
    (-1.0, True, "dt must be finite and >= 0, got -1.0"),
    (0.0, False, "dt must be finite and > 0, got 0.0"),
    (True, False, "dt must be a real number, got True"),
    (np.float64(0.0), False, "dt must be finite and > 0"),
])
def test_positive_number_refuses_as_before(value, allow_zero, message):
    """A float takes the short path; the refusals and their messages are the same."""
    with pytest.raises(rbd.InputError, match=message.replace("(", r"\(")):
        positive_number(value, "dt", allow_zero=allow_zero)
    assert positive_number(0.0, "dt", allow_zero=True) == 0.0
    assert type(positive_number(2, "dt")) is float
