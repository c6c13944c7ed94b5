"""Greedy evaluation of every task of a multi-task learner (eval.jsonl per task and mean)."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.multitask import (
    MTAPNConfig,
    MultiTaskPPOConfig,
    build_mtapn,
    build_multitask_ppo,
)
from jaxmarl.baselines.multitask.tasks import evaluate_every_task
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig
from jaxmarl.training.host.loop import run
from jaxmarl.training.learner import evaluate

SPREAD = "MPE_simple_spread_v3"
TWO_TASKS = (f"{SPREAD}:num_agents=2:num_landmarks=2", f"{SPREAD}:num_agents=3:num_landmarks=3")


def tiny_mtapn(**overrides) -> MTAPNConfig:
    base = dict(
        env=EnvConfig(env_id=SPREAD, num_envs=2),
        network=NetworkConfig(embed_dim=8, trunk=MLPTrunkConfig(sizes=(8,)), agent_id=True),
        run=RunConfig(total_timesteps=2 * 4),
        tasks=TWO_TASKS,
        num_steps=4,
        num_minibatches=1,
        num_epochs=1,
        decision_sizes=(4,),
    )
    base.update(overrides)
    return MTAPNConfig(**base)


def test_evaluate_every_task_names_means_and_keys():
    seen = {}

    def fake(name, won):
        def evaluate_task(params, key, num_envs):
            seen[name] = key
            metrics = {
                "episode_return": params[name] * jnp.ones((), jnp.float32),
                "episodes": jnp.float32(num_envs),
            }
            if won is not None:
                metrics["won"] = jnp.float32(won)
            return metrics

        return evaluate_task

    evaluators = {
        "task0": fake("task0", 1.0),
        "task1": fake("task1", None),
        "task2": fake("task2", 0.0),
    }
    params = {"task0": -1.0, "task1": -2.0, "task2": -6.0}
    key = jax.random.key(3)
    metrics = evaluate_every_task(evaluators, params, key, 5)
    assert set(metrics) == {
        *(f"task{i}/{m}" for i in range(3) for m in ("episode_return", "episodes")),
        "task0/won",
        "task2/won",
        "episode_return",
        "episodes",
        "won",
    }
    assert float(metrics["task1/episode_return"]) == -2.0
    assert float(metrics["episode_return"]) == pytest.approx(-3.0)  # mean over tasks
    assert float(metrics["episodes"]) == 15.0  # total
    assert float(metrics["won"]) == 0.5  # mean over the tasks that report it
    assert all(v.shape == () and v.dtype == jnp.float32 for v in metrics.values())
    # Task 0 keeps the key (a one-task learner evaluates as before); the others fold in.
    same = lambda a, b: bool(jnp.all(jax.random.key_data(a) == jax.random.key_data(b)))
    assert same(seen["task0"], key)
    assert same(seen["task2"], jax.random.fold_in(key, 2))
    assert not same(seen["task1"], seen["task2"])


@pytest.fixture(scope="module")
def mtapn():
    return build_mtapn(tiny_mtapn())


def test_mtapn_evaluates_every_task_under_jit_and_vmap(mtapn):
    learner = mtapn.learner
    init_seeds = jax.jit(jax.vmap(lambda key: learner.init(key).params))
    params = init_seeds(jax.random.split(jax.random.key(0), 2))
    eval_keys = jax.random.split(jax.random.key(1), 2)
    evaluate_seeds = jax.jit(jax.vmap(lambda p, k: evaluate(learner, p, k, 3)))
    metrics = evaluate_seeds(params, eval_keys)
    for name in ("episode_return", "episode_length", "episodes"):
        for task in ("task0", "task1"):
            value = metrics[f"{task}/{name}"]
            assert value.shape == (2,) and value.dtype == jnp.float32, (task, name)
    np.testing.assert_array_equal(metrics["task0/episode_length"], 25.0)
    np.testing.assert_array_equal(metrics["episodes"], 6.0)  # 3 envs x 2 tasks, per seed
    np.testing.assert_allclose(
        metrics["episode_return"],
        (metrics["task0/episode_return"] + metrics["task1/episode_return"]) / 2,
        rtol=1e-6,
    )
    # Task 0's entry is what the single-env evaluation (first task only) gave before.
    first_only = dataclasses.replace(learner, evaluate_tasks=None)
    before = jax.jit(jax.vmap(lambda p, k: evaluate(first_only, p, k, 3)))(params, eval_keys)
    for name, value in before.items():
        np.testing.assert_allclose(metrics[f"task0/{name}"], value, rtol=1e-6)
    # Each task's entry is its own policy in its own env: new task-1 parameters move task 1's
    # return and leave task 0's untouched.
    other = init_seeds(jax.random.split(jax.random.key(9), 2))
    moved = {**params, "tasks": {**params["tasks"], "task1": other["tasks"]["task1"]}}
    after = evaluate_seeds(moved, eval_keys)
    np.testing.assert_array_equal(after["task0/episode_return"], metrics["task0/episode_return"])
    assert not np.allclose(after["task1/episode_return"], metrics["task1/episode_return"])


def test_run_writes_a_greedy_evaluation_of_every_task(mtapn, tmp_path):
    run_config = dataclasses.replace(
        mtapn.learner.config.run,
        num_seeds=2,
        updates_per_chunk=1,
        eval_episodes=2,
        gif=False,
        loggers=("jsonl",),
    )
    result = run(mtapn.learner, run_config, tmp_path / "run", show_progress=False)
    rows = [
        json.loads(line)
        for line in (tmp_path / "run" / "eval.jsonl").read_text().split("\n")
        if line
    ]
    assert [row["seed"] for row in rows] == [0, 1]
    for row in rows:
        for task in ("task0", "task1"):
            assert f"eval_{task}/episode_return" in row
        mean = (row["eval_task0/episode_return"] + row["eval_task1/episode_return"]) / 2
        assert row["eval_episode_return"] == pytest.approx(mean, rel=1e-5)
    assert "eval_task1/episode_return" in result.evaluations[-1]  # mean over seeds


def test_smax_tasks_report_won_per_task_and_its_mean():
    """Mixed families: ``won`` per SMAX task, its mean over the tasks that report it."""
    smax = "HeuristicEnemySMAX:scenario=3m"
    config = MultiTaskPPOConfig(
        env=EnvConfig(env_id=SPREAD, num_envs=2),
        network=NetworkConfig(embed_dim=8, trunk=MLPTrunkConfig(sizes=(8,))),
        run=RunConfig(total_timesteps=2 * 4),
        tasks=(smax, TWO_TASKS[0]),
        num_steps=4,
        num_minibatches=1,
        update_epochs=1,
    )
    learner = build_multitask_ppo(config).learner
    params = jax.jit(learner.init)(jax.random.key(0)).params
    metrics = jax.jit(lambda p, k: evaluate(learner, p, k, 2))(params, jax.random.key(1))
    assert "task0/won" in metrics and "task1/won" not in metrics
    assert 0.0 <= float(metrics["won"]) <= 1.0
    assert float(metrics["won"]) == float(metrics["task0/won"])
    assert float(metrics["task0/episodes"]) == 2.0  # the first episode of each of the 2 envs
