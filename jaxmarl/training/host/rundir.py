"""Who owns a run directory, and what it holds.

One process at a time writes a run directory: ``RunDirLock`` takes an exclusive
``fcntl.flock`` on ``RUN_DIR/.lock`` and writes its pid, host and start time into the file. The
operating system releases a ``flock`` when its process dies, however it dies, so a lock cannot
outlive its owner; the file's text only names the owner for the message a second process prints.
A lock file that still names an owner but is not locked was left by a process that died without
cleaning up (killed, power cut): it is taken over, and ``took_over`` says whose it was.

The file is never deleted (deleting it would let two processes lock two different files of the
same name); releasing empties it. ``flock`` is local to one machine: on a network file system
shared by several hosts it may not exclude a process on another host.

What a directory holds (``complete_steps``, ``holds_run``) is read without opening a
checkpoint manager: orbax's step listing for the checkpoints, file sizes for the metrics.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import os
import socket
from pathlib import Path

LOCK_NAME = ".lock"
REPLACED_PREFIX = ".replaced-"
METRIC_FILES = ("metrics.jsonl", "metrics.csv", "eval.jsonl")


class RunDirBusyError(RuntimeError):
    """Another live process holds the run directory's lock (the message names it)."""


class RunDirLock:
    """An exclusive lock on a run directory for as long as this object is open.

    Args:
        run_dir: an existing run directory.

    Attributes:
        took_over: the text a dead owner left in the lock file (``None`` if there was none).

    Raises:
        RunDirBusyError: a live process holds the lock (from ``acquire`` / ``__enter__``).
    """

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self.took_over: str | None = None
        self._fd: int | None = None

    def acquire(self) -> RunDirLock:
        fd = _locked_fd(self.path)
        left = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        self.took_over = left or None
        started = dt.datetime.now().isoformat(timespec="seconds")
        text = f"pid {os.getpid()} on {socket.gethostname()} (since {started})\n".encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text, 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)  # empty: nobody owns it (see the module docstring)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunDirLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def check_not_in_use(run_dir: str | os.PathLike) -> None:
    """``RunDirBusyError`` if a live process holds ``run_dir``'s lock (the lock file is not
    changed: a dead owner's text stays for ``RunDirLock`` to report)."""
    path = Path(run_dir) / LOCK_NAME
    if path.is_file():
        fd = _locked_fd(path, create=False)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _locked_fd(path: Path, create: bool = True) -> int:
    fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise
        owner = _read_owner(path) or "another process"
        raise RunDirBusyError(
            f"{path.parent} is in use by {owner}; wait for it to finish, stop it, or pick "
            f"another run.name"
        ) from None
    return fd


def _read_owner(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""


def complete_steps(run_dir: str | os.PathLike) -> list[int]:
    """The checkpoint steps orbax has committed in ``RUN_DIR/checkpoints`` (oldest first), as
    orbax's own step listing reads them (without starting a ``CheckpointManager``)."""
    folder = Path(run_dir) / "checkpoints"
    if not folder.is_dir():
        return []
    import orbax.checkpoint as ocp

    return sorted(ocp.utils.checkpoint_steps(folder.absolute()))


def has_metrics(run_dir: str | os.PathLike) -> bool:
    """Whether a metrics file of the run directory holds anything."""
    return any(
        (Path(run_dir) / name).is_file() and (Path(run_dir) / name).stat().st_size > 0
        for name in METRIC_FILES
    )


def holds_run(run_dir: str | os.PathLike) -> bool:
    """Whether a fresh start would lose something: a complete checkpoint or metrics."""
    return bool(complete_steps(run_dir)) or has_metrics(run_dir)


def move_aside(run_dir: str | os.PathLike) -> Path | None:
    """Moves everything in ``run_dir`` but the lock and earlier ``.replaced-*`` folders into
    ``RUN_DIR/.replaced-<timestamp>/``; returns that folder (``None`` if there was nothing)."""
    run_dir = Path(run_dir)
    entries = [
        p
        for p in run_dir.iterdir()
        if p.name != LOCK_NAME and not p.name.startswith(REPLACED_PREFIX)
    ]
    if not entries:
        return None
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    aside = run_dir / f"{REPLACED_PREFIX}{stamp}"
    aside.mkdir()
    for entry in entries:
        entry.rename(aside / entry.name)
    return aside
