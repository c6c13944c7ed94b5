"""``VecEnv``: the one helper for a batch of independent environments.

It only fixes the ``vmap`` axes and splits one key into a key per environment (never one key
broadcast across the batch). Everything else about the env is unchanged.
"""

from __future__ import annotations

from typing import Any

import jax

from jaxmarl.env import MultiAgentEnv
from jaxmarl.wrappers.base import Wrapper


class VecEnv(Wrapper):
    """``num_envs`` copies of ``env`` stepped in lock-step; every leaf gains a leading ``[B]``.

    >>> venv = VecEnv(jaxmarl.make("MPE_simple_spread_v3"), num_envs=1024)
    >>> obs, state = venv.reset(key)               # obs["agent_0"].shape == (1024, 18)
    >>> obs, state, rew, dones, infos = venv.step(key, state, actions)  # actions [B]-leading
    """

    def __init__(self, env: MultiAgentEnv, num_envs: int):
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        super().__init__(env)
        self.num_envs = int(num_envs)

    def reset(self, key: jax.Array):
        keys = jax.random.split(key, self.num_envs)
        return jax.vmap(self._env.reset)(keys)

    def step(
        self,
        key: jax.Array,
        state: Any,
        actions: Any,
        reset_state: Any = None,
        *,
        with_terminal_obs: bool = False,
    ):
        keys = jax.random.split(key, self.num_envs)

        def step_one(k, s, a, r):
            return self._env.step(k, s, a, r, with_terminal_obs=with_terminal_obs)

        reset_axis = None if reset_state is None else 0
        return jax.vmap(step_one, in_axes=(0, 0, 0, reset_axis))(keys, state, actions, reset_state)

    def get_obs(self, state: Any):
        return jax.vmap(self._env.get_obs)(state)

    def get_avail_actions(self, state: Any):
        return jax.vmap(self._env.get_avail_actions)(state)

    def get_world_state(self, state: Any):
        return jax.vmap(self._env.get_world_state)(state)
