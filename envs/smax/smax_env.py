"""SMAX: StarCraft-style unit micromanagement in pure JAX (JaxMARL's ``SMAX``, vectorised).

Two teams of units (allies ``ally_0 ..``, enemies ``enemy_0 ..``) fight on an open
``map_width x map_height`` map. Every env step runs ``world_steps_per_env_step`` world steps of
``time_per_step`` seconds each; in every world step, all at once, each living unit moves by its
decoded movement (clipped to the map) and attacks its chosen target if the target is alive, in
range (measured before the move) and the attacker's weapon is ready; then units touching a wall
die (``walls_cause_death``), units with no health die, and overlapping living units are pushed
apart. Dead units are frozen: they do not move, attack, or cool down, and cannot be targeted.

All per-unit work is vectorised over units and unit pairs (no per-unit ``vmap`` of ``cond``s);
the cooldown noise of every world step is drawn in one call. Shapes are static: the number of
units is fixed by the scenario and death is an alive mask.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.env import State as BaseState
from jaxmarl.envs.smax.distributions import smacv2_positions, smacv2_unit_types
from jaxmarl.envs.smax.scenarios import Scenario, resolve_scenario
from jaxmarl.envs.smax.units import (
    DEFAULT_UNIT_TYPES,
    NUM_UNIT_TYPES,
    UNIT_TYPE_NAMES,
    UNIT_TYPE_SHORTHANDS,
    UnitTypeTable,
)
from jaxmarl.typing import Actions, AvailActions, Dones, Infos, Observations, Rewards

UNIT_LIST_OBS = "unit_list"
CONIC_OBS = "conic"
DISCRETE_ACT = "discrete"
CONTINUOUS_ACT = "continuous"

NUM_MOVEMENT_ACTIONS = 5  # up (+y), right (+x), down (-y), left (-x), stop
STOP_ACTION = 4
START_NOISE = 2.0  # default start positions: team centre + U(-2, 2) per coordinate
CONIC_SECTIONS = 32
CONIC_UNITS_PER_SECTION = 2

# Movement of discrete actions 0..3 and of "stop" (row 4). JaxMARL encodes diagonal unit vectors
# and rotates them 45 degrees; evaluating that in float32 gives these entries (0.99999994 rather
# than 1), kept so that positions agree with JaxMARL's to the last bit.
_C = np.float32(1.0) / np.sqrt(np.float32(2.0))
_ONE = np.float32(_C * _C + _C * _C)
MOVE_VECTORS = np.array(
    [[0.0, _ONE], [_ONE, 0.0], [0.0, -_ONE], [-_ONE, 0.0], [0.0, 0.0]], dtype=np.float32
)

OWN_FEATURES = ("health", "position_x", "position_y", "weapon_cooldown") + tuple(
    f"unit_type_bit_{i}" for i in range(NUM_UNIT_TYPES)
)
UNIT_FEATURES = (
    "health",
    "position_x",
    "position_y",
    "last_movement_x",
    "last_movement_y",
    "last_targeted",
    "weapon_cooldown",
) + tuple(f"unit_type_bits_{i}" for i in range(NUM_UNIT_TYPES))
CONTINUOUS_ACTION_DIMS = ("shoot_last_enemy", "do_shoot", "coordinate_1", "coordinate_2")


@struct.dataclass
class State(BaseState):
    """SMAX state (JaxMARL's field names). ``N = num_allies + num_enemies``; allies first.

    Attributes:
        done: ``[]`` bool, the episode has ended (a team is wiped out or the time limit).
        step: ``[]`` int32, env steps taken in this episode.
        unit_positions: ``[N, 2]`` float32, map coordinates.
        unit_alive: ``[N]`` bool.
        unit_teams: ``[N]`` int32, 0 for allies, 1 for enemies.
        unit_health: ``[N]`` float32 hit points (0 when dead).
        unit_types: ``[N]`` int32 unit-type ids (``units.UNIT_TYPE_NAMES``).
        unit_weapon_cooldowns: ``[N]`` float32 seconds until the weapon is ready (<= 0: ready).
        prev_movement_actions: ``[N, 2]`` float32, last decoded movement vector.
        prev_attack_actions: ``[N]`` int32, last attack action (``5 + target slot``; 0: none).
    """

    unit_positions: jax.Array
    unit_alive: jax.Array
    unit_teams: jax.Array
    unit_health: jax.Array
    unit_types: jax.Array
    unit_weapon_cooldowns: jax.Array
    prev_movement_actions: jax.Array
    prev_attack_actions: jax.Array


def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def _positive(name: str, value: Any, integer: bool = False) -> Any:
    number = int(value) if integer else float(value)
    if (integer and number != value) or isinstance(value, bool) or not number > 0:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind} > 0, got {value!r}")
    return number


class SMAX(MultiAgentEnv):
    """Both teams controlled: every unit is an agent (``ally_i`` then ``enemy_j``).

    Observation (``observation_type="unit_list"``, JaxMARL's layout): ``Box(-1, 1, (D,))``
    float32 with ``D = 13 (N - 1) + 10``. For each other unit, 13 features: health fraction,
    position relative to the observer divided by the observer's sight range (2), its last
    movement (2) and last attack action divided by its largest action index (zero for enemies
    unless ``see_enemy_actions``), weapon cooldown fraction, unit-type one-hot (6); all zero
    unless both units are alive and the other is within sight. Allies observe units in index
    order, enemies in reverse index order, skipping themselves. Then the observer's own 10
    features: health fraction, position / map size (2), cooldown fraction, type one-hot (6);
    zero when dead. ``"conic"``: 32 angular sections around the unit, the first two living
    visible units (by index) of each section (13 features each), then the own features:
    ``D = 13 * 64 + 10``.

    Action (``action_type="discrete"``): ``Discrete(5 + T)``, ``T`` the size of the other team:
    0 up (+y), 1 right (+x), 2 down, 3 left, 4 stop, ``5 + k`` attack target slot ``k``
    (allies: ``enemy_k``; enemies: ``ally_{A-1-k}``, their observation order). An attack on a
    dead or out-of-range target, or with the weapon cooling down, does nothing. Out-of-range
    values act as stop; dead units' actions are ignored. ``"continuous"``: ``Box(0, 1, (4,))``
    as in JaxMARL (see the README); an action with a NaN or infinite entry is stop.

    Reward per team: the damage dealt this step as a fraction of each enemy unit's maximum
    health, summed over the other team and divided by its size, plus ``won_battle_bonus`` when
    the other team is wiped out and this one is not (``use_self_play_reward``: no damage term,
    and ``-won_battle_bonus`` for the team that loses).

    Episode: terminated when a team has no living unit (``infos["won"]``: the allies won);
    truncated after ``max_steps`` steps. ``dones[agent]`` is true for dead units and for every
    unit once the episode is over.

    State: :class:`State`. ``get_avail_actions``: bool masks (movement if alive; stop always;
    attacks on living targets in range). ``get_world_state``: ``[12 N]`` float32, per unit
    health fraction, position, cooldown and type one-hot (zero when dead), then teams and types.

    Example::

        env = SMAX(scenario="3m")
        obs, state = env.reset(jax.random.key(0))
        actions = {a: jnp.int32(4) for a in env.agents}  # everybody stops
        obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    observations_from_state = True  # reset/step_env return get_obs(state)

    def __init__(
        self,
        num_allies: int = 5,
        num_enemies: int = 5,
        map_width: float = 32,
        map_height: float = 32,
        world_steps_per_env_step: int = 8,
        time_per_step: float = 1.0 / 16,
        scenario: Scenario | str | None = None,
        unit_type_names: Sequence[str] = UNIT_TYPE_NAMES,
        unit_type_shorthands: Sequence[str] = UNIT_TYPE_SHORTHANDS,
        unit_type_velocities: Any = DEFAULT_UNIT_TYPES.velocities,
        unit_type_attacks: Any = DEFAULT_UNIT_TYPES.attacks,
        unit_type_attack_ranges: Any = DEFAULT_UNIT_TYPES.attack_ranges,
        unit_type_sight_ranges: Any = DEFAULT_UNIT_TYPES.sight_ranges,
        unit_type_radiuses: Any = DEFAULT_UNIT_TYPES.radiuses,
        unit_type_health: Any = DEFAULT_UNIT_TYPES.health,
        unit_type_weapon_cooldowns: Any = DEFAULT_UNIT_TYPES.weapon_cooldowns,
        use_self_play_reward: bool = False,
        see_enemy_actions: bool = True,
        won_battle_bonus: float = 1.0,
        walls_cause_death: bool = True,
        max_steps: int = 100,
        smacv2_position_generation: bool = False,
        smacv2_unit_type_generation: bool = False,
        observation_type: str = UNIT_LIST_OBS,
        action_type: str = DISCRETE_ACT,
    ) -> None:
        self.scenario = resolve_scenario(scenario, num_allies, num_enemies)
        self.num_allies = self.scenario.num_allies
        self.num_enemies = self.scenario.num_enemies
        n = self.num_units = self.num_allies + self.num_enemies
        self.smacv2_position_generation = bool(
            smacv2_position_generation or self.scenario.smacv2_position_generation
        )
        self.smacv2_unit_type_generation = bool(
            smacv2_unit_type_generation or self.scenario.smacv2_unit_type_generation
        )
        if len(unit_type_names) != NUM_UNIT_TYPES or len(unit_type_shorthands) != NUM_UNIT_TYPES:
            raise ValueError(f"unit_type_names and unit_type_shorthands need {NUM_UNIT_TYPES} each")
        self.unit_type_names = list(unit_type_names)
        self.unit_type_shorthands = list(unit_type_shorthands)
        self.unit_stats = UnitTypeTable(
            velocities=unit_type_velocities,
            attacks=unit_type_attacks,
            attack_ranges=unit_type_attack_ranges,
            sight_ranges=unit_type_sight_ranges,
            radiuses=unit_type_radiuses,
            health=unit_type_health,
            weapon_cooldowns=unit_type_weapon_cooldowns,
        )
        # JaxMARL's attribute names for the same statistics.
        self.unit_type_velocities = self.unit_stats.velocities
        self.unit_type_attacks = self.unit_stats.attacks
        self.unit_type_attack_ranges = self.unit_stats.attack_ranges
        self.unit_type_sight_ranges = self.unit_stats.sight_ranges
        self.unit_type_radiuses = self.unit_stats.radiuses
        self.unit_type_health = self.unit_stats.health
        self.unit_type_weapon_cooldowns = self.unit_stats.weapon_cooldowns
        self.unit_type_bits = NUM_UNIT_TYPES

        self.map_width = _positive("map_width", map_width)
        self.map_height = _positive("map_height", map_height)
        self.world_steps_per_env_step = _positive(
            "world_steps_per_env_step", world_steps_per_env_step, integer=True
        )
        self.time_per_step = _positive("time_per_step", time_per_step)
        self.max_steps = _positive("max_steps", max_steps, integer=True)
        self.use_self_play_reward = bool(use_self_play_reward)
        self.see_enemy_actions = bool(see_enemy_actions)
        self.won_battle_bonus = float(won_battle_bonus)
        self.walls_cause_death = bool(walls_cause_death)
        self.observation_type = _check_choice(
            "observation_type", observation_type, (UNIT_LIST_OBS, CONIC_OBS)
        )
        self.action_type = _check_choice("action_type", action_type, (DISCRETE_ACT, CONTINUOUS_ACT))

        self.num_movement_actions = NUM_MOVEMENT_ACTIONS
        self.num_ally_actions = self.num_enemies + NUM_MOVEMENT_ACTIONS
        self.num_enemy_actions = self.num_allies + NUM_MOVEMENT_ACTIONS
        self.own_features = list(OWN_FEATURES)
        self.unit_features = list(UNIT_FEATURES)
        self.continuous_action_dims = list(CONTINUOUS_ACTION_DIMS)
        self.num_sections = CONIC_SECTIONS
        self.max_units_per_section = CONIC_UNITS_PER_SECTION
        self.state_size = (len(OWN_FEATURES) + 2) * n

        # Static per-unit tables (NumPy: compile-time constants).
        self._is_ally = np.arange(n) < self.num_allies
        self.teams = np.where(self._is_ally, 0, 1).astype(np.int32)
        self._num_actions = np.where(self._is_ally, self.num_ally_actions, self.num_enemy_actions)
        self._max_action = (self._num_actions - 1).astype(np.float32)
        self._map_size = np.array([self.map_width, self.map_height], dtype=np.float32)
        same_team = self.teams[:, None] == self.teams[None, :]
        # Unit-list order as flat [observer * N + observed] indices: allies see every other
        # unit by increasing index, enemies by decreasing index (matching their attack slots).
        order = np.array([[j for j in range(n) if j != i] for i in range(n)]).reshape(n, n - 1)
        order[self._is_ally == 0] = order[self._is_ally == 0, ::-1]
        self._pair_order = (np.arange(n)[:, None] * n + order).reshape(-1).astype(np.int32)
        # [observer, observed]: last actions are visible within a team, or everywhere.
        self._sees_actions = (same_team | self.see_enemy_actions).astype(np.float32)

        self.agents = [f"ally_{i}" for i in range(self.num_allies)] + [
            f"enemy_{i}" for i in range(self.num_enemies)
        ]
        self.num_agents = len(self.agents)
        self.agent_ids = {agent: i for i, agent in enumerate(self.agents)}
        self.obs_size = self._obs_size()
        self.observation_spaces = {
            agent: spaces.Box(-1.0, 1.0, (self.obs_size,), jnp.float32) for agent in self.agents
        }
        self.action_spaces = {
            agent: self._action_space_of(i) for i, agent in enumerate(self.agents)
        }

    # ------------------------------------------------------------------ static layout
    def _obs_size(self) -> int:
        own = len(OWN_FEATURES)
        if self.observation_type == UNIT_LIST_OBS:
            return len(UNIT_FEATURES) * (self.num_units - 1) + own
        return len(UNIT_FEATURES) * CONIC_SECTIONS * CONIC_UNITS_PER_SECTION + own

    def _action_space_of(self, unit: int) -> spaces.Space:
        if self.action_type == DISCRETE_ACT:
            return spaces.Discrete(int(self._num_actions[unit]))
        return spaces.Box(0.0, 1.0, (len(CONTINUOUS_ACTION_DIMS),), jnp.float32)

    def noop_action(self, agent: str) -> jax.Array:
        """Stop: discrete ``4``; continuous ``(0, 1, 0, 0)`` (move, by ``r = 0``).

        The base class's ``step`` puts it in place of a continuous action with a NaN or an
        infinite entry (all zeros would attack the previous target).
        """
        if self.action_type == DISCRETE_ACT:
            return jnp.int32(STOP_ACTION)
        return jnp.asarray([0.0, 1.0, 0.0, 0.0], jnp.float32)

    # ------------------------------------------------------------------ reset
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, State]:
        state = self.initial_state(key)
        return self.get_obs(state), state

    def initial_state(self, key: jax.Array) -> State:
        """A fresh battle: start positions (pushed apart), full health, weapons ready."""
        position_key, type_key = jax.random.split(key)
        n, a, e = self.num_units, self.num_allies, self.num_enemies
        if self.smacv2_position_generation:
            positions = smacv2_positions(position_key, a, e, self.map_width, self.map_height)
        else:
            centres = np.where(self._is_ally[:, None], [0.25, 0.5], [0.75, 0.5]) * self._map_size
            noise = jax.random.uniform(
                position_key, (n, 2), minval=-START_NOISE, maxval=START_NOISE
            )
            positions = centres.astype(np.float32) + noise
        if self.smacv2_unit_type_generation:
            unit_types = smacv2_unit_types(type_key, a, e)
        else:
            unit_types = jnp.asarray(self.scenario.unit_types, dtype=jnp.int32)
        alive = jnp.ones((n,), dtype=jnp.bool_)
        radius = jnp.asarray(self.unit_stats.radiuses)[unit_types]
        x, y = self._push_apart(positions[:, 0], positions[:, 1], alive, radius)
        positions = jnp.stack([x, y], axis=-1)
        return State(
            done=jnp.bool_(False),
            step=jnp.int32(0),
            unit_positions=positions,
            unit_alive=alive,
            unit_teams=jnp.asarray(self.teams),
            unit_health=jnp.asarray(self.unit_stats.health)[unit_types],
            unit_types=unit_types,
            unit_weapon_cooldowns=jnp.zeros((n,), dtype=jnp.float32),
            prev_movement_actions=jnp.zeros((n, 2), dtype=jnp.float32),
            prev_attack_actions=jnp.zeros((n,), dtype=jnp.int32),
        )

    # ------------------------------------------------------------------ step
    def step_env(
        self, key: jax.Array, state: State, actions: Actions
    ) -> tuple[Observations, State, Rewards, Dones, Infos]:
        decode_key, world_key = jax.random.split(key)
        stacked = jnp.stack([jnp.asarray(actions[agent]) for agent in self.agents])
        movement, attack = self.decode_actions(decode_key, state, stacked)
        return self.step_decoded(world_key, state, movement, attack)

    def step_decoded(
        self, key: jax.Array, state: State, movement: jax.Array, attack: jax.Array
    ) -> tuple[Observations, State, Rewards, Dones, Infos]:
        """One env step from decoded actions (``movement [N, 2]``, ``attack [N]`` int32)."""
        noise = self.cooldown_noise(key)
        next_state = self.simulate(state, movement, attack, noise)
        return self._outcome(state, next_state)

    def cooldown_noise(self, key: jax.Array) -> jax.Array:
        """``[world_steps, N]`` float32 weapon-cooldown deviations, ``U(-dt, 2 dt)``.

        SMAX randomises the cooldown of every shot (pysc2 adds similar jitter); one draw per
        unit and world step, all at once.
        """
        dt = self.time_per_step
        shape = (self.world_steps_per_env_step, self.num_units)
        return jax.random.uniform(key, shape, minval=-dt, maxval=2.0 * dt)

    def simulate(
        self, state: State, movement: jax.Array, attack: jax.Array, noise: jax.Array
    ) -> State:
        """Advance ``world_steps_per_env_step`` world steps (pure and deterministic given the
        cooldown ``noise [world_steps, N]``); increments ``step``, records the actions."""
        stats = self.unit_stats
        types = state.unit_types
        dt = self.time_per_step
        unit_index = jnp.arange(self.num_units)
        has_target = attack >= NUM_MOVEMENT_ACTIONS
        slot = attack - NUM_MOVEMENT_ACTIONS
        target = jnp.where(self._is_ally, self.num_allies + slot, self.num_allies - 1 - slot)
        target = jnp.where(has_target, target, unit_index)
        attack_range = jnp.asarray(stats.attack_ranges)[types]
        damage = jnp.asarray(stats.attacks)[types]
        weapon_cooldown = jnp.asarray(stats.weapon_cooldowns)[types]
        radius = jnp.asarray(stats.radiuses)[types]
        speed = jnp.asarray(stats.velocities)[types] * dt
        step_x, step_y = movement[:, 0] * speed, movement[:, 1] * speed

        def world_step(carry, step_noise):
            x, y, health, alive, cooldown = carry
            distance = jnp.sqrt(jnp.square(x - x[target]) + jnp.square(y - y[target]))
            hits = has_target & alive & alive[target] & (cooldown <= 0.0)
            hits = hits & (distance < attack_range)
            received = jnp.zeros_like(health).at[target].add(jnp.where(hits, damage, 0.0))
            health = jnp.maximum(health - received, 0.0)
            # JaxMARL's arithmetic (old + (new - old)), so cooldowns agree to the last bit.
            new_cooldown = cooldown + jnp.where(hits, weapon_cooldown + step_noise - cooldown, -dt)
            cooldown = jnp.where(alive, new_cooldown, cooldown)
            x = jnp.where(alive, jnp.clip(x + step_x, 0.0, self.map_width), x)
            y = jnp.where(alive, jnp.clip(y + step_y, 0.0, self.map_height), y)
            if self.walls_cause_death:
                touching = (x <= 0.0) | (y <= 0.0) | (x >= self.map_width) | (y >= self.map_height)
                health = jnp.where(touching, 0.0, health)
            alive = health > 0.0
            x, y = self._push_apart(x, y, alive, radius)
            return (x, y, health, alive, cooldown), None

        carry = (
            state.unit_positions[:, 0],
            state.unit_positions[:, 1],
            state.unit_health,
            state.unit_alive,
            state.unit_weapon_cooldowns,
        )
        (x, y, health, alive, cooldown), _ = jax.lax.scan(world_step, carry, noise)
        positions = jnp.stack([x, y], axis=-1)
        acted = state.unit_alive
        return state.replace(
            step=state.step + 1,
            unit_positions=positions,
            unit_health=health,
            unit_alive=alive,
            unit_weapon_cooldowns=cooldown,
            prev_movement_actions=jnp.where(acted[:, None], movement, state.prev_movement_actions),
            prev_attack_actions=jnp.where(acted, attack, state.prev_attack_actions),
        )

    def _push_apart(
        self, x: jax.Array, y: jax.Array, alive: jax.Array, radius: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """Separate overlapping living units: each moves half the overlap away from the other
        (JaxMARL's collision rule); dead units neither move nor push.

        x and y are separate ``[N]`` arrays: pair arrays are then ``[N, N]`` rather than
        ``[N, N, 2]``, whose 2-wide minor axis vectorises badly on CPU.
        """
        dx = x[:, None] - x[None, :]
        dy = y[:, None] - y[None, :]
        distance = jnp.sqrt(jnp.square(dx) + jnp.square(dy)) + np.eye(
            self.num_units, dtype=np.float32
        )
        distance = distance + 1e-6
        overlap = jax.nn.relu((radius[:, None] + radius[None, :]) / distance - 1.0)
        overlap = jnp.where(alive[:, None] & alive[None, :], overlap, 0.0)
        pushed_x = x + jnp.sum(dx * overlap, axis=1) / 2
        pushed_y = y + jnp.sum(dy * overlap, axis=1) / 2
        return jnp.where(alive, pushed_x, x), jnp.where(alive, pushed_y, y)

    def _outcome(
        self, before: State, state: State
    ) -> tuple[Observations, State, Rewards, Dones, Infos]:
        a = self.num_allies
        allies_out = ~jnp.any(state.unit_alive[:a])
        enemies_out = ~jnp.any(state.unit_alive[a:])
        terminated = allies_out | enemies_out
        done = terminated | (state.step >= self.max_steps)
        state = state.replace(done=done)
        ally_reward, enemy_reward = self._team_rewards(before, state, allies_out, enemies_out)
        rewards = {
            agent: ally_reward if i < a else enemy_reward for i, agent in enumerate(self.agents)
        }
        dones = {agent: ~state.unit_alive[i] | done for i, agent in enumerate(self.agents)}
        dones["__all__"] = done
        infos = {"won": enemies_out & ~allies_out, "terminated": terminated}
        return self.get_obs(state), state, rewards, dones, infos

    def _team_rewards(
        self, before: State, after: State, allies_out: jax.Array, enemies_out: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        a = self.num_allies
        max_health = jnp.asarray(self.unit_stats.health)[after.unit_types]
        lost_fraction = (before.unit_health - after.unit_health) / max_health
        bonus = self.won_battle_bonus
        ally_won = enemies_out & ~allies_out
        enemy_won = allies_out & ~enemies_out
        ally_reward = jnp.where(ally_won, bonus, 0.0)
        enemy_reward = jnp.where(enemy_won, bonus, 0.0)
        if self.use_self_play_reward:
            ally_reward = ally_reward - jnp.where(enemy_won, bonus, 0.0)
            enemy_reward = enemy_reward - jnp.where(ally_won, bonus, 0.0)
        else:
            ally_reward = ally_reward + jnp.sum(lost_fraction[a:]) / self.num_enemies
            enemy_reward = enemy_reward + jnp.sum(lost_fraction[:a]) / a
        return ally_reward.astype(jnp.float32), enemy_reward.astype(jnp.float32)

    # ------------------------------------------------------------------ actions
    def decode_actions(
        self, key: jax.Array, state: State, actions: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """Stacked actions (``[N]`` int or ``[N, 4]`` float) to ``(movement [N, 2],
        attack [N])``."""
        if self.action_type == DISCRETE_ACT:
            return self.decode_discrete_actions(actions)
        return self.decode_continuous_actions(key, state, actions)

    def decode_discrete_actions(self, actions: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``[N]`` ints to movement vectors and attack actions; out-of-range values stop."""
        actions = actions.astype(jnp.int32)
        actions = jnp.where((actions >= 0) & (actions < self._num_actions), actions, STOP_ACTION)
        movement = jnp.asarray(MOVE_VECTORS)[jnp.minimum(actions, STOP_ACTION)]
        attack = jnp.where(actions >= NUM_MOVEMENT_ACTIONS, actions, 0)
        return movement, attack

    def decode_continuous_actions(
        self, key: jax.Array, state: State, actions: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """JaxMARL's continuous decoding of ``[N, 4]`` actions clipped to ``[0, 1]``.

        ``(shoot_last_enemy, do_shoot, r, theta)``: with probability ``do_shoot`` the unit
        moves by ``r (cos 2 pi theta, sin 2 pi theta)`` (JaxMARL's naming is inverted: the
        first category of its draw is "move"); otherwise it attacks, with probability
        ``1 - shoot_last_enemy`` its previous target, else the enemy closest to the point at
        that offset.
        """
        actions = jnp.clip(actions.astype(jnp.float32), 0.0, 1.0)
        move_key, last_key = jax.random.split(key)
        moves = jax.random.bernoulli(move_key, actions[:, 1])
        repeat_last = jax.random.bernoulli(last_key, 1.0 - actions[:, 0])
        angle = actions[:, 3] * (2 * math.pi)
        offset = actions[:, 2:3] * jnp.stack([jnp.cos(angle), jnp.sin(angle)], axis=-1)
        movement = jnp.where(moves[:, None], offset, 0.0)
        point = state.unit_positions + offset
        distance = jnp.linalg.norm(point[:, None, :] - state.unit_positions[None, :, :], axis=-1)
        same_team = self.teams[:, None] == self.teams[None, :]
        closest = jnp.argmin(distance + np.where(same_team, 1e8, 0.0), axis=-1)
        slot = jnp.where(self._is_ally, closest - self.num_allies, self.num_allies - 1 - closest)
        attack = jnp.where(repeat_last, state.prev_attack_actions, slot + NUM_MOVEMENT_ACTIONS)
        return movement, jnp.where(moves, 0, attack).astype(jnp.int32)

    @jit_method
    def get_avail_actions(self, state: State) -> AvailActions:
        """Bool masks: moves if alive, stop always, attacks on living targets in range."""
        a = self.num_allies
        positions, alive = state.unit_positions, state.unit_alive
        distance = jnp.linalg.norm(positions[:, None, :] - positions[None, :, :], axis=-1)
        attack_range = jnp.asarray(self.unit_stats.attack_ranges)[state.unit_types]
        in_range = (distance < attack_range[:, None]) & alive[:, None] & alive[None, :]
        ally_attacks = in_range[:a, a:]
        enemy_attacks = in_range[a:, :a][:, ::-1]
        moves = jnp.broadcast_to(alive[:, None], (self.num_units, STOP_ACTION))
        masks = {}
        for i, agent in enumerate(self.agents):
            attacks = ally_attacks[i] if i < a else enemy_attacks[i - a]
            masks[agent] = jnp.concatenate([moves[i], jnp.ones((1,), jnp.bool_), attacks])
        return masks

    # ------------------------------------------------------------------ observations
    def _unit_features(self, state: State) -> jax.Array:
        """``[N, 11]`` observer-independent features of each unit: health fraction, last
        movement (2), last attack fraction, cooldown fraction, type one-hot (6)."""
        types = state.unit_types
        health = state.unit_health / jnp.asarray(self.unit_stats.health)[types]
        attack = state.prev_attack_actions.astype(jnp.float32) / self._max_action
        cooldown = (
            state.unit_weapon_cooldowns / jnp.asarray(self.unit_stats.weapon_cooldowns)[types]
        )
        return jnp.concatenate(
            [
                health[:, None],
                state.prev_movement_actions,
                attack[:, None],
                jnp.clip(cooldown, 0.0, 1.0)[:, None],
                jax.nn.one_hot(types, NUM_UNIT_TYPES, dtype=jnp.float32),
            ],
            axis=-1,
        )

    def _observed(
        self, state: State, observer: np.ndarray, observed: jax.Array, unit_features: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """Features of unit ``observed[i, k]`` as seen by ``observer[i]``, unmasked, and the
        distance between them divided by the observer's sight range.

        Returns ``([N, K, 13] float32, [N, K] float32)``.
        """
        positions = state.unit_positions
        sight = jnp.asarray(self.unit_stats.sight_ranges)[state.unit_types[observer]]
        relative = (positions[observed] - positions[observer][:, None, :]) / sight[:, None, None]
        features = unit_features[observed]  # [N, K, 11]
        sees = jnp.asarray(self._sees_actions > 0)[observer[:, None], observed]
        actions = jnp.where(sees[..., None], features[..., 1:4], 0.0)
        out = jnp.concatenate([features[..., :1], relative, actions, features[..., 4:]], axis=-1)
        return out, jnp.linalg.norm(relative, axis=-1)

    def _own_features(self, state: State) -> jax.Array:
        """``[N, 10]``: health fraction, position / map size (clipped to [0, 1]), cooldown
        fraction, type one-hot; zeros for dead units."""
        features = self._unit_features(state)
        position = jnp.clip(state.unit_positions / self._map_size, 0.0, 1.0)
        own = jnp.concatenate([features[:, :1], position, features[:, 4:]], axis=-1)
        return jnp.where(state.unit_alive[:, None], own, 0.0)

    def _unit_list_obs(self, state: State) -> jax.Array:
        """``[N, 13 (N - 1) + 10]``; pair quantities are built as ``[observer, observed]``
        planes, one per feature (``[N, N]`` arrays vectorise well; ``[N, N, 13]`` do not)."""
        n = self.num_units
        x, y = state.unit_positions[:, 0], state.unit_positions[:, 1]
        alive = state.unit_alive
        sight = jnp.asarray(self.unit_stats.sight_ranges)[state.unit_types][:, None]
        dx = x[None, :] - x[:, None]
        dy = y[None, :] - y[:, None]
        visible = (jnp.sqrt(jnp.square(dx) + jnp.square(dy)) < sight) & alive[:, None]
        visible = (visible & alive[None, :]).astype(jnp.float32)
        sees = visible * self._sees_actions
        features = self._unit_features(state)  # [N(observed), 11]
        planes = [features[None, :, 0] * visible, dx / sight * visible, dy / sight * visible]
        planes += [features[None, :, k] * sees for k in (1, 2, 3)]
        planes += [features[None, :, k] * visible for k in range(4, features.shape[1])]
        # Planes stacked first and transposed once, then one static gather picks the
        # observed units in order: on CPU this is much cheaper than stacking on the last axis.
        pairs = jnp.transpose(jnp.stack(planes), (1, 2, 0)).reshape(n * n, len(planes))
        pairs = pairs[self._pair_order]
        return jnp.concatenate([pairs.reshape(n, -1), self._own_features(state)], axis=-1)

    def conic_candidates(self, state: State) -> jax.Array:
        """``[N, N, 32]`` bool: unit ``j`` is a candidate for section ``s`` of observer ``i``
        (alive, not ``i``, within sight, strictly inside the section's angles)."""
        n = self.num_units
        positions = state.unit_positions
        sight = jnp.asarray(self.unit_stats.sight_ranges)[state.unit_types]
        relative = (positions[None, :, :] - positions[:, None, :]) / sight[:, None, None]
        visible = jnp.linalg.norm(relative, axis=-1) < 1.0
        dx, dy = relative[..., 0], relative[..., 1]
        # JaxMARL's angle formula (not arctan2: they differ on the negative x axis).
        angle = jnp.arctan(dy / (dx + 1e-8)) + (dx < 0) * (2.0 * (dy > 0) - 1.0) * math.pi
        width = 2 * math.pi / CONIC_SECTIONS
        lower = np.arange(CONIC_SECTIONS) * width - math.pi
        inside = (angle[..., None] > lower) & (angle[..., None] < lower + width)
        eligible = visible & ~np.eye(n, dtype=bool) & state.unit_alive[None, :]
        return inside & eligible[..., None]

    def conic_obs_from_candidates(self, state: State, candidates: jax.Array) -> jax.Array:
        """``[N, D]`` conic observations: per section the first two candidates by index."""
        n = self.num_units
        observer = np.arange(n)
        everyone = jnp.broadcast_to(jnp.arange(n), (n, n))
        pairs, _ = self._observed(state, observer, everyone, self._unit_features(state))
        rank = jnp.cumsum(candidates, axis=1)  # [N, N(j), 32]
        picks = [candidates & (rank == k + 1) for k in range(CONIC_UNITS_PER_SECTION)]
        chosen = jnp.stack(picks, axis=-1).astype(jnp.float32)  # [N, j, 32, 2]
        sections = jnp.einsum("ijsk,ijf->iskf", chosen, pairs, precision=jax.lax.Precision.HIGHEST)
        sections = jnp.where(state.unit_alive[:, None, None, None], sections, 0.0)
        return jnp.concatenate([sections.reshape(n, -1), self._own_features(state)], axis=-1)

    def _conic_obs(self, state: State) -> jax.Array:
        return self.conic_obs_from_candidates(state, self.conic_candidates(state))

    def observe(self, state: State) -> jax.Array:
        """``[N, D]`` float32 observations of every unit (rows in ``env.agents`` order)."""
        if self.observation_type == UNIT_LIST_OBS:
            return self._unit_list_obs(state)
        return self._conic_obs(state)

    @jit_method
    def get_obs(self, state: State) -> Observations:
        obs = self.observe(state)
        return {agent: obs[i] for i, agent in enumerate(self.agents)}

    def get_obs_unit_list(self, state: State) -> Observations:
        """Unit-list observations whatever ``observation_type`` is (JaxMARL's name)."""
        obs = self._unit_list_obs(state)
        return {agent: obs[i] for i, agent in enumerate(self.agents)}

    def get_world_state(self, state: State) -> jax.Array:
        """``[12 N]`` float32: per unit health fraction, position, cooldown (seconds), type
        one-hot (zero when dead); then every unit's team and type id."""
        features = self._unit_features(state)
        units = jnp.concatenate(
            [
                features[:, :1],
                state.unit_positions,
                state.unit_weapon_cooldowns[:, None],
                features[:, 5:],
            ],
            axis=-1,
        )
        units = jnp.where(state.unit_alive[:, None], units, 0.0)
        return jnp.concatenate(
            [
                units.reshape(-1),
                state.unit_teams.astype(jnp.float32),
                state.unit_types.astype(jnp.float32),
            ]
        )

    # ------------------------------------------------------------------ entity view
    # Observations as one row per unit, for entity-based networks (TransfQMIX); see
    # ``jaxmarl.wrappers.entities``.
    @property
    def entity_obs_shape(self) -> tuple[int, int]:
        """``(units, 15)``: each other unit's unit-list features (13) in observation order,
        then the agent's own features padded to 13; every row ends with a teammate flag and
        an is-self flag (JaxMARL's TransfQMIX matrix). Rows of dead or unseen units are zero
        apart from the teammate flag."""
        return (self.num_units, len(UNIT_FEATURES) + 2)

    @property
    def entity_world_shape(self) -> tuple[int, int]:
        """``(units, 12)``: ``get_world_state`` as one row per unit (its 10 features, team,
        type id)."""
        return (self.num_units, len(OWN_FEATURES) + 2)

    def get_entity_obs(self, state: State, obs: Observations | None = None) -> Observations:
        """``{agent: [units, 15]}`` float32 from the unit-list observations (``obs`` when they
        are given and unit-list, else computed from ``state``)."""
        if obs is None or self.observation_type != UNIT_LIST_OBS:
            rows = self._unit_list_obs(state)
            obs = {agent: rows[self.agent_ids[agent]] for agent in self.agents}
        width = len(UNIT_FEATURES)
        own = len(OWN_FEATURES)
        out = {}
        for agent in self.agents:
            flat = obs[agent]
            others = flat[:-own].reshape(self.num_units - 1, width)
            mine = jnp.pad(flat[-own:], (0, width - own))
            flags = self._entity_flags(agent)
            features = jnp.concatenate([others, mine[None]], axis=0)
            out[agent] = jnp.concatenate([features, jnp.asarray(flags)], axis=-1)
        return out

    def get_entity_world_state(self, state: State) -> jax.Array:
        """``[units, 12]`` float32, ``get_world_state`` row by row."""
        flat = self.get_world_state(state)
        n, own = self.num_units, len(OWN_FEATURES)
        units = flat[: own * n].reshape(n, own)
        ids = flat[own * n :].reshape(2, n).T  # team, type
        return jnp.concatenate([units, ids], axis=-1)

    def entity_action_rows(self, agent: str) -> np.ndarray:
        """``[actions]`` int: the entity row each action is read from, ``-1`` for the agent's
        own (the moves and stop). Attack slot ``k`` targets the ``k``-th opponent in
        observation order, which follows the agent's ``team - 1`` teammates."""
        teammates = self._team_size(agent) - 1
        moves = -np.ones(NUM_MOVEMENT_ACTIONS, dtype=np.int32)
        slots = self.action_space(agent).n - NUM_MOVEMENT_ACTIONS
        return np.concatenate([moves, teammates + np.arange(slots, dtype=np.int32)])

    def _team_size(self, agent: str) -> int:
        return self.num_allies if self.agent_ids[agent] < self.num_allies else self.num_enemies

    def _entity_flags(self, agent: str) -> np.ndarray:
        """``[units, 2]``: teammate and is-self flags of the entity rows (others first, then
        the agent itself)."""
        teammates = self._team_size(agent) - 1
        others = self.num_units - 1
        teammate = np.concatenate([np.arange(others) < teammates, [True]]).astype(np.float32)
        is_self = (np.arange(self.num_units) == others).astype(np.float32)
        return np.stack([teammate, is_self], axis=-1)

    def is_terminal(self, state: State) -> jax.Array:
        """A team has no living unit, or the time limit is reached."""
        a = self.num_allies
        wiped = ~jnp.any(state.unit_alive[:a]) | ~jnp.any(state.unit_alive[a:])
        return wiped | (state.step >= self.max_steps)
