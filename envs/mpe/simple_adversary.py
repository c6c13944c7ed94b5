"""``MPE_simple_adversary_v3``: good agents guard a goal landmark an adversary must guess."""

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
    drop_diagonal,
)
from jaxmarl.typing import Observations

ADVERSARY_COLOUR = (0.85, 0.35, 0.35)
GOOD_COLOUR = (0.35, 0.35, 0.85)
LANDMARK_COLOUR = (0.15, 0.15, 0.15)
GOAL_COLOUR = (0.15, 0.65, 0.15)


class SimpleAdversaryMPE(MPEBase):
    """Physical deception; mpe2 ``simple_adversary_v3``.

    Agents: ``adversary_0 .. adversary_{V-1}`` then ``agent_0 .. agent_{G-1}`` (size 0.15);
    landmarks ``landmark 0 ..`` (size 0.08). No collisions, no communication.

    Observation float32, ``N = V + G`` agents and ``L`` landmarks: good agent
    ``[2 + 2L + 2(N-1)]`` (10 by default) = goal position relative to the agent (2),
    landmark positions relative to the agent (2L), other agents' relative positions
    (2(N-1), agent order without self); adversary ``[2L + 2(N-1)]`` (8) = the same without
    the goal.

    Action: ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    Reward: adversary ``-||p_adv - p_goal||``; every good agent
    ``-min_good ||p_good - p_goal|| + sum_adv ||p_adv - p_goal||``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[]`` int32, the index of the goal landmark (0 .. L-1).

    Example::

        env = SimpleAdversaryMPE()
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(3) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_good_agents: int = 2,
        num_adversaries: int = 1,
        num_obs: int = 2,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        self.num_good_agents = check_count("num_good_agents", num_good_agents, 1)
        self.num_adversaries = check_count("num_adversaries", num_adversaries, 1)
        self.num_obs = check_count("num_obs", num_obs, 1)
        self.adversaries = [f"adversary_{i}" for i in range(self.num_adversaries)]
        self.good_agents = [f"agent_{i}" for i in range(self.num_good_agents)]
        num_agents = self.num_adversaries + self.num_good_agents
        base = 2 * self.num_obs + 2 * (num_agents - 1)
        obs_dims = {a: base for a in self.adversaries}
        obs_dims.update({a: base + 2 for a in self.good_agents})
        self._build(
            agents=self.adversaries + self.good_agents,
            landmarks=[f"landmark {i}" for i in range(self.num_obs)],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=2,
            obs_dims=obs_dims,
            agent_size=0.15,
            landmark_size=0.08,
            colours=[ADVERSARY_COLOUR] * self.num_adversaries
            + [GOOD_COLOUR] * self.num_good_agents
            + [LANDMARK_COLOUR] * self.num_obs,
            goal_shape=(),
        )

    def _sample_goal(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (), 0, self.num_landmarks, dtype=jnp.int32)

    def _goal_pos(self, state: State) -> jax.Array:
        return state.p_pos[self.num_agents + state.goal]

    @jit_method
    def get_obs(self, state: State) -> Observations:
        n, adv = self.num_agents, self.num_adversaries
        pos = state.p_pos[:n]
        landmark_rel = (state.p_pos[None, n:] - pos[:, None]).reshape(n, -1)
        other_rel = drop_diagonal(pos[None, :] - pos[:, None]).reshape(n, -1)
        goal_rel = self._goal_pos(state)[None] - pos[adv:]
        adv_obs = jnp.concatenate([landmark_rel[:adv], other_rel[:adv]], axis=1)
        good_obs = jnp.concatenate([goal_rel, landmark_rel[adv:], other_rel[adv:]], axis=1)
        return {**self._split(adv_obs, self.adversaries), **self._split(good_obs, self.good_agents)}

    def _rewards(self, state: State) -> jax.Array:
        n, adv = self.num_agents, self.num_adversaries
        to_goal = state.p_pos[:n] - self._goal_pos(state)[None]
        dist = jnp.sqrt(jnp.sum(jnp.square(to_goal), axis=-1))
        good_reward = -jnp.min(dist[adv:]) + jnp.sum(dist[:adv])
        good_rewards = jnp.broadcast_to(good_reward, (self.num_good_agents,))
        return jnp.concatenate([-dist[:adv], good_rewards])

    def entity_colours(self, state: State) -> np.ndarray:
        colours = self.colours.copy()
        colours[self.num_agents + int(state.goal)] = GOAL_COLOUR
        return colours
