"""Mixers for value decomposition: per-agent Q-values -> the values the TD loss regresses.

Every mixer is a linen module with one call signature,
``mixer(agent_q [..., A], world_state [..., W]) -> [..., K]``:

* ``NoMixer`` (IQL): ``K = A``, each agent's own Q-value (independent learners);
* ``VDNMixer``: ``K = 1``, the sum over agents (Sunehag et al., 2017);
* ``QMixer``: ``K = 1``, a monotonic mixing network whose weights come from hypernetworks
  conditioned on the world state (Rashid et al., 2018), so ``dQ_tot / dQ_a >= 0`` for every
  agent and the joint greedy action is the agents' individual greedy actions;
* ``SHAQMixer``: ``K = 1``, Shapley Q-learning (Wang et al., 2022): the sum of the agents'
  Q-values, each agent whose action is not its greedy one weighted by a learned
  ``alpha >= 1`` estimated over random coalitions of the other agents.

Mixers also take ``greedy [..., A]`` (bool, optional): whether each agent's action is its
greedy one. Only SHAQ reads it; ``None`` means every action is greedy (the target side of the
TD loss, whose next actions are greedy by construction). SHAQ draws its coalitions from the
flax RNG stream ``"coalitions"``, so its online call needs ``rngs={"coalitions": key}``.

``K`` is what the reward is reduced to as well (``team_reward``): per-agent rewards for IQL, one
team reward for VDN and QMIX, either the sum of the agents' rewards (MPE, as JaxMARL's VDN/QMIX
scripts do there) or their mean (for envs whose agents all receive the same shared reward, such
as SMAX: the sum would count that one reward once per agent).

A learner's config chooses its mixer with a frozen dataclass, ``MixerConfig``: ``NoMixerConfig``
(``mixer=none``), ``VDNMixerConfig`` (``mixer=vdn``), ``QMIXMixerConfig`` (``mixer=qmix``,
``mixer.embed_dim=64``), ``SHAQMixerConfig`` (``mixer=shaq``) or ``TransformerMixerConfig``
(``mixer=transformer``, TransfQMIX's, whose module is in ``jaxmarl.networks.transformer``).
Each says whether it reads the world state, the agents' hidden states
(``reads_agent_states``) and draws random numbers (``needs_key``), whether its parameters have
their own learning rate (``lr``), forms the reward its output is regressed on (``team_reward``)
and
builds its linen module (``module``), so learners ask the object instead of testing its name.
Sum or mean stays a field of the learner's config (``team_reward``), not of the mixer: it
describes how the env shares its rewards, and switching the mixer (``alg=vdn`` over a QMIX
preset) must not silently reset it.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.init import BIAS, orthogonal

TEAM_REWARDS = ("sum", "mean")


class NoMixer(nn.Module):
    """Independent Q-learning: ``[..., A] -> [..., A]`` (the world state is ignored)."""

    @nn.compact
    def __call__(
        self, agent_q: jax.Array, world_state: jax.Array, greedy: jax.Array | None = None
    ) -> jax.Array:
        return agent_q


class VDNMixer(nn.Module):
    """Value decomposition by summation: ``[..., A] -> [..., 1]``."""

    @nn.compact
    def __call__(
        self, agent_q: jax.Array, world_state: jax.Array, greedy: jax.Array | None = None
    ) -> jax.Array:
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
    def __call__(
        self, agent_q: jax.Array, world_state: jax.Array, greedy: jax.Array | None = None
    ) -> jax.Array:
        """``agent_q [..., A]``, ``world_state [..., W]`` -> ``[..., 1]`` (``greedy`` unused)."""
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


def coalition_means(agent_q: jax.Array, draws: jax.Array) -> jax.Array:
    """``agent_q [..., A]``, ``draws [..., S, A]`` -> ``[..., S, A]``: in each order ``s`` (the
    agents sorted by their draws; uniform draws give a uniformly random order), the mean
    Q-value of the agents before each agent, 0 for the first."""
    before = draws[..., None, :] < draws[..., :, None]  # [..., S, A (i), A (j)]: j before i
    total = jnp.einsum("...sij,...j->...si", before.astype(agent_q.dtype), agent_q)
    return total / jnp.maximum(jnp.sum(before, axis=-1), 1)


class ShapleyAlpha(nn.Module):
    """SHAQ's weight estimate ``alpha [..., A] >= 1`` for each agent's Q-value.

    ``alpha_a = 1 + mean_s |f(C_s, Q_a, world)|`` over ``sample_size`` random orders of the
    agents: ``C_s`` is the mean Q-value of the agents before ``a`` in order ``s`` (0 if none),
    and ``f`` a two-layer network of ``[C_s, Q_a]`` whose weights come from hypernetworks of the
    world state, as in QMIX (non-negative first and second layer weights). The orders are drawn
    from the flax RNG stream ``"coalitions"``.
    """

    sample_size: int
    embed_dim: int
    hypernet_hidden_dim: int
    init_scale: float

    @nn.compact
    def __call__(self, agent_q: jax.Array, world_state: jax.Array) -> jax.Array:
        num_agents = agent_q.shape[-1]
        lead = agent_q.shape[:-1]
        world_state = world_state.astype(jnp.float32)
        draws = jax.random.uniform(
            self.make_rng("coalitions"), (*lead, self.sample_size, num_agents)
        )
        coalition_q = coalition_means(agent_q, draws)  # [..., S, A]
        own_q = jnp.broadcast_to(agent_q[..., None, :], coalition_q.shape)
        pairs = jnp.stack([coalition_q, own_q], axis=-1)  # [..., S, A, 2]
        w1 = _HyperNet(self.hypernet_hidden_dim, 2 * self.embed_dim, self.init_scale)
        w2 = _HyperNet(self.hypernet_hidden_dim, self.embed_dim, self.init_scale)
        b2 = _HyperNet(self.embed_dim, 1, self.init_scale)
        b1 = nn.Dense(self.embed_dim, kernel_init=orthogonal(self.init_scale), bias_init=BIAS)
        weights1 = jnp.abs(w1(world_state)).reshape((*lead, 2, self.embed_dim))
        weights2 = jnp.abs(w2(world_state))[..., None, None, :]  # [..., 1, 1, E]
        # An einsum, not a broadcast product summed over the pair axis: the latter's gradient
        # under vmap crashed XLA:CPU (jaxlib 0.10.2, segfault).
        mixed = jnp.einsum("...sap,...pe->...sae", pairs, weights1)
        hidden = nn.elu(mixed + b1(world_state)[..., None, None, :])
        out = jnp.sum(hidden * weights2, axis=-1) + b2(world_state)[..., None]  # [..., S, A]
        return 1.0 + jnp.mean(jnp.abs(out), axis=-2)


class SHAQMixer(nn.Module):
    """Shapley Q-learning: ``Q_tot = sum_a w_a Q_a`` with ``w_a = 1`` where agent ``a``'s action
    is its greedy one and ``w_a = alpha_a >= 1`` elsewhere (``ShapleyAlpha``; Wang et al.,
    2022, "SHAQ: Incorporating Shapley Value Theory into Multi-Agent Q-Learning"). With every
    action greedy (``greedy=None``, the TD target) it is VDN's sum and reads neither the world
    state nor the RNG.

    Attributes:
        sample_size, embed_dim, hypernet_hidden_dim, init_scale: ``ShapleyAlpha``'s.
        alpha: a fixed ``alpha`` for every non-greedy action instead of the estimate (the
            paper's ablation with hand-set values); ``None`` learns it.
    """

    sample_size: int = 5
    embed_dim: int = 32
    hypernet_hidden_dim: int = 64
    init_scale: float = 1e-5
    alpha: float | None = None

    @nn.compact
    def __call__(
        self, agent_q: jax.Array, world_state: jax.Array, greedy: jax.Array | None = None
    ) -> jax.Array:
        """``agent_q [..., A]``, ``world_state [..., W]``, ``greedy [..., A]`` -> ``[..., 1]``."""
        if greedy is None:
            return jnp.sum(agent_q, axis=-1, keepdims=True)
        if self.alpha is None:
            estimate = ShapleyAlpha(
                self.sample_size, self.embed_dim, self.hypernet_hidden_dim, self.init_scale
            )
            alpha = estimate(agent_q, world_state)
        else:
            alpha = jnp.full_like(agent_q, self.alpha)
        weights = jnp.where(greedy, 1.0, alpha)
        return jnp.sum(weights * agent_q, axis=-1, keepdims=True)


def _reduce(reward: jax.Array, reduction: str) -> jax.Array:
    """``[..., A] -> [..., 1]``: the team reward, ``"sum"`` or ``"mean"`` of the agents'."""
    if reduction not in TEAM_REWARDS:
        raise ValueError(f"unknown team reward {reduction!r}; choose one of {TEAM_REWARDS}")
    reduce = jnp.sum if reduction == "sum" else jnp.mean
    return reduce(reward, axis=-1, keepdims=True)


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoMixerConfig:
    """Independent learners (IQL): each agent regresses its own Q-value on its own reward."""

    kind: ClassVar[str] = "none"
    needs_key: ClassVar[bool] = False
    reads_agent_states: ClassVar[bool] = False  # only the transformer mixer's
    lr: ClassVar[float | None] = None  # the mixer's parameters (if any) use the learner's lr
    needs_world_state: ClassVar[bool] = False

    def module(self) -> nn.Module:
        return NoMixer()

    def team_reward(self, reward: jax.Array, reduction: str = "sum") -> jax.Array:
        """Rewards ``[..., A]`` unchanged (``reduction`` is checked, not used)."""
        _reduce(reward, reduction)
        return reward


@dataclasses.dataclass(frozen=True, kw_only=True)
class VDNMixerConfig:
    """VDN: the team's Q-value is the sum of the agents'; no parameters, no world state."""

    kind: ClassVar[str] = "vdn"
    needs_key: ClassVar[bool] = False
    reads_agent_states: ClassVar[bool] = False  # only the transformer mixer's
    lr: ClassVar[float | None] = None  # the mixer's parameters (if any) use the learner's lr
    needs_world_state: ClassVar[bool] = False

    def module(self) -> nn.Module:
        return VDNMixer()

    def team_reward(self, reward: jax.Array, reduction: str = "sum") -> jax.Array:
        """Rewards ``[..., A]`` -> the team reward ``[..., 1]`` (``"sum"`` or ``"mean"``)."""
        return _reduce(reward, reduction)


@dataclasses.dataclass(frozen=True, kw_only=True)
class QMIXMixerConfig:
    """QMIX: a monotonic mixing network conditioned on the world state (``QMixer``).

    Attributes:
        embed_dim: width of the mixing layer.
        hypernet_hidden_dim: hidden width of the hypernetworks.
        init_scale: orthogonal gain of every hypernetwork layer.
    """

    kind: ClassVar[str] = "qmix"
    needs_key: ClassVar[bool] = False
    reads_agent_states: ClassVar[bool] = False  # only the transformer mixer's
    lr: ClassVar[float | None] = None  # the mixer's parameters (if any) use the learner's lr
    needs_world_state: ClassVar[bool] = True
    embed_dim: int = 32
    hypernet_hidden_dim: int = 128
    init_scale: float = 1e-3

    def __post_init__(self):
        for name in ("embed_dim", "hypernet_hidden_dim", "init_scale"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"mixer.{name} must be > 0, got {value}")

    def module(self) -> nn.Module:
        return QMixer(self.embed_dim, self.hypernet_hidden_dim, self.init_scale)

    def team_reward(self, reward: jax.Array, reduction: str = "sum") -> jax.Array:
        """Rewards ``[..., A]`` -> the team reward ``[..., 1]`` (``"sum"`` or ``"mean"``)."""
        return _reduce(reward, reduction)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SHAQMixerConfig:
    """SHAQ: learned weights for the agents whose action is not their greedy one
    (``SHAQMixer``); the TD target is the sum of the agents' greedy values.

    Attributes:
        sample_size: random agent orders per alpha estimate (JaxMARL's ``SAMPLE_SIZE``).
        embed_dim: width of the estimator's hidden layer (``MIXER_EMBEDDING_DIM``).
        hypernet_hidden_dim: hidden width of its hypernetworks (``MIXER_HYPERNET_HIDDEN_DIM``).
        init_scale: orthogonal gain of every hypernetwork layer (``MIXER_INIT_SCALE``).
        alpha: a fixed alpha (>= 1) instead of the estimator (``MANUAL_ALPHA_ESTIMATES``);
            ``None`` learns it.
        lr: learning rate of the estimator's parameters (``LR_ALPHA``); ``None`` uses the
            learner's ``lr``. Annealed with it when ``anneal_lr`` is on.
    """

    kind: ClassVar[str] = "shaq"
    needs_key: ClassVar[bool] = True  # its coalitions
    reads_agent_states: ClassVar[bool] = False
    needs_world_state: ClassVar[bool] = True
    sample_size: int = 5
    embed_dim: int = 32
    hypernet_hidden_dim: int = 64
    init_scale: float = 1e-5
    alpha: float | None = None
    lr: float | None = None

    def __post_init__(self):
        for name in ("sample_size", "embed_dim", "hypernet_hidden_dim", "init_scale"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"mixer.{name} must be > 0, got {value}")
        if self.alpha is not None and not self.alpha >= 1.0:
            raise ValueError(
                f"mixer.alpha must be >= 1 (or null to learn it), got {self.alpha}: SHAQ "
                f"weights a non-greedy action's Q-value by at least 1"
            )
        if self.lr is not None and not self.lr > 0:
            raise ValueError(f"mixer.lr must be > 0 (or null for the learner's lr), got {self.lr}")

    def module(self) -> nn.Module:
        return SHAQMixer(
            self.sample_size, self.embed_dim, self.hypernet_hidden_dim, self.init_scale, self.alpha
        )

    def team_reward(self, reward: jax.Array, reduction: str = "sum") -> jax.Array:
        """Rewards ``[..., A]`` -> the team reward ``[..., 1]`` (``"sum"`` or ``"mean"``)."""
        return _reduce(reward, reduction)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TransformerMixerConfig:
    """TransfQMIX's mixer (``jaxmarl.networks.transformer.TransformerMixer``): a transformer
    over the world's entity rows and the agents' hidden tokens whose outputs are the weights of
    a monotonic mixing layer. It mixes transformer agents only (``alg=transf_qmix``), whose
    width, attention and embedding activation it shares.

    Attributes:
        num_layers: encoder blocks (JaxMARL's ``MIXER_TRANSF_NUM_LAYERS``).
        num_heads: attention heads (``MIXER_TRANSF_NUM_HEADS``); must divide the width.
        ff_dim: hidden width of each block's MLP (``MIXER_TRANSF_DIM_FF``).
        init_scale: orthogonal gain of its embedding and bias layers (``MIXER_INIT_SCALE``).
    """

    kind: ClassVar[str] = "transformer"
    needs_key: ClassVar[bool] = False
    reads_agent_states: ClassVar[bool] = True
    lr: ClassVar[float | None] = None
    needs_world_state: ClassVar[bool] = True
    num_layers: int = 2
    num_heads: int = 8
    ff_dim: int = 128
    init_scale: float = 1.0

    def __post_init__(self):
        for name in ("num_layers", "num_heads", "ff_dim", "init_scale"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"mixer.{name} must be > 0, got {value}")

    def module(self) -> nn.Module:
        raise ValueError(
            "mixer=transformer mixes the hidden tokens of transformer agents; use "
            "alg=transf_qmix (or another mixer)"
        )

    def team_reward(self, reward: jax.Array, reduction: str = "sum") -> jax.Array:
        """Rewards ``[..., A]`` -> the team reward ``[..., 1]`` (``"sum"`` or ``"mean"``)."""
        return _reduce(reward, reduction)


MixerConfig = (
    NoMixerConfig | VDNMixerConfig | QMIXMixerConfig | SHAQMixerConfig | TransformerMixerConfig
)
