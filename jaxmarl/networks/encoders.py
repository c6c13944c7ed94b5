"""Perception layers: per-task (or per agent class) maps from observations to embeddings.

An encoder turns one agent's observation ``[..., *obs_shape]`` into a fixed-width embedding
``[..., embed_dim]`` that the task-agnostic decision trunk reads. Leading axes (time, envs,
agents) pass through, so parameters are shared across agents for free.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.conv import grid_conv
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


def encoder_from_config(
    net: Any,
    obs_shape: Sequence[int] = (0,),
    obs_leaves: Sequence[tuple[str, Sequence[int]]] = (),
) -> nn.Module:
    """The encoder a ``NetworkConfig`` describes (``net.encoder``: MLP or CNN).

    Args:
        net: the ``NetworkConfig``.
        obs_shape: one agent's (stacked) observation shape: a grid ``(h, w, c)`` for the CNN;
            the MLP flattens whatever rank it has.
        obs_leaves: for packed ``Dict`` observations (``AgentBatch.input_leaves``), each
            leaf's ``(name, shape)``: the CNN then convolves the grid leaves and concatenates
            the rest (``DictEncoder``); the MLP reads the packed vector.

    Raises:
        ValueError: a CNN encoder for observations that are not ``(h, w, c)`` grids and have
            no grid leaf.
    """
    if net.encoder.kind == "cnn":
        conv = dict(
            features=tuple(net.encoder.features),
            kernel_sizes=tuple(net.encoder.kernel_sizes),
            embed_dim=net.embed_dim,
            activation=net.activation,
            layer_norm=net.encoder.layer_norm,
            output_norm=net.encoder.output_norm,
        )
        if obs_leaves:
            leaves = tuple((str(name), tuple(int(d) for d in shape)) for name, shape in obs_leaves)
            if not any(len(shape) == 3 for _, shape in leaves):
                raise ValueError(
                    f"network.encoder=cnn needs a grid (h, w, c) leaf, but the env's Dict "
                    f"observation has {dict(leaves)}; use network.encoder=mlp"
                )
            return DictEncoder(leaves=leaves, **conv)
        if len(obs_shape) != 3:
            raise ValueError(
                f"network.encoder=cnn needs grid observations (h, w, c), but the env's are "
                f"{tuple(obs_shape)}; use network.encoder=mlp (or the env's grid option)"
            )
        return CNNEncoder(**conv)
    return MLPEncoder(
        net.encoder_sizes,
        net.embed_dim,
        net.activation,
        net.layer_norm,
        net.encoder_init_gain,
        max(len(obs_shape), 1),
    )


def _convolve(x, features, kernel_sizes, act, norm) -> jax.Array:
    """``[n, H, W, C]`` through the convolutions (``SAME``, stride 1), flattened to ``[n, F]``.

    Called inside a compact ``__call__``: the layers belong to that module (``Conv_0``, ...).
    The convolution itself is ``jaxmarl.networks.conv.grid_conv``'s (a dot on a CPU).
    """
    if len(features) != len(kernel_sizes):
        raise ValueError("CNNEncoder needs one kernel size per convolution")
    conv = grid_conv()
    for channels, size in zip(features, kernel_sizes):
        conv_layer = nn.Conv(
            channels,
            (size, size),
            kernel_init=HIDDEN,
            bias_init=BIAS,
            conv_general_dilated=conv,
        )
        x = conv_layer(x)
        x = act(norm()(x))
    return x.reshape((x.shape[0], -1))


def _norm(layer_norm: bool):
    return nn.LayerNorm if layer_norm else (lambda: lambda y: y)


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
        output_norm: LayerNorm on the output, after the last activation (JaxMARL's
            OvercookedV2 network normalises its CNN's output before the GRU).
    """

    features: Sequence[int] = (32, 32)
    kernel_sizes: Sequence[int] = (3, 3)
    embed_dim: int = 64
    activation: str = "relu"
    layer_norm: bool = False
    output_norm: bool = False

    def _embed(self, x: jax.Array, lead: tuple[int, ...]) -> jax.Array:
        """The dense layer to ``embed_dim`` and its activation (and ``output_norm``), called
        inside a compact ``__call__``; ``[n, F]`` -> ``[*lead, embed_dim]``."""
        x = nn.Dense(self.embed_dim, kernel_init=HIDDEN, bias_init=BIAS)(x)
        x = activation(self.activation)(_norm(self.layer_norm)()(x))
        if self.output_norm:
            x = nn.LayerNorm(name="output_norm")(x)
        return x.reshape((*lead, self.embed_dim))

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        act = activation(self.activation)
        norm = _norm(self.layer_norm)
        lead = obs.shape[:-3]
        x = obs.astype(jnp.float32).reshape((-1, *obs.shape[-3:]))
        x = _convolve(x, self.features, self.kernel_sizes, act, norm)
        return self._embed(x, lead)


def split_leaves(
    packed: jax.Array, leaves: Sequence[tuple[str, Sequence[int]]]
) -> dict[str, jax.Array]:
    """Inverse of ``AgentBatch``'s ``Dict`` packing: ``[..., D]`` -> ``{name: [..., *shape]}``.

    Raises:
        ValueError: ``D`` is not the leaves' total size.
    """
    sizes = [math.prod(shape) for _, shape in leaves]
    if packed.shape[-1] != sum(sizes):
        raise ValueError(
            f"packed observation has width {packed.shape[-1]}, but the leaves {dict(leaves)} "
            f"add up to {sum(sizes)}"
        )
    lead = packed.shape[:-1]
    offsets = [0, *itertools.accumulate(sizes)]
    return {
        name: packed[..., start:stop].reshape((*lead, *shape))
        for (name, shape), start, stop in zip(leaves, offsets[:-1], offsets[1:])
    }


class DictEncoder(CNNEncoder):
    """``CNNEncoder`` for packed ``Dict`` observations (an image plus flat features).

    The packed vector ``[..., D]`` (``AgentBatch``: leaves flattened in order) is split back
    into its leaves; every grid leaf ``(h, w, c)`` goes through its own convolutions (as
    ``CNNEncoder``'s), every other leaf is flattened; all are concatenated and one dense
    layer maps them to ``embed_dim``. The flat leaves (STORM's inventories, an agent id) thus
    enter after the convolutions, at full resolution, instead of being painted into channels.

    Attributes:
        leaves: ``(name, shape)`` per leaf, in packing order (``AgentBatch.input_leaves``).
        The other attributes are ``CNNEncoder``'s.
    """

    leaves: Sequence[tuple[str, Sequence[int]]] = ()

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        lead = obs.shape[:-1]
        parts = []
        for name, leaf in split_leaves(obs.astype(jnp.float32), self.leaves).items():
            if leaf.ndim - len(lead) == 3:
                grid = leaf.reshape((-1, *leaf.shape[-3:]))
                with_name = _Convolutions(
                    self.features, self.kernel_sizes, self.activation, self.layer_norm, name=name
                )
                parts.append(with_name(grid))
            else:
                parts.append(leaf.reshape((math.prod(lead), -1)))
        return self._embed(jnp.concatenate(parts, axis=-1), lead)


class _Convolutions(nn.Module):
    """``DictEncoder``'s convolutions of one grid leaf (a submodule named after the leaf)."""

    features: Sequence[int]
    kernel_sizes: Sequence[int]
    activation: str
    layer_norm: bool

    @nn.compact
    def __call__(self, grid: jax.Array) -> jax.Array:
        act = activation(self.activation)
        return _convolve(grid, self.features, self.kernel_sizes, act, _norm(self.layer_norm))
