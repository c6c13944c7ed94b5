"""Scaling of one run from 1 to N devices: env steps/s of data-parallel training.

The same MAPPO run (same total env count, same results) is trained with ``run.data_devices=1``
and ``=N`` in one process that has ``N`` host devices (on a CPU) or GPUs, back to back, and its
training throughput (env steps/s over the timed chunks, compile excluded) is compared:
efficiency = (steps/s on N) / (N x steps/s on 1).

    python benchmarks/scale_out.py                       # MPE simple_spread and SMAX 3m, N=2
    python benchmarks/scale_out.py --devices 2 --repeats 3 --out benchmarks/results/scale_out.md

On one GPU, JAX sees one device, so the split cannot be a mesh. ``--emulate`` measures the
overhead of the split program itself on that device: the data-parallel update with its
``data`` axis emulated by ``vmap(..., axis_name="data")`` (its collectives become reductions
over that axis, as in ``tests/training/test_data_parallel.py``) against the one-device update,
both as one jitted ``scan`` of updates:

    python benchmarks/scale_out.py --emulate --devices 2 --out scale_out_emulated.md
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


def measure_emulated(name: str, data_devices: int, updates: int) -> tuple[float, float]:
    """``(env steps/s, compile s)`` of ``updates`` MAPPO updates on this one device, the
    ``data`` axis of ``data_devices`` emulated by ``vmap`` (1: the plain program)."""
    import jax
    import jax.numpy as jnp

    from jaxmarl.baselines.ppo import CentralisedCritic, PPOConfig, make_ppo
    from jaxmarl.training.config import EnvConfig, RunConfig
    from jaxmarl.training.data_parallel import DATA_AXIS

    spec = WORKLOADS[name]
    steps = spec["num_envs"] * spec["num_steps"]
    learner = make_ppo(
        PPOConfig(
            env=EnvConfig(
                env_id=spec["env_id"],
                num_envs=spec["num_envs"],
                env_kwargs=spec.get("env_kwargs", {}),
            ),
            critic=CentralisedCritic(),
            num_steps=spec["num_steps"],
            num_minibatches=spec["num_minibatches"],
            update_epochs=2,
            run=RunConfig(total_timesteps=steps * updates, data_devices=data_devices),
        )
    )

    def train(key):
        state = learner.init(key)
        state, _ = jax.lax.scan(lambda s, _: learner.update(s), state, None, updates)
        return state.params

    if data_devices > 1:
        split = train
        train = lambda key: jax.vmap(lambda _: split(key), axis_name=DATA_AXIS)(  # noqa: E731
            jnp.arange(data_devices)
        )
    key = jax.random.key(0)
    started = time.perf_counter()
    compiled = jax.jit(train).lower(key).compile()
    compile_s = time.perf_counter() - started
    jax.block_until_ready(compiled(key))  # warm-up
    started = time.perf_counter()
    jax.block_until_ready(compiled(key))
    # The init's reset is a negligible part of the timed call.
    return steps * updates / (time.perf_counter() - started), compile_s


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--updates", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--emulate",
        action="store_true",
        help="one device: the split program with its data axis emulated by vmap (overhead)",
    )
    args = parser.parse_args(argv)

    from jaxmarl.cpu_rng import use_fast_cpu_rng
    from jaxmarl.training.host.devices import use_devices

    if not args.emulate:
        use_devices(args.devices)
    use_fast_cpu_rng()
    import jax

    timed = measure_emulated if args.emulate else measure
    split = f"{args.devices}-way split emulated on 1 device" if args.emulate else None

    rows = []
    for name in args.workloads:
        rates = {1: [], args.devices: []}
        for _ in range(args.repeats):
            for data in rates:  # alternate, so drifting load hits both alike
                rate, compile_s = timed(name, data, args.updates)
                rates[data].append(rate)
                print(
                    f"{name}: data_devices={data} {rate:,.0f} env steps/s "
                    f"(compile {compile_s:.0f} s)",
                    flush=True,
                )
        one, many = max(rates[1]), max(rates[args.devices])
        # Emulated, both sides run on one device: their ratio is the split's overhead, and a
        # scaling efficiency has no meaning.
        efficiency = "—" if args.emulate else f"{many / (args.devices * one):.0%}"
        rows.append((name, one, many, efficiency, rates))
    device = jax.devices()[0]
    many_label = split or f"{args.devices} devices"
    lines = [
        f"# Scaling one run over devices: MAPPO, 1 device vs {many_label}",
        "",
        f"`python benchmarks/scale_out.py --devices {args.devices} --updates {args.updates} "
        f"--repeats {args.repeats}{' --emulate' if args.emulate else ''}`, commit "
        f"`{_commit()}`, {time.strftime('%Y-%m-%d')}, "
        f"{device.platform} ({device.device_kind}), {platform.processor() or platform.machine()}. "
        "Same total envs and results on both sides; env steps/s over the timed "
        + ("call of one jitted scan of the updates" if args.emulate else "chunks")
        + f" (compile excluded), best of {args.repeats}, alternating sides.",
        "",
        f"| workload | 1 device (env steps/s) | {many_label} (env steps/s) | "
        f"speed-up | efficiency | all repeats (1 / {args.devices}) |",
        "|---|---|---|---|---|---|",
    ]
    for name, one, many, efficiency, rates in rows:
        every = " / ".join(", ".join(f"{r:,.0f}" for r in rates[d]) for d in (1, args.devices))
        lines.append(
            f"| {name} | {one:,.0f} | {many:,.0f} | {many / one:.2f}x | {efficiency} | {every} |"
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
