"""IPPO with one parameter set per agent (``share_parameters=false``): each agent's rows go
through its own parameters, minibatches keep an env's agents in order, jit + vmap, resume."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl import train
from jaxmarl.baselines.ppo import (
    CentralisedCritic,
    PPOConfig,
    build_network,
    make_ppo,
    make_train,
    ppo_parts,
)
from jaxmarl.baselines.ppo.network import PerAgentActorCritic
from jaxmarl.training.config import (
    EnvConfig,
    GRUTrunkConfig,
    MLPTrunkConfig,
    NetworkConfig,
    RunConfig,
)
from jaxmarl.training.host.logging import read_jsonl
from jaxmarl.training.host.loop import run

TRUNKS = {"mlp": MLPTrunkConfig(sizes=(16,)), "gru": GRUTrunkConfig(size=8)}
AGENTS = 3  # switch_riddle's default


def config(trunk="mlp", **overrides):
    base = dict(
        env=EnvConfig(env_id="switch_riddle", num_envs=4),
        network=NetworkConfig(trunk=TRUNKS[trunk], embed_dim=8, agent_id=True),
        run=RunConfig(total_timesteps=4 * 8 * 2),
        num_steps=8,
        num_minibatches=2,
        update_epochs=1,
        share_parameters=False,
    )
    base.update(overrides)
    return PPOConfig(**base)


def test_each_agent_is_evaluated_with_its_own_parameters():
    cfg = config("gru")
    learner = make_ppo(cfg)
    network = build_network(cfg, learner.env.batch)
    assert isinstance(network, PerAgentActorCritic)
    t, n, (width,) = 3, 2, learner.env.batch.input_shape
    obs = jax.random.normal(jax.random.key(0), (t, n * AGENTS, width))
    first = jnp.zeros((t, n * AGENTS), bool).at[0].set(True)
    params = network.init(jax.random.key(1), obs[0], obs[0])
    assert jax.tree.leaves(params)[0].shape[0] == AGENTS
    hidden, values_hidden = network.initial_carry(n * AGENTS)
    hidden = hidden + 0.5  # a non-zero start state, so carries must be routed too
    _, dist = network.policy(params, hidden, obs, first)
    _, values = network.value(params, values_hidden, obs, first)
    for agent in range(AGENTS):
        own = jax.tree.map(lambda p, a=agent: p[a], params)
        rows = slice(agent, None, AGENTS)  # agent-minor: env e's agent a is row e * A + a
        _, own_dist = network.network.policy(own, hidden[rows], obs[:, rows], first[:, rows])
        _, own_values = network.network.value(
            own, values_hidden[rows], obs[:, rows], first[:, rows]
        )
        np.testing.assert_allclose(dist.logits[:, rows], own_dist.logits, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(values[:, rows], own_values, rtol=1e-5, atol=1e-6)
    # Different agents really have different parameters (each drawn from its own key).
    assert not np.allclose(dist.logits[:, 0::AGENTS], dist.logits[:, 1::AGENTS])


def test_continuous_policies_come_back_per_agent():
    """Gaussian policies with one parameter set per agent: the mean and scale of every row
    are those of its agent's own network, from ``policy`` and ``policy_and_value`` alike."""
    cfg = config(
        "gru",
        env=EnvConfig(
            env_id="MPE_simple_speaker_listener_v4",
            env_kwargs={"action_type": "Continuous"},
            num_envs=4,
        ),
    )
    learner = make_ppo(cfg)
    assert not learner.env.batch.discrete
    network = build_network(cfg, learner.env.batch)
    agents = learner.env.batch.num_agents
    t, n, (width,) = 3, 2, learner.env.batch.input_shape
    obs = jax.random.normal(jax.random.key(0), (t, n * agents, width))
    first = jnp.zeros((t, n * agents), bool).at[0].set(True)
    params = network.init(jax.random.key(1), obs[0], obs[0])
    hidden, critic_hidden = network.initial_carry(n * agents)
    _, dist = network.policy(params, hidden, obs, first)
    (_, both), _ = network.policy_and_value(params, hidden, critic_hidden, obs, first)
    for agent in range(agents):
        own = jax.tree.map(lambda p, a=agent: p[a], params)
        rows = slice(agent, None, agents)
        _, own_dist = network.network.policy(own, hidden[rows], obs[:, rows], first[:, rows])
        for d in (dist, both):
            np.testing.assert_allclose(d.loc[:, rows], own_dist.loc, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(
                d.scale_diag[:, rows], own_dist.scale_diag, rtol=1e-5, atol=1e-6
            )
    assert not np.allclose(dist.loc[:, 0::agents], dist.loc[:, 1::agents])


@pytest.mark.parametrize("trunk", ["mlp", "gru"])
def test_minibatches_keep_every_env_agents_in_agent_order(trunk):
    cfg = config(trunk)
    learner = make_ppo(cfg)
    parts = ppo_parts(cfg, learner.env, build_network(cfg, learner.env.batch))
    params, runner = parts.init_params(jax.random.key(1), jax.random.key(2))
    _, data, _ = parts.collect(params, runner)
    minibatches = parts.minibatches(jax.random.key(3), data).stacked()
    obs = np.asarray(minibatches.steps.obs)  # [M, T', G_m, 1, 2 + A]: the id is the one-hot tail
    ids = obs[..., 0, -AGENTS:].argmax(-1)
    rows = np.arange(obs.shape[2]) % AGENTS
    np.testing.assert_array_equal(ids, np.broadcast_to(rows, ids.shape))
    # A local critic reads these same observations (in the same rows): not stored twice.
    assert minibatches.steps.critic_input is None
    assert minibatches.actor_carry.shape[1] == minibatches.critic_carry.shape[1] == obs.shape[2]
    loss, metrics = jax.jit(parts.loss_fn)(params, jax.tree.map(lambda x: x[0], minibatches))
    assert np.isfinite(float(loss)) and float(metrics["value_loss"]) > 0


def test_independent_parameters_need_a_critic_per_agent():
    with pytest.raises(ValueError, match="set critic.agent_id=true or share_parameters=true"):
        config(critic=CentralisedCritic(agent_id=False))
    assert config(critic=CentralisedCritic(agent_id=True)).share_parameters is False
    from jaxmarl.baselines.multitask import MultiTaskPPOConfig

    with pytest.raises(ValueError, match="share_parameters=false is not supported by the multi"):
        MultiTaskPPOConfig(
            env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
            run=RunConfig(total_timesteps=4 * 128),
            tasks=("MPE_simple_spread_v3", "MPE_simple_reference_v3"),
            share_parameters=False,
        )


def test_command_line_option_resume_and_social_dilemma_metrics(tmp_path):
    """Independent IPPO on a short Coin Game (2 inner games of 2 steps) with normalised inputs:
    seeds vmapped, a stopped and resumed run equals an uninterrupted one (each agent's input
    statistics included), and the own-coin rate and welfare reach metrics.jsonl and the run
    directory's plots."""
    command = train.parse(["alg=ippo", "preset=coin_game_independent"])
    assert command.config.share_parameters is False
    short_game = {"num_inner_steps": 2, "num_outer_steps": 2}
    learner = make_ppo(
        config(
            "mlp",
            env=EnvConfig(env_id="coin_game", env_kwargs=short_game, num_envs=4),
            normalize_obs=True,
        )
    )
    settings = dict(seed=3, num_seeds=2, updates_per_chunk=1, checkpoint_every=1, eval_episodes=4)
    run_config = dataclasses.replace(learner.config.run, gif=False, **settings)
    full = run(learner, run_config, tmp_path / "full", show_progress=False)
    run(learner, run_config, tmp_path / "split", stop_after_chunks=1, show_progress=False)
    resumed = run(learner, run_config, tmp_path / "split", resume=True, show_progress=False)
    chex.assert_trees_all_equal(full.state.params, resumed.state.params)
    # [seeds, agents]: 2 updates x 8 steps x 4 envs of each agent's rows.
    counts = full.state.params["input_norm"]["obs"]["count"]
    np.testing.assert_array_equal(counts, np.full((2, 2), 2 * 8 * 4.0))
    rows = read_jsonl(tmp_path / "full" / "metrics.jsonl")
    assert len(rows) == 2 * 2 and rows == read_jsonl(tmp_path / "split" / "metrics.jsonl")
    chex.assert_tree_all_finite(full.state.params)
    kernel = full.state.params["heads"]["policy"]["Dense_0"]["kernel"]  # [seeds, A, H, actions]
    assert kernel.shape[:2] == (2, 2)
    assert not np.allclose(kernel[:, 0], kernel[:, 1])  # the players' parameters stay apart
    assert rows[0]["loss"] != rows[1]["loss"]  # vmapped seeds differ
    for row in rows:
        assert 0.0 <= row["own_coin_fraction"] <= 1.0
        np.testing.assert_allclose(row["episode_welfare"], 2 * row["episode_return"], rtol=1e-5)
    assert any(row["coins_collected"] > 0 for row in rows)
    for name in ("own_coin_fraction", "episode_welfare"):
        assert (tmp_path / "full" / f"learning_curve_{name}.png").stat().st_size > 0


@pytest.mark.slow
def test_independent_ippo_beats_a_random_policy_on_the_switch_riddle():
    """A short CI learning run: a uniformly random policy tells too early in most episodes
    (about -0.6 per episode with 3 agents); IPPO learns within ~60k env steps to stop that."""
    cfg = config(
        env=EnvConfig(env_id="switch_riddle", num_envs=32),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(32,)), embed_dim=32),
        run=RunConfig(total_timesteps=32 * 32 * 60),
        num_steps=32,
        lr=3e-3,
        num_minibatches=2,
        update_epochs=2,
    )
    _, metrics = jax.jit(make_train(cfg))(jax.random.key(0))
    returns = np.asarray(metrics["episode_return"])
    first, last = returns[:3].mean(), returns[-5:].mean()
    assert first < -0.4, first
    assert last > -0.1, (first, last)
    # the env's success info is logged per update: a return is correct tells less wrong ones
    success = np.asarray(metrics["success"])
    assert np.all((success >= returns - 1e-6) & (success <= 1.0)), (success, returns)
    assert success[:3].mean() > 0.0
