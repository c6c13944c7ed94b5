"""STORM: matrix games played in a grid world by collecting coins and zapping (JaxMARL's ``storm``).

``jaxmarl.make("storm", num_agents=...)`` (in the grid, 2 to 8 players),
``jaxmarl.make("storm_2p")`` (in the grid, two players) and ``jaxmarl.make("storm_np", ...)``
(in the matrix, N players); see ``README.md`` in this folder for observations, rules, options,
the mapping from JaxMARL's form and the deviations from JaxMARL 0.2.0.

Importing this package registers the family's ids and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

# JaxMARL's ids, kept verbatim so code written for JaxMARL runs unchanged.
register_family(
    __name__,
    {
        "storm": "storm:InTheGrid",
        "storm_2p": "storm_2p:InTheGrid2p",
        "storm_np": "storm_np:InTheMatrix",
    },
)

_EXPORTS = {
    "InTheGrid": "storm",
    "StormState": "storm",
    "InTheGrid2p": "storm_2p",
    "InTheGrid_2p": "storm_2p",
    "Storm2pState": "storm_2p",
    "InTheMatrix": "storm_np",
    "StormNpState": "storm_np",
    # render imports matplotlib/imageio only when called (optional ``viz`` extra).
    "render_frame": "render",
    "save_gif": "render",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
