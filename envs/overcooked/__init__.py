"""Overcooked: two cooks make and serve onion soups (JaxMARL's ``overcooked``), and
OvercookedV2 (``overcooked_v2``: several recipes, partial observability) in the ``v2``
subpackage.

``jaxmarl.make("overcooked", layout="cramped_room")``; see ``README.md`` in this folder for
the rules, observations, layouts and the deviations from JaxMARL 0.2.0 and overcooked-ai, and
``v2/README.md`` for OvercookedV2.

Importing this package registers the family's ids and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

# JaxMARL's id, kept verbatim so code written for JaxMARL runs unchanged.
register_family(
    __name__,
    {
        "overcooked": "overcooked:Overcooked",
        "overcooked_v2": "v2.overcooked_v2:OvercookedV2",
    },
)

_EXPORTS = {
    "Overcooked": "overcooked",
    "OvercookedState": "overcooked",
    "Layout": "layouts",
    "get_layout": "layouts",
    "overcooked_layouts": "layouts",
    "parse_layout": "layouts",
    "register_layout": "layouts",
    # render imports matplotlib/imageio only when called (optional ``viz`` extra).
    "render_frame": "render",
    "save_gif": "render",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
