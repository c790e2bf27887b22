"""Type stub for ``rbd._kernels.rnea``.

The module exports one C function, ``rnea`` (with NULL vectors it gives the
nonlinear effects and the generalized gravity), declared in ``rnea.pxd`` and
cimported by ``_model.pyx``; Python code calls it through
:class:`rbd._kernels._model.CompiledModel` or the public functions of :mod:`rbd`.
"""
