"""Per-task output layers: policies, values and Q-values.

Every head may start with hidden layers of its own (``hidden_sizes``, each followed by
``activation``) before its output layer: JaxMARL's Hanabi networks give the policy and the value
one hidden layer each after a body they share. The hidden layers are named ``hidden_0``,
``hidden_1``, ...; the output layer keeps the name ``Dense_0`` either way. Their orthogonal
gain is ``hidden_gain`` (sqrt(2), as every hidden layer; JaxMARL's shared-body networks use 2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import distrax
import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.init import BIAS, POLICY, VALUE, activation, orthogonal

HIDDEN_GAIN = math.sqrt(2.0)  # the hidden layers' orthogonal gain everywhere (init.HIDDEN)


def hidden_layers(
    x: jax.Array, sizes: Sequence[int], act: str, gain: float = HIDDEN_GAIN
) -> jax.Array:
    """A head's own dense layers before its output (call inside a compact ``__call__``)."""
    for i, width in enumerate(sizes):
        dense = nn.Dense(width, kernel_init=orthogonal(gain), bias_init=BIAS, name=f"hidden_{i}")
        x = activation(act)(dense(x))
    return x


def masked_logits(logits: jax.Array, avail: jax.Array | None) -> jax.Array:
    """Unavailable actions get the smallest finite logit (never ``- 1e10``: safe in any dtype).

    Args:
        logits: ``[..., num_actions]``.
        avail: ``[..., num_actions]`` bool, or ``None`` for all available.
    """
    if avail is None:
        return logits
    return jnp.where(avail, logits, jnp.finfo(logits.dtype).min)


def sample_rows(dist: distrax.Distribution, keys: jax.Array) -> jax.Array:
    """Sample a policy head's distribution with one key per row (``keys`` shaped like its batch
    shape), so that a row's action does not depend on which other rows share the batch (a
    data-parallel device holds only some of them). Takes what the heads here return.

    Raises:
        TypeError: for a distribution type the heads here do not return.
    """
    if isinstance(dist, distrax.Categorical):
        draw = lambda key, logits: jax.random.categorical(key, logits)
        rows = dist.logits
    elif isinstance(dist, distrax.MultivariateNormalDiag):
        draw = lambda key, params: params[0] + params[1] * jax.random.normal(key, params[0].shape)
        rows = (dist.loc, dist.scale_diag)
    else:
        raise TypeError(f"sample_rows takes Categorical or MultivariateNormalDiag, not {dist!r}")
    for _ in range(keys.ndim):
        draw = jax.vmap(draw)
    return draw(keys, rows)


class CategoricalHead(nn.Module):
    """Logits over ``num_actions`` discrete actions -> masked ``distrax.Categorical``."""

    num_actions: int
    hidden_sizes: Sequence[int] = ()
    activation: str = "relu"
    hidden_gain: float = HIDDEN_GAIN

    @nn.compact
    def __call__(self, x: jax.Array, avail: jax.Array | None = None) -> distrax.Categorical:
        x = hidden_layers(x, self.hidden_sizes, self.activation, self.hidden_gain)
        logits = nn.Dense(self.num_actions, kernel_init=POLICY, bias_init=BIAS)(x)
        return distrax.Categorical(logits=masked_logits(logits, avail))


class GaussianHead(nn.Module):
    """Diagonal Gaussian over ``action_dim`` continuous actions, state-independent std."""

    action_dim: int
    init_log_std: float = -0.5
    hidden_sizes: Sequence[int] = ()
    activation: str = "relu"
    hidden_gain: float = HIDDEN_GAIN

    @nn.compact
    def __call__(self, x: jax.Array, avail: jax.Array | None = None) -> distrax.Distribution:
        # ``avail`` is accepted for a uniform call signature; continuous dims are all usable.
        x = hidden_layers(x, self.hidden_sizes, self.activation, self.hidden_gain)
        mean = nn.Dense(self.action_dim, kernel_init=POLICY, bias_init=BIAS)(x)
        log_std = self.param(
            "log_std", nn.initializers.constant(self.init_log_std), (self.action_dim,)
        )
        return distrax.MultivariateNormalDiag(mean, jnp.exp(log_std) * jnp.ones_like(mean))


class ValueHead(nn.Module):
    """A scalar value per input row: ``[..., D] -> [...]``."""

    hidden_sizes: Sequence[int] = ()
    activation: str = "relu"
    hidden_gain: float = HIDDEN_GAIN

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = hidden_layers(x, self.hidden_sizes, self.activation, self.hidden_gain)
        return jnp.squeeze(nn.Dense(1, kernel_init=VALUE, bias_init=BIAS)(x), axis=-1)


class QHead(nn.Module):
    """Q-values over ``num_actions`` discrete actions: ``[..., D] -> [..., num_actions]``.

    With ``dueling`` (Wang et al., 2016; JaxMARL's PQN ``DUELING``) the head's input, after its
    hidden layers, feeds two output layers: ``advantage`` (one value per action) and ``value``
    (one scalar), combined as ``Q = V + A - mean(A)``, the mean over all ``num_actions``
    actions, available or not (masking is the acting code's, on the Q-values). Without it the
    one output layer keeps the name ``Dense_0``. ``output_gain`` is the orthogonal gain of the
    output layers (1; JaxMARL's SHAQ uses 2).
    """

    num_actions: int
    hidden_sizes: Sequence[int] = ()
    activation: str = "relu"
    hidden_gain: float = HIDDEN_GAIN
    dueling: bool = False
    output_gain: float = 1.0

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = hidden_layers(x, self.hidden_sizes, self.activation, self.hidden_gain)
        init = orthogonal(self.output_gain)
        if not self.dueling:
            return nn.Dense(self.num_actions, kernel_init=init, bias_init=BIAS)(x)
        advantage = nn.Dense(self.num_actions, kernel_init=init, bias_init=BIAS, name="advantage")
        value = nn.Dense(1, kernel_init=init, bias_init=BIAS, name="value")
        a = advantage(x)
        return value(x) + a - jnp.mean(a, axis=-1, keepdims=True)
