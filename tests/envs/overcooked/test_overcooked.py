"""Rules, options and bad input of ``overcooked`` (v1), on hand-made states of cramped_room.

cramped_room (JaxMARL's start cells)::

    XXPXX      pot (2, 0); onion piles (0, 1), (4, 1); dish pile (1, 3); serving (3, 3)
    O1 2O      agent_0 starts at (1, 1), agent_1 at (3, 1); floor is x 1..3, y 1..2
    X   X
    XDXSX
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.envs.overcooked.overcooked import (
    DISH,
    EAST,
    EMPTY,
    INTERACT,
    NORTH,
    ONION,
    SOUP,
    SOUTH,
    STAY,
    WEST,
)

N, S, E, W, X, USE = NORTH, SOUTH, EAST, WEST, STAY, INTERACT


@functools.cache
def kitchen(**kwargs):
    env = jaxmarl.make("overcooked", **kwargs)
    return env, jax.jit(env.step_env), jax.jit(env.reset)


def place(pos=((1, 1), (3, 1)), facing=(N, N), held=(EMPTY, EMPTY), pot=(0, -1), counter=()):
    """A cramped_room state: agents, their facing and items, the pot, counter items."""
    env, _, _ = kitchen()
    items = np.zeros((4, 5), np.int32)
    for (x, y), item in counter:
        items[y, x] = item
    return env.initial_state().replace(
        agent_pos=jnp.array(pos, jnp.int32),
        agent_dir_idx=jnp.array(facing, jnp.int32),
        agent_inv=jnp.array(held, jnp.int32),
        counter_items=jnp.asarray(items),
        pot_onions=jnp.array([pot[0]], jnp.int32),
        pot_tick=jnp.array([pot[1]], jnp.int32),
    )


def jaxmarl_dict(**changes):
    """cramped_room as a JaxMARL layout dict, with some entries changed."""
    layout = {
        "height": 4,
        "width": 5,
        "wall_idx": [0, 1, 2, 3, 4, 5, 9, 10, 14, 15, 16, 17, 18, 19],
        "agent_idx": [6, 8],
        "goal_idx": [18],
        "plate_pile_idx": [16],
        "onion_pile_idx": [5, 9],
        "pot_idx": [2],
    }
    return {**layout, **changes}


def step(state, a0, a1):
    env, step_env, _ = kitchen()
    obs, state, rewards, dones, infos = step_env(
        jax.random.key(0), state, {"agent_0": jnp.int32(a0), "agent_1": jnp.int32(a1)}
    )
    shaped = [float(infos["shaped_reward"][a]) for a in env.agents]
    return state, float(rewards["agent_0"]), shaped


def test_reset_matches_layout_facing_north():
    env, _, reset = kitchen()
    obs, state = reset(jax.random.key(3))
    np.testing.assert_array_equal(state.agent_pos, [[1, 1], [3, 1]])
    np.testing.assert_array_equal(state.agent_dir_idx, [N, N])
    assert obs["agent_0"].shape == env.observation_space("agent_0").shape == (4, 5, 26)
    # Agents see themselves first: channel 0 is the own cell, channel 1 the other's.
    assert obs["agent_0"][1, 1, 0] == 1 and obs["agent_0"][1, 3, 1] == 1
    assert obs["agent_1"][1, 3, 0] == 1 and obs["agent_1"][1, 1, 1] == 1
    # Counters stay marked (channel 11) also where an item lies on them.
    with_item = place(counter=[((0, 2), ONION)])
    marked = env.get_obs(with_item)["agent_0"]
    assert marked[2, 0, 11] == 1 and marked[2, 0, 23] == 1


def test_pickup_from_piles_and_put_down_on_counters():
    state = place(facing=(W, E))
    state, _, shaped = step(state, USE, USE)  # both face onion piles
    np.testing.assert_array_equal(state.agent_inv, [ONION, ONION])
    assert shaped == [0.0, 0.0]
    state, _, _ = step(state, S, X)  # agent_0 to (1, 2)
    state, _, _ = step(state, W, X)  # turn west to the counter (0, 2)
    state, _, _ = step(state, USE, USE)  # agent_0 puts down; agent_1 faces a full pile: nothing
    assert int(state.counter_items[2, 0]) == ONION
    np.testing.assert_array_equal(state.agent_inv, [EMPTY, ONION])
    state, _, _ = step(state, USE, X)  # and picks it up again
    assert int(state.counter_items[2, 0]) == EMPTY and int(state.agent_inv[0]) == ONION
    # Nothing can be put down on a pile or a serving spot, nor on an occupied counter.
    full = place(pos=((1, 2), (3, 2)), facing=(S, S), held=(ONION, ONION))
    after, _, _ = step(full, USE, USE)
    np.testing.assert_array_equal(after.agent_inv, [ONION, ONION])
    occupied = place(
        pos=((1, 2), (3, 1)), facing=(W, N), held=(ONION, EMPTY), counter=[((0, 2), DISH)]
    )
    after, _, _ = step(occupied, USE, X)
    assert int(after.agent_inv[0]) == ONION and int(after.counter_items[2, 0]) == DISH


def test_pot_fills_cooks_and_plates():
    state = place(pos=((2, 1), (3, 1)), held=(ONION, EMPTY), pot=(2, -1))
    state, _, shaped = step(state, USE, X)  # third onion: cooking starts at the end of the step
    assert shaped == [3.0, 0.0]
    assert int(state.pot_onions[0]) == 3 and int(state.pot_tick[0]) == 1
    state = state.replace(agent_inv=jnp.array([ONION, EMPTY], jnp.int32))
    state, _, shaped = step(state, USE, X)  # a cooking pot takes no onion
    assert shaped == [0.0, 0.0] and int(state.agent_inv[0]) == ONION
    for _ in range(18):
        state, _, _ = step(state, X, X)
    assert int(state.pot_tick[0]) == 20  # ready after 20 ticks; the tick stays there
    state, _, _ = step(state, X, X)
    assert int(state.pot_tick[0]) == 20
    state = state.replace(agent_inv=jnp.array([DISH, EMPTY], jnp.int32))
    state, _, shaped = step(state, USE, X)
    assert shaped == [5.0, 0.0] and int(state.agent_inv[0]) == SOUP
    assert int(state.pot_onions[0]) == 0 and int(state.pot_tick[0]) == -1
    # A dish at a pot that is still cooking takes nothing.
    cooking = place(pos=((2, 1), (3, 1)), held=(DISH, EMPTY), pot=(3, 5))
    after, _, shaped = step(cooking, USE, X)
    assert int(after.agent_inv[0]) == DISH and shaped == [0.0, 0.0]


def test_delivery_rewards_both_agents():
    state = place(pos=((1, 1), (3, 2)), facing=(N, S), held=(EMPTY, SOUP))
    state, reward, shaped = step(state, X, USE)
    assert reward == 20.0 and shaped == [0.0, 0.0] and int(state.agent_inv[1]) == EMPTY
    # Only a soup can be served.
    dish = place(pos=((1, 1), (3, 2)), facing=(N, S), held=(EMPTY, DISH))
    _, reward, _ = step(dish, X, USE)
    assert reward == 0.0


def test_dish_pickup_judged_against_pots_at_step_start():
    # agent_0 puts the first onion into the empty pot while agent_1 takes a dish: the pot was
    # empty at the start of the step, so the dish pickup is not useful (overcooked-ai).
    state = place(pos=((2, 1), (1, 2)), facing=(N, S), held=(ONION, EMPTY))
    _, _, shaped = step(state, USE, USE)
    assert shaped == [3.0, 0.0]
    # agent_0 takes the only ready soup while agent_1 takes a dish: the pot was ready at the
    # start of the step, so the dish pickup is useful.
    state = place(pos=((2, 1), (1, 2)), facing=(N, S), held=(DISH, EMPTY), pot=(3, 20))
    _, _, shaped = step(state, USE, USE)
    assert shaped == [5.0, 3.0]
    # Not useful when a dish lies on a counter, or when dishes held cover the pots.
    on_counter = place(pos=((2, 1), (1, 2)), facing=(N, S), pot=(1, -1), counter=[((0, 2), DISH)])
    assert step(on_counter, X, USE)[2] == [0.0, 0.0]
    held = place(pos=((2, 1), (1, 2)), facing=(N, S), held=(DISH, EMPTY), pot=(1, -1))
    assert step(held, X, USE)[2] == [0.0, 0.0]


def test_collisions_and_swaps_leave_both_in_place():
    # Both step onto (2, 1): neither moves, both turn.
    state, _, _ = step(place(), E, W)
    np.testing.assert_array_equal(state.agent_pos, [[1, 1], [3, 1]])
    np.testing.assert_array_equal(state.agent_dir_idx, [E, W])
    # Swapping neighbours: neither moves.
    state, _, _ = step(place(pos=((1, 1), (2, 1))), E, W)
    np.testing.assert_array_equal(state.agent_pos, [[1, 1], [2, 1]])
    # Following into a cell being vacated is allowed.
    state, _, _ = step(place(pos=((1, 1), (2, 1))), E, E)
    np.testing.assert_array_equal(state.agent_pos, [[2, 1], [3, 1]])
    # Walking into a counter only turns; staying keeps the facing.
    state, _, _ = step(place(), N, X)
    np.testing.assert_array_equal(state.agent_pos, [[1, 1], [3, 1]])
    np.testing.assert_array_equal(state.agent_dir_idx, [N, N])


def test_random_reset_options():
    env, _, reset = kitchen(random_reset=True)
    _, states = jax.vmap(reset)(jax.random.split(jax.random.key(0), 64))
    floor = {(x, y) for x in range(1, 4) for y in range(1, 3)}
    pos = np.asarray(states.agent_pos)
    assert all(tuple(p) in floor for p in pos.reshape(-1, 2))
    assert not (pos[:, 0] == pos[:, 1]).all(axis=-1).any()
    assert len(np.unique(np.asarray(states.agent_dir_idx))) == 4
    assert len(np.unique(np.asarray(states.agent_inv))) == 4
    assert len(np.unique(np.asarray(states.pot_tick))) > 5
    env, _, reset = kitchen(random_agent_positions=True)
    _, states = jax.vmap(reset)(jax.random.split(jax.random.key(0), 16))
    assert len({tuple(p) for p in np.asarray(states.agent_pos).reshape(-1, 2)}) > 2
    assert (np.asarray(states.agent_dir_idx) == N).all() and (
        np.asarray(states.agent_inv) == 0
    ).all()


def test_out_of_range_actions_are_stay():
    start = place(pos=((1, 2), (2, 1)), facing=(E, W), held=(ONION, EMPTY))
    stayed, _, _ = step(start, X, X)
    for action in (-1, -4, 6, 7, 2**31 - 1, -(2**31)):
        after, reward, shaped = step(start, action, action)
        for field in ("agent_pos", "agent_dir_idx", "agent_inv", "counter_items", "pot_onions"):
            np.testing.assert_array_equal(
                getattr(after, field), getattr(stayed, field), f"action {action}: {field}"
            )
        assert reward == 0.0 and shaped == [0.0, 0.0]


def test_random_reset_is_int32_under_x64():
    with jax.enable_x64(True):
        env = jaxmarl.make("overcooked", random_reset=True)
        key = jax.random.key(0)
        obs, state = jax.eval_shape(env.reset, key)
        actions = {agent: jnp.int32(0) for agent in env.agents}
        out = jax.eval_shape(env.step, key, state, actions)
    dtypes = {str(leaf.dtype) for leaf in jax.tree.leaves((obs, state, out))}
    assert dtypes <= {"int32", "float32", "bool"}, dtypes


def test_urgency_channel_in_last_40_steps():
    env, _, _ = kitchen()
    state = place().replace(step=jnp.int32(360))
    assert float(env.get_obs(state)["agent_0"][..., 25].min()) == 0.0
    assert float(env.get_obs(state.replace(step=jnp.int32(361)))["agent_0"][..., 25].min()) == 1.0


def test_custom_ascii_layout_and_jaxmarl_dict():
    text = """
        XXPXX
        O 1 D
        X 2 X
        XSXXX
        """
    env = jaxmarl.make("overcooked", layout=text)
    assert (env.height, env.width) == (4, 5)
    np.testing.assert_array_equal(env.layout.agent_pos, [[2, 1], [2, 2]])
    from_dict = jaxmarl.make("overcooked", layout=jaxmarl_dict())
    assert from_dict.layout.to_text() == kitchen()[0].layout.to_text()


@pytest.mark.parametrize(
    "layout, message",
    [
        ("kitchen", "unknown layout 'kitchen'; known layouts: asymm_advantages, coord_ring"),
        ("XXXXX\nO1 2O\nX   X\nXDXSX", "no pot"),
        ("XXPXX\nO1 2O\nX   X\nXDXXX", "no delivery (serving) spot"),
        ("XXPXX\nO1  O\nX   X\nXDXSX", "found 1 agent(s)"),
        ("XXPXX\nO1 2O\nX 3 X\nXDXSX", "row 2, column 2: unknown character '3'"),
        ("XXPXX\nO1 2O\nX  X\nXDXSX", "row 2 ('X  X') has 4 characters"),
        ("XXPXX\nO1 2 \nX   X\nXDXSX", "row 1, column 4 is floor on the border"),
    ],
)
def test_bad_layouts_fail_clearly(layout, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        jaxmarl.make("overcooked", layout=layout)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"layout": jaxmarl_dict(agent_idx=[6, 8, 7])},
            r"agent_idx has 3 entries \[6, 8, 7\], need exactly 2",
        ),
        ({"layout": jaxmarl_dict(agent_idx=[6])}, "agent_idx has 1 entries"),
        (
            {"layout": jaxmarl_dict(agent_idx=[6, 99])},
            r"agent_idx holds 99, outside the 4x5 grid \(flat indices 0..19",
        ),
        ({"layout": jaxmarl_dict(pot_idx=[-1])}, "pot_idx holds -1, outside the 4x5 grid"),
        ({"layout": jaxmarl_dict(goal_idx=[1.5])}, "goal_idx holds 1.5"),
        ({"layout": jaxmarl_dict(width="5")}, "width must be an int >= 3"),
        ({"layout": {"height": 4}}, "missing .*'width'"),
        (
            {"max_steps": "abc"},
            r"max_steps \(the episode length\) must be a positive int, got 'abc'",
        ),
        ({"max_steps": 0}, "must be a positive int, got 0"),
        ({"max_steps": 2.5}, "must be a positive int, got 2.5"),
        ({"max_steps": True}, "must be a positive int, got True"),
        ({"max_steps": float("nan")}, "must be a positive int, got nan"),
    ],
)
def test_bad_input_fails_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        jaxmarl.make("overcooked", **kwargs)


def test_register_layout_refuses_to_replace_a_name(monkeypatch):
    from jaxmarl.envs.overcooked import layouts

    monkeypatch.setattr(layouts, "overcooked_layouts", dict(layouts.overcooked_layouts))
    built_in = layouts.overcooked_layouts["cramped_room"]
    text = "XXPXX\nO 1 D\nX 2 X\nXSXXX"
    with pytest.raises(ValueError, match="'cramped_room' is already registered.*overwrite=True"):
        layouts.register_layout("cramped_room", text)
    assert layouts.overcooked_layouts["cramped_room"] == built_in
    layouts.register_layout("my_kitchen", text)
    assert jaxmarl.make("overcooked", layout="my_kitchen").layout.to_text() == text
    with pytest.raises(ValueError, match="'my_kitchen' is already registered"):
        layouts.register_layout("my_kitchen", built_in)
    layouts.register_layout("cramped_room", text, overwrite=True)
    assert jaxmarl.make("overcooked", layout="cramped_room").layout.to_text() == text
    with pytest.raises(ValueError, match="one-line string"):
        layouts.register_layout("two\nlines", text)


def test_render_frames_and_gif(tmp_path):
    from jaxmarl.envs.overcooked.render import render_frame, save_gif
    from jaxmarl.render import save_episode_gif

    env, _, _ = kitchen()
    state = place(pos=((2, 1), (3, 2)), facing=(N, E), held=(SOUP, ONION), pot=(3, 7))
    frame = render_frame(env, state, scale=1)
    assert frame.shape == (4 * 32, 5 * 32, 3) and frame.dtype == np.uint8
    # agent_0 (blue) at (2, 1) holds a soup; the pot's timer bar is drawn while cooking.
    assert (frame[32:64, 64:96] == (40, 90, 220)).all(axis=-1).any()
    assert (frame[0:32, 64:96] == (240, 150, 30)).all(axis=-1).any()
    assert not np.array_equal(frame, render_frame(env, place(), scale=1))
    states = jax.tree.map(lambda *xs: jnp.stack(xs), state, place())
    save_gif(env, states, tmp_path / "a.gif")
    save_episode_gif(env, states, tmp_path / "b.gif")
    assert (tmp_path / "a.gif").stat().st_size > 0 and (tmp_path / "b.gif").exists()
    with pytest.raises(ValueError, match="index the batch first"):
        render_frame(env, jax.tree.map(lambda x: jnp.stack([x, x, x]), states))
