"""Host-side sweeps: hydra's multirun syntax for ``python -m jaxmarl.train``.

``python -m jaxmarl.train -m alg=ippo lr=1e-3,3e-4 run.seed=0,1`` trains every combination
of the comma-separated values (a cartesian product, the last key varying fastest, as hydra's
basic sweeper does), one after the other, each in its own run directory. Every point's config
is built and validated (its learner built too, and every run directory checked) before the
first one compiles, so a bad value anywhere fails at once with exit status 2 and one line, as a
single run does.

Layout::

    <run.out_dir>/<run.name or ALG_ENV_multirun_TIMESTAMP>/
        multirun.json          the command line and the points
        0_lr=0.001,run.seed=0/ one ordinary run directory per point (resume it with --resume)
        1_lr=0.001,run.seed=1/
        ...
        sweep.md, sweep.csv    final metrics per point (mean and IQM over seeds)
        marl_eval.json         every point's evaluations, one marl-eval algorithm per point

Brackets, braces and quotes protect commas: ``network.trunk.sizes=[64,64]`` is one value.
Without ``-m`` a comma list is an error naming the three readings (sweep, list, string), as in
hydra. ``run.name`` and ``run.out_dir`` name the sweep's folder and cannot be swept;
``--resume`` takes one point's folder. Combined with an in-program sweep
(``sweep.lr=[...]``), every host point runs its in-program points in one program.

Why not a real hydra entry point: hydra would own the config (its composition, its output
folders and logging), while the typed, frozen dataclasses, presets and checks of
``jaxmarl.config`` already do the composing. The syntax that matters to a user (``-m``, comma
lists, ``+key``, ``~key``) costs a few dozen lines here and keeps one config path, one set of
error messages and no hydra dependency. Not supported: hydra's sweep functions (``range(...)``,
``choice(...)``, ``glob(...)``), launchers and sweeper plugins.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import re
from collections.abc import Sequence
from pathlib import Path

_OPEN, _CLOSE = "[{(", "]})"


def split_values(value: str) -> list[str]:
    """``value`` split at the commas outside brackets, braces, parentheses and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(value):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(value[start:index])
            start = index + 1
    parts.append(value[start:])
    return parts


@dataclasses.dataclass(frozen=True)
class Point:
    """One combination: its swept ``key=value`` pairs and its whole argument list."""

    index: int
    swept: tuple[tuple[str, str], ...]
    args: tuple[str, ...]

    @property
    def label(self) -> str:
        return ",".join(f"{key}={value}" for key, value in self.swept)

    @property
    def dirname(self) -> str:
        safe = re.sub(r"[^A-Za-z0-9._=,+-]", "_", self.label)[:120]
        return f"{self.index}_{safe}" if safe else str(self.index)


def expand(args: Sequence[str]) -> list[Point]:
    """Every combination of the comma lists in ``args`` (``key=a,b`` / ``+key=a,b``)."""
    choices: list[list[tuple[str, str | None]]] = []
    for arg in args:
        key, has_value, value = arg.partition("=")
        if not has_value or arg.startswith("~"):
            choices.append([(arg, None)])
            continue
        choices.append([(key, item) for item in split_values(value)])
    points = []
    for index, combo in enumerate(itertools.product(*choices)):
        chosen = tuple(key if value is None else f"{key}={value}" for key, value in combo)
        swept = tuple(
            (key.lstrip("+"), value)
            for (key, value), options in zip(combo, choices, strict=True)
            if len(options) > 1 and value is not None
        )
        points.append(Point(index, swept, chosen))
    return points


def multirun(argv: Sequence[str]) -> int:
    """``python -m jaxmarl.train -m ...`` (``argv`` without the ``-m``): 0 when every point
    trained, 1 when one failed (the others still run), 2 for a command line that cannot run."""
    from jaxmarl import train
    from jaxmarl.cpu_rng import use_fast_cpu_rng
    from jaxmarl.training.host.devices import use_devices

    options = [a for a in argv if a in ("--no-progress", "--overwrite")]
    args = [a for a in argv if a not in options]
    try:
        for arg in args:
            if arg.startswith(("--resume", "--step")):
                raise train.UsageError(
                    "--resume takes one run directory: resume a sweep's point with "
                    "--resume SWEEP_DIR/POINT (without -m)"
                )
        points = expand(args)
        for key, _ in points[0].swept:
            if key in ("run.name", "run.out_dir"):
                raise train.UsageError(
                    f"{key} names the sweep's folder and cannot be swept; sweep other keys"
                )
        first = train.parse([*points[0].args, "--overwrite"])
        config = first.config
        swept_keys = {key for key, _ in points[0].swept}
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        if config.run.name:
            name = config.run.name
        elif swept_keys & {"alg", "env"}:
            name = f"multirun_{stamp}"
        else:
            name = f"{first.alg}_{train._env_label(config, '+')}_multirun_{stamp}"
        sweep_dir = Path(config.run.out_dir) / name
        train._check_run_dir_path(sweep_dir)
        commands = [
            train.parse(
                [*point.args, f"run.out_dir={sweep_dir}", f"run.name={point.dirname}", *options]
            )
            for point in points
        ]
        # Before JAX's backend starts (the learners below build envs): as execute does.
        use_devices(
            max(
                command.config.run.devices * command.config.run.data_devices for command in commands
            )
        )
        use_fast_cpu_rng()
        for command in commands:  # what only the env can tell (e.g. discrete actions)
            train.check_buildable(command)
    except train.CLI_ERRORS as error:
        return train._fail(error)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    record = {
        "argv": list(argv),
        "points": [{"dir": p.dirname, "overrides": dict(p.swept)} for p in points],
    }
    (sweep_dir / "multirun.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"multirun: {len(points)} points -> {sweep_dir}")
    statuses: list[int] = []
    for point, command in zip(points, commands, strict=True):
        print(f"[{point.index + 1}/{len(points)}] {point.label or '(no swept keys)'}")
        statuses.append(train.execute(command))
        _write_summary(sweep_dir, points, commands, statuses)
        if statuses[-1] == train.INTERRUPTED:  # Ctrl-C stops the sweep, not just this point
            return train.INTERRUPTED
    print((sweep_dir / "sweep.md").read_text())
    return 0 if all(status == 0 for status in statuses) else 1


def _status(status: int) -> str:
    from jaxmarl import train  # not at the top: train imports this module

    if status == 0:
        return "ok"
    return "interrupted" if status == train.INTERRUPTED else f"failed (exit {status})"


def _write_summary(sweep_dir, points, commands, statuses) -> None:
    """``sweep.md``/``sweep.csv`` and ``marl_eval.json`` over the points run so far."""
    from jaxmarl import train
    from jaxmarl.training.host.results import (
        final_results,
        merge_marl_eval,
        write_json,
        write_table,
    )

    rows, documents = [], []
    for point, command, status in zip(points, commands, statuses, strict=False):
        labels = command.config.run.sweep.labels()
        for result in final_results(command.run_dir, labels):
            row = {"#": point.index, **dict(point.swept)}
            if labels:
                row["in-program point"] = result["point"]
            row.update({k: v for k, v in result.items() if k != "point"})
            row["status"] = _status(status)
            row["run_dir"] = point.dirname
            rows.append(row)
        name = f"{command.alg}[{point.label}]" if point.label else command.alg
        documents.append(train.marl_eval_of(command, command.run_dir, name))
    write_table(rows, sweep_dir / "sweep")
    write_json(merge_marl_eval(*documents), sweep_dir / "marl_eval.json")
