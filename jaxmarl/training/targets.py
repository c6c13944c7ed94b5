"""Return targets: GAE for actor-critic learners.

All functions are pure and work on time-major arrays ``[T, ...]`` where ``...`` is any batch
shape (envs, agents). Termination and truncation are separate inputs: a terminated episode has
no future value; a truncated one (time limit) bootstraps from the value of its real last
observation; in both cases the advantage trace stops at the boundary.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def next_values(
    values: jax.Array,
    last_value: jax.Array,
    done: jax.Array,
    bootstrap_value: jax.Array,
) -> jax.Array:
    """Value of the state after each step, before any auto-reset.

    Args:
        values: ``[T, ...]`` V(s_t).
        last_value: ``[...]`` V(s_T), the state after the last step of the rollout.
        done: ``[T, ...]`` bool, an episode ended at step t (s_{t+1} is a fresh reset).
        bootstrap_value: ``[T, ...]`` V(terminal observation of step t); used where ``done``.

    Returns:
        ``[T, ...]``: ``bootstrap_value[t]`` where ``done[t]``, else ``values[t + 1]``
        (``last_value`` for the final step).
    """
    following = jnp.concatenate([values[1:], last_value[None]], axis=0)
    return jnp.where(done, bootstrap_value, following)


def gae(
    rewards: jax.Array,
    values: jax.Array,
    next_values: jax.Array,
    terminated: jax.Array,
    done: jax.Array,
    gamma: float,
    gae_lambda: float,
) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimation with separate termination and episode ends.

    ``delta_t = r_t + gamma * (1 - terminated_t) * next_values_t - values_t`` and
    ``A_t = delta_t + gamma * lambda * (1 - done_t) * A_{t+1}``.

    Args:
        rewards: ``[T, ...]`` float32.
        values: ``[T, ...]`` V(s_t).
        next_values: ``[T, ...]`` V(s_{t+1}) before any reset (see ``next_values``).
        terminated: ``[T, ...]`` bool, no future value after step t.
        done: ``[T, ...]`` bool, terminated or truncated: the trace stops after step t.
        gamma: discount.
        gae_lambda: GAE lambda.

    Returns:
        ``(advantages, value_targets)``, both ``[T, ...]``; targets = advantages + values.
    """
    continues = 1.0 - terminated.astype(rewards.dtype)
    carries = 1.0 - done.astype(rewards.dtype)
    deltas = rewards + gamma * continues * next_values - values

    def backward(advantage, step):
        delta, carry = step
        advantage = delta + gamma * gae_lambda * carry * advantage
        return advantage, advantage

    _, advantages = jax.lax.scan(
        backward, jnp.zeros_like(deltas[0]), (deltas, carries), reverse=True
    )
    return advantages, advantages + values
