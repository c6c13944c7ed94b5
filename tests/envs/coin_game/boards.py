"""Hand-built Coin Game states for the family's tests."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

import jaxmarl


@functools.cache
def _fresh_state():
    """A reset state (zero counters and returns) whose cells ``board`` overwrites."""
    return jaxmarl.make("coin_game").reset(jax.random.key(0))[1]


def board(red, blue, red_coin, blue_coin, step=0):
    """A ``CoinGameState`` with the players and coins at the given ``(row, column)`` cells,
    ``step`` steps into the outer episode and nothing picked up yet."""
    cell = lambda p: jnp.asarray(p, jnp.int32)  # noqa: E731
    return _fresh_state().replace(
        red_pos=cell(red),
        blue_pos=cell(blue),
        red_coin_pos=cell(red_coin),
        blue_coin_pos=cell(blue_coin),
        step=jnp.int32(step),
    )
