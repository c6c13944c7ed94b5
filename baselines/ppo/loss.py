"""The PPO loss and the batch it reads."""

from __future__ import annotations

import jax
from flax import struct


@struct.dataclass
class PPOBatch:
    """What the PPO loss reads, laid out ``[T, G, a, ...]``: time, then the ``G`` units that
    minibatches shuffle, each holding ``a`` agents that share one critic evaluation (``a = 1``,
    ``G`` = envs x agents for per-agent critics; ``a`` = agents, ``G`` = envs for a critic of the
    world state alone).

    Attributes:
        obs: ``[T, G, a, D]`` actor input.  critic_input: ``[T, G, C]``.
        avail_actions: ``[T, G, a, num_actions]`` bool.  first: ``[T, G, a]`` bool.
        action: ``[T, G, a]`` or ``[T, G, a, d]``.  log_prob, value: ``[T, G, a]`` at
        collection time.  advantages, value_targets: ``[T, G, a]``.
    """

    obs: jax.Array
    critic_input: jax.Array
    avail_actions: jax.Array
    first: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    advantages: jax.Array
    value_targets: jax.Array


def merge_axes(x: jax.Array, axis: int) -> jax.Array:
    """``x`` with axes ``axis`` and ``axis + 1`` merged into one (row-major)."""
    shape = x.shape
    return x.reshape((*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2 :]))
