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


def sequence_minibatches(
    key: jax.Array, steps: Any, carries: Any, num_minibatches: int, recurrent: bool
) -> tuple[Any, Any]:
    """Minibatches of time-major data ``[T, N, ...]`` with recurrent states ``[N, H]``.

    Recurrent: ``N / M`` whole sequences each, with their initial states. Feed-forward: every
    step is an independent sample, so ``T * N / M`` samples each, shaped as one-step sequences
    ``[1, S, ...]`` with zero states.

    Returns:
        ``(steps [M, T', N', ...], carries [M, N', H])``.
    """
    if recurrent:
        # States ride along as a length-1 time axis so one permutation moves everything.
        split_steps, split_carries = shuffle_and_split(
            key, (steps, jax.tree.map(lambda c: c[None], carries)), num_minibatches, axis=1
        )
        return split_steps, jax.tree.map(lambda c: c[:, 0], split_carries)
    samples = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), steps)
    split = shuffle_and_split(key, samples, num_minibatches, axis=0)  # [M, S, ...]
    split = jax.tree.map(lambda x: x[:, None], split)  # [M, 1, S, ...]
    size = jax.tree.leaves(split)[0].shape[2]
    zeros = jax.tree.map(
        lambda c: jax.numpy.zeros((num_minibatches, size, c.shape[-1]), c.dtype), carries
    )
    return split, zeros
