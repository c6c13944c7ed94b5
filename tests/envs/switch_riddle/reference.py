"""A plain NumPy switch riddle written from the rules, and the counter protocol.

Used by ``test_switch_riddle.py`` only: the JAX env is stepped alongside it on the same room
sequence, and the protocol's exact expected return is computed here by enumerating every
room sequence.
"""

from __future__ import annotations

import itertools

import numpy as np

NOTHING, SWITCH_LIGHT, TELL = 0, 1, 2


class ReferenceSwitchRiddle:
    """One episode at a time; the caller chooses which agent is in the room each day."""

    def __init__(self, num_agents=3, initial_bulb_state=False, die=-1.0, live=1.0):
        self.num_agents = num_agents
        self.max_steps = 4 * num_agents - 6
        self.initial_bulb_state = initial_bulb_state
        self.die, self.live = die, live

    def reset(self, room: int) -> np.ndarray:
        self.light = self.initial_bulb_state
        self.visited = set()
        self.room = room
        self.steps = 0
        return self.observe()

    def observe(self) -> np.ndarray:
        obs = np.zeros((self.num_agents, 2), dtype=np.int32)
        obs[self.room, 0] = 1
        obs[self.room, 1] = int(self.light)
        return obs

    def step(self, actions, next_room: int):
        """Returns ``(obs, reward, done, terminated)``; only the action in the room counts."""
        action = int(actions[self.room])
        self.visited.add(self.room)
        if action == SWITCH_LIGHT:
            self.light = not self.light
        reward = 0.0
        if action == TELL:
            reward = self.live if len(self.visited) == self.num_agents else self.die
        self.steps += 1
        terminated = action == TELL
        done = terminated or self.steps >= self.max_steps
        self.room = next_room
        return self.observe(), reward, done, terminated


class CounterProtocol:
    """Agent 0 counts; every other agent switches the light on at its first chance.

    A non-counter in the room with the light off that has never switched turns it on. The
    counter in the room with the light on counts one more agent and turns it off, or, when
    the count reaches ``N - 1``, tells.
    """

    def __init__(self, num_agents: int):
        self.num_agents = num_agents
        self.switched = np.zeros(num_agents, dtype=bool)
        self.count = 0

    def act(self, obs: np.ndarray) -> np.ndarray:
        actions = np.zeros(self.num_agents, dtype=np.int32)
        room = int(np.argmax(obs[:, 0]))
        light = bool(obs[room, 1])
        if room == 0:
            if light:
                self.count += 1
                actions[0] = TELL if self.count == self.num_agents - 1 else SWITCH_LIGHT
        elif not light and not self.switched[room]:
            self.switched[room] = True
            actions[room] = SWITCH_LIGHT
        return actions


class HistoryProtocol:
    """A policy that acts on each agent's history, from a table of decisions.

    An agent in the room on day ``d`` (0-based) looks up ``(agent, d, its earlier days in the
    room, the light it saw on each, the light now)``; histories not in the table act nothing.
    The table is the one ``benchmarks/switch_riddle_protocol.py`` writes (``decisions``).
    """

    def __init__(self, num_agents: int, decisions: list[dict]):
        self.num_agents = num_agents
        self.table = {
            (
                row["agent"],
                row["day"],
                tuple(row["earlier_days"]),
                tuple(row["earlier_lights"]),
                row["light"],
            ): row["action"]
            for row in decisions
        }
        self.day = 0
        self.seen = [[] for _ in range(num_agents)]  # (day, light) of each visit

    def act(self, obs: np.ndarray) -> np.ndarray:
        actions = np.zeros(self.num_agents, dtype=np.int32)
        room = int(np.argmax(obs[:, 0]))
        light = int(obs[room, 1])
        days = tuple(d for d, _ in self.seen[room])
        lights = tuple(lt for _, lt in self.seen[room])
        actions[room] = self.table.get((room, self.day, days, lights, light), NOTHING)
        self.seen[room].append((self.day, light))
        self.day += 1
        return actions


def protocol_episode(num_agents: int, rooms, policy) -> tuple[float, int]:
    """``(return, days)`` of one episode of ``policy`` with the given rooms (day 0, 1, ...)."""
    env = ReferenceSwitchRiddle(num_agents)
    obs = env.reset(rooms[0])
    total = 0.0
    for day in range(env.max_steps):
        next_room = rooms[day + 1] if day + 1 < len(rooms) else 0
        obs, reward, done, _ = env.step(policy.act(obs), next_room)
        total += reward
        if done:
            return total, day + 1
    return total, env.max_steps


def enumerate_protocol(num_agents: int, make_policy) -> np.ndarray:
    """``[N^(4N-6), 2]`` (return, days) of a fresh ``make_policy()`` on every room sequence."""
    days = 4 * num_agents - 6
    return np.array(
        [
            protocol_episode(num_agents, rooms, make_policy())
            for rooms in itertools.product(range(num_agents), repeat=days)
        ]
    )


def exact_protocol_value(num_agents: int) -> float:
    """Expected return of the counter protocol, averaged over all ``N^(4N-6)`` room sequences."""
    outcomes = enumerate_protocol(num_agents, lambda: CounterProtocol(num_agents))
    return float(outcomes[:, 0].mean())
