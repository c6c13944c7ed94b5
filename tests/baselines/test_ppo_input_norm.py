"""PPO's running input normalisation (``normalize_obs``): the statistics, the networks that read
them, and the learner that keeps them."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.ppo import (
    CentralisedCritic,
    LocalCritic,
    build_network,
    make_ppo,
    make_train,
    ppo_parts,
)
from jaxmarl.networks import input_norm
from jaxmarl.training.config import EnvConfig, RunConfig
from jaxmarl.training.data_parallel import DATA_AXIS, DataShards
from tests.baselines.test_ppo import small_config as ppo_config


def _moments(x: np.ndarray) -> dict[str, np.ndarray]:
    x = np.asarray(x, np.float64)
    return {"mean": x.mean(0), "var": x.var(0), "count": np.float64(x.shape[0])}


def test_merging_batches_one_by_one_gives_the_moments_of_all_of_them():
    rng = np.random.default_rng(0)
    # Features of shape [2, 3] on different scales and offsets; batches of unequal sizes.
    batches = [
        rng.normal(loc=5.0, scale=[[1.0, 10.0, 0.1]] * 2, size=(n, 2, 3)).astype(np.float32)
        for n in (7, 50, 3)
    ]
    stats = input_norm.initial((2, 3))
    stats = input_norm.merge(stats, jnp.asarray(batches[0]))
    chex.assert_trees_all_close(stats, _moments(batches[0]), rtol=1e-5, atol=1e-6)
    for batch in batches[1:]:
        stats = jax.jit(input_norm.merge)(stats, jnp.asarray(batch))
    expected = _moments(np.concatenate(batches))
    chex.assert_trees_all_close(stats, expected, rtol=1e-5, atol=1e-6)
    assert all(v.dtype == jnp.float32 for v in jax.tree.leaves(stats))


def test_a_batch_split_over_devices_merges_as_on_one():
    rng = np.random.default_rng(1)
    first = jnp.asarray(rng.normal(size=(6, 4)), jnp.float32)
    batch = jnp.asarray(rng.normal(2.0, 3.0, size=(10, 4)), jnp.float32)
    stats = input_norm.merge(input_norm.initial((4,)), first)
    whole = input_norm.merge(stats, batch)
    halves = batch.reshape((2, 5, 4))  # device d holds rows 5d .. 5d + 4
    split = jax.vmap(
        lambda rows: input_norm.merge(stats, rows, DataShards(2)), axis_name=DATA_AXIS
    )(halves)
    for device in range(2):
        chex.assert_trees_all_close(
            jax.tree.map(lambda x: x[device], split), whole, rtol=1e-5, atol=1e-6
        )


def test_normalise_standardises_clips_and_passes_no_gradient_to_the_statistics():
    stats = {"mean": jnp.array([1.0, -2.0]), "var": jnp.array([4.0, 0.0]), "count": jnp.array(9.0)}
    x = jnp.array([[3.0, -2.0], [1.0 + 2.0 * 50, -2.0 + 1e-3]])
    out = input_norm.normalise(stats, x)
    # (3 - 1) / 2 = 1; a constant feature maps to 0; far values stop at CLIP.
    np.testing.assert_allclose(out[0], [1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(out[1], [input_norm.CLIP, input_norm.CLIP], atol=1e-6)
    grads = jax.grad(lambda s: input_norm.normalise(s, x[:1]).sum())(stats)
    assert all(float(jnp.abs(g).max()) == 0.0 for g in jax.tree.leaves(grads))


def small_config(**overrides):
    """test_ppo's small MPE run with normalised inputs, two updates long."""
    return ppo_config(normalize_obs=True, run=RunConfig(total_timesteps=4 * 16 * 2), **overrides)


def _learner_and_network(config):
    learner = make_ppo(config)
    return learner, build_network(config, learner.env.batch)


@pytest.mark.parametrize("critic", ["local", "centralised"])
def test_the_networks_read_their_inputs_through_the_statistics(critic):
    """A network with statistics computes what the same network without them computes on
    inputs standardised by hand."""
    centralised = critic == "centralised"
    config = small_config(critic=CentralisedCritic() if centralised else LocalCritic())
    learner, network = _learner_and_network(config)
    params = learner.init(jax.random.key(0)).params
    plain = build_network(dataclasses.replace(config, normalize_obs=False), learner.env.batch)
    assert set(params["input_norm"]) == ({"obs", "critic_input"} if centralised else {"obs"})
    rng = np.random.default_rng(2)
    stats = jax.tree.map(
        lambda s: jnp.asarray(rng.uniform(0.5, 2.0, s.shape), jnp.float32), params["input_norm"]
    )
    params = {**params, "input_norm": stats}
    weights = {k: v for k, v in params.items() if k != "input_norm"}
    obs_width = stats["obs"]["mean"].shape[0]
    critic_width = (stats["critic_input"] if centralised else stats["obs"])["mean"].shape[0]
    obs = jnp.asarray(rng.normal(size=(1, 6, obs_width)), jnp.float32)
    critic_input = jnp.asarray(rng.normal(size=(1, 6, critic_width)), jnp.float32)
    first = jnp.zeros((1, 6), bool)
    carry = network.initial_carry(6)

    def by_hand(which, x):
        s = stats[which]
        return (x - s["mean"]) / jnp.sqrt(s["var"] + input_norm.EPS)

    _, dist = network.policy(params, carry[0], obs, first)
    _, expected = plain.policy(weights, carry[0], by_hand("obs", obs), first)
    np.testing.assert_allclose(dist.logits, expected.logits, rtol=1e-5, atol=1e-5)
    _, value = network.value(params, carry[1], critic_input, first)
    critic_stats = "critic_input" if centralised else "obs"
    _, expected_value = plain.value(weights, carry[1], by_hand(critic_stats, critic_input), first)
    np.testing.assert_allclose(value, expected_value, rtol=1e-5, atol=1e-5)
    # The statistics matter: the identity statistics give other logits.
    _, unnormalised = plain.policy(weights, carry[0], obs, first)
    assert not np.allclose(dist.logits, unnormalised.logits, atol=1e-3)


@pytest.mark.parametrize(
    "critic, share_parameters",
    [("local", True), ("centralised", True), ("local", False)],
)
def test_each_update_merges_its_rollout_before_the_gradient_steps(critic, share_parameters):
    """After one update the statistics are the moments of the rollout's inputs (of each
    agent's, with parameters per agent), the optimiser left them there, and the gradient step
    already read them."""
    centralised = critic == "centralised"
    config = small_config(
        critic=CentralisedCritic() if centralised else LocalCritic(),
        share_parameters=share_parameters,
        update_epochs=1,
        num_minibatches=1,  # one gradient step: its loss is the whole rollout's, before it
    )
    learner, network = _learner_and_network(config)
    state = learner.init(jax.random.key(0))
    new_state, metrics = jax.jit(learner.update)(state)
    parts = ppo_parts(config, learner.env, network)
    _, batch, _ = parts.collect(state.params, state.runner, 0)

    agents = learner.env.batch.num_agents
    obs = np.asarray(batch.steps.obs).reshape(-1, agents, 18)  # [T * B, A, 18], env-major rows
    stats = new_state.params["input_norm"]
    if share_parameters:
        chex.assert_trees_all_close(
            stats["obs"], _moments(obs.reshape(-1, 18)), rtol=1e-4, atol=1e-5
        )
    else:
        for agent in range(agents):
            mine = jax.tree.map(lambda x: x[agent], stats["obs"])
            chex.assert_trees_all_close(mine, _moments(obs[:, agent]), rtol=1e-4, atol=1e-5)
    if centralised:
        world = np.asarray(batch.steps.critic_input)
        world = world.reshape(-1, world.shape[-1])
        chex.assert_trees_all_close(stats["critic_input"], _moments(world), rtol=1e-4, atol=1e-5)
    # The one gradient step's loss is the rollout's under the merged statistics.
    whole = jax.tree.map(lambda x: x[0], parts.minibatches(jax.random.key(9), batch).stacked())
    merged = parts.merge_inputs(state.params, batch)
    chex.assert_trees_all_close(merged["input_norm"], stats, rtol=1e-6, atol=1e-6)
    loss, _ = parts.loss_fn(merged, whole)
    stale, _ = parts.loss_fn(state.params, whole)
    np.testing.assert_allclose(metrics["loss"], loss, rtol=1e-4, atol=1e-5)
    assert not np.isclose(float(loss), float(stale), rtol=1e-3)
    # The rest of the parameters did train.
    before = state.params["heads"]["policy"]["Dense_0"]["kernel"]
    assert not np.allclose(before, new_state.params["heads"]["policy"]["Dense_0"]["kernel"])
    chex.assert_tree_all_finite(metrics)


def test_training_with_normalised_inputs_is_pure_under_vmap():
    """Continuous MAPPO with both sets of statistics: vmapped seeds equal separate runs."""
    config = small_config(
        critic=CentralisedCritic(),
        env=EnvConfig(
            env_id="MPE_simple_spread_v3", num_envs=4, env_kwargs={"action_type": "Continuous"}
        ),
    )
    train = make_train(config)
    keys = jax.random.split(jax.random.key(5), 2)
    states, batched = jax.jit(jax.vmap(train))(keys)
    state, metrics = jax.jit(train)(keys[1])
    chex.assert_trees_all_close(
        jax.tree.map(lambda x: x[1], batched), metrics, rtol=1e-5, atol=1e-6
    )
    chex.assert_trees_all_close(
        jax.tree.map(lambda x: x[1], states.params), state.params, rtol=1e-5, atol=1e-6
    )
    # Two updates of 16 steps x 4 envs x 3 agents.
    np.testing.assert_array_equal(states.params["input_norm"]["obs"]["count"], [384.0, 384.0])
    assert not np.allclose(batched["loss"][0], batched["loss"][1])


def test_multitask_rejects_input_normalisation():
    from jaxmarl.baselines.multitask import MultiTaskPPOConfig

    with pytest.raises(ValueError, match="normalize_obs=true is not supported"):
        MultiTaskPPOConfig(
            env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
            run=RunConfig(total_timesteps=4 * 128),
            tasks=("MPE_simple_spread_v3", "MPE_simple_reference_v3"),
            normalize_obs=True,
        )
