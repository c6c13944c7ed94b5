"""Choices as tagged unions: readable YAML / CLI forms, errors that name the fix, save / load,
config format 2 and the migration of format-1 run directories."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from jaxmarl import train
from jaxmarl.algorithms import algorithm
from jaxmarl.baselines.ppo import CentralisedCritic, LocalCritic, PPOConfig
from jaxmarl.baselines.q_learning import LambdaReturns, NStepReturns, PQNConfig, QLearningConfig
from jaxmarl.config import (
    ConfigError,
    config_from_file,
    config_to_dict,
    diff_configs,
    load_config,
    preset_path,
    save_config,
)
from jaxmarl.config_migration import CONFIG_FORMAT, migrate
from jaxmarl.networks.mixers import NoMixerConfig, QMIXMixerConfig, VDNMixerConfig
from jaxmarl.training.config import GRUTrunkConfig, MLPTrunkConfig, NetworkConfig

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    "overrides, field, expected",
    [
        (["network.trunk=gru"], "network.trunk", GRUTrunkConfig()),
        (["network.trunk=gru", "network.trunk=mlp"], "network.trunk", MLPTrunkConfig()),
        (["network.trunk=gru", "network.trunk.size=64"], "network.trunk", GRUTrunkConfig(size=64)),
        (
            ["network.trunk={kind: gru, size: 64, post_sizes: [128]}"],
            "network.trunk",
            GRUTrunkConfig(size=64, post_sizes=(128,)),
        ),
        (["network.trunk.sizes=[32,32]"], "network.trunk", MLPTrunkConfig(sizes=(32, 32))),
        (["critic=centralised"], "critic", CentralisedCritic(agent_id=True)),
        (
            ["critic=centralised", "critic.agent_id=false"],
            "critic",
            CentralisedCritic(agent_id=False),
        ),
        (
            ["critic={kind: centralised, agent_id: false}"],
            "critic",
            CentralisedCritic(agent_id=False),
        ),
        (["critic=centralised", "critic=local"], "critic", LocalCritic()),
    ],
)
def test_ppo_choices_from_overrides(overrides, field, expected):
    config = load_config(PPOConfig, overrides=overrides)
    section, _, name = field.rpartition(".")
    assert getattr(getattr(config, section) if section else config, name) == expected


@pytest.mark.parametrize(
    "overrides, mixer, returns",
    [
        ([], QMIXMixerConfig(), NStepReturns(n=1)),
        (["mixer=vdn"], VDNMixerConfig(), NStepReturns(n=1)),
        (["mixer=none"], NoMixerConfig(), NStepReturns(n=1)),
        (["mixer.embed_dim=64"], QMIXMixerConfig(embed_dim=64), NStepReturns(n=1)),
        (
            ["mixer=vdn", "mixer=qmix", "mixer.init_scale=0.5"],
            QMIXMixerConfig(init_scale=0.5),
            None,
        ),
        (["returns=lambda"], None, LambdaReturns(td_lambda=0.9)),
        (["returns=lambda", "returns.td_lambda=0.7"], None, LambdaReturns(td_lambda=0.7)),
        (["returns.n=3"], None, NStepReturns(n=3)),
        (["returns={kind: lambda, td_lambda: 0.5}"], None, LambdaReturns(td_lambda=0.5)),
    ],
)
def test_q_choices_from_overrides(overrides, mixer, returns):
    config = load_config(QLearningConfig, overrides=overrides)
    assert mixer is None or config.mixer == mixer
    assert returns is None or config.returns == returns


def test_naming_the_current_kind_keeps_its_fields_another_kind_starts_from_its_defaults():
    # The algorithms' fixed overrides (mixer=qmix for alg=qmix) come after the preset: they
    # must not reset what the preset set.
    qmix = load_config(QLearningConfig, preset_path("qmix", "MPE_simple_spread_v3"), ["mixer=qmix"])
    assert qmix.mixer == QMIXMixerConfig(embed_dim=32, hypernet_hidden_dim=128, init_scale=1e-3)
    tuned = load_config(QLearningConfig, None, ["mixer.embed_dim=8", "mixer=qmix"])
    assert tuned.mixer.embed_dim == 8
    switched = load_config(QLearningConfig, None, ["mixer.embed_dim=8", "mixer=vdn", "mixer=qmix"])
    assert switched.mixer == QMIXMixerConfig()


def test_yaml_forms(tmp_path):
    preset = tmp_path / "preset.yaml"
    preset.write_text(
        "network:\n  trunk: gru\n"
        "mixer:\n  kind: qmix\n  embed_dim: 16\n"
        "returns:\n  kind: lambda\n  td_lambda: 0.5\n"
    )
    config = load_config(QLearningConfig, preset)
    assert config.network.trunk == GRUTrunkConfig(size=64)  # the default was a GRU 64 already
    assert config.mixer == QMIXMixerConfig(embed_dim=16)
    assert config.returns == LambdaReturns(td_lambda=0.5)
    # A preset that extends another may set fields of the choice it inherits.
    child = tmp_path / "child.yaml"
    child.write_text(
        "extends: preset\nnetwork:\n  trunk:\n    size: 32\nmixer:\n  init_scale: 0.1\n"
    )
    config = load_config(QLearningConfig, child)
    assert config.network.trunk == GRUTrunkConfig(size=32)
    assert config.mixer == QMIXMixerConfig(embed_dim=16, init_scale=0.1)


@pytest.mark.parametrize(
    "config_cls, overrides, message",
    [
        (
            PPOConfig,
            ["network.trunk.size=64"],
            "config key 'network.trunk.size' in override 'network.trunk.size=64' is a field of "
            "network.trunk=gru, but network.trunk is mlp there (its fields: sizes). Choose that "
            "variant first (network.trunk=gru before network.trunk.size=...) or set both at "
            "once: network.trunk={kind: gru, size: ...}",
        ),
        (
            QLearningConfig,
            ["mixer=vdn", "mixer.embed_dim=64"],
            "mixer is vdn there (it has no fields)",
        ),
        (PPOConfig, ["network.trunk=lstm"], "unknown kind 'lstm' for config key 'network.trunk'"),
        (QLearningConfig, ["mixer=qmx"], "Did you mean mixer=qmix? Choose one of none, vdn, qmix"),
        (QLearningConfig, ["returns=mc"], "Choose one of n_step, lambda"),
        (PPOConfig, ["critic={kind: local, agent_id: false}"], "is a field of critic=centralised"),
        (PPOConfig, ["network.trunk.size=64", "network.trunk=gru"], "Choose that variant first"),
        (PPOConfig, ["network.trunk.sizez=[8]"], "Did you mean 'network.trunk.sizes'?"),
        (PPOConfig, ["network.trunk=[8]"], "write network.trunk=KIND (one of mlp, gru)"),
        (
            PPOConfig,
            ["network.trunk=gru", "network.trunk.size=big"],
            "invalid value for config key 'network.trunk.size' in override "
            "'network.trunk.size=big'",
        ),
        (PPOConfig, ["critic_agent_id=false"], "write critic.agent_id (with critic=centralised)"),
        (QLearningConfig, ["n_step=3"], "write returns.n (with returns=n_step)"),
        (QLearningConfig, ["td_lambda=0.5"], "write returns.td_lambda (with returns=lambda)"),
        (
            QLearningConfig,
            ["network.gru_size=8"],
            "write network.trunk.size (with network.trunk=gru)",
        ),
    ],
)
def test_wrong_kinds_and_fields_name_the_fix(config_cls, overrides, message):
    with pytest.raises(ConfigError) as error:
        load_config(config_cls, overrides=overrides)
    assert message in str(error.value)


def test_invalid_values_of_a_variant_fail_in_its_validation():
    with pytest.raises(ValueError, match=r"mixer.embed_dim must be > 0, got -1"):
        load_config(QLearningConfig, overrides=["mixer.embed_dim=-1"])
    with pytest.raises(ValueError, match=r"network.trunk.sizes must be > 0"):
        load_config(PPOConfig, overrides=["network.trunk.sizes=[64,0]"])
    # An empty list is a trunk without layers, valid on its own (the Hanabi FF preset).
    assert load_config(PPOConfig, overrides=["network.trunk.sizes=[]"]).network.trunk.sizes == ()


def test_save_writes_tags_and_the_format_and_reads_back(tmp_path):
    config = load_config(
        QLearningConfig,
        overrides=["mixer.embed_dim=16", "returns=lambda", "returns.td_lambda=0.6"],
    )
    path = save_config(config, tmp_path / "config.yaml")
    text = path.read_text()
    first = text.splitlines()[0]
    assert f"config format {CONFIG_FORMAT}, jaxmarl " in first
    assert "mixer:\n  kind: qmix\n  embed_dim: 16\n" in text
    assert "returns:\n  kind: lambda\n  td_lambda: 0.6\n" in text
    assert "  trunk:\n    kind: gru\n    size: 64\n" in text
    assert config_from_file(QLearningConfig, path) == config
    # The saved file also works as a preset, and overrides apply to it.
    again = load_config(QLearningConfig, path, ["mixer=vdn"])
    assert again.mixer == VDNMixerConfig() and again.returns == config.returns
    assert config_to_dict(config)["mixer"] == {
        "kind": "qmix",
        "embed_dim": 16,
        "hypernet_hidden_dim": 128,
        "init_scale": 1e-3,
    }


def test_diff_names_the_changed_kind_and_fields():
    a = load_config(PPOConfig, overrides=["critic=centralised"])
    b = load_config(PPOConfig, overrides=["critic=centralised", "critic.agent_id=false"])
    assert diff_configs(a, b) == ["critic.agent_id: True -> False"]
    c = load_config(PPOConfig, overrides=["network.trunk=gru"])
    assert diff_configs(a, c, ignore=["critic"]) == [
        "network.trunk.kind: 'mlp' -> 'gru'",
        "network.trunk.sizes: [64] -> <absent>",
        "network.trunk.size: <absent> -> 128",
        "network.trunk.post_sizes: <absent> -> []",
    ]


# --------------------------------------------------------------------------- config formats
@pytest.mark.parametrize(
    "fixture, config_cls, alg, preset",
    [
        ("config_format1_qmix.yaml", QLearningConfig, "qmix", "HeuristicEnemySMAX_3m"),
        ("config_format1_mappo.yaml", PPOConfig, "mappo", "MPE_simple_spread_v3_rnn"),
    ],
)
def test_format_1_run_configs_read_as_the_presets_they_were_written_from(
    fixture, config_cls, alg, preset
):
    # The fixtures are what the previous version saved for these presets: they must read back
    # as the same configs the rewritten presets give now.
    old = config_from_file(config_cls, DATA / fixture)
    fixed = algorithm(alg).fixed
    assert old == load_config(config_cls, preset_path(alg, preset), list(fixed))


def test_format_1_run_directory_resumes_from_the_command_line(tmp_path):
    run_dir = tmp_path / "old_run"
    run_dir.mkdir()
    shutil.copy(DATA / "config_format1_qmix.yaml", run_dir / "config.yaml")
    (run_dir / "run.json").write_text(json.dumps({"alg": "qmix"}))
    command = train.parse(["--resume", str(run_dir)])
    assert command.resume and command.config.mixer == QMIXMixerConfig(
        embed_dim=64, hypernet_hidden_dim=256, init_scale=1e-3
    )
    assert command.config.network.trunk == GRUTrunkConfig(size=512)
    # Overrides that restate the saved values are accepted; changing one is refused.
    same = train.parse(["--resume", str(run_dir), "mixer.embed_dim=64", "returns.n=1"])
    assert same.config == command.config
    with pytest.raises(train.UsageError, match=r"mixer.embed_dim: 64 -> 8"):
        train.parse(["--resume", str(run_dir), "mixer.embed_dim=8"])


def test_migration_of_flat_choice_fields():
    choices = {"network.trunk", "mixer", "returns", "critic"}
    old = {
        "network": {"trunk": "gru", "trunk_sizes": [64], "gru_size": 32, "gru_post_sizes": [8]},
        "mixer": "vdn",
        "mixer_embed_dim": 32,
        "mixer_hypernet_hidden_dim": 128,
        "mixer_init_scale": 0.001,
        "returns": "lambda",
        "n_step": 1,
        "td_lambda": 0.3,
        "critic": "centralised",
        "critic_agent_id": False,
        "lr": 0.1,
    }
    assert migrate(old, 1, choices) == {
        "network": {"trunk": {"kind": "gru", "size": 32, "post_sizes": [8]}},
        "mixer": "vdn",
        "returns": {"kind": "lambda", "td_lambda": 0.3},
        "critic": {"kind": "centralised", "agent_id": False},
        "lr": 0.1,
    }
    # A partial (preset) file without the choice keeps its fields for the chosen variant.
    assert migrate({"network": {"gru_size": 64}}, 1, choices) == {
        "network": {"trunk": {"size": 64}}
    }
    assert migrate({"mixer": "qmix", "mixer_embed_dim": 8}, 1, choices) == {
        "mixer": {"kind": "qmix", "embed_dim": 8}
    }
    # Format-2 data and config classes without the choice are left alone.
    new = {"network": {"trunk": {"kind": "mlp", "sizes": [8]}}, "mixer": "qmix"}
    assert migrate(new, 1, choices) == new
    assert migrate({"network": {"trunk_sizes": [8]}}, 1, set()) == {"network": {"trunk_sizes": [8]}}
    assert migrate(new, 2, choices) == new
    with pytest.raises(ValueError, match="config format 3 is unknown"):
        migrate(new, 3, choices)


def test_a_newer_format_fails_naming_the_version_that_wrote_it(tmp_path):
    path = save_config(load_config(PQNConfig), tmp_path / "config.yaml")
    lines = path.read_text().splitlines()
    lines[0] = lines[0].replace(
        f"config format {CONFIG_FORMAT}, jaxmarl 0.1.0.dev0", "config format 9, jaxmarl 7.0.0"
    )
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        ConfigError, match=r"written by jaxmarl 7.0.0 in config format 9; this jaxmarl"
    ):
        config_from_file(PQNConfig, path)


def test_network_config_alone_and_dataclass_replace():
    # Configs built in code take the variant objects; replace swaps one choice.
    net = NetworkConfig(trunk=GRUTrunkConfig(size=8))
    assert net.recurrent and not dataclasses.replace(net, trunk=MLPTrunkConfig()).recurrent
    assert load_config(NetworkConfig, overrides=["trunk=gru", "trunk.size=8"]) == net
