"""A replay buffer that lives inside the jitted program: a circular array of whole items.

An *item* is any pytree (for the Q learners: one env's sequence of ``T`` steps plus the
observation after them and the recurrent state before them). The buffer holds ``capacity``
items in arrays with a leading ``[capacity]`` axis, overwrites the oldest first, and samples
items uniformly (with replacement) among those written.

Why our own and not flashbax: it is ~60 lines with no extra dependency; its state is one
``flax.struct`` dataclass of fixed-shape arrays (``data``, ``position``, ``size``), so it
``vmap``s over seeds, is donated and updated in place inside a chunk, and is saved and
restored by the same orbax checkpoint as the rest of the training state (which makes a resumed
run bit-identical, buffer included); and the learners only need "add a batch of whole
sequences, sample whole sequences", which is exactly this. Sampling is uniform over written
items; prioritised replay is not implemented.

Shapes: ``add`` takes items ``[B, ...]`` (``B <= capacity``, static) and ``sample`` returns
``[S, ...]``; both are pure functions of the state. Under a data split (``run.data_devices``)
each device holds the items of its own envs, and ``sample_split`` draws what one device's
buffer would give.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxmarl.training.data_parallel import DataShards


@struct.dataclass
class ReplayBuffer:
    """Circular buffer state.

    Attributes:
        data: the item pytree with leaves ``[capacity, ...]``.
        position: ``[]`` int32, where the next item goes.
        size: ``[]`` int32, items written so far (at most ``capacity``).
    """

    data: Any
    position: jax.Array
    size: jax.Array

    @property
    def capacity(self) -> int:
        return jax.tree.leaves(self.data)[0].shape[0]


def init(example_item: Any, capacity: int) -> ReplayBuffer:
    """An empty buffer for ``capacity`` items shaped like ``example_item`` (one item, no
    leading batch axis); contents are zeros."""
    if capacity < 1:
        raise ValueError(f"capacity must be >= 1, got {capacity}")
    data = jax.tree.map(
        lambda leaf: jnp.zeros((capacity, *jnp.shape(leaf)), dtype=jnp.asarray(leaf).dtype),
        example_item,
    )
    return ReplayBuffer(data=data, position=jnp.int32(0), size=jnp.int32(0))


def add(buffer: ReplayBuffer, items: Any) -> ReplayBuffer:
    """Write ``B`` items (leaves ``[B, ...]``) after the newest, wrapping around."""
    capacity = buffer.capacity
    count = jax.tree.leaves(items)[0].shape[0]
    if count > capacity:
        raise ValueError(f"cannot add {count} items to a buffer of capacity {capacity}")
    slots = (buffer.position + jnp.arange(count, dtype=jnp.int32)) % capacity
    data = jax.tree.map(lambda stored, new: stored.at[slots].set(new), buffer.data, items)
    return ReplayBuffer(
        data=data,
        position=(buffer.position + count) % capacity,
        size=jnp.minimum(buffer.size + count, capacity),
    )


def can_sample(buffer: ReplayBuffer, batch_size: int) -> jax.Array:
    """``[]`` bool: at least ``batch_size`` items have been written."""
    return buffer.size >= batch_size


def sample(buffer: ReplayBuffer, key: jax.Array, batch_size: int) -> Any:
    """``batch_size`` items drawn uniformly with replacement from the written ones.

    Returns the item pytree with leaves ``[batch_size, ...]``. On an empty buffer it returns
    copies of slot 0 (zeros); callers gate learning with ``can_sample``.
    """
    index = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buffer.size, 1))
    return jax.tree.map(lambda stored: stored[index], buffer.data)


def sample_split(
    buffer: ReplayBuffer, key: jax.Array, batch_size: int, data: DataShards, items_per_add: int
) -> Any:
    """``sample`` of the buffer one device would hold, from buffers split over ``data``.

    Each device's buffer holds its own envs' items: every ``add`` writes ``items_per_add / D``
    items on each of the ``D`` devices, where one device would write ``items_per_add`` (the
    whole batch of envs, in env order). With a capacity that is a multiple of
    ``items_per_add``, one device's slot ``i`` holds env ``i % items_per_add`` of write
    ``i // items_per_add``, so it lives on device ``env // (items_per_add / D)`` at local slot
    ``write * items_per_add / D + env % (items_per_add / D)``. Every device draws the same
    global indices (the key is replicated) and receives the items from their devices
    (``DataShards.gather``): the whole sample, exactly as one device draws it.

    Returns:
        This device's ``batch_size / D`` items of the sample (leaves ``[batch_size / D, ...]``).
    """
    if not data.split:
        return sample(buffer, key, batch_size)
    per_device = items_per_add // data.count
    size = buffer.size * data.count
    index = jax.random.randint(key, (batch_size,), 0, jnp.maximum(size, 1))
    env = index % items_per_add
    local = (index // items_per_add) * per_device + env % per_device
    items = data.gather(buffer.data, env // per_device, local)
    return data.my_rows(items)
