"""Coin Game frames and GIFs: shape, where players and coins are drawn, an episode's GIF."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.envs.coin_game.render import render_frame, save_gif
from jaxmarl.render import renderer_module, save_episode_gif
from tests.envs.coin_game.boards import board

RED = (220, 40, 40)
BLUE = (40, 80, 220)


def pixels(frame, colour):
    """``[H, W]`` bool: pixels of exactly ``colour``."""
    return (frame == np.asarray(colour, np.uint8)).all(-1)


@pytest.mark.parametrize("scale", [1, 2])
@pytest.mark.parametrize(
    "cells",
    [
        # (red, blue, red coin, blue coin): all apart, rows and columns not interchangeable.
        ([0, 0], [1, 2], [2, 1], [0, 2]),
        ([2, 1], [0, 1], [1, 0], [2, 2]),
    ],
)
def test_players_and_coins_are_drawn_in_their_cells(cells, scale):
    env = jaxmarl.make("coin_game")
    frame = render_frame(env, board(*cells), scale=scale)
    size = 3 * 48 * scale
    assert frame.shape == (size, size, 3) and frame.dtype == np.uint8
    red, blue, red_coin, blue_coin = (tuple(c) for c in cells)
    cell = 48 * scale
    for row in range(3):
        for col in range(3):
            patch = frame[row * cell : (row + 1) * cell, col * cell : (col + 1) * cell]
            # Red appears exactly in the red player's and the red coin's cells; blue likewise.
            where = f"cell {(row, col)} of {cells}"
            assert pixels(patch, RED).any() == ((row, col) in (red, red_coin)), where
            assert pixels(patch, BLUE).any() == ((row, col) in (blue, blue_coin)), where
    # A player is a square filling a good part of its cell; a coin is a small disc.
    for pos, colour, is_player in (
        (red, RED, True),
        (blue, BLUE, True),
        (red_coin, RED, False),
        (blue_coin, BLUE, False),
    ):
        patch = frame[pos[0] * cell : (pos[0] + 1) * cell, pos[1] * cell : (pos[1] + 1) * cell]
        share = pixels(patch, colour).mean()
        assert (share > 0.15) if is_player else (0 < share < 0.1), (pos, colour, share)


def test_shared_cell_shows_both_players_and_both_coins():
    env = jaxmarl.make("coin_game")
    frame = render_frame(env, board([1, 1], [1, 1], [1, 1], [1, 1]), scale=1)
    patch = frame[48:96, 48:96]
    assert pixels(patch, RED).sum() > 100 and pixels(patch, BLUE).sum() > 100
    assert not pixels(frame, RED).sum() - pixels(patch, RED).sum()  # nothing elsewhere


def test_episode_gif_has_one_frame_per_state(tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    env = jaxmarl.make("coin_game", num_inner_steps=3, num_outer_steps=2)
    assert renderer_module(env).__name__ == "jaxmarl.envs.coin_game.render"
    _, state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    states = [state]
    for t in range(5):  # red walks right every step, so consecutive frames differ
        actions = {"0": jnp.int32(0), "1": jnp.int32(t % 5)}
        _, state, *_ = step(jax.random.key(t), state, actions)
        states.append(state)
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *states)
    path = save_episode_gif(env, stacked, tmp_path / "episode.gif", scale=1)
    frames = imageio.mimread(path)
    assert len(frames) == len(states)
    first = np.asarray(frames[0])[..., :3]
    np.testing.assert_array_equal(first, render_frame(env, states[0], scale=1))
    save_gif(env, states, tmp_path / "list.gif", scale=1)  # a list of states works too
    assert len(imageio.mimread(tmp_path / "list.gif")) == len(states)
    with pytest.raises(ValueError, match="index the batch first"):
        render_frame(env, stacked)
