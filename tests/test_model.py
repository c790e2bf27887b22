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
                                       ("TC10", 38), ("TC20", 78),
                                       pytest.param("windmill", 73, marks=pytest.mark.slow)])
def test_si_guenter_table1_degrees_of_freedom(name, dof):
    # Si & Guenter, Table 1, row "DOFs"
    assert rbd.models.get(name).nv == dof


# --- degenerate parameters: ModelError naming the parameter, nothing added ---------------------
DEGENERATE_JOINTS = [
    (lambda: rbd.Revolute("xyz"), "Revolute axis must be a real 3-vector"),
    (lambda: rbd.Revolute([1j, 0, 0]), "Revolute axis must be a real 3-vector"),
    (lambda: rbd.Revolute([0.0, 0.0, 0.0]), "Revolute axis must be non-zero"),
    (lambda: rbd.Prismatic([np.inf, 0, 0]), "Prismatic axis must be a finite 3-vector"),
    (lambda: rbd.Helical(pitch=float("nan")), "Helical pitch must be a finite real number"),
    (lambda: rbd.Helical(pitch="fast"), "Helical pitch must be a finite real number"),
    (lambda: rbd.Planar(normal=[0, 0, 0]), "Planar normal must be non-zero"),
]


@pytest.mark.parametrize("make, message", DEGENERATE_JOINTS)
def test_degenerate_joint_parameters(make, message):
    with pytest.raises(rbd.ModelError, match=message):
        make()


def test_a_huge_axis_keeps_its_direction():
    # |(1e200, 0, 0)| overflows; the direction does not.
    np.testing.assert_array_equal(rbd.Revolute([1e200, 0, 0]).axis, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(rbd.Revolute([1e200, 1e200, 0]).axis,
                               [2**-0.5, 2**-0.5, 0.0], rtol=1e-15)


DEGENERATE_BODIES = [
    (dict(inertia=(1e300, [0, 0, 0], np.eye(3))), "mass 1e\\+300 is above"),
    (dict(inertia=(1 + 1j, [0, 0, 0], np.eye(3))), "mass must be real"),
    (dict(inertia=(1.0, [0, 0, 0], np.eye(3) * (1 + 1j))), "rotational inertia must be real"),
    (dict(inertia=(1.0, [1e200, 0, 0], np.eye(3))), "centre of mass has entries above"),
    (dict(X_tree=(np.eye(3), [1e300, 0, 0])), "X_tree translation has entries above"),
    (dict(X_tree=(np.eye(3), [1j, 0, 0])), "X_tree translation must be real"),
    (dict(inertia=("heavy", [0, 0, 0], np.eye(3))), "mass is not a number"),
]


@pytest.mark.parametrize("kwargs, message", DEGENERATE_BODIES)
def test_degenerate_body_parameters_add_nothing(kwargs, message):
    model = rbd.models.double_pendulum()
    before = (model.nbodies, model.nq, model.body_names)
    with pytest.raises(rbd.ModelError, match=message):
        model.add_body(1, rbd.Revolute(), name="extra", **kwargs)
    assert (model.nbodies, model.nq, model.body_names) == before
    model.add_body(1, rbd.Revolute(), name="extra")    # the names were not taken


@pytest.mark.parametrize("gravity", ["down", [0, 0, 1j], [0, 0, np.nan], [0, 1e300, 0], [0, 0]])
def test_gravity_must_be_a_finite_real_3_vector(gravity):
    with pytest.raises(rbd.ModelError, match="gravity must be a finite"):
        rbd.Model(gravity=gravity)


@pytest.mark.parametrize("parent", [0.5, "0", True, float("nan")])
def test_from_arrays_refuses_non_integer_parents(parent):
    joints = [rbd.Revolute(), rbd.Revolute()]
    with pytest.raises(rbd.ModelError, match="parent must be an integer index"):
        rbd.Model.from_arrays([-1, parent], joints, [None, None], [None, None])


def test_from_arrays_accepts_integral_floats():
    joints = [rbd.Revolute(), rbd.Revolute()]
    model = rbd.Model.from_arrays([-1.0, np.int32(0)], joints, [None, None], [None, None])
    assert model.parent == (-1, 0)


# --- joint limits, joint dynamics and armature --------------------------------------------------
def test_joint_properties_default_and_set():
    model = rbd.models.humanoid()
    assert model.lower.shape == model.upper.shape == (model.nq,)
    for key in ("velocity_limit", "effort_limit", "damping", "friction", "armature"):
        assert getattr(model, key).shape == (model.nv,)
    assert np.all(model.lower == -np.inf) and np.all(model.upper == np.inf)
    assert not np.any(model.armature) and not np.any(model.damping)
    name = model.joint_names[2]                     # a spherical joint: nq 4, nv 3
    model.set_joint_properties(name, damping=[0.1, 0.2, 0.3], armature=0.05)
    np.testing.assert_array_equal(model.damping[model.v_slice(name)], [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(model.armature[model.v_slice(name)], [0.05] * 3)
    assert np.count_nonzero(model.armature) == 3


@pytest.mark.parametrize("kwargs, message", [
    (dict(lower=2.0, upper=1.0), "lower limit .* above upper limit"),
    (dict(damping=-1.0), "damping must be finite and non-negative"),
    (dict(armature=np.inf), "armature must be finite and non-negative"),
    (dict(friction=[1.0, 2.0]), "friction needs 1 value"),
    (dict(effort_limit=-3.0), "effort_limit must be non-negative"),
    (dict(lower=np.nan), "lower has NaN"),
    (dict(stiffness=1.0), "unknown joint property 'stiffness'"),
])
def test_bad_joint_properties_change_nothing(kwargs, message):
    model = rbd.models.double_pendulum()
    model.set_joint_properties(model.joint_names[0], lower=-1.0, upper=1.0, damping=0.5)
    before = {k: getattr(model, k).copy() for k in ("lower", "upper", "damping", "armature")}
    with pytest.raises(rbd.ModelError, match=message):
        model.set_joint_properties(model.joint_names[0], **kwargs)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(model, key), value)


def test_replace_joint_keeps_properties_of_the_other_joints():
    model = rbd.models.double_pendulum()
    first, second = model.joint_names
    model.set_joint_properties(first, lower=-1.0, upper=1.0, armature=0.2)
    model.set_joint_properties(second, damping=0.3)
    new = model.replace_joint(first, rbd.Revolute([1.0, 0.0, 0.0]))
    np.testing.assert_array_equal(new.lower, model.lower)
    np.testing.assert_array_equal(new.armature, model.armature)
    np.testing.assert_array_equal(new.damping, model.damping)


def test_a_massless_model_has_no_centre_of_mass(backend):
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute())
    with pytest.raises(rbd.ModelError, match="no mass, so no centre of mass"):
        rbd.center_of_mass(model, [0.0], backend=backend)


def test_mechanisms_module_is_reachable_without_an_import():
    module = rbd.models.mechanisms
    assert module.__name__ == "rbd.models.mechanisms"
    assert module.torus_chain is rbd.models.torus_chain
