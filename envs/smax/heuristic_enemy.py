"""The scripted SMAX policy (JaxMARL's heuristic), usable for either team.

Each unit, every step:

* if an opposing unit is visible and within its attack range, it attacks: the one it attacked
  last step if that one is still attackable, otherwise the closest (``attack_mode="closest"``)
  or a uniformly random one (``"random"``) among those in range;
* otherwise it moves (the cardinal direction best aligned with the goal) towards a random
  visible opposing unit, or, when it sees none, towards its default target: its start
  position rotated 180 degrees about the map centre (so both teams cross the middle).

The decision works on a small per-unit view (own position, attack range, offsets to the
opposing units in observation order, their visibility). ``create_heuristic_policy`` reads that
view from a unit-list observation, like JaxMARL's function of the same name;
:func:`team_views` reads it straight from the state, which is what the env uses (no need to
build the enemy's observations).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl.envs.smax.units import NUM_UNIT_TYPES

ATTACK_MODES = ("closest", "random")
# Movement actions 0..3 as directions: up, right, down, left.
_DIRECTIONS = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]], dtype=np.float32)
_FIRST_ATTACK_ACTION = 5


@struct.dataclass
class HeuristicPolicyState:
    """Memory of one scripted unit.

    Attributes:
        default_target: ``[2]`` float32, where to go when no opponent is visible
            (``[0, 0]`` with ``last_attacked_enemy == -1`` means "not set yet").
        last_attacked_enemy: ``[]`` int32, slot of the last attacked opponent, ``-1`` if none.
    """

    default_target: jax.Array
    last_attacked_enemy: jax.Array


def get_heuristic_policy_initial_state() -> HeuristicPolicyState:
    """The state of a unit that has not acted yet."""
    return HeuristicPolicyState(
        default_target=jnp.zeros((2,), dtype=jnp.float32),
        last_attacked_enemy=jnp.int32(-1),
    )


@struct.dataclass
class UnitView:
    """What the heuristic needs to know about one unit (leading axes allowed).

    Attributes:
        position: ``[2]`` own map position.
        attack_range: ``[]`` own attack range.
        offsets: ``[M, 2]`` opposing units' positions minus own, in attack-slot order.
        visible: ``[M]`` bool, the opposing unit is alive and within sight.
    """

    position: jax.Array
    attack_range: jax.Array
    offsets: jax.Array
    visible: jax.Array


def heuristic_action(
    key: jax.Array,
    memory: HeuristicPolicyState,
    view: UnitView,
    map_centre: np.ndarray,
    *,
    shoot: bool = True,
    attack_mode: str = "closest",
) -> tuple[jax.Array, HeuristicPolicyState]:
    """One unit's discrete action and updated memory (see the module docstring)."""
    attack_key, chase_key = jax.random.split(key)
    distance = jnp.linalg.norm(view.offsets, axis=-1)
    in_range = (distance < view.attack_range) & view.visible
    if attack_mode == "random":
        fresh = jax.random.categorical(attack_key, jnp.where(in_range, 0.0, -jnp.inf))
    else:
        fresh = jnp.argmin(jnp.where(in_range, distance, jnp.inf))
    last = memory.last_attacked_enemy
    keep = (last >= 0) & in_range[jnp.maximum(last, 0)]
    target = jnp.where(keep, last, fresh).astype(jnp.int32)
    last = jnp.where(in_range[target], target, -1).astype(jnp.int32)

    unset = jnp.all(memory.default_target == 0.0) & (memory.last_attacked_enemy == -1)
    mirrored = 2.0 * map_centre - view.position
    default_target = jnp.where(unset, mirrored, memory.default_target).astype(jnp.float32)
    chased = jax.random.categorical(chase_key, jnp.where(view.visible, 0.0, -jnp.inf))
    heading = jnp.where(jnp.any(view.visible), view.offsets[chased], default_target - view.position)
    move = jnp.argmax(jnp.asarray(_DIRECTIONS) @ heading)

    attack = jnp.any(in_range) & shoot
    action = jnp.where(attack, target + _FIRST_ATTACK_ACTION, move).astype(jnp.int32)
    return action, HeuristicPolicyState(default_target=default_target, last_attacked_enemy=last)


def _check_mode(attack_mode: str) -> str:
    if attack_mode not in ATTACK_MODES:
        raise ValueError(f"attack_mode must be one of {list(ATTACK_MODES)}, got {attack_mode!r}")
    return attack_mode


def view_from_obs(env: Any, team: int, obs: jax.Array) -> UnitView:
    """Read a :class:`UnitView` from one unit-list observation of a unit of ``team``."""
    num_features = len(env.unit_features)
    own_team, other_team = (env.num_allies, env.num_enemies)[:: 1 if team == 0 else -1]
    first_opponent = (own_team - 1) * num_features
    own = (own_team + other_team - 1) * num_features
    unit_type = jnp.argmax(obs[-NUM_UNIT_TYPES:])
    opponents = obs[first_opponent:own].reshape(other_team, num_features)
    sight = jnp.asarray(env.unit_type_sight_ranges)[unit_type]
    size = np.array([env.map_width, env.map_height], dtype=np.float32)
    return UnitView(
        position=obs[own + 1 : own + 3] * size,
        attack_range=jnp.asarray(env.unit_type_attack_ranges)[unit_type],
        offsets=opponents[:, 1:3] * sight,
        visible=opponents[:, 0] > 0,
    )


def team_views(env: Any, state: Any, team: int) -> UnitView:
    """:class:`UnitView` of every unit of ``team`` (leading axis), computed from the state."""
    a, n = env.num_allies, env.num_units
    own = np.arange(a) if team == 0 else np.arange(a, n)
    # Attack-slot order: allies target enemies by index, enemies target allies in reverse.
    opponents = np.arange(a, n) if team == 0 else np.arange(a)[::-1]
    positions, alive, types = state.unit_positions, state.unit_alive, state.unit_types
    offsets = positions[opponents][None, :, :] - positions[own][:, None, :]
    sight = jnp.asarray(env.unit_type_sight_ranges)[types[own]]
    visible = jnp.linalg.norm(offsets, axis=-1) < sight[:, None]
    visible = visible & alive[own][:, None] & alive[opponents][None, :]
    return UnitView(
        position=positions[own],
        attack_range=jnp.asarray(env.unit_type_attack_ranges)[types[own]],
        offsets=offsets,
        visible=visible,
    )


def create_heuristic_policy(env: Any, team: int, shoot: bool = True, attack_mode: str = "closest"):
    """JaxMARL's interface: ``policy(key, memory, obs) -> (action, memory)`` for one unit of
    ``team`` (0 allies, 1 enemies) from its unit-list observation; ``jax.vmap`` it over units.
    """
    if team not in (0, 1):
        raise ValueError(f"team must be 0 (allies) or 1 (enemies), got {team!r}")
    attack_mode = _check_mode(attack_mode)
    centre = np.array([env.map_width / 2, env.map_height / 2], dtype=np.float32)

    def policy(key: jax.Array, memory: HeuristicPolicyState, obs: jax.Array):
        view = view_from_obs(env, team, obs)
        return heuristic_action(key, memory, view, centre, shoot=shoot, attack_mode=attack_mode)

    return policy


def team_heuristic_actions(
    env: Any,
    key: jax.Array,
    memory: HeuristicPolicyState,
    state: Any,
    team: int,
    *,
    shoot: bool = True,
    attack_mode: str = "closest",
) -> tuple[jax.Array, HeuristicPolicyState]:
    """Actions ``[team size]`` int32 and memories of a whole team, read from the state."""
    views = team_views(env, state, team)
    centre = np.array([env.map_width / 2, env.map_height / 2], dtype=np.float32)
    keys = jax.random.split(key, views.position.shape[0])
    decide = lambda k, m, v: heuristic_action(  # noqa: E731
        k, m, v, centre, shoot=shoot, attack_mode=_check_mode(attack_mode)
    )
    return jax.vmap(decide)(keys, memory, views)
