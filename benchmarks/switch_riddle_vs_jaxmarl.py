"""IPPO on the switch riddle (3 agents), ours against JaxMARL 0.2.0's ``ippo_ff_switch_riddle``.

Both sides train for the same env steps and seeds, one side at a time, and record per seed and
update the mean return of the episodes that ended during the update's rollout (the training
curve), then play ``--eval-episodes`` greedy episodes with the final parameters.

* ``--side ours`` (our venv): ``python -m jaxmarl.train alg=ippo preset=<--ours-preset>`` with
  ``run.num_seeds`` seeds vmapped in one program (keys ``split(key(seed), seeds)``); the curve
  is ``episode_return`` of ``metrics.jsonl``, the greedy return is the final ``eval.jsonl``.
* ``--side jaxmarl`` (JaxMARL's venv, isolated: ``/tmp/peer/bin/python -I``): imports
  ``IPPO/ippo_ff_switch_riddle.py`` with ``IPPO/config/ippo_ff_switch_riddle.yaml`` from
  ``--peer-scripts`` (copies of the public FLAIROx/JaxMARL files, kept outside this repository;
  this file embeds none of their code) and calls its ``make_train(config)`` under ``jax.jit``
  as its ``main`` does, once per seed (``PRNGKey(first_seed + i)``). Only ``TOTAL_TIMESTEPS``
  changes. The script counts agent steps: ``NUM_UPDATES = TOTAL_TIMESTEPS // NUM_STEPS //
  (NUM_ENVS * num_agents)``, so its published 1e6 is 40 updates of 64 x 128 = 327,680 env
  steps; ``--steps`` here is env steps and is converted (x 3). Its curve is read from the
  LogWrapper infos it returns (``returned_episode``, ``returned_episode_returns``, per step
  and actor): the mean return of the episodes that ended in the update, as ours; the script's
  own logged value (the mean over every step and actor of the last finished episode's return,
  a lagging value) is kept as ``script_curve``. Its final parameters are evaluated greedily
  (argmax of its actor) in JaxMARL's env, first episode of each of ``--eval-episodes`` envs.
  hydra, omegaconf and wandb are stubbed (used only by the script's ``main``); if the peer venv
  lacks ``distrax`` (``/tmp/peer`` does), ``--extra-path DIR`` puts a folder holding it first on
  ``sys.path`` (``pip install --target DIR --no-deps distrax tfp-nightly decorator gast
  dm-tree``).

``compare A.json B.json ... --md OUT.md --png OUT.png`` prints the table and draws the curves
(mean over seeds, min-max band). The switch riddle's reference value is the optimal protocol's
exact expected return for 3 agents, 540/729 (``benchmarks/switch_riddle_protocol.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NUM_AGENTS = 3
PER_UPDATE = 64 * 128  # env steps per update on both sides
OPTIMUM = 540 / 729  # the optimal protocol (benchmarks/switch_riddle_protocol.py)


def _stub_module(name: str, **attrs) -> None:
    import types

    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def run_jaxmarl(args) -> dict:
    if args.extra_path:
        sys.path.insert(0, args.extra_path)
    import types

    _stub_module("wandb", log=lambda *a, **k: None, init=lambda *a, **k: None)
    _stub_module("hydra", main=lambda *a, **k: lambda f: f)
    _stub_module("omegaconf", OmegaConf=types.SimpleNamespace(to_container=lambda c: c))
    import importlib.util

    import jax
    import jax.numpy as jnp
    import numpy as np
    import yaml

    scripts = Path(args.peer_scripts)
    spec = importlib.util.spec_from_file_location(
        "jaxmarl_peer_ippo_switch", scripts / "IPPO/ippo_ff_switch_riddle.py"
    )
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    config = yaml.safe_load((scripts / "IPPO/config/ippo_ff_switch_riddle.yaml").read_text())
    for k, v in config.items():  # OmegaConf reads "2.5e-4" as a float, PyYAML as a string
        if isinstance(v, str):
            try:
                config[k] = float(v)
            except ValueError:
                pass
    config["TOTAL_TIMESTEPS"] = args.steps * NUM_AGENTS
    train = jax.jit(peer.make_train(config))
    num_updates = config["NUM_UPDATES"]
    keys = [jax.random.PRNGKey(args.first_seed + i) for i in range(args.seeds)]
    t0 = time.perf_counter()
    compiled = train.lower(keys[0]).compile()
    compile_s = time.perf_counter() - t0
    env = peer.LogWrapper(peer.jaxmarl.make(config["ENV_NAME"], **config["ENV_KWARGS"]))
    network = peer.ActorCritic(env.action_space(env.agents[0]).n, activation=config["ACTIVATION"])

    @jax.jit
    def greedy(params, key):
        """Mean first-episode return of ``eval_episodes`` envs under the argmax policy, and
        the share of them that end in a correct tell (the only way to a positive return)."""
        reset_key, key = jax.random.split(key)
        obs, state = jax.vmap(env.reset)(jax.random.split(reset_key, args.eval_episodes))

        def body(carry, step_key):
            obs, state, total, alive = carry
            obs_batch = jnp.stack([obs[a] for a in env.agents])  # [A, E, obs]
            pi, _ = network.apply(params, obs_batch)
            actions = {a: pi.mode()[i] for i, a in enumerate(env.agents)}
            keys = jax.random.split(step_key, args.eval_episodes)
            obs, state, reward, done, _ = jax.vmap(env.step)(keys, state, actions)
            total = total + jnp.where(alive, reward[env.agents[0]], 0.0)
            return (obs, state, total, alive & ~done["__all__"]), None

        zeros = jnp.zeros(args.eval_episodes)
        carry = (obs, state, zeros, jnp.ones(args.eval_episodes, bool))
        (_, _, total, _), _ = jax.lax.scan(body, carry, jax.random.split(key, 4 * NUM_AGENTS))
        return total.mean(), (total > 0).mean()

    curves, script_curves, finals, successes, train_s = [], [], [], [], 0.0
    for key in keys:
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(key))
        train_s += time.perf_counter() - t0
        info = out["metrics"]  # [U, T, actors]
        ended = np.asarray(info["returned_episode"], dtype=np.float64)
        returns = np.asarray(info["returned_episode_returns"], dtype=np.float64)
        per_update = (returns * ended).sum(axis=(1, 2)) / np.maximum(ended.sum(axis=(1, 2)), 1)
        curves.append(per_update.tolist())
        script_curves.append(returns.mean(axis=(1, 2)).tolist())
        params = out["runner_state"][0].params
        greedy_return, success = greedy(params, jax.random.PRNGKey(10_000 + len(finals)))
        finals.append(float(greedy_return))
        successes.append(float(success))
    env_steps = num_updates * config["NUM_ENVS"] * config["NUM_STEPS"]
    return {
        "side": "jaxmarl",
        "label": "JaxMARL 0.2.0 ippo_ff_switch_riddle",
        "jax": jax.__version__,
        "seeds": args.seeds,
        "seed_keys": f"PRNGKey({args.first_seed}..{args.first_seed + args.seeds - 1})",
        "total_timesteps_config": config["TOTAL_TIMESTEPS"],
        "num_updates": num_updates,
        "env_steps_per_seed": env_steps,
        "env_steps": [(u + 1) * PER_UPDATE for u in range(num_updates)],
        "curve": curves,
        "script_curve": script_curves,
        "greedy_return": finals,
        "greedy_success": successes,
        "eval_episodes": args.eval_episodes,
        "compile_s": compile_s,
        "train_wall_s": train_s,
        "env_steps_per_s_wall": env_steps * args.seeds / train_s,
    }


def run_ours(args) -> dict:
    name = args.run_name or f"ours_{args.ours_preset}"
    out_dir = Path(args.run_root)
    run_dir = out_dir / name
    cmd = [
        sys.executable,
        "-P",  # an installed jaxmarl, not the source folder of the working directory
        "-m",
        "jaxmarl.train",
        "alg=ippo",
        f"preset={args.ours_preset}",
        f"run.total_timesteps={args.steps}",
        f"run.num_seeds={args.seeds}",
        f"run.seed={args.first_seed}",
        f"run.eval_episodes={args.eval_episodes}",
        "run.checkpoint_every=0",
        f"run.out_dir={out_dir}",
        f"run.name={name}",
        "run.gif=false",
        *args.ours_override,
        "--no-progress",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"ours failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return read_ours(run_dir, args, cmd, wall)


def read_ours(run_dir: Path, args, cmd: list[str], wall: float | None) -> dict:
    """The result dict of a finished run directory of ours (``--side ours --reread`` calls
    it on a run whose driver stopped after training)."""
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x]
    seeds = sorted({r["seed"] for r in rows})
    updates = sorted({r["update"] for r in rows})
    value = {(r["seed"], r["update"]): r["episode_return"] for r in rows}
    steps = {r["update"]: r["env_steps"] for r in rows}
    evals = [json.loads(x) for x in (run_dir / "eval.jsonl").read_text().splitlines() if x]
    last = max(e["update"] for e in evals)
    summary = {}
    for line in (run_dir / "summary.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2:
            summary[cells[0]] = cells[1]
    # "training env steps/s (all seeds)", since a later version "(all seeds and points)"
    speed_key = next(k for k in summary if k.startswith("training env steps/s"))
    return {
        "side": "ours",
        "label": args.label or f"ours, preset {args.ours_preset}",
        "cmd": " ".join(cmd[1:]) if cmd else "",
        "run_dir": str(run_dir),
        "seeds": args.seeds,
        "seed_keys": f"split(key({args.first_seed}), {args.seeds}), vmapped",
        "env_steps_per_seed": steps[updates[-1]],
        "env_steps": [steps[u] for u in updates],
        "curve": [[value[s, u] for u in updates] for s in seeds],
        "greedy_return": [
            e["eval_episode_return"]
            for e in sorted(evals, key=lambda e: e["seed"])
            if e["update"] == last
        ],
        # the env's success info (a correct tell), logged since 2904569
        "greedy_success": [
            e["eval_success"]
            for e in sorted(evals, key=lambda e: e["seed"])
            if e["update"] == last and "eval_success" in e
        ],
        "eval_episodes": args.eval_episodes,
        "compile_s": float(summary["compile (s)"]),
        "env_steps_per_s_wall": float(summary[speed_key].replace(",", "")),
        "total_wall_s": wall,
    }


def _stats(values) -> str:
    values = [float(v) for v in values]
    if not values:
        return "—"
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.3f} ± {std:.3f}"


def _at(result: dict, env_steps: int) -> list[float]:
    """Per-seed mean training return over the last 5 updates up to ``env_steps``."""
    upto = [i for i, s in enumerate(result["env_steps"]) if s <= env_steps]
    window = upto[-5:]
    return [statistics.fmean(curve[i] for i in window) for curve in result["curve"]]


def compare(args) -> None:
    results = [json.loads(Path(p).read_text()) for p in args.results]
    marks = sorted({r["env_steps_per_seed"] for r in results} | {40 * PER_UPDATE})
    head = "| side | seeds | env steps / seed | greedy return (final) | greedy per seed | "
    head += "greedy success rate (final) | "
    head += " | ".join(f"train return at {m:,}" for m in marks)
    head += " | env steps/s (wall, all seeds) | compile s |"
    lines = [head, "|" + "---|" * (8 + len(marks))]
    for r in results:
        cells = [
            r["label"],
            str(r["seeds"]),
            f"{r['env_steps_per_seed']:,}",
            _stats(r["greedy_return"]),
            ", ".join(f"{v:.3f}" for v in r["greedy_return"]) or "—",
            _stats(r.get("greedy_success", [])),
        ]
        cells += [_stats(_at(r, m)) if m <= r["env_steps_per_seed"] else "—" for m in marks]
        if "env_steps_per_s_wall" in r:
            cells += [f"{r['env_steps_per_s_wall']:,.0f}", f"{r['compile_s']:.1f}"]
        else:  # a run stopped early: its curve only
            cells += ["—", "—"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        f"\nOptimal protocol's exact expected return and success rate (3 agents): 540/729 ="
        f" {OPTIMUM:.4f}. Success rate: the share of greedy episodes that end in a correct tell"
        " (— where the run predates the measure)."
        " Train return: mean over seeds (± std) of each seed's mean over the last 5 updates up"
        " to that point."
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        Path(args.md).write_text(text)
    if args.png:
        from jaxmarl.training.host.plotting import plot_curves

        series = {r["label"]: (r["env_steps"], r["curve"]) for r in results}
        plot_curves(
            series,
            args.png,
            xlabel="env steps per seed",
            ylabel="train episode return",
            title="IPPO on switch_riddle (3 agents): mean of seeds, min-max band",
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    cmp_parser = sub.add_parser("compare")
    cmp_parser.add_argument("results", nargs="+")
    cmp_parser.add_argument("--md")
    cmp_parser.add_argument("--png")
    parser.add_argument("--side", choices=("ours", "jaxmarl"))
    parser.add_argument("--steps", type=int, default=122 * PER_UPDATE, help="env steps per seed")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=1024)
    parser.add_argument("--out", help="result JSON")
    parser.add_argument("--peer-scripts", default="/tmp/peer_scripts")
    parser.add_argument("--extra-path", default="", help="folder put first on sys.path (peer)")
    parser.add_argument("--ours-preset", default="switch_riddle")
    parser.add_argument("--ours-override", action="append", default=[])
    parser.add_argument("--label", default="")
    parser.add_argument("--run-root", default=str(REPO / "runs" / "switch_riddle_vs_jaxmarl"))
    parser.add_argument("--run-name", default="")
    parser.add_argument(
        "--reread", action="store_true", help="ours: only read an existing run directory"
    )
    args = parser.parse_args(argv)
    if args.command == "compare":
        compare(args)
        return
    if not args.side or not args.out:
        parser.error("give --side and --out (or the compare command)")
    if args.reread:
        run_dir = Path(args.run_root) / (args.run_name or f"ours_{args.ours_preset}")
        result = read_ours(run_dir, args, [], None)
    else:
        result = run_jaxmarl(args) if args.side == "jaxmarl" else run_ours(args)
    result["load_after"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if "curve" not in k and k != "env_steps"}))


if __name__ == "__main__":
    main()
