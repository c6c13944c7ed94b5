"""The one rollout every learner uses: ``T`` steps of ``B`` vmapped envs in a ``lax.scan``.

A learner wraps its env once in a ``TrainingEnv`` (the ``LogWrapper``-wrapped env, how its agents
are stacked, whether the world state is computed) and binds its parameters into a ``Policy``
before the rollout, as brax's acting module does: ``policy(carry, inputs, keys) -> (carry,
action, extras)`` acts on agent-stacked inputs (``StepInput``: ``[B, A, ...]``) with one key per
env (``[B]``: an env's randomness is its own, whichever device holds it; see
``jaxmarl.training.data_parallel``) and returns
actions ``[B, A]`` (or ``[B, A, d]``) and per-step extras such as ``log_prob`` and ``value``
(``[B, A]``). Optionally ``bootstrap(carry, terminal_inputs) -> [B, A]`` values the *real* last
observation of each step (before the auto-reset) with the policy carry after that step; it is
stored as ``extras["bootstrap_value"]`` and used for truncated episodes. It runs once, on all
``T`` steps, after the loop (the loop records each step's pre-reset inputs and carry), so it
must be a pure function of its arguments. Learners that value those observations later (Q-learning
replays them against a changing target network) ask for them with ``record_terminal=True``
instead: they are stored as ``extras["terminal_inputs"]``, a ``StepInput`` per step (valid where
the episode ended).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import jaxmarl
from jaxmarl.env import MultiAgentEnv
from jaxmarl.training.data_parallel import SINGLE, DataShards
from jaxmarl.training.types import Runner, StepInput, Transition
from jaxmarl.wrappers.agent_batch import AgentBatch
from jaxmarl.wrappers.base import wrapper_layers
from jaxmarl.wrappers.entities import EntityObservations
from jaxmarl.wrappers.log import LogWrapper

Policy = Callable[[Any, StepInput, jax.Array], tuple[Any, jax.Array, dict]]
Bootstrap = Callable[[Any, StepInput], jax.Array]

_LOG_KEYS = ("returned_episode", "returned_episode_returns", "returned_episode_lengths")
_RESERVED_INFOS = {"terminated", "truncated", "terminal_obs", "terminal_state", *_LOG_KEYS}
_BOOTSTRAP_CARRY = "_bootstrap_carry"  # the policy carry after each step, for ``bootstrap``


@dataclasses.dataclass(frozen=True)
class TrainingEnv:
    """An environment as learners see it: episode statistics on, agents stacked.

    Attributes:
        env: the ``LogWrapper``-wrapped environment (unbatched; vmapped by the rollout).
        batch: how its agents are stacked (``AgentBatch``).
        world_state: whether ``inputs`` computes ``env.get_world_state`` (centralised critics,
            mixers that read it); otherwise ``StepInput.world_state`` is ``[B, 0]``.
    """

    env: Any
    batch: AgentBatch
    world_state: bool = False

    @classmethod
    def make(
        cls,
        env_id: str,
        env_kwargs: dict | None = None,
        *,
        agent_id: bool,
        world_state: bool,
        entities: bool = False,
    ) -> TrainingEnv:
        """``jaxmarl.make(env_id, **env_kwargs)``, wrapped and batched; with ``entities`` its
        entity view is the observations and world state (``jaxmarl.wrappers.entities``)."""
        env = jaxmarl.make(env_id, **(env_kwargs or {}))
        if entities:
            env = EntityObservations(env)
        env = LogWrapper(env)
        return cls(env, AgentBatch.from_env(env, agent_id=agent_id), world_state)

    @classmethod
    def from_config(
        cls, env_config: Any, *, agent_id: bool, world_state: bool, entities: bool = False
    ) -> TrainingEnv:
        """The env an ``EnvConfig`` names (``env_id``, ``env_kwargs``), wrapped and batched."""
        return cls.make(
            env_config.env_id,
            env_config.env_kwargs,
            agent_id=agent_id,
            world_state=world_state,
            entities=entities,
        )

    @property
    def unwrapped(self) -> MultiAgentEnv:
        return self.env.unwrapped

    @property
    def policy_env(self) -> Any:
        """The env without its episode statistics: what the policy's observations come from
        (the unwrapped env, or its entity view)."""
        env = self.env
        return env._env if isinstance(env, LogWrapper) else env

    @property
    def max_steps(self) -> int:
        return self.env.max_steps

    def world_state_leaves(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """``(name, shape)`` of the pieces ``StepInput.world_state`` is flattened from, in
        order: every agent's observation for the default world state, else the env's
        ``get_world_state`` output as one piece (``"world_state"``); none without
        ``world_state``. A centralised critic's CNN unflattens the world state by them
        (``jaxmarl.networks.encoders.DictEncoder``).
        """
        env = self.env
        if not self.world_state:
            return ()
        if _default_world_state(env):
            return tuple((a, tuple(env.observation_space(a).shape)) for a in env.agents)
        shape = jax.eval_shape(
            lambda key: env.get_world_state(env.reset(key)[1]), jax.random.key(0)
        ).shape
        return (("world_state", tuple(int(d) for d in shape)),)

    def inputs(self, obs: dict[str, jax.Array], env_state: Any, first: jax.Array) -> StepInput:
        """Stack one step of ``B`` envs for the policy."""
        env, batch = self.env, self.batch
        avail = jax.vmap(lambda s: batch.avail_actions(env, s))(env_state)
        if self.world_state and _default_world_state(env):
            # The default world state is the concatenated observations: reuse the ones at
            # hand instead of recomputing them from the state.
            world = jnp.concatenate(
                [obs[agent].reshape((first.shape[0], -1)) for agent in env.agents], axis=-1
            )
        elif self.world_state:
            world = jax.vmap(lambda s: jnp.ravel(env.get_world_state(s)))(env_state)
        else:
            world = jnp.zeros((first.shape[0], 0), dtype=jnp.float32)
        return StepInput(
            obs=batch.stack_obs(obs),
            avail_actions=avail,
            world_state=world.astype(jnp.float32),
            first=first,
        )

    def runner_inputs(self, runner: Runner) -> StepInput:
        """The inputs of the step a runner stands at (what the next rollout acts on first)."""
        return self.inputs(runner.obs, runner.env_state, runner.first)

    def reset(
        self, key: jax.Array, num_envs: int, policy_carry: Any, data: DataShards = SINGLE
    ) -> Runner:
        """Reset ``num_envs`` envs into a fresh ``Runner``; env ``i`` (global index, ``data``:
        this device's share of a split batch) resets with ``fold_in(reset key, i)``."""
        reset_key, key = jax.random.split(key)
        keys = data.row_keys(reset_key, num_envs * data.count)
        obs, env_state = jax.vmap(self.env.reset)(keys)
        return Runner(
            env_state=env_state,
            obs=obs,
            first=jnp.ones((num_envs,), dtype=jnp.bool_),
            policy_carry=policy_carry,
            key=key,
        )


def _default_world_state(env: Any) -> bool:
    """Whether ``env``'s world state is the default concatenation of its observations (no
    wrapper provides its own, and the env does not override it)."""
    *wrappers, unwrapped = wrapper_layers(env)
    if any(layer.provides_world_state for layer in wrappers):
        return False
    return type(unwrapped).get_world_state is MultiAgentEnv.get_world_state


def rollout(
    env: TrainingEnv,
    policy: Policy,
    runner: Runner,
    num_steps: int,
    *,
    bootstrap: Bootstrap | None = None,
    record_terminal: bool = False,
    shaping: tuple[str, jax.Array] | None = None,
    data: DataShards = SINGLE,
) -> tuple[Runner, Transition]:
    """Run ``num_steps`` steps; returns the new runner and a ``Transition`` with ``[T, B, ...]``.

    Args:
        env: the training env (its ``env`` must carry ``LogWrapper``'s episode statistics).
        policy: acts on a ``StepInput`` with its parameters bound; see the module docstring.
        runner: current env states, observations, policy carry and key.
        num_steps: ``T``.
        bootstrap: values of pre-reset observations (for truncation); ``None`` skips it.
        record_terminal: store the inputs of pre-reset observations as
            ``extras["terminal_inputs"]`` (``first`` is all False there).
        shaping: ``(info key, coefficient)``: train on ``reward + coefficient *
            infos[key][agent]`` (``shaping_of``); the logged episode returns are unchanged.
        data: this device's share of a seed's envs (``runner`` holds that share); each env's
            step and action keys are ``fold_in(step key, global env index)``.
    """
    num_envs = runner.first.shape[0]
    need_terminal = bootstrap is not None or record_terminal

    def env_step(key, state, actions):
        return env.env.step(key, state, actions, with_terminal_obs=need_terminal)

    def body(runner: Runner, step_keys):
        action_key, env_keys = step_keys
        inputs = env.runner_inputs(runner)
        carry, action, extras = policy(runner.policy_carry, inputs, action_key)
        env_actions = env.batch.env_actions(action)
        obs, env_state, rewards, dones, infos = jax.vmap(env_step)(
            env_keys, runner.env_state, env_actions
        )
        missing = [k for k in _LOG_KEYS if k not in infos]
        if missing:
            raise ValueError(
                f"rollout needs an env wrapped in jaxmarl.wrappers.LogWrapper (infos lack "
                f"{missing}); build it with TrainingEnv.make"
            )
        extras = dict(extras)
        if need_terminal:
            extras["terminal_inputs"] = env.inputs(
                infos["terminal_obs"], infos["terminal_state"], jnp.zeros_like(runner.first)
            )
            if bootstrap is not None:
                extras[_BOOTSTRAP_CARRY] = carry
        env_infos = {
            name: value
            for name, value in infos.items()
            if name not in _RESERVED_INFOS and getattr(value, "shape", None) == (num_envs,)
        }
        reward = env.batch.stack(rewards).astype(jnp.float32)
        if shaping is not None:
            reward = reward + shaping[1] * _shaped_reward(env, infos, shaping[0])
        transition = Transition(
            inputs=inputs,
            action=action,
            reward=reward,
            terminated=infos["terminated"],
            truncated=infos["truncated"],
            extras=extras,
            episode_return=infos["returned_episode_returns"],
            episode_length=infos["returned_episode_lengths"][:, 0],
            episode_done=infos["returned_episode"][:, 0],
            env_infos=env_infos,
        )
        next_runner = Runner(
            env_state=env_state, obs=obs, first=dones["__all__"], policy_carry=carry, key=None
        )
        return next_runner, transition

    # Every key of the rollout in two vmapped draws before the loop, not per step: on CPU
    # each threefry call is a small loop of its own.
    key, action_key, env_key = jax.random.split(runner.key, 3)
    per_env = jax.vmap(lambda k: data.row_keys(k, num_envs * data.count))
    step_keys = (
        per_env(jax.random.split(action_key, num_steps)),
        per_env(jax.random.split(env_key, num_steps)),
    )
    last, trajectory = jax.lax.scan(body, runner.replace(key=None), step_keys)
    if need_terminal:
        extras = dict(trajectory.extras)
        terminal = extras["terminal_inputs"] if record_terminal else extras.pop("terminal_inputs")
        if bootstrap is not None:
            # All T steps valued in one batched call after the loop: one product of T * B rows
            # instead of T small ones inside it.
            carries = extras.pop(_BOOTSTRAP_CARRY)
            extras["bootstrap_value"] = jax.vmap(bootstrap)(carries, terminal)
        trajectory = trajectory.replace(extras=extras)
    return last.replace(key=key), trajectory


def shaping_of(env_config: Any, env_steps: jax.Array) -> tuple[str, jax.Array] | None:
    """The ``shaping`` argument of ``rollout`` for an ``EnvConfig`` after ``env_steps`` steps
    (``None`` when its ``reward_shaping`` is off)."""
    shaping = env_config.reward_shaping
    if not shaping.active:
        return None
    return shaping.info_key, shaping.coefficient(env_steps)


def _shaped_reward(env: TrainingEnv, infos: dict, key: str) -> jax.Array:
    """``[B, A]`` float32 shaping reward of each agent from ``infos[key]``."""
    value = infos.get(key)
    if not isinstance(value, dict) or set(value) != set(env.env.agents):
        raise ValueError(
            f"env.reward_shaping reads infos[{key!r}][agent], but "
            f"{type(env.unwrapped).__name__} gives "
            f"{'no such info' if value is None else type(value).__name__}; set "
            f"env.reward_shaping.horizon=0 or the env's per-agent shaping info key"
        )
    return env.batch.stack(value).astype(jnp.float32)


def episode_metrics(trajectory: Transition) -> dict[str, jax.Array]:
    """Means over the episodes that ended in ``trajectory`` (NaN-free: 0 when none ended;
    ``episodes`` says which, and ``rows_with_episodes`` drops such records from curves).

    Returns ``episode_return`` (team mean of per-agent returns), ``episode_welfare`` (their
    sum, the total welfare of general-sum games), ``episode_length``, ``episodes`` (count) and
    the mean of every env info at episode ends (e.g. ``won``, Coin Game's
    ``own_coin_fraction``).
    """
    done = trajectory.episode_done.astype(jnp.float32)  # [T, B]
    count = jnp.sum(done)
    denom = jnp.maximum(count, 1.0)
    team_return = jnp.mean(trajectory.episode_return, axis=-1)  # [T, B]
    welfare = jnp.sum(trajectory.episode_return, axis=-1)  # [T, B]
    metrics = {
        "episode_return": jnp.sum(team_return * done) / denom,
        "episode_welfare": jnp.sum(welfare * done) / denom,
        "episode_length": jnp.sum(trajectory.episode_length * done) / denom,
        "episodes": count,
    }
    for name, value in trajectory.env_infos.items():
        metrics[name] = jnp.sum(value.astype(jnp.float32) * done) / denom
    return metrics
