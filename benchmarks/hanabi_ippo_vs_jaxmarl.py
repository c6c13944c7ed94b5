"""IPPO-FF on 2-player Hanabi: ``jaxmarl.train`` against JaxMARL 0.2.0's ``ippo_ff_hanabi.py``.

The pieces are ``ppo_vs_jaxmarl.py``'s (imported): our side is its ``run_ours`` with
``alg=ippo env=hanabi`` (preset ``configs/ippo/hanabi.yaml``, ``run.num_seeds`` seeds vmapped in
one program from ``run.seed=50``); JaxMARL's side is its ``PEER_RUNNER`` under the peer
interpreter, which imports ``IPPO/ippo_ff_hanabi.py``, reads ``IPPO/config/ippo_ff_hanabi.yaml``
from ``--peer-scripts`` (copies of the public FLAIROx/JaxMARL files, kept outside this
repository), overrides only ``TOTAL_TIMESTEPS`` and ``NUM_SEEDS`` (unused by the script), and
calls ``jax.jit(make_train(config))`` once per key of ``split(PRNGKey(50), seeds)`` (its ``main``
trains ``PRNGKey(50)``, one seed). Hydra, omegaconf and wandb are stubbed; the script's
per-update ``wandb.log`` inside its ``io_callback`` is recorded, and that is its curve.

The peer interpreter needs ``jaxmarl==0.2.0`` and ``distrax``; ``/tmp/peer`` lacks distrax, so
make a venv that sees it (``python3.11 -m venv V``, a ``.pth`` file in V's site-packages naming
``/tmp/peer/lib/python3.11/site-packages``, then ``V/bin/pip install distrax``) and pass
``--peer-python V/bin/python``.

Score
-----
Both envs score as HLE does (the cards played, 0 once the lives run out), and the reward is the
change in score, the same for both agents, so an episode's return is its score. JaxMARL's script
logs per update ``returned_episode_returns[-1, :].mean()``: at the rollout's last step, over
every env and agent, the return of the most recently finished episode (a slightly lagging
value). Ours logs the mean return of the episodes that finished during the update. A seed's
"final" is the mean of its last ``--last`` updates' values; the table also gives that smoothed
value at several points of the run.

Seeds: both sides split one root key into ``--seeds`` keys (ours vmaps them, JaxMARL's script
trains them one after another). More seeds of a finished run come from another root,
``--seed S``, in another ``--out-dir``; ``--report-only --pool DIR ...`` then reports both
sides over the seeds of all the runs.

Usage::

    python benchmarks/hanabi_ippo_vs_jaxmarl.py --steps 2621440 --sides ours,jaxmarl \\
        --peer-python /tmp/peer_hanabi/bin/python --peer-scripts /tmp/peer_scripts_hanabi
    python benchmarks/hanabi_ippo_vs_jaxmarl.py --report-only \\
        --md benchmarks/results/hanabi_ippo_vs_jaxmarl.md \\
        --plot benchmarks/results/hanabi_ippo_vs_jaxmarl.png
    # 3 more seeds a side from root 51, then one report over all 6
    python benchmarks/hanabi_ippo_vs_jaxmarl.py --steps 3145728 --seed 51 --out-dir /tmp/h51 ...
    python benchmarks/hanabi_ippo_vs_jaxmarl.py --report-only --out-dir /tmp/h50 --pool /tmp/h51
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ppo_vs_jaxmarl import (  # noqa: E402
    ALGS,
    _mean_std,
    load_results,
    machine_load,
    machines_line,
    other_benchmarks,
    pool_sides,
    pooled_curve,
    run_ours,
    run_peer,
    seed_iqm,
    steps_floor,
    training_curves,
)

REPO = Path(__file__).resolve().parents[1]
ALG = "hanabi_ippo"
PER_UPDATE = 1024 * 128  # env steps per update on both sides (NUM_ENVS x NUM_STEPS)
PUBLISHED_STEPS = 10_000_000_000  # ippo_ff_hanabi.yaml's TOTAL_TIMESTEPS (1e10)
PEER_SEED = 50  # the script's main: jax.random.PRNGKey(50)
ALGS[ALG] = {  # run_ours / steps_floor / chunk_override read the algorithm's entry here
    "ours": ["alg=ippo", "env=hanabi"],
    "script": "IPPO/ippo_ff_hanabi.py",
    "config": "IPPO/config/ippo_ff_hanabi.yaml",
    "default_steps": PUBLISHED_STEPS,
    "per_update": PER_UPDATE,
    "updates_per_chunk": 5,
    "label": "IPPO-FF on 2-player Hanabi (1024 envs x 128 steps, 512 relu embedding + 512)",
}


def curves(r: dict) -> tuple[list[float], list[list[float]]]:
    """``(env steps per seed [U], score per update [seeds, U])`` of one side; a pooled record's
    seeds are its parts' seeds in order (one ``--steps``, so the same update grid)."""
    return pooled_curve(r, _one_curve)


def _one_curve(r: dict) -> tuple[list[float], list[list[float]]]:
    if r["side"] == "jaxmarl":  # the script logs before counting the update: step + 1
        ys = r["logged_curve"]
        return [PER_UPDATE * (u + 1) for u in range(len(ys[0]))], ys
    return training_curves(r)


def smoothed(ys: list[float], upto: int, last: int) -> float:
    """Mean of the ``last`` values ending at update index ``upto`` (inclusive)."""
    window = ys[max(0, upto + 1 - last) : upto + 1]
    return sum(window) / len(window)


def finals(r: dict, last: int) -> list[float]:
    _, ys = curves(r)
    return [smoothed(y, len(y) - 1, last) for y in ys]


def stats_cells(values: list[float]) -> tuple[str, str]:
    """``mean ± std`` and the IQM ('—' where ``seed_iqm`` has none)."""
    m, s = _mean_std(values)
    iqm = seed_iqm(values)
    return f"{m:.2f} ± {s:.2f}", "—" if iqm is None else f"{iqm:.2f}"


def table(results: dict, last: int, points: int) -> str:
    sides = [k for k in ("ours", "jaxmarl") if k in results]
    label = {"ours": "ours (`jaxmarl.train alg=ippo env=hanabi`)", "jaxmarl": "JaxMARL 0.2.0"}
    out = [
        "| side | env steps / seed | seeds | final score per seed | mean ± std | IQM "
        "| training env steps/s (all seeds) | compile s | wall s |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for key in sides:
        r = results[key]
        f = finals(r, last)
        mean, iqm = stats_cells(f)
        per_seed = ", ".join(f"{v:.2f}" for v in f)
        out.append(
            f"| {label[key]} | {r['env_steps_per_seed']:,} | {r['seeds']} | {per_seed} "
            f"| {mean} | {iqm} | {r['steps_per_s']:,.0f} | {r['compile_s']:.1f} "
            f"| {r['wall_s']:.0f} |"
        )
    if len(sides) == 2:
        diff = _mean_std(finals(results["ours"], last))[0]
        diff -= _mean_std(finals(results["jaxmarl"], last))[0]
        ratio = results["ours"]["steps_per_s"] / results["jaxmarl"]["steps_per_s"]
        out.append(
            f"\nFinal score difference (ours − JaxMARL, mean over seeds): **{diff:+.2f}**; "
            f"training throughput ratio ours/JaxMARL: {ratio:.2f}x.\n"
        )
    # The curve at several points: mean ± std over seeds of the smoothed score.
    xs = {k: curves(results[k])[0] for k in sides}
    n = min(len(x) for x in xs.values())
    picks = sorted({max(0, round(n * (i + 1) / points) - 1) for i in range(points)})
    out.append(
        f"\nScore along the run (each seed's mean over the {last} updates up to the point, then "
        "mean ± std over seeds):\n"
    )
    out.append("| env steps / seed | " + " | ".join(label[k] for k in sides) + " |")
    out.append("|---:|" + "---:|" * len(sides))
    for u in picks:
        cells = []
        for k in sides:
            m, s = _mean_std([smoothed(y, u, last) for y in curves(results[k])[1]])
            cells.append(f"{m:.2f} ± {s:.2f}")
        out.append(f"| {PER_UPDATE * (u + 1):,} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def pool_results(results: dict, others: list[dict]) -> dict:
    """``results`` with each side that ``others`` (other ``--seed`` runs) also ran pooled."""
    out = dict(results)
    for other in others:
        pool_sides(out, other)
    return out


def plot(results: dict, path: Path) -> Path:
    from jaxmarl.training.host.plotting import plot_curves

    label = {"ours": "ours", "jaxmarl": "JaxMARL 0.2.0 ippo_ff_hanabi.py"}
    series = {label[k]: curves(results[k]) for k in ("ours", "jaxmarl") if k in results}
    return plot_curves(
        series,
        path,
        xlabel="env steps per seed",
        ylabel="training score (episode return)",
        title=f"IPPO-FF, 2-player Hanabi: mean of {max(r['seeds'] for r in results.values())} "
        "seeds, min-max band",
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=PUBLISHED_STEPS, help="env steps per seed")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--seed",
        type=int,
        default=PEER_SEED,
        help="root seed of both sides (ours run.seed, JaxMARL's keys split from PRNGKey(S)); "
        "run another root in another --out-dir for more seeds, then --pool",
    )
    parser.add_argument(
        "--pool",
        type=Path,
        nargs="*",
        default=[],
        help="out-dirs of runs from other --seed roots to report together with this one",
    )
    parser.add_argument("--sides", default="ours,jaxmarl")
    parser.add_argument("--peer-python", default="/tmp/peer/bin/python")
    parser.add_argument("--peer-scripts", type=Path, default=Path("/tmp/peer_scripts"))
    parser.add_argument("--out-dir", type=Path, default=REPO / "runs" / "hanabi_ippo_vs_jaxmarl")
    parser.add_argument("--last", type=int, default=5, help="updates averaged into a 'final'")
    parser.add_argument("--points", type=int, default=5, help="rows of the along-the-run table")
    parser.add_argument("--md", type=Path, default=None, help="write the tables here too")
    parser.add_argument("--plot", type=Path, default=None, help="write the curves PNG here")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    store = args.out_dir / "results.json"
    results = load_results(args.out_dir)
    if not args.report_only:
        for side in args.sides.split(","):
            now = dt.datetime.now(dt.timezone.utc)
            print(
                f"[{now:%H:%M:%S}] {side}: {steps_floor(ALG, args.steps):,} env steps x "
                f"{args.seeds} seeds, load {machine_load()}",
                flush=True,
            )
            concurrent = other_benchmarks()
            if side == "jaxmarl":
                log = args.out_dir / "jaxmarl.log"
                r = run_peer(
                    ALG,
                    args.steps,
                    args.seeds,
                    args.peer_python,
                    args.peer_scripts,
                    seed=args.seed,
                    num_agents=1,
                    log=log,
                )
            else:
                # The preset's run.seed is PEER_SEED already (the run folder keeps its name).
                extra = [] if args.seed == PEER_SEED else [f"run.seed={args.seed}"]
                r = run_ours(ALG, args.steps, args.seeds, args.out_dir, extra)
            r["root_seed"] = args.seed
            r["concurrent_at_start"] = concurrent
            r["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            results[side] = r
            store.write_text(json.dumps(results, indent=1))
            print(
                f"  -> {r['steps_per_s']:,.0f} env steps/s, compile {r['compile_s']:.1f} s, "
                f"wall {r['wall_s']:.0f} s, final {_mean_std(finals(r, args.last))[0]:.2f}",
                flush=True,
            )
    others = [load_results(d) for d in args.pool]
    results = pool_results(results, others)
    text = table(results, args.last, args.points)
    text += f"\n{machines_line(results)}\n"
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.plot:
        print("curves:", plot(results, args.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
