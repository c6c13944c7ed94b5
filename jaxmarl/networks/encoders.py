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
        obs_ndim: axes of one observation (trailing), flattened first (3 for grids).
    """

    hidden_sizes: Sequence[int] = (64,)
    embed_dim: int = 64
    activation: str = "relu"
    layer_norm: bool = False
    init_gain: float = math.sqrt(2.0)
    obs_ndim: int = 1

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        act = activation(self.activation)
        x = obs.astype(jnp.float32)
        if self.obs_ndim != 1:
            x = x.reshape((*x.shape[: x.ndim - self.obs_ndim], -1))
        kernel_init = orthogonal(self.init_gain)
        for width in (*self.hidden_sizes, self.embed_dim):
            x = nn.Dense(width, kernel_init=kernel_init, bias_init=BIAS)(x)
            if self.layer_norm:
                x = nn.LayerNorm()(x)
            x = act(x)
        return x


def encoder_from_config(net: Any, obs_shape: Sequence[int] = (0,)) -> nn.Module:
    """The encoder a ``NetworkConfig`` describes (``net.encoder``: MLP or CNN).

    Args:
        net: the ``NetworkConfig``.
        obs_shape: one agent's (stacked) observation shape: a grid ``(h, w, c)`` for the CNN;
            the MLP flattens whatever rank it has.

    Raises:
        ValueError: a CNN encoder for observations that are not ``(h, w, c)`` grids.
    """
    if net.encoder.kind == "cnn":
        if len(obs_shape) != 3:
            raise ValueError(
                f"network.encoder=cnn needs grid observations (h, w, c), but the env's are "
                f"{tuple(obs_shape)}; use network.encoder=mlp (or the env's grid option)"
            )
        return CNNEncoder(
            net.encoder.features,
            net.encoder.kernel_sizes,
            net.embed_dim,
            net.activation,
            net.encoder.layer_norm,
        )
    return MLPEncoder(
        net.encoder_sizes,
        net.embed_dim,
        net.activation,
        net.layer_norm,
        net.encoder_init_gain,
        max(len(obs_shape), 1),
    )


class CNNEncoder(nn.Module):
    """Convolutions over a grid observation ``[..., H, W, C]``, then one dense layer.

    Convolutions keep the grid's size (``SAME`` padding, stride 1), as JaxMARL's Overcooked
    CNN; every layer is followed by the activation (after LayerNorm with ``layer_norm``).

    Attributes:
        features: channels per convolution.
        kernel_sizes: square kernel size per convolution.
        embed_dim: output width.
        activation: name of the activation.
        layer_norm: LayerNorm after every layer, before the activation.
    """

    features: Sequence[int] = (32, 32)
    kernel_sizes: Sequence[int] = (3, 3)
    embed_dim: int = 64
    activation: str = "relu"
    layer_norm: bool = False

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        if len(self.features) != len(self.kernel_sizes):
            raise ValueError("CNNEncoder needs one kernel size per convolution")
        act = activation(self.activation)
        lead = obs.shape[:-3]
        x = obs.astype(jnp.float32).reshape((-1, *obs.shape[-3:]))
        norm = nn.LayerNorm if self.layer_norm else (lambda: lambda y: y)
        for channels, size in zip(self.features, self.kernel_sizes):
            x = nn.Conv(channels, (size, size), kernel_init=HIDDEN, bias_init=BIAS)(x)
            x = act(norm()(x))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(self.embed_dim, kernel_init=HIDDEN, bias_init=BIAS)(x)
        return act(norm()(x)).reshape((*lead, self.embed_dim))
