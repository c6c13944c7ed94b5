"""``MPE_simple_tag_v3``: slower predators (adversaries) chase faster prey around obstacles."""

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
    bound_penalty,
    check_count,
    cross_pairs,
    drop_diagonal,
    pair_distances,
)
from jaxmarl.typing import Observations

ADVERSARY_COLOUR = (0.85, 0.35, 0.35)
GOOD_COLOUR = (0.35, 0.85, 0.35)
OBSTACLE_COLOUR = (0.25, 0.25, 0.25)


class SimpleTagMPE(MPEBase):
    """Predator-prey; mpe2 ``simple_tag_v3``.

    Agents: ``adversary_0 .. adversary_{V-1}`` (size 0.075, accel 3, max speed 1.0), then
    ``agent_0 .. agent_{G-1}`` (size 0.05, accel 4, max speed 1.3); obstacles
    ``landmark 0 ..`` (size 0.2, spawn in ``[-0.9, 0.9]^2``). Everything collides.

    Observation float32, ``N = V + G``, ``L`` obstacles:
    adversary ``[4 + 2L + 2(N-1) + 2G]`` (16 by default), good agent
    ``[4 + 2L + 2(N-1) + 2(G-1)]`` (14): own velocity (2), own position (2), obstacle
    positions relative to the agent (2L), other agents' relative positions (agent order
    without self), velocities of the other good agents.

    Action: ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    Reward: every adversary gets ``+10`` per (adversary, good agent) pair in contact; a good
    agent gets ``-10`` per adversary touching it and ``-bound(|x|) - bound(|y|)`` for leaving
    the arena (``0`` below 0.9, ``10 (|x| - 0.9)`` below 1, then ``min(exp(2|x| - 2), 10)``).

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[0]`` int32 (unused).

    Example::

        env = SimpleTagMPE(num_good_agents=1, num_adversaries=3, num_obs=2)
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(1) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_good_agents: int = 1,
        num_adversaries: int = 3,
        num_obs: int = 2,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        self.num_good_agents = check_count("num_good_agents", num_good_agents, 1)
        self.num_adversaries = check_count("num_adversaries", num_adversaries, 1)
        self.num_obs = check_count("num_obs", num_obs, 0)
        self.adversaries = [f"adversary_{i}" for i in range(self.num_adversaries)]
        self.good_agents = [f"agent_{i}" for i in range(self.num_good_agents)]
        self._build_tag_world(action_type=action_type, max_steps=max_steps)

    def _build_tag_world(self, *, action_type: str, max_steps: int) -> None:
        adv, good, obs_count = self.num_adversaries, self.num_good_agents, self.num_obs
        num_agents = adv + good
        base = 4 + 2 * obs_count + 2 * (num_agents - 1)
        obs_dims = {a: base + 2 * good for a in self.adversaries}
        obs_dims.update({a: base + 2 * (good - 1) for a in self.good_agents})
        self._build(
            agents=self.adversaries + self.good_agents,
            landmarks=[f"landmark {i}" for i in range(obs_count)],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=2,
            obs_dims=obs_dims,
            agent_size=[0.075] * adv + [0.05] * good,
            landmark_size=0.2,
            agent_collide=True,
            landmark_collide=True,
            accel=[3.0] * adv + [4.0] * good,
            max_speed=[1.0] * adv + [1.3] * good,
            landmark_spawn=0.9,
            colours=[ADVERSARY_COLOUR] * adv + [GOOD_COLOUR] * good + [OBSTACLE_COLOUR] * obs_count,
        )
        self._chase_pairs = cross_pairs(num_agents, range(adv), range(adv, num_agents))
        grid_adv, grid_good = np.meshgrid(np.arange(adv), np.arange(adv, num_agents), indexing="ij")
        self._chase_dist_min = (self.rad[grid_adv] + self.rad[grid_good]).ravel()

    def _relative_views(self, state: State) -> jax.Array:
        """``[N, 4 + 2L + 2(N-1)]``: own vel, own pos, obstacles and other agents, relative."""
        n = self.num_agents
        pos = state.p_pos[:n]
        landmark_rel = state.p_pos[None, n:] - pos[:, None]
        other_rel = drop_diagonal(pos[None, :] - pos[:, None])
        return jnp.concatenate(
            [state.p_vel[:n], pos, landmark_rel.reshape(n, -1), other_rel.reshape(n, -1)], axis=1
        )

    @jit_method
    def get_obs(self, state: State) -> Observations:
        adv, good = self.num_adversaries, self.num_good_agents
        views = self._relative_views(state)
        good_vel = state.p_vel[adv : self.num_agents]  # [G, 2]
        adv_obs = jnp.concatenate(
            [views[:adv], jnp.broadcast_to(good_vel.reshape(1, -1), (adv, 2 * good))], axis=1
        )
        other_good_vel = drop_diagonal(jnp.broadcast_to(good_vel[None], (good, good, 2)))
        good_obs = jnp.concatenate([views[adv:], other_good_vel.reshape(good, -1)], axis=1)
        return {**self._split(adv_obs, self.adversaries), **self._split(good_obs, self.good_agents)}

    def _caught(self, state: State) -> jax.Array:
        """``[V, G]`` float32: 1 where adversary ``i`` overlaps good agent ``j``."""
        dist = pair_distances(state.p_pos[: self.num_agents], self._chase_pairs)
        caught = dist < self._chase_dist_min
        return caught.astype(jnp.float32).reshape(self.num_adversaries, self.num_good_agents)

    def _rewards(self, state: State) -> jax.Array:
        adv, n = self.num_adversaries, self.num_agents
        caught = self._caught(state)
        adv_reward = 10.0 * jnp.sum(caught)
        out_of_bounds = jnp.sum(bound_penalty(jnp.abs(state.p_pos[adv:n])), axis=-1)
        good_reward = -10.0 * jnp.sum(caught, axis=0) - out_of_bounds
        return jnp.concatenate([jnp.broadcast_to(adv_reward, (adv,)), good_reward])
