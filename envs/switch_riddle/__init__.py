"""Switch riddle: the prisoners-and-light-bulb puzzle of Foerster et al. (2016).

``jaxmarl.make("switch_riddle", num_agents=3)``. See ``README.md`` in this folder for the
observations, actions, rewards and the deviations from JaxMARL 0.2.0.

Importing this package registers the family's id and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

# JaxMARL's id, kept verbatim so code written for JaxMARL runs unchanged.
register_family(__name__, {"switch_riddle": "switch_riddle:SwitchRiddle"})

_EXPORTS = {
    "GAME_ACTIONS": "switch_riddle",
    "State": "switch_riddle",
    "SwitchRiddle": "switch_riddle",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
