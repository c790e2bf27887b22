"""Model building and validation: every error names the offending body."""

import numpy as np
import pytest

import rbd
from rbd import spatial as sp

UNIT = (1.0, np.zeros(3), 0.01 * np.eye(3))


def two_links():
    model = rbd.Model()
    a = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, UNIT, "a", "ja")
    model.add_body(a, rbd.Spherical(), sp.xlt([1, 0, 0]), UNIT, "b", "jb")
    return model


def test_indices_and_names():
    model = two_links()
    assert (model.nbodies, model.nq, model.nv) == (2, 5, 4)
    assert model.parent == (-1, 0) and model.children == ((1,), ())
    assert model.body_names == ["a", "b"] and model.joint_names == ["ja", "jb"]
    assert model.q_slice("jb") == slice(1, 5) and model.v_slice("jb") == slice(1, 4)
    assert model.q_slice("b") == slice(1, 5)  # a body name selects its parent joint
    assert np.allclose(model.gravity, [0, 0, -9.81])


def test_parent_by_name_and_frames():
    model = two_links()
    c = model.add_body("b", rbd.Prismatic([1, 0, 0]), None, UNIT, "c")
    model.add_frame("tool", "c", sp.xlt([0, 0, 0.1]))
    assert model.parent[c] == 1
    assert model.body_index("tool") == c
    assert "tool" in model.frames and "a" in model.frames


def test_fixed_joint_body_contributes_inertia_only():
    model = two_links()
    model.add_body("a", rbd.Fixed(), sp.xlt([0, 1, 0]), UNIT, "welded")
    assert model.nv == 4
    q = rbd.neutral(model)
    M_welded = rbd.crba(model, q, backend="reference")
    plain = two_links()
    assert M_welded[0, 0] > rbd.crba(plain, q, backend="reference")[0, 0]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(parent=5), "unknown parent of body 'x'"),
        (dict(parent="nobody"), "unknown parent of body 'x'"),
        (dict(name="a"), "duplicate body or frame name 'a'"),
        (dict(joint_name="ja"), "duplicate joint name 'ja'"),
        (dict(inertia=(-1.0, np.zeros(3), np.eye(3))), "body 'x': negative mass"),
        (dict(inertia=(1.0, np.zeros(3), -np.eye(3))), "body 'x'.*not positive semi-definite"),
        (dict(inertia=(1.0, np.zeros(3), np.diag([1.0, 1.0, 3.0]))),
         "body 'x'.*triangle inequality"),
        (dict(inertia=(1.0, np.zeros(3), np.array([[1, 0.5, 0], [0, 1, 0], [0, 0, 1.0]]))),
         "body 'x'.*not symmetric"),
        (dict(inertia=(1.0, [np.nan, 0, 0], np.eye(3))), "body 'x'.*non-finite"),
        (dict(X_tree=np.ones((6, 6))), "body 'x'.*X_tree"),
        (dict(X_tree=(2 * np.eye(3), np.zeros(3))), "body 'x'.*proper rotation"),
        (dict(joint="revolute"), "body 'x': joint must be an rbd Joint"),
    ],
)
def test_builder_errors_name_the_body(kwargs, message):
    model = two_links()
    args = dict(parent=0, joint=rbd.Revolute(), X_tree=None, inertia=UNIT, name="x",
                joint_name=None)
    args.update(kwargs)
    with pytest.raises(rbd.ModelError, match=message):
        model.add_body(**args)
    assert model.nbodies == 2 and model.nq == 5  # nothing half-added


def test_from_arrays_reorders_and_detects_cycles():
    joints = [rbd.Revolute() for _ in range(3)]
    X = [np.eye(6)] * 3
    inertias = [UNIT] * 3
    model = rbd.Model.from_arrays([2, -1, 1], joints, X, inertias, names=["c", "a", "b"])
    assert model.body_names == ["a", "b", "c"] and model.parent == (-1, 0, 1)
    with pytest.raises(rbd.ModelError, match="cycle"):
        rbd.Model.from_arrays([1, 2, 0], joints, X, inertias, names=["a", "b", "c"])
    with pytest.raises(rbd.ModelError, match="unknown parent"):
        rbd.Model.from_arrays([7, -1, 1], joints, X, inertias)


def test_bad_gravity():
    with pytest.raises(rbd.ModelError, match="gravity"):
        rbd.Model(gravity=(0, 0))
    model = two_links()
    with pytest.raises(rbd.ModelError, match="gravity"):
        model.gravity = [np.inf, 0, 0]
    assert np.allclose(model.gravity, [0, 0, -9.81])


def test_replace_joint_returns_a_copy():
    model = two_links()
    swapped = model.replace_joint("ja", rbd.Prismatic([1, 0, 0]))
    assert swapped.joints[0].kind == "prismatic" and model.joints[0].kind == "revolute"
    with pytest.raises(rbd.ModelError, match="unknown joint"):
        model.replace_joint("nope", rbd.Revolute())


def test_describe_lists_every_body():
    text = rbd.models.humanoid().describe()
    for name in ("torso", "left_foot", "right_forearm", "head"):
        assert name in text


def test_named_models():
    assert rbd.models.get("RC20").nv == 20
    assert rbd.models.get("rc50").nv == 50
    assert rbd.models.get("tree31").nbodies == 31
    assert rbd.models.get("arm7").nv == 7
    with pytest.raises(rbd.ModelError, match="unknown model 'nope'"):
        rbd.models.get("nope")


def test_frames_attach_to_bodies_only():
    model = two_links()
    with pytest.raises(rbd.ModelError, match="frames attach to bodies"):
        model.add_frame("ground", -1)
    assert "ground" not in model.frames


def test_round_off_in_inertia_is_accepted_but_not_a_real_violation():
    # an off-diagonal entry of 1e-35 (round-off in a written file) is not a violation
    Ic = np.diag([0.0, 0.0, 0.0])
    Ic[0, 2] = Ic[2, 0] = 2.4e-35
    model = two_links()
    model.add_body(0, rbd.Revolute(), None, (0.0, np.zeros(3), Ic), "tiny")
    with pytest.raises(rbd.ModelError, match="not positive semi-definite"):
        model.add_body(0, rbd.Revolute(), None, (1.0, np.zeros(3), np.diag([1e-6, 1e-6, -1e-7])),
                       "bad")


@pytest.mark.parametrize("name, dof", [("RC20", 20), ("RC50", 50), ("RC100", 100),
                                       ("TC10", 38), ("TC20", 78), ("windmill", 73)])
def test_si_guenter_table1_degrees_of_freedom(name, dof):
    # Si & Guenter, Table 1, row "DOFs"
    assert rbd.models.get(name).nv == dof
