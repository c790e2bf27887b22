"""Every term of one state at once: :func:`compute_all` runs the stage pipeline into a ``Data``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._docstrings import shared_doc
from ..data import Data
from ..errors import InputError, ModelError
from ..model import Model
from ._dispatch import _kernel, _symbolic_record, _validate

_run_stages = None       # rbd._kernels.stages.compute_all, imported on the first kernel call
_compiled_type = None    # rbd._kernels._model.CompiledModel


def _compiled_stages():
    global _run_stages, _compiled_type
    from .._kernels._model import CompiledModel
    from .._kernels.stages import compute_all as run

    _run_stages, _compiled_type = run, CompiledModel
    return run


@shared_doc
def compute_all(model: Model, q, v, data: Data | None = None, frames: Sequence = (), *,
                tau=None, backend: str | None = None) -> Data:
    """``M``, its factor, ``h``, ``g``, world poses and frame Jacobians at ``(q, v)``, in ``data``.

    One position and one velocity pass, then the composite inertias and ``M``
    (armature included), the factor of ``M``, the bias forces ``h = C v + g`` and
    gravity ``g``, and the Jacobians of the named frames: the stages of
    :mod:`rbd.reference.stages` (and their compiled twins) in MuJoCo's order, as
    Pinocchio's ``computeAllTerms``.  With ``tau``, also ``q̈ = M⁻¹ (tau − h)``
    from the factor.

    {parameters_model_q}
    v : (nv,) or (N, nv) array_like
    data : Data, optional
        The workspace to fill, made by ``rbd.Data(model)`` (``rbd.Data(model, batch=N)``
        for a batch); a new one when None.  Reused, it is overwritten in place.
    frames : sequence of str or int
        Bodies, merged links or frames (names as :func:`jacobian` and
        :func:`frame_pose` take them) whose Jacobians go to ``data.jacobians``.
    tau : (nv,) or (N, nv) array_like, optional
        Joint forces: ``data.qdd`` receives the accelerations they produce.
    {backend}

    Returns
    -------
    data : Data
        ``data.M`` (nv, nv), ``data.h``, ``data.g`` (nv,), ``data.L`` and
        ``data.factor_kind`` (``M = Lᵀ L`` with the tree's sparsity, or ``L Lᵀ``),
        ``data.poses`` (nbodies, 4, 4) as :func:`forward_kinematics`, ``data.C`` as
        :func:`body_centers_of_mass`, ``data.jacobians[name]`` (6, nv) as
        ``jacobian(model, q, name)``, ``data.qdd`` with ``tau``; a leading ``N`` axis
        on each for a batch.

    Raises
    ------
    InputError
        On a bad array (as :func:`rnea`), an unknown frame, a ``data`` made for
        another model (or another batch size, or holding symbols on the kernel path).
    ModelError
        When ``M`` is not positive definite.

    Notes
    -----
    With mimic joints the stages run on the full tree and the terms are projected
    onto the independent coordinates (``M = Gᵀ M_full G``, ``h = Gᵀ h_full``,
    ``g = Gᵀ g_full``, ``J = J_full G``, :mod:`rbd.model.coupling`); ``M`` is then
    factored densely, and of the per-body fields only the world poses and the
    centres of mass are filled.

    On symbols (``backend="reference"``) the factor and ``q̈`` are skipped and the
    workspace is ``rbd.Data(model, dtype=object)``.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> data = rbd.compute_all(model, [0.0, np.pi / 2], [1.0, 0.0], frames=("link2",))
    >>> data.M.round(12), data.h.round(12)
    (array([[3., 1.],
           [1., 1.]]), array([ 9.81, 10.81]))
    >>> data.jacobians["link2"].shape
    (6, 2)
    """
    twin = _kernel(model, backend)
    if twin is None:
        return _reference_all(model, q, v, data, frames, tau)
    if twin.__class__ is not _compiled_type:
        if getattr(model, "_mimic", None):
            return _coupled_all(model, twin, q, v, data, frames, tau)
        _compiled_stages()
    run = _run_stages
    if data is None:
        data = Data(model, batch=_batch(q, v, tau))
    elif getattr(data, "_bound", None) is None or data._bound[0] is not twin:
        # not run on this compiled model yet (a data kept bound to a twin is its model's)
        if type(data) is not Data:
            raise InputError(f"data must be an rbd.Data, got {type(data).__name__}")
        data.check_model(model)
    if frames is not data.frames:
        _frames(model, data, frames)
    return run(twin, data, q, v, tau)


def _batch(*arrays) -> int | None:
    """The leading axis of the first stacked argument (the kernel checks the others)."""
    for x in arrays:
        if x is not None and np.ndim(x) == 2:
            return int(np.shape(x)[0])
    return None


def _frames(model, data: Data, frames) -> None:
    """Resolve ``frames`` on ``data`` unless it holds those already."""
    if isinstance(frames, (str, int, np.integer)):
        frames = (frames,)
    frames = tuple(frames)
    if frames != data.frames:
        data._set_frames(model, frames)


def _reference_all(model, q, v, data, frames, tau) -> Data:
    """The reference stages, once per state, on numbers or on symbols."""
    from ..reference import stages

    specs = [("q", "q"), ("v", "v")] + ([("tau", "v")] if tau is not None else [])
    values = [q, v] + ([tau] if tau is not None else [])
    arrays, batch = _validate(model, specs, values, symbolic=True)
    symbolic = not isinstance(model, Model) or any(a.dtype == object for a in arrays)
    record = model
    if symbolic and isinstance(model, Model):
        from ..symbolic.equations import SymbolicModel

        record = SymbolicModel.of(model)
    numeric = record.model if _symbolic_record(record) else record
    if data is None:
        data = Data(numeric, batch=batch, dtype=object if symbolic else float)
    data = _workspace(numeric, data, batch)
    if symbolic and data.dtype != object:
        raise InputError("data holds floats; symbols need rbd.Data(model, dtype=object)")
    _frames(numeric, data, frames)
    states = [(data, arrays)] if batch is None else [
        (data.state(k), [a[k] for a in arrays]) for k in range(batch)]
    for target, (q_k, v_k, *tau_k) in states:
        try:
            stages.compute_all(record, target, q_k, v_k, tau_k[0] if tau_k else None)
        except np.linalg.LinAlgError:
            raise ModelError("the mass matrix is not positive definite") from None
    data.factor_kind = target.factor_kind if states else None
    return data


def _workspace(model, data, batch) -> Data:
    """``data`` checked for ``model`` and ``batch``, or a new workspace."""
    if data is None:
        return Data(model, batch=batch)
    if type(data) is not Data:
        raise InputError(f"data must be an rbd.Data, got {type(data).__name__}")
    data.check_model(model)
    if data.batch != batch:
        raise InputError(f"data holds {'one state' if data.batch is None else data.batch} "
                         f"states, the arguments {'one' if batch is None else batch}")
    return data


def _coupled_all(model, dynamics, q, v, data, frames, tau) -> Data:
    """A model with mimic joints: the stages on the full tree, projected by ``G``."""
    from scipy.linalg import cho_solve

    specs = [("q", "q"), ("v", "v")] + ([("tau", "v")] if tau is not None else [])
    arrays, batch = _validate(model, specs, [q, v] + ([tau] if tau is not None else []))
    data = _workspace(model, data, batch)
    _frames(model, data, frames)
    c = dynamics.coupling
    full = compute_all(dynamics.full, c.full_q(arrays[0]), c.full_v(arrays[1]),
                       frames=data.frames, backend=dynamics.backend)
    data.q[...], data.qd[...] = arrays[0], arrays[1]
    data.M[...] = c.project_matrix(full.M)                 # M = Gᵀ M_full G
    data.h[...], data.g[...] = c.project(full.h), c.project(full.g)
    data.R[...], data.p[...], data.C[...] = full.R, full.p, full.C
    data.J_frames[...] = full.J_frames @ c.G               # J = J_full G
    try:
        data.L[...] = np.linalg.cholesky(data.M)           # M = L Lᵀ
    except np.linalg.LinAlgError:
        raise ModelError("the mass matrix is not positive definite") from None
    data.factor_kind = "LLt"
    if tau is not None:
        L, b = data.L.reshape(-1, model.nv, model.nv), (arrays[2] - data.h).reshape(-1, model.nv)
        data.qdd[...] = np.array([cho_solve((L[k], True), b[k]) for k in range(len(b))]
                                 ).reshape(data.qdd.shape)
    return data
