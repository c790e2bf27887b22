r"""Converters between rbd's conventions and Pinocchio's and MuJoCo's.

The three libraries describe the same robot with different coordinates.  A
:class:`JointMap` pairs the joints of an rbd :class:`~rbd.model.Model` with
the joints of a peer model *by name* (never by position) and converts
configurations, velocities, accelerations and generalized forces both ways.
Neither peer is imported here: the functions read the attributes of the peer
model they are given.

Conventions
-----------
===================  =====================  ====================  =====================
\                     rbd                    Pinocchio             MuJoCo
===================  =====================  ====================  =====================
joint order          build order, parents   depth-first           file order
                     first
quaternion in ``q``  ``(x, y, z, w)``       ``(x, y, z, w)``      ``(w, x, y, z)``
continuous joint     ``θ`` (nq = 1)         ``(cos θ, sin θ)``    ``θ`` (hinge)
free-joint ``v``     ``[ω; v]``, body       ``[v; ω]``, body      ``[ṗ world; ω body]``
free-joint ``q``     ``[p; quat]``          ``[p; quat]``         ``[p; quat]``, world
===================  =====================  ====================  =====================

Accelerations are the time derivatives of the velocity coordinates, and
generalized forces are their duals (``τᵀ v`` is the power in every
convention), so both map like velocities.  For Pinocchio every map of
``v``, ``a`` and ``τ`` is one permutation (:func:`pinocchio_permutation`).
For a MuJoCo free joint with body orientation ``R`` (world from body),

.. math::

    \dot p = R\, v_b, \qquad
    \ddot p = R\,(\dot v_b + \omega_b \times v_b), \qquad
    f_\mathrm{world} = R\, f_b ,

where ``v_b`` is the body-frame velocity of the body origin (rbd's linear
part), so MuJoCo's accelerations depend on the velocity as well.

Assumptions: the peer model describes the same bodies, inertias and joint
placements; each MuJoCo joint sits at its body's origin with ``ref = 0``
(the zero of rbd's joint angle); MuJoCo free joints belong to bodies whose
parent is the world.

Examples
--------
With a Pinocchio model built from the same URDF (``pin`` installed)::

    import pinocchio as pin
    from rbd import interop

    model = rbd.load_urdf(path, floating_base=True)
    pin_model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    joint_map = interop.pinocchio_map(model, pin_model)
    q_pin, v_pin = joint_map.to_q(q), joint_map.to_v(q, v)
    tau = joint_map.from_tau(q_pin, pin.rnea(pin_model, pin_model.createData(),
                                             q_pin, v_pin, joint_map.to_a(q, v, a)))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import as_vector
from .errors import InputError, ModelError
from .model import Model
from .spatial import plux_parts, rot_to_quat

__all__ = [
    "JointMap",
    "pinocchio_map",
    "mujoco_map",
    "pinocchio_permutation",
    "to_pinocchio_q",
    "from_pinocchio_q",
    "to_pinocchio_v",
    "from_pinocchio_v",
    "to_pinocchio_a",
    "from_pinocchio_a",
    "to_pinocchio_tau",
    "from_pinocchio_tau",
    "to_mujoco_qpos",
    "from_mujoco_qpos",
    "to_mujoco_qvel",
    "from_mujoco_qvel",
    "to_mujoco_qacc",
    "from_mujoco_qacc",
    "to_mujoco_qfrc",
    "from_mujoco_qfrc",
]

#: Order of the free joint's velocity in Pinocchio, ``[v; ω]``, as indices into rbd's ``[ω; v]``.
PIN_FREE_ORDER = np.array([3, 4, 5, 0, 1, 2])

# MuJoCo's joint type codes (mjtJoint) and the rbd joint kind each one mirrors.
_MJ_TYPES = {0: "free", 1: "spherical", 2: "prismatic", 3: "revolute"}


# --- vectorized quaternion algebra on the last axis ((x, y, z, w), scalar last) ---------------
def _rotate(quat: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``R(quat) x`` = ``x + 2w (u × x) + 2 u × (u × x)`` with ``quat = (u, w)``."""
    u, w = quat[..., :3], quat[..., 3:4]
    t = 2.0 * np.cross(u, x)
    return x + w * t + np.cross(u, t)


def _rotate_back(quat: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``R(quat)ᵀ x`` (rotation by the conjugate quaternion)."""
    return _rotate(np.concatenate([-quat[..., :3], quat[..., 3:4]], axis=-1), x)


def _quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b``: ``(a_w b_u + b_w a_u + a_u × b_u, a_w b_w − a_u·b_u)``."""
    au, aw = a[..., :3], a[..., 3:4]
    bu, bw = b[..., :3], b[..., 3:4]
    u = aw * bu + bw * au + np.cross(au, bu)
    w = aw * bw - np.sum(au * bu, axis=-1, keepdims=True)
    return np.concatenate([u, w], axis=-1)


def _wxyz(quat: np.ndarray) -> np.ndarray:
    return np.concatenate([quat[..., 3:4], quat[..., :3]], axis=-1)


def _xyzw(quat: np.ndarray) -> np.ndarray:
    return np.concatenate([quat[..., 1:4], quat[..., 0:1]], axis=-1)


# --- the map ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Block:
    """One joint: its coordinates in rbd (``q``, ``v``) and in the peer (``pq``, ``pv``)."""

    name: str
    rule: str            # "same", "continuous", "pin_free", "mj_ball", "mj_free"
    q: slice
    v: slice
    pq: slice
    pv: slice
    tree_quat: np.ndarray | None = None   # mj_free: orientation of X_tree (world from tree)
    tree_r: np.ndarray | None = None      # mj_free: origin of X_tree in the world


class JointMap:
    """Coordinates of one robot in rbd and in a peer library, paired by joint name.

    Build one with :func:`pinocchio_map` or :func:`mujoco_map` and reuse it;
    the module-level functions build a map on every call.  Every method
    accepts a leading batch axis (``q`` of shape ``(N, nq)``) and returns new
    arrays.  Conversions *to* the peer take rbd's configuration, conversions
    *from* the peer take the peer's.

    Attributes
    ----------
    peer : str
        ``"pinocchio"`` or ``"mujoco"``.
    nq, nv : int
        Sizes of rbd's ``q`` and ``v``.
    peer_nq, peer_nv : int
        Sizes of the peer's configuration and velocity vectors.
    """

    def __init__(self, peer: str, model: Model, blocks: list[_Block], peer_nq: int,
                 peer_nv: int):
        self.peer = peer
        self.nq, self.nv = model.nq, model.nv
        self.peer_nq, self.peer_nv = int(peer_nq), int(peer_nv)
        self._blocks = tuple(blocks)

    def __repr__(self) -> str:
        return (f"<JointMap rbd (nq={self.nq}, nv={self.nv}) <-> {self.peer} "
                f"(nq={self.peer_nq}, nv={self.peer_nv}), {len(self._blocks)} joints>")

    # --- configurations ----------------------------------------------------------------
    def to_q(self, q) -> np.ndarray:
        """rbd ``q`` → the peer's configuration (Pinocchio ``q``, MuJoCo ``qpos``)."""
        q = as_vector(q, self.nq, "q", batch=True)
        out = np.zeros(q.shape[:-1] + (self.peer_nq,))
        for b in self._blocks:
            qi = q[..., b.q]
            if b.rule == "continuous":
                out[..., b.pq] = np.stack([np.cos(qi[..., 0]), np.sin(qi[..., 0])], axis=-1)
            elif b.rule == "mj_ball":
                out[..., b.pq] = _wxyz(qi)
            elif b.rule == "mj_free":
                quat = _quat_multiply(np.broadcast_to(b.tree_quat, qi[..., 3:].shape), qi[..., 3:])
                out[..., b.pq] = np.concatenate(
                    [b.tree_r + _rotate(b.tree_quat, qi[..., :3]), _wxyz(quat)], axis=-1)
            else:
                out[..., b.pq] = qi
        return out

    def from_q(self, peer_q) -> np.ndarray:
        """The peer's configuration → rbd ``q`` (a continuous joint's angle in (−π, π])."""
        peer_q = as_vector(peer_q, self.peer_nq, "peer configuration", batch=True)
        out = np.zeros(peer_q.shape[:-1] + (self.nq,))
        for b in self._blocks:
            pi = peer_q[..., b.pq]
            if b.rule == "continuous":
                out[..., b.q] = np.arctan2(pi[..., 1], pi[..., 0])[..., None]
            elif b.rule == "mj_ball":
                out[..., b.q] = _xyzw(pi)
            elif b.rule == "mj_free":
                conj = np.concatenate([-b.tree_quat[:3], b.tree_quat[3:]])
                quat = _quat_multiply(np.broadcast_to(conj, pi[..., 3:].shape), _xyzw(pi[..., 3:]))
                out[..., b.q] = np.concatenate(
                    [_rotate(conj, pi[..., :3] - b.tree_r), quat], axis=-1)
            else:
                out[..., b.q] = pi
        return out

    # --- velocities, accelerations, forces ---------------------------------------------
    def to_v(self, q, v) -> np.ndarray:
        """rbd ``v`` (at rbd's ``q``) → the peer's velocity."""
        v = as_vector(v, self.nv, "v", batch=True)
        return self._velocity_like(self._world_quats(q, v.shape[:-1]), v, to_peer=True)

    def from_v(self, peer_q, peer_v) -> np.ndarray:
        """The peer's velocity (at the peer's configuration) → rbd ``v``."""
        peer_v = as_vector(peer_v, self.peer_nv, "peer velocity", batch=True)
        quats = self._peer_world_quats(peer_q, peer_v.shape[:-1])
        return self._velocity_like(quats, peer_v, to_peer=False)

    def to_tau(self, q, tau) -> np.ndarray:
        """rbd generalized forces (at rbd's ``q``) → the peer's (MuJoCo ``qfrc_*``)."""
        tau = as_vector(tau, self.nv, "tau", batch=True)
        return self._velocity_like(self._world_quats(q, tau.shape[:-1]), tau, to_peer=True)

    def from_tau(self, peer_q, peer_tau) -> np.ndarray:
        """The peer's generalized forces (at the peer's configuration) → rbd ``tau``."""
        peer_tau = as_vector(peer_tau, self.peer_nv, "peer generalized force", batch=True)
        quats = self._peer_world_quats(peer_q, peer_tau.shape[:-1])
        return self._velocity_like(quats, peer_tau, to_peer=False)

    def to_a(self, q, v, a) -> np.ndarray:
        """rbd ``a = v̇`` (at rbd's ``q``, ``v``) → the peer's acceleration.

        For a MuJoCo free joint the linear part gains ``R (ω × v_b)``: the
        derivative of ``ṗ = R v_b`` is ``R (v̇_b + ω × v_b)``.
        """
        a = as_vector(a, self.nv, "a", batch=True)
        quats = self._world_quats(q, a.shape[:-1])
        out = self._velocity_like(quats, a, to_peer=True)
        if quats:
            v = as_vector(v, self.nv, "v", batch=True)
            for b in self._blocks:
                if b.rule == "mj_free":
                    w, vb = v[..., b.v][..., :3], v[..., b.v][..., 3:]
                    out[..., b.pv.start:b.pv.start + 3] += _rotate(quats[b.name],
                                                                   np.cross(w, vb))
        return out

    def from_a(self, peer_q, peer_v, peer_a) -> np.ndarray:
        """The peer's acceleration (at its ``q``, ``v``) → rbd ``a = v̇``."""
        peer_a = as_vector(peer_a, self.peer_nv, "peer acceleration", batch=True)
        quats = self._peer_world_quats(peer_q, peer_a.shape[:-1])
        out = self._velocity_like(quats, peer_a, to_peer=False)
        if quats:
            peer_v = as_vector(peer_v, self.peer_nv, "peer velocity", batch=True)
            v = self._velocity_like(quats, peer_v, to_peer=False)
            for b in self._blocks:
                if b.rule == "mj_free":
                    w, vb = v[..., b.v][..., :3], v[..., b.v][..., 3:]
                    out[..., b.v.start + 3:b.v.stop] -= np.cross(w, vb)
        return out

    @property
    def permutation(self) -> np.ndarray:
        """``perm`` with ``peer_v = v[..., perm]`` (Pinocchio only: a pure permutation)."""
        if any(b.rule == "mj_free" for b in self._blocks):
            raise ModelError("a MuJoCo free joint's velocity depends on the configuration: "
                             "use JointMap.to_v / from_v")
        perm = np.zeros(self.nv, dtype=np.intp)
        for b in self._blocks:
            idx = np.arange(b.v.start, b.v.stop)
            perm[b.pv] = idx[PIN_FREE_ORDER] if b.rule == "pin_free" else idx
        return perm

    # --- helpers -------------------------------------------------------------------------
    def _world_quats(self, q, batch: tuple) -> dict[str, np.ndarray]:
        """World orientation of each MuJoCo free body, from rbd's ``q``."""
        if not any(b.rule == "mj_free" for b in self._blocks):
            return {}
        q = as_vector(q, self.nq, "q", batch=True)
        quats = {}
        for b in self._blocks:
            if b.rule == "mj_free":
                qj = np.broadcast_to(q[..., b.q][..., 3:], batch + (4,))
                quats[b.name] = _quat_multiply(np.broadcast_to(b.tree_quat, qj.shape), qj)
        return quats

    def _peer_world_quats(self, peer_q, batch: tuple) -> dict[str, np.ndarray]:
        """World orientation of each MuJoCo free body, from ``qpos``."""
        if not any(b.rule == "mj_free" for b in self._blocks):
            return {}
        peer_q = as_vector(peer_q, self.peer_nq, "peer configuration", batch=True)
        return {b.name: np.broadcast_to(_xyzw(peer_q[..., b.pq][..., 3:]), batch + (4,))
                for b in self._blocks if b.rule == "mj_free"}

    def _velocity_like(self, quats: dict, x: np.ndarray, to_peer: bool) -> np.ndarray:
        """Map a velocity, acceleration (without the MuJoCo free-joint term) or force."""
        out = np.zeros(x.shape[:-1] + ((self.peer_nv if to_peer else self.nv),))
        for b in self._blocks:
            src, dst = (b.v, b.pv) if to_peer else (b.pv, b.v)
            xi = x[..., src]
            if b.rule == "pin_free":
                out[..., dst] = xi[..., PIN_FREE_ORDER]      # the swap is its own inverse
            elif b.rule == "mj_free" and to_peer:             # [ω; v_b] -> [R v_b; ω]
                out[..., dst] = np.concatenate([_rotate(quats[b.name], xi[..., 3:]),
                                                xi[..., :3]], axis=-1)
            elif b.rule == "mj_free":                         # [ṗ; ω] -> [ω; Rᵀ ṗ]
                out[..., dst] = np.concatenate([xi[..., 3:],
                                                _rotate_back(quats[b.name], xi[..., :3])],
                                               axis=-1)
            else:
                out[..., dst] = xi
        return out


# --- building maps ------------------------------------------------------------------------------
def _rbd_joints(model: Model) -> dict[str, int]:
    """Joint name → body index, for the joints that have degrees of freedom."""
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model.mimic:
        raise ModelError("the model has mimic joints, whose coordinates follow others; map "
                         "model.full_model() (every joint independent) instead")
    return {b.joint_name: i for i, b in enumerate(model.bodies) if b.joint.nv > 0}


def _check_names(ours: dict, theirs: dict, peer: str) -> None:
    missing = [n for n in ours if n not in theirs]
    extra = [n for n in theirs if n not in ours]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"rbd joints without a {peer} joint of the same name: {missing}")
        if extra:
            parts.append(f"{peer} joints without an rbd joint of the same name: {extra}")
        raise ModelError("; ".join(parts) + ". The two models must name their moving joints "
                         "alike (a URDF's names are kept by both readers).")


def _sizes_mismatch(name: str, kind: str, nq: int, nv: int, peer: str, pnq: int,
                    pnv: int) -> ModelError:
    return ModelError(f"joint {name!r}: rbd {kind} joint (nq={nq}, nv={nv}) has no known "
                      f"counterpart in the {peer} joint (nq={pnq}, nv={pnv})")


def pinocchio_map(model: Model, pin_model) -> JointMap:
    """The :class:`JointMap` between ``model`` and a ``pinocchio.Model`` of the same robot.

    Parameters
    ----------
    model : rbd.Model
    pin_model : pinocchio.Model
        Joints named like rbd's joints with degrees of freedom (``universe``
        excluded); rbd bodies on fixed joints have no Pinocchio joint.

    Raises
    ------
    ModelError
        When the joint names differ, or a joint pair has no known conversion
        (rbd planar joints: Pinocchio stores ``(x, y, cos θ, sin θ)`` with a
        body-frame velocity).
    """
    joints = _rbd_joints(model)
    try:
        names = [str(n) for n in pin_model.names]
        theirs = {names[j]: j for j in range(1, pin_model.njoints)}
    except AttributeError:
        raise InputError("pin_model must be a pinocchio.Model, got "
                         f"{type(pin_model).__name__}") from None
    _check_names(joints, theirs, "Pinocchio")
    blocks = []
    for name, i in joints.items():
        body, j = model.bodies[i], theirs[name]
        joint = body.joint
        pq0, pnq = int(pin_model.idx_qs[j]), int(pin_model.nqs[j])
        pv0, pnv = int(pin_model.idx_vs[j]), int(pin_model.nvs[j])
        if joint.kind == "free" and (pnq, pnv) == (7, 6):
            rule = "pin_free"
        elif joint.kind == "revolute" and (pnq, pnv) == (2, 1):
            rule = "continuous"
        elif joint.kind != "planar" and (pnq, pnv) == (joint.nq, joint.nv):
            rule = "same"
        else:
            raise _sizes_mismatch(name, joint.kind, joint.nq, joint.nv, "Pinocchio", pnq, pnv)
        blocks.append(_Block(name, rule, model.q_index(i), model.v_index(i),
                             slice(pq0, pq0 + pnq), slice(pv0, pv0 + pnv)))
    return JointMap("pinocchio", model, blocks, pin_model.nq, pin_model.nv)


def mujoco_map(model: Model, mj_model) -> JointMap:
    """The :class:`JointMap` between ``model`` and a ``mujoco.MjModel`` of the same robot.

    Parameters
    ----------
    model : rbd.Model
    mj_model : mujoco.MjModel
        Joints named like rbd's joints with degrees of freedom: ``hinge`` ↔
        revolute, ``slide`` ↔ prismatic, ``ball`` ↔ spherical, ``free`` ↔ free.
        An unnamed MuJoCo joint pairs by its place in the tree: the ``k``-th
        joint of body ``b`` is ``"<b>_joint<k>"``, the name
        :func:`rbd.load_mjcf` gives it.

    Raises
    ------
    ModelError
        When the joint names differ, a joint pair has different types, or an
        rbd free joint's body has a parent (MuJoCo's free joints hang from the
        world).
    """
    joints = _rbd_joints(model)
    try:
        theirs = {_mujoco_joint_name(mj_model, j): j for j in range(mj_model.njnt)}
    except AttributeError:
        raise InputError("mj_model must be a mujoco.MjModel, got "
                         f"{type(mj_model).__name__}") from None
    _check_names(joints, theirs, "MuJoCo")
    blocks = [_mujoco_block(model, i, mj_model, theirs[name]) for name, i in joints.items()]
    return JointMap("mujoco", model, blocks, mj_model.nq, mj_model.nv)


def _mujoco_joint_name(mj_model, j: int) -> str:
    """MuJoCo joint ``j``'s name; an unnamed joint is named by its place in the tree as
    :func:`rbd.load_mjcf` names it: ``"<body>_joint<k>"``, the ``k``-th joint of its body
    (an unnamed body being ``"body<id>"``)."""
    name = mj_model.joint(j).name
    if name:
        return name
    b = int(mj_model.jnt_bodyid[j])
    body = mj_model.body(b).name or f"body{b}"
    return f"{body}_joint{j - int(mj_model.body_jntadr[b])}"


def _mujoco_block(model: Model, i: int, mj_model, j: int) -> _Block:
    body = model.bodies[i]
    kind = _MJ_TYPES.get(int(mj_model.jnt_type[j]), "unknown")
    pq0, pv0 = int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j])
    if kind != body.joint.kind:
        raise ModelError(f"joint {body.joint_name!r}: rbd {body.joint.kind} joint, MuJoCo "
                         f"joint of type {int(mj_model.jnt_type[j])} ({kind}); MuJoCo mirrors "
                         "revolute (hinge), prismatic (slide), spherical (ball) and free joints")
    pq, pv = slice(pq0, pq0 + body.joint.nq), slice(pv0, pv0 + body.joint.nv)
    q, v = model.q_index(i), model.v_index(i)
    if kind == "spherical":
        return _Block(body.joint_name, "mj_ball", q, v, pq, pv)
    if kind != "free":
        return _Block(body.joint_name, "same", q, v, pq, pv)
    if body.parent != -1:
        raise ModelError(f"joint {body.joint_name!r}: a MuJoCo free joint belongs to a child "
                         f"of the world, but body {body.name!r} has a parent")
    E, r = plux_parts(body.X_tree)
    return _Block(body.joint_name, "mj_free", q, v, pq, pv,
                  tree_quat=rot_to_quat(E.T), tree_r=np.array(r, dtype=float))


def pinocchio_permutation(model: Model, pin_model) -> np.ndarray:
    """Indices ``perm`` with ``v_pin = v[perm]`` for velocities, accelerations and forces.

    The inverse is ``v = v_pin[np.argsort(perm)]``, and a joint-space matrix
    maps as ``M = M_pin[np.ix_(inv, inv)]`` with ``inv = np.argsort(perm)``.
    """
    return pinocchio_map(model, pin_model).permutation


# --- one-call converters ------------------------------------------------------------------------
def to_pinocchio_q(model: Model, pin_model, q) -> np.ndarray:
    """rbd ``q`` → Pinocchio ``q`` (continuous joints become ``(cos θ, sin θ)``)."""
    return pinocchio_map(model, pin_model).to_q(q)


def from_pinocchio_q(model: Model, pin_model, q_pin) -> np.ndarray:
    """Pinocchio ``q`` → rbd ``q`` (continuous joints: ``θ = atan2(sin, cos)``)."""
    return pinocchio_map(model, pin_model).from_q(q_pin)


def to_pinocchio_v(model: Model, pin_model, v) -> np.ndarray:
    """rbd ``v`` → Pinocchio ``v`` (free joints ``[ω; v]`` → ``[v; ω]``, both body frame)."""
    return pinocchio_map(model, pin_model).to_v(None, v)


def from_pinocchio_v(model: Model, pin_model, v_pin) -> np.ndarray:
    """Pinocchio ``v`` → rbd ``v``."""
    return pinocchio_map(model, pin_model).from_v(None, v_pin)


def to_pinocchio_a(model: Model, pin_model, a) -> np.ndarray:
    """rbd ``a`` → Pinocchio ``a`` (the same permutation as velocities)."""
    return pinocchio_map(model, pin_model).to_a(None, None, a)


def from_pinocchio_a(model: Model, pin_model, a_pin) -> np.ndarray:
    """Pinocchio ``a`` → rbd ``a``."""
    return pinocchio_map(model, pin_model).from_a(None, None, a_pin)


def to_pinocchio_tau(model: Model, pin_model, tau) -> np.ndarray:
    """rbd ``tau`` → Pinocchio ``tau`` (free joints ``[n; f]`` → ``[f; n]``)."""
    return pinocchio_map(model, pin_model).to_tau(None, tau)


def from_pinocchio_tau(model: Model, pin_model, tau_pin) -> np.ndarray:
    """Pinocchio ``tau`` → rbd ``tau``."""
    return pinocchio_map(model, pin_model).from_tau(None, tau_pin)


def to_mujoco_qpos(model: Model, mj_model, q) -> np.ndarray:
    """rbd ``q`` → MuJoCo ``qpos`` (quaternions ``(w, x, y, z)``; free bodies in the world)."""
    return mujoco_map(model, mj_model).to_q(q)


def from_mujoco_qpos(model: Model, mj_model, qpos) -> np.ndarray:
    """MuJoCo ``qpos`` → rbd ``q``."""
    return mujoco_map(model, mj_model).from_q(qpos)


def to_mujoco_qvel(model: Model, mj_model, q, v) -> np.ndarray:
    """rbd ``v`` at rbd's ``q`` → MuJoCo ``qvel`` (free joints ``[ṗ world; ω body]``)."""
    return mujoco_map(model, mj_model).to_v(q, v)


def from_mujoco_qvel(model: Model, mj_model, qpos, qvel) -> np.ndarray:
    """MuJoCo ``qvel`` at ``qpos`` → rbd ``v``."""
    return mujoco_map(model, mj_model).from_v(qpos, qvel)


def to_mujoco_qacc(model: Model, mj_model, q, v, a) -> np.ndarray:
    """rbd ``a`` at rbd's ``(q, v)`` → MuJoCo ``qacc`` (see :meth:`JointMap.to_a`)."""
    return mujoco_map(model, mj_model).to_a(q, v, a)


def from_mujoco_qacc(model: Model, mj_model, qpos, qvel, qacc) -> np.ndarray:
    """MuJoCo ``qacc`` at ``(qpos, qvel)`` → rbd ``a``."""
    return mujoco_map(model, mj_model).from_a(qpos, qvel, qacc)


def to_mujoco_qfrc(model: Model, mj_model, q, tau) -> np.ndarray:
    """rbd ``tau`` at rbd's ``q`` → MuJoCo generalized force (free joints ``[f world; n body]``)."""
    return mujoco_map(model, mj_model).to_tau(q, tau)


def from_mujoco_qfrc(model: Model, mj_model, qpos, qfrc) -> np.ndarray:
    """MuJoCo generalized force (``qfrc_bias``, ``qfrc_inverse``, ...) at ``qpos`` → rbd ``tau``."""
    return mujoco_map(model, mj_model).from_tau(qpos, qfrc)
