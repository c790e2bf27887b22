"""Type stub for ``rbd._kernels.aba``.

The module exports C functions only (``aba``, with the ``modified_pivot`` flag, and
``mass_matrix_inverse``), declared in ``aba.pxd`` with the shared inline step
``pivot``/``articulated_inertia``, and cimported by ``_model.pyx`` and ``ploen.pyx``;
Python code calls them through :class:`rbd._kernels._model.CompiledModel` or the
public functions of :mod:`rbd`.
"""
