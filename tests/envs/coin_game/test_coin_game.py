"""Coin Game rules, options and infos, on hand-built states."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.wrappers import LogWrapper
from tests.envs.coin_game.boards import board

RIGHT, LEFT, UP, DOWN, STAY = range(5)


def act(env, state, red, blue, key=0):
    actions = {"0": jnp.int32(red), "1": jnp.int32(blue)}
    return env.step_env(jax.random.key(key), state, actions)


def test_agents_spaces_and_defaults():
    env = jaxmarl.make("coin_game")
    assert env.agents == ["0", "1"] and env.max_steps == 100
    assert env.observation_space("0").shape == (36,) and env.action_space("1").n == 5
    obs, _ = env.reset(jax.random.key(0))
    assert obs["0"].shape == (36,) and obs["0"].dtype == jnp.float32
    cnn = jaxmarl.make("coin_game", cnn=True, egocentric=True)
    obs, _ = cnn.reset(jax.random.key(0))
    assert obs["1"].shape == cnn.observation_space("1").shape == (3, 3, 4)


@pytest.mark.parametrize("bad", [[[1, 1], [1, 1]], [[1, 1, -2]], [[1, 1, -2], [1, 1]], "x"])
def test_bad_payoff_matrix_raises(bad):
    with pytest.raises(ValueError, match="payoff_matrix must be 2 rows"):
        jaxmarl.make("coin_game", payoff_matrix=bad)


def test_bad_step_counts_raise():
    with pytest.raises(ValueError, match="num_inner_steps must be an integer >= 1"):
        jaxmarl.make("coin_game", num_inner_steps=0)


def test_moves_wrap_around():
    env = jaxmarl.make("coin_game")
    far = ([1, 1], [1, 1])  # coins out of the way
    for action, start, end in [
        (RIGHT, [0, 2], [0, 0]),
        (LEFT, [0, 0], [0, 2]),
        (UP, [2, 1], [0, 1]),
        (DOWN, [0, 1], [2, 1]),
        (STAY, [2, 2], [2, 2]),
    ]:
        _, state, *_ = act(env, board(start, [1, 0], *far), action, STAY)
        np.testing.assert_array_equal(state.red_pos, end)


@pytest.mark.parametrize(
    ("red_target", "blue_target", "expected"),
    [
        ("red", None, (2.0, 0.0)),  # red takes its own coin
        ("blue", None, (3.0, -1.0)),  # red takes blue's coin: blue pays the penalty
        (None, "red", (-3.0, 1.5)),  # blue takes red's coin
        (None, "blue", (0.0, 0.5)),  # blue takes its own coin
        ("red", "red", (2.0 - 3.0, 1.5)),  # both on the red coin
    ],
)
def test_pickup_payoffs_follow_the_matrix(red_target, blue_target, expected):
    payoff = [[2, 3, -3], [1.5, 0.5, -1]]
    env = jaxmarl.make("coin_game", payoff_matrix=payoff)
    coins = {"red": [0, 1], "blue": [2, 1]}
    # Each player steps RIGHT from column 0 onto its target (a coin at column 1) or elsewhere.
    red = [coins[red_target][0], 0] if red_target else [1, 2]
    blue = [coins[blue_target][0], 0] if blue_target else [1, 2]
    _, state, rewards, *_ = act(env, board(red, blue, coins["red"], coins["blue"]), RIGHT, RIGHT)
    assert (float(rewards["0"]), float(rewards["1"])) == expected
    shared = jaxmarl.make("coin_game", payoff_matrix=payoff, shared_rewards=True)
    _, _, team, *_ = act(shared, board(red, blue, coins["red"], coins["blue"]), RIGHT, RIGHT)
    assert float(team["0"]) == float(team["1"]) == sum(expected)


def test_taken_coin_respawns_from_the_key():
    env = jaxmarl.make("coin_game")
    start = board([0, 0], [2, 2], [0, 1], [1, 1])
    _, state, *_ = act(env, start, RIGHT, STAY, key=3)
    respawn = jax.random.randint(jax.random.split(jax.random.key(3))[1], (2, 2), 0, 3)
    np.testing.assert_array_equal(state.red_coin_pos, respawn[0])
    np.testing.assert_array_equal(state.blue_coin_pos, [1, 1])  # untouched coin stays
    assert int(state.own_coins[0]) == 1


def test_inner_and_outer_boundaries():
    env = jaxmarl.make("coin_game", num_inner_steps=3, num_outer_steps=2)
    _, state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    inner, outer = [], []
    for t in range(7):
        actions = {"0": jnp.int32(t % 5), "1": jnp.int32((t + 2) % 5)}
        _, state, rewards, dones, infos = step(jax.random.key(t), state, actions)
        inner.append(bool(infos["inner_episode_done"]))
        outer.append(bool(dones["__all__"]))
        assert bool(dones["0"]) == bool(dones["1"]) == outer[-1]
        if inner[-1]:  # the boundary step pays nothing
            assert float(rewards["0"]) == float(rewards["1"]) == 0.0
    assert inner == [False, False, True, False, False, True, False]
    assert outer == [False, False, False, False, False, True, False]
    assert int(state.step) == 1  # auto-reset after the outer episode, then one step


def test_egocentric_centres_each_agent_and_swaps_colours():
    env = jaxmarl.make("coin_game", egocentric=True, cnn=True)
    state = board([0, 0], [2, 1], [0, 2], [1, 1])
    obs = env.get_obs(state)
    for agent in env.agents:
        assert obs[agent][1, 1, 0] == 1 and obs[agent].sum() == 4
    assert obs["0"][(2 - 0 + 1) % 3, (1 - 0 + 1) % 3, 1] == 1  # blue seen by red
    assert obs["1"][(0 - 2 + 1) % 3, (0 - 1 + 1) % 3, 1] == 1  # red seen by blue
    assert obs["1"][(1 - 2 + 1) % 3, (1 - 1 + 1) % 3, 2] == 1  # blue's own coin


def test_jit_vmap_and_same_key_same_result():
    env = jaxmarl.make("coin_game")
    keys = jax.random.split(jax.random.key(5), 4)
    obs, state = jax.vmap(env.reset)(keys)
    actions = {a: jnp.full((4,), i + 1, jnp.int32) for i, a in enumerate(env.agents)}
    first = jax.jit(jax.vmap(env.step))(keys, state, actions)
    again = jax.jit(jax.vmap(env.step))(keys, state, actions)
    jax.tree.map(np.testing.assert_array_equal, first, again)


def test_infos_are_scalars_per_env():
    env = jaxmarl.make("coin_game", num_inner_steps=2, num_outer_steps=1)
    start = board([0, 0], [2, 2], [0, 1], [1, 1])
    _, state, _, _, infos = act(env, start, RIGHT, UP)  # red own coin, blue nothing
    assert float(infos["own_coin_fraction"]) == 1.0 and int(infos["coins_collected"]) == 1
    assert all(np.shape(v) == () for v in infos.values())


# Where each player starts and moves to take the red coin (at [0, 1]), the blue coin (at
# [2, 1]) or nothing; the coins are put back there before every step.
TAKE = {"red": ([0, 0], RIGHT), "blue": ([2, 0], RIGHT), None: ([1, 0], STAY)}


def test_log_wrapper_reports_inner_game_returns_and_own_coin_fraction():
    """An outer episode of three inner games of three steps, with scripted pickups (default
    payoffs: +1 per coin, -2 when the other takes yours; boundary steps pay nothing)."""
    env = LogWrapper(jaxmarl.make("coin_game", num_inner_steps=3, num_outer_steps=3))
    # (red takes, blue takes) per step; steps 3, 6 and 9 are inner boundaries.
    script = [
        ("red", None),  # (+1, 0)
        ("red", "blue"),  # (+1, +1)
        ("red", "blue"),  # boundary: (0, 0), not counted as pickups
        (None, "red"),  # (-2, +1)
        (None, None),
        (None, None),  # boundary
        ("blue", None),  # (+1, -2)
        ("red", "blue"),  # (+1, +1)
        (None, None),  # boundary; the outer episode ends
        ("red", None),  # first step of the next outer episode
    ]
    # Inner games' agent-mean returns: (2 + 1) / 2 = 1.5, (-2 + 1) / 2 = -0.5, (2 - 1) / 2 = 0.5.
    mean_inner = [0, 0, 1.5, 1.5, 1.5, 0.5, 0.5, 0.5, 0.5, 0]
    inner_return = [0, 0, 1.5, 0, 0, -0.5, 0, 0, 0.5, 0]
    # Own-colour pickups / all pickups so far (boundary steps' pickups are not counted).
    own_fraction = [1, 1, 1, 3 / 4, 3 / 4, 3 / 4, 3 / 5, 5 / 7, 5 / 7, 1]
    step = jax.jit(env.step)
    _, state = env.reset(jax.random.key(0))
    for t, (red, blue) in enumerate(script):
        (red_at, red_move), (blue_at, blue_move) = TAKE[red], TAKE[blue]
        inner = state.env_state.replace(
            red_pos=jnp.asarray(red_at, jnp.int32),
            blue_pos=jnp.asarray(blue_at, jnp.int32),
            red_coin_pos=jnp.asarray([0, 1], jnp.int32),
            blue_coin_pos=jnp.asarray([2, 1], jnp.int32),
        )
        actions = {"0": jnp.int32(red_move), "1": jnp.int32(blue_move)}
        _, state, _, dones, infos = step(jax.random.key(t), state.replace(env_state=inner), actions)
        where = f"step {t + 1}"
        assert float(infos["mean_inner_return"]) == mean_inner[t], where
        assert float(infos["inner_return"]) == inner_return[t], where
        assert float(infos["own_coin_fraction"]) == pytest.approx(own_fraction[t]), where
        assert bool(infos["inner_episode_done"]) == (inner_return[t] != 0), where
        assert bool(dones["__all__"]) == (t == 8), where
        if t == 8:  # the wrapper's outer-episode returns: red 1+1-2+1+1, blue 1+1-2+1
            np.testing.assert_array_equal(infos["returned_episode_returns"], [2.0, 1.0])
            assert int(infos["coins_collected"]) == 7
    for name in ("mean_inner_return", "inner_return", "own_coin_fraction"):
        assert infos[name].dtype == jnp.float32, name
