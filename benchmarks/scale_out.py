"""Scaling of one run from 1 to N devices: env steps/s of data-parallel training.

The same MAPPO run (same total env count, same results) is trained with ``run.data_devices=1``
and ``=N`` in one process that has ``N`` host devices (on a CPU) or GPUs, back to back, and its
training throughput (env steps/s over the timed chunks, compile excluded) is compared:
efficiency = (steps/s on N) / (N x steps/s on 1).

    python benchmarks/scale_out.py                       # MPE simple_spread and SMAX 3m, N=2
    python benchmarks/scale_out.py --devices 2 --repeats 3 --out benchmarks/results/scale_out.md

On one GPU, the overhead of the split itself (the same program sharded two ways on one device)
is not measurable this way (JAX sees one device); ``tests/training/test_data_parallel.py`` runs
that program with the devices emulated by ``vmap``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOADS = {
    "MPE simple_spread": dict(
        env_id="MPE_simple_spread_v3", num_envs=512, num_steps=64, num_minibatches=4
    ),
    "SMAX 3m": dict(
        env_id="HeuristicEnemySMAX",
        num_envs=256,
        num_steps=64,
        num_minibatches=4,
        env_kwargs={"scenario": "3m"},
    ),
}


def measure(name: str, data_devices: int, updates: int) -> tuple[float, float]:
    """``(env steps/s, compile s)`` of ``updates`` MAPPO updates on ``data_devices`` devices."""
    from jaxmarl.baselines.ppo import CentralisedCritic, PPOConfig, make_ppo
    from jaxmarl.training.config import EnvConfig, RunConfig
    from jaxmarl.training.host.loop import run

    spec = WORKLOADS[name]
    steps = spec["num_envs"] * spec["num_steps"]
    config = PPOConfig(
        env=EnvConfig(
            env_id=spec["env_id"], num_envs=spec["num_envs"], env_kwargs=spec.get("env_kwargs", {})
        ),
        critic=CentralisedCritic(),
        num_steps=spec["num_steps"],
        num_minibatches=spec["num_minibatches"],
        update_epochs=2,
        run=RunConfig(
            total_timesteps=steps * updates,
            data_devices=data_devices,
            updates_per_chunk=max(updates // 4, 1),
            checkpoint_every=0,
            eval_episodes=0,
            gif=False,
            loggers=("jsonl",),
        ),
    )
    learner = make_ppo(config)
    with tempfile.TemporaryDirectory() as out:
        result = run(learner, config.run, Path(out) / "run", show_progress=False)
    # The first chunk still pays for warm-up: count the timed chunks only.
    return steps * updates / result.train_s, result.compile_s


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--updates", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    from jaxmarl.cpu_rng import use_fast_cpu_rng
    from jaxmarl.training.host.devices import use_devices

    use_devices(args.devices)
    use_fast_cpu_rng()
    import jax

    rows = []
    for name in args.workloads:
        rates = {1: [], args.devices: []}
        for _ in range(args.repeats):
            for data in rates:  # alternate, so drifting load hits both alike
                rate, compile_s = measure(name, data, args.updates)
                rates[data].append(rate)
                print(
                    f"{name}: data_devices={data} {rate:,.0f} env steps/s "
                    f"(compile {compile_s:.0f} s)",
                    flush=True,
                )
        one, many = max(rates[1]), max(rates[args.devices])
        rows.append((name, one, many, many / (args.devices * one), rates))
    device = jax.devices()[0]
    lines = [
        f"# Scaling one run over devices: MAPPO, 1 vs {args.devices} devices",
        "",
        f"`python benchmarks/scale_out.py --devices {args.devices} --updates {args.updates} "
        f"--repeats {args.repeats}`, commit `{_commit()}`, {time.strftime('%Y-%m-%d')}, "
        f"{device.platform} ({device.device_kind}), {platform.processor() or platform.machine()}. "
        "Same total envs and results on both sides; env steps/s over the timed chunks (compile "
        f"excluded), best of {args.repeats}, alternating sides.",
        "",
        f"| workload | 1 device (env steps/s) | {args.devices} devices (env steps/s) | "
        f"speed-up | efficiency | all repeats (1 / {args.devices}) |",
        "|---|---|---|---|---|---|",
    ]
    for name, one, many, efficiency, rates in rows:
        every = " / ".join(", ".join(f"{r:,.0f}" for r in rates[d]) for d in (1, args.devices))
        lines.append(
            f"| {name} | {one:,.0f} | {many:,.0f} | {many / one:.2f}x | {efficiency:.0%} | "
            f"{every} |"
        )
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)
    return 0


def _commit() -> str:
    try:
        return subprocess.check_output(
            ["git", "rev-parse", "--short", "HEAD"], text=True, cwd=Path(__file__).parent
        ).strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
