"""Mixers for value decomposition: per-agent Q-values -> the values the TD loss regresses.

Every mixer is a linen module with one call signature,
``mixer(agent_q [..., A], world_state [..., W]) -> [..., K]``:

* ``NoMixer`` (IQL): ``K = A``, each agent's own Q-value (independent learners);
* ``VDNMixer``: ``K = 1``, the sum over agents (Sunehag et al., 2017);
* ``QMixer``: ``K = 1``, a monotonic mixing network whose weights come from hypernetworks
  conditioned on the world state (Rashid et al., 2018), so ``dQ_tot / dQ_a >= 0`` for every
  agent and the joint greedy action is the agents' individual greedy actions.

``K`` is what the reward is reduced to as well (``team_reward``): per-agent rewards for IQL, one
team reward for VDN and QMIX, either the sum of the agents' rewards (MPE, as JaxMARL's VDN/QMIX
scripts do there) or their mean (for envs whose agents all receive the same shared reward, such
as SMAX: the sum would count that one reward once per agent).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.init import BIAS, orthogonal

MIXERS = ("none", "vdn", "qmix")
TEAM_REWARDS = ("sum", "mean")


class NoMixer(nn.Module):
    """Independent Q-learning: ``[..., A] -> [..., A]`` (the world state is ignored)."""

    @nn.compact
    def __call__(self, agent_q: jax.Array, world_state: jax.Array) -> jax.Array:
        return agent_q


class VDNMixer(nn.Module):
    """Value decomposition by summation: ``[..., A] -> [..., 1]``."""

    @nn.compact
    def __call__(self, agent_q: jax.Array, world_state: jax.Array) -> jax.Array:
        return jnp.sum(agent_q, axis=-1, keepdims=True)


class _HyperNet(nn.Module):
    """Two dense layers (ReLU between) mapping the world state to mixing weights."""

    hidden_dim: int
    output_dim: int
    init_scale: float

    @nn.compact
    def __call__(self, world_state: jax.Array) -> jax.Array:
        init = orthogonal(self.init_scale)
        x = nn.relu(nn.Dense(self.hidden_dim, kernel_init=init, bias_init=BIAS)(world_state))
        return nn.Dense(self.output_dim, kernel_init=init, bias_init=BIAS)(x)


class QMixer(nn.Module):
    """QMIX: ``Q_tot = w2 . elu(Q_agents @ W1 + b1) + b2`` with ``W1, w2 >= 0``.

    ``W1 [A, E]`` and ``w2 [E]`` are absolute values of hypernetwork outputs, so ``Q_tot`` is
    monotonic in every agent's Q-value; ``b1 [E]`` is one dense layer and ``b2`` a two-layer
    hypernetwork of the world state (the original QMIX layout).

    Attributes:
        embed_dim: ``E``, width of the mixing layer.
        hypernet_hidden_dim: hidden width of the ``W1`` / ``w2`` hypernetworks.
        init_scale: orthogonal gain of every hypernetwork layer (small keeps early mixing
            weights near zero).
    """

    embed_dim: int = 32
    hypernet_hidden_dim: int = 128
    init_scale: float = 1e-3

    @nn.compact
    def __call__(self, agent_q: jax.Array, world_state: jax.Array) -> jax.Array:
        """``agent_q [..., A]``, ``world_state [..., W]`` -> ``[..., 1]``."""
        num_agents = agent_q.shape[-1]
        lead = agent_q.shape[:-1]
        world_state = world_state.astype(jnp.float32)
        w1 = _HyperNet(self.hypernet_hidden_dim, num_agents * self.embed_dim, self.init_scale)
        w2 = _HyperNet(self.hypernet_hidden_dim, self.embed_dim, self.init_scale)
        b2 = _HyperNet(self.embed_dim, 1, self.init_scale)
        b1 = nn.Dense(
            self.embed_dim,
            kernel_init=orthogonal(self.init_scale),
            bias_init=BIAS,
        )
        weights1 = jnp.abs(w1(world_state)).reshape((*lead, num_agents, self.embed_dim))
        weights2 = jnp.abs(w2(world_state))  # [..., E]
        hidden = nn.elu(jnp.einsum("...a,...ae->...e", agent_q, weights1) + b1(world_state))
        return jnp.sum(hidden * weights2, axis=-1, keepdims=True) + b2(world_state)


def make_mixer(
    name: str, embed_dim: int = 32, hypernet_hidden_dim: int = 128, init_scale: float = 1e-3
) -> nn.Module:
    """The mixer called ``name`` (one of ``MIXERS``); raises ``ValueError`` otherwise."""
    if name == "none":
        return NoMixer()
    if name == "vdn":
        return VDNMixer()
    if name == "qmix":
        return QMixer(embed_dim, hypernet_hidden_dim, init_scale)
    raise ValueError(f"unknown mixer {name!r}; choose one of {MIXERS}")


def team_reward(mixer_name: str, reward: jax.Array, reduction: str = "sum") -> jax.Array:
    """Rewards ``[..., A]`` reduced like the mixer's output: ``[..., A]`` (IQL) or ``[..., 1]``.

    ``reduction`` (one of ``TEAM_REWARDS``) says how a mixing learner's team reward is made from
    the agents' rewards: ``"sum"``, or ``"mean"``, which is the shared reward itself where every
    agent receives the same one (SMAX; JaxMARL's scripts read the first agent's there).
    """
    if reduction not in TEAM_REWARDS:
        raise ValueError(f"unknown team reward {reduction!r}; choose one of {TEAM_REWARDS}")
    if mixer_name == "none":
        return reward
    reduce = jnp.sum if reduction == "sum" else jnp.mean
    return reduce(reward, axis=-1, keepdims=True)
