"""Every packaged preset loads through the command line and builds its learner (no compile)."""

import pytest

from jaxmarl.algorithms import algorithms
from jaxmarl.baselines.multitask.tasks import MultiTaskFields
from jaxmarl.config import ConfigError, available_presets, load_config
from jaxmarl.train import parse
from tests.benchmark_scripts import load_benchmark_script

PRESETS = [name.split("/", 1) for name in available_presets()]


def test_presets_exist_for_every_mpe_scenario_for_ippo_and_mappo():
    from jaxmarl.registry import registered_envs

    mpe = [env_id for env_id in registered_envs if env_id.startswith("MPE_")]
    for alg in ("ippo", "mappo"):
        assert set(mpe) <= set(available_presets(alg)), alg


@pytest.mark.parametrize(("alg", "name"), PRESETS, ids=["/".join(p) for p in PRESETS])
def test_preset_parses_and_builds_its_learner(alg, name):
    if alg not in algorithms():
        pytest.fail(f"configs/{alg}/ has presets but no registered algorithm {alg!r}")
    command = parse([f"alg={alg}", f"preset={name}", "--no-progress"])
    learner = algorithms()[alg].make(command.config)
    assert learner.num_updates >= 1
    if isinstance(command.config, MultiTaskFields):
        # Multi-task presets are named after their env family and tasks (MPE_spread_3_4_5,
        # SMAX_3m_2s3z_...): every task (or the single target task) is of that family.
        family = name.split("_", 1)[0]
        assert all(family in spec.env_id for spec in command.config.task_specs), name
    elif name.startswith("MPE_") and "env" in type(command.config).__dataclass_fields__:
        assert command.config.env.env_id == name.removesuffix("_rnn")


def test_extends_merges_the_base_first(tmp_path):
    from tests.test_config import ExampleConfig

    (tmp_path / "base.yaml").write_text("lr: 1.0e-3\nanneal: 0.25\n")
    (tmp_path / "child.yaml").write_text("extends: base\nlr: 2.0e-3\n")
    cfg = load_config(ExampleConfig, tmp_path / "child.yaml")
    assert cfg.lr == 2.0e-3 and cfg.anneal == 0.25


def test_extends_errors_name_the_problem(tmp_path):
    from tests.test_config import ExampleConfig

    (tmp_path / "a.yaml").write_text("extends: b\n")
    (tmp_path / "b.yaml").write_text("extends: a\n")
    with pytest.raises(ConfigError, match="cycle"):
        load_config(ExampleConfig, tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: missing\n")
    with pytest.raises(ConfigError, match="extends 'missing'.*does not exist"):
        load_config(ExampleConfig, tmp_path / "c.yaml")


# Run settings the benchmarks do not take from a config (their own seeds, chunks, evaluation).
BENCH_IGNORE = [
    *(f"run.{f}" for f in ("seed", "num_seeds", "updates_per_chunk", "checkpoint_every")),
    "run.eval_every",
    "run.eval_episodes",
    "run.gif",
]


def _check_transfer_presets(bench, args, pre_preset, pre_tasks, target_preset, target, ignore):
    """The pre-training preset is ``bench.make_config`` for ``pre_tasks`` (``env.env_kwargs``,
    unused by a multi-task config, aside); the target preset (single-task form) is it for
    ``[target]`` (the benchmark names the task)."""
    from jaxmarl.config import diff_configs

    pre = parse(["alg=mtapn_vdn", f"preset={pre_preset}"]).config
    want = bench.make_config(args, pre_tasks, pre.num_updates)
    assert diff_configs(pre, want, ignore=[*ignore, "env.env_kwargs"]) == []
    got = parse(["alg=mtapn_vdn", f"preset={target_preset}"]).config
    want = bench.make_config(args, [target], got.num_updates)
    assert diff_configs(got, want, ignore=[*ignore, "tasks", "env.env_kwargs"]) == []
    assert got.task_specs == want.task_specs
    return pre, got


def test_mtapn_mpe_presets_are_the_transfer_benchmarks_settings():
    """configs/mtapn_vdn/MPE_spread_* hold what benchmarks/transfer/run_mpe_transfer.py runs."""
    import argparse

    bench = load_benchmark_script("transfer/run_mpe_transfer")
    args = argparse.Namespace(num_envs=16, width=64, lr=1e-3)
    pre, target = _check_transfer_presets(
        bench, args, "MPE_spread_3_4_5", [bench.spread(n) for n in (3, 4, 5)],
        "MPE_spread_6_target", bench.spread(6), BENCH_IGNORE,
    )  # fmt: skip
    assert (pre.num_updates, target.num_updates) == (150, 90)


def test_mtapn_smax_cpu_presets_are_the_transfer_benchmarks_settings():
    """configs/mtapn_vdn/SMAX_*_cpu* hold what benchmarks/transfer/run_smax_transfer.py ran
    (the command in benchmarks/transfer/README.md)."""
    import argparse

    bench = load_benchmark_script("transfer/run_smax_transfer")
    args = argparse.Namespace(
        num_envs=16, width=64, lr=5e-4, num_steps=32, num_epochs=4, num_minibatches=4,
        eps_decay=0.1,
    )  # fmt: skip
    pre, target = _check_transfer_presets(
        bench, args, "SMAX_3m_2s3z_3s_vs_5z_cpu",
        [bench.smax(m) for m in ("3m", "2s3z", "3s_vs_5z")],
        "SMAX_5m_vs_6m_cpu_target", bench.smax("5m_vs_6m"), BENCH_IGNORE,
    )  # fmt: skip
    assert (pre.num_updates, target.num_updates) == (800, 800)


# The overrides with which benchmarks/smax_vs_jaxmarl.py measured the 64-wide SMAX Q learners
# (benchmarks/results/smax_q_vs_jaxmarl.md, the CPU presets' column).
SMAX_CPU_OVERRIDES = [
    "run.total_timesteps=999424",
    "network.embed_dim=64",
    "network.trunk.size=64",
    "network.encoder_init_gain=1.0",
    "run.updates_per_chunk=61",
    "target_update_interval=1",
    "tau=0.1",
]


@pytest.mark.parametrize("alg", ["qmix", "vdn", "iql"])
@pytest.mark.parametrize("scenario", ["3m", "2s3z"])
def test_smax_q_cpu_presets_are_the_measured_64_wide_settings(alg, scenario):
    """configs/<alg>/HeuristicEnemySMAX_<scenario>_cpu is the full preset with exactly the
    overrides of the measured 64-wide runs, so the numbers quoted for it are its own."""
    from jaxmarl.baselines.q_learning import QLearningConfig
    from jaxmarl.config import diff_configs, preset_path

    full = f"HeuristicEnemySMAX_{scenario}"
    measured = load_config(QLearningConfig, preset_path(alg, full), SMAX_CPU_OVERRIDES)
    cpu = load_config(QLearningConfig, preset_path(alg, f"{full}_cpu"))
    assert diff_configs(measured, cpu) == []
    assert cpu.env.env_kwargs["scenario"] == scenario
    assert cpu.network.trunk.size == 64 and cpu.mixer.kind == {"iql": "none"}.get(alg, alg)


# The actor-critic presets of every env family, each trained for one tiny update through the
# command line: a preset whose network, wrapper or env options break at trace time fails here
# (the test above builds learners but compiles nothing). One compile each, so nightly.
PPO_PRESETS = [(alg, name) for alg, name in PRESETS if alg in ("ippo", "mappo")]


@pytest.mark.nightly
@pytest.mark.parametrize(("alg", "name"), PPO_PRESETS, ids=["/".join(p) for p in PPO_PRESETS])
def test_preset_trains_one_tiny_update(alg, name, tmp_path):
    from jaxmarl import train

    tiny = ["env.num_envs=2", "num_steps=8", "num_minibatches=1", "update_epochs=1"]
    run = [f"run.out_dir={tmp_path}", "run.name=tiny", "run.total_timesteps=16"]
    run += ["run.num_seeds=1", "run.checkpoint_every=0", "run.gif=false", "--no-progress"]
    assert train.main([f"alg={alg}", f"preset={name}", *tiny, *run]) == 0
    assert (tmp_path / "tiny" / "metrics.jsonl").read_text().strip()


def test_preset_config_reads_the_preset_then_env_then_overrides():
    """``jaxmarl.preset_config`` against values read from the YAML files themselves."""
    import jaxmarl
    from jaxmarl.baselines.ppo import PPOConfig
    from jaxmarl.config import preset_path

    # A preset by name, then overrides (configs/ippo/overcooked.yaml: coord_ring, 16 envs).
    config = jaxmarl.preset_config("ippo", "overcooked", ["env.num_envs=8"])
    assert (config.env.env_id, config.env.env_kwargs, config.env.num_envs) == (
        "overcooked", {"layout": "coord_ring"}, 8,
    )  # fmt: skip
    # No preset: the one named after env (its layout; PPOConfig's default env_kwargs are empty).
    by_env = jaxmarl.preset_config("ippo", env="overcooked")
    assert (by_env.env.env_kwargs, by_env.env.num_envs) == ({"layout": "coord_ring"}, 16)
    # Neither: the default env's preset, exactly as its file reads for MAPPO.
    assert jaxmarl.preset_config("mappo") == load_config(
        PPOConfig, preset_path("mappo", "MPE_simple_spread_v3")
    )
    # An env without a preset of that algorithm: the config class's defaults plus the env id.
    tag = jaxmarl.preset_config("vdn", env="MPE_simple_tag_v3", overrides=["lr=0.001"])
    assert (tag.env.env_id, tag.lr) == ("MPE_simple_tag_v3", 0.001)
    # The user's overrides come last: they win over the algorithm's fixed ones and over env.
    assert type(jaxmarl.preset_config("ippo", None, ["critic=centralised"]).critic).__name__ == (
        "CentralisedCritic"
    )
    moved = jaxmarl.preset_config(
        "ippo", env="MPE_simple_tag_v3", overrides=["env.env_id=MPE_simple_v3"]
    )
    assert moved.env.env_id == "MPE_simple_v3"
    # The command line gives the same values.
    cli = parse(["alg=ippo", "env=overcooked", "env.num_envs=8", "--no-progress"]).config
    assert (cli.env.env_kwargs, cli.env.num_envs) == ({"layout": "coord_ring"}, 8)
    assert type(cli.critic).__name__ == "LocalCritic"


def test_preset_config_applies_the_algorithms_fixed_overrides():
    import jaxmarl
    from jaxmarl.baselines.ppo import PPOConfig
    from jaxmarl.config import preset_path

    # MAPPO's preset file has a centralised critic; IPPO's fixed `critic=local` overrides it.
    mappo_file = preset_path("mappo", "MPE_simple_tag_v3")
    assert type(load_config(PPOConfig, mappo_file).critic).__name__ == "CentralisedCritic"
    assert type(jaxmarl.preset_config("ippo", mappo_file).critic).__name__ == "LocalCritic"
    assert type(jaxmarl.preset_config("vdn").mixer).__name__ == "VDNMixerConfig"
    with pytest.raises(KeyError, match="did you mean 'ippo'"):
        jaxmarl.preset_config("ipo")
    with pytest.raises(FileNotFoundError, match="overcooked"):
        jaxmarl.preset_config("ippo", "overcoked")
    with pytest.raises(ConfigError, match="lrr"):
        jaxmarl.preset_config("ippo", "overcooked", ["lrr=1"])


@pytest.mark.parametrize(
    ("alg", "name"), [("pqn_vdn", "overcooked_cnn"), ("vdn", "overcooked_cnn")]
)
def test_overcooked_vdn_presets_regress_jaxmarls_team_reward(alg, name):
    # JaxMARL's VDN scripts regress "__all__": the shared soup reward counted once plus both
    # agents' shaped rewards times the annealed coefficient c.
    import jax.numpy as jnp

    from jaxmarl import preset_config

    config = preset_config(alg, name)
    soup, shaped, anneal = 20.0, jnp.array([3.0, 5.0]), 0.25  # anneal: c at some env step
    # What the rollout stores per agent: its reward plus its shaping times the coefficient.
    per_agent = soup + config.env.reward_shaping.scale * anneal * shaped
    team = config.mixer.team_reward(per_agent, config.team_reward)
    assert float(team[0]) == pytest.approx(soup + anneal * float(shaped.sum()))
