"""Pure pieces of benchmarks/jaxnav_ippo_vs_jaxmarl.py: both sides train the same config, and
the finals skip updates in which no episode ended. The runs need the peer venv and script."""

import argparse
from pathlib import Path

import pytest

from jaxmarl.baselines.ppo.config import PPOConfig
from jaxmarl.config import load_config, preset_path
from tests.benchmark_scripts import BENCHMARKS, load_benchmark_script


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports ppo_vs_jaxmarl as a sibling
    return load_benchmark_script("jaxnav_ippo_vs_jaxmarl")


def driver_args(**changes):
    """The driver's command-line arguments that ``ours_command`` reads."""
    defaults = dict(
        num_envs=16,
        num_steps=64,
        seeds=3,
        updates_per_chunk=8,
        gif=False,
        out_dir=Path("runs"),
        ours_override=[],
        seed=0,
    )
    return argparse.Namespace(**{**defaults, **changes})


def test_our_command_and_the_peer_config_train_the_same_ippo(bench):
    args = driver_args()
    command = bench.ours_command(args, 16_384, "probe")
    preset = next(c.split("=", 1)[1] for c in command if c.startswith("preset="))
    overrides = [c for c in command[3:] if "=" in c or c.startswith("~")]
    overrides = [c for c in overrides if not c.startswith(("alg=", "preset="))]
    ours = load_config(PPOConfig, preset_path("ippo", preset), overrides)
    peer = bench.peer_config(args.num_envs, args.num_steps)
    # The env: the default 2-robot task with discrete actions on both sides.
    assert ours.env.env_id == peer["ENV_NAME"] == "jaxnav"
    assert ours.env.env_kwargs == peer["ENV_KWARGS"] == {"act_type": "Discrete"}
    assert (ours.env.num_envs, ours.num_steps) == (peer["NUM_ENVS"], peer["NUM_STEPS"])
    assert ours.run.total_timesteps == 16_384 and ours.run.eval_episodes == 0
    assert ours.run.seed == peer["SEED"] == 0
    # ippo_rnn.py's GAE stops at every episode end: a time limit counts as terminal.
    assert not ours.bootstrap_truncation
    # The learning settings: the preset's values are the peer's.
    pairs = {
        "lr": "LR",
        "update_epochs": "UPDATE_EPOCHS",
        "num_minibatches": "NUM_MINIBATCHES",
        "gamma": "GAMMA",
        "gae_lambda": "GAE_LAMBDA",
        "clip_eps": "CLIP_EPS",
        "ent_coef": "ENT_COEF",
        "vf_coef": "VF_COEF",
        "max_grad_norm": "MAX_GRAD_NORM",
        "anneal_lr": "ANNEAL_LR",
    }
    assert {k: getattr(ours, k) for k in pairs} == {k: peer[v] for k, v in pairs.items()}
    assert not peer["SCALE_CLIP_EPS"]
    width = peer["HIDDEN_SIZE"]
    network = ours.network
    assert network.embed_dim == network.trunk.size == width and network.encoder_sizes == ()
    assert network.activation == "relu"
    # ippo_rnn.py's network: embedding and GRU shared by actor and critic, then a layer of the
    # same width at orthogonal gain 2 in each head.
    assert ours.critic.shares_encoder and ours.critic.shares_trunk
    assert network.trunk.post_sizes == () and network.head_sizes == (width,)
    assert network.head_init_gain == 2.0


def test_finals_average_the_last_updates_that_ended_episodes(bench):
    curve = [
        {"episodes": 2, "success_rate": 0.5},
        {"episodes": 1, "success_rate": 1.0},
        {"episodes": 0, "success_rate": 0.0},  # nothing ended: no value
    ]
    assert bench.finals({"curves": [curve]}, last=1) == [1.0]
    assert bench.finals({"curves": [curve, curve[:1]]}, last=2) == [0.75, 0.5]


def test_a_variant_of_our_side_is_stored_run_and_reported_apart(bench):
    args = driver_args(ours_override=["bootstrap_truncation=false"], seed=1)
    command = bench.ours_command(args, 16_384, "probe")
    assert command[-2] == "bootstrap_truncation=false" and "run.seed=1" in command
    assert bench.peer_config(16, 64, args.seed)["SEED"] == 1
    assert bench.ours_side(args) == "ours:bootstrap_truncation=false"
    assert bench.ours_run_name(args, 16_384) == "ours_ippo_jaxnav_16384_bootstrap_truncation_false"
    args.ours_override = []
    assert (bench.ours_side(args), bench.ours_run_name(args, 16_384)) == (
        "ours",
        "ours_ippo_jaxnav_16384",
    )

    def record(success):
        curve = [{"episodes": 1, "success_rate": success, "episode_return": -1.0}]
        return dict(
            curves=[curve], env_steps_per_seed=1, seeds=1, steps_per_s=1.0, compile_s=1, wall_s=1
        )

    results = {
        "jaxmarl": record(0.3),
        "ours:bootstrap_truncation=false": record(0.2),
        "ours": record(0.1),
    }
    rows = bench.table(results, last=1).splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == [
        "| ours",
        "| ours, bootstrap_truncation=false",
        "| JaxMARL 0.2.0 `ippo_rnn.py`",
    ]
    assert [r.split(" | ")[3] for r in rows] == ["0.100", "0.200", "0.300"]


def test_pooled_seed_sets_join_curves_and_rate_over_both_runs(bench):
    def run(seeds, rate, tag):
        return {
            "curves": [[{"tag": tag}]] * seeds,
            "seeds": seeds,
            "env_steps_per_seed": 100,
            "steps_per_s": rate,
            "compile_s": 1.0,
            "wall_s": 10.0,
        }

    pooled = bench.pool(
        {"ours": run(3, 100.0, "a"), "jaxmarl": run(3, 1.0, "x")}, {"ours": run(1, 50.0, "b")}
    )
    assert list(pooled) == ["ours"]  # a side run in one set only is not pooled
    ours = pooled["ours"]
    assert ours["seeds"] == 4 and [c[0]["tag"] for c in ours["curves"]] == ["a"] * 3 + ["b"]
    # 400 env steps in 3 s + 2 s of training.
    assert ours["steps_per_s"] == 80.0 and ours["wall_s"] == 20.0
