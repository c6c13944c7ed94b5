"""Observation and action spaces, usable inside ``jit`` and ``vmap``.

Each space knows its ``shape`` and ``dtype``, draws a random member with ``sample(key)`` and
answers ``contains(x)`` with a scalar ``bool`` array. ``contains`` checks the shape and the dtype
*kind* (integer for discrete spaces, floating point for boxes) as well as the bounds, so an
observation of the wrong shape or an ``int`` where a ``float`` belongs is reported, not broadcast.
The class names and constructor arguments follow JaxMARL's ``jaxmarl.environments.spaces``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def _false() -> jax.Array:
    return jnp.bool_(False)


def _has_shape_and_kind(x: Any, shape: tuple[int, ...], integer: bool) -> bool:
    """Static (trace-time) check of shape and dtype kind; ``x`` may be a tracer."""
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = np.asarray(x)
    if tuple(x.shape) != tuple(shape):
        return False
    if integer:
        return bool(jnp.issubdtype(x.dtype, jnp.integer))
    return bool(jnp.issubdtype(x.dtype, jnp.floating))


class Space:
    """Base class: a set of values with a fixed ``shape`` and ``dtype``."""

    shape: tuple[int, ...] = ()
    dtype: Any = None

    def sample(self, key: jax.Array) -> Any:
        raise NotImplementedError

    def contains(self, x: Any) -> jax.Array:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


class Discrete(Space):
    """Integers ``0 .. n - 1`` as a scalar of ``dtype`` (int32 by default)."""

    def __init__(self, num_categories: int, dtype: Any = jnp.int32):
        if int(num_categories) < 1:
            raise ValueError(f"Discrete needs num_categories >= 1, got {num_categories}")
        self.n = int(num_categories)
        self.shape = ()
        self.dtype = jnp.dtype(dtype)

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, self.shape, 0, self.n).astype(self.dtype)

    def contains(self, x: Any) -> jax.Array:
        if not _has_shape_and_kind(x, self.shape, integer=True):
            return _false()
        x = jnp.asarray(x)
        return jnp.logical_and(x >= 0, x < self.n)

    def __repr__(self) -> str:
        return f"Discrete({self.n}, dtype={self.dtype.name})"


class MultiDiscrete(Space):
    """A vector of independent discrete choices; entry ``i`` lies in ``0 .. nvec[i] - 1``."""

    def __init__(self, num_categories: Sequence[int], dtype: Any = jnp.int32):
        nvec = np.asarray(num_categories, dtype=np.int64)
        if nvec.ndim != 1 or nvec.size == 0 or (nvec < 1).any():
            raise ValueError(f"MultiDiscrete needs a non-empty list of sizes >= 1, got {nvec}")
        self.nvec = nvec
        self.num_categories = tuple(int(n) for n in nvec)
        self.shape = (len(nvec),)
        self.dtype = jnp.dtype(dtype)

    def sample(self, key: jax.Array) -> jax.Array:
        keys = jax.random.split(key, len(self.num_categories))
        draws = [jax.random.randint(k, (), 0, n) for k, n in zip(keys, self.num_categories)]
        return jnp.stack(draws).astype(self.dtype)

    def contains(self, x: Any) -> jax.Array:
        if not _has_shape_and_kind(x, self.shape, integer=True):
            return _false()
        x = jnp.asarray(x)
        return jnp.all((x >= 0) & (x < jnp.asarray(self.nvec, dtype=x.dtype)))

    def __repr__(self) -> str:
        return f"MultiDiscrete({list(self.num_categories)}, dtype={self.dtype.name})"


class Box(Space):
    """Real vectors in ``[low, high]`` (bounds broadcast to ``shape``; float32 by default)."""

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: Sequence[int],
        dtype: Any = jnp.float32,
    ):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = jnp.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape)
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape)
        if (self.low > self.high).any():
            raise ValueError("Box needs low <= high everywhere")

    def sample(self, key: jax.Array) -> jax.Array:
        # Bounds are static, so the sampler is chosen while tracing: uniform inside finite
        # bounds; a standard normal clipped into the space where a bound is infinite.
        bounded = np.isfinite(self.low) & np.isfinite(self.high)
        if bounded.all():
            return jax.random.uniform(
                key, self.shape, dtype=self.dtype, minval=self.low, maxval=self.high
            )
        normal = jnp.clip(jax.random.normal(key, self.shape, dtype=self.dtype), self.low, self.high)
        if not bounded.any():
            return normal
        low = np.where(bounded, self.low, 0)
        high = np.where(bounded, self.high, 0)
        unit = jax.random.uniform(jax.random.fold_in(key, 1), self.shape, dtype=self.dtype)
        return jnp.where(bounded, low + unit * (high - low), normal).astype(self.dtype)

    def contains(self, x: Any) -> jax.Array:
        if not _has_shape_and_kind(x, self.shape, integer=False):
            return _false()
        x = jnp.asarray(x)
        return jnp.all((x >= jnp.asarray(self.low)) & (x <= jnp.asarray(self.high)))

    def __repr__(self) -> str:
        low = float(self.low.min()) if self.low.size else 0.0
        high = float(self.high.max()) if self.high.size else 0.0
        return f"Box(low={low}, high={high}, shape={self.shape}, dtype={self.dtype.name})"


class Dict(Space):
    """A mapping of named sub-spaces; samples are ``OrderedDict`` in the given order."""

    def __init__(self, spaces: Mapping[str, Space]):
        self.spaces = OrderedDict(spaces)
        self.num_spaces = len(self.spaces)
        self.shape = None
        self.dtype = None

    def sample(self, key: jax.Array) -> OrderedDict:
        keys = jax.random.split(key, self.num_spaces)
        return OrderedDict(
            (name, space.sample(k)) for k, (name, space) in zip(keys, self.spaces.items())
        )

    def contains(self, x: Any) -> jax.Array:
        if not isinstance(x, Mapping) or set(x) != set(self.spaces):
            return _false()
        checks = [space.contains(x[name]) for name, space in self.spaces.items()]
        return jnp.all(jnp.stack(checks))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {v!r}" for k, v in self.spaces.items())
        return f"Dict({{{inner}}})"


class Tuple(Space):
    """An ordered tuple of sub-spaces."""

    def __init__(self, spaces: Sequence[Space]):
        self.spaces = tuple(spaces)
        self.num_spaces = len(self.spaces)
        self.shape = None
        self.dtype = None

    def sample(self, key: jax.Array) -> tuple:
        keys = jax.random.split(key, self.num_spaces)
        return tuple(space.sample(k) for k, space in zip(keys, self.spaces))

    def contains(self, x: Any) -> jax.Array:
        if not isinstance(x, (tuple, list)) or len(x) != self.num_spaces:
            return _false()
        checks = [space.contains(v) for space, v in zip(self.spaces, x)]
        return jnp.all(jnp.stack(checks))

    def __repr__(self) -> str:
        return f"Tuple({list(self.spaces)!r})"
