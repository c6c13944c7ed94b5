"""The sort-free shuffles in ``envs/storm/common.py`` give ``jax.random``'s very numbers."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxmarl.envs.storm import common


@pytest.mark.parametrize("n", [1, 2, 12, 18, 21, 22, 28, 32, 33, 64, 2000])
def test_permutation_matches_jax_random(n):
    keys = jax.random.split(jax.random.key(n), 4)
    ours = jax.jit(jax.vmap(lambda k: common.permutation(k, n)))(keys)
    theirs = jax.vmap(lambda k: jax.random.permutation(k, n))(keys)
    np.testing.assert_array_equal(ours, theirs)
    first = jax.jit(jax.vmap(lambda k: common.first_of_permutation(k, n)))(keys)
    np.testing.assert_array_equal(first, theirs[:, 0])


def test_sorted_subset_is_the_sorted_head_of_the_permutation():
    keys = jax.random.split(jax.random.key(0), 16)
    ours = jax.jit(jax.vmap(lambda k: common.sorted_subset(k, 18, 8, 5)))(keys)
    theirs = np.sort(np.asarray(jax.vmap(lambda k: jax.random.permutation(k, 18))(keys))[:, :8])
    np.testing.assert_array_equal(ours, theirs[:, :5])
    assert len({tuple(row) for row in np.asarray(ours)}) > 1
