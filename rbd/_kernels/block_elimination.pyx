# cython: language_level=3
"""Articulated-body algorithm with Pai, Ascher & Kry's modified pivot (§7), compiled.

The entry point twin of ``aba_modified`` in ``rbd/reference/block_elimination.py``.
The kernel is not a second copy of the ABA: it is ``aba(..., modified_pivot=True)``
of ``rbd/_kernels/aba.pyx``, whose inward step (``pivot`` in ``aba.pxd``) keeps
only the children's contribution ``IA~_i`` (Pai's ``M̃``) in ``IA`` until body
``i`` is reached and forms the pivot in two parts,

    D_i = S_iᵀ I_i S_i + S_iᵀ IA~_i S_i,

before ``IA_i = I_i + IA~_i`` is stored; the reference renders the same text as
``rbd.reference.aba.aba(..., modified_pivot=True)``.
"""

__all__ = ["aba_modified"]


def aba_modified(model, q, v, tau, f_ext=None):
    """Forward dynamics with the modified pivot: ``(nv,)`` or ``(N, nv)`` for a batch.

    Runs on the model's :class:`~rbd._kernels._model.CompiledModel`
    (``rbd.algorithms.compiled(model)``): the arguments are checked in compiled
    code, and a batch runs with the GIL released, in parallel over the states.

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v, tau : (nv,) or (N, nv) array_like
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional

    Raises
    ------
    InputError
        When ``model`` is not an rbd.Model, or on a wrong shape, a non-finite value
        or a non-unit quaternion (the message names the argument).
    ModelError
        When a joint moves no inertia (``D_i`` not positive definite).
    """
    from rbd._kernels._model import compiled_model

    return compiled_model(model).aba_modified(q, v, tau, f_ext)
