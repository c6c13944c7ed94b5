"""``MPE_simple_reference_v3``: two agents talk each other to their goal landmarks."""

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
    check_fixed,
    check_ratio,
)
from jaxmarl.typing import Observations

LANDMARK_COLOURS = np.array(
    [[0.75, 0.25, 0.25], [0.25, 0.75, 0.25], [0.25, 0.25, 0.75]], dtype=np.float32
)


class SimpleReferenceMPE(MPEBase):
    """Cooperative reference game; mpe2 ``simple_reference_v3``.

    Agents: ``agent_0``, ``agent_1`` (movable, speaking, ``dim_c = 10``, no collisions);
    landmarks ``landmark 0 .. 2`` (red, green, blue).

    Observation ``[21]`` float32: own velocity (2), landmark positions relative to the agent
    (6), colour of the landmark the *other* agent must reach (3), the other agent's last
    message (10).

    Action: ``Discrete(50)`` = movement (``a % 5``) + 5 * word (``a // 5``, one-hot of 10), or
    ``Box(0, 1, (15,))`` = movement (5) then message (10).

    Reward: ``local_i = -||p_other - p_(goal of other)||``; each agent gets
    ``mean(local) * (1 - local_ratio) + local_i * local_ratio``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[2]`` int32; ``goal[j]`` is the landmark agent ``j`` must reach
    (JaxMARL's convention; in mpe2 terms ``agents[1 - j].goal_b``).

    Example::

        env = SimpleReferenceMPE()
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(7) for a in env.agents}  # move +x, say word 1
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_agents: int = 2,
        num_landmarks: int = 3,
        local_ratio: float = 0.5,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        check_fixed("num_agents", num_agents, 2, "SimpleReferenceMPE")
        check_fixed("num_landmarks", num_landmarks, 3, "SimpleReferenceMPE")
        self.local_ratio = check_ratio("local_ratio", local_ratio)
        agents = ["agent_0", "agent_1"]
        self._build(
            agents=agents,
            landmarks=["landmark 0", "landmark 1", "landmark 2"],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=10,
            obs_dims={a: 21 for a in agents},
            silent=False,
            colours=[(0.25, 0.25, 0.25)] * 2 + LANDMARK_COLOURS.tolist(),
            goal_shape=(2,),
        )

    def _sample_goal(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (2,), 0, self.num_landmarks, dtype=jnp.int32)

    @jit_method
    def get_obs(self, state: State) -> Observations:
        pos = state.p_pos[:2]
        landmark_rel = (state.p_pos[None, 2:] - pos[:, None]).reshape(2, -1)
        other_goal_colour = jnp.asarray(LANDMARK_COLOURS)[state.goal[::-1]]
        obs = jnp.concatenate(
            [state.p_vel[:2], landmark_rel, other_goal_colour, state.c[::-1]], axis=1
        )
        return self._split(obs)

    def _rewards(self, state: State) -> jax.Array:
        # local[i] = -distance of the other agent to that agent's goal landmark.
        target = state.p_pos[2 + state.goal]  # [2, 2]: goal of agent j
        dist = jnp.sqrt(jnp.sum(jnp.square(state.p_pos[:2] - target), axis=-1))
        local = -dist[::-1]
        return jnp.mean(local) * (1.0 - self.local_ratio) + local * self.local_ratio

    def entity_colours(self, state: State) -> np.ndarray:
        colours = self.colours.copy()
        colours[:2] = LANDMARK_COLOURS[np.asarray(state.goal)]
        return colours
