"""JaxNav: differential-drive robots with 2-D lidar drive to goals through grid maps (JaxMARL's
``jaxnav``, Rutherford et al. 2024, arXiv 2408.15099).

``jaxmarl.make("jaxnav", ...)``; see ``README.md`` in this folder for observations, rules,
map ids and the deviations from JaxMARL 0.2.0.

Importing this package registers the family's id and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import ReportFlag, register_family

# JaxMARL's id, kept verbatim so code written for JaxMARL runs unchanged.
register_family(
    __name__,
    {"jaxnav": "jaxnav_env:JaxNav"},
    evaluate_flags=[
        ReportFlag(
            "--jaxnav-levels",
            env_id="jaxnav",
            metavar="LEVEL",
            help="JaxMARL's hand-made JaxNav test levels: level names or collections (test, "
            "single, multi, hard, corridor, just-long-corridor); one greedy episode per seed "
            "and level, levels with the run's number of robots",
            target="jaxnav_singletons:levels_report",
        )
    ],
)

_EXPORTS = {
    "JaxNav": "jaxnav_env",
    "State": "jaxnav_env",
    "EnvInstance": "jaxnav_env",
    "DISCRETE_ACTS": "jaxnav_env",
    "GridMap": "maps",
    "MAP_IDS": "maps",
    # render imports imageio only when a GIF is saved (optional ``viz`` extra).
    "render_frame": "render",
    "save_gif": "render",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
