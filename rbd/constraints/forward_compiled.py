"""The glue of the compiled forward pass (``rbd/_kernels/forward.pyx``): which models it
takes, its static arrays built from :mod:`.forward`'s readable helpers, and the call that
turns its output into a :class:`.forward.ForwardResult`."""

from __future__ import annotations

import numpy as np

from . import forward as _forward
from .collision import collide_model
from .forward import (
    ConstraintRows,
    ForwardResult,
    _friction_rows,
    _geom_body,
    body_weight_of,
    inverse_weights,
    joint_softness,
    options,
    own_slices,
    solref_timestep,
)
from .forward_compiled_terms import COMPILED_EQUALITIES, equality_data, fluid_data
from .impedance import clamp_solimp, safe_solref, stiffness_damping
from .kinds import active_constraints
from .tendon_rows import tendons

#: Joint kinds the compiled forward pass and step handle (MuJoCo's hinge, slide, ball, free).
COMPILED_JOINTS = ("fixed", "revolute", "prismatic", "spherical", "free")


def compiled_forward(model, constraints=None):
    """The compiled forward pass of ``model`` (``rbd._kernels.forward.ForwardModel``,
    built once per set of active equality constraints and kept by the model), or None when
    the model needs the Python pass: an equality kind other than
    :data:`.forward_compiled_terms.COMPILED_EQUALITIES` (rolling), mimic joints or a joint
    kind other than :data:`COMPILED_JOINTS`, or kernels not built."""
    from .._backend import has_kernels
    from ..model import Model

    if not has_kernels() or not isinstance(model, Model) or model.mimic:
        return None
    equalities = tuple(active_constraints(model, constraints))
    if any(c.kind not in COMPILED_EQUALITIES for c in equalities) or tendons(model):
        return None
    if (getattr(model, "mujoco_options", None) or {}).get("disable") or _ball_free_springs(model):
        return None
    if any(b.joint.kind not in COMPILED_JOINTS for b in model.bodies):
        return None
    opts = options(model)          # the static data depends on the time step (solref)
    return model._derived(("compiled_forward", float(opts["timestep"]), float(opts["impratio"]),
                           equalities), lambda: _forward_model(model, equalities))


def _ball_free_springs(model) -> bool:
    """True when a ball or free joint has a spring (:func:`ball_free_spring_force`), which
    the compiled pass does not render."""
    given = getattr(model, "mujoco_joints", None) or {}
    return any(b.joint.kind in ("spherical", "free")
               and given.get(b.joint_name, {}).get("stiffness", 0.0) for b in model.bodies)


def _forward_model(model, equalities=()):
    from .._kernels.forward import ForwardModel
    from ..algorithms import compiled

    data = kernel_data(model)
    data.update(_compiled_terms(model, equalities))
    return ForwardModel(compiled(model), data, max_contacts(model))


def _compiled_terms(model, equalities) -> dict:
    """The compiled equality rows and fluid forces of the model (``EqualityModel``,
    ``FluidModel``; None where it has none), from :mod:`.forward_compiled_terms`."""
    from .._kernels.equality_rows import EqualityModel
    from .._kernels.fluid import FluidModel

    body_weight, dof_weight = inverse_weights(model)
    equality = equality_data(model, list(equalities), body_weight_of(model, body_weight),
                             dof_weight, solref_timestep(model, float(options(model)["timestep"])))
    fluid = fluid_data(model)
    return {"equality": None if equality is None else EqualityModel(equality),
            "fluid": None if fluid is None else FluidModel(fluid)}


def max_contacts(model) -> int:
    """The most contacts of one state: the compiled collision stage's bound
    (``CollisionModel.max_contacts``, the sum over candidate pairs of what their routine
    can produce), at least 1."""
    from .collision import compiled_collision

    geoms = getattr(model, "geoms", ()) or ()
    return max(1, compiled_collision(model).max_contacts if geoms else 0)


def kernel_data(model) -> dict:
    """The static arrays of the compiled forward pass (``ForwardC`` in
    ``rbd/_kernels/forward.pxd``), from this module's helpers: the constant terms of the
    friction-loss rows, the limits with their k, b and solimp, the springs, each geom's
    body and MuJoCo body weight, damping, ``dof_invweight0`` and the options."""
    opts = options(model)
    timestep = float(opts["timestep"])
    body_weight, dof_weight = inverse_weights(model)
    soft = joint_softness(model)
    weight_of = body_weight_of(model, body_weight)
    data = {"timestep": timestep, "impratio": float(opts["impratio"]),
            "dof_weight": dof_weight, "damping": np.asarray(model.damping, float)}
    J, aref, R, floss, ids = _friction_rows(model, np.ones(model.nv), dof_weight, timestep)
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
        if np.isfinite(lower[jq]) or np.isfinite(upper[jq]):
            limits.append((jq, jv, lower[jq], upper[jq], soft["margin"][jv], k, bb, solimp))
        if soft["stiffness"][jv]:
            springs.append((jq, jv, soft["stiffness"][jv], soft["springref"][jv]))
    data.update(limit_q=[x[0] for x in limits], limit_v=[x[1] for x in limits],
                limit_bound=np.reshape([x[2:4] for x in limits], (-1, 2)),
                limit_margin=[x[4] for x in limits], limit_k=[x[5] for x in limits],
                limit_b=[x[6] for x in limits],
                limit_solimp=np.reshape([x[7] for x in limits], (-1, 5)),
                spring_q=[x[0] for x in springs], spring_v=[x[1] for x in springs],
                spring_k=[x[2] for x in springs], spring_ref=[x[3] for x in springs])
    geoms = getattr(model, "geoms", ()) or ()
    data.update(geom_body=[_geom_body(model, g) for g in geoms],
                geom_weight=[weight_of(g.name, geom=True)[0] for g in geoms])
    return data


def compiled_pass(fm, model, q, v, tau, contacts, limits, cone, solver, iterations,
                      tolerance) -> ForwardResult:
    """:func:`forward` by the compiled pass: contacts from :func:`rbd.collide`, the rest
    in one call of ``ForwardModel.forward``."""
    from ..errors import ModelError
    from .collision import collide

    found = (collide_model(model, q, backend="kernel") if contacts and getattr(model, "geoms", ())
             else collide((), np.zeros((0, 4, 4))))
    status, out = fm.forward(q, v, tau, found, cone, solver, iterations, tolerance, limits)
    if status == 1:
        raise ModelError("forward: the mass matrix is not positive definite at this q")
    if status == 2:
        raise ValueError(f"forward: the {solver} solver failed (the Newton matrix is not "
                         "positive definite)")
    rows = ConstraintRows(J=out["J"], aref=out["aref"], D=out["D"], R=out["R"], ne=out["ne"],
                          nf=out["nf"], frictionloss=out["frictionloss"], cones=out["cones"])
    names = np.array(["equality", "friction", "limit", "contact"])
    return ForwardResult(qdd=out["qdd"], qdd_smooth=out["qdd_smooth"], force=out["force"],
                         contacts=found, rows=rows, kinds=names[out["kinds"]].astype(str),
                         ids=out["ids"], M=out["M"])


_forward.COMPILED = (compiled_forward, compiled_pass)
