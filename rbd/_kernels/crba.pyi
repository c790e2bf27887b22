"""Type stub for ``rbd._kernels.crba``.

The module exports C functions only (crba), declared in
``crba.pxd`` and cimported by ``_model.pyx``; Python code calls them through
:class:`rbd._kernels._model.CompiledModel` or the public functions of :mod:`rbd`.
"""
