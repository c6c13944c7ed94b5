"""What every learner returns, and the pieces built only from that.

A ``Learner`` is a pair of pure functions in the optax style, ``init(key) -> state`` and
``update(state) -> (state, metrics)``, plus what the host loop, evaluation and checkpointing
need to know (the training env, the greedy policy). ``make_train_from`` turns one into the
PureJaxRL-style ``train(key)`` that compiles a whole run into one program.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxmarl.training.rollout import TrainingEnv, episode_metrics, rollout
from jaxmarl.training.types import StepInput

GreedyPolicy = Callable[[Any, Any, StepInput], tuple[Any, jax.Array]]


@dataclasses.dataclass(frozen=True)
class Learner:
    """A learner's pure functions and static description.

    Attributes:
        config: the learner's frozen config.
        env: the ``TrainingEnv`` (wrapped env, agent stacking, world state on or off).
        init: ``key -> state``.
        update: ``state -> (state, metrics)``; one update (rollout + optimisation).
        num_updates: updates in a full run.
        greedy_policy: ``(params, carry, StepInput) -> (carry, action [B, A(, d)])``.
        initial_carry: ``num_envs -> carry`` for ``greedy_policy``.
        env_steps_per_update: env steps one update consumes (all envs).
        evaluate_tasks: for learners with more than one env (multi-task), ``(params, key,
            num_envs) -> metrics`` evaluating every one of them (``evaluate`` calls it); ``None``:
            the greedy policy in ``env``.
        sweepable: hyperparameters its optimiser holds in its state when swept in-program
            (``run.sweep``, ``jaxmarl.training.sweep``); empty: it cannot sweep in-program.
    """

    config: Any
    env: TrainingEnv
    init: Callable[[jax.Array], Any]
    update: Callable[[Any], tuple[Any, dict]]
    num_updates: int
    greedy_policy: GreedyPolicy
    initial_carry: Callable[[int], Any]
    env_steps_per_update: int
    evaluate_tasks: Callable[[Any, jax.Array, int], dict[str, jax.Array]] | None = None
    sweepable: tuple[str, ...] = ()


def make_train_from(learner: Learner) -> Callable[[jax.Array], tuple[Any, dict]]:
    """``train(key) -> (final state, metrics with a leading [num_updates] axis)``."""

    def train(key: jax.Array):
        state = learner.init(key)
        return jax.lax.scan(lambda s, _: learner.update(s), state, None, learner.num_updates)

    return train


def evaluate(learner: Learner, params: Any, key: jax.Array, num_envs: int) -> dict[str, jax.Array]:
    """Greedy episodes in ``num_envs`` fresh envs for one episode length (``env.max_steps``).

    Returns the ``episode_metrics`` of the first episode of each env (every env with a time
    limit ends one within ``max_steps``), so ``episodes == num_envs`` and short episodes are
    not over-counted (auto-reset would let a 14-step battle count seven times in 100 steps,
    a 100-step one once). A learner with ``evaluate_tasks`` (multi-task) evaluates each of
    its tasks that way instead: ``"<task>/<metric>"`` per task plus the means over tasks.
    """
    if learner.evaluate_tasks is not None:
        return learner.evaluate_tasks(params, key, num_envs)
    return greedy_episodes(
        learner.env, learner.greedy_policy, learner.initial_carry, params, key, num_envs
    )


def greedy_episodes(
    env: TrainingEnv,
    greedy_policy: GreedyPolicy,
    initial_carry: Callable[[int], Any],
    params: Any,
    key: jax.Array,
    num_envs: int,
) -> dict[str, jax.Array]:
    """``evaluate`` for one env and greedy policy: ``episode_metrics`` of the first episode
    of each of ``num_envs`` fresh envs rolled out greedily for ``env.max_steps`` steps."""
    runner = env.reset(key, num_envs, initial_carry(num_envs))

    def policy(carry, inputs, _key):
        carry, action = greedy_policy(params, carry, inputs)
        return carry, action, {}

    _, trajectory = rollout(env, policy, runner, env.max_steps)
    ended = trajectory.episode_done  # [T, B]
    first_end = ended & (jnp.cumsum(ended, axis=0, dtype=jnp.int32) == 1)
    return episode_metrics(trajectory.replace(episode_done=first_end))


def record_greedy_episode(learner: Learner, params: Any, key: jax.Array) -> tuple[Any, jax.Array]:
    """One greedy episode in one env, for GIFs.

    Returns:
        ``(states, num_frames)``: states ``[max_steps + 1, ...]`` from the reset on; once the
        episode ends (win, loss or time limit) its final state is repeated, and ``num_frames``
        (int32) counts the frames up to and including that final state.
    """
    env = learner.env.policy_env
    # step_env below the log wrapper: the GIF needs no episode statistics.
    training_env = dataclasses.replace(learner.env, env=env)
    reset_key, key = jax.random.split(key)
    obs, state = env.reset(reset_key)
    add_batch = lambda tree: jax.tree.map(lambda x: x[None], tree)

    def step(carry, step_key):
        state, obs, policy_carry, first, ended = carry
        inputs = training_env.inputs(add_batch(obs), add_batch(state), first)
        policy_carry, action = learner.greedy_policy(params, policy_carry, inputs)
        actions = jax.tree.map(lambda x: x[0], training_env.batch.env_actions(action))
        next_obs, next_state, _, dones, _ = env.step_env(step_key, state, actions)
        # step_env does not reset: after the end, keep showing the final state.
        keep = lambda new, old: jnp.where(ended, old, new)
        state = jax.tree.map(keep, next_state, state)
        obs = jax.tree.map(keep, next_obs, obs)
        frame = jnp.where(ended, 0, 1)
        ended = ended | dones["__all__"]
        return (state, obs, policy_carry, jnp.zeros_like(first), ended), (state, frame)

    carry = (
        state,
        obs,
        learner.initial_carry(1),
        jnp.ones((1,), dtype=jnp.bool_),
        jnp.bool_(False),
    )
    _, (states, frames) = jax.lax.scan(step, carry, jax.random.split(key, env.max_steps))
    states = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), state, states)
    return states, 1 + jnp.sum(frames, dtype=jnp.int32)
