"""Pictures of Coin Game states: RGB frames and GIFs, drawn with NumPy.

The 3x3 board is drawn row 0 at the top: players are large squares, coins small discs, each
in its owner's colour (red: agent ``"0"``, blue: agent ``"1"``). A cell holding several
things shows each (players first, coins over them). imageio (the optional ``viz`` extra) is
imported only by ``save_gif``. Rendering runs on the host with NumPy copies of one
environment's state (index a batch first: ``jax.tree.map(lambda x: x[i], states)``).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=4)   # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

__all__ = ["render_frame", "save_gif"]

_RED = np.array([220, 40, 40], np.uint8)
_BLUE = np.array([40, 80, 220], np.uint8)
_GRID = np.array([160, 160, 160], np.uint8)
_BACKGROUND = np.array([250, 250, 250], np.uint8)
_CELL = 48  # pixels per cell at scale 1


def render_frame(env: Any, state: Any, *, scale: int = 2) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one state.

    Args:
        env: the ``CoinGame`` (unused; kept for the family render interface).
        state: one ``CoinGameState`` (not a batch).
        scale: pixels per cell are ``48 * scale``.
    """
    state = jax.tree.map(np.asarray, state)
    if state.red_pos.shape != (2,):
        raise ValueError(
            f"expected the state of one environment (red_pos [2]), got red_pos of shape "
            f"{state.red_pos.shape}; index the batch first"
        )
    cell = _CELL * int(scale)
    size = 3 * cell
    frame = np.empty((size, size, 3), np.uint8)
    frame[:] = _BACKGROUND
    for line in range(4):
        at = min(line * cell, size - 1)
        frame[at, :] = _GRID
        frame[:, at] = _GRID
    rows, cols = np.mgrid[0:cell, 0:cell]
    centre = (cell - 1) / 2
    # Players: squares in the left/right half of the cell so both show when they share one.
    for pos, colour, offset in ((state.red_pos, _RED, -1), (state.blue_pos, _BLUE, 1)):
        top, left = int(pos[0]) * cell, int(pos[1]) * cell
        half = cell // 4
        c0 = int(centre + offset * cell // 5 - half)
        frame[top + cell // 4 : top + 3 * cell // 4, left + c0 : left + c0 + 2 * half] = colour
    # Coins: discs with a dark rim, offset up for red and down for blue.
    for pos, colour, offset in ((state.red_coin_pos, _RED, -1), (state.blue_coin_pos, _BLUE, 1)):
        top, left = int(pos[0]) * cell, int(pos[1]) * cell
        dist = np.hypot(rows - (centre + offset * cell / 5), cols - centre)
        patch = frame[top : top + cell, left : left + cell]
        patch[dist < cell / 7] = 30
        patch[dist < cell / 7 - 2 * scale] = colour
    return frame


def save_gif(env: Any, states: Any, path: Any, *, fps: float = 4.0, scale: int = 2) -> None:
    """Write the states of one episode (stacked ``[T, ...]`` or a list) to a GIF."""
    import imageio.v2 as imageio

    frames = [render_frame(env, state, scale=scale) for state in host_frames(states, "red_pos", 1)]
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)
