"""SMAX win rates, ours against JaxMARL 0.2.0: MAPPO-RNN, or QMIX / VDN / IQL (``--alg``).

Both sides train against SMAX's scripted enemy (``HeuristicEnemySMAX``; enemy sees actions,
walls kill, enemy attacks the closest unit) for the same env steps and seeds, one side at a
time, and record the training win rate of every update of every seed, greedy win rates, and
wall and CPU time (``time.process_time``) of compile and training.

* ``--alg mappo`` (default): JaxMARL's ``mappo_homogenous_rnn_smax.yaml`` settings (128 envs x
  128 steps = 16384 env steps per update, lr 4e-3 annealed to 0 over the run, relu 128 dense +
  GRU 128, centralised critic, 4 epochs x 4 minibatches, clip 0.05, grad norm 0.25). Ours:
  ``preset=HeuristicEnemySMAX_<scenario>`` of ``configs/mappo`` with ``critic=centralised``.
* ``--alg qmix|vdn|iql``: JaxMARL's ``ql_rnn_smax.yaml`` ("valid for iql, vdn, qmix": 16 envs x
  128 steps = 2048 env steps per update, dense + GRU 512, 8 gradient steps of 32 sequences per
  update, RAdam 5e-5, ...). Ours: ``preset=HeuristicEnemySMAX_<scenario>`` of
  ``configs/<alg>``, which mirrors it.

``--ours-preset NAME`` trains another preset of ``configs/<alg>`` of the same scenario, such as
the 64-wide CPU presets ``HeuristicEnemySMAX_<scenario>_cpu`` (compare them with
``--peer-override HIDDEN_SIZE=64``; they also update their target softly, which JaxMARL's
script does not). ``--ours-override KEY=VALUE`` and ``--peer-override KEY=VALUE`` (repeatable)
change a setting on one side, for runs that deviate from the published settings on both sides
alike (e.g. a narrower network: ``--ours-override network.embed_dim=64 --ours-override
network.trunk.size=64 --peer-override HIDDEN_SIZE=64``). The JSON records every override.

Ours (our venv)::

    .venv/bin/python benchmarks/smax_vs_jaxmarl.py --side ours --alg mappo --scenario 3m \\
        --steps 1998848 --seeds 3 --out /tmp/smax_bench/ours_3m.json [--run-dir DIR]

runs ``jaxmarl.training.host.loop.run`` on the learner of the preset (what ``python -m
jaxmarl.train alg=<alg> preset=HeuristicEnemySMAX_3m run.num_seeds=3`` runs): the seeds are
vmapped in one program (keys ``split(key(SEED), seeds)``, ``--seed`` 0 unless given), updates
run in jitted chunks, greedy evaluation (128 envs) every ``--eval-every`` chunks and at the end.
The run directory (metrics, ``eval.jsonl``, ``learning_curve.png``, ``episode.gif``) is kept
(``--run-dir``).
``--devices K`` splits the seeds over K host devices (``run.devices``; same results).

JaxMARL 0.2.0 (its own venv, isolated so it cannot import this repository)::

    cd /tmp && /tmp/peer/bin/python -I /work/main/benchmarks/smax_vs_jaxmarl.py \\
        --side jaxmarl --alg mappo --scenario 3m --steps 1998848 --seeds 3 \\
        --out /tmp/smax_bench/jm_3m.json

imports JaxMARL's script from ``--peer-scripts`` (default ``/tmp/peer_scripts``; the PyPI
package ships no baseline scripts: copy these files of the public repository
``FLAIROx/JaxMARL`` there, outside this repository; this file embeds none of their code)::

    MAPPO/mappo_rnn_smax.py, MAPPO/config/mappo_homogenous_rnn_smax.yaml
    QLearning/{qmix,vdn,iql}_rnn.py, QLearning/config/alg/ql_rnn_smax.yaml

MAPPO: the YAML lacks ``FC_DIM_SIZE``, ``GRU_HIDDEN_DIM`` and ``OBS_WITH_AGENT_ID`` (set here to
128, 128, True); PyYAML reads ``4e-3`` as a string (cast to float); ``MAP_NAME`` is the
scenario. ``wandb`` is replaced by a stub whose ``log`` records each update's dict (the script
calls it from an ``io_callback``, so that host callback still runs and is timed). Q-learning:
the env comes from the script's ``env_from_config`` and ``make_train(config, env)``;
``TEST_DURING_TRAINING`` stays on (its greedy test of 512 envs x 128 steps runs every 5% of the
updates: one seed per call, so its ``lax.cond`` is not turned into a ``select``), and
``WANDB_MODE`` is not ``disabled`` so its per-update ``jax.debug.callback`` reaches the stub.
Either script trains one seed per ``train(key)`` call: it is compiled once and the seeds
(``PRNGKey(0..seeds-1)``, or from ``--first-seed N`` on) run one after another, as its ``main``
runs one seed. Seeds split over processes that way are joined into one row by ``compare``.

Then::

    .venv/bin/python benchmarks/smax_vs_jaxmarl.py compare /tmp/smax_bench/*.json \\
        --md runs/smax_bench/table.md --png-prefix runs/smax_bench/smax

writes a Markdown table and, per scenario and algorithm, a PNG of training win rate vs env
steps (mean over seeds, min/max band; greedy win rates as markers).

Win rate
--------
Training win rate, per update. MAPPO, both sides: the fraction of the training episodes that
*ended during that update's rollout* (stochastic policy) that were won. JaxMARL's
``SMAXLogWrapper`` counts an episode as won when an ally's reward at its last step is >= 1
(SMAX pays 1 for the win); ours counts ``infos["won"]`` (every enemy dead and an ally alive) at
the episode's end. JaxMARL's Q scripts log instead the mean, over the rollout's steps, envs and
agents, of ``returned_won_episode`` (the win flag of each env's most recently *finished*
episode: a lagging value). Those scripts reset every env at the start of each update's rollout,
so that value is 0 in every env until its first episode of the rollout ends: on SMAX, where
an episode is a large part of the 128-step rollout, the script's own training win rate and
return come out well below the episodes'. So the driver reads JaxMARL's training win rate and
return like ours: ``_EpisodeEnds`` wraps the env the script builds and adds to its step infos
each agent's episode-end flag and the won flag and return times that flag; the script's
per-update means of those give the fraction won and mean return of the episodes that ended in
the update. The script's own lagging values are kept in the JSON (``win_rate_script``,
``episode_return_script``; absent from runs before 2026-11-24 03:50 UTC, whose JaxMARL training
curves are that lagging value). Ours logs the same fraction as for MAPPO. Both sides are
plotted at
``(update_index + 1) * env steps per update``, the env steps done when the rollout ends.
"Final training win rate" is the mean of the last 5 updates, per seed.

Greedy win rate (argmax over available actions). Ours: 128 fresh envs rolled for one episode
limit, win rate over the episodes that ended, every ``--eval-every`` chunks and at the end.
JaxMARL (Q-learning only; its MAPPO script has none): the script's own test, 512 envs x 128
steps, mean won flag over the episodes that ended, every 5% of the updates; the last one is
its "final greedy" value.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import importlib.util
import json
import math
import os
import platform
import sys
import time
import types
from pathlib import Path

FINAL_WINDOW = 5
SCENARIOS = ("3m", "2s3z")
ALGS = ("mappo", "qmix", "vdn", "iql")
DIAGNOSTICS = ("episode_length", "q_mean", "q_tot_mean", "target_mean", "loss")
Q_ALGS = ("qmix", "vdn", "iql")


class _ClockSpy:
    """Stands in for ``time`` inside our loop module: records CPU time at each wall reading.

    ``loop.run`` reads ``time.perf_counter()`` just before and after compiling the chunk and
    around every chunk call; pairing each reading with ``time.process_time()`` gives the CPU
    seconds of the compile and of the chunks alone (not evaluation, checkpoints, GIF).
    """

    def __init__(self):
        self.readings: list[tuple[float, float]] = []

    def perf_counter(self) -> float:
        wall = time.perf_counter()
        self.readings.append((wall, time.process_time()))
        return wall

    def __getattr__(self, name):
        return getattr(time, name)


def _machine() -> dict:
    return {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_start": Path("/proc/loadavg").read_text().split()[:3],
    }


def _final(curve: list[float]) -> float:
    tail = [v for v in curve[-FINAL_WINDOW:] if not math.isnan(v)]
    return sum(tail) / len(tail) if tail else float("nan")


def run_ours(args) -> dict:
    from jaxmarl.training.host.devices import use_devices

    use_devices(args.devices)  # before anything runs on JAX's backend
    import jax

    import jaxmarl

    fast_cpu_rng = jaxmarl.use_fast_cpu_rng()  # as the train command does (docs/cpu_rng.md)
    from jaxmarl.baselines.ppo import PPOConfig, make_ppo
    from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning
    from jaxmarl.config import load_config, preset_path, save_config
    from jaxmarl.training.host import loop

    preset = args.ours_preset or f"HeuristicEnemySMAX_{args.scenario}"
    overrides = [f"run.total_timesteps={args.steps}", *args.ours_override]
    if args.alg == "mappo":
        config_cls, make = PPOConfig, make_ppo
        overrides.insert(0, "critic=centralised")
    else:
        config_cls, make = QLearningConfig, make_q_learning
    config = load_config(config_cls, preset_path(args.alg, preset), overrides)
    scenario = config.env.env_kwargs.get("scenario")
    if scenario != args.scenario:
        raise SystemExit(
            f"--ours-preset {preset} trains scenario {scenario!r}, not --scenario "
            f"{args.scenario!r}; pick a preset of that scenario or change --scenario"
        )
    learner = make(config)
    num_updates = learner.num_updates
    steps_per_update = learner.env_steps_per_update
    per_chunk = math.gcd(num_updates, config.run.updates_per_chunk)
    num_chunks = num_updates // per_chunk
    eval_every = args.eval_every if args.eval_every else 0
    run_dir = Path(args.run_dir or f"/tmp/smax_bench/runs/ours_{args.alg}_{args.scenario}")
    if run_dir.exists() and any(run_dir.iterdir()):
        raise SystemExit(f"{run_dir} is not empty; pick another --run-dir")
    spy = _ClockSpy()
    loop.time = spy  # see _ClockSpy
    wall0, cpu0 = time.perf_counter(), time.process_time()
    run_config = dataclasses.replace(
        config.run,
        seed=args.seed,
        num_seeds=args.seeds,
        devices=args.devices,
        updates_per_chunk=per_chunk,
        checkpoint_every=0,
        eval_every=eval_every,
    )
    result = loop.run(learner, run_config, run_dir, show_progress=False)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    loop.time = time
    # The config as run, with the seeds it ran (seed_ablation.py pairs seeds by run.seed).
    ran = dataclasses.replace(config.run, seed=args.seed, num_seeds=args.seeds)
    save_config(dataclasses.replace(config, run=ran), run_dir / "config.yaml")
    readings = spy.readings  # [compile start, compile end, (chunk start, chunk end) ...]
    compile_cpu = readings[1][1] - readings[0][1]
    chunks = readings[2:]
    train_cpu = sum(b[1] - a[1] for a, b in zip(chunks[0::2], chunks[1::2], strict=True))

    curves = {s: [] for s in range(args.seeds)}
    returns = {s: [] for s in range(args.seeds)}
    # Per-update diagnostics, [seed][update]: episode lengths show a policy that stalls until
    # the time limit; the Q learners' mean mixed Q and TD target show values that run away.
    diagnostics = {name: {s: [] for s in range(args.seeds)} for name in DIAGNOSTICS}
    for row in sorted(result.history, key=lambda r: (r["update"], r["seed"])):
        curves[row["seed"]].append(row["won"])
        returns[row["seed"]].append(row["episode_return"])
        for name, per_seed in diagnostics.items():
            if name in row:
                per_seed[row["seed"]].append(row[name])
    evals = [json.loads(line) for line in (run_dir / "eval.jsonl").read_text().splitlines()]
    last = max(e["update"] for e in evals)
    final_eval = [e for e in sorted(evals, key=lambda e: e["seed"]) if e["update"] == last]
    total_steps = num_updates * steps_per_update
    return {
        "side": "ours",
        "alg": args.alg,
        "library": f"jaxmarl (this repo) {getattr(jaxmarl, '__version__', '')}".strip(),
        "jax": jax.__version__,
        "fast_cpu_rng": fast_cpu_rng,
        "scenario": args.scenario,
        "preset": preset,
        "config_overrides": overrides,
        "seeds": args.seeds,
        "seed": args.seed,
        "seed_keys": f"split(key({args.seed}), {args.seeds}), vmapped in one program",
        "devices": args.devices,
        "num_updates": num_updates,
        "env_steps_per_seed": total_steps,
        "updates_per_chunk": per_chunk,
        "num_chunks": num_chunks,
        "eval_every_chunks": eval_every,
        "env_steps": [(u + 1) * steps_per_update for u in range(num_updates)],
        "win_rate": [curves[s] for s in range(args.seeds)],
        "episode_return": [returns[s] for s in range(args.seeds)],
        "final_win_rate": [_final(curves[s]) for s in range(args.seeds)],
        **{
            name: [per_seed[s] for s in range(args.seeds)]
            for name, per_seed in diagnostics.items()
            if per_seed[0]
        },
        "eval": evals,
        "final_eval_win_rate": [e["eval_won"] for e in final_eval],
        "final_eval_return": [e["eval_episode_return"] for e in final_eval],
        "compile_s": result.compile_s,
        "compile_cpu_s": compile_cpu,
        "train_wall_s": result.train_s,
        "train_cpu_s": train_cpu,
        "total_wall_s": wall,
        "total_cpu_s": cpu,
        "env_steps_per_s_wall": total_steps * args.seeds / result.train_s,
        "env_steps_per_cpu_s": total_steps * args.seeds / train_cpu,
        "run_dir": str(run_dir),
    }


def _import_script(path: Path):
    spec = importlib.util.spec_from_file_location(f"jaxmarl_peer_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parse_overrides(pairs: list[str]) -> dict:
    import yaml

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"override {pair!r} is not KEY=VALUE")
        out[key] = yaml.safe_load(value)
    return out


# ql_rnn_smax.yaml keys its Q scripts use as ints (PyYAML reads "1e7" as a string).
_Q_INT_KEYS = (
    "TOTAL_TIMESTEPS", "NUM_ENVS", "NUM_STEPS", "BUFFER_SIZE", "BUFFER_BATCH_SIZE",
    "HIDDEN_SIZE", "TARGET_UPDATE_INTERVAL", "NUM_EPOCHS", "TEST_NUM_STEPS", "TEST_NUM_ENVS",
    "MIXER_EMBEDDING_DIM", "MIXER_HYPERNET_HIDDEN_DIM", "LEARNING_STARTS",
)  # fmt: skip


class _EpisodeEnds:
    """Wraps the env JaxMARL's Q script builds (a ``SMAXLogWrapper``): each step's infos gain
    ``episode_end`` (1 for every agent where the episode ended), ``episode_end_won`` and
    ``episode_end_return`` (the ended episode's won flag and return, 0 elsewhere). The script
    averages every info over the rollout, so ``episode_end_won / episode_end`` is the win rate
    of the episodes that ended in the update. Everything else is the wrapped env's (attribute
    lookups fall through), so the script runs as written."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def step(self, key, state, actions):
        import jax.numpy as jnp

        obs, state, reward, done, info = self._env.step(key, state, actions)
        end = jnp.full(info["returned_won_episode"].shape, done["__all__"], jnp.float32)
        info = {
            **info,
            "episode_end": end,
            "episode_end_won": end * info["returned_won_episode"],
            "episode_end_return": end * info["returned_episode_returns"],
        }
        return obs, state, reward, done, info


def _per_episode(rows: list[dict], name: str) -> list[float]:
    """Per update: the mean of ``name`` over the episodes that ended (0 if none did, as ours)."""
    return [m[name] / m["episode_end"] if m["episode_end"] > 0 else 0.0 for m in rows]


def _peer_train(args) -> tuple:
    """``(train, config, script)`` for JaxMARL's script of ``args.alg`` (see the docstring)."""
    import copy

    import yaml

    scripts = Path(args.peer_scripts)
    overrides = _parse_overrides(args.peer_override)
    if args.alg == "mappo":
        module = _import_script(scripts / "MAPPO" / "mappo_rnn_smax.py")
        with open(scripts / "MAPPO" / "config" / "mappo_homogenous_rnn_smax.yaml") as f:
            config = yaml.safe_load(f)
        config.update(
            {
                "LR": float(config["LR"]),  # PyYAML reads "4e-3" as a string
                "TOTAL_TIMESTEPS": args.steps,
                "ENV_NAME": "HeuristicEnemySMAX",
                "MAP_NAME": args.scenario,
                "FC_DIM_SIZE": 128,
                "GRU_HIDDEN_DIM": 128,
                "OBS_WITH_AGENT_ID": True,
                "WANDB_MODE": "disabled",
                **overrides,
            }
        )
        return module.make_train(config), config, "baselines/MAPPO/mappo_rnn_smax.py"
    script = f"{args.alg}_rnn.py"
    module = _import_script(scripts / "QLearning" / script)
    with open(scripts / "QLearning" / "config" / "alg" / "ql_rnn_smax.yaml") as f:
        config = yaml.safe_load(f)
    config = {
        k: float(v) if isinstance(v, str) and k not in ("ENV_NAME", "MAP_NAME") else v
        for k, v in config.items()
    }
    config.update(
        {
            "TOTAL_TIMESTEPS": args.steps,
            "MAP_NAME": args.scenario,
            "SEED": 0,
            "NUM_SEEDS": 1,
            "TEST_DURING_TRAINING": True,
            "WANDB_MODE": "online",  # the stub: the per-update callback must run
            **overrides,
        }
    )
    for key in _Q_INT_KEYS:
        config[key] = int(config[key])
    env, _ = module.env_from_config(copy.deepcopy(config))  # it writes a Scenario into its arg
    return module.make_train(config, _EpisodeEnds(env)), config, f"baselines/QLearning/{script}"


def run_jaxmarl(args) -> dict:
    logged: list[dict] = []

    def log(metric, *unused, **unused_kw):
        logged.append({k: float(v) for k, v in metric.items()})

    sys.modules["wandb"] = types.SimpleNamespace(log=log, init=lambda *a, **k: None)
    import jax

    import jaxmarl

    train, config, script = _peer_train(args)
    steps_per_update = config["NUM_ENVS"] * config["NUM_STEPS"]
    if args.steps % steps_per_update:
        raise SystemExit(f"--steps must be a multiple of {steps_per_update} for JaxMARL's script")
    num_updates = config["NUM_UPDATES"]
    q_learning = args.alg in Q_ALGS
    test_every = int(num_updates * config["TEST_INTERVAL"]) if q_learning else 0
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    keys = [jax.random.PRNGKey(seed) for seed in seeds]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    compiled = jax.jit(train).lower(keys[0]).compile()
    compile_s, compile_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    curves, returns, raw_steps, walls, cpus, evals = [], [], [], [], [], []
    script_curves, script_returns = [], []  # Q scripts: their own lagging metric
    for seed, key in zip(seeds, keys, strict=True):
        logged.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(key))
        jax.effects_barrier()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        if q_learning:  # per-update dicts of the script's own metric names
            rows = sorted(logged, key=lambda m: m["update_steps"])
            win, ret, step = "returned_won_episode", "returned_episode_returns", "env_step"
            for m in rows:  # its greedy test runs at updates divisible by test_every
                if test_every and int(m["update_steps"]) % test_every == 0:
                    evals.append(
                        {
                            "seed": seed,
                            "update": int(m["update_steps"]),
                            "env_steps": int(m["update_steps"]) * steps_per_update,
                            "eval_won": m["test_returned_won_episode"],
                            "eval_episode_return": m["test_returned_episode_returns"],
                        }
                    )
        else:
            rows = sorted(logged, key=lambda m: m["env_step"])
            win, ret, step = "win_rate", "returns", "env_step"
        if len(rows) != num_updates:
            raise RuntimeError(f"expected {num_updates} logged updates, got {len(rows)}")
        if q_learning:
            script_curves.append([m[win] for m in rows])
            script_returns.append([m[ret] for m in rows])
            curves.append(_per_episode(rows, "episode_end_won"))
            returns.append(_per_episode(rows, "episode_end_return"))
        else:
            curves.append([m[win] for m in rows])
            returns.append([m[ret] for m in rows])
        raw_steps.append([m[step] for m in rows])
        print(
            f"seed {seed}: final win rate {_final(curves[-1]):.3f}, {walls[-1]:.0f} s",
            flush=True,
        )
    total_steps = num_updates * steps_per_update
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    last_eval = max((e["update"] for e in evals), default=None)
    return {
        "side": "jaxmarl",
        "alg": args.alg,
        "library": f"jaxmarl {getattr(jaxmarl, '__version__', '0.2.0')} (PyPI) + {script}",
        "jax": jax.__version__,
        "scenario": args.scenario,
        "config": {k: v for k, v in config.items() if not callable(v)},
        "config_overrides": args.peer_override,
        "seeds": args.seeds,
        "first_seed": args.first_seed,
        "seed_keys": f"PRNGKey({seeds[0]}..{seeds[-1]}), one after another",
        "num_updates": num_updates,
        "env_steps_per_seed": total_steps,
        "env_steps": [(u + 1) * steps_per_update for u in range(num_updates)],
        "logged_env_step": raw_steps[0],
        "win_rate": curves,
        "episode_return": returns,
        "final_win_rate": [_final(c) for c in curves],
        **(
            {"win_rate_script": script_curves, "episode_return_script": script_returns}
            if q_learning
            else {}
        ),
        "eval": evals,
        "final_eval_win_rate": [e["eval_won"] for e in evals if e["update"] == last_eval],
        "compile_s": compile_s,
        "compile_cpu_s": compile_cpu,
        "train_wall_s": sum(walls),
        "train_cpu_s": sum(cpus),
        "train_wall_s_per_seed": walls,
        "train_cpu_s_per_seed": cpus,
        "total_wall_s": wall,
        "total_cpu_s": cpu,
        "env_steps_per_s_wall": total_steps * args.seeds / sum(walls),
        "env_steps_per_cpu_s": total_steps * args.seeds / sum(cpus),
    }


def _stats(values) -> str:
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return "n/a"
    mean = sum(values) / len(values)
    return f"{mean:.2f} [{min(values):.2f}, {max(values):.2f}]"


def _label(res: dict) -> str:
    """``ours`` or ``JaxMARL 0.2.0``, plus the overrides that set this run apart (if any)."""
    side = "ours" if res["side"] == "ours" else "JaxMARL 0.2.0"
    # run.* settings (length, chunking, evaluation) are the same on both sides or change no
    # learning; the rest (network width, bootstrap_truncation, ...) tell runs apart.
    changes = [o for o in res.get("config_overrides") or () if not o.startswith("run.")]
    return f"{side} ({', '.join(changes)})" if changes else side


def _plot(results: list[dict], scenario: str, alg: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (ax, ax_ret) = plt.subplots(1, 2, figsize=(12, 4.4))
    # Training curves and greedy evaluations of one run share a hue (dark: evaluations).
    palette = [("tab:blue", "navy"), ("tab:orange", "darkred"), ("tab:green", "darkgreen")]
    palette += [("tab:purple", "indigo"), ("tab:olive", "darkolivegreen")]
    for index, res in enumerate(results):
        steps = np.asarray(res["env_steps"])
        label = f"{_label(res)}, {res['seeds']} seeds"
        colour, eval_colour = palette[index % len(palette)]
        for axis, key in ((ax, "win_rate"), (ax_ret, "episode_return")):
            curves = np.asarray(res[key], dtype=float)
            axis.plot(steps, np.nanmean(curves, 0), color=colour, label=f"{label} (train)")
            low, high = np.nanmin(curves, 0), np.nanmax(curves, 0)
            axis.fill_between(steps, low, high, color=colour, alpha=0.2)
        if res.get("eval"):
            by_step: dict[int, list[float]] = {}
            for e in res["eval"]:
                by_step.setdefault(e["env_steps"], []).append(e["eval_won"])
            xs = sorted(by_step)
            ys = [np.mean(by_step[x]) for x in xs]
            lo = [np.min(by_step[x]) for x in xs]
            hi = [np.max(by_step[x]) for x in xs]
            yerr = [np.subtract(ys, lo), np.subtract(hi, ys)]
            ax.errorbar(
                xs, ys, yerr=yerr, fmt="o", color=eval_colour, ms=4, capsize=3,
                label=f"{label} (greedy eval)",
            )  # fmt: skip
    ax.axhline(0.9, color="grey", lw=0.8, ls=":")
    ax.set(xlabel="env steps (per seed)", ylabel="win rate", ylim=(-0.02, 1.02))
    ax_ret.set(xlabel="env steps (per seed)", ylabel="training episode return (per agent)")
    for axis in (ax, ax_ret):
        axis.grid(alpha=0.3)
    # One legend under both panels: labels carry overrides and would cover the curves.
    handles, labels = ax.get_legend_handles_labels()
    columns = 2 if max(map(len, labels)) <= 75 else 1
    fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize=8, frameon=False)
    name = "MAPPO-RNN" if alg == "mappo" else f"{alg.upper()}-RNN"
    fig.suptitle(f"SMAX {scenario} vs heuristic enemy, {name}: mean over seeds, band min/max")
    rows = -(-len(labels) // columns)
    fig.tight_layout(rect=(0, 0.045 * rows + 0.02, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# Per-seed lists that a run split over processes (--first-seed) concatenates, and totals it sums.
_PER_SEED = (
    "win_rate",
    "episode_return",
    "final_win_rate",
    "win_rate_script",
    "episode_return_script",
    "final_eval_win_rate",
    "eval",
    "train_wall_s_per_seed",
    "train_cpu_s_per_seed",
)
_SUMMED = ("seeds", "train_wall_s", "train_cpu_s")


def _seed_ids(res: dict) -> set:
    """The seeds a result holds: JaxMARL's ``PRNGKey`` numbers, or for ours (key, index) pairs
    of ``split(key(seed), seeds)``."""
    if res["side"] == "jaxmarl":
        first = res.get("first_seed", 0)
        return set(range(first, first + res["seeds"]))
    return {(res.get("seed", 0), i) for i in range(res["seeds"])}


def _join_seed_parts(results: list[dict]) -> list[dict]:
    """One result per (side, scenario, alg, env steps, overrides): runs whose seeds were split
    over processes become one run whose throughput counts each part's own training time, as if
    the parts had run one after another. JaxMARL's parts differ by ``--first-seed`` (e.g. so
    that each fits one GPU call's time limit), ours by ``--seed`` (the key the part's vmapped
    seeds are split from). Parts whose seeds overlap are refused (the same seed twice is not
    two seeds); two parts of ours from one key overlap, as ``split(key, n)`` begins with
    ``split(key, m)`` for m < n."""
    joined: dict[tuple, dict] = {}
    seeds_of: dict[tuple, set] = {}  # JaxMARL: PRNGKey numbers; ours: (key, index)
    for res in sorted(results, key=lambda r: r.get("first_seed", r.get("seed", 0))):
        overrides = tuple(res.get("config_overrides") or ())
        key = (res["side"], res["scenario"], res.get("alg", "mappo"), res["env_steps_per_seed"])
        key += (overrides,)
        part_seeds = _seed_ids(res)
        if key not in joined:
            joined[key] = {**res, **{k: list(res.get(k, [])) for k in _PER_SEED}}
            seeds_of[key] = part_seeds
            continue
        if seeds_of[key] & part_seeds:
            which, flag = (
                ("JaxMARL", "--first-seed") if res["side"] == "jaxmarl" else ("our", "--seed")
            )
            shared = sorted(seeds_of[key] & part_seeds)
            raise SystemExit(
                f"two {which} runs for {key} share seeds {shared}: "
                f"compare one of them at a time, or give the parts distinct {flag}"
            )
        seeds_of[key] |= part_seeds
        whole = joined[key]
        if res["side"] == "ours":  # its evaluations number the seeds from 0 in every part
            res = {
                **res,
                "eval": [{**e, "seed": e["seed"] + whole["seeds"]} for e in res.get("eval", [])],
            }
        for k in _PER_SEED:
            whole[k] += res.get(k, [])
        for k in _SUMMED:
            whole[k] += res[k]
        whole["compile_s"] = max(whole["compile_s"], res["compile_s"])
        whole["compile_cpu_s"] = max(whole["compile_cpu_s"], res["compile_cpu_s"])
        whole["seed_keys"] += f"; {res['seed_keys']}"
    for whole in joined.values():
        steps = whole["env_steps_per_seed"] * whole["seeds"]
        whole["env_steps_per_s_wall"] = steps / whole["train_wall_s"]
        whole["env_steps_per_cpu_s"] = steps / whole["train_cpu_s"]
    return list(joined.values())


def compare(args) -> None:
    results = _join_seed_parts([json.loads(Path(p).read_text()) for p in args.jsons])
    lines = [
        "| scenario | alg | side | seeds x env steps | final train win rate, mean [min, max] | "
        "final greedy eval win rate | compile s (wall / CPU) | train s (wall / CPU) | "
        "env steps/s (wall) | env steps per CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = {"ours": 0, "jaxmarl": 1}
    for res in results:  # result files written before --alg were MAPPO
        res.setdefault("alg", "mappo")
    results.sort(
        key=lambda r: (SCENARIOS.index(r["scenario"]), ALGS.index(r["alg"]), order[r["side"]])
    )
    for res in results:
        side = _label(res)
        per_seed = ", ".join(f"{v:.2f}" for v in res["final_win_rate"])
        evals = res.get("final_eval_win_rate")
        eval_cell = f"{_stats(evals)} ({', '.join(f'{v:.2f}' for v in evals)})" if evals else "-"
        lines.append(
            f"| {res['scenario']} | {res['alg']} | {side} | "
            f"{res['seeds']} x {res['env_steps_per_seed']:,} | "
            f"{_stats(res['final_win_rate'])} ({per_seed}) | {eval_cell} | "
            f"{res['compile_s']:.0f} / {res['compile_cpu_s']:.0f} | "
            f"{res['train_wall_s']:.0f} / {res['train_cpu_s']:.0f} | "
            f"{res['env_steps_per_s_wall']:,.0f} | {res['env_steps_per_cpu_s']:,.0f} |"
        )
    table = "\n".join(lines) + "\n"
    if args.md:
        Path(args.md).write_text(table)
    print(table)
    if args.png_prefix:
        for scenario in SCENARIOS:
            for alg in ALGS:
                group = [r for r in results if (r["scenario"], r["alg"]) == (scenario, alg)]
                if group:
                    path = Path(f"{args.png_prefix}-{scenario}-{alg}-winrate.png")
                    _plot(group, scenario, alg, path)
                    print(f"wrote {path}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "compare":
        parser = argparse.ArgumentParser(description="table and plots from the JSONs")
        parser.add_argument("jsons", nargs="+")
        parser.add_argument("--md", help="write the Markdown table here")
        parser.add_argument("--png-prefix", help="write PREFIX-<scenario>-<alg>-winrate.png")
        compare(parser.parse_args(sys.argv[2:]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("ours", "jaxmarl"), required=True)
    parser.add_argument("--alg", choices=ALGS, default="mappo")
    parser.add_argument("--scenario", choices=SCENARIOS, default="3m")
    parser.add_argument("--steps", type=int, required=True, help="env steps per seed")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", required=True, help="result JSON")
    parser.add_argument("--run-dir", help="ours: run directory (kept)")
    parser.add_argument("--eval-every", type=int, default=0, help="ours: eval every K chunks")
    parser.add_argument(
        "--devices", type=int, default=1, help="ours: split the seeds over this many host devices"
    )
    parser.add_argument("--peer-scripts", default="/tmp/peer_scripts")
    parser.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="JaxMARL: first seed (PRNGKey(first..first+seeds-1)); compare joins the parts",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="ours: seed keys split(key(SEED), seeds), for more seeds than one run holds",
    )
    parser.add_argument("--note", default="", help="recorded in the JSON (how the run was made)")
    parser.add_argument(
        "--ours-preset",
        help="ours: preset of configs/<alg> (default HeuristicEnemySMAX_<scenario>; e.g. "
        "HeuristicEnemySMAX_3m_cpu, the 64-wide CPU preset)",
    )
    parser.add_argument(
        "--ours-override", action="append", default=[], help="ours: KEY=VALUE config override"
    )
    parser.add_argument(
        "--peer-override", action="append", default=[], help="JaxMARL: KEY=VALUE config entry"
    )
    args = parser.parse_args()
    machine = _machine()
    result = run_ours(args) if args.side == "ours" else run_jaxmarl(args)
    result["machine"] = machine
    result["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    result["command"] = " ".join([sys.executable, *sys.argv])
    result["note"] = args.note
    import jax  # imported by either run already

    result["jax_devices"] = [d.device_kind for d in jax.devices()]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"{args.side} {args.alg} {args.scenario}: "
        f"final train win rate {_stats(result['final_win_rate'])}, "
        f"compile {result['compile_s']:.0f} s, train {result['train_wall_s']:.0f} s wall / "
        f"{result['train_cpu_s']:.0f} s CPU -> {args.out}"
    )


if __name__ == "__main__":
    main()
