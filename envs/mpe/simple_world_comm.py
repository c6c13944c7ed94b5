"""``MPE_simple_world_comm_v3``: predators led by a speaking leader hunt prey that eat food
and hide in forests."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.env import jit_method
from jaxmarl.envs.mpe._world import (
    CONTINUOUS_ACT,
    MAX_STEPS,
    MPEBase,
    State,
    bound_penalty,
    check_count,
    drop_diagonal,
)
from jaxmarl.typing import Observations

LEADER = "leadadversary_0"


class SimpleWorldCommMPE(MPEBase):
    """Predator-prey with communication and forests; mpe2 ``simple_world_comm_v3``.

    Agents: ``leadadversary_0``, ``adversary_0 .. adversary_{V-2}`` (size 0.075, accel 3,
    max speed 1.0; ``V = num_adversaries`` counts the leader), then ``agent_0 ..
    agent_{G-1}`` (size 0.045, accel 4, max speed 1.3). Landmarks (spawn in
    ``[-0.9, 0.9]^2``): ``landmark i`` obstacles (size 0.2, collide), ``food i`` (0.03),
    ``forest i`` (0.3). Only the leader speaks (``dim_c = 4``).

    Visibility: agent ``a`` sees agent ``o`` if both are in a common forest, or neither is in
    any forest; the leader sees everyone. Unseen agents' positions/velocities read as zero.

    Observation float32, ``N = V + G``, ``K = num_obs + num_food + num_forests``,
    ``F = num_forests``: adversaries and leader ``[4 + 2K + 2(N-1) + 2G + F + 4]`` (34 by
    default) = own velocity, own position, all landmarks relative (2K), other agents
    relative (2(N-1)), good agents' velocities (2G), in-forest flags (``+1``/``-1`` per
    forest), the leader's message (4); good agents ``[4 + 2K + 2(N-1) + F + 2(G-1)]`` (28) =
    own velocity, own position, landmarks, other agents, in-forest flags, the other good
    agents' velocities.

    Action: leader ``Discrete(20)`` = movement (``a % 5``) + 5 * word (``a // 5``, one-hot
    of 4), or ``Box(0, 1, (9,))`` = movement (5) then message (4); everyone else
    ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    Reward: adversaries (shared, plus own shaping) ``+5`` per (adversary, good) contact and
    ``-0.1 * min_good ||p_good - p_adv||``; good agent ``-5`` per adversary touching it,
    ``-2 (bound(|x|) + bound(|y|))``, ``+2`` per food it touches,
    ``-0.05 * min_food ||p_food - p||``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[0]`` int32 (unused).

    Example::

        env = SimpleWorldCommMPE(action_type="Discrete")
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(0) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_good_agents: int = 2,
        num_adversaries: int = 4,
        num_obs: int = 1,
        num_food: int = 2,
        num_forests: int = 2,
        action_type: str = CONTINUOUS_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        self.num_good_agents = check_count("num_good_agents", num_good_agents, 1)
        self.num_adversaries = check_count("num_adversaries", num_adversaries, 1)
        self.num_obs = check_count("num_obs", num_obs, 0)
        self.num_food = check_count("num_food", num_food, 1)
        self.num_forests = check_count("num_forests", num_forests, 0)
        adv, good = self.num_adversaries, self.num_good_agents
        self.leader = LEADER
        self.leader_idx = 0
        self.adversaries = [f"adversary_{i}" for i in range(adv - 1)]
        self.good_agents = [f"agent_{i}" for i in range(good)]
        num_agents = adv + good
        num_landmarks = self.num_obs + self.num_food + self.num_forests
        base = 4 + 2 * num_landmarks + 2 * (num_agents - 1) + self.num_forests
        obs_dims = {a: base + 2 * good + 4 for a in [LEADER, *self.adversaries]}
        obs_dims.update({a: base + 2 * (good - 1) for a in self.good_agents})
        self._build(
            agents=[LEADER, *self.adversaries, *self.good_agents],
            landmarks=[f"landmark {i}" for i in range(self.num_obs)]
            + [f"food {i}" for i in range(self.num_food)]
            + [f"forest {i}" for i in range(self.num_forests)],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=4,
            obs_dims=obs_dims,
            agent_size=[0.075] * adv + [0.045] * good,
            landmark_size=[0.2] * self.num_obs + [0.03] * self.num_food + [0.3] * self.num_forests,
            silent=[False] + [True] * (num_agents - 1),
            agent_collide=True,
            landmark_collide=[True] * self.num_obs + [False] * (self.num_food + self.num_forests),
            accel=[3.0] * adv + [4.0] * good,
            max_speed=[1.0] * adv + [1.3] * good,
            landmark_spawn=0.9,
            colours=[(0.65, 0.15, 0.15)]
            + [(0.95, 0.45, 0.45)] * (adv - 1)
            + [(0.45, 0.95, 0.45)] * good
            + [(0.25, 0.25, 0.25)] * self.num_obs
            + [(0.15, 0.15, 0.65)] * self.num_food
            + [(0.6, 0.9, 0.6)] * self.num_forests,
        )
        first_food = num_agents + self.num_obs
        self._food = slice(first_food, first_food + self.num_food)
        self._forests = slice(first_food + self.num_food, self.num_entities)
        self._is_leader = (np.arange(num_agents) == 0)[:, None]

    def _in_forest(self, state: State) -> jax.Array:
        """``[N, F]`` bool: agent overlaps forest ``f``."""
        n = self.num_agents
        delta = state.p_pos[:n, None] - state.p_pos[None, self._forests]
        dist = jnp.sqrt(jnp.sum(jnp.square(delta), axis=-1))
        return dist < self.rad[:n, None] + self.rad[None, self._forests]

    @jit_method
    def get_obs(self, state: State) -> Observations:
        n, adv, good = self.num_agents, self.num_adversaries, self.num_good_agents
        pos, vel = state.p_pos[:n], state.p_vel[:n]
        landmark_rel = (state.p_pos[None, n:] - pos[:, None]).reshape(n, -1)

        in_forest = self._in_forest(state)
        shared_forest = jnp.any(in_forest[:, None, :] & in_forest[None, :, :], axis=-1)
        outside = ~jnp.any(in_forest, axis=-1)
        visible = shared_forest | (outside[:, None] & outside[None, :]) | self._is_leader
        visible = visible.astype(jnp.float32)  # [N, N]: row sees column

        other_rel = drop_diagonal((pos[None, :] - pos[:, None]) * visible[..., None])
        good_vel = vel[None, adv:] * visible[:, adv:, None]  # [N, G, 2]
        forest_flags = jnp.where(in_forest, 1.0, -1.0).astype(jnp.float32)
        message = jnp.broadcast_to(state.c[self.leader_idx], (adv, self.dim_c))

        adv_obs = jnp.concatenate(
            [
                vel[:adv],
                pos[:adv],
                landmark_rel[:adv],
                other_rel[:adv].reshape(adv, -1),
                good_vel[:adv].reshape(adv, -1),
                forest_flags[:adv],
                message,
            ],
            axis=1,
        )
        good_obs = jnp.concatenate(
            [
                vel[adv:],
                pos[adv:],
                landmark_rel[adv:],
                other_rel[adv:].reshape(good, -1),
                forest_flags[adv:],
                drop_diagonal(good_vel[adv:]).reshape(good, -1),
            ],
            axis=1,
        )
        return {
            **self._split(adv_obs, self.agents[:adv]),
            **self._split(good_obs, self.good_agents),
        }

    def _rewards(self, state: State) -> jax.Array:
        n, adv = self.num_agents, self.num_adversaries
        pos = state.p_pos[:n]
        good_pos = pos[adv:]
        apart = pos[:adv, None] - good_pos[None]  # [V, G, 2]
        dist = jnp.sqrt(jnp.sum(jnp.square(apart), axis=-1))
        caught = (dist < self.rad[:adv, None] + self.rad[None, adv:n]).astype(jnp.float32)
        adv_reward = 5.0 * jnp.sum(caught) - 0.1 * jnp.min(dist, axis=1)

        to_food = state.p_pos[None, self._food] - good_pos[:, None]  # [G, food, 2]
        food_dist = jnp.sqrt(jnp.sum(jnp.square(to_food), axis=-1))
        eating = food_dist < self.rad[adv:n, None] + self.rad[None, self._food]
        good_reward = (
            -5.0 * jnp.sum(caught, axis=0)
            - 2.0 * jnp.sum(bound_penalty(jnp.abs(good_pos)), axis=-1)
            + 2.0 * jnp.sum(eating, axis=-1).astype(jnp.float32)
            - 0.05 * jnp.min(food_dist, axis=-1)
        )
        return jnp.concatenate([adv_reward, good_reward])
