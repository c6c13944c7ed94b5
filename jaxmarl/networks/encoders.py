"""Perception layers: per-task (or per agent class) maps from observations to embeddings.

An encoder turns one agent's observation ``[..., *obs_shape]`` into a fixed-width embedding
``[..., embed_dim]`` that the task-agnostic decision trunk reads. Leading axes (time, envs,
agents) pass through, so parameters are shared across agents for free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.init import BIAS, HIDDEN, activation, orthogonal


class MLPEncoder(nn.Module):
    """Dense layers over a flat observation.

    Attributes:
        hidden_sizes: widths of the hidden layers (may be empty).
        embed_dim: output width.
        activation: name of the activation (see ``jaxmarl.networks.init.ACTIVATIONS``).
        layer_norm: apply LayerNorm after every layer (before the activation).
        init_gain: gain of the layers' orthogonal kernel initialisation (sqrt(2), He-style for
            ReLU bodies; JaxMARL's Q-learning agents use 1).
    """

    hidden_sizes: Sequence[int] = (64,)
    embed_dim: int = 64
    activation: str = "relu"
    layer_norm: bool = False
    init_gain: float = math.sqrt(2.0)

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        act = activation(self.activation)
        x = obs.astype(jnp.float32)
        kernel_init = orthogonal(self.init_gain)
        for width in (*self.hidden_sizes, self.embed_dim):
            x = nn.Dense(width, kernel_init=kernel_init, bias_init=BIAS)(x)
            if self.layer_norm:
                x = nn.LayerNorm()(x)
            x = act(x)
        return x


def encoder_from_config(net: Any) -> MLPEncoder:
    """The MLP encoder a ``NetworkConfig`` describes."""
    return MLPEncoder(
        net.encoder_sizes, net.embed_dim, net.activation, net.layer_norm, net.encoder_init_gain
    )


class CNNEncoder(nn.Module):
    """Convolutions over a grid observation ``[..., H, W, C]``, then one dense layer.

    Attributes:
        features: channels per convolution.
        kernel_sizes: square kernel size per convolution.
        embed_dim: output width.
        activation: name of the activation.
    """

    features: Sequence[int] = (32, 32)
    kernel_sizes: Sequence[int] = (3, 3)
    embed_dim: int = 64
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        if len(self.features) != len(self.kernel_sizes):
            raise ValueError("CNNEncoder needs one kernel size per convolution")
        act = activation(self.activation)
        lead = obs.shape[:-3]
        x = obs.astype(jnp.float32).reshape((-1, *obs.shape[-3:]))
        for channels, size in zip(self.features, self.kernel_sizes):
            x = act(nn.Conv(channels, (size, size), kernel_init=HIDDEN, bias_init=BIAS)(x))
        x = x.reshape((x.shape[0], -1))
        x = act(nn.Dense(self.embed_dim, kernel_init=HIDDEN, bias_init=BIAS)(x))
        return x.reshape((*lead, self.embed_dim))
