"""Acting with Q-values: greedy and epsilon-greedy over available actions."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmarl.networks.q_network import QNetwork
from jaxmarl.training.rollout import Policy
from jaxmarl.training.types import StepInput


def masked_q(q: jax.Array, avail: jax.Array) -> jax.Array:
    """Unavailable actions get the smallest finite value (``[..., n]``)."""
    return jnp.where(avail, q, jnp.finfo(q.dtype).min)


def greedy_actions(q: jax.Array, avail: jax.Array) -> jax.Array:
    """``argmax`` over available actions: ``[..., n] -> [...]`` int32 (0 if none is available)."""
    return jnp.argmax(masked_q(q, avail), axis=-1).astype(jnp.int32)


def epsilon_greedy(key: jax.Array, q: jax.Array, avail: jax.Array, epsilon: jax.Array) -> jax.Array:
    """With probability ``epsilon`` a uniformly random *available* action, else the greedy one.

    Args:
        key: PRNG key (split here for the coin and the random action).
        q: ``[..., n]`` Q-values.
        avail: ``[..., n]`` bool available actions.
        epsilon: ``[]`` exploration rate.

    Returns:
        ``[...]`` int32 actions, always available where any action is.
    """
    coin_key, action_key = jax.random.split(key)
    uniform_logits = masked_q(jnp.zeros_like(q), avail)
    random = jax.random.categorical(action_key, uniform_logits, axis=-1).astype(jnp.int32)
    explore = jax.random.uniform(coin_key, q.shape[:-1]) < epsilon
    return jnp.where(explore, random, greedy_actions(q, avail))


def q_policies(network: QNetwork):
    """``(exploring_policy, greedy_policy)`` of a Q-network.

    ``exploring_policy(params, epsilon)`` binds the parameters and the current exploration
    rate into a rollout ``Policy`` that acts epsilon-greedily; ``greedy_policy(params, carry,
    inputs)`` acts greedily (evaluation, ``Learner.greedy_policy``).
    """

    def q_values(params, carry, inputs: StepInput):
        carry, q = network.q_values(params, carry, inputs.obs[None], inputs.first[None])
        return carry, q[0]

    def exploring_policy(params, epsilon) -> Policy:
        def policy(carry, inputs: StepInput, keys):
            carry, q = q_values(params, carry, inputs)
            # One key per env (``[B]``): each env explores with its own randomness.
            act = jax.vmap(epsilon_greedy, in_axes=(0, 0, 0, None))
            return carry, act(keys, q, inputs.avail_actions, epsilon), {}

        return policy

    def greedy_policy(params, carry, inputs: StepInput):
        carry, q = q_values(params, carry, inputs)
        return carry, greedy_actions(q, inputs.avail_actions)

    return exploring_policy, greedy_policy
