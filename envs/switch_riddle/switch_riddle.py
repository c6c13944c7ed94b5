"""``switch_riddle``: N prisoners, one room with a light bulb, one claim that ends the game."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import random_unrolled, spaces
from jaxmarl.env import MultiAgentEnv, jit_method, one_pass_step
from jaxmarl.typing import Actions, Observations

__all__ = ["GAME_ACTIONS", "State", "SwitchRiddle"]

# Action indices, named as in JaxMARL (``env.game_actions`` keeps its dict too).
NOTHING, SWITCH_LIGHT, TELL = 0, 1, 2
GAME_ACTIONS = {"NOTHING": NOTHING, "SWITCH_LIGHT": SWITCH_LIGHT, "TELL": TELL}


@struct.dataclass
class State:
    """Switch-riddle state.

    Attributes:
        done: ``[]`` bool, whether the episode has ended (shared by all agents).
        step: ``[]`` int32, steps taken in the current episode.
        bulb_state: ``[]`` bool, whether the light is on.
        agent_in_room: ``[]`` int32, index of the agent in the room this step.
        has_been: ``[num_agents]`` bool, which agents have been in the room so far (set when
            an agent's step in the room is taken, so the teller counts itself).
    """

    done: jax.Array
    step: jax.Array
    bulb_state: jax.Array
    agent_in_room: jax.Array
    has_been: jax.Array


class SwitchRiddle(MultiAgentEnv):
    """The switch riddle (Foerster et al., 2016) with JaxMARL 0.2.0's rules and defaults.

    Every step one agent, drawn uniformly at random, is in the room; only its action counts.
    It can leave the light as it is, toggle it, or tell the warden that every agent has been
    in the room.

    Agents: ``agent_0 .. agent_{N-1}``, ``N = num_agents >= 3``.

    Observation ``[2]`` int32 (``MultiDiscrete([2, 2])``): 1 if the agent is in the room; 1 if
    the agent is in the room and the light is on (agents outside see 0).

    Action: ``Discrete(3)``: 0 nothing, 1 switch the light, 2 tell. Every action is always
    available (``get_avail_actions`` is all ones, as JaxMARL has no masks here); the actions
    of agents outside the room are ignored.

    Reward (shared, float32): ``reward_all_live`` (+1) when the agent in the room tells and
    every agent has been in the room (itself included), ``reward_all_die`` (-1) when it tells
    too early, 0 otherwise.

    Episode: terminated by a tell (``infos["terminated"]``); otherwise truncated after
    ``max_steps = 4 N - 6`` steps with reward 0. ``infos["success"]`` is true where the
    episode ends in a correct tell, so its mean over episode ends is the success rate (the
    learners log it as ``success``; the return is that rate less the rate of wrong tells).

    State: :class:`State` (``done``, ``step``, ``bulb_state``, ``agent_in_room``,
    ``has_been``).

    Example::

        env = SwitchRiddle(num_agents=3)
        obs, state = env.reset(jax.random.key(0))
        actions = {agent: jnp.int32(1) for agent in env.agents}
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    observations_from_state = True

    def __init__(
        self,
        num_agents: int = 3,
        initial_bulb_state: bool = False,
        reward_all_die: float = -1.0,
        reward_all_live: float = 1.0,
    ) -> None:
        integer = isinstance(num_agents, (int, np.integer)) and not isinstance(
            num_agents, (bool, np.bool_)
        )
        if not integer or num_agents < 3:
            kind = "" if integer else f" of type {type(num_agents).__name__}, not an integer"
            raise ValueError(
                f"switch_riddle needs num_agents >= 3 (a Python or NumPy integer), got "
                f"{num_agents!r}{kind}; pass num_agents=3 or more"
            )
        num_agents = int(num_agents)
        super().__init__(num_agents=num_agents)
        self.game_actions = dict(GAME_ACTIONS)
        self.game_actions_idx = {index: name for name, index in GAME_ACTIONS.items()}
        self.action_spaces = {a: spaces.Discrete(len(GAME_ACTIONS)) for a in self.agents}
        self.observation_spaces = {a: spaces.MultiDiscrete([2, 2]) for a in self.agents}
        self.max_steps = 4 * num_agents - 6
        self.initial_bulb_state = bool(initial_bulb_state)
        self.reward_all_die = float(reward_all_die)
        self.reward_all_live = float(reward_all_live)

    def _draw_room(self, key: jax.Array) -> jax.Array:
        """``jax.random.randint(key, (), 0, num_agents)``, bit for bit, with the Threefry hash
        written out (``jaxmarl.random_unrolled``): on a CPU JAX's rolled hash loop is most of
        a step's time, and the written-out one fuses with the rest of the step."""
        return random_unrolled.randint(key, 1, 0, self.num_agents, jnp.int32)[0]

    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, State]:
        """A fresh episode: light at ``initial_bulb_state``, a random agent in the room."""
        state = State(
            done=jnp.bool_(False),
            step=jnp.int32(0),
            bulb_state=jnp.bool_(self.initial_bulb_state),
            agent_in_room=self._draw_room(key),
            has_been=jnp.zeros((self.num_agents,), dtype=jnp.bool_),
        )
        return self.get_obs(state), state

    def _day(self, state: State, actions: Actions) -> tuple[State, jax.Array, jax.Array, jax.Array]:
        """The day's rules: ``(state after the day with the room not yet drawn, reward, told,
        correct)``, where ``correct`` is a tell made once every agent has been in the room.

        Actions outside ``0 .. 2`` act as nothing.
        """
        stacked = jnp.stack([jnp.asarray(actions[a], dtype=jnp.int32) for a in self.agents])
        # One-hot selects rather than a gather and a scatter: under ``vmap`` on a CPU those
        # are serial loops over the batch.
        in_room = jnp.arange(self.num_agents) == state.agent_in_room
        action = jnp.sum(jnp.where(in_room, stacked, 0))
        has_been = state.has_been | in_room
        bulb_state = jnp.where(action == SWITCH_LIGHT, ~state.bulb_state, state.bulb_state)
        told = action == TELL
        correct = told & jnp.all(has_been)
        reward = jnp.where(
            correct, self.reward_all_live, jnp.where(told, self.reward_all_die, 0.0)
        ).astype(jnp.float32)
        step = state.step + 1
        done = told | (step >= self.max_steps)
        after = state.replace(done=done, step=step, bulb_state=bulb_state, has_been=has_been)
        return after, reward, told, correct

    def _outputs(
        self, state: State, reward: jax.Array, told: jax.Array, done: jax.Array, correct: jax.Array
    ):
        rewards = {a: reward for a in self.agents}
        dones = {a: done for a in self.agents + ["__all__"]}
        # success: the episode ended in a correct tell (read at episode ends, the success rate)
        infos = {"terminated": told, "success": correct}
        return self.get_obs(state), state, rewards, dones, infos

    @jit_method
    def step_env(self, key: jax.Array, state: State, actions: Actions):
        """One day: apply the action of the agent in the room, then draw the next one."""
        after, reward, told, correct = self._day(state, actions)
        next_state = after.replace(agent_in_room=self._draw_room(key))
        return self._outputs(next_state, reward, told, after.done, correct)

    @one_pass_step
    def step(self, key: jax.Array, state: State, actions: Actions):
        """``MultiAgentEnv.step`` with one room draw per step instead of two.

        The base class draws the next room from the step key and a fresh episode's room from
        the reset key, then keeps one of them. The day's rules do not depend on either draw,
        so this draws only the one that is kept: from the reset key where the episode ended,
        else from the step key. Same keys, same results as the base class; with a
        ``reset_state`` or terminal observations (which need the discarded draw) it is the
        base class's ``step``.
        """
        step_key, reset_key = random_unrolled.split(key)
        after, reward, told, correct = self._day(state, actions)
        done = after.done
        fresh = State(
            done=jnp.bool_(False),
            step=jnp.int32(0),
            bulb_state=jnp.bool_(self.initial_bulb_state),
            agent_in_room=after.agent_in_room,
            has_been=jnp.zeros_like(after.has_been),
        )
        kept = jax.tree.map(lambda r, s: jnp.where(done, r, s), fresh, after)
        room_key = jax.tree.map(lambda r, s: jnp.where(done, r, s), reset_key, step_key)
        next_state = kept.replace(agent_in_room=self._draw_room(room_key))
        obs, next_state, rewards, dones, infos = self._outputs(
            next_state, reward, told, done, correct
        )
        infos["truncated"] = done & ~told
        return obs, next_state, rewards, dones, infos

    @jit_method
    def get_obs(self, state: State) -> Observations:
        """``[in room, in room and light on]`` int32 per agent."""
        in_room = jnp.arange(self.num_agents) == state.agent_in_room
        sees_light = in_room & state.bulb_state
        obs = jnp.stack([in_room, sees_light], axis=-1).astype(jnp.int32)  # [N, 2]
        return {a: obs[i] for i, a in enumerate(self.agents)}

    def get_world_state(self, state: State) -> jax.Array:
        """Every agent's observation, concatenated, as float32 ``[2 N]`` (the base default,
        cast so a centralised critic gets floats from these integer observations)."""
        return super().get_world_state(state).astype(jnp.float32)
