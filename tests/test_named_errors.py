"""Errors users meet are rbd's own, named: overflowing inertias, singular pivots, huge pitches.

Each case once surfaced as NumPy's exception (``LinAlgError``) or as a silent
``inf``; each must be a :class:`rbd.RbdError` subclass whose message names the
element of the file, the joint or the parameter.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rbd


def inertia(moment: str) -> str:
    return f'<inertia ixx="{moment}" iyy="{moment}" izz="{moment}" ixy="0" ixz="0" iyz="0"/>'


def welded_urdf(com: str, mass: str, moment: str) -> str:
    """Two links welded by a fixed joint, each with principal moments ``moment``; the
    first one of mass ``mass`` with its centre of mass at ``com``."""
    return f"""<robot name="r"><link name="a"/>
      <link name="b"><inertial><mass value="{mass}"/><origin xyz="{com}"/>{inertia(moment)}
        </inertial></link>
      <link name="c"><inertial><mass value="1"/>{inertia(moment)}</inertial></link>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        </joint>
      <joint name="f" type="fixed"><parent link="b"/><child link="c"/></joint></robot>"""


@pytest.mark.parametrize("policy", ["strict", "repair", "ignore"])
@pytest.mark.parametrize(("com", "mass", "moment", "what"), [
    ("1e200 0 0", "1", "1", "centre of mass"),        # the merged centre beyond the limit
    ("1e99 0 0", "1e99", "1", "rotational inertia"),  # m d² = 1e297: finite, beyond the limit
    ("0 0 0", "1", "1e308", "rotational inertia"),    # 1e308 + 1e308 overflows to inf
])
def test_an_overflowing_welded_inertia_is_a_urdf_error(policy, com, mass, moment, what):
    """Was ``LinAlgError: Eigenvalues did not converge`` from the inertia check."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's overflow on the way
        with pytest.raises(rbd.URDFError, match=f"^link 'b': the {what} of links 'b', 'c' is "
                                                "beyond 1e\\+100"):
            rbd.load_urdf(welded_urdf(com, mass, moment), inertia=policy)


def test_an_overflowing_geom_inertia_is_an_mjcf_error():
    xml = ('<mujoco><worldbody><body name="b"><joint type="hinge"/>'
           '<geom type="box" size="1e120 1 1"/></body></worldbody></mujoco>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's overflow on the way
        with pytest.raises(rbd.MJCFError, match="^body 'b': its geoms' inertia: the"):
            rbd.load_mjcf(xml)


def massless_leaf() -> rbd.Model:
    """A pendulum whose second link has no mass: forward dynamics is undefined there."""
    model = rbd.Model(name="massless_leaf")
    model.add_body(-1, rbd.Revolute([0, 0, 1]), None, (1.0, [0.1, 0, 0], 0.1 * np.eye(3)), "a")
    model.add_body("a", rbd.Revolute([0, 1, 0]), (np.eye(3), [0.5, 0, 0]), None, "b")
    return model


SINGULAR = ("forward dynamics is undefined: the articulated inertia D of joint 'joint_b' is "
            "not positive definite")


@pytest.mark.parametrize("function", ["aba", "mass_matrix_inverse", "aba_derivatives",
                                      "linearize", "aba_modified"])
def test_a_singular_pivot_is_the_same_model_error_on_both_backends(backend, function):
    """The reference raised ``LinAlgError`` where the kernel names the joint."""
    model, z = massless_leaf(), np.zeros(2)
    call = {"aba": lambda: rbd.aba(model, z, z, z, backend=backend),
            "mass_matrix_inverse": lambda: rbd.mass_matrix_inverse(model, z, backend=backend),
            "aba_derivatives": lambda: rbd.aba_derivatives(model, z, z, z, backend=backend),
            "linearize": lambda: rbd.linearize(model, z, z, z, backend=backend),
            "aba_modified": lambda: rbd.algorithms._dispatch._twin(model, backend)
            .aba_modified(z, z, z, None)}[function]
    with pytest.raises(rbd.ModelError, match=SINGULAR):
        call()


def test_the_tree_factorization_names_the_joint_of_the_singular_pivot():
    """``ltl`` eliminates from the leaves, as the ABA does: the same joint is named."""
    from rbd.reference.crba import ltl

    model = massless_leaf()
    with pytest.raises(rbd.ModelError, match=SINGULAR):
        ltl(model, rbd.crba(model, np.zeros(2), backend="reference"))


@pytest.mark.parametrize("pitch", [1e300, -1e101, 1.5e100])
def test_a_pitch_whose_products_overflow_is_refused(pitch):
    """``Helical(pitch=1e300)`` gave ``M = inf`` silently."""
    with pytest.raises(rbd.ModelError, match=r"^Helical pitch .* is above 1e\+100 in magnitude"):
        rbd.Helical(pitch=pitch)


def test_the_largest_accepted_pitch_gives_finite_dynamics(backend):
    """At the limit, ``M = m h²`` of a unit mass stays finite (1e200)."""
    model = rbd.Model()
    model.add_body(-1, rbd.Helical([0, 0, 1], pitch=1e100), None,
                   (1.0, [0, 0, 0], np.eye(3)), "screw")
    M = rbd.crba(model, [0.3], backend=backend)
    assert np.all(np.isfinite(M)) and M[0, 0] >= 1e200
