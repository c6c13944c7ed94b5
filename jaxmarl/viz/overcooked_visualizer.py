"""JaxMARL's ``jaxmarl.viz.overcooked_visualizer``: ``OvercookedVisualizer`` over this project's
Overcooked renderer (``jaxmarl.envs.overcooked.render``).

JaxMARL's Overcooked scripts import it at the top and animate an episode at the end::

    viz = OvercookedVisualizer()
    viz.animate(state_seq, agent_view_size=5, filename="episode.gif")

The states carry their kitchen (``OvercookedState.layout_text``, static), so no env is needed;
``OvercookedVisualizer(env)`` draws with the env's layout instead. ``agent_view_size``
(JaxMARL's highlight of what the agents see) is accepted and not drawn: v1 agents see the
whole grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["OvercookedVisualizer"]


class OvercookedVisualizer:
    """Frames and GIFs of Overcooked states (JaxMARL's class of the same name)."""

    def __init__(self, env: Any = None):
        self.env = env

    def render(self, agent_view_size: Any, state: Any, env: Any = None, **_: Any) -> np.ndarray:
        """One state as an ``[H, W, 3]`` uint8 picture (JaxMARL opens a window; this returns
        the picture)."""
        from jaxmarl.envs.overcooked.render import render_frame

        return render_frame(self.env if env is None else env, state)

    def animate(
        self,
        state_seq: Sequence[Any] | Any,
        agent_view_size: Any = None,
        filename: str = "animation.gif",
        env: Any = None,
    ) -> None:
        """Write one episode's states (a list, or stacked ``[T, ...]``) as a GIF."""
        from jaxmarl.envs.overcooked.render import save_gif

        save_gif(self.env if env is None else env, state_seq, filename)
