"""Tiny environments for testing the contract machinery without any real env family."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv


@struct.dataclass
class CounterState:
    total: jax.Array  # [] int32, sum of all actions so far
    done: jax.Array  # [] bool
    step: jax.Array  # [] int32


class CounterEnv(MultiAgentEnv):
    """Two agents add their actions (0, 1 or 2) to a shared total.

    Terminates (a real termination) when the total reaches ``target``; truncates at
    ``max_steps``. Reward: each agent gets the total after the step. Agent ``agent_1`` observes
    a longer vector than ``agent_0`` and has two actions only (heterogeneous spaces).
    """

    def __init__(self, target: int = 6, max_steps: int = 5):
        super().__init__(num_agents=2)
        self.target = target
        self.max_steps = max_steps
        self.observation_spaces = {
            "agent_0": spaces.Box(-100.0, 100.0, (2,)),
            "agent_1": spaces.Box(-100.0, 100.0, (3,)),
        }
        self.action_spaces = {"agent_0": spaces.Discrete(3), "agent_1": spaces.Discrete(2)}

    @partial(jax.jit, static_argnums=(0,))
    def reset(self, key):
        start = jax.random.randint(key, (), 0, 2, dtype=jnp.int32)
        state = CounterState(total=start, done=jnp.bool_(False), step=jnp.int32(0))
        return self.get_obs(state), state

    def get_obs(self, state):
        total = state.total.astype(jnp.float32)
        step = state.step.astype(jnp.float32)
        return {
            "agent_0": jnp.stack([total, step]),
            "agent_1": jnp.stack([total, step, jnp.float32(1.0)]),
        }

    def step_env(self, key, state, actions):
        total = (
            state.total
            + actions["agent_0"].astype(jnp.int32)
            + actions["agent_1"].astype(jnp.int32)
        )
        step = state.step + 1
        terminated = total >= self.target
        done = terminated | (step >= self.max_steps)
        new_state = CounterState(total=total, done=done, step=step)
        reward = total.astype(jnp.float32)
        rewards = {agent: reward for agent in self.agents}
        dones = {agent: done for agent in self.agents}
        dones["__all__"] = done
        return self.get_obs(new_state), new_state, rewards, dones, {"terminated": terminated}
