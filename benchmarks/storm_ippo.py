"""IPPO learning curves on STORM (``storm_2p``, ``storm``, ``storm_np``) from run directories.

Reads each run directory's ``metrics.jsonl`` (written by ``python -m jaxmarl.train``, one line
per seed and update; a run stopped early leaves the updates of its completed chunks; updates
in which no episode ended are skipped) and
writes a Markdown table (per-seed mean of ``episode_return``, ``episode_welfare`` and, in runs
that log them, the coin infos ``coop_coin_fraction`` and ``coins_collected`` over the last 5
logged updates) and one figure per env against env steps per seed (mean of seeds, min-max
band): the returns above, the share of cooperation coins below. JaxMARL publishes no STORM
baseline, so there is no peer side.

Usage::

    .venv/bin/python benchmarks/storm_ippo.py storm_2p=runs/storm_2p_ippo \\
        storm_np=runs/storm_np_ippo --md table.md --png storm_ippo.png
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from coin_game_ippo import _stats

METRICS = {
    "episode_return": "episode return (per player)",
    "episode_welfare": "welfare (players' returns summed)",
}
# The envs' pickup infos, per outer episode; runs made before they existed lack them.
COIN_METRICS = {
    "coop_coin_fraction": "share of cooperation coins picked up",
    "coins_collected": "coins picked up",
}


def read_run(run_dir: Path) -> dict:
    """``{"env_steps": [...], "curves": {metric: [[per update] per seed]}}``."""
    by_seed: dict[int, list[dict]] = defaultdict(list)
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("episodes", 1) > 0:  # updates in which no episode ended log zeros
            by_seed[int(row.get("seed", 0))].append(row)
    seeds = [sorted(rows, key=lambda r: r["update"]) for _, rows in sorted(by_seed.items())]
    updates = min(len(rows) for rows in seeds)
    logged = [m for m in (*METRICS, *COIN_METRICS) if m in seeds[0][0]]
    return {
        "env_steps": [int(r["env_steps"]) for r in seeds[0][:updates]],
        "curves": {m: [[float(r[m]) for r in rows[:updates]] for rows in seeds] for m in logged},
    }


def table(runs: dict[str, dict]) -> str:
    labels = {**METRICS, **COIN_METRICS}
    shown = [m for m in labels if any(m in run["curves"] for run in runs.values())]
    lines = [
        "| env | seeds | env steps / seed | "
        + " | ".join(f"{labels[m]}, per seed (last 5 updates)" for m in shown)
        + " | "
        + " | ".join(f"{labels[m]}, mean ± std" for m in shown)
        + " |",
        "|---|---:|---:|" + "---|" * len(shown) + "---:|" * len(shown),
    ]
    for name, run in runs.items():
        curves = run["curves"]
        finals = {m: [sum(c[-5:]) / len(c[-5:]) for c in curves[m]] for m in shown if m in curves}
        lines.append(
            f"| {name} | {len(finals['episode_return'])} | {run['env_steps'][-1]:,} | "
            + " | ".join(
                ", ".join(f"{v:.2f}" for v in finals[m]) if m in finals else "—" for m in shown
            )
            + " | "
            + " | ".join(_stats(finals[m]) if m in finals else "—" for m in shown)
            + " |"
        )
    return "\n".join(lines) + "\n"


def plot(runs: dict[str, dict], path: Path) -> None:
    import numpy as np
    from matplotlib.figure import Figure

    coins = any("coop_coin_fraction" in run["curves"] for run in runs.values())
    rows = 2 if coins else 1
    figure = Figure(figsize=(5 * len(runs), 3.6 * rows))
    axes = np.asarray(figure.subplots(rows, len(runs), squeeze=False))
    for column, (name, run) in enumerate(runs.items()):
        xs = np.asarray(run["env_steps"], dtype=float)
        panels = [(axes[0, column], METRICS)]
        if coins:
            panels.append(
                (axes[1, column], {"coop_coin_fraction": COIN_METRICS["coop_coin_fraction"]})
            )
        for ax, metrics in panels:
            for metric, label in metrics.items():
                if metric not in run["curves"]:
                    continue
                ys = np.asarray(run["curves"][metric], dtype=float)  # [seeds, updates]
                ax.plot(xs, ys.mean(axis=0), label=label)
                ax.fill_between(xs, ys.min(axis=0), ys.max(axis=0), alpha=0.2)
            ax.set_xlabel("env steps per seed")
            ax.grid(alpha=0.3)
            if ax.lines:
                ax.legend()
            else:
                ax.text(0.5, 0.5, "not logged by this run", ha="center", transform=ax.transAxes)
        axes[0, column].set_title(f"IPPO on {name} ({len(run['curves']['episode_return'])} seeds)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=RUN_DIR")
    parser.add_argument("--md", type=Path, required=True)
    parser.add_argument("--png", type=Path, required=True)
    args = parser.parse_args(argv)
    runs = {}
    for item in args.runs:
        name, _, run_dir = item.partition("=")
        runs[name] = read_run(Path(run_dir))
    args.md.parent.mkdir(parents=True, exist_ok=True)
    args.md.write_text(table(runs))
    plot(runs, args.png)
    print(table(runs))


if __name__ == "__main__":
    main()
