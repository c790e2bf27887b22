"""The options of rbd.simulate checked once, the integrator enum, the one RKMK transport.

* :class:`rbd.simulation.options.SimulationOptions` is made once per call of
  ``simulate`` (also for a batch on the Python path), is frozen, refuses a bad
  value naming it, and reaches the runners whole;
* the fixed-step methods of the rollouts are one enum: the reference's
  ``Integrator`` and the kernel's ``cpdef enum Integrator`` have the same
  members and values, every member runs on both backends and they agree;
* the RKMK transport (``dexp⁻¹`` series of RK4 on curved joints) is one Python
  function, used by the reference rollout and the Python path of ``simulate``,
  and rendered once in the kernel under the same name.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import numpy as np
import pytest

import rbd
from rbd.reference import rollout as reference
from rbd.reference.rollout import Integrator
from rbd.simulation import core, integrators, lie
from rbd.simulation.options import INTEGRATORS, SimulationOptions
from rbd.simulation.rollouts import grid_times

ROOT = pathlib.Path(__file__).resolve().parents[1] / "rbd"

#: Compiled and reference rollouts do the same operations in the same order except for
#: a few sums (cross products, NumPy's small matrix products) that round differently;
#: over 20 steps the difference stays within a few hundred ulps of the largest entry.
RTOL_ROUNDOFF = 1e-11


def _build(**keywords):
    return SimulationOptions.build(rbd.models.arm7(), 0.01, 1e-3, **keywords)


# --- one options object -------------------------------------------------------------------
@pytest.mark.parametrize("keywords, named", [
    (dict(integrator="rk5"), "unknown integrator 'rk5'"),
    (dict(method="RK99"), "unknown solve_ivp method 'RK99'"),
    (dict(f_ext=np.zeros((2, 6))), r"f_ext must have shape \(7, 6\)"),
    (dict(events=[lambda t, q, v: t, 3]), r"events\[1\] must be a callable"),
    (dict(event_tol=0.0), "event_tol must be finite and > 0"),
    (dict(record_every=0), "record_every must be a positive integer"),
    (dict(num_threads=1.5), "num_threads must be a positive integer"),
    (dict(damping="yes"), "damping must be True or False"),
    (dict(impact={5: None}), "impact: key 5 is not the index of an event"),
    (dict(rtol=-1.0), "rtol must be finite and > 0"),
    (dict(max_evaluations=2.5), "max_evaluations must be a positive integer or None"),
    (dict(min_step=-1.0), "min_step must be finite and >= 0"),
    (dict(tau=np.zeros(3)), r"tau must have shape \(7,\)"),
    (dict(baumgarte="fast"), "baumgarte must be 'auto', \\(kp, kd\\) or None"),
])
def test_the_options_refuse_a_bad_value_naming_it(keywords, named):
    with pytest.raises(rbd.InputError, match=named):
        _build(**keywords)


def test_the_options_are_frozen_and_hold_checked_values():
    options = _build(integrator="euler", tau=[1, 0, 0, 0, 0, 0, 0], damping=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.dt = 1.0
    assert options.steps == 10 and options.keep_tau and options.max_evaluations == np.inf
    assert options.tau.tau.dtype == float and options.tau.damping is not None
    assert options.rollout is Integrator.EULER and options.evaluations_per_step == 1


def _count_builds(monkeypatch) -> list:
    made = []
    original = SimulationOptions.build.__func__

    def counting(cls, *args, **kwargs):
        made.append(original(cls, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(SimulationOptions, "build", classmethod(counting))
    return made


def test_a_python_batch_checks_its_options_once_and_hands_them_down_whole(monkeypatch):
    made = _count_builds(monkeypatch)
    seen = []
    run_python = core._run_python

    def spy(model, q0, v0, options):
        seen.append(options)
        return run_python(model, q0, v0, options)

    monkeypatch.setattr(core, "_run_python", spy)
    model = rbd.models.double_pendulum()
    rbd.simulate(model, np.zeros((3, 2)), np.zeros((3, 2)), 0.02, 0.01, compiled=False)
    assert len(made) == 1
    assert len(seen) == 3 and all(o is made[0] for o in seen)


def test_a_contact_run_reads_the_same_options(monkeypatch):
    made = _count_builds(monkeypatch)
    model = rbd.models.double_pendulum()
    model.set_joint_properties(model.bodies[0].joint_name, lower=-1.0, upper=1.0)
    args = (model, [0.1, 0.0], [0.0, 0.0], 0.01, 1e-3)
    # before, the contact path checked duration and dt only
    with pytest.raises(rbd.InputError, match="record_every must be a positive integer"):
        rbd.simulate(*args, integrator="euler", record_every=0)
    with pytest.raises(rbd.InputError, match="not a PD law"):
        rbd.simulate(*args, integrator="euler", tau=rbd.simulation.PD([0.0, 0.0], 1.0, 1.0))
    traj = rbd.simulate(*args, integrator="euler")
    assert traj.contact_count is not None and len(made) == 2    # the refused one made none


# --- the integrator enum ----------------------------------------------------------------------
def test_every_rollout_integrator_is_an_integrator_of_simulate():
    for member in Integrator:
        assert member.name.lower() in INTEGRATORS
        assert _build(integrator=member.name.lower()).rollout is member
        assert reference.STEPS[member] is getattr(reference, f"{member.name.lower()}_step")
    assert _build(integrator="implicit_euler").rollout is None
    assert _build(integrator="solve_ivp").rollout is None


@pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")
def test_the_kernel_declares_the_same_enum():
    from rbd._kernels import rollout as kernel

    assert {m.name: int(m) for m in kernel.Integrator} == {m.name: int(m) for m in Integrator}


@pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")
@pytest.mark.parametrize("member", list(Integrator), ids=lambda m: m.name)
def test_every_integrator_runs_on_both_backends_and_they_agree(member):
    model = rbd.models.humanoid()             # a free joint: the transport is exercised
    rng = np.random.default_rng(1)
    q0, v0 = rbd.random_configuration(model, rng), rng.normal(size=model.nv)
    times = grid_times(0.02, 1e-3)
    kernel = rbd.algorithms.compiled(model)
    out = kernel.rollout(q0, v0, times, integrator=member, stride=5)
    ref, status = reference.rollout(model, q0, v0, times, member, 5)
    assert out[6] == 0 and status == 0
    for k, name in enumerate(("q", "v", "a")):
        scale = max(1.0, float(np.max(np.abs(ref[name]))))
        assert np.max(np.abs(out[k] - ref[name])) <= RTOL_ROUNDOFF * scale, name
    other = kernel.rollout(q0, v0, times, integrator=1 - int(member), stride=5)
    assert not np.allclose(other[0], out[0], rtol=0, atol=1e-12)   # the choice matters


@pytest.mark.skipif(not rbd.has_kernels(), reason="needs the compiled kernels")
@pytest.mark.parametrize("value", [3, 7, -1, True, 1.0, "rk4"])
def test_the_kernel_refuses_an_integrator_outside_the_enum(value):
    """3 = EULER | RK4 would pass as a flag: only the members and their values run."""
    kernel = rbd.algorithms.compiled(rbd.models.arm7())
    with pytest.raises(rbd.InputError, match=f"integrator must be a member of .*got {value!r}"):
        kernel.rollout(np.zeros(7), np.zeros(7), grid_times(0.01, 1e-3), integrator=value)


# --- one RKMK transport ---------------------------------------------------------------------
def _module_functions(path: pathlib.Path) -> set[str]:
    return {node.name for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef)}


def test_the_rkmk_transport_is_written_once_in_python():
    defining = {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                if {"transport", "dexp_inv_series"} & _module_functions(p)}
    assert defining == {"reference/rollout.py"}
    assert integrators.rkmk_transport is reference.transport
    assert lie.dexp_inv_series is reference.dexp_inv_series


def test_the_kernel_copy_is_the_registered_twin():
    kernel = (ROOT / "_kernels" / "rollout.pyx").read_text()
    assert "cdef void transport(" in kernel
    assert "transport" in _module_functions(ROOT / "reference" / "rollout.py")


def test_the_python_path_takes_its_rk4_stages_through_the_transport(monkeypatch):
    calls = []

    def spy(model, xi, k, joints=None):
        calls.append(joints)
        return reference.transport(model, xi, k, joints)

    monkeypatch.setattr(integrators, "rkmk_transport", spy)
    model = rbd.models.pendulum(1)                  # one spherical joint
    rbd.simulate(model, rbd.neutral(model), [0.0, 1.0, 0.0], 0.01, 0.01, compiled=False)
    assert len(calls) == 3 and calls[0] == [("spherical", slice(0, 3))]


def test_a_contact_warning_points_at_the_caller():
    model = rbd.models.double_pendulum()
    model.set_joint_properties(model.bodies[0].joint_name, lower=0.5, upper=1.0)
    with pytest.warns(RuntimeWarning, match="outside joint limits") as caught:
        rbd.simulate(model, [0.0, 0.0], [0.0, 0.0], 0.002, 1e-3, integrator="euler")
    assert caught[0].filename == __file__


def test_a_contact_batch_warns_once_for_each_state_outside_the_limits():
    """The states of a batch are checked at once: a warning for each state outside (here
    the second and the third), naming its joint and value, pointing at the caller."""
    model = rbd.models.double_pendulum()
    model.set_joint_properties(model.bodies[0].joint_name, lower=0.5, upper=1.0)
    with pytest.warns(RuntimeWarning, match="outside joint limits") as caught:
        rbd.simulate(model, [[0.7, 3.0], [0.2, 0.0], [1.5, 0.0]], np.zeros((3, 2)), 0.002,
                     1e-3, integrator="euler")
    texts = [str(w.message) for w in caught if "outside joint limits" in str(w.message)]
    assert len(texts) == 2
    assert "= 0.2 not in [0.5, 1]" in texts[0] and "= 1.5 not in [0.5, 1]" in texts[1]
    assert all(w.filename == __file__ for w in caught)
