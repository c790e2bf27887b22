"""Readable pure-Python derivations, one module per derivation.

Each function follows its paper's algorithm table line by line, with the
equation it implements tagged at the end of the line.  Nothing here imports
the compiled kernels.
"""
