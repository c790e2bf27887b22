"""The glue of the compiled forward pass (``rbd/_kernels/forward.pyx``): which models it
takes, its static arrays built from :mod:`.forward`'s readable helpers, and the call that
turns its output into a :class:`.forward.ForwardResult`."""

from __future__ import annotations

import numpy as np

from .._backend import has_kernels
from ..model import Model
from . import forward as _forward
from .collision import collide_model, reference_only
from .forward import (
    ConstraintRows,
    ForwardResult,
    _friction_rows,
    _geom_body,
    body_weight_of,
    disabled,
    inverse_weights,
    joint_softness,
    options,
    own_slices,
    solref_timestep,
)
from .forward_compiled_terms import COMPILED_EQUALITIES, equality_data, fluid_data
from .impedance import clamp_solimp, safe_solref, stiffness_damping
from .kinds import active_constraints
from .mujoco_model import solver_scale
from .tendon_rows import _constants, tendon_armature, tendon_friction_rows, tendons
from .tendon_spatial import spatial_tendons

#: Joint kinds the compiled forward pass and step handle (MuJoCo's hinge, slide, ball, free).
COMPILED_JOINTS = ("fixed", "revolute", "prismatic", "spherical", "free")


def compiled_forward(model, constraints=None):
    """The compiled forward pass of ``model`` (``rbd._kernels.forward.ForwardModel``,
    built once per set of active equality constraints and kept by the model), or None
    when the model needs the Python pass: an equality kind other than
    :data:`.forward_compiled_terms.COMPILED_EQUALITIES` (rolling), tendon equalities when
    ``constraints`` is given, spatial tendons, collision pairs with a readable routine
    only (``collision.reference_only``), mimic joints or a joint kind other than
    :data:`COMPILED_JOINTS`, or kernels not built.  Fixed tendons, fluid forces, springs
    of ball and free joints and the disable flags are compiled (:func:`kernel_data`,
    :func:`_compiled_terms`)."""
    if not has_kernels() or not isinstance(model, Model) or model._mimic:
        return None
    equalities = (() if disabled(model, "constraint") or disabled(model, "equality")
                  else tuple(active_constraints(model, constraints)))
    if any(c.kind not in COMPILED_EQUALITIES for c in equalities):
        return None
    if constraints is not None and _tendon_equalities(model):
        return None
    if spatial_tendons(model):      # lengths and moments that move with q: Python pass
        return None
    if not model._derived("compiled_joints", lambda: all(
            b.joint.kind in COMPILED_JOINTS for b in model.bodies)):    # the tree's, kept
        return None
    if getattr(model, "geoms", ()) and reference_only(model):    # readable-only pairs
        return None
    opts = options(model)          # the static data depends on the time step (solref)
    sources = _static_sources(model)
    key = ("compiled_forward", float(opts["timestep"]), float(opts["impratio"]),
           tuple(opts.get("disable", ())), equalities,
           tuple(map(tuple, getattr(model, "contact_excludes", ()))), tuple(map(id, sources)))
    # the entry holds its sources, so that their ids stay theirs while it is kept
    return model._derived(key, lambda: (sources, _forward_model(model, equalities)))[1]


def _static_sources(model) -> tuple:
    """What the compiled pass's static data are read from besides the tree (which clears
    the model's cache when it changes) and the options in :func:`compiled_forward`'s key:
    the MJCF's option, joint, tendon and body dicts, the geoms and the contact pairs, each
    taken by identity (assign a new dict to change one, as :func:`.joint_softness` says)."""
    return (getattr(model, "mujoco_options", None), getattr(model, "mujoco_joints", None),
            getattr(model, "mujoco_tendons", None),
            getattr(model, "mujoco_tendon_equalities", None),
            getattr(model, "mujoco_bodies", None), *(getattr(model, "geoms", ()) or ()),
            *getattr(model, "contact_pairs", ()))


def _tendon_equalities(model) -> list:
    """``(index, equality)`` of the active ``<equality><tendon>`` constraints."""
    given = getattr(model, "mujoco_tendon_equalities", None) or ()
    return [(k, eq) for k, eq in enumerate(given) if eq["active"]]


def _forward_model(model, equalities=()):
    from .._kernels.forward import ForwardModel
    from ..algorithms import compiled

    weights = inverse_weights(model)
    data = kernel_data(model, weights)
    data.update(_compiled_terms(model, equalities, weights))
    return ForwardModel(compiled(model), data, max_contacts(model))


def _compiled_terms(model, equalities, weights) -> dict:
    """The compiled equality rows and fluid forces of the model (``EqualityModel``,
    ``FluidModel``; None where it has none), from :mod:`.forward_compiled_terms`;
    ``weights``: :func:`.inverse_weights`."""
    from .._kernels.equality_rows import EqualityModel
    from .._kernels.fluid import FluidModel

    body_weight, dof_weight = weights
    equality = equality_data(model, list(equalities), body_weight_of(model, body_weight),
                             dof_weight, solref_timestep(model, float(options(model)["timestep"])))
    # with both spring and damper disabled there is no passive force, fluid included
    fluid = (None if disabled(model, "spring") and disabled(model, "damper")
             else fluid_data(model))
    return {"equality": None if equality is None else EqualityModel(equality),
            "fluid": None if fluid is None else FluidModel(fluid)}


def max_contacts(model) -> int:
    """The most contacts of one state: the compiled collision stage's bound
    (``CollisionModel.max_contacts``, the sum over candidate pairs of what their routine
    can produce), at least 1."""
    from .collision import compiled_collision

    geoms = getattr(model, "geoms", ()) or ()
    return max(1, compiled_collision(model).max_contacts if geoms else 0)


def kernel_data(model, weights=None) -> dict:
    """The static arrays of the compiled forward pass (``ForwardC`` in
    ``rbd/_kernels/forward.pxd``), from this module's helpers: the constant terms of the
    friction-loss rows, the limits with their k, b and solimp, the springs, each geom's
    body and MuJoCo body weight, damping, ``dof_invweight0``, the fixed tendons
    (:func:`tendon_kernel_data`) and the options.

    MuJoCo's disable flags (:func:`.forward.disabled`) are honoured here, as the Python
    pass does: ``constraint``, ``frictionloss`` and ``limit`` leave out those rows,
    ``spring`` and ``damper`` the springs and the damping (and so the step's implicit
    damping), ``eulerdamp`` the step's implicit damping, ``refsafe`` the bound on time
    constants; ``contact`` and ``filterparent`` act
    in the collision stage, ``gravity`` at load.  ``weights``: :func:`.inverse_weights` when
    the caller has them."""
    opts = options(model)
    timestep = solref_timestep(model, float(opts["timestep"]))
    body_weight, dof_weight = inverse_weights(model) if weights is None else weights
    soft = joint_softness(model)
    weight_of = body_weight_of(model, body_weight)
    no_rows = disabled(model, "constraint")
    damping = np.zeros(model.nv) if disabled(model, "damper") else model.damping
    data = {"timestep": timestep, "impratio": float(opts["impratio"]),
            "dof_weight": dof_weight, "damping": np.asarray(damping, float),
            "eulerdamp": not disabled(model, "eulerdamp"),
            "tendon": tendon_kernel_data(model, timestep)}
    J, aref, R, floss, ids = (([], [], [], [], []) if no_rows or disabled(model, "frictionloss")
                              else _friction_rows(model, np.ones(model.nv), dof_weight, timestep))
    data.update(friction_dof=ids, friction_loss=floss, friction_R=R,
                friction_b=[-a for a in aref])       # aref = −b v_j at v = 1
    limits, springs = [], []
    lower, upper = np.asarray(model.lower, float), np.asarray(model.upper, float)
    for (_, b, qs), (_, _, vs) in zip(own_slices(model, "q"), own_slices(model, "v"),
                                      strict=True):
        if b.joint.kind not in ("revolute", "prismatic"):
            continue
        jq, jv = qs.start, vs.start
        solimp = clamp_solimp(soft["solimplimit"][jv])
        k, bb = stiffness_damping(safe_solref(soft["solreflimit"][jv], timestep), solimp[1])
        if (np.isfinite(lower[jq]) or np.isfinite(upper[jq])) and not (
                no_rows or disabled(model, "limit")):
            limits.append((jq, jv, lower[jq], upper[jq], soft["margin"][jv], k, bb, solimp))
        if soft["stiffness"][jv] and not disabled(model, "spring"):
            springs.append((jq, jv, soft["stiffness"][jv], soft["springref"][jv]))
    data.update(limit_q=[x[0] for x in limits], limit_v=[x[1] for x in limits],
                limit_bound=np.reshape([x[2:4] for x in limits], (-1, 2)),
                limit_margin=[x[4] for x in limits], limit_k=[x[5] for x in limits],
                limit_b=[x[6] for x in limits],
                limit_solimp=np.reshape([x[7] for x in limits], (-1, 5)),
                spring_q=[x[0] for x in springs], spring_v=[x[1] for x in springs],
                spring_k=[x[2] for x in springs], spring_ref=[x[3] for x in springs])
    data.update(_ball_spring_data(model))
    armature = tendon_armature(model)           # M + Σ a JᵀJ (empty: none)
    data["tendon_M"] = np.zeros(0) if armature is None else armature
    geoms = getattr(model, "geoms", ()) or ()
    data.update(geom_body=[_geom_body(model, g) for g in geoms],
                geom_weight=[weight_of(g.name, geom=True)[0] for g in geoms])
    return data


def _ball_spring_data(model) -> dict:
    """The springs of ball and free joints (``ball_*`` of ``ForwardC``, as
    :func:`.passive.ball_free_spring_force`): each joint's first index in q and v, whether
    it is free, its stiffness and ``qpos_spring`` (position, quaternion w x y z); none with
    the ``spring`` flag disabled."""
    given = getattr(model, "mujoco_joints", None) or {}
    rows = []
    for (_, b, qs), (_, _, vs) in zip(own_slices(model, "q"), own_slices(model, "v"),
                                      strict=True):
        k = given.get(b.joint_name, {}).get("stiffness", 0.0)
        if b.joint.kind in ("spherical", "free") and k and not disabled(model, "spring"):
            spring = np.asarray(given[b.joint_name]["qpos_spring"], float)
            rows.append((qs.start, vs.start, b.joint.kind == "free", k,
                         np.r_[spring[:3] if len(spring) == 7 else np.zeros(3), spring[-4:]]))
    return {"ball_q": [x[0] for x in rows], "ball_v": [x[1] for x in rows],
            "ball_free": [int(x[2]) for x in rows], "ball_k": [x[3] for x in rows],
            "ball_ref": np.reshape([x[4] for x in rows], (-1, 7))}


def kernel_tolerance(model, solver: str, tolerance: float) -> float:
    """The tolerance the compiled solver takes: Newton's divided by MuJoCo's scale
    (:func:`.mujoco_model.solver_scale`; ``c_solve_newton`` compares unscaled quantities
    with it), PGS's as it is."""
    return tolerance / solver_scale(model) if solver == "newton" else tolerance


def tendon_kernel_data(model, timestep: float) -> dict:
    """The static arrays of the fixed tendons (``TendonC`` in ``rbd/_kernels/tendon_rows.pxd``)
    from :mod:`.tendon_rows`' helpers: the Jacobians, the springs' dead bands, and the
    constant terms of the friction-loss, limit and equality rows (k, b from solref, clamped
    solimp, ``tendon_invweight0``), honouring the disable flags as :func:`.forward.forward`."""
    given, consts = tendons(model), _constants(model) if tendons(model) else []
    no_rows = disabled(model, "constraint")
    nq, nv = model.nq, model.nv
    band = [(c[2], c[2]) if tuple(t["springlength"]) == (-1, -1) else t["springlength"]
            for t, c in zip(given, consts, strict=True)]
    data = {"nq": nq, "nv": nv, "Jq": np.reshape([c[0] for c in consts], (-1, nq)),
            "Jv": np.reshape([c[1] for c in consts], (-1, nv)),
            "stiffness": [0.0 if disabled(model, "spring") else t["stiffness"] for t in given],
            "damping": [0.0 if disabled(model, "damper") else t["damping"] for t in given],
            "springlength": np.reshape(band, (-1, 2))}
    _, _, R, floss, ids = (([], [], [], [], []) if no_rows or disabled(model, "frictionloss")
                           else tendon_friction_rows(model, np.zeros(nv), timestep))
    friction_b = []
    for i in ids:
        solimp = clamp_solimp(given[i]["solimpfriction"])
        friction_b.append(stiffness_damping(safe_solref(given[i]["solreffriction"], timestep),
                                            solimp[1], friction_row=True)[1])
    data.update(friction_id=ids, friction_loss=floss, friction_b=friction_b, friction_R=R)
    limited = ([] if no_rows or disabled(model, "limit")
               else [i for i, t in enumerate(given) if t["limited"]])
    lim_solimp = [clamp_solimp(given[i]["solimplimit"]) for i in limited]
    lim_kb = [stiffness_damping(safe_solref(given[i]["solreflimit"], timestep), s[1])
              for i, s in zip(limited, lim_solimp, strict=True)]
    data.update(limit_id=limited, limit_range=np.reshape([given[i]["range"] for i in limited],
                                                         (-1, 2)),
                limit_margin=[given[i]["margin"] for i in limited],
                limit_k=[kb[0] for kb in lim_kb], limit_b=[kb[1] for kb in lim_kb],
                limit_weight=[consts[i][3] for i in limited],
                limit_solimp=np.reshape(lim_solimp, (-1, 5)))
    data.update(_tendon_equality_data(model, timestep, consts))
    return data


def _tendon_equality_data(model, timestep, consts) -> dict:
    """The constant terms of the active tendon equalities' rows (:func:`tendon_kernel_data`);
    their ids come after the model's other active equality constraints."""
    active = ([] if disabled(model, "constraint") or disabled(model, "equality")
              else _tendon_equalities(model))
    offset = len(active_constraints(model, None))
    pairs, length0, weight, solimps, kb = [], [], [], [], []
    for _, eq in active:
        t1, t2 = eq["tendon1"], eq["tendon2"]
        pairs.append((t1, -1 if t2 is None else t2))
        length0.append((consts[t1][2], 0.0 if t2 is None else consts[t2][2]))
        weight.append(consts[t1][3] + (0.0 if t2 is None else consts[t2][3]))
        solimps.append(clamp_solimp(eq["solimp"]))
        kb.append(stiffness_damping(safe_solref(eq["solref"], timestep), solimps[-1][1]))
    return {"eq_id": [offset + k for k, _ in active], "eq_tendon": np.reshape(pairs, (-1, 2)),
            "eq_length0": np.reshape(length0, (-1, 2)),
            "eq_polycoef": np.reshape([eq["polycoef"] for _, eq in active], (-1, 5)),
            "eq_weight": weight, "eq_k": [x[0] for x in kb], "eq_b": [x[1] for x in kb],
            "eq_solimp": np.reshape(solimps, (-1, 5))}


def compiled_pass(fm, model, q, v, tau, contacts, limits, cone, solver, iterations,
                      tolerance) -> ForwardResult:
    """:func:`forward` by the compiled pass: contacts from :func:`rbd.collide`, the rest
    in one call of ``ForwardModel.forward``."""
    from ..errors import ModelError
    from .collision import collide

    found = (collide_model(model, q, backend="kernel") if contacts and getattr(model, "geoms", ())
             else collide((), np.zeros((0, 4, 4))))
    status, out = fm.forward(q, v, tau, found, cone, solver, iterations,
                             kernel_tolerance(model, solver, tolerance), limits)
    if status == 1:
        raise ModelError("forward: the mass matrix is not positive definite at this q")
    if status == 2:
        raise ValueError(f"forward: the {solver} solver failed (the Newton matrix is not "
                         "positive definite)")
    rows = ConstraintRows(J=out["J"], aref=out["aref"], D=out["D"], R=out["R"], ne=out["ne"],
                          nf=out["nf"], frictionloss=out["frictionloss"], cones=out["cones"])
    names = np.array(["", "friction", "limit", "contact", "equality"])
    return ForwardResult(qdd=out["qdd"], qdd_smooth=out["qdd_smooth"], force=out["force"],
                         contacts=found, rows=rows, kinds=names[out["kinds"]].astype(str),
                         ids=out["ids"], M=out["M"])


_forward.COMPILED = (compiled_forward, compiled_pass)
