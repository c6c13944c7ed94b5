"""Seeds spread over several devices: one process using every core (or every GPU).

A training program over ``S`` seeds is ``vmap(fn)`` of one seed's program. On a CPU, XLA runs
most of that program on one thread, so extra cores sit idle; XLA can instead expose the CPU as
several *host devices* (``jax_num_cpu_devices``), each executing its own program on its own
thread. ``over_seeds(fn, devices)`` splits the seed axis evenly over ``devices`` devices with
``shard_map``: each device runs ``vmap(fn)`` over its ``S / devices`` seeds and the seeds never
communicate, so every seed computes exactly what it computes on one device. On accelerators
the same code spreads seeds over GPUs.

``use_devices(n)`` asks JAX for ``n`` CPU devices; it must run before JAX first touches its
backend (the command line calls it before building the learner). A notebook that has already
run JAX code can set ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` before starting
Python instead.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

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
            f"run.devices={devices} but JAX sees {available} device(s) and its backend is "
            f"already running; set XLA_FLAGS=--xla_force_host_platform_device_count={devices} "
            "before starting Python (CPU), or use run.devices<="
            f"{available}"
        )


def check_split(num_seeds: int, devices: int) -> None:
    """``num_seeds`` must split evenly over ``devices`` (one compiled program per device)."""
    if devices < 1 or num_seeds % devices:
        fits = [d for d in range(1, num_seeds + 1) if num_seeds % d == 0]
        raise ValueError(
            f"run.num_seeds={num_seeds} does not split evenly over run.devices={devices}; use "
            f"run.devices in {fits} or a run.num_seeds that is a multiple of {max(devices, 1)}"
        )


def seed_mesh(devices: int) -> Mesh:
    """A 1-D mesh over the first ``devices`` devices, its axis named ``SEED_AXIS``."""
    found = jax.devices()
    if len(found) < devices:
        raise ValueError(
            f"run.devices={devices} but JAX sees {len(found)} device(s); call "
            f"jaxmarl.training.host.devices.use_devices({devices}) before JAX first runs"
        )
    return Mesh(found[:devices], (SEED_AXIS,))


def over_seeds(fn: Callable, devices: int = 1) -> Callable:
    """``vmap(fn)`` over a leading seed axis, that axis split over ``devices`` devices.

    Every input and output leaf carries the seed axis first. With ``devices == 1`` this is
    plain ``jax.vmap(fn)``.
    """
    batched = jax.vmap(fn)
    if devices == 1:
        return batched
    spec = PartitionSpec(SEED_AXIS)
    # check_vma off: the per-seed programs hold constants (e.g. env tables) that shard_map's
    # variance check would ask to annotate; nothing crosses devices, so there is nothing to check.
    return jax.shard_map(
        batched, mesh=seed_mesh(devices), in_specs=spec, out_specs=spec, check_vma=False
    )


def place_over_seeds(tree, devices: int = 1):
    """Put a pytree with a leading seed axis on ``devices`` devices, split along that axis."""
    if devices == 1:
        return tree
    return jax.device_put(tree, NamedSharding(seed_mesh(devices), PartitionSpec(SEED_AXIS)))
