"""Every packaged preset loads through the command line and builds its learner (no compile)."""

import pytest

from jaxmarl.config import ConfigError, available_presets, load_config
from jaxmarl.train import ALGORITHMS, parse

PRESETS = [name.split("/", 1) for name in available_presets()]


def test_presets_exist_for_every_mpe_scenario_for_ippo_and_mappo():
    from jaxmarl.registry import registered_envs

    mpe = [env_id for env_id in registered_envs if env_id.startswith("MPE_")]
    for alg in ("ippo", "mappo"):
        assert set(mpe) <= set(available_presets(alg)), alg


@pytest.mark.parametrize(("alg", "name"), PRESETS, ids=["/".join(p) for p in PRESETS])
def test_preset_parses_and_builds_its_learner(alg, name):
    if alg not in ALGORITHMS:
        pytest.fail(f"configs/{alg}/ has presets but no algorithm {alg!r} in jaxmarl.train")
    command = parse([f"alg={alg}", f"preset={name}", "--no-progress"])
    _, make = ALGORITHMS[alg].load()
    learner = make(command.config)
    assert learner.num_updates >= 1
    if name.startswith("MPE_") and "env" in type(command.config).__dataclass_fields__:
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
