"""Transfer of shared decision layers on SMAX: several small maps -> held-out maps (CPU scale).

Phase 1 pre-trains one MTAPN-VDN learner (``jaxmarl.baselines.multitask``) on ``--maps`` at
once against the scripted enemy (``HeuristicEnemySMAX`` with the SMAX presets' env settings:
enemy sees actions, walls kill, attack the closest unit), ``--seeds`` seeds vmapped. Phase 2
trains each held-out map of ``--targets`` in the four arms of ``_experiment`` (scratch, frozen,
finetune, random_frozen) over the same seeds, target seed ``i`` starting from pre-training
seed ``i``'s decision layers. Between chunks of updates every seed is evaluated greedily (one
battle in each of ``--eval-envs`` fresh envs): episode return (damage dealt and kills, so
informative while nothing is won) and win rate.

Writes ``results/smax_transfer.json`` (all curves, per seed, per metric, and the wall/CPU
seconds of each phase), ``results/smax_transfer.md`` (per target map and metric: jump-start,
env steps to threshold, AUC, final; ``_experiment.summarise``), ``results/smax_transfer.png``
and ``results/pretrained_decision_smax.npz``. ``--pretrained-from PATH`` skips phase 1.

``--measure-cost`` instead times the compile and one jitted update of every map alone and of
the pre-training maps together (``results/smax_update_cost.json``).
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
from jaxmarl.baselines.q_learning import LambdaReturns
from jaxmarl.networks.mixers import VDNMixerConfig
from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _experiment as ex  # noqa: E402

RESULTS = Path(__file__).parent / "results"
SMAX = "HeuristicEnemySMAX"
# The env settings of configs/mtapn_vdn/SMAX_* (and the MAPPO SMAX presets).
ENV_KWARGS = {"attack_mode": "closest", "see_enemy_actions": True, "walls_cause_death": True}
METRICS = {"episode_return": "greedy return", "won": "greedy win rate"}


def smax(scenario: str) -> str:
    """The task spec (keywords sorted, as a single-task config's ``task_specs`` has them)."""
    kwargs = sorted({**ENV_KWARGS, "scenario": scenario}.items())
    return ":".join([SMAX, *(f"{k}={v}" for k, v in kwargs)])


def make_config(args, tasks, updates, **overrides) -> MTAPNConfig:
    """The SMAX presets' learner (GRU perception, decision MLP, VDN, PQN core, RAdam) at
    ``args``' scale."""
    return MTAPNConfig(
        env=EnvConfig(env_id=SMAX, num_envs=args.num_envs),
        network=NetworkConfig(
            encoder_sizes=(),
            embed_dim=args.width,
            trunk=GRUTrunkConfig(size=args.width),
            activation="relu",
            layer_norm=True,
            agent_id=True,
        ),
        run=RunConfig(total_timesteps=updates * args.num_envs * args.num_steps),
        tasks=tuple(tasks),
        task_weighting="loss_rate",
        weight_ema=0.1,
        decision_sizes=(args.width // 2,),
        mixer=VDNMixerConfig(),
        num_steps=args.num_steps,
        num_minibatches=args.num_minibatches,
        num_epochs=args.num_epochs,
        lr=args.lr,
        anneal_lr=False,
        optimiser="radam",
        max_grad_norm=1.0,
        gamma=0.99,
        returns=LambdaReturns(td_lambda=0.85),
        eps_start=1.0,
        eps_finish=0.05,
        eps_decay=args.eps_decay,
        **overrides,
    )


def measure_cost(args) -> None:
    """Compile seconds and median seconds of one jitted update (1 seed): every map of
    ``--maps`` and ``--targets`` alone, and ``--maps`` together."""
    maps, targets = args.maps.split(","), args.targets.split(",")
    load_before = os.getloadavg()[0]
    result = {}
    for name in [*maps, *targets]:
        learner = build_mtapn(make_config(args, [smax(name)], 8)).learner
        result[name] = ex.time_update(learner, args.repeats)
        print(name, result[name], flush=True)
    learner = build_mtapn(make_config(args, [smax(m) for m in maps], 8)).learner
    result["+".join(maps)] = together = ex.time_update(learner, args.repeats)
    print("together", together, flush=True)
    record = {
        "maps": result,
        "sum_single_update_s": sum(result[m]["update_s"] for m in maps),
        "load_average": [load_before, os.getloadavg()[0]],
        "args": {k: v for k, v in vars(args).items() if k != "measure_cost"},
    }
    print(json.dumps(record, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "smax_update_cost.json").write_text(json.dumps(record, indent=2) + "\n")


def main() -> None:
    global RESULTS
    parser = ex.parser(
        __doc__.split("\n")[0], RESULTS, lr=5e-4, pretrain_updates=800, target_updates=800,
        chunk=50, eval_envs=32, repeats=3,
    )  # fmt: skip
    parser.add_argument("--maps", default="3m,2s3z,3s_vs_5z", help="pre-training maps")
    parser.add_argument("--targets", default="5m_vs_6m", help="held-out maps")
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--num-epochs", type=int, default=4)
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--eps-decay", type=float, default=0.1)
    args = parser.parse_args()
    RESULTS = Path(args.out)
    if args.measure_cost:
        measure_cost(args)
        return
    maps, targets = args.maps.split(","), args.targets.split(",")
    keys = jax.random.split(jax.random.key(0), args.seeds)
    pre = build_mtapn(make_config(args, [smax(m) for m in maps], args.pretrain_updates))
    decisions, pre_curves, timings = ex.pretrain_or_load(
        args, pre, keys, RESULTS / "pretrained_decision_smax.npz", "+".join(maps), METRICS
    )
    if args.pretrained_from:
        pre_curves = ex.previous_pretrain_curve(
            RESULTS / "smax_transfer.json", args,
            ("seeds", "num_envs", "num_steps", "width", "lr", "maps", "pretrain_updates"),
        )  # fmt: skip
    steps_per_update = args.num_envs * args.num_steps
    steps = np.arange(args.target_updates // args.chunk + 1) * args.chunk * steps_per_update
    record = {
        "args": vars(args),
        "steps": steps.tolist(),
        "pretrain_greedy_curve": None
        if pre_curves is None
        else {k: np.asarray(v).tolist() for k, v in pre_curves.items()},
        "timings": timings,
        "targets": {},
    }
    lines = [
        f"Pre-training: MTAPN-VDN on {', '.join(maps)} at once, {args.pretrain_updates} updates "
        f"of {steps_per_update} env steps per map. Targets: {args.seeds} seeds, "
        f"{args.target_updates} updates of {steps_per_update} env steps; greedy evaluation over "
        f"{args.eval_envs} battles every {args.chunk} updates. Threshold: 80% of scratch's "
        "improvement (seed-mean curve). Mean ± std over seeds.",
    ]
    panels = []
    for target in targets:
        build = lambda overrides, t=target: build_mtapn(
            make_config(args, [smax(t)], args.target_updates, **overrides)
        )
        arm_timings = {}
        curves, train_curves = ex.run_arms(args, build, decisions, target, arm_timings, METRICS)
        timings.update({f"{target}/{k}": v for k, v in arm_timings.items()})
        summary = {}
        for metric, label in METRICS.items():
            per_arm = {arm: c[metric] for arm, c in curves.items()}
            summary[metric] = table = ex.summarise(per_arm, steps)
            threshold = table["threshold"]
            shown = "none (scratch does not improve)" if threshold is None else f"{threshold:.3f}"
            lines += ["", f"**{target}: {label}** (threshold {shown})", ""]
            lines += ex.table_lines(table, args.seeds, digits=3 if metric == "won" else 2)
            panels.append((per_arm, threshold, f"{target}: {label}"))
        record["targets"][target] = {
            "curves": {a: {m: v.tolist() for m, v in c.items()} for a, c in curves.items()},
            "train_curves": {a: v.tolist() for a, v in train_curves.items()},
            "summary": summary,
        }
    record["load_average_end"] = os.getloadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "smax_transfer.json").write_text(json.dumps(record, indent=1) + "\n")
    (RESULTS / "smax_transfer.md").write_text("\n".join(lines) + "\n")
    title = f"SMAX: decision layers from {'+'.join(maps)}"
    ex.plot(panels, steps, RESULTS / "smax_transfer.png", title)
    print((RESULTS / "smax_transfer.md").read_text())


if __name__ == "__main__":
    jnp.zeros(())  # initialise the backend before timing anything
    main()
