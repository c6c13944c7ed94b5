"""Shuffling a batch into minibatches (one permutation per epoch)."""

from __future__ import annotations

from typing import Any

import jax


def shuffle_and_split(key: jax.Array, batch: Any, num_minibatches: int, axis: int = 0) -> Any:
    """Permute ``batch`` along ``axis`` and split it into ``num_minibatches`` equal parts.

    Every leaf must have the same size ``n`` along ``axis``, divisible by ``num_minibatches``
    (configs validate this before tracing).

    Returns:
        The same pytree with leaves ``[num_minibatches, ...]`` where the ``axis`` dimension
        becomes ``n // num_minibatches`` (moved to position ``axis + 1``).
    """
    sizes = {leaf.shape[axis] for leaf in jax.tree.leaves(batch)}
    if len(sizes) != 1:
        raise ValueError(f"all leaves need the same size along axis {axis}, got {sizes}")
    (n,) = sizes
    if n % num_minibatches:
        raise ValueError(f"batch size {n} is not divisible by num_minibatches={num_minibatches}")
    permutation = jax.random.permutation(key, n)

    def split(leaf):
        leaf = jax.numpy.take(leaf, permutation, axis=axis)
        shape = leaf.shape[:axis] + (num_minibatches, n // num_minibatches) + leaf.shape[axis + 1 :]
        return jax.numpy.moveaxis(leaf.reshape(shape), axis, 0)

    return jax.tree.map(split, batch)
