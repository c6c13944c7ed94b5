"""``jax.random``'s Threefry draws, bit for bit, with the hash written out so XLA fuses it.

On a CPU, JAX lowers its Threefry-2x32 hash (``jax.random``'s default generator) as a rolled
``while`` loop of five steps, to keep compile times short. Under ``vmap`` every loop step runs
as its own small kernel, which dominates an env step that draws a few random numbers and does
little else (``storm``'s step makes about thirty draws; ``switch_riddle``'s is hardly more
than its draws). Here the same hash (Salmon et al. 2011, "Parallel random numbers: as easy as
1, 2, 3": 20 rounds, rotations 13 15 26 6 / 17 29 16 24, key-schedule parity ``0x1BD11BDA``)
is plain ``uint32`` arithmetic that XLA fuses with whatever uses it, and the functions below
reproduce ``jax.random.split``, ``bits`` and ``randint`` exactly (``tests/test_random_unrolled.py``
compares them). Keys of another generator, or ``jax_threefry_partitionable=False`` (another
counter layout), fall back to ``jax.random`` itself.

Unlike ``jaxmarl.use_fast_cpu_rng`` (``docs/cpu_rng.md``), which changes how JAX lowers every
draw in the process, this changes nothing outside the env code that calls it; envs use it for
their own draws so that their speed does not depend on that process-wide opt-in.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def threefry2x32(
    key: tuple[jax.Array, jax.Array], count: tuple[jax.Array, jax.Array]
) -> tuple[jax.Array, jax.Array]:
    """Threefry-2x32 with 20 rounds of the two ``uint32`` words ``count`` under ``key``."""
    k0, k1 = key
    schedule = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = count[0] + schedule[0], count[1] + schedule[1]
    for block in range(5):
        for rotation in _ROTATIONS[block % 2]:
            x0 = x0 + x1
            x1 = (x1 << np.uint32(rotation)) | (x1 >> np.uint32(32 - rotation))
            x1 = x0 ^ x1
        x0 = x0 + schedule[(block + 1) % 3]
        x1 = x1 + schedule[(block + 2) % 3] + np.uint32(block + 1)
    return x0, x1


def _fast(key: jax.Array) -> bool:
    """Whether ``key`` is a Threefry key whose draws the functions here reproduce."""
    if not jax.config.jax_threefry_partitionable:
        return False
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return str(jax.random.key_impl(key)) == "threefry2x32"
    return jax.config.jax_default_prng_impl == "threefry2x32" and key.shape == (2,)


def _words(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    data = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    return data[0], data[1]


def _hash_counts(key: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
    """The hash of the counters ``0 .. n-1`` (high words 0), as ``jax.random`` lays them out."""
    return threefry2x32(_words(key), (jnp.zeros((n,), jnp.uint32), jnp.arange(n, dtype=jnp.uint32)))


def split(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``tuple(jax.random.split(key))``, keys of the same kind as ``key``."""
    if not _fast(key):
        first, second = jax.random.split(key)
        return first, second
    words = jnp.stack(_hash_counts(key, 2), axis=-1)  # [2, 2]: key i = (bits1[i], bits2[i])
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(words[0]), jax.random.wrap_key_data(words[1])
    return words[0], words[1]


def bits32(key: jax.Array, n: int) -> jax.Array:
    """``jax.random.bits(key, (n,), jnp.uint32)``."""
    if not _fast(key):
        return jax.random.bits(key, (n,), jnp.uint32)
    first, second = _hash_counts(key, n)
    return first ^ second


def randint(key: jax.Array, n: int, low: int, high: int, dtype=jnp.int32) -> jax.Array:
    """``jax.random.randint(key, (n,), low, high, dtype)`` for Python ints ``low < high``
    within an integer ``dtype`` of at most 32 bits. As JAX does: two 32-bit draws (8- and
    16-bit dtypes are sampled in 32 bits too), combined modulo the span with the multiplier
    ``2**32 % span``, then cast."""
    dtype = jnp.dtype(dtype)
    info = np.iinfo(dtype)
    if (
        not _fast(key)
        or dtype.kind != "i"
        or info.bits > 32
        or not info.min <= low < high <= info.max
    ):
        return jax.random.randint(key, (n,), low, high, dtype)
    high_key, low_key = split(key)
    higher, lower = bits32(high_key, n), bits32(low_key, n)
    span = np.uint32(high - low)
    multiplier = np.uint32((2**16 % int(span)) ** 2 % int(span))
    offset = ((higher % span) * multiplier + lower % span) % span
    return (jnp.int32(low) + offset.astype(jnp.int32)).astype(dtype)
