"""Level edits for curriculum / UED methods on JaxNav (JaxMARL 0.2.0's ``jaxnav_ued_utils``).

ACCEL-style methods replay a level and then edit it a little. Here, as in JaxMARL, a level is
a JaxNav ``State`` (its ``map_data``, robots' starts and goals), and there are two edits:

* ``flip_wall``: a free cell that no robot's start footprint touches, that is not on the
  border and holds no goal becomes a wall (as in JaxMARL, walls are only added; with
  ``remove_walls=True`` an inner wall cell can also become free);
* ``move_goal``: one robot, drawn uniformly, gets its goal moved to the centre of a free cell
  that no start footprint touches and that is not on the border (another robot's goal cell
  may be drawn).

``make_level_mutator(max_num_edits, env.map_obj)`` gives ``mutate(key, state, n)``: ``n``
(at most ``max_num_edits``; may be traced) edits, each drawn uniformly from nothing, a wall
flip and a goal move. The random numbers are drawn as JaxMARL draws them, so the same key
gives JaxMARL's level. A mutated level may have no path from a start to its goal, as in
JaxMARL; curricula that score levels by regret leave such levels out. When no cell qualifies,
an edit leaves the level as it is.

    mutate = jax.jit(make_level_mutator(10, env.map_obj))
    level = mutate(key, state, 4)
    obs, state = env.set_state(level)
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .jaxnav_env import State
from .maps import GridMap

__all__ = ["NO_OP", "FLIP_WALL", "MOVE_GOAL", "flip_wall", "make_level_mutator", "move_goal"]

NO_OP, FLIP_WALL, MOVE_GOAL = 0, 1, 2  # JaxMARL's mutation codes


def _draw_cell(key: jax.Array, allowed: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A cell drawn uniformly among ``allowed`` ``[H, W]`` cells: ``(x, y)``, and whether any
    was allowed."""
    height, width = allowed.shape
    flat = allowed.ravel()
    index = jax.random.choice(key, np.arange(height * width), p=flat)
    return jnp.stack([index % width, index // width]), flat.any()


def _fixed_cells(grid: GridMap, state: State) -> jax.Array:
    """Cells no edit may change: the border and those the robots' start footprints touch."""
    return (grid.base_grid() == 1) | grid.footprint_cells(state.pos, state.theta)


def flip_wall(key: jax.Array, grid: GridMap, state: State, remove_walls: bool = False) -> State:
    """The level with one free cell turned into a wall (or, with ``remove_walls``, one inner
    wall turned free); cells with a goal or under a start footprint are kept."""
    walls = state.map_data
    goal_cells = jnp.floor(state.goal / grid.cell_size).astype(jnp.int32)
    kept = _fixed_cells(grid, state).at[goal_cells[:, 1], goal_cells[:, 0]].set(True)
    if not remove_walls:
        kept = kept | (walls == 1)
    (x, y), any_allowed = _draw_cell(key, ~kept)
    flipped = walls.at[y, x].set(1 - walls[y, x])
    return state.replace(map_data=jnp.where(any_allowed, flipped, walls))


def move_goal(key: jax.Array, grid: GridMap, state: State) -> State:
    """The level with one robot's goal moved to the centre of another free cell."""
    cell_key, robot_key = jax.random.split(key)
    robot = jax.random.choice(robot_key, np.arange(state.pos.shape[0]))
    walls = state.map_data == 1
    current = jnp.floor(state.goal[robot] / grid.cell_size).astype(jnp.int32)
    walls = walls.at[current[1], current[0]].set(False)
    (x, y), any_allowed = _draw_cell(cell_key, ~(_fixed_cells(grid, state) | walls))
    centre = (jnp.stack([x, y]).astype(jnp.float32) + 0.5) * grid.cell_size
    goals = state.goal.at[robot].set(centre)
    return state.replace(goal=jnp.where(any_allowed, goals, state.goal))


def make_level_mutator(
    max_num_edits: int, grid: GridMap, remove_walls: bool = False
) -> Callable[[jax.Array, State, int], State]:
    """``mutate(key, state, n)``: up to ``max_num_edits`` edits of the level, the first ``n``
    applied, each nothing, ``flip_wall`` or ``move_goal`` with equal chance."""
    if max_num_edits < 1:
        raise ValueError(f"max_num_edits must be at least 1, got {max_num_edits}")

    def mutate(key: jax.Array, state: State, n: int = 1) -> State:
        _, kind_key, *edit_keys = jax.random.split(key, max_num_edits + 2)
        kinds = jax.random.choice(kind_key, np.arange(3), (max_num_edits,))
        kinds = jnp.where(jnp.arange(max_num_edits) < n, kinds, -1)

        def edit(state, inputs):
            edit_key, kind = inputs
            _, wall_key, goal_key = jax.random.split(edit_key, 3)
            flipped = flip_wall(wall_key, grid, state, remove_walls)
            moved = move_goal(goal_key, grid, state)
            pick = lambda a, b, c: jnp.where(
                kind == FLIP_WALL, a, jnp.where(kind == MOVE_GOAL, b, c)
            )  # noqa: E731
            return jax.tree.map(pick, flipped, moved, state), None

        state, _ = jax.lax.scan(edit, state, (jnp.stack(edit_keys), kinds))
        return state

    return mutate
