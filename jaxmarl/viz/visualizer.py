"""JaxMARL's ``jaxmarl.viz.visualizer``: ``Visualizer`` and ``SMAXVisualizer`` over the families'
renderers (also importable from ``jaxmarl.viz``).

JaxMARL's tutorials collect one episode's states in a list and animate it::

    viz = Visualizer(env, state_seq)             # MPEVisualizer in jaxmarl.environments.mpe
    viz.animate(save_fname="episode.gif", view=False)

    viz = SMAXVisualizer(env, [(key, state, actions), ...])
    viz.animate(save_fname="smax.gif", view=False)

Both draw with the env family's own ``render`` module (``jaxmarl.render``), so there is one
renderer per family. Differences from JaxMARL's: ``SMAXVisualizer`` draws one frame per env step
(JaxMARL interpolates the SMAX world's sub-steps between them), and ``view=True`` shows the
frames in a matplotlib window only where matplotlib has an interactive backend.
matplotlib and imageio are the optional ``viz`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxmarl.render import renderer_module, save_episode_gif

__all__ = ["SMAXVisualizer", "Visualizer"]


class Visualizer:
    """Animates a list of one env's states (JaxMARL's ``Visualizer(env, state_seq)``)."""

    def __init__(self, env: Any, state_seq: Sequence[Any], reward_seq: Any = None):
        self.env = env
        self.state_seq = list(state_seq)
        self.reward_seq = reward_seq
        self.interval = 64  # milliseconds per frame, as JaxMARL's

    def states(self) -> list[Any]:
        return self.state_seq

    def animate(self, save_fname: str | None = None, view: bool = True) -> None:
        """Write a GIF to ``save_fname`` (if given) and, with ``view``, show the frames."""
        states = self.states()
        fps = 1000.0 / self.interval
        if save_fname is not None:
            save_episode_gif(self.env, states, save_fname, fps=fps)
        if view:
            self._show(states)

    def _show(self, states: list[Any]) -> None:
        import matplotlib.pyplot as plt

        if plt.get_backend().lower() == "agg":
            return  # no screen: nothing to show (save_fname is the way to keep the episode)
        module = renderer_module(self.env)
        if module is None:
            raise NotImplementedError(f"{type(self.env).__name__} has no renderer")
        env = getattr(self.env, "unwrapped", self.env)
        frames = [module.render_frame(env, state) for state in states]
        figure, ax = plt.subplots()
        ax.set_axis_off()
        image = ax.imshow(frames[0])
        for frame in frames:
            image.set_data(frame)
            plt.pause(self.interval / 1000.0)
        plt.show(block=True)
        plt.close(figure)


class SMAXVisualizer(Visualizer):
    """JaxMARL's SMAX visualiser: ``state_seq`` holds ``(key, state, actions)`` tuples."""

    def states(self) -> list[Any]:
        return [item[1] if isinstance(item, tuple) else item for item in self.state_seq]
