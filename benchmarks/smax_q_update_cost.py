"""Wall and CPU seconds of one QMIX learning update on SMAX at JaxMARL's published settings.

A full SMAX Q-learning run at ``ql_rnn_smax.yaml``'s settings (dense + GRU 512, 8 gradient steps
of 32 x 128-step sequences per update of 2048 env steps, 1e7 env steps) is far too long for a
CPU; this measures what one update costs on each side, so the time a run needs can be stated
from a measurement rather than a FLOP estimate.

Ours (our venv): builds ``make_q_learning`` from ``configs/qmix/HeuristicEnemySMAX_<scenario>``
with ``learning_starts=0`` (so every update learns), compiles a jitted chunk of ``--updates``
updates, runs it once to warm up (the replay buffer fills), then times a second call::

    .venv/bin/python benchmarks/smax_q_update_cost.py --side ours --scenario 3m --updates 3

JaxMARL 0.2.0 (its venv; its ``QLearning/qmix_rnn.py`` and ``config/alg/ql_rnn_smax.yaml``
fetched into ``--peer-scripts``, see ``smax_vs_jaxmarl.py``): runs the script's ``train`` for
``32 + --updates`` updates, one seed, no in-loop test, and reads wall and CPU time at each
per-update ``wandb.log`` (a stub); its buffer can only sample once it holds 32 rollouts, so
updates 1-31 do not learn and the last ``--updates`` intervals are learning updates::

    cd /tmp && /tmp/peer/bin/python -I /work/main/benchmarks/smax_q_update_cost.py \\
        --side jaxmarl --scenario 3m --updates 3

CPU time is ``time.process_time()`` (all threads of the process).
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

# JaxMARL's buffer (flashbax, min_length_time_axis = BUFFER_BATCH_SIZE) samples from update 32 on.
PEER_WARMUP_UPDATES = 32


def measure_ours(args) -> list[tuple[float, float]]:
    import jax

    from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning
    from jaxmarl.config import load_config, preset_path

    preset = preset_path("qmix", f"HeuristicEnemySMAX_{args.scenario}")
    learner = make_q_learning(load_config(QLearningConfig, preset, ["learning_starts=0"]))
    state = jax.jit(learner.init)(jax.random.key(0))

    def chunk(state):
        return jax.lax.scan(lambda s, _: learner.update(s), state, None, length=args.updates)

    wall = time.perf_counter()
    compiled = jax.jit(chunk).lower(state).compile()
    print(f"compile {time.perf_counter() - wall:.1f} s", flush=True)
    state, _ = jax.block_until_ready(compiled(state))  # warm-up: fills the buffer
    wall, cpu = time.perf_counter(), time.process_time()
    _, metrics = jax.block_until_ready(compiled(state))
    if not bool(metrics["learning"].all()):
        raise RuntimeError("an update did not learn")
    # One chunk: only the mean per update can be read.
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return [(wall / args.updates, cpu / args.updates)]


def measure_jaxmarl(args) -> list[tuple[float, float]]:
    stamps: list[tuple[float, float]] = []
    log = lambda *a, **k: stamps.append((time.perf_counter(), time.process_time()))
    sys.modules["wandb"] = types.SimpleNamespace(log=log, init=lambda *a, **k: None)
    import copy
    import importlib.util

    import jax
    import yaml

    scripts = Path(args.peer_scripts) / "QLearning"
    spec = importlib.util.spec_from_file_location("jaxmarl_qmix_rnn", scripts / "qmix_rnn.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(scripts / "config" / "alg" / "ql_rnn_smax.yaml") as f:
        config = yaml.safe_load(f)
    config = {
        k: float(v) if isinstance(v, str) and k not in ("ENV_NAME", "MAP_NAME") else v
        for k, v in config.items()
    }
    num_updates = PEER_WARMUP_UPDATES + args.updates
    steps = int(config["NUM_ENVS"]) * int(config["NUM_STEPS"]) * num_updates
    config.update(
        SEED=0, NUM_SEEDS=1, WANDB_MODE="online", TOTAL_TIMESTEPS=steps,
        TEST_DURING_TRAINING=False, MAP_NAME=args.scenario,
    )  # fmt: skip
    for key in ("NUM_ENVS", "NUM_STEPS", "BUFFER_SIZE", "BUFFER_BATCH_SIZE", "HIDDEN_SIZE",
                "TARGET_UPDATE_INTERVAL", "NUM_EPOCHS", "MIXER_EMBEDDING_DIM",
                "MIXER_HYPERNET_HIDDEN_DIM", "LEARNING_STARTS"):  # fmt: skip
        config[key] = int(config[key])
    env, _ = module.env_from_config(copy.deepcopy(config))
    key = jax.random.PRNGKey(0)
    wall = time.perf_counter()
    compiled = jax.jit(module.make_train(config, env)).lower(key).compile()
    print(f"compile {time.perf_counter() - wall:.1f} s", flush=True)
    jax.block_until_ready(compiled(key))
    jax.effects_barrier()
    if len(stamps) != num_updates:
        raise RuntimeError(f"expected {num_updates} logged updates, got {len(stamps)}")
    last = stamps[-(args.updates + 1) :]
    return [(b[0] - a[0], b[1] - a[1]) for a, b in zip(last, last[1:])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("ours", "jaxmarl"), required=True)
    parser.add_argument("--scenario", default="3m")
    parser.add_argument("--updates", type=int, default=3, help="learning updates timed")
    parser.add_argument("--peer-scripts", default="/tmp/peer_scripts")
    args = parser.parse_args()
    times = measure_ours(args) if args.side == "ours" else measure_jaxmarl(args)
    what = f"mean of {args.updates} learning updates" if args.side == "ours" else "learning update"
    for wall, cpu in times:
        print(f"{args.side}: {wall:.2f} s wall, {cpu:.2f} s CPU ({what})", flush=True)
    print(f"loadavg {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
