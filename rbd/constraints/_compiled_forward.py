"""The glue of the compiled forward pass (``rbd/_kernels/forward.pyx``): which models it
takes, its static data from :mod:`.forward`'s helpers, and :func:`rbd.forward` through it.

The compiled pass covers what :func:`.forward.forward` computes except the equality rows
and fluid forces: a model with active equality constraints or fluid forces (or mimic
joints, or joints other than hinges, slides, balls and free joints) keeps the Python pass.
"""

from __future__ import annotations

import numpy as np

from .collision import collide_model
from .fluid import has_fluid
from .forward import (
    ForwardResult,
    _friction_rows,
    _geom_body,
    body_weight_of,
    inverse_weights,
    joint_softness,
    options,
    own_slices,
)
from .impedance import clamp_solimp, safe_solref, stiffness_damping
from .kinds import active_constraints
from .solver_newton import ConstraintRows

#: Joint kinds the compiled forward pass and step handle (MuJoCo's hinge, slide, ball, free).
COMPILED_JOINTS = ("fixed", "revolute", "prismatic", "spherical", "free")


def compiled_forward(model, constraints=None):
    """The compiled forward pass of ``model`` (``rbd._kernels.forward.ForwardModel``,
    built once and kept by the model), or None when the model needs the Python pass:
    active equality constraints, fluid forces, mimic joints or a joint kind other than
    :data:`COMPILED_JOINTS`, or kernels not built."""
    from .._backend import has_kernels
    from ..model import Model

    if not has_kernels() or not isinstance(model, Model) or model.mimic:
        return None
    if active_constraints(model, constraints) or has_fluid(model):
        return None
    if any(b.joint.kind not in COMPILED_JOINTS for b in model.bodies):
        return None
    return model._derived("compiled_forward", lambda: _forward_model(model))


def _forward_model(model):
    from .._kernels.forward import ForwardModel
    from ..algorithms import compiled

    return ForwardModel(compiled(model), kernel_data(model), max_contacts(model))


def max_contacts(model) -> int:
    """A bound on the contacts of one state: 4 per candidate pair of collision geoms
    (MuJoCo's pair routines give at most 4, box–box 8: counted twice), at least 8."""
    geoms = [g for g in (getattr(model, "geoms", ()) or ()) if g.contype or g.conaffinity]
    pairs = len(geoms) * (len(geoms) - 1) // 2 + len(getattr(model, "contact_pairs", ()) or ())
    return max(8, min(8 * pairs, 4096))


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
    if not limits:
        fm = _forward_model_without_limits(model)
    status, out = fm.forward(q, v, tau, found, cone, solver, iterations, tolerance)
    if status == 1:
        raise ModelError("forward: the mass matrix is not positive definite at this q")
    if status == 2:
        raise ValueError(f"forward: the {solver} solver failed (the Newton matrix is not "
                         "positive definite)")
    rows = ConstraintRows(J=out["J"], aref=out["aref"], D=out["D"], R=out["R"], ne=0,
                          nf=out["nf"], frictionloss=out["frictionloss"], cones=out["cones"])
    names = np.array(["", "friction", "limit", "contact"])
    return ForwardResult(qdd=out["qdd"], qdd_smooth=out["qdd_smooth"], force=out["force"],
                         contacts=found, rows=rows, kinds=names[out["kinds"]].astype(str),
                         ids=out["ids"])


def _forward_model_without_limits(model):
    """The compiled pass of ``model`` with its limit rows switched off (``limits=False``)."""
    def build():
        from .._kernels.forward import ForwardModel
        from ..algorithms import compiled

        data = kernel_data(model)
        for key in ("limit_q", "limit_v", "limit_margin", "limit_k", "limit_b"):
            data[key] = []
        data["limit_bound"], data["limit_solimp"] = np.zeros((0, 2)), np.zeros((0, 5))
        return ForwardModel(compiled(model), data, max_contacts(model))

    return model._derived("compiled_forward_no_limits", build)
