"""SMACv2-style random start positions and unit types (pure functions of a key).

Positions ("surround and reflect", as in SMACv2 and JaxMARL 0.2.0), chosen with equal
probability per episode:

* reflect: allies uniform on the left half of the map; the first ``min(A, E)`` enemies are
  their mirror images across the vertical centre line, any further enemies uniform on the right
  half;
* surround: one team (a fair coin decides which) starts at the centre (uniform noise in
  ``[-2, 2]^2``); each unit of the other team joins one of four groups at random, group ``g``
  standing at ``t_g * centre + (1 - t_g) * corner_g`` with ``t_g ~ U(0, 1)``, plus the same noise.

Every position is then clipped into ``[SPAWN_MARGIN, size - SPAWN_MARGIN]``. JaxMARL does not
clip: corner groups with noise can start outside the map, where ``walls_cause_death`` kills them
in the first world step (a unit lost before the battle, counted as damage in the other team's
reward). Unit types: allies uniform over the six types; enemies mirror the allies, and enemies
beyond the allies' count are drawn uniformly too (JaxMARL 0.2.0 discards that draw and leaves
them marines).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.envs.smax.units import NUM_UNIT_TYPES

SPAWN_MARGIN = 1.0
START_NOISE = 2.0


def smacv2_unit_types(key: jax.Array, num_allies: int, num_enemies: int) -> jax.Array:
    """``[A + E]`` int32 unit types: allies uniform, enemies mirroring them (extras uniform)."""
    ally_key, extra_key = jax.random.split(key)
    allies = jax.random.randint(ally_key, (num_allies,), 0, NUM_UNIT_TYPES, dtype=jnp.int32)
    mirrored = allies[: min(num_allies, num_enemies)]
    extra = jax.random.randint(
        extra_key, (max(num_enemies - num_allies, 0),), 0, NUM_UNIT_TYPES, dtype=jnp.int32
    )
    return jnp.concatenate([allies, mirrored, extra])


def _reflect(key: jax.Array, num_allies: int, num_enemies: int, size: np.ndarray) -> jax.Array:
    ally_key, extra_key = jax.random.split(key)
    half = np.array([size[0] / 2, size[1]], dtype=np.float32)
    allies = jax.random.uniform(ally_key, (num_allies, 2), maxval=half)
    mirrored = allies[: min(num_allies, num_enemies)] * np.array([-1.0, 1.0], np.float32)
    mirrored = mirrored + np.array([size[0], 0.0], np.float32)
    extra = jax.random.uniform(
        extra_key,
        (max(num_enemies - num_allies, 0), 2),
        minval=np.array([size[0] / 2, 0.0], np.float32),
        maxval=size,
    )
    return jnp.concatenate([allies, mirrored, extra])


def _surround(key: jax.Array, num_allies: int, num_enemies: int, size: np.ndarray) -> jax.Array:
    """Positions with team 0 inside (rows ``[:A]``) and, separately, team 1 inside."""
    centre = size / 2
    corners = np.array([[0.0, 0.0], [0.0, size[1]], [size[0], 0.0], size], dtype=np.float32)
    noise_key, group_key, t_key, coin_key = jax.random.split(key, 4)
    total = num_allies + num_enemies
    noise = jax.random.uniform(noise_key, (total, 2), minval=-START_NOISE, maxval=START_NOISE)
    groups = jax.random.randint(group_key, (total,), 0, len(corners))
    t = jax.random.uniform(t_key, (len(corners), 1))
    group_positions = t * centre + (1.0 - t) * corners
    outside = group_positions[groups]
    is_ally = np.arange(total) < num_allies
    allies_inside = jax.random.bernoulli(coin_key)
    inside = jnp.where(allies_inside, is_ally, ~is_ally)
    return jnp.where(inside[:, None], centre, outside) + noise


def smacv2_positions(
    key: jax.Array, num_allies: int, num_enemies: int, width: float, height: float
) -> jax.Array:
    """``[A + E, 2]`` float32 start positions, surround or reflect with probability 1/2."""
    size = np.array([width, height], dtype=np.float32)
    coin_key, reflect_key, surround_key = jax.random.split(key, 3)
    positions = jnp.where(
        jax.random.bernoulli(coin_key),
        _surround(surround_key, num_allies, num_enemies, size),
        _reflect(reflect_key, num_allies, num_enemies, size),
    )
    return jnp.clip(positions, SPAWN_MARGIN, size - SPAWN_MARGIN)
