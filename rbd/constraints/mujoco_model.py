"""What :func:`rbd.forward` reads of a model beyond its tree: MuJoCo's disable flags, the
joints with coordinates of their own, MuJoCo's ``qpos0``, the solver settings and options, and
the joints' springs and solver parameters (a model loaded by
:func:`rbd.load_mjcf` keeps them in ``mujoco_options`` and ``mujoco_joints``)."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .tendon_spatial import length_and_moment


def disabled(model, flag: str) -> bool:
    """True when MuJoCo's disable flag ``flag`` (``<option><flag flag="disable"/>``) is set
    on ``model`` (``model.mujoco_options["disable"]``, read by :func:`rbd.load_mjcf`)."""
    return flag in (getattr(model, "mujoco_options", None) or {}).get("disable", ())


def own_slices(model, which: str):
    """``(body index, body, slice)`` of the joints with coordinates of their own
    (``which`` "q" or "v"; a mimic joint has none and is left out)."""
    from ..errors import ModelError

    out = []
    for i, body in enumerate(model.bodies):
        if body.joint.nv == 0:
            continue
        try:
            index = model.q_index(i) if which == "q" else model.v_index(i)
        except ModelError:
            continue
        out.append((i, body, index))
    return out


def tendons(model) -> tuple:
    """The model's tendons, fixed and spatial (none for a model not from MJCF)."""
    return getattr(model, "mujoco_tendons", None) or ()


def free_joint_bias(model, v) -> np.ndarray:
    r"""The velocity term between rbd's and MuJoCo's free-joint accelerations.

    rbd's free joint moves with :math:`[\omega; u]` in the body frame, MuJoCo's
    with :math:`[R u; \omega]`; MuJoCo's acceleration corresponds to rbd's
    :math:`[\dot\omega; \dot u + \omega \times u]` (:func:`rbd.mjcf.from_mujoco_state`).
    MuJoCo writes its rows as :math:`J\,\mathrm{qacc}` without the velocity
    product, so in rbd's coordinates a row reads :math:`J (\dot v + b)` with
    this :math:`b` (zero but for the :math:`\omega \times u` entries).
    """
    b = np.zeros(model.nv)
    for _, body, vs in own_slices(model, "v"):
        if body.joint.kind == "free":
            b[vs.start + 3:vs.stop] = np.cross(v[vs.start:vs.start + 3], v[vs.start + 3:vs.stop])
    return b


def tendon_jacobian(model, tendon) -> tuple[np.ndarray, np.ndarray]:
    """``(Jq, Jv)``: the coefficients on ``q`` (for the length) and on ``v``."""
    Jq, Jv = np.zeros(model.nq), np.zeros(model.nv)
    slices = {b.joint_name: (qs, vs) for (_, b, qs), (_, _, vs) in
              zip(own_slices(model, "q"), own_slices(model, "v"), strict=True)}
    for name, coef in tendon["joints"]:
        qs, vs = slices[name]
        Jq[qs.start] += coef
        Jv[vs.start] += coef
    return Jq, Jv


def tendon_pattern(model) -> np.ndarray:
    """The tree's pattern of :math:`M` (nv, nv) bool: a dof and its ancestors, the entries
    MuJoCo's sparse ``qM`` has (``M_colind``)."""
    def build():
        pattern = np.eye(model.nv, dtype=bool)
        for j in range(model.nv):
            i = model.dof_parent[j]
            while i >= 0:                                   # j's ancestors
                pattern[i, j] = pattern[j, i] = True
                i = model.dof_parent[i]
        pattern.setflags(write=False)
        return pattern
    return model._derived("tendon_pattern", build) if hasattr(model, "_derived") else build()


def armed_tendons(model, q=None, backend=None) -> list:
    """``(tendon, a, J)`` of each tendon with ``armature`` :math:`a > 0`, :math:`J` its
    moment over ``v``: the constant one of a fixed tendon, a spatial tendon's at ``q``
    (:func:`.tendon_spatial.length_and_moment`)."""
    out = []
    for t in tendons(model):
        if not t.get("armature", 0.0):
            continue
        if t.get("kind") == "spatial":
            if q is None:
                raise InputError(f"q: tendon {t['name']!r} is spatial, its armature's "
                                 "moment needs q")
            J = length_and_moment(model, t, q, backend=backend)[1]
        else:
            J = tendon_jacobian(model, t)[1]
        out.append((t, float(t["armature"]), J))
    return out


def tendon_armature(model, q=None, backend=None) -> np.ndarray | None:
    r"""MuJoCo's tendon armature in the mass matrix, :math:`\sum_k a_k J_k^T J_k` over the
    tendons with ``armature`` :math:`a_k > 0` (``mj_tendonArmature``), a spatial
    tendon's :math:`J` at ``q`` (needed when one has armature).  As MuJoCo's, only on the
    entries of the tree's pattern of :math:`M` (a dof and its ancestors,
    :func:`tendon_pattern`: MuJoCo adds into its sparse ``qM`` with
    ``mju_addToSclSparseInc``), so a tendon across two branches couples them in neither.
    A spatial tendon's :math:`J` moves with :math:`q`, which adds a bias force
    (:func:`.tendon_rows.tendon_bias`); a fixed one's is constant.  None when no tendon
    has armature."""
    given = armed_tendons(model, q, backend)
    return armature_matrix(model, given) if given else None


def armature_matrix(model, armed: list) -> np.ndarray:
    r""":math:`\sum_k a_k J_k^T J_k` over ``armed`` (:func:`armed_tendons`) on the tree's
    pattern of :math:`M` (:func:`tendon_pattern`), zero elsewhere."""
    extra = np.zeros((model.nv, model.nv))
    for _, a, J in armed:
        extra += a * np.outer(J, J)                     # mj_tendonArmature
    return np.where(tendon_pattern(model), extra, 0.0)


def mass_matrix(model, q, backend=None) -> np.ndarray:
    """MuJoCo's ``qM`` at ``q``: :func:`rbd.crba` (with the joints' armature) plus
    :func:`tendon_armature`."""
    from ..algorithms.dynamics import crba

    M = crba(model, q, backend=backend)
    extra = tendon_armature(model, q, backend)
    return M if extra is None else M + extra


def mujoco_reference_configuration(model) -> np.ndarray:
    """MuJoCo's ``qpos0`` in rbd's coordinates: hinges and slides at their ``ref``, ball
    joints at the identity, free joints at their body's pose in the file (as
    :func:`rbd.load_mjcf` keeps them in ``model.mujoco_joints``); :func:`rbd.neutral`
    for a model that did not come from MJCF."""
    from ..algorithms.configuration import neutral

    q = neutral(model)
    given = getattr(model, "mujoco_joints", None) or {}
    for _, b, qs in own_slices(model, "q"):
        soft = given.get(b.joint_name, {})
        if "qpos0" in soft:
            q[qs.start] = soft["qpos0"]
        elif b.joint.kind == "free" and "qpos_spring" in soft:
            p, (w, x, y, z) = soft["qpos_spring"][:3], soft["qpos_spring"][3:]
            q[qs] = np.concatenate([p, [x, y, z, w]])
    return q


#: The solver tolerance of :func:`rbd.forward` when neither the call nor the model's
#: ``<option tolerance>`` gives one: MuJoCo's default, for MuJoCo's stopping rule
#: (:func:`solver_scale`), so that an MJCF file gives MuJoCo's physics by default.
TOLERANCE = 1e-8
#: MuJoCo's default ``<option iterations>``.
ITERATIONS = 100


def solver_settings(model, iterations: int | None = None,
                    tolerance: float | None = None) -> tuple[int, float]:
    """The solver's iteration bound and tolerance: those given, else the model's
    ``<option iterations tolerance>``, else :data:`ITERATIONS` and :data:`TOLERANCE`."""
    given = getattr(model, "mujoco_options", None) or {}
    if iterations is None:
        iterations = int(given.get("iterations", ITERATIONS))
    if tolerance is None:
        tolerance = float(given.get("tolerance", TOLERANCE))
    if iterations < 0 or not tolerance >= 0:
        raise InputError(f"iterations, tolerance: expected >= 0, got {iterations}, {tolerance}")
    return int(iterations), float(tolerance)


def solver_scale(model) -> float:
    r"""MuJoCo's scale of the Newton solver's stopping quantities,
    :math:`1 / (\bar m \max(1, n_v))` (``mj_solPrimal``), with :math:`\bar m` the
    model's ``meaninertia``: the mean diagonal of :math:`M` (with armature, the tendons'
    too) at the
    reference configuration (``mj_setConst``).  Kept by the model.

    ``<statistic meaninertia>`` is not read: MuJoCo 4.0 keeps a given value in
    ``m.stat.meaninertia`` but warns that it "does not affect simulation", and its solver
    takes the same iterations and states with it set 1e-3 or 1e3 on gymnasium's ant (islands
    on or off, tolerance 1e-2, where the tolerance itself does change the iterations)."""
    def compute():
        from ..algorithms.configuration import neutral
        diagonal = np.diag(mass_matrix(model, neutral(model)))   # qpos0: forward's reference
        mean = float(np.mean(diagonal)) if len(diagonal) else 1.0
        return 1.0 / (mean * max(1, model.nv))

    return model._derived("solver_scale", compute) if hasattr(model, "_derived") else compute()


#: MuJoCo's defaults of ``<option>`` and of joint limits
#: (``mj_defaultOption``, ``mjs_defaultJoint``).
DEFAULT_OPTIONS = {"timestep": 0.002, "impratio": 1.0, "cone": "pyramidal"}
LIMIT_SOLREF = (0.02, 1.0)
LIMIT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


def options(model) -> dict:
    """The solver options of ``model`` (from its MJCF ``<option>``), MuJoCo's defaults elsewhere."""
    found = dict(DEFAULT_OPTIONS)
    found.update(getattr(model, "mujoco_options", None) or {})
    return found


def solref_timestep(model, timestep: float) -> float:
    """The time step :func:`.impedance.safe_solref` bounds time constants with: zero (no
    bound) when the ``refsafe`` flag is disabled (``getsolparam``)."""
    return 0.0 if disabled(model, "refsafe") else timestep


def joint_softness(model) -> dict:
    r"""Per dof: MuJoCo's joint spring and the solver parameters of limits and friction loss.

    From the MJCF joints (``model.mujoco_joints``), MuJoCo's defaults elsewhere
    (a URDF or a built model): ``solreflimit``, ``solreffriction`` (nv, 2),
    ``solimplimit``, ``solimpfriction`` (nv, 5), ``margin`` and ``stiffness`` (nv,)
    and ``springref`` (nv,), MuJoCo's ``qpos_spring`` of a hinge or slide.

    The model keeps the result (read-only arrays) for the ``model.mujoco_joints`` it was
    read from: assign a new dict to change them, not its entries in place.
    """
    given = getattr(model, "mujoco_joints", None) or {}
    # kept with the dict it was read from: assigning a new model.mujoco_joints is seen
    kept = model._derived(("joint_softness", id(given)),
                          lambda: (given, _joint_softness(model, given)))
    return kept[1] if kept[0] is given else _joint_softness(model, given)


def _joint_softness(model, given: dict) -> dict:
    """:func:`joint_softness`, computed (read-only arrays: the model keeps them)."""
    nv = model.nv
    out = {"solreflimit": np.tile(LIMIT_SOLREF, (nv, 1)),
           "solreffriction": np.tile(LIMIT_SOLREF, (nv, 1)),
           "solimplimit": np.tile(LIMIT_SOLIMP, (nv, 1)),
           "solimpfriction": np.tile(LIMIT_SOLIMP, (nv, 1)),
           "margin": np.zeros(nv), "stiffness": np.zeros(nv), "springref": np.zeros(nv)}
    for _, body, vs in own_slices(model, "v"):
        for key, value in given.get(body.joint_name, {}).items():
            if key in out:                  # qpos_spring, springdamper: per joint
                out[key][vs] = value
    for value in out.values():
        value.setflags(write=False)
    return out
