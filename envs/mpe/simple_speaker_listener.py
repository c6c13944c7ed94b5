"""``MPE_simple_speaker_listener_v4``: a static speaker guides a mute listener to a goal."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.env import jit_method
from jaxmarl.envs.mpe._world import DISCRETE_ACT, MAX_STEPS, MPEBase, State, check_fixed
from jaxmarl.typing import Observations

SPEAKER = "speaker_0"
LISTENER = "listener_0"
LANDMARK_COLOURS = np.array(
    [[0.65, 0.15, 0.15], [0.15, 0.65, 0.15], [0.15, 0.15, 0.65]], dtype=np.float32
)


class SimpleSpeakerListenerMPE(MPEBase):
    """Cooperative communication; mpe2 ``simple_speaker_listener_v4``.

    Agents: ``speaker_0`` (cannot move, speaks, ``dim_c = 3``), ``listener_0`` (moves,
    silent); both size 0.075. Landmarks ``landmark 0 .. 2`` (size 0.04). No collisions.

    Observation float32: speaker ``[3]`` = colour of the goal landmark; listener ``[11]`` =
    own velocity (2), landmark positions relative to the listener (6), the speaker's message (3).

    Action: speaker ``Discrete(3)`` (one-hot word) or ``Box(0, 1, (3,))`` (message);
    listener ``Discrete(5)`` or ``Box(0, 1, (5,))``.

    Reward (shared): ``-||p_listener - p_goal||^2``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[]`` int32, the goal landmark (0 .. 2).

    Example::

        env = SimpleSpeakerListenerMPE()
        obs, state = env.reset(jax.random.key(0))
        actions = {"speaker_0": jnp.int32(1), "listener_0": jnp.int32(2)}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_agents: int = 2,
        num_landmarks: int = 3,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        check_fixed("num_agents", num_agents, 2, "SimpleSpeakerListenerMPE")
        check_fixed("num_landmarks", num_landmarks, 3, "SimpleSpeakerListenerMPE")
        self._build(
            agents=[SPEAKER, LISTENER],
            landmarks=["landmark 0", "landmark 1", "landmark 2"],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=3,
            obs_dims={SPEAKER: 3, LISTENER: 11},
            agent_size=0.075,
            landmark_size=0.04,
            movable=[False, True],
            silent=[False, True],
            colours=[(0.25, 0.25, 0.25)] * 2 + LANDMARK_COLOURS.tolist(),
            goal_shape=(),
        )

    def _sample_goal(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (), 0, self.num_landmarks, dtype=jnp.int32)

    @jit_method
    def get_obs(self, state: State) -> Observations:
        landmark_rel = (state.p_pos[2:] - state.p_pos[1]).reshape(-1)
        listener = jnp.concatenate([state.p_vel[1], landmark_rel, state.c[0]])
        return {SPEAKER: jnp.asarray(LANDMARK_COLOURS)[state.goal], LISTENER: listener}

    def _rewards(self, state: State) -> jax.Array:
        reward = -jnp.sum(jnp.square(state.p_pos[1] - state.p_pos[2 + state.goal]))
        return jnp.broadcast_to(reward, (2,))

    def entity_colours(self, state: State) -> np.ndarray:
        colours = self.colours.copy()
        colours[1] = LANDMARK_COLOURS[int(state.goal)] + 0.45
        return np.clip(colours, 0.0, 1.0)
