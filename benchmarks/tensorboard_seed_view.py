"""What TensorBoard shows for a multi-seed run: one curve per seed plus the mean and the IQM.

Trains a small multi-seed run with the TensorBoard logger (or takes an existing run directory),
reads its event files back with tensorboardX's event protobuf
(``jaxmarl.training.host.logging.read_event_scalars``), prints every tag as a Markdown table,
and plots one metric's tags (``<metric>/seed_<s>``, ``<metric>/mean``, ``<metric>/iqm``)
against the update, the TensorBoard step, as TensorBoard's scalar view would::

    python benchmarks/tensorboard_seed_view.py --png docs/assets/tensorboard_seeds.png
    python benchmarks/tensorboard_seed_view.py --run-dir runs/<run> --metric episode_return

Without ``--run-dir`` it runs ``python -m jaxmarl.train alg=ippo env=MPE_simple_spread_v3
run.num_seeds=4 run.total_timesteps=65536 run.loggers=[jsonl,tensorboard]`` (32 updates, about
a minute on two CPU cores) into ``--out-dir``. Four seeds, so that the IQM (the mean of the middle
two) differs from the mean; with three it is the mean. Needs the ``tensorboard`` and ``viz``
extras.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from jaxmarl.training.host.logging import read_event_scalars

HERE = Path(__file__).resolve().parent


def train(out_dir: Path, seeds: int, steps: int) -> Path:
    """Runs the small IPPO run with the TensorBoard logger; returns its run directory."""
    name = f"ippo_tb_{seeds}seeds"
    command = [
        sys.executable,
        "-m",
        "jaxmarl.train",
        "alg=ippo",
        "env=MPE_simple_spread_v3",
        f"run.num_seeds={seeds}",
        f"run.total_timesteps={steps}",
        "run.updates_per_chunk=1",
        "run.checkpoint_every=0",
        "run.eval_episodes=0",
        "run.gif=false",
        "run.loggers=[jsonl,tensorboard]",
        f"run.out_dir={out_dir}",
        f"run.name={name}",
        "--no-progress",
    ]
    print("$", " ".join(command[1:]), file=sys.stderr)
    subprocess.run(command, check=True, stdout=sys.stderr)  # stdout: the tag table only
    return out_dir / name


def tag_series(logdir: Path) -> dict[str, tuple[list[int], list[float]]]:
    """``{tag: (steps, values)}`` of every scalar in the event files."""
    series: dict[str, tuple[list[int], list[float]]] = defaultdict(lambda: ([], []))
    for tag, step, value in read_event_scalars(logdir):
        series[tag][0].append(step)
        series[tag][1].append(value)
    return dict(series)


def tag_table(series: dict[str, tuple[list[int], list[float]]]) -> str:
    lines = ["| tag | points | steps | last value |", "|---|---:|---|---:|"]
    for tag in sorted(series):
        steps, values = series[tag]
        lines.append(f"| `{tag}` | {len(steps)} | {min(steps)}-{max(steps)} | {values[-1]:.4g} |")
    return "\n".join(lines)


def plot(series: dict, metric: str, path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    tags = sorted(t for t in series if t.startswith(f"{metric}/"))
    if not tags:
        raise SystemExit(f"no {metric}/* tags; the tags are {sorted(series)}")
    figure = Figure(figsize=(7, 4), dpi=110)
    ax = figure.add_subplot()
    for tag in tags:
        steps, values = series[tag]
        aggregate = tag.endswith(("/mean", "/iqm"))
        ax.plot(
            steps,
            values,
            label=tag,
            linewidth=2.2 if aggregate else 1.0,
            linestyle="--" if tag.endswith("/iqm") else "-",
            color="black" if tag.endswith("/mean") else None,
            alpha=1.0 if aggregate else 0.75,
        )
    ax.set_xlabel("update (TensorBoard step)")
    ax.set_ylabel(metric)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run-dir", type=Path, help="a run written with run.loggers=[...,tensorboard]"
    )
    parser.add_argument("--out-dir", type=Path, default=Path("runs/tensorboard_seed_view"))
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=65536, help="env steps per seed")
    parser.add_argument("--metric", default="episode_return")
    parser.add_argument(
        "--png", type=Path, default=HERE.parent / "docs/assets/tensorboard_seeds.png"
    )
    args = parser.parse_args(argv)
    run_dir = args.run_dir or train(args.out_dir, args.seeds, args.steps)
    logdir = run_dir / "tb"
    series = tag_series(logdir)
    if not series:
        raise SystemExit(
            f"{logdir} has no TensorBoard scalars; train with run.loggers=[...,tensorboard]"
        )
    print(tag_table(series))
    title = f"{run_dir.name}: the {args.metric} tags read back from {logdir.name}/ event files"
    print(f"\nwrote {plot(series, args.metric, args.png, title)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
