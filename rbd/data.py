"""``Data``: the workspace every stage reads and writes, owned by the caller.

A :class:`~rbd.model.Model` is read-only; everything an algorithm computes on
the way to its result lives in a :class:`Data` (Pinocchio's Model/Data split,
MuJoCo's ``mjData``).  ``rbd.Data(model)`` is the caller's: the stages of
:mod:`rbd.reference.stages` and their compiled twins in ``rbd/_kernels/stages.pyx``
fill it in MuJoCo's order (position, velocity, composite inertia and ``M``, the
factor of ``M``, bias forces, Jacobians of named frames; forward dynamics from
the factor), and :func:`rbd.compute_all` runs them all::

    data = rbd.Data(model)
    rbd.compute_all(model, q, v, data=data, frames=("tool0",))
    data.M, data.h, data.g, data.L, data.jacobians["tool0"], data.poses

A second call with another state overwrites the same arrays (no allocation).
``copy.deepcopy(data)`` gives an independent workspace for the same model (a
model is read-only and shared); a pickle carries its model along.

>>> import numpy as np, rbd
>>> model = rbd.models.double_pendulum()
>>> data = rbd.compute_all(model, [0.0, np.pi / 2], [0.0, 0.0])
>>> data.M.round(12)
array([[3., 1.],
       [1., 1.]])

The compiled model of ``rbd.algorithms.compiled(model)`` owns a ``Data`` of its
own as the workspace of the one-call kernels (``compiled(model).data``): after
a single-state call (``rbd.rnea(model, q, v, a)``, ...) its arrays hold that
call's intermediate quantities, and only the entries the last call computed
are meaningful (an RNEA call does not touch ``IA``).

Layout.  Every field is one array (a structure of arrays) and all of them are
views into one contiguous ``buffer``; the kernels write through raw pointers
at the offsets in ``offsets``.  ``Data(model, batch=N)`` gives every field a
leading state axis: field ``X`` of per-state shape ``s`` occupies ``N · prod(s)``
doubles from ``offsets["X"][0]`` and state ``k`` is the block at
``offset + k · prod(s)``, so a kernel runs state ``k`` by shifting each pointer,
and ``data.state(k)`` is a ``Data`` of views on that state (docs/design.md,
"One Data, computed in stages").  The reference path also runs on sympy
symbols: ``Data(model, dtype=object)`` holds object arrays.
"""

from __future__ import annotations

import copy

import numpy as np

from .errors import InputError
from .spatial import plux, plux_parts, skew

__all__ = ["Data"]


def _layout(nbodies: int, nv: int, nslots: int, nq: int = 0,
            terms: bool = True) -> list[tuple[str, tuple[int, ...], str]]:
    nb = nbodies
    square = (nv, nv) if terms else (0, nv)
    return [
        ("E_up", (nb, 3, 3), "rotation of X_up[i] = X_J(q_i) X_tree[i] = plux(E, r)"),
        ("r_up", (nb, 3), "translation of X_up[i]: body i's origin in parent coordinates"),
        ("S_cols", (nv, 6), "motion subspace, one row per degree of freedom (see S)"),
        ("c_J", (nb, 6), "velocity-product acceleration Ṡ q̇ of each joint"),
        ("v", (nb, 6), "spatial velocity of each body, body coordinates"),
        ("a", (nb, 6), "spatial acceleration of each body (RNEA, ABA)"),
        ("f", (nb, 6), "spatial force transmitted by each body's joint (RNEA)"),
        ("c", (nb, 6), "velocity-product acceleration c_i = c_J + v_i × v_J (ABA)"),
        ("pA", (nb, 6), "articulated bias force (ABA)"),
        ("IA", (nb, 6, 6), "articulated-body inertia (ABA, M⁻¹)"),
        ("U_cols", (nv, 6), "U_i = IA_i S_i, one row per degree of freedom (see U)"),
        ("D", (nb, 6, 6), "D_i = S_iᵀ U_i in the top-left nv_i × nv_i block"),
        ("D_inv", (nb, 6, 6), "D_i⁻¹ in the top-left nv_i × nv_i block"),
        ("u", (nv,), "u_i = τ_i - S_iᵀ pA_i (ABA)"),
        ("m_C", (nb,), "composite-rigid-body inertia IC_i = (m, h, Ī): mass (CRBA)"),
        ("h_C", (nb, 3), "IC_i: first moment h = m c"),
        ("I_C", (nb, 3, 3), "IC_i: rotational inertia about the body origin Ī"),
        ("S0", (nv, 6), "S of each degree of freedom in world (stages) or root-body (CRBA) "
                        "coordinates"),
        ("F0", (nv, 6), "IC_i S_i of each degree of freedom in world (stages) or root-body "
                        "(CRBA) coordinates"),
        ("R", (nb, 3, 3), "body orientation: world (kinematics, stages) or root-body (CRBA) "
                          "axes"),
        ("p", (nb, 3), "body origin: world (kinematics, stages) or root-body (CRBA) "
                       "coordinates"),
        ("C", (nb, 3), "body centre of mass in world coordinates (kinematics, stages)"),
        ("F", (nslots, nv, 6), "per-body force, then acceleration, columns of M⁻¹, in the "
                               "slots of _model.column_slots"),
        ("scratch", (72,), "scratch space of small dense factorizations"),
        ("J", (nv, 6), "joint columns J_i = ⁱX_0⁻¹ S_i in world coordinates (derivatives)"),
        ("dVdq", (nv, 6), "∂V/∂q of each degree of freedom, W (7)–(8) (derivatives)"),
        ("dAdq", (nv, 6), "∂A/∂q of each degree of freedom, W (7)–(8) (derivatives)"),
        ("dAdv", (nv, 6), "∂A/∂q̇ of each degree of freedom, W (7)–(8) (derivatives)"),
        ("B_C", (nb, 3, 6), "composite inertia variation B^C_i: its first three columns "
                            "(the others vanish), W (6) (derivatives)"),
        ("qdd", (nv,), "accelerations q̈ = FD(q, q̇, τ) at which forward dynamics is "
                       "differentiated; q̈ = M⁻¹ (τ - h) of the solve stage"),
        ("q", (nq,), "configuration of the position stage"),
        ("qd", (nv,), "joint velocities q̇ of the velocity stage"),
        ("M", square, "joint-space inertia with the armature (composite_inertia stage)"),
        ("L", square, "factor of M (factor stage): M = Lᵀ L with the tree's pattern, or "
                        "M = L Lᵀ dense (factor_kind); L lower triangular"),
        ("h", (nv,), "bias forces h = C(q, q̇) q̇ + g(q) (bias stage)"),
        ("g", (nv,), "generalized gravity g(q) (bias stage)"),
    ]


class Data:
    """The caller-owned workspace of the stages (also the kernels' own workspace).

    Parameters
    ----------
    model : Model
        The model whose states this workspace holds (a :class:`rbd.symbolic.SymbolicModel`
        gives the workspace of its numeric model).
    nslots : int, optional
        Storage slots of the M⁻¹ kernel's columns ``F`` (default 0: the stages do not
        use them; the compiled model's own workspace has one per slot of
        ``column_slots``).
    batch : int, optional
        Number of states: every field gets a leading axis of this length.
    dtype : {float, object}
        ``object`` for the reference stages on sympy symbols.
    terms : bool
        Room for ``M`` and its factor ``L`` (``nv × nv`` each); False for the compiled
        model's own workspace, whose one-call kernels write ``M`` to their result and
        keep their workspace linear in the model's size (docs/design.md, "Building is
        linear").

    Attributes
    ----------
    q, qd : (nq,), (nv,) ndarray
        The state the position and velocity stages ran at.
    M : (nv, nv) ndarray
        Joint-space inertia, armature included (composite-inertia stage).
    L : (nv, nv) ndarray
        Its factor, lower triangular: ``M = Lᵀ L`` with the tree's sparsity when
        ``factor_kind == "LtL"``, the dense Cholesky ``M = L Lᵀ`` when ``"LLt"``.
    factor_kind : str or None
        Which factorization ``L`` holds (None before the factor stage ran).
    h, g : (nv,) ndarray
        Bias forces ``h = C(q, q̇) q̇ + g(q)`` and generalized gravity ``g(q)``.
    jacobians : dict
        ``name -> (6, nv)`` world-aligned ``[ω; v]`` Jacobian at the named frame's
        origin, for the names of :attr:`frames` (views into one array).
    frames : tuple
        The frame names whose Jacobians the last run computed.
    E_up, r_up : (nbodies, 3, 3), (nbodies, 3) ndarray
        ``X_up[i] = plux(E_up[i], r_up[i])`` (see :attr:`X_up`).
    v, a, f, c, pA, c_J : (nbodies, 6) ndarray
        Spatial velocities, accelerations, forces, bias accelerations
        ``c_i = c_J + v_i × v_J``, articulated bias forces, joint velocity-product terms.
    IA : (nbodies, 6, 6) ndarray
        Articulated-body inertias.
    m_C, h_C, I_C : (nbodies,), (nbodies, 3), (nbodies, 3, 3) ndarray
        Composite-rigid-body inertias ``IC_i`` as mass, first moment ``h = m c`` and
        rotational inertia about the body origin (see :attr:`IC`).
    D, D_inv : (nbodies, 6, 6) ndarray
        ``D_i = S_iᵀ IA_i S_i`` and its inverse, top-left ``nv_i × nv_i`` block.
    u : (nv,) ndarray
        ``u_i = τ_i - S_iᵀ pA_i``.
    S0, F0 : (nv, 6) ndarray
        ``S_i`` and ``IC_i S_i`` per degree of freedom in world coordinates (stages;
        the one-call CRBA kernel uses root-body coordinates).
    R, p, C : world orientation, origin and centre of mass of each body
        (the one-call CRBA kernel leaves poses relative to each tree's root body).
    F : (nslots, nv, 6) ndarray
        Columns used by the M⁻¹ kernel; body ``i`` uses slot ``column_slots[i]``
        (a chain needs 2 slots, a tree as many as its widest cut), so the
        workspace grows linearly with a chain's length.
    J, dVdq, dAdq, dAdv : (nv, 6) ndarray
        Analytical derivatives: each degree of freedom's joint column and its
        ``∂V/∂q``, ``∂A/∂q``, ``∂A/∂q̇`` in world coordinates
        (:mod:`rbd.reference.derivatives`, W (1), W (7)–(8)); ``v``, ``a``, ``f`` and
        ``IC`` then hold world-coordinate values.
    B_C : (nbodies, 3, 6) ndarray
        Composite inertia variation ``B^C_i`` (W (6)): its first three columns, the
        last three being zero.
    qdd : (nv,) ndarray
        ``q̈`` of the solve stage, or of the last forward-dynamics derivative.
    buffer : (size,) ndarray
        The memory behind every array above (``batch`` times as much for a batch).
    offsets : dict
        ``name -> (offset, shape)`` in ``buffer``, ``shape`` per state.

    Raises
    ------
    InputError
        When ``model`` is not a model, ``batch`` is negative or ``dtype`` is neither
        float nor object.
    """

    def __init__(self, model, nslots: int | None = None, *, batch: int | None = None,
                 dtype=float, terms: bool = True):
        record = getattr(model, "model", model)       # a SymbolicModel's numeric model
        if not all(hasattr(record, name) for name in ("bodies", "nbodies", "nv", "nq")):
            raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
        if batch is not None and (isinstance(batch, bool) or int(batch) != batch or batch < 0):
            raise InputError(f"batch must be a non-negative integer or None, got {batch!r}")
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(float), np.dtype(object)):
            raise InputError(f"dtype must be float or object, got {dtype!r}")
        self._model = record
        self.nbodies = int(record.nbodies)
        self.nv = int(record.nv)
        self.nq = int(record.nq)
        self.nslots = 0 if nslots is None else int(nslots)
        self.batch = None if batch is None else int(batch)
        self._nv_j = [b.joint.nv for b in record.bodies]
        self.offsets: dict[str, tuple[int, tuple[int, ...]]] = {}
        size = 0
        self.terms = bool(terms)
        for name, shape, _ in _layout(self.nbodies, self.nv, self.nslots, self.nq, terms):
            self.offsets[name] = (size, shape)
            size += int(np.prod(shape, dtype=np.int64))
        self.size = size
        self.buffer = np.zeros(size * (1 if batch is None else self.batch), dtype=self.dtype)
        self.factor_kind = None
        self._view_of = None
        self._set_frames(record, ())
        self.__setstate__({})

    # --- the model and the frames -------------------------------------------------------------
    @property
    def model(self):
        """The model this workspace was made for."""
        return self._model

    def check_model(self, model) -> None:
        """Raise :class:`~rbd.errors.InputError` unless this workspace belongs to ``model``.

        A model changed since (a body added) is refused by its sizes as well.
        """
        record = getattr(model, "model", model)
        if self._model is not record or (record.nbodies, record.nq, record.nv) != (
                self.nbodies, self.nq, self.nv):
            raise InputError(
                f"data was made for another model ({self.nbodies} bodies, nq={self.nq}, "
                f"nv={self.nv}); make one with rbd.Data(model) for "
                f"{getattr(record, 'name', type(record).__name__)!r}")

    def _set_frames(self, model, frames) -> None:
        """Resolve ``frames`` (names as :func:`rbd.jacobian` takes) to bodies and points."""
        if isinstance(frames, (str, int)):
            frames = (frames,)
        frames = tuple(frames)
        body = np.zeros(len(frames), dtype=np.int64)
        point = np.zeros((len(frames), 3))
        for k, name in enumerate(frames):
            try:
                body[k] = model.body_index(name)
            except Exception:
                raise InputError(f"frames: no body or frame {name!r} in model "
                                 f"{getattr(model, 'name', '')!r} (see model.frames)") from None
            if isinstance(name, str) and name in model._frames:
                # the frame's origin in its body's coordinates: X = plux(E, r)
                point[k] = plux_parts(model._frames[name].X)[1]
        self.frames = frames
        self.frame_body = body
        self.frame_point = point
        lead = () if self.batch is None else (self.batch,)
        self.J_frames = np.zeros((*lead, len(frames), 6, self.nv), dtype=self.dtype)
        self.jacobians = {name: self.J_frames[..., k, :, :] for k, name in enumerate(frames)}
        self._bound = None      # what the kernels keep of this workspace (rbd._kernels.stages)

    def state(self, k: int) -> Data:
        """State ``k`` of a batch, as a ``Data`` of views (writes go to this workspace)."""
        if self.batch is None:
            raise InputError("state(k) needs a batch workspace (rbd.Data(model, batch=N))")
        if not 0 <= k < self.batch:
            raise InputError(f"state index {k} out of range (batch of {self.batch})")
        view = object.__new__(Data)
        view.__dict__.update(self.__dict__)
        view.batch = None
        view._view_of = self
        for name in self.offsets:
            setattr(view, name, getattr(self, name)[k])
        view.J_frames = self.J_frames[k]
        view.jacobians = {name: view.J_frames[j] for j, name in enumerate(self.frames)}
        return view

    # --- copies and pickles keep the fields views of the one buffer ------------------------------
    def __getstate__(self) -> dict:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in self.offsets and k not in ("jacobians", "_bound")}
        if self._view_of is not None:
            raise InputError("data.state(k) is a view: copy or pickle the whole batch")
        return state

    def __deepcopy__(self, memo) -> Data:
        # a model is read-only: the copy shares it (and works with it), its arrays are new
        memo[id(self._model)] = self._model
        new = object.__new__(Data)
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return new

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        n = 1 if self.batch is None else self.batch
        lead = () if self.batch is None else (self.batch,)
        for name, (offset, shape) in self.offsets.items():
            count = int(np.prod(shape, dtype=np.int64))
            setattr(self, name,
                    self.buffer[offset * n:(offset + count) * n].reshape(*lead, *shape))
        self.jacobians = {name: self.J_frames[..., k, :, :] for k, name in enumerate(self.frames)}
        self._bound = None

    @staticmethod
    def describe(nbodies: int = 0, nv: int = 0, nslots: int | None = None,
                 nq: int | None = None) -> str:
        """A table of the workspace arrays: name, shape and meaning."""
        rows = _layout(nbodies, nv, 0 if nslots is None else nslots, nv if nq is None else nq)
        return "\n".join(f"{name:8s} {str(shape):14s} {doc}" for name, shape, doc in rows)

    # --- derived views ----------------------------------------------------------------------------
    @property
    def S(self) -> np.ndarray:
        """Motion subspaces side by side, ``(6, nv)``: ``S[:, model.v_index(i)]`` is ``S_i``."""
        return np.swapaxes(self.S_cols, -1, -2)

    @property
    def U(self) -> np.ndarray:
        """``U_i = IA_i S_i`` side by side, ``(6, nv)``."""
        return np.swapaxes(self.U_cols, -1, -2)

    @property
    def X_up(self) -> np.ndarray:
        """The Plücker transforms ``X_up[i]`` as ``(nbodies, 6, 6)`` matrices (a copy)."""
        self._single("X_up")
        return np.array([plux(self.E_up[i], self.r_up[i]) for i in range(self.nbodies)],
                        dtype=self.dtype).reshape(self.nbodies, 6, 6)

    @property
    def IC(self) -> np.ndarray:
        """Composite inertias ``[[Ī, h̃], [h̃ᵀ, m 1]]`` as ``(nbodies, 6, 6)`` matrices (a copy)."""
        self._single("IC")
        IC = np.zeros((self.nbodies, 6, 6), dtype=self.dtype)
        for i in range(self.nbodies):
            H = skew(self.h_C[i])
            IC[i, :3, :3] = self.I_C[i]
            IC[i, :3, 3:] = H
            IC[i, 3:, :3] = H.T
            IC[i, 3:, 3:] = self.m_C[i] * np.eye(3, dtype=int)
        return IC

    @property
    def poses(self) -> np.ndarray:
        """World poses ``[[R_i, p_i], [0, 1]]`` of the bodies, ``(nbodies, 4, 4)`` (a copy).

        As :func:`rbd.forward_kinematics` returns them (position stage).
        """
        lead = self.R.shape[:-3]
        T = np.zeros((*lead, self.nbodies, 4, 4), dtype=self.dtype)
        T[..., :3, :3] = self.R
        T[..., :3, 3] = self.p
        T[..., 3, 3] = 1
        return T

    def D_block(self, i: int) -> np.ndarray:
        """``D_i`` as its ``nv_i × nv_i`` block (a view)."""
        n = self._nv_j[i]
        return self.D[..., i, :n, :n]

    def _single(self, what: str) -> None:
        if self.batch is not None:
            raise InputError(f"{what} of a batch: take data.state(k).{what}")

    def __repr__(self) -> str:
        batch = "" if self.batch is None else f", batch of {self.batch}"
        return (f"<rbd.Data: {self.nbodies} bodies, nv={self.nv}{batch}, "
                f"{self.size} {'doubles' if self.dtype == float else 'objects'} a state>")

