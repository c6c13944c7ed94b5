"""Pictures of MPE states: RGB frames, matplotlib figures and GIFs.

matplotlib and imageio are the optional ``viz`` extra (``pip install jaxmarl[viz]``); they
are imported inside the functions, so importing this module costs nothing without them.
Rendering runs on the host with NumPy copies of one environment's state (index a batch
first: ``jax.tree.map(lambda x: x[i], states)``).

>>> frame = render_frame(env, state)            # [H, W, 3] uint8
>>> fig = plot_state(env, state)                # matplotlib Figure, e.g. for a notebook
>>> save_gif(env, states, "episode.gif", fps=10)  # states: stacked [T, ...] or a list
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from jaxmarl.envs.mpe._world import MPEBase, State
from jaxmarl.render import host_frames
from jaxmarl.viz import Visualizer as MPEVisualizer  # JaxMARL's name for it

__all__ = ["MPEVisualizer", "plot_state", "render_frame", "save_gif"]

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_MIN_HALF_WIDTH = 1.2  # the arena is [-1, 1]^2; keep a margin around it


def _host_state(state: State) -> State:
    host = jax.tree.map(np.asarray, state)
    if host.p_pos.ndim != 2:
        raise ValueError(
            f"expected the state of one environment (p_pos [num_entities, 2]), got p_pos of "
            f"shape {host.p_pos.shape}; index the batch first, e.g. "
            f"jax.tree.map(lambda x: x[0], state)"
        )
    return host


def _half_width(states: Sequence[State]) -> float:
    reach = max(float(np.max(np.abs(s.p_pos))) for s in states)
    return max(_MIN_HALF_WIDTH, 1.1 * reach)


class _Painter:
    """One matplotlib figure whose artists are moved from state to state."""

    def __init__(self, env: MPEBase, half_width: float, ax: Any = None, size: float = 5.0):
        from matplotlib.figure import Figure
        from matplotlib.patches import Circle

        if ax is None:
            self.figure = Figure(figsize=(size, size), dpi=100)
            ax = self.figure.add_axes((0.0, 0.0, 1.0, 1.0))
        else:
            self.figure = ax.figure
        self.env = env
        self.ax = ax
        ax.set_xlim(-half_width, half_width)
        ax.set_ylim(-half_width, half_width)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.add_patch(
            _square(half=1.0, edge="0.8")  # the arena edge, where bound penalties start
        )
        self.circles = []
        for i in range(env.num_entities):
            is_agent = i < env.num_agents
            circle = Circle(
                (0.0, 0.0),
                float(env.rad[i]),
                linewidth=1.0 if is_agent else 0.0,
                edgecolor="black",
                zorder=3 if is_agent else 2,
            )
            ax.add_patch(circle)
            self.circles.append(circle)
        corner = -0.97 * half_width
        self.step_text = ax.text(corner, -corner, "", va="top", fontsize=9)
        self.speakers = [i for i in range(env.num_agents) if env._speaks[i]]
        self.message_texts = [
            ax.text(corner, corner + 0.09 * half_width * k, "", fontsize=8)
            for k in range(len(self.speakers))
        ]

    def draw(self, state: State) -> None:
        colours = np.clip(self.env.entity_colours(state), 0.0, 1.0)
        for i, circle in enumerate(self.circles):
            circle.center = (float(state.p_pos[i, 0]), float(state.p_pos[i, 1]))
            circle.set_facecolor(tuple(colours[i]))
        self.step_text.set_text(f"{self.env.name}  step {int(state.step)}")
        for text, i in zip(self.message_texts, self.speakers):
            text.set_text(f"{self.env.agents[i]} says {_word(self.env, state.c[i])}")

    def rgb(self) -> np.ndarray:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = self.figure.canvas
        if not isinstance(canvas, FigureCanvasAgg):
            canvas = FigureCanvasAgg(self.figure)
        canvas.draw()
        return np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3], dtype=np.uint8)


def _square(half: float, edge: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((-half, -half), 2 * half, 2 * half, fill=False, edgecolor=edge, zorder=1)


def _word(env: MPEBase, message: np.ndarray) -> str:
    if not np.any(message):
        return "_"
    letter = _ALPHABET[int(np.argmax(message)) % len(_ALPHABET)]
    if env.discrete:
        return letter
    if len(message) <= 4:
        return "[" + ", ".join(f"{x:.2f}" for x in message) + "]"
    return f"~{letter} (max {float(np.max(message)):.2f})"  # long vectors do not fit


def render_frame(env: MPEBase, state: State, *, size: float = 5.0) -> np.ndarray:
    """One state as an RGB image.

    Args:
        env: the MPE environment the state belongs to.
        state: one environment's state (not a batch).
        size: figure side in inches (100 dpi), so the image is ``100 * size`` pixels square.

    Returns:
        ``[H, W, 3]`` uint8 array.
    """
    host = _host_state(state)
    painter = _Painter(env, _half_width([host]), size=size)
    painter.draw(host)
    return painter.rgb()


def plot_state(env: MPEBase, state: State, ax: Any = None) -> Any:
    """Draw one state into ``ax`` (or a new figure) and return the matplotlib ``Figure``."""
    host = _host_state(state)
    painter = _Painter(env, _half_width([host]), ax=ax)
    painter.draw(host)
    return painter.figure


def save_gif(
    env: MPEBase,
    states_sequence: Any,
    path: str | os.PathLike,
    *,
    fps: float = 10.0,
    size: float = 5.0,
) -> str:
    """Write an animated GIF of a sequence of states.

    Args:
        env: the MPE environment.
        states_sequence: a state pytree stacked over time (``p_pos`` ``[T, num_entities,
            2]``, e.g. the output of ``jax.lax.scan``) or a list of single states.
        path: output file (``.gif``).
        fps: frames per second.
        size: frame side in inches (100 dpi).

    Returns:
        ``path`` as a string.
    """
    import imageio.v2 as imageio

    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    states = host_frames(states_sequence, "p_pos", 2)
    if not states:
        raise ValueError("states_sequence is empty")
    painter = _Painter(env, _half_width(states), size=size)
    frames = []
    for state in states:
        painter.draw(state)
        frames.append(painter.rgb())
    imageio.mimsave(os.fspath(path), frames, duration=1000.0 / fps, loop=0)
    return os.fspath(path)
