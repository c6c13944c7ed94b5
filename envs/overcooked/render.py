"""Pictures of Overcooked states: RGB frames and GIFs, drawn with NumPy.

Tiles: floor light, counters grey-brown, pots dark with their onions (yellow dots, one per
onion) and a cook-timer bar (orange while cooking, green when ready), onion piles yellow,
dish piles white, serving spots green. Agents are discs (blue ``agent_0``, red ``agent_1``)
with a black notch towards their facing and their held item in the middle. Items on counters
are drawn on the counter. imageio (the optional ``viz`` extra) is imported only by
``save_gif``; rendering runs on the host with NumPy copies of one environment's state (index
a batch first: ``jax.tree.map(lambda x: x[i], states)``).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=4)   # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import functools
import os
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

from .layouts import COUNTER, DISH_PILE, FLOOR, ONION_PILE, POT, SERVE, Layout, parse_layout
from .overcooked import COOK_TIME, DIRECTIONS, DISH, ONION, SOUP

__all__ = ["render_frame", "save_gif"]

_CELL = 32  # pixels per cell at scale 1
_TILE_COLOURS = {
    FLOOR: (236, 230, 214),
    COUNTER: (160, 130, 100),
    POT: (60, 60, 60),
    ONION_PILE: (230, 200, 60),
    DISH_PILE: (245, 245, 245),
    SERVE: (90, 180, 90),
}
_AGENT_COLOURS = ((40, 90, 220), (220, 50, 50))
_ONION = (240, 210, 40)
_DISH = (255, 255, 255)
_SOUP = (200, 120, 40)


def _disc(patch: np.ndarray, cy: float, cx: float, radius: float, colour: Any) -> None:
    rows, cols = np.mgrid[0 : patch.shape[0], 0 : patch.shape[1]]
    patch[np.hypot(rows - cy, cols - cx) <= radius] = colour


def _item(patch: np.ndarray, item: int, cell: int) -> None:
    """Draw a held or placed item at the centre of a cell."""
    centre = (cell - 1) / 2
    if item == ONION:
        _disc(patch, centre, centre, cell / 7, _ONION)
    elif item == DISH:
        _disc(patch, centre, centre, cell / 5, _DISH)
    elif item == SOUP:
        _disc(patch, centre, centre, cell / 5, _DISH)
        _disc(patch, centre, centre, cell / 8, _SOUP)


def render_frame(env: Any, state: Any, *, scale: int = 2) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one state.

    Args:
        env: the ``Overcooked`` env (its layout gives the tiles), or ``None``: the layout the
            state carries (``state.layout_text``).
        state: one ``OvercookedState`` (not a batch).
        scale: pixels per cell are ``32 * scale``.
    """
    state = jax.tree.map(np.asarray, state)
    if state.agent_pos.shape != (2, 2):
        raise ValueError(
            f"expected the state of one environment (agent_pos [2, 2]), got agent_pos of "
            f"shape {state.agent_pos.shape}; index the batch first"
        )
    layout = _layout(env, state)
    cell = _CELL * int(scale)
    grid = layout.grid
    height, width = grid.shape
    frame = np.zeros((height * cell, width * cell, 3), np.uint8)
    pots = {tuple(int(v) for v in xy): k for k, xy in enumerate(layout.cells(POT))}
    for y in range(height):
        for x in range(width):
            patch = frame[y * cell : (y + 1) * cell, x * cell : (x + 1) * cell]
            patch[:] = _TILE_COLOURS[int(grid[y, x])]
            patch[0, :] = patch[:, 0] = 120  # grid lines
            if (x, y) in pots:
                k = pots[(x, y)]
                onions, tick = int(state.pot_onions[k]), int(state.pot_tick[k])
                for n in range(onions):
                    _disc(patch, cell * 0.35, cell * (0.25 + 0.25 * n), cell / 10, _ONION)
                if tick >= 0:
                    done = tick >= COOK_TIME
                    length = int((cell - 8) * min(tick, COOK_TIME) / COOK_TIME)
                    bar = (90, 200, 90) if done else (240, 150, 30)
                    patch[int(cell * 0.7) : int(cell * 0.82), 4 : 4 + max(length, 1)] = bar
            else:
                _item(patch, int(state.counter_items[y, x]), cell)
    for i in range(2):
        x, y = (int(v) for v in state.agent_pos[i])
        patch = frame[y * cell : (y + 1) * cell, x * cell : (x + 1) * cell]
        centre = (cell - 1) / 2
        _disc(patch, centre, centre, cell * 0.4, _AGENT_COLOURS[i])
        dx, dy = DIRECTIONS[int(state.agent_dir_idx[i])]
        _disc(patch, centre + dy * cell * 0.3, centre + dx * cell * 0.3, cell / 10, (0, 0, 0))
        _item(patch, int(state.agent_inv[i]), cell)
    return frame


def _layout(env: Any, state: Any) -> Layout:
    """The env's layout, else the one the state carries."""
    if env is not None:
        return getattr(env, "unwrapped", env).layout
    if not state.layout_text:
        raise ValueError(
            "this Overcooked state carries no layout (it was not made by the env); "
            "pass the env to draw it"
        )
    return _parsed(state.layout_text)


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> Layout:
    return parse_layout(text)


def save_gif(env: Any, states: Any, path: Any, *, fps: float = 4.0, scale: int = 2) -> None:
    """Write the states of one episode (stacked ``[T, ...]`` or a list) to a GIF."""
    import imageio.v2 as imageio

    frames = [render_frame(env, s, scale=scale) for s in host_frames(states, "agent_pos", 2)]
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)
