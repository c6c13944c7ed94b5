"""Entity observations: each agent sees a matrix with one row per entity, not a flat vector.

Entity-based networks (TransfQMIX's transformers, ``jaxmarl.networks.transformer``) attend over
the rows, so one network serves any number of entities and can tie an action to the row of the
entity it acts on. An env family opts in by defining, next to ``get_obs``:

* ``entity_obs_shape``: ``(E, F)``, every agent's matrix (rows of absent entities are zero);
* ``get_entity_obs(state, obs=None) -> {agent: [E, F]}`` (``obs``: the flat observations of
  ``state`` when at hand, so a family that reshapes them need not recompute them);
* ``entity_world_shape`` and ``get_entity_world_state(state) -> [S, G]``, the world state as one
  row per entity, for mixers that attend over it;
* optionally ``entity_action_rows(agent) -> [actions]`` int: the entity row each action acts on,
  ``-1`` for actions of the agent itself (SMAX's attacks read their target's row).

``MPE_simple_spread_v3`` and the SMAX family have one. ``EntityObservations(env)`` serves it
through the env contract: the observations are the matrices (``Box`` spaces of shape
``(E, F)``), ``get_world_state`` is the entity world state, and everything else is the env's.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.typing import Actions, Observations
from jaxmarl.wrappers.base import Wrapper, step_options

VIEW_METHODS = (
    "entity_obs_shape",
    "get_entity_obs",
    "entity_world_shape",
    "get_entity_world_state",
)


def has_entity_view(env: Any) -> bool:
    """Whether ``env`` (or the env it wraps) defines an entity view."""
    return all(hasattr(env, name) for name in VIEW_METHODS)


class EntityObservations(Wrapper):
    """Serve an env's entity view as its observations and world state.

    Raises:
        ValueError: the env has no entity view (the message names the methods to define).
    """

    provides_world_state = True

    def __init__(self, env: MultiAgentEnv):
        if not has_entity_view(env):
            name = getattr(env, "name", type(env).__name__)
            raise ValueError(
                f"{name} has no entity view, which entity-based networks (alg=transf_qmix) "
                f"read; MPE_simple_spread_v3, SMAX and HeuristicEnemySMAX have one. For your "
                f"own env define {', '.join(VIEW_METHODS)} (jaxmarl.wrappers.entities)"
            )
        super().__init__(env)
        shape = tuple(int(d) for d in env.entity_obs_shape)
        self.observation_spaces = {
            agent: spaces.Box(-jnp.inf, jnp.inf, shape, jnp.float32) for agent in env.agents
        }

    def observation_space(self, agent: str | None = None) -> spaces.Space:
        if agent is None:
            return next(iter(self.observation_spaces.values()))
        return self.observation_spaces[agent]

    def action_rows(self) -> np.ndarray | None:
        """``[A, n]`` int32: ``entity_action_rows`` of every agent, padded with ``-1`` to the
        most actions; ``None`` when the env ties no action to an entity."""
        rows_of = getattr(self._env, "entity_action_rows", None)
        if rows_of is None:
            return None
        rows = [np.asarray(rows_of(agent), np.int32) for agent in self.agents]
        width = max(r.size for r in rows)
        return np.stack([np.pad(r, (0, width - r.size), constant_values=-1) for r in rows])

    def _entities(self, state: Any, obs: Observations) -> Observations:
        rows = self._env.get_entity_obs(state, obs)
        return {agent: rows[agent].astype(jnp.float32) for agent in self.agents}

    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, Any]:
        obs, state = self._env.reset(key)
        return self._entities(state, obs), state

    @jit_method(static_argnames=("with_terminal_obs",))
    def step(
        self,
        key: jax.Array,
        state: Any,
        actions: Actions,
        reset_state: Any | None = None,
        *,
        with_terminal_obs: bool = False,
    ):
        options = step_options(reset_state, with_terminal_obs)
        obs, state, rewards, dones, infos = self._env.step(key, state, actions, **options)
        if with_terminal_obs:
            infos = dict(infos)
            infos["terminal_obs"] = self._entities(infos["terminal_state"], infos["terminal_obs"])
        return self._entities(state, obs), state, rewards, dones, infos

    def step_env(self, key: jax.Array, state: Any, actions: Actions):
        obs, state, rewards, dones, infos = self._env.step_env(key, state, actions)
        return self._entities(state, obs), state, rewards, dones, infos

    def get_obs(self, state: Any) -> Observations:
        return self._entities(state, self._env.get_obs(state))

    def get_world_state(self, state: Any) -> jax.Array:
        return self._env.get_entity_world_state(state).astype(jnp.float32)
