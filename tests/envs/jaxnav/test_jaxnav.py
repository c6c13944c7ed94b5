"""JaxNav: lidar against a NumPy ray caster, collisions, goals, limits, rewards, maps, errors.

Hand-built maps are 11 x 11 grids with a wall border (cells of 1 m; the point (x, y) is in
cell ``map[floor(y), floor(x)]``). Every hand-worked step uses the default env (square
robots of side 0.5 m, dt 0.1 s, goal radius 0.5 m, lambda 0.5) through one jitted
``step_env``.
"""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.envs.jaxnav.jaxnav_env import EnvInstance

SQUARE = np.array([[-0.25, -0.25], [-0.25, 0.25], [0.25, 0.25], [0.25, -0.25]])


def empty_map(size: int = 11) -> np.ndarray:
    grid = np.zeros((size, size), np.int32)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = 1
    return grid


@functools.cache
def env_and_step(**kwargs):
    """The env, its jitted ``step_env`` and ``get_obs``, once per configuration (``map_params``
    as a tuple of ``(key, value)`` pairs, to be hashable)."""
    if "map_params" in kwargs:
        kwargs["map_params"] = dict(kwargs["map_params"])
    env = jaxmarl.make("jaxnav", **kwargs)
    return env, jax.jit(env.step_env), jax.jit(env.get_obs)


def make_state(env, pos, theta, goal, grid, vel=None):
    instance = EnvInstance(
        agent_pos=jnp.asarray(pos, jnp.float32),
        agent_theta=jnp.asarray(theta, jnp.float32),
        goal_pos=jnp.asarray(goal, jnp.float32),
        map_data=jnp.asarray(grid, jnp.int32),
        rew_lambda=jnp.float32(0.5),
    )
    _, state = env.set_env_instance(instance)
    if vel is not None:
        state = state.replace(vel=jnp.asarray(vel, jnp.float32))
    return state


def act(env, commands):
    return {a: jnp.asarray(commands[i], jnp.float32) for i, a in enumerate(env.agents)}


# ---------------------------------------------------------------------- lidar
def numpy_ray_cast(pos, angle, grid, robots, max_range, cell=1.0, discs=(), rad=0.0):
    """Exact distance along a ray to the first wall cell (side ``cell``), other polygon robot
    (``robots``: vertices) or disc robot (``discs``: centres, radius ``rad``); float64."""
    d = np.array([np.cos(angle), np.sin(angle)])
    best = max_range
    for y, x in zip(*np.nonzero(grid)):
        t_low, t_high = 0.0, np.inf
        for axis, lo in ((0, x * cell), (1, y * cell)):
            if abs(d[axis]) < 1e-12:
                if not lo <= pos[axis] <= lo + cell:
                    t_low, t_high = 1.0, 0.0
                continue
            t1, t2 = sorted(((lo - pos[axis]) / d[axis], (lo + cell - pos[axis]) / d[axis]))
            t_low, t_high = max(t_low, t1), min(t_high, t2)
        if t_low <= t_high:
            best = min(best, t_low)
    for centre in discs:  # nearest root of |pos + t d - centre| = rad
        along = d @ (np.asarray(centre) - pos)
        gap = rad**2 - np.sum((np.asarray(centre) - pos) ** 2) + along**2
        if gap >= 0 and along - np.sqrt(gap) >= 0:
            best = min(best, along - np.sqrt(gap))
    for verts in robots:
        for a, b in zip(verts, np.roll(verts, -1, axis=0)):
            e = b - a
            den = d[0] * e[1] - d[1] * e[0]
            if abs(den) < 1e-12:
                continue
            w = a - pos
            t = (w[0] * e[1] - w[1] * e[0]) / den
            s = (w[0] * d[1] - w[1] * d[0]) / den
            if t >= 0 and 0 <= s <= 1:
                best = min(best, t)
    return best


def robot_vertices(pos, theta):
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    return SQUARE @ rot.T + pos


def assert_lidar_matches_ray_casting(env, get_obs, state, discs=False):
    """Every robot's lidar in ``state`` against ``numpy_ray_cast`` (ranges normalised)."""
    obs = get_obs(state)
    spacing = float(env.lidar_ranges[1] - env.lidar_ranges[0])
    pos, theta = np.asarray(state.pos, float), np.asarray(state.theta, float)
    grid, cell = np.asarray(state.map_data), env.map_obj.cell_size
    errors = []
    for i, agent in enumerate(env.agents):
        ranges = (np.asarray(obs[agent][: env.lidar_num_beams]) + 0.5) * env.lidar_max_range
        others = [j for j in range(len(pos)) if j != i]
        shapes = dict(discs=pos[others], rad=env.rad) if discs else {}
        polygons = [] if discs else [robot_vertices(pos[j], theta[j]) for j in others]
        for beam, angle in enumerate(np.asarray(env.lidar_angles, float) + theta[i]):
            true = numpy_ray_cast(
                pos[i], angle, grid, polygons, env.lidar_max_range, cell, **shapes
            )
            errors.append(ranges[beam] - true)
    errors = np.array(errors)
    # Walls read the first sample at or beyond the hit; robots read sample
    # floor(distance / 0.05) (JaxMARL's rule, up to one sample short): within one sample
    # spacing (0.0504 m) of the true range. A beam grazing a cell corner between two samples
    # reads farther, as in JaxMARL; allow a few such beams.
    assert errors.min() > -spacing, errors.min()
    assert np.mean(np.abs(errors) <= spacing + 1e-4) > 0.97, np.sort(errors)[-10:]
    return errors


@pytest.mark.parametrize(
    "walls, pos, theta",
    [
        ([], [[5.5, 5.5], [8.2, 5.3]], [0.0, 0.7]),
        ([(5, 7), (6, 7), (3, 3), (8, 2)], [[5.3, 4.6], [2.4, 7.7]], [1.1, -2.0]),
        ([(y, 5) for y in range(2, 9)], [[3.7, 5.2], [7.1, 6.4]], [-0.3, 3.0]),
    ],
)
def test_lidar_matches_numpy_ray_casting(walls, pos, theta):
    env, _, get_obs = env_and_step()
    grid = empty_map()
    for y, x in walls:
        grid[y, x] = 1
    state = make_state(env, pos, theta, [[9.5, 9.5], [1.5, 1.5]], grid)
    assert_lidar_matches_ray_casting(env, get_obs, state)


def test_a_beam_along_a_cell_edge_from_an_edge_sees_the_wall():
    # Heading float32(pi) puts beam 0 (at -pi) exactly along +x, and the robot stands on the
    # horizontal edge y = 5: the grid traversal once read no wall there (0 * inf = NaN).
    env, _, get_obs = env_and_step()
    state = make_state(
        env, [[5.0, 5.0], [2.5, 8.5]], [np.pi, 0.0], [[9.5, 9.5], [1.5, 1.5]], empty_map()
    )
    beam = env.lidar_angles[0] + np.float32(np.pi)
    assert beam == 0.0
    reading = (float(get_obs(state)["agent_0"][0]) + 0.5) * env.lidar_max_range
    true = numpy_ray_cast(np.array([5.0, 5.0]), 0.0, np.asarray(state.map_data), [], 6.0)
    assert true == pytest.approx(5.0) and 0 <= reading - true <= 0.0504


@pytest.mark.nightly  # a separate env configuration to compile
def test_lidar_sees_nothing_beyond_max_range():
    env, _, get_obs = env_and_step(lidar_max_range=2.0)
    grid = empty_map()
    state = make_state(env, [[5.5, 5.5], [5.5, 2.0]], [0.0, 0.0], [[9, 9], [2, 2]], grid)
    ranges = np.asarray(get_obs(state)["agent_0"][: env.lidar_num_beams]) + 0.5
    ranges *= env.lidar_max_range
    # Facing +x from the centre: walls 4.5 m away, beyond the 2 m range.
    forward = np.argmin(np.abs(np.asarray(env.lidar_angles)))
    assert ranges[forward] == pytest.approx(2.0)
    # The other robot is 3.5 m away straight down (-pi/2), also beyond range.
    assert ranges.max() == pytest.approx(2.0)


# ---------------------------------------------------------------------- disc robots
def disc_env(cell):
    """``Grid-Rand`` (disc robots, rad 0.3 m) on 1 m cells (11 x 11) or ``cell`` m cells
    (30 x 30), where a disc reaches two cells beyond its own."""
    if cell == 1.0:
        return env_and_step(map_id="Grid-Rand")
    params = (("map_size", (30, 30)), ("cell_size", cell))
    return env_and_step(map_id="Grid-Rand", map_params=params)


@pytest.mark.parametrize("cell", [1.0, 0.15])
def test_disc_robots_collide_within_rad_of_a_wall_cell_or_each_other(cell):
    # JaxMARL's Grid-Rand crashed in step (no disc collision); a disc touches a wall cell when
    # the cell's nearest point is within rad, and another disc when the centres are within
    # 2 rad. Robots stand still, so each state is checked where it is built.
    env, step, _ = disc_env(cell)
    grid = empty_map(env.map_obj.width)
    grid[round(3 / cell), round(3 / cell)] = 1  # one wall cell, [3, 3 + cell]^2 in metres
    top, mid = 3 + cell, 3 + cell / 2
    still = act(env, [[0.0, 0.0], [0.0, 0.0]])

    def hits(pos):
        state = make_state(env, pos, [0.0, 0.0], [[2.0, 4.0], [4.0, 2.0]], grid)
        _, s1, _, _, infos = step(jax.random.key(0), state, still)
        np.testing.assert_allclose(s1.pos, pos, atol=1e-6)
        return np.asarray(infos["MapC"]).tolist(), np.asarray(infos["AgentC"]).tolist()

    # Faces: 0.28 m from the cell touches, 0.32 m is clear (left and right of the cell).
    assert hits([[3 - 0.28, mid], [top + 0.32, mid]]) == ([1, 0], [0, 0])
    assert hits([[3 - 0.32, mid], [top + 0.28, mid]]) == ([0, 1], [0, 0])
    # Corners: 0.2 m off along both axes is 0.283 m from the corner and touches; 0.25 m
    # along both is 0.354 m and clear, although the disc's bounding box overlaps the cell.
    assert hits([[3 - 0.2, 3 - 0.2], [top + 0.25, top + 0.25]]) == ([1, 0], [0, 0])
    assert hits([[3 - 0.25, 3 - 0.25], [top + 0.2, top + 0.2]]) == ([0, 1], [0, 0])
    # Two discs 0.55 m apart overlap (squares of side 0.5 would not); 0.65 m apart along the
    # diagonal they are clear (squares would overlap).
    assert hits([[1.5, 1.5], [2.05, 1.5]]) == ([0, 0], [1, 1])
    apart = 1.5 + 0.65 / np.sqrt(2)
    assert hits([[1.5, 1.5], [apart, apart]]) == ([0, 0], [0, 0])


def test_disc_lidar_on_small_cells_matches_numpy_ray_casting():
    env, _, get_obs = disc_env(0.15)
    grid = empty_map(30)
    grid[8:12, 18] = 1  # a vertical wall
    grid[20, 6:14] = 1  # a horizontal wall
    grid[24, 8] = 1  # a single 0.15 m cell
    for k in range(5):  # a staircase of cells touching at corners
        grid[22 + k, 20 + k] = 1
    # The robots are 0.9 m apart: each sees the other's disc over about 40 degrees.
    pos = [[1.6, 2.3], [2.5, 2.3]]
    state = make_state(env, pos, [0.4, -2.2], [[4.0, 4.0], [0.5, 0.5]], grid)
    assert_lidar_matches_ray_casting(env, get_obs, state, discs=True)


# ---------------------------------------------------------------------- dynamics
def test_velocity_and_acceleration_limits():
    env, step, _ = env_and_step()
    grid = empty_map()
    state = make_state(env, [[3.5, 3.5], [7.5, 7.5]], [0.0, 0.0], [[9, 3], [2, 9]], grid)
    # From rest, a full command is limited by the accelerations: 1 m/s^2 * 0.1 s.
    _, s1, *_ = step(jax.random.key(0), state, act(env, [[1.0, 0.5], [1.0, -0.5]]))
    np.testing.assert_allclose(s1.vel, [[0.1, 0.1], [0.1, -0.1]], atol=1e-6)
    np.testing.assert_allclose(s1.pos[0], [3.5 + 0.01, 3.5], atol=1e-6)  # v dt along heading
    np.testing.assert_allclose(s1.theta, [0.01, -0.01], atol=1e-6)  # w dt
    # At speed, velocities are clipped to max_v = 1 and max_w = 0.6.
    fast = state.replace(vel=jnp.array([[1.0, 0.6], [0.95, 0.55]]))
    _, s2, *_ = step(jax.random.key(0), fast, act(env, [[1.0, 0.5], [1.0, 0.5]]))
    np.testing.assert_allclose(s2.vel, [[1.0, 0.5], [1.0, 0.5]], atol=1e-6)
    # Braking is limited too: from 1 m/s toward 0 loses 0.1 m/s per step.
    _, s3, *_ = step(jax.random.key(0), fast, act(env, [[0.0, -0.5], [0.0, 0.0]]))
    np.testing.assert_allclose(s3.vel[0], [0.9, 0.5], atol=1e-6)


def test_wall_collision_stops_robot_and_pays_collision_reward():
    env, step, _ = env_and_step()
    grid = empty_map()
    grid[5, 6] = 1  # wall cell spanning x in [6, 7]
    # Robot 0 faces the wall, its front edge at 5.93 m; at 1 m/s it moves 0.1 m into it.
    state = make_state(
        env, [[5.68, 5.5], [2.5, 8.5]], [0.0, 0.0], [[9.5, 2.5], [2.5, 2.5]], grid, [[1, 0], [0, 0]]
    )
    _, s1, rewards, dones, infos = step(
        jax.random.key(0), state, act(env, [[1.0, 0.0], [0.0, 0.0]])
    )
    assert bool(s1.move_term[0]) and not bool(s1.move_term[1])
    np.testing.assert_array_equal(infos["MapC"], [1, 0])
    np.testing.assert_array_equal(infos["AgentC"], [0, 0])
    # Robot 0: progress 0.25 * (|p - g| before - after) + collision -4 + time -0.01 + lidar
    # proximity -0.1 (the wall is now within rad + 0.1 = 0.4 m).
    goal = np.array([9.5, 2.5])
    progress = 0.25 * (np.linalg.norm([5.68, 5.5] - goal) - np.linalg.norm([5.78, 5.5] - goal))
    own0 = progress - 4.0 - 0.01 - 0.1
    own1 = -0.01  # standing still far from everything: time penalty only
    team = (own0 + own1) / 2
    np.testing.assert_allclose(rewards["agent_0"], 0.5 * own0 + 0.5 * team, atol=1e-5)
    np.testing.assert_allclose(rewards["agent_1"], 0.5 * own1 + 0.5 * team, atol=1e-5)
    # A crashed robot is frozen (without evaporating) and is not penalised again.
    _, s2, rewards2, _, infos2 = step(jax.random.key(1), s1, act(env, [[1.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_allclose(s2.pos[0], s1.pos[0])
    np.testing.assert_array_equal(infos2["MapC"], [0, 0])
    assert not bool(dones["__all__"])


def test_robots_collide_with_each_other():
    env, step, _ = env_and_step()
    grid = empty_map()
    # Facing each other 0.65 m apart at 1 m/s: after one step their squares overlap.
    state = make_state(
        env, [[5.175, 5.5], [5.825, 5.5]], [0.0, np.pi - 1e-3], [[2, 2], [9, 9]], grid,
        [[1, 0], [1, 0]],
    )  # fmt: skip
    _, s1, _, dones, infos = step(jax.random.key(0), state, act(env, [[1.0, 0.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(infos["AgentC"], [1, 1])
    np.testing.assert_array_equal(infos["MapC"], [0, 0])
    # Both crashed: the episode ends, terminated (not by the time limit).
    assert bool(dones["__all__"]) and bool(infos["terminated"])
    assert float(infos["collision_rate"]) == 1.0 and float(infos["success_rate"]) == 0.0
    # Just apart (0.8 m, moving 0.1 m each: 0.6 m > 0.5 m) they do not collide.
    apart = state.replace(pos=jnp.array([[5.1, 5.5], [5.9, 5.5]]))
    _, _, _, _, infos = step(jax.random.key(0), apart, act(env, [[1.0, 0.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(infos["AgentC"], [0, 0])


def test_goal_reached_reward_and_metrics():
    env, step, _ = env_and_step()
    grid = empty_map()
    # Robot 0 is 0.55 m from its goal, facing it at 1 m/s: after 0.1 m it is within 0.5 m.
    state = make_state(
        env, [[3.0, 3.0], [8.5, 8.5]], [0.0, 0.0], [[3.55, 3.0], [8.5, 2.0]], grid, [[1, 0], [0, 0]]
    )
    _, s1, rewards, dones, infos = step(
        jax.random.key(0), state, act(env, [[1.0, 0.0], [0.0, 0.0]])
    )
    assert bool(s1.goal_reached[0]) and not bool(s1.goal_reached[1])
    np.testing.assert_array_equal(infos["GoalR"], [1, 0])
    own0, own1 = 4.0 - 0.01, -0.01  # goal reward replaces progress; time penalty
    team = (own0 + own1) / 2  # 1.99
    np.testing.assert_allclose(rewards["agent_0"], 0.5 * own0 + 0.5 * team, atol=1e-5)  # 2.99
    np.testing.assert_allclose(rewards["agent_1"], 0.5 * own1 + 0.5 * team, atol=1e-5)  # 0.99
    assert not bool(dones["__all__"])  # robot 1 is still driving
    # A robot at its goal keeps driving (no evaporation) and is not paid again; it pays no
    # time penalty either.
    _, s2, rewards2, _, infos2 = step(jax.random.key(1), s1, act(env, [[0.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(infos2["GoalR"], [0, 0])
    np.testing.assert_allclose(rewards2["agent_0"], 0.5 * 0.0 + 0.5 * (0.0 - 0.01) / 2, atol=1e-5)


def test_progress_and_lidar_proximity_terms():
    env, step, _ = env_and_step()
    grid = empty_map()
    # Robot 0 drives 0.1 m straight at a far goal: progress 0.25 * 0.1. Robot 1 sits 0.35 m
    # from the top wall (y = 10): a reading within 0.4 m costs 0.1 every step.
    state = make_state(
        env, [[2.0, 5.0], [5.0, 9.65]], [0.0, 0.0], [[9.0, 5.0], [5.0, 2.0]], grid, [[1, 0], [0, 0]]
    )
    _, _, rewards, _, _ = step(jax.random.key(0), state, act(env, [[1.0, 0.0], [0.0, 0.0]]))
    own0 = 0.25 * 0.1 - 0.01
    own1 = -0.01 - 0.1
    team = (own0 + own1) / 2
    np.testing.assert_allclose(rewards["agent_0"], 0.5 * own0 + 0.5 * team, atol=1e-5)
    np.testing.assert_allclose(rewards["agent_1"], 0.5 * own1 + 0.5 * team, atol=1e-5)


def test_timeout_truncates_with_timeout_info():
    env, step, _ = env_and_step()
    grid = empty_map()
    state = make_state(env, [[3.0, 3.0], [8.0, 8.0]], [0.0, 0.0], [[8, 3], [3, 8]], grid)
    state = state.replace(step=jnp.int32(env.max_steps - 1))
    still = act(env, [[0.0, 0.0], [0.0, 0.0]])
    _, state, _, dones, infos = step(jax.random.key(0), state, still)
    assert bool(dones["__all__"]) and not bool(infos["terminated"])
    np.testing.assert_array_equal(infos["TimeO"], [True, True])
    assert float(infos["timeout_rate"]) == 1.0


# The non-default options share one configuration, so CI compiles it once for all four tests.
OPTIONS = dict(
    act_type="Discrete",
    evaporating=True,
    normalise_obs=False,
    fixed_lambda=False,
    lambda_range=(0.2, 0.3),
)
FORWARD, STILL = 12, 2  # DISCRETE_ACTS rows (1.0 m/s, 0 rad/s) and (0, 0)


def test_evaporating_robot_leaves_the_map():
    env, step, _ = env_and_step(**OPTIONS)
    grid = empty_map()
    state = make_state(
        env, [[3.0, 3.0], [8.5, 8.5]], [0.0, 0.0], [[3.55, 3.0], [8.5, 2.0]], grid, [[1, 0], [0, 0]]
    )
    moves = {"agent_0": jnp.int32(FORWARD), "agent_1": jnp.int32(STILL)}
    _, s1, _, dones, _ = step(jax.random.key(0), state, moves)
    assert bool(dones["agent_0"]) and not bool(dones["agent_1"]) and not bool(dones["__all__"])
    _, s2, rewards, _, _ = step(jax.random.key(1), s1, moves)
    np.testing.assert_allclose(s2.pos[0], [0.0, 0.0])  # JaxMARL parks finished robots at 0
    assert float(rewards["agent_0"]) == pytest.approx(0.5 * 0.0 + 0.5 * (-0.01) / 2)


def test_discrete_actions_map_to_velocity_commands():
    env, step, _ = env_and_step(**OPTIONS)
    grid = empty_map()
    state = make_state(env, [[3.0, 3.0], [8.0, 8.0]], [0.0, 0.0], [[8, 3], [3, 8]], grid)
    actions = {"agent_0": jnp.int32(10), "agent_1": jnp.int32(4)}  # (1, 0.5) and (0, -0.5)
    _, s1, *_ = step(jax.random.key(0), state, actions)
    np.testing.assert_allclose(s1.vel, [[0.1, 0.1], [0.0, -0.1]], atol=1e-6)


def test_unnormalised_observations():
    env, _, get_obs = env_and_step(**OPTIONS)
    grid = empty_map()
    state = make_state(
        env, [[3.0, 3.0], [8.0, 8.0]], [0.0, 0.0], [[3.0, 5.0], [3, 8]], grid, [[0.5, 0.2], [0, 0]]
    )
    obs = np.asarray(get_obs(state)["agent_0"])
    np.testing.assert_allclose(obs[-5:], [0.5, 0.2, 2.0, np.pi / 2, 0.5], atol=1e-6)
    # Facing +x from x = 3: the wall at x = 10 is 7 m away, beyond the 6 m range.
    forward = np.argmin(np.abs(np.asarray(env.lidar_angles)))
    assert obs[forward] == pytest.approx(6.0)


def test_sampled_lambda_weights_the_reward():
    env, step, _ = env_and_step(**OPTIONS)
    lambdas = jax.jit(jax.vmap(lambda k: env.reset(k)[1].rew_lambda))(
        jax.random.split(jax.random.key(3), 64)
    )
    assert float(lambdas.min()) >= 0.2 and float(lambdas.max()) <= 0.3
    assert float(lambdas.max() - lambdas.min()) > 0.05  # drawn per episode, not fixed
    grid = empty_map()
    state = make_state(env, [[3.0, 3.0], [8.0, 8.0]], [0.0, 0.0], [[8, 3], [3, 8]], grid)
    state = state.replace(rew_lambda=jnp.float32(0.25), vel=jnp.array([[1.0, 0], [0, 0]]))
    moves = {"agent_0": jnp.int32(FORWARD), "agent_1": jnp.int32(STILL)}
    _, _, rewards, _, _ = step(jax.random.key(0), state, moves)
    own0, own1 = 0.25 * 0.1 - 0.01, -0.01
    team = (own0 + own1) / 2
    np.testing.assert_allclose(rewards["agent_0"], 0.25 * own0 + 0.75 * team, atol=1e-5)


def test_share_only_sparse_shares_the_sparse_terms_only():
    env, step, _ = env_and_step(share_only_sparse=True)
    grid = empty_map()
    # Robot 0 reaches its goal (as in test_goal_reached_reward_and_metrics). Robot 1 drives
    # 0.1 m toward a far goal 0.35 m below the top wall: progress and lidar proximity
    # (dense) plus the time penalty (sparse).
    state = make_state(
        env, [[3.0, 3.0], [5.0, 9.65]], [0.0, 0.0], [[3.55, 3.0], [8.0, 9.65]], grid,
        [[1, 0], [1, 0]],
    )  # fmt: skip
    _, _, rewards, _, infos = step(jax.random.key(0), state, act(env, [[1.0, 0.0], [1.0, 0.0]]))
    own0 = 4.0 - 0.01  # goal reward and time penalty: all sparse
    own1 = 0.25 * 0.1 - 0.01 - 0.1
    sparse_team = (own0 + -0.01) / 2  # the mean of the sparse parts only
    np.testing.assert_allclose(rewards["agent_0"], 0.5 * own0 + 0.5 * sparse_team, atol=1e-5)
    np.testing.assert_allclose(rewards["agent_1"], 0.5 * own1 + 0.5 * sparse_team, atol=1e-5)


def own_rewards(rewards, lam=0.5):
    """Each robot's reward before team mixing: ``r = lam own + (1 - lam) mean(own)`` and
    ``mean(r) = mean(own)``."""
    r = np.array(list(rewards.values()), float)
    return (r - (1 - lam) * r.mean()) / lam


def test_turn_penalty_applies_above_lim_w_only():
    env, step, _ = env_and_step(weight_w=-0.2, lim_w=0.3)
    grid = empty_map()
    state = make_state(env, [[3.0, 3.0], [8.0, 8.0]], [0.0, 0.0], [[8, 3], [3, 8]], grid)
    # Standing still (v = 0) far from walls, goals and each other: robot 0 commands
    # |w| = 0.5 > lim_w (turning clockwise), robot 1 |w| = 0.25 < lim_w.
    _, _, turning, *_ = step(jax.random.key(0), state, act(env, [[0.0, -0.5], [0.0, 0.25]]))
    _, _, straight, *_ = step(jax.random.key(0), state, act(env, [[0.0, 0.0], [0.0, 0.0]]))
    own0, own1 = -0.2 * 0.5 - 0.01, -0.01  # weight_w |w| on top of the time penalty
    team = (own0 + own1) / 2
    np.testing.assert_allclose(turning["agent_0"], 0.5 * own0 + 0.5 * team, atol=1e-6)
    np.testing.assert_allclose(turning["agent_1"], 0.5 * own1 + 0.5 * team, atol=1e-6)
    np.testing.assert_allclose(straight["agent_0"], -0.01, atol=1e-6)
    # The individual rewards differ by weight_w |w| where |w| > lim_w, and not otherwise.
    np.testing.assert_allclose(own_rewards(turning) - own_rewards(straight), [-0.1, 0], atol=1e-6)


_INFO_KEYS = {"NumC", "GoalR", "AgentC", "MapC", "TimeO", "Return", "agent_terminated"} | {
    "terminated", "success_rate", "collision_rate", "timeout_rate"
}  # fmt: skip


def test_infos_without_info_by_agent_sum_the_per_robot_counters():
    env, step_by_agent, _ = env_and_step()
    _, step_summed, _ = env_and_step(info_by_agent=False)
    grid = empty_map()
    grid[5, 6] = 1  # wall cell spanning x in [6, 7]
    # Robot 0 reaches its goal (as in test_goal_reached_reward_and_metrics); robot 1 drives
    # into the wall cell (as in test_wall_collision_stops_robot_and_pays_collision_reward).
    state = make_state(
        env, [[3.0, 3.0], [5.68, 5.5]], [0.0, 0.0], [[3.55, 3.0], [9.5, 5.5]], grid,
        [[1, 0], [1, 0]],
    )  # fmt: skip
    forward = act(env, [[1.0, 0.0], [1.0, 0.0]])
    key = jax.random.key(0)
    _, s1, rewards, _, by_agent = step_by_agent(key, state, forward)
    _, s1_summed, rewards_summed, _, summed = step_summed(key, state, forward)
    assert set(summed) == set(by_agent) == _INFO_KEYS
    for name in ("NumC", "GoalR", "AgentC", "MapC", "TimeO"):
        assert summed[name].shape == () and summed[name].dtype == jnp.int32, name
    assert summed["Return"].shape == () and summed["Return"].dtype == jnp.float32
    # Per robot: robot 0 at its goal, robot 1 into the wall; both done, so the episode ends.
    np.testing.assert_array_equal(by_agent["GoalR"], [1, 0])
    np.testing.assert_array_equal(by_agent["MapC"], [0, 1])
    np.testing.assert_array_equal(by_agent["NumC"], [1, 1])
    np.testing.assert_array_equal(by_agent["agent_terminated"], [False, False])
    counts = {"NumC": 2, "GoalR": 1, "AgentC": 0, "MapC": 1, "TimeO": 0}
    assert {name: int(summed[name]) for name in counts} == counts
    assert_summed_infos(env, by_agent, summed)
    # Return: the mean individual reward (JaxMARL's), i.e. the mean of the per-robot returns.
    progress1 = 0.25 * 0.1  # robot 1 drives 0.1 m straight at its goal
    own = [4.0 - 0.01, progress1 - 4.0 - 0.01 - 0.1]  # goal; collision, time, lidar proximity
    np.testing.assert_allclose(summed["Return"], np.mean(own), atol=1e-5)
    np.testing.assert_allclose(summed["Return"], np.mean(by_agent["Return"]), atol=1e-6)
    # Everything else is the same step: states, rewards and the per-env infos.
    for a, b in zip(jax.tree.leaves(s1), jax.tree.leaves(s1_summed)):
        np.testing.assert_array_equal(a, b)
    assert rewards == rewards_summed
    for name in ("terminated", "success_rate", "collision_rate", "timeout_rate"):
        assert summed[name].shape == () and summed[name] == by_agent[name], name
    assert bool(summed["terminated"]) and float(summed["success_rate"]) == 0.5
    # A step after the episode's end: every robot's action was void.
    _, _, _, _, by_agent = step_by_agent(key, s1, forward)
    _, _, _, _, summed = step_summed(key, s1, forward)
    np.testing.assert_array_equal(by_agent["agent_terminated"], [True, True])
    assert_summed_infos(env, by_agent, summed)


def assert_summed_infos(env, by_agent, summed):
    """``info_by_agent=False`` infos: the per-robot counters summed, ``agent_terminated`` a
    dict of the per-robot flags."""
    for name in ("NumC", "GoalR", "AgentC", "MapC", "TimeO"):
        assert int(summed[name]) == int(np.sum(by_agent[name])), name
    flags = {a: bool(v) for a, v in summed["agent_terminated"].items()}
    assert flags == dict(zip(env.agents, np.asarray(by_agent["agent_terminated"]).tolist()))


def test_no_64_bit_values_or_promotion_warnings_under_x64():
    # Traced with jax.eval_shape: nothing is compiled.
    with jax.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # e.g. a float64 -> float32 scatter
        for by_agent in (True, False):
            env = jaxmarl.make("jaxnav", info_by_agent=by_agent, lidar_num_beams=8)
            key = jax.random.key(0)
            _, state = jax.eval_shape(env.reset, key)
            actions = {a: jnp.zeros((2,), jnp.float32) for a in env.agents}
            out = jax.eval_shape(env.step, key, state, actions)
            wide = [
                (jax.tree_util.keystr(path), leaf.dtype)
                for path, leaf in jax.tree_util.tree_leaves_with_path((state, out))
                if str(leaf.dtype) in ("int64", "uint64", "float64")
            ]
            assert not wide, (by_agent, wide)


# ---------------------------------------------------------------------- maps
def test_outside_the_grid_is_a_wall_for_collisions_and_lidar():
    env, step, get_obs = env_and_step()
    grid = np.zeros((11, 11), np.int32)  # no wall border
    # Robot 0 faces the grid's right edge (x = 11) from 0.32 m away at 1 m/s: after 0.1 m its
    # front edge is past it.
    state = make_state(
        env, [[10.68, 5.5], [5.5, 5.5]], [0.0, 0.0], [[1.5, 1.5], [2.5, 2.5]], grid,
        [[1, 0], [0, 0]],
    )  # fmt: skip
    forward = np.argmin(np.abs(np.asarray(env.lidar_angles)))
    reading = (float(get_obs(state)["agent_0"][forward]) + 0.5) * env.lidar_max_range
    spacing = float(env.lidar_ranges[1] - env.lidar_ranges[0])
    assert 0.32 <= reading < 0.32 + spacing  # the lidar sees the edge as a wall ...
    _, s1, _, _, infos = step(jax.random.key(0), state, act(env, [[1.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(infos["MapC"], [1, 0])  # ... and so do collisions
    assert bool(s1.move_term[0])


def _reset_checks(env, key=0):
    obs, state = jax.jit(env.reset)(jax.random.key(key))
    grid = np.asarray(state.map_data)
    pos, goal = np.asarray(state.pos), np.asarray(state.goal)
    assert all(o.shape == (env.obs_size,) for o in obs.values())
    # Starts and goals lie on free cells, inside the map.
    for p in np.concatenate([pos, goal]):
        cell = np.floor(p / env.map_obj.cell_size).astype(int)
        assert grid[cell[1], cell[0]] == 0
    return state


def test_a_failed_case_is_drawn_again_on_the_same_map():
    # JaxMARL redraws only the start/goal pair, so resets keep the map generator's distribution;
    # redrawing the map too would skew it towards sparse maps (a case fails more often on a
    # dense one). The first draw of sample_scenario is reproduced here from its key.
    m = jaxmarl.make("jaxnav").map_obj

    def first_draw(key):
        u = jax.random.uniform(jax.random.split(key)[1], (m.map_draws + m.case_draws,))
        grid = m.map_from_uniform(u[: m.map_draws])
        return m.case_from_uniform(u[m.map_draws :], grid)[0], grid

    keys = jax.random.split(jax.random.key(0), 512)
    ok, first_map = jax.jit(jax.vmap(first_draw))(keys)
    failed = np.flatnonzero(~np.asarray(ok))
    assert len(failed) >= 3  # about 1.5% of default draws fail
    maps, _ = jax.jit(jax.vmap(m.sample_scenario))(keys[failed])
    np.testing.assert_array_equal(np.asarray(maps), np.asarray(first_map)[failed])
    # The first draws that succeed are kept whole.
    kept, _ = jax.jit(jax.vmap(m.sample_scenario))(keys[:8])
    passed = np.asarray(ok)[:8]
    np.testing.assert_array_equal(np.asarray(kept)[passed], np.asarray(first_map)[:8][passed])


@pytest.mark.nightly  # a separate env configuration to compile
def test_grid_cases_with_path_check_are_connected():
    env = jaxmarl.make(
        "jaxnav",
        num_agents=3,
        map_params={
            "map_size": (9, 9),
            "fill": 0.5,
            "sample_test_case_type": "grid",
            "valid_path_check": True,
        },
    )
    state = _reset_checks(env, 5)
    from jaxmarl.envs.jaxnav.maps import component_mask

    grid = np.asarray(state.map_data)
    for p, g in zip(np.asarray(state.pos).astype(int), np.asarray(state.goal).astype(int)):
        region = np.asarray(component_mask(jnp.asarray(grid == 0), jnp.asarray(p)))
        assert region[g[1], g[0]]


@pytest.mark.nightly  # a separate env configuration to compile
def test_map_given_as_data_and_other_map_ids():
    grid = empty_map(7)
    grid[3, 3] = 1
    buffer = np.stack([grid, empty_map(7)])
    env = jaxmarl.make("jaxnav", map_id="Grid-Buffer", map_params={"map_grids": buffer})
    state = _reset_checks(env)
    assert any(np.array_equal(state.map_data, m) for m in buffer)
    rows = [" ".join(str(v) for v in row) for row in grid]
    single = jaxmarl.make("jaxnav", map_id="Grid-Rand-Poly-Single", map_params={"map_data": rows})
    np.testing.assert_array_equal(_reset_checks(single).map_data, grid)
    circle = jaxmarl.make("jaxnav", map_id="Grid-Rand")
    state = _reset_checks(circle)
    _, state, *_ = jax.jit(circle.step_env)(
        jax.random.key(0), state, act(circle, [[1.0, 0.0], [1.0, 0.0]])
    )
    assert np.isfinite(np.asarray(state.pos)).all()


def test_barn_starts_clear_of_walls_and_goals_far_and_connected():
    env = jaxmarl.make(
        "jaxnav",
        num_agents=1,
        map_id="Grid-Rand-Barn",
        lidar_num_beams=8,
        map_params={"map_size": (30, 30), "fill": 0.4},
    )
    from jaxmarl.envs.jaxnav.maps import component_labels, dilate

    keys = jax.random.split(jax.random.key(0), 24)
    _, states = jax.jit(jax.vmap(env.reset))(keys)
    still = {"agent_0": jnp.zeros((len(keys), 2), jnp.float32)}
    _, _, _, _, infos = jax.jit(jax.vmap(env.step_env))(keys, states, still)
    # Standing still on the first step, no robot touches a wall (JaxMARL inflates the walls
    # by 2 cells of 0.15 m before drawing starts; the Jackal is 0.51 x 0.43 m).
    assert int(np.sum(infos["MapC"])) == 0
    assert (np.asarray(states.map_data).sum((1, 2)) > 4 * 29).any()  # some maps have walls
    # Start and goal: cell corners on cells 3+ cells from every wall, connected through such
    # cells, more than 19 cells apart along x or y; headings in multiples of pi/2.
    starts = np.round(np.asarray(states.pos[:, 0]) / 0.15).astype(int)
    goals = np.round(np.asarray(states.goal[:, 0]) / 0.15).astype(int)
    np.testing.assert_allclose(starts * 0.15, states.pos[:, 0], atol=1e-5)
    for grid, start, goal in zip(np.asarray(states.map_data), starts, goals):
        labels = component_labels(~dilate(grid == 1, 2, np))
        assert labels[start[1], start[0]] >= 0
        assert labels[goal[1], goal[0]] == labels[start[1], start[0]]
        assert np.abs(goal - start).max() > 19
    quarters = np.asarray(states.theta[:, 0]) / (np.pi / 2)
    np.testing.assert_allclose(quarters, np.round(quarters), atol=1e-6)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(map_id="Grid-Rnd"), ValueError, "known map ids.*Grid-Rand-Poly"),
        (dict(rad=-0.3), ValueError, "rad"),
        (dict(lidar_num_beams=0), ValueError, "lidar_num_beams"),
        (dict(act_type="discrete"), ValueError, "act_type"),
        (dict(map_params={"map_size": (11, 11), "fil": 0.3}), TypeError, "fil"),
        (dict(num_agents=10, map_params={"map_size": (3, 3)}), ValueError, "crowd"),
        (
            dict(num_agents=4, map_params={"map_size": (3, 5), "sample_test_case_type": "grid"}),
            ValueError,
            "room for 3",  # 3 inner cells
        ),
        (dict(num_agents=40), ValueError, "crowd"),
        (
            dict(map_id="Grid-Buffer", map_params={"map_grids": np.ones((2, 5, 5), np.int32)}),
            ValueError,
            "cannot|fewer",
        ),
        (dict(do_sep_reward=True), NotImplementedError, "do_sep_reward"),
    ],
)
def test_bad_configuration_raises_before_compiling(kwargs, error, match, compiles):
    with pytest.raises(error, match=match):
        jaxmarl.make("jaxnav", **kwargs)
    assert compiles() == [], "the constructor compiled before raising"


def _walls_with_free(shape, free_cells):
    grid = np.ones(shape, np.int32)
    for y, x in free_cells:
        grid[y, x] = 0
    return grid


# Maps on which the sampler can never place a case (a reset would never end), each with the
# reason the error names.
_UNPLACEABLE = {
    # One free cell for two robots' starts and goals.
    "one cell, two robots": (
        dict(map_id="Grid-Rand-Poly-Single"),
        {"map_data": _walls_with_free((6, 6), [(2, 2)])},
        "no start and goal",
    ),
    # One free cell: a start keeping 0.45 m from the walls and a goal keeping 0.3 m lie
    # within 0.05 m and 0.2 m of the centre, never more than 2 rad = 0.6 m apart.
    "one cell, one robot": (
        dict(num_agents=1, map_id="Grid-Rand-Poly-Single"),
        {"map_data": _walls_with_free((3, 3), [(1, 1)])},
        "more than 2 rad = 0.60 m apart",
    ),
    # Two isolated free cells: enough cells, but no goal cell connected to a start cell.
    "isolated cells, path check": (
        dict(num_agents=1, map_id="Grid-Buffer"),
        {
            "map_grids": np.stack(
                [_walls_with_free((5, 5), [(1, 1), (1, 2), (3, 3)])] * 2
                + [_walls_with_free((5, 5), [(1, 1), (3, 3)])]
            ),
            "sample_test_case_type": "grid",
            "valid_path_check": True,
        },
        "map 2 of 'Grid-Buffer'.*room for 0",
    ),
    # Two one-cell pockets 2 m apart: a start and a goal 2 m apart fit, but the path
    # check needs them in the same pocket, where they are never 0.6 m apart.
    "two pockets, path check": (
        dict(num_agents=1, map_id="Grid-Rand-Poly-Single"),
        {"map_data": _walls_with_free((5, 5), [(2, 1), (2, 3)]), "valid_path_check": True},
        "connected through free cells",
    ),
    # JaxMARL's BARN rule keeps start and goal 20 cells apart on cells 3 cells from walls:
    # an 11 x 11 grid (its default map_size) has no such pair.
    "BARN, default size": (dict(num_agents=1, map_id="Grid-Rand-Barn"), None, "20 cells apart"),
}


@pytest.mark.parametrize("name", list(_UNPLACEABLE))
def test_map_where_starts_cannot_be_placed(name, compiles):
    kwargs, map_params, match = _UNPLACEABLE[name]
    if map_params is not None:
        kwargs = dict(kwargs, map_params=map_params)
    with pytest.raises(ValueError, match=match):
        jaxmarl.make("jaxnav", **kwargs)
    assert compiles() == []


def test_placement_check_accepts_tight_but_possible_maps(compiles):
    # The same rules admit these: each is one free-cell or lattice step from the maps above.
    two_cells = _walls_with_free((5, 5), [(1, 1), (1, 2)])
    kwargs = dict(num_agents=2, map_id="Grid-Buffer")
    grid_cases = {"sample_test_case_type": "grid", "valid_path_check": True}
    # Two robots swap two connected cells (the start of one is the goal of the other).
    jaxmarl.make("jaxnav", **kwargs, map_params={"map_grids": two_cells, **grid_cases})
    # The two pockets without the path check; a 1 m corridor with it.
    single = dict(num_agents=1, map_id="Grid-Rand-Poly-Single")
    pockets = _walls_with_free((5, 5), [(2, 1), (2, 3)])
    jaxmarl.make("jaxnav", **single, map_params={"map_data": pockets})
    corridor = _walls_with_free((3, 7), [(1, x) for x in range(1, 6)])
    jaxmarl.make("jaxnav", **single, map_params={"map_data": corridor, "valid_path_check": True})
    jaxmarl.make("jaxnav", **_SHORT_CORRIDOR)
    jaxmarl.make("jaxnav", num_agents=1, map_id="Grid-Rand-Barn", map_params={"map_size": (27, 11)})
    assert compiles() == []


# A 2 x 1 m corridor, rad 0.35 m, start_pad 1: starts and goals are drawn in the box
# [1.35, 2.65] x [1.35, 1.65], whose diagonal is shorter than the least start-goal distance
# drawn (1 + rad = 1.35 m). Only a goal clipped to the box's edge (0.35 m from the walls) fits.
_SHORT_CORRIDOR = dict(
    num_agents=1,
    rad=0.35,
    map_id="Grid-Rand-Poly-Single",
    lidar_num_beams=8,
    map_params={"map_data": _walls_with_free((3, 4), [(1, 1), (1, 2)]), "start_pad": 1.0},
)


def test_tight_map_accepted_by_the_check_resets():
    env = jaxmarl.make("jaxnav", **_SHORT_CORRIDOR)
    state = _reset_checks(env)
    assert float(state.goal[0, 0]) in (pytest.approx(1.35), pytest.approx(2.65))


_COMPILE_EVENTS: list[str] = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, *_args, **_kwargs: (
        _COMPILE_EVENTS.append(name) if name.startswith("/jax/core/compile/") else None
    )
)


@pytest.fixture
def compiles():
    """``compiles()``: the jax compile events since the test started (one listener for the
    module; ``test_compile_listener_sees_a_compile`` checks that it sees a fresh jit)."""
    _COMPILE_EVENTS.clear()
    return lambda: list(_COMPILE_EVENTS)


def test_compile_listener_sees_a_compile(compiles):
    jax.jit(lambda x: x * 3.0 + 0.25)(jnp.float32(1.0))
    assert compiles(), "the listener behind `compiles` saw no compile"
