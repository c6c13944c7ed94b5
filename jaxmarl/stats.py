"""Comparing results the way the field reports them: IQM with stratified-bootstrap intervals.

Agarwal et al. (2021, "Deep RL at the edge of the statistical precipice") and marl-eval
(Gorsane et al. 2022) ask for the interquartile mean (IQM) over runs with 95% stratified
bootstrap confidence intervals, the probability of improvement of one algorithm over another,
and performance profiles, instead of mean ± std over a handful of seeds and p-values picked
after the fact. This module is a thin, typed layer over rliable (the optional ``stats`` extra:
``pip install jaxmarl[stats]``), which does the bootstrapping.

Scores are ``{algorithm: array}`` with one row per run (seed) and one column per task (env or
scenario); a 1-D array is one task. Every function takes ``reps`` (bootstrap resamples) and
``seed`` so that a table is reproducible::

    from jaxmarl import stats

    scores = {"ours": np.array([...12 seeds...]), "JaxMARL": np.array([...])}
    table = stats.aggregate_table(scores)            # IQM and mean with 95% CIs
    print(stats.markdown_table(table))
    p = stats.probability_of_improvement(scores["ours"], scores["JaxMARL"])  # P(ours > JaxMARL)
    stats.verdict(p, "ours", "JaxMARL")  # the one pre-stated test: the interval against 0.5
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "AGGREGATES",
    "Estimate",
    "aggregate_table",
    "iqm",
    "markdown_table",
    "performance_profiles",
    "plot_performance_profiles",
    "probability_of_improvement",
    "verdict",
]


def _rliable():
    try:
        from rliable import library, metrics
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "jaxmarl.stats needs rliable: pip install 'jaxmarl[stats]'"
        ) from error
    return library, metrics


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval ``[low, high]``."""

    point: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.point:.4g} [{self.low:.4g}, {self.high:.4g}]"


def _matrix(scores: Any) -> np.ndarray:
    """``[runs, tasks]`` float64; a 1-D array of runs is one task."""
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] < 2:
        raise ValueError(
            f"scores must be [runs] or [runs, tasks] with at least 2 runs, got shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite (drop or replace failed runs explicitly)")
    return array


def _interval_estimates(library, scores, func, reps, confidence, seed):
    # rliable's stratified resampling draws its indices from NumPy's global generator
    # (np.random.choice), whatever random_state says: seed it for this call, then put the
    # caller's global state back.
    saved = np.random.get_state()  # noqa: NPY002
    np.random.seed(seed)  # noqa: NPY002
    try:
        with warnings.catch_warnings():
            # arch (under rliable) deprecates the RandomState that rliable hands it.
            warnings.filterwarnings("ignore", category=FutureWarning, module="arch")
            return library.get_interval_estimates(
                scores,
                func,
                reps=reps,
                confidence_interval_size=confidence,
                random_state=np.random.RandomState(seed),
            )
    finally:
        np.random.set_state(saved)  # noqa: NPY002


def iqm(scores: Any) -> float:
    """Interquartile mean over all runs and tasks: the mean of the middle 50% of scores."""
    _, metrics = _rliable()
    return float(metrics.aggregate_iqm(_matrix(scores)))


def _aggregates() -> dict[str, Any]:
    _, metrics = _rliable()
    return {
        "IQM": metrics.aggregate_iqm,
        "median": metrics.aggregate_median,
        "mean": metrics.aggregate_mean,
    }


# "median" is rliable's: the median over tasks of each task's mean over runs (with one task,
# the mean), so it is not in the default set.
AGGREGATES = ("IQM", "mean")


def aggregate_table(
    scores: Mapping[str, Any],
    aggregates: Sequence[str] = AGGREGATES,
    *,
    reps: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, Estimate]]:
    """``{algorithm: {aggregate: Estimate}}`` with stratified-bootstrap intervals.

    The bootstrap resamples runs within each task (stratified), as rliable does.
    """
    library, _ = _rliable()
    known = _aggregates()
    unknown = [name for name in aggregates if name not in known]
    if unknown:
        raise ValueError(f"unknown aggregates {unknown}; choose from {list(known)}")
    matrices = {name: _matrix(values) for name, values in scores.items()}
    funcs = [known[name] for name in aggregates]

    def all_aggregates(matrix: np.ndarray) -> np.ndarray:
        return np.array([func(matrix) for func in funcs])

    points, intervals = _interval_estimates(
        library, matrices, all_aggregates, reps, confidence, seed
    )
    return {
        alg: {
            name: Estimate(float(points[alg][i]), *map(float, intervals[alg][:, i]))
            for i, name in enumerate(aggregates)
        }
        for alg in matrices
    }


def probability_of_improvement(
    scores_x: Any, scores_y: Any, *, reps: int = 2000, confidence: float = 0.95, seed: int = 0
) -> Estimate:
    """P(X > Y): the chance that a run of X beats a run of Y on a task (ties count half),
    averaged over tasks, with a stratified-bootstrap interval. 0.5 means no difference."""
    library, metrics = _rliable()
    x, y = _matrix(scores_x), _matrix(scores_y)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"X has {x.shape[1]} tasks and Y has {y.shape[1]}; they must match")
    points, intervals = _interval_estimates(
        library, {"pair": [x, y]}, metrics.probability_of_improvement, reps, confidence, seed
    )
    low, high = map(float, np.ravel(intervals["pair"]))
    return Estimate(float(np.ravel(points["pair"])[0]), low, high)


def verdict(improvement: Estimate, x: str = "X", y: str = "Y") -> str:
    """The one test to state before looking, for an estimate of P(X > Y) with its interval:
    ``"<x> ahead"`` when the whole interval lies above 0.5, ``"<y> ahead"`` when it lies below,
    ``"not separated"`` otherwise (the seeds cannot tell the two apart)."""
    if improvement.low > 0.5:
        return f"{x} ahead"
    if improvement.high < 0.5:
        return f"{y} ahead"
    return "not separated"


def performance_profiles(
    scores: Mapping[str, Any], taus: Sequence[float], *, reps: int = 2000, seed: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Score distributions: for each threshold ``tau``, the fraction of runs scoring above it.

    Returns ``(profiles, intervals)``: ``{alg: [len(taus)]}`` and ``{alg: [2, len(taus)]}``.
    """
    library, _ = _rliable()
    taus = np.asarray(taus, dtype=np.float64)
    return _interval_estimates(
        library,
        {name: _matrix(values) for name, values in scores.items()},
        lambda matrix: library.score_distributions(matrix, taus),
        reps,
        0.95,
        seed,
    )


def plot_performance_profiles(
    scores: Mapping[str, Any],
    taus: Sequence[float],
    path: str | Path,
    *,
    xlabel: str = "score",
    reps: int = 2000,
    seed: int = 0,
) -> Path:
    """Performance profiles with their bands, as a PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    profiles, intervals = performance_profiles(scores, taus, reps=reps, seed=seed)
    figure = Figure(figsize=(6, 4), dpi=100)
    ax = figure.add_subplot()
    for name in profiles:
        ax.plot(taus, profiles[name], label=name)
        ax.fill_between(taus, intervals[name][0], intervals[name][1], alpha=0.2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"fraction of runs with score > $\tau$")
    ax.legend()
    figure.tight_layout()
    figure.savefig(path)
    return Path(path)


def markdown_table(table: Mapping[str, Mapping[str, Estimate]]) -> str:
    """A Markdown table of ``aggregate_table``'s result: one row per algorithm."""
    names = list(next(iter(table.values())))
    lines = [
        "| algorithm | " + " | ".join(f"{n} [95% CI]" for n in names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for alg, row in table.items():
        lines.append(f"| {alg} | " + " | ".join(str(row[n]) for n in names) + " |")
    return "\n".join(lines)
