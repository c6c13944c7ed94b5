"""IPPO-RNN on JaxNav (2 robots): our ``jaxmarl.train`` against JaxMARL's own IPPO-RNN script.

JaxMARL publishes no JaxNav baseline (the public FLAIROx/JaxMARL repository has no JaxNav
script or config under ``baselines/``; the JaxNav paper's own IPPO lives in its UED repository,
amacrutherford/sampling-for-learnability, next to jaxued). The closest JaxMARL script that runs
on its JaxNav env is its generic recurrent IPPO, ``baselines/IPPO/ippo_rnn.py`` (Dense -> GRU ->
actor and critic heads on one shared torso, a categorical policy), given
``ENV_NAME: jaxnav``. It needs discrete actions, so both sides play the default 2-robot task
(``jaxmarl.make("jaxnav")``: 11 x 11 ``Grid-Rand-Poly`` maps with fill 0.3, 200-beam lidar,
500-step episodes) with ``act_type="Discrete"`` (15 actions), the env's only other change.

Hyperparameters are the JaxNav paper's IPPO settings (``learning/ippo-jaxnav.yaml`` of that
repository, the values of our preset ``configs/ippo/jaxnav.yaml``: lr 2.5e-4 annealed, 4
epochs x 4 minibatches, gamma 0.99, GAE 0.95, clip 0.04, no entropy bonus, value weight 0.5,
grad norm 0.5, 512-wide Dense -> GRU -> Dense) on both sides, except the batch: the paper's 256
envs x 512 steps (131,072 env steps per update) is ``--num-envs`` x ``--num-steps`` here,
because this CPU affords only a few hundred thousand env steps per seed (state it when
reporting). Same env steps and seeds on both sides; our seeds are vmapped in one program
(``run.num_seeds``); JaxMARL's script's ``main`` vmaps its seeds too, but that deadlocks
here (flax's orthogonal initialisers under ``vmap``, ``benchmarks/FINDINGS.md``), so the runner
compiles ``jax.jit(train)`` once and runs the seeds one after another.

Success rate (the same metric on both sides): per update, the share of robots that reached
their goal, over the episodes that ended during the update's rollout (training episodes,
stochastic policy). Ours logs it as ``success_rate`` (``episode_metrics`` of the env's infos).
JaxMARL's JaxNav reports per-robot *events* (``GoalR``: reached the goal on this step) and its
script logs only the last episode return, so the runner (i) builds the env as a subclass of
JaxMARL's ``JaxNav`` whose infos add ``reached`` (``state.goal_reached`` after the step: the
robot's outcome when read at the episode's last step; dynamics untouched), and (ii) hands
the script a ``jax`` whose ``lax.scan`` wraps the script's ``_update_step`` to reduce its
per-update infos (``returned_episode``, ``reached``, ``returned_episode_returns``) to the
success rate and mean return of the episodes that ended, reported by ``jax.debug.callback``.
Nothing else of the script changes.

Peer scripts: copy ``baselines/IPPO/ippo_rnn.py`` of FLAIROx/JaxMARL to
``PEER_SCRIPTS/IPPO/ippo_rnn.py`` (outside this repository; this file embeds none of its
code). Its YAML is written by this driver (``peer_config``; JaxMARL ships none for JaxNav).
The peer interpreter needs ``jaxmarl==0.2.0`` and ``distrax`` (``/tmp/peer`` lacks distrax: a
venv with a ``.pth`` pointing at ``/tmp/peer``'s site-packages plus ``pip install distrax``
works). The runner's stubs and config loading are ``ppo_vs_jaxmarl.PEER_PRELUDE``.

Usage::

    python benchmarks/jaxnav_ippo_vs_jaxmarl.py --steps 4096 --sides jaxmarl  # timing probe
    python benchmarks/jaxnav_ippo_vs_jaxmarl.py --gif   # 16,384 steps, 16 envs x 64 steps
    # (or --sides ours_existing to collect a finished run of ours)
    python benchmarks/jaxnav_ippo_vs_jaxmarl.py --report-only \\
        --md benchmarks/results/jaxnav_ippo_vs_jaxmarl-table.md \\
        --plot benchmarks/results/jaxnav_ippo_vs_jaxmarl.png
    # JaxMARL's YAML alone, for ppo_update_cpu_time.py --workload ippo_rnn_jaxnav:
    python benchmarks/jaxnav_ippo_vs_jaxmarl.py --num-envs 256 --num-steps 512 \
        --write-peer-config /tmp/peer_scripts_jaxnav34/IPPO/config/ippo_rnn_jaxnav.yaml
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path

from ppo_vs_jaxmarl import (
    PEER_PRELUDE,
    REPO,
    load_results,
    machine,
    machine_load,
    other_benchmarks,
    read_summary,
    run_runner,
    run_train_command,
    seed_iqm,
    wait_for_quiet,
)

NUM_AGENTS = 2
ENV_KWARGS = {"act_type": "Discrete"}  # the default task, with JaxMARL's discrete action set
PRESET_ENV_KWARGS = ("num_agents", "goal_radius", "map_params")  # configs/ippo/jaxnav.yaml's
# The JaxNav paper's IPPO (learning/ippo-jaxnav.yaml) in the keys of JaxMARL's ippo_rnn.py;
# NUM_ENVS, NUM_STEPS, TOTAL_TIMESTEPS and NUM_SEEDS come from the command line.
PAPER_IPPO = {
    "LR": 2.5e-4,
    "UPDATE_EPOCHS": 4,
    "NUM_MINIBATCHES": 4,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.04,
    "SCALE_CLIP_EPS": False,
    "ENT_COEF": 0.0,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.5,
    "HIDDEN_SIZE": 512,
    "ANNEAL_LR": True,
    "TEST_DURING_TRAINING": False,  # the script still plays one greedy rollout at the start
    "NUM_TEST_ENVS": 1,
    "TEST_INTERVAL": 0.05,
}

# Runs under the peer interpreter after PEER_PRELUDE (which loaded `peer` and `config`).
JAXNAV_RUNNER = r"""
import jax.numpy as jnp
import jaxmarl as _jaxmarl
from jaxmarl.environments.jaxnav.jaxnav_env import JaxNav

NUM_AGENTS = config["ENV_KWARGS"].get("num_agents", 2)


class JaxNavWithOutcome(JaxNav):
    # JaxMARL's JaxNav; infos add each robot's goal flag after the step (dynamics unchanged).
    def step_env(self, key, state, actions):
        obs, state, rewards, dones, infos = super().step_env(key, state, actions)
        return obs, state, rewards, dones, {**infos, "reached": state.goal_reached}


def _make(name, **kwargs):
    assert name == "jaxnav", name
    return JaxNavWithOutcome(**kwargs)


real_jax = jax
records = []
seed_tag = []


def _record(seed_key, row):
    records.append({"seed": [int(v) for v in np.asarray(seed_key)],
                    **{k: float(v) for k, v in row.items()}})


def _recorded(update_step):
    def body(carry, x):
        carry, metric = update_step(carry, x)
        ended = metric["returned_episode"].astype(jnp.float32)  # [T, E, A]
        count = ended.sum()
        denom = jnp.maximum(count, 1.0)
        row = {
            "update": metric["update_steps"],
            "episodes": count / NUM_AGENTS,
            "success_rate": (metric["reached"].astype(jnp.float32) * ended).sum() / denom,
            "episode_return": (metric["returned_episode_returns"] * ended).sum() / denom,
            "episode_length": (metric["returned_episode_lengths"] * ended).sum() / denom,
        }
        real_jax.debug.callback(_record, seed_tag[-1], row)
        return carry, metric
    return body


class _Lax:
    def __getattr__(self, name):
        return getattr(real_jax.lax, name)

    def scan(self, f, init, xs=None, length=None, **kwargs):
        if getattr(f, "__name__", "") == "_update_step":
            f = _recorded(f)
        return real_jax.lax.scan(f, init, xs, length, **kwargs)


class _Jax:
    lax = _Lax()

    def __getattr__(self, name):
        return getattr(real_jax, name)


peer.jaxmarl = types.SimpleNamespace(make=_make)
peer.jax = _Jax()
train = peer.make_train(config)


def tagged(rng):
    seed_tag.append(rng)
    return train(rng)


# The script's main vmaps train over its seeds; here each seed is one call of the same
# compiled train (its flax orthogonal initialisers, batched LAPACK QRs under vmap, deadlock
# jaxlib 0.10.2's CPU thread pool: benchmarks/FINDINGS.md). Per seed the numbers are the same.
rngs = jax.random.split(jax.random.PRNGKey(config["SEED"]), num_seeds)
fn = jax.jit(tagged)
t0 = time.perf_counter(); compiled = fn.lower(rngs[0]).compile()
compile_s = time.perf_counter() - t0
train_s = 0.0
for key in rngs:
    t0 = time.perf_counter(); jax.block_until_ready(compiled(key)); jax.effects_barrier()
    train_s += time.perf_counter() - t0
per_update = config["NUM_ENVS"] * config["NUM_STEPS"]
curves = []
for key in rngs:
    rows = sorted((r for r in records if r["seed"] == [int(v) for v in np.asarray(key)]),
                  key=lambda r: r["update"])
    curves.append([{**r, "env_steps": int(r["update"] + 1) * per_update} for r in rows])
print("RESULT " + json.dumps({
    "num_updates": config["NUM_UPDATES"], "seeds": num_seeds,
    "env_steps_per_seed": config["NUM_UPDATES"] * per_update, "compile_s": compile_s,
    "train_s": train_s, "curves": curves, "jax": jax.__version__, "config": config,
}))
"""


def peer_config(num_envs: int, num_steps: int, seed: int = 0) -> dict:
    return {
        "ENV_NAME": "jaxnav",
        "ENV_KWARGS": dict(ENV_KWARGS),
        "NUM_ENVS": num_envs,
        "NUM_STEPS": num_steps,
        "TOTAL_TIMESTEPS": 0,  # set by the prelude
        **PAPER_IPPO,
        "SEED": seed,  # the seeds are split(PRNGKey(SEED), seeds), as ours from run.seed
    }


def run_jaxmarl(args, steps: int) -> dict:
    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        config_path = Path(tmp) / "ippo_rnn_jaxnav.yaml"
        config_path.write_text(
            yaml.safe_dump(peer_config(args.num_envs, args.num_steps, args.seed))
        )
        script = args.peer_scripts / "IPPO" / "ippo_rnn.py"
        runner_args = ["ippo", str(script), str(config_path), str(steps), str(args.seeds)]
        result = run_runner(PEER_PRELUDE + JAXNAV_RUNNER, args.peer_python, runner_args)
    total = result["env_steps_per_seed"] * result["seeds"]
    result.update(side="jaxmarl", steps_per_s=total / result["train_s"])
    return result


def ours_command(args, steps: int, name: str) -> list[str]:
    chunk = max(1, min(args.updates_per_chunk, steps // (args.num_envs * args.num_steps)))
    return [
        sys.executable,
        "-P",  # an installed jaxmarl, not the source folder of the working directory
        "-m",
        "jaxmarl.train",
        "alg=ippo",
        "preset=jaxnav",
        # back to the env's defaults (the preset sets the paper's 4-robot task), then discrete
        *(f"~env.env_kwargs.{k}" for k in PRESET_ENV_KWARGS),
        *(f"+env.env_kwargs.{k}={v}" for k, v in ENV_KWARGS.items()),
        f"env.num_envs={args.num_envs}",
        f"num_steps={args.num_steps}",
        f"run.seed={args.seed}",
        f"run.num_seeds={args.seeds}",
        f"run.total_timesteps={steps}",
        f"run.updates_per_chunk={chunk}",
        "run.checkpoint_every=0",
        "run.eval_episodes=0",
        f"run.gif={'true' if args.gif else 'false'}",
        f"run.out_dir={args.out_dir}",
        f"run.name={name}",
        *args.ours_override,
        "--no-progress",
    ]


def ours_side(args) -> str:
    """The results key of our run: ``ours``, or ``ours:`` and its extra overrides (a variant)."""
    return "ours" if not args.ours_override else "ours:" + " ".join(args.ours_override)


def ours_run_name(args, steps: int) -> str:
    tag = "".join(c if c.isalnum() else "_" for c in "_".join(args.ours_override))
    return f"ours_ippo_jaxnav_{steps}" + (f"_{tag}" if tag else "")


def run_ours(args, steps: int) -> dict:
    name = ours_run_name(args, steps)
    cmd = ours_command(args, steps, name)
    load_before = machine_load()
    run_dir = args.out_dir / name
    wall, _ = run_train_command(cmd, run_dir)
    return collect_ours(run_dir, cmd, wall, load_before, args.seeds)


def collect_ours(run_dir: Path, cmd: list[str], wall: float, load_before: str, seeds: int):
    """Our side's record from a finished run directory."""
    summary = read_summary(run_dir)
    rate = next(v for k, v in summary.items() if k.startswith("training env steps/s"))
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x]
    keys = ("update", "env_steps", "episodes", "success_rate", "episode_return", "episode_length")
    curves = [
        sorted(
            ({k: r[k] for k in keys} for r in rows if r["seed"] == seed), key=lambda r: r["update"]
        )
        for seed in sorted({r["seed"] for r in rows})
    ]
    return {
        "side": "ours",
        "cmd": " ".join(cmd[1:]),
        "run_dir": str(run_dir),
        "env_steps_per_seed": curves[0][-1]["env_steps"],
        "seeds": seeds,
        "compile_s": float(summary["compile (s)"]),
        "steps_per_s": float(rate.replace(",", "")),
        "curves": curves,
        "wall_s": wall,
        "load_before": load_before,
    }


def finals(result: dict, key: str = "success_rate", last: int = 1) -> list[float]:
    """Per seed: the mean of ``key`` over the last ``last`` updates that ended episodes."""
    out = []
    for curve in result["curves"]:
        rows = [r for r in curve if r["episodes"] > 0][-last:]
        out.append(sum(r[key] for r in rows) / len(rows))
    return out


def _summary(values: list[float]) -> str:
    """The mean over seeds, and their IQM where ``seed_iqm`` has one."""
    mean, iqm = sum(values) / len(values), seed_iqm(values)
    return f"{mean:.3f}" if iqm is None else f"{mean:.3f} (IQM {iqm:.3f})"


def pool(results: dict, other: dict) -> dict:
    """Each side's seeds of both result sets as one record: curves and seeds joined, env
    steps/s over both runs' training time, compile and wall seconds summed. Sides missing from
    either set are left out."""
    pooled = {}
    for side in results.keys() & other.keys():
        a, b = results[side], other[side]
        steps = [r["env_steps_per_seed"] * r["seeds"] for r in (a, b)]
        seconds = sum(n / r["steps_per_s"] for n, r in zip(steps, (a, b)))
        pooled[side] = {
            **a,
            "curves": a["curves"] + b["curves"],
            "seeds": a["seeds"] + b["seeds"],
            "steps_per_s": sum(steps) / seconds,
            "compile_s": a["compile_s"] + b["compile_s"],
            "wall_s": a["wall_s"] + b["wall_s"],
        }
    return pooled


def _sides(results: dict) -> list[str]:
    """Ours, then our variants, then JaxMARL's: the rows and curves in a fixed order."""
    variants = sorted(k for k in results if k.startswith("ours:"))
    return [k for k in ("ours", *variants, "jaxmarl") if k in results]


def _label(side: str) -> str:
    if side == "jaxmarl":
        return "JaxMARL 0.2.0 `ippo_rnn.py`"
    return side.replace("ours:", "ours, ")


def table(results: dict, last: int) -> str:
    head = (
        f"| side | env steps / seed | seeds | success rate per seed (last {last} updates) "
        "| mean (IQM) | return per seed | mean (IQM) | env steps/s (all seeds) | compile s "
        "| wall s |\n|---|---:|---:|---|---:|---|---:|---:|---:|---:|"
    )
    lines = [head]
    for side in _sides(results):
        r = results[side]
        success, ret = finals(r, "success_rate", last), finals(r, "episode_return", last)
        label = _label(side)
        lines.append(
            f"| {label} | {r['env_steps_per_seed']:,} | {r['seeds']} "
            f"| {', '.join(f'{v:.3f}' for v in success)} | {_summary(success)} "
            f"| {', '.join(f'{v:.2f}' for v in ret)} | {_summary(ret)} "
            f"| {r['steps_per_s']:,.0f} | {r['compile_s']:.0f} | {r['wall_s']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path, last: int) -> Path:
    from jaxmarl.training.host.plotting import plot_curves

    series = {}
    for side in _sides(results):
        r = results[side]
        steps = [row["env_steps"] for row in r["curves"][0]]
        series[_label(side).replace("`", "")] = (
            steps,
            [[row["success_rate"] for row in c] for c in r["curves"]],
        )
    return plot_curves(
        series,
        str(path),
        xlabel="env steps per seed",
        ylabel="training success rate (robots at goal)",
        title="IPPO-RNN, JaxNav 2 robots: mean of 3 seeds, min-max band",
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=16_384, help="env steps per seed")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--num-steps", type=int, default=64)
    parser.add_argument("--updates-per-chunk", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="root seed of both sides (their seeds are split from it): another set of seeds",
    )
    parser.add_argument(
        "--sides", default="ours,jaxmarl", help="ours, jaxmarl, ours_existing (collect a run)"
    )
    parser.add_argument("--last", type=int, default=5, help="updates averaged for the finals")
    parser.add_argument("--gif", action="store_true", help="our run writes an episode GIF")
    parser.add_argument(
        "--ours-override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an extra override of our run (repeatable): the run is stored as a variant row "
        "'ours: KEY=VALUE', next to the plain 'ours' row",
    )
    parser.add_argument("--peer-python", default="/tmp/peer_jaxnav34/bin/python")
    parser.add_argument("--peer-scripts", type=Path, default=Path("/tmp/peer_scripts_jaxnav34"))
    parser.add_argument("--out-dir", type=Path, default=REPO / "runs" / "jaxnav_ippo_vs_jaxmarl")
    parser.add_argument("--md", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--pool",
        type=Path,
        nargs="*",
        default=[],
        metavar="OUT_DIR",
        help="report the seeds of these output folders' runs (the same settings, other --seed) "
        "together with --out-dir's, side by side",
    )
    parser.add_argument(
        "--write-peer-config",
        type=Path,
        default=None,
        help="only write JaxMARL's YAML for these settings to this path (used by "
        "ppo_update_cpu_time.py --workload ippo_rnn_jaxnav) and exit",
    )
    args = parser.parse_args(argv)
    if args.write_peer_config:
        import yaml

        args.write_peer_config.parent.mkdir(parents=True, exist_ok=True)
        args.write_peer_config.write_text(
            yaml.safe_dump(peer_config(args.num_envs, args.num_steps))
        )
        return 0
    args.out_dir = args.out_dir.resolve()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    per_update = args.num_envs * args.num_steps
    steps = args.steps // per_update * per_update
    store = args.out_dir / f"results_{steps}.json"
    results = load_results(args.out_dir, store.name)
    if not args.report_only:
        for side in args.sides.split(","):
            concurrent = wait_for_quiet(max_wait_s=0)
            stamp = f"{dt.datetime.now(dt.timezone.utc):%H:%M:%S}"
            print(f"[{stamp}] {side}: {steps:,} steps x {args.seeds} seeds", flush=True)
            if side == "jaxmarl":
                r = run_jaxmarl(args, steps)
            elif side == "ours_existing":  # our finished run dir; wall from its files' times
                run_dir = args.out_dir / ours_run_name(args, steps)
                wall = (run_dir / "summary.md").stat().st_mtime - (
                    run_dir / "run.json"
                ).stat().st_mtime
                cmd = ours_command(args, steps, run_dir.name)
                r = collect_ours(run_dir, cmd, wall, "unknown", args.seeds)
            else:
                r = run_ours(args, steps)
            if side != "jaxmarl":
                side = ours_side(args)
            r.update(
                concurrent_at_start=concurrent,
                load_after=machine_load(),
                machine=machine(),
                concurrent_at_end=other_benchmarks(),
                finished_utc=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            )
            results[side] = r
            store.write_text(json.dumps(results, indent=1))
            print(
                f"  -> wall {r['wall_s']:.0f}s, compile {r['compile_s']:.0f}s, "
                f"{r['steps_per_s']:,.0f} env steps/s, success {finals(r, last=args.last)}",
                flush=True,
            )
    for other in args.pool:
        results = pool(results, load_results(other.resolve(), store.name))
    text = table(results, args.last)
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.plot:
        print("curve:", plot(results, args.plot, args.last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
