# cython: language_level=3
"""Batched RNEA and ABA (``soa.pxi``, ``soa_aba.pxi``), their derivatives
(``soa_derivatives.pxi``), rollouts (``soa_rollout.pxi``) and CRBA (``soa_crba.pxi``)
over lanes of states, built for the platform's baseline instruction set (SSE2 on x86-64).

One of three builds of the same text (``setup.py``); ``_model.pyx`` imports the
one the CPU runs (docs/design.md, "Batches in lanes").  The lane text has
no reference twin of its own: it renders ``rnea.pyx``, ``aba.pyx``, ``derivatives.pyx``,
``rollout.pyx`` and ``crba.pyx``, and ``tests/test_soa.py`` checks its passes and tags
against theirs.
"""

include "soa.pxi"
include "soa_aba.pxi"
include "soa_derivatives.pxi"
include "soa_rollout.pxi"
include "soa_crba.pxi"
