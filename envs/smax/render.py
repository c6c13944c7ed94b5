"""Pictures of SMAX battles: RGB frames and episode GIFs.

Each living unit is a disc of its collision radius (allies blue, enemies red) labelled with its
type letter (``m`` marine, ``M`` marauder, ``s`` stalker, ``Z`` zealot, ``z`` zergling, ``h``
hydralisk), with a health bar above it; a line joins every unit whose last action was an attack
to its target (the attacks of the step that led to the state). Dead units are drawn as faint
crosses. matplotlib and imageio are the optional ``viz`` extra and are imported on use.
``jaxmarl.render.save_episode_gif(env, states, path)`` dispatches here.

>>> frame = render_frame(env, state)               # [H, W, 3] uint8
>>> save_gif(env, states, "battle.gif", fps=8)     # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

__all__ = ["render_frame", "save_gif"]

_TEAM_COLOURS = ("#1f5fbf", "#c0392b")


def _attack_targets(env: Any, state: Any) -> list[tuple[int, int]]:
    """(shooter, target) of every living unit whose last action was an attack."""
    pairs = []
    for unit in range(env.num_units):
        action = int(state.prev_attack_actions[unit])
        if action < env.num_movement_actions or not state.unit_alive[unit]:
            continue
        slot = action - env.num_movement_actions
        target = env.num_allies + slot if unit < env.num_allies else env.num_allies - 1 - slot
        if 0 <= target < env.num_units:
            pairs.append((unit, target))
    return pairs


def _draw(env: Any, state: Any, ax: Any) -> None:
    from matplotlib.patches import Circle, Rectangle

    ax.clear()
    ax.set_xlim(0, env.map_width)
    ax.set_ylim(0, env.map_height)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    won = ""
    alive = np.asarray(state.unit_alive)
    if not alive[env.num_allies :].any():
        won = " (allies win)"
    elif not alive[: env.num_allies].any():
        won = " (enemies win)"
    ax.set_title(f"step {int(state.step)}{won}", fontsize=9)
    positions = np.asarray(state.unit_positions)
    for shooter, target in _attack_targets(env, state):
        team = 0 if shooter < env.num_allies else 1
        ax.plot(
            *zip(positions[shooter], positions[target]),
            color=_TEAM_COLOURS[team],
            alpha=0.5,
            linewidth=1.0,
        )
    for unit in range(env.num_units):
        team = 0 if unit < env.num_allies else 1
        unit_type = int(state.unit_types[unit])
        radius = float(env.unit_type_radiuses[unit_type])
        x, y = positions[unit]
        if not alive[unit]:
            ax.plot([x], [y], marker="x", color="grey", alpha=0.4, markersize=4)
            continue
        ax.add_patch(Circle((x, y), radius, color=_TEAM_COLOURS[team]))
        ax.text(
            x,
            y,
            env.unit_type_shorthands[unit_type],
            ha="center",
            va="center",
            fontsize=6,
            color="white",
        )
        fraction = float(state.unit_health[unit]) / float(env.unit_type_health[unit_type])
        ax.add_patch(Rectangle((x - radius, y + radius + 0.15), 2 * radius, 0.2, color="#ddd"))
        ax.add_patch(
            Rectangle((x - radius, y + radius + 0.15), 2 * radius * fraction, 0.2, color="#2a2")
        )


def render_frame(env: Any, state: Any, *, size: float = 5.0) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one env's state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(size, size), dpi=100)
    canvas = FigureCanvasAgg(figure)
    ax = figure.add_axes((0.02, 0.02, 0.96, 0.92))
    _draw(env, jax.tree.map(np.asarray, state), ax)
    canvas.draw()
    return np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3], dtype=np.uint8)


def save_gif(env: Any, states: Any, path: Any, *, fps: float = 8.0, size: float = 5.0) -> None:
    """Write the states of one episode (stacked ``[T, ...]`` or a list) to a GIF."""
    import imageio.v2 as imageio

    frames = [
        render_frame(env, state, size=size) for state in host_frames(states, "unit_positions", 2)
    ]
    if not frames:
        raise ValueError("no states to render")
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)
