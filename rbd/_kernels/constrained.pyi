"""Type stub for ``rbd._kernels.constrained``.

The module exports C functions only (``solve_kkt``, ``solve_schur``, ``solve_proximal``,
``solve_impulse``), declared in ``constrained.pxd`` with the ``Arena`` of one state and
cimported by ``_constrained_batch.pyx``; Python code calls them through
:class:`rbd._kernels._constrained_batch.ConstrainedModel` or the public functions
:func:`rbd.constrained_dynamics`, :func:`rbd.impulse_dynamics` and :func:`rbd.delassus`.
"""

PIVOT_RTOL: float
AUGMENTED_RTOL: float
