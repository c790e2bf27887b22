# cython: language_level=3
"""Batched RNEA, ABA (``soa.pxi``) and their derivatives (``soa_derivatives.pxi``) over lanes of states, built for AVX2 and FMA (4 doubles an instruction).

One of three builds of the same text (``setup.py``); ``_model.pyx`` imports the
one the CPU runs (docs/design.md, "Batches in lanes").  The lane text has
no reference twin of its own: it renders ``rnea.pyx``, ``aba.pyx`` and ``derivatives.pyx``, and
``tests/test_soa.py`` checks its passes and tags against theirs.
"""

include "soa.pxi"
include "soa_derivatives.pxi"
