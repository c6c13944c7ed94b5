"""JaxMARL's ``jaxmarl.viz``: its visualisers over this project's family renderers.

``Visualizer`` and ``SMAXVisualizer`` live in :mod:`jaxmarl.viz.visualizer` (JaxMARL's module
path) and ``OvercookedVisualizer`` in :mod:`jaxmarl.viz.overcooked_visualizer`.
"""

from jaxmarl.viz.visualizer import SMAXVisualizer, Visualizer

__all__ = ["SMAXVisualizer", "Visualizer"]
