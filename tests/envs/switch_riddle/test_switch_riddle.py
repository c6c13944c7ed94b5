"""Switch riddle: construction, each rule, jit/vmap and determinism, a NumPy reference
stepped alongside, the counter protocol's expected return and the best protocol found."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv
from jaxmarl.envs.switch_riddle import SwitchRiddle
from tests.envs.switch_riddle.reference import (
    HistoryProtocol,
    ReferenceSwitchRiddle,
    enumerate_protocol,
    exact_protocol_value,
)

NOTHING, SWITCH_LIGHT, TELL = 0, 1, 2
DATA = Path(__file__).parent / "data"


def _actions(env, room=None, action=NOTHING, others=NOTHING):
    return {a: jnp.int32(action if i == room else others) for i, a in enumerate(env.agents)}


def test_defaults_agents_and_spaces():
    env = jaxmarl.make("switch_riddle")
    assert isinstance(env, SwitchRiddle)
    assert env.agents == ["agent_0", "agent_1", "agent_2"]
    assert env.max_steps == 6
    assert env.game_actions == {"NOTHING": 0, "SWITCH_LIGHT": 1, "TELL": 2}
    obs, state = env.reset(jax.random.key(0))
    for agent in env.agents:
        space = env.observation_space(agent)
        assert isinstance(space, spaces.MultiDiscrete) and space.num_categories == (2, 2)
        assert obs[agent].shape == space.shape and obs[agent].dtype == space.dtype
        assert env.action_space(agent).n == 3
        assert env.get_avail_actions(state)[agent].tolist() == [True] * 3


@pytest.mark.parametrize(
    ("num_agents", "names"),
    [
        (2, ""),
        (0, ""),
        (-1, ""),
        (np.int64(2), ""),
        (3.0, "of type float, not an integer"),
        (np.float32(4), "of type float32, not an integer"),
        (True, "of type bool, not an integer"),
        (np.bool_(True), "of type bool, not an integer"),
        ("3", "of type str, not an integer"),
    ],
)
def test_too_few_agents_is_a_clear_error(num_agents, names):
    with pytest.raises(ValueError, match=f"num_agents >= 3.*{names}.*pass num_agents=3 or more"):
        jaxmarl.make("switch_riddle", num_agents=num_agents)


@pytest.mark.parametrize("num_agents", [np.int64(4), np.int32(4), np.uint8(4)])
def test_numpy_integer_agent_counts_are_accepted(num_agents):
    env = jaxmarl.make("switch_riddle", num_agents=num_agents)
    assert type(env.num_agents) is int and env.num_agents == 4
    assert type(env.max_steps) is int and env.max_steps == 10
    assert env.agents == [f"agent_{i}" for i in range(4)]


def test_unknown_argument_is_an_error():
    with pytest.raises(TypeError):
        jaxmarl.make("switch_riddle", num_agent=4)


@pytest.mark.parametrize("num_agents", [3, 4, 7])
def test_step_limit_is_4n_minus_6_and_truncates(num_agents):
    env = SwitchRiddle(num_agents=num_agents)
    assert env.max_steps == 4 * num_agents - 6
    _, state = env.reset(jax.random.key(1))
    step = jax.jit(env.step)
    for day in range(env.max_steps):
        _, state, rewards, dones, infos = step(jax.random.key(100 + day), state, _actions(env))
        last = day == env.max_steps - 1
        assert bool(dones["__all__"]) == last and bool(infos["truncated"]) == last
        assert not bool(infos["terminated"]) and float(rewards["agent_0"]) == 0.0
        assert not bool(infos["success"])
    assert int(state.step) == 0  # auto-reset after the time limit


def test_room_is_uniform_and_observed_only_by_the_agent_in_it():
    env = SwitchRiddle(num_agents=4)
    keys = jax.random.split(jax.random.key(2), 4000)
    obs, state = jax.vmap(env.reset)(keys)
    counts = np.bincount(np.asarray(state.agent_in_room), minlength=4) / len(keys)
    np.testing.assert_allclose(counts, 0.25, atol=0.03)
    in_room = np.stack([obs[a][:, 0] for a in env.agents], axis=1)
    np.testing.assert_array_equal(in_room.argmax(1), state.agent_in_room)
    assert (in_room.sum(1) == 1).all()
    # The next day's room is drawn again from the step key.
    next_obs, next_state, *_ = jax.vmap(env.step_env, in_axes=(0, 0, None))(
        jax.random.split(jax.random.key(20), len(keys)), state, _actions(env)
    )
    counts = np.bincount(np.asarray(next_state.agent_in_room), minlength=4) / len(keys)
    np.testing.assert_allclose(counts, 0.25, atol=0.03)
    assert (np.asarray(next_state.agent_in_room) != np.asarray(state.agent_in_room)).any()


def test_switch_toggles_only_from_the_room_and_only_the_room_sees_the_light():
    env = SwitchRiddle(num_agents=3)
    _, state = env.reset(jax.random.key(3))
    state = state.replace(agent_in_room=jnp.int32(1))
    # Others switching does nothing.
    _, after, *_ = env.step_env(jax.random.key(4), state, _actions(env, 1, NOTHING, SWITCH_LIGHT))
    assert not bool(after.bulb_state)
    _, after, *_ = env.step_env(jax.random.key(4), state, _actions(env, 1, SWITCH_LIGHT))
    assert bool(after.bulb_state)
    obs = env.get_obs(after.replace(agent_in_room=jnp.int32(2)))
    assert obs["agent_2"].tolist() == [1, 1]
    assert obs["agent_0"].tolist() == [0, 0] and obs["agent_1"].tolist() == [0, 0]
    # Switching again turns it off.
    _, again, *_ = env.step_env(
        jax.random.key(5), after.replace(agent_in_room=jnp.int32(0)), _actions(env, 0, 1)
    )
    assert not bool(again.bulb_state)


@pytest.mark.parametrize(
    ("visited", "room", "reward"),
    [
        ([True, True, True], 0, 1.0),
        ([True, False, True], 1, 1.0),  # the teller counts itself
        ([True, False, True], 0, -1.0),
        ([False, False, False], 2, -1.0),
    ],
)
def test_tell_rewards_and_terminates(visited, room, reward):
    env = SwitchRiddle(num_agents=3)
    _, state = env.reset(jax.random.key(6))
    state = state.replace(agent_in_room=jnp.int32(room), has_been=jnp.array(visited))
    _, _, rewards, dones, infos = env.step(jax.random.key(7), state, _actions(env, room, TELL))
    assert all(float(rewards[a]) == reward for a in env.agents)
    assert bool(dones["__all__"]) and bool(infos["terminated"]) and not bool(infos["truncated"])
    assert bool(infos["success"]) == (reward > 0)  # a correct tell
    # A tell from outside the room is ignored.
    others = _actions(env, room, NOTHING, TELL)
    _, _, rewards, dones, infos = env.step(jax.random.key(7), state, others)
    assert float(rewards["agent_0"]) == 0.0 and not bool(dones["__all__"])
    assert not bool(infos["success"])


def test_custom_rewards_and_initial_light():
    env = SwitchRiddle(num_agents=3, initial_bulb_state=True, reward_all_die=-3.0)
    obs, state = env.reset(jax.random.key(8))
    room = int(state.agent_in_room)
    assert obs[env.agents[room]].tolist() == [1, 1]
    _, _, rewards, *_ = env.step(jax.random.key(9), state, _actions(env, room, TELL))
    assert float(rewards["agent_0"]) == -3.0


def test_one_draw_step_equals_the_base_class_step():
    """``SwitchRiddle.step`` draws the room once; the base class's draws twice and keeps one.
    Same keys must give the same observations, states, rewards, dones and infos, through
    tells and time limits (the terminal-observation path is the base class's own)."""
    env = SwitchRiddle(num_agents=4)

    def rollout(step_fn, key):
        _, state = env.reset(key)

        def body(state, step_key):
            act_key, step_key = jax.random.split(step_key)
            draws = jax.random.randint(act_key, (env.num_agents,), 0, 3)
            out = step_fn(step_key, state, {a: draws[i] for i, a in enumerate(env.agents)})
            return out[1], out

        return jax.lax.scan(body, state, jax.random.split(key, 40))[1]

    keys = jax.random.split(jax.random.key(21), 16)
    ours = jax.jit(jax.vmap(lambda k: rollout(env.step, k)))(keys)
    base = jax.jit(jax.vmap(lambda k: rollout(partial(MultiAgentEnv.step, env), k)))(keys)
    jax.tree.map(np.testing.assert_array_equal, ours, base)
    dones, infos = ours[3], ours[4]
    assert dones["__all__"].any() and infos["terminated"].any() and infos["truncated"].any()


def test_jit_vmap_same_key_same_result():
    env = SwitchRiddle(num_agents=5)
    keys = jax.random.split(jax.random.key(10), 8)

    def episode(key):
        obs, state = env.reset(key)

        def body(state, step_key):
            act_key, step_key = jax.random.split(step_key)
            draws = jax.random.randint(act_key, (env.num_agents,), 0, 3)
            actions = {a: draws[i] for i, a in enumerate(env.agents)}
            obs, state, rewards, dones, _ = env.step(step_key, state, actions)
            return state, (obs, rewards, dones)

        return jax.lax.scan(body, state, jax.random.split(key, 20))

    run = jax.jit(jax.vmap(episode))
    first, again = run(keys), run(keys)
    jax.tree.map(np.testing.assert_array_equal, first, again)
    single = jax.jit(episode)(keys[3])
    jax.tree.map(lambda b, s: np.testing.assert_array_equal(b[3], s), first, single)
    rooms = np.asarray(first[1][0]["agent_0"][:, :, 0])
    assert not (rooms == rooms[0]).all()


@pytest.mark.parametrize("num_agents", [3, 5])
def test_matches_numpy_reference_on_random_actions(num_agents):
    env = SwitchRiddle(num_agents=num_agents)
    reference = ReferenceSwitchRiddle(num_agents)
    rng = np.random.default_rng(num_agents)
    step = jax.jit(env.step)
    obs, state = env.reset(jax.random.key(11))
    ref_obs = reference.reset(int(state.agent_in_room))
    episodes = 0
    for t in range(120):
        np.testing.assert_array_equal(np.stack([obs[a] for a in env.agents]), ref_obs)
        draws = rng.integers(0, 3, size=num_agents)
        # Tell rarely, so episodes also reach the time limit.
        draws[draws == TELL] = rng.choice([NOTHING, TELL], size=(draws == TELL).sum(), p=[0.7, 0.3])
        actions = {a: jnp.int32(draws[i]) for i, a in enumerate(env.agents)}
        obs, state, rewards, dones, infos = step(jax.random.key(1000 + t), state, actions)
        # Same room sequence: the reference's next room is the one the JAX env drew. On an
        # auto-reset that is the fresh episode's first room.
        ref_obs, ref_reward, ref_done, ref_terminated = reference.step(
            draws, int(state.agent_in_room)
        )
        assert all(float(rewards[a]) == ref_reward for a in env.agents), t
        assert all(bool(dones[a]) == ref_done for a in env.agents + ["__all__"]), t
        assert bool(infos["terminated"]) == ref_terminated, t
        assert bool(infos["success"]) == (ref_terminated and ref_reward > 0), t
        if ref_done:
            episodes += 1
            ref_obs = reference.reset(int(state.agent_in_room))
    assert episodes >= 5


def _protocol_returns(env, keys):
    """Returns of the counter protocol (see ``reference.CounterProtocol``) in JAX, vmapped."""
    n = env.num_agents

    def episode(key):
        obs, state = env.reset(key)

        def body(carry, step_key):
            state, switched, count, alive, total = carry
            room = state.agent_in_room
            light = state.bulb_state
            counter_sees = (room == 0) & light
            count = count + counter_sees.astype(jnp.int32)
            counter_action = jnp.where(
                counter_sees, jnp.where(count == n - 1, TELL, SWITCH_LIGHT), NOTHING
            )
            first_switch = (room != 0) & ~light & ~switched[room]
            action = jnp.where(room == 0, counter_action, jnp.where(first_switch, 1, 0))
            switched = switched.at[room].set(switched[room] | first_switch)
            actions = {
                a: jnp.where(i == room, action, NOTHING).astype(jnp.int32)
                for i, a in enumerate(env.agents)
            }
            _, state, rewards, dones, _ = env.step_env(step_key, state, actions)
            total = total + jnp.where(alive, rewards["agent_0"], 0.0)
            alive = alive & ~dones["__all__"]
            return (state, switched, count, alive, total), None

        init = (state, jnp.zeros(n, bool), jnp.int32(0), jnp.bool_(True), jnp.float32(0))
        (_, _, _, _, total), _ = jax.lax.scan(body, init, jax.random.split(key, env.max_steps))
        return total

    return jax.jit(jax.vmap(episode))(keys)


def test_counter_protocol_expected_return_matches_exact_value():
    env = SwitchRiddle(num_agents=3)
    exact = exact_protocol_value(3)  # 122 / 729 over all 3^6 room sequences
    assert exact == pytest.approx(122 / 729)
    returns = np.asarray(_protocol_returns(env, jax.random.split(jax.random.key(12), 40_000)))
    # The protocol never tells wrongly: every return is 0 or +1.
    assert set(np.unique(returns)) <= {0.0, 1.0}
    stderr = returns.std() / np.sqrt(len(returns))
    assert abs(returns.mean() - exact) < 4 * stderr, (returns.mean(), exact, stderr)


def test_optimal_protocol_tells_exactly_when_all_have_been_in_the_room():
    """The protocol JESP found (``benchmarks/switch_riddle_protocol.py``), replayed in the NumPy
    reference on every room sequence: it tells, correctly, in exactly the episodes in which all
    three agents get into the room within the 6 days, and never wrongly. No policy can do
    better (that is what an oracle does), so 540/729 is the optimal return and success rate."""
    data = json.loads((DATA / "protocol_n3.json").read_text())
    outcomes = enumerate_protocol(3, lambda: HistoryProtocol(3, data["decisions"]))
    returns, days = outcomes[:, 0], outcomes[:, 1]
    every_agent = np.array(
        [len(set(rooms)) == 3 for rooms in itertools.product(range(3), repeat=6)]
    )
    np.testing.assert_array_equal(returns, every_agent.astype(float))
    assert returns.mean() == pytest.approx(540 / 729)
    assert days.mean() == pytest.approx(394 / 81)
    assert Fraction(data["best_return"]) == Fraction(540, 729)


def _decision_table(decisions: list[dict], num_agents: int, days: int) -> np.ndarray:
    """``[agent, day, visits, lights, light]`` int32 actions of a ``HistoryProtocol`` table:
    ``visits`` is the bit mask of the agent's earlier days in the room, ``lights`` that of the
    light it saw on them; unlisted histories act nothing."""
    table = np.full((num_agents, days, 1 << days, 1 << days, 2), NOTHING, np.int32)
    for row in decisions:
        visits = sum(1 << d for d in row["earlier_days"])
        lights = sum(lt << d for d, lt in zip(row["earlier_days"], row["earlier_lights"]))
        table[row["agent"], row["day"], visits, lights, row["light"]] = row["action"]
    return table


def test_optimal_protocol_in_the_jax_env_on_every_room_sequence():
    """The JESP protocol of ``protocol_n3.json`` played through the JAX env (``env.step``,
    the room of each day set through the state) on all 3^6 room sequences: per episode the
    same return and length as the NumPy reference, and 540/729 on average (the optimum)."""
    env = SwitchRiddle(num_agents=3)
    n, days = env.num_agents, env.max_steps
    data = json.loads((DATA / "protocol_n3.json").read_text())
    table = jnp.asarray(_decision_table(data["decisions"], n, days))
    sequences = np.array(list(itertools.product(range(n), repeat=days)), np.int32)

    def episode(rooms):
        _, state = env.reset(jax.random.key(0))

        def body(carry, day):
            state, visits, lights, alive, total, length, success = carry
            room = rooms[day]
            state = state.replace(agent_in_room=room)
            obs = jnp.stack([env.get_obs(state)[a] for a in env.agents])  # [N, 2]
            light = obs[room, 1]
            action = table[room, day, visits[room], lights[room], light]
            actions = {
                a: jnp.where(i == room, action, NOTHING).astype(jnp.int32)
                for i, a in enumerate(env.agents)
            }
            _, state, rewards, dones, infos = env.step(jax.random.key(day), state, actions)
            total = total + jnp.where(alive, rewards["agent_0"], 0.0)
            length = length + alive.astype(jnp.int32)
            success = success | (alive & infos["success"])
            visits = visits.at[room].set(visits[room] | (1 << day))
            lights = lights.at[room].set(lights[room] | (light << day))
            alive = alive & ~dones["__all__"]
            return (state, visits, lights, alive, total, length, success), None

        zeros = jnp.zeros(n, jnp.int32)
        alive, total, length, success = jnp.bool_(True), jnp.float32(0), jnp.int32(0), False
        init = (state, zeros, zeros, alive, total, length, jnp.bool_(success))
        (*_, alive, total, length, success), _ = jax.lax.scan(body, init, jnp.arange(days))
        return total, length, success, alive

    returns, lengths, success, alive = jax.jit(jax.vmap(episode))(jnp.asarray(sequences))
    reference = enumerate_protocol(n, lambda: HistoryProtocol(n, data["decisions"]))
    assert not np.asarray(alive).any()  # every episode ended within the 6 days
    np.testing.assert_array_equal(returns, reference[:, 0])
    np.testing.assert_array_equal(lengths, reference[:, 1])
    np.testing.assert_array_equal(success, reference[:, 0] > 0)
    assert Fraction(int(np.sum(returns)), len(sequences)) == Fraction(540, 729)


def test_one_pass_step_refuses_unknown_keywords():
    env = SwitchRiddle(num_agents=3)
    _, state = env.reset(jax.random.key(0))
    with pytest.raises(TypeError, match="bogus"):
        env.step(jax.random.key(1), state, _actions(env, 0, NOTHING), bogus=True)
