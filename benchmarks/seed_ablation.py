"""Compare training runs over seeds: final greedy returns, IQM, P(improvement), collapses.

An ablation (one config value changed) is only as good as its seed statistics: on MPE a single
QMIX seed can end anywhere between -12 and -65, so two 3-seed means say little. This reads the
run directories that ``python -m jaxmarl.train`` writes (``metrics.jsonl``, ``eval.jsonl``; one
run with many seeds each) and prints one Markdown table:

* per seed, the last greedy evaluation (``--metric``, default ``eval_episode_return``);
* the IQM over seeds with its 95% stratified-bootstrap interval (``jaxmarl.stats``, rliable);
* against the first run (the first ``--run``; the first ``--values`` if there is none):
  P(this run > the first), the probability that a random seed of this run beats a random seed
  of the first (ties half), with its bootstrap interval, and the one test stated before
  looking: this run is ahead when the whole interval lies above 0.5, behind when it lies
  below, otherwise not separated at this number of seeds (``jaxmarl.stats.verdict``); and,
  where both ran the same base ``run.seed`` (seed i's key depends only on the base and the
  index, so seed i then starts from the same parameters), the seeds on which this run is ahead;
* with ``--below X``, the fraction of the training curve (``--train-metric``, one point per
  ``--stride`` updates) under ``X``, over the whole run and over its second half: how much of
  training a run spends collapsed, which a final number can hide.

``--reps`` and ``--seed`` set the bootstrap (resamples, and its seed, so a table repeats).
``--run LABEL=DIR1,DIR2`` counts the seeds of several runs of one config as one run (e.g. 3
seeds from ``run.seed=0`` and 6 more from ``run.seed=1``). ``--values LABEL=v0,v1,...`` adds
per-seed finals measured elsewhere (e.g. JaxMARL's) to the table. ``--json`` and ``--plot``
write the numbers and the training curves (median and quartiles over seeds; ``--band minmax``
for mean and range)::

    python benchmarks/seed_ablation.py --run bootstrap=runs/qmix_a --run termination=runs/qmix_b \\
        --below -40 --plot curves.png --json ablation.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import yaml

from jaxmarl import stats as rl_stats
from jaxmarl.training.host.logging import read_jsonl, rows_with_episodes


def load_run(run_dir: Path, metric: str, train_metric: str, stride: int) -> dict:
    """``{"final": [per seed], "seeds": [...], "curve": [seed][point], "curve_steps": [...]}``.

    ``seeds`` are ``(run.seed, index)`` pairs: seed i of two runs starts from the same key only
    where both have the same base ``run.seed`` (read from the run's ``config.yaml``).

    Raises:
        FileNotFoundError: ``run_dir`` has no ``eval.jsonl`` / ``metrics.jsonl``.
        KeyError: the metric is not in the files (the message lists those that are).
    """
    for name in ("eval.jsonl", "metrics.jsonl"):
        if not (run_dir / name).is_file():
            raise FileNotFoundError(
                f"{run_dir / name} does not exist; --run wants a run directory written by "
                f"python -m jaxmarl.train (with its eval.jsonl and metrics.jsonl)"
            )
    evals = read_jsonl(run_dir / "eval.jsonl")
    # No placeholder 0s from updates that ended no episode. The curves are then indexed by the
    # remaining records, which line up across seeds where episode ends do (fixed-length
    # episodes such as MPE's, or many envs per update).
    rows = rows_with_episodes(read_jsonl(run_dir / "metrics.jsonl"))
    for name, records in ((metric, evals), (train_metric, rows)):
        if records and name not in records[0]:
            raise KeyError(f"{run_dir}: no {name!r}; the records have {sorted(records[0])}")
    seeds = sorted({r["seed"] for r in evals})
    last = max(r["update"] for r in evals)
    final_of = {r["seed"]: r[metric] for r in evals if r["update"] == last}
    curves = [[r for r in rows if r["seed"] == s] for s in seeds]
    points = min(len(c) for c in curves) // stride * stride
    config = run_dir / "config.yaml"
    base_seed = yaml.safe_load(config.read_text())["run"]["seed"] if config.is_file() else None
    return {
        "dir": str(run_dir),
        "seeds": [[base_seed, s] for s in seeds],
        "final": [final_of[s] for s in seeds],
        "final_update": last,
        "curve": [[r[train_metric] for r in c[stride - 1 : points : stride]] for c in curves],
        "curve_steps": [r["env_steps"] for r in curves[0][stride - 1 : points : stride]],
    }


def join_runs(parts: list[dict]) -> dict:
    """One run of all the seeds of ``parts`` (runs of one config from different base seeds,
    e.g. 3 seeds from key 0 and 6 more from key 1), curves cut to the shortest part's.

    Raises:
        SystemExit: the parts' last evaluations are at different updates (not one config's runs),
            or two parts hold the same seed (one directory twice, or one ``run.seed`` twice:
            ``split(key, n)`` begins with ``split(key, m)`` for m < n). Parts without a
            ``config.yaml`` have no known base seed and are not checked for that.
    """
    if len(parts) == 1:
        return parts[0]
    dirs = [part["dir"] for part in parts]
    known = [tuple(seed) for part in parts for seed in part["seeds"] if seed[0] is not None]
    if len(set(dirs)) < len(dirs) or len(set(known)) < len(known):
        raise SystemExit(
            f"the runs {dirs} share seeds (the same directory or run.seed twice); a seed counted "
            "twice is not two seeds: join runs started with distinct run.seed"
        )
    updates = {part["final_update"] for part in parts}
    if len(updates) > 1:
        raise SystemExit(
            f"the runs {[part['dir'] for part in parts]} end at different updates "
            f"{sorted(updates)}; join only runs of one config"
        )
    points = min(len(part["curve_steps"]) for part in parts)
    return {
        "dir": ",".join(part["dir"] for part in parts),
        "seeds": [seed for part in parts for seed in part["seeds"]],
        "final": [value for part in parts for value in part["final"]],
        "final_update": parts[0]["final_update"],
        "curve": [curve[:points] for part in parts for curve in part["curve"]],
        "curve_steps": parts[0]["curve_steps"][:points],
    }


def same_seed_keys(run: dict, other: dict) -> bool:
    """Whether seed i of both runs started from the same key (same base seed, same indices)."""
    seeds, other_seeds = run.get("seeds"), other.get("seeds")
    if not seeds or not other_seeds or seeds[0][0] is None:
        return False
    return seeds == other_seeds


def summarise(
    runs: dict[str, dict], below: float | None, *, reps: int = 2000, seed: int = 0
) -> dict[str, dict]:
    """Per run: the IQM with its interval, and against the first run P(improvement) with its
    interval, the verdict of the one pre-stated test and the paired wins."""
    labels = list(runs)
    base = runs[labels[0]]
    out = {}
    for label, run in runs.items():
        final = np.asarray(run["final"], dtype=np.float64)
        row: dict = {"n": len(final), "iqm": float(final[0])}  # one seed: no interval
        if len(final) > 1:
            table = rl_stats.aggregate_table({label: final}, ("IQM",), reps=reps, seed=seed)
            estimate = table[label]["IQM"]
            row.update(iqm=estimate.point, iqm_low=estimate.low, iqm_high=estimate.high)
        if label != labels[0]:
            other = np.asarray(base["final"], dtype=np.float64)
            if len(final) > 1 and len(other) > 1:
                improvement = rl_stats.probability_of_improvement(
                    final, other, reps=reps, seed=seed
                )
                row.update(
                    p_improvement=improvement.point,
                    p_improvement_low=improvement.low,
                    p_improvement_high=improvement.high,
                    verdict=rl_stats.verdict(improvement, label, labels[0]),
                )
            if same_seed_keys(run, base):
                row["paired_wins"] = int(np.sum(final > other))
        if below is not None and run.get("curve"):
            curve = np.asarray(run["curve"], dtype=np.float64)
            row["frac_below"] = float(np.mean(curve < below))
            row["frac_below_second_half"] = float(np.mean(curve[:, curve.shape[1] // 2 :] < below))
        out[label] = row
    return out


def _estimate(row: dict, name: str) -> str:
    if f"{name}_low" not in row:
        return f"{row[name]:.4g}" if name in row else ""
    return str(rl_stats.Estimate(row[name], row[f"{name}_low"], row[f"{name}_high"]))


def markdown(runs: dict[str, dict], stats: dict[str, dict], metric: str, below) -> str:
    labels = list(runs)
    width = max(len(r["final"]) for r in runs.values())
    head = [
        "run",
        *[str(i) for i in range(width)],
        "IQM [95% CI]",
        f"P(run > {labels[0]}) [95% CI]",
        "verdict",
        "paired",
    ]
    if below is not None:
        head.append(f"curve < {below:g} (all / 2nd half)")
    lines = [
        f"Final greedy `{metric}` per seed; IQM and P(improvement) with 95% stratified-bootstrap "
        f"intervals. The test, stated before looking: a run is ahead of {labels[0]} when the "
        "interval of P(run > it) lies above 0.5, behind when below, else not separated.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" + "---:|" * (len(head) - 1),
    ]
    for label in labels:
        final, row = runs[label]["final"], stats[label]
        cells = [f"{v:.2f}" for v in final] + [""] * (width - len(final))
        paired = f"ahead on {row['paired_wins']}/{row['n']} seeds" if "paired_wins" in row else ""
        cells += [
            _estimate(row, "iqm"),
            _estimate(row, "p_improvement"),
            row.get("verdict", ""),
            paired,
        ]
        if below is not None:
            cells.append(
                f"{row['frac_below']:.1%} / {row['frac_below_second_half']:.1%}"
                if "frac_below" in row
                else ""
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_pair(text: str, what: str) -> tuple[str, str]:
    label, sep, value = text.partition("=")
    if not sep or not label or not value:
        raise SystemExit(f"{what} must be LABEL=VALUE, got {text!r}")
    return label, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        help="LABEL=RUN_DIR (repeat); LABEL=DIR1,DIR2 joins the seeds of several runs",
    )
    parser.add_argument("--values", action="append", default=[], help="LABEL=v0,v1,... finals")
    parser.add_argument("--metric", default="eval_episode_return")
    parser.add_argument("--train-metric", default="episode_return")
    parser.add_argument("--stride", type=int, default=50, help="updates per curve point")
    parser.add_argument("--below", type=float, help="report the curve's time under this value")
    parser.add_argument(
        "--band", default="iqr", choices=("iqr", "minmax"), help="iqr: median; minmax: mean"
    )
    parser.add_argument("--reps", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)
    if not args.run and not args.values:
        parser.error("give at least one --run LABEL=RUN_DIR or --values LABEL=v0,v1,...")
    if args.stride < 1:
        parser.error(f"--stride must be >= 1, got {args.stride}")
    runs: dict[str, dict] = {}
    for text in args.run:
        label, directories = parse_pair(text, "--run")
        parts = [
            load_run(Path(directory), args.metric, args.train_metric, args.stride)
            for directory in directories.split(",")
        ]
        runs[label] = join_runs(parts)
    for text in args.values:
        label, values = parse_pair(text, "--values")
        runs[label] = {"final": [float(v) for v in values.split(",")], "seeds": None}
    stats = summarise(runs, args.below, reps=args.reps, seed=args.seed)
    print(markdown(runs, stats, args.metric, args.below))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "stats": stats}, indent=1))
    if args.plot:
        from jaxmarl.training.host.plotting import plot_curves

        series = {
            label: (run["curve_steps"], run["curve"])
            for label, run in runs.items()
            if "curve" in run
        }
        plot_curves(series, args.plot, xlabel="env steps", ylabel=args.train_metric, band=args.band)
    return 0


if __name__ == "__main__":
    sys.exit(main())
