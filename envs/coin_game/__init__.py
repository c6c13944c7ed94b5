"""Coin Game: two agents on a 3x3 torus collect red and blue coins (JaxMARL's ``coin_game``).

``jaxmarl.make("coin_game", ...)``; see ``README.md`` in this folder for observations, rules,
options and the deviations from JaxMARL 0.2.0.

Importing this package registers the family's id and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

# JaxMARL's id, kept verbatim so code written for JaxMARL runs unchanged.
register_family(__name__, {"coin_game": "coin_game:CoinGame"})

_EXPORTS = {
    "MOVES": "coin_game",
    "CoinGame": "coin_game",
    "CoinGameState": "coin_game",
    # render imports matplotlib/imageio only when called (optional ``viz`` extra).
    "render_frame": "render",
    "save_gif": "render",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
