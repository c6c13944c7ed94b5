"""``MPE_simple_v3``: one agent, rewarded for being close to a landmark (a debugging task)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmarl.env import jit_method
from jaxmarl.envs.mpe._world import (
    CONTINUOUS_ACT,
    DISCRETE_ACT,
    MAX_STEPS,
    MPEBase,
    State,
    check_count,
)
from jaxmarl.typing import Observations

__all__ = ["CONTINUOUS_ACT", "DISCRETE_ACT", "SimpleMPE", "State"]


class SimpleMPE(MPEBase):
    """Agents move towards the first landmark; mpe2 ``simple_v3`` (generalised to N agents).

    Agents: ``agent_0 .. agent_{N-1}`` (default one). No collisions, no communication.

    Observation ``[2 + 2L]`` float32: own velocity (2), every landmark's position relative
    to the agent (2 each).

    Action: ``Discrete(5)`` (no-op, -x, +x, -y, +y) or ``Box(0, 1, (5,))``.

    Reward per agent: ``-||p_agent - p_landmark_0||^2``.

    Episode: truncated after ``max_steps`` steps (all ``dones`` true); never terminated.

    State: see :class:`jaxmarl.envs.mpe.State`; ``goal`` is ``[0]`` int32 (unused).

    Example::

        env = SimpleMPE()
        obs, state = env.reset(jax.random.key(0))
        obs, state, rewards, dones, infos = env.step(
            jax.random.key(1), state, {"agent_0": jnp.int32(2)})
    """

    def __init__(
        self,
        num_agents: int = 1,
        num_landmarks: int = 1,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        num_agents = check_count("num_agents", num_agents, 1)
        num_landmarks = check_count("num_landmarks", num_landmarks, 1)
        agents = [f"agent_{i}" for i in range(num_agents)]
        landmarks = [f"landmark {i}" for i in range(num_landmarks)]
        colours = [(0.25, 0.25, 0.25)] * num_agents
        colours += [(0.75, 0.25, 0.25)] + [(0.75, 0.75, 0.75)] * (num_landmarks - 1)
        self._build(
            agents=agents,
            landmarks=landmarks,
            action_type=action_type,
            max_steps=max_steps,
            dim_c=0,
            obs_dims={a: 2 + 2 * num_landmarks for a in agents},
            colours=colours,
        )

    @jit_method
    def get_obs(self, state: State) -> Observations:
        n = self.num_agents
        pos = state.p_pos[:n]
        landmark_rel = state.p_pos[None, n:] - pos[:, None]
        obs = jnp.concatenate([state.p_vel[:n], landmark_rel.reshape(n, -1)], axis=1)
        return self._split(obs)

    def _rewards(self, state: State) -> jax.Array:
        n = self.num_agents
        return -jnp.sum(jnp.square(state.p_pos[:n] - state.p_pos[n]), axis=-1)
