"""Any registered env as a PettingZoo ``ParallelEnv``: NumPy in and out, seeded, renderable.

For tools that speak PettingZoo (its API tests, SuperSuit, RLlib, a plain NumPy loop)::

    from jaxmarl.wrappers.pettingzoo import PettingZooEnv

    env = PettingZooEnv("MPE_simple_spread_v3", render_mode="rgb_array")
    observations, infos = env.reset(seed=0)
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)

One env, one step per call (the jitted ``reset`` and ``step`` of the JAX env; at the end of an
episode the adapter keeps the final observations and state, not the auto-reset ones). The JAX
env's spaces become Gymnasium spaces (``Discrete``, ``MultiDiscrete``, ``Box``, ``Dict``,
``Tuple``). An agent whose ``dones`` entry turns true leaves ``env.agents``; the others act on
until ``dones["__all__"]``, which ends the episode (``truncations`` when it ended at the time
limit, ``terminations`` otherwise); call ``reset`` to start the next one. Every agent in
``env.agents`` needs an action; a finished agent takes action 0 (discrete) or the env's
``noop_action`` (continuous), which the JAX envs ignore for finished agents.
``infos[agent]["action_mask"]`` holds its available actions (int8) where actions are discrete.
``state()`` is the env's world state; ``render()`` returns an RGB array
(``render_mode="rgb_array"``) drawn by the env family's renderer.

``pettingzoo`` (and with it ``gymnasium``) is needed: ``pip install jaxmarl[pettingzoo]``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

import jaxmarl
from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv

try:
    import gymnasium
    from pettingzoo.utils.env import ParallelEnv
except ModuleNotFoundError as error:  # pragma: no cover - exercised only without the extra
    raise ModuleNotFoundError(
        "jaxmarl.wrappers.pettingzoo needs PettingZoo: pip install jaxmarl[pettingzoo]"
    ) from error

__all__ = ["PettingZooEnv", "to_gymnasium_space"]


def to_gymnasium_space(space: spaces.Space) -> gymnasium.spaces.Space:
    """The Gymnasium space with the same values (and dtype) as a ``jaxmarl.spaces`` space."""
    if isinstance(space, spaces.Discrete):
        return gymnasium.spaces.Discrete(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return gymnasium.spaces.MultiDiscrete(np.asarray(space.nvec), dtype=np.dtype(space.dtype))
    if isinstance(space, spaces.Box):
        return gymnasium.spaces.Box(
            low=np.asarray(space.low),
            high=np.asarray(space.high),
            shape=space.shape,
            dtype=np.dtype(space.dtype),
        )
    if isinstance(space, spaces.Dict):
        return gymnasium.spaces.Dict(
            {name: to_gymnasium_space(sub) for name, sub in space.spaces.items()}
        )
    if isinstance(space, spaces.Tuple):
        return gymnasium.spaces.Tuple([to_gymnasium_space(sub) for sub in space.spaces])
    raise TypeError(f"no Gymnasium counterpart for {space!r}")


def adapted_env(
    env: str | MultiAgentEnv, render_mode: str | None, env_kwargs: dict
) -> MultiAgentEnv:
    """The JAX env behind an adapter (this one, ``jaxmarl.wrappers.gymnasium``): built from an
    env id with ``env_kwargs``, or given; ``render_mode`` checked.

    Raises:
        TypeError: ``env_kwargs`` with an env object.
        ValueError: ``render_mode`` is neither ``None`` nor ``"rgb_array"``.
    """
    if isinstance(env, str):
        env = jaxmarl.make(env, **env_kwargs)
    elif env_kwargs:
        raise TypeError("env_kwargs are for an env id; this env is already built")
    if render_mode not in (None, "rgb_array"):
        raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
    return env


def _to_numpy(tree: Any) -> Any:
    return jax.tree.map(np.asarray, jax.device_get(tree))


class PettingZooEnv(ParallelEnv):
    """A PettingZoo ``ParallelEnv`` over one JAX env.

    Args:
        env: a registered env id, or an env object.
        render_mode: ``None`` or ``"rgb_array"``.
        **env_kwargs: passed to ``jaxmarl.make`` with an env id.
    """

    metadata = {"render_modes": ["rgb_array"], "is_parallelizable": True}

    def __init__(self, env: str | MultiAgentEnv, render_mode: str | None = None, **env_kwargs: Any):
        env = adapted_env(env, render_mode, env_kwargs)
        self.jax_env = env
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": env.name}
        self.possible_agents = list(env.agents)
        self._observation_spaces: dict[str, gymnasium.spaces.Space] = {}
        self._action_spaces: dict[str, gymnasium.spaces.Space] = {}
        self.agents: list[str] = []
        self._reset = jax.jit(env.reset)
        self._step = jax.jit(functools.partial(env.step, with_terminal_obs=True))
        self._avail = jax.jit(env.get_avail_actions)
        self._idle = {
            agent: np.int32(0)
            if isinstance(env.action_space(agent), spaces.Discrete)
            else np.asarray(env.noop_action(agent))
            for agent in env.agents
        }
        self._key = jax.random.key(np.random.SeedSequence().entropy % (2**32))
        self._state = None

    # PettingZoo asks for the same space object on every call. Kept on the instance: a
    # functools.cache on the method would keep every adapter (and its env) alive.
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        if agent not in self._observation_spaces:
            space = to_gymnasium_space(self.jax_env.observation_space(agent))
            self._observation_spaces[agent] = space
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        if agent not in self._action_spaces:
            self._action_spaces[agent] = to_gymnasium_space(self.jax_env.action_space(agent))
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._key = jax.random.key(seed)
            for agent in self.possible_agents:
                self.action_space(agent).seed(seed)
        self._key, reset_key = jax.random.split(self._key)
        obs, self._state = self._reset(reset_key)
        self.agents = list(self.possible_agents)
        return _to_numpy({a: obs[a] for a in self.agents}), self._agent_infos(self.agents, {})

    def step(self, actions: dict[str, Any]):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if not self.agents:
            raise RuntimeError("the episode has ended (env.agents is empty); call reset()")
        unknown = sorted(set(actions) - set(self.possible_agents))
        if unknown:
            raise KeyError(f"actions for unknown agents {unknown}; agents are {self.agents}")
        missing = [agent for agent in self.agents if agent not in actions]
        if missing:
            raise KeyError(f"no action for agents {missing}; every agent in env.agents acts")
        full = {
            agent: np.asarray(actions[agent]) if agent in self.agents else self._idle[agent]
            for agent in self.possible_agents
        }
        self._key, step_key = jax.random.split(self._key)
        _, _, rewards, dones, infos = self._step(step_key, self._state, full)
        # The pre-reset observations and state: the episode's last ones when it ends.
        obs, self._state = infos.pop("terminal_obs"), infos.pop("terminal_state")
        obs, rewards, dones, infos = _to_numpy((obs, rewards, dones, infos))
        acting = self.agents
        episode_over = bool(dones["__all__"])
        truncated = episode_over and bool(infos.get("truncated", False))
        finished = [a for a in acting if episode_over or bool(dones[a])]
        terminations = {a: a in finished and not truncated for a in acting}
        truncations = {a: a in finished and truncated for a in acting}
        shared = dict(infos)
        self.agents = [a for a in acting if a not in finished]
        return (
            {a: obs[a] for a in acting},
            {a: float(rewards[a]) for a in acting},
            terminations,
            truncations,
            self._agent_infos(acting, shared),
        )

    def _agent_infos(self, agents: list[str], shared: dict) -> dict[str, dict]:
        masks = {}
        if all(isinstance(self.jax_env.action_space(a), spaces.Discrete) for a in agents):
            avail = _to_numpy(self._avail(self._state))
            masks = {a: np.asarray(avail[a], dtype=np.int8) for a in agents}
        return {a: {**shared, **({"action_mask": masks[a]} if a in masks else {})} for a in agents}

    def state(self) -> np.ndarray:
        """The env's world state (``get_world_state``) as a NumPy array."""
        if self._state is None:
            raise RuntimeError("call reset() before state()")
        return np.asarray(self.jax_env.get_world_state(self._state))

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            return None
        from jaxmarl.render import renderer_module

        module = renderer_module(self.jax_env)
        if module is None:
            raise NotImplementedError(f"{type(self.jax_env).__name__} has no renderer")
        return module.render_frame(self.jax_env, self._state)

    def close(self) -> None:
        self._state = None
