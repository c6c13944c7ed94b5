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

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.init import BIAS, HIDDEN, RECURRENT, activation


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
    """Recurrent trunk: one GRU cell scanned over time, reset at episode starts.

    This is the package's only scanned RNN; every recurrent network uses it.
    """

    hidden_size: int = 64

    @property
    def carry_size(self) -> int:
        return self.hidden_size

    @property
    def output_size(self) -> int:
        return self.hidden_size

    @nn.compact
    def __call__(self, hidden: jax.Array, x: jax.Array, first: jax.Array):
        cell = nn.scan(
            _ResettingGRUCell,
            variable_broadcast="params",
            split_rngs={"params": False},
            in_axes=0,
            out_axes=0,
        )(self.hidden_size)
        return cell(hidden, (x, first))


class _ResettingGRUCell(nn.Module):
    hidden_size: int

    @nn.compact
    def __call__(self, hidden: jax.Array, inputs: tuple[jax.Array, jax.Array]):
        x, first = inputs
        hidden = jnp.where(first[:, None], jnp.zeros_like(hidden), hidden)
        cell = nn.GRUCell(features=self.hidden_size, recurrent_kernel_init=RECURRENT)
        hidden, y = cell(hidden, x)
        return hidden, y


def initial_carry(trunk: nn.Module, batch: int) -> jax.Array:
    """Zero recurrent state ``[batch, carry_size]`` float32 for any trunk."""
    return jnp.zeros((batch, trunk.carry_size), dtype=jnp.float32)
