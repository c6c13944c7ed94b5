"""SMAX: StarCraft-style multi-agent micromanagement without the game engine.

``jaxmarl.make("SMAX", scenario="3m")`` (both teams controlled), ``HeuristicEnemySMAX``
(scripted enemy) and ``LearnedPolicyEnemySMAX`` (enemy driven by a given policy). See
``README.md`` in this folder for scenarios, observations, actions, rewards and the deviations
from JaxMARL 0.2.0.
"""

from jaxmarl.envs.smax.heuristic_enemy import (
    HeuristicPolicyState,
    create_heuristic_policy,
    get_heuristic_policy_initial_state,
)
from jaxmarl.envs.smax.heuristic_enemy_smax_env import (
    EnemySMAX,
    EnemyState,
    HeuristicEnemySMAX,
    LearnedPolicyEnemySMAX,
    UniformRandomPolicy,
)
from jaxmarl.envs.smax.render import render_frame, save_gif
from jaxmarl.envs.smax.scenarios import (
    MAP_NAME_TO_SCENARIO,
    MAX_UNITS_PER_TEAM,
    Scenario,
    map_name_to_scenario,
    register_scenario,
)
from jaxmarl.envs.smax.smax_env import SMAX, State
from jaxmarl.envs.smax.units import UNIT_TYPE_NAMES, UNIT_TYPE_SHORTHANDS

__all__ = [
    "MAP_NAME_TO_SCENARIO",
    "MAX_UNITS_PER_TEAM",
    "SMAX",
    "UNIT_TYPE_NAMES",
    "UNIT_TYPE_SHORTHANDS",
    "EnemySMAX",
    "EnemyState",
    "HeuristicEnemySMAX",
    "HeuristicPolicyState",
    "LearnedPolicyEnemySMAX",
    "Scenario",
    "State",
    "UniformRandomPolicy",
    "create_heuristic_policy",
    "get_heuristic_policy_initial_state",
    "map_name_to_scenario",
    "register_scenario",
    "render_frame",
    "save_gif",
]
