"""Configurations: integration on the joint manifolds, the neutral and random configurations.
"""

from __future__ import annotations

import numpy as np

from .._docstrings import shared_doc
from .._validation import as_time_step
from ..errors import InputError
from ..model import Model
from ..reference import kinematics as _kin
from ._dispatch import _twin


@shared_doc
def integrate(model: Model, q, v, dt: float = 1.0, *, backend: str | None = None) -> np.ndarray:
    """Configuration reached from ``q`` moving with constant velocity ``v`` for ``dt``.

    Each joint moves on its own manifold: angles and offsets add ``v dt``;
    quaternion joints move on the unit sphere, ``q ⊗ exp(ω dt)`` (the
    exponential map of S&G (1)); never use ``q + dt*v``.

    {parameters_model_q}
    v : (nv,) or (N, nv) array_like
    dt : float
    {backend}

    Returns
    -------
    q_next : (nq,) or (N, nq) ndarray

    Raises
    ------
    InputError
        On a non-finite ``dt``, or on bad ``q``, ``v`` (as :func:`rnea`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.integrate(model, [0.0, 0.0], [1.0, 2.0], 0.1)
    array([0.1, 0.2])
    """
    dt = as_time_step(dt)
    return _twin(model, backend).integrate(q, v, dt)


def _of_tree(model: Model, configuration) -> np.ndarray:
    """``configuration(model)``; with mimic joints, the independent coordinates of the full tree's.

    Each independent coordinate of the full tree's configuration lies within its own
    limits, so the projection keeps the limits (and the neutral values) of ``model``.
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:
        return configuration(model._full_tree())[model.coupling().q_keep]
    return configuration(model)


@shared_doc
def neutral(model: Model) -> np.ndarray:
    """The neutral configuration (zero angles and offsets, identity quaternions).

    The configuration where every joint transform is the identity,
    ``X_J(q) = 1`` (S&G (8) then reduces to the tree transforms).

    Parameters
    ----------
    model : Model

    Returns
    -------
    q : (nq,) ndarray

    {raises_not_a_model}

    Examples
    --------
    >>> import rbd
    >>> rbd.neutral(rbd.models.double_pendulum())
    array([0., 0.])
    """
    return _of_tree(model, _kin.neutral)


@shared_doc
def random_configuration(model: Model, rng=None) -> np.ndarray:
    """A random configuration within ``model.lower`` / ``model.upper``.

    A coordinate with both limits finite is uniform between them; one with a
    single finite limit is the joint's own random draw clipped to it;
    quaternions stay unit quaternions (uniform rotations, the group of S&G (1)).

    Parameters
    ----------
    model : Model
    rng : numpy.random.Generator or int, optional
        A NumPy Generator or a seed.

    Returns
    -------
    q : (nq,) ndarray
        Within the limits; each quaternion of unit norm.

    {raises_not_a_model}

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> q = rbd.random_configuration(model, 0)
    >>> q.shape, bool(((q >= model.lower) & (q <= model.upper)).all())
    ((2,), True)
    """
    generator = np.random.default_rng(rng)
    return _of_tree(model, lambda tree: _kin.random_configuration(tree, generator))
