"""SMAX scenarios (maps): which units fight on each side.

The names and compositions are JaxMARL 0.2.0's ``MAP_NAME_TO_SCENARIO``, so ``scenario=...``
means the same battle in both libraries. ``register_scenario`` adds user maps;
``map_name_to_scenario`` looks one up (unknown names raise a ``ValueError`` listing the known
ones and the closest matches).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence

import numpy as np

from jaxmarl.envs.smax.units import NUM_UNIT_TYPES, UNIT_TYPE_NAMES

# Largest team a scenario may field. SMAC's biggest map has 30 units a side; the work per step
# grows with the square of the unit count (every pair is checked for sight, range and
# collision each world step), so the bound keeps compile time and memory predictable and
# turns a typo such as 300 for 30 into a clear error instead of an out-of-memory.
MAX_UNITS_PER_TEAM = 64

MARINE, MARAUDER, STALKER, ZEALOT, ZERGLING, HYDRALISK = range(NUM_UNIT_TYPES)


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One SMAX battle: the unit type of every unit, allies first, then enemies.

    Same fields, in the same order, as JaxMARL's ``Scenario``, so
    ``Scenario(unit_types, num_allies, num_enemies, smacv2_pos, smacv2_types)`` works in both.

    Attributes:
        unit_types: ``num_allies + num_enemies`` unit-type ids (see ``units.UNIT_TYPE_NAMES``),
            stored as a tuple of ints (any sequence or array is accepted).
        num_allies: units of team 0 (``ally_0 ..``).
        num_enemies: units of team 1 (``enemy_0 ..``).
        smacv2_position_generation: draw start positions SMACv2-style (surround or reflect).
        smacv2_unit_type_generation: draw unit types uniformly at random (enemies mirror
            allies); ``unit_types`` is then ignored.
    """

    unit_types: Sequence[int]
    num_allies: int
    num_enemies: int
    smacv2_position_generation: bool = False
    smacv2_unit_type_generation: bool = False

    def __post_init__(self) -> None:
        types = tuple(int(t) for t in np.asarray(self.unit_types).reshape(-1))
        object.__setattr__(self, "unit_types", types)
        for name in ("num_allies", "num_enemies"):
            count = getattr(self, name)
            if isinstance(count, bool) or int(count) != count or int(count) < 1:
                raise ValueError(f"Scenario.{name} must be an integer >= 1, got {count!r}")
            if int(count) > MAX_UNITS_PER_TEAM:
                raise ValueError(
                    f"Scenario.{name}={count} exceeds the maximum of {MAX_UNITS_PER_TEAM} units "
                    f"per team (jaxmarl.envs.smax.scenarios.MAX_UNITS_PER_TEAM)"
                )
            object.__setattr__(self, name, int(count))
        total = self.num_allies + self.num_enemies
        if len(types) != total:
            raise ValueError(
                f"Scenario.unit_types has {len(types)} entries, expected num_allies + "
                f"num_enemies = {total}"
            )
        bad = [t for t in types if not 0 <= t < NUM_UNIT_TYPES]
        if bad:
            raise ValueError(
                f"Scenario.unit_types has unknown type ids {bad}; valid ids are "
                f"0..{NUM_UNIT_TYPES - 1} ({', '.join(UNIT_TYPE_NAMES)})"
            )
        for flag in ("smacv2_position_generation", "smacv2_unit_type_generation"):
            object.__setattr__(self, flag, bool(getattr(self, flag)))

    @property
    def num_units(self) -> int:
        return self.num_allies + self.num_enemies


def _mirror(team: Sequence[int]) -> tuple[int, ...]:
    return tuple(team) * 2


_SS5Z = (STALKER,) * 3 + (ZEALOT,) * 5
MAP_NAME_TO_SCENARIO: dict[str, Scenario] = {
    "3m": Scenario(_mirror([MARINE] * 3), 3, 3),
    "2s3z": Scenario(_mirror([STALKER] * 2 + [ZEALOT] * 3), 5, 5),
    "25m": Scenario(_mirror([MARINE] * 25), 25, 25),
    "3s5z": Scenario(_mirror(_SS5Z), 8, 8),
    "8m": Scenario(_mirror([MARINE] * 8), 8, 8),
    "5m_vs_6m": Scenario((MARINE,) * 11, 5, 6),
    "10m_vs_11m": Scenario((MARINE,) * 21, 10, 11),
    "27m_vs_30m": Scenario((MARINE,) * 57, 27, 30),
    "3s5z_vs_3s6z": Scenario(_SS5Z + (STALKER,) * 3 + (ZEALOT,) * 6, 8, 9),
    "3s_vs_5z": Scenario((STALKER,) * 3 + (ZEALOT,) * 5, 3, 5),
    "6h_vs_8z": Scenario((HYDRALISK,) * 6 + (ZEALOT,) * 8, 6, 8),
    "smacv2_5_units": Scenario((MARINE,) * 10, 5, 5, True, True),
    "smacv2_10_units": Scenario((MARINE,) * 20, 10, 10, True, True),
    "smacv2_20_units": Scenario((MARINE,) * 40, 20, 20, True, True),
}


def map_name_to_scenario(map_name: str) -> Scenario:
    """The scenario registered under ``map_name``.

    Raises:
        ValueError: unknown name; the message lists every known name and the closest ones.
    """
    try:
        return MAP_NAME_TO_SCENARIO[map_name]
    except (KeyError, TypeError):
        known = sorted(MAP_NAME_TO_SCENARIO)
        close = difflib.get_close_matches(str(map_name), known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"unknown SMAX scenario {map_name!r}{hint} Known scenarios: {', '.join(known)} "
            f"(add your own with jaxmarl.envs.smax.register_scenario)"
        ) from None


def register_scenario(map_name: str, scenario: Scenario, *, overwrite: bool = False) -> None:
    """Add a user map, usable as ``scenario=map_name`` or via ``map_name_to_scenario``.

    Raises:
        TypeError: ``scenario`` is not a ``Scenario``.
        ValueError: ``map_name`` is taken and ``overwrite`` is false.
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"register_scenario needs a Scenario, got {type(scenario).__name__}")
    if map_name in MAP_NAME_TO_SCENARIO and not overwrite:
        raise ValueError(
            f"SMAX scenario {map_name!r} is already registered; choose a new name or pass "
            f"overwrite=True"
        )
    MAP_NAME_TO_SCENARIO[map_name] = scenario


def resolve_scenario(scenario: Scenario | str | None, num_allies: int, num_enemies: int):
    """The ``Scenario`` for the env constructor: a name, a ``Scenario``, or ``None`` (all
    marines, ``num_allies`` vs ``num_enemies``, JaxMARL's default)."""
    if scenario is None:
        return Scenario((MARINE,) * (int(num_allies) + int(num_enemies)), num_allies, num_enemies)
    if isinstance(scenario, str):
        return map_name_to_scenario(scenario)
    if isinstance(scenario, Scenario):
        return scenario
    fields = ("unit_types", "num_allies", "num_enemies")
    if all(hasattr(scenario, f) for f in fields):  # a JaxMARL Scenario or look-alike
        return Scenario(
            np.asarray(scenario.unit_types),
            scenario.num_allies,
            scenario.num_enemies,
            getattr(scenario, "smacv2_position_generation", False),
            getattr(scenario, "smacv2_unit_type_generation", False),
        )
    raise TypeError(
        f"scenario must be a map name, a Scenario or None, got {type(scenario).__name__}"
    )
