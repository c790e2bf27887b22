"""Compiled kernels: the typed Cython twins of :mod:`rbd.reference`.

==================  ==============================  =========================================
module              reference twin                  C functions (cimported by ``_model``)
==================  ==============================  =========================================
``_spatial.pxd``    ``rbd/spatial.py``              inline 3-/6-vector and Plücker algebra
``_model.pxd``      ``rbd/model.py``, ``joints.py`` ``ModelC``, ``Work``, ``jcalc``
``rnea.pyx``        ``rbd/reference/rnea.py``       ``rnea``
``crba.pyx``        ``rbd/reference/crba.py``       ``crba``
``aba.pyx``         ``rbd/reference/aba.py``        ``aba``, ``mass_matrix_inverse``
``kinematics.pyx``  ``rbd/reference/kinematics.py`` poses, Jacobian, energies, ``integrate``
``_model.pyx``      —                               :class:`CompiledModel`: validation, batches
==================  ==============================  =========================================

Use them through the public functions (``rbd.rnea`` ...) or through
``rbd.algorithms.compiled(model)``, which returns the cached
:class:`~rbd._kernels._model.CompiledModel` of a model.
"""
