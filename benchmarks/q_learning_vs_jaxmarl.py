"""Q-learning on MPE simple_spread: our ``jaxmarl.train`` against JaxMARL 0.2.0's own scripts.

``qmix``: ``python -m jaxmarl.train alg=qmix env=MPE_simple_spread_v3`` (preset
``configs/qmix/MPE_simple_spread_v3.yaml``, which mirrors JaxMARL's
``baselines/QLearning/config/alg/ql_rnn_mpe.yaml``) against JaxMARL's
``baselines/QLearning/qmix_rnn.py`` with that YAML. ``vdn`` / ``iql`` use the same preset with
``mixer=vdn`` / ``mixer=none`` against ``vdn_rnn.py`` / ``iql_rnn.py`` when those scripts are
present in ``--peer-scripts``. Same env steps per seed, same number of seeds, each side's seeds
``vmap``ped in one program (JaxMARL's ``single_run`` does ``jax.jit(jax.vmap(train))``).

Fetching the peer scripts (this file embeds none of JaxMARL's code)
-------------------------------------------------------------------
The PyPI package ``jaxmarl==0.2.0`` ships no baseline scripts. Copy, from the public repository
``FLAIROx/JaxMARL``, into a folder *outside this repository*::

    PEER_SCRIPTS/QLearning/qmix_rnn.py            (and vdn_rnn.py, iql_rnn.py if wanted)
    PEER_SCRIPTS/QLearning/config/alg/ql_rnn_mpe.yaml

The peer interpreter (``--peer-python``, default ``/tmp/peer/bin/python``) needs
``jaxmarl==0.2.0``, ``flashbax`` and ``hydra-core``; ``wandb`` is stubbed (``WANDB_MODE`` is
``disabled``, so the script never calls it).

How each side is timed
----------------------
Peer: a runner imports the script, builds the env with its ``env_from_config``, reads the YAML,
overrides only ``TOTAL_TIMESTEPS``, ``NUM_SEEDS`` (and ``TEST_DURING_TRAINING`` for the second
peer row), and times ``jax.jit(jax.vmap(make_train(config, env))).lower(keys).compile()`` and
the call separately. JaxMARL's script runs its greedy test (512 envs x 30 steps) inside the
training scan behind a ``lax.cond`` every 5% of updates; under ``vmap`` over seeds that
``cond`` becomes a ``select``, so the test runs at *every* update. The table therefore shows
JaxMARL twice: as published (``TEST_DURING_TRAINING=True``) and with the test switched off,
which is its pure training speed.

Ours: the command line, training env steps/s from ``summary.md`` (chunks only: compile, the
host loop's evaluation and checkpointing are excluded), greedy evaluation at the end on 128
envs.

Known problem: vmapped multi-seed programs sometimes hang on jax/jaxlib 0.10.2's CPU runtime (both
libraries; see ``benchmarks/results/2026-11-22-qlearning-mpe-cpu.md``). By default our seeds run
one process each; ``--ours-vmapped`` runs them in one program like JaxMARL.

Returns
-------
JaxMARL's ``MPELogWrapper`` multiplies rewards by ``num_agents`` (3) before logging, so its
logged returns are 3x the per-agent raw returns; the table shows per-agent raw returns
(JaxMARL's divided by 3) and JaxMARL's scale. Its MPE episodes are 26 steps, ours 25
(``docs/mpe-parity-findings.md`` F3), so its returns hold one more (negative) step reward.
"Greedy" is JaxMARL's last in-training test (``test_returned_episode_returns`` at the final
update) and our final greedy evaluation; "train" is the mean episode return of the last 5% of
updates (epsilon-greedy, epsilon = 0.05).

Usage::

    python benchmarks/q_learning_vs_jaxmarl.py --algs qmix --steps 2000000 --seeds 3
    python benchmarks/q_learning_vs_jaxmarl.py --report-only
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ppo_vs_jaxmarl import _mean_std, machine_load

REPO = Path(__file__).resolve().parents[1]
NUM_AGENTS = 3  # MPE_simple_spread_v3
PEER_SCRIPT = {"qmix": "qmix_rnn.py", "vdn": "vdn_rnn.py", "iql": "iql_rnn.py"}
PEER_CONFIG = "QLearning/config/alg/ql_rnn_mpe.yaml"
OUR_STEPS_PER_UPDATE = 8 * 25  # preset: 8 envs x 25 steps
PEER_ROLLOUT_STEPS = 26  # JaxMARL: each update resets and rolls out one 26-step episode
PEER_STEPS_PER_UPDATE = 8 * PEER_ROLLOUT_STEPS


def peer_train_raw(logged: list[float]) -> list[float]:
    """JaxMARL's logged training return -> per-agent raw episode return.

    Its metric is the mean over the rollout's 26 steps of ``returned_episode_returns``, which
    is 0 until the episode ends at the rollout's last step (every update starts from a reset),
    so the logged value is (3x return) / 26.
    """
    return [v * PEER_ROLLOUT_STEPS / NUM_AGENTS for v in logged]


PEER_RUNNER = r"""
import importlib.util, json, sys, time, types

script, config_path, total_steps, num_seeds, test = sys.argv[1:6]
logged = []
module = types.ModuleType("wandb")
module.init = lambda *a, **k: None
def _log(metrics, *args, **kwargs):  # WANDB_LOG_ALL_SEEDS adds "rng<seed>/<key>" copies
    row = {k: float(v) for k, v in metrics.items() if "/" not in k}
    row["seed"] = next(k.split("/")[0] for k in metrics if k.startswith("rng"))
    logged.append(row)
module.log = _log
sys.modules["wandb"] = module

import jax, numpy as np, yaml

spec = importlib.util.spec_from_file_location("peer_script", script)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)

config = yaml.safe_load(open(config_path))
config = {k: (float(v) if isinstance(v, str) and k != "ENV_NAME" else v)
          for k, v in config.items()}
# WANDB_MODE is not "disabled" so the script's per-update jax.debug.callback runs and reaches
# the stub above: that is how the script reports its metrics (train returns none).
config.update(SEED=0, NUM_SEEDS=int(num_seeds), WANDB_MODE="online", WANDB_LOG_ALL_SEEDS=True,
              TOTAL_TIMESTEPS=int(total_steps), TEST_DURING_TRAINING=test == "1")
for key in ("NUM_ENVS", "NUM_STEPS", "BUFFER_SIZE", "BUFFER_BATCH_SIZE", "HIDDEN_SIZE",
            "TARGET_UPDATE_INTERVAL", "NUM_EPOCHS", "TEST_NUM_STEPS", "TEST_NUM_ENVS",
            "MIXER_EMBEDDING_DIM", "MIXER_HYPERNET_HIDDEN_DIM", "LEARNING_STARTS"):
    config[key] = int(config[key])
env, _ = peer.env_from_config(dict(config))
train = peer.make_train(config, env)
rngs = jax.random.split(jax.random.PRNGKey(config["SEED"]), config["NUM_SEEDS"])
fn = jax.jit(jax.vmap(train))
t0 = time.perf_counter(); compiled = fn.lower(rngs).compile(); compile_s = time.perf_counter() - t0
t0 = time.perf_counter(); out = jax.block_until_ready(compiled(rngs)); jax.effects_barrier()
train_s = time.perf_counter() - t0
num_updates = config["NUM_UPDATES"]
seeds = sorted({row["seed"] for row in logged})  # the script logs rng[0] of each seed
def per_seed(name):
    rows = {s: sorted((r for r in logged if r["seed"] == s), key=lambda r: r["update_steps"])
            for s in seeds}
    return np.asarray([[r[name] for r in rows[s]] for s in seeds])
result = {"num_updates": num_updates, "seeds": config["NUM_SEEDS"], "compile_s": compile_s,
          "train_s": train_s, "jax": jax.__version__,
          "env_steps_per_seed": num_updates * config["NUM_ENVS"] * config["NUM_STEPS"]}
curve = per_seed("returned_episode_returns")  # [seeds, updates], x3 scale
tail = max(1, num_updates // 20)
result["train_logged"] = curve[:, -tail:].mean(axis=1).tolist()
result["logged_curve"] = curve[:, :: max(1, num_updates // 200)].tolist()
if config["TEST_DURING_TRAINING"]:
    result["greedy_logged"] = per_seed("test_returned_episode_returns")[:, -1].tolist()
print("RESULT " + json.dumps(result))
"""


def run_ours(alg: str, steps: int, seeds: int, out_dir: Path, separate: bool) -> dict:
    """Our command line; ``separate`` trains the seeds one process each (``run.seed=s``)
    instead of ``vmap``ped in one program (see the hang noted in the results file)."""
    if not separate:
        return _run_ours(alg, steps, seeds, out_dir, f"ours_{alg}", [])
    runs = [
        _run_ours(alg, steps, 1, out_dir, f"ours_{alg}_seed{s}", [f"run.seed={s}"])
        for s in range(seeds)
    ]
    merged = dict(runs[0], seeds=seeds, separate_processes=True)
    train_s = sum(r["env_steps_per_seed"] / r["steps_per_s"] for r in runs)
    merged["steps_per_s"] = runs[0]["env_steps_per_seed"] * seeds / train_s
    merged["compile_s"] = sum(r["compile_s"] for r in runs) / seeds
    merged["wall_s"] = sum(r["wall_s"] for r in runs)
    merged["load_after"] = runs[-1]["load_after"]
    for key in ("train_raw", "greedy_raw"):
        merged[key] = [v for r in runs for v in r[key]]
    merged["per_seed_steps_per_s"] = [r["steps_per_s"] for r in runs]
    return merged


def _run_ours(alg: str, steps: int, seeds: int, out_dir: Path, name: str, extra: list) -> dict:
    updates = steps // OUR_STEPS_PER_UPDATE
    chunk = max(d for d in range(1, 501) if updates % d == 0)
    cmd = [
        sys.executable,
        "-m",
        "jaxmarl.train",
        f"alg={alg}",
        "env=MPE_simple_spread_v3",
        f"run.num_seeds={seeds}",
        f"run.total_timesteps={updates * OUR_STEPS_PER_UPDATE}",
        f"run.updates_per_chunk={chunk}",
        "run.checkpoint_every=0",
        f"run.out_dir={out_dir}",
        f"run.name={name}",
        "run.gif=false",
        *extra,
        "--no-progress",
    ]
    load_before = machine_load()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"ours failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    run_dir = out_dir / name
    summary = {}
    for line in (run_dir / "summary.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2:
            summary[cells[0]] = cells[1]
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x]
    tail_from = updates - max(1, updates // 20)
    train = [
        _mean_std(
            [r["episode_return"] for r in rows if r["seed"] == s and r["update"] > tail_from]
        )[0]
        for s in range(seeds)
    ]
    evals = [json.loads(x) for x in (run_dir / "eval.jsonl").read_text().splitlines() if x]
    last_eval = max(r["update"] for r in evals)
    return {
        "side": "ours",
        "cmd": " ".join(cmd[1:]),
        "env_steps_per_seed": updates * OUR_STEPS_PER_UPDATE,
        "seeds": seeds,
        "compile_s": float(summary["compile (s)"]),
        "steps_per_s": float(summary["training env steps/s (all seeds)"].replace(",", "")),
        "train_raw": train,
        "greedy_raw": [r["eval_episode_return"] for r in evals if r["update"] == last_eval],
        "wall_s": wall,
        "load_before": load_before,
        "load_after": machine_load(),
    }


def run_peer(alg: str, steps: int, seeds: int, test: bool, python: str, scripts: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        runner = Path(tmp) / "peer_runner.py"
        runner.write_text(PEER_RUNNER)
        script = scripts / "QLearning" / PEER_SCRIPT[alg]
        cmd = [python, "-I", str(runner), str(script), str(scripts / PEER_CONFIG)]
        cmd += [str(steps), str(seeds), "1" if test else "0"]
        load_before = machine_load()
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"peer failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    result.update(
        side="jaxmarl" if test else "jaxmarl_notest",
        steps_per_s=result["env_steps_per_seed"] * result["seeds"] / result["train_s"],
        train_raw=peer_train_raw(result["train_logged"]),
        greedy_raw=[v / NUM_AGENTS for v in result.get("greedy_logged", [])],
        wall_s=wall,
        load_before=load_before,
        load_after=machine_load(),
    )
    return result


LABELS = {
    "ours": "ours",
    "jaxmarl": "JaxMARL 0.2.0, as published (in-loop test)",
    "jaxmarl_notest": "JaxMARL 0.2.0, TEST_DURING_TRAINING=False",
}


def table(results: dict) -> str:
    out = []
    for alg, sides in results.items():
        out.append(f"### {alg.upper()}-RNN on MPE_simple_spread_v3\n")
        out.append(
            "| | env steps / seed | seeds | greedy return, per agent raw | train return (last 5%),"
            " per agent raw | greedy, x3 (JaxMARL scale) | training env steps/s (all seeds) "
            "| compile s | wall s | load before/after |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for key in ("ours", "jaxmarl", "jaxmarl_notest"):
            r = sides.get(key)
            if not r:
                continue
            greedy = "—"
            greedy3 = "—"
            if r.get("greedy_raw"):
                m, s = _mean_std(r["greedy_raw"])
                greedy, greedy3 = f"{m:.2f} ± {s:.2f}", f"{m * NUM_AGENTS:.1f}"
            train = peer_train_raw(r["train_logged"]) if key != "ours" else r["train_raw"]
            tm, ts = _mean_std(train)
            out.append(
                f"| {LABELS[key]} | {r['env_steps_per_seed']:,} | {r['seeds']} | {greedy} "
                f"| {tm:.2f} ± {ts:.2f} | {greedy3} | {r['steps_per_s']:,.0f} "
                f"| {r['compile_s']:.1f} | {r['wall_s']:.0f} "
                f"| {r['load_before']} / {r['load_after']} |"
            )
        ours = sides.get("ours")
        for key in ("jaxmarl", "jaxmarl_notest"):
            if ours and sides.get(key):
                out.append(
                    f"\nThroughput ours / {LABELS[key]}: "
                    f"**{ours['steps_per_s'] / sides[key]['steps_per_s']:.2f}x**"
                )
        out.append("")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algs", default="qmix")
    parser.add_argument("--steps", type=int, default=2_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sides", default="ours,jaxmarl,jaxmarl_notest")
    parser.add_argument("--peer-python", default="/tmp/peer/bin/python")
    parser.add_argument("--peer-scripts", type=Path, default=Path("/tmp/peer_scripts"))
    parser.add_argument("--out-dir", type=Path, default=REPO / "runs" / "q_learning_vs_jaxmarl")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--ours-vmapped",
        action="store_true",
        help="train our seeds vmapped in one process (default: one process per seed)",
    )
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    store = args.out_dir / "results.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not args.report_only:
        for alg in args.algs.split(","):
            for side in args.sides.split(","):
                print(
                    f"[{dt.datetime.now(dt.timezone.utc):%H:%M:%S}] {alg} {side}: "
                    f"{args.steps:,} steps x {args.seeds} seeds, load {machine_load()}",
                    flush=True,
                )
                if side == "ours":
                    r = run_ours(alg, args.steps, args.seeds, args.out_dir, not args.ours_vmapped)
                else:
                    r = run_peer(
                        alg,
                        args.steps,
                        args.seeds,
                        side == "jaxmarl",
                        args.peer_python,
                        args.peer_scripts,
                    )
                r["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
                results.setdefault(alg, {})[side] = r
                store.write_text(json.dumps(results, indent=1))
                print(f"  -> {r['steps_per_s']:,.0f} env steps/s", flush=True)
    text = table(results) + f"\n{platform.platform()}, {os.cpu_count()} CPUs\n"
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
