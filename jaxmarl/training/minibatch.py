"""Dealing a batch into minibatches: stratified in blocks, so that it splits over devices.

A batch of ``U`` units (whole sequences, or single steps) goes into ``M`` minibatches of
``U / M`` units. The units are cut into blocks of ``M`` consecutive ones, and each block deals
one unit to every minibatch in an order drawn from ``fold_in(key, block index)``. Every unit
lands in exactly one minibatch, uniformly at random, and every minibatch draws evenly from the
whole batch (stratified sampling, which never has more variance than a plain shuffle).

Why blocks, and not one permutation of the whole batch (PureJaxRL's way): a device that holds a
contiguous share of whole blocks builds its part of every minibatch from its own units and its
own block indices, with no data exchanged, and the union over devices is exactly the minibatch
one device would build (``jaxmarl.training.data_parallel``). One rule serves one device and
many, so results do not depend on the device count.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxmarl.training.data_parallel import SINGLE, DataShards


def block_deal(key: jax.Array, num_units: int, num_minibatches: int, first_unit=0) -> jax.Array:
    """``[M, U / M]`` int32 local unit indices: minibatch ``m`` takes unit ``idx[m, b]`` of
    block ``b``.

    Args:
        key: one key per epoch (the same on every device).
        num_units: ``U`` units held here, a multiple of ``num_minibatches``.
        num_minibatches: ``M``.
        first_unit: global index of the first unit held here (a multiple of ``M``; traced
            under a data split), which numbers the blocks.
    """
    if num_units % num_minibatches:
        raise ValueError(f"{num_units} units do not split into num_minibatches={num_minibatches}")
    blocks = num_units // num_minibatches
    block_ids = first_unit // num_minibatches + jnp.arange(blocks, dtype=jnp.int32)
    bits = jax.vmap(lambda i: jax.random.bits(jax.random.fold_in(key, i), (num_minibatches,)))(
        block_ids
    )  # [blocks, M]
    order = jnp.argsort(bits, axis=-1, stable=True).astype(jnp.int32)  # a permutation per block
    starts = num_minibatches * jnp.arange(blocks, dtype=jnp.int32)
    return (starts[:, None] + order).T  # [M, blocks]


def deal(key: jax.Array, batch: Any, num_minibatches: int, axis: int = 0, first_unit=0) -> Any:
    """Deal ``batch``'s units along ``axis`` into ``num_minibatches`` (``block_deal``).

    Every leaf must have the same size along ``axis``. Returns the same pytree with leaves
    ``[M, ...]``, the ``axis`` dimension becoming ``U / M`` (at position ``axis + 1``).
    """
    sizes = {leaf.shape[axis] for leaf in jax.tree.leaves(batch)}
    if len(sizes) != 1:
        raise ValueError(f"all leaves need the same size along axis {axis}, got {sizes}")
    (units,) = sizes
    index = block_deal(key, units, num_minibatches, first_unit)
    return jax.tree.map(lambda leaf: jnp.moveaxis(jnp.take(leaf, index, axis=axis), axis, 0), batch)


def sequence_minibatches(
    key: jax.Array,
    steps: Any,
    carries: Any,
    num_minibatches: int,
    recurrent: bool,
    data: DataShards = SINGLE,
) -> tuple[Any, Any]:
    """Minibatches of time-major data ``[T, N, ...]`` with recurrent states ``[N, ...]``.

    Recurrent: ``N / M`` whole sequences each, with their initial states. Feed-forward: every
    step is an independent sample, so ``T * N / M`` samples each (units taken sequence by
    sequence, so a block is ``M`` steps of one sequence when ``M`` divides ``T``), shaped as
    one-step sequences ``[1, S, ...]`` with zero states. A unit ``n`` may hold several sequences
    (e.g. every agent of an env: ``[T, N, A, ...]`` and states ``[N, A, H]``); they stay together.
    ``data``: the ``N`` sequences here are this device's share of a split batch.

    Returns:
        ``(steps [M, T', N', ...], carries [M, N', ...])``.
    """
    num_steps, num_seqs = jax.tree.leaves(steps)[0].shape[:2]
    if recurrent:
        first = data.first(num_seqs * data.count)
        # States ride along as a length-1 time axis so one deal moves everything.
        split_steps, split_carries = deal(
            key, (steps, jax.tree.map(lambda c: c[None], carries)), num_minibatches, 1, first
        )
        return split_steps, jax.tree.map(lambda c: c[:, 0], split_carries)
    # Sequence-major samples: this device's are a contiguous range of the global ones.
    samples = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1).reshape((-1, *x.shape[2:])), steps)
    first = data.first(num_seqs * data.count) * num_steps
    split = deal(key, samples, num_minibatches, 0, first)  # [M, S, ...]
    split = jax.tree.map(lambda x: x[:, None], split)  # [M, 1, S, ...]
    size = jax.tree.leaves(split)[0].shape[2]
    zeros = jax.tree.map(
        lambda c: jnp.zeros((num_minibatches, size, *c.shape[1:]), c.dtype), carries
    )
    return split, zeros
