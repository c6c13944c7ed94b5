"""Containers that flow through training: what one rollout step records, and the runner."""

from __future__ import annotations

from typing import Any

import jax
from flax import struct


@struct.dataclass
class StepInput:
    """What a policy sees at one step, agents stacked (see ``jaxmarl.wrappers.AgentBatch``).

    Attributes:
        obs: ``[B, A, *input_shape]`` float32.
        avail_actions: ``[B, A, num_actions]`` bool.
        world_state: ``[B, W]`` float32 (the env's ``get_world_state``).
        first: ``[B]`` bool, ``obs`` is the first of an episode (recurrent states reset).
    """

    obs: jax.Array
    avail_actions: jax.Array
    world_state: jax.Array
    first: jax.Array


@struct.dataclass
class Transition:
    """One rollout step for every env; a trajectory stacks them to ``[T, B, ...]``.

    Attributes:
        inputs: the ``StepInput`` the policy acted on.
        action: ``[B, A]`` int32 or ``[B, A, d]`` float32.
        reward: ``[B, A]`` float32.
        terminated: ``[B]`` bool, the episode really ended (no bootstrapping).
        truncated: ``[B]`` bool, the episode hit its time limit (bootstrap from
            ``extras["bootstrap_value"]`` when the learner computes one).
        extras: learner-specific per-step values (``log_prob``, ``value`` ...), ``[B, A]``.
        episode_return: ``[B, A]`` float32, return of the episode that just ended (valid where
            ``episode_done``).
        episode_length: ``[B]`` int32, its length.
        episode_done: ``[B]`` bool, an episode ended at this step.
        env_infos: scalar-per-env infos the env reports (e.g. ``won``), ``[B]``.
    """

    inputs: StepInput
    action: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    extras: dict[str, jax.Array]
    episode_return: jax.Array
    episode_length: jax.Array
    episode_done: jax.Array
    env_infos: dict[str, jax.Array]

    @property
    def done(self) -> jax.Array:
        """``[.., B]`` bool: the episode ended at this step (either way)."""
        return self.terminated | self.truncated


@struct.dataclass
class Runner:
    """The part of the training state that moves through rollouts.

    Attributes:
        env_state: batched env state (``LogWrapper`` state), leaves ``[B, ...]``.
        obs: batched observations dict, ``{agent: [B, ...]}``.
        first: ``[B]`` bool, ``obs`` starts an episode.
        policy_carry: the policy's recurrent state (any pytree; empty for feed-forward).
        key: PRNG key for the next rollout.
    """

    env_state: Any
    obs: dict[str, jax.Array]
    first: jax.Array
    policy_carry: Any
    key: jax.Array


@struct.dataclass
class TrainState:
    """What an on-policy learner (PPO, PQN) carries between updates (checkpointed whole).

    Attributes:
        params: network parameters.
        opt_state: optax state.
        runner: env states, observations, recurrent carries, rollout key.
        key: key for minibatch shuffling.
        update: ``[]`` int32, updates done.
    """

    params: Any
    opt_state: Any
    runner: Runner
    key: jax.Array
    update: jax.Array
