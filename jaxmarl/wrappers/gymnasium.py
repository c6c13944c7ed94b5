"""A batch of N copies of one registered env as a Gymnasium ``VectorEnv``: NumPy in and out.

For training code written against Gymnasium's vector API (CleanRL-style loops, SB3-like
tooling) that wants many environments per call without writing JAX::

    from jaxmarl.wrappers.gymnasium import GymnasiumVectorEnv

    envs = GymnasiumVectorEnv("MPE_simple_spread_v3", num_envs=64)
    observations, infos = envs.reset(seed=0)      # observations["agent_0"].shape == (64, 18)
    for _ in range(100):
        actions = envs.action_space.sample()      # {agent: int64 [64]}
        observations, rewards, terminations, truncations, infos = envs.step(actions)

One ``jax.jit`` program per call: the env's ``reset`` / ``step`` ``vmap``-ped over the batch
(``jaxmarl.wrappers.VecEnv``, one key per env split from the wrapper's key, as a JAX loop over
``VecEnv`` with the same keys would do; the tests check that the trajectories are equal).

- **Spaces:** ``single_observation_space`` / ``single_action_space`` are Gymnasium ``Dict``
  spaces over the agents (converted by ``jaxmarl.wrappers.pettingzoo.to_gymnasium_space``);
  ``observation_space`` / ``action_space`` are the same ``Dict`` over batched spaces
  (``gymnasium.vector.utils.batch_space``: ``Discrete(n)`` becomes ``MultiDiscrete([n] * N)``,
  ``Box`` gains a leading ``N``).
- **Step results:** ``observations`` is ``{agent: [N, ...]}``; ``rewards`` is
  ``{agent: float32 [N]}``; ``terminations`` and ``truncations`` are ``bool [N]``, one per env:
  the episode ended (``dones["__all__"]``) by the env's rules or by its time limit. Per-agent
  done flags (an SMAX unit that died) are in ``infos["dones"]`` as ``{agent: bool [N]}``.
- **Autoreset:** ``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``. An env whose
  episode ended is reset in the same call, as the JAX env's ``step`` does, so ``observations``
  already belong to its next episode; the last observations of the finished episode are in
  ``infos["final_obs"]`` as a batched ``{agent: [N, ...]}``, valid where
  ``infos["_final_obs"]`` (``bool [N]``) is true (Gymnasium's own vector envs give an object
  array of per-env observations instead).
- **Infos:** the env's infos, batched (``[N, ...]``, NumPy), plus ``infos["action_mask"]``
  (``{agent: int8 [N, num_actions]}``) where every action space is discrete.
- **Seeding:** ``reset(seed=s)`` restarts the key sequence from ``jax.random.key(s)`` and seeds
  the action spaces' samplers; ``reset()`` continues the sequence.
- **Rendering:** with ``render_mode="rgb_array"``, ``render()`` returns one RGB frame per env
  (the family's renderer; slow for large batches).

``gymnasium`` is needed: ``pip install jaxmarl[pettingzoo]`` (PettingZoo brings it).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv
from jaxmarl.wrappers.vec import VecEnv

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ModuleNotFoundError as error:  # pragma: no cover - exercised only without the extra
    raise ModuleNotFoundError(
        "jaxmarl.wrappers.gymnasium needs Gymnasium: pip install jaxmarl[pettingzoo]"
    ) from error

from jaxmarl.wrappers.pettingzoo import _to_numpy, adapted_env, to_gymnasium_space

__all__ = ["GymnasiumVectorEnv"]


class GymnasiumVectorEnv(VectorEnv):
    """``num_envs`` copies of one JAX env behind Gymnasium's ``VectorEnv`` API.

    Args:
        env: a registered env id, or an env object.
        num_envs: the batch size N (>= 1).
        render_mode: ``None`` or ``"rgb_array"``.
        **env_kwargs: passed to ``jaxmarl.make`` with an env id.

    Raises:
        ValueError: ``num_envs`` < 1 or an unknown ``render_mode``.
        TypeError: ``env_kwargs`` given with an env object.
    """

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        env: str | MultiAgentEnv,
        num_envs: int,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ):
        env = adapted_env(env, render_mode, env_kwargs)
        self.jax_env = env
        self._venv = VecEnv(env, num_envs)  # checks num_envs >= 1
        self.num_envs = self._venv.num_envs
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": env.name}
        self.agents = list(env.agents)
        self.single_observation_space = gymnasium.spaces.Dict(
            {a: to_gymnasium_space(env.observation_space(a)) for a in self.agents}
        )
        self.single_action_space = gymnasium.spaces.Dict(
            {a: to_gymnasium_space(env.action_space(a)) for a in self.agents}
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._action_dtypes = {a: np.dtype(env.action_space(a).dtype) for a in self.agents}
        self._discrete = all(isinstance(env.action_space(a), spaces.Discrete) for a in self.agents)
        self._reset = jax.jit(self._reset_batch)
        self._step = jax.jit(self._step_batch)
        self._key = jax.random.key(np.random.SeedSequence().entropy % (2**32))
        self._state = None

    # ----------------------------------------------------------------- the compiled programs
    def _masks(self, state: Any) -> dict:
        if not self._discrete:
            return {}
        avail = self._venv.get_avail_actions(state)
        return {"action_mask": {a: avail[a].astype(np.int8) for a in self.agents}}

    def _reset_batch(self, key: jax.Array):
        obs, state = self._venv.reset(key)
        return obs, state, self._masks(state)

    def _step_batch(self, key: jax.Array, state: Any, actions: dict):
        obs, state, rewards, dones, infos = self._venv.step(
            key, state, actions, with_terminal_obs=True
        )
        final_obs = infos.pop("terminal_obs")
        del infos["terminal_state"]
        infos = {
            **infos,
            **self._masks(state),
            "dones": {a: dones[a] for a in self.agents},
            "final_obs": final_obs,
            "_final_obs": dones["__all__"],
        }
        return obs, state, rewards, infos

    # ----------------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Resets every env; returns ``(observations, infos)``."""
        if seed is not None:
            self._key = jax.random.key(seed)
            self.action_space.seed(seed)
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        self._key, reset_key = jax.random.split(self._key)
        obs, self._state, infos = self._reset(reset_key)
        return _to_numpy(obs), _to_numpy(infos)

    def step(self, actions: dict[str, Any]):
        """Steps every env with ``{agent: [N, ...]}`` actions; returns
        ``(observations, rewards, terminations, truncations, infos)``."""
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        unknown = sorted(set(actions) - set(self.agents))
        missing = [a for a in self.agents if a not in actions]
        if unknown or missing:
            raise KeyError(
                f"actions must hold exactly the agents {self.agents}; unknown {unknown}, "
                f"missing {missing}"
            )
        batch = {}
        for agent in self.agents:
            action = np.asarray(actions[agent], dtype=self._action_dtypes[agent])
            want = (self.num_envs, *self.single_action_space[agent].shape)
            if action.shape != want:
                raise ValueError(
                    f"action of {agent!r} has shape {action.shape}; expected {want} "
                    f"(one action per env, batch first)"
                )
            batch[agent] = action
        self._key, step_key = jax.random.split(self._key)
        obs, self._state, rewards, infos = self._step(step_key, self._state, batch)
        obs, rewards, infos = _to_numpy((obs, rewards, infos))
        terminations = np.asarray(infos["terminated"], dtype=bool)
        truncations = np.asarray(infos["truncated"], dtype=bool)
        rewards = {a: rewards[a].astype(np.float32) for a in self.agents}
        return obs, rewards, terminations, truncations, infos

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env with ``render_mode="rgb_array"``, else ``None``."""
        if self.render_mode is None:
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        from jaxmarl.render import renderer_module

        module = renderer_module(self.jax_env)
        if module is None:
            raise NotImplementedError(f"{type(self.jax_env).__name__} has no renderer")
        return tuple(
            module.render_frame(self.jax_env, jax.tree.map(lambda leaf, i=i: leaf[i], self._state))
            for i in range(self.num_envs)
        )

    def close_extras(self, **kwargs: Any) -> None:
        self._state = None
