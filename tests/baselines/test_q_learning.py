"""IQL / VDN / QMIX / SHAQ: config checks, shapes, purity (vmapped seeds == separate runs),
learning."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning, make_train
from jaxmarl.networks.mixers import (
    NoMixerConfig,
    QMIXMixerConfig,
    SHAQMixerConfig,
    VDNMixerConfig,
)
from jaxmarl.training.config import (
    CNNEncoderConfig,
    EnvConfig,
    GRUTrunkConfig,
    MLPTrunkConfig,
    NetworkConfig,
    RewardShapingConfig,
    RunConfig,
)


def small_config(**overrides):
    base = dict(
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
        network=NetworkConfig(
            trunk=GRUTrunkConfig(size=16), embed_dim=16, activation="relu", agent_id=True
        ),
        run=RunConfig(total_timesteps=4 * 10 * 6),
        num_steps=10,
        buffer_size=12,
        batch_size=4,
        learning_starts=80,
        target_update_interval=2,
        mixer=QMIXMixerConfig(embed_dim=8, hypernet_hidden_dim=16),
    )
    base.update(overrides)
    return QLearningConfig(**base)


@pytest.mark.parametrize(
    "overrides, match",
    [
        (dict(batch_size=16), r"buffer_size=12 sequences cannot hold one batch of batch_size=16"),
        (dict(buffer_size=3, batch_size=2), r"cannot hold one update's env.num_envs=4"),
        (dict(buffer_size=0), r"buffer_size must be > 0"),
        (dict(tau=0.0), r"tau must be in \(0, 1\]"),
        (dict(eps_start=2.0), r"eps_start must be in \[0, 1\]"),
        (dict(lr=-1e-3), r"lr must be > 0"),
        (dict(reward_scale=0.0), r"reward_scale must be > 0"),
        (dict(team_reward="first"), r"team_reward must be one of \('sum', 'mean'\)"),
        (dict(learning_starts=-1), r"learning_starts must be >= 0"),
        (dict(burn_in=-1), r"burn_in must be in \[0, num_steps=\d+\], got -1"),
        (dict(burn_in=10**6), r"burn_in must be in \[0, num_steps=\d+\], got 1000000"),
        (dict(run=RunConfig(total_timesteps=1010)), r"use run.total_timesteps=1000 or 1040"),
    ],
)
def test_invalid_configs_fail_before_building(overrides, match):
    with pytest.raises(ValueError, match=match):
        small_config(**overrides)


def test_invalid_encoder_gain_fails_in_the_network_section():
    with pytest.raises(ValueError, match=r"network.encoder_init_gain must be > 0, got 0.0"):
        NetworkConfig(encoder_init_gain=0.0)


def test_continuous_actions_are_refused_before_compiling():
    config = small_config(
        env=EnvConfig(
            env_id="MPE_simple_spread_v3", num_envs=4, env_kwargs={"action_type": "Continuous"}
        )
    )
    with pytest.raises(ValueError, match="Q-learning needs discrete actions"):
        make_q_learning(config)


def test_config_is_frozen_and_hashable_with_q_defaults():
    config = small_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.tau = 0.5
    assert hash(config) == hash(small_config())
    default = QLearningConfig()
    assert default.network.trunk == GRUTrunkConfig(size=64) and default.network.agent_id
    # JaxMARL's Q agents initialise their dense embedding with gain 1, not the PPO sqrt(2).
    assert default.network.encoder_init_gain == 1.0
    assert default.num_updates == default.run.total_timesteps // (default.env.num_envs * 25)


def test_qmix_updates_run_finite_with_expected_shapes_without_retracing():
    learner = make_q_learning(small_config())
    update = jax.jit(chex.assert_max_traces(learner.update, n=1))
    state = learner.init(jax.random.key(0))
    history = []
    for _ in range(learner.num_updates):
        state, step_metrics = update(state)
        history.append(step_metrics)
    chex.clear_trace_counter()
    metrics = jax.tree.map(lambda *xs: jnp.stack(xs), *history)
    assert metrics["loss"].shape == (6,)
    chex.assert_tree_all_finite((metrics, state.params, state.target_params))
    for name in ("episode_return", "loss", "q_mean", "epsilon", "grad_norm", "learning"):
        assert metrics[name].dtype == jnp.float32, name
    # Learning starts once 80 env steps are done (update 2) and the buffer holds a batch.
    np.testing.assert_array_equal(metrics["learning"], [0, 1, 1, 1, 1, 1])
    assert float(metrics["loss"][0]) == 0.0 and float(metrics["loss"][1]) > 0.0
    # Epsilon decays linearly over eps_decay=10% of 6 updates, then stays at eps_finish.
    assert float(metrics["epsilon"][0]) == 1.0
    np.testing.assert_allclose(metrics["epsilon"][1:], 0.05)
    # The buffer wrapped around: 6 updates x 4 envs = 24 sequences into 12 slots.
    assert int(state.buffer.size) == 12 and int(state.buffer.position) == 0
    assert state.buffer.data.inputs.obs.shape[:2] == (12, 11)  # [capacity, T + 1, ...]
    assert set(state.params) == {"encoder", "trunk", "heads", "mixer"}
    # Hard target updates every 2 updates: after update 6 the target equals the online net.
    chex.assert_trees_all_equal(state.params, state.target_params)


def test_burn_in_reaches_the_loss():
    # 10-step sequences of 25-step MPE episodes mostly begin mid-episode, so a burn-in of the
    # whole sequence leaves out of the loss every step before an episode start.
    def first_learning_update(burn_in):
        learner = make_q_learning(small_config(mixer=VDNMixerConfig(), burn_in=burn_in))
        state = learner.init(jax.random.key(0))
        for _ in range(2):
            state, metrics = jax.jit(learner.update)(state)
        return metrics

    plain, burnt = first_learning_update(0), first_learning_update(10)
    assert float(plain["learning"]) == float(burnt["learning"]) == 1.0
    chex.assert_tree_all_finite(burnt)
    np.testing.assert_array_equal(plain["q_mean"], burnt["q_mean"])  # same batch, same network
    assert not np.isclose(float(plain["loss"]), float(burnt["loss"]))


@pytest.mark.parametrize(
    "mixer",
    [VDNMixerConfig(), SHAQMixerConfig(embed_dim=4, hypernet_hidden_dim=8, init_scale=0.5)],
    ids=lambda m: m.kind,
)
def test_vmapped_seeds_equal_separate_runs(mixer):
    # A trunk without layers (network.trunk.sizes=[]): the Q head's own hidden layer follows
    # the encoder directly. SHAQ draws its coalitions from each seed's own keys.
    network = NetworkConfig(
        trunk=MLPTrunkConfig(sizes=()), head_sizes=(16,), embed_dim=16, agent_id=True
    )
    config = small_config(mixer=mixer, network=network, tau=0.5, target_update_interval=1)
    train = make_train(config)
    keys = jax.random.split(jax.random.key(7), 2)
    _, batched = jax.jit(jax.vmap(train))(keys)
    single = jax.jit(train)
    for i in range(2):
        state, metrics = single(keys[i])
        assert state.params["trunk"] == {} and "hidden_0" in state.params["heads"]["q"]
        chex.assert_trees_all_close(
            jax.tree.map(lambda x: x[i], batched), metrics, rtol=1e-5, atol=1e-6
        )
        chex.assert_trees_all_equal(metrics, single(keys[i])[1])  # same key, same result
    assert not np.allclose(batched["loss"][0], batched["loss"][1])


@pytest.mark.parametrize(
    "mixer",
    [
        NoMixerConfig(),
        # Nightly: its estimator, at each of the 4 gradient steps, takes several times IQL's time.
        pytest.param(
            SHAQMixerConfig(embed_dim=8, hypernet_hidden_dim=16), marks=pytest.mark.nightly
        ),
    ],
    ids=lambda m: m.kind,
)
def test_q_learning_improves_clearly_over_random_policy(mixer):
    """A small learning test for CI: IQL, and SHAQ's weighted loss, on MPE_simple_v3 (one agent,
    one landmark: SHAQ's coalitions are empty, its alpha still weighs non-greedy actions)."""
    config = QLearningConfig(
        env=EnvConfig(env_id="MPE_simple_v3", num_envs=4),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64, activation="relu"),
        run=RunConfig(total_timesteps=4 * 25 * 400),
        mixer=mixer,
        buffer_size=1000,
        batch_size=32,
        learning_starts=2000,
        num_epochs=4,
        target_update_interval=10,
        lr=3e-3,
        eps_decay=0.3,
    )
    _, metrics = jax.jit(make_train(config))(jax.random.key(0))
    returns = np.asarray(metrics["episode_return"])
    first, last = returns[:20].mean(), returns[-40:].mean()
    # Uniformly random actions score about -45 here; the learned policy about -10.
    assert first < -30.0, first
    assert last > -20.0, (first, last)


@pytest.mark.parametrize(
    "interval, tau, syncs",
    [
        (1, 0.25, [True, True, True, True]),  # soft: every update, a quarter of the way
        (2, 1.0, [False, True, False, True]),  # hard: a copy every second update
    ],
)
def test_target_network_follows_online_by_tau_every_interval(interval, tau, syncs):
    # The MPE presets use the soft form (tau 0.005 every update); the SMAX presets the hard.
    learner = make_q_learning(
        small_config(target_update_interval=interval, tau=tau, learning_starts=40)
    )
    update = jax.jit(learner.update)
    state = learner.init(jax.random.key(3))
    gaps = []  # how far the online network is from the old target: the check's teeth
    for sync in syncs:
        new_state, metrics = update(state)
        gaps.append(
            max(
                float(jnp.max(jnp.abs(a - b)))
                for a, b in zip(
                    jax.tree.leaves(new_state.params), jax.tree.leaves(state.target_params)
                )
            )
        )
        if sync:
            expected = jax.tree.map(
                lambda online, old: tau * online + (1.0 - tau) * old,
                new_state.params,
                state.target_params,
            )
        else:
            expected = state.target_params
        chex.assert_trees_all_close(new_state.target_params, expected, rtol=1e-6, atol=1e-7)
        state = new_state
    assert float(metrics["learning"]) == 1.0
    assert gaps[-1] > 1e-3, gaps  # learning moved the online network away from the target


def test_network_head_sizes_give_the_q_head_hidden_layers():
    network = dataclasses.replace(small_config().network, head_sizes=(12,))
    params = jax.jit(make_q_learning(small_config(network=network)).init)(jax.random.key(0)).params
    head = params["heads"]["q"]
    assert head["hidden_0"]["kernel"].shape == (16, 12)
    assert head["Dense_0"]["kernel"].shape == (12, 5)  # simple_spread: 5 actions


def test_agent_ids_reach_a_cnn_as_channels_of_grid_observations():
    # Overcooked's (4, 5, 26) grids with the Q-learners' default agent ids: 2 id channels.
    network = NetworkConfig(
        encoder=CNNEncoderConfig(features=(4,), kernel_sizes=(3,)),
        trunk=MLPTrunkConfig(sizes=()),
        embed_dim=8,
        agent_id=True,
    )
    config = small_config(env=EnvConfig(env_id="overcooked", num_envs=4), network=network)
    learner = make_q_learning(config)
    state = jax.jit(learner.init)(jax.random.key(0))
    assert state.params["encoder"]["Conv_0"]["kernel"].shape == (3, 3, 26 + 2, 4)
    state, metrics = jax.jit(learner.update)(state)
    chex.assert_tree_all_finite((metrics, state.params))


def test_buffer_learner_stores_the_shaped_reward():
    # Overcooked from random states under random play (epsilon 1 in the first update), the
    # shaped reward weighted by 0.5: the stored rewards hold 0.5 x Overcooked's shaping (3 for
    # an onion in a pot or a dish picked up, 5 for a soup picked up), not only the env's.
    config = QLearningConfig(
        env=EnvConfig(
            env_id="overcooked",
            env_kwargs={"random_reset": True},
            num_envs=16,
            reward_shaping=RewardShapingConfig(horizon=10**6, scale=0.5),
        ),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=()), embed_dim=8, activation="relu"),
        mixer=NoMixerConfig(),
        run=RunConfig(total_timesteps=16 * 32),
        num_steps=32,
        buffer_size=16,
        batch_size=4,
        learning_starts=10**6,
        bootstrap_truncation=False,
    )
    learner = make_q_learning(config)
    state, _ = jax.jit(learner.update)(jax.jit(learner.init)(jax.random.key(0)))
    stored = np.asarray(state.buffer.data.reward)
    shaped = stored[(stored != 0) & (stored < 20)]  # a served soup (20) is the env's own
    assert shaped.size > 0, "random play from random states should earn some shaping"
    assert set(np.unique(shaped)) <= {1.5, 2.5, 3.0, 4.0, 5.0}, np.unique(shaped)
