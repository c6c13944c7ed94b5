"""JaxMARL's ``jaxmarl.viz.overcooked_v2_visualizer``: ``OvercookedV2Visualizer`` over this
project's OvercookedV2 renderer (``jaxmarl.envs.overcooked.v2.render``)::

    viz = OvercookedV2Visualizer()
    viz.animate(state_seq, filename="episode.gif")   # states stacked [T, ...], or a list

A state holds everything drawn (the grid, the agents, the recipe; its ingredient permutations
give the number of ingredients), so no env is needed. ``render`` returns the picture where
JaxMARL opens a window. ``tile_size``, ``subdivs`` and ``agent_view_size`` (JaxMARL's
highlight of what the agents see) are accepted and not used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["OvercookedV2Visualizer"]


class OvercookedV2Visualizer:
    """Frames and GIFs of OvercookedV2 states (JaxMARL's class of the same name)."""

    def __init__(self, tile_size: int = 32, subdivs: int = 3):
        self.tile_size = tile_size
        self.subdivs = subdivs

    def render(self, state: Any, agent_view_size: Any = None) -> np.ndarray:
        """One state as an ``[H, W, 3]`` uint8 picture."""
        from jaxmarl.envs.overcooked.v2.render import render_frame

        return render_frame(None, state)

    def render_sequence(self, state_seq: Sequence[Any] | Any, agent_view_size: Any = None):
        """``[T, H, W, 3]`` uint8 pictures of one episode's states."""
        from jaxmarl.envs.overcooked.v2.render import render_frames

        return np.stack(render_frames(None, state_seq))

    def animate(
        self,
        state_seq: Sequence[Any] | Any,
        filename: str = "animation.gif",
        agent_view_size: Any = None,
    ) -> None:
        """Write one episode's states (stacked ``[T, ...]``, as JaxMARL's, or a list) as a GIF."""
        from jaxmarl.envs.overcooked.v2.render import save_gif

        save_gif(None, state_seq, filename)
