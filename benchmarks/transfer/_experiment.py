"""The env-family-independent parts of the transfer benchmarks (``run_*_transfer.py``).

A transfer benchmark pre-trains one multi-task learner (``build_mtapn``) on several tasks,
``--seeds`` seeds vmapped, then trains a held-out target task in several *arms* over the same
seeds, target seed ``i`` starting from pre-training seed ``i``'s decision layers:

* ``scratch``: fresh perception and fresh decision layers;
* ``frozen``: pre-trained decision layers, fixed (only perception and mixer learn);
* ``finetune``: pre-trained decision layers, trained on (``decision_lr_scale``);
* ``random_frozen``: fresh decision layers kept fixed (control: is it the layers' content that
  helps, or only having fewer parameters to learn?).

Here: the command line every benchmark shares (``parser``), training with greedy evaluations
between chunks of updates (``train_with_evals``), the pre-training phase or its saved layers
(``pretrain_or_load``), the arms (``run_arms``), save/load of every seed's decision layers as
one ``.npz``, the metrics (``summarise``), the Markdown table (``table_lines``), the plot
(``plot``) and the cost of one jitted update (``time_update``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.training.learner import evaluate

ARMS = ("scratch", "frozen", "finetune", "random_frozen")


def parser(description: str, results: Path, **defaults) -> argparse.ArgumentParser:
    """The arguments every transfer benchmark takes (``defaults`` override the defaults)."""
    parse = argparse.ArgumentParser(description=description)
    parse.add_argument("--seeds", type=int, default=3)
    parse.add_argument("--num-envs", type=int, default=16)
    parse.add_argument("--width", type=int, default=64)
    parse.add_argument("--lr", type=float, default=1e-3)
    parse.add_argument("--pretrain-updates", type=int, default=300)
    parse.add_argument("--target-updates", type=int, default=150)
    parse.add_argument("--chunk", type=int, default=15)
    parse.add_argument("--eval-envs", type=int, default=32)
    parse.add_argument("--finetune-lr-scale", type=float, default=0.1)
    parse.add_argument("--conditions", default=",".join(ARMS), help="comma-separated")
    parse.add_argument(
        "--pretrained-from",
        default="",
        help="skip pre-training: decision layers from a pretrained_decision.npz",
    )
    parse.add_argument("--out", default=str(results), help="results folder")
    parse.add_argument("--measure-cost", action="store_true")
    parse.add_argument("--repeats", type=int, default=10)
    parse.set_defaults(**defaults)
    return parse


@contextmanager
def timed(timings: dict, name: str):
    """Records ``{"wall_s", "cpu_s"}`` of the ``with`` body under ``timings[name]``."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    timings[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}


# --------------------------------------------------------------------------- decision layers
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


# --------------------------------------------------------------------------- training
def train_with_evals(multitask, keys, decisions, num_updates, chunk, eval_envs, show=None):
    """Chunks of updates for every seed (vmapped), greedy evaluation between them.

    Returns the final state, the greedy curves ``{metric: [seeds, evals]}`` (every metric of
    ``evaluate``: for a multi-task learner per task and the mean over tasks) and the training
    return ``[seeds, updates]``. ``show``: ``{metric: label}`` printed after each chunk
    (default: the return).
    """
    if num_updates % chunk:
        raise ValueError(
            f"{num_updates} updates do not split into chunks of {chunk} (the curves would "
            f"silently drop {num_updates % chunk} updates); choose --chunk dividing them"
        )
    show = show or {"episode_return": "greedy return"}
    learner = multitask.learner
    init = jax.jit(jax.vmap(multitask.init_with))
    state = init(keys, decisions)

    def run_chunk(state):
        return jax.lax.scan(lambda s, _: learner.update(s), state, None, chunk)

    run_chunk = jax.jit(jax.vmap(run_chunk))
    evaluate_seeds = jax.jit(jax.vmap(lambda p, k: evaluate(learner, p, k, eval_envs)))
    eval_keys = jax.vmap(lambda k: jax.random.fold_in(k, 7))(keys)
    evals, train_curve = [jax.device_get(evaluate_seeds(state.params, eval_keys))], []
    tick = time.perf_counter()
    for index in range(num_updates // chunk):
        state, metrics = run_chunk(state)
        train_curve.append(np.asarray(metrics["episode_return"]))
        keys_now = jax.vmap(lambda k: jax.random.fold_in(k, index + 8))(keys)
        evals.append(jax.device_get(evaluate_seeds(state.params, keys_now)))
        shown = ", ".join(f"{label} {evals[-1][k].mean():.2f}" for k, label in show.items())
        print(
            f"  chunk {index + 1}/{num_updates // chunk}: {shown} "
            f"({time.perf_counter() - tick:.0f}s)",
            flush=True,
        )
    curves = {k: np.stack([np.asarray(e[k]) for e in evals], axis=1) for k in evals[0]}
    return state, curves, np.concatenate(train_curve, axis=1)


def pretrain_or_load(args, pre, keys, npz: Path, label: str, show=None):
    """Phase 1: pre-train ``pre`` (or load ``args.pretrained_from``). Returns every seed's
    decision layers, the pre-training curves (``None`` when loaded) and the phase's timings.
    Writes the layers to ``npz`` when it trains."""
    timings = {}
    if args.pretrained_from:
        like = jax.eval_shape(jax.vmap(lambda k: pre.init_with(k).params["decision"]), keys)
        decisions = load_decisions(Path(args.pretrained_from), like)
        print(f"pre-trained decision layers from {args.pretrained_from}")
        return decisions, None, timings
    print(f"pre-training on {label}: {args.pretrain_updates} updates x {args.seeds} seeds")
    with timed(timings, "pretrain"):
        state, curves, _ = train_with_evals(
            pre, keys, None, args.pretrain_updates, args.chunk, args.eval_envs, show
        )
    decisions = state.params["decision"]  # [seeds, ...]: target seed i <- pre seed i
    save_decisions(npz, decisions)
    return decisions, curves, timings


def run_arms(args, build: Callable, decisions, label: str, timings: dict, show=None):
    """Phase 2: every arm of ``args.conditions`` on the target over ``args.seeds`` seeds.

    ``build(overrides)`` returns the target learner with the arm's config overrides. Returns
    ``{arm: {metric: [seeds, evals]}}`` and ``{arm: training return [seeds, updates]}``; adds
    each arm's wall/CPU seconds to ``timings``.
    """
    settings = {
        "scratch": ({}, None),
        "frozen": ({"freeze_decision": True}, decisions),
        "finetune": ({"decision_lr_scale": args.finetune_lr_scale}, decisions),
        "random_frozen": ({"freeze_decision": True}, None),
    }
    target_keys = jax.random.split(jax.random.key(1), args.seeds)
    curves, train_curves = {}, {}
    for name in args.conditions.split(","):
        overrides, decision = settings[name]
        print(f"target {label}, {name}: {args.target_updates} updates x {args.seeds} seeds")
        multitask = build(overrides)
        with timed(timings, name):
            _, curves[name], train_curves[name] = train_with_evals(
                multitask, target_keys, decision, args.target_updates, args.chunk,
                args.eval_envs, show,
            )  # fmt: skip
        print(f"  {name}: {timings[name]['wall_s']:.0f}s wall, {timings[name]['cpu_s']:.0f}s CPU")
    return curves, train_curves


def previous_pretrain_curve(path: Path, args, same: Sequence[str]):
    """The pre-training curve stored in an earlier ``path`` (json), if it was made with the
    same pre-training arguments ``same`` (else ``None``)."""
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    if any(record["args"].get(k) != getattr(args, k) for k in same):
        return None
    return record.get("pretrain_greedy_curve")


# --------------------------------------------------------------------------- metrics
def summarise(curves: dict, steps: np.ndarray) -> dict:
    """Per arm (``curves[arm]``: ``[seeds, evals]``), mean and std over seeds of:

    * jump-start: the value before any target training;
    * steps to threshold: first evaluation at or above the threshold, defined from the scratch
      curve only (``start + 0.8 * (final - start)`` of scratch's seed-mean curve; ``None``,
      and no arm reaching it, when scratch does not improve);
    * AUC: mean value over all evaluations (trapezoid / length);
    * final: mean of the last two evaluations.
    """
    scratch = curves["scratch"].mean(axis=0)
    gain = scratch[-2:].mean() - scratch[0]
    threshold = float(scratch[0] + 0.8 * gain) if gain > 0 else None
    table = {"threshold": threshold}
    for name, curve in curves.items():  # [seeds, evals]
        reached = [
            float(steps[np.argmax(c >= threshold)])
            if threshold is not None and np.any(c >= threshold)
            else float("nan")
            for c in curve
        ]
        auc = np.trapezoid(curve, steps, axis=1) / (steps[-1] - steps[0])
        if np.any(np.isfinite(reached)):
            to_threshold = (float(np.nanmean(reached)), float(np.nanstd(reached)))
        else:
            to_threshold = (float("nan"), float("nan"))
        table[name] = {
            "jump_start": (float(curve[:, 0].mean()), float(curve[:, 0].std())),
            "steps_to_threshold": to_threshold,
            "reached": int(np.sum(np.isfinite(reached))),
            "auc": (float(auc.mean()), float(auc.std())),
            "final": (float(curve[:, -2:].mean()), float(curve[:, -2:].mean(axis=1).std())),
        }
    return table


def table_lines(table: dict, seeds: int, digits: int = 2) -> list[str]:
    """``summarise``'s table as Markdown rows (with the header)."""
    fmt = lambda pair, d=digits: f"{pair[0]:.{d}f} ± {pair[1]:.{d}f}"
    lines = [
        "| condition | jump-start | env steps to threshold (seeds reaching) | AUC | final |",
        "|---|---|---|---|---|",
    ]
    for name in [k for k in table if k != "threshold"]:
        row = table[name]
        if row["reached"]:
            steps = fmt(row["steps_to_threshold"], 0) + f" ({row['reached']}/{seeds})"
        else:
            steps = f"- (0/{seeds})"
        lines.append(
            f"| {name} | {fmt(row['jump_start'])} | {steps} | {fmt(row['auc'])} | "
            f"{fmt(row['final'])} |"
        )
    return lines


def plot(panels: Sequence[tuple], steps: np.ndarray, path: Path, title: str) -> None:
    """One panel per ``(curves {arm: [seeds, evals]}, threshold or None, y label)``: the
    seed mean and +- std band of every arm against target env steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    for ax, (curves, threshold, ylabel) in zip(axes[0], panels):
        for name, curve in curves.items():
            mean, std = curve.mean(axis=0), curve.std(axis=0)
            ax.plot(steps, mean, label=name)
            ax.fill_between(steps, mean - std, mean + std, alpha=0.2)
        if threshold is not None:
            ax.axhline(threshold, color="grey", linestyle="--", linewidth=1, label="threshold")
        ax.set_xlabel("target env steps")
        ax.set_ylabel(ylabel)
        ax.legend()
    fig.suptitle(title) if len(panels) > 1 else axes[0][0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# --------------------------------------------------------------------------- cost
def time_update(learner, repeats: int) -> dict:
    """Seconds to compile one jitted ``learner.update`` (with its first call) and the median
    of ``repeats`` calls after it (one seed)."""
    update = jax.jit(learner.update)
    state = learner.init(jax.random.key(0))
    jax.block_until_ready(state)
    tick = time.perf_counter()
    state, _ = update(state)  # compile
    jax.block_until_ready(state)
    compile_s = time.perf_counter() - tick
    times = []
    for _ in range(repeats):
        tick = time.perf_counter()
        state, _ = update(state)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - tick)
    return {"compile_s": compile_s, "update_s": float(np.median(times))}
