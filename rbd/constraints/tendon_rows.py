r"""MuJoCo's fixed tendons in :func:`rbd.forward` (``mj_tendon``, ``mj_springdamper``,
``mj_instantiateFriction``, ``mj_instantiateLimit``, ``mj_instantiateEquality``).

A fixed tendon (``model.mujoco_tendons``, read by :func:`rbd.load_mjcf`) has the
length :math:`L = \sum_i c_i\,q_i` over hinge and slide coordinates and the constant
Jacobian :math:`J` with :math:`c_i` at the joints' dofs.  It gives:

* a passive force :math:`J^T(-k\,x - b\,\dot L)`, :math:`x` the distance of
  :math:`L` outside ``springlength`` (``[lo, hi]``; the length at ``qpos0`` when not
  given);
* a friction-loss row :math:`J` when ``frictionloss > 0`` (after the dofs' rows);
* limit rows (after the joints'): :math:`+J` with distance :math:`L - \mathrm{lo}`,
  :math:`-J` with :math:`\mathrm{hi} - L`, active below ``margin``;
* equality rows (``<equality><tendon>``):
  :math:`r = (L_1 - L_1^0) - p(L_2 - L_2^0)`, :math:`J_1 - p'(L_2 - L_2^0)\,J_2`,
  after the model's other equality constraints.  MuJoCo keeps the file's order: where a
  file lists a tendon equality before another equality, the rows come in another
  order (the same accelerations, the forces permuted).

Each row's weight is MuJoCo's ``tendon_invweight0``, :math:`J M^{-1} J^T` at
``qpos0``.

A spatial tendon (``kind == "spatial"``) enters every row the same way with its length
and moment at ``q`` (:func:`tendon_state`, :mod:`.tendon_spatial`) in place of
:math:`\sum_i c_i q_i` and the constant :math:`J`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .impedance import (
    clamp_solimp,
    impedance,
    reference_acceleration,
    regularizer,
    safe_solref,
    stiffness_damping,
)
from .mujoco_model import (  # noqa: F401 (tendon_armature re-exported: the tendons' data)
    armature_matrix,
    armed_tendons,
    free_joint_bias,
    mass_matrix,
    tendon_armature,
    tendon_jacobian,
    tendons,
)
from .tendon_spatial import length_and_moment, moment_rate


def _constants(model):
    """Per tendon: Jacobians, length at ``qpos0`` and ``tendon_invweight0`` (kept)."""
    def build():
        from .mujoco_model import mujoco_reference_configuration

        q0 = mujoco_reference_configuration(model)
        Minv = np.linalg.inv(mass_matrix(model, q0))
        out = []
        for t in tendons(model):
            if t.get("kind") == "spatial":
                length0, Jv = length_and_moment(model, t, q0)
                out.append((None, Jv, length0, float(Jv @ Minv @ Jv)))
                continue
            Jq, Jv = tendon_jacobian(model, t)
            out.append((Jq, Jv, float(Jq @ q0), float(Jv @ Minv @ Jv)))
        return out
    return model._derived(("tendon_constants", id(tendons(model))), build)


def tendon_state(model, q) -> list:
    """Per tendon, ``(L, J)`` at ``q``: MuJoCo's ``ten_length`` and ``ten_J`` (over
    rbd's ``v``); ``J`` is the constant one of a fixed tendon."""
    out, poses = [], None
    for t, (Jq, Jv, _, _) in zip(tendons(model), _constants(model), strict=True):
        if Jq is not None:
            out.append((float(Jq @ q), Jv))
            continue
        if poses is None:
            from ..algorithms.kinematics import forward_kinematics

            poses = forward_kinematics(model, q)
        out.append(length_and_moment(model, t, q, poses))
    return out


def tendon_passive_force(model, q, v, spring: bool = True, damper: bool = True) -> np.ndarray:
    """:math:`\\sum J^T(-k\\,x - b\\,\\dot L)` over the tendons."""
    force = np.zeros(model.nv)
    for t, (_, _, length0, _), (length, Jv) in zip(tendons(model), _constants(model),
                                                   tendon_state(model, q), strict=True):
        lo, hi = t["springlength"]
        if lo == -1 and hi == -1:
            lo = hi = length0
        x = length - hi if length > hi else (length - lo if length < lo else 0.0)
        f = (-t["stiffness"] * x if spring else 0.0) - (t["damping"] * (Jv @ v) if damper
                                                         else 0.0)
        force += Jv * f
    return force


def tendon_bias(model, q, v, backend=None) -> np.ndarray:
    r"""The tendons' armature in the bias force, in rbd's coordinates (MuJoCo's
    ``mj_tendonBias`` added to ``qfrc_bias``).

    MuJoCo adds :math:`a_k J_k^T (\dot J_k \dot q)` per tendon with armature
    :math:`a_k`, its moment rate taken at MuJoCo's zero ``qacc``; with the armature's
    :math:`A = \sum_k a_k J_k^T J_k` in ``qM`` (:func:`tendon_armature`, masked to the
    tree's pattern), rbd's bias force is :math:`T^T(\mathrm{qfrc\_bias} + qM\,\dot T v)`
    (:mod:`rbd.mjcf`, the map of the coordinates), so the tendons add

    .. math:: \sum_k a_k J_k^T (\dot J_k v - J_k b) + A\,b,

    :math:`\dot J_k v` the moment rate on rbd's ``v`` (:func:`.tendon_spatial.moment_rate`)
    and :math:`b` the free joints' :math:`\omega \times u`
    (:func:`.mujoco_model.free_joint_bias`: MuJoCo's ``qacc`` is rbd's :math:`\dot v + b`).
    Zero without spatial tendons with armature: a fixed tendon's :math:`J` is constant
    and acts on hinges and slides only, where :math:`b` is zero.
    """
    given = armed_tendons(model, q, backend)
    bias = np.zeros(model.nv)
    if not any(t.get("kind") == "spatial" for t, _, _ in given):
        return bias
    b = free_joint_bias(model, v)
    for t, a, J in given:
        rate = moment_rate(model, t, q, v) if t.get("kind") == "spatial" else 0.0
        bias += a * (rate - J @ b) * J                    # mj_tendonBias: a Jᵀ (J̇ q̇)
    return bias + armature_matrix(model, given) @ b      # A b: qM Ṫ v in rbd's terms


def tendon_friction_rows(model, v, timestep, q=None):
    """Friction-loss rows of the tendons with ``frictionloss > 0`` (``q``: needed by
    spatial tendons, whose moment depends on it)."""
    J, aref, R, floss, ids = [], [], [], [], []
    for i, (t, (Jq, Jv, _, weight)) in enumerate(zip(tendons(model), _constants(model),
                                                     strict=True)):
        if t["frictionloss"] <= 0:
            continue
        if Jq is None:
            if q is None:
                raise InputError(f"q: tendon {t['name']!r} is spatial, its moment needs q")
            Jv = length_and_moment(model, t, q)[1]
        solimp = clamp_solimp(t["solimpfriction"])
        imp, _ = impedance(solimp, 0.0, 0.0)
        k, b = stiffness_damping(safe_solref(t["solreffriction"], timestep), solimp[1],
                                 friction_row=True)
        J.append(Jv)
        aref.append(reference_acceleration(k, b, imp, Jv @ v, 0.0, 0.0))
        R.append(regularizer(imp, weight))
        floss.append(t["frictionloss"])
        ids.append(i)
    return J, aref, R, floss, ids


def tendon_limit_rows(model, q, v, timestep):
    """Limit rows of the limited tendons (lower side first, as MuJoCo)."""
    J, aref, R, ids = [], [], [], []
    for i, (t, (_, _, _, weight), (length, Jv)) in enumerate(zip(
            tendons(model), _constants(model), tendon_state(model, q), strict=True)):
        if not t["limited"]:
            continue
        margin = t["margin"]
        solref = safe_solref(t["solreflimit"], timestep)
        solimp = clamp_solimp(t["solimplimit"])
        for side, bound in ((-1, t["range"][0]), (1, t["range"][1])):
            dist = side * (bound - length)
            if dist >= margin:
                continue
            row = -side * Jv
            imp, _ = impedance(solimp, dist, margin)
            k, b = stiffness_damping(solref, solimp[1])
            J.append(row)
            aref.append(reference_acceleration(k, b, imp, row @ v, dist, margin))
            R.append(regularizer(imp, weight))
            ids.append(i)
    return J, aref, R, ids


def tendon_equality_rows(model, q, v, timestep):
    """Rows of the active ``<equality><tendon>`` constraints."""
    consts, state = _constants(model), tendon_state(model, q)
    J, aref, R, ids = [], [], [], []
    for k, eq in enumerate(getattr(model, "mujoco_tendon_equalities", None) or ()):
        if not eq["active"]:
            continue
        (_, _, l01, w1), (L1, Jv1) = consts[eq["tendon1"]], state[eq["tendon1"]]
        coef = np.asarray(eq["polycoef"], float)
        r, row, weight = L1 - l01 - coef[0], Jv1.copy(), w1
        if eq["tendon2"] is not None:
            (_, _, l02, w2), (L2, Jv2) = consts[eq["tendon2"]], state[eq["tendon2"]]
            x = L2 - l02
            powers = x ** np.arange(1, 5)
            r -= coef[1:] @ powers
            row -= (coef[1:] * np.arange(1, 5)) @ np.concatenate([[1.0], powers[:3]]) * Jv2
            weight += w2
        solimp = clamp_solimp(eq["solimp"])
        imp, _ = impedance(solimp, abs(float(r)), 0.0)
        kk, bb = stiffness_damping(safe_solref(eq["solref"], timestep), solimp[1])
        J.append(row)
        aref.append(reference_acceleration(kk, bb, imp, row @ v, r, 0.0))
        R.append(regularizer(imp, weight))
        ids.append(k)
    return J, aref, R, ids
