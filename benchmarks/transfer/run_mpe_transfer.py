"""Transfer of shared decision layers on MPE simple_spread: 3/4/5 agents -> 6 agents.

Phase 1 pre-trains one MTAPN-VDN learner (``jaxmarl.baselines.multitask``) on simple_spread with
3, 4 and 5 agents at once (one jitted update over the three tasks), ``--seeds`` seeds vmapped.
Phase 2 trains the held-out 6-agent task four ways, each over the same seeds (vmapped), the
target seed ``i`` starting from pre-training seed ``i``'s decision layers:

* ``scratch``: fresh perception and fresh decision layers;
* ``frozen``: pre-trained decision layers, fixed (only perception and mixer learn);
* ``finetune``: pre-trained decision layers, trained on (``decision_lr_scale``);
* ``random_frozen``: fresh decision layers kept fixed (control: is it the layers' content that
  helps, or only having fewer parameters to learn?).

Between chunks of updates every seed is evaluated greedily (``evaluate``: one episode in each
of ``--eval-envs`` fresh envs). Writes ``results/mpe_transfer.json`` (all curves),
``results/mpe_transfer.md`` (table) and ``results/mpe_transfer.png``. Metrics per condition,
mean +- std over seeds, on the greedy evaluation curve (x = target env steps):

* jump-start: return before any target training;
* steps to threshold: first evaluation at or above the threshold (defined from the scratch
  curve only: ``start + 0.8 * (final - start)`` of scratch's seed-mean curve);
* AUC: mean return over all evaluations (trapezoid / length);
* final: mean of the last two evaluations.

The pre-trained decision layers of every seed are written to ``results/pretrained_decision.npz``;
``--pretrained-from PATH`` skips phase 1 and starts phase 2 from such a file (the pre-training
curve is then taken from the existing ``results/mpe_transfer.json`` if its arguments match).

``--measure-cost`` instead times one jitted 3-task update against the three single-task updates.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.baselines.multitask import MTAPNConfig, build_mtapn
from jaxmarl.training.config import EnvConfig, NetworkConfig, RunConfig
from jaxmarl.training.learner import evaluate

RESULTS = Path(__file__).parent / "results"
SPREAD = "MPE_simple_spread_v3"


def spread(n: int) -> str:
    return f"{SPREAD}:num_agents={n}:num_landmarks={n}"


def make_config(args, tasks, updates, **overrides) -> MTAPNConfig:
    return MTAPNConfig(
        env=EnvConfig(env_id=SPREAD, num_envs=args.num_envs),
        network=NetworkConfig(
            embed_dim=args.width,
            trunk="mlp",
            trunk_sizes=(args.width,),
            activation="relu",
            layer_norm=True,
            agent_id=True,
        ),
        run=RunConfig(total_timesteps=updates * args.num_envs * 25),
        tasks=tuple(tasks),
        mixer="vdn",
        num_steps=25,
        num_minibatches=4,
        num_epochs=2,
        lr=args.lr,
        anneal_lr=False,
        optimiser="adam",
        eps_start=1.0,
        eps_finish=0.05,
        eps_decay=0.3,
        decision_sizes=(args.width // 2,),
        **overrides,
    )


def save_decisions(path: Path, decisions) -> None:
    """Every seed's decision layers (leaves ``[seeds, ...]``) as one ``.npz``, keyed by path."""
    flat = jax.tree_util.tree_flatten_with_path(decisions)[0]
    arrays = {jax.tree_util.keystr(k): np.asarray(v) for k, v in flat}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:
        np.savez(file, **arrays)


def load_decisions(path: Path, like):
    """``save_decisions``'s file in the structure of ``like`` (shapes checked)."""
    saved = np.load(path)
    flat, treedef = jax.tree_util.tree_flatten_with_path(like)
    leaves = []
    for key, ref in flat:
        name = jax.tree_util.keystr(key)
        if name not in saved or saved[name].shape != ref.shape:
            have = saved[name].shape if name in saved else "absent"
            raise ValueError(f"{path}: {name} is {have}, expected {ref.shape}")
        leaves.append(jnp.asarray(saved[name], ref.dtype))
    return jax.tree_util.tree_unflatten(treedef, leaves)


def train_with_evals(multitask, keys, decisions, num_updates, chunk, eval_envs):
    """Chunks of updates for every seed (vmapped), greedy evaluation of task 0 between them."""
    learner = multitask.learner
    init = jax.jit(jax.vmap(multitask.init_with))
    state = init(keys, decisions)

    def run_chunk(state):
        return jax.lax.scan(lambda s, _: learner.update(s), state, None, chunk)

    run_chunk = jax.jit(jax.vmap(run_chunk))
    evaluate_seeds = jax.jit(
        jax.vmap(lambda p, k: evaluate(learner, p, k, eval_envs)["episode_return"])
    )
    eval_keys = jax.vmap(lambda k: jax.random.fold_in(k, 7))(keys)
    curve, train_curve = [np.asarray(evaluate_seeds(state.params, eval_keys))], []
    tick = time.perf_counter()
    for index in range(num_updates // chunk):
        state, metrics = run_chunk(state)
        train_curve.append(np.asarray(metrics["episode_return"]))
        keys_now = jax.vmap(lambda k: jax.random.fold_in(k, index + 8))(keys)
        curve.append(np.asarray(evaluate_seeds(state.params, keys_now)))
        print(
            f"  chunk {index + 1}/{num_updates // chunk}: greedy return "
            f"{curve[-1].mean():.2f} ({time.perf_counter() - tick:.0f}s)",
            flush=True,
        )
    return state, np.stack(curve, axis=1), np.concatenate(train_curve, axis=1)


def summarise(curves: dict, steps: np.ndarray) -> dict:
    scratch = curves["scratch"].mean(axis=0)
    threshold = float(scratch[0] + 0.8 * (scratch[-2:].mean() - scratch[0]))
    table = {"threshold": threshold}
    for name, curve in curves.items():  # [seeds, evals]
        reached = [
            float(steps[np.argmax(c >= threshold)]) if np.any(c >= threshold) else float("nan")
            for c in curve
        ]
        auc = np.trapezoid(curve, steps, axis=1) / (steps[-1] - steps[0])
        table[name] = {
            "jump_start": (float(curve[:, 0].mean()), float(curve[:, 0].std())),
            "steps_to_threshold": (float(np.nanmean(reached)), float(np.nanstd(reached))),
            "reached": int(np.sum(np.isfinite(reached))),
            "auc": (float(auc.mean()), float(auc.std())),
            "final": (float(curve[:, -2:].mean()), float(curve[:, -2:].mean(axis=1).std())),
        }
    return table


def measure_cost(args) -> None:
    """Median seconds of one jitted update: the 3-task learner vs each single-task learner."""

    def time_update(tasks):
        learner = build_mtapn(make_config(args, tasks, 8)).learner
        update = jax.jit(learner.update)
        state = learner.init(jax.random.key(0))
        state, _ = update(state)  # compile
        jax.block_until_ready(state)
        times = []
        for _ in range(args.repeats):
            tick = time.perf_counter()
            state, _ = update(state)
            jax.block_until_ready(state)
            times.append(time.perf_counter() - tick)
        return float(np.median(times))

    load_before = os.getloadavg()[0]
    single = {n: time_update([spread(n)]) for n in (3, 4, 5)}
    multi = time_update([spread(n) for n in (3, 4, 5)])
    result = {
        "single_task_s": single,
        "sum_single_s": sum(single.values()),
        "multi_task_s": multi,
        "load_average": [load_before, os.getloadavg()[0]],
        "num_envs": args.num_envs,
        "width": args.width,
        "repeats": args.repeats,
    }
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "update_cost.json").write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    global RESULTS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--pretrain-updates", type=int, default=300)
    parser.add_argument("--target-updates", type=int, default=150)
    parser.add_argument("--chunk", type=int, default=15)
    parser.add_argument("--eval-envs", type=int, default=32)
    parser.add_argument("--finetune-lr-scale", type=float, default=0.1)
    parser.add_argument(
        "--conditions", default="scratch,frozen,finetune,random_frozen", help="comma-separated"
    )
    parser.add_argument(
        "--pretrained-from",
        default="",
        help="skip pre-training: decision layers from a pretrained_decision.npz",
    )
    parser.add_argument("--out", default=str(RESULTS), help="results folder")
    parser.add_argument("--measure-cost", action="store_true")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    RESULTS = Path(args.out)
    if args.measure_cost:
        measure_cost(args)
        return
    keys = jax.random.split(jax.random.key(0), args.seeds)
    pre = build_mtapn(make_config(args, [spread(n) for n in (3, 4, 5)], args.pretrain_updates))
    timings = {}
    if args.pretrained_from:
        like = jax.eval_shape(jax.vmap(lambda k: pre.init_with(k).params["decision"]), keys)
        decisions = load_decisions(Path(args.pretrained_from), like)
        pre_curve = previous_pretrain_curve(args)
        print(f"pre-trained decision layers from {args.pretrained_from}")
    else:
        print(
            f"pre-training on spread 3/4/5 agents: {args.pretrain_updates} updates x "
            f"{args.seeds} seeds"
        )
        wall, cpu = time.perf_counter(), time.process_time()
        pre_state, pre_curve, _ = train_with_evals(
            pre, keys, None, args.pretrain_updates, args.chunk, args.eval_envs
        )
        timings["pretrain"] = {
            "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu,
        }
        decisions = pre_state.params["decision"]  # [seeds, ...]: target seed i <- pre seed i
        save_decisions(RESULTS / "pretrained_decision.npz", decisions)
    conditions = {
        "scratch": ({}, None),
        "frozen": ({"freeze_decision": True}, decisions),
        "finetune": ({"decision_lr_scale": args.finetune_lr_scale}, decisions),
        "random_frozen": ({"freeze_decision": True}, None),
    }
    conditions = {k: conditions[k] for k in args.conditions.split(",")}
    target_keys = jax.random.split(jax.random.key(1), args.seeds)
    curves, train_curves = {}, {}
    for name, (overrides, decision) in conditions.items():
        print(f"target spread-6, {name}: {args.target_updates} updates x {args.seeds} seeds")
        multitask = build_mtapn(make_config(args, [spread(6)], args.target_updates, **overrides))
        wall, cpu = time.perf_counter(), time.process_time()
        _, curves[name], train_curves[name] = train_with_evals(
            multitask, target_keys, decision, args.target_updates, args.chunk, args.eval_envs
        )
        timings[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
        print(f"  {name}: {timings[name]['wall_s']:.0f}s wall, {timings[name]['cpu_s']:.0f}s CPU")
    steps_per_update = args.num_envs * 25
    steps = np.arange(args.target_updates // args.chunk + 1) * args.chunk * steps_per_update
    table = summarise(curves, steps)
    record = {
        "args": vars(args),
        "steps": steps.tolist(),
        "pretrain_greedy_curve": None if pre_curve is None else np.asarray(pre_curve).tolist(),
        "timings": timings,
        "load_average_end": os.getloadavg(),
        "curves": {k: v.tolist() for k, v in curves.items()},
        "train_curves": {k: v.tolist() for k, v in train_curves.items()},
        "summary": table,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mpe_transfer.json").write_text(json.dumps(record, indent=1) + "\n")
    write_table(table, args)
    plot(curves, steps, table["threshold"])
    print((RESULTS / "mpe_transfer.md").read_text())


def previous_pretrain_curve(args):
    """The pre-training curve of the existing results, if they were made with the same
    pre-training arguments (else ``None``)."""
    path = RESULTS / "mpe_transfer.json"
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    same = ("seeds", "num_envs", "width", "lr", "pretrain_updates", "chunk", "eval_envs")
    if any(record["args"].get(k) != getattr(args, k) for k in same):
        return None
    return record.get("pretrain_greedy_curve")


def write_table(table: dict, args) -> None:
    fmt = lambda pair, digits=2: f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"
    lines = [
        f"Target: simple_spread, 6 agents. {args.seeds} seeds, {args.target_updates} updates of "
        f"{args.num_envs * 25} env steps; greedy evaluation over {args.eval_envs} episodes every "
        f"{args.chunk} updates. Threshold {table['threshold']:.2f} (80% of scratch's "
        "improvement). Mean ± std over seeds.",
        "",
        "| condition | jump-start | env steps to threshold (seeds reaching) | AUC | final |",
        "|---|---|---|---|---|",
    ]
    for name in [k for k in table if k != "threshold"]:
        row = table[name]
        steps = fmt(row["steps_to_threshold"], 0) + f" ({row['reached']}/{args.seeds})"
        lines.append(
            f"| {name} | {fmt(row['jump_start'])} | {steps} | {fmt(row['auc'])} | "
            f"{fmt(row['final'])} |"
        )
    (RESULTS / "mpe_transfer.md").write_text("\n".join(lines) + "\n")


def plot(curves: dict, steps: np.ndarray, threshold: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, curve in curves.items():
        mean, std = curve.mean(axis=0), curve.std(axis=0)
        ax.plot(steps, mean, label=name)
        ax.fill_between(steps, mean - std, mean + std, alpha=0.2)
    ax.axhline(threshold, color="grey", linestyle="--", linewidth=1, label="threshold")
    ax.set_xlabel("target env steps")
    ax.set_ylabel("greedy episode return (per agent)")
    ax.set_title("simple_spread 6 agents: decision layers from 3/4/5 agents")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "mpe_transfer.png", dpi=120)


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing anything
    main()
