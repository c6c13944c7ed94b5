"""JaxMARL's ``jaxmarl.wrappers.baselines``, as thin layers over this project's wrappers.

JaxMARL's baseline scripts import their wrappers from here::

    from jaxmarl.wrappers.baselines import LogWrapper, MPELogWrapper, SMAXLogWrapper
    from jaxmarl.wrappers.baselines import CTRolloutManager

* ``LogWrapper`` is :mod:`jaxmarl.wrappers.log`'s with every info that holds one value per
  env (``terminated``, ``truncated``, an env's own scalar infos) repeated for each agent,
  ``[num_agents]``: JaxMARL's scripts reshape every info leaf to ``[num_envs * num_agents]``.
  ``LogEnvState`` is unchanged. ``OvercookedV2LogWrapper`` is this ``LogWrapper``: the
  per-recipe returns (``returned_episode_recipe_returns``) come from the env itself.
* ``MPELogWrapper`` logs returns multiplied by the number of agents. That is JaxMARL's
  convention, taken from the MAPPO "on-policy" code base so that MPE returns compare with
  published ones; the rewards handed to the learner are not scaled.
* ``SMAXLogWrapper`` adds ``infos["returned_won_episode"]`` (``[num_agents]`` float32, 1.0 when
  the last finished episode was won). It reads the env's own ``infos["won"]``; JaxMARL infers a
  win from a reward of at least 1, which misreports a win when ``won_battle_bonus < 1``.
* ``CTRolloutManager`` (the batch manager of JaxMARL's Q-learning scripts) pads, flattens and
  id-tags observations with :class:`jaxmarl.wrappers.AgentBatch`, and adds the global state
  ``obs["__all__"]`` and the team reward ``rewards["__all__"]``.
* ``save_params`` / ``load_params`` write and read flat safetensors files as JaxMARL's do (they
  need the ``safetensors`` package).
"""

from __future__ import annotations

import dataclasses
import os
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from flax.traverse_util import flatten_dict, unflatten_dict

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.wrappers import log
from jaxmarl.wrappers.agent_batch import AgentBatch
from jaxmarl.wrappers.base import Wrapper
from jaxmarl.wrappers.log import LogEnvState

__all__ = [
    "CTRolloutManager",
    "JaxMARLWrapper",
    "LogEnvState",
    "LogWrapper",
    "MPELogWrapper",
    "OvercookedV2LogWrapper",
    "SMAXLogEnvState",
    "SMAXLogWrapper",
    "get_space_dim",
    "load_params",
    "save_params",
]


def _safetensors_flax():
    try:
        from safetensors import flax as safetensors_flax
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "save_params/load_params need the safetensors package: pip install safetensors"
        ) from error
    return safetensors_flax


def save_params(params: dict, filename: str | os.PathLike) -> None:
    """Write a parameter tree as one safetensors file, keys joined with ``,`` (JaxMARL's)."""
    _safetensors_flax().save_file(flatten_dict(params, sep=","), filename)


def load_params(filename: str | os.PathLike) -> dict:
    """Read a file written by :func:`save_params` back into a nested parameter tree."""
    return unflatten_dict(_safetensors_flax().load_file(filename), sep=",")


class JaxMARLWrapper(Wrapper):
    """JaxMARL's wrapper base class: :class:`jaxmarl.wrappers.Wrapper` plus its one helper."""

    def stack_agent_values(self, values: dict) -> jax.Array:
        """``{agent: x}`` -> ``[num_agents, ...]`` in ``env.agents`` order."""
        return jnp.stack([values[agent] for agent in self._env.agents])


class LogWrapper(log.LogWrapper):
    """:class:`jaxmarl.wrappers.log.LogWrapper` with per-env scalar infos repeated per agent."""

    def shape_infos(self, infos: dict) -> dict:
        per_agent = (self._env.num_agents,)
        return {
            name: jnp.broadcast_to(value, per_agent)
            if isinstance(value, jax.Array) and value.ndim == 0
            else value
            for name, value in infos.items()
        }


OvercookedV2LogWrapper = LogWrapper


class MPELogWrapper(LogWrapper):
    """``LogWrapper`` whose logged returns are the rewards times the number of agents."""

    def logged_rewards(self, rewards: dict) -> jax.Array:
        return super().logged_rewards(rewards) * self._env.num_agents


@struct.dataclass
class SMAXLogEnvState(LogEnvState):
    """``LogEnvState`` plus ``returned_won_episode`` (``[num_agents]`` float32)."""

    returned_won_episode: jax.Array = None


class SMAXLogWrapper(LogWrapper):
    """``LogWrapper`` that also reports whether the last finished episode was won."""

    @jit_method
    def reset(self, key: jax.Array) -> tuple[dict, SMAXLogEnvState]:
        obs, state = super().reset(key)
        fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(LogEnvState)}
        won = jnp.zeros((self._env.num_agents,), dtype=jnp.float32)
        return obs, SMAXLogEnvState(**fields, returned_won_episode=won)

    def record_extras(self, state, rewards, dones, infos):
        won = jnp.full((self._env.num_agents,), infos["won"]).astype(jnp.float32)
        returned = jnp.where(dones["__all__"], won, state.returned_won_episode)
        state = state.replace(returned_won_episode=returned)
        return state, {"returned_won_episode": returned}


def get_space_dim(space: spaces.Space) -> int:
    """Number of actions of a ``Discrete`` space, or flat size of a ``Box``/``MultiDiscrete``."""
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete)):
        return int(np.prod(space.shape))
    raise NotImplementedError(
        f"get_space_dim supports Discrete, MultiDiscrete and Box spaces, not {space!r}"
    )


class CTRolloutManager(JaxMARLWrapper):
    """A batch of ``batch_size`` envs for centralised training with shared parameters.

    Observations are flattened, zero-padded to the largest agent's size and, with
    ``preprocess_obs``, tagged with a one-hot agent id (all by one ``AgentBatch``); a done
    agent's observation is zeroed. ``obs["__all__"]`` is the global state (SMAX: its world
    state; otherwise the agents' raw observations concatenated) and ``rewards["__all__"]`` the
    team reward (SMAX, Overcooked, Hanabi: the first training agent's reward, which all share;
    otherwise the sum over ``training_agents``). ``get_valid_actions(state)`` gives
    ``{agent: [batch_size, max_actions]}`` float32 masks, from ``get_avail_actions``.
    """

    def __init__(
        self,
        env: MultiAgentEnv,
        batch_size: int,
        training_agents: list[str] | None = None,
        preprocess_obs: bool = True,
    ):
        super().__init__(env)
        self.batch_size = int(batch_size)
        self.training_agents = list(self.agents if training_agents is None else training_agents)
        self.preprocess_obs = preprocess_obs
        batch = AgentBatch.from_env(env)
        flat = tuple((int(np.prod(shape)),) for shape in batch.obs_shapes)
        self.agent_batch = dataclasses.replace(
            batch,
            obs_shapes=flat,
            obs_shape=(max(size for (size,) in flat),),
            agent_id=preprocess_obs,
        )
        self.max_obs_length = self.agent_batch.obs_shape[0]
        self.max_action_space = self.agent_batch.num_actions
        self.obs_size = self.agent_batch.input_shape[0]
        self.agents_one_hot = dict(zip(self.agents, self.agent_batch.agent_ids()))
        self.valid_actions = {a: jnp.arange(n) for a, n in self._action_sizes().items()}
        name = env.name.lower()
        self._shared_reward = any(k in name for k in ("smax", "overcooked", "hanabi"))
        self._world_state = "smax" in name

    def _action_sizes(self) -> dict[str, int]:
        return dict(zip(self.agents, self.agent_batch.action_sizes))

    def global_state(self, obs: dict, state: Any) -> jax.Array:
        if self._world_state:
            return self._env.get_world_state(state)
        return jnp.concatenate([jnp.ravel(obs[agent]) for agent in self.agents], axis=-1)

    def global_reward(self, rewards: dict) -> jax.Array:
        if self._shared_reward:
            return rewards[self.training_agents[0]]
        return jnp.stack([rewards[agent] for agent in self.training_agents]).sum(axis=0)

    def get_valid_actions(self, state: Any) -> dict[str, jax.Array]:
        masks = jax.vmap(partial(self.agent_batch.avail_actions, self._env))(state)
        masks = masks.astype(jnp.float32)  # [batch, agents, max_actions]
        return {agent: masks[:, i] for i, agent in enumerate(self.agents)}

    def _prepare(self, raw: dict) -> dict:
        flat = {agent: jnp.ravel(raw[agent]) for agent in self.agents}
        if not self.preprocess_obs:
            return dict(raw)
        stacked = self.agent_batch.stack_obs(flat)
        return {agent: stacked[i] for i, agent in enumerate(self.agents)}

    @jit_method
    def wrapped_reset(self, key: jax.Array) -> tuple[dict, Any]:
        raw, state = self._env.reset(key)
        obs = self._prepare(raw)
        obs["__all__"] = self.global_state(raw, state)
        return obs, state

    @jit_method
    def wrapped_step(self, key: jax.Array, state: Any, actions: dict):
        raw, state, rewards, dones, infos = self._env.step(key, state, actions)
        obs = self._prepare(raw)
        if self.preprocess_obs:
            obs = {agent: jnp.where(dones[agent], 0.0, obs[agent]) for agent in self.agents}
        obs["__all__"] = self.global_state(raw, state)
        rewards = dict(rewards)
        rewards["__all__"] = self.global_reward(rewards)
        return obs, state, rewards, dones, infos

    @jit_method
    def batch_reset(self, key: jax.Array) -> tuple[dict, Any]:
        return jax.vmap(self.wrapped_reset)(jax.random.split(key, self.batch_size))

    @jit_method
    def batch_step(self, key: jax.Array, states: Any, actions: dict):
        keys = jax.random.split(key, self.batch_size)
        return jax.vmap(self.wrapped_step)(keys, states, actions)

    def batch_sample(self, key: jax.Array, agent: str) -> jax.Array:
        keys = jax.random.split(key, self.batch_size)
        return jax.vmap(self.action_space(agent).sample)(keys).astype(jnp.int32)
