"""Pictures of STORM states (all three ids): RGB frames and GIFs, drawn with NumPy.

The board is drawn with x down and y across. Players are triangles in their own colour
pointing the way they face (a white dot when they hold a coin, dimmed while frozen), coins
are green (cooperation / red kind) and red (defection / blue kind) discs as in JaxMARL's
pictures, zap marks are yellow cells. A bar under the board shows the inner-episode clock.
imageio (the optional ``viz`` extra) is imported only by ``save_gif``. Rendering runs on the
host with NumPy copies of one environment's state (index a batch first).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=4)   # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import colorsys
import os
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

__all__ = ["render_frame", "save_gif"]

_BACKGROUND = np.array([245, 245, 245], np.uint8)
_GRID = np.array([170, 170, 170], np.uint8)
_ZAP = np.array([188, 189, 34], np.uint8)
_COINS = (np.array([44, 160, 44], np.uint8), np.array([214, 39, 40], np.uint8))
_CELL = 24  # pixels per cell at scale 1


def _codes(env: Any) -> tuple[list[int], int, int, int]:
    """``(player codes, first coin code, second coin code, zap mark code)`` of the env's grid."""
    kind = type(env).__name__
    n = env.num_agents
    if kind == "InTheGrid2p":
        return [1, 2], 3, 4, 6
    if kind == "InTheGrid":
        return list(range(1, n + 1)), 9, 10, 12
    return [5 + i for i in range(n)], 3, 4, 2


def _colours(n: int) -> np.ndarray:
    rgb = [colorsys.hsv_to_rgb(i / n, 0.75, 0.9) for i in range(n)]
    return (np.array(rgb) * 255).astype(np.uint8)


def render_frame(env: Any, state: Any, *, scale: int = 2) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one state.

    Args:
        env: the STORM env the state belongs to (its grid codes differ per id).
        state: one state (not a batch).
        scale: pixels per cell are ``24 * scale``.
    """
    state = jax.tree.map(np.asarray, state)
    if state.grid.ndim != 2:
        raise ValueError(
            f"expected the state of one environment (grid [G, G]), got grid of shape "
            f"{state.grid.shape}; index the batch first"
        )
    players, coin_a, coin_b, zap = _codes(env)
    size = state.grid.shape[0]
    cell = _CELL * int(scale)
    bar = max(cell // 4, 4)
    frame = np.empty((size * cell + bar, size * cell, 3), np.uint8)
    frame[:] = _BACKGROUND
    rows, cols = np.mgrid[0:cell, 0:cell]
    centre = (cell - 1) / 2
    disc = np.hypot(rows - centre, cols - centre) < cell * 0.3
    colours = _colours(len(players))
    frozen = np.asarray(state.freeze)
    frozen = frozen.max(-1) if frozen.ndim == 2 else np.broadcast_to(frozen, (len(players),))
    holding = np.asarray(state.inventory).sum(-1) > 0
    for x in range(size):
        for y in range(size):
            patch = frame[x * cell : (x + 1) * cell, y * cell : (y + 1) * cell]
            code = int(state.grid[x, y])
            if code == zap:
                patch[:] = _ZAP
            elif code in (coin_a, coin_b):
                patch[disc] = _COINS[0 if code == coin_a else 1]
            patch[0, :] = _GRID
            patch[:, 0] = _GRID
    for i, pos in enumerate(np.asarray(state.pos)):
        x, y, direction = (int(v) for v in pos)
        if not (0 <= x < size and 0 <= y < size):
            continue
        patch = frame[x * cell : (x + 1) * cell, y * cell : (y + 1) * cell]
        # Triangle pointing along the facing direction (x down, y across).
        forward = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]][direction], np.float64)
        side = np.array([forward[1], -forward[0]])
        offset = np.stack([rows - centre, cols - centre], -1) / (cell * 0.4)
        along = offset @ forward
        across = np.abs(offset @ side)
        triangle = (along > -0.8) & (along < 0.9) & (across < (0.9 - along) * 0.55)
        colour = colours[i] if frozen[i] <= 0 else (colours[i] // 2 + 64).astype(np.uint8)
        patch[triangle] = colour
        if holding[i]:
            patch[np.hypot(rows - centre, cols - centre) < cell * 0.1] = 255
    inner = int(state.step) % env.num_inner_steps
    filled = int(round(frame.shape[1] * inner / env.num_inner_steps))
    frame[size * cell :, :filled] = 60
    return frame


def save_gif(env: Any, states: Any, path: Any, *, fps: float = 4.0, scale: int = 2) -> None:
    """Write the states of one episode (stacked ``[T, ...]`` or a list) to a GIF."""
    import imageio.v2 as imageio

    frames = [render_frame(env, state, scale=scale) for state in host_frames(states, "grid", 2)]
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)
