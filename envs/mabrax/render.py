"""Pictures of multi-agent MuJoCo episodes: a side-view GIF drawn with NumPy, and brax's HTML.

MuJoCo's own renderer needs an OpenGL context (EGL or OSMesa), which a headless CPU machine
without those libraries does not have, so ``save_gif`` draws the robot itself: each brax link
is a dot joined to its parent, seen from the side (x right, z up), the camera following the
root. Beside the GIF it writes brax's interactive HTML viewer of the same episode
(``<path>.html``, three.js in a browser; no OpenGL needed here). Rendering runs on the host with
NumPy copies of one environment's states (index a batch first).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=20)  # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

__all__ = ["render_frame", "save_gif", "save_html"]

_HEIGHT, _WIDTH = 240, 320
_METRES = 4.0  # width of the view in metres
_GROUND = 0.2  # ground line, as a fraction of the height from the bottom
_LINK = np.array([30, 90, 200], np.uint8)
_JOINT = np.array([220, 60, 40], np.uint8)
_GROUND_COLOUR = np.array([120, 120, 120], np.uint8)


def _link_positions(state: Any) -> np.ndarray:
    return np.asarray(state.brax_state.pipeline_state.x.pos)  # [links, 3]


def render_frame(env: Any, state: Any) -> np.ndarray:
    """``[H, W, 3]`` uint8 side view of one state (links as dots joined to their parents)."""
    pos = _link_positions(jax.tree.map(np.asarray, state))
    if pos.ndim != 2:
        raise ValueError(
            f"expected the state of one environment (link positions [links, 3]), got "
            f"{pos.shape}; index the batch first"
        )
    frame = np.full((_HEIGHT, _WIDTH, 3), 250, np.uint8)
    scale = _WIDTH / _METRES

    def pixel(p):
        col = (p[0] - pos[0, 0]) * scale + _WIDTH / 2
        row = _HEIGHT * (1 - _GROUND) - p[2] * scale
        return row, col

    ground = int(_HEIGHT * (1 - _GROUND))
    frame[ground : ground + 2] = _GROUND_COLOUR
    parents = np.asarray(env.sys.link_parents)
    for link, parent in enumerate(parents):
        if parent < 0:
            continue
        (r0, c0), (r1, c1) = pixel(pos[parent]), pixel(pos[link])
        for t in np.linspace(0.0, 1.0, 64):
            r, c = int(r0 + t * (r1 - r0)), int(c0 + t * (c1 - c0))
            if 1 <= r < _HEIGHT - 1 and 1 <= c < _WIDTH - 1:
                frame[r - 1 : r + 2, c - 1 : c + 2] = _LINK
    for p in pos:
        r, c = (int(v) for v in pixel(p))
        if 2 <= r < _HEIGHT - 2 and 2 <= c < _WIDTH - 2:
            frame[r - 2 : r + 3, c - 2 : c + 3] = _JOINT
    return frame


def save_html(env: Any, states: Any, path: Any) -> Path:
    """brax's interactive HTML viewer of one episode (stacked ``[T, ...]`` or a list)."""
    from brax.io import html

    frames = host_frames(states, "step", 0)
    pipeline = [jax.tree.map(jax.numpy.asarray, s.brax_state.pipeline_state) for s in frames]
    Path(path).write_text(html.render(env.sys, pipeline))
    return Path(path)


def save_gif(env: Any, states: Any, path: Any, *, fps: float = 20.0, html: bool = True) -> None:
    """Write one episode (stacked ``[T, ...]`` or a list of states) to a GIF, and brax's HTML
    viewer of it beside (``<path>.html``) unless ``html=False``."""
    import imageio.v2 as imageio

    frames = host_frames(states, "step", 0)
    imageio.mimsave(
        os.fspath(path), [render_frame(env, s) for s in frames], duration=1000.0 / fps, loop=0
    )
    if html:
        save_html(env, frames, Path(path).with_suffix(".html"))
