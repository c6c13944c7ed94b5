"""Transfer of shared decision layers on MPE simple_spread: 3/4/5 agents -> 6 agents.

Phase 1 pre-trains one MTAPN-VDN learner (``jaxmarl.baselines.multitask``) on simple_spread with
3, 4 and 5 agents at once (one jitted update over the three tasks), ``--seeds`` seeds vmapped.
Phase 2 trains the held-out 6-agent task in the four arms of ``_experiment`` (scratch, frozen,
finetune, random_frozen), each over the same seeds (vmapped), the target seed ``i`` starting
from pre-training seed ``i``'s decision layers. The training, metrics, table and plot are the
family-independent ``_experiment`` (shared with ``run_smax_transfer.py``).

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

import json
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.baselines.multitask import MTAPNConfig, build_mtapn
from jaxmarl.networks.mixers import VDNMixerConfig
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _experiment as ex  # noqa: E402

RESULTS = Path(__file__).parent / "results"
SPREAD = "MPE_simple_spread_v3"


def spread(n: int) -> str:
    return f"{SPREAD}:num_agents={n}:num_landmarks={n}"


def make_config(args, tasks, updates, **overrides) -> MTAPNConfig:
    return MTAPNConfig(
        env=EnvConfig(env_id=SPREAD, num_envs=args.num_envs),
        network=NetworkConfig(
            embed_dim=args.width,
            trunk=MLPTrunkConfig(sizes=(args.width,)),
            activation="relu",
            layer_norm=True,
            agent_id=True,
        ),
        run=RunConfig(total_timesteps=updates * args.num_envs * 25),
        tasks=tuple(tasks),
        mixer=VDNMixerConfig(),
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


def measure_cost(args) -> None:
    """Median seconds of one jitted update: the 3-task learner vs each single-task learner."""

    def time_update(tasks):
        learner = build_mtapn(make_config(args, tasks, 8)).learner
        return ex.time_update(learner, args.repeats)["update_s"]

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
    args = ex.parser(__doc__.split("\n")[0], RESULTS).parse_args()
    RESULTS = Path(args.out)
    if args.measure_cost:
        measure_cost(args)
        return
    keys = jax.random.split(jax.random.key(0), args.seeds)
    pre = build_mtapn(make_config(args, [spread(n) for n in (3, 4, 5)], args.pretrain_updates))
    decisions, pre_curves, timings = ex.pretrain_or_load(
        args, pre, keys, RESULTS / "pretrained_decision.npz", "spread 3/4/5 agents"
    )
    if args.pretrained_from:
        same = ("seeds", "num_envs", "width", "lr", "pretrain_updates", "chunk", "eval_envs")
        pre_curve = ex.previous_pretrain_curve(RESULTS / "mpe_transfer.json", args, same)
    else:
        pre_curve = pre_curves["episode_return"].tolist()
    build = lambda overrides: build_mtapn(
        make_config(args, [spread(6)], args.target_updates, **overrides)
    )
    curves, train_curves = ex.run_arms(args, build, decisions, "spread-6", timings)
    curves = {arm: c["episode_return"] for arm, c in curves.items()}
    steps_per_update = args.num_envs * 25
    steps = np.arange(args.target_updates // args.chunk + 1) * args.chunk * steps_per_update
    table = ex.summarise(curves, steps)
    record = {
        "args": vars(args),
        "steps": steps.tolist(),
        "pretrain_greedy_curve": pre_curve,
        "timings": timings,
        "load_average_end": os.getloadavg(),
        "curves": {k: v.tolist() for k, v in curves.items()},
        "train_curves": {k: v.tolist() for k, v in train_curves.items()},
        "summary": table,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mpe_transfer.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = [
        f"Target: simple_spread, 6 agents. {args.seeds} seeds, {args.target_updates} updates of "
        f"{args.num_envs * 25} env steps; greedy evaluation over {args.eval_envs} episodes every "
        f"{args.chunk} updates. Threshold {table['threshold']:.2f} (80% of scratch's "
        "improvement). Mean ± std over seeds.",
        "",
        *ex.table_lines(table, args.seeds),
    ]
    (RESULTS / "mpe_transfer.md").write_text("\n".join(lines) + "\n")
    panels = [(curves, table["threshold"], "greedy episode return (per agent)")]
    title = "simple_spread 6 agents: decision layers from 3/4/5 agents"
    ex.plot(panels, steps, RESULTS / "mpe_transfer.png", title)
    print((RESULTS / "mpe_transfer.md").read_text())


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing anything
    main()
