"""STORM frames and GIFs (all three ids), from reset states only (nothing to compile but reset)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxmarl
from jaxmarl.envs.storm.render import render_frame, save_gif
from jaxmarl.render import renderer_module


@pytest.mark.parametrize(
    ("env_id", "kwargs"), [("storm", {"num_agents": 3}), ("storm_2p", {}), ("storm_np", {})]
)
def test_frames_and_gif(env_id, kwargs, tmp_path):
    pytest.importorskip("imageio")
    env = jaxmarl.make(env_id, **kwargs)
    assert renderer_module(env).__name__ == "jaxmarl.envs.storm.render"
    states = [env.reset(jax.random.key(seed))[1] for seed in range(2)]
    frame = render_frame(env, states[0], scale=1)
    size = int(states[0].grid.shape[0]) * 24
    assert frame.dtype == np.uint8 and frame.shape[:2] == (size + 6, size)
    # Coins (green and red discs) and every player are drawn.
    assert (frame == [44, 160, 44]).all(-1).any() and (frame == [214, 39, 40]).all(-1).any()
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) >= 4 + env.num_agents
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *states)
    save_gif(env, stacked, tmp_path / "episode.gif", scale=1)
    assert (tmp_path / "episode.gif").stat().st_size > 0
    with pytest.raises(ValueError, match="index the batch first"):
        render_frame(env, stacked)
