"""The compiled path of :func:`rbd.simulate`: whole fixed-step runs in the kernels.

A fixed-step run (``"euler"`` or ``"rk4"``) whose joint force the kernels can
evaluate themselves - none, constant, a table per step, a :class:`PD` law,
the damping, a constant ``f_ext`` - and which has no events runs inside
``CompiledModel.rollout`` (``rbd/_kernels/rollout.pyx``) without the GIL:
the same steps as :mod:`rbd.simulation.integrators`, equal to round-off.
A batch of initial states runs there in threads.  Everything else (callables,
events and impacts, ``solve_ivp``, ``backend="reference"``, models with mimic
joints) takes the Python path of :mod:`rbd.simulation.drivers`.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, algorithms
from ..model import Model
from .control import Forcing
from .trajectory import Trajectory

__all__ = ["grid_times", "compiled_kernel", "run_compiled", "sample_indices"]


def grid_times(duration: float, dt: float) -> np.ndarray:
    """The fixed-step grid of the Python driver: ``k dt``, the last one clipped to ``duration``.

    The same times as :meth:`rbd.simulation.drivers.Run.grid` (steps end where
    ``k dt > duration - 1e-9 dt``).
    """
    if duration <= 0:
        return np.zeros(1)
    n = int(np.ceil(duration / dt)) + 2
    t = np.arange(n, dtype=float) * dt
    t[1:] = np.where(t[1:] > duration - 1e-9 * dt, duration, t[1:])
    last = 1 + int(np.argmax(t[1:] >= duration))
    return t[:last + 1]


def sample_indices(steps: int, stride: int) -> np.ndarray:
    """Steps after which a sample is kept: every ``stride``-th and the last (0 included)."""
    idx = np.arange(0, steps + 1, stride)
    return idx if idx[-1] == steps else np.append(idx, steps)


def compiled_kernel(model: Model, backend, integrator: str, tau, f_ext, events) -> object:
    """The :class:`CompiledModel` that can run this simulation whole, or None."""
    if integrator not in ("euler", "rk4") or events:
        return None
    if callable(tau) and not isinstance(tau, Forcing):
        return None
    if callable(f_ext) or _backend.resolve(backend) != "kernel" or model._mimic:
        return None
    kernel = algorithms._kernel(model, backend)
    return kernel if kernel is not None and hasattr(kernel, "rollout") else None


def run_compiled(kernel, model: Model, q0, v0, times: np.ndarray, dt: float, integrator: str,
                 forcing: Forcing | None, f_ext, stride: int, keep_tau: bool,
                 num_threads: int | None):
    """Run ``CompiledModel.rollout``; return ``(trajectory, status)``.

    ``status`` is 0, or -1 (an int array for a batch) where a rollout diverged.
    """
    f = forcing or Forcing()
    q, v, a, tau, kinetic, potential, status = kernel.rollout(
        q0, v0, times, rk4=integrator == "rk4", stride=stride, tau=f.tau, f_ext=f_ext,
        q_ref=f.q_ref, kp=f.kp, kd=f.kd, damping=f.damping, keep_tau=keep_tau,
        num_threads=num_threads)
    steps = len(times) - 1
    traj = Trajectory(t=times[sample_indices(steps, stride)], q=q, v=v, a=a, kinetic=kinetic,
                      potential=potential, tau=tau, model_name=model.name,
                      integrator=integrator, dt=dt,
                      steps=steps, evaluations=1 + steps * (4 if integrator == "rk4" else 1))
    return traj, status
