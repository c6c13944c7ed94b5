"""JaxMARL's ``jaxnav_viz`` module path: ``JaxNavVisualizer`` over this family's renderer.

JaxMARL's JaxNav docs animate an episode so::

    viz = JaxNavVisualizer(env, obs_list, env_state_list)
    viz.animate("episode.gif")

Frames are drawn by :func:`jaxmarl.envs.jaxnav.render.render_frame` (robots, lidar beams,
goals, map). JaxMARL's drawing switches (``plot_lidar``, ``plot_path``, ...) and its title are
accepted and not used; the observations are not needed to draw a state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxmarl.viz.visualizer import Visualizer

__all__ = ["JaxNavVisualizer"]


class JaxNavVisualizer(Visualizer):
    """JaxMARL's ``JaxNavVisualizer(env, obs_seq, state_seq, reward_seq=None, ...)``."""

    def __init__(
        self,
        env: Any,
        obs_seq: Sequence[Any],
        state_seq: Sequence[Any],
        reward_seq: Any = None,
        done_frames: Any = None,
        title_text: str | None = None,
        **drawing_switches: bool,
    ):
        super().__init__(env, state_seq, reward_seq)
        self.obs_seq = list(obs_seq)
        self.interval = 15  # milliseconds per frame, as JaxMARL's

    def animate(self, save_fname: str | None = None, view: bool = False) -> None:
        """Write a GIF to ``save_fname`` (if given); ``view`` shows it (JaxMARL's default: no)."""
        super().animate(save_fname, view=view)
