"""Named tolerances and model zoos shared by the test modules."""

from __future__ import annotations

import importlib.metadata
import pathlib

import numpy as np

import rbd

#: Two exact computations in double precision agree to rounding: O(n) to O(n²) sums of
#: O(1) terms (recursions, Lagrangian and local-frame forms on trees of ≤ 7 bodies,
#: particle and single-body formulas, least squares on well-conditioned systems, MuJoCo's
#: CRB/RNE against CRBA/RNEA), each with relative error ~1e-16, leave a margin of
#: 10^5-10^6 (measured disagreements are below 1e-14); a wrong term shows at 1e-3 or more.
#: The one definition of the suite: every test module imports it from here.
RTOL_EXACT = 1e-10

#: Finite differences with central steps h = 1e-6 have truncation error O(h^2) and
#: rounding error O(eps/h) ~ 1e-10 on O(1) quantities.
RTOL_FD = 1e-6

#: Batched RNEA and ABA run W states in lanes (rbd/_kernels/soa.pxi) and evaluate the
#: one-state kernel's formulas in another order, with fused multiply-adds on AVX2 and
#: AVX-512: O(n) sums of O(1) terms, rounding ~1e-16 times the depth of the tree
#: (measured ≤ 3e-15 on the test models). A batch row and the one-state call agree to this
#: relative tolerance, not bit for bit (bit for bit with RBD_SIMD=off).
RTOL_LANES = 1e-13

#: Joint kinds every algorithm supports, and the random trees built from them.
ALL_JOINTS = ("revolute", "prismatic", "helical", "universal", "spherical", "planar")

def assert_batch_row(name: str, row, single, model=None, state=None) -> None:
    """A batch row equals the one-state call: to :data:`RTOL_LANES` when the batch ran in
    lanes (RNEA, its bias-force forms, CRBA, ABA: accelerations in torque space at ``state`` =
    ``(q, v, tau)`` of ``model``), bit for bit otherwise."""
    from rbd._kernels import _model

    if name in ("rnea", "nonlinear_effects", "gravity_forces", "aba", "crba") \
            and _model.simd() != "off":
        err = (rbd.testing.quantity_difference("forward_dynamics", model, state, row, single)
               if name == "aba" else rbd.testing.relative_difference(row, single))
        assert err <= RTOL_LANES, f"{name}: batch row and single call differ by {err:.2e}"
    else:
        np.testing.assert_array_equal(row, single, err_msg=name)


def assert_rollout_row(name: str, row, single, evaluations: int) -> None:
    """A batch rollout's samples equal the one-state rollout's: bit for bit when the batch
    ran state by state (``RBD_SIMD=off``), else to ``evaluations`` × :data:`RTOL_LANES`
    relative to the largest entry (every lane ABA differs from the scalar one by at most
    RTOL_LANES; over the short horizons of the tests, at most 0.1 s, the flow hardly
    amplifies, so the differences at most add up evaluation after evaluation)."""
    from rbd._kernels import _model

    if _model.simd() == "off":
        np.testing.assert_array_equal(row, single, err_msg=name)
        return
    scale = max(1.0, float(np.max(np.abs(single))))
    err = float(np.max(np.abs(np.asarray(row) - single)))
    assert err <= evaluations * RTOL_LANES * scale, (
        f"{name}: batch row and single rollout differ by {err:.2e} (scale {scale:.2g})")


def random_models(seed: int = 0):
    """A small zoo of random models covering every joint type, chains and trees."""
    rng = np.random.default_rng(seed)
    models = [
        rbd.testing.random_model(rng, 6, ALL_JOINTS),
        rbd.testing.random_model(rng, 5, ALL_JOINTS, floating_base=True),
        rbd.testing.random_model(rng, 5, ("revolute", "prismatic"), chain=True),
        rbd.testing.random_model(rng, 4, ("free", "spherical", "universal")),
        rbd.testing.random_model(rng, 1, ("revolute",)),
    ]
    return models


def example_robot_data_dir() -> pathlib.Path | None:
    """The ``robots`` directory of the installed example-robot-data, or None without it.

    Found from the distribution's file list (the wheels ship no Python module); an
    older release that ships the ``example_robot_data`` module is found through it.
    """
    try:
        dist = importlib.metadata.distribution("example-robot-data")
        files = dist.files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        path = str(file)
        if path.endswith(".urdf") and "/robots/" in path:
            return pathlib.Path(dist.locate_file(path.split("/robots/")[0] + "/robots"))
    try:
        import example_robot_data

        model_path = pathlib.Path(example_robot_data.getModelPath("ur5_robot.urdf"))
        return (model_path.parent / ".." / "..").resolve()
    except (ImportError, AttributeError, ValueError, OSError):
        return None


#: Every joint kind, the free joint included (at the root and inside a tree).
EVERY_JOINT = (*ALL_JOINTS, "free")


def every_joint_zoo(seed: int, *more: tuple[int, tuple[str, ...], bool]):
    """Random trees over :data:`EVERY_JOINT` (a tree, a floating-base tree, a chain), then
    one random model per ``(nbodies, joint kinds, chain)`` of ``more``, then the humanoid.

    All are drawn from one generator seeded with ``seed``, in that order.
    """
    rng = np.random.default_rng(seed)
    models = [
        rbd.testing.random_model(rng, 6, EVERY_JOINT),
        rbd.testing.random_model(rng, 5, EVERY_JOINT, floating_base=True),
        rbd.testing.random_model(rng, 4, EVERY_JOINT, chain=True),
    ]
    models += [rbd.testing.random_model(rng, n, kinds, chain=chain) for n, kinds, chain in more]
    return [*models, rbd.models.humanoid()]


def assert_close(actual, expected, rtol=RTOL_EXACT, what=""):
    """``max|a - e| <= rtol * max(1, max|e|)``: the suite's relative error measure."""
    err = rbd.testing.relative_difference(actual, expected)
    assert err <= rtol, f"{what}: relative difference {err:.3e} exceeds {rtol:.1e}"


def state_with_forces(model, seed: int):
    """A random ``(q, v, tau)`` and random external forces ``(nbodies, 6)``, from ``seed``."""
    rng = np.random.default_rng(seed)
    q, v, tau = rbd.testing.random_state(model, rng)
    return q, v, tau, rng.normal(size=(model.nbodies, 6))


def assert_forward_twins(kernel_fn, reference_fn, model, seeds, rtol: float, what: str = ""):
    """A compiled forward dynamics equals its reference text, with and without ``f_ext``."""
    for seed in seeds:
        q, v, tau, f_ext = state_with_forces(model, seed)
        assert_close(kernel_fn(model, q, v, tau, f_ext), reference_fn(model, q, v, tau, f_ext),
                     rtol=rtol, what=what)
        assert_close(kernel_fn(model, q, v, tau), reference_fn(model, q, v, tau), rtol=rtol,
                     what=f"{what} without f_ext")


def assert_forward_batch(kernel_fn, reference_fn, model, seed: int, rtol: float):
    """Three random states as one batch: shape ``(3, nv)``, each row the reference's.

    Returns the batch ``(Q, V, T)`` and the kernel's result, for further checks.
    """
    rng = np.random.default_rng(seed)
    states = [rbd.testing.random_state(model, rng) for _ in range(3)]
    Q, V, T = (np.array([s[k] for s in states]) for k in range(3))
    out = kernel_fn(model, Q, V, T)
    assert out.shape == (3, model.nv)
    for k in range(3):
        assert_close(out[k], reference_fn(model, Q[k], V[k], T[k]), rtol=rtol)
    return (Q, V, T), out


#: Step of the central differences of the joint tests (see :data:`RTOL_FD`).
H_FD = 1e-6


def joint_pose(joint, q) -> np.ndarray:
    """The successor's pose ``[[R, p], [0, 1]]`` relative to the predecessor."""
    return rbd.spatial.homogeneous(*joint.transform(q))


def body_twist_fd(joint, q, v) -> np.ndarray:
    """Body-frame twist [ω; v] of the successor from d/dt of its pose: (G⁻¹ Ġ)^∨ (S&G Eq. 9).

    Central differences along ``integrate(q, v, ±H_FD)`` (``q ± H_FD v`` on a vector joint).
    """
    Gp = joint_pose(joint, joint.integrate(q, v, H_FD))
    Gm = joint_pose(joint, joint.integrate(q, v, -H_FD))
    twist = np.linalg.inv(joint_pose(joint, q)) @ ((Gp - Gm) / (2 * H_FD))
    return np.concatenate([rbd.spatial.unskew(twist[:3, :3]), twist[:3, 3]])


def joint_states(joint, seed: int, n: int):
    """``n`` random ``(q, v)`` of ``joint``, drawn from one generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield joint.random(rng), rng.normal(size=joint.nv)


def python_child(code: str, *args: str, timeout: float = 120, env=None, check: bool = False):
    """Run ``code`` as a script in a new interpreter, in an empty temporary directory.

    The child imports the same ``rbd`` as this process does (the installed package,
    or the editable checkout), never the source tree that the current directory
    might hold: in CI the tests run from a clone whose ``rbd/`` has no compiled
    kernels.  A script file (rather than ``-c``) lets ``spawn`` workers import the
    functions it defines.  Returns the :class:`subprocess.CompletedProcess` (text).
    """
    import subprocess
    import sys
    import tempfile
    import textwrap
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="rbd-child-") as folder:
        script = Path(folder) / "child.py"
        script.write_text(textwrap.dedent(code))
        return subprocess.run([sys.executable, str(script), *args], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=timeout, check=check)


def gymnasium_asset(name: str) -> pathlib.Path:
    """gymnasium's MuJoCo model ``name``.xml (skips without gymnasium)."""
    import pytest

    gymnasium = pytest.importorskip("gymnasium", reason="the models are gymnasium's MJCFs")
    return pathlib.Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / f"{name}.xml"


def dm_control_asset(name: str) -> pathlib.Path:
    """dm_control's suite model ``name``.xml, found without importing dm_control (its
    suite imports dm_env); skips without dm_control."""
    import importlib.util

    import pytest

    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("dm_control is not installed: its suite MJCFs are the test models")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "suite" / f"{name}.xml"


def mujoco_pair(path, steps: int = 0, seed: int = 0, **options):
    """rbd's and MuJoCo's models of one MJCF file and MuJoCo's data after ``steps``
    random-control steps (:func:`rbd.testing.mujoco_pair`, :func:`mujoco_run`;
    ``options`` are the former's: ``cone``, ``solver``, ``integrator``, ``tight``,
    ``quiet``).  Skips without MuJoCo."""
    import pytest

    pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = rbd.testing.mujoco_pair(path, **options)
    if steps:
        mujoco_run(mm, d, steps, seed)
    return model, mm, d


#: Relative qacc agreement asked of rbd.forward against mj_forward (issue 21): both sides
#: solve the same strictly convex problem to ~1e-15; what is left is rounding.
QACC_RTOL = 1e-8
#: Rows: R and aref are closed-form functions of the same inputs.
ROW_RTOL = 1e-10
#: Contact positions, distances and frames (issue 21): closed-form geometry of the same poses.
CONTACT_ATOL = 1e-9


def assert_forward_matches_mujoco(model, mm, d, cone: str, solver: str = "newton"):
    """``rbd.forward`` at MuJoCo's state of ``d`` equals ``mj_forward``: the contact set
    (geoms, positions, distances, frames to :data:`CONTACT_ATOL`), the rows (counts, ``R``,
    ``aref``), ``qacc`` to :data:`QACC_RTOL` relative and the constraint forces.  Returns
    rbd's :class:`~rbd.constraints.forward.ForwardResult`."""
    import mujoco

    from rbd.constraints.forward import forward, free_joint_bias
    from rbd.mjcf import from_mujoco_state

    mujoco.mj_forward(mm, d)
    q, v, a = from_mujoco_state(model, d.qpos, d.qvel, d.qacc)
    result = forward(model, q, v, d.qfrc_actuator + d.qfrc_applied, cone=cone, solver=solver,
                     iterations=20000 if solver == "pgs" else 100,
                     tolerance=mm.opt.tolerance)            # MuJoCo's, on both sides
    assert len(result.contacts) == d.ncon
    assert len(result.rows.aref) == d.nefc
    assert int(np.sum(result.kinds == "limit")) == d.nl
    if d.ncon:
        np.testing.assert_allclose(result.contacts.pos, d.contact.pos, atol=CONTACT_ATOL)
        np.testing.assert_allclose(result.contacts.dist, d.contact.dist, atol=CONTACT_ATOL)
        np.testing.assert_allclose(result.contacts.frame.reshape(-1, 9), d.contact.frame,
                                   atol=CONTACT_ATOL)
    np.testing.assert_allclose(result.rows.R, d.efc_R, rtol=ROW_RTOL)
    # rbd's rows act on rbd's free-joint acceleration: MuJoCo's aref is rbd's plus J b
    aref = result.rows.aref + result.rows.J @ free_joint_bias(model, v)
    np.testing.assert_allclose(aref, d.efc_aref, rtol=ROW_RTOL, atol=1e-9)
    scale = np.abs(a).max(initial=np.finfo(float).tiny)
    np.testing.assert_allclose(result.qdd, a, rtol=0, atol=QACC_RTOL * scale)
    # force = -D (J a - aref): a's error reaches the forces amplified by D |J|
    gain = np.max(result.rows.D * np.abs(result.rows.J).sum(axis=1), initial=1.0)
    np.testing.assert_allclose(result.force, d.efc_force, rtol=0, atol=gain * QACC_RTOL * scale)
    return result


def mujoco_run(mm, d, steps: int, seed: int = 0, qvel_noise: float = 0.0) -> None:
    """``steps`` ``mj_step`` calls on ``d`` with controls from U(-1, 1) (after ``qvel +=
    qvel_noise`` N(0, 1)), then ``mj_forward``: a state with contacts and limits active,
    reproducible from ``seed``."""
    import mujoco

    rng = np.random.default_rng(seed)
    if qvel_noise:
        d.qvel[:] += qvel_noise * rng.standard_normal(mm.nv)
    for _ in range(steps):
        d.ctrl[:] = rng.uniform(-1, 1, mm.nu)
        mujoco.mj_step(mm, d)
    mujoco.mj_forward(mm, d)


def mujoco_qpos_path(mm, d, steps: int) -> np.ndarray:
    """MuJoCo's ``qpos`` at ``d``'s state and after each of ``steps`` ``mj_step`` calls
    (``steps + 1`` rows), the samples an rbd run of ``steps`` steps records."""
    import mujoco

    path = [d.qpos.copy()]
    for _ in range(steps):
        mujoco.mj_step(mm, d)
        path.append(d.qpos.copy())
    return np.array(path)


def first_touch(mujoco, mm, d, set_offset, depth: float, lo: float = -1.0, hi: float = 1.0,
                halvings: int = 60) -> None:
    """Bisect the offset in ``[lo, hi]`` (``set_offset(s)`` writes it into ``d.qpos``) at which
    MuJoCo's first contact appears, then go ``depth`` past it and run ``mj_forward`` there."""
    for _ in range(halvings):
        mid = 0.5 * (lo + hi)
        set_offset(mid)
        mujoco.mj_kinematics(mm, d)
        mujoco.mj_collision(mm, d)
        lo, hi = (mid, hi) if d.ncon else (lo, mid)
    set_offset(lo - depth)
    mujoco.mj_forward(mm, d)


def collide_at(model, d, backend="reference"):
    """``rbd.collide`` at MuJoCo's state ``d`` (its qpos in rbd's coordinates)."""
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    return rbd.collide(model, q, backend=backend)
