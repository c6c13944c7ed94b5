"""Seeds and envs spread over several devices: every core, every GPU, every host.

A training program over ``S`` seeds is ``vmap(fn)`` of one seed's program. On a CPU, XLA runs
most of that program on one thread, so extra cores sit idle; XLA can instead expose the CPU as
several *host devices* (``jax_num_cpu_devices``), each executing its own program on its own
thread. ``Placement.over_members`` splits the seed axis evenly over ``devices`` devices with
``shard_map``: each device runs ``vmap(fn)`` over its ``S / devices`` seeds and the seeds never
communicate, so every seed computes exactly what it computes on one device. On accelerators
the same code spreads seeds over GPUs.

``Placement`` adds the second axis of the mesh, ``data`` (``run.data_devices``): each seed's
envs are split over that many devices, which roll out their share and average gradients
(``jaxmarl.training.data_parallel``). A run uses a ``devices x data_devices`` mesh; the training
state's env-batched parts (the ``Runner``'s env states, observations and recurrent states, a
replay buffer's items) are split along both axes, everything else (parameters, optimiser state,
keys) along the seed axis only. Over several processes (``jaxmarl.training.host.distributed``)
the mesh spans every process's devices and nothing else changes.

``use_devices(n)`` asks JAX for ``n`` CPU devices; it must run before JAX first touches its
backend (the command line calls it before building the learner). A notebook that has already
run JAX code can set ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` before starting
Python instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxmarl.training.data_parallel import DATA_AXIS
from jaxmarl.training.replay import ReplayBuffer
from jaxmarl.training.types import Runner

SEED_AXIS = "seeds"


def use_devices(devices: int) -> None:
    """Make at least ``devices`` devices visible, splitting the CPU into host devices if needed.

    Raises:
        ValueError: fewer devices exist and JAX's backend is already running, with the fix.
    """
    if devices <= 1:
        return
    try:
        jax.config.update("jax_num_cpu_devices", devices)
    except RuntimeError:  # backend already initialised: the device count is fixed now
        pass
    available = jax.device_count()
    if available < devices:
        raise ValueError(
            f"the run needs {devices} devices (run.devices x run.data_devices) but JAX sees "
            f"{available} and its backend is already running; set "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={devices} before starting Python "
            f"(CPU), or use run.devices x run.data_devices <= {available}"
        )


def use_run_devices(run_config: Any) -> None:
    """``use_devices`` for a run's ``devices x data_devices`` mesh. A multi-process run's
    processes set their device counts when they join (``distributed.initialize``)."""
    from jaxmarl.training.host import distributed

    if not distributed.is_initialized():
        use_devices(run_config.devices * run_config.data_devices)


def check_split(num_seeds: int, devices: int) -> None:
    """``num_seeds`` must split evenly over ``devices`` (one compiled program per device)."""
    if devices < 1 or num_seeds % devices:
        fits = [d for d in range(1, num_seeds + 1) if num_seeds % d == 0]
        raise ValueError(
            f"run.num_seeds={num_seeds} does not split evenly over run.devices={devices}; use "
            f"run.devices in {fits} or a run.num_seeds that is a multiple of {max(devices, 1)}"
        )


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a run's members live: seeds over ``seed_devices``, each seed's envs over
    ``data_devices`` (a ``seed_devices x data_devices`` mesh; one device: no mesh at all)."""

    seed_devices: int = 1
    data_devices: int = 1

    @classmethod
    def of(cls, run_config: Any) -> Placement:
        return cls(run_config.devices, run_config.data_devices)

    @property
    def size(self) -> int:
        return self.seed_devices * self.data_devices

    def mesh(self) -> Mesh:
        """The ``(seeds, data)`` mesh over the first ``size`` devices (of every process)."""
        found = jax.devices()
        if len(found) < self.size:
            raise ValueError(
                f"run.devices={self.seed_devices} x run.data_devices={self.data_devices} needs "
                f"{self.size} devices but JAX sees {len(found)}; lower them, or start with "
                f"more devices (CPU: jaxmarl.training.host.devices.use_devices({self.size}) "
                f"before JAX first runs; several hosts: python -m jaxmarl.train with "
                f"--num-processes)"
            )
        grid = np.array(found[: self.size]).reshape(self.seed_devices, self.data_devices)
        return Mesh(grid, (SEED_AXIS, DATA_AXIS))

    def specs(self, tree: Any) -> Any:
        """A ``PartitionSpec`` per leaf of a member-batched pytree (leading seed axis):
        env-batched leaves (``data_split_flags``) split along both axes. A ``None`` in
        ``tree`` stands for a whole subtree split along the seed axis only."""
        flags = data_split_flags(tree)
        split, whole = PartitionSpec(SEED_AXIS, DATA_AXIS), PartitionSpec(SEED_AXIS)
        return jax.tree.map(lambda flag: split if flag else whole, flags, is_leaf=_is_none)

    def over_members(self, fn: Callable, in_trees: tuple, out_tree: Any) -> Callable:
        """``vmap(fn)`` over the leading member axis, placed on the mesh: ``in_trees`` and
        ``out_tree`` are (abstract) examples of the inputs and output, whose env-batched
        leaves are split over the data axis."""
        batched = jax.vmap(fn)
        if self.size == 1:
            return batched
        # check_vma off: the per-member programs hold constants (e.g. env tables) that
        # shard_map's variance check would ask to annotate; what crosses the data axis is
        # explicit (the learners' pmean / psum).
        return jax.shard_map(
            batched,
            mesh=self.mesh(),
            in_specs=tuple(self.specs(tree) for tree in in_trees),
            out_specs=self.specs(out_tree),
            check_vma=False,
        )

    def place(self, tree: Any) -> Any:
        """Put a member-batched pytree on the mesh, split as ``specs`` says."""
        if self.size == 1:
            return tree
        if jax.process_count() > 1:
            # Every process holds the same whole value; a jitted identity lays it out over
            # devices that other processes own (device_put only reaches this process's).
            return jax.jit(lambda x: x, out_shardings=self.shardings(tree))(tree)
        return jax.device_put(tree, self.shardings(tree))

    def shardings(self, tree: Any) -> Any:
        mesh = self.mesh()
        return jax.tree.map(lambda spec: NamedSharding(mesh, spec), self.specs(tree))

    def abstract(self, tree: Any) -> Any:
        """``jax.ShapeDtypeStruct`` leaves with this placement's shardings (a restore
        target that orbax fills in place, on every process)."""
        if self.size == 1:
            return tree
        return jax.tree.map(
            lambda leaf, sharding: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding),
            tree,
            self.shardings(tree),
        )


def _is_none(x: Any) -> bool:
    return x is None


def data_split_flags(tree: Any) -> Any:
    """``True`` for each leaf that holds envs along its (per-member) first axis: a
    ``Runner``'s env states, observations, first flags and recurrent states, and a
    ``ReplayBuffer``'s items; ``False`` for everything else (parameters, keys, counters)."""
    every = lambda value, flag: jax.tree.map(lambda _: flag, value)

    def mark(node):
        if isinstance(node, Runner):
            return node.replace(
                env_state=every(node.env_state, True),
                obs=every(node.obs, True),
                first=every(node.first, True),
                policy_carry=every(node.policy_carry, True),
                key=every(node.key, False),
            )
        if isinstance(node, ReplayBuffer):
            return node.replace(
                data=every(node.data, True),
                position=every(node.position, False),
                size=every(node.size, False),
            )
        return False

    return jax.tree.map(mark, tree, is_leaf=lambda x: isinstance(x, Runner | ReplayBuffer))


def has_replay(tree: Any) -> bool:
    """Whether a training state holds a replay buffer (whose split depends on the mesh)."""
    found = jax.tree.leaves(
        jax.tree.map(
            lambda node: isinstance(node, ReplayBuffer),
            tree,
            is_leaf=lambda x: isinstance(x, ReplayBuffer),
        )
    )
    return any(found)


def fetch(tree: Any) -> Any:
    """A pytree of (possibly several processes') arrays as NumPy on this host."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.device_get(tree)
