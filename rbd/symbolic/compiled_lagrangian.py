"""The compiled form of a Guenter–Lee derivation: generated C for M, c and a solve.

:meth:`rbd.symbolic.GuenterLee.compile` builds the module (the straight-line
programs of :mod:`rbd.symbolic.lagrangian` as C functions, plus a Cholesky
solve for forward dynamics) and wraps it in :class:`CompiledLagrangian`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["CompiledLagrangian"]


def _lower(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1)]


def _cholesky_solve_c(n: int) -> str:
    """C: evaluate ``M, c`` then solve ``M qdd = tau - c`` by an in-place Cholesky."""
    nm = n * (n + 1) // 2
    return f"""static void forward_dynamics(const double* q, const double* qd, const double* tau,
                             double* qdd)
{{
    double L[{nm}], c[{n}], s;
    int i, j, k;
    equations(q, qd, L, c);
    /* M = L Lᵀ, lower triangle packed row by row: M[i][j] = L[i*(i+1)/2 + j] */
    for (j = 0; j < {n}; j++) {{
        s = L[j * (j + 1) / 2 + j];
        for (k = 0; k < j; k++) s -= L[j * (j + 1) / 2 + k] * L[j * (j + 1) / 2 + k];
        L[j * (j + 1) / 2 + j] = sqrt(s);
        for (i = j + 1; i < {n}; i++) {{
            s = L[i * (i + 1) / 2 + j];
            for (k = 0; k < j; k++) s -= L[i * (i + 1) / 2 + k] * L[j * (j + 1) / 2 + k];
            L[i * (i + 1) / 2 + j] = s / L[j * (j + 1) / 2 + j];
        }}
    }}
    /* L y = tau - c, then Lᵀ qdd = y */
    for (i = 0; i < {n}; i++) {{
        s = tau[i] - c[i];
        for (k = 0; k < i; k++) s -= L[i * (i + 1) / 2 + k] * qdd[k];
        qdd[i] = s / L[i * (i + 1) / 2 + i];
    }}
    for (i = {n} - 1; i >= 0; i--) {{
        s = qdd[i];
        for (k = i + 1; k < {n}; k++) s -= L[k * (k + 1) / 2 + i] * qdd[k];
        qdd[i] = s / L[i * (i + 1) / 2 + i];
    }}
}}"""


class CompiledLagrangian:
    """The compiled twin of a :class:`GuenterLee`: same methods, generated C underneath.

    Each method also accepts stacked inputs (a leading batch axis) and runs
    the whole batch in C without the GIL.
    """

    def __init__(self, symbolic, module):
        # symbolic: the GuenterLee equations it was generated from (``n`` coordinates);
        # not imported here, since rbd.symbolic.lagrangian imports this module
        self.symbolic = symbolic
        self.module = module
        self.n = symbolic.n

    def _call(self, fn: str, args, names, out_size: int):
        arrays = [np.ascontiguousarray(a, dtype=float) for a in args]
        for a, name in zip(arrays, names, strict=True):
            if a.ndim not in (1, 2) or a.shape[-1] != self.n:
                raise InputError(f"{name} must have shape ({self.n},) or (N, {self.n}), "
                                 f"got {a.shape}")
        if all(a.ndim == 1 for a in arrays):
            out = np.empty(out_size)
            self._run(fn, 1, arrays, out)
            return out
        N = max(a.shape[0] for a in arrays if a.ndim == 2)
        if any(a.ndim == 2 and a.shape[0] != N for a in arrays):
            raise InputError(f"batch sizes differ: {[a.shape for a in arrays]}")
        ins = [np.ascontiguousarray(np.broadcast_to(a, (N, self.n))) for a in arrays]
        out = np.empty((N, out_size))
        self._run(fn, N, ins, out)
        return out

    def _run(self, fn: str, N: int, ins, out) -> None:
        try:
            getattr(self.module, fn)(N, *ins, out)   # checks that every input is finite
        except ValueError as exc:
            raise InputError(str(exc).replace("argument ", "")) from None

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        return self._call("inverse_dynamics", (q, qd, qdd), ("q", "qd", "qdd"), self.n)

    def bias_forces(self, q, qd) -> np.ndarray:
        return self._call("bias_forces", (q, qd), ("q", "qd"), self.n)

    def forward_dynamics(self, q, qd, tau) -> np.ndarray:
        return self._call("forward_dynamics", (q, qd, tau), ("q", "qd", "tau"), self.n)

    def mass_matrix(self, q) -> np.ndarray:
        lower = self._call("mass_matrix", (q,), ("q",), self.n * (self.n + 1) // 2)
        i, j = np.array(_lower(self.n)).T
        M = np.zeros((*lower.shape[:-1], self.n, self.n))
        M[..., i, j] = lower
        M[..., j, i] = lower
        return M

    def operation_count(self, detail: bool = False) -> dict:
        return self.symbolic.operation_count(detail)


# --- entry points ------------------------------------------------------------------------------
