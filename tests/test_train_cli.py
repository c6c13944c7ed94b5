"""``python -m jaxmarl.train``: bad command lines fail before compiling; a run resumes."""

import json

import pytest

from jaxmarl import train
from jaxmarl.baselines.ppo import CentralisedCritic, LocalCritic
from jaxmarl.training.config import GRUTrunkConfig
from jaxmarl.training.host.logging import read_jsonl

TINY = [
    "alg=ippo",
    "env=MPE_simple_v3",
    "env.num_envs=2",
    "num_steps=8",
    "num_minibatches=1",
    "update_epochs=1",
    "network.trunk.sizes=[8]",
    "network.embed_dim=8",
    "run.total_timesteps=48",
    "run.updates_per_chunk=1",
    "run.checkpoint_every=1",
    "run.eval_episodes=2",
    "run.gif=false",
]


def train_tiny_gru_run(out, *overrides: str):
    """A finished 2-seed TINY IPPO run with a GRU of 8 (its carry matters), one update of 16
    env steps, in ``out/run``; ``overrides`` pick the env and more."""
    argv = [
        *(arg for arg in TINY if not arg.startswith("network.trunk")),
        "--no-progress",
        *overrides,
        "network.trunk={kind: gru, size: 8}",
        "run.num_seeds=2",
        "run.total_timesteps=16",
        f"run.out_dir={out}",
        "run.name=run",
    ]
    assert train.main(argv) == 0
    return out / "run"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["alg=mapo"], "unknown algorithm alg='mapo'; did you mean 'mappo'"),
        (["env=MPE_simple_sprad_v3"], "did you mean 'MPE_simple_spread_v3'"),
        (["lrr=0.1"], "unknown config key 'lrr'"),
        (["lr=-0.1"], "lr must be > 0"),
        (["env.num_envs=3"], "not a whole number of updates"),
        (["--resum", "x"], "unknown option '--resum'"),
        (["run.seed"], "arguments are key=value"),
        (["run.keep_best_mode=best"], "run.keep_best_mode must be one of ('max', 'min')"),
        (["critic=global"], "unknown kind 'global' for config key 'critic'"),
        (["network.trunk.size=64"], "is a field of network.trunk=gru, but network.trunk is mlp"),
        (["alg=ippo", "critic.agent_id=false"], "is a field of critic=centralised"),
        (["network.trunk_sizes=[8]"], "write network.trunk.sizes (with network.trunk=mlp)"),
    ],
)
def test_bad_command_lines_exit_2_with_a_message(argv, message, capsys):
    assert train.main(argv) == 2
    assert message in capsys.readouterr().err


def test_presets_resolve_per_algorithm():
    command = train.parse(["alg=mappo", "env=MPE_simple_spread_v3"])
    assert command.config.critic == CentralisedCritic(agent_id=True)
    assert command.config.env.num_envs == 64
    rnn = train.parse(["alg=mappo", "preset=MPE_simple_spread_v3_rnn"])
    assert rnn.config.network.trunk == GRUTrunkConfig(size=128, post_sizes=(128,))
    assert rnn.config.critic == CentralisedCritic(agent_id=False)
    ippo = train.parse(["alg=ippo", "env=MPE_simple_spread_v3"])
    assert ippo.config.critic == LocalCritic() and ippo.config.lr == pytest.approx(2.5e-4)


def test_train_then_resume_from_the_command_line(tmp_path, capsys):
    out = [f"run.out_dir={tmp_path}", "run.name=tiny"]
    assert train.main(TINY + out + ["--no-progress"]) == 0
    run_dir = tmp_path / "tiny"
    assert json.loads((run_dir / "run.json").read_text())["alg"] == "ippo"
    assert (run_dir / "summary.md").read_text().startswith("| run |")
    rows = read_jsonl(run_dir / "metrics.jsonl")
    assert [r["update"] for r in rows] == [1, 2, 3]

    # Starting the same run again is refused; resuming with a changed config is refused.
    assert train.main(TINY + out) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert train.main(["--resume", str(run_dir), "lr=0.5"]) == 2
    assert "lr: 0.00025 -> 0.5" in capsys.readouterr().err
    assert train.main(["--resume", str(tmp_path / "nowhere")]) == 2
    assert "not a jaxmarl run directory" in capsys.readouterr().err
    # Resuming a finished run redoes nothing and keeps the metrics.
    assert train.main(["--resume", str(run_dir), "--no-progress"]) == 0
    assert read_jsonl(run_dir / "metrics.jsonl") == rows
