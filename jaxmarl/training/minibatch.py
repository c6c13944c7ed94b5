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

The deal is lazy (``Minibatches``): it draws every minibatch's unit indices up front, and the
SGD loop (``jaxmarl.training.sgd``) gathers minibatch ``m`` from the batch when it reaches it.
Stacking all ``M`` minibatches first and slicing them in the loop gives the same numbers but
moves the whole batch through memory twice more per epoch (the stacked copy, then each
slice), which on CPU costs more than the gradients when observations are wide.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp

from jaxmarl.training.data_parallel import SINGLE, DataShards


@dataclasses.dataclass(frozen=True)
class Minibatches:
    """``M`` minibatches, each gathered from the batch only when asked for.

    Attributes:
        index: a pytree with a leading ``[M]`` axis on every leaf (what the SGD loop scans).
        build: ``index[m] -> minibatch m`` (gathers from the batch it closes over).
    """

    index: Any
    build: Callable[[Any], Any]

    @classmethod
    def of(cls, minibatches: Any) -> Minibatches:
        """``minibatches`` as they are if lazy; a stacked pytree ``[M, ...]`` wrapped."""
        if isinstance(minibatches, Minibatches):
            return minibatches
        return cls(minibatches, lambda minibatch: minibatch)

    @classmethod
    def merge(cls, parts: Mapping[str, Any]) -> Minibatches:
        """One ``Minibatches`` of dicts from a dict of them (lazy or stacked; the same ``M``):
        minibatch ``m`` is ``{name: minibatch m of parts[name]}``."""
        lazy = {name: cls.of(part) for name, part in parts.items()}
        return cls(
            {name: part.index for name, part in lazy.items()},
            lambda index: {name: part.build(index[name]) for name, part in lazy.items()},
        )

    def map(self, fn: Callable[[Any], Any]) -> Minibatches:
        """The same minibatches with ``fn`` applied to each one as it is built."""
        return Minibatches(self.index, lambda index: fn(self.build(index)))

    def stacked(self) -> Any:
        """Every minibatch at once, leaves ``[M, ...]`` (the same values ``build`` gives)."""
        return jax.vmap(self.build)(self.index)


def _take(leaf: jax.Array, index: jax.Array, axis: int) -> jax.Array:
    # The indices are in range by construction; "clip" is XLA's own gather (jnp.take's default
    # "fill" adds a select on every element gathered, for out-of-range indices).
    return jnp.take(leaf, index, axis=axis, mode="clip", unique_indices=True)


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
    return lazy_deal(key, batch, num_minibatches, axis, first_unit).stacked()


def lazy_deal(
    key: jax.Array, batch: Any, num_minibatches: int, axis: int = 0, first_unit=0
) -> Minibatches:
    """``deal`` as ``Minibatches``: minibatch ``m`` has ``batch``'s leaves with the ``axis``
    dimension ``U / M`` (no leading ``[M]``)."""
    sizes = {leaf.shape[axis] for leaf in jax.tree.leaves(batch)}
    if len(sizes) != 1:
        raise ValueError(f"all leaves need the same size along axis {axis}, got {sizes}")
    (units,) = sizes
    index = block_deal(key, units, num_minibatches, first_unit)
    return Minibatches(index, lambda i: jax.tree.map(lambda leaf: _take(leaf, i, axis), batch))


def sequence_minibatches(*args, **kwargs) -> tuple[Any, Any]:
    """``sequence_deal(*args, **kwargs)`` stacked, as before the lazy deal:
    ``(steps [M, T', N', ...], carries [M, N', ...])``."""
    return sequence_deal(*args, **kwargs).stacked()


def sequence_deal(
    key: jax.Array,
    steps: Any,
    carries: Any,
    num_minibatches: int,
    recurrent: bool,
    data: DataShards = SINGLE,
) -> Minibatches:
    """Minibatches of time-major data ``[T, N, ...]`` with recurrent states ``[N, ...]``.

    Recurrent: ``N / M`` whole sequences each, with their initial states. Feed-forward: every
    step is an independent sample, so ``T * N / M`` samples each (units taken sequence by
    sequence, so a block is ``M`` steps of one sequence when ``M`` divides ``T``), shaped as
    one-step sequences ``[1, S, ...]`` with zero states. A unit ``n`` may hold several sequences
    (e.g. every agent of an env: ``[T, N, A, ...]`` and states ``[N, A, H]``); they stay together.
    ``data``: the ``N`` sequences here are this device's share of a split batch.

    Returns:
        ``Minibatches`` of ``(steps [T', N', ...], carries [N', ...])``.
    """
    num_steps, num_seqs = jax.tree.leaves(steps)[0].shape[:2]
    if recurrent:
        first = data.first(num_seqs * data.count)
        # States ride along as a length-1 time axis so one deal moves everything.
        dealt = lazy_deal(
            key, (steps, jax.tree.map(lambda c: c[None], carries)), num_minibatches, 1, first
        )
        return dealt.map(lambda mb: (mb[0], jax.tree.map(lambda c: c[0], mb[1])))
    # Sequence-major samples (sample u is step u % T of sequence u // T): this device's are a
    # contiguous range of the global ones. They are gathered straight from the time-major
    # rows (row t * N + n), so the batch is never transposed.
    first = data.first(num_seqs * data.count) * num_steps
    index = block_deal(key, num_seqs * num_steps, num_minibatches, first)  # [M, S]
    rows = (index % num_steps) * num_seqs + index // num_steps
    flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), steps)  # [T * N, ...]
    size = rows.shape[1]

    def build(rows_m):
        split = jax.tree.map(lambda x: _take(x, rows_m, 0)[None], flat)  # [1, S, ...]
        zeros = jax.tree.map(lambda c: jnp.zeros((size, *c.shape[1:]), c.dtype), carries)
        return split, zeros

    return Minibatches(rows, build)
