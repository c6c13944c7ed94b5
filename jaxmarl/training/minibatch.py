"""Shuffling a batch into minibatches (one permutation per epoch)."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

# Below this many random bits per element the packed sort needs too many rounds to pay off.
_MIN_RANDOM_BITS = 8


def permutation(key: jax.Array, n: int) -> jax.Array:
    """A uniformly random permutation of ``range(n)`` (int32 ``[n]``), cheap on CPU.

    ``jax.random.permutation`` sorts (random key, index) pairs, and XLA's CPU sort of a
    key/value pair is much slower than its sort of one unsigned-integer array (PPO shuffles
    every epoch). Here each element's random bits and its position share one ``uint32``
    (position in the low bits), so a plain sort orders by the random bits and the low bits
    read off the permutation. Elements whose random bits tie keep
    their current order, exactly like a stable sort on the random key alone; as in
    ``jax.random.permutation``, enough rounds (each re-sorting the current order with fresh
    bits) are taken that ``2 ** (random_bits * rounds) >= n ** 3``, which makes a tie in every
    round improbable. Falls back to ``jax.random.permutation`` when ``n`` leaves fewer than
    8 random bits (``n > 2 ** 24``). Streams differ from ``jax.random.permutation``'s.
    """
    if n <= 1:
        return jnp.arange(n, dtype=jnp.int32)
    position_bits, rounds = packed_sort_plan(n)
    if rounds is None:
        return jax.random.permutation(key, n).astype(jnp.int32)
    positions = jnp.arange(n, dtype=jnp.uint32)
    low_mask = jnp.uint32((1 << position_bits) - 1)
    order = jnp.arange(n, dtype=jnp.int32)
    for round_key in jax.random.split(key, rounds):
        bits = jax.random.bits(round_key, (n,), jnp.uint32)
        packed = jax.lax.shift_left(bits, jnp.uint32(position_bits)) | positions
        picked = (jax.lax.sort(packed) & low_mask).astype(jnp.int32)
        order = order[picked]
    return order


def packed_sort_plan(n: int) -> tuple[int, int | None]:
    """``(position_bits, rounds)`` for ``permutation`` of ``n > 1`` elements; ``rounds`` is
    ``None`` where too few random bits are left and ``jax.random.permutation`` is used."""
    position_bits = (n - 1).bit_length()
    random_bits = 32 - position_bits
    if random_bits < _MIN_RANDOM_BITS:
        return position_bits, None
    return position_bits, math.ceil(3 * math.log2(n) / random_bits)


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
    order = permutation(key, n)

    def split(leaf):
        leaf = jnp.take(leaf, order, axis=axis)
        shape = leaf.shape[:axis] + (num_minibatches, n // num_minibatches) + leaf.shape[axis + 1 :]
        return jnp.moveaxis(leaf.reshape(shape), axis, 0)

    return jax.tree.map(split, batch)


def sequence_minibatches(
    key: jax.Array, steps: Any, carries: Any, num_minibatches: int, recurrent: bool
) -> tuple[Any, Any]:
    """Minibatches of time-major data ``[T, N, ...]`` with recurrent states ``[N, ...]``.

    Recurrent: ``N / M`` whole sequences each, with their initial states. Feed-forward: every
    step is an independent sample, so ``T * N / M`` samples each, shaped as one-step sequences
    ``[1, S, ...]`` with zero states. A unit ``n`` may hold several sequences (e.g. every agent
    of an env: ``[T, N, A, ...]`` and states ``[N, A, H]``); they stay together.

    Returns:
        ``(steps [M, T', N', ...], carries [M, N', ...])``.
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
        lambda c: jnp.zeros((num_minibatches, size, *c.shape[1:]), c.dtype), carries
    )
    return split, zeros
