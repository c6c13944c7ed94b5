"""Unit types of SMAX: names, map letters and per-type statistics.

Indices are the unit-type ids stored in ``State.unit_types`` and one-hot encoded in the
observations; the order and the numbers are JaxMARL 0.2.0's (its ``SMAX.__init__`` defaults), so
observations and dynamics match published SMAX results. Statistics are in SMAX's units: map
units (32 x 32 map), seconds, hit points.
"""

from __future__ import annotations

import dataclasses

import numpy as np

UNIT_TYPE_NAMES = ("marine", "marauder", "stalker", "zealot", "zergling", "hydralisk")
UNIT_TYPE_SHORTHANDS = ("m", "M", "s", "Z", "z", "h")
NUM_UNIT_TYPES = len(UNIT_TYPE_NAMES)


@dataclasses.dataclass(frozen=True)
class UnitTypeTable:
    """Per-type statistics as float32 NumPy arrays of length ``NUM_UNIT_TYPES``.

    NumPy (not jax) arrays: they are compile-time constants of every program that reads them.

    Attributes:
        velocities: speed in map units per second.
        attacks: damage per hit.
        attack_ranges: a target closer than this (centre to centre) can be hit.
        sight_ranges: units closer than this are observed.
        radiuses: collision radius.
        health: maximum (and starting) hit points.
        weapon_cooldowns: seconds between two hits (before SMAX's random deviation).
    """

    velocities: np.ndarray
    attacks: np.ndarray
    attack_ranges: np.ndarray
    sight_ranges: np.ndarray
    radiuses: np.ndarray
    health: np.ndarray
    weapon_cooldowns: np.ndarray

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = np.asarray(getattr(self, field.name), dtype=np.float32)
            if value.shape != (NUM_UNIT_TYPES,):
                raise ValueError(
                    f"unit_type_{field.name} needs one value per unit type "
                    f"{list(UNIT_TYPE_NAMES)}, got shape {value.shape}"
                )
            if not np.all(np.isfinite(value)) or np.any(value < 0):
                raise ValueError(f"unit_type_{field.name} must be finite and >= 0, got {value}")
            object.__setattr__(self, field.name, value)
        if np.any(self.health <= 0) or np.any(self.weapon_cooldowns <= 0):
            raise ValueError("unit_type_health and unit_type_weapon_cooldowns must be > 0")
        if np.any(self.sight_ranges <= 0):
            raise ValueError("unit_type_sight_ranges must be > 0")


DEFAULT_UNIT_TYPES = UnitTypeTable(
    velocities=np.array([3.15, 2.25, 4.13, 3.15, 4.13, 3.15]),
    attacks=np.array([9.0, 10.0, 13.0, 8.0, 5.0, 12.0]),
    attack_ranges=np.array([5.0, 6.0, 6.0, 2.0, 2.0, 5.0]),
    sight_ranges=np.array([9.0, 10.0, 10.0, 9.0, 8.0, 9.0]),
    radiuses=np.array([0.375, 0.5625, 0.625, 0.5, 0.375, 0.625]),
    health=np.array([45.0, 125.0, 160.0, 150.0, 35.0, 80.0]),
    weapon_cooldowns=np.array([0.61, 1.07, 1.87, 0.86, 0.5, 0.59]),
)
