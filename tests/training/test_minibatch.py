"""The packed-sort permutation behind minibatch shuffling."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training import minibatch
from jaxmarl.training.minibatch import packed_sort_plan, permutation


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 384, 6144, 8193])
def test_permutation_is_a_permutation_of_range_n(n):
    perm = permutation(jax.random.key(n), n)
    assert perm.shape == (n,) and perm.dtype == jnp.int32
    np.testing.assert_array_equal(np.sort(np.asarray(perm)), np.arange(n))


def test_permutation_same_key_same_result_under_jit_and_vmap():
    keys = jax.random.split(jax.random.key(0), 3)
    batched = jax.jit(jax.vmap(lambda k: permutation(k, 6144)))(keys)
    for i, key in enumerate(keys):
        np.testing.assert_array_equal(batched[i], permutation(key, 6144))
    assert not np.array_equal(batched[0], batched[1])  # different keys, different orders
    assert not np.array_equal(batched[0], np.arange(6144))


def test_permutation_is_uniform_over_all_orders():
    # Every one of the 4! orders of 4 elements, 24,000 draws: chi-square with 23 degrees of
    # freedom stays below 49.7 with probability 0.999 when the draws are uniform (the keys
    # are fixed, so the test is deterministic).
    draws = jax.jit(jax.vmap(lambda k: permutation(k, 4)))(
        jax.random.split(jax.random.key(1), 24_000)
    )
    index = {p: i for i, p in enumerate(itertools.permutations(range(4)))}
    counts = np.bincount([index[tuple(row)] for row in np.asarray(draws).tolist()], minlength=24)
    assert counts.min() > 0
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert chi2 < 49.7, chi2


def test_permutation_moves_every_element_uniformly_at_large_n():
    # Where element 0 lands among 8 equal slices of 6144 positions, over 4,000 draws:
    # chi-square with 7 degrees of freedom stays below 24.3 with probability 0.999.
    draws = jax.jit(jax.vmap(lambda k: permutation(k, 6144)))(
        jax.random.split(jax.random.key(2), 4_000)
    )
    landing = np.argmax(np.asarray(draws) == 0, axis=1)
    counts = np.bincount(landing // 768, minlength=8)
    chi2 = float(((counts - 500.0) ** 2 / 500.0).sum())
    assert chi2 < 24.3, chi2


@pytest.mark.parametrize("n", [2, 100, 6144, 2**16, 2**20, 2**24])
def test_enough_rounds_that_ties_in_every_round_are_improbable(n):
    position_bits, rounds = packed_sort_plan(n)
    assert 2**position_bits >= n  # positions fit in the low bits
    random_bits = 32 - position_bits
    assert random_bits * rounds >= 3 * math.log2(n)


def test_too_large_n_falls_back_to_jax_permutation(monkeypatch):
    assert packed_sort_plan(2**24)[1] is not None
    assert packed_sort_plan(2**24 + 1)[1] is None
    # The fallback path itself, on a small n made "too large" by raising the threshold
    # (a real 2**24 + 1 permutation is too slow for the suite).
    monkeypatch.setattr(minibatch, "_MIN_RANDOM_BITS", 30)
    key = jax.random.key(3)
    assert packed_sort_plan(9)[1] is None
    np.testing.assert_array_equal(permutation(key, 9), jax.random.permutation(key, 9))
    assert permutation(key, 9).dtype == jnp.int32
