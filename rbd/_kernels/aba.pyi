"""Type stub for ``rbd._kernels.aba``.

The module exports C functions only (aba, mass_matrix_inverse), declared in
``aba.pxd`` and cimported by ``_model.pyx``; Python code calls them through
:class:`rbd._kernels._model.CompiledModel` or the public functions of :mod:`rbd`.
"""
