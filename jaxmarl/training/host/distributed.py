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

A launch that cannot form a run ends every waiting process with one line and exit status 2:
processes that joined with different counts find out from each other before anything compiles,
and a join watchdog ends a run whose processes never all arrive (``JAXMARL_JOIN_TIMEOUT_S``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading

import jax

ENV_COORDINATOR = "JAXMARL_COORDINATOR"
ENV_NUM_PROCESSES = "JAXMARL_NUM_PROCESSES"
ENV_PROCESS_ID = "JAXMARL_PROCESS_ID"
ENV_JOIN_TIMEOUT = "JAXMARL_JOIN_TIMEOUT_S"
# How long a process waits for the others to join before it gives up with an error
# (``JAXMARL_JOIN_TIMEOUT_S`` overrides it, e.g. for a large cluster that starts slowly).
JOIN_TIMEOUT_S = 120
# Process counts the clusters JAX auto-detects publish before anyone joins.
CLUSTER_PROCESS_COUNTS = ("SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE")

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


def cluster_process_count(environ: dict | None = None) -> int | None:
    """The process count a SLURM / Open MPI launch publishes, ``None`` outside one."""
    environ = os.environ if environ is None else environ
    for name in CLUSTER_PROCESS_COUNTS:
        if name in environ:
            return _integer(environ[name], name)
    return None


def join_timeout_s(environ: dict | None = None) -> int:
    """Seconds a process waits for the run to form (``JAXMARL_JOIN_TIMEOUT_S`` or 120)."""
    environ = os.environ if environ is None else environ
    if ENV_JOIN_TIMEOUT not in environ:
        return JOIN_TIMEOUT_S
    seconds = _integer(environ[ENV_JOIN_TIMEOUT], ENV_JOIN_TIMEOUT)
    if seconds < 1:
        raise ValueError(f"{ENV_JOIN_TIMEOUT} must be >= 1 second, got {seconds}")
    return seconds


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

    A run that does not form within ``join_timeout_s()`` (a process never started, or process 0
    expects more processes than were started) ends this process with one line on stderr and
    exit status 2: JAX's runtime would otherwise abort it with a C++ stack trace.
    """
    global _initialized
    if _initialized:
        return
    timeout = join_timeout_s()
    if jax.config.jax_platforms in (None, "", "cpu") and not _has_accelerator_plugin():
        # CPU collectives between processes go through gloo.
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        if local_devices > 1:
            jax.config.update("jax_num_cpu_devices", local_devices)
    kwargs = {}
    if not launch.auto:
        print(
            f"joining a run of {launch.num_processes} processes at {launch.coordinator} as "
            f"process {launch.process_id} (waiting up to {timeout} s for the others)",
            file=sys.stderr,
            flush=True,
        )
        kwargs = dict(
            coordinator_address=launch.coordinator,
            num_processes=launch.num_processes,
            process_id=launch.process_id,
        )
    # JAX's own join deadline aborts the process from C++; this watchdog ends it first, cleanly
    # (the join blocks in C++ with the GIL released, so the timer thread runs).
    watchdog = threading.Timer(timeout, _give_up, args=(launch, timeout))
    watchdog.daemon = True
    watchdog.start()
    try:
        jax.distributed.initialize(initialization_timeout=timeout + 60, **kwargs)
    except RuntimeError as error:
        raise ValueError(
            f"joining the multi-process run failed ({' '.join(str(error).split())[:300]}); "
            f"check that every process got the same --coordinator and --num-processes, that "
            f"process 0 is running, and that it was started before JAX ran anything"
        ) from None
    finally:
        watchdog.cancel()
    _initialized = True
    _check_same_count(launch, timeout)


def _give_up(launch: Launch, timeout: int) -> None:
    """The watchdog's end of a run that did not form: one line, exit status 2."""
    if launch.auto:
        waited = "the processes the cluster launched"
    elif launch.process_id == 0:
        waited = f"all {launch.num_processes} processes (--num-processes) to join at " + str(
            launch.coordinator
        )
    else:
        waited = f"process 0's coordinator at {launch.coordinator} to gather the run"
    print(
        f"error: the multi-process run did not form within {timeout} s: this process waited "
        f"for {waited}. Start every process with the same --coordinator and --num-processes "
        f"(process 0 waits for exactly that many), within {timeout} s of each other "
        f"({ENV_JOIN_TIMEOUT} gives them longer)",
        file=sys.stderr,
        flush=True,
    )
    os._exit(2)


def _check_same_count(launch: Launch, timeout: int) -> None:
    """Every process was launched with the run's process count. Process 0's count decides who
    joins; a process given another count would compute another device split and the run would
    hang at its first collective, so every process compares before anything compiles."""
    expected = cluster_process_count() if launch.auto else launch.num_processes
    if expected is None:
        return
    claimed = _exchange_process_counts(expected, timeout)
    actual = jax.process_count() if claimed is None else len(claimed)
    claimed = claimed or {jax.process_index(): expected}
    if any(count != actual for count in claimed.values()):
        given = ", ".join(f"process {i}: {c}" for i, c in sorted(claimed.items()))
        raise ValueError(
            f"the processes disagree on their number: {actual} joined (process 0's "
            f"--num-processes), but they were launched with different --num-processes "
            f"({given}); give every process the same --num-processes"
        )


def _exchange_process_counts(count: int, timeout: int) -> dict[int, int] | None:
    """Every joined process's launch count, by process id, through the coordinator's key-value
    store (no device program: the processes may disagree on their device split). ``None``
    where this JAX keeps that store elsewhere."""
    from jax._src import distributed as jax_distributed

    state = jax_distributed.global_state
    client = getattr(state, "client", None)
    if client is None or not hasattr(client, "wait_at_barrier"):
        return None
    client.key_value_set(f"jaxmarl/num_processes/{state.process_id}", str(count))
    client.wait_at_barrier("jaxmarl/launch_checked", timeout * 1000)
    return {
        int(key.rsplit("/", 1)[-1]): int(value)
        for key, value in client.key_value_dir_get("jaxmarl/num_processes/")
    }


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
