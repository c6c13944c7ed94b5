"""The in-jit circular replay buffer: add, wraparound, uniform sampling, jit/vmap."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training import replay


def items(start, count):
    """Items whose every leaf encodes its index (so we can see where it went)."""
    ids = jnp.arange(start, start + count, dtype=jnp.float32)
    return {"obs": ids[:, None, None] * jnp.ones((count, 3, 2)), "action": ids.astype(jnp.int32)}


EXAMPLE = {"obs": jnp.zeros((3, 2)), "action": jnp.int32(0)}


def test_init_is_empty_with_fixed_shapes():
    buffer = replay.init(EXAMPLE, 5)
    assert buffer.capacity == 5
    assert buffer.data["obs"].shape == (5, 3, 2) and buffer.data["action"].dtype == jnp.int32
    assert int(buffer.size) == 0 and int(buffer.position) == 0
    assert not bool(replay.can_sample(buffer, 1))


def test_add_fills_in_order_and_wraps_around():
    buffer = replay.init(EXAMPLE, 5)
    buffer = replay.add(buffer, items(0, 3))  # slots 0..2
    assert int(buffer.size) == 3 and int(buffer.position) == 3
    buffer = replay.add(buffer, items(3, 3))  # slots 3, 4, then 0 (oldest overwritten)
    assert int(buffer.size) == 5 and int(buffer.position) == 1
    np.testing.assert_array_equal(buffer.data["action"], [5, 1, 2, 3, 4])
    np.testing.assert_array_equal(buffer.data["obs"][:, 0, 0], [5, 1, 2, 3, 4])
    assert bool(replay.can_sample(buffer, 5)) and not bool(replay.can_sample(buffer, 6))


def test_sample_only_written_items_uniformly():
    buffer = replay.add(replay.init(EXAMPLE, 10), items(0, 4))
    batch = replay.sample(buffer, jax.random.key(0), 4000)
    ids = np.asarray(batch["action"])
    assert set(ids.tolist()) == {0, 1, 2, 3}  # never the empty slots 4..9
    counts = np.bincount(ids, minlength=4)
    assert counts.min() > 900 and counts.max() < 1100
    np.testing.assert_array_equal(batch["obs"][:, 0, 0], ids.astype(np.float32))  # whole items


def test_adding_more_than_capacity_is_an_error():
    with pytest.raises(ValueError, match="capacity 2"):
        replay.add(replay.init(EXAMPLE, 2), items(0, 3))
    with pytest.raises(ValueError, match="capacity must be >= 1"):
        replay.init(EXAMPLE, 0)


def test_jit_and_vmap_over_seeds_match_single_buffers():
    add_sample = lambda buffer, new, key: (
        replay.add(buffer, new),
        replay.sample(replay.add(buffer, new), key, 3),
    )
    buffers = jax.vmap(lambda _: replay.init(EXAMPLE, 4))(jnp.arange(2))
    new = jax.tree.map(lambda a, b: jnp.stack([a, b]), items(0, 3), items(10, 3))
    keys = jax.random.split(jax.random.key(3), 2)
    batched = jax.jit(jax.vmap(add_sample))(buffers, new, keys)
    for seed in range(2):
        single = add_sample(
            replay.init(EXAMPLE, 4), jax.tree.map(lambda x: x[seed], new), keys[seed]
        )
        chex.assert_trees_all_equal(jax.tree.map(lambda x: x[seed], batched), single)
