"""load_config: defaults, YAML preset, overrides, loud errors; saving, diffing and presets."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import uuid
from typing import Any

import pytest

from jaxmarl.config import (
    ConfigError,
    config_from_file,
    config_to_dict,
    configs_dir,
    diff_configs,
    load_config,
    preset_path,
    save_config,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnvSection:
    env_id: str = "MPE_simple_spread_v3"
    num_envs: int = 16
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True)
class NetSection:
    trunk_sizes: tuple[int, ...] = (64,)
    activation: str = "tanh"
    layer_norm: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExampleConfig:
    lr: float = 2.5e-4
    clip_eps: float = 0.2
    num_minibatches: int = 4
    loggers: tuple[str, ...] = ("jsonl",)
    anneal: float | None = None
    env: EnvSection = dataclasses.field(default_factory=EnvSection)
    network: NetSection = dataclasses.field(default_factory=NetSection)

    def __post_init__(self):
        if self.env.num_envs % self.num_minibatches:
            raise ValueError(
                f"env.num_envs={self.env.num_envs} is not divisible by "
                f"num_minibatches={self.num_minibatches}; choose num_minibatches in (1, 2, 4)"
            )


@dataclasses.dataclass(frozen=True, kw_only=True)
class RequiredConfig:
    seed: int


PRESET = """\
lr: 1.0e-3
env:
  num_envs: 32
  env_kwargs:
    max_steps: 50
network:
  trunk_sizes: [128, 128]
"""


@pytest.fixture
def preset(tmp_path):
    path = tmp_path / "preset.yaml"
    path.write_text(PRESET)
    return path


def test_defaults_preset_and_overrides_merge_in_order(preset):
    assert load_config(ExampleConfig) == ExampleConfig()
    cfg = load_config(
        ExampleConfig, preset, ["lr=3.0e-4", "network.layer_norm=true", "loggers=[jsonl,csv]"]
    )
    assert cfg.lr == 3.0e-4 and isinstance(cfg.lr, float)  # override beats preset
    assert cfg.env.num_envs == 32 and cfg.env.env_id == "MPE_simple_spread_v3"
    assert cfg.env.env_kwargs == {"max_steps": 50}
    assert cfg.network.trunk_sizes == (128, 128)  # tuples stay tuples
    assert cfg.network.layer_norm is True
    assert cfg.loggers == ("jsonl", "csv")
    assert isinstance(cfg, ExampleConfig) and isinstance(cfg.network, NetSection)
    assert load_config(ExampleConfig, preset).lr == 1.0e-3
    assert load_config(ExampleConfig, overrides=["anneal=0.5"]).anneal == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.lr = 1.0


def test_unknown_keys_name_the_key_source_and_valid_keys(preset, tmp_path):
    with pytest.raises(ConfigError) as error:
        load_config(ExampleConfig, overrides=["network.trunk_size=[32]"])
    message = str(error.value)
    assert "unknown config key 'network.trunk_size'" in message
    assert "override 'network.trunk_size=[32]'" in message
    assert "Did you mean 'network.trunk_sizes'" in message
    assert "activation, layer_norm, trunk_sizes" in message

    # A nested key written at the top level points at where it lives.
    with pytest.raises(ConfigError, match=r"'num_envs'.*Did you mean 'env.num_envs'"):
        load_config(ExampleConfig, overrides=["num_envs=8"])

    bad = tmp_path / "bad.yaml"
    bad.write_text("lr: 1.0e-3\nlearning_rate: 2.0e-3\n")
    with pytest.raises(ConfigError, match=rf"'learning_rate' in preset {bad}.*Valid keys of "):
        load_config(ExampleConfig, bad)


def test_wrong_types_name_the_key_and_expected_type(tmp_path):
    with pytest.raises(ConfigError) as error:
        load_config(ExampleConfig, overrides=["lr=fast"])
    message = str(error.value)
    assert "config key 'lr' in override 'lr=fast'" in message
    assert "Expected float (default: 0.00025)" in message

    with pytest.raises(ConfigError, match=r"'env.num_envs'.*Expected int"):
        load_config(ExampleConfig, overrides=["env.num_envs=1.5"])
    with pytest.raises(ConfigError, match=r"network.trunk_sizes.*Expected tuple\[int, \.\.\.\]"):
        load_config(ExampleConfig, overrides=["network.trunk_sizes=[a,b]"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("network:\n  layer_norm: maybe\n")
    with pytest.raises(ConfigError, match=rf"'network.layer_norm' in preset {bad}"):
        load_config(ExampleConfig, bad)


def test_malformed_inputs_and_missing_values():
    with pytest.raises(ConfigError, match="must look like key=value"):
        load_config(ExampleConfig, overrides=["lr"])
    with pytest.raises(ConfigError, match="adds entries only inside mapping fields"):
        load_config(ExampleConfig, overrides=["+extra=1"])
    with pytest.raises(ConfigError, match="must look like ~key or ~key=value"):
        load_config(ExampleConfig, overrides=["~"])
    with pytest.raises(TypeError, match="sequence of 'key=value'"):
        load_config(ExampleConfig, overrides="lr=1.0")
    with pytest.raises(ConfigError, match=r"'seed' .* has no default .* seed=VALUE"):
        load_config(RequiredConfig)
    assert load_config(RequiredConfig, overrides=["seed=3"]).seed == 3
    with pytest.raises(FileNotFoundError, match="preset_path"):
        load_config(ExampleConfig, "no/such/preset.yaml")


def test_yaml_errors_name_the_file(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("lr: [1.0\n")
    with pytest.raises(ConfigError, match=rf"preset {broken} is not valid YAML"):
        load_config(ExampleConfig, broken)
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_config(ExampleConfig, listing)


def test_post_init_validation_propagates_unchanged():
    with pytest.raises(ValueError, match="env.num_envs=6 is not divisible") as error:
        load_config(ExampleConfig, overrides=["env.num_envs=6"])
    assert not isinstance(error.value, ConfigError)


def test_save_read_back_and_diff(tmp_path, preset):
    cfg = load_config(ExampleConfig, preset, ["lr=1.0e-7", "anneal=0.5"])
    path = save_config(cfg, tmp_path / "run" / "config.yaml")
    text = path.read_text()
    assert text.startswith(f"# jaxmarl config {__name__}.ExampleConfig")
    assert config_from_file(ExampleConfig, path) == cfg  # exact floats and tuples
    assert config_to_dict(cfg)["network"] == {
        "trunk_sizes": [128, 128],
        "activation": "tanh",
        "layer_norm": False,
    }

    assert diff_configs(cfg, cfg) == []
    other = load_config(ExampleConfig, path, ["lr=2.0e-3", "env.num_envs=64", "loggers=[csv]"])
    assert diff_configs(cfg, other) == [
        "lr: 1e-07 -> 0.002",
        "loggers: ['jsonl'] -> ['csv']",
        "env.num_envs: 32 -> 64",
    ]
    assert diff_configs(cfg, other, ignore=("lr", "env", "loggers")) == []
    with_kwarg = load_config(ExampleConfig, path, ["env.env_kwargs.agents=3"])
    assert diff_configs(cfg, with_kwarg) == ["env.env_kwargs.agents: <absent> -> 3"]

    with pytest.raises(ConfigError, match="written for .*ExampleConfig, not .*RequiredConfig"):
        config_from_file(RequiredConfig, path)


def test_preset_path_finds_yaml_in_the_repository_configs_folder():
    # An editable install (this test's setup) reads the repository's configs/ folder directly.
    alg = f"_test_{uuid.uuid4().hex[:8]}"
    folder = configs_dir() / alg
    folder.mkdir()
    try:
        (folder / "tiny.yaml").write_text("lr: 5.0e-4\n")
        assert preset_path(alg, "tiny") == folder / "tiny.yaml"
        assert preset_path(alg, "tiny.yaml") == folder / "tiny.yaml"
        assert load_config(ExampleConfig, preset_path(alg, "tiny")).lr == 5.0e-4
        with pytest.raises(FileNotFoundError, match=r"Did you mean \['tiny'\]"):
            preset_path(alg, "tinyy")
        with pytest.raises(FileNotFoundError, match="no presets for algorithm 'nope'"):
            preset_path("nope", "tiny")
        # From another working directory, through the installed package (no repo on sys.path).
        probe = f"from jaxmarl.config import preset_path; print(preset_path({alg!r}, 'tiny'))"
        out = subprocess.run(
            [sys.executable, "-c", probe], cwd="/", capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == str(folder / "tiny.yaml")
    finally:
        shutil.rmtree(folder)
