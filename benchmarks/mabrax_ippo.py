"""IPPO on multi-agent MuJoCo ``ant_4x2``: return curve and wall time on this machine.

Runs ``python -m jaxmarl.train alg=ippo preset=ant_4x2`` (JaxMARL's ``ippo_ff_mabrax.yaml``
settings, 1e7 env steps per seed as published) with one update per jitted chunk, so that every
update lands in ``metrics.jsonl`` as soon as it is done, and records the host time at which
each update appeared. With ``--deadline-min`` the run is stopped after that many minutes: the
curve is then the first part of the full run (same learning-rate schedule, which anneals over
the whole configured horizon), and the report says how far it got.

Reported: compile time (start to the first update, less one update's time), training env
steps/s over the logged updates (all seeds together), the extrapolated wall time of the full
horizon, and per update the mean episode return over the episodes that ended in it.

Usage::

    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/mabrax_ippo --deadline-min 45
    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/mabrax_ippo --report-only \\
        --md benchmarks/results/mabrax_ippo_run.md --png benchmarks/results/mabrax_ippo.png
    # Mava's settings (the preset ant_4x2_mava), 3 seeds
    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/m --seeds 3 --steps 9994240 \
        --preset ant_4x2_mava
    # a variant: more train-command settings after the options (--steps: a whole number of
    # the variant's updates)
    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/v --seeds 3 --steps 9998336 \
        env.num_envs=32 num_steps=128
    # runs side by side at equal env steps (each seed's episode-weighted mean return per
    # window, then the seeds' mean), a Markdown table and one plot
    .venv/bin/python benchmarks/mabrax_ippo.py --compare preset=/tmp/ant35 mava=/tmp/v \
        --window 1e6 --md table.md --png compare.png
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = "ippo_ant_4x2"


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def train(args) -> None:
    """Start the run, note when each update lands, stop it at the deadline."""
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # -P: the repository root (the working directory) is not put on sys.path, so an installed
    # jaxmarl (a wheel on a GPU machine) is not shadowed by the source folder jaxmarl/, which
    # lacks the envs/ and baselines/ that the wheel maps into it.
    cmd = [
        sys.executable,
        "-P",
        "-m",
        "jaxmarl.train",
        "alg=ippo",
        f"preset={args.preset}",
        f"run.total_timesteps={args.steps}",
        f"run.num_seeds={args.seeds}",
        f"run.seed={args.seed}",
        "run.updates_per_chunk=1",
        "run.checkpoint_every=0",
        "run.eval_episodes=0",
        "run.gif=false",
        f"run.out_dir={out}",
        f"run.name={NAME}",
        "--no-progress",
        *args.overrides,
    ]
    metrics = out / NAME / "metrics.jsonl"
    start = time.time()
    seen: dict[int, float] = {}
    with open(out / "train.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        stopped = False
        while proc.poll() is None:
            time.sleep(5)
            for row in _rows(metrics):
                seen.setdefault(row["update"], time.time() - start)
            if args.deadline_min and time.time() - start > 60 * args.deadline_min:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                stopped = True
                break
    for row in _rows(metrics):
        seen.setdefault(row["update"], time.time() - start)
    info = {
        "cmd": " ".join(cmd[1:]),
        "seeds": args.seeds,
        "configured_steps": args.steps,
        "stopped_at_deadline": stopped,
        "deadline_min": args.deadline_min,
        "wall_s": time.time() - start,
        "update_times_s": {str(k): v for k, v in sorted(seen.items())},
        "returncode": proc.returncode,
    }
    (out / "timing.json").write_text(json.dumps(info, indent=1))


def report(args) -> None:
    out = Path(args.out_dir)
    info = json.loads((out / "timing.json").read_text())
    rows = _rows(out / NAME / "metrics.jsonl")
    times = {int(k): v for k, v in info["update_times_s"].items()}
    updates = sorted(times)
    steps_per_update = rows[0]["env_steps"] // rows[0]["update"]
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["seed"], r["update"]): r for r in rows}
    returns = [[by[s, u]["episode_return"] for u in updates] for s in seeds]
    # updates land in the file one chunk (one update) at a time; polling every 5 s
    span = times[updates[-1]] - times[updates[0]]
    per_update = span / max(len(updates) - 1, 1)
    rate = steps_per_update * len(seeds) * (len(updates) - 1) / max(span, 1e-9)
    compile_s = times[updates[0]] - per_update
    total = info["configured_steps"]
    full_h = (compile_s + total / steps_per_update * per_update) / 3600
    lines = [
        f"| updates logged | {len(updates)} ({updates[-1] * steps_per_update:,} env steps per "
        f"seed of {total:,}) |",
        f"| seeds | {len(seeds)} |",
        f"| compile, about (s) | {compile_s:.0f} |",
        f"| one update, {steps_per_update:,} env steps per seed (s) | {per_update:.1f} |",
        f"| training env steps/s (all seeds) | {rate:,.0f} |",
        f"| extrapolated wall time of {total:,} steps x {len(seeds)} seed(s) (h) | {full_h:.1f} |",
        "",
        "| env steps | " + " | ".join(f"seed {s} return" for s in seeds) + " |",
        "|---:|" + "---:|" * len(seeds),
    ]
    every = max(1, len(updates) // 12)
    picks = sorted(set(updates[::every]) | {updates[-1]})
    for u in picks:
        vals = " | ".join(f"{by[s, u]['episode_return']:.1f}" for s in seeds)
        lines.append(f"| {u * steps_per_update:,} | {vals} |")
    curves = {
        f"seed {s}": ([u * steps_per_update for u in updates], curve)
        for s, curve in zip(seeds, returns)
    }
    _write(args, "\n".join(lines) + "\n", curves, "episode return (train)")


def _write(args, table: str, curves: dict, ylabel: str, **style) -> None:
    """Print the Markdown ``table``, and write it to ``--md`` and ``curves`` (``{label:
    (env steps, returns)}``) as a plot with the target line to ``--png``."""
    if args.md:
        Path(args.md).write_text(table)
    print(table)
    if not args.png:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for label, (xs, ys) in curves.items():
        ax.plot(xs, ys, label=label, **style)
    ax.axhline(1300, color="grey", ls="--", lw=1, label="target 1,300 (at 1e7 steps)")
    ax.set_xlabel("env steps per seed")
    ax.set_ylabel(ylabel)
    ax.set_title(args.title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)


def windowed(rows: list[dict], window: float) -> dict[int, dict[int, float]]:
    """``{window index: {seed: return}}``: each seed's mean episode return over the episodes
    that ended in the updates whose env steps fall in ``(i * window, (i + 1) * window]``
    (windows a seed has not reached are left out)."""
    sums: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        episodes = r.get("episodes") or 0.0
        if r.get("episode_return") is None or episodes <= 0:
            continue
        i = int((r["env_steps"] - 1) // window)
        acc = sums.setdefault((i, r["seed"]), [0.0, 0.0])
        acc[0] += r["episode_return"] * episodes
        acc[1] += episodes
    out: dict[int, dict[int, float]] = {}
    for (i, seed), (total, count) in sorted(sums.items()):
        out.setdefault(i, {})[seed] = total / count
    return out


def compare(args) -> None:
    runs = dict(spec.rsplit("=", 1) for spec in args.compare)  # labels may hold "="
    for name, folder in runs.items():
        if not (Path(folder) / NAME / "metrics.jsonl").exists():
            raise SystemExit(f"{name}: no {NAME}/metrics.jsonl under {folder}")
    tables = {
        name: windowed(_rows(Path(d) / NAME / "metrics.jsonl"), args.window)
        for name, d in runs.items()
    }
    reach = max(max(t, default=-1) for t in tables.values()) + 1
    lines = [
        "| env steps | " + " | ".join(runs) + " |",
        "|---|" + "---:|" * len(runs),
    ]
    for i in range(reach):
        cells = []
        for table in tables.values():
            seeds = table.get(i, {})
            if not seeds:
                cells.append("")
                continue
            mean = sum(seeds.values()) / len(seeds)
            per_seed = ", ".join(f"{v:,.0f}" for _, v in sorted(seeds.items()))
            cells.append(f"{mean:,.0f}" + (f" ({per_seed})" if len(seeds) > 1 else ""))
        lines.append(
            f"| {i * args.window / 1e6:g}-{(i + 1) * args.window / 1e6:g}e6 | "
            + " | ".join(cells)
            + " |"
        )
    curves = {}
    for name, table in tables.items():
        seeds = max(len(v) for v in table.values())
        means = [sum(table[i].values()) / len(table[i]) for i in sorted(table)]
        xs = [(i + 0.5) * args.window for i in sorted(table)]
        curves[f"{name} ({seeds} seed{'s' * (seeds > 1)})"] = (xs, means)
    ylabel = f"episode return (train, mean per {args.window:,.0f} steps)"
    _write(args, "\n".join(lines) + "\n", curves, ylabel, marker="o", ms=3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir")
    parser.add_argument(
        "--compare", nargs="+", metavar="LABEL=DIR", help="compare finished or stopped runs"
    )
    parser.add_argument("--window", type=float, default=1e6, help="--compare: env steps")
    parser.add_argument("--preset", default="ant_4x2", help="an IPPO preset on ant_4x2")
    parser.add_argument("--steps", type=int, default=9_984_000, help="configured env steps/seed")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--title", default="IPPO on ant_4x2 (preset ant_4x2)", help="the plot's title"
    )
    parser.add_argument(
        "overrides", nargs="*", help="more key=value settings for the train command (a variant)"
    )
    parser.add_argument("--deadline-min", type=float, default=0.0, help="stop after (0: never)")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--md")
    parser.add_argument("--png")
    args = parser.parse_args()
    if args.compare:
        compare(args)
        return
    if not args.out_dir:
        parser.error("--out-dir is required (or --compare LABEL=DIR ...)")
    if not args.report_only:
        train(args)
    report(args)


if __name__ == "__main__":
    main()
