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
  ``obs["__all__"]`` and the team reward ``rewards["__all__"]``. Its infos are JaxMARL's:
  without the contract's ``terminated`` / ``truncated`` (so a bare MPE env's are empty), the
  rest repeated per agent as ``LogWrapper`` does (``shaq.py`` indexes their agent axis).
* ``save_params`` / ``load_params`` write and read flat safetensors files as JaxMARL's do (they
  need the ``safetensors`` package).

Every wrapper here sees the env in JaxMARL's form where that differs from the contract
(``_JaxMARLForm``): SMAX observations carry ``obs["world_state"]``, and Hanabi's observation
shape is the int ``658``.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import sys
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
from jaxmarl.wrappers.base import Wrapper, wrapper_layers
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


class _JaxMARLLength(int):
    """A flat observation's shape as JaxMARL's Hanabi declares it: the int ``658``.

    Its scripts build ``(1, num_envs, shape)`` and ``(shape,)`` from it. Read as a sequence it
    is the 1-tuple ``(658,)`` the contract declares (and equals it), so code written for
    declared shapes (``AgentBatch``, ``space.contains``) keeps working.
    """

    def __iter__(self):
        return iter((int(self),))

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index):
        return (int(self),)[index]

    def __eq__(self, other: object) -> bool:
        return int(self) == other or (int(self),) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = int.__hash__


class _JaxMARLForm(Wrapper):
    """The env as JaxMARL 0.2.0's envs look to its scripts, where that differs from the contract.

    * SMAX (every id): ``obs["world_state"]``, the env's ``get_world_state`` of the state
      returned, next to the agents' observations (JaxMARL's SMAX puts it there; the contract
      keeps observation keys to the agents, SMAX README deviation 8).
    * Hanabi: ``observation_space(agent).shape`` is the int ``658`` (:class:`_JaxMARLLength`).

    Every other env passes through unchanged. The wrappers of this module put it under
    themselves (:func:`_in_jaxmarl_form`), so the scripts see it and this project's learners,
    which use :mod:`jaxmarl.wrappers`, do not.
    """

    def __init__(self, env: MultiAgentEnv):
        super().__init__(env)
        base = env.unwrapped if isinstance(env, Wrapper) else env
        self._world_state_in_obs = _instance_of(base, "jaxmarl.envs.smax.smax_env", "SMAX")
        self._obs_shape_as_int = _instance_of(base, "jaxmarl.envs.hanabi.hanabi", "HanabiEnv")

    def reset(self, key: jax.Array) -> tuple[dict, Any]:
        obs, state = self._env.reset(key)
        return self._with_world_state(obs, state), state

    def step(self, key: jax.Array, state: Any, actions: dict, *args, **kwargs):
        obs, state, rewards, dones, infos = self._env.step(key, state, actions, *args, **kwargs)
        return self._with_world_state(obs, state), state, rewards, dones, infos

    def _with_world_state(self, obs: dict, state: Any) -> dict:
        if not self._world_state_in_obs:
            return obs
        return {**obs, "world_state": jax.lax.stop_gradient(self._env.get_world_state(state))}

    def observation_space(self, agent: str | None = None) -> spaces.Space:
        space = self._env.observation_space(agent)
        if not self._obs_shape_as_int:
            return space
        jaxmarl_space = copy.copy(space)
        (length,) = space.shape
        jaxmarl_space.shape = _JaxMARLLength(length)
        return jaxmarl_space


def _instance_of(env: MultiAgentEnv, module: str, name: str) -> bool:
    """Whether ``env`` is an instance of ``module.name``, without importing the family: an env
    of a module that was never imported cannot be one."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(env, getattr(loaded, name))


def _in_jaxmarl_form(env: MultiAgentEnv) -> MultiAgentEnv:
    """``env`` under a :class:`_JaxMARLForm`, unless one is already in its wrapper chain."""
    if any(isinstance(layer, _JaxMARLForm) for layer in wrapper_layers(env)):
        return env
    return _JaxMARLForm(env)


class JaxMARLWrapper(Wrapper):
    """JaxMARL's wrapper base class: :class:`jaxmarl.wrappers.Wrapper` plus its one helper.

    The wrapped env is seen in JaxMARL's form (:class:`_JaxMARLForm`): its scripts' own
    wrappers read SMAX's ``obs["world_state"]``.
    """

    def __init__(self, env: MultiAgentEnv):
        super().__init__(_in_jaxmarl_form(env))

    def stack_agent_values(self, values: dict) -> jax.Array:
        """``{agent: x}`` -> ``[num_agents, ...]`` in ``env.agents`` order."""
        return jnp.stack([values[agent] for agent in self._env.agents])


class LogWrapper(log.LogWrapper):
    """:class:`jaxmarl.wrappers.log.LogWrapper` with per-env scalar infos repeated per agent,
    over the env in JaxMARL's form (:class:`_JaxMARLForm`)."""

    def __init__(self, env: MultiAgentEnv, replace_info: bool = False):
        super().__init__(_in_jaxmarl_form(env), replace_info)

    def shape_infos(self, infos: dict) -> dict:
        return _per_agent(infos, self._env.num_agents)


CONTRACT_INFOS = ("terminated", "truncated")  # every env's per-step infos here


def _per_agent(infos: dict, num_agents: int) -> dict:
    """Infos with every one-value-per-env leaf repeated for each agent (``[num_agents]``), the
    form JaxMARL's scripts index and reshape."""
    return {
        name: jnp.broadcast_to(value, (num_agents,))
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

    def _observations(self, raw: dict, state: Any, dones: dict | None = None) -> dict:
        """The agents' observations (zero for done agents with ``preprocess_obs``) and the
        global state ``"__all__"``, from the env's observations ``raw`` of ``state``."""
        obs = self._prepare(raw)
        if dones is not None and self.preprocess_obs:
            obs = {agent: jnp.where(dones[agent], 0.0, obs[agent]) for agent in self.agents}
        obs["__all__"] = self.global_state(raw, state)
        return obs

    @jit_method
    def wrapped_reset(self, key: jax.Array) -> tuple[dict, Any]:
        raw, state = self._env.reset(key)
        return self._observations(raw, state), state

    @jit_method
    def wrapped_step(self, key: jax.Array, state: Any, actions: dict):
        raw, state, rewards, dones, infos = self._env.step(key, state, actions)
        obs = self._observations(raw, state, dones)
        rewards = dict(rewards)
        rewards["__all__"] = self.global_reward(rewards)
        # JaxMARL's envs and log wrappers return no time-limit infos, and shaq.py reads
        # infos["returned_episode"] whenever its (unwrapped) env returns any info.
        infos = {k: v for k, v in infos.items() if k not in CONTRACT_INFOS}
        return obs, state, rewards, dones, _per_agent(infos, self._env.num_agents)

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
