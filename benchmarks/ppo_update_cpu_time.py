"""CPU seconds per MAPPO-RNN update, ours or JaxMARL 0.2.0's script, one seed, 3 updates.

Wall-clock throughput on a shared machine drifts with other people's load; CPU time of the
process drifts much less, so this compares the two programs' work per update. Both sides run
JaxMARL's published MAPPO-RNN settings (128 envs x 128 steps, 128 dense + GRU 128, 4 epochs x 4
minibatches) as one jitted ``train`` of 3 updates, compiled first, best of 2 runs.

    python benchmarks/ppo_update_cpu_time.py --side ours
    cd /tmp && /tmp/peer/bin/python -I /path/to/benchmarks/ppo_update_cpu_time.py --side jaxmarl \
        --peer-scripts /tmp/peer_scripts      # JaxMARL's baselines/MAPPO fetched there
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import types

import jax

UPDATES = 3
STEPS_PER_UPDATE = 128 * 128


def ours_train(overrides):
    from jaxmarl.baselines import ppo
    from jaxmarl.config import load_config, preset_path
    from jaxmarl.cpu_rng import use_fast_cpu_rng

    use_fast_cpu_rng()  # the update as the train command compiles it (docs/cpu_rng.md)

    config = load_config(
        ppo.PPOConfig,
        preset_path("mappo", "MPE_simple_spread_v3_rnn"),
        ["critic=centralised", f"run.total_timesteps={UPDATES * STEPS_PER_UPDATE}", *overrides],
    )
    return ppo.make_train(config), jax.random.key(0)


def jaxmarl_train(peer_scripts):
    import yaml

    # JaxMARL's script logs through wandb inside the program; a no-op stands in for it.
    sys.modules["wandb"] = types.SimpleNamespace(
        log=lambda *a, **k: None, init=lambda *a, **k: None
    )
    path = f"{peer_scripts}/MAPPO/mappo_rnn_mpe.py"
    spec = importlib.util.spec_from_file_location("jaxmarl_mappo_rnn", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(f"{peer_scripts}/MAPPO/config/mappo_homogenous_rnn_mpe.yaml") as f:
        config = yaml.safe_load(f)
    config["TOTAL_TIMESTEPS"] = UPDATES * STEPS_PER_UPDATE
    config["LR"] = float(config["LR"])  # YAML 1.1 reads "2e-3" as a string
    return module.make_train(config), jax.random.PRNGKey(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("ours", "jaxmarl"), required=True)
    parser.add_argument("--peer-scripts", default="/tmp/peer_scripts")
    parser.add_argument("overrides", nargs="*", help="key=value overrides (ours only)")
    args = parser.parse_args()
    if args.side == "ours":
        train, key = ours_train(args.overrides)
    else:
        train, key = jaxmarl_train(args.peer_scripts)
    start = time.perf_counter()
    compiled = jax.jit(train).lower(key).compile()
    compile_s = time.perf_counter() - start
    jax.block_until_ready(compiled(key))
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(2):
        wall, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(key))
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    print(
        f"{args.side} MAPPO-RNN {' '.join(args.overrides)}: compile {compile_s:.1f} s, "
        f"{best_cpu / UPDATES:.2f} CPU s/update, {best_wall / UPDATES:.2f} wall s/update"
    )


if __name__ == "__main__":
    main()
