"""OvercookedV2 (``jaxmarl.make("overcooked_v2", ...)``): several ingredients and recipes,
recipe indicators and partial observability; see ``README.md`` in this folder for the rules,
observations and the deviations from JaxMARL 0.2.0.

Nothing here imports the v1 modules of ``jaxmarl.envs.overcooked``. Public names load from
their submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports

_EXPORTS = {
    "OvercookedV2": "overcooked_v2",
    "OvercookedV2State": "overcooked_v2",
    "State": "overcooked_v2",
    "Agents": "overcooked_v2",
    "Position": "overcooked_v2",
    "ObservationType": "overcooked_v2",
    "Layout": "layouts",
    "overcooked_v2_layouts": "layouts",
    # render imports imageio only when called (optional ``viz`` extra).
    "render_frame": "render",
    "save_gif": "render",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
