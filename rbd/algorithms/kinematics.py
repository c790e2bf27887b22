"""Forward kinematics, frame poses, centres of mass, Jacobians and energies.
"""

from __future__ import annotations

import numpy as np

from .._docstrings import shared_doc
from ..errors import InputError, ModelError
from ..model import Model
from ..spatial import plux_parts
from ._dispatch import _array, _symbolic_record, _twin


# --- kinematics and energy ------------------------------------------------------------------
@shared_doc
def kinetic_energy(model: Model, q, v, *, backend: str | None = None):
    """Kinetic energy ``T = ½ vᵀ M(q) v = ½ Σᵢ vᵢᵀ Iᵢ vᵢ`` (body velocities by S&G (8)).

    {parameters_q_v}

    Returns
    -------
    T : float or (N,) ndarray
        Non-negative, zero only at rest (``M`` is positive definite).

    {raises_bad_input}

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> float(rbd.kinetic_energy(model, [0.0, 0.0], [1.0, 0.0]))  # ½ · 1 · M[0, 0] = ½ · 5
    2.5
    """
    return _twin(model, backend).kinetic_energy(q, v)


@shared_doc
def potential_energy(model: Model, q, *, backend: str | None = None):
    """Gravitational potential energy ``U(q) = −Σᵢ mᵢ gᵀ cᵢ``, zero at the world origin.

    Its gradient is :func:`gravity_forces` (``g(q) = ∂U/∂q``, the term ``φ(q)``
    of S&G (17)).

    {parameters_q}

    Returns
    -------
    U : float or (N,) ndarray

    {raises_bad_input}

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> round(float(rbd.potential_energy(model, [0.0, 0.0])), 12)  # masses at z = -1, -2
    -29.43
    """
    return _twin(model, backend).potential_energy(q)


@shared_doc
def forward_kinematics(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """World poses of the body frames as 4×4 matrices, ``(nbodies, 4, 4)``.

    Each pose composes the parent's with the tree and joint transforms,
    ``X_up[i] = X_J(q_i) X_tree[i]`` (S&G (8); :doc:`/conventions` for frames).

    {parameters_q}

    Returns
    -------
    T : (nbodies, 4, 4) or (N, nbodies, 4, 4) ndarray
        ``[[R, p], [0, 1]]``: body ``i``'s axes ``R`` and origin ``p`` in world coordinates.

    {raises_bad_input}

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.forward_kinematics(model, [0.0, 0.0])[:, :3, 3].round(12)  # body origins
    array([[ 0.,  0.,  0.],
           [ 0.,  0., -1.]])
    """
    return _twin(model, backend).forward_kinematics(q)


@shared_doc
def frame_pose(model: Model, q, name, *, backend: str | None = None) -> np.ndarray:
    """World pose ``(4, 4)`` of a body, a link merged into a body, or an attached frame.

    {parameters_model_q}
    name : str or int
        A body name or index, or a frame name (``model.frames``: links merged by a
        fixed joint, frames added with :meth:`Model.add_frame`).
    {backend}

    Returns
    -------
    T : (4, 4) or (N, 4, 4) ndarray
        ``[[R, p], [0, 1]]``: the frame's axes ``R`` and origin ``p`` in world
        coordinates.  With ``X = plux(E, r)`` the frame's transform from its body
        (``r`` its origin in body coordinates), ``R = R_b Eᵀ`` and ``p = p_b + R_b r``.
        The body pose ``(R_b, p_b)`` is that of :func:`forward_kinematics` (S&G (8)).

    Raises
    ------
    InputError
        On an unknown name, or on a bad ``q`` (as :func:`forward_kinematics`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.frame_pose(model, [0.0, 0.0], model.body_names[-1])[:3, 3].round(12)
    array([ 0.,  0., -1.])
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if isinstance(name, str) and name in model._frames:
        frame = model._frames[name]
        index, offset = frame.body, frame.X
    else:
        try:
            index, offset = model.body_index(name), None
        except Exception:
            raise InputError(f"name: no body or frame {name!r} in model {model.name!r} "
                             "(see model.frames)") from None
    T = forward_kinematics(model, q, backend=backend)[..., index, :, :]
    if offset is None:
        return T
    E, r = plux_parts(offset)
    local = np.eye(4)
    local[:3, :3], local[:3, 3] = E.T, r
    return T @ local


@shared_doc
def center_of_mass(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    r"""The system's centre of mass in world coordinates, ``(3,)``.

    :math:`c = \sum_i m_i c_i / \sum_i m_i` over the bodies' centres of mass
    :math:`c_i` (world coordinates, :func:`body_centers_of_mass`; poses by S&G (8)).

    {parameters_q}

    Returns
    -------
    c : (3,) or (N, 3) ndarray

    Raises
    ------
    ModelError
        When the model has no mass (its centre of mass is undefined).
    InputError
        On a bad ``q``.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.center_of_mass(model, [0.0, 0.0]).round(6).tolist()
    [0.0, 0.0, -1.5]
    """
    if isinstance(model, Model) and model.total_mass <= 0.0:
        raise ModelError(f"{model.name}: the model has no mass, so no centre of mass")
    return _twin(model, backend).center_of_mass(q)


@shared_doc
def body_centers_of_mass(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Each body's centre of mass in world coordinates, ``(nbodies, 3)``.

    ``cᵢ = pᵢ + Rᵢ c_local,i`` with the poses of :func:`forward_kinematics` (S&G (8)).

    {parameters_q}

    Returns
    -------
    C : (nbodies, 3) or (N, nbodies, 3) ndarray

    {raises_bad_input}

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.body_centers_of_mass(model, [0.0, 0.0]).round(12)  # point masses at the tips
    array([[ 0.,  0., -1.],
           [ 0.,  0., -2.]])
    """
    return _twin(model, backend).body_centers_of_mass(q)


def _point(point) -> np.ndarray:
    if point is None:
        return np.zeros(3)
    p = _array(point, "point")
    if p.shape != (3,):
        raise InputError(f"point must have shape (3,), got {p.shape}")
    return p


@shared_doc
def jacobian(model: Model, q, body, point=None, *, backend: str | None = None) -> np.ndarray:
    """Jacobian ``(6, nv)`` of a point on ``body``: world-aligned ``[ω; v]`` at the point.

    Column ``j`` is joint ``j``'s motion subspace ``S_j`` carried to the world
    and shifted to the point, for the joints on the path to the root
    (``v_body = Σ_j X S_j q̇_j``, S&G (8) unrolled; L&J (61) inverts it).

    {parameters_model_q}
    body : int or str
        A body index or a body/frame name.
    point : (3,) array_like, optional
        The point in the body's (or frame's) coordinates; default its origin.
    {backend}

    Returns
    -------
    J : (6, nv) or (N, 6, nv) ndarray

    Raises
    ------
    InputError
        On an unknown body, a point of the wrong shape, or bad ``q``.

    Notes
    -----
    With mimic joints, ``J = J_full G`` (:mod:`rbd.model.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()   # joints about y, hanging along -z
    >>> rbd.jacobian(model, [0.0, 0.0], 1, point=[0.0, 0.0, -0.5]).round(12)
    array([[ 0. ,  0. ],
           [ 1. ,  1. ],
           [ 0. ,  0. ],
           [-1.5, -0.5],
           [ 0. ,  0. ],
           [ 0. ,  0. ]])
    """
    if not isinstance(model, Model) and not _symbolic_record(model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    try:
        index = model.body_index(body)
    except Exception as exc:
        raise InputError(f"body: {exc}") from None
    local = _point(point)
    if isinstance(body, str) and body in model._frames:
        # a point given in a frame's coordinates, moved to its body's coordinates
        E, r = plux_parts(model._frames[body].X)
        local = r + E.T @ local
    return _twin(model, backend).jacobian(q, index, local)


def geom_poses(model, q, *, backend: str | None = None, body_poses=None) -> np.ndarray:
    r"""World poses of the model's geoms, ``(ngeoms, 4, 4)``, in ``model.geoms`` order.

    A geom on body ``i`` is at :math:`T_i(q)\,P` with :math:`T_i` the body's
    world pose (:func:`rbd.forward_kinematics`) and :math:`P` its ``pose``;
    a world geom is at :math:`P`.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    backend : str, optional
        As for :func:`rbd.forward_kinematics`.
    body_poses : (..., nbodies, 4, 4) array_like, optional
        :func:`rbd.forward_kinematics` at ``q``, when the caller has it already.

    Returns
    -------
    (ngeoms, 4, 4) or (N, ngeoms, 4, 4) ndarray

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> model.add_geom("bob", "link2", "sphere", [0.1], (np.eye(3), [0, 0, -1]))
    0
    >>> rbd.geom_poses(model, [0.0, 0.0])[0, :3, 3].round(12)
    array([ 0.,  0., -2.])
    """
    T = (forward_kinematics(model, q, backend=backend) if body_poses is None
         else np.asarray(body_poses, dtype=float))
    geoms = model.geoms
    world = np.eye(4)
    index = [-1 if g.body is None else model.body_index(g.body) for g in geoms]
    pose = np.array([g.pose for g in geoms]).reshape(len(geoms), 4, 4)
    base = np.concatenate([np.broadcast_to(world, (*T.shape[:-3], 1, 4, 4)), T], axis=-3)
    return base[..., np.array(index, dtype=int) + 1, :, :] @ pose
