"""The algorithms of a model with mimic joints, on its independent coordinates.

:class:`CoupledDynamics` has the methods of a compiled model (``rnea``,
``crba``, ``aba``, ...).  Each validates its arguments against the coupled
model, maps them to the full tree with the model's
:class:`~rbd.model.coupling.Coupling` (``q_full = G_q q + o``, ``v_full = G v``),
runs the full tree's own twin (its compiled model, or the reference
derivations behind the same method names) and projects the result back
(``τ = Gᵀ τ_full``, ``M = Gᵀ M_full G``, ``J = J_full G``; forward dynamics
and ``M⁻¹`` through the Cholesky factor of ``Gᵀ M_full G``).  The equations
are derived in :mod:`rbd.model.coupling`.
"""

from __future__ import annotations

import numpy as np

from .. import _backend
from ._checks import _A, _F, _Q, _TAU, _V, _validate

__all__ = ["CoupledDynamics", "spd_solve"]


def spd_solve(M: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """``M⁻¹ b`` (or ``M⁻¹`` when ``b`` is None) through ``M = L Lᵀ``, batched.

    A state whose ``M`` is not positive definite (bodies without inertia) gives
    NaN, as the recursive forward dynamics gives non-finite numbers there.
    """
    if M.ndim > 2:
        return np.array([spd_solve(M[k], None if b is None else b[k])
                         for k in range(M.shape[0])]).reshape(M.shape if b is None else b.shape)
    n = M.shape[-1]
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        return np.full((n, n) if b is None else b.shape, np.nan)
    Linv = np.linalg.solve(L, np.eye(n))                 # L⁻¹ (triangular)
    if b is None:
        Minv = Linv.T @ Linv                             # M⁻¹ = L⁻ᵀ L⁻¹
        return 0.5 * (Minv + Minv.T)
    return Linv.T @ (Linv @ b)                           # q̈ = L⁻ᵀ L⁻¹ (τ − h)


def _compiled_coupling(full, coupling):
    """The compiled entry points over ``full`` when it is a compiled model, else None."""
    if not _backend.has_kernels():
        return None
    from .._kernels._coupled import CoupledKernel
    from .._kernels._model import CompiledModel

    return CoupledKernel(full, coupling) if isinstance(full, CompiledModel) else None


class CoupledDynamics:
    """The algorithms of a model with mimic joints, on its independent coordinates.

    Parameters
    ----------
    model : Model
        A model with mimic joints.
    full : object
        The twin of the model's full tree (``model._full_tree()``): its compiled
        model, or the reference derivations under the same method names.
    backend : str or None
        The backend ``full`` was chosen for (the derivatives use it).
    """

    def __init__(self, model, full, backend: str | None):
        self.model = model
        self.full = model._full_tree()
        self.twin = full
        self.coupling = model.coupling()
        self.backend = backend
        self.fast = _compiled_coupling(full, self.coupling)

    def __repr__(self) -> str:
        return (f"<CoupledDynamics of {self.model.name!r}: nv={self.coupling.nv} of "
                f"{self.coupling.nv_full}, backend={self.backend!r}>")

    def _args(self, specs, values):
        arrays, _ = _validate(self.model, specs, values)
        c = self.coupling
        to_full = {"q": c.full_q, "v": c.full_v, "a": c.full_v}
        return [a if a is None or name not in to_full else to_full[name](a)
                for (name, _), a in zip(specs, arrays, strict=True)]

    # --- dynamics -------------------------------------------------------------------
    # Each runs the compiled coupling (rbd._kernels._coupled) when there is one; it
    # answers None for a batch, which then takes the mapping below.
    def rnea(self, q, v, a, f_ext=None):
        """``τ = Gᵀ τ_full(q_full, G v, G a, f)``."""
        if self.fast is not None and (tau := self.fast.rnea(q, v, a, f_ext)) is not None:
            return tau
        return self.coupling.project(self.twin.rnea(*self._args((_Q, _V, _A, _F),
                                                                (q, v, a, f_ext))))

    def nonlinear_effects(self, q, v):
        """``h = Gᵀ h_full(q_full, G v)``."""
        if self.fast is not None and (h := self.fast.nonlinear_effects(q, v)) is not None:
            return h
        return self.coupling.project(self.twin.nonlinear_effects(*self._args((_Q, _V), (q, v))))

    def gravity_forces(self, q):
        """``g = Gᵀ g_full(q_full)``."""
        if self.fast is not None and (g := self.fast.gravity_forces(q)) is not None:
            return g
        return self.coupling.project(self.twin.gravity_forces(*self._args((_Q,), (q,))))

    def crba(self, q):
        """``M = Gᵀ M_full(q_full) G``."""
        if self.fast is not None and (M := self.fast.crba(q)) is not None:
            return M
        return self.coupling.project_matrix(self.twin.crba(*self._args((_Q,), (q,))))

    def aba(self, q, v, tau, f_ext=None):
        """Solve ``(Gᵀ M_full G) q̈ = τ − Gᵀ h_full(q_full, G v, f)`` by Cholesky."""
        if self.fast is not None and (qdd := self.fast.aba(q, v, tau, f_ext)) is not None:
            return qdd
        qf, vf, tau, f = self._args((_Q, _V, _TAU, _F), (q, v, tau, f_ext))
        c = self.coupling
        M = c.project_matrix(self.twin.crba(qf))
        h = c.project(self.twin.rnea(qf, vf, np.zeros_like(vf), f))
        return spd_solve(M, (tau - h)[..., None])[..., 0]

    aba_modified = aba

    def mass_matrix_inverse(self, q):
        """``M⁻¹ = (Gᵀ M_full G)⁻¹`` by Cholesky."""
        if self.fast is not None and (M_inv := self.fast.mass_matrix_inverse(q)) is not None:
            return M_inv
        return spd_solve(self.crba(q), None)

    # --- kinematics and energy --------------------------------------------------------
    def kinetic_energy(self, q, v):
        """``½ vᵀ M v = ½ v_fullᵀ M_full v_full`` with ``v_full = G v``."""
        return self.twin.kinetic_energy(*self._args((_Q, _V), (q, v)))

    def potential_energy(self, q):
        return self.twin.potential_energy(*self._args((_Q,), (q,)))

    def forward_kinematics(self, q):
        return self.twin.forward_kinematics(*self._args((_Q,), (q,)))

    def center_of_mass(self, q):
        return self.twin.center_of_mass(*self._args((_Q,), (q,)))

    def body_centers_of_mass(self, q):
        return self.twin.body_centers_of_mass(*self._args((_Q,), (q,)))

    def jacobian(self, q, body, point=None):
        """``J = J_full(q_full) G``."""
        (qf,) = self._args((_Q,), (q,))
        return self.twin.jacobian(qf, int(body), point) @ self.coupling.G

    def integrate(self, q, v, dt=1.0):
        """The full coordinates move with ``G v``; the independent ones are kept."""
        qf, vf = self._args((_Q, _V), (q, v))
        return self.twin.integrate(qf, vf, dt)[..., self.coupling.q_keep]
