"""One seed's env batch split over several devices: what the learners need to know about it.

With ``run.data_devices = D`` every seed runs on ``D`` devices at once (a mesh axis named
``DATA_AXIS``). Each device holds ``num_envs / D`` of the seed's envs (a contiguous slice of the
env axis, in the order a single device would hold them) and rolls them out; parameters and
optimiser state are replicated, and every gradient is averaged over the axis before the
optimiser sees it, so they stay identical on every device.

The result does not depend on ``D``: a run on ``D`` devices computes what the same run computes
on one device, up to floating-point summation order. That takes three rules, which hold for
``D = 1`` too (so there is one program, not two):

* **Randomness is per env.** An env's reset, step and action keys are ``fold_in(key, global env
  index)``: an env draws the same numbers whichever device holds it.
* **Minibatches are stratified in blocks** (``jaxmarl.training.minibatch``): the batch's units
  are cut into blocks of ``M`` consecutive units (``M`` minibatches), and each block deals one
  unit to every minibatch by its own permutation, drawn from ``fold_in(key, global block
  index)``. A device holding whole blocks builds exactly its share of every global minibatch
  locally, so PPO and PQN exchange nothing but gradients and the advantage statistics.
* **Replay samples are drawn globally.** Every device draws the same ``batch_size`` global item
  indices (the key is replicated), contributes the items it holds, and a ``psum`` gives every
  device the whole sample; each then takes the gradient of its ``1 / D`` of it. The exchange is
  one sampled batch per gradient step, never the buffer.

Losses are means over a device's rows, so ``pmean`` of the gradients is the gradient of the
global mean when every device holds as many rows; masked means (``masked_mean``) divide a local
sum by the global count instead.

``DataShards(count=1)`` is a single device: every collective is the identity and nothing needs
a mesh. With ``count > 1`` the learner's functions must run where the ``DATA_AXIS`` axis is
bound: inside the host loop's ``shard_map`` (``jaxmarl.training.host.devices``), or under
``jax.vmap(..., axis_name=DATA_AXIS)`` to emulate the devices on one (what the tests do).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

DATA_AXIS = "data"


@dataclasses.dataclass(frozen=True)
class DataShards:
    """How many devices share one seed's env batch (static; ``1`` = not split)."""

    count: int = 1

    @classmethod
    def of(cls, config: Any) -> DataShards:
        """The split a learner config asks for (``config.run.data_devices``)."""
        return cls(config.run.data_devices)

    @property
    def split(self) -> bool:
        return self.count > 1

    def local(self, total: int) -> int:
        """Rows of a ``total``-row axis each device holds."""
        return total // self.count

    def index(self) -> jax.Array:
        """This device's position on the data axis (``0`` on a single device)."""
        return jax.lax.axis_index(DATA_AXIS) if self.split else jnp.int32(0)

    def first(self, total: int) -> jax.Array:
        """Global index of this device's first row of a ``total``-row axis."""
        return self.index() * self.local(total)

    def global_indices(self, total: int) -> jax.Array:
        """``[total / count]`` int32 global indices of this device's rows."""
        return self.first(total) + jnp.arange(self.local(total), dtype=jnp.int32)

    def row_keys(self, key: jax.Array, total: int) -> jax.Array:
        """One key per local row of a ``total``-row axis: ``fold_in(key, global index)``."""
        return jax.vmap(jax.random.fold_in, (None, 0))(key, self.global_indices(total))

    def mean(self, tree: Any) -> Any:
        """Mean over devices (identity on one)."""
        return jax.lax.pmean(tree, DATA_AXIS) if self.split else tree

    def sum(self, tree: Any) -> Any:
        """Sum over devices (identity on one)."""
        return jax.lax.psum(tree, DATA_AXIS) if self.split else tree

    def masked_mean(self, x: jax.Array, mask: jax.Array) -> jax.Array:
        """This device's term of the global masked mean, scaled so that ``mean`` (as applied
        to gradients) of the terms is that mean: ``count * local sum / global count``."""
        kept = jax.lax.stop_gradient(self.sum(jnp.sum(mask.astype(x.dtype))))
        return self.count * jnp.sum(jnp.where(mask, x, 0.0)) / jnp.maximum(kept, 1.0)

    def normalize(self, x: jax.Array, eps: float = 1e-8) -> jax.Array:
        """Zero mean, unit variance over every device's entries (equal counts per device)."""
        mean = self.mean(jnp.mean(x))
        std = jnp.sqrt(self.mean(jnp.mean((x - mean) ** 2)))
        return (x - mean) / (std + eps)

    def my_rows(self, tree: Any) -> Any:
        """This device's ``1 / count`` of every leaf's leading axis (all of it on one)."""
        if not self.split:
            return tree

        def take(leaf):
            size = leaf.shape[0] // self.count
            return jax.lax.dynamic_slice_in_dim(leaf, self.index() * size, size, axis=0)

        return jax.tree.map(take, tree)

    def gather(self, tree: Any, owner: jax.Array, local_index: jax.Array) -> Any:
        """Rows held by their ``owner`` devices, delivered to every device.

        Args:
            tree: this device's rows (leaves ``[n, ...]``).
            owner: ``[k]`` int32, the device holding each wanted row.
            local_index: ``[k]`` int32, the row's index on its owner.

        Returns:
            Leaves ``[k, ...]``, row ``i`` from device ``owner[i]`` (a ``psum`` of each device's
            own rows, zeros elsewhere).
        """
        mine = owner == self.index()
        safe = jnp.where(mine, local_index, 0)

        def pick(leaf):
            rows = leaf[safe]
            shaped = mine.reshape(mine.shape + (1,) * (rows.ndim - 1))
            if rows.dtype == jnp.bool_:
                return self.sum(jnp.where(shaped, rows, False).astype(jnp.int32)) > 0
            return self.sum(jnp.where(shaped, rows, jnp.zeros((), rows.dtype)))

        return jax.tree.map(pick, tree)

    def episode_metrics(self, metrics: dict[str, jax.Array]) -> dict[str, jax.Array]:
        """``episode_metrics`` over every device's envs: count-weighted means, summed counts."""
        if not self.split:
            return metrics
        count = metrics["episodes"]
        total = self.sum(count)
        weighted = {k: self.sum(v * count) for k, v in metrics.items() if k != "episodes"}
        merged = {k: v / jnp.maximum(total, 1.0) for k, v in weighted.items()}
        return {**merged, "episodes": total}


SINGLE = DataShards()


def check_data_split(num_envs: int, data_devices: int, what: str = "env.num_envs") -> None:
    """``num_envs`` envs must split evenly over ``data_devices`` devices."""
    if data_devices < 1 or num_envs % data_devices:
        fits = [d for d in range(1, num_envs + 1) if num_envs % d == 0]
        raise ValueError(
            f"{what}={num_envs} does not split evenly over run.data_devices={data_devices}; use "
            f"run.data_devices in {fits[:12]} or a {what} that is a multiple of "
            f"{max(data_devices, 1)}"
        )
