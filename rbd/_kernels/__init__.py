"""Compiled kernels: the typed Cython twins of :mod:`rbd.reference`.

========================== ==================================  =====================================
module                     twin of (in ``rbd/``)               C functions (cimported by ``_model``)
========================== ==================================  =====================================
``_spatial.pxd``           ``spatial.py``                      inline 3-/6-vector, Plücker algebra
``_model.pxd``             ``model/``, ``joints.py``           ``ModelC``, ``Work``, ``jcalc``
``rnea.pyx``               ``reference/rnea.py``               ``rnea``
``crba.pyx``               ``reference/crba.py``               ``crba``
``aba.pyx``                ``reference/aba.py``                ``aba``, ``mass_matrix_inverse``
``block_elimination.pyx``  ``reference/block_elimination.py``  ``aba`` (``aba.pyx``), modified pivot
``ploen.pyx``              ``reference/ploen.py``              ``c_forward_dynamics`` (Si–Guenter)
``kinematics.pyx``         ``reference/kinematics.py``         poses, Jacobian, energies, integrate
``derivatives.pyx``        ``reference/derivatives.py``        analytical RNEA and ABA derivatives
``rollout.pyx``            ``reference/rollout.py``            fixed-step rollouts (Euler, RK4)
``stages.pyx``             ``reference/stages.py``             the stages over :class:`rbd.Data`
``constraints.pyx``        ``reference/constraints.py``        rows φ, J, γ of the anchors
``constrained.pyx``        ``reference/constrained.py``        ``solve_kkt``, ``solve_schur``, …
``_coupled.pyx``           ``algorithms/_coupled.py``          mimic joints: the tree plus Gᵀ(·)G
``_lanes.pxd``             ``_spatial.pxd``, W states a time   lane algebra of the batched kernels
``_soa_*.pyx``             ``rnea.pyx``, ``aba.pyx`` in lanes  ``SoaKernels`` of ``soa_aba.pxi``
                           ``derivatives.pyx`` in lanes        and ``soa_derivatives.pxi``
``soa_rollout.pxi``        ``rollout.pyx`` in lanes            rollouts of a batch, W at a time
``soa_crba.pxi``           ``crba.pyx`` in lanes               ``rbd.crba`` of a stack, W at a time
``solver_newton.pyx``      ``constraints/solver_newton.py``    ``c_solve_newton``, ``RowsC``
``solver_pgs.pyx``         ``constraints/solver_pgs.py``       ``c_solve_pgs``
``collision_primitive``    ``constraints/`` (same stem)        ``PairOut``, ``c_plane_capsule`` …
``collision_box.pyx``      ``constraints/collision_box.py``    ``c_sphere_box``, ``c_box_box`` …
``collision.pyx``          ``constraints/collision.py``        ``collide_into``, ``CollisionC``
``equality_rows.pyx``      ``constraints/equality_rows.py``    ``equality_rows``, ``EqualityC``
``fluid.pyx``              ``constraints/fluid.py``            ``fluid_force``, ``FluidC``
``_model.pyx``             —                                   :class:`CompiledModel`, batches
``_base.pyx``              —                                   setup, workspaces, fork, interrupts
``_args.pyx``              —                                   argument conversion and checks
``_rollout_batch.pyx``     —                                   rollouts one by one or in a batch
``_constrained_batch.pyx`` —                                   constrained solvers, one or a batch
========================== ==================================  =====================================

Use them through the public functions (``rbd.rnea`` ...) or through
``rbd.algorithms.compiled (model)``, which returns the cached
:class:`~rbd._kernels._model.CompiledModel` of a model.  The variants run
through it too: ``block_elimination.aba_modified(model, ...)`` and
``ploen.forward_dynamics( model, ...)`` call its ``aba_modified`` and
``forward_dynamics_ploen``.
"""
