"""Dealing a batch into minibatches: stratified in blocks, the same on one device or several."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training.data_parallel import DATA_AXIS, DataShards
from jaxmarl.training.minibatch import (
    Minibatches,
    block_deal,
    deal,
    sequence_deal,
    sequence_minibatches,
)


@pytest.mark.parametrize("units, m", [(4, 4), (12, 3), (384, 4), (6144, 8)])
def test_every_unit_lands_in_exactly_one_minibatch_one_per_block(units, m):
    index = np.asarray(block_deal(jax.random.key(units), units, m))
    assert index.shape == (m, units // m) and index.dtype == np.int32
    np.testing.assert_array_equal(np.sort(index.ravel()), np.arange(units))
    # Stratified: minibatch m takes exactly one unit of every block of m consecutive units.
    np.testing.assert_array_equal(index // m, np.broadcast_to(np.arange(units // m), index.shape))


def test_same_key_same_deal_under_jit_and_vmap_and_keys_differ():
    keys = jax.random.split(jax.random.key(0), 3)
    batched = jax.jit(jax.vmap(lambda k: block_deal(k, 64, 4)))(keys)
    for i, key in enumerate(keys):
        np.testing.assert_array_equal(batched[i], block_deal(key, 64, 4))
    assert not np.array_equal(batched[0], batched[1])


def test_each_block_is_dealt_uniformly_over_all_orders():
    # Every one of the 4! orders of a block, 24,000 blocks: chi-square with 23 degrees of
    # freedom stays below 49.7 with probability 0.999 when the deal is uniform (fixed key, so
    # the test is deterministic).
    index = np.asarray(block_deal(jax.random.key(1), 4 * 24_000, 4))  # [4, blocks]
    orders = index.T % 4  # the block's order: which unit goes to minibatch 0, 1, 2, 3
    lookup = {p: i for i, p in enumerate(itertools.permutations(range(4)))}
    counts = np.bincount([lookup[tuple(row)] for row in orders.tolist()], minlength=24)
    chi2 = float(((counts - 1000.0) ** 2 / 1000.0).sum())
    assert chi2 < 49.7, chi2


def test_a_unit_count_that_does_not_split_is_a_clear_error():
    with pytest.raises(ValueError, match="10 units do not split into num_minibatches=4"):
        block_deal(jax.random.key(0), 10, 4)


def test_deal_keeps_rows_together_along_any_axis():
    batch = {"a": jnp.arange(12), "b": jnp.arange(24).reshape(12, 2)}
    split = deal(jax.random.key(0), batch, 3)
    assert split["a"].shape == (3, 4) and split["b"].shape == (3, 4, 2)
    np.testing.assert_array_equal(split["b"][..., 0], 2 * split["a"])
    time_major = jnp.arange(30).reshape(3, 10)
    split_t = deal(jax.random.key(1), time_major, 5, axis=1)
    assert split_t.shape == (5, 3, 2)
    np.testing.assert_array_equal(split_t[:, 1] - split_t[:, 0], 10)  # sequences kept whole


def test_sequence_minibatches_keep_sequences_or_split_samples():
    steps = {"x": jnp.arange(3 * 4).reshape(3, 4)}  # [T=3, N=4], value = 4t + n
    carries = jnp.arange(4.0)[:, None] * jnp.ones((4, 2))  # [N, H=2], row n holds n
    seq, seq_carry = sequence_minibatches(jax.random.key(0), steps, carries, 2, recurrent=True)
    assert seq["x"].shape == (2, 3, 2) and seq_carry.shape == (2, 2, 2)
    np.testing.assert_array_equal(seq["x"][:, 1] - seq["x"][:, 0], 4)
    np.testing.assert_array_equal(seq["x"][:, 0], seq_carry[..., 0])
    flat, zeros = sequence_minibatches(jax.random.key(0), steps, carries, 2, recurrent=False)
    assert flat["x"].shape == (2, 1, 6) and zeros.shape == (2, 6, 2)
    assert sorted(np.asarray(flat["x"]).ravel().tolist()) == list(range(12))
    assert float(jnp.abs(zeros).sum()) == 0.0


def test_feed_forward_samples_are_dealt_in_sequence_major_order():
    # Gathered straight from the time-major rows, yet sample u is step u % T of sequence
    # u // T, dealt by block_deal: the same minibatches as dealing the transposed batch.
    steps = {"x": jnp.arange(6 * 8 * 2).reshape(6, 8, 2)}  # [T=6, N=8, 2]
    key = jax.random.key(5)
    flat, _ = sequence_minibatches(key, steps, jnp.zeros((8, 1)), 4, recurrent=False)
    samples = jnp.swapaxes(steps["x"], 0, 1).reshape(48, 2)
    np.testing.assert_array_equal(flat["x"][:, 0], deal(key, samples, 4))


@pytest.mark.parametrize("recurrent", [True, False])
def test_lazy_minibatches_gather_what_the_block_deal_names(recurrent):
    # Reference written with NumPy from block_deal's indices alone (the eager deal before the
    # lazy one): recurrent minibatch m is sequences idx[m] with their carries; feed-forward
    # minibatch m is samples idx[m] of the sequence-major order (sample u = step u % T of
    # sequence u // T), with zero carries.
    steps = {"x": jnp.arange(6 * 8.0).reshape(6, 8), "y": jnp.arange(6 * 8 * 3).reshape(6, 8, 3)}
    carries = jnp.arange(8.0)[:, None] * jnp.ones((8, 2))
    key = jax.random.key(4)
    dealt = sequence_deal(key, steps, carries, 4, recurrent)
    x, y, c = (np.asarray(a) for a in (steps["x"], steps["y"], carries))
    if recurrent:
        idx = np.asarray(block_deal(key, 8, 4))
        expected = [({"x": x[:, i], "y": y[:, i]}, c[i]) for i in idx]
    else:
        idx = np.asarray(block_deal(key, 48, 4))
        xs, ys = x.T.reshape(48), np.swapaxes(y, 0, 1).reshape(48, 3)
        expected = [({"x": xs[i][None], "y": ys[i][None]}, np.zeros((12, 2))) for i in idx]
    for m in range(4):
        one = jax.jit(dealt.build)(jax.tree.map(lambda i, m=m: i[m], dealt.index))
        jax.tree.map(np.testing.assert_array_equal, one, expected[m])
    stacked = sequence_minibatches(key, steps, carries, 4, recurrent)
    jax.tree.map(
        np.testing.assert_array_equal, stacked, jax.tree.map(lambda *a: np.stack(a), *expected)
    )
    # Merged with an already stacked pytree: minibatch m of each, by name.
    merged = Minibatches.merge({"lazy": dealt, "stacked": {"z": jnp.arange(4)}})
    both = merged.build(jax.tree.map(lambda i: i[2], merged.index))
    np.testing.assert_array_equal(both["lazy"][0]["x"], stacked[0]["x"][2])
    assert int(both["stacked"]["z"]) == 2


@pytest.mark.parametrize("recurrent", [True, False])
@pytest.mark.parametrize("devices", [2, 4])
def test_devices_deal_their_share_of_the_one_device_minibatches(recurrent, devices):
    # 8 sequences of 6 steps; each of `devices` devices holds a contiguous share of them and
    # deals its own: together they are exactly the minibatches of one device.
    steps = {"x": jnp.arange(6 * 8).reshape(6, 8)}
    carries = jnp.arange(8.0)[:, None]
    key = jax.random.key(3)
    whole, whole_carry = sequence_minibatches(key, steps, carries, 2, recurrent)

    def device(steps, carries):
        return sequence_minibatches(key, steps, carries, 2, recurrent, DataShards(devices))

    shares = lambda x, axis: jnp.stack(jnp.split(x, devices, axis=axis))
    parts, part_carry = jax.vmap(device, axis_name=DATA_AXIS)(
        {"x": shares(steps["x"], 1)}, shares(carries, 0)
    )  # [D, M, T', n', ...]
    unit_axis = 2
    merged = np.concatenate(list(np.asarray(parts["x"])), axis=unit_axis)
    for m in range(2):  # same units in each minibatch (order within a minibatch is free)
        assert sorted(merged[m].T.tolist()) == sorted(np.asarray(whole["x"][m]).T.tolist())
    if recurrent:
        merged_carry = np.concatenate(list(np.asarray(part_carry)), axis=1)
        for m in range(2):
            assert sorted(merged_carry[m, :, 0]) == sorted(np.asarray(whole_carry[m, :, 0]))
