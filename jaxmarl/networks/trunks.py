"""Decision trunks: the task-agnostic, shareable layers between encoders and heads.

A trunk reads embeddings and has no notion of observation or action sizes, so one trunk's
parameters can serve several tasks, be frozen, or be saved and loaded on their own.

Every trunk has the same call signature so the learners need no special cases:
``trunk(hidden, x, first) -> (hidden, y)`` with ``x`` ``[T, N, D]`` (time, then any batch of
agents flattened into ``N``), ``first`` ``[T, N]`` bool meaning "x[t] is the first step of an
episode" (the recurrent state is reset before reading it), and ``hidden`` the carried state
``[N, H]`` (an empty-width array for feed-forward trunks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.gru import gru_sequence
from jaxmarl.networks.init import BIAS, GRU_INPUT, HIDDEN, RECURRENT, activation


class MLPTrunk(nn.Module):
    """Feed-forward trunk: dense layers applied to every step independently."""

    hidden_sizes: Sequence[int] = (64,)
    activation: str = "relu"
    layer_norm: bool = False

    @property
    def carry_size(self) -> int:
        return 0

    @property
    def output_size(self) -> int:
        return self.hidden_sizes[-1]

    @nn.compact
    def __call__(self, hidden: jax.Array, x: jax.Array, first: jax.Array):
        act = activation(self.activation)
        for width in self.hidden_sizes:
            x = nn.Dense(width, kernel_init=HIDDEN, bias_init=BIAS)(x)
            if self.layer_norm:
                x = nn.LayerNorm()(x)
            x = act(x)
        return hidden, x


class GRUTrunk(nn.Module):
    """Recurrent trunk: one GRU scanned over time, reset at episode starts.

    This is the package's only scanned RNN; every recurrent network uses it. The cell is the
    GRU of ``flax.linen.GRUCell`` (same equations and initialisers: reset gate ``r``, update
    gate ``z``, candidate ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h``), laid out for speed: the input projections of all three gates
    do not depend on the state, so they are one ``[T*N, D] x [D, 3H]`` product for the whole
    sequence, and only a fused ``[N, H] x [H, 3H]`` product stays inside the scan (flax's cell
    does six small products per step, which the CPU runs far less efficiently).

    ``post_sizes``: dense layers applied to the GRU's output at every step, each followed by
    ``activation`` (JaxMARL's MAPPO-RNN towers have one of 128 with relu before their heads).
    """

    hidden_size: int = 64
    post_sizes: Sequence[int] = ()
    activation: str = "relu"

    @property
    def carry_size(self) -> int:
        return self.hidden_size

    @property
    def output_size(self) -> int:
        return self.post_sizes[-1] if self.post_sizes else self.hidden_size

    @nn.compact
    def __call__(self, hidden: jax.Array, x: jax.Array, first: jax.Array):
        size = self.hidden_size
        input_kernel = self.param("input_kernel", _per_gate(GRU_INPUT), (x.shape[-1], 3 * size))
        input_bias = self.param("input_bias", BIAS, (3 * size,))
        recurrent_kernel = self.param("recurrent_kernel", _per_gate(RECURRENT), (size, 3 * size))
        candidate_bias = self.param("candidate_bias", BIAS, (size,))
        projected = x @ input_kernel + input_bias  # [T, N, 3H], all steps at once
        keep = 1.0 - first.astype(projected.dtype)
        hidden, y = gru_sequence(recurrent_kernel, candidate_bias, hidden, projected, keep)
        act = activation(self.activation)
        for width in self.post_sizes:
            y = act(nn.Dense(width, kernel_init=HIDDEN, bias_init=BIAS)(y))
        return hidden, y


def trunk_from_config(net: Any) -> nn.Module:
    """The decision trunk a ``NetworkConfig`` describes (``net.trunk``, an ``MLPTrunkConfig`` or
    a ``GRUTrunkConfig``, builds it with the network's activation and layer norm)."""
    return net.trunk.build(net.activation, net.layer_norm)


def _per_gate(init):
    """Initialise a ``[rows, 3H]`` kernel as three ``[rows, H]`` blocks (one per gate), as a
    cell with a separate dense layer per gate would be initialised."""

    def init_blocks(key, shape, dtype=jnp.float32):
        rows, width = shape
        keys = jax.random.split(key, 3)
        return jnp.concatenate([init(k, (rows, width // 3), dtype) for k in keys], axis=-1)

    return init_blocks


def initial_carry(trunk: nn.Module, batch: int) -> jax.Array:
    """Zero recurrent state ``[batch, carry_size]`` float32 for any trunk."""
    return jnp.zeros((batch, trunk.carry_size), dtype=jnp.float32)
