"""``MPE_simple_crypto_v3``: Alice encrypts a colour for Bob with a shared key; Eve listens."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.env import jit_method
from jaxmarl.envs.mpe._world import DISCRETE_ACT, MAX_STEPS, MPEBase, State, check_fixed
from jaxmarl.typing import Observations

ADVERSARY = "eve_0"
SPEAKER = "alice_0"
LISTENER = "bob_0"
DIM_C = 4
# mpe2: landmark i's colour is the one-hot vector e_i in the message space (dim_c = 4).
LANDMARK_CODES = np.eye(2, DIM_C, dtype=np.float32)


class SimpleCryptoMPE(MPEBase):
    """Covert communication; mpe2 ``simple_crypto_v3``.

    Agents (JaxMARL's order): ``eve_0`` (adversary), ``alice_0`` (speaker), ``bob_0``
    (listener); nobody moves, everybody speaks (``dim_c = 4``). Landmarks ``landmark 0``,
    ``landmark 1`` only carry the codes ``e_0``, ``e_1`` (one-hot of size 4).

    Observation float32: alice ``[8]`` = goal code (4), key code (4); bob ``[8]`` = key code
    (4), alice's message (4); eve ``[4]`` = alice's message.

    Action: ``Discrete(4)`` (one-hot message) or ``Box(0, 1, (4,))`` (message) for everyone.

    Reward: with ``d(x) = ||c_x - goal_code||^2`` counted only when ``c_x`` is not all zero:
    eve ``-d(eve)``; alice and bob ``d(eve) - d(bob)``.

    Episode: truncated after ``max_steps`` steps; never terminated.

    State: ``goal`` is ``[2]`` int32 = (goal landmark, key landmark); JaxMARL stores the
    codes themselves as ``goal_colour`` / ``private_key`` instead.

    Example::

        env = SimpleCryptoMPE()
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(0) for a in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    def __init__(
        self,
        num_agents: int = 3,
        num_landmarks: int = 2,
        action_type: str = DISCRETE_ACT,
        max_steps: int = MAX_STEPS,
    ) -> None:
        check_fixed("num_agents", num_agents, 3, "SimpleCryptoMPE")
        check_fixed("num_landmarks", num_landmarks, 2, "SimpleCryptoMPE")
        self.num_good_agents, self.num_adversaries = 2, 1
        self.adversaries = [ADVERSARY]
        self.good_agents = [SPEAKER, LISTENER]
        self._build(
            agents=[ADVERSARY, SPEAKER, LISTENER],
            landmarks=["landmark 0", "landmark 1"],
            action_type=action_type,
            max_steps=max_steps,
            dim_c=DIM_C,
            obs_dims={ADVERSARY: 4, SPEAKER: 8, LISTENER: 8},
            movable=False,
            silent=False,
            colours=[(0.75, 0.25, 0.25), (0.25, 0.25, 0.25), (0.25, 0.25, 0.25)]
            + [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)],
            goal_shape=(2,),
        )

    def _sample_goal(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (2,), 0, self.num_landmarks, dtype=jnp.int32)

    @jit_method
    def get_obs(self, state: State) -> Observations:
        codes = jnp.asarray(LANDMARK_CODES)[state.goal]  # [goal code, key code]
        message = state.c[1]
        return {
            ADVERSARY: message,
            SPEAKER: codes.reshape(-1),
            LISTENER: jnp.concatenate([codes[1], message]),
        }

    def _rewards(self, state: State) -> jax.Array:
        goal_code = jnp.asarray(LANDMARK_CODES)[state.goal[0]]
        error = jnp.sum(jnp.square(state.c - goal_code), axis=-1)
        spoke = jnp.any(state.c != 0.0, axis=-1)
        error = jnp.where(spoke, error, 0.0)  # mpe2 skips agents whose message is all zero
        eve, bob = error[0], error[2]
        good = eve - bob
        return jnp.stack([-eve, good, good])

    def entity_colours(self, state: State) -> np.ndarray:
        colours = self.colours.copy()
        colours[2] = colours[3 + int(np.asarray(state.goal)[0])]
        return colours
