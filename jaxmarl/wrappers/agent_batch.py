"""The one agent-batching utility: per-agent dicts <-> arrays with an agent axis.

Environments speak dicts keyed by agent name; networks want one array with an agent axis so
that parameters can be shared by ``vmap`` over it. ``AgentBatch`` converts both ways and, where
agents differ, pads to the largest size and keeps masks:

* observations ``{agent: [..., *obs_shape_i]}`` -> ``[..., A, *obs_shape]`` zero-padded, with
  ``obs_mask`` ``[A, *obs_shape]`` marking real features, optionally with a one-hot agent id
  appended on the last axis (a grid ``(h, w, c)`` gets ``A`` constant id channels);
* available actions ``{agent: [..., n_i]}`` -> ``[..., A, n]`` with padded actions unavailable;
* actions ``[..., A]`` (discrete) or ``[..., A, d]`` (continuous) -> ``{agent: action}``, each
  sliced back to its agent's action size;
* per-agent scalars (rewards, dones) ``{agent: [...]}`` <-> ``[..., A]``.

``Dict`` observations (STORM's image + inventory) are *packed*: every leaf is flattened and
the leaves are concatenated in the space's key order into one float32 vector per agent, so
the stacked observation stays one array ``[..., A, D]`` and every learner, minibatcher,
replay buffer and per-agent ``vmap`` handles it unchanged. ``obs_leaves`` records the leaves'
names and shapes; the CNN encoder (``jaxmarl.networks.encoders.DictEncoder``) unpacks the
vector by it and convolves the grid leaves, an MLP reads the packed vector as it is.

Leading batch axes (``...``) are kept as they are, so the same object serves a single env, a
vmapped batch ``[B]`` and a trajectory ``[T, B]``. Every learner uses this and nothing else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv


@dataclasses.dataclass(frozen=True)
class AgentBatch:
    """Static description of how a set of agents is stacked (hashable, safe to close over).

    Attributes:
        agents: agent names in stacking order.
        obs_shapes: each agent's own observation shape.
        obs_shape: padded per-agent observation shape (the largest along every axis), before
            the optional agent id.
        discrete: whether actions are discrete (all agents must agree).
        action_sizes: number of discrete actions, or continuous action dimension, per agent.
        agent_id: whether ``stack_obs`` appends a one-hot agent id on the last axis of the
            observations, the same at every position of the others (constant channels of
            a grid).
        action_low / action_high: continuous action bounds per padded dimension (the
            tightest over agents); empty for discrete actions.
        obs_leaves: for ``Dict`` observations, ``(name, shape)`` of each leaf in packing
            order (``obs_shape`` is then the packed width ``(D,)``); empty for arrays.
    """

    agents: tuple[str, ...]
    obs_shapes: tuple[tuple[int, ...], ...]
    obs_shape: tuple[int, ...]
    discrete: bool
    action_sizes: tuple[int, ...]
    agent_id: bool = False
    action_low: tuple[float, ...] = ()
    action_high: tuple[float, ...] = ()
    obs_leaves: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @classmethod
    def from_env(
        cls, env: MultiAgentEnv, agent_id: bool = False, agents: Sequence[str] | None = None
    ) -> AgentBatch:
        """Read the spaces of ``env`` (or of the given subset of its ``agents``).

        Raises:
            ValueError: observations of different ranks, a mix of discrete and continuous
                action spaces, or an unsupported space type.
        """
        names = tuple(agents if agents is not None else env.agents)
        obs_leaves = _dict_leaves(env, names)
        if obs_leaves:
            width = sum(int(np.prod(shape)) for _, shape in obs_leaves)
            obs_shapes = ((width,),) * len(names)
        else:
            obs_shapes = tuple(tuple(env.observation_space(a).shape) for a in names)
        ranks = {len(s) for s in obs_shapes}
        if len(ranks) != 1:
            raise ValueError(
                f"cannot stack observations of different ranks {dict(zip(names, obs_shapes))}; "
                f"flatten them in the env or stack the agent groups separately"
            )
        obs_shape = tuple(int(max(dims)) for dims in zip(*obs_shapes))
        kinds, sizes, lows, highs = [], [], [], []
        for agent in names:
            space = env.action_space(agent)
            if isinstance(space, spaces.Discrete):
                kinds.append(True)
                sizes.append(space.n)
            elif isinstance(space, spaces.Box) and len(space.shape) == 1:
                kinds.append(False)
                sizes.append(space.shape[0])
                lows.append(np.asarray(space.low, dtype=np.float32))
                highs.append(np.asarray(space.high, dtype=np.float32))
            else:
                raise ValueError(
                    f"agent '{agent}' has action space {space!r}; AgentBatch supports "
                    f"Discrete and 1-D Box action spaces"
                )
        if len(set(kinds)) != 1:
            raise ValueError(
                "cannot stack agents with both discrete and continuous action spaces; "
                "stack each group separately (AgentBatch.from_env(env, agents=[...]))"
            )
        low, high = (), ()
        if not kinds[0]:
            width = max(sizes)
            pad = lambda bounds, fill: [
                np.pad(b, (0, width - b.size), constant_values=fill) for b in bounds
            ]
            low = tuple(float(v) for v in np.max(pad(lows, -np.inf), axis=0))
            high = tuple(float(v) for v in np.min(pad(highs, np.inf), axis=0))
        return cls(
            agents=names,
            obs_shapes=obs_shapes,
            obs_shape=obs_shape,
            discrete=kinds[0],
            action_sizes=tuple(int(s) for s in sizes),
            agent_id=agent_id,
            action_low=low,
            action_high=high,
            obs_leaves=obs_leaves,
        )

    # ------------------------------------------------------------------ sizes
    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def num_actions(self) -> int:
        """Padded action size: the most discrete actions, or the largest action dimension."""
        return max(self.action_sizes)

    @property
    def input_shape(self) -> tuple[int, ...]:
        """Per-agent shape of ``stack_obs`` output (agent id included)."""
        if self.agent_id:
            return (*self.obs_shape[:-1], self.obs_shape[-1] + self.num_agents)
        return self.obs_shape

    @property
    def input_leaves(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """``obs_leaves`` plus the one-hot agent id (``("agent_id", (A,))``) when appended:
        how ``stack_obs`` packs a ``Dict`` observation; empty for array observations."""
        if self.obs_leaves and self.agent_id:
            return (*self.obs_leaves, ("agent_id", (self.num_agents,)))
        return self.obs_leaves

    @property
    def homogeneous(self) -> bool:
        """True when no padding is needed."""
        return len(set(self.obs_shapes)) == 1 and len(set(self.action_sizes)) == 1

    def obs_mask(self) -> jax.Array:
        """``[A, *input_shape]`` bool: real (not padded) observation features."""
        masks = []
        for shape in self.obs_shapes:
            real = np.zeros(self.obs_shape, dtype=bool)
            real[tuple(slice(0, d) for d in shape)] = True
            if self.agent_id:
                ids = np.ones((*self.obs_shape[:-1], self.num_agents), dtype=bool)
                real = np.concatenate([real, ids], axis=-1)
            masks.append(real)
        return jnp.asarray(np.stack(masks))

    def action_mask(self) -> jax.Array:
        """``[A, num_actions]`` bool: actions (or action dims) that exist for each agent."""
        mask = np.arange(self.num_actions)[None, :] < np.asarray(self.action_sizes)[:, None]
        return jnp.asarray(mask)

    def agent_ids(self) -> jax.Array:
        """``[A, A]`` float32 one-hot agent ids."""
        return jnp.eye(self.num_agents, dtype=jnp.float32)

    # ------------------------------------------------------------------ dict -> array
    def stack_obs(self, obs: Mapping[str, Any]) -> jax.Array:
        """``{agent: [..., *obs_shape_i]}`` -> ``[..., A, *input_shape]`` float32.

        ``Dict`` observations ``{agent: {leaf: [..., *leaf_shape]}}`` are packed first (see
        the module docstring).
        """
        if self.obs_leaves:
            obs = {agent: self._pack(agent, obs[agent]) for agent in self.agents}
        rank = len(self.obs_shape)
        padded = []
        for agent, shape in zip(self.agents, self.obs_shapes):
            value = jnp.asarray(obs[agent], dtype=jnp.float32)
            if tuple(value.shape[value.ndim - rank :]) != shape:
                raise ValueError(
                    f"observation of agent '{agent}' has shape {value.shape}, expected trailing "
                    f"shape {shape}"
                )
            lead = value.ndim - rank
            pad = [(0, 0)] * lead + [(0, full - d) for full, d in zip(self.obs_shape, shape)]
            padded.append(jnp.pad(value, pad) if any(p[1] for p in pad) else value)
        return self.append_agent_ids(jnp.stack(padded, axis=-rank - 1))

    def append_agent_ids(self, stacked: jax.Array) -> jax.Array:
        """``[..., A, *obs_shape]`` -> ``[..., A, *input_shape]``: with ``agent_id``, agent
        ``i``'s one-hot id appended on the last axis at every position of the others."""
        if not self.agent_id:
            return stacked
        rank, count = len(self.obs_shape), self.num_agents
        ids = self.agent_ids().reshape((count, *[1] * (rank - 1), count))
        ids = jnp.broadcast_to(ids, stacked.shape[:-1] + (count,))
        return jnp.concatenate([stacked, ids], axis=-1)

    def strip_agent_ids(self, inputs: jax.Array) -> jax.Array:
        """Inverse of ``append_agent_ids``: ``[..., A, *input_shape]`` -> the observations."""
        return inputs[..., : self.obs_shape[-1]] if self.agent_id else inputs

    def _pack(self, agent: str, obs: Mapping[str, jax.Array]) -> jax.Array:
        """One agent's ``Dict`` observation -> ``[..., D]`` float32, leaves in order."""
        flat = []
        for name, shape in self.obs_leaves:
            value = jnp.asarray(obs[name], dtype=jnp.float32)
            lead = value.ndim - len(shape)
            if lead < 0 or tuple(value.shape[lead:]) != shape:
                raise ValueError(
                    f"observation '{name}' of agent '{agent}' has shape {value.shape}, "
                    f"expected trailing shape {shape}"
                )
            flat.append(value.reshape((*value.shape[:lead], -1)))
        return jnp.concatenate(flat, axis=-1)

    def stack_avail_actions(self, avail: Mapping[str, jax.Array]) -> jax.Array:
        """``{agent: [..., n_i]}`` -> ``[..., A, num_actions]`` bool; padded actions False."""
        padded = []
        for agent, size in zip(self.agents, self.action_sizes):
            value = jnp.asarray(avail[agent]).astype(jnp.bool_)
            pad = [(0, 0)] * (value.ndim - 1) + [(0, self.num_actions - size)]
            padded.append(jnp.pad(value, pad, constant_values=False))
        return jnp.stack(padded, axis=-2)

    def stack(self, values: Mapping[str, jax.Array]) -> jax.Array:
        """Per-agent scalars ``{agent: [...]}`` (rewards, dones) -> ``[..., A]``."""
        return jnp.stack([jnp.asarray(values[agent]) for agent in self.agents], axis=-1)

    # ------------------------------------------------------------------ array -> dict
    def unstack(self, values: jax.Array) -> dict[str, jax.Array]:
        """``[..., A]`` -> ``{agent: [...]}``."""
        return {agent: values[..., i] for i, agent in enumerate(self.agents)}

    def unstack_actions(self, actions: jax.Array) -> dict[str, jax.Array]:
        """Actions ``[..., A]`` (discrete, int32) or ``[..., A, num_actions]`` (continuous).

        Continuous actions are sliced back to each agent's own dimension.
        """
        if self.discrete:
            actions = jnp.asarray(actions).astype(jnp.int32)
            return {agent: actions[..., i] for i, agent in enumerate(self.agents)}
        return {
            agent: actions[..., i, :size]
            for i, (agent, size) in enumerate(zip(self.agents, self.action_sizes))
        }

    def env_actions(self, actions: jax.Array) -> dict[str, jax.Array]:
        """Policy actions ``[..., A(, d)]`` -> the env's action dict.

        Continuous actions are clipped into the action space (policies such as a Gaussian
        sample outside it; their log-probabilities stay those of the unclipped sample).
        """
        if not self.discrete:
            actions = jnp.clip(
                actions, jnp.asarray(self.action_low), jnp.asarray(self.action_high)
            ).astype(jnp.float32)
        return self.unstack_actions(actions)

    def avail_actions(self, env: MultiAgentEnv, state: Any) -> jax.Array:
        """Stacked available actions of one env state: ``[A, num_actions]`` bool."""
        return self.stack_avail_actions(env.get_avail_actions(state))

    def world_state(self, env: MultiAgentEnv, state: Any) -> jax.Array:
        """The env's world state repeated for every agent: ``[A, world_state_size]``."""
        world = jnp.ravel(env.get_world_state(state))
        return jnp.broadcast_to(world, (self.num_agents,) + world.shape)


def _dict_leaves(
    env: MultiAgentEnv, agents: Sequence[str]
) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """``(name, shape)`` of the leaves of the agents' ``Dict`` observation space (empty when
    the spaces are not ``Dict``s).

    Raises:
        ValueError: ``Dict`` spaces mixed with others, leaves that are not ``Box`` spaces,
            or agents whose ``Dict`` spaces differ in keys or shapes.
    """
    obs_spaces = [env.observation_space(a) for a in agents]
    is_dict = [isinstance(space, spaces.Dict) for space in obs_spaces]
    if not any(is_dict):
        return ()
    layouts = set()
    for agent, space in zip(agents, obs_spaces):
        if not isinstance(space, spaces.Dict):
            raise ValueError(
                f"agent '{agent}' has observation space {space!r} but others have Dict "
                f"spaces; stack the agent groups separately (AgentBatch.from_env(env, agents=...))"
            )
        for name, leaf in space.spaces.items():
            if not isinstance(leaf, spaces.Box):
                raise ValueError(
                    f"agent '{agent}': Dict observation leaf '{name}' is {leaf!r}; AgentBatch "
                    f"packs Dict spaces of Box leaves only"
                )
        layouts.add(tuple((str(name), tuple(leaf.shape)) for name, leaf in space.spaces.items()))
    if len(layouts) != 1:
        raise ValueError(
            f"agents' Dict observation spaces differ ({sorted(layouts)}); AgentBatch packs Dict "
            f"observations of one layout; stack the agent groups separately"
        )
    return layouts.pop()
