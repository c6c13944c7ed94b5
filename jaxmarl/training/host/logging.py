"""Metric loggers: the IO boundary of a training run.

Loggers run on the host between jitted chunks and are never called inside ``jit`` (no
``jax.debug.callback`` to a logger: the chunk returns its metrics and the host loop logs them).
Every logger implements the ``Logger`` protocol, ``log(step, metrics)`` and ``close()``, and is a
context manager. JSONL is the record of a run (``read_jsonl`` and the plots read it back); CSV is
for spreadsheets; TensorBoard and Weights & Biases are optional and imported only when used.

Values are converted to Python ``int``/``float``/``bool`` first (``to_python_scalars``), so JAX and
numpy scalars are fine and non-scalar arrays fail with the metric's name. NaN and infinities are
written as JSON's ``NaN``/``Infinity`` extensions (Python's ``json`` default) rather than
dropped: a diverging run must show up in its log.

Resuming: pass ``resume_step`` to ``JsonlLogger``/``CsvLogger``/``TensorBoardLogger`` (the
checkpoint's step) to drop the records a crashed run logged after that checkpoint, so the resumed
run's files equal an uninterrupted run's (TensorBoard: the scalars per tag and step).

Example::

    with make_logger(("jsonl", "csv"), run_dir) as logger:
        logger.log(update, {"env_steps": env_steps, "episode_return": mean_return})
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import os
import secrets
import struct
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from jaxmarl.files import replace_bytes, replace_text  # noqa: F401  (public here too)

Scalar = int | float | bool
STEP_KEY = "step"


@runtime_checkable
class Logger(Protocol):
    """Anything that records scalar metrics against an integer step."""

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Records ``metrics`` (scalars) for ``step``."""
        ...

    def close(self) -> None:
        """Flushes and releases files or connections; further ``log`` calls are errors."""
        ...


class _LoggerBase:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def to_python_scalars(metrics: Mapping[str, Any]) -> dict[str, Scalar]:
    """Converts JAX/numpy scalars (and 1-element arrays) to Python ``int``/``float``/``bool``.

    Raises:
        TypeError: a key is not a string or a value is not a number.
        ValueError: a value is an array with more than one element.
    """
    converted: dict[str, Scalar] = {}
    for name, value in metrics.items():
        if not isinstance(name, str):
            raise TypeError(f"metric names must be strings, got {name!r} ({type(name).__name__})")
        if isinstance(value, bool | int | float):
            converted[name] = value
            continue
        try:
            array = np.asarray(value)
        except Exception as error:  # e.g. an object numpy cannot convert
            raise TypeError(f"metric {name!r} is a {type(value).__name__}, not a number") from error
        if array.size != 1:
            raise ValueError(
                f"metric {name!r} has shape {array.shape}; log a scalar (e.g. its mean over "
                f"seeds and envs) or one metric per element"
            )
        if array.dtype.kind not in "biuf":
            raise TypeError(f"metric {name!r} has dtype {array.dtype}, not a number")
        converted[name] = array.reshape(()).item()
    return converted


def _record(step: int, metrics: Mapping[str, Any]) -> dict[str, Scalar]:
    scalars = to_python_scalars(metrics)
    if STEP_KEY in scalars:
        raise ValueError(
            f"metric name {STEP_KEY!r} is reserved for the step argument of log(); rename it "
            f"(e.g. 'update' or 'env_steps')"
        )
    return {STEP_KEY: int(step), **scalars}


def _prepare_file(path: str | os.PathLike) -> Path:
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


# --------------------------------------------------------------------------- JSON lines
class JsonlLogger(_LoggerBase):
    """One JSON object per line, ``{"step": step, **metrics}``; appends and flushes every call.

    Args:
        path: the ``.jsonl`` file (created with its folder; an existing file is appended to).
        resume_step: drop existing records with ``step > resume_step`` first (resuming from a
            checkpoint at that step).
    """

    def __init__(self, path: str | os.PathLike, *, resume_step: int | None = None) -> None:
        self.path = _prepare_file(path)
        if resume_step is not None and self.path.exists():
            kept = [r for r in read_jsonl(self.path) if r.get(STEP_KEY, -1) <= resume_step]
            replace_text(self.path, "".join(json.dumps(r) + "\n" for r in kept))
        self._file = self.path.open("a")
        # A crash mid-write can leave a last line without its newline; do not glue onto it.
        if self._file.tell() > 0 and _last_byte(self.path) != b"\n":
            self._file.write("\n")

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        self._file.write(json.dumps(_record(step, metrics)) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Reads a ``JsonlLogger`` file back (a truncated last line, from a crash, is skipped).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a line other than the last is not JSON (names the line number).
    """
    path = Path(path)
    lines = path.read_text().splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            if number == len(lines):
                warnings.warn(
                    f"{path}: skipped a truncated last line ({line[:60]!r}), left by a run that "
                    f"stopped while writing",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            raise ValueError(
                f"{path}:{number} is not valid JSON ({error}): {line[:80]!r}"
            ) from None
    return records


def rows_with_episodes(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The training records whose update saw an episode end (``episodes > 0``), and those that
    do not count episodes.

    An update whose rollout is shorter than the episodes (PQN's 16 steps on MPE's 25-step
    episodes) can end none; its ``episode_return`` is then a placeholder 0, not a return, and
    would pull curves and averages towards 0.
    """
    return [row for row in rows if row.get("episodes", 1) > 0]


# --------------------------------------------------------------------------- CSV
class CsvLogger(_LoggerBase):
    """A CSV file with a header row; ``step`` first, then metrics in first-seen order.

    New keys policy: when a row brings metric names the header lacks, the file is rewritten with
    the widened header (earlier rows get empty cells), via a temporary file and an atomic
    rename, so the file is always one valid table that ``csv``/pandas read directly. This costs
    one rewrite per new name, which happens a handful of times per run. Rows missing a known
    name get an empty cell. Floats are written with ``repr`` (exact round trip).

    Args:
        path: the ``.csv`` file (created with its folder; an existing file is appended to and
            its header reused).
        resume_step: drop existing rows with ``step > resume_step`` first.
    """

    def __init__(self, path: str | os.PathLike, *, resume_step: int | None = None) -> None:
        self.path = _prepare_file(path)
        self._columns: list[str] = []
        if self.path.exists() and self.path.stat().st_size > 0:
            columns, rows = _read_csv(self.path)
            if resume_step is not None:
                rows = [r for r in rows if _csv_step(r) <= resume_step]
                replace_text(self.path, _csv_text(columns, rows))
            self._columns = columns
        self._file = None if not self._columns else self.path.open("a", newline="")

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        record = _record(step, metrics)
        new = [name for name in record if name not in self._columns]
        if new:
            self._widen(new)
        assert self._file is not None
        writer = csv.DictWriter(self._file, fieldnames=self._columns, restval="")
        writer.writerow(record)  # str(float) is repr: the shortest exact round trip
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _widen(self, new: list[str]) -> None:
        rows = _read_csv(self.path)[1] if self._columns else []
        self.close()
        self._columns = self._columns + new
        replace_text(self.path, _csv_text(self._columns, rows))
        self._file = self.path.open("a", newline="")


def _csv_step(row: Mapping[str, str]) -> int:
    try:
        return int(row.get(STEP_KEY) or -1)
    except ValueError:
        return -1


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def _csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, str]]) -> str:
    import io

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), restval="", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


# --------------------------------------------------------------------------- optional
class TensorBoardLogger(_LoggerBase):
    """Scalars to TensorBoard event files through ``tensorboardX`` (optional dependency).

    Args:
        logdir: the event file folder.
        resume_step: drop the events with ``step > resume_step`` from the event files already
            in ``logdir`` first (``truncate_event_files``), so that after a resume the log holds
            each step once, as an uninterrupted run's does.

    Raises:
        ImportError: tensorboardX is not installed (the message says how to install it).
    """

    def __init__(
        self, logdir: str | os.PathLike, *, resume_step: int | None = None, **writer_kwargs: Any
    ) -> None:
        try:
            from tensorboardX import SummaryWriter
        except ImportError as error:
            raise ImportError(_MISSING["tensorboard"]) from error
        self.logdir = Path(logdir).expanduser()
        if resume_step is not None:
            truncate_event_files(self.logdir, resume_step)
        self._writer = SummaryWriter(logdir=str(self.logdir), **writer_kwargs)

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        for name, value in to_python_scalars(metrics).items():
            self._writer.add_scalar(name, value, global_step=int(step))
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


_EVENT_FILE_MARK = "tfevents"


def _event_records(path: Path) -> list[bytes]:
    """The framed records of a TFRecord event file (length, its CRC, data, data CRC), each as
    its raw bytes; a record cut short by a killed writer ends the list."""
    data = path.read_bytes()
    records, offset = [], 0
    while offset + 12 <= len(data):
        (length,) = struct.unpack("<Q", data[offset : offset + 8])
        end = offset + 12 + length + 4
        if end > len(data):
            break
        records.append(data[offset:end])
        offset = end
    return records


def _event_files(logdir: Path) -> list[Path]:
    if not logdir.is_dir():
        return []
    return sorted(p for p in logdir.iterdir() if _EVENT_FILE_MARK in p.name and p.is_file())


def truncate_event_files(logdir: str | os.PathLike, resume_step: int) -> None:
    """Drops the summaries with ``step > resume_step`` from every event file in ``logdir``.

    Each file is rewritten atomically with the records it keeps, byte for byte (their CRCs
    stay valid); a file left without summaries is removed. Needs tensorboardX (its protobuf
    classes decode the steps).
    """
    from tensorboardX.proto.event_pb2 import Event

    for path in _event_files(Path(logdir)):
        records = _event_records(path)
        kept = [r for r in records if Event.FromString(r[12:-4]).step <= resume_step]
        if not any(Event.FromString(r[12:-4]).HasField("summary") for r in kept):
            path.unlink()
        elif len(kept) != len(records) or path.stat().st_size != sum(map(len, kept)):
            replace_bytes(path, b"".join(kept))


def read_event_scalars(logdir: str | os.PathLike) -> list[tuple[str, int, float]]:
    """``(tag, step, value)`` of every scalar in ``logdir``'s event files, in file order."""
    from tensorboardX.proto.event_pb2 import Event

    scalars = []
    for path in _event_files(Path(logdir)):
        for record in _event_records(path):
            event = Event.FromString(record[12:-4])
            scalars += [(v.tag, event.step, v.simple_value) for v in event.summary.value]
    return scalars


WANDB_MODES = ("online", "offline", "disabled")
WANDB_ID_FILE = "wandb_id.txt"


@dataclasses.dataclass(frozen=True, kw_only=True)
class WandbConfig:
    """Where the ``wandb`` logger writes (``run.wandb.*``; used only with that logger).

    Attributes:
        project: W&B project.
        entity: W&B team or user (empty: your default entity).
        group: groups runs in the W&B UI (e.g. the seeds or points of one study).
        name: the run's display name (empty: the run directory's name).
        tags: W&B tags.
        mode: ``"online"``, ``"offline"`` (sync later with ``wandb sync``) or ``"disabled"``.
    """

    project: str = "jaxmarl"
    entity: str = ""
    group: str = ""
    name: str = ""
    tags: tuple[str, ...] = ()
    mode: str = "online"

    def __post_init__(self):
        if self.mode not in WANDB_MODES:
            raise ValueError(f"run.wandb.mode must be one of {WANDB_MODES}, got {self.mode!r}")
        if not self.project:
            raise ValueError("run.wandb.project must not be empty (e.g. run.wandb.project=marl)")

    def init_kwargs(self, run_dir: Path) -> dict[str, Any]:
        """``wandb.init`` keywords (without ``id``/``resume``/``config``) for ``run_dir``."""
        kwargs: dict[str, Any] = {
            "project": self.project,
            "name": self.name or run_dir.name,
            "tags": list(self.tags),
            "mode": self.mode,
            "dir": str(run_dir),
        }
        kwargs.update({k: v for k, v in (("entity", self.entity), ("group", self.group)) if v})
        return kwargs


def wandb_run_id(run_dir: str | os.PathLike, *, resume: bool) -> str:
    """The W&B run id of ``run_dir``: kept in ``RUN_DIR/wandb_id.txt``, so a resumed run
    continues the same W&B run; a new run (``resume=False``) gets a fresh id."""
    path = Path(run_dir) / WANDB_ID_FILE
    if resume and path.is_file() and path.read_text().strip():
        return path.read_text().strip()
    run_id = secrets.token_hex(4)  # W&B ids: letters and digits
    _prepare_file(path)
    replace_text(path, run_id + "\n")
    return run_id


class WandbLogger(_LoggerBase):
    """Scalars to Weights & Biases (optional dependency); host side only, never inside ``jit``.

    Args:
        **init_kwargs: passed to ``wandb.init`` (``project``, ``entity``, ``config``, ``id``,
            ``resume``, ...; ``make_run_logger`` fills them from ``WandbConfig``).

    Raises:
        ImportError: wandb is not installed (the message says how to install it).
    """

    def __init__(self, **init_kwargs: Any) -> None:
        try:
            import wandb
        except ImportError as error:
            raise ImportError(_MISSING["wandb"]) from error
        self._run = wandb.init(**init_kwargs)

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        self._run.log(to_python_scalars(metrics), step=int(step))

    def close(self) -> None:
        self._run.finish()


# --------------------------------------------------------------------------- composition
class MultiLogger(_LoggerBase):
    """Sends every call to several loggers; ``close`` closes all of them even if one fails."""

    def __init__(self, loggers: Iterable[Logger]) -> None:
        self.loggers = list(loggers)

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        for logger in self.loggers:
            logger.log(step, metrics)

    def close(self) -> None:
        errors = []
        for logger in self.loggers:
            try:
                logger.close()
            except Exception as error:  # close the others first, then report
                errors.append(error)
        if errors:
            raise errors[0]


# --------------------------------------------------------------------------- seeds and points
MEMBER_KEYS = ("update", "env_steps", "seed", "point")


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean: the mean of what is left after dropping the lowest and the highest
    ``floor(n / 4)`` values (``scipy.stats.trim_mean(values, 0.25)``, rliable's IQM); for fewer
    than 4 values it is the mean."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    cut = len(ordered) // 4
    return float(np.mean(ordered[cut : len(ordered) - cut]))


def dashboard_row(
    rows: Sequence[Mapping[str, Any]], point_labels: Sequence[str] = ()
) -> dict[str, Scalar]:
    """One update's per-member rows (``seed``, optionally ``point``) as one row of tags.

    A single member (one seed, no sweep) keeps its metric names. Otherwise every metric ``m``
    becomes ``m/seed_<s>`` per seed plus ``m/mean`` and ``m/iqm`` over seeds (with an
    in-program sweep, ``m/<point label>/seed_<s>``, ``m/<point label>/mean``, ...), so
    TensorBoard shows each seed as its own curve instead of several points per tag and step,
    and W&B keeps them all. ``env_steps`` is logged once.
    """
    if not rows:
        return {}
    first = rows[0]
    extra = {"env_steps": first["env_steps"]} if "env_steps" in first else {}
    if len(rows) == 1 and not point_labels:
        return {**extra, **{k: v for k, v in first.items() if k not in MEMBER_KEYS}}
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        label = point_labels[row.get("point", 0)] if point_labels else ""
        groups.setdefault(label, []).append(row)
    out: dict[str, Scalar] = dict(extra)
    for label, members in groups.items():
        prefix = f"{label}/" if label else ""
        for name in [k for k in members[0] if k not in MEMBER_KEYS]:
            values = [float(member[name]) for member in members]
            for member, value in zip(members, values, strict=True):
                out[f"{name}/{prefix}seed_{member.get('seed', 0)}"] = value
            if len(members) > 1:
                out[f"{name}/{prefix}mean"] = float(np.mean(values))
                out[f"{name}/{prefix}iqm"] = iqm(values)
    return out


class RunLogger(_LoggerBase):
    """A training run's loggers: the record loggers (JSONL, CSV) get one row per member
    (seed, or point x seed), the dashboards (TensorBoard, W&B) one ``dashboard_row`` per
    update with a tag per member plus the mean and IQM."""

    def __init__(
        self,
        records: Iterable[Logger],
        dashboards: Iterable[Logger],
        point_labels: Sequence[str] = (),
    ) -> None:
        self.records = MultiLogger(records)
        self.dashboards = MultiLogger(dashboards)
        self.point_labels = tuple(point_labels)

    def log_rows(self, step: int, rows: Sequence[Mapping[str, Any]]) -> None:
        """Logs one update's per-member ``rows`` (each with ``seed``, maybe ``point``)."""
        for row in rows:
            self.records.log(step, row)
        if self.dashboards.loggers and rows:
            self.dashboards.log(step, dashboard_row(rows, self.point_labels))

    def close(self) -> None:
        try:
            self.records.close()
        finally:
            self.dashboards.close()


def make_run_logger(
    names: Sequence[str],
    run_dir: str | os.PathLike,
    *,
    resume_step: int | None = None,
    point_labels: Sequence[str] = (),
    wandb: WandbConfig | None = None,
    config: Mapping[str, Any] | None = None,
) -> RunLogger:
    """The ``RunLogger`` of a run directory (``make_logger``'s files; W&B from ``wandb``,
    continuing the run's W&B run when ``resume_step`` is given: see ``wandb_run_id``)."""
    check_loggers(names)
    run_dir = Path(run_dir)
    records = [n for n in dict.fromkeys(names) if n in ("jsonl", "csv")]
    dashboards = [n for n in dict.fromkeys(names) if n not in records]
    wandb_kwargs: dict[str, Any] = {"config": dict(config or {})}
    if "wandb" in dashboards:
        settings = wandb or WandbConfig()
        run_id = wandb_run_id(run_dir, resume=resume_step is not None)
        wandb_kwargs.update(settings.init_kwargs(run_dir), id=run_id, resume="allow")
    first = make_logger(records, run_dir, resume_step=resume_step)
    try:
        second = make_logger(
            dashboards, run_dir, resume_step=resume_step, wandb_kwargs=wandb_kwargs
        )
    except Exception:
        first.close()
        raise
    return RunLogger(first.loggers, second.loggers, point_labels)


LOGGER_NAMES = ("jsonl", "csv", "tensorboard", "wandb")
_MODULES = {"tensorboard": "tensorboardX", "wandb": "wandb"}
_MISSING = {
    "tensorboard": "the tensorboard logger needs tensorboardX, which is not installed: "
    "pip install 'jaxmarl[tensorboard]' (or pip install tensorboardX), or log with "
    "'jsonl'/'csv' only",
    "wandb": "the wandb logger needs wandb, which is not installed: pip install "
    "'jaxmarl[wandb]' (or pip install wandb), or log with 'jsonl'/'csv' only",
}


def check_loggers(names: Sequence[str]) -> None:
    """Checks that every logger in ``names`` exists and its package is installed, without
    importing it: a run checks this before it compiles or writes anything.

    Raises:
        ValueError: an unknown name.
        ImportError: an optional logger's package is missing (the message says how to fix it).
    """
    unknown = [name for name in names if name not in LOGGER_NAMES]
    if unknown:
        raise ValueError(f"unknown logger(s) {unknown}; choose from {list(LOGGER_NAMES)}")
    for name in dict.fromkeys(names):
        module = _MODULES.get(name)
        if module is not None and importlib.util.find_spec(module) is None:
            raise ImportError(_MISSING[name])


def make_logger(
    names: Sequence[str],
    run_dir: str | os.PathLike,
    *,
    resume_step: int | None = None,
    wandb_kwargs: Mapping[str, Any] | None = None,
) -> MultiLogger:
    """The loggers of a run directory by name: ``metrics.jsonl``, ``metrics.csv``, ``tb/``, W&B.

    Args:
        names: any of ``"jsonl"``, ``"csv"``, ``"tensorboard"``, ``"wandb"``.
        run_dir: the run directory.
        resume_step: passed to the file loggers (drop records after the resumed checkpoint).
        wandb_kwargs: keywords for ``wandb.init``.

    Raises:
        ValueError: an unknown name.
        ImportError: an optional logger's package is missing.
    """
    check_loggers(names)
    run_dir = Path(run_dir)
    builders = {
        "jsonl": lambda: JsonlLogger(run_dir / "metrics.jsonl", resume_step=resume_step),
        "csv": lambda: CsvLogger(run_dir / "metrics.csv", resume_step=resume_step),
        "tensorboard": lambda: TensorBoardLogger(run_dir / "tb", resume_step=resume_step),
        "wandb": lambda: WandbLogger(**dict(wandb_kwargs or {})),
    }
    loggers: list[Logger] = []
    try:
        for name in dict.fromkeys(names):
            loggers.append(builders[name]())
    except Exception:
        MultiLogger(loggers).close()
        raise
    return MultiLogger(loggers)
