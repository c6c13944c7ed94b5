"""``python -m jaxmarl.evaluate``: greedy evaluation of a run directory, read-only."""

import json

import jax
import numpy as np
import pytest

from jaxmarl import evaluate, train
from jaxmarl.training.host.logging import read_jsonl
from jaxmarl.training.learner import evaluate as learner_evaluate
from tests.test_train_cli import TINY

RUN = [
    *TINY,
    "--no-progress",
    "run.num_seeds=2",
    "run.eval_every=1",
    "run.keep_best=eval_episode_return",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A finished 2-seed TINY run with checkpoints 1, 2, 3 ranked by episode return."""
    out = tmp_path_factory.mktemp("evaluate")
    assert train.main([*RUN, f"run.out_dir={out}", "run.name=run"]) == 0
    return out / "run"


def test_evaluate_writes_a_table_per_seed_and_leaves_checkpoints_alone(run_dir, capsys):
    before = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert evaluate.main([str(run_dir), "--episodes", "3", "--no-gif"]) == 0
    out = capsys.readouterr().out
    assert "| seed | episode_return" in out and "| mean |" in out
    result = json.loads((run_dir / "evaluation" / "step_3.json").read_text())
    assert result["step"] == 3 and len(result["seeds"]) == 2
    assert all(row["episodes"] == 3 for row in result["seeds"])
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == before


def test_evaluation_equals_the_learners_own_evaluation_of_those_params(run_dir):
    run = evaluate.load_run(run_dir, step=2)
    rows = evaluate.evaluate_run(run, episodes=4, seed=7)
    keys = jax.random.split(jax.random.key(7), 2)
    for seed in range(2):
        direct = learner_evaluate(run.learner, run.seed_params(seed), keys[seed], 4)
        np.testing.assert_allclose(
            rows[seed]["episode_return"], float(direct["episode_return"]), rtol=1e-5
        )


def test_best_step_and_plain_python_loop(run_dir):
    run = evaluate.load_run(run_dir, best=True)
    # One update per chunk, so checkpoint step == update; best = highest mean over seeds.
    by_update = {}
    for row in read_jsonl(run_dir / "eval.jsonl"):
        by_update.setdefault(row["update"], []).append(row["eval_episode_return"])
    assert run.step == max(by_update, key=lambda u: np.mean(by_update[u]))
    env, policy = run.env, run.policy(seed=1)
    key = jax.random.key(0)
    obs, state = env.reset(key)
    carry = policy.initial_carry()
    total = 0.0
    for t in range(5):
        carry, actions = policy.act(carry, obs, state, first=t == 0)
        assert set(actions) == set(env.agents)
        key, step_key = jax.random.split(key)
        obs, state, rewards, dones, infos = env.step(step_key, state, actions)
        total += float(sum(rewards.values()))
    assert np.isfinite(total)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{missing}"], "is not a jaxmarl run directory"),
        (["{run}", "--step", "9"], "has no checkpoint step 9; saved steps: [1, 2, 3]"),
        (["{run}", "--episodes", "0"], "--episodes must be at least 1"),
        (["{run}", "--step", "1", "--best"], "not allowed with argument"),
        (["{run}", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_user_errors_exit_2_with_one_line(run_dir, tmp_path, capsys, argv, message):
    argv = [a.format(run=run_dir, missing=tmp_path / "nothing") for a in argv]
    assert evaluate.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_best_needs_a_ranked_run(tmp_path, capsys):
    assert train.main([*TINY, "--no-progress", f"run.out_dir={tmp_path}", "run.name=plain"]) == 0
    assert evaluate.main([str(tmp_path / "plain"), "--best"]) == 2
    assert "--best needs a run trained with run.keep_best" in capsys.readouterr().err
