r"""The whole forward pass with contacts, joint limits and friction loss (MuJoCo's ``mj_forward``).

Steps (MuJoCo's "Computation" chapter; ``engine_forward.c``,
``engine_core_constraint.c``):

1. smooth dynamics: :math:`M(q)` with armature (:func:`rbd.crba`), the bias
   :math:`h(q, v)` (:func:`rbd.nonlinear_effects`), both with the tendons' armature
   (:func:`.mujoco_model.mass_matrix`, :func:`.tendon_rows.tendon_bias`), and the passive force
   :math:`\tau_p = -\mathrm{damping}\,v - \mathrm{stiffness}\,(q - q_{\mathrm{spring}})`
   (``mj_passive``, :func:`.passive.passive_force`), plus MuJoCo's fluid forces
   (:mod:`.fluid`); the unconstrained
   acceleration :math:`a_0 = M^{-1}(\tau + \tau_p - h)`;
2. the constraint rows in MuJoCo's order: the equality constraints of the model
   (:mod:`.equality_rows`), dof friction loss (``model.friction > 0``),
   joint limits (``mj_instantiateLimit``: the lower side is active when
   :math:`q - \mathrm{lower} < \mathrm{margin}`, row :math:`+e_j`; the upper side when
   :math:`\mathrm{upper} - q < \mathrm{margin}`, row :math:`-e_j`), contacts
   (:func:`rbd.collide`, rows of :mod:`.contact_rows` from the Jacobian difference of
   the two bodies at the contact point);
3. MuJoCo's approximate Delassus diagonal :math:`\hat A` (``mj_diagApprox``) from the
   inverse weights at the reference configuration (:func:`inverse_weights`), the
   regularizer :math:`R`, and the reference acceleration (:mod:`.impedance`);
4. the convex problem solved by Newton (:func:`.solver_newton.solve_newton`) or PGS.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._backend import resolve
from ..errors import InputError
from ._backends import solvers
from .collision import Contacts, collide_model
from .contact_rows import contact_rows
from .equality_rows import equality_rows
from .fluid import has_fluid
from .impedance import (
    clamp_solimp,
    contact_regularizers,
    impedance,
    reference_acceleration,
    regularizer,
    safe_solref,
    stiffness_damping,
)
from .kinds import active_constraints
from .mujoco_model import (  # noqa: F401 (re-exported: forward's model data)
    DEFAULT_OPTIONS,
    LIMIT_SOLIMP,
    LIMIT_SOLREF,
    TOLERANCE,
    disabled,
    free_joint_bias,
    joint_softness,
    options,
    own_slices,
    solref_timestep,
    solver_scale,
    solver_settings,
)
from .passive import passive_force
from .solver_newton import ConstraintRows
from .tendon_rows import (
    mass_matrix,
    tendon_bias,
    tendon_equality_rows,
    tendon_friction_rows,
    tendon_limit_rows,
    tendons,
)

#: The compiled pass (``rbd/_kernels/forward.pyx``): ``(compiled_forward, compiled_pass)`` of
#: :mod:`.forward_compiled`, which sets it when it is imported (``import rbd`` does); while it is
#: None, :func:`forward` takes the Python pass.  (That module builds on this one's helpers, so
#: this one cannot import it.)
COMPILED = None


@dataclasses.dataclass
class ForwardResult:
    """What :func:`forward` computed.

    Attributes
    ----------
    qdd : (nv,) ndarray
        Constrained accelerations (MuJoCo's ``qacc``).
    qdd_smooth : (nv,) ndarray
        Unconstrained accelerations :math:`a_0` (``qacc_smooth``).
    force : (nefc,) ndarray
        Constraint forces in row order (``efc_force``).
    contacts : Contacts
        The contact set (:func:`rbd.collide`).
    rows : ConstraintRows
        The rows: ``J``, ``aref``, ``D``, ``R``, ``ne``, ``nf``, cones.
    kinds : (nefc,) ndarray of str
        ``"equality"``, ``"friction"``, ``"limit"`` or ``"contact"`` per row.
    ids : (nefc,) int ndarray
        The index of each row's equality constraint (among the active ones), its
        dof (friction, limit) or its contact.
    M : (nv, nv) ndarray or None
        The joint-space inertia at ``q`` with armature (:func:`rbd.crba`), for a
        caller that needs it again (the Euler step's implicit damping).
    """

    qdd: np.ndarray
    qdd_smooth: np.ndarray
    force: np.ndarray
    contacts: Contacts
    rows: ConstraintRows
    kinds: np.ndarray
    ids: np.ndarray
    M: np.ndarray | None = None


def reference_configuration(model) -> np.ndarray:
    """``qpos0`` in rbd's coordinates: :func:`rbd.neutral` (zero joint values, identity
    quaternions)."""
    from ..algorithms.configuration import neutral

    return neutral(model)


def inverse_weights(model) -> tuple[np.ndarray, np.ndarray]:
    r"""MuJoCo's ``body_invweight0`` and ``dof_invweight0`` (``mj_setConst``).

    At the reference configuration, :math:`A = J M^{-1} J^T` with :math:`J` the
    Jacobian of each body's centre of mass: the body's weights are the averages
    of the translational and rotational diagonals of :math:`A`.  A dof's weight
    is the diagonal of :math:`M^{-1}` (averaged over the three translations and
    the three rotations of a free joint, the three of a ball joint).

    Returns
    -------
    body : (nbodies + 1, 2) ndarray
        Row 0 the world (zeros), then ``model.bodies``: translation, rotation.
    dof : (nv,) ndarray
    """
    return model._derived("contact_inverse_weights", lambda: _inverse_weights(model))


def _inverse_weights(model) -> tuple[np.ndarray, np.ndarray]:
    """:func:`inverse_weights`, computed (the model keeps the result)."""
    from ..algorithms.kinematics import jacobian

    q0 = reference_configuration(model)
    Minv = np.linalg.inv(mass_matrix(model, q0))
    body = np.zeros((model.nbodies + 1, 2))
    for i, b in enumerate(model.bodies):
        J = jacobian(model, q0, i, np.asarray(b.com, float))
        A = J @ Minv @ J.T
        body[i + 1] = np.trace(A[3:, 3:]) / 3, np.trace(A[:3, :3]) / 3
    dof = np.diag(Minv).copy()
    for _, b, vs in own_slices(model, "v"):
        kind = b.joint.kind
        if kind == "free":                              # rbd's free v is [ω; u]
            dof[vs.start:vs.start + 3] = np.mean(dof[vs.start:vs.start + 3])
            dof[vs.start + 3:vs.stop] = np.mean(dof[vs.start + 3:vs.stop])
        elif kind == "spherical":
            dof[vs] = np.mean(dof[vs])
    return body, dof


def body_weight_of(model, body_weight):
    r"""``name -> (translation, rotation)`` inverse weight of the body carrying a body,
    frame or geom name, as MuJoCo has it per MJCF body (``body_invweight0``).

    MuJoCo computes a body's weight at its own centre of mass before anything is merged;
    rbd merges bodies welded to their parent, so a name that came from an MJCF body
    (``model.mujoco_bodies``) takes that body's weight, any other its rbd body's.
    """
    places = getattr(model, "mujoco_bodies", None) or {"body": {}, "geom": {}, "frame": {}}
    mujoco_weight = _mujoco_body_weights(model) if places["body"] else {}

    def weight(name, geom: bool = False) -> np.ndarray:
        if name is None:
            return np.zeros(2)
        owner = places["geom" if geom else "frame"].get(name, name)
        if owner in mujoco_weight:
            return mujoco_weight[owner]
        if geom:
            g = next(g for g in model.geoms if g.name == name)
            return body_weight[_geom_body(model, g) + 1]
        return body_weight[model.body_index(name) + 1]

    return weight


def _mujoco_body_weights(model) -> dict:
    """``body_invweight0`` of each MJCF body at its own centre of mass (cached)."""
    return model._derived("mujoco_body_weights", lambda: _weights_at_com(model))


def _weights_at_com(model) -> dict:
    from ..algorithms.kinematics import jacobian

    q0 = reference_configuration(model)
    Minv = np.linalg.inv(mass_matrix(model, q0))
    out = {}
    for name, (body, com) in model.mujoco_bodies["body"].items():
        if body is None:
            out[name] = np.zeros(2)
            continue
        J = jacobian(model, q0, model.body_index(body), com)
        A = J @ Minv @ J.T
        out[name] = np.array([np.trace(A[3:, 3:]) / 3, np.trace(A[:3, :3]) / 3])
    return out


def _dof_joint(model):
    """Per dof: (body index, joint kind)."""
    out = []
    for i, b in enumerate(model.bodies):
        out += [(i, b.joint.kind)] * b.joint.nv
    return out


def _friction_rows(model, v, dof_weight, timestep):
    """Dof friction loss: a row e_j per dof with ``model.friction[j] > 0``
    (``mj_instantiateFriction``), with the joint's ``solreffriction``/``solimpfriction``."""
    soft = joint_softness(model)
    J, aref, R, floss, ids = [], [], [], [], []
    for j in np.flatnonzero(np.asarray(model.friction) > 0):
        row = np.zeros(model.nv)
        row[j] = 1.0
        solimp = clamp_solimp(soft["solimpfriction"][j])
        imp, _ = impedance(solimp, 0.0, 0.0)
        k, b = stiffness_damping(safe_solref(soft["solreffriction"][j], timestep), solimp[1],
                                 friction_row=True)
        J.append(row)
        aref.append(reference_acceleration(k, b, imp, v[j], 0.0, 0.0))
        R.append(regularizer(imp, dof_weight[j]))
        floss.append(float(model.friction[j]))
        ids.append(int(j))
    return J, aref, R, floss, ids


def _limit_rows(model, q, v, dof_weight, timestep):
    """Joint-limit rows of the revolute and prismatic joints (``mj_instantiateLimit``),
    with the joint's ``solreflimit``, ``solimplimit`` and ``margin``."""
    soft = joint_softness(model)
    J, aref, R, ids = [], [], [], []
    lower, upper = np.asarray(model.lower, float), np.asarray(model.upper, float)
    for (_, b, qs), (_, _, vs) in zip(own_slices(model, "q"), own_slices(model, "v"),
                                      strict=True):
        if b.joint.kind not in ("revolute", "prismatic"):
            continue
        jq, jv = qs.start, vs.start
        solref = safe_solref(soft["solreflimit"][jv], timestep)
        solimp = clamp_solimp(soft["solimplimit"][jv])
        margin = float(soft["margin"][jv])
        for side, bound in ((-1, lower[jq]), (1, upper[jq])):
            if not np.isfinite(bound):
                continue
            dist = side * (bound - q[jq])
            if dist >= margin:
                continue
            row = np.zeros(model.nv)
            row[jv] = -side
            imp, _ = impedance(solimp, dist, margin)
            k, bb = stiffness_damping(solref, solimp[1])
            J.append(row)
            aref.append(reference_acceleration(k, bb, imp, row @ v, dist, margin))
            R.append(regularizer(imp, dof_weight[jv]))
            ids.append(jv)
    return J, aref, R, ids


def _geom_body(model, geom) -> int:
    """rbd body index of a geom (-1: the world)."""
    if geom.body is None:
        return -1
    return model.body_index(geom.body) if not isinstance(geom.body, int) else geom.body


def contact_jacobian(model, q, poses, point, bodies) -> np.ndarray:
    r"""The relative-velocity Jacobian at a contact point, :math:`J^{(2)} - J^{(1)}`.

    Parameters
    ----------
    model : rbd.Model
    q : (nq,) ndarray
    poses : (nbodies, 4, 4) ndarray
        :func:`rbd.forward_kinematics` at ``q``.
    point : (3,) array_like
        The contact point in world coordinates.
    bodies : (int, int)
        rbd body indices of the two geoms' bodies (-1: the world, which does not move).

    Returns
    -------
    (6, nv) ndarray
        Rows :math:`[\omega; \dot p]`, world-aligned, of body 2's point minus body 1's
        (:func:`rbd.jacobian`), as MuJoCo's ``mj_jacDifPair``.
    """
    from ..algorithms.kinematics import jacobian

    jac = np.zeros((6, model.nv))
    for b, sign in zip(bodies, (-1.0, 1.0), strict=True):
        if b < 0:
            continue
        local = poses[b][:3, :3].T @ (np.asarray(point, float) - poses[b][:3, 3])
        jac += sign * jacobian(model, q, b, local)
    return jac


def _contact_rows(model, q, v, contacts, weight_of, cone, impratio, timestep, poses=None):
    """Rows of the active contacts (``mj_instantiateContact``, ``mj_diagApprox``,
    ``mj_makeImpedance``); ``poses`` the bodies' (:func:`rbd.forward_kinematics` at
    ``q``), computed when not given."""
    from ..algorithms.kinematics import forward_kinematics

    if poses is None:
        poses = forward_kinematics(model, q)
    geoms = model.geoms
    J, aref, R, ids, cones = [], [], [], [], []
    for c in range(len(contacts)):
        if contacts.exclude[c]:
            continue
        pair = [geoms[g] for g in contacts.geom[c]]
        bodies = [_geom_body(model, geom) for geom in pair]
        jac = contact_jacobian(model, q, poses, contacts.pos[c], bodies)
        moving = [geom for geom, b in zip(pair, bodies, strict=True) if b >= 0]
        tran, rot = sum((weight_of(geom.name, geom=True) for geom in moving), np.zeros(2))
        condim = int(contacts.condim[c])
        friction = contacts.friction[c]
        rows = contact_rows(contacts.frame[c], jac[3:], jac[:3], condim, friction, cone)
        dist, margin = float(contacts.dist[c]), float(contacts.includemargin[c])
        solref = safe_solref(contacts.solref[c], timestep)
        solimp = clamp_solimp(contacts.solimp[c])
        imp, _ = impedance(solimp, dist, margin)
        k, b = stiffness_damping(solref, solimp[1])
        vel = rows @ v
        if condim == 1 or cone == "elliptic":
            diag0 = tran
        else:
            diag0 = tran + friction[0] ** 2 * tran
        r0 = regularizer(imp, diag0)
        if condim == 1:
            Rc = np.array([r0])
            a = reference_acceleration(k, b, imp, vel, dist, margin)
        else:
            Rc, mu = contact_regularizers(r0, friction, condim, cone, impratio)
            if cone == "elliptic":
                pos = np.zeros(condim)
                pos[0] = dist
                marg = np.zeros(condim)
                marg[0] = margin
                ref = np.asarray(contacts.solreffriction[c], float)
                kk = np.zeros(condim)
                bb = np.full(condim, b)
                kk[0] = k
                if ref[0] or ref[1]:
                    bb[1:] = stiffness_damping(ref, solimp[1], friction_row=True)[1]
                a = reference_acceleration(kk, bb, imp, vel, pos, marg)
                cones.append((sum(len(x) for x in aref), condim, mu, np.asarray(friction)))
            else:
                a = reference_acceleration(k, b, imp, vel, dist, margin)
        J.append(rows)
        aref.append(np.atleast_1d(a))
        R.append(Rc)
        ids += [c] * len(rows)
    return J, aref, R, ids, cones


def forward(model, q, v, tau=None, *, backend: str | None = None, solver: str = "newton",
            cone: str | None = None, contacts: bool = True, limits: bool = True,
            iterations: int | None = None, tolerance: float | None = None,
            constraints=None) -> ForwardResult:
    r"""Accelerations and forces with contacts, limits and friction loss (``mj_forward``).

    Parameters
    ----------
    model : rbd.Model
    q : (nq,) array_like
    v : (nv,) array_like
    tau : (nv,) array_like, optional
        Joint forces (MuJoCo's ``qfrc_applied`` plus actuation), zero by default.
    backend : {None, "kernel", "reference"}, optional
        Of the smooth dynamics (:func:`rbd.crba`, :func:`rbd.nonlinear_effects`), the
        solver and the narrow phase: ``"kernel"`` (the default when the kernels are
        built) runs their compiled twins, ``"reference"`` the readable modules.
    solver : {"newton", "pgs"}
    cone : {"pyramidal", "elliptic"}, optional
        Friction cone; default the model's ``<option cone>`` (MuJoCo: pyramidal).
    contacts, limits : bool
        Switch the contact rows or the joint-limit rows off.
    iterations, tolerance : int, float, optional
        Of the solver: by default the model's ``<option iterations tolerance>``, else
        MuJoCo's 100 iterations and tolerance 1e-8
        (:func:`.mujoco_model.solver_settings`).  Newton stops by MuJoCo's rule, on
        quantities scaled by :func:`.mujoco_model.solver_scale`: when a step's cost
        decrease, the gradient or the Newton decrement is below ``tolerance``.  PGS
        stops when a sweep changes no force by more than ``tolerance`` times the
        largest force plus one (MuJoCo's PGS compares the sweep's scaled cost decrease
        with ``tolerance``: a rule that cannot see force errors below the square root
        of the rounding of the cost, which a comparison with Newton needs).  Both
        stop after ``iterations`` steps or sweeps.
    constraints : sequence of constraint kinds, optional
        The equality constraints made rows (default: the model's active ones;
        ``()`` for none).

    Returns
    -------
    ForwardResult
        ``qdd`` (MuJoCo's ``qacc``), ``force`` (``efc_force``), ``contacts``, ``rows``.

    Notes
    -----
    The active equality constraints (default ``model.constraints``) are the first
    rows, soft as MuJoCo makes them (:mod:`.equality_rows`, with each constraint's
    ``solref``, ``solimp`` and ``torquescale``).

    MuJoCo's ``<option><flag>`` disable flags of the model (:func:`disabled`) are
    honoured: ``constraint`` (no rows at all), ``equality``, ``frictionloss``,
    ``limit`` and ``contact`` (no rows of that kind), ``spring`` and ``damper``
    (:func:`passive_force`), ``refsafe`` (time constants below two steps kept),
    ``filterparent`` (:func:`rbd.collide`); ``gravity`` is applied at load.

    On the kernel backend, a model without rolling constraints, spatial tendons,
    collision pairs of the GJK stage or mimic joints, whose
    joints are hinges, slides, balls and free joints, runs the
    whole pass after collision detection in one compiled call
    (``rbd/_kernels/forward.pyx``, :func:`compiled_forward`); other models take the
    Python pass with compiled pieces, with the same results.
    """
    from ..algorithms.dynamics import nonlinear_effects

    opts = options(model)
    q, v, tau, cone = _arguments(model, q, v, tau, solver, opts["cone"] if cone is None else cone)
    if (COMPILED is not None and resolve(backend) == "kernel"
            and (fm := COMPILED[0](model, constraints))):
        compiled_pass = COMPILED[1]
        iterations, tolerance = solver_settings(model, iterations, tolerance)
        return compiled_pass(fm, model, q, v, tau, contacts, limits, cone, solver,
                             iterations, tolerance)
    M = mass_matrix(model, q, backend=backend)            # with the tendons' armature
    poses = None                                    # body poses: one pass, up to three uses
    if (contacts and getattr(model, "geoms", ())) or has_fluid(model):
        from ..algorithms.kinematics import forward_kinematics

        poses = forward_kinematics(model, q, backend=backend)
    passive = passive_force(model, q, v, poses=poses)
    h = nonlinear_effects(model, q, v, backend=backend) + tendon_bias(model, q, v, backend)
    a0 = np.linalg.solve(M, tau + passive - h)
    body_weight, dof_weight = inverse_weights(model)
    weight_of = body_weight_of(model, body_weight)
    timestep = solref_timestep(model, float(opts["timestep"]))
    # MuJoCo's disable flags (mj_makeConstraint, mj_collision)
    no_rows = disabled(model, "constraint")
    equalities = (() if no_rows or disabled(model, "equality")
                  else active_constraints(model, constraints))
    limits = limits and not (no_rows or disabled(model, "limit"))
    contacts = contacts and not (no_rows or disabled(model, "contact"))

    Je, ae, Re, _, ide = equality_rows(model, q, v, equalities, weight_of, dof_weight, timestep)
    Jf, af, Rf, floss, idf = (([], [], [], [], []) if no_rows or disabled(model, "frictionloss")
                              else _friction_rows(model, v, dof_weight, timestep))
    Jl, al, Rl, idl = _limit_rows(model, q, v, dof_weight, timestep) if limits else ([], [], [], [])
    if tendons(model):              # fixed tendons: after each kind's own rows, as MuJoCo
        (Je, ae, Re, ide), (Jf, af, Rf, floss, idf), (Jl, al, Rl, idl) = _with_tendon_rows(
            model, q, v, timestep, constraints is None and not no_rows, limits, len(equalities),
            (Je, ae, Re, ide), (Jf, af, Rf, floss, idf), (Jl, al, Rl, idl))
    if contacts and getattr(model, "geoms", ()):
        if poses is None:
            from ..algorithms.kinematics import forward_kinematics

            poses = forward_kinematics(model, q, backend=backend)
        found = collide_model(model, q, backend=backend, body_poses=poses)
    else:
        from .collision import collide

        found = collide((), np.zeros((0, 4, 4)))
    Jc, ac, Rc, idc, cones = _contact_rows(model, q, v, found, weight_of, cone,
                                           float(opts["impratio"]), timestep, poses=poses)
    rows = _stacked_rows(model, v, (Je, ae, Re), (Jf, af, Rf, floss), (Jl, al, Rl),
                         (Jc, ac, Rc, cones))
    if len(rows.aref) == 0:
        qdd, force = a0, np.zeros(0)
    else:
        iterations, tolerance = solver_settings(model, iterations, tolerance)
        solve = solvers(backend)[0 if solver == "newton" else 1]
        scaled = {"scale": solver_scale(model)} if solver == "newton" else {}
        qdd, force = solve(M, a0, rows, iterations=iterations, tolerance=tolerance, **scaled)
    kinds = np.array(["equality"] * rows.ne + ["friction"] * rows.nf + ["limit"] * len(Jl)
                     + ["contact"] * len(idc))
    ids = np.array(ide + idf + idl + idc, dtype=int)
    return ForwardResult(qdd=qdd, qdd_smooth=a0, force=force, contacts=found, rows=rows,
                         kinds=kinds, ids=ids, M=M)


def _arguments(model, q, v, tau, solver, cone) -> tuple:
    """``q, v, tau`` as float arrays of the model's sizes and the cone, or InputError."""
    if solver not in ("newton", "pgs"):
        raise InputError(f"solver: expected 'newton' or 'pgs', got {solver!r}")
    if cone not in ("pyramidal", "elliptic"):
        raise InputError(f"cone: expected 'pyramidal' or 'elliptic', got {cone!r}")
    q, v = np.asarray(q, float), np.asarray(v, float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise InputError(f"q, v: expected shapes ({model.nq},), ({model.nv},), "
                         f"got {q.shape}, {v.shape}")
    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, float)
    if tau.shape != (model.nv,):
        raise InputError(f"tau: expected shape ({model.nv},), got {tau.shape}")
    return q, v, tau, cone


def _with_tendon_rows(model, q, v, timestep, equality, limits, nequalities, eq, fr, lim):
    """The equality, friction-loss and limit rows with the fixed tendons' rows after each
    kind's own (MuJoCo's order; ``equality`` and ``limits`` switch those kinds)."""
    (Je, ae, Re, ide), (Jf, af, Rf, floss, idf), (Jl, al, Rl, idl) = eq, fr, lim
    if equality and not disabled(model, "equality"):
        Jt, at, Rt, idt = tendon_equality_rows(model, q, v, timestep)
        if Jt:          # MuJoCo's tendon rows have no J̇q̇: rbd's v̇ differs on free joints
            at = np.asarray(at) - np.asarray(Jt) @ free_joint_bias(model, v)
            Je, ae = np.vstack([Je, Jt]), np.concatenate([ae, at])
            Re, ide = np.concatenate([Re, Rt]), ide + [nequalities + i for i in idt]
    if not (disabled(model, "constraint") or disabled(model, "frictionloss")):
        Jt, at, Rt, ft, idt = tendon_friction_rows(model, v, timestep, q)
        Jf, af, Rf, floss, idf = Jf + Jt, af + at, Rf + Rt, floss + ft, idf + idt
    if limits:
        Jt, at, Rt, idt = tendon_limit_rows(model, q, v, timestep)
        Jl, al, Rl, idl = Jl + Jt, al + at, Rl + Rt, idl + idt
    return (Je, ae, Re, ide), (Jf, af, Rf, floss, idf), (Jl, al, Rl, idl)


def _stacked_rows(model, v, eq, fr, lim, con) -> ConstraintRows:
    """The rows in MuJoCo's order (equality, friction loss, limits, contacts); MuJoCo's rows
    other than the equalities act on its free-joint acceleration (:func:`free_joint_bias`)."""
    (Je, ae, Re), (Jf, af, Rf, floss), (Jl, al, Rl), (Jc, ac, Rc, cones) = eq, fr, lim, con
    ne, nf = len(ae), len(Jf)
    offset = ne + nf + len(Jl)
    cones = tuple((s + offset, d, mu, f) for s, d, mu, f in cones)
    J = np.vstack([np.array(Jf, float).reshape(len(Jf), model.nv),
                   np.array(Jl, float).reshape(len(Jl), model.nv), *Jc])
    aref = np.concatenate([np.array(af, float), np.array(al, float), *ac])
    R = np.concatenate([Re, np.array(Rf, float), np.array(Rl, float), *Rc])
    if len(aref):
        aref = aref - J @ free_joint_bias(model, v)
    J, aref = np.vstack([Je, J]), np.concatenate([ae, aref])
    frictionloss = np.zeros(len(aref))
    frictionloss[ne:ne + nf] = floss
    return ConstraintRows(J=J, aref=aref, D=1 / R if len(R) else R, R=R, ne=ne, nf=nf,
                          frictionloss=frictionloss, cones=cones)
