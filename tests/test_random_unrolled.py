"""``jaxmarl.random_unrolled`` draws exactly what ``jax.random`` draws (raw and typed keys,
jit, vmap)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl import random_unrolled as rng

CASES = [(0, 3, jnp.int8), (3, 10, jnp.int8), (3, 10, jnp.int32), (0, 2, jnp.int32)]


@pytest.mark.parametrize("make_key", [jax.random.key, jax.random.PRNGKey], ids=["typed", "raw"])
def test_draws_equal_jax_random(make_key):
    keys = jax.vmap(make_key)(jnp.arange(16))

    def ours(key):
        first, second = rng.split(key)
        words = [jax.random.key_data(k) for k in (first, second)]
        return words, rng.bits32(key, 18), [rng.randint(key, 6, *case) for case in CASES]

    def theirs(key):
        first, second = jax.random.split(key)
        words = [jax.random.key_data(k) for k in (first, second)]
        draws = [jax.random.randint(key, (6,), lo, hi, dt) for lo, hi, dt in CASES]
        return words, jax.random.bits(key, (18,), jnp.uint32), draws

    got, want = jax.jit(jax.vmap(ours))(keys), jax.jit(jax.vmap(theirs))(keys)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_other_generators_fall_back_to_jax_random():
    key = jax.random.key(3, impl="rbg")
    np.testing.assert_array_equal(rng.randint(key, 5, 0, 7), jax.random.randint(key, (5,), 0, 7))
    np.testing.assert_array_equal(rng.bits32(key, 4), jax.random.bits(key, (4,), jnp.uint32))
