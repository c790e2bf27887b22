"""The value checks of a batch, run block by block in the batch's threads.

A stacked call on the kernels (``rbd.aba(model, Q, V, TAU)`` with ``(N, nv)``
arrays) checks that its inputs are finite and that the quaternions of ``q`` are
unit within the tolerance while the threads run the states
(``rbd/_kernels/_args.pyx``, ``check_rows``), not in a pass over the whole arrays
before them.  These tests hold that this changes nothing a caller sees: a bad value
in any block, found by any thread, is refused with the error a one-state call
gives, the first argument in argument order wins as when each argument is checked
whole before the next, input errors come before a singular pivot, quaternions are
normalized in a copy (the caller's ``q`` is not written), and the result does not
depend on the thread count or on the lanes.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_LANES

import rbd

pytestmark = pytest.mark.usefixtures("require_kernels")

#: States per batch: 5 blocks of W = 8 lanes and a partly filled sixth, so that with two
#: threads the first and the last block are run by different threads (dynamic chunks).
N_STATES = 43


@pytest.fixture(params=["off", "lanes"])
def path(request):
    """Run a test on the one-state kernel state by state (``off``) and in lanes."""
    from rbd._kernels import _model, _simd

    previous = _model.simd()
    _model.set_simd("off" if request.param == "off" else _simd.at_import())
    yield request.param
    _model.set_simd(previous)


@pytest.fixture(params=[1, 2])
def threads(request):
    """The thread count of the arm7 and humanoid kernels for one test."""
    kernels = [rbd.algorithms.compiled(m) for m in (ARM7, HUMANOID)]
    saved = [k.num_threads for k in kernels]
    for k in kernels:
        k.num_threads = request.param
    yield request.param
    for k, n in zip(kernels, saved, strict=True):
        k.num_threads = n


ARM7 = rbd.models.arm7()
HUMANOID = rbd.models.humanoid()


def batch(model, n: int = N_STATES, seed: int = 0):
    rng = np.random.default_rng(seed)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(n)])
    V, T = rng.normal(size=(2, n, model.nv))
    F = rng.normal(size=(n, model.nbodies, 6))
    return Q, V, T, F


def message(call, *args) -> str:
    with pytest.raises(rbd.InputError) as info:
        call(*args)
    return str(info.value)


@pytest.mark.parametrize("argument", [0, 1, 2, 3])
@pytest.mark.parametrize("state", [0, N_STATES - 1])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_entry_in_any_block_is_refused_as_in_one_state(argument, state, bad,
                                                                    path, threads):
    Q, V, T, F = batch(ARM7)
    inputs = [Q, V, T, F]
    inputs[argument][state].flat[-1] = bad
    saved = [x.copy() for x in inputs]
    one_state = message(rbd.aba, ARM7, *(x[state] for x in inputs))
    assert one_state == f"{('q', 'v', 'tau', 'f_ext')[argument]} has non-finite entries"
    assert message(rbd.aba, ARM7, *inputs) == one_state
    if argument < 3:
        rnea_one = message(rbd.rnea, ARM7, *(x[state] for x in inputs[:3]))
        assert message(rbd.rnea, ARM7, *inputs[:3]) == rnea_one.replace("tau", "a")
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(inputs, saved, strict=True))


def test_the_first_bad_argument_is_named_wherever_its_state_is(path, threads):
    """A bad ``v`` in the first block and a bad ``q`` in the last: ``q`` is named, as when
    ``q`` is checked whole before ``v``; likewise ``v`` before ``tau`` and ``f_ext``."""
    Q, V, T, F = batch(ARM7)
    V[0, 0], Q[-1, 0] = np.nan, np.inf
    assert message(rbd.aba, ARM7, Q, V, T, F) == "q has non-finite entries"
    Q[-1, 0] = 0.0
    T[0, 0], F[0, 0, 0] = np.nan, np.nan
    V[0, 0], V[-1, 0] = 0.0, np.inf
    assert message(rbd.aba, ARM7, Q, V, T, F) == "v has non-finite entries"


def test_a_value_error_comes_before_a_later_argument_shape_error(path, threads):
    Q, V, T, F = batch(ARM7)
    Q[-1, 3] = np.nan
    assert message(rbd.aba, ARM7, Q, V[:, :-1], T) == "q has non-finite entries"
    assert message(rbd.aba, ARM7, Q, V, T, F[:, :-1]) == "q has non-finite entries"
    assert message(rbd.aba, ARM7, Q, V, T[:-1]) == "q has non-finite entries"
    # a shared (one-state) v with a bad entry, after a bad q of the batch
    assert message(rbd.aba, ARM7, Q, np.full(ARM7.nv, np.nan), T) == "q has non-finite entries"
    Q[-1, 3] = 0.0
    V[-1, 0] = np.nan
    assert message(rbd.aba, ARM7, Q, V, T[:-1]) == "v has non-finite entries"
    assert message(rbd.aba, ARM7, Q, V, T, F[:, :-1]) == "v has non-finite entries"


@pytest.mark.parametrize("state", [0, N_STATES - 1])
def test_a_quaternion_off_the_unit_sphere_is_refused_as_in_one_state(state, path, threads):
    Q, V, T, _ = batch(HUMANOID)
    Q[state, 3:7] *= 1.5  # the free joint's quaternion (x, y, z, w)
    one_state = message(rbd.aba, HUMANOID, Q[state], V[state], T[state])
    assert "has norm 1.5, not 1" in one_state
    assert message(rbd.aba, HUMANOID, Q, V, T) == one_state
    assert message(rbd.rnea, HUMANOID, Q, V, T) == one_state
    # a non-finite v in a block before it does not hide it (q is checked first)
    V[0, 0] = np.nan
    assert message(rbd.rnea, HUMANOID, Q, V, T) == one_state


def test_quaternions_near_unit_are_normalized_in_a_copy(path, threads):
    """Quaternions scaled by 1 + 1e-7 (within the tolerance): each state's result is that of
    the one-state call, which normalizes them (an unnormalized quaternion would change it
    by about 1e-7); state by state (``off``) to the bit, in lanes to their tolerance."""
    Q, V, T, _ = batch(HUMANOID)
    Q[:, 3:7] *= 1 + 1e-7
    saved = Q.copy()
    for fn in (rbd.aba, rbd.rnea):
        got = fn(HUMANOID, Q, V, T)
        one = np.array([fn(HUMANOID, Q[k], V[k], T[k]) for k in range(len(Q))])
        if path == "off":
            assert np.array_equal(got, one), fn.__name__
        else:
            assert rbd.testing.relative_difference(got, one) <= RTOL_LANES, fn.__name__
    got = rbd.aba(HUMANOID, Q, V, T, pivot="modified")
    assert np.array_equal(got, [rbd.aba(HUMANOID, Q[k], V[k], T[k], pivot="modified")
                                for k in range(len(Q))])
    assert np.array_equal(Q, saved)


def test_an_input_error_comes_before_a_singular_pivot(path, threads):
    """A massless body makes every state singular; a bad ``tau`` in the last state is still
    the error, as when the inputs are checked before any state runs."""
    model = rbd.Model(name="massless")
    body = model.add_body(-1, rbd.joints.Revolute([0, 0, 1]), None,
                          (1.0, np.zeros(3), np.eye(3)), "b1", "j1")
    model.add_body(body, rbd.joints.Revolute([1, 0, 0]), None,
                   (0.0, np.zeros(3), np.zeros((3, 3))), "b2", "j2")
    rbd.algorithms.compiled(model).num_threads = threads
    Q, V, T, _ = batch(model)
    with pytest.raises(rbd.ModelError):
        rbd.aba(model, Q, V, T)
    T[-1, 1] = np.nan
    assert message(rbd.aba, model, Q, V, T) == "tau has non-finite entries"


def test_one_and_two_threads_give_the_same_bits(path):
    Q, V, T, F = batch(HUMANOID, n=61, seed=4)
    kernel = rbd.algorithms.compiled(HUMANOID)
    saved, out = kernel.num_threads, []
    try:
        for n in (1, 2):
            kernel.num_threads = n
            out.append((rbd.aba(HUMANOID, Q, V, T, F), rbd.rnea(HUMANOID, Q, V, T),
                        rbd.kinetic_energy(HUMANOID, Q, V),
                        rbd.aba(HUMANOID, Q, V, T, pivot="modified")))
    finally:
        kernel.num_threads = saved
    assert all(np.array_equal(x, y) for x, y in zip(*out, strict=True))
