"""SHAQ (``alg=shaq``): the mixer, its place in the TD loss, its optimiser, and the learner
under ``jit`` and ``vmap``."""

import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxmarl import train
from jaxmarl.baselines.q_learning import (
    PQNConfig,
    QCommonConfig,
    make_optimiser,
    make_q_learning,
    td_loss,
)
from jaxmarl.baselines.q_learning.acting import greedy_actions
from jaxmarl.networks import MLPEncoder, MLPTrunk, QHead, QNetwork
from jaxmarl.networks.mixers import (
    ShapleyAlpha,
    SHAQMixer,
    SHAQMixerConfig,
    VDNMixerConfig,
    coalition_means,
)
from tests.baselines.test_q_learning import small_config
from tests.baselines.test_q_learning_core import tiny_sequence

SHAQ = SHAQMixerConfig(embed_dim=4, hypernet_hidden_dim=8, init_scale=0.5)


def test_coalition_means_are_the_mean_of_the_agents_before_each_one():
    agent_q = jnp.array([1.0, 10.0, 100.0, 1000.0])
    orders = list(itertools.permutations(range(4)))
    # Draws that sort the agents into each order: agent order[k] gets draw k.
    draws = jnp.array([np.argsort(order) / 4.0 for order in orders])
    means = np.asarray(coalition_means(agent_q, draws))
    for order, row in zip(orders, means):
        for position, agent in enumerate(order):
            before = [float(agent_q[j]) for j in order[:position]]
            assert row[agent] == pytest.approx(np.mean(before) if before else 0.0)


def test_shaq_weights_only_non_greedy_actions_and_targets_are_the_sum():
    q = jax.random.normal(jax.random.key(0), (6, 3))
    world = jax.random.normal(jax.random.key(1), (6, 5))
    greedy = jnp.array([[True, False, True]] * 3 + [[True, True, True]] * 3)
    fixed = SHAQMixer(alpha=2.5)
    mixed = fixed.apply({}, q, world, greedy)
    np.testing.assert_allclose(mixed[:, 0], jnp.where(greedy, q, 2.5 * q).sum(-1), rtol=1e-6)
    np.testing.assert_allclose(fixed.apply({}, q, world)[:, 0], q.sum(-1), rtol=1e-6)

    learned = SHAQ.module()
    params = learned.init(
        {"params": jax.random.key(2), "coalitions": jax.random.key(3)}, q, world, greedy
    )
    mix = lambda key, g=greedy: learned.apply(params, q, world, g, rngs={"coalitions": key})
    # Every action greedy: the sum, whatever the coalitions; the target side needs no key.
    np.testing.assert_allclose(
        mix(jax.random.key(4), jnp.ones_like(greedy))[:, 0], q.sum(-1), rtol=1e-6
    )
    np.testing.assert_allclose(learned.apply(params, q, world)[:, 0], q.sum(-1), rtol=1e-6)
    # The same key gives the same value; another key other coalitions.
    chex.assert_trees_all_equal(mix(jax.random.key(5)), mix(jax.random.key(5)))
    assert not np.allclose(mix(jax.random.key(5))[:3], mix(jax.random.key(6))[:3])


def test_alpha_is_at_least_one_and_needs_no_draws_for_a_lone_agent():
    estimate = ShapleyAlpha(sample_size=3, embed_dim=4, hypernet_hidden_dim=8, init_scale=2.0)
    q = 5.0 * jax.random.normal(jax.random.key(0), (64, 4))
    world = jax.random.normal(jax.random.key(1), (64, 5))
    rngs = {"params": jax.random.key(2), "coalitions": jax.random.key(3)}
    params = estimate.init(rngs, q, world)
    alpha = estimate.apply(params, q, world, rngs={"coalitions": jax.random.key(4)})
    assert alpha.shape == (64, 4) and bool(jnp.all(alpha >= 1.0))
    assert float(jnp.max(alpha)) > 1.01  # not stuck at the floor with a large init
    # One agent: its coalition is always empty, so the draws do not matter.
    lone = estimate.init(rngs, q[:, :1], world)
    alone = lambda key: estimate.apply(lone, q[:, :1], world, rngs={"coalitions": key})
    chex.assert_trees_all_equal(alone(jax.random.key(5)), alone(jax.random.key(6)))


def tiny_network(mixer):
    return QNetwork(MLPEncoder((), 8), MLPTrunk((8,)), QHead(3), mixer.module(), num_agents=2)


def test_shaq_td_loss_targets_the_vdn_sum_and_trains_alpha_on_non_greedy_actions():
    config = QCommonConfig(mixer=SHAQ, gamma=0.8)
    seq = tiny_sequence(jax.random.key(0))
    net = tiny_network(SHAQ)
    params = net.init(jax.random.key(1), seq.inputs.obs[0], seq.inputs.world_state[0])
    assert params["mixer"]  # the estimator's parameters
    with pytest.raises(ValueError, match="mixer=shaq draws random numbers: pass td_loss a key"):
        td_loss(net, config, params, params, seq)
    loss_and_grad = jax.jit(
        jax.value_and_grad(
            lambda p, s: td_loss(net, config, p, params, s, key=jax.random.key(2)), has_aux=True
        )
    )
    (loss, metrics), grads = loss_and_grad(params, seq)
    chex.assert_tree_all_finite((loss, metrics, grads))
    # The target is VDN's: the sum of the agents' values (same agent parameters).
    vdn = tiny_network(VDNMixerConfig())
    vdn_params = {**params, "mixer": {}}
    vdn_config = QCommonConfig(mixer=VDNMixerConfig(), gamma=0.8)
    _, vdn_metrics = td_loss(vdn, vdn_config, vdn_params, vdn_params, seq)
    np.testing.assert_allclose(metrics["target_mean"], vdn_metrics["target_mean"], rtol=1e-6)
    assert float(optax.tree.norm(grads["mixer"])) > 0.0
    # Every action greedy: alpha weighs nothing, so neither it nor its gradient matters.
    _, q = net.q_values(params, seq.carry, seq.inputs.obs, seq.inputs.first)
    greedy_seq = seq.replace(action=greedy_actions(q[:-1], seq.inputs.avail_actions[:-1]))
    (greedy_loss, greedy_metrics), greedy_grads = loss_and_grad(params, greedy_seq)
    assert float(optax.tree.norm(greedy_grads["mixer"])) == 0.0
    np.testing.assert_allclose(
        greedy_metrics["q_tot_mean"], greedy_metrics["q_mean"] * 2, rtol=1e-5
    )


def test_the_mixer_has_its_own_learning_rate_and_adamw_decays_weights():
    params = {"encoder": jnp.ones(3), "mixer": {"w": jnp.ones(2)}}
    grads = jax.tree.map(jnp.ones_like, params)
    own = QCommonConfig(mixer=SHAQMixerConfig(lr=1e-3), lr=1e-2, optimiser="adam", anneal_lr=False)
    optimiser = make_optimiser(own, 10)
    updates, _ = optimiser.update(grads, optimiser.init(params), params)
    # Adam's first step moves every parameter by its learning rate.
    np.testing.assert_allclose(updates["encoder"], -1e-2, rtol=1e-4)
    np.testing.assert_allclose(updates["mixer"]["w"], -1e-3, rtol=1e-4)

    decayed = QCommonConfig(
        mixer=VDNMixerConfig(), lr=1e-2, optimiser="adam", weight_decay=0.5, anneal_lr=False
    )
    optimiser = make_optimiser(decayed, 10)
    zero = jax.tree.map(jnp.zeros_like, params)
    updates, _ = optimiser.update(zero, optimiser.init(params), params)
    np.testing.assert_allclose(updates["encoder"], -1e-2 * 0.5, rtol=1e-6)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: SHAQMixerConfig(alpha=0.5), r"mixer.alpha must be >= 1"),
        (lambda: SHAQMixerConfig(sample_size=0), r"mixer.sample_size must be > 0"),
        (lambda: SHAQMixerConfig(lr=0.0), r"mixer.lr must be > 0"),
        (lambda: PQNConfig(mixer=SHAQ), r"PQN does not support mixer=shaq; use alg=shaq"),
        (
            lambda: QCommonConfig(weight_decay=1e-5, optimiser="radam"),
            r"weight_decay=1e-05 is decoupled weight decay \(AdamW\), which needs optimiser=adam",
        ),
        (lambda: QCommonConfig(adam_eps=0.0), r"adam_eps must be > 0"),
    ],
)
def test_bad_shaq_settings_name_the_fix(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_shaq_learner_updates_without_retracing():
    # Under vmap: test_q_learning.test_vmapped_seeds_equal_separate_runs[shaq].
    config = small_config(mixer=SHAQ, optimiser="adam", weight_decay=1e-4)
    learner = make_q_learning(config)
    update = jax.jit(chex.assert_max_traces(learner.update, n=1))
    state = learner.init(jax.random.key(0))
    for _ in range(3):
        state, metrics = update(state)
    chex.clear_trace_counter()
    assert float(metrics["learning"]) == 1.0 and set(state.params["mixer"]) == {"ShapleyAlpha_0"}
    assert float(metrics["loss"]) > 0.0
    chex.assert_tree_all_finite((metrics, state.params))


def test_alg_shaq_loads_jaxmarls_shaq_mpe_settings():
    config = train.parse(["alg=shaq"]).config
    assert config.env.env_id == "MPE_simple_spread_v3" and config.mixer.kind == "shaq"
    assert config.mixer == SHAQMixerConfig(
        sample_size=5, embed_dim=32, hypernet_hidden_dim=64, init_scale=1e-5, lr=5e-3
    )
    assert (config.optimiser, config.adam_eps, config.weight_decay) == ("adam", 1e-3, 1e-5)
    assert config.returns.kind == "lambda" and config.returns.td_lambda == pytest.approx(0.6)
    assert (config.target_update_interval, config.tau) == (200, 1.0)
    assert config.network.encoder_init_gain == config.q_init_gain == 2.0  # AGENT_INIT_SCALE
    # Epsilon reaches its floor after JaxMARL's 100,000 steps of 8 envs.
    assert int(config.eps_decay * config.num_updates) * config.steps_per_update == 800_000


def test_q_init_gain_scales_the_q_layer_only():
    x = jnp.ones((2, 8))
    kernels = {
        gain: QHead(4, output_gain=gain).init(jax.random.key(0), x)["params"]["Dense_0"]["kernel"]
        for gain in (1.0, 2.0)
    }
    np.testing.assert_allclose(kernels[2.0], 2.0 * kernels[1.0], rtol=1e-6)
    # The learner builds its Q layer with it; the other layers keep their initialisation.
    q_params = {
        gain: make_q_learning(small_config(q_init_gain=gain)).init(jax.random.key(1)).params
        for gain in (1.0, 2.0)
    }
    head = lambda params: params["heads"]["q"]["Dense_0"]["kernel"]
    np.testing.assert_allclose(head(q_params[2.0]), 2.0 * head(q_params[1.0]), rtol=1e-6)
    chex.assert_trees_all_equal(q_params[1.0]["trunk"], q_params[2.0]["trunk"])
    with pytest.raises(ValueError, match="q_init_gain must be > 0"):
        small_config(q_init_gain=0.0)
