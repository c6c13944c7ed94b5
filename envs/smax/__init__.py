"""SMAX: StarCraft-style multi-agent micromanagement without the game engine.

``jaxmarl.make("SMAX", scenario="3m")`` (both teams controlled), ``HeuristicEnemySMAX``
(scripted enemy) and ``LearnedPolicyEnemySMAX`` (enemy driven by a given policy). See
``README.md`` in this folder for scenarios, observations, actions, rewards and the deviations
from JaxMARL 0.2.0.

Importing this package registers the family's ids and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

register_family(
    __name__,
    {
        "SMAX": "smax_env:SMAX",
        "HeuristicEnemySMAX": "heuristic_enemy_smax_env:HeuristicEnemySMAX",
        "LearnedPolicyEnemySMAX": "heuristic_enemy_smax_env:LearnedPolicyEnemySMAX",
    },
)

_EXPORTS = {
    "HeuristicPolicyState": "heuristic_enemy",
    "create_heuristic_policy": "heuristic_enemy",
    "get_heuristic_policy_initial_state": "heuristic_enemy",
    "EnemySMAX": "heuristic_enemy_smax_env",
    "EnemyState": "heuristic_enemy_smax_env",
    "HeuristicEnemySMAX": "heuristic_enemy_smax_env",
    "LearnedPolicyEnemySMAX": "heuristic_enemy_smax_env",
    "UniformRandomPolicy": "heuristic_enemy_smax_env",
    "render_frame": "render",
    "save_gif": "render",
    "MAP_NAME_TO_SCENARIO": "scenarios",
    "MAX_UNITS_PER_TEAM": "scenarios",
    "Scenario": "scenarios",
    "map_name_to_scenario": "scenarios",
    "register_scenario": "scenarios",
    "SMAX": "smax_env",
    "State": "smax_env",
    "UNIT_TYPE_NAMES": "units",
    "UNIT_TYPE_SHORTHANDS": "units",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
