"""JaxMARL's ``jaxmarl.wrappers.transformers``: the batch manager of its ``transf_qmix.py``.

``TransformersCTRolloutManager(env, batch_size)`` is ``CTRolloutManager`` with entity matrices
for observations and global state, read from the env's entity view
(``jaxmarl.wrappers.entities``): ``obs[agent]`` is ``[E, F]``, ``obs["__all__"]`` is
``[S, G]``. The matrices are JaxMARL's, row for row (MPE spread: relative position, is-self,
is-agent per entity; SMAX: the other units' features, then the agent's own padded, with
teammate and is-self columns; the global states likewise). As JaxMARL's, it serves
``MPE_simple_spread_v3`` and the SMAX envs, and SMAX observations of done agents are zero.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxmarl.env import MultiAgentEnv
from jaxmarl.wrappers.baselines import CTRolloutManager
from jaxmarl.wrappers.entities import VIEW_METHODS, has_entity_view

__all__ = ["TransformersCTRolloutManager"]


def _innermost(state: Any) -> Any:
    """The env's own state beneath the wrappers' states (each keeps it in ``env_state``)."""
    while hasattr(state, "env_state"):
        state = state.env_state
    return state


class TransformersCTRolloutManager(CTRolloutManager):
    """``CTRolloutManager`` over entity observations (see the module docstring).

    Raises:
        NotImplementedError: the env has no entity view (JaxMARL raises it for every env but
            MPE spread and SMAX).
    """

    def __init__(self, env: MultiAgentEnv, batch_size: int):
        super().__init__(env, batch_size, training_agents=None, preprocess_obs=False)
        self._view = env.unwrapped if hasattr(env, "unwrapped") else env
        if not has_entity_view(self._view):
            raise NotImplementedError(
                f"{env.name} has no entity view: this manager serves MPE_simple_spread_v3 and "
                f"the SMAX envs, or an env that defines {', '.join(VIEW_METHODS)}"
            )
        self._zero_done = "smax" in env.name.lower()

    def global_state(self, obs: dict, state: Any) -> jax.Array:
        return self._view.get_entity_world_state(_innermost(state))

    def _observations(self, raw: dict, state: Any, dones: dict | None = None) -> dict:
        rows = self._view.get_entity_obs(_innermost(state), raw)
        obs = {agent: rows[agent].astype(jnp.float32) for agent in self.agents}
        if dones is not None and self._zero_done:
            obs = {agent: jnp.where(dones[agent], 0.0, obs[agent]) for agent in self.agents}
        obs["__all__"] = self.global_state(raw, state)
        return obs
