"""Every implementation of each dynamics quantity, under one signature.

========================  ===============================================
quantity                  signature of each registered callable
========================  ===============================================
``inverse_dynamics``      ``fn(model, q, v, a, f_ext=None) -> tau``
``mass_matrix``           ``fn(model, q) -> M``
``forward_dynamics``      ``fn(model, q, v, tau, f_ext=None) -> a``
``bias_forces``           ``fn(model, q, v) -> h``
``constrained_dynamics``  ``fn(model, q, v, tau, constraints=None) -> a``
========================  ===============================================

``constrained_dynamics`` is forward dynamics under the model's own
constraints (:attr:`rbd.Model.constraints`; none: ``aba``), one entry per
solver and backend of :func:`rbd.constrained_dynamics`.

The test suite and ``rbd check`` iterate this registry, so a derivation is
compared with every other one as soon as it is listed here.  Users may add
their own with :func:`register`.

A built-in derivation computes a tree; on a model with mimic joints it runs
on the model's full tree and the coupling maps its arguments and result
(:mod:`rbd.model.coupling`): ``τ = Gᵀ τ_full``, ``M = Gᵀ M_full G``,
``h = Gᵀ h_full``, and forward dynamics by the constraint forces that keep
the full tree's accelerations coupled, found with the derivation itself
(:func:`_coupled_forward_dynamics`).  Its predicates then judge the full
tree.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

import numpy as np

from . import _backend
from .errors import InputError

__all__ = ["QUANTITIES", "implementations", "register", "unregister", "supports",
           "without_armature", "without_free_joint_armature"]

QUANTITIES = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "bias_forces",
              "constrained_dynamics")

# (quantity, name, "module:function"[, "module:predicate", ...]) — the built-in derivations,
# imported on first use.  The optional predicates(model) -> bool say which models a
# derivation handles (all must hold; see ``supports``).  Derivations that do not add the
# joints' rotor inertia (``model.armature``) to M carry ``without_armature``, and the bias
# forces that leave out a free joint's armature ``without_free_joint_armature``.
_BUILTIN = [
    ("inverse_dynamics", "reference", "rbd.reference.rnea:rnea"),
    ("mass_matrix", "reference", "rbd.reference.crba:crba"),
    ("forward_dynamics", "reference", "rbd.reference.aba:aba"),
    ("forward_dynamics", "crba-cholesky", "rbd.reference.crba:forward_dynamics_crba"),
    ("forward_dynamics", "crba-ltl", "rbd.reference.crba:forward_dynamics_ltl"),
    ("bias_forces", "reference", "rbd.reference.rnea:nonlinear_effects"),
    ("forward_dynamics", "pai-dense", "rbd.reference.block_elimination:forward_dynamics_dense",
     "rbd.registry:without_armature"),
    ("forward_dynamics", "pai-crbm", "rbd.reference.block_elimination:forward_dynamics_crbm",
     "rbd.registry:without_armature"),
    ("mass_matrix", "pai-crbm", "rbd.reference.block_elimination:mass_matrix_crbm",
     "rbd.registry:without_armature"),
    ("forward_dynamics", "pai-abm", "rbd.reference.block_elimination:forward_dynamics_abm",
     "rbd.registry:without_armature"),
    ("forward_dynamics", "pai-modified-abm",
     "rbd.reference.block_elimination:forward_dynamics_modified_abm",
     "rbd.registry:without_armature"),
    ("forward_dynamics", "aba-modified-pivot", "rbd.reference.block_elimination:aba_modified"),
    ("forward_dynamics", "ploen", "rbd.reference.ploen:forward_dynamics"),
    ("forward_dynamics", "ploen-factorized", "rbd.reference.ploen:forward_dynamics_factorized",
     "rbd.registry:without_armature"),
    ("mass_matrix", "ploen-global", "rbd.reference.ploen:mass_matrix_global",
     "rbd.registry:without_armature"),
    ("bias_forces", "ploen-global", "rbd.reference.ploen:bias_forces_global",
     "rbd.registry:without_free_joint_armature"),
    ("forward_dynamics", "ploen-kernel", "rbd._variants:ploen_kernel",
     "rbd._variants:kernels_available"),
    ("forward_dynamics", "aba-modified-pivot-kernel", "rbd._variants:aba_modified_kernel",
     "rbd._variants:kernels_available"),
    ("inverse_dynamics", "lagrangian-jacobian", "rbd.reference.lagrangian:inverse_dynamics",
     "rbd.registry:without_armature"),
    ("mass_matrix", "lagrangian-jacobian", "rbd.reference.lagrangian:mass_matrix",
     "rbd.registry:without_armature"),
    ("forward_dynamics", "lagrangian-jacobian", "rbd.reference.lagrangian:forward_dynamics",
     "rbd.registry:without_armature"),
    ("bias_forces", "lagrangian-jacobian", "rbd.reference.lagrangian:bias_forces",
     "rbd.registry:without_free_joint_armature"),
    ("inverse_dynamics", "liu-jain-local-frame", "rbd.reference.local_frame_id:inverse_dynamics",
     "rbd.registry:without_armature"),
    ("bias_forces", "liu-jain-local-frame", "rbd.reference.local_frame_id:bias_forces",
     "rbd.registry:without_free_joint_armature"),
    ("inverse_dynamics", "symbolic-guenter-lee", "rbd.symbolic.lagrangian:inverse_dynamics",
     "rbd.symbolic.lagrangian:supports", "rbd.registry:without_armature"),
    ("mass_matrix", "symbolic-guenter-lee", "rbd.symbolic.lagrangian:mass_matrix",
     "rbd.symbolic.lagrangian:supports", "rbd.registry:without_armature"),
    ("forward_dynamics", "symbolic-guenter-lee", "rbd.symbolic.lagrangian:forward_dynamics",
     "rbd.symbolic.lagrangian:supports", "rbd.registry:without_armature"),
    ("bias_forces", "symbolic-guenter-lee", "rbd.symbolic.lagrangian:bias_forces",
     "rbd.symbolic.lagrangian:supports", "rbd.registry:without_free_joint_armature"),
    ("constrained_dynamics", "reference", "rbd.algorithms.constrained:kkt_reference"),
    ("constrained_dynamics", "schur", "rbd.algorithms.constrained:schur_reference"),
    ("constrained_dynamics", "proximal", "rbd.algorithms.constrained:proximal_reference"),
    ("constrained_dynamics", "kernel", "rbd.algorithms.constrained:kkt_kernel",
     "rbd._variants:kernels_available"),
    ("constrained_dynamics", "schur-kernel", "rbd.algorithms.constrained:schur_kernel",
     "rbd._variants:kernels_available"),
    ("constrained_dynamics", "proximal-kernel", "rbd.algorithms.constrained:proximal_kernel",
     "rbd._variants:kernels_available"),
]

# Public functions served by the compiled kernels, registered as "kernel".
_KERNEL = [
    ("inverse_dynamics", "kernel", "rnea"),
    ("mass_matrix", "kernel", "crba"),
    ("forward_dynamics", "kernel", "aba"),
    ("bias_forces", "kernel", "nonlinear_effects"),
]

_user: dict[str, dict[str, Callable]] = {q: {} for q in QUANTITIES}
# Optional predicates: name -> callable(model) -> bool, for derivations limited to some models.
_supports: dict[tuple[str, str], Callable] = {}


def _load(target: str) -> Callable:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


@functools.cache
def _builtins() -> dict[str, dict[str, Callable]]:
    table: dict[str, dict[str, Callable]] = {q: {} for q in QUANTITIES}
    for quantity, name, target, *predicates in _BUILTIN:
        table[quantity][name] = _on_the_full_tree(quantity, _load(target))
        if predicates:
            _supports.setdefault((quantity, name), _all_of([_load(p) for p in predicates]))
    if _backend.has_kernels():
        from . import algorithms

        for quantity, name, attr in _KERNEL:
            table[quantity][name] = functools.partial(getattr(algorithms, attr),
                                                      backend="kernel")
    return table


def _on_the_full_tree(quantity: str, fn: Callable) -> Callable:
    """``fn`` as it is for a tree; for a model with mimic joints, on its full tree.

    Constrained dynamics is not mapped: its derivations take mimic joints as rows
    of their own (:mod:`rbd.algorithms.constrained`).
    """

    @functools.wraps(fn)
    def run(model, *args, **kwargs):
        if not getattr(model, "_mimic", None) or quantity not in _COUPLED:
            return fn(model, *args, **kwargs)
        return _COUPLED[quantity](fn, model, *args, **kwargs)

    return run


def _full_arguments(model, specs, values) -> list:
    """The arguments of one state, checked against ``model``, as the full tree's."""
    from .algorithms._checks import _validate

    arrays, batch = _validate(model, specs, values)
    if batch is not None:
        raise InputError("the registered derivations take one state; call them per state")
    c = model.coupling()
    to_full = {"q": c.full_q, "v": c.full_v, "a": c.full_v}   # τ stays: it is projected
    return [a if a is None or name not in to_full else to_full[name](a)
            for (name, _), a in zip(specs, arrays, strict=True)]


def _coupled_inverse_dynamics(fn, model, q, v, a, f_ext=None):
    """``τ = Gᵀ τ_full(q_full, G v, G a, f)``."""
    args = _full_arguments(model, _SPECS["inverse_dynamics"], (q, v, a, f_ext))
    return model.coupling().project(np.asarray(fn(model._full_tree(), *args), dtype=float))


def _coupled_mass_matrix(fn, model, q):
    """``M = Gᵀ M_full G``."""
    args = _full_arguments(model, _SPECS["mass_matrix"], (q,))
    return model.coupling().project_matrix(np.asarray(fn(model._full_tree(), *args), dtype=float))


def _coupled_bias_forces(fn, model, q, v):
    """``h = Gᵀ h_full(q_full, G v)``."""
    args = _full_arguments(model, _SPECS["bias_forces"], (q, v))
    return model.coupling().project(np.asarray(fn(model._full_tree(), *args), dtype=float))


def _coupled_forward_dynamics(fn, model, q, v, tau, f_ext=None):
    r"""Forward dynamics of the coupled model from the full tree's forward dynamics ``fn``.

    The coupled motion is the full tree's under constraint forces ``Kᵀ λ`` that
    keep ``K q̈_full = 0``, where each row of ``K`` reads ``q̈_j − m q̈_k`` for a
    mimic joint ``j`` of ``k`` (``K G = 0``, so the constraint forces do no work
    on the independent coordinates: ``Gᵀ(τ_0 + Kᵀλ) = τ`` with ``τ_0`` the joint
    forces ``τ`` placed on the independent coordinates).  ``fn`` is affine in
    the joint forces, ``fn(τ_0 + s Kᵀ e_r) − fn(τ_0) = s M⁻¹ Kᵀ e_r``, so

    .. math::

        \ddot q_0 = \mathrm{fn}(\tau_0), \quad Y = M^{-1} K^T, \quad
        (K Y)\,\lambda = -K \ddot q_0, \quad \ddot q_\text{full} = \ddot q_0 + Y \lambda,

    one call of ``fn`` per mimic joint more than the tree needs; the
    independent entries of ``q̈_full`` are ``q̈``.  The probe force is scaled by a
    power of two ``s`` at least the size of ``τ`` and ``q̈_0``, so the difference
    keeps the digits of ``Y``.
    """
    c = model.coupling()
    qf, vf, tau, f = _full_arguments(model, _SPECS["forward_dynamics"], (q, v, tau, f_ext))
    full = model._full_tree()
    tau0 = np.zeros(c.nv_full)
    tau0[c.v_keep] = tau
    K = np.zeros((len(c.v_mimic), c.nv_full))
    K[np.arange(len(c.v_mimic)), c.v_mimic] = 1.0
    K[np.arange(len(c.v_mimic)), c.v_keep[c.v_source]] = -c.multiplier
    qdd0 = np.asarray(fn(full, qf, vf, tau0, f), dtype=float)
    size = max(1.0, float(np.max(np.abs(tau0), initial=0.0)), float(np.max(np.abs(qdd0))))
    s = 2.0 ** np.ceil(np.log2(size)) if np.isfinite(size) else 1.0
    Y = np.stack([(np.asarray(fn(full, qf, vf, tau0 + s * row, f), dtype=float) - qdd0) / s
                  for row in K], axis=-1)
    lam = np.linalg.solve(K @ Y, -K @ qdd0)
    return (qdd0 + Y @ lam)[c.v_keep]


_SPECS = {
    "inverse_dynamics": (("q", "q"), ("v", "v"), ("a", "v"), ("f_ext", "f")),
    "mass_matrix": (("q", "q"),),
    "forward_dynamics": (("q", "q"), ("v", "v"), ("tau", "v"), ("f_ext", "f")),
    "bias_forces": (("q", "q"), ("v", "v")),
}

_COUPLED = {
    "inverse_dynamics": _coupled_inverse_dynamics,
    "mass_matrix": _coupled_mass_matrix,
    "forward_dynamics": _coupled_forward_dynamics,
    "bias_forces": _coupled_bias_forces,
}


def without_armature(model) -> bool:
    """Registry predicate: the model's joints have no rotor inertia (``model.armature == 0``).

    Carried by the derivations that build ``M`` from the bodies alone (Pai's
    augmented system, the Lagrangian-Jacobian and Liu–Jain forms, Si–Guenter's
    global matrices and factorized inverse, the symbolic Guenter–Lee equations).
    """
    return not np.any(np.asarray(model.armature))


def without_free_joint_armature(model) -> bool:
    """Registry predicate: no free joint has a linear armature.

    Carried by the bias-force derivations from the bodies alone, which leave out
    that armature's velocity product (:func:`rbd.reference.rnea.armature_bias`).
    """
    from .reference.rnea import armed_free_joints

    return not armed_free_joints(model)


def _all_of(predicates: list[Callable]) -> Callable:
    if len(predicates) == 1:
        return predicates[0]
    return lambda model: all(p(model) for p in predicates)


def implementations(quantity: str) -> dict[str, Callable]:
    """Return ``{name: callable}`` for every implementation of ``quantity``."""
    if quantity not in QUANTITIES:
        raise KeyError(f"unknown quantity {quantity!r}; choose from {QUANTITIES}")
    table = dict(_builtins()[quantity])
    table.update(_user[quantity])
    return table


def register(quantity: str, name: str, fn: Callable,
             supports: Callable | None = None) -> None:
    """Add ``fn`` as implementation ``name`` of ``quantity``.

    ``supports(model) -> bool`` may restrict it to the models it handles.
    """
    if quantity not in QUANTITIES:
        raise KeyError(f"unknown quantity {quantity!r}; choose from {QUANTITIES}")
    _user[quantity][name] = fn
    if supports is not None:
        _supports[(quantity, name)] = supports


def unregister(quantity: str, name: str) -> None:
    """Remove a user-registered implementation."""
    _user[quantity].pop(name, None)
    _supports.pop((quantity, name), None)


def supports(quantity: str, name: str, model) -> bool:
    """Whether implementation ``name`` of ``quantity`` handles ``model``."""
    table = _builtins()
    predicate = _supports.get((quantity, name))
    if predicate is None:
        return True
    if getattr(model, "_mimic", None) and name in table[quantity] and name not in _user[quantity]:
        model = model._full_tree()   # a built-in derivation runs on the full tree
    return bool(predicate(model))
