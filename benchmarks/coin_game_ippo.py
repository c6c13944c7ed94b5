"""IPPO on the Coin Game: shared against independent parameters, with the social-dilemma metrics.

Trains ``python -m jaxmarl.train alg=ippo preset=coin_game`` (one parameter set for both
players) and ``preset=coin_game_independent`` (one each), the same seeds vmapped in one program
per variant (keys ``split(key(seed), seeds)``), and reads per seed and update from
``metrics.jsonl``:

* ``episode_return``: mean over the two players of the return of a whole episode (10 inner
  games of 10 steps);
* ``episode_welfare``: the two players' returns summed (total welfare);
* ``own_coin_fraction``: of the coins picked up in the episode, the share of the picker's own
  colour (1 = nobody takes the other's coins, the cooperative outcome; about 0.5 for players
  who grab whatever coin is closest).

``--out-dir`` keeps the run directories and ``results.json``; ``--md`` writes the table and
``--png`` one figure with the three metrics against env steps (mean of seeds, min-max band).
``--report-only`` rebuilds both from ``results.json``.

Usage::

    .venv/bin/python benchmarks/coin_game_ippo.py --steps 1048576 --seeds 3 \\
        --out-dir runs/coin_game_ippo --md runs/coin_game_ippo/table.md \\
        --png runs/coin_game_ippo/coin_game_ippo.png
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VARIANTS = {"shared": "coin_game", "independent": "coin_game_independent"}
METRICS = {
    "episode_return": "episode return (per player)",
    "episode_welfare": "total welfare (sum of returns)",
    "own_coin_fraction": "own-coin rate",
}


def train(variant: str, args) -> dict:
    name = f"ippo_{VARIANTS[variant]}"
    cmd = [
        sys.executable,
        "-P",  # an installed jaxmarl, not the source folder of the working directory
        "-m",
        "jaxmarl.train",
        "alg=ippo",
        f"preset={VARIANTS[variant]}",
        f"run.total_timesteps={args.steps}",
        f"run.num_seeds={args.seeds}",
        f"run.seed={args.seed}",
        "run.checkpoint_every=0",
        f"run.out_dir={args.out_dir}",
        f"run.name={name}",
        "--no-progress",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{variant} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    run_dir = Path(args.out_dir) / name
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x]
    seeds = sorted({r["seed"] for r in rows})
    updates = sorted({r["update"] for r in rows})
    by = {(r["seed"], r["update"]): r for r in rows}
    evals = [json.loads(x) for x in (run_dir / "eval.jsonl").read_text().splitlines() if x]
    last = max(e["update"] for e in evals)
    return {
        "variant": variant,
        "cmd": " ".join(cmd[1:]),
        "run_dir": str(run_dir),
        "seeds": len(seeds),
        "env_steps": [by[seeds[0], u]["env_steps"] for u in updates],
        "curves": {m: [[by[s, u][m] for u in updates] for s in seeds] for m in METRICS},
        "greedy": {
            m: [e[f"eval_{m}"] for e in evals if e["update"] == last and f"eval_{m}" in e]
            for m in METRICS
        },
        "wall_s": time.perf_counter() - t0,
    }


def _stats(values) -> str:
    values = [float(v) for v in values]
    if not values:
        return "—"
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {std:.3f}"


def table(results: dict) -> str:
    lines = [
        "| parameters | seeds | env steps / seed | "
        + " | ".join(f"train {label}, last 5 updates" for label in METRICS.values())
        + " | greedy own-coin rate | greedy welfare |",
        "|---|---:|---:|" + "---:|" * (len(METRICS) + 2),
    ]
    for variant, r in results.items():
        finals = [_stats([statistics.fmean(c[-5:]) for c in r["curves"][m]]) for m in METRICS]
        lines.append(
            f"| {variant} | {r['seeds']} | {r['env_steps'][-1]:,} | "
            + " | ".join(finals)
            + f" | {_stats(r['greedy']['own_coin_fraction'])}"
            + f" | {_stats(r['greedy']['episode_welfare'])} |"
        )
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> None:
    import numpy as np
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5 * len(METRICS), 3.6))
    axes = figure.subplots(1, len(METRICS))
    for ax, (metric, label) in zip(axes, METRICS.items(), strict=True):
        for variant, r in results.items():
            xs = np.asarray(r["env_steps"], dtype=float)
            ys = np.asarray(r["curves"][metric], dtype=float)  # [seeds, updates]
            ax.plot(xs, ys.mean(axis=0), label=f"{variant} ({r['seeds']} seeds)")
            ax.fill_between(xs, ys.min(axis=0), ys.max(axis=0), alpha=0.2)
        ax.set_xlabel("env steps per seed")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[0].legend()
    figure.suptitle("IPPO on coin_game: mean of seeds, min-max band")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1_048_576, help="env steps per seed")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default="shared,independent")
    parser.add_argument("--out-dir", type=Path, default=REPO / "runs" / "coin_game_ippo")
    parser.add_argument("--md", type=Path)
    parser.add_argument("--png", type=Path)
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    store = args.out_dir / "results.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not args.report_only:
        for variant in args.variants.split(","):
            results[variant] = train(variant, args)
            store.write_text(json.dumps(results, indent=1))
    text = table(results)
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.png:
        plot(results, args.png)


if __name__ == "__main__":
    main()
