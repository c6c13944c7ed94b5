"""Return targets: GAE for actor-critic learners; n-step and lambda returns for Q-learning.

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


def n_step_returns(
    rewards: jax.Array,
    next_values: jax.Array,
    terminated: jax.Array,
    done: jax.Array,
    gamma: float,
    n: int,
) -> jax.Array:
    """n-step TD targets, cut at episode ends and at the end of the sequence.

    ``G_t = r_t + gamma * (1 - terminated_t) * (next_values_t if done_t or t = T-1 else
    G'_{t+1})`` where ``G'`` is the ``(n-1)``-step return, and the 1-step return is
    ``r_t + gamma * (1 - terminated_t) * next_values_t``. So ``G_t`` sums up to ``n`` rewards
    of its own episode and bootstraps from the value after the last of them.

    Args:
        rewards: ``[T, ...]`` float32.
        next_values: ``[T, ...]`` value of the state after step t (before any reset), e.g.
            ``max_a Q_target(s_{t+1}, a)``.
        terminated: ``[T, ...]`` bool, no future value after step t.
        done: ``[T, ...]`` bool, the episode ended at step t (either way): no later reward.
        gamma: discount.
        n: steps (``n >= 1``, static).

    Returns:
        ``[T, ...]`` targets.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    continues = gamma * (1.0 - terminated.astype(rewards.dtype))
    returns = rewards + continues * next_values
    for _ in range(n - 1):
        following = jnp.concatenate([returns[1:], next_values[-1:]], axis=0)
        returns = rewards + continues * jnp.where(done, next_values, following)
    return returns


def lambda_returns(
    rewards: jax.Array,
    next_values: jax.Array,
    terminated: jax.Array,
    done: jax.Array,
    gamma: float,
    td_lambda: float,
) -> jax.Array:
    """TD(lambda) targets (Peng's Q(lambda) with ``next_values = max_a Q(s_{t+1}, a)``).

    ``G_t = r_t + gamma * (1 - terminated_t) * ((1 - lambda) * next_values_t + lambda *
    G_{t+1})``, where ``G_{t+1}`` is replaced by ``next_values_t`` after an episode end
    (``done_t``) and after the last step of the sequence. ``lambda = 0`` is the 1-step target,
    ``lambda = 1`` the discounted return bootstrapped at the end of the sequence.

    Args: as ``n_step_returns``, with ``td_lambda`` in [0, 1] instead of ``n``.

    Returns:
        ``[T, ...]`` targets.
    """
    continues = gamma * (1.0 - terminated.astype(rewards.dtype))
    cut = done.astype(rewards.dtype)

    def backward(following, step):
        reward, cont, ended, value = step
        later = (1.0 - ended) * following + ended * value
        target = reward + cont * ((1.0 - td_lambda) * value + td_lambda * later)
        return target, target

    _, returns = jax.lax.scan(
        backward, next_values[-1], (rewards, continues, cut, next_values), reverse=True
    )
    return returns
