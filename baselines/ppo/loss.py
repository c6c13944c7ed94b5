"""The PPO loss and the batch it reads."""

from __future__ import annotations

from typing import Any

import distrax
import jax
import jax.numpy as jnp
from flax import struct

from jaxmarl.baselines.ppo.config import PPOConfig
from jaxmarl.networks import ActorCritic
from jaxmarl.training import losses
from jaxmarl.training.data_parallel import DataShards


@struct.dataclass
class PPOBatch:
    """What the PPO loss reads, laid out ``[T, G, a, ...]``: time, then the ``G`` units that
    minibatches shuffle, each holding ``a`` agents that share one critic evaluation (``a = 1``,
    ``G`` = envs x agents for per-agent critics; ``a`` = agents, ``G`` = envs for a critic of the
    world state alone).

    Attributes:
        obs: ``[T, G, a, D]`` actor input.
        critic_input: ``[T, G, C]``, or ``None`` when the critic reads the actor's input (a
            local critic, ``a = 1``), so that minibatches do not move the observations twice.
        avail_actions: ``[T, G, a, num_actions]`` bool.  first: ``[T, G, a]`` bool.
        action: ``[T, G, a]`` or ``[T, G, a, d]`` (with ``action_bounds=tanh`` the Gaussian
        sample before squashing).  log_prob, value: ``[T, G, a]`` at
        collection time.  advantages, value_targets: ``[T, G, a]``.
    """

    obs: jax.Array
    critic_input: jax.Array | None
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


@struct.dataclass
class PPOMinibatch:
    """One minibatch: its steps and the recurrent states its sequences start from.

    Attributes:
        steps: ``PPOBatch`` ``[T, G_m, a, ...]``.
        actor_carry: ``[G_m, a, H]`` (``H = 0`` for feed-forward actors).
        critic_carry: ``[G_m, H]``.
    """

    steps: PPOBatch
    actor_carry: jax.Array
    critic_carry: jax.Array


def log_tanh_slope(u: jax.Array) -> jax.Array:
    """``log(1 - tanh(u)^2)``, stable for large ``|u|``."""
    return 2.0 * (jnp.log(2.0) - u - jax.nn.softplus(-2.0 * u))


def squashed_entropy(
    dist: distrax.MultivariateNormalDiag, raw_action: jax.Array, half_range: jax.Array
) -> jax.Array:
    """Entropy of ``low + (tanh(u) + 1) * half_range`` for ``u ~ dist``, estimated at the
    stored samples ``raw_action`` (``[..., d]``): the Gaussian's entropy plus the log of the
    squashing's slope there. The sample is written as ``loc + scale * noise`` with the noise
    held fixed, so the estimate's gradient reaches the mean and the scale (the pathwise
    gradient at the rollout's sample, which came from the policy that collected it)."""
    loc, scale = dist.loc, dist.scale_diag
    noise = jax.lax.stop_gradient((raw_action - loc) / scale)
    u = loc + scale * noise
    slope = jnp.sum(log_tanh_slope(u) + jnp.log(half_range), axis=-1)
    return dist.entropy() + slope


def ppo_loss(
    network: ActorCritic,
    config: PPOConfig,
    params: Any,
    minibatch: PPOMinibatch,
    *,
    tanh_half_range: jax.Array | None = None,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Clipped policy loss + ``vf_coef`` x (clipped) value loss - ``ent_coef`` x entropy.

    With ``tanh_half_range`` (``[d]``, ``action_bounds=tanh``) the stored actions are the
    Gaussian samples before squashing and the entropy is ``squashed_entropy``'s.

    Returns:
        ``(loss, {"loss", "policy_loss", "value_loss", "entropy", "approx_kl",
        "clip_fraction"})``, every entry a scalar mean over the minibatch.
    """
    steps = minibatch.steps
    agents = lambda x: merge_axes(x, 1)  # [T, G, a, ...] -> [T, G*a, ...]
    actor_carry = merge_axes(minibatch.actor_carry, 0)  # [G, a, H] -> [G*a, H]
    if steps.critic_input is None:  # a local critic (a = 1): it reads the actor's observation
        (_, dist), (_, values) = network.policy_and_value(
            params,
            actor_carry,
            minibatch.critic_carry,
            agents(steps.obs),
            agents(steps.first),
            agents(steps.avail_actions),
        )
    else:
        _, dist = network.policy(
            params, actor_carry, agents(steps.obs), agents(steps.first), agents(steps.avail_actions)
        )
        _, values = network.value(
            params, minibatch.critic_carry, steps.critic_input, steps.first[..., 0]
        )  # [T, G]
    values = jnp.broadcast_to(values[..., None], steps.value_targets.shape)
    advantages = steps.advantages
    if config.normalize_advantages:  # over the whole minibatch, every device's share of it
        advantages = DataShards.of(config).normalize(advantages)
    policy_loss, stats = losses.ppo_policy_loss(
        dist.log_prob(agents(steps.action)),
        agents(steps.log_prob),
        agents(advantages),
        config.clip_eps,
    )
    value_clip = config.clip_eps if config.clip_value else None
    value_loss = losses.value_loss(values, steps.value, steps.value_targets, value_clip)
    if tanh_half_range is None:
        entropy = jnp.mean(dist.entropy())
    else:
        entropy = jnp.mean(squashed_entropy(dist, agents(steps.action), tanh_half_range))
    total = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
    return total, {
        "loss": total,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        **stats,
    }
