"""JaxNav frames show walls, robots, goals and lidar rays; episodes save as GIFs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.envs.jaxnav.render import render_frame, save_gif
from tests.envs.jaxnav.test_jaxnav import empty_map, env_and_step, make_state


def test_frame_draws_map_robots_goals_and_rays(tmp_path):
    pytest.importorskip("imageio")
    env, step, _ = env_and_step()
    grid = empty_map()
    grid[5, 5] = 1
    state = make_state(env, [[2.5, 2.5], [8.5, 8.5]], [0.0, 1.0], [[8.5, 2.5], [2.5, 8.5]], grid)
    frame = render_frame(env, state, pixels_per_metre=20)
    assert frame.shape == (220, 220, 3) and frame.dtype == np.uint8
    # The wall cell (x 5..6, y 5..6) is dark; y grows upwards, so its rows are 100..120.
    assert (frame[105, 105] == 60).all()
    # Robot 0 (behind its heading line) has its colour; most pixels are floor.
    np.testing.assert_array_equal(frame[int(220 - 2.5 * 20), int(2.35 * 20)], [31, 119, 180])
    assert np.mean((frame == 250).all(-1)) > 0.4  # mostly floor
    assert len({tuple(c) for c in frame.reshape(-1, 3)}) >= 6
    states = [state]
    for i in range(3):
        actions = {a: jnp.array([1.0, 0.3]) for a in env.agents}
        _, state, *_ = step(jax.random.key(i), state, actions)
        states.append(state)
    path = tmp_path / "episode.gif"
    save_gif(env, jax.tree.map(lambda *x: jnp.stack(x), *states), path, pixels_per_metre=10)
    assert path.stat().st_size > 0
