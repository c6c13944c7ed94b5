"""IPPO / MAPPO: config validation, purity (vmapped seeds == separate runs), learning."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.ppo import PPOConfig, make_ppo, make_train
from jaxmarl.training.config import EnvConfig, NetworkConfig, RunConfig


def small_config(**overrides):
    base = dict(
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
        network=NetworkConfig(trunk_sizes=(32,), embed_dim=32, gru_size=16),
        run=RunConfig(total_timesteps=4 * 16 * 3),
        num_steps=16,
        num_minibatches=2,
        update_epochs=2,
    )
    base.update(overrides)
    return PPOConfig(**base)


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(lr=-1.0), r"lr must be > 0"),
        (dict(num_minibatches=3), r"not divisible by num_minibatches=3"),
        (dict(critic="global"), r"critic must be one of"),
        (dict(run=RunConfig(total_timesteps=1000)), r"use run.total_timesteps=960 or 1024"),
        (dict(gamma=1.5), r"gamma must be in"),
    ],
)
def test_invalid_configs_fail_before_building(overrides, match):
    with pytest.raises(ValueError, match=match):
        small_config(**overrides)


def test_unknown_env_and_network_values_fail_early():
    with pytest.raises(ValueError, match="did you mean 'MPE_simple_spread_v3'"):
        EnvConfig(env_id="MPE_simple_spred_v3")
    with pytest.raises(ValueError, match="network.trunk must be one of"):
        NetworkConfig(trunk="lstm")


def test_config_is_frozen_and_hashable():
    config = small_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.lr = 1.0
    assert hash(config) == hash(small_config())


@pytest.mark.parametrize(
    "trunk, critic, env_kwargs",
    [
        ("mlp", "local", {}),
        ("gru", "centralised", {}),
        ("mlp", "centralised", {"action_type": "Continuous"}),
    ],
)
def test_train_runs_finite_with_expected_shapes(trunk, critic, env_kwargs):
    config = small_config(
        network=NetworkConfig(trunk=trunk, trunk_sizes=(32,), embed_dim=32, gru_size=16),
        critic=critic,
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4, env_kwargs=env_kwargs),
    )
    state, metrics = jax.jit(make_train(config))(jax.random.key(0))
    assert metrics["loss"].shape == (3,)
    chex.assert_tree_all_finite(metrics)
    chex.assert_tree_all_finite(state.params)
    assert int(state.update) == 3
    for name in ("episode_return", "policy_loss", "value_loss", "entropy", "approx_kl"):
        assert metrics[name].dtype == jnp.float32, name
    # 16 steps x 3 updates = 48 steps: 1 episode of 25 steps ended per env by then.
    assert float(metrics["episodes"].sum()) == 4.0


def test_vmapped_seeds_equal_separate_runs():
    train = make_train(small_config())
    keys = jax.random.split(jax.random.key(7), 3)
    _, batched = jax.jit(jax.vmap(train))(keys)
    single = jax.jit(train)
    for i in range(3):
        _, metrics = single(keys[i])
        chex.assert_trees_all_close(
            jax.tree.map(lambda x: x[i], batched), metrics, rtol=1e-5, atol=1e-6
        )
    assert not np.allclose(batched["loss"][0], batched["loss"][1])


def test_update_does_not_retrace():
    learner = make_ppo(small_config())
    update = jax.jit(chex.assert_max_traces(learner.update, n=1))
    state = learner.init(jax.random.key(0))
    for _ in range(2):
        state, _ = update(state)
    chex.clear_trace_counter()


def test_ippo_improves_clearly_over_random_policy():
    """A small learning test for CI: IPPO on MPE_simple_v3 (one agent, one landmark)."""
    config = PPOConfig(
        env=EnvConfig(env_id="MPE_simple_v3", num_envs=16),
        network=NetworkConfig(trunk_sizes=(64,), embed_dim=64),
        run=RunConfig(total_timesteps=16 * 64 * 60),
        num_steps=64,
        lr=3e-3,
        num_minibatches=4,
    )
    _, metrics = jax.jit(make_train(config))(jax.random.key(0))
    returns = np.asarray(metrics["episode_return"])
    first, last = returns[:5].mean(), returns[-5:].mean()
    # A random policy scores about -27 on MPE_simple_v3 (25 steps); learning roughly halves it.
    assert first < -20.0, first
    assert last > first + 8.0, (first, last)
