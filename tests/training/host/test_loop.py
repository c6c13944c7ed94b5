"""The chunked host loop: run directory contents and bit-exact resume."""

import dataclasses

import chex
import jax
import numpy as np
import pytest

from jaxmarl.baselines.ppo import CentralisedCritic, PPOConfig, make_ppo
from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig
from jaxmarl.training.host.checkpoint import Checkpointer
from jaxmarl.training.host.logging import read_jsonl
from jaxmarl.training.host.loop import run

CONFIG = PPOConfig(
    env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
    network=NetworkConfig(trunk=GRUTrunkConfig(size=16), embed_dim=16),
    critic=CentralisedCritic(),
    run=RunConfig(total_timesteps=4 * 8 * 4),
    num_steps=8,
    num_minibatches=2,
    update_epochs=1,
)


@pytest.fixture(scope="module")
def learner():
    return make_ppo(CONFIG)


def _run(learner, run_dir, resume=False, stop_after_chunks=None, **fields):
    settings = dict(seed=3, num_seeds=2, updates_per_chunk=1, checkpoint_every=1, eval_episodes=4)
    run_config = dataclasses.replace(learner.config.run, **{**settings, **fields})
    return run(
        learner,
        run_config,
        run_dir,
        resume=resume,
        stop_after_chunks=stop_after_chunks,
        show_progress=False,
    )


@pytest.fixture(scope="module")
def full(learner, tmp_path_factory):
    """An uninterrupted run, to compare resumed runs with."""
    return _run(learner, tmp_path_factory.mktemp("loop") / "full", gif=True)


def test_stop_and_resume_equals_uninterrupted_run(learner, full, tmp_path):
    # 4 updates in chunks of 3: a chunk of 3, then a shorter last chunk of 1.
    uneven = _run(learner, tmp_path / "uneven", gif=False, updates_per_chunk=3)
    assert read_jsonl(tmp_path / "uneven" / "metrics.jsonl") == read_jsonl(
        full.run_dir / "metrics.jsonl"
    )
    chex.assert_trees_all_close(full.state.params, uneven.state.params, rtol=1e-6, atol=1e-7)
    metadata = Checkpointer(tmp_path / "uneven" / "checkpoints").metadata()
    assert metadata == {"updates": 4, "data_devices": 1}
    _run(learner, tmp_path / "split", stop_after_chunks=2, gif=False)
    assert Checkpointer(tmp_path / "split" / "checkpoints").latest_step() == 2
    resumed = _run(learner, tmp_path / "split", resume=True, gif=False)

    chex.assert_trees_all_equal(full.state.params, resumed.state.params)
    chex.assert_trees_all_equal(full.state.opt_state, resumed.state.opt_state)
    full_rows = read_jsonl(full.run_dir / "metrics.jsonl")
    split_rows = read_jsonl(tmp_path / "split" / "metrics.jsonl")
    assert len(full_rows) == 4 * 2  # 4 updates x 2 seeds
    assert full_rows == split_rows

    run_dir = full.run_dir
    for name in ("metrics.csv", "eval.jsonl", "learning_curve.png", "episode.gif"):
        assert (run_dir / name).stat().st_size > 0, name
    evaluations = read_jsonl(run_dir / "eval.jsonl")
    assert [row["seed"] for row in evaluations] == [0, 1]  # evaluated once, at the end
    assert all(np.isfinite(row["eval_episode_return"]) for row in evaluations)
    assert all(row["eval_episodes"] == 4.0 for row in evaluations)  # one episode in 4 envs
    mean = np.mean([row["eval_episode_return"] for row in evaluations])
    np.testing.assert_allclose(full.evaluations[-1]["eval_episode_return"], mean, rtol=1e-6)


def test_resume_falls_back_past_a_corrupt_latest_checkpoint(learner, full, tmp_path):
    _run(learner, tmp_path / "split", stop_after_chunks=3, gif=False)
    (tmp_path / "split" / "checkpoints" / "3" / "state" / "_METADATA").write_text("{trunc")
    with pytest.warns(RuntimeWarning, match=r"(?s)step 3 .*_METADATA.*resuming from step 2"):
        resumed = _run(learner, tmp_path / "split", resume=True, gif=False)
    chex.assert_trees_all_equal(full.state.params, resumed.state.params)
    assert read_jsonl(tmp_path / "split" / "metrics.jsonl") == read_jsonl(
        full.run_dir / "metrics.jsonl"
    )
    assert Checkpointer(tmp_path / "split" / "checkpoints").all_steps() == [2, 3, 4]


def test_keep_best_keeps_the_best_evaluated_checkpoint_and_the_newest(learner, tmp_path):
    result = _run(
        learner,
        tmp_path / "best",
        gif=False,
        eval_every=1,
        max_to_keep=1,
        keep_best="eval_episode_return",
    )
    returns = [row["eval_episode_return"] for row in result.evaluations]
    best_step = int(np.argmax(returns)) + 1  # a checkpoint's step is chunks done
    assert Checkpointer(tmp_path / "best" / "checkpoints").all_steps() == sorted({best_step, 4})
    with pytest.raises(ValueError, match=r"keep_best='eval_retrun' is not a metric.*'loss'"):
        _run(learner, tmp_path / "typo", keep_best="eval_retrun")
    with pytest.raises(ValueError, match="run.keep_best_mode must be one of"):
        RunConfig(keep_best="loss", keep_best_mode="lowest")
    with pytest.raises(ValueError, match=r"run.max_to_keep must be >= 0 \(0 keeps every"):
        RunConfig(max_to_keep=-1)


def test_resume_without_checkpoint_starts_from_the_beginning(learner, tmp_path):
    """A run stopped before its first checkpoint: its stale metrics are dropped."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "metrics.jsonl").write_text('{"step": 1, "update": 1, "stale": 1}\n')
    _run(learner, tmp_path / "empty", resume=True, stop_after_chunks=1, gif=False)
    rows = read_jsonl(tmp_path / "empty" / "metrics.jsonl")
    assert [r["update"] for r in rows] == [1, 1] and "stale" not in rows[0]


def test_seeds_differ(learner, tmp_path):
    result = _run(learner, tmp_path / "seeds", stop_after_chunks=1, gif=False)
    leaves = jax.tree.leaves(result.state.params)
    assert any(not np.array_equal(leaf[0], leaf[1]) for leaf in leaves)


def test_tensorboard_and_metrics_after_kill_and_resume_equal_an_uninterrupted_run(
    learner, tmp_path
):
    """A kill after chunk 3 with the last checkpoint at chunk 2 left chunk 3's points logged;
    the resume cuts every log back to chunk 2, TensorBoard's event files included."""
    pytest.importorskip("tensorboardX")
    from jaxmarl.training.host.logging import read_event_scalars

    logs = dict(loggers=("jsonl", "csv", "tensorboard"), gif=False, eval_episodes=0)
    _run(learner, tmp_path / "full", **logs)
    _run(learner, tmp_path / "split", stop_after_chunks=3, checkpoint_every=2, **logs)
    assert Checkpointer(tmp_path / "split" / "checkpoints").latest_step() == 2
    _run(learner, tmp_path / "split", resume=True, checkpoint_every=2, **logs)
    for name in ("metrics.jsonl", "metrics.csv"):
        assert (tmp_path / "split" / name).read_text() == (tmp_path / "full" / name).read_text()
    full = read_event_scalars(tmp_path / "full" / "tb")
    split = read_event_scalars(tmp_path / "split" / "tb")
    assert sorted(split) == sorted(full)  # chunk 3's points once, not twice
