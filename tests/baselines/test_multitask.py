"""Multi-task learners with shared decision layers: sharing, gradients, freezing, transfer."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.algorithms import algorithm
from jaxmarl.baselines.multitask import (
    MTAPNConfig,
    MultiTaskPPOConfig,
    build_mtapn,
    build_multitask_ppo,
)
from jaxmarl.baselines.multitask.tasks import (
    load_decision_layers,
    parse_task,
    save_decision_layers,
    task_view,
    task_weights,
    update_failure,
)
from jaxmarl.baselines.ppo import CentralisedCritic
from jaxmarl.networks.mixers import QMIXMixerConfig
from jaxmarl.training.config import (
    EnvConfig,
    GRUTrunkConfig,
    MLPTrunkConfig,
    NetworkConfig,
    RunConfig,
)

SPREAD = "MPE_simple_spread_v3"
TWO_TASKS = (f"{SPREAD}:num_agents=2:num_landmarks=2", f"{SPREAD}:num_agents=3:num_landmarks=3")


def small_config(**overrides):
    base = dict(
        env=EnvConfig(env_id=SPREAD, num_envs=4),
        network=NetworkConfig(
            embed_dim=16, trunk=GRUTrunkConfig(size=16), activation="relu", agent_id=True
        ),
        run=RunConfig(total_timesteps=4 * 8 * 3),
        tasks=TWO_TASKS,
        num_steps=8,
        num_minibatches=2,
        num_epochs=1,
        decision_sizes=(8,),
    )
    base.update(overrides)
    return MTAPNConfig(**base)


def tree_equal(a, b):
    return all(jax.tree.leaves(jax.tree.map(lambda x, y: bool(jnp.array_equal(x, y)), a, b)))


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(tasks=("MPE_simple_sprad_v3",)), r"MPE_simple_spread_v3"),
        (dict(tasks=(f"{SPREAD}:num_agents",)), r"is not key=value"),
        (dict(tasks=(f"{SPREAD}:num_agents=2:num_agents=3",)), r"sets 'num_agents' twice"),
        (dict(task_weighting="softmax"), r"task_weighting must be one of"),
        (dict(decision_sizes=()), r"decision_sizes needs at least one width"),
        (
            dict(network=NetworkConfig(head_sizes=(8,), trunk=GRUTrunkConfig(size=16))),
            r"network.head_sizes=\[8\] is not used by MTAPN",
        ),
        (
            dict(network=NetworkConfig(trunk=MLPTrunkConfig(sizes=()))),
            r"network.trunk.sizes=\[\] leaves the multi-task learners no shared trunk",
        ),
    ],
)
def test_invalid_configs_fail_before_building(overrides, match):
    with pytest.raises(ValueError, match=match):
        small_config(**overrides)


def test_bad_env_keyword_names_the_task():
    with pytest.raises(ValueError, match=r"MPE_simple_spread_v3\(num_agent=3\)"):
        build_mtapn(small_config(tasks=(f"{SPREAD}:num_agent=3",)))


def test_task_specs_parse_literals_and_strings():
    spec = parse_task("HeuristicEnemySMAX:scenario=3m:see_enemy_actions=True", "task0")
    assert spec.env_kwargs == (("scenario", "3m"), ("see_enemy_actions", True))
    assert small_config(tasks=()).task_specs[0].env_id == SPREAD  # single-task form


def test_loss_rate_weights_by_hand():
    failure = jnp.array([0.95, 0.15], jnp.float32)
    # raw = f + 0.05 = [1.0, 0.2]; w = 2 * raw / 1.2 = [1.6667, 0.3333]
    np.testing.assert_allclose(task_weights("loss_rate", failure), [5 / 3, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(task_weights("uniform", failure), [1.0, 1.0])
    # EMA 0.1: 0.9 * 0.95 + 0.1 * 0.5 = 0.905; invalid tasks keep their value
    new = update_failure(failure, jnp.array([0.5, 0.0]), jnp.array([True, False]), 0.1)
    np.testing.assert_allclose(new, [0.905, 0.15], rtol=1e-6)


@pytest.fixture(scope="module")
def mtapn():
    return build_mtapn(small_config())


def test_one_decision_subtree_shared_by_every_task(mtapn):
    state = jax.jit(mtapn.learner.init)(jax.random.key(0))
    assert set(state.params) == {"decision", "tasks"}
    assert set(state.params["tasks"]) == {"task0", "task1"}
    for name in ("task0", "task1"):
        assert "decision" not in state.params["tasks"][name]
        assert task_view(state.params, name)["decision"] is state.params["decision"]
    # Different observation sizes -> different perception shapes, same decision shapes.
    enc = [
        state.params["tasks"][n]["encoder"]["Dense_0"]["kernel"].shape for n in ("task0", "task1")
    ]
    assert enc[0] != enc[1]


def test_gradients_reach_the_trunk_and_stay_in_their_task():
    config = small_config()
    multitask = build_mtapn(config)
    state = multitask.learner.init(jax.random.key(1))
    fns = multitask.task_fns
    grads = {}
    for name in ("task0", "task1"):

        @jax.jit  # one compiled program per task; run eagerly, the rollout alone takes minutes
        def task_grad(state, name=name):
            view = task_view(state.params, name)
            _, data, _ = fns[name].collect(view, state.runners[name], state.update)
            batches = fns[name].minibatches(jax.random.key(2), data).stacked()
            minibatch = jax.tree.map(lambda x: x[0], batches)

            def loss(params):
                return fns[name].loss(task_view(params, name), minibatch)[0]

            return jax.grad(loss)(state.params)

        grads[name] = task_grad(state)
    for name, other in (("task0", "task1"), ("task1", "task0")):
        decision_norm = sum(
            float(jnp.sum(jnp.abs(g))) for g in jax.tree.leaves(grads[name]["decision"])
        )
        assert decision_norm > 0, f"{name}'s loss does not reach the shared decision layers"
        own = grads[name]["tasks"][name]
        assert any(float(jnp.max(jnp.abs(g))) > 0 for g in jax.tree.leaves(own))
        for leaf in jax.tree.leaves(grads[name]["tasks"][other]):
            assert not jnp.any(leaf), f"{name}'s loss changed {other}'s parameters"


def test_update_compiles_once_is_deterministic_and_finite(mtapn):
    update = jax.jit(chex.assert_max_traces(mtapn.learner.update, n=1))
    state = mtapn.learner.init(jax.random.key(0))
    first = state
    for _ in range(3):
        state, metrics = update(state)
    chex.assert_tree_all_finite((state.params, metrics))
    assert metrics["task0/episode_return"].dtype == jnp.float32
    assert {"task0/weight", "task1/loss", "episode_return", "loss"} <= set(metrics)
    again = first
    for _ in range(3):
        again, _ = update(again)
    assert tree_equal(state.params, again.params)
    assert not tree_equal(state.params["decision"], first.params["decision"])
    shapes = jax.tree.map(lambda a, b: (a.shape, a.dtype) == (b.shape, b.dtype), first, state)
    assert all(jax.tree.leaves(shapes))


def test_frozen_decision_layers_do_not_change_and_transfer_round_trips(tmp_path):
    trained = build_mtapn(small_config(task_weighting="loss_rate"))
    state = trained.learner.init(jax.random.key(3))
    state, _ = jax.jit(trained.learner.update)(state)
    path = save_decision_layers(tmp_path / "decision", state.params["decision"])
    assert tree_equal(load_decision_layers(path), state.params["decision"])

    target = small_config(
        tasks=(f"{SPREAD}:num_agents=4:num_landmarks=4",),
        init_decision_from=str(path),
        freeze_decision=True,
    )
    frozen = build_mtapn(target)
    start = frozen.learner.init(jax.random.key(4))
    assert tree_equal(start.params["decision"], state.params["decision"])
    update = jax.jit(frozen.learner.update)
    after = start
    for _ in range(2):
        after, _ = update(after)
    assert tree_equal(after.params["decision"], start.params["decision"])
    assert not tree_equal(after.params["tasks"], start.params["tasks"])


def test_decision_layers_that_do_not_fit_fail_before_compiling(tmp_path):
    source = build_mtapn(small_config())
    state = source.learner.init(jax.random.key(0))
    save_decision_layers(tmp_path / "run" / "decision_layers", state.params["decision"])
    wider = NetworkConfig(
        embed_dim=16, trunk=GRUTrunkConfig(size=32), activation="relu", agent_id=True
    )
    with pytest.raises(ValueError, match=r"do not fit this learner.*network.trunk.size"):
        build_mtapn(small_config(network=wider, init_decision_from=str(tmp_path / "run")))


@pytest.mark.parametrize("critic_agent_id", [True, False])
def test_actor_critic_form_shares_the_actor_trunk(critic_agent_id):
    # critic.agent_id=false: one critic per env, groups of each task's own agent count.
    config = MultiTaskPPOConfig(
        env=EnvConfig(env_id=SPREAD, num_envs=4),
        network=NetworkConfig(embed_dim=16, trunk=MLPTrunkConfig(sizes=(16,))),
        run=RunConfig(total_timesteps=4 * 8 * 2),
        tasks=TWO_TASKS,
        critic=CentralisedCritic(agent_id=critic_agent_id),
        num_steps=8,
        num_minibatches=2,
        update_epochs=1,
    )
    multitask = build_multitask_ppo(config)
    state = multitask.learner.init(jax.random.key(0))
    assert "trunk" not in state.params["tasks"]["task0"]
    assert set(state.params["tasks"]["task0"]) == {"encoder", "heads", "critic"}
    new_state, metrics = jax.jit(multitask.learner.update)(state)
    chex.assert_tree_all_finite((new_state.params, metrics))
    assert not tree_equal(new_state.params["decision"], state.params["decision"])


def test_command_line_tasks_and_transfer_keys(tmp_path):
    from types import SimpleNamespace

    from jaxmarl import train

    tasks = f"tasks=[{TWO_TASKS[0]},{TWO_TASKS[1]}]"
    command = train.parse(["alg=mtapn_qmix", tasks, "task_weighting=loss_rate"])
    assert command.config.mixer == QMIXMixerConfig()
    assert [s.env_kwargs for s in command.config.task_specs] == [
        (("num_agents", 2), ("num_landmarks", 2)),
        (("num_agents", 3), ("num_landmarks", 3)),
    ]
    with pytest.raises(ValueError, match=r"unknown environment id 'MPE_nope'"):
        train.parse(["alg=mt_mappo", "tasks=[MPE_nope]"])

    # The end of a CLI run saves seed 0's decision layers into the run directory ...
    decision = {"trunk": {"Dense_0": {"kernel": jnp.arange(6.0).reshape(2, 1, 3)}}}
    result = SimpleNamespace(state=SimpleNamespace(params={"decision": decision}), run_dir=tmp_path)
    algorithm("mtapn_qmix").after_run(result)
    saved = load_decision_layers(tmp_path)
    np.testing.assert_array_equal(saved["trunk"]["Dense_0"]["kernel"], jnp.arange(3.0)[None])
    # ... and init_decision_from=RUN_DIR checks them against the new task before compiling.
    transfer = train.parse(
        ["alg=mtapn_vdn", "env.env_kwargs={num_agents: 4, num_landmarks: 4}",
         f"init_decision_from={tmp_path}", "freeze_decision=true"]
    )  # fmt: skip
    with pytest.raises(ValueError, match="do not fit this learner"):
        build_mtapn(transfer.config)


def test_team_return_averages_only_the_tasks_that_ended_an_episode():
    # 8-step rollouts: the 4-step task ends episodes in every update, the 25-step one only in
    # its 4th (step 25); the others log a placeholder 0 that must not halve the mean.
    tasks = (f"{SPREAD}:num_agents=2:num_landmarks=2:max_steps=4", TWO_TASKS[1])
    learner = build_mtapn(small_config(tasks=tasks)).learner
    update = jax.jit(learner.update)
    state = learner.init(jax.random.key(0))
    ended_both = 0
    for _ in range(4):
        state, metrics = update(state)
        short, long = (float(metrics[f"task{i}/episodes"]) for i in range(2))
        returns = [float(metrics[f"task{i}/episode_return"]) for i in range(2)]
        assert short > 0 and float(metrics["episodes"]) == short + long
        want = returns[0] if long == 0 else (returns[0] + returns[1]) / 2
        assert float(metrics["episode_return"]) == pytest.approx(want, rel=1e-6)
        ended_both += long > 0
    assert ended_both == 1
