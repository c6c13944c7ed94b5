"""JaxNav level edits for curricula (``jaxmarl.environments.jaxnav.jaxnav_ued_utils``).

Against JaxMARL 0.2.0's, as ``make_ued_reference.py`` recorded them
(``data/jaxmarl_ued.npz``): the same key gives the same mutated level (walls and goals), for
1, 4 and 10 edits and for each edit alone.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.environments.jaxnav import jaxnav_ued_utils as ued

DATA = pathlib.Path(__file__).parent / "data" / "jaxmarl_ued.npz"


@pytest.fixture(scope="module")
def setup():
    env = jaxmarl.make("jaxnav")
    return env, dict(np.load(DATA))


def level(env, data, i):
    """JaxMARL's recorded level ``i`` as this env's state."""
    _, state = env.reset(jax.random.key(0))
    return state.replace(
        map_data=jnp.asarray(data[f"l{i}_map"], jnp.int32),
        pos=jnp.asarray(data[f"l{i}_pos"]),
        theta=jnp.asarray(data[f"l{i}_theta"]),
        goal=jnp.asarray(data[f"l{i}_goal"]),
    )


def test_mutations_match_jaxmarl(setup):
    env, data = setup
    mutate = jax.jit(ued.make_level_mutator(10, env.map_obj))
    flip = jax.jit(lambda k, s: ued.flip_wall(k, env.map_obj, s))
    move = jax.jit(lambda k, s: ued.move_goal(k, env.map_obj, s))
    changed = 0
    for i in range(4):
        state = level(env, data, i)
        for n in (1, 4, 10):
            new = mutate(jax.random.PRNGKey(100 + i), state, n)
            np.testing.assert_array_equal(new.map_data, data[f"l{i}_n{n}_map"], err_msg=f"{i} {n}")
            np.testing.assert_allclose(new.goal, data[f"l{i}_n{n}_goal"], err_msg=f"{i} {n}")
            changed += int((np.asarray(new.map_data) != data[f"l{i}_map"]).sum())
            changed += int((np.asarray(new.goal) != data[f"l{i}_goal"]).any())
        key = jax.random.PRNGKey(200 + i)
        np.testing.assert_array_equal(flip(key, state).map_data, data[f"l{i}_flip_map"])
        np.testing.assert_allclose(move(key, state).goal, data[f"l{i}_move_goal"])
    assert changed > 10  # the recorded edits do change walls and goals


def test_edits_keep_starts_border_and_goals_and_run_vmapped(setup):
    env, data = setup
    state = level(env, data, 0)
    keys = jax.random.split(jax.random.key(5), 64)
    flipped = jax.vmap(lambda k: ued.flip_wall(k, env.map_obj, state))(keys).map_data
    added = np.asarray(flipped) != np.asarray(state.map_data)[None]
    assert (added.sum(axis=(1, 2)) == 1).all()  # exactly one new wall each
    fixed = np.array(ued._fixed_cells(env.map_obj, state))
    goal_cells = np.floor(np.asarray(state.goal)).astype(int)
    fixed[goal_cells[:, 1], goal_cells[:, 0]] = True
    assert not (added & fixed[None]).any() and (np.asarray(flipped)[added] == 1).all()
    # remove_walls: inner walls can go too
    freed = jax.vmap(lambda k: ued.flip_wall(k, env.map_obj, state, remove_walls=True))(keys)
    assert (np.asarray(freed.map_data) < np.asarray(state.map_data)[None]).any()
    moved = jax.vmap(lambda k: ued.move_goal(k, env.map_obj, state))(keys).goal
    cells = np.floor(np.asarray(moved)).astype(int)
    assert not np.asarray(env.map_obj.footprint_cells(state.pos, state.theta))[
        cells[..., 1], cells[..., 0]
    ][np.asarray(moved != state.goal).any(-1)].any()
    # The level stays playable as data: the env observes it.
    mutate = jax.jit(ued.make_level_mutator(4, env.map_obj))
    obs, _ = env.set_state(mutate(jax.random.key(1), state, jnp.int32(4)))
    assert obs["agent_0"].shape == (205,)


def test_no_allowed_cell_leaves_the_level_as_it_is(setup):
    env, data = setup
    state = level(env, data, 0)
    full = state.replace(map_data=jnp.ones_like(state.map_data))
    assert (ued.flip_wall(jax.random.key(0), env.map_obj, full).map_data == 1).all()
    # Only a goal's own cell is left (as in JaxMARL, it counts as free): a moved goal goes to
    # the centre of its own cell.
    goal = np.asarray(ued.move_goal(jax.random.key(0), env.map_obj, full).goal)
    np.testing.assert_array_equal(np.floor(goal), np.floor(np.asarray(full.goal)))
    nothing = state.replace(map_data=jnp.ones_like(state.map_data), goal=state.pos)
    np.testing.assert_array_equal(
        ued.move_goal(jax.random.key(0), env.map_obj, nothing).goal, nothing.goal
    )
    with pytest.raises(ValueError, match="max_num_edits must be at least 1"):
        ued.make_level_mutator(0, env.map_obj)
