"""STORM's rules on hand-built states: zaps, payoffs, freezes, respawns, coins, bad input.

Positions are ``(x, y, direction)``; direction 1 faces +x and 3 faces -x, so players at
``(3, 3, 1)`` and ``(4, 3, 3)`` face each other across one cell boundary. Each env's step is
compiled once per module (``functools.cache``) and reused by its tests.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl

DEFAULT_PAYOFF = np.array([[[3, 0], [5, 1]], [[3, 5], [0, 1]]], np.float32)


@functools.cache
def env_and_step(env_id, **kwargs):
    env = jaxmarl.make(env_id, **kwargs)
    return env, jax.jit(env.step_env)


def codes(env_id, n):
    return {
        "storm_2p": [1, 2],
        "storm": list(range(1, n + 1)),
        "storm_np": [5 + i for i in range(n)],
    }[env_id]


def place(env_id, state, pos, inventory):
    """``state`` with the players moved to ``pos`` and holding ``inventory``."""
    n = len(pos)
    player = jnp.isin(state.grid, jnp.asarray(codes(env_id, n)))
    grid = jnp.where(player, 0, state.grid)
    pos = jnp.asarray(pos, jnp.int32)
    for i, code in enumerate(codes(env_id, n)):
        grid = grid.at[pos[i, 0], pos[i, 1]].set(code)
    return state.replace(
        pos=pos, grid=grid, inventory=jnp.asarray(inventory, state.inventory.dtype)
    )


def act(env, *actions):
    return {agent: jnp.int32(a) for agent, a in zip(env.agents, actions)}


def share(inv):
    inv = np.asarray(inv, np.float32)
    return inv / inv.sum()


# ----------------------------------------------------------------- storm_2p
def test_storm_2p_zap_pays_the_matrix_game_marks_and_freezes():
    env, step = env_and_step("storm_2p")
    _, state = env.reset(jax.random.key(0))
    inventory = [[0, 2], [1, 0]]
    state = place("storm_2p", state, [(3, 3, 1), (4, 3, 3)], inventory)
    # Red zaps, blue stands: one zap is enough when both hold coins.
    _, state, rewards, _, _ = step(jax.random.key(1), state, act(env, 3, 4))
    red, blue = share(inventory[0]), share(inventory[1])
    expected = [red @ DEFAULT_PAYOFF[0] @ blue, red @ DEFAULT_PAYOFF[1] @ blue]  # [5, 0]
    np.testing.assert_allclose([rewards[a] for a in env.agents], expected)
    assert int(state.freeze) == 5
    # Red's beam marks the empty cells two ahead, ahead-right and ahead-left (x+2; x+1, y-+1).
    for cell in [(5, 3), (4, 2), (4, 4)]:
        assert int(state.grid[cell]) == 6, cell
    # Frozen: forward does nothing for 4 steps, then the board is laid out again.
    held = state.pos
    for countdown in (4, 3, 2, 1):
        _, state, rewards, _, _ = step(jax.random.key(2 + countdown), state, act(env, 2, 2))
        np.testing.assert_array_equal(state.pos, held)
        assert int(state.freeze) == countdown
        assert float(rewards["agent_0"]) == 0.0
    _, state, _, _, _ = step(jax.random.key(9), state, act(env, 2, 2))
    assert int(state.freeze) == -1
    np.testing.assert_array_equal(state.inventory, 0)
    assert int((state.grid == 3).sum() + (state.grid == 4).sum()) >= 10  # coins are back


def test_storm_2p_no_interaction_without_coins_or_target():
    env, step = env_and_step("storm_2p")
    _, state = env.reset(jax.random.key(0))
    empty_handed = place("storm_2p", state, [(3, 3, 1), (4, 3, 3)], [[1, 0], [0, 0]])
    _, after, rewards, _, _ = step(jax.random.key(1), empty_handed, act(env, 3, 3))
    assert int(after.freeze) == -1 and float(rewards["agent_1"]) == 0.0
    apart = place("storm_2p", state, [(3, 3, 3), (4, 3, 1)], [[1, 0], [0, 1]])  # back to back
    _, after, rewards, _, _ = step(jax.random.key(1), apart, act(env, 3, 3))
    assert int(after.freeze) == -1 and float(rewards["agent_0"]) == 0.0


def test_storm_2p_collision_gives_the_cell_to_one_player():
    env, step = env_and_step("storm_2p")
    _, state = env.reset(jax.random.key(0))
    state = place("storm_2p", state, [(2, 4, 1), (4, 4, 3)], [[0, 0], [0, 0]])
    winners = set()
    for seed in range(6):
        _, after, _, _, _ = step(jax.random.key(seed), state, act(env, 2, 2))
        cells = [tuple(np.asarray(after.pos[i, :2])) for i in range(2)]
        assert cells[0] != cells[1]
        assert (3, 4) in cells
        winners.add(cells.index((3, 4)))
    assert winners == {0, 1}


def test_storm_2p_pickup_removes_the_coin():
    env, step = env_and_step("storm_2p")
    _, state = env.reset(jax.random.key(0))
    coin = tuple(np.asarray(state.red_coins[0]))
    # Stand just before the coin, facing it (direction 1 steps +x).
    state = place("storm_2p", state, [(coin[0] - 1, coin[1], 1), (6, 3, 0)], [[0, 0], [0, 0]])
    _, after, _, _, _ = step(jax.random.key(1), state, act(env, 2, 4))
    np.testing.assert_array_equal(after.inventory[0], [1, 0])
    assert int(after.grid[coin]) == 1  # the red player stands where the coin was


# ----------------------------------------------------------------- storm
def test_storm_mutual_zap_pays_pair_and_freezes_both():
    env, step = env_and_step("storm", num_agents=3)
    _, state = env.reset(jax.random.key(0))
    inventory = [[0, 1], [2, 0], [1, 0]]
    state = place("storm", state, [(3, 3, 1), (6, 6, 0), (4, 3, 3)], inventory)
    # One zap is not enough: both players of a pair must zap.
    _, after, _, _, _ = step(jax.random.key(1), state, act(env, 3, 4, 4))
    assert int(after.freeze.max()) < 0
    _, after, rewards, _, _ = step(jax.random.key(1), state, act(env, 3, 4, 3))
    np.testing.assert_array_equal(after.freeze, [5, -2, 5])
    # Player 0's pair reward: share_0 @ payoff[0] @ share_2 (defection vs cooperation: 5).
    expected = share(inventory[0]) @ DEFAULT_PAYOFF[0] @ share(inventory[2])
    assert float(rewards["agent_0"]) == pytest.approx(expected) == 5.0
    # JaxMARL writes pair rewards in pair order, so pair (1, 2) overwrites player 2's with 0.
    assert float(rewards["agent_2"]) == 0.0 and float(rewards["agent_1"]) == 0.0
    # Frozen players stay put, then respawn with empty hands after 5 steps.
    held = after.pos
    for _ in range(4):
        _, after, *_ = step(jax.random.key(2), after, act(env, 2, 4, 2))
        np.testing.assert_array_equal(np.asarray(after.pos)[[0, 2]], np.asarray(held)[[0, 2]])
    _, after, *_ = step(jax.random.key(3), after, act(env, 2, 4, 2))
    np.testing.assert_array_equal(np.asarray(after.freeze)[[0, 2]], [-1, -1])
    np.testing.assert_array_equal(np.asarray(after.inventory)[[0, 2]], 0)


def test_storm_coins_regrow_on_free_cells_when_their_timer_runs_out():
    env, step = env_and_step("storm", num_agents=3)
    _, state = env.reset(jax.random.key(0))
    state = place("storm", state, [(3, 3, 1), (6, 6, 0), (4, 4, 3)], [[0, 0]] * 3)
    cells = np.asarray(state.coop_coins)
    grid = state.grid.at[cells[:, 0], cells[:, 1]].set(0)  # every cooperation coin taken
    timer = jnp.array([1, 1, 2, 5, 9, 1], jnp.int32)
    state = state.replace(grid=grid, coop_timer=timer)
    _, after, *_ = step(jax.random.key(1), state, act(env, 4, 4, 4))
    grown = np.asarray(after.grid[cells[:, 0], cells[:, 1]] == 9)
    np.testing.assert_array_equal(grown, np.asarray(timer) == 1)
    redrawn = np.asarray(after.coop_timer)[np.asarray(timer) == 1]
    assert ((redrawn >= 3) & (redrawn <= 9)).all()
    np.testing.assert_array_equal(np.asarray(after.coop_timer)[np.asarray(timer) > 1], [1, 4, 8])


def test_storm_pickup_counts_the_coin_kind():
    env, step = env_and_step("storm", num_agents=3)
    _, state = env.reset(jax.random.key(0))
    coin = tuple(np.asarray(state.defect_coins[0]))
    pos = [(coin[0] - 1, coin[1], 1), (6, 6, 0), (3, 4, 0)]
    state = place("storm", state, pos, [[0, 0]] * 3)
    _, after, *_ = step(jax.random.key(1), state, act(env, 2, 4, 4))
    np.testing.assert_array_equal(after.inventory[0], [0, 1])


def test_storm_8_players_pairs_interact_freeze_and_pay_as_jaxmarl():
    """Eight players in four facing pairs on rows y = 0 and y = 3 (rows apart, so no beam
    reaches another pair): (0, 1), (2, 3) and (6, 7) hold coins and zap each other; player 4
    zaps player 5, who holds coins but stays. Over many step keys (JaxMARL tries only 8 of the
    28 pairs, in a random order) each ready pair is frozen together in some steps and not in
    others; the half-ready pair never is. Rewards are JaxMARL's: a player keeps the value of
    the last pair it belongs to, (i, 7) for i < 7 and (6, 7) for player 7, so only pair
    (6, 7) ever pays."""
    env = jaxmarl.make("storm", num_agents=8)
    _, state = env.reset(jax.random.key(0))
    pos = [(0, 0, 1), (1, 0, 3), (4, 0, 1), (5, 0, 3), (4, 3, 1), (5, 3, 3), (0, 3, 1), (1, 3, 3)]
    inventory = [[1, 0], [0, 1], [1, 1], [2, 0], [1, 0], [0, 1], [2, 0], [1, 1]]
    state = place("storm", state, pos, inventory)
    zap, stay = 3, 4
    actions = act(env, zap, zap, zap, zap, zap, stay, zap, zap)
    keys = jax.random.split(jax.random.key(1), 64)
    step = jax.jit(jax.vmap(env.step_env, in_axes=(0, None, None)))
    obs, after, rewards, _, _ = step(keys, state, actions)
    freeze = np.asarray(after.freeze)  # [64, 8]: 5 where interacted, else -1 - 1
    assert set(np.unique(freeze)) <= {5, -2}
    frozen = freeze == 5
    for i, j in [(0, 1), (2, 3), (6, 7)]:
        np.testing.assert_array_equal(frozen[:, i], frozen[:, j])
        assert frozen[:, i].any() and not frozen[:, i].all(), (i, j)
    assert not frozen[:, 4:6].any()
    # Pair (6, 7): player 6 gets share_6 @ payoff[0] @ share_7, player 7 payoff[1].
    pay_6 = share(inventory[6]) @ DEFAULT_PAYOFF[0] @ share(inventory[7])  # [1, 0] . [.5, .5]
    pay_7 = share(inventory[6]) @ DEFAULT_PAYOFF[1] @ share(inventory[7])
    assert (pay_6, pay_7) == (1.5, 4.0)
    paid = np.stack([np.asarray(rewards[a]) for a in env.agents], -1)  # [64, 8]
    np.testing.assert_array_equal(paid[:, :6], 0.0)
    np.testing.assert_array_equal(paid[:, 6], np.where(frozen[:, 6], pay_6, 0.0))
    np.testing.assert_array_equal(paid[:, 7], np.where(frozen[:, 7], pay_7, 0.0))
    # Nobody moved, and each observation lies in its space with all eight players' columns.
    np.testing.assert_array_equal(after.pos, np.broadcast_to(np.asarray(pos), after.pos.shape))
    for agent in env.agents:
        assert obs[agent]["inventory"].shape == (64, 5, 8)
        assert bool(jax.vmap(env.observation_space(agent).contains)(obs[agent]).all()), agent
    # Player 7 sees its own holdings in column 0 and player 0's in its own column 7.
    np.testing.assert_array_equal(obs["agent_7"]["inventory"][0, :2, 0], inventory[7])
    np.testing.assert_array_equal(obs["agent_7"]["inventory"][0, :2, 7], inventory[0])


# ----------------------------------------------------------------- storm_np
def test_storm_np_zap_forward_pays_freezes_pair_and_respawns():
    env, step = env_and_step("storm_np")
    _, state = env.reset(jax.random.key(0))
    inventory = [[0, 1], [1, 0]]  # zapper holds blue, target holds red
    state = place("storm_np", state, [(3, 3, 1), (4, 3, 3)], inventory)
    _, after, rewards, _, _ = step(jax.random.key(1), state, act(env, 4, 3))
    # JaxMARL's assignment: both end up with share_target @ payoff[1] @ share_zapper.
    expected = share(inventory[1]) @ DEFAULT_PAYOFF[1] @ share(inventory[0])
    np.testing.assert_allclose([rewards[a] for a in env.agents], [expected, expected])
    assert expected == 5.0
    np.testing.assert_array_equal(after.freeze, [[-1, 5], [5, -1]])
    held = after.pos
    for _ in range(4):
        _, after, *_ = step(jax.random.key(2), after, act(env, 2, 2))
        np.testing.assert_array_equal(after.pos, held)
    _, after, *_ = step(jax.random.key(3), after, act(env, 2, 2))
    assert int(after.freeze.max()) == 0
    np.testing.assert_array_equal(after.inventory, 0)
    # Respawned players stand on their own grid codes; every coin is on the board again.
    for i in range(2):
        assert int(after.grid[after.pos[i, 0], after.pos[i, 1]]) == 5 + i
    assert int((after.grid == 3).sum()) == 6 and int((after.grid == 4).sum()) == 6


def test_storm_np_zap_needs_coins_and_the_right_beam():
    env, step = env_and_step("storm_np")
    _, state = env.reset(jax.random.key(0))
    facing = place("storm_np", state, [(3, 3, 1), (4, 3, 3)], [[0, 1], [0, 0]])
    _, after, rewards, _, _ = step(jax.random.key(1), facing, act(env, 4, 3))
    assert int(after.freeze.max()) == -1  # the target holds nothing
    armed = place("storm_np", state, [(3, 3, 1), (4, 3, 3)], [[0, 1], [1, 0]])
    _, after, _, _, _ = step(jax.random.key(1), armed, act(env, 5, 3))  # zap two ahead
    assert int(after.freeze.max()) == -1
    assert int(after.grid[5, 3]) in (2, 3, 4)  # the beam marked (or kept a coin on) x + 2
    two_ahead = place("storm_np", state, [(2, 3, 1), (4, 3, 3)], [[0, 1], [1, 0]])
    _, after, _, _, _ = step(jax.random.key(1), two_ahead, act(env, 5, 3))
    np.testing.assert_array_equal(after.freeze, [[-1, 5], [5, -1]])


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("env_id", "kwargs", "match"),
    [
        ("storm", {"num_agents": 9}, "2 to 8 players"),
        ("storm", {"num_agents": 1}, "2 to 8 players"),
        ("storm_2p", {"num_agents": 3}, "two-player"),
        ("storm", {"payoff_matrix": [[3, 0], [5, 1]]}, r"\[2, 2, 2\]"),
        ("storm_2p", {"payoff_matrix": np.zeros((2, 3, 2))}, r"\[2, 2, 2\]"),
        ("storm_np", {"payoff_matrix": [[[1, 2], [3, 4]]]}, r"\[2, 2, 2\]"),
        ("storm_np", {"payoff_matrix": [[["a", 0], [5, 1]], [[3, 5], [0, 1]]]}, r"\[2, 2, 2\]"),
        ("storm_np", {"obs_size": 9}, "larger than the grid"),
        ("storm_np", {"grid_size": 4, "obs_size": 5}, "larger than the grid"),
        (
            "storm_np",
            {"grid_size": 4, "obs_size": 3, "num_agents": 5, "num_coins": 6},
            "do not fit",
        ),
        ("storm_np", {"num_agents": 1}, "num_agents"),
        ("storm", {"num_inner_steps": 0}, "num_inner_steps"),
        ("storm_np", {"freeze_penalty": 0}, "freeze_penalty"),
    ],
)
def test_bad_arguments_fail_in_the_constructor(env_id, kwargs, match):
    with pytest.raises(ValueError, match=match):
        jaxmarl.make(env_id, **kwargs)


def test_unknown_keyword_is_named():
    with pytest.raises(TypeError, match="did you mean 'num_agents'"):
        jaxmarl.make("storm", num_agent=3)


def test_storm_one_draw_step_equals_the_base_class_step():
    """``InTheGrid.step`` draws one set of start positions and coin timers per step; the base
    class's ``step`` draws three (respawn, inner restart, auto-reset) and keeps one. Same keys
    must give the same observations, states, rewards, dones and infos, through thaws (the
    episodes start with random freezes), inner restarts and episode ends."""
    from jaxmarl.env import MultiAgentEnv

    env = jaxmarl.make(
        "storm", num_agents=3, num_inner_steps=4, num_outer_steps=2, fixed_coin_location=False
    )

    def rollout(step_fn, key):
        key, freeze_key = jax.random.split(key)
        _, state = env.reset(key)
        state = state.replace(freeze=jax.random.randint(freeze_key, (3,), -1, 4))

        def body(state, step_key):
            act_key, step_key = jax.random.split(step_key)
            draws = jax.random.randint(act_key, (env.num_agents,), 0, 5)
            out = step_fn(step_key, state, {a: draws[i] for i, a in enumerate(env.agents)})
            return out[1], (out, state.freeze)

        return jax.lax.scan(body, state, jax.random.split(key, 12))[1]

    def both(key):
        return rollout(env.step, key), rollout(functools.partial(MultiAgentEnv.step, env), key)

    (ours, freeze), (base, _) = jax.jit(jax.vmap(both))(jax.random.split(jax.random.key(5), 8))
    jax.tree.map(np.testing.assert_array_equal, ours, base)
    dones, infos = ours[3], ours[4]
    assert dones["__all__"].any() and infos["inner_episode_done"].any()
    assert (freeze == 1).any()  # some players thaw and respawn


COIN_FIELDS = {
    "storm_2p": ("red_coins", "blue_coins"),
    "storm": ("coop_coins", "defect_coins"),
    "storm_np": ("red_coins", "blue_coins"),
}


@pytest.mark.parametrize("env_id", sorted(COIN_FIELDS))
def test_coin_infos_count_pickups_over_the_outer_episode(env_id):
    """``coins_collected`` and ``coop_coin_fraction`` count the coins of each type picked up
    in the outer episode: kept over an inner restart, reported on the episode's last step
    and zero again after the auto-reset (JaxMARL's ``coin_ratio`` reads the restarted board)."""
    env = jaxmarl.make(env_id, num_inner_steps=3, num_outer_steps=2)
    step = jax.jit(env.step)
    forward, stay = 2, 3 if env_id == "storm_np" else 4
    _, state = env.reset(jax.random.key(0))
    coins = [np.asarray(getattr(state, field)) for field in COIN_FIELDS[env_id]]
    taken = {tuple(c) for cells in coins for c in cells}
    # Each of the first two players one step west of a coin of its own type, facing it (+x).
    starts = []
    for cells in coins:
        x, y = next(c for c in cells if c[0] >= 1 and (c[0] - 1, c[1]) not in taken)
        starts.append((int(x) - 1, int(y), 1))
    grid = np.asarray(jnp.where(jnp.isin(state.grid, jnp.asarray(codes(env_id, 8))), 0, state.grid))
    free = [(x, y) for x, y in zip(*np.nonzero(grid == 0)) if (x, y, 1) not in starts]
    starts += [(int(x), int(y), 0) for x, y in free[: env.num_agents - 2]]
    state = place(env_id, state, starts, [[0, 0]] * env.num_agents)

    def actions(first, second):
        return act(env, first, second, *[stay] * (env.num_agents - 2))

    _, state, _, _, infos = step(jax.random.key(1), state, actions(forward, stay))
    assert int(infos["coins_collected"]) == 1 and float(infos["coop_coin_fraction"]) == 1.0
    _, state, _, _, infos = step(jax.random.key(2), state, actions(stay, forward))
    assert int(infos["coins_collected"]) == 2 and float(infos["coop_coin_fraction"]) == 0.5
    _, state, _, dones, infos = step(jax.random.key(3), state, actions(stay, stay))
    assert bool(infos["inner_episode_done"]) and not bool(dones["__all__"])
    # A restarted board may put a coin over a player who stays, so later counts only grow.
    assert int(infos["coins_collected"]) >= 2
    np.testing.assert_array_equal(state.collected.sum(), infos["coins_collected"])
    for t in range(3):
        _, state, _, dones, last = step(jax.random.key(4 + t), state, actions(stay, stay))
    assert bool(dones["__all__"]) and int(last["coins_collected"]) >= 2
    np.testing.assert_array_equal(state.collected, [0, 0])
