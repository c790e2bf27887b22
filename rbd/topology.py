r"""Re-rooting a kinematic tree on the fly (Stępień, Polański & Wojciechowski).

When a multibody system changes the body through which it touches the
world — a walker's swing foot strikes the ground, a gymnast grabs a bar —
the tree can be rebuilt around the new support instead of adding a contact
constraint.  :func:`reroot` does this in linear time and returns a model,
configuration and velocity that describe *the same physical system in the
same state*: the paper's three requirements (SPW §3)

* **A1** re-rooting back returns the original model and state;
* **A2** every body keeps its name, orientation and centre of mass in the
  world (the system looks the same);
* **A3** every body keeps its spatial velocity at the instant of the switch.

The steps, with the equations of Stępień et al. (tags ``SPW (n)``):

1. *Connectivity* (SPW §6.1).  The chain of inversion χ runs from the new
   root up to the old top body; every parent–child relation on it is
   reversed.  Siblings of a body on χ keep their parent (the paper's option
   (ii)), so they become grandchildren of that body's new parent and the
   tree keeps a single top body.
2. *Joints* (SPW Fig. 5).  A joint on χ keeps its place and its name but is
   now used by its former owner.  Its state is inverted (SPW §6.2.2): a
   revolute, prismatic or helical joint has ``q → -q`` about the same
   physical axis, a universal joint ``R₁(q₁)R₂(q₂)`` becomes
   ``R₂(-q₂)R₁(-q₁)`` (swapped, negated axes), a spherical joint gets the
   conjugate rotation, a free or planar joint the inverse motion.
3. *Geometry* (SPW Eqs. 9–20).  Bind poses (all joints at their neutral
   value) are the data that survive a change of hierarchy: each body keeps its
   absolute bind orientation, its frame origin moves to the joint it now uses
   (SPW (10)), and the new tree transforms are read off the new absolute bind
   poses (SPW (11)–(12)).  Inertias are re-expressed about the moved origins
   (SPW (19)–(20)).
4. *The new top joint* (SPW Eqs. 13–18, 21–22) connects the new root to the
   world at ``point`` with the requested joint type; its state is extracted
   from the joint transform that reproduces the current pose.
5. *Velocities* (SPW §7.1): inverted joints take the reversed relative
   velocity; the top joint takes the spatial velocity of the new root at the
   pivot — all of it for a ``"free"`` top joint, the part it can carry
   otherwise (so A3 holds for a ``"spherical"`` top joint when the pivot point
   is at rest, for a ``"revolute"`` one when moreover the root turns about the
   axis, for ``"fixed"`` when the root is at rest).

Conventions of the returned model
---------------------------------
* Body names are kept; bodies are renumbered (parents before children,
  otherwise in the old order).  Body frames keep their orientation; the frame
  of a body on χ moves to its new pivot, and its inertia and attached frames
  are re-expressed there.
* Joint names stay with the physical joints: an inverted joint keeps its
  name although it now belongs to its former parent.  The joint to the world
  that is dropped gives its name to the new top joint unless ``joint_name``
  is given.  Joints not on χ are untouched.
* The new top joint's predecessor frame is placed so that the bind pose of
  the tree is kept (SPW (17)–(18)): for ``"spherical"`` at the pivot with the
  root's bind orientation, for ``"free"`` at the pivot's bind position, for
  ``"revolute"`` with the bind orientation turned as close as the axis allows,
  for ``"fixed"`` at the current pose.  A free top joint keeps the whole bind
  pose and a spherical one its orientations, so re-rooting back through them
  returns the model and ``q`` to rounding (up to the sign of quaternions;
  through a spherical joint unless the original top joint was free, whose
  bind position is lost).  Through a revolute or fixed top joint in a general
  3-D pose (or back to a free one through a spherical one) re-rooting back
  gives the same poses and dynamics, but the top joint's bind pose, hence its
  ``q``, may differ.  In planar trees a revolute top joint about the common
  axis keeps the bind pose too.

References
----------
J. Stępień, A. Polański and K. Wojciechowski, "A general on-the-fly
algorithm for modifying the kinematic tree hierarchy", *Int. J. Appl. Math.
Comput. Sci.* 22(1), 2012.
"""

from __future__ import annotations

import heapq

import numpy as np

from ._validation import as_vector
from .algorithms import forward_kinematics, jacobian, neutral
from .errors import InputError, ModelError
from .joints import Fixed, Free, Helical, Joint, Planar, Prismatic, Revolute, Spherical, Universal
from .model import Model
from .spatial import mcI, plux, plux_parts, quat_multiply, rot_to_quat

__all__ = [
    "TOP_JOINTS",
    "reroot",
    "chain_of_inversion",
    "inverted_joint",
    "inverted_position",
    "inverted_velocity",
]

#: Joint types accepted for the new connection to the world.
TOP_JOINTS = ("fixed", "revolute", "spherical", "free")

_INVERTIBLE = ("fixed", "revolute", "prismatic", "helical", "universal", "spherical", "free",
               "planar")


# --- connectivity (SPW §6.1) ------------------------------------------------------------
def chain_of_inversion(model: Model, body: int | str) -> list[int]:
    """The chain χ from ``body`` up to its top body (SPW §6.1), as body indices.

    ``chain[0]`` is ``body`` and ``chain[-1]`` the body attached to the world.
    """
    i = model.body_index(body)
    chain = [i]
    while model.parent[chain[-1]] >= 0:
        chain.append(model.parent[chain[-1]])
    return chain


def _new_parents(model: Model, chain: list[int]) -> list[int]:
    """Parent array after reversing χ; siblings keep their parents (SPW §6.1 (ii))."""
    parent = list(model.parent)
    parent[chain[0]] = -1
    for j in range(1, len(chain)):
        parent[chain[j]] = chain[j - 1]
    return parent


def _topological_order(parent: list[int]) -> list[int]:
    """Parents before children; among the bodies ready, the lowest old index first."""
    children: list[list[int]] = [[] for _ in parent]
    ready = []
    for i, p in enumerate(parent):
        if p < 0:
            ready.append(i)
        else:
            children[p].append(i)
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for c in children[i]:
            heapq.heappush(ready, c)
    return order


# --- inverted joints (SPW §6.2.2, §7.1) --------------------------------------------------
def _conjugate(quat: np.ndarray) -> np.ndarray:
    return np.array([-quat[0], -quat[1], -quat[2], quat[3]])


def _rotated_inverse_quat(quat: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Quaternion of ``A Rᵀ Aᵀ``: ``q_A ⊗ q* ⊗ q_A*`` (keeps the scalar part and its sign)."""
    qA = rot_to_quat(A)
    return quat_multiply(quat_multiply(qA, _conjugate(quat)), _conjugate(qA))


def _rotation(E: np.ndarray) -> np.ndarray:
    """The rotation nearest to ``E`` (the polar factor ``U Vᵀ`` of ``E = U Σ Vᵀ``).

    A tree transform of the new tree is a product of rotations read off the old
    tree's kinematics; in double precision such a product is off SO(3) by a few
    ulps, and a model re-rooted step after step (the walker: one re-rooting per
    heel strike) would carry that drift into every later product until the
    builder refuses the rotation.  Projecting each composed rotation back onto
    SO(3) keeps the drift at one rounding, whatever the number of re-rootings.
    """
    U, _, Vt = np.linalg.svd(E)
    R = U @ Vt
    if np.linalg.det(R) < 0:   # E near a reflection: not a rotation to begin with
        return E
    return R


def _check_invertible(joint: Joint) -> None:
    if joint.kind not in _INVERTIBLE:
        raise ModelError(f"cannot invert a joint of kind {joint.kind!r} "
                         f"(supported: {', '.join(_INVERTIBLE)})")


def inverted_joint(joint: Joint, A: np.ndarray) -> Joint:
    """The joint of the same kind used from the other side (SPW Fig. 5).

    Parameters
    ----------
    joint : Joint
        The joint from a parent P to a child C.
    A : (3, 3) ndarray
        Orientation of the joint's predecessor frame in P's body frame
        (``E.T`` for the child's ``X_tree = plux(E, r)``).

    Returns
    -------
    Joint
        The joint from C to P, with its axes expressed in P's body frame:
        the same physical axis for revolute, prismatic and helical joints (and
        the same pitch), the two axes swapped for a universal joint, the plane
        normal for a planar joint.
    """
    _check_invertible(joint)
    kind = joint.kind
    if kind == "revolute":
        return Revolute(A @ joint.axis)
    if kind == "prismatic":
        return Prismatic(A @ joint.axis)
    if kind == "helical":
        return Helical(A @ joint.axis, joint.pitch)
    if kind == "universal":
        return Universal(A @ joint.axis2, A @ joint.axis1)
    if kind == "planar":
        return Planar(A @ joint.normal)
    return {"spherical": Spherical, "free": Free, "fixed": Fixed}[kind]()


def inverted_position(joint: Joint, q: np.ndarray, A: np.ndarray) -> np.ndarray:
    r"""Configuration of :func:`inverted_joint` that undoes ``joint`` at ``q`` (SPW §6.2.2).

    The inverted joint's transform is :math:`(A R^T A^T,\; -A R^T p)` for the
    joint transform :math:`(R, p)`:

    * revolute, prismatic, helical: ``-q``;
    * universal: ``(-q₂, -q₁)``;
    * spherical: the conjugate quaternion, rotated into P's frame;
    * free: ``[-A Rᵀ p, quat(A Rᵀ Aᵀ)]``;
    * planar: the inverse planar motion ``(x', y', -θ)``;
    * fixed: nothing.
    """
    _check_invertible(joint)
    q = np.asarray(q, dtype=float)
    kind = joint.kind
    if kind in ("revolute", "prismatic", "helical"):
        return -q
    if kind == "universal":
        return np.array([-q[1], -q[0]])
    if kind == "spherical":
        return _rotated_inverse_quat(q, A)
    R, p = joint.transform(q)
    if kind == "free":
        return np.concatenate([-A @ R.T @ p, _rotated_inverse_quat(q[3:7], A)])
    if kind == "planar":
        inverse = inverted_joint(joint, A)
        u = -A @ R.T @ p
        return np.array([inverse.e1 @ u, inverse.e2 @ u, -q[2]])
    return np.zeros(0)


def inverted_velocity(joint: Joint, q: np.ndarray, qd: np.ndarray, A: np.ndarray
                      ) -> np.ndarray:
    r"""Velocity of :func:`inverted_joint` for the joint velocity ``qd`` (SPW §7.1).

    The velocity of P relative to C is minus that of C relative to P.  In C's
    coordinates the latter is :math:`S(q)\,\dot q`; moved to the inverted
    joint's successor frame by :math:`X = X_J'(q')\,\mathrm{rot}(A)` it must
    equal :math:`-S'(q')\,\dot q'`, so :math:`\dot q' = -S'^{+} X S \dot q`.
    For revolute, prismatic and helical joints this is ``-qd``; for a
    universal joint ``(-qd₂, -qd₁)``.
    """
    inverse = inverted_joint(joint, A)
    q_inv = inverted_position(joint, q, A)
    X = inverse.X_J(q_inv) @ plux(A, np.zeros(3))
    v_rel = -X @ joint.S(q) @ np.asarray(qd, dtype=float)              # SPW §7.1
    S_inv = inverse.S(q_inv)
    return np.linalg.lstsq(S_inv, v_rel, rcond=None)[0]


# --- the new top joint (SPW Eqs. 13–18, 21–22) ---------------------------------------------
def _twist_angle(Q: np.ndarray, a: np.ndarray) -> float:
    """Angle of the rotation about ``a`` closest to ``Q`` (twist of a swing–twist split)."""
    quat = rot_to_quat(Q)
    return float(2.0 * np.arctan2(quat[:3] @ a, quat[3]))


def _top_joint(kind, w, R_k, Rb_k, g, g_T):
    """The new top joint, its predecessor frame ``(R_G, o_G)`` in the world (SPW (18))."""
    if kind == "fixed":
        return Fixed(), R_k, g
    if kind == "spherical":
        return Spherical(), Rb_k, g                                    # SPW (18)
    if kind == "free":
        return Free(), Rb_k, g_T                                       # SPW (17)
    a = R_k.T @ w
    theta = _twist_angle(Rb_k.T @ R_k, a)
    return Revolute(a), R_k @ Revolute(a).transform([-theta])[0], g


def _joint_position(joint: Joint, R_J: np.ndarray, p_J: np.ndarray) -> np.ndarray:
    """Inverse of jcalc for the top joint: its ``q`` from the transform ``(R_J, p_J)``."""
    if joint.kind == "revolute":
        return np.array([_twist_angle(R_J, joint.axis)])
    if joint.kind == "spherical":
        return rot_to_quat(R_J)
    if joint.kind == "free":
        return np.concatenate([p_J, rot_to_quat(R_J)])
    return np.zeros(0)


# --- argument checks ----------------------------------------------------------------------
def _root_index(model: Model, new_root) -> int:
    try:
        return model.body_index(new_root)
    except ModelError as exc:
        raise InputError(f"new_root: {exc}") from None


def _check_kind(joint, axis) -> np.ndarray | None:
    if joint not in TOP_JOINTS:
        raise InputError(f"joint must be one of {', '.join(map(repr, TOP_JOINTS))}, "
                         f"got {joint!r}")
    if joint != "revolute":
        if axis is not None:
            raise InputError(f"axis is only used with joint='revolute', not {joint!r}")
        return None
    if axis is None:
        raise InputError("joint='revolute' needs axis= (a 3-vector in world coordinates)")
    w = as_vector(axis, 3, "axis")
    norm = np.linalg.norm(w)
    if norm < 1e-12:
        raise InputError(f"axis must be non-zero, got {axis!r}")
    return w / norm


def _check_velocity(model: Model, v) -> np.ndarray:
    try:
        v = np.array(v, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"v must be a numeric array, got {type(v).__name__}") from None
    if v.shape != (model.nv,):
        raise InputError(f"v must have shape ({model.nv},), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise InputError("v has non-finite entries")
    return v


# --- the operation -------------------------------------------------------------------------
def reroot(
    model: Model,
    q,
    v,
    new_root: int | str,
    point,
    joint: str = "spherical",
    axis=None,
    joint_name: str | None = None,
) -> tuple[Model, np.ndarray, np.ndarray]:
    """Rebuild the tree with ``new_root`` attached to the world at ``point``.

    Parameters
    ----------
    model : Model
    q : (nq,) array_like
        Current configuration.
    v : (nv,) array_like
        Current velocity.
    new_root : int or str
        The body that becomes the top of the tree.
    point : (3,) array_like
        The new pivot on ``new_root``, in world coordinates.
    joint : {"fixed", "revolute", "spherical", "free"}
        Type of the new joint to the world.
    axis : (3,) array_like, optional
        World-frame axis of a ``"revolute"`` top joint (required for it only).
    joint_name : str, optional
        Name of the new top joint (default: the name of the joint it replaces).

    Returns
    -------
    new_model : Model
        The re-rooted tree (same body names, gravity and model name).
    q_new : (new_model.nq,) ndarray
        The same configuration in the new joint coordinates.
    v_new : (new_model.nv,) ndarray
        The same velocity (see the module notes for a non-free top joint).

    Raises
    ------
    InputError
        Unknown body, bad joint type, missing or bad axis, bad point, or a
        ``q`` / ``v`` of the wrong shape.
    ModelError
        A joint on the chain of inversion that cannot be inverted.

    Notes
    -----
    Follows Stępień et al. §6: connectivity (§6.1), bind pose (Eqs. 9–12),
    the new top body (Eqs. 13–18), pivots and inertias (Eqs. 19–20), joint
    states (§6.2.2, Eqs. 21–22) and velocities (§7.1).

    Examples
    --------
    Hang a double pendulum from its tip instead of its first hinge:

    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> q, v = np.array([0.3, -0.2]), np.zeros(2)
    >>> tip = rbd.forward_kinematics(model, q)[1] @ [0, 0, -1, 1]
    >>> new, q2, v2 = rbd.topology.reroot(model, q, v, "link2", tip[:3], "revolute",
    ...                                   axis=[0, 1, 0])
    >>> new.body_names, q2.round(6).tolist()
    (['link2', 'link1'], [0.1, 0.2])
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    k = _root_index(model, new_root)
    w = _check_kind(joint, axis)
    g = as_vector(point, 3, "point")
    chain = chain_of_inversion(model, k)                                # SPW §6.1
    for c in chain[:-1]:
        _check_invertible(model.bodies[c].joint)
    T = forward_kinematics(model, q)                                    # SPW (8)
    q = np.array(q, dtype=float)
    v = _check_velocity(model, v)
    parent = _new_parents(model, chain)                                 # SPW §6.1
    on_chain = set(chain)
    bodies = model.bodies

    # --- bind pose: absolute tree transforms, old and new
    Tb = forward_kinematics(model, neutral(model))                      # SPW (9)
    Rb, pb = Tb[:, :3, :3], Tb[:, :3, 3]
    R_k, p_k = T[k, :3, :3], T[k, :3, 3]
    g_T = pb[k] + Rb[k] @ R_k.T @ (g - p_k)                             # SPW (13)-(16)
    pb_new = pb.copy()
    pb_new[k] = g_T                                                     # SPW (17)
    for j in range(1, len(chain)):
        pb_new[chain[j]] = pb[chain[j - 1]]                             # SPW (10)
    shift = [Rb[i].T @ (pb_new[i] - pb[i]) for i in range(model.nbodies)]  # SPW (19)-(20)

    # --- joints, tree transforms and states of every body in the new tree
    new_joint, X_tree, q_parts, v_parts, names = {}, {}, {}, {}, {}
    for i, body in enumerate(bodies):
        qi, vi = q[model.q_index(i)], v[model.v_index(i)]
        p = parent[i]
        if i == k:
            top, R_G, o_G = _top_joint(joint, w, R_k, Rb[k], g, g_T)
            new_joint[i], X_tree[i] = top, plux(_rotation(R_G.T), o_G)  # SPW (18)
            q_parts[i] = _joint_position(top, R_G.T @ R_k, R_G.T @ (g - o_G))  # SPW (21)-(22)
            names[i] = bodies[chain[-1]].joint_name if joint_name is None else str(joint_name)
            continue
        if i in on_chain:
            c = chain[chain.index(i) - 1]                   # the child whose joint i now uses
            old = bodies[c]
            A = old.X_tree[:3, :3].T
            new_joint[i] = inverted_joint(old.joint, A)                 # SPW Fig. 5
            qc, vc = q[model.q_index(c)], v[model.v_index(c)]
            q_parts[i] = inverted_position(old.joint, qc, A)            # SPW §6.2.2
            v_parts[i] = inverted_velocity(old.joint, qc, vc, A)        # SPW §7.1
            names[i] = old.joint_name
        else:
            new_joint[i], q_parts[i], v_parts[i] = body.joint, qi, vi
            names[i] = body.joint_name
        if i in on_chain:
            E = _rotation(Rb[i].T @ Rb[p])                              # SPW (11)
            X_tree[i] = plux(E, Rb[p].T @ (pb_new[i] - pb_new[p]))      # SPW (12)
        elif p in on_chain:
            E, r = plux_parts(body.X_tree)          # SPW (12) with the bind pose unchanged
            X_tree[i] = plux(E, r - shift[p])
        else:
            X_tree[i] = body.X_tree

    # --- velocity of the new top joint: the root's spatial velocity at the pivot
    J = jacobian(model, q, k, shift[k])
    v_pivot = np.concatenate([R_k.T @ (J[:3] @ v), R_k.T @ (J[3:] @ v)])   # SPW §7.1 (i)-(ii)
    S_top = new_joint[k].S(q_parts[k])
    v_parts[k] = S_top.T @ v_pivot                                      # SPW §7.1 (iii)

    # --- assemble in an order with parents first
    order = _topological_order(parent)
    new_model = Model(gravity=model.gravity, name=model.name)
    index, index_names = {}, set(model.body_names)
    for i in order:
        body = bodies[i]
        inertia = body.inertia
        if i in on_chain:
            inertia = mcI(body.mass, body.com - shift[i], body.I_com)  # SPW (19)-(20)
        index[i] = new_model.add_body(index.get(parent[i], -1), new_joint[i], X_tree[i],
                                      inertia, body.name, names[i])
    for frame in model.frames.values():
        if frame.name in index_names:
            continue
        E, r = plux_parts(frame.X)
        new_model.add_frame(frame.name, index[frame.body], plux(E, r - shift[frame.body]))
    for geom in model.geoms:
        if geom.body is None:
            new_model.add_geom(geom)
            continue
        moved = np.eye(4)
        moved[:3, 3] = -shift[model.body_index(geom.body)]
        new_model.add_geom(geom.replace(pose=moved @ geom.pose))
    q_new = np.concatenate([q_parts[i] for i in order] + [np.zeros(0)])
    v_new = np.concatenate([v_parts[i] for i in order] + [np.zeros(0)])
    return new_model, q_new, v_new
