"""Pictures of JaxNav states: RGB frames and GIFs, drawn with NumPy.

Walls are dark cells (y up, as in the world); each robot is its footprint in its own colour
with a black heading line, its goal a ring of radius ``goal_radius`` in the same colour, and
its lidar rays thin lines in a light shade of it (every ``beam_stride``-th beam, from the
robot to the reading). Finished robots (``done``) are drawn grey. imageio (the optional
``viz`` extra) is imported only by ``save_gif``. Rendering runs on the host with NumPy
copies of one environment's state (index a batch first).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=10)  # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

__all__ = ["render_frame", "save_gif"]

_WALL = np.array([60, 60, 60], np.uint8)
_FLOOR = np.array([250, 250, 250], np.uint8)
_DONE = np.array([150, 150, 150], np.uint8)
_COLOURS = np.array(
    [[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189], [140, 86, 75]],
    np.uint8,
)


def _line(frame, p0, p1, colour, to_pixel):
    """Draw the segment ``p0 -> p1`` (world metres) one pixel wide."""
    a, b = to_pixel(np.asarray(p0)), to_pixel(np.asarray(p1))
    count = int(np.ceil(np.abs(b - a).max())) + 1
    points = np.rint(np.linspace(a, b, count)).astype(int)
    height, width = frame.shape[:2]
    keep = (points[:, 0] >= 0) & (points[:, 0] < width) & (points[:, 1] >= 0)
    keep &= points[:, 1] < height
    frame[points[keep, 1], points[keep, 0]] = colour


def render_frame(
    env: Any, state: Any, *, pixels_per_metre: int = 40, beam_stride: int = 10
) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one state.

    Args:
        env: the ``JaxNav`` env the state belongs to.
        state: one JaxNav ``State`` (not a batch).
        pixels_per_metre: image scale.
        beam_stride: draw every ``beam_stride``-th lidar beam (0: none).
    """
    host = jax.tree.map(np.asarray, state)
    if host.pos.ndim != 2:
        raise ValueError(
            f"expected the state of one environment (pos [n, 2]), got pos of shape "
            f"{host.pos.shape}; index the batch first"
        )
    grid = env.map_obj
    scale = pixels_per_metre
    height_m = host.map_data.shape[0] * grid.cell_size
    cell_px = max(int(round(grid.cell_size * scale)), 1)
    rows, cols = host.map_data.shape
    frame = np.empty((rows * cell_px, cols * cell_px, 3), np.uint8)
    frame[:] = _FLOOR
    walls = np.kron(host.map_data[::-1] == 1, np.ones((cell_px, cell_px), bool))
    frame[walls] = _WALL

    def to_pixel(p):
        return np.stack([p[..., 0] * scale, (height_m - p[..., 1]) * scale], -1)

    ys, xs = np.mgrid[0 : frame.shape[0], 0 : frame.shape[1]]
    world = np.stack([(xs + 0.5) / scale, height_m - (ys + 0.5) / scale], -1)  # [H, W, 2]
    colours = [_DONE if host.done[i] else _COLOURS[i % len(_COLOURS)] for i in range(len(host.pos))]
    if beam_stride:
        ranges = np.asarray(env.lidar(state))
        for i, pos in enumerate(host.pos):
            light = (0.35 * colours[i] + 0.65 * 255).astype(np.uint8)
            for beam in range(0, ranges.shape[1], beam_stride):
                angle = env.lidar_angles[beam] + host.theta[i]
                end = pos + ranges[i, beam] * np.array([np.cos(angle), np.sin(angle)])
                _line(frame, pos, end, light, to_pixel)
    for goal, colour in zip(host.goal, colours):
        dist = np.linalg.norm(world - goal, axis=-1)
        frame[np.abs(dist - env.goal_radius) < 1.0 / scale] = colour
    for pos, theta, colour in zip(host.pos, host.theta, colours):
        if grid.footprint == "circle":
            inside = np.linalg.norm(world - pos, axis=-1) <= grid.rad
        else:
            rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
            local = (world - pos) @ rot  # world offsets in the robot frame
            verts = np.asarray(grid.coords)
            edges = np.roll(verts, -1, axis=0) - verts
            cross = edges[:, 0] * (local[..., None, 1] - verts[:, 1]) - edges[:, 1] * (
                local[..., None, 0] - verts[:, 0]
            )
            inside = np.all(cross <= 0, axis=-1) | np.all(cross >= 0, axis=-1)
        frame[inside] = colour
        reach = grid.rad if grid.footprint == "circle" else np.abs(grid.coords).max()
        nose = pos + reach * np.array([np.cos(theta), np.sin(theta)])
        _line(frame, pos, nose, np.zeros(3, np.uint8), to_pixel)
    return frame


def save_gif(
    env: Any,
    states: Any,
    path: Any,
    *,
    fps: float = 10.0,
    pixels_per_metre: int = 40,
    beam_stride: int = 10,
) -> None:
    """Write the states of one episode (stacked ``[T, ...]`` or a list) to a GIF."""
    import imageio.v2 as imageio

    frames = [
        render_frame(env, state, pixels_per_metre=pixels_per_metre, beam_stride=beam_stride)
        for state in host_frames(states, "pos", 2)
    ]
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)
