"""MuJoCo's state conventions: ``qpos``, ``qvel``, ``qacc`` and ``qfrc`` as rbd's ``q``, ``v``,
``a`` and ``τ`` (the table in :mod:`rbd.mjcf`).

The quaternion algebra is :mod:`rbd.interop`'s, which converts the same
quantities given a ``mujoco.MjModel``; these functions need only the rbd
model (as :func:`~rbd.mjcf.load_mjcf` builds it, in MuJoCo's joint order).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..interop import _rotate, _rotate_back, _wxyz, _xyzw
from ..model import Model
from ..spatial import quat_to_rot


def _layout(model: Model):
    """``(kind, q slice, v slice)`` of each joint with degrees of freedom, in ``q`` order."""
    out = []
    for i, body in enumerate(model.bodies):
        kind = body.joint.kind
        if kind == "fixed":
            continue
        if kind not in ("revolute", "prismatic", "spherical", "free"):
            raise InputError(f"joint {body.joint_name!r}: a {kind} joint has no MuJoCo "
                             "equivalent (hinge, slide, ball, free)")
        out.append((kind, model.q_index(i), model.v_index(i)))
    return out


def _array(value, size: int, what: str) -> np.ndarray:
    arr = np.array(value, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise InputError(f"{what} must have shape (..., {size}), got {arr.shape}")
    return arr


def _free_quat(q: np.ndarray, qs: slice) -> np.ndarray:
    return q[..., qs.start + 3:qs.start + 7]


def _halves(x: np.ndarray, vs: slice) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the first and last three entries of a free joint's six."""
    return x[..., vs.start:vs.start + 3].copy(), x[..., vs.start + 3:vs.stop].copy()


def from_mujoco_state(model: Model, qpos, qvel=None, qacc=None):
    """MuJoCo's ``qpos``, ``qvel``, ``qacc`` as rbd's ``q``, ``v``, ``a``.

    Parameters
    ----------
    model : Model
        A model whose joints are revolute, prismatic, spherical, free or fixed
        in MuJoCo's joint order (as :func:`load_mjcf` builds it).
    qpos : (..., nq) array_like
    qvel : (..., nv) array_like, optional
    qacc : (..., nv) array_like, optional
        Needs ``qvel`` (a free joint's linear acceleration picks up ``ω × u``).

    Returns
    -------
    q, v, a : ndarray or None
        ``None`` where the input was not given.

    Notes
    -----
    Per joint (module notes): quaternions ``(w, x, y, z) -> (x, y, z, w)``;
    a free joint's ``[R u; ω] -> [ω; u]`` and ``[R (u̇ + ω × u); ω̇] -> [ω̇; u̇]``.
    """
    layout = _layout(model)
    qpos = _array(qpos, model.nq, "qpos")
    q = qpos.copy()
    for kind, qs, _ in layout:
        if kind == "spherical":
            q[..., qs] = _xyzw(qpos[..., qs])
        elif kind == "free":
            q[..., qs.start + 3:qs.stop] = _xyzw(qpos[..., qs.start + 3:qs.stop])
    v = None if qvel is None else _array(qvel, model.nv, "qvel").copy()
    a = None
    if qacc is not None:
        if qvel is None:
            raise InputError("qacc needs qvel (a free joint's acceleration depends on it)")
        a = _array(qacc, model.nv, "qacc").copy()
    for kind, qs, vs in layout:
        if kind != "free" or v is None:
            continue
        quat, (lin, ang) = _free_quat(q, qs), _halves(v, vs)
        u = _rotate_back(quat, lin)
        v[..., vs] = np.concatenate([ang, u], axis=-1)
        if a is not None:
            lin_a, ang_a = _halves(a, vs)
            udot = _rotate_back(quat, lin_a) - np.cross(ang, u)
            a[..., vs] = np.concatenate([ang_a, udot], axis=-1)
    return q, v, a


def to_mujoco_state(model: Model, q, v=None, a=None):
    """rbd's ``q``, ``v``, ``a`` as MuJoCo's ``qpos``, ``qvel``, ``qacc`` (inverse of
    :func:`from_mujoco_state`; ``a`` needs ``v``)."""
    layout = _layout(model)
    q = _array(q, model.nq, "q")
    qpos = q.copy()
    for kind, qs, _ in layout:
        if kind == "spherical":
            qpos[..., qs] = _wxyz(q[..., qs])
        elif kind == "free":
            qpos[..., qs.start + 3:qs.stop] = _wxyz(q[..., qs.start + 3:qs.stop])
    qvel = None if v is None else _array(v, model.nv, "v").copy()
    qacc = None
    if a is not None:
        if v is None:
            raise InputError("a needs v (a free joint's acceleration depends on it)")
        qacc = _array(a, model.nv, "a").copy()
    for kind, qs, vs in layout:
        if kind != "free" or qvel is None:
            continue
        quat = _free_quat(q, qs)
        omega, u = _halves(qvel, vs)
        qvel[..., vs] = np.concatenate([_rotate(quat, u), omega], axis=-1)
        if qacc is not None:
            wdot, udot = _halves(qacc, vs)
            lin = _rotate(quat, udot + np.cross(omega, u))
            qacc[..., vs] = np.concatenate([lin, wdot], axis=-1)
    return qpos, qvel, qacc


def from_mujoco_force(model: Model, qpos, qfrc) -> np.ndarray:
    """A MuJoCo generalized force (``qfrc_*``, ``ctrl`` mapped to joints) as rbd's ``τ``.

    ``τ = Tᵀ qfrc`` (:func:`mujoco_velocity_map`): a free joint's
    ``[f_world; n_body] -> [n_body; Rᵀ f_world]``; other joints unchanged.
    """
    layout = _layout(model)
    q, _, _ = from_mujoco_state(model, qpos)
    tau = _array(qfrc, model.nv, "qfrc").copy()
    for kind, qs, vs in layout:
        if kind == "free":
            f, n = _halves(tau, vs)
            tau[..., vs] = np.concatenate([n, _rotate_back(_free_quat(q, qs), f)],
                                          axis=-1)
    return tau


def to_mujoco_force(model: Model, q, tau) -> np.ndarray:
    """rbd's ``τ`` as a MuJoCo generalized force (inverse of :func:`from_mujoco_force`)."""
    layout = _layout(model)
    q = _array(q, model.nq, "q")
    qfrc = _array(tau, model.nv, "tau").copy()
    for kind, qs, vs in layout:
        if kind == "free":
            n, f = _halves(qfrc, vs)
            qfrc[..., vs] = np.concatenate([_rotate(_free_quat(q, qs), f), n], axis=-1)
    return qfrc


def mujoco_velocity_map(model: Model, q) -> np.ndarray:
    r"""The matrix ``T`` with ``qvel = T v`` at the configuration ``q`` (rbd's).

    Returns
    -------
    (nv, nv) ndarray
        Identity except for each free joint's block ``[[0, R], [1, 0]]``.
        With it, ``M_rbd = Tᵀ M_mujoco T`` and ``τ = Tᵀ qfrc``.
    """
    q = _array(q, model.nq, "q")
    if q.ndim != 1:
        raise InputError(f"q must have shape ({model.nq},), got {q.shape}")
    T = np.eye(model.nv)
    for kind, qs, vs in _layout(model):
        if kind == "free":
            i = vs.start
            T[i:i + 6, i:i + 6] = 0.0
            T[i:i + 3, i + 3:i + 6] = quat_to_rot(_free_quat(q, qs))
            T[i + 3:i + 6, i:i + 3] = np.eye(3)
    return T
