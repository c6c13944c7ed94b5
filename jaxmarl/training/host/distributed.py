"""One run over several processes (hosts, or one per GPU), on JAX's multi-controller runtime.

Every process runs the same program (``python -m jaxmarl.train ...`` with the same arguments)
and calls ``initialize`` first, before anything touches JAX's backend. ``jax.distributed``
then connects the processes through a coordinator (process 0's address), ``jax.devices()``
lists every process's devices, and the run's ``(seeds, data)`` mesh
(``jaxmarl.training.host.devices.Placement``) spans them: XLA's collectives (NCCL on GPUs, gloo
on CPUs) carry the learners' gradient averages between hosts. Nothing else changes.

Who does what:

* every process compiles and runs the chunks, and takes part in each checkpoint (orbax writes
  every process's shards; the run directory must be on a file system all of them see);
* only process 0 writes everything else: the config, metrics, TensorBoard / W&B, plots, GIFs
  and the progress bar.

How a process learns its place (``Launch``): from ``--coordinator HOST:PORT --num-processes N
--process-id I`` on the command line, or from ``JAXMARL_COORDINATOR`` / ``JAXMARL_NUM_PROCESSES``
/ ``JAXMARL_PROCESS_ID``, or, with ``--distributed`` alone, from the cluster's own variables
(SLURM's ``srun``, Open MPI's ``mpirun``: JAX's auto-detection).
"""

from __future__ import annotations

import dataclasses
import os
import sys

import jax

ENV_COORDINATOR = "JAXMARL_COORDINATOR"
ENV_NUM_PROCESSES = "JAXMARL_NUM_PROCESSES"
ENV_PROCESS_ID = "JAXMARL_PROCESS_ID"
# How long a process waits for the others to join before it gives up with an error.
JOIN_TIMEOUT_S = 120

_initialized = False


@dataclasses.dataclass(frozen=True)
class Launch:
    """A process's place in a multi-process run (all ``None`` with ``auto``: detect it).

    Attributes:
        coordinator: ``HOST:PORT`` of process 0's coordinator service.
        num_processes: processes in the run.
        process_id: this process, in ``[0, num_processes)``.
        auto: let JAX detect the three from the cluster (SLURM, Open MPI).
    """

    coordinator: str | None = None
    num_processes: int | None = None
    process_id: int | None = None
    auto: bool = False

    @classmethod
    def from_environment(cls, environ: dict | None = None) -> Launch | None:
        """The launch ``JAXMARL_*`` variables describe, or ``None`` when none is set."""
        environ = os.environ if environ is None else environ
        names = (ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID)
        if not any(name in environ for name in names):
            return None
        return cls.checked(
            environ.get(ENV_COORDINATOR),
            environ.get(ENV_NUM_PROCESSES),
            environ.get(ENV_PROCESS_ID),
            where="environment variables " + "/".join(names),
        )

    @classmethod
    def checked(
        cls,
        coordinator,
        num_processes,
        process_id,
        *,
        where: str = "--coordinator, --num-processes and --process-id",
    ) -> Launch:
        """A launch from text values, every problem named with its fix."""
        missing = [
            name
            for name, value in (
                ("coordinator", coordinator),
                ("num-processes", num_processes),
                ("process-id", process_id),
            )
            if value in (None, "")
        ]
        if missing:
            raise ValueError(
                f"a multi-process launch needs all of {where}; missing {', '.join(missing)} "
                f"(or use --distributed alone under SLURM / Open MPI)"
            )
        count, index = _integer(num_processes, "num-processes"), _integer(process_id, "process-id")
        if count < 1:
            raise ValueError(f"num-processes must be >= 1, got {count}")
        if not 0 <= index < count:
            raise ValueError(
                f"process-id={index} is outside [0, {count}) for num-processes={count}; number "
                f"the processes 0 to {count - 1}"
            )
        if ":" not in str(coordinator):
            raise ValueError(
                f"coordinator={coordinator!r} needs a port: HOST:PORT (e.g. localhost:12355), "
                f"the address of process 0"
            )
        return cls(str(coordinator), count, index)


def _integer(value, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def initialize(launch: Launch, local_devices: int = 1) -> None:
    """Join the run ``launch`` describes; call once, before anything runs on JAX's backend.

    Args:
        launch: this process's place (``Launch``).
        local_devices: CPU only: host devices this process contributes
            (``jax_num_cpu_devices``); accelerators contribute what they have.

    Raises:
        ValueError: the processes disagree on their number, or JAX's backend already runs.
    """
    global _initialized
    if _initialized:
        return
    if jax.config.jax_platforms in (None, "", "cpu") and not _has_accelerator_plugin():
        # CPU collectives between processes go through gloo.
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        if local_devices > 1:
            jax.config.update("jax_num_cpu_devices", local_devices)
    kwargs = {}
    if not launch.auto:
        # If a peer never joins (it failed, or was given other values), JAX's runtime aborts
        # this process after the timeout with DEADLINE_EXCEEDED: say what it was waiting for.
        print(
            f"joining a run of {launch.num_processes} processes at {launch.coordinator} as "
            f"process {launch.process_id} (waiting up to {JOIN_TIMEOUT_S} s for the others)",
            file=sys.stderr,
            flush=True,
        )
        kwargs = dict(
            coordinator_address=launch.coordinator,
            num_processes=launch.num_processes,
            process_id=launch.process_id,
        )
    try:
        jax.distributed.initialize(initialization_timeout=JOIN_TIMEOUT_S, **kwargs)
    except RuntimeError as error:
        raise ValueError(
            f"joining the multi-process run failed ({' '.join(str(error).split())[:300]}); "
            f"check that every process got the same --coordinator and --num-processes, that "
            f"process 0 is running, and that it was started before JAX ran anything"
        ) from None
    _initialized = True
    if launch.num_processes is not None and jax.process_count() != launch.num_processes:
        raise ValueError(
            f"this process was launched as one of {launch.num_processes} but the run has "
            f"{jax.process_count()}; give every process the same --num-processes"
        )


def _has_accelerator_plugin() -> bool:
    """Whether a GPU / TPU backend is installed (its collectives need no gloo)."""
    import importlib.util

    return any(
        importlib.util.find_spec(name) is not None
        for name in ("jax_cuda12_plugin", "jax_cuda13_plugin", "libtpu")
    )


def is_initialized() -> bool:
    return _initialized


def is_primary() -> bool:
    """Whether this process writes logs, plots and the run directory (process 0)."""
    return jax.process_index() == 0
