"""Time per PPO update, ours or JaxMARL 0.2.0's script, one seed, compile excluded.

Wall-clock throughput on a shared machine drifts with other people's load; CPU time of the
process usually drifts less, so both are printed (check ``uptime`` first and say the load).
Each side runs one seed of a workload's
published settings as one jitted ``train`` (init + a ``lax.scan`` of ``--updates`` updates,
vmapped over a seed axis of 1 as both training drivers do; ``--no-vmap``: without it),
compiled first, best of ``--repeats`` calls. Ours runs ``make_train`` of the learner the train
command builds from the same preset (the update is the one the train command's chunks scan).
For the IPPO workloads JaxMARL's orthogonal init (seconds of LAPACK QR on a small CPU, once per
run) is replaced by a Gaussian init of the same scale, so that the time is the updates'; its
update program is unchanged. ``--profile DIR`` traces one more call with ``jax.profiler``
(per-thunk times in ``DIR/plugins/profile/*/perfetto_trace.json.gz``); ``--conv xla`` gives
ours' CNN encoders XLA's convolution (on a CPU as before ``patch_conv``), ``--conv patches``
gives them ``patch_conv`` on any backend (``JAXMARL_CONV``, see ``jaxmarl.networks.conv``).
The host's speed can drift: run the sides round-robin and compare within a round. Workloads:

* ``mappo_rnn_mpe``: MAPPO-RNN on MPE simple_spread (128 envs x 128 steps, 128 dense + GRU
  128, 4 epochs x 4 minibatches; JaxMARL's ``MAPPO/mappo_rnn_mpe.py``), 3 updates.
* ``ippo_overcooked``: IPPO-FF on Overcooked (``preset=overcooked``, JaxMARL's
  ``IPPO/ippo_ff_overcooked.py`` with ``ippo_ff_overcooked.yaml``: 16 envs x 128 steps, tanh
  64-64, 4 epochs x 4 minibatches), ``--layout`` (default forced_coord).
* ``ippo_cnn_overcooked``: IPPO with the CNN on Overcooked (``preset=overcooked_cnn``,
  JaxMARL's ``IPPO/ippo_cnn_overcooked.py`` with ``ippo_cnn_overcooked.yaml``: 64 envs x 256
  steps, relu, convolutions 32@5x5, 32@3x3, 32@3x3 -> dense 64, 4 epochs x 16 minibatches),
  ``--layout`` (default counter_circuit, the YAML's); ``--num-envs`` shrinks the batch on both
  sides alike. The script calls ``env.action_space()`` with no agent, which JaxMARL 0.2.0's
  Overcooked rejects: the runner defaults that argument to ``agent_0``.
* ``ippo_rnn_overcooked_v2``: IPPO with a CNN and a GRU on OvercookedV2
  (``preset=overcooked_v2_rnn``, JaxMARL's ``IPPO/ippo_rnn_overcooked_v2.py`` with its YAML:
  grounded_coord_simple with a 5 x 5 view, 256 envs x 256 steps, convolutions 128@1x1,
  128@1x1, 8@1x1, 16@3x3, 32@3x3, 32@3x3 -> dense 128 -> GRU 128, 4 epochs x 64 minibatches);
  ``--num-envs`` as above.
* ``ippo_mpe``: IPPO-FF on MPE simple_spread (``configs/ippo/MPE_simple_spread_v3.yaml``, the
  same sizes as the Overcooked preset; ours only).
* ``ippo_rnn_storm_2p``: IPPO with a CNN and a GRU on STORM, 2 players
  (``configs/ippo/storm_2p.yaml``: 48 envs x 152 steps, one parameter set per player; ours
  only, JaxMARL publishes no STORM script).
* ``ippo_hanabi``: IPPO-FF on 2-player Hanabi (``configs/ippo/hanabi.yaml``, JaxMARL's
  ``IPPO/ippo_ff_hanabi.py`` with ``ippo_ff_hanabi.yaml``: 1024 envs x 128 steps, relu 512-512,
  4 epochs x 4 minibatches); ``--num-envs`` shrinks the batch on both sides alike.
* ``ippo_rnn_hanabi``: IPPO-GRU on 2-player Hanabi (``configs/ippo/hanabi_rnn.yaml``,
  JaxMARL's ``IPPO/ippo_rnn_hanabi.py`` with ``ippo_rnn_hanabi.yaml``: 1024 envs x 128 steps,
  relu 128 -> GRU 128 shared, a 128 layer per head); ``--num-envs`` as above.
* ``mappo_hanabi`` / ``mappo_rnn_hanabi``: MAPPO-FF / -GRU on 2-player Hanabi
  (``configs/mappo/hanabi{,_rnn}.yaml``; JaxMARL's ``MAPPO/mappo_{ff,rnn}_hanabi.py`` with
  ``mappo_homogenous_{ff,rnn}_hanabi.yaml``: 1024 envs x 128 steps, world-state critic, two
  optimisers); ``--num-envs`` as above.
* ``ippo_rnn_jaxnav``: IPPO-GRU on JaxNav's default 2-robot task with discrete actions
  (``configs/ippo/jaxnav.yaml``, the JaxNav paper's settings and network, env kwargs back to
  the defaults plus ``act_type=Discrete``, as ``jaxnav_ippo_vs_jaxmarl.py`` runs it), against
  JaxMARL's generic ``IPPO/ippo_rnn.py`` (relu 512 -> GRU 512 shared, a 512 layer per head;
  the same network). The paper's 256 envs x 512 steps; ``--num-envs`` as above. The peer
  YAML, ``IPPO/config/ippo_rnn_jaxnav.yaml`` under ``--peer-scripts``, is written by
  ``jaxnav_ippo_vs_jaxmarl.py --write-peer-config PATH``. JaxMARL's script plays one greedy
  500-step episode of one env inside ``train``, which its time per update includes (one
  env's rollout, small beside an update's 16 x 512 env steps and SGD).

::

    python benchmarks/ppo_update_cpu_time.py --side ours --workload ippo_overcooked
    cd /tmp && /tmp/peer/bin/python -I /path/to/benchmarks/ppo_update_cpu_time.py \\
        --side jaxmarl --workload ippo_overcooked --peer-scripts /tmp/peer_scripts \\
        --extra-path /tmp/peer_extra

(``--peer-scripts``: JaxMARL's ``baselines/{MAPPO,IPPO}`` fetched there; ``--extra-path``: a
folder put first on ``sys.path``, e.g. one holding distrax for the peer, since ``-I`` ignores
``PYTHONPATH``.)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import types

WORKLOADS = {
    # name: (ours alg, ours preset, ours fixed overrides, (envs, steps) per update,
    #        peer script, peer YAML)
    "mappo_rnn_mpe": (
        "mappo",
        "MPE_simple_spread_v3_rnn",
        ["critic=centralised"],
        (128, 128),
        "MAPPO/mappo_rnn_mpe.py",
        "MAPPO/config/mappo_homogenous_rnn_mpe.yaml",
    ),
    "ippo_overcooked": (
        "ippo",
        "overcooked",
        [],
        (16, 128),
        "IPPO/ippo_ff_overcooked.py",
        "IPPO/config/ippo_ff_overcooked.yaml",
    ),
    "ippo_cnn_overcooked": (
        "ippo",
        "overcooked_cnn",
        [],
        (64, 256),
        "IPPO/ippo_cnn_overcooked.py",
        "IPPO/config/ippo_cnn_overcooked.yaml",
    ),
    "ippo_rnn_overcooked_v2": (
        "ippo",
        "overcooked_v2_rnn",
        [],
        (256, 256),
        "IPPO/ippo_rnn_overcooked_v2.py",
        "IPPO/config/ippo_rnn_overcooked_v2.yaml",
    ),
    "ippo_mpe": ("ippo", "MPE_simple_spread_v3", [], (16, 128), None, None),
    "ippo_rnn_storm_2p": ("ippo", "storm_2p", [], (48, 152), None, None),
    "ippo_hanabi": (
        "ippo",
        "hanabi",
        [],
        (1024, 128),
        "IPPO/ippo_ff_hanabi.py",
        "IPPO/config/ippo_ff_hanabi.yaml",
    ),
    "ippo_rnn_hanabi": (
        "ippo",
        "hanabi_rnn",
        [],
        (1024, 128),
        "IPPO/ippo_rnn_hanabi.py",
        "IPPO/config/ippo_rnn_hanabi.yaml",
    ),
    "mappo_hanabi": (
        "mappo",
        "hanabi",
        [],
        (1024, 128),
        "MAPPO/mappo_ff_hanabi.py",
        "MAPPO/config/mappo_homogenous_ff_hanabi.yaml",
    ),
    "mappo_rnn_hanabi": (
        "mappo",
        "hanabi_rnn",
        [],
        (1024, 128),
        "MAPPO/mappo_rnn_hanabi.py",
        "MAPPO/config/mappo_homogenous_rnn_hanabi.yaml",
    ),
    "ippo_rnn_jaxnav": (
        "ippo",
        "jaxnav",
        [
            # the env's default 2-robot task (the preset sets the paper's 4-robot one), with
            # JaxMARL's discrete actions, which its ippo_rnn.py needs
            "~env.env_kwargs.num_agents",
            "~env.env_kwargs.goal_radius",
            "~env.env_kwargs.map_params",
            "+env.env_kwargs.act_type=Discrete",
        ],
        (256, 512),
        "IPPO/ippo_rnn.py",
        "IPPO/config/ippo_rnn_jaxnav.yaml",
    ),
}


OVERCOOKED = {"ippo_overcooked": "forced_coord", "ippo_cnn_overcooked": "counter_circuit"}


def ours_train(workload, updates, layout, overrides, num_envs=None):
    from jaxmarl.algorithms import algorithm
    from jaxmarl.config import load_config, preset_path
    from jaxmarl.cpu_rng import use_fast_cpu_rng
    from jaxmarl.training.learner import make_train_from

    use_fast_cpu_rng()  # the update as the train command compiles it (docs/cpu_rng.md)
    import jax

    alg, preset, fixed, (envs, steps), _, _ = WORKLOADS[workload]
    per_update = (num_envs or envs) * steps
    algo = algorithm(alg)
    extra = [f"env.env_kwargs.layout={layout}"] if workload in OVERCOOKED else []
    if num_envs:
        extra.append(f"env.num_envs={num_envs}")
    config = load_config(
        algo.config_class,
        preset_path(alg, preset),
        [
            *algo.fixed,
            *fixed,
            *extra,
            f"run.total_timesteps={updates * per_update}",
            *overrides,
        ],
    )
    return make_train_from(algo.make(config)), jax.random.key(0)


def jaxmarl_train(workload, updates, layout, peer_scripts, num_envs=None):
    import jax
    import yaml

    # JaxMARL's scripts import hydra, omegaconf, matplotlib and wandb (the Overcooked one logs
    # through wandb inside the program); stubs stand in for them, as in ppo_vs_jaxmarl.py.
    def stub(name, **attrs):
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module

    stub("wandb", log=lambda *a, **k: None, init=lambda *a, **k: None)
    stub("hydra", main=lambda *a, **k: lambda f: f)
    stub("omegaconf", OmegaConf=types.SimpleNamespace(to_container=lambda c: c))
    try:
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        stub("matplotlib")
        stub("matplotlib.pyplot")
    _, _, _, (envs, steps), script, config_path = WORKLOADS[workload]
    per_update = (num_envs or envs) * steps
    if script is None:
        raise SystemExit(f"--side jaxmarl has no script for {workload}")
    spec = importlib.util.spec_from_file_location("jaxmarl_peer_script", f"{peer_scripts}/{script}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if workload != "mappo_rnn_mpe" and hasattr(module, "orthogonal"):
        # Its init draws flax's orthogonal matrices through LAPACK QR, which takes seconds per
        # 650 x 64 kernel on this CPU (once per run, not per update; ``--updates`` would have to
        # be large to amortise it). A Gaussian init of the same scale keeps every update's
        # program as it is.
        module.orthogonal = lambda scale=1.0: jax.nn.initializers.variance_scaling(
            float(scale) ** 2, "fan_in", "normal"
        )
    with open(f"{peer_scripts}/{config_path}") as f:
        config = yaml.safe_load(f)
    for name, value in config.items():  # YAML 1.1 reads "2e-3" as a string, hydra a float
        if isinstance(value, str):
            try:
                config[name] = float(value)
            except ValueError:
                pass
    if num_envs:
        config["NUM_ENVS"] = num_envs
    config["TOTAL_TIMESTEPS"] = updates * per_update
    config.setdefault("WANDB_MODE", "disabled")  # ippo_rnn.py reads it inside train
    if workload == "ippo_cnn_overcooked":
        # The script calls ``env.action_space()`` without an agent, which JaxMARL 0.2.0's
        # Overcooked rejects (every agent has the same space); default the argument to one.
        from jaxmarl.environments.overcooked import Overcooked

        action_space = Overcooked.action_space
        Overcooked.action_space = lambda self, agent="agent_0": action_space(self, agent)
    if workload in OVERCOOKED:
        from jaxmarl.environments.overcooked import overcooked_layouts

        config["ENV_KWARGS"] = {**config["ENV_KWARGS"], "layout": overcooked_layouts[layout]}
    return module.make_train(config), jax.random.PRNGKey(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", choices=("ours", "jaxmarl"), required=True)
    parser.add_argument("--workload", choices=tuple(WORKLOADS), default="mappo_rnn_mpe")
    parser.add_argument("--layout", default=None, help=f"Overcooked only (default: {OVERCOOKED})")
    parser.add_argument(
        "--num-envs",
        type=int,
        default=None,
        help="envs per update on both sides (default: the preset's)",
    )
    parser.add_argument("--updates", type=int, default=None, help="default 3 (MAPPO), else 10")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-vmap", action="store_true", help="jit train(key) without a seed axis")
    parser.add_argument("--peer-scripts", default="/tmp/peer_scripts")
    parser.add_argument("--extra-path", default="", help="put first on sys.path (peer only)")
    parser.add_argument(
        "--profile", default="", help="then trace one more run into this folder (perfetto JSON)"
    )
    parser.add_argument(
        "--conv",
        choices=("xla", "patches"),
        default=None,
        help="ours' CNN convolution (default: the backend's, patch_conv on a CPU)",
    )
    parser.add_argument("overrides", nargs="*", help="key=value overrides (ours only)")
    args = parser.parse_args()
    if args.conv:
        os.environ["JAXMARL_CONV"] = args.conv
    if args.extra_path:
        sys.path.insert(0, args.extra_path)
    import jax

    layout = args.layout or OVERCOOKED.get(args.workload)
    updates = args.updates or (3 if args.workload == "mappo_rnn_mpe" else 10)
    if args.side == "ours":
        train, key = ours_train(args.workload, updates, layout, args.overrides, args.num_envs)
    else:
        train, key = jaxmarl_train(args.workload, updates, layout, args.peer_scripts, args.num_envs)
    if args.no_vmap:
        keys = key
    else:  # one seed, vmapped as the drivers do
        keys, train = jax.tree.map(lambda k: k[None], key), jax.vmap(train)
    start = time.perf_counter()
    compiled = jax.jit(train).lower(keys).compile()
    compile_s = time.perf_counter() - start
    jax.block_until_ready(compiled(keys))
    walls, cpus = [], []
    for _ in range(args.repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(compiled(keys))
        walls.append((time.perf_counter() - wall) / updates * 1e3)
        cpus.append((time.process_time() - cpu) / updates * 1e3)
    if args.profile:
        with jax.profiler.trace(args.profile, create_perfetto_trace=True):
            jax.block_until_ready(compiled(keys))
    print(
        f"{args.side} {args.workload} {' '.join(args.overrides)}: compile {compile_s:.1f} s, "
        f"{updates} updates; ms/update wall best {min(walls):.1f} "
        f"(all {', '.join(f'{w:.1f}' for w in walls)}), CPU best {min(cpus):.1f}"
    )


if __name__ == "__main__":
    main()
