"""IPPO / MAPPO: config validation, purity (vmapped seeds == separate runs), learning."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxmarl.baselines.ppo import (
    CentralisedCritic,
    LocalCritic,
    PPOConfig,
    make_ppo,
    make_train,
    ppo_optimiser,
)
from jaxmarl.training.config import (
    CNNEncoderConfig,
    EnvConfig,
    GRUTrunkConfig,
    MLPTrunkConfig,
    NetworkConfig,
    RunConfig,
)

TRUNKS = {
    "mlp": MLPTrunkConfig(sizes=(32,)),
    "gru": GRUTrunkConfig(size=16),
    "none": MLPTrunkConfig(sizes=()),  # no trunk layers: the heads' own layers follow the encoder
}


def small_config(**overrides):
    base = dict(
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
        network=NetworkConfig(trunk=TRUNKS["mlp"], embed_dim=32),
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
        (dict(critic="global"), r"critic must be a LocalCritic or a CentralisedCritic"),
        (dict(run=RunConfig(total_timesteps=1000)), r"use run.total_timesteps=960 or 1024"),
        (dict(gamma=1.5), r"gamma must be in"),
        (dict(init_log_std=float("nan")), r"init_log_std must be a finite number"),
    ],
)
def test_invalid_configs_fail_before_building(overrides, match):
    with pytest.raises(ValueError, match=match):
        small_config(**overrides)


def test_unknown_env_and_network_values_fail_early():
    with pytest.raises(ValueError, match="did you mean 'MPE_simple_spread_v3'"):
        EnvConfig(env_id="MPE_simple_spred_v3")
    with pytest.raises(ValueError, match="network.trunk must be an MLPTrunkConfig or a GRU"):
        NetworkConfig(trunk="lstm")
    with pytest.raises(ValueError, match="network.trunk.sizes must be > 0"):
        MLPTrunkConfig(sizes=(64, 0))


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
        ("gru", "shared", {}),
        ("mlp", "shared", {}),
        ("gru", "shared_separate_clip", {}),
        ("none", "local", {}),
    ],
)
def test_train_runs_finite_with_expected_shapes(trunk, critic, env_kwargs):
    # "shared": the centralised critic without agent ids, one evaluation per env;
    # "shared_separate_clip": that, with the actor's and critic's gradients clipped apart.
    shared = critic.startswith("shared")
    config = small_config(
        network=NetworkConfig(
            trunk=TRUNKS[trunk], embed_dim=32, head_sizes=(16,) if trunk == "none" else ()
        ),
        critic=CentralisedCritic(agent_id=not shared)
        if shared or critic == "centralised"
        else LocalCritic(),
        separate_grad_clip=critic == "shared_separate_clip",
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4, env_kwargs=env_kwargs),
    )
    state, metrics = jax.jit(make_train(config))(jax.random.key(0))
    assert metrics["loss"].shape == (3,)
    chex.assert_tree_all_finite(metrics)
    chex.assert_tree_all_finite(state.params)
    assert int(state.update) == 3
    if trunk == "none":
        assert state.params["trunk"] == {} and "trunk" in state.params["critic"]
        assert state.params["critic"]["trunk"] == {}
    for name in ("episode_return", "policy_loss", "value_loss", "entropy", "approx_kl"):
        assert metrics[name].dtype == jnp.float32, name
    # 16 steps x 3 updates = 48 steps: 1 episode of 25 steps ended per env by then.
    assert float(metrics["episodes"].sum()) == 4.0


def _mappo_on_overcooked(**overrides):
    """Two updates of MAPPO on cramped_room (2 envs x 8 steps); its final state."""
    config = small_config(
        env=EnvConfig(env_id="overcooked", num_envs=2),
        critic=CentralisedCritic(),
        num_steps=8,
        num_minibatches=1,
        run=RunConfig(total_timesteps=2 * 8 * 2),
        **overrides,
    )
    state, metrics = jax.jit(make_train(config))(jax.random.key(0))
    chex.assert_tree_all_finite(metrics)
    return config, state


def test_world_state_critic_reads_grid_observations_world_state_flat():
    # Overcooked observes (h, w, 26) grids; an MLP critic reads the world state flat (its
    # encoder once flattened the flat world state as if it were a grid, and crashed).
    _, state = _mappo_on_overcooked()
    world_state_and_id = 4 * 5 * 26 + 2  # cramped_room's grid, then the agent id
    assert state.params["critic"]["encoder"]["Dense_0"]["kernel"].shape[0] == world_state_and_id
    assert state.params["encoder"]["Dense_0"]["kernel"].shape[0] == 4 * 5 * 26


def test_a_cnn_world_state_critic_convolves_the_world_states_grid():
    # MAPPO with a CNN on Overcooked: the critic unflattens the world state (agent_0's grid)
    # and convolves it with its own convolutions; the agent id joins after them.
    cnn = NetworkConfig(
        encoder=CNNEncoderConfig(features=(8,), kernel_sizes=(3,)), embed_dim=16, agent_id=False
    )
    config, state = _mappo_on_overcooked(network=cnn)
    critic = state.params["critic"]["encoder"]
    assert critic["world_state"]["Conv_0"]["kernel"].shape == (3, 3, 26, 8)
    assert critic["Dense_0"]["kernel"].shape == (4 * 5 * 8 + 2, 16)  # convolved grid + id
    assert state.params["encoder"]["Conv_0"]["kernel"].shape == (3, 3, 26, 8)  # the actor's
    # OvercookedV2's default world state is both agents' grids: one convolution each.
    v2 = dataclasses.replace(config, env=EnvConfig(env_id="overcooked_v2", num_envs=2))
    params = jax.jit(make_ppo(v2).init)(jax.random.key(0)).params["critic"]["encoder"]
    assert {"agent_0", "agent_1"} <= set(params)
    # STORM's world state is flat (its observations' leaves, concatenated): nothing to convolve.
    storm = dataclasses.replace(config, env=EnvConfig(env_id="storm_2p", num_envs=2))
    with pytest.raises(ValueError, match="storm_2p's has no \\(h, w, c\\) grid"):
        make_ppo(storm)


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
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64),
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


def _collected(config):
    """A learner's PPO parts and one collected rollout (params, batch, start carries)."""
    from jaxmarl.baselines.ppo import build_network, ppo_parts

    learner = make_ppo(config)
    network = build_network(config, learner.env.batch)
    parts = ppo_parts(config, learner.env, network)
    params, runner = parts.init_params(jax.random.key(1), jax.random.key(2))
    # A few updates' worth of steps so recurrent carries are not all zero.
    runner, _, _ = parts.collect(params, runner)
    _, data, _ = parts.collect(params, runner)
    return learner, network, parts, params, data


@pytest.mark.parametrize("trunk", ["gru", "mlp"])
def test_world_state_critic_runs_once_per_env_and_keeps_env_agents_together(trunk):
    config = small_config(
        network=NetworkConfig(trunk=TRUNKS[trunk], embed_dim=32),
        critic=CentralisedCritic(agent_id=False),
    )
    learner, _, parts, params, data = _collected(config)
    steps, actor_carry, critic_carry = data.steps, data.actor_carry, data.critic_carry
    agents, envs, t = learner.env.batch.num_agents, config.env.num_envs, config.num_steps
    # One critic per env: input [T, B, W], groups of all 3 agents, carries per env.
    assert steps.critic_input.shape == (t, envs, 3 * 18)
    assert steps.obs.shape == (t, envs, agents, 18)
    assert steps.value.shape == steps.value_targets.shape == (t, envs, agents)
    assert critic_carry.shape[0] == envs and actor_carry.shape[0] == envs * agents
    # The agents of an env share its value.
    np.testing.assert_array_equal(
        steps.value, jnp.broadcast_to(steps.value[..., :1], steps.value.shape)
    )
    minibatches = parts.minibatches(jax.random.key(3), data).stacked()
    # MPE's world state is the agents' observations concatenated: in every minibatch each
    # critic row must sit next to exactly its own env's agents.
    obs = minibatches.steps.obs
    np.testing.assert_array_equal(minibatches.steps.critic_input, obs.reshape((*obs.shape[:3], -1)))
    assert minibatches.actor_carry.shape[:3] == minibatches.critic_carry.shape[:2] + (agents,)


def test_world_state_critic_loss_equals_per_agent_evaluation():
    """Evaluating the critic once per env and broadcasting gives the loss and gradients of
    evaluating it for every agent on the same world state (the per-agent layout)."""
    from jaxmarl.training import losses

    config = small_config(
        network=NetworkConfig(trunk=TRUNKS["gru"], embed_dim=32),
        critic=CentralisedCritic(agent_id=False),
        num_minibatches=1,
    )
    learner, network, parts, params, data = _collected(config)
    agents = learner.env.batch.num_agents
    minibatch = jax.tree.map(lambda x: x[0], parts.minibatches(jax.random.key(0), data).stacked())

    def per_agent_loss(params, minibatch):
        mb, a_carry, c_carry = minibatch.steps, minibatch.actor_carry, minibatch.critic_carry
        flat = lambda x: x.reshape((x.shape[0], -1, *x.shape[3:]))
        t, g = mb.critic_input.shape[:2]
        world = jnp.broadcast_to(
            mb.critic_input[:, :, None], (t, g, agents, mb.critic_input.shape[-1])
        )
        c_carry = jnp.repeat(c_carry, agents, axis=0)
        _, values = network.value(params, c_carry, flat(world), flat(mb.first))
        _, dist = network.policy(
            params,
            a_carry.reshape((-1, a_carry.shape[-1])),
            flat(mb.obs),
            flat(mb.first),
            flat(mb.avail_actions),
        )
        adv = losses.normalize(flat(mb.advantages))
        policy_loss, _ = losses.ppo_policy_loss(
            dist.log_prob(flat(mb.action)), flat(mb.log_prob), adv, config.clip_eps
        )
        value_loss = losses.value_loss(
            values, flat(mb.value), flat(mb.value_targets), config.clip_eps
        )
        entropy = jnp.mean(dist.entropy())
        return policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy

    (loss, metrics), grads = jax.value_and_grad(parts.loss_fn, has_aux=True)(params, minibatch)
    ref_loss, ref_grads = jax.value_and_grad(per_agent_loss)(params, minibatch)
    assert float(metrics["value_loss"]) > 0
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-5, atol=1e-6)
    chex.assert_trees_all_close(grads, ref_grads, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "shares, share_parameters",
    [("encoder", True), ("encoder", False), ("trunk", True), ("trunk", False)],
)
def test_a_shared_encoder_or_trunk_is_a_separate_one_tied_to_the_actors(shares, share_parameters):
    """``critic.shares_encoder`` (and ``shares_trunk``): the loss is the separate-tower loss with
    the critic's encoder (and GRU trunk) set to the actor's, and each shared part's gradient is
    the sum of the two towers' gradients. With a shared trunk the rollout's values and
    log-probabilities are what the loss recomputes from the stored carries (same parameters)."""
    trunk = shares == "trunk"
    network = NetworkConfig(trunk=TRUNKS["gru"], embed_dim=32, head_sizes=(8,) if trunk else ())
    config = small_config(
        network=network,
        critic=LocalCritic(shares_encoder=True, shares_trunk=trunk),
        num_minibatches=1,
        share_parameters=share_parameters,
    )
    learner, net, parts, params, data = _collected(config)
    shared = {"encoder", "trunk"} if trunk else {"encoder"}
    assert set(params["critic"]) == {"encoder", "trunk", "head"} - shared
    minibatch = jax.tree.map(lambda x: x[0], parts.minibatches(jax.random.key(0), data).stacked())
    from jaxmarl.baselines.ppo import build_network, ppo_parts

    separate = dataclasses.replace(config, critic=LocalCritic())
    separate_parts = ppo_parts(separate, learner.env, build_network(separate, learner.env.batch))
    tied = {**params, "critic": {**params["critic"], **{k: params[k] for k in shared}}}

    loss_and_grad = lambda parts: jax.jit(jax.value_and_grad(parts.loss_fn, has_aux=True))
    (loss, metrics), grads = loss_and_grad(parts)(params, minibatch)
    (ref_loss, _), ref = loss_and_grad(separate_parts)(tied, minibatch)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-6)
    summed = {k: jax.tree.map(jnp.add, ref[k], ref["critic"].pop(k)) for k in shared}
    chex.assert_trees_all_close(grads, {**ref, **summed}, rtol=1e-5, atol=1e-7)
    assert float(jnp.abs(ref["critic"]["head"]["Dense_0"]["kernel"]).sum()) > 0
    if trunk:
        # The collected values and log-probs come back from the carries: the rollout carried
        # the shared trunk's state for the critic too.
        assert abs(float(metrics["approx_kl"])) < 1e-6
        steps = data.steps
        flat = lambda x: x.reshape((x.shape[0], -1, *x.shape[3:]))
        _, (_, values) = net.policy_and_value(
            params,
            data.actor_carry.reshape((-1, data.actor_carry.shape[-1])),
            data.critic_carry,
            flat(steps.obs),
            flat(steps.first),
            flat(steps.avail_actions),
        )
        np.testing.assert_allclose(values, flat(steps.value), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(
            data.critic_carry, data.actor_carry.reshape(data.critic_carry.shape)
        )


def test_a_critic_sharing_the_trunk_must_share_the_encoder():
    with pytest.raises(ValueError, match="set critic.shares_encoder=true as well"):
        LocalCritic(shares_trunk=True)


def test_world_state_critic_gets_no_agent_id_with_one_agent():
    """With one agent the groups are single agents either way; the id must still be left out."""
    config = small_config(
        env=EnvConfig(env_id="MPE_simple_v3", num_envs=4),
        critic=CentralisedCritic(agent_id=False),
    )
    steps = _collected(config)[4].steps
    assert steps.critic_input.shape == (config.num_steps, 4, 4)  # simple_v3 obs: 4, no id
    with_id = _collected(dataclasses.replace(config, critic=CentralisedCritic(agent_id=True)))[
        4
    ].steps
    assert with_id.critic_input.shape == (config.num_steps, 4, 5)


def test_separate_grad_clip_equals_two_optimisers():
    # JaxMARL's MAPPO trains actor and critic with two optimisers, each with its own clip.
    config = small_config(critic=CentralisedCritic(), separate_grad_clip=True, max_grad_norm=0.5)
    num_updates = 5
    params = jax.jit(make_ppo(config).init)(jax.random.key(0)).params
    keys = iter(jax.random.split(jax.random.key(1), 2 * len(jax.tree.leaves(params))))
    # A critic gradient 100x larger than the actor's: a joint clip would shrink the actor's step.
    grads = {
        part: jax.tree.map(
            lambda x: jax.random.normal(next(keys), x.shape) * (100.0 if part == "critic" else 1.0),
            tree,
        )
        for part, tree in params.items()
    }
    schedule = optax.linear_schedule(config.lr, 0.0, num_updates * 2 * 2)
    one = lambda: optax.chain(optax.clip_by_global_norm(0.5), optax.adam(schedule, eps=1e-5))
    actor = {k: v for k, v in params.items() if k != "critic"}
    critic = params["critic"]
    expected_actor, expected_critic = one(), one()
    state_a, state_c = expected_actor.init(actor), expected_critic.init(critic)
    optimiser = ppo_optimiser(config, num_updates)
    state = optimiser.init(params)
    joint = ppo_optimiser(dataclasses.replace(config, separate_grad_clip=False), num_updates)
    joint_state = joint.init(params)
    for _ in range(3):  # several steps: moments and the schedule's count advance in both
        updates, state = optimiser.update(grads, state, params)
        step_a, state_a = expected_actor.update({k: grads[k] for k in actor}, state_a, actor)
        step_c, state_c = expected_critic.update(grads["critic"], state_c, critic)
        chex.assert_trees_all_close(updates, {**step_a, "critic": step_c}, rtol=1e-6, atol=1e-9)
        joint_updates, joint_state = joint.update(grads, joint_state, params)
    # The joint clip gives a different actor step (so the flag matters), the same structure.
    chex.assert_trees_all_equal_structs(updates, joint_updates)
    assert not np.allclose(
        updates["heads"]["policy"]["Dense_0"]["kernel"],
        joint_updates["heads"]["policy"]["Dense_0"]["kernel"],
    )


def test_multitask_rejects_separate_grad_clip():
    from jaxmarl.baselines.multitask import MultiTaskPPOConfig

    with pytest.raises(ValueError, match="separate_grad_clip=true is not supported"):
        MultiTaskPPOConfig(
            env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
            run=RunConfig(total_timesteps=4 * 128),
            tasks=("MPE_simple_spread_v3", "MPE_simple_reference_v3"),
            separate_grad_clip=True,
        )
