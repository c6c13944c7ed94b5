"""``LogWrapper``: episode returns and lengths, reported in ``infos`` (JaxMARL's keys).

Returns are the raw sums of the env's rewards (no rescaling). Per-env extras such as win rates
come from the env's own ``infos``, not from further log wrappers.

Returns per group of episodes (OvercookedV2's per-recipe returns) come from one optional hook
on the env, so no env needs a log wrapper of its own: an env that defines
``episode_return_groups(state) -> {group name: bool []}`` (the groups the running episode
belongs to, read from the state before each step) and ``episode_return_group_kind`` (a word,
e.g. ``"recipe"``) gets ``infos["returned_episode_<kind>_returns"]``: per group, the
``[num_agents]`` return of the last finished episode of that group (zeros before one).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.typing import Actions
from jaxmarl.wrappers.base import Wrapper, step_options


@struct.dataclass
class LogEnvState:
    """State of ``LogWrapper``.

    Attributes:
        env_state: the wrapped env's state.
        episode_returns: ``[num_agents]`` float32, return so far in the running episode.
        episode_lengths: ``[num_agents]`` int32, steps so far in the running episode.
        returned_episode_returns: ``[num_agents]`` float32, return of the last finished episode.
        returned_episode_lengths: ``[num_agents]`` int32, length of the last finished episode.
        returned_episode_group_returns: group name -> ``[num_agents]`` float32, return of the
            last finished episode of that group (empty unless the env has the groups hook).
    """

    env_state: Any
    episode_returns: jax.Array
    episode_lengths: jax.Array
    returned_episode_returns: jax.Array
    returned_episode_lengths: jax.Array
    returned_episode_group_returns: dict[str, jax.Array] = struct.field(default_factory=dict)


class LogWrapper(Wrapper):
    """Tracks episode returns and lengths per agent.

    ``infos`` gains ``returned_episode`` (``[num_agents]`` bool, the episode ended this step),
    ``returned_episode_returns`` (``[num_agents]`` float32) and ``returned_episode_lengths``
    (``[num_agents]`` int32), holding the last finished episode's values. Average the returns
    where ``returned_episode`` is true to get episode statistics.

    Args:
        env: the environment.
        replace_info: drop the env's own infos (keeping ``terminated``/``truncated``).
    """

    def __init__(self, env: MultiAgentEnv, replace_info: bool = False):
        super().__init__(env)
        self.replace_info = replace_info

    @jit_method
    def reset(self, key: jax.Array) -> tuple[dict, LogEnvState]:
        obs, env_state = self._env.reset(key)
        zeros_f = jnp.zeros((self._env.num_agents,), dtype=jnp.float32)
        zeros_i = jnp.zeros((self._env.num_agents,), dtype=jnp.int32)
        state = LogEnvState(
            env_state=env_state,
            episode_returns=zeros_f,
            episode_lengths=zeros_i,
            returned_episode_returns=zeros_f,
            returned_episode_lengths=zeros_i,
            returned_episode_group_returns={name: zeros_f for name in self._groups(env_state)},
        )
        return obs, state

    def _groups(self, env_state: Any) -> dict[str, jax.Array]:
        groups = getattr(self._env, "episode_return_groups", None)
        return {} if groups is None else groups(env_state)

    @jit_method(static_argnames=("with_terminal_obs",))
    def step(
        self,
        key: jax.Array,
        state: LogEnvState,
        actions: Actions,
        reset_state: Any | None = None,
        *,
        with_terminal_obs: bool = False,
    ):
        obs, env_state, rewards, dones, infos = self._env.step(
            key, state.env_state, actions, **step_options(reset_state, with_terminal_obs)
        )
        episode_done = dones["__all__"]
        returns = state.episode_returns + self.logged_rewards(rewards)
        lengths = state.episode_lengths + 1
        # Groups of the episode that ends, read from the state before this step (JaxMARL's).
        member = self._groups(state.env_state)
        group_returns = {
            name: jnp.where(episode_done & member[name], returns, previous)
            for name, previous in state.returned_episode_group_returns.items()
        }
        # ``replace`` keeps a subclass's extra fields (jaxmarl.wrappers.baselines.SMAXLogWrapper).
        state = state.replace(
            env_state=env_state,
            episode_returns=jnp.where(episode_done, 0.0, returns),
            episode_lengths=jnp.where(episode_done, 0, lengths),
            returned_episode_returns=jnp.where(
                episode_done, returns, state.returned_episode_returns
            ),
            returned_episode_lengths=jnp.where(
                episode_done, lengths, state.returned_episode_lengths
            ),
            returned_episode_group_returns=group_returns,
        )
        state, extra_infos = self.record_extras(state, rewards, dones, infos)
        if self.replace_info:
            kept = ("terminated", "truncated", "terminal_obs", "terminal_state")
            infos = {name: infos[name] for name in kept if name in infos}
        else:
            infos = dict(infos)
        if "terminal_state" in infos:
            # Keep the state type uniform: wrapper methods (get_world_state, ...) accept it.
            infos["terminal_state"] = state.replace(env_state=infos["terminal_state"])
        infos["returned_episode_returns"] = state.returned_episode_returns
        infos["returned_episode_lengths"] = state.returned_episode_lengths
        infos["returned_episode"] = jnp.full((self._env.num_agents,), episode_done)
        if group_returns:
            kind = getattr(self._env, "episode_return_group_kind", "group")
            infos[f"returned_episode_{kind}_returns"] = group_returns
        infos.update(extra_infos)
        return obs, state, rewards, dones, self.shape_infos(infos)

    def shape_infos(self, infos: dict) -> dict:
        """The infos as ``step`` returns them (a hook: JaxMARL's form in
        ``jaxmarl.wrappers.baselines.LogWrapper``)."""
        return infos

    def record_extras(
        self, state: LogEnvState, rewards: dict, dones: dict, infos: dict
    ) -> tuple[LogEnvState, dict]:
        """Hook for subclasses that log more: the updated state and the infos to add.

        Called after the returns are updated, with the env's own ``infos`` (before
        ``replace_info`` drops them). The base wrapper logs nothing more.
        """
        return state, {}

    def logged_rewards(self, rewards: dict) -> jax.Array:
        """``[num_agents]`` float32: what this step adds to the logged returns."""
        return jnp.stack(
            [jnp.asarray(rewards[agent], dtype=jnp.float32) for agent in self._env.agents]
        )

    # These take the wrapper's state or the env's own: JaxMARL's wrappers pass these calls
    # through, so its scripts call them with ``env_state.env_state``.
    def get_obs(self, state: Any):
        return self._env.get_obs(_inner(state))

    def get_avail_actions(self, state: Any):
        return self._env.get_avail_actions(_inner(state))

    def get_world_state(self, state: Any):
        return self._env.get_world_state(_inner(state))


def _inner(state: Any) -> Any:
    return state.env_state if isinstance(state, LogEnvState) else state
