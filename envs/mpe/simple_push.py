"""``MPE_simple_push_v3``: a good agent heads for its goal; an adversary pushes it away."""

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
    check_fixed,
    drop_diagonal,
)
from jaxmarl.typing import Observations

ADVERSARY_COLOUR = (0.75, 0.25, 0.25)
# Landmark i is grey with channel i + 1 raised by 0.8 (mpe2): green, blue.
LANDMARK_COLOURS = np.array([[0.1, 0.9, 0.1], [0.1, 0.1, 0.9]], dtype=np.float32)


class SimplePushMPE(MPEBase):
    """Keep-away; mpe2 ``simple_push_v3`` (agent counts generalised like JaxMARL).

    Agents: ``adversary_0 .. adversary_{V-1}`` then ``agent_0 .. agent_{G-1}`` (size 0.05,
    agents collide with each other); two landmarks ``landmark 0``, ``landmark 1`` (size 0.05,
    no collisions). ``dim_c = 2``, all silent.

    Observation float32, ``N = V + G``: good agent ``[17 + 2(N-1)]`` (19 by default) = own
    velocity (2), goal position relative to the agent (2), own colour (3: grey 0.25 with the
    goal's channel at 0.75), landmark positions relative to the agent (4), landmark colours
    (6), other agents' relative positions (2(N-1)); adversary ``[6 + 2(N-1)]`` (8) = own
    velocity, landmark positions, other agents' positions.

    Action: ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    Reward: good agent ``-||p - p_goal||``; adversary
    ``min_good ||p_good - p_goal|| - ||p_adv - p_goal||``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[]`` int32, the goal landmark (0 or 1).

    Example::

        env = SimplePushMPE()
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(4) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_good_agents: int = 1,
        num_adversaries: int = 1,
        num_landmarks: int = 2,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        self.num_good_agents = check_count("num_good_agents", num_good_agents, 1)
        self.num_adversaries = check_count("num_adversaries", num_adversaries, 1)
        check_fixed("num_landmarks", num_landmarks, 2, "SimplePushMPE")
        self.adversaries = [f"adversary_{i}" for i in range(self.num_adversaries)]
        self.good_agents = [f"agent_{i}" for i in range(self.num_good_agents)]
        num_agents = self.num_adversaries + self.num_good_agents
        obs_dims = {a: 6 + 2 * (num_agents - 1) for a in self.adversaries}
        obs_dims.update({a: 17 + 2 * (num_agents - 1) for a in self.good_agents})
        self._build(
            agents=self.adversaries + self.good_agents,
            landmarks=["landmark 0", "landmark 1"],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=2,
            obs_dims=obs_dims,
            agent_collide=True,
            colours=[ADVERSARY_COLOUR] * self.num_adversaries
            + [(0.25, 0.25, 0.25)] * self.num_good_agents
            + LANDMARK_COLOURS.tolist(),
            goal_shape=(),
        )

    def _sample_goal(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (), 0, self.num_landmarks, dtype=jnp.int32)

    def _goal_pos(self, state: State) -> jax.Array:
        return state.p_pos[self.num_agents + state.goal]

    def _good_colour(self, goal: jax.Array) -> jax.Array:
        """Grey 0.25 with channel ``goal + 1`` at 0.75 (mpe2 paints good agents so)."""
        channel = jnp.arange(3, dtype=jnp.int32) == goal + 1
        return jnp.where(channel, 0.75, 0.25).astype(jnp.float32)

    @jit_method
    def get_obs(self, state: State) -> Observations:
        n, adv, good = self.num_agents, self.num_adversaries, self.num_good_agents
        pos, vel = state.p_pos[:n], state.p_vel[:n]
        landmark_rel = (state.p_pos[None, n:] - pos[:, None]).reshape(n, -1)
        other_rel = drop_diagonal(pos[None, :] - pos[:, None]).reshape(n, -1)
        adv_obs = jnp.concatenate([vel[:adv], landmark_rel[:adv], other_rel[:adv]], axis=1)
        goal_rel = self._goal_pos(state)[None] - pos[adv:]
        shared = jnp.concatenate([self._good_colour(state.goal), LANDMARK_COLOURS.reshape(-1)])
        good_obs = jnp.concatenate(
            [
                vel[adv:],
                goal_rel,
                jnp.broadcast_to(shared[:3], (good, 3)),
                landmark_rel[adv:],
                jnp.broadcast_to(shared[3:], (good, 6)),
                other_rel[adv:],
            ],
            axis=1,
        )
        return {**self._split(adv_obs, self.adversaries), **self._split(good_obs, self.good_agents)}

    def _rewards(self, state: State) -> jax.Array:
        n, adv = self.num_agents, self.num_adversaries
        to_goal = state.p_pos[:n] - self._goal_pos(state)[None]
        dist = jnp.sqrt(jnp.sum(jnp.square(to_goal), axis=-1))
        adv_reward = jnp.min(dist[adv:]) - dist[:adv]
        return jnp.concatenate([adv_reward, -dist[adv:]])

    def entity_colours(self, state: State) -> np.ndarray:
        colours = self.colours.copy()
        colours[self.num_adversaries : self.num_agents] = np.asarray(
            self._good_colour(np.int32(state.goal))
        )
        return colours
