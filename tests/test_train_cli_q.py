"""``python -m jaxmarl.train alg=iql|vdn|qmix``: presets, bad input before compiling, bit-exact
resume through the host loop with the replay buffer in the checkpoint."""

import chex
import pytest

from jaxmarl import train
from jaxmarl.baselines.q_learning import make_q_learning
from jaxmarl.networks.mixers import QMIXMixerConfig
from jaxmarl.training.config import GRUTrunkConfig
from jaxmarl.training.host.checkpoint import Checkpointer
from jaxmarl.training.host.logging import read_jsonl
from tests.training.host.test_loop import _run

TINY = [
    "alg=qmix",
    "env=MPE_simple_spread_v3",
    "env.num_envs=2",
    "num_steps=5",
    "buffer_size=6",
    "batch_size=2",
    "learning_starts=10",
    "target_update_interval=2",
    "network.embed_dim=8",
    "network.trunk.size=8",
    "mixer.embed_dim=4",
    "mixer.hypernet_hidden_dim=8",
    "run.total_timesteps=40",
    "run.updates_per_chunk=1",
    "run.checkpoint_every=1",
    "run.eval_episodes=2",
    "run.gif=false",
]


def test_q_presets_mirror_jaxmarl_and_differ_only_by_mixer():
    configs = {alg: train.parse([f"alg={alg}"]).config for alg in ("iql", "vdn", "qmix")}
    assert {alg: c.mixer.kind for alg, c in configs.items()} == {
        "iql": "none",
        "vdn": "vdn",
        "qmix": "qmix",
    }
    qmix = configs["qmix"]
    assert (qmix.env.num_envs, qmix.buffer_size, qmix.batch_size) == (8, 5000, 32)
    assert qmix.lr == pytest.approx(5e-3) and qmix.gamma == pytest.approx(0.9)
    assert qmix.network.trunk == GRUTrunkConfig(size=64)
    assert qmix.mixer == QMIXMixerConfig(embed_dim=32, hypernet_hidden_dim=128, init_scale=1e-3)
    # The one departure from JaxMARL's settings: a soft target update instead of a hard copy
    # every 200 updates (benchmarks/FINDINGS.md, "Soft target update ...").
    assert (qmix.target_update_interval, qmix.tau) == (1, pytest.approx(0.005))
    strip = lambda c: {k: v for k, v in vars(c).items() if k != "mixer"}
    assert strip(configs["iql"]) == strip(configs["vdn"]) == strip(qmix)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["alg=qmix", "buffer_size=8"], "buffer_size=8 sequences cannot hold one batch"),
        (["alg=qmx"], "did you mean 'qmix'"),
        (["alg=vdn", "eps_finish=1.5"], "eps_finish must be in [0, 1]"),
        (["alg=iql", "tau=0"], "tau must be in (0, 1]"),
        (["alg=qmix", "mixer.embed_dim=-4"], "mixer.embed_dim must be > 0"),
        (["alg=vdn", "mixer.embed_dim=4"], "is a field of mixer=qmix, but mixer is vdn"),
        (["alg=qmix", "mixer_embed_dim=4"], "write mixer.embed_dim (with mixer=qmix)"),
        (["alg=qmix", "returns.td_lambda=0.5"], "is a field of returns=lambda"),
        (["alg=qmix", "returns=lambda", "returns.td_lambda=2"], "returns.td_lambda must be in"),
        (["alg=qmix", "returns.n=99"], "returns.n=99 is longer than the stored sequences"),
        (["alg=qmix", "double_q=maybe"], "invalid value for config key 'double_q'"),
    ],
)
def test_bad_q_command_lines_exit_2_with_a_message(argv, message, capsys, tmp_path):
    assert train.main(argv + [f"run.out_dir={tmp_path}"]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing written


def test_continuous_env_fails_before_anything_is_written(capsys, tmp_path):
    argv = TINY + ["env.env_kwargs={action_type: Continuous}", f"run.out_dir={tmp_path}"]
    assert train.main(argv) == 2
    assert "Q-learning needs discrete actions" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_qmix_train_then_resume_with_checks(tmp_path, capsys):
    out = [f"run.out_dir={tmp_path}", "run.name=tiny"]
    assert train.main(TINY + out + ["--no-progress"]) == 0
    run_dir = tmp_path / "tiny"
    rows = read_jsonl(run_dir / "metrics.jsonl")
    assert [r["update"] for r in rows] == [1, 2, 3, 4]
    assert "loss" in rows[-1] and "epsilon" in rows[-1]
    # Resuming with an incompatible config is refused, and the saved run is left as it was.
    assert train.main(["--resume", str(run_dir), "buffer_size=10"]) == 2
    assert "buffer_size: 6 -> 10" in capsys.readouterr().err
    assert read_jsonl(run_dir / "metrics.jsonl") == rows
    assert Checkpointer(run_dir / "checkpoints").latest_step() == 4


@pytest.mark.slow
def test_stop_and_resume_equals_uninterrupted_run_buffer_included(tmp_path):
    config = train.parse(TINY + [f"run.out_dir={tmp_path}"]).config
    learner = make_q_learning(config)
    full = _run(learner, tmp_path / "full", gif=False)
    _run(learner, tmp_path / "split", stop_after_chunks=2, gif=False)
    resumed = _run(learner, tmp_path / "split", resume=True, gif=False)
    chex.assert_trees_all_equal(full.state, resumed.state)  # params, target, buffer, keys
    assert int(full.state.buffer.size[0]) == 6  # the buffer wrapped around
    assert read_jsonl(tmp_path / "full" / "metrics.jsonl") == read_jsonl(
        tmp_path / "split" / "metrics.jsonl"
    )
