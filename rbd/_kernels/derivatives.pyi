"""Type stub for ``rbd._kernels.derivatives``.

The module exports C functions only (``rnea_derivatives``, ``aba_derivatives``),
declared in ``derivatives.pxd`` and cimported by ``_model.pyx``; Python code calls
them through :class:`rbd._kernels._model.CompiledModel` or the public functions
:func:`rbd.rnea_derivatives` and :func:`rbd.aba_derivatives`.
"""
