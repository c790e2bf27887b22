"""One check of a scalar parameter serves the builder (each failure said apart) and the joints
(one wording for every failure, no number spelled as text)."""

import numpy as np
import pytest

from rbd._model_checks import MAX_MAGNITUDE, real_scalar
from rbd.errors import ModelError

PITCH = dict(limit=None, text=False, wording="{what} must be a finite real number, got {value!r}")


@pytest.mark.parametrize("value, message", [
    (1 + 1j, r"body 'b': mass must be real, got \(1\+1j\)"),
    ("heavy", r"body 'b': mass is not a number: 'heavy'"),
    (np.inf, r"body 'b': mass is not finite"),
    (10 * MAX_MAGNITUDE, r"body 'b': mass 1e\+101 is above 1e\+100 in magnitude"),
])
def test_the_builder_says_each_failure_apart(value, message):
    with pytest.raises(ModelError, match=message):
        real_scalar(value, "body 'b': mass")


@pytest.mark.parametrize("value", [1j, "fast", "0.5", np.nan, None])
def test_a_joint_parameter_has_one_wording(value):
    with pytest.raises(ModelError, match=r"^Helical pitch must be a finite real number, got "):
        real_scalar(value, "Helical pitch", **PITCH)


def test_accepted_values_come_back_as_floats():
    assert real_scalar("1.5", "mass") == 1.5          # the builder reads numbers spelled as text
    assert real_scalar(np.float32(0.25), "mass") == 0.25
    assert real_scalar(1e300, "Helical pitch", **PITCH) == 1e300   # no magnitude limit there
