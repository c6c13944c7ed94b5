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

The run saves a checkpoint every ``--checkpoint-every`` updates (100 by default), so a
stopped run loses little: ``--resume`` continues the run in ``--out-dir`` from its latest
checkpoint (``python -m jaxmarl.train --resume``), and the timing keeps each stretch of the run
apart, so the restart's compile is not counted as training. The timing file is rewritten at every
poll, so a driver that is killed (a machine or session that stops) still leaves a run that
``--resume`` can continue.

Usage::

    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/mabrax_ippo --deadline-min 45
    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/mabrax_ippo --report-only \\
        --md benchmarks/results/mabrax_ippo_run.md --png benchmarks/results/mabrax_ippo.png
    # Mava's settings (the preset ant_4x2_mava), 3 seeds
    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/m --seeds 3 --steps 9994240 \
        --preset ant_4x2_mava
    # continue it after an interruption (from its latest checkpoint)
    .venv/bin/python benchmarks/mabrax_ippo.py --out-dir /tmp/m --resume
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

from jaxmarl.files import replace_text

REPO = Path(__file__).resolve().parents[1]
NAME = "ippo_ant_4x2"
POLL_S = 5.0  # how often the driver reads metrics.jsonl


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def train_command(args) -> list[str]:
    """The train command of a new run, or of ``--resume`` (which reads the saved config)."""
    out = Path(args.out_dir)
    # -P: the repository root (the working directory) is not put on sys.path, so an installed
    # jaxmarl (a wheel on a GPU machine) is not shadowed by the source folder jaxmarl/, which
    # lacks the envs/ and baselines/ that the wheel maps into it.
    head = [sys.executable, "-P", "-m", "jaxmarl.train"]
    if args.resume:
        return [*head, "--resume", str(out / NAME), "--no-progress"]
    return [
        *head,
        "alg=ippo",
        f"preset={args.preset}",
        f"run.total_timesteps={args.steps}",
        f"run.num_seeds={args.seeds}",
        f"run.seed={args.seed}",
        "run.updates_per_chunk=1",
        f"run.checkpoint_every={args.checkpoint_every}",
        "run.eval_episodes=0",
        "run.gif=false",
        f"run.out_dir={out}",
        f"run.name={NAME}",
        "--no-progress",
        *args.overrides,
    ]


def _segments(info: dict) -> list[dict]:
    """The stretches of a run (one per start or resume); a timing file written before resume
    existed is one stretch."""
    return info.get("segments", [info])


def _inode(path: Path) -> int | None:
    return path.stat().st_ino if path.exists() else None


def train(args) -> None:
    """Start (or resume) the run, note when each update lands, stop it at the deadline."""
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    timing = out / "timing.json"
    if args.resume:
        if not timing.exists():
            raise SystemExit(f"--resume: no run to continue in {out} (no timing.json)")
        if args.overrides:
            raise SystemExit("--resume continues the saved run; it takes no overrides")
        info = json.loads(timing.read_text())
        from jaxmarl.training.host.rundir import complete_steps

        # the resumed run redoes the updates after its latest checkpoint (one update a chunk)
        done = max(complete_steps(out / NAME), default=0)
        # rows after the checkpoint are stale until the resumed run has cut them from the file
        segments = [
            {
                **seg,
                "update_times_s": {
                    k: v for k, v in seg["update_times_s"].items() if int(k) <= done
                },
            }
            for seg in _segments(info)
        ]
    else:
        info = {"seeds": args.seeds, "configured_steps": args.steps}
        segments, done = [], 0
    cmd = train_command(args)
    metrics = out / NAME / "metrics.jsonl"
    known = {u for seg in segments for u in seg["update_times_s"]}
    start = time.time()
    seen: dict[int, float] = {}
    # rows past ``done`` left by the stopped run are stale until the resumed run cuts them;
    # it rewrites the file by an atomic rename, so a new inode (or no stale row) shows the cut
    stale_inode = _inode(metrics) if any(r["update"] > done for r in _rows(metrics)) else None
    cut = stale_inode is None

    def note_new_updates() -> None:
        nonlocal cut
        rows = _rows(metrics)
        cut = cut or _inode(metrics) != stale_inode or all(row["update"] <= done for row in rows)
        for row in rows if cut else ():
            if str(row["update"]) not in known:
                seen.setdefault(row["update"], time.time() - start)

    info = {"seeds": info["seeds"], "configured_steps": info["configured_steps"]}

    def save(returncode: int | None, stopped: bool) -> None:
        """Write the timing with this stretch as it stands (atomically: the driver may be
        killed at any moment, and ``--resume`` needs the file)."""
        stretch = {
            "cmd": " ".join(cmd[1:]),
            "stopped_at_deadline": stopped,
            "deadline_min": args.deadline_min,
            "wall_s": time.time() - start,
            "update_times_s": {str(k): v for k, v in sorted(seen.items())},
            "returncode": returncode,  # None: the run was still going at the last write
        }
        replace_text(timing, json.dumps({**info, "segments": [*segments, stretch]}, indent=1))

    with open(out / "train.log", "a" if args.resume else "w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        stopped = False
        while proc.poll() is None:
            time.sleep(POLL_S)
            note_new_updates()
            save(None, False)
            if args.deadline_min and time.time() - start > 60 * args.deadline_min:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                stopped = True
                break
    note_new_updates()
    save(proc.returncode, stopped)


def timing_summary(info: dict) -> tuple[float, float]:
    """``(compile s, s per update)``: the first stretch's wait for its first update, less one
    update, and the mean time between consecutive updates within each stretch."""
    span, gaps = 0.0, 0
    for seg in _segments(info):
        times = sorted((int(k), v) for k, v in seg["update_times_s"].items())
        if len(times) > 1:
            span += times[-1][1] - times[0][1]
            gaps += len(times) - 1
    per_update = span / max(gaps, 1)
    first = sorted((int(k), v) for k, v in _segments(info)[0]["update_times_s"].items())
    return (first[0][1] - per_update if first else 0.0), per_update


def report(args) -> None:
    out = Path(args.out_dir)
    info = json.loads((out / "timing.json").read_text())
    rows = _rows(out / NAME / "metrics.jsonl")
    updates = sorted({r["update"] for r in rows})
    steps_per_update = rows[0]["env_steps"] // rows[0]["update"]
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["seed"], r["update"]): r for r in rows}
    returns = [[by[s, u]["episode_return"] for u in updates] for s in seeds]
    # updates land in the file one chunk (one update) at a time; the driver polls every POLL_S
    compile_s, per_update = timing_summary(info)
    rate = steps_per_update * len(seeds) / max(per_update, 1e-9)
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
    parser.add_argument(
        "--checkpoint-every", type=int, default=100, help="updates between checkpoints (0: none)"
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue the run in --out-dir from its checkpoint"
    )
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
