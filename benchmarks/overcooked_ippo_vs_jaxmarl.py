"""IPPO on Overcooked: our ``jaxmarl.train`` against JaxMARL 0.2.0's own baseline scripts.

Two workloads, each layout run back to back on the same machine (ours, then JaxMARL's):

* ``v1`` (the five overcooked-ai layouts): ``python -m jaxmarl.train alg=ippo preset=overcooked
  env.env_kwargs.layout=<layout>`` (``configs/ippo/overcooked.yaml``, JaxMARL's
  ``ippo_ff_overcooked.yaml``) against JaxMARL's ``baselines/IPPO/ippo_ff_overcooked.py`` with
  ``baselines/IPPO/config/ippo_ff_overcooked.yaml``, its ``ENV_KWARGS.layout`` set to the
  layout (the script's ``main`` turns the name into ``overcooked_layouts[name]``, JaxMARL's
  layout dict; the runner does the same). The published YAML trains coord_ring; the other
  layouts keep every other setting.
* ``v2``: ``alg=ippo preset=overcooked_v2_rnn env.env_kwargs.layout=<layout>``
  (``configs/ippo/overcooked_v2_rnn.yaml``) against ``ippo_rnn_overcooked_v2.py`` with
  ``ippo_rnn_overcooked_v2.yaml`` and the same layout.

The peer side is ``benchmarks/ppo_vs_jaxmarl.py``'s runner (its module docstring: how the
scripts are fetched, stubbed and timed; this file embeds none of JaxMARL's code), with the
script folder laid out as ``PEER_SCRIPTS/IPPO/<script>.py`` and ``PEER_SCRIPTS/IPPO/config/
<config>.yaml``. Only ``TOTAL_TIMESTEPS``, ``NUM_SEEDS`` and the layout are overridden. Both
sides floor the total to whole updates; both vmap their seeds in one program. ``/tmp/peer``
lacks ``distrax``: ``--extra-path DIR`` puts a folder holding it first on the peer's
``sys.path`` (``pip install --target DIR --no-deps distrax tfp-nightly decorator gast
dm-tree``).

JaxMARL's networks draw flax's orthogonal init, which on CPU jaxlib 0.10.2 runs batched LAPACK
QR kernels on the program's own thread pool; vmapped over seeds, two of them can block both
threads of a 2-core machine's pool for good (the hang ``jaxmarl/networks/init.py`` describes;
all threads wait on a futex and the run never ends). So the peer process alone gets a pool of
``--peer-pool-threads`` threads (``PJRT_NPROC``; more than its concurrent QR calls), which
leaves its program unchanged; ours keeps the default pool.

Seeds: each side splits one root key into ``--seeds`` keys (``split(PRNGKey(root), n)``, whose
first keys do not depend on ``n``), so more seeds for a finished run come from another root,
``--seed S`` (ours ``run.seed=S``, JaxMARL's ``SEED`` replaced by S), in another ``--out-dir``;
``--report-only --pool DIR ...`` then reports each layout and side over the seeds of all.

Returns
-------
Every soup served gives both agents 20, so a per-agent return is the team's (one soup = 20).
JaxMARL's ``LogWrapper`` logs per-agent raw returns; its script logs, per update, the mean over
every rollout step and agent of the most recently finished episode's return (a lagging
value; 0 before the first episode ends). Ours logs the mean return of the episodes that ended
during the update. Overcooked episodes all last 400 steps, so both read the same episodes
within one update. "Final" is, per seed, ours: the last update in which episodes ended;
JaxMARL: the last update's logged value. Both are the sparse (delivery) return; the shaped
reward is only trained on. Ours also plays 64 greedy episodes with the final parameters.

Usage::

    python benchmarks/overcooked_ippo_vs_jaxmarl.py --layouts cramped_room --steps 4999168
    python benchmarks/overcooked_ippo_vs_jaxmarl.py --report-only \\
        --md benchmarks/results/overcooked_ippo_vs_jaxmarl.md \\
        --png benchmarks/results/overcooked_ippo_vs_jaxmarl.png
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppo_vs_jaxmarl import (  # noqa: E402
    ALGS,
    _mean_std,
    load_results,
    machine_load,
    pool_sides,
    pooled_curve,
    run_ours,
    run_peer,
    seed_iqm,
)

REPO = Path(__file__).resolve().parents[1]
V1_LAYOUTS = ("cramped_room", "asymm_advantages", "coord_ring", "forced_coord", "counter_circuit")
WORKLOADS = {
    "v1": {
        "preset": "overcooked",
        "script": "IPPO/ippo_ff_overcooked.py",
        "config": "IPPO/config/ippo_ff_overcooked.yaml",
        "default_steps": 4_999_168,  # JaxMARL's 5e6 floored to updates of 16 x 128
        "per_update": 16 * 128,
        "updates_per_chunk": 61,
        "label": "IPPO-FF (16 envs x 128 steps, 64-64 tanh)",
    },
    "v2": {
        "preset": "overcooked_v2_rnn",
        "script": "IPPO/ippo_rnn_overcooked_v2.py",
        "config": "IPPO/config/ippo_rnn_overcooked_v2.yaml",
        "default_steps": 29_949_952,  # JaxMARL's 3e7 floored to updates of 256 x 256
        "per_update": 256 * 256,
        "updates_per_chunk": 8,
        "label": "IPPO-RNN (256 envs x 256 steps, CNN + GRU 128)",
    },
}


def register(workload: str, layout: str) -> str:
    """An entry of ``ppo_vs_jaxmarl.ALGS`` for one layout, so its runners can run it."""
    spec = WORKLOADS[workload]
    key = f"ippo_{workload}_{layout}"
    ALGS[key] = {
        "ours": ["alg=ippo", f"preset={spec['preset']}", f"env.env_kwargs.layout={layout}"],
        "script": spec["script"],
        "config": spec["config"],
        "default_steps": spec["default_steps"],
        "per_update": spec["per_update"],
        "updates_per_chunk": spec["updates_per_chunk"],
        "label": spec["label"],
        "log_scale": 1,  # LogWrapper: per-agent raw returns
    }
    return key


def peer_layout_overrides(script_config: Path, layout: str) -> dict:
    """The published YAML's ``ENV_KWARGS`` with ``layout`` replaced (the rest kept)."""
    import yaml

    env_kwargs = dict(yaml.safe_load(script_config.read_text()).get("ENV_KWARGS") or {})
    env_kwargs["layout"] = layout
    return {"ENV_KWARGS": env_kwargs}


def ours_curve(run_dir: Path) -> tuple[list[int], list[list[float]]]:
    """``(env steps, return per seed and update)`` over the updates in which episodes ended."""
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x]
    rows = [r for r in rows if r.get("episodes", 1) > 0]
    seeds = sorted({r["seed"] for r in rows})
    updates = sorted({r["update"] for r in rows})
    value = {(r["seed"], r["update"]): r["episode_return"] for r in rows}
    steps = {r["update"]: r["env_steps"] for r in rows}
    return [steps[u] for u in updates], [[value[s, u] for u in updates] for s in seeds]


def peer_curve(r: dict) -> tuple[list[float], list[list[float]]]:
    curves = [[v / r["log_scale"] for v in c] for c in r["logged_curve"]]
    every = r["env_steps_per_seed"] / len(curves[0])
    return [every * (u + 1) for u in range(len(curves[0]))], curves


def run_layout(args, workload: str, layout: str, results: dict, store: Path) -> None:
    key = register(workload, layout)
    for side in args.sides.split(","):
        print(
            f"[{dt.datetime.now(dt.timezone.utc):%H:%M:%S}] {key} {side}: {args.steps:,} steps "
            f"x {args.seeds} seeds, load {machine_load()}",
            flush=True,
        )
        if side == "jaxmarl":
            options = {
                "overrides": peer_layout_overrides(args.peer_scripts / ALGS[key]["config"], layout),
                "vmap_seeds": True,
            }
            if args.extra_path:
                options["extra_path"] = args.extra_path
            if args.seed is not None:
                options["seed"] = args.seed
            os.environ["PJRT_NPROC"] = str(args.peer_pool_threads)  # the peer process only
            try:
                r = run_peer(
                    key, args.steps, args.seeds, args.peer_python, args.peer_scripts, options
                )
            finally:
                del os.environ["PJRT_NPROC"]
            r["pool_threads"] = args.peer_pool_threads
        else:
            extra = [f"run.gif={'true' if args.gif else 'false'}"]
            extra += [] if args.seed is None else [f"run.seed={args.seed}"]
            r = run_ours(key, args.steps, args.seeds, args.out_dir, extra)
            r["final_raw"] = [c[-1] for c in ours_curve(Path(r["run_dir"]))[1]]
        r["root_seed"] = args.seed  # None: ours run.seed's default, JaxMARL's YAML SEED
        r["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        results.setdefault(workload, {}).setdefault(layout, {})[side] = r
        store.write_text(json.dumps(results, indent=1))
        print(
            f"  -> {r['steps_per_s']:,.0f} env steps/s, compile {r['compile_s']:.1f}s, "
            f"wall {r['wall_s']:.0f}s, final {_mean_std(r['final_raw'])[0]:.2f}",
            flush=True,
        )


def _iqm(values: list[float]) -> str:
    iqm = seed_iqm(values)
    return "—" if iqm is None else f"{iqm:.1f}"


def _load(text: str | None) -> str:
    """The 1-minute figure of ``machine_load()``'s string (``"['11.48', '11.26', '7.73']"``)."""
    return text.split("'")[1] if text and "'" in text else "—"


def curve(r: dict) -> tuple[list[float], list[list[float]]]:
    """``(env steps per seed, return per seed and update)`` of one side's record; a pooled
    record's seeds are its parts' seeds in order (same workload, so the same update grid)."""
    return pooled_curve(r, _one_curve)


def _one_curve(r: dict) -> tuple[list[float], list[list[float]]]:
    return ours_curve(Path(r["run_dir"])) if r["side"] == "ours" else peer_curve(r)


def pool_results(results: dict, others: list[dict]) -> dict:
    """``results`` with each (workload, layout, side) that ``others`` also ran pooled."""
    out = json.loads(json.dumps(results))
    for other in others:
        for workload, layouts in other.items():
            for layout, sides in layouts.items():
                pool_sides(out.setdefault(workload, {}).setdefault(layout, {}), sides)
    return out


def last_tenth(r: dict) -> list[float]:
    """Per seed, the mean training return over the last 10% of env steps (less noisy than one
    update's value)."""
    x, ys = curve(r)
    keep = [i for i, steps in enumerate(x) if steps > 0.9 * r["env_steps_per_seed"]]
    return [sum(y[i] for i in keep) / len(keep) for y in ys]


def table(results: dict) -> str:
    out = []
    for workload, layouts in results.items():
        out.append(f"### {WORKLOADS[workload]['label']}\n")
        out.append(
            "| layout | side | env steps / seed | seeds | final return per seed | mean ± std "
            "| IQM | last 10% of steps, mean ± std | greedy eval (ours) "
            "| train env steps/s (all seeds) | compile s | wall s | 1-min load before, after |"
        )
        out.append("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for layout, sides in layouts.items():
            for side in ("ours", "jaxmarl"):
                r = sides.get(side)
                if not r:
                    continue
                m, s = _mean_std(r["final_raw"])
                per_seed = ", ".join(f"{v:.1f}" for v in r["final_raw"])
                greedy = "—"
                if r.get("greedy_raw"):
                    greedy = "{:.1f} ± {:.1f}".format(*_mean_std(r["greedy_raw"]))
                label = "ours" if side == "ours" else "JaxMARL 0.2.0"
                tail = "{:.1f} ± {:.1f}".format(*_mean_std(last_tenth(r)))
                out.append(
                    f"| {layout} | {label} | {r['env_steps_per_seed']:,} | {r['seeds']} "
                    f"| {per_seed} | {m:.1f} ± {s:.1f} | {_iqm(r['final_raw'])} | {tail} "
                    f"| {greedy} "
                    f"| {r['steps_per_s']:,.0f} | {r['compile_s']:.1f} | {r['wall_s']:.0f} "
                    f"| {_load(r.get('load_before'))}, {_load(r.get('load_after'))} |"
                )
        out.append("")
    return "\n".join(out) + "\n"


def plot(results: dict, path: Path) -> Path:
    """One panel per (workload, layout): each side's training return per agent against env
    steps, mean of seeds with a min-max band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = [(w, layout, s) for w, ls in results.items() for layout, s in ls.items()]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    for ax, (workload, layout, sides) in zip(axes[0], panels):
        for side, color in (("ours", "C0"), ("jaxmarl", "C1")):
            r = sides.get(side)
            if not r:
                continue
            x, ys = curve(r)
            ys = np.asarray(ys)
            label = "ours" if side == "ours" else "JaxMARL 0.2.0"
            ax.plot(x, ys.mean(0), color=color, label=label)
            ax.fill_between(x, ys.min(0), ys.max(0), color=color, alpha=0.2)
        seeds = sorted({r["seeds"] for r in sides.values()})
        ax.set_title(f"{layout} ({workload}), {'/'.join(map(str, seeds))} seeds a side")
        ax.set_xlabel("env steps per seed")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("train episode return per agent")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def sampled_episode_gif(run_dir: Path, path: Path, seed: int = 0, key: int = 0) -> float:
    """A GIF of one episode of a trained run's seed ``seed``, its actions *sampled* from the
    policy (the greedy argmax policy of an Overcooked IPPO agent often stands still, stuck
    facing a counter); returns the episode's per-agent return."""
    import dataclasses

    import jax
    import jax.numpy as jnp

    from jaxmarl.baselines.ppo import build_network
    from jaxmarl.evaluate import load_run
    from jaxmarl.render import save_episode_gif

    run = load_run(run_dir)
    learner = run.learner
    network = build_network(run.config, learner.env.batch)
    env = learner.env.unwrapped
    stepper = dataclasses.replace(learner.env, env=env)  # no episode statistics
    one = lambda tree: jax.tree.map(lambda x: x[None], tree)

    @jax.jit
    def episode(params, key):
        reset_key, key = jax.random.split(key)
        obs, state = env.reset(reset_key)

        def step(carry, key):
            state, obs, actor_carry, first = carry
            inputs = stepper.inputs(one(obs), one(state), first)  # [1, A, ...]: T=1, N=A
            agents = inputs.obs.shape[1]
            starts = jnp.broadcast_to(first[:, None], (1, agents))
            actor_carry, dist = network.policy(
                params, actor_carry, inputs.obs, starts, inputs.avail_actions
            )
            sample_key, env_key = jax.random.split(key)
            actions = stepper.batch.env_actions(dist.sample(seed=sample_key))
            obs, state, reward, _, _ = env.step_env(
                env_key, state, jax.tree.map(lambda x: x[0], actions)
            )
            reward = jnp.mean(jnp.stack([reward[a] for a in env.agents]))
            return (state, obs, actor_carry, jnp.zeros_like(first)), (state, reward)

        carry = (state, obs, learner.initial_carry(1)[0], jnp.ones((1,), jnp.bool_))
        _, (states, rewards) = jax.lax.scan(step, carry, jax.random.split(key, env.max_steps))
        states = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), state, states)
        return states, jnp.sum(rewards)

    states, total = episode(run.seed_params(seed), jax.random.PRNGKey(key))
    save_episode_gif(env, states, path)
    return float(total)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="v1")
    parser.add_argument("--layouts", default=",".join(V1_LAYOUTS))
    parser.add_argument("--steps", type=int, default=None, help="env steps per seed")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sides", default="ours,jaxmarl")
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="root seed of both sides (default: ours run.seed's default, JaxMARL's YAML SEED); "
        "another root gives more seeds to pool with a finished run",
    )
    parser.add_argument("--gif", action="store_true", help="ours writes a greedy episode GIF")
    parser.add_argument("--peer-python", default="/tmp/peer/bin/python")
    parser.add_argument("--peer-scripts", type=Path, default=Path("/tmp/peer_scripts"))
    parser.add_argument("--extra-path", default="", help="folder holding distrax for the peer")
    parser.add_argument(
        "--peer-pool-threads",
        type=int,
        default=8,
        help="XLA CPU thread pool of the peer process (PJRT_NPROC; see the module docstring)",
    )
    parser.add_argument(
        "--out-dir", type=Path, default=REPO / "runs" / "overcooked_ippo_vs_jaxmarl"
    )
    parser.add_argument(
        "--pool",
        type=Path,
        nargs="+",
        default=[],
        metavar="DIR",
        help="the report pools these out-dirs' runs (other --seed roots) with --out-dir's, "
        "seed by seed, per layout and side",
    )
    parser.add_argument("--md", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument(
        "--sampled-gif",
        nargs=2,
        type=Path,
        metavar=("RUN_DIR", "GIF"),
        help="only write a GIF of one sampled-action episode of a trained run (seed 0)",
    )
    args = parser.parse_args(argv)
    if args.sampled_gif:
        total = sampled_episode_gif(*args.sampled_gif)
        print(f"{args.sampled_gif[1]}: one episode, return per agent {total:.1f}")
        return 0
    if args.steps is None:
        args.steps = WORKLOADS[args.workload]["default_steps"]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    store = args.out_dir / "results.json"
    results = load_results(args.out_dir)
    if not args.report_only:
        for layout in args.layouts.split(","):
            run_layout(args, args.workload, layout, results, store)
    missing = [str(d) for d in args.pool if not (d / "results.json").exists()]
    if missing:
        parser.error(f"--pool: no results.json in {', '.join(missing)} (pass --out-dir folders)")
    others = [load_results(d) for d in args.pool]
    try:
        report = pool_results(results, others)
    except ValueError as error:
        parser.error(str(error))
    text = table(report)
    print(text)
    if args.md:
        args.md.write_text(text)
    if args.png:
        print("curves:", plot(report, args.png))
    return 0


if __name__ == "__main__":
    sys.exit(main())
