"""OvercookedV2's rules, observations, view cropping, options and errors.

The rule tests share one env (a small kitchen with every fixture) and its one compiled
``step_env``; states are set up by hand with ``state.replace``. Actions: 0 right, 1 down,
2 left, 3 up, 4 stay, 5 interact; facings: 0 up, 1 down, 2 right, 3 left.
"""

from __future__ import annotations

import ast
import functools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.envs.overcooked.v2.layouts import Layout, overcooked_v2_layouts
from jaxmarl.envs.overcooked.v2.overcooked_v2 import COOKED, PLATE, ingredient, recipe_code
from jaxmarl.wrappers import LogWrapper

RIGHT, DOWN, LEFT, UP, STAY, INTERACT = range(6)
F_UP, F_DOWN, F_RIGHT, F_LEFT = range(4)
# Pot (2, 0), button indicator (4, 0), ingredient 0 pile (0, 1), delivery (5, 1),
# recipe indicator (5, 2), plate pile (1, 3), ingredient 1 pile (4, 3); (x, y) = (column, row).
KITCHEN = "WWPWLW\n0A A X\nW    R\nWBWW1W"
ASKED = recipe_code([0, 0, 1])  # 4 + 4 + 16
N = 2  # ingredients in KITCHEN
# Channel offsets of the observation (n = 2): own agent 0..8, others 9..17, fixtures 18..23
# (counter, delivery, pot, recipe indicator, button, plate pile), piles 24..25, items 26..29,
# recipe 30..33, pot timer 34.
OTHERS, FIXTURES, PILES, ITEMS, RECIPE, TIMER = 9, 18, 24, 26, 30, 34


@functools.cache
def kitchen_env():
    return jaxmarl.make("overcooked_v2", layout=KITCHEN, negative_rewards=True, max_steps=50)


@functools.cache
def compiled():
    env = kitchen_env()
    return jax.jit(env.reset), jax.jit(env.step_env), jax.jit(env.get_obs)


def setup(positions, facings, held=(0, 0), items=None, recipe=ASKED, extra=None):
    """A state of the kitchen with the agents at ``positions`` [(x, y)] and the given items."""
    reset, _, _ = compiled()
    _, state = reset(jax.random.key(0))
    xs, ys = zip(*positions)
    agents = state.agents.replace(
        pos=state.agents.pos.replace(x=jnp.array(xs, jnp.int32), y=jnp.array(ys, jnp.int32)),
        dir=jnp.array(facings, jnp.int32),
        inventory=jnp.array(held, jnp.int32),
    )
    grid = state.grid
    for (x, y), value in (items or {}).items():
        grid = grid.at[y, x, 1].set(value)
    for (x, y), value in (extra or {}).items():
        grid = grid.at[y, x, 2].set(value)
    return state.replace(agents=agents, grid=grid, recipe=jnp.int32(recipe))


def act(state, a0, a1=STAY):
    _, step_env, _ = compiled()
    actions = {"agent_0": jnp.int32(a0), "agent_1": jnp.int32(a1)}
    obs, state, rewards, dones, infos = step_env(jax.random.key(1), state, actions)
    shaped = [float(infos["shaped_reward"][a]) for a in ("agent_0", "agent_1")]
    return obs, state, [float(rewards[a]) for a in ("agent_0", "agent_1")], shaped


def cell(state, x, y):
    return [int(v) for v in state.grid[y, x]]


def test_cook_the_asked_soup_from_pile_to_delivery():
    # Pick ingredient 0 from its pile.
    _, s, rewards, shaped = act(setup([(1, 1), (3, 2)], [F_LEFT, F_UP]), INTERACT)
    assert int(s.agents.inventory[0]) == ingredient(0) == 4 and shaped == [0, 0]
    # Two 0s and a 1 into the pot: each is useful (3), the third starts cooking (timer 20,
    # already 19 after this step's tick).
    s = setup([(2, 1), (3, 2)], [F_UP, F_UP], held=(4, 0))
    _, s, _, shaped = act(s, INTERACT)
    assert cell(s, 2, 0) == [5, 4, 0] and shaped == [3, 0] and int(s.agents.inventory[0]) == 0
    _, s, _, shaped = act(s.replace(agents=s.agents.replace(inventory=jnp.array([4, 0]))), 5)
    assert cell(s, 2, 0) == [5, 8, 0] and shaped == [3, 0]
    _, s, _, shaped = act(s.replace(agents=s.agents.replace(inventory=jnp.array([16, 0]))), 5)
    assert cell(s, 2, 0) == [5, ASKED, 19] and shaped == [3, 0]
    # A fourth ingredient does not fit.
    _, s4, _, shaped = act(s.replace(agents=s.agents.replace(inventory=jnp.array([4, 0]))), 5)
    assert cell(s4, 2, 0) == [5, ASKED, 18] and int(s4.agents.inventory[0]) == 4
    # It cooks for 20 steps in all.
    for _ in range(18):
        _, s, _, _ = act(s, STAY)
    assert cell(s, 2, 0) == [5, ASKED, 1]
    _, s, _, _ = act(s, STAY)
    assert cell(s, 2, 0) == [5, ASKED | COOKED, 0]
    # Plate it (5 shaped for the asked soup), then deliver it: 20 to every agent.
    _, s, _, shaped = act(s.replace(agents=s.agents.replace(inventory=jnp.array([PLATE, 0]))), 5)
    dish = ASKED | COOKED | PLATE
    assert int(s.agents.inventory[0]) == dish and cell(s, 2, 0) == [5, 0, 0] and shaped == [5, 0]
    s = s.replace(agents=s.agents.replace(pos=s.agents.pos.replace(x=jnp.array([4, 3]))))
    s = s.replace(agents=s.agents.replace(dir=jnp.array([F_RIGHT, F_UP])))
    _, s, rewards, _ = act(s, INTERACT)
    assert rewards == [20.0, 20.0] and bool(s.new_correct_delivery)
    assert int(s.agents.inventory[0]) == 0


def test_wrong_soup_costs_with_negative_rewards_and_is_not_a_correct_delivery():
    wrong = recipe_code([0, 0, 0]) | COOKED | PLATE
    _, s, rewards, _ = act(setup([(4, 1), (3, 2)], [F_RIGHT, F_UP], held=(wrong, 0)), INTERACT)
    assert rewards == [-20.0, -20.0] and not bool(s.new_correct_delivery)
    assert int(s.agents.inventory[0]) == 0
    # Plating a wrong soup gives no shaped reward; a wrong ingredient in the pot neither.
    pot = {(2, 0): recipe_code([0, 0, 0]) | COOKED}
    _, s, _, shaped = act(setup([(2, 1), (3, 2)], [F_UP, F_UP], (PLATE, 0), pot), INTERACT)
    assert shaped == [0, 0] and int(s.agents.inventory[0]) == recipe_code([0, 0, 0]) | 3
    pot = {(2, 0): recipe_code([0, 0])}
    _, s, _, shaped = act(setup([(2, 1), (3, 2)], [F_UP, F_UP], (4, 0), pot), INTERACT)
    assert shaped == [0, 0] and cell(s, 2, 0) == [5, 12, 19]


def test_plate_pickup_is_rewarded_only_when_a_pot_needs_a_plate():
    plate_pile = ([(1, 2), (3, 2)], [F_DOWN, F_UP])
    _, s, _, shaped = act(setup(*plate_pile), INTERACT)
    assert int(s.agents.inventory[0]) == PLATE and shaped == [0, 0]  # every pot is empty
    busy = {(2, 0): 4}
    _, s, _, shaped = act(setup(*plate_pile, items=busy), INTERACT)
    assert shaped == [3, 0]
    _, s, _, shaped = act(setup(*plate_pile, held=(0, PLATE), items=busy), INTERACT)
    assert shaped == [0, 0]  # the other agent already holds a plate for the one busy pot
    _, s, _, shaped = act(setup(*plate_pile, items={**busy, (0, 2): PLATE}), INTERACT)
    assert shaped == [0, 0]  # a plate lies on a counter


def test_counters_take_and_give_back_any_item():
    s = setup([(1, 2), (3, 2)], [F_LEFT, F_UP], held=(16, 0))
    _, s, _, _ = act(s, INTERACT)
    assert cell(s, 0, 2) == [1, 16, 0] and int(s.agents.inventory[0]) == 0
    _, s, _, _ = act(s, INTERACT)
    assert cell(s, 0, 2) == [1, 0, 0] and int(s.agents.inventory[0]) == 16
    # Full hands cannot take from a pile or a full counter; nothing changes.
    s = setup([(1, 2), (3, 2)], [F_LEFT, F_UP], held=(4, 0), items={(0, 2): 16})
    _, s2, _, _ = act(s, INTERACT)
    assert cell(s2, 0, 2) == [1, 16, 0] and int(s2.agents.inventory[0]) == 4


def test_moves_turns_collisions_and_swaps():
    # A move into a fixture only turns the agent.
    _, s, _, _ = act(setup([(1, 1), (3, 2)], [F_DOWN, F_UP]), UP)
    assert (int(s.agents.pos.x[0]), int(s.agents.pos.y[0]), int(s.agents.dir[0])) == (1, 1, F_UP)
    # Both step onto the same cell: both stay, both turn.
    _, s, _, _ = act(setup([(1, 1), (3, 1)], [F_UP, F_UP]), RIGHT, LEFT)
    assert s.agents.pos.x.tolist() == [1, 3] and s.agents.dir.tolist() == [F_RIGHT, F_LEFT]
    # Swapping places is not allowed either.
    _, s, _, _ = act(setup([(1, 1), (2, 1)], [F_UP, F_UP]), RIGHT, LEFT)
    assert s.agents.pos.x.tolist() == [1, 2]
    # Following into a cell being vacated is allowed.
    _, s, _, _ = act(setup([(1, 1), (2, 1)], [F_UP, F_UP]), RIGHT, RIGHT)
    assert s.agents.pos.x.tolist() == [2, 3]
    # One blocked agent blocks the one moving into its cell.
    _, s, _, _ = act(setup([(1, 2), (1, 1)], [F_UP, F_UP]), UP, UP)
    assert s.agents.pos.y.tolist() == [2, 1]


def test_button_indicator_shows_the_recipe_for_a_while_at_a_cost():
    s = setup([(4, 1), (3, 2)], [F_UP, F_UP])
    _, _, get_obs = compiled()
    dark = get_obs(s)["agent_0"]
    assert dark[0, 4, RECIPE : RECIPE + 4].tolist() == [0, 0, 0, 0]
    # The recipe indicator always shows the recipe: no plate, not cooked, two 0s, one 1.
    assert dark[2, 5, RECIPE : RECIPE + 4].tolist() == [0, 0, 2, 1]
    obs, s, rewards, _ = act(s, INTERACT)
    assert rewards == [-5.0, -5.0] and cell(s, 4, 0) == [7, 0, 9]
    assert obs["agent_1"][0, 4, RECIPE : RECIPE + 4].tolist() == [0, 0, 2, 1]
    for _ in range(9):
        obs, s, _, _ = act(s, STAY)
    assert cell(s, 4, 0) == [7, 0, 0] and obs["agent_0"][0, 4, RECIPE + 2] == 0
    # Full hands do not light it.
    _, s, rewards, _ = act(setup([(4, 1), (3, 2)], [F_UP, F_UP], held=(4, 0)), INTERACT)
    assert rewards == [0.0, 0.0] and cell(s, 4, 0) == [7, 0, 0]


def test_observation_channels():
    s = setup([(1, 1), (3, 2)], [F_LEFT, F_DOWN], held=(0, PLATE), items={(0, 2): 16})
    s = s.replace(grid=s.grid.at[0, 2, 1].set(4).at[0, 2, 2].set(7))
    _, _, get_obs = compiled()
    obs = get_obs(s)
    mine, theirs = np.asarray(obs["agent_0"]), np.asarray(obs["agent_1"])
    assert mine.shape == (4, 6, 35) and mine.dtype == np.float32
    # Own agent: position, facing left, empty hands; the other: at (3, 2), facing down, plate.
    assert mine[1, 1, :9].tolist() == [1, 0, 0, 0, 1, 0, 0, 0, 0] and mine[..., 0].sum() == 1
    assert mine[2, 3, OTHERS : OTHERS + 9].tolist() == [1, 0, 1, 0, 0, 1, 0, 0, 0]
    np.testing.assert_array_equal(theirs[..., :9], mine[..., OTHERS : OTHERS + 9])
    np.testing.assert_array_equal(theirs[..., FIXTURES:], mine[..., FIXTURES:])
    assert mine[0, 2, FIXTURES + 2] == 1 and mine[1, 5, FIXTURES + 1] == 1  # pot, delivery
    assert mine[0, 4, FIXTURES + 4] == 1 and mine[3, 1, FIXTURES + 5] == 1  # button, plates
    assert mine[3, 4, PILES + 1] == 1 and mine[1, 0, PILES] == 1  # piles 1 and 0
    assert (
        mine[:, :, FIXTURES].sum()
        == (np.array([list(r) for r in KITCHEN.split("\n")]) == "W").sum()
    )
    assert mine[2, 0, ITEMS : ITEMS + 4].tolist() == [0, 0, 0, 1]  # ingredient 1 on a counter
    assert mine[0, 2, ITEMS : ITEMS + 4].tolist() == [0, 0, 1, 0] and mine[0, 2, TIMER] == 7


@functools.cache
def cropped_env(radius):
    env = jaxmarl.make("overcooked_v2", layout=KITCHEN, agent_view_size=radius)
    return env, jax.jit(env.get_obs)


@pytest.mark.parametrize("radius", [1, 3])
def test_view_is_the_square_around_the_agent_with_zeros_outside(radius):
    env, get_obs = cropped_env(radius)
    assert env.observation_space("agent_0").shape == (2 * radius + 1, 2 * radius + 1, 35)
    s = setup([(1, 1), (4, 2)], [F_LEFT, F_DOWN], held=(4, PLATE), items={(2, 0): 8})
    full = np.asarray(compiled()[2](s)["agent_0"])
    view = np.asarray(get_obs(s)["agent_0"])
    assert view.shape == (2 * radius + 1, 2 * radius + 1, 35)
    height, width = full.shape[:2]
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            y, x = 1 + dy, 1 + dx
            inside = 0 <= y < height and 0 <= x < width
            expected = full[y, x] if inside else np.zeros(35)
            np.testing.assert_array_equal(view[dy + radius, dx + radius], expected, (dx, dy))
    assert view[radius, radius, 0] == 1  # the agent is at the centre


def test_random_agent_positions_keep_each_agent_in_its_room():
    env = jaxmarl.make("overcooked_v2", layout="two_rooms", random_agent_positions=True)
    _, states = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), 64))
    x, y = np.asarray(states.agents.pos.x), np.asarray(states.agents.pos.y)
    static = env.layout.static_objects
    assert (static[y, x] == 0).all()  # on floor
    assert (x[:, 0] < 4).all() and (x[:, 1] > 4).all()  # the wall at column 4 splits the rooms
    assert len({(a, b) for a, b in zip(x[:, 0], y[:, 0])}) > 4  # and they do move around
    assert len(set(np.asarray(states.agents.dir).ravel().tolist())) == 4
    assert (np.asarray(states.grid[..., 1:]) == 0).all()  # no random items without random_reset


def test_log_wrapper_reports_returns_per_recipe():
    env = LogWrapper(kitchen_env())
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    _, state = reset(jax.random.key(0))
    names = sorted(state.returned_episode_group_returns)
    assert names == sorted("_".join(map(str, r)) for r in kitchen_env().layout.possible_recipes)
    dish = ASKED | COOKED | PLATE
    inner = setup([(4, 1), (3, 2)], [F_RIGHT, F_UP], held=(dish, 0))
    inner = inner.replace(step=jnp.int32(kitchen_env().max_steps - 1))
    state = state.replace(env_state=inner)
    stay = {"agent_0": jnp.int32(INTERACT), "agent_1": jnp.int32(STAY)}
    _, state, _, dones, infos = step(jax.random.key(1), state, stay)
    assert bool(dones["__all__"])
    per_recipe = infos["returned_episode_recipe_returns"]
    assert per_recipe["0_0_1"].tolist() == [20.0, 20.0]
    assert all(per_recipe[name].tolist() == [0.0, 0.0] for name in names if name != "0_0_1")


# ----------------------------------------------------------------- layouts and bad input
ISSUE_LAYOUTS = """cramped_room asymm_advantages coord_ring forced_coord counter_circuit
cramped_room_v2 asymm_advantages_recipes_center asymm_advantages_recipes_right
asymm_advantages_recipes_left two_rooms two_rooms_both long_room fun_coordination
more_fun_coordination fun_symmetries fun_symmetries_plates fun_symmetries1
grounded_coord_simple grounded_coord_ring test_time_simple test_time_wide demo_cook_simple
demo_cook_wide""".split()


def test_every_jaxmarl_layout_is_there_and_builds_with_matching_spaces():
    assert sorted(overcooked_v2_layouts) == sorted(ISSUE_LAYOUTS)
    for name in ISSUE_LAYOUTS:
        env = jaxmarl.make("overcooked_v2", layout=name, agent_view_size=2)
        # Tracing (no compile) is enough to check the emitted shapes and dtypes.
        keys = jax.ShapeDtypeStruct((3,), jax.random.key(0).dtype)
        obs, state = jax.eval_shape(jax.vmap(env.reset), keys)
        n = env.layout.num_ingredients
        for agent in env.agents:
            assert obs[agent].shape == (3, 5, 5, 25 + 5 * n), name
            assert obs[agent].dtype == env.observation_space(agent).dtype


# The contract suite runs cramped_room and grounded_coord_ring (view 2) in CI
# (tests/test_env_contract.py); every other layout runs here, nightly.
@pytest.mark.nightly
@pytest.mark.parametrize("name", ISSUE_LAYOUTS)
def test_every_layout_runs_under_jit_and_vmap(name):
    from jaxmarl.env import random_actions

    env = jaxmarl.make("overcooked_v2", layout=name, random_reset=True, agent_view_size=2)
    keys = jax.random.split(jax.random.key(0), 4)
    obs, state = jax.jit(jax.vmap(env.reset))(keys)
    step = jax.jit(jax.vmap(env.step))
    for t in range(4):  # the reset's observations, then those of 3 steps
        for agent in env.agents:
            space = env.observation_space(agent)
            assert obs[agent].shape == (4, *space.shape), (name, t)
            assert bool(jax.vmap(space.contains)(obs[agent]).all()), (name, t)
        action_keys = jax.random.split(jax.random.key(t + 1), 4)
        actions = jax.vmap(functools.partial(random_actions, env))(action_keys, state)
        if t < 3:
            obs, state, rewards, dones, infos = step(keys, state, actions)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"layout": "cramped"}, ValueError, "known layouts: asymm_advantages, .*cramped_room,"),
        ({"layout": "WWPWW\n0A AQ\nWBWXW"}, ValueError, r"row 2, column 5 .*unknown character 'Q'"),
        ({"layout": "WWPWW\n0A A0\nWBWX"}, ValueError, "row 3 of the layout has 4 characters"),
        ({"layout": "WWWWW\n0A AR\nWBWXW"}, ValueError, r"no pot: add a 'P'"),
        ({"layout": "WWPWW\n0A AR\nWBWWW"}, ValueError, r"no delivery spot: add a 'X'"),
        ({"layout": "WWPWW\n0   R\nWBWXW"}, ValueError, r"no agent: .* 'A'"),
        ({"layout": "WWPWW\n A AR\nWBWXW"}, ValueError, r"row 2, column 1 .*border"),
        ({"layout": "WWPWW\n0A A0\nWBWXW"}, ValueError, "no recipe indicator 'R'"),
        ({"agent_view_size": 5}, ValueError, r"agent_view_size=5 is larger than the 4x5 grid"),
        ({"agent_view_size": 0}, ValueError, "radius must be >= 1"),
        ({"agent_view_size": 1.5}, ValueError, "must be an int"),
        ({"max_steps": 0}, ValueError, "max_steps must be >= 1"),
        ({"observation_type": "featurized"}, NotImplementedError, "featurized"),
        ({"observation_type": "pixels"}, ValueError, "unknown observation_type 'pixels'"),
        ({"op_ingredient_permutations": [0, 3]}, ValueError, r"0\.\.0"),
        ({"agent_view": 2}, TypeError, "did you mean 'agent_view_size'"),
    ],
)
def test_bad_input_fails_at_construction_with_a_clear_message(kwargs, error, match):
    with pytest.raises(error, match=match):
        jaxmarl.make("overcooked_v2", **kwargs)


def test_bad_recipes_name_the_recipe():
    with pytest.raises(ValueError, match=r"recipe \[0, 2\] has 2 ingredients"):
        Layout.from_string("WWPWW\n0A A1\nWBWXW", possible_recipes=[[0, 2]])
    with pytest.raises(ValueError, match=r"recipe \[0, 0, 2\] uses an ingredient .* 0\.\.1"):
        Layout.from_string("WWPWW\n0A A1\nWBWXW", possible_recipes=[[0, 0, 2]])


def test_custom_ascii_layout_and_agent_order():
    layout = Layout.from_string("WWPWW\n0A AO\nWBWXW", possible_recipes=[[0, 0, 0]])
    assert layout.agent_positions == ((1, 1), (3, 1)) and layout.num_ingredients == 1
    swapped = Layout.from_string("WWPWW\n0A AO\nWBWXW", [[0, 0, 0]], swap_agents=True)
    assert swapped.agent_positions == ((3, 1), (1, 1))
    env = jaxmarl.make("overcooked_v2", layout=layout)
    assert env.num_agents == 2 and env.observation_space("agent_0").shape == (3, 5, 30)


def test_v2_modules_import_nothing_of_v1():
    """The v2 subpackage stands alone: it imports only itself from jaxmarl.envs.overcooked."""
    folder = pathlib.Path(jaxmarl.envs.overcooked.v2.__file__).parent
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                if name.startswith("jaxmarl.envs.overcooked"):
                    assert name.startswith("jaxmarl.envs.overcooked.v2"), (path.name, name)


def test_render_draws_agents_pots_timers_and_the_recipe(tmp_path):
    from jaxmarl.envs.overcooked.v2 import render

    env = kitchen_env()
    s = setup([(1, 1), (3, 2)], [F_LEFT, F_DOWN], held=(0, PLATE), items={(2, 0): 20})
    s = s.replace(grid=s.grid.at[0, 2, 2].set(10))  # half cooked
    frame = render.render_frame(env, s, scale=1)
    cell = 32
    assert frame.shape == (4 * cell, 6 * cell, 3) and frame.dtype == np.uint8

    def pixels(x, y):
        return frame[y * cell : (y + 1) * cell, x * cell : (x + 1) * cell].reshape(-1, 3)

    def has(x, y, colour):
        return bool((pixels(x, y) == np.array(colour, np.uint8)).all(axis=1).any())

    assert has(1, 1, render._AGENTS[0]) and has(3, 2, render._AGENTS[1])
    assert not has(2, 1, render._AGENTS[0])
    assert has(3, 2, render._PLATE)  # agent 1's plate
    assert has(2, 0, render._TIMER) and has(2, 0, render._INGREDIENTS[0])  # pot: 0 and 1 in it
    assert has(2, 0, render._INGREDIENTS[1]) and not has(2, 0, render._DONE)
    # The recipe indicator shows the recipe (0, 0, 1); the unlit button does not.
    assert has(5, 2, render._INGREDIENTS[0]) and has(5, 2, render._INGREDIENTS[1])
    assert not has(4, 0, render._INGREDIENTS[0])
    states = jax.tree.map(lambda *x: jnp.stack(x), s, act(s, INTERACT)[1])
    render.save_gif(env, states, tmp_path / "episode.gif")
    assert (tmp_path / "episode.gif").stat().st_size > 0


def test_reset_starts_from_the_layout_or_from_a_state_of_the_buffer():
    env = kitchen_env()
    reset, _, _ = compiled()
    _, s = reset(jax.random.key(5))
    assert s.agents.pos.x.tolist() == [1, 3] and s.agents.pos.y.tolist() == [1, 1]
    assert s.agents.dir.tolist() == [F_UP, F_UP] and s.agents.inventory.tolist() == [0, 0]
    codes = {recipe_code(r) for r in env.layout.possible_recipes}
    recipes = {int(reset(jax.random.key(k))[1].recipe) for k in range(12)}
    assert recipes <= codes and len(recipes) > 1
    # A buffer of two hand-made states: every reset is one of them, restarted at step 0.
    first = setup([(2, 2), (3, 1)], [F_DOWN, F_LEFT], held=(4, 0))
    second = setup([(1, 2), (4, 1)], [F_UP, F_RIGHT], held=(0, PLATE), items={(0, 2): 16})
    buffer = jax.tree.map(lambda a, b: jnp.stack([a, b]), first, second.replace(step=jnp.int32(7)))
    buffered = jaxmarl.make("overcooked_v2", layout=KITCHEN, initial_state_buffer=buffer)
    starts = [jax.jit(buffered.reset)(jax.random.key(k))[1] for k in range(8)]
    xs = {tuple(s.agents.pos.x.tolist()) for s in starts}
    assert xs == {(2, 3), (1, 4)} and all(int(s.step) == 0 for s in starts)
    with pytest.raises(ValueError, match="initial_state_buffer must be an OvercookedV2State"):
        jaxmarl.make("overcooked_v2", layout=KITCHEN, initial_state_buffer={"grid": 0})
