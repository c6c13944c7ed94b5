"""Pictures of OvercookedV2 states: RGB frames and GIFs, drawn with NumPy.

One square per grid cell, row 0 at the top. Fixtures: counters (brown), delivery spots
(green), pots (dark grey, with a dot per ingredient inside and a bar for the cook timer that
turns green when the soup is done), plate piles (a white plate), ingredient piles (a large
dot of the ingredient's colour), recipe indicators (purple, showing the asked recipe's
ingredients) and button indicators (purple when lit, showing the recipe; pale with a button
when not).
Items on counters are drawn on them: a plate as a white disc, ingredients as coloured dots,
a cooked soup with an orange rim. Agents are coloured discs with a black pointer towards
their facing and the item they hold drawn small beside it. imageio (the optional ``viz``
extra) is imported only by ``save_gif``. Rendering runs on the host with NumPy copies of one
environment's state (index a batch first: ``jax.tree.map(lambda x: x[i], states)``).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=4)   # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

from jaxmarl.envs.overcooked.v2 import layouts as L
from jaxmarl.render import host_frames

__all__ = ["render_frame", "render_frames", "save_gif"]

_CELL = 32  # pixels per cell at scale 1
_FLOOR = (235, 230, 215)
_COUNTER = (150, 110, 70)
_GOAL = (90, 180, 90)
_POT = (70, 70, 70)
_INDICATOR = (140, 80, 170)
_DARK_INDICATOR = (185, 165, 200)
_BUTTON = (90, 40, 110)
_PLATE = (250, 250, 250)
_COOKED = (240, 140, 30)
_TIMER = (230, 60, 40)
_DONE = (60, 200, 60)
_GRID_LINE = (200, 195, 180)
# Ingredient colours (0 is overcooked-ai's onion yellow, 1 tomato red, ...).
_INGREDIENTS = np.array(
    [
        (240, 200, 40),
        (220, 50, 50),
        (60, 140, 230),
        (120, 200, 80),
        (200, 90, 200),
        (250, 150, 180),
        (80, 200, 200),
        (160, 120, 60),
        (30, 30, 160),
        (255, 255, 120),
    ],
    np.uint8,
)
_AGENTS = np.array([(40, 90, 220), (230, 120, 30), (40, 170, 120), (170, 40, 170)], np.uint8)
# (dx, dy) of the facings up, down, right, left.
_FACING = ((0, -1), (0, 1), (1, 0), (-1, 0))


def render_frame(env: Any, state: Any, *, scale: int = 2) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one state.

    Args:
        env: the ``OvercookedV2`` env (for its number of ingredients), or ``None``: the state's
            ``ingredient_permutations`` give that number.
        state: one ``OvercookedV2State`` (not a batch).
        scale: pixels per cell are ``32 * scale``.
    """
    state = jax.tree.map(np.asarray, state)
    grid = state.grid
    if grid.ndim != 3:
        raise ValueError(
            f"expected the state of one environment (grid [H, W, 3]), got grid of shape "
            f"{grid.shape}; index the batch first"
        )
    n = int(state.ingredient_permutations.shape[-1] if env is None else env.num_ingredients)
    cell = _CELL * int(scale)
    height, width = grid.shape[:2]
    frame = np.empty((height * cell, width * cell, 3), np.uint8)
    recipe = int(state.recipe)
    for y in range(height):
        for x in range(width):
            patch = frame[y * cell : (y + 1) * cell, x * cell : (x + 1) * cell]
            _fixture(patch, *(int(v) for v in grid[y, x]), recipe, n)
    for i in range(len(state.agents.dir)):
        x, y = int(state.agents.pos.x[i]), int(state.agents.pos.y[i])
        patch = frame[y * cell : (y + 1) * cell, x * cell : (x + 1) * cell]
        _agent(patch, _AGENTS[i % len(_AGENTS)], int(state.agents.dir[i]))
        held = int(state.agents.inventory[i])
        if held:
            corner = patch[cell // 2 :, cell // 2 :]
            _item(corner, held, n)
    return frame


def render_frames(env: Any, states: Any, *, scale: int = 2) -> list[np.ndarray]:
    """The pictures of one episode's states (stacked ``[T, ...]`` or a list)."""
    return [render_frame(env, state, scale=scale) for state in host_frames(states, "grid", 3)]


def save_gif(env: Any, states: Any, path: Any, *, fps: float = 4.0, scale: int = 2) -> None:
    """Write the states of one episode (stacked ``[T, ...]`` or a list) to a GIF."""
    import imageio.v2 as imageio

    frames = render_frames(env, states, scale=scale)
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)


# ----------------------------------------------------------------- drawing helpers
def _disc(patch: np.ndarray, cy: float, cx: float, radius: float, colour) -> None:
    rows, cols = np.mgrid[0 : patch.shape[0], 0 : patch.shape[1]]
    patch[np.hypot(rows - cy, cols - cx) <= radius] = colour


def _fixture(patch: np.ndarray, static: int, items: int, extra: int, recipe: int, n: int):
    size = patch.shape[0]
    patch[:] = _FLOOR
    patch[0, :] = patch[:, 0] = _GRID_LINE
    inner = patch[2:-2, 2:-2]
    if static == L.WALL:
        inner[:] = _COUNTER
    elif static == L.GOAL:
        inner[:] = _GOAL
    elif static == L.POT:
        inner[:] = _POT
        _item(inner, items, n, pot=True)
        if extra > 0:  # cook timer: a bar that shrinks as the soup cooks
            length = int(round(inner.shape[1] * extra / 20))
            inner[-max(2, size // 10) :, :length] = _TIMER
        elif items & 2:
            inner[-max(2, size // 10) :, :] = _DONE
        return
    elif static == L.PLATE_PILE:
        inner[:] = _COUNTER
        _disc(inner, inner.shape[0] / 2, inner.shape[1] / 2, inner.shape[0] * 0.4, _PLATE)
    elif static >= L.INGREDIENT_PILE_BASE:
        inner[:] = _COUNTER
        colour = _INGREDIENTS[(static - L.INGREDIENT_PILE_BASE) % len(_INGREDIENTS)]
        _disc(inner, inner.shape[0] / 2, inner.shape[1] / 2, inner.shape[0] * 0.35, colour)
    elif static in (L.RECIPE_INDICATOR, L.BUTTON_RECIPE_INDICATOR):
        lit = static == L.RECIPE_INDICATOR or extra > 0
        inner[:] = _INDICATOR if lit else _DARK_INDICATOR
        if lit:
            _item(inner, recipe, n)
        else:  # an unlit button: press it (interact) to see the recipe
            _disc(inner, inner.shape[0] / 2, inner.shape[1] / 2, inner.shape[0] * 0.2, _BUTTON)
        return
    if items:
        _item(inner, items, n)


def _item(patch: np.ndarray, code: int, n: int, pot: bool = False) -> None:
    """An item code: plate disc, cooked rim, one dot per ingredient (up to three)."""
    h, w = patch.shape[:2]
    if code & 1:  # on a plate
        _disc(patch, h / 2, w / 2, min(h, w) * 0.45, _PLATE)
    if code & 2 and not pot:
        _disc(patch, h / 2, w / 2, min(h, w) * 0.38, _COOKED)
    dots = [i for i in range(n) for _ in range((code >> (2 + 2 * i)) & 3)]
    spots = ((0.35, 0.3), (0.35, 0.7), (0.7, 0.5))
    for (fy, fx), ingredient in zip(spots, dots):
        _disc(patch, h * fy, w * fx, min(h, w) * 0.14, _INGREDIENTS[ingredient % 10])


def _agent(patch: np.ndarray, colour: np.ndarray, facing: int) -> None:
    size = patch.shape[0]
    centre = size / 2
    _disc(patch, centre, centre, size * 0.33, colour)
    dx, dy = _FACING[facing % 4]
    for step in np.linspace(0, size * 0.42, num=max(4, size // 3)):
        _disc(patch, centre + dy * step, centre + dx * step, max(1.5, size * 0.05), (0, 0, 0))
