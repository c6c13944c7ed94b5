"""Pictures of multi-agent MuJoCo episodes: a GIF drawn with NumPy, and brax's HTML viewer.

MuJoCo's own renderer needs an OpenGL context (EGL or OSMesa), which a headless CPU machine
without those libraries does not have, so ``save_gif`` draws the robot itself: the limbs'
capsules as lines and the links' origins (the joints) as dots, projected orthographically, the
camera following the root. The planar robots (hopper, walker2d, halfcheetah) are seen from the
side (x right, z up); the ant and the humanoid, whose limbs spread sideways, from above at an
angle (``"oblique"``), where a side view would stack their legs on one line. Marks on the
ground, fixed to the world, show how far the robot travels. Beside the GIF it writes brax's
interactive HTML viewer of the same episode (``<path>.html``, three.js in a browser; no OpenGL
needed here). Rendering runs on the host with NumPy copies of one environment's states (index
a batch first).

>>> frame = render_frame(env, state)              # [H, W, 3] uint8
>>> save_gif(env, states, "episode.gif", fps=20)  # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxmarl.render import host_frames

__all__ = ["VIEWS", "capsule_segments", "default_view", "render_frame", "save_gif", "save_html"]

_HEIGHT, _WIDTH = 240, 320
_METRES = 4.0  # width of the view in metres
# The root's point on the ground, as a fraction of the height from the bottom, per view.
_GROUND = {"side": 0.2, "oblique": 0.4}
_MARK_SPACING = 1.0  # metres between ground marks
_LINK = np.array([30, 90, 200], np.uint8)
_JOINT = np.array([220, 60, 40], np.uint8)
_GROUND_COLOUR = np.array([160, 160, 160], np.uint8)
VIEWS = ("side", "oblique")
_PLANAR = ("hopper", "walker2d", "halfcheetah")  # brax robots that move in the x-z plane


@functools.cache
def _batched_rotate():
    """brax's ``math.rotate`` over a batch, jitted once (brax is imported on first use)."""
    from brax import math as brax_math

    return jax.jit(jax.vmap(brax_math.rotate))


def _rotated(vectors: np.ndarray, quats: np.ndarray) -> np.ndarray:
    """``vectors [n, 3]`` each rotated by its unit quaternion ``quats [n, 4]`` (w, x, y, z)."""
    rotate = _batched_rotate()
    return np.asarray(rotate(np.asarray(vectors, np.float32), np.asarray(quats, np.float32)))


def capsule_segments(sys: Any, pos: np.ndarray, rot: np.ndarray | None) -> np.ndarray:
    """``[capsules, 2, 3]``: the world end points of every capsule's axis (the limbs' bones,
    feet included, which the link origins alone miss), from the links' positions and rotations.

    A capsule lies along its geom's local z, ``size[1]`` either side of its centre; geoms of the
    world body (the floor) are skipped. Systems without geom fields, or links without rotations,
    give no segments.
    """
    if not hasattr(sys, "geom_type") or rot is None:
        return np.zeros((0, 2, 3))
    from mujoco import mjtGeom

    kind, body = np.asarray(sys.geom_type), np.asarray(sys.geom_bodyid)
    # MuJoCo's body 0 is the world (the floor's); link i is body i + 1.
    keep = (kind == int(mjtGeom.mjGEOM_CAPSULE)) & (body > 0)
    link = body[keep] - 1
    half = np.asarray(sys.geom_size)[keep, 1]
    axis = _rotated(np.array([0.0, 0.0, 1.0]) * half[:, None], np.asarray(sys.geom_quat)[keep])
    ends = np.asarray(sys.geom_pos)[keep][:, None] + np.stack([-axis, axis], axis=1)
    in_world = _rotated(ends.reshape(-1, 3), np.repeat(np.asarray(rot)[link], 2, axis=0))
    return in_world.reshape(-1, 2, 3) + np.asarray(pos)[link][:, None]


def _camera(view: str) -> np.ndarray:
    """``[2, 3]``: world offsets (metres) to screen (right, up) offsets, orthographic."""
    if view == "side":
        return np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    # Turned 45 degrees about z and tilted 35 degrees down, so x and y offsets both show.
    azimuth, elevation = np.deg2rad(-45.0), np.deg2rad(35.0)
    right = np.array([np.cos(azimuth), -np.sin(azimuth), 0.0])
    forward = np.array([np.sin(azimuth), np.cos(azimuth), 0.0])
    up = np.cos(elevation) * np.array([0.0, 0.0, 1.0]) - np.sin(elevation) * forward
    return np.stack([right, up])


def default_view(env: Any) -> str:
    """``"side"`` for the planar robots, ``"oblique"`` for the ant and the humanoid."""
    return "side" if getattr(env.robot, "brax_name", "") in _PLANAR else "oblique"


def _line(frame: np.ndarray, a: np.ndarray, b: np.ndarray, colour: np.ndarray, half: int) -> None:
    """Paint the segment ``a``-``b`` (pixel rows, columns) ``2 half + 1`` pixels thick, clipped."""
    t = np.linspace(0.0, 1.0, max(2, int(np.abs(b - a).max()) + 1))[:, None]
    points = (a + t * (b - a)).astype(int)  # truncation, as int() of each coordinate
    inside = np.all((points >= half) & (points < np.array([_HEIGHT, _WIDTH]) - half), axis=1)
    offsets = np.arange(-half, half + 1)
    rows = points[inside, 0, None, None] + offsets[:, None]
    cols = points[inside, 1, None, None] + offsets[None, :]
    frame[rows, cols] = colour


def render_frame(env: Any, state: Any, *, view: str | None = None) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of one state: the limbs' capsules as lines, the links'
    origins (the joints) as dots.

    ``view``: ``"side"`` or ``"oblique"``; ``None`` picks by robot (``default_view``).
    """
    view = default_view(env) if view is None else view
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
    frame_of_links = jax.tree.map(np.asarray, state).brax_state.pipeline_state.x
    pos = np.asarray(frame_of_links.pos)  # [links, 3]
    if pos.ndim != 2:
        raise ValueError(
            f"expected the state of one environment (link positions [links, 3]), got "
            f"{pos.shape}; index the batch first"
        )
    camera = _camera(view)
    scale = _WIDTH / _METRES
    centre = np.array([pos[0, 0], pos[0, 1], 0.0])  # the root's point on the ground

    def pixel(p):
        right, up = camera @ (np.asarray(p, np.float64) - centre)
        return np.array([_HEIGHT * (1 - _GROUND[view]) - up * scale, _WIDTH / 2 + right * scale])

    frame = np.full((_HEIGHT, _WIDTH, 3), 250, np.uint8)
    # Ground marks fixed to the world, so the robot's travel shows although the camera follows.
    reach = _METRES if view == "side" else 2 * _METRES
    first = np.floor((centre[:2] - reach) / _MARK_SPACING) * _MARK_SPACING
    marks = np.arange(0.0, 2 * reach + _MARK_SPACING, _MARK_SPACING)
    if view == "side":
        _line(
            frame, pixel(centre - [reach, 0, 0]), pixel(centre + [reach, 0, 0]), _GROUND_COLOUR, 0
        )
        for x in first[0] + marks:
            top = pixel([x, centre[1], 0.0])
            _line(frame, top, top + [6.0, 0.0], _GROUND_COLOUR, 0)
    else:
        for offset in marks:
            x, y = first[0] + offset, first[1] + offset
            _line(
                frame,
                pixel([x, first[1], 0]),
                pixel([x, first[1] + 2 * reach, 0]),
                _GROUND_COLOUR,
                0,
            )
            _line(
                frame,
                pixel([first[0], y, 0]),
                pixel([first[0] + 2 * reach, y, 0]),
                _GROUND_COLOUR,
                0,
            )
    bones = capsule_segments(env.sys, pos, getattr(frame_of_links, "rot", None))
    if not len(bones):  # no geoms: join each link to its parent instead
        parents = np.asarray(env.sys.link_parents)
        bones = np.array([(pos[p], pos[k]) for k, p in enumerate(parents) if p >= 0])
    for start, end in bones:
        _line(frame, pixel(start), pixel(end), _LINK, 1)
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


def save_gif(
    env: Any,
    states: Any,
    path: Any,
    *,
    fps: float = 20.0,
    html: bool = True,
    view: str | None = None,
) -> None:
    """Write one episode (stacked ``[T, ...]`` or a list of states) to a GIF, and brax's HTML
    viewer of it beside (``<path>.html``) unless ``html=False``. ``view`` as in
    ``render_frame``."""
    import imageio.v2 as imageio

    frames = host_frames(states, "step", 0)
    pictures = [render_frame(env, s, view=view) for s in frames]
    imageio.mimsave(os.fspath(path), pictures, duration=1000.0 / fps, loop=0)
    if html:
        save_html(env, frames, Path(path).with_suffix(".html"))
