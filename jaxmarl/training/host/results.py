"""A finished run's results: final metrics per sweep point, summary tables, marl-eval JSON.

Everything here reads a run directory's ``metrics.jsonl`` and ``eval.jsonl`` back (so a
resumed run's whole history counts), after training; nothing touches JAX.

marl-eval (instadeepai/marl-eval) reads raw results as nested JSON,
``{env: {task: {algorithm: {run: {"step_<k>": {"step_count": int, metric: [values]},
"absolute_metrics": {metric: [values]}}}}}}``. ``marl_eval_json`` writes one ``run`` per
seed (``seed_<s>``) and one ``step_<k>`` per evaluation (``k`` from 1), each metric as a list of
one value: the seed's mean over that evaluation's greedy episodes, which marl-eval's
format allows for metrics computed over several episodes. ``absolute_metrics`` holds the final
evaluation (marl-eval's protocol asks for a separate, 10x longer evaluation of the best
policy; train with more ``run.eval_episodes`` or evaluate the run again with
``python -m jaxmarl.evaluate`` for that). Points of an in-program sweep are separate
algorithms, ``<alg>[<point label>]``.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxmarl.training.host.logging import iqm, read_jsonl, rows_with_episodes

NOT_EVALUATION_METRICS = ("update", "env_steps", "seed", "point", "step", "eval_episodes")


def _read(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path) if path.is_file() else []


def _members(rows: Sequence[Mapping[str, Any]], point: int) -> list[Mapping[str, Any]]:
    return [row for row in rows if row.get("point", 0) == point]


def final_results(run_dir: str | os.PathLike, point_labels: Sequence[str] = ()) -> list[dict]:
    """One dict per point of an in-program sweep (one for a plain run) with the final metrics.

    Keys: ``point`` (its label, ``""`` without a sweep), ``seeds``, ``env_steps`` (of the last
    update), ``episode_return`` (mean over seeds of the last update that ended episodes),
    ``eval_episode_return`` and ``eval_episode_return_iqm`` (mean and IQM over seeds of the last
    greedy evaluation; absent without one).
    """
    run_dir = Path(run_dir)
    history = _read(run_dir / "metrics.jsonl")
    evaluations = _read(run_dir / "eval.jsonl")
    results = []
    for point, label in enumerate(point_labels or [""]):
        result: dict[str, Any] = {"point": label}
        rows = _members(history, point)
        result["seeds"] = len({row.get("seed", 0) for row in rows})
        if rows:
            result["env_steps"] = max(row["env_steps"] for row in rows)
        ended = rows_with_episodes(rows)
        if ended:
            last = [row for row in ended if row["update"] == ended[-1]["update"]]
            result["episode_return"] = float(np.mean([row["episode_return"] for row in last]))
        evals = _members(evaluations, point)
        if evals:
            last = [row for row in evals if row["update"] == evals[-1]["update"]]
            values = [row["eval_episode_return"] for row in last]
            result["eval_episode_return"] = float(np.mean(values))
            result["eval_episode_return_iqm"] = iqm(values)
        results.append(result)
    return results


def write_table(rows: Sequence[Mapping[str, Any]], stem: str | os.PathLike) -> tuple[Path, Path]:
    """``rows`` (dicts, columns in first-seen order) as ``<stem>.md`` and ``<stem>.csv``."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    show = lambda value: f"{value:.4g}" if isinstance(value, float) else str(value)
    lines = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(show(row.get(c, "")) for c in columns) + " |")
    stem = Path(stem)
    markdown, table = stem.with_suffix(".md"), stem.with_suffix(".csv")
    markdown.write_text("\n".join(lines) + "\n")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, restval="")
    writer.writeheader()
    writer.writerows(rows)
    table.write_text(buffer.getvalue())
    return markdown, table


def marl_eval_json(
    run_dir: str | os.PathLike,
    *,
    env_name: str,
    task_name: str,
    algorithm: str,
    point_labels: Sequence[str] = (),
) -> dict[str, Any]:
    """The run's evaluations in marl-eval's raw-data format (see the module docstring).

    Metric names drop the ``eval_`` prefix (``episode_return``, ``win_rate``, ...).
    """
    evaluations = _read(Path(run_dir) / "eval.jsonl")
    algorithms: dict[str, Any] = {}
    for point, label in enumerate(point_labels or [""]):
        name = f"{algorithm}[{label}]" if label else algorithm
        runs: dict[str, Any] = {}
        rows = _members(evaluations, point)
        for seed in sorted({row.get("seed", 0) for row in rows}):
            mine = [row for row in rows if row.get("seed", 0) == seed]
            steps = {
                f"step_{k}": {"step_count": int(row["env_steps"]), **_metrics(row)}
                for k, row in enumerate(mine, start=1)
            }
            runs[f"seed_{seed}"] = {**steps, "absolute_metrics": _metrics(mine[-1])}
        if runs:
            algorithms[name] = runs
    return {env_name: {task_name: algorithms}} if algorithms else {}


def _metrics(row: Mapping[str, Any]) -> dict[str, list[float]]:
    return {
        key.removeprefix("eval_"): [float(value)]
        for key, value in row.items()
        if key not in NOT_EVALUATION_METRICS
    }


def merge_marl_eval(*documents: Mapping[str, Any]) -> dict[str, Any]:
    """Several ``marl_eval_json`` documents as one (env -> task -> algorithm -> run)."""
    merged: dict[str, Any] = {}
    for document in documents:
        for env, tasks in document.items():
            for task, algorithms in tasks.items():
                target = merged.setdefault(env, {}).setdefault(task, {})
                for name, runs in algorithms.items():
                    target.setdefault(name, {}).update(runs)
    return merged


def write_json(document: Mapping[str, Any], path: str | os.PathLike) -> Path:
    path = Path(path)
    path.write_text(json.dumps(document, indent=1) + "\n")
    return path
