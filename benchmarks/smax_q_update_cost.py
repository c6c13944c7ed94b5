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
STEPS_PER_UPDATE = 16 * 128  # ql_rnn_smax.yaml: NUM_ENVS x NUM_STEPS


def measure_ours(args) -> list[tuple[float, float]]:
    import jax

    from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning
    from jaxmarl.config import load_config, preset_path
    from jaxmarl.cpu_rng import use_fast_cpu_rng

    use_fast_cpu_rng()  # the update as the train command compiles it (docs/cpu_rng.md)

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
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not bool(metrics["learning"].all()):
        raise RuntimeError("an update did not learn")
    return [(wall / args.updates, cpu / args.updates)]  # one chunk: only the mean can be read


def measure_jaxmarl(args) -> list[tuple[float, float]]:
    stamps: list[tuple[float, float]] = []
    log = lambda *a, **k: stamps.append((time.perf_counter(), time.process_time()))
    sys.modules["wandb"] = types.SimpleNamespace(log=log, init=lambda *a, **k: None)
    import importlib.util

    import jax

    # The peer's config and train function are built as smax_vs_jaxmarl.py builds them (by path:
    # ``python -I`` does not put this folder on sys.path).
    path = Path(__file__).with_name("smax_vs_jaxmarl.py")
    spec = importlib.util.spec_from_file_location("smax_vs_jaxmarl", path)
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    num_updates = PEER_WARMUP_UPDATES + args.updates
    peer_args = argparse.Namespace(
        alg="qmix",
        scenario=args.scenario,
        steps=STEPS_PER_UPDATE * num_updates,
        peer_scripts=args.peer_scripts,
        peer_override=["TEST_DURING_TRAINING=false"],
    )
    train, config, _ = driver._peer_train(peer_args)
    if config["NUM_ENVS"] * config["NUM_STEPS"] != STEPS_PER_UPDATE:
        raise RuntimeError("ql_rnn_smax.yaml no longer has 16 envs x 128 steps")
    key = jax.random.PRNGKey(0)
    wall = time.perf_counter()
    compiled = jax.jit(train).lower(key).compile()
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
