"""``MPE_simple_spread_v3``: N agents cover N landmarks without bumping into each other."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.env import jit_method
from jaxmarl.envs.mpe._world import (
    DISCRETE_ACT,
    MAX_STEPS,
    MPEBase,
    State,
    check_count,
    check_ratio,
    cross_pairs,
    drop_diagonal,
    exact_matmul,
    pair_difference_matrix,
    pair_distances,
)
from jaxmarl.typing import Observations


class SimpleSpreadMPE(MPEBase):
    """Cooperative coverage; mpe2 ``simple_spread_v3``.

    Agents: ``agent_0 .. agent_{N-1}`` (size 0.15, collide); landmarks ``landmark 0 ..``
    (size 0.05, no collisions). ``dim_c = 2`` but every agent is silent.

    Observation ``[4 + 2L + 4(N-1)]`` float32 (18 for N = L = 3): own velocity (2), own
    position (2), landmark positions relative to the agent (2L), other agents' relative
    positions (2(N-1), agent order without self), other agents' messages (2(N-1), all zero).

    Action: ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    Reward: ``global * (1 - local_ratio) + local * local_ratio`` with
    ``global = -sum_l min_a ||p_a - p_l||`` (shared) and ``local = -(number of other agents
    the agent overlaps)``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[0]`` int32 (unused).

    Example::

        env = SimpleSpreadMPE(num_agents=3)
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(0) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_agents: int = 3,
        num_landmarks: int = 3,
        local_ratio: float = 0.5,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        num_agents = check_count("num_agents", num_agents, 1)
        num_landmarks = check_count("num_landmarks", num_landmarks, 1)
        self.local_ratio = check_ratio("local_ratio", local_ratio)
        agents = [f"agent_{i}" for i in range(num_agents)]
        landmarks = [f"landmark {i}" for i in range(num_landmarks)]
        obs_dim = 4 + 2 * num_landmarks + 4 * (num_agents - 1)
        self._build(
            agents=agents,
            landmarks=landmarks,
            action_type=action_type,
            max_steps=max_steps,
            dim_c=2,
            obs_dims={a: obs_dim for a in agents},
            agent_size=0.15,
            agent_collide=True,
            colours=[(0.35, 0.35, 0.85)] * num_agents + [(0.25, 0.25, 0.25)] * num_landmarks,
        )
        self._landmark_pairs = cross_pairs(
            self.num_entities, range(num_agents), range(num_agents, self.num_entities)
        )
        first, second = np.triu_indices(num_agents, k=1)
        self._agent_pairs = pair_difference_matrix(num_agents, first, second)
        self._agent_pair_dist_min = self.rad[first] + self.rad[second]
        # Each overlapping pair costs both of its agents one point.
        members = np.zeros((len(first), num_agents), dtype=np.float32)
        members[np.arange(len(first)), first] = 1.0
        members[np.arange(len(first)), second] = 1.0
        self._agent_pair_members = members

    @jit_method
    def get_obs(self, state: State) -> Observations:
        n = self.num_agents
        pos = state.p_pos[:n]
        landmark_rel = state.p_pos[None, n:] - pos[:, None]
        other_rel = drop_diagonal(pos[None, :] - pos[:, None])
        other_comm = drop_diagonal(jnp.broadcast_to(state.c[None], (n, n, self.dim_c)))
        obs = jnp.concatenate(
            [
                state.p_vel[:n],
                pos,
                landmark_rel.reshape(n, -1),
                other_rel.reshape(n, -1),
                other_comm.reshape(n, -1),
            ],
            axis=1,
        )
        return self._split(obs)

    # ------------------------------------------------------------------ entity view
    # Observations as one row per entity, for entity-based networks (TransfQMIX); see
    # ``jaxmarl.wrappers.entities``. Rows follow ``p_pos``: agents, then landmarks.
    @property
    def entity_obs_shape(self) -> tuple[int, int]:
        """``(entities, 4)``: per entity its position relative to the agent, is-self and
        is-agent flags (JaxMARL's TransfQMIX spread matrix; velocities are not in it)."""
        return (self.num_entities, 4)

    @property
    def entity_world_shape(self) -> tuple[int, int]:
        """``(entities, 5)``: position, velocity and an is-agent flag per entity."""
        return (self.num_entities, 5)

    def get_entity_obs(self, state: State, obs: Observations | None = None) -> Observations:
        """``{agent: [entities, 4]}`` float32 (``obs`` is not needed: rows come from the
        state)."""
        n = self.num_agents
        relative = state.p_pos[None, :, :] - state.p_pos[:n, None, :]  # [n, entities, 2]
        is_self = np.eye(n, self.num_entities, dtype=np.float32)
        is_agent = np.broadcast_to(self._is_agent_entity(), (n, self.num_entities))
        rows = jnp.concatenate([relative, is_self[..., None], is_agent[..., None]], axis=-1)
        return {agent: rows[i] for i, agent in enumerate(self.agents)}

    def get_entity_world_state(self, state: State) -> jax.Array:
        """``[entities, 5]`` float32: ``p_pos``, ``p_vel``, is-agent."""
        flag = jnp.asarray(self._is_agent_entity())[:, None]
        return jnp.concatenate([state.p_pos, state.p_vel, flag], axis=-1)

    def _is_agent_entity(self) -> np.ndarray:
        return (np.arange(self.num_entities) < self.num_agents).astype(np.float32)

    def _rewards(self, state: State) -> jax.Array:
        n = self.num_agents
        agent_to_landmark = pair_distances(state.p_pos, self._landmark_pairs).reshape(n, -1)
        global_reward = -jnp.sum(jnp.min(agent_to_landmark, axis=0))
        if n > 1:
            apart = pair_distances(state.p_pos[:n], self._agent_pairs)
            overlaps = (apart < self._agent_pair_dist_min).astype(jnp.float32)
            local_reward = -exact_matmul(overlaps, self._agent_pair_members)
        else:
            local_reward = jnp.zeros((1,), jnp.float32)
        return global_reward * (1.0 - self.local_ratio) + local_reward * self.local_ratio
