"""Sweeps without compiling: hydra-style command lines (-m, comma lists, +key, ~key), the
multirun layout and summary (with a stand-in for training), in-program sweep configs."""

import csv
import json

import pytest

from jaxmarl import multirun, train
from jaxmarl.baselines.ppo import PPOConfig
from jaxmarl.config import ConfigError, load_config, save_config
from jaxmarl.training.config import GRUTrunkConfig, MLPTrunkConfig
from jaxmarl.training.sweep import SweepConfig, check_sweepable

from .test_train_cli import TINY


def test_split_values_keeps_brackets_braces_and_quotes_whole():
    assert multirun.split_values("1e-3,3e-4") == ["1e-3", "3e-4"]
    assert multirun.split_values("[64,64],[32]") == ["[64,64]", "[32]"]
    assert multirun.split_values("{a: 1, b: 2}") == ["{a: 1, b: 2}"]
    assert multirun.split_values("'a,b',c") == ["'a,b'", "c"]
    assert multirun.split_values("x") == ["x"]


def test_expand_is_a_cartesian_product_with_the_last_key_fastest():
    points = multirun.expand(["alg=ippo", "lr=1e-3,3e-4", "run.seed=0,1", "~gamma", "+a.b=1,2"])
    assert len(points) == 8
    assert [p.label for p in points[:3]] == [
        "lr=1e-3,run.seed=0,a.b=1",
        "lr=1e-3,run.seed=0,a.b=2",
        "lr=1e-3,run.seed=1,a.b=1",
    ]
    assert points[1].args == ("alg=ippo", "lr=1e-3", "run.seed=0", "~gamma", "+a.b=2")
    assert points[5].dirname == "5_lr=3e-4,run.seed=0,a.b=2"
    assert multirun.expand(["env=A/B,C"])[0].dirname == "0_env=A_B"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["lr=1e-3,3e-4"], "lists several values: add -m (--multirun)"),
        (["-m", "lr=1e-3,-1"], "lr must be > 0, got -1.0"),
        (["-m", "run.name=a,b"], "run.name names the sweep's folder"),
        (["-m", "lr=1e-3,3e-4", "--resume", "x"], "resume a sweep's point with"),
        (["+lr=0.1"], "'lr' in override '+lr=0.1' exists already, and + only adds keys"),
        (["+lrr=0.1"], "+ adds entries only inside mapping fields such as env.env_kwargs"),
        (["~lrr"], "cannot remove config key 'lrr' in override '~lrr': it is not set"),
        (["alg=ippo", "~lr=0.5"], "it holds 0.00025, not 0.5"),
        (["sweep.lr=[0.1,-1]"], "run.sweep.lr values must be > 0"),
        (["sweep.lr=[0.1,0.1]"], "run.sweep.lr lists a value twice"),
        (["sweep.clip=[0.1]"], "unknown config key 'run.sweep.clip'"),
        (["run.wandb.mode=online2"], "run.wandb.mode must be one of"),
    ],
)
def test_bad_sweep_command_lines_exit_2_with_one_line(argv, message, capsys):
    assert train.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_plus_and_tilde_follow_hydra_on_a_typed_config():
    load = lambda *overrides: load_config(PPOConfig, None, list(overrides))
    # + adds an entry to a mapping field; ++ adds or sets; ~ deletes a mapping entry.
    config = load("+env.env_kwargs.max_steps=7", "++env.env_kwargs.max_steps=9")
    assert config.env.env_kwargs == {"max_steps": 9}
    assert load("env.env_kwargs={max_steps: 5}", "~env.env_kwargs.max_steps").env.env_kwargs == {}
    # ~ on a dataclass field resets it to the dataclass default (it cannot be deleted).
    assert load("lr=0.1", "~lr").lr == PPOConfig().lr
    assert load("lr=0.1", "~lr=0.1").lr == PPOConfig().lr
    assert load("network.trunk=gru", "~network.trunk").network.trunk == MLPTrunkConfig()
    gru = load("network.trunk=gru", "network.trunk.size=8", "~network.trunk.size")
    assert gru.network.trunk == GRUTrunkConfig()
    with pytest.raises(ConfigError, match=r"\+ only adds keys"):
        load("+network.embed_dim=3")


def test_in_program_sweep_points_and_what_learners_can_sweep():
    sweep = SweepConfig(lr=(1e-3, 3e-4))
    assert sweep.points() == [{"lr": 1e-3}, {"lr": 3e-4}]
    assert sweep.labels() == ("lr=0.001", "lr=0.0003")
    assert SweepConfig().points() == [{}] and SweepConfig().labels() == ()
    check_sweepable(sweep, ("lr",))
    with pytest.raises(ValueError, match="sweep it on the host instead"):
        check_sweepable(sweep, (), "alg=mt_ippo")
    command = train.parse([*TINY, "sweep.lr=[0.1,0.01]"])
    assert command.config.run.sweep == SweepConfig(lr=(0.1, 0.01))


def _fake_execute(command):
    """Stands in for training: writes what a run with one evaluation leaves behind."""
    run_dir = command.run_dir
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(json.dumps({"alg": command.alg}))
    lr = command.config.lr
    lines = [{"update": 1, "env_steps": 16, "seed": s, "episode_return": lr + s} for s in (0, 1)]
    evals = [
        {**row, "eval_episode_return": 10 * lr + row["seed"], "eval_episodes": 2} for row in lines
    ]
    for name, rows in (("metrics", lines), ("eval", evals)):
        (run_dir / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0 if lr < 0.5 else 1


def test_multirun_writes_one_directory_per_point_and_a_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(train, "execute", _fake_execute)
    argv = [*TINY, f"run.out_dir={tmp_path}", "run.name=study", "run.num_seeds=2"]
    assert train.main(["-m", *argv, "lr=0.1,0.2,0.7"]) == 1  # the point with lr=0.7 "failed"
    study = tmp_path / "study"
    dirs = ["0_lr=0.1", "1_lr=0.2", "2_lr=0.7"]
    assert sorted(p.name for p in study.iterdir() if p.is_dir()) == dirs
    recorded = json.loads((study / "multirun.json").read_text())
    assert [p["overrides"] for p in recorded["points"]] == [
        {"lr": v} for v in ("0.1", "0.2", "0.7")
    ]
    with (study / "sweep.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["lr"] for row in rows] == ["0.1", "0.2", "0.7"]
    assert float(rows[1]["episode_return"]) == pytest.approx(0.2 + 0.5)  # mean over 2 seeds
    assert float(rows[1]["eval_episode_return"]) == pytest.approx(2.5)
    assert [row["status"] for row in rows] == ["ok", "ok", "failed (exit 1)"]
    assert "| # | lr |" in (study / "sweep.md").read_text()
    exported = json.loads((study / "marl_eval.json").read_text())
    algorithms = exported["mpe"]["MPE_simple_v3"]
    assert sorted(algorithms) == ["ippo[lr=0.1]", "ippo[lr=0.2]", "ippo[lr=0.7]"]
    assert algorithms["ippo[lr=0.2]"]["seed_1"]["step_1"] == {
        "step_count": 16,
        "episode_return": [3.0],
    }
    # Every point is checked before the first one runs: an existing point refuses the sweep.
    capsys.readouterr()
    assert train.main(["-m", *argv, "lr=0.1,0.3"]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert not (study / "1_lr=0.3").exists()


def test_ctrl_c_in_one_point_stops_the_whole_multirun(tmp_path, monkeypatch):
    ran = []

    def interrupted(command):
        ran.append(command.run_dir.name)
        return train.INTERRUPTED

    monkeypatch.setattr(train, "execute", interrupted)
    argv = [*TINY, f"run.out_dir={tmp_path}", "run.name=study"]
    assert train.main(["-m", *argv, "lr=0.1,0.2"]) == train.INTERRUPTED
    assert ran == ["0_lr=0.1"]  # the second point was not started
    with (tmp_path / "study" / "sweep.csv").open() as handle:
        assert [row["status"] for row in csv.DictReader(handle)][0] == "interrupted"


def test_a_resumed_run_may_change_only_its_wandb_settings(tmp_path):
    command = train.parse([*TINY, f"run.out_dir={tmp_path}", "run.name=r"])
    save_config(command.config, tmp_path / "r" / "config.yaml")
    (tmp_path / "r" / "run.json").write_text(json.dumps({"alg": "ippo"}))
    resumed = train.parse(["--resume", str(tmp_path / "r"), "run.wandb.mode=offline"])
    assert resumed.resume and resumed.config.run.wandb.mode == "offline"
    assert resumed.config.run.total_timesteps == command.config.run.total_timesteps
    with pytest.raises(train.UsageError, match="lr: 0.00025 -> 0.5"):
        train.parse(["--resume", str(tmp_path / "r"), "lr=0.5", "run.wandb.mode=offline"])
