import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import linen as nn

from jaxmarl.networks import (
    ActorCritic,
    CategoricalHead,
    CNNEncoder,
    GaussianHead,
    GRUTrunk,
    MLPEncoder,
    MLPTrunk,
    QHead,
    ValueHead,
    encoder_from_config,
    initial_carry,
    masked_logits,
)
from jaxmarl.networks.init import activation
from jaxmarl.training.config import NetworkConfig


def make_net(trunk):
    return ActorCritic(
        encoder=MLPEncoder((32,), 16),
        trunk=trunk,
        policy_head=CategoricalHead(4),
        critic_encoder=MLPEncoder((), 16),
        critic_trunk=MLPTrunk((16,)),
        value_head=ValueHead(),
    )


def test_param_subtrees_and_shapes():
    net = make_net(GRUTrunk(8))
    params = net.init(jax.random.key(0), jnp.zeros((5, 7)), jnp.zeros((5, 11)))
    assert set(params) == {"encoder", "trunk", "heads", "critic"}
    assert set(params["heads"]) == {"policy"} and set(params["critic"]) == {
        "encoder",
        "trunk",
        "head",
    }
    actor_h, critic_h = net.initial_carry(5)
    assert actor_h.shape == (5, 8) and critic_h.shape == (5, 0)
    obs = jnp.ones((3, 5, 7))
    first = jnp.zeros((3, 5), bool)
    hidden, dist = net.policy(params, actor_h, obs, first)
    assert hidden.shape == (5, 8) and dist.logits.shape == (3, 5, 4)
    _, values = net.value(params, critic_h, jnp.ones((3, 5, 11)), first)
    assert values.shape == (3, 5) and values.dtype == jnp.float32


def test_a_critic_without_an_encoder_reads_the_actors_embedding():
    net = ActorCritic(
        encoder=MLPEncoder((32,), 16),
        trunk=MLPTrunk((16,)),
        policy_head=CategoricalHead(4),
        critic_encoder=None,
        critic_trunk=MLPTrunk((16,)),
        value_head=ValueHead(),
    )
    obs = jax.random.normal(jax.random.key(1), (3, 5, 7))
    params = net.init(jax.random.key(0), obs[0], obs[0])
    assert set(params["critic"]) == {"trunk", "head"}  # no encoder of its own
    _, critic_h = net.initial_carry(5)
    first = jnp.zeros((3, 5), bool)
    value = lambda p: net.value(p, critic_h, obs, first)[1].sum()
    grads = jax.grad(value)(params)
    # The value is the critic's trunk and head over the actor's embedding: it trains the encoder.
    assert float(jnp.abs(grads["encoder"]["Dense_0"]["kernel"]).sum()) > 0
    embedding = MLPEncoder((32,), 16).apply({"params": params["encoder"]}, obs)
    _, y = MLPTrunk((16,)).apply({"params": params["critic"]["trunk"]}, critic_h, embedding, first)
    expected = ValueHead().apply({"params": params["critic"]["head"]}, y)
    np.testing.assert_array_equal(net.value(params, critic_h, obs, first)[1], expected)


def test_a_critic_reading_the_actors_trunk_has_only_its_head():
    """``critic_trunk=None``: the value head reads the actor's GRU output; the critic's carry is
    the actor's, and ``policy_and_value`` returns it for both."""
    net = ActorCritic(
        encoder=MLPEncoder((), 16),
        trunk=GRUTrunk(8),
        policy_head=CategoricalHead(4, hidden_sizes=(6,)),
        critic_encoder=None,
        critic_trunk=None,
        value_head=ValueHead(hidden_sizes=(6,)),
    )
    obs = jax.random.normal(jax.random.key(1), (3, 5, 7))
    params = net.init(jax.random.key(0), obs[0], obs[0])
    assert set(params["critic"]) == {"head"}
    assert set(params["critic"]["head"]) == {"hidden_0", "Dense_0"}
    assert params["critic"]["head"]["hidden_0"]["kernel"].shape == (8, 6)
    actor_h, critic_h = net.initial_carry(5)
    assert critic_h.shape == actor_h.shape == (5, 8)
    actor_h = jax.random.normal(jax.random.key(2), actor_h.shape)
    first = jnp.zeros((3, 5), bool).at[1, 0].set(True)
    (hidden, dist), (critic_hidden, values) = net.policy_and_value(
        params, actor_h, jnp.zeros_like(actor_h), obs, first
    )
    expected_hidden, expected_dist = net.policy(params, actor_h, obs, first)
    _, y = GRUTrunk(8).apply(
        {"params": params["trunk"]},
        actor_h,
        MLPEncoder((), 16).apply({"params": params["encoder"]}, obs),
        first,
    )
    expected_values = ValueHead(hidden_sizes=(6,)).apply({"params": params["critic"]["head"]}, y)
    np.testing.assert_allclose(values, expected_values, rtol=1e-6)
    np.testing.assert_allclose(
        net.value(params, actor_h, obs, first)[1], expected_values, rtol=1e-6
    )
    np.testing.assert_allclose(dist.logits, expected_dist.logits, rtol=1e-6)
    np.testing.assert_array_equal(critic_hidden, hidden)
    np.testing.assert_array_equal(hidden, expected_hidden)
    with pytest.raises(ValueError, match="pass critic_encoder=None"):
        dataclasses.replace(net, critic_encoder=MLPEncoder((), 16))


def test_head_hidden_layers_come_before_the_output_layer():
    x = jax.random.normal(jax.random.key(0), (5, 3))
    head = QHead(4, hidden_sizes=(7, 6), activation="tanh")
    params = head.init(jax.random.key(1), x)["params"]
    assert {k: v["kernel"].shape for k, v in params.items()} == {
        "hidden_0": (3, 7),
        "hidden_1": (7, 6),
        "Dense_0": (6, 4),
    }
    h = jnp.tanh(x @ params["hidden_0"]["kernel"] + params["hidden_0"]["bias"])
    h = jnp.tanh(h @ params["hidden_1"]["kernel"] + params["hidden_1"]["bias"])
    expected = h @ params["Dense_0"]["kernel"] + params["Dense_0"]["bias"]
    np.testing.assert_allclose(head.apply({"params": params}, x), expected, rtol=1e-5, atol=1e-6)
    # Without hidden layers a head's parameters are named as before (checkpoints still load).
    assert set(QHead(4).init(jax.random.key(1), x)["params"]) == {"Dense_0"}
    # ``hidden_gain``: the hidden kernels are orthogonal times the gain (rows, as 3 < 7).
    wide = QHead(4, hidden_sizes=(7,), hidden_gain=2.0).init(jax.random.key(1), x)["params"]
    kernel = wide["hidden_0"]["kernel"]
    np.testing.assert_allclose(kernel @ kernel.T, 4.0 * np.eye(3), atol=1e-5)


def test_network_head_settings_reach_both_ppo_heads():
    from jaxmarl.baselines.ppo import LocalCritic, PPOConfig, build_network
    from jaxmarl.training.rollout import TrainingEnv

    net = NetworkConfig(head_sizes=(8, 4), head_init_gain=2.0, activation="relu")
    critic = LocalCritic(shares_encoder=True, shares_trunk=True)
    config = PPOConfig(network=net, critic=critic)
    env = TrainingEnv.make("MPE_simple_spread_v3", agent_id=False, world_state=False)
    network = build_network(config, env.batch)
    for head in (network.policy_head, network.value_head):
        assert (head.hidden_sizes, head.hidden_gain, head.activation) == ((8, 4), 2.0, "relu")
    assert network.critic_encoder is None and network.critic_trunk is None


def test_masked_actions_have_zero_probability_and_are_never_sampled():
    logits = jnp.zeros((1000, 4))
    avail = jnp.array([True, False, True, False])
    masked = masked_logits(logits, avail)
    assert bool(jnp.isfinite(masked).all())
    head = CategoricalHead(4)
    params = head.init(jax.random.key(0), jnp.ones((1, 3)))
    dist = head.apply(params, jnp.ones((1000, 3)), jnp.broadcast_to(avail, (1000, 4)))
    samples = dist.sample(seed=jax.random.key(1))
    assert set(np.unique(samples).tolist()) <= {0, 2}
    np.testing.assert_allclose(dist.probs[0, 1], 0.0, atol=0)
    assert bool(jnp.isfinite(dist.entropy()).all())
    # Every action masked: still finite (uniform), no NaN in log-probs.
    all_masked = head.apply(params, jnp.ones((1, 3)), jnp.zeros((1, 4), bool))
    assert bool(jnp.isfinite(all_masked.log_prob(jnp.array([0]))).all())


def test_gru_resets_at_first_steps():
    trunk = GRUTrunk(6)
    x = jax.random.normal(jax.random.key(0), (4, 2, 3))
    first = jnp.array([[True, True], [False, False], [True, False], [False, False]])
    params = trunk.init(jax.random.key(1), initial_carry(trunk, 2), x, first)
    noise = jnp.full((2, 6), 5.0)
    _, y = trunk.apply(params, noise, x, first)
    _, y_zero = trunk.apply(params, initial_carry(trunk, 2), x, first)
    np.testing.assert_allclose(y, y_zero, rtol=1e-6)  # reset at t=0 discards the carry
    # Env 0 restarts at t=2: its outputs from t=2 equal a fresh run on x[2:].
    _, fresh = trunk.apply(params, initial_carry(trunk, 2), x[2:], first[2:])
    np.testing.assert_allclose(y[2:, 0], fresh[:, 0], rtol=1e-6)
    assert not np.allclose(y[2:, 1], fresh[:, 1])  # env 1 did not restart


def test_gaussian_head_and_cnn_encoder():
    head = GaussianHead(3)
    params = head.init(jax.random.key(0), jnp.ones((2, 5)))
    dist = head.apply(params, jnp.ones((2, 5)))
    assert dist.sample(seed=jax.random.key(1)).shape == (2, 3)
    cnn = CNNEncoder((4,), (3,), 8)
    cparams = cnn.init(jax.random.key(2), jnp.ones((2, 5, 5, 5, 2)))
    assert cnn.apply(cparams, jnp.ones((2, 5, 5, 5, 2))).shape == (2, 5, 8)


@pytest.mark.parametrize("gain", [1.0, 2.0**0.5])
def test_mlp_encoder_kernels_are_orthogonal_with_the_configured_gain(gain):
    encoder = encoder_from_config(
        NetworkConfig(encoder_sizes=(48,), embed_dim=16, encoder_init_gain=gain)
    )
    params = encoder.init(jax.random.key(0), jnp.zeros((3, 24)))["params"]
    for name, rows, cols in (("Dense_0", 24, 48), ("Dense_1", 48, 16)):
        kernel = params[name]["kernel"]
        assert kernel.shape == (rows, cols) and kernel.dtype == jnp.float32
        # Orthonormal along the shorter side, times the gain.
        gram = kernel.T @ kernel if rows >= cols else kernel @ kernel.T
        np.testing.assert_allclose(gram, gain**2 * np.eye(min(rows, cols)), atol=1e-5)


def test_unknown_activation_names_choices():
    with pytest.raises(ValueError, match="choose one of"):
        activation("swish2")


def test_gru_trunk_computes_flax_gru_cell_with_resets():
    # Same equations as flax.linen.GRUCell: map the cell's per-gate parameters onto the fused
    # layout and compare a sequence with resets step by step.
    cell = nn.GRUCell(features=6)
    cell_params = cell.init(jax.random.key(0), jnp.zeros((4, 6)), jnp.zeros((4, 5)))["params"]
    cat = lambda *names, leaf: jnp.concatenate([cell_params[n][leaf] for n in names], axis=-1)
    params = {
        "input_kernel": cat("ir", "iz", "in", leaf="kernel"),
        "input_bias": cat("ir", "iz", "in", leaf="bias"),
        "recurrent_kernel": cat("hr", "hz", "hn", leaf="kernel"),
        "candidate_bias": cell_params["hn"]["bias"],
    }
    x = jax.random.normal(jax.random.key(1), (7, 4, 5))
    first = jnp.zeros((7, 4), bool).at[0].set(True).at[3, 1].set(True).at[5, 2].set(True)
    hidden0 = jax.random.normal(jax.random.key(2), (4, 6))
    hidden, ys = GRUTrunk(6).apply({"params": params}, hidden0, x, first)

    h, expected = hidden0, []
    for t in range(7):
        h = jnp.where(first[t][:, None], 0.0, h)
        h, y = cell.apply({"params": cell_params}, h, x[t])
        expected.append(y)
    np.testing.assert_allclose(ys, jnp.stack(expected), atol=1e-5)
    np.testing.assert_allclose(hidden, h, atol=1e-5)
    assert ys.shape == (7, 4, 6) and ys.dtype == jnp.float32


def test_gru_trunk_initialises_each_gate_like_separate_layers():
    params = GRUTrunk(16).init(
        jax.random.key(0), jnp.zeros((2, 16)), jnp.zeros((1, 2, 8)), jnp.zeros((1, 2), bool)
    )["params"]
    recurrent = np.asarray(params["recurrent_kernel"])
    for gate in range(3):  # every gate's recurrent block is orthogonal on its own
        block = recurrent[:, gate * 16 : (gate + 1) * 16]
        np.testing.assert_allclose(block.T @ block, np.eye(16), atol=1e-5)
    assert np.all(params["input_bias"] == 0) and np.all(params["candidate_bias"] == 0)


def test_gru_trunk_post_layers_follow_the_gru_at_every_step():
    """``post_sizes``: dense layers + activation on the GRU output; the carry is unchanged."""
    from jaxmarl.networks.trunks import trunk_from_config
    from jaxmarl.training.config import GRUTrunkConfig, NetworkConfig

    plain = GRUTrunk(8)
    post = trunk_from_config(
        NetworkConfig(trunk=GRUTrunkConfig(size=8, post_sizes=(6,)), activation="relu")
    )
    assert post.output_size == 6 and post.carry_size == 8
    x = jax.random.normal(jax.random.key(0), (5, 3, 4))
    first = jnp.zeros((5, 3), dtype=bool).at[0].set(True)
    h0 = initial_carry(post, 3)
    params = post.init(jax.random.key(1), h0, x, first)
    hidden, y = post.apply(params, h0, x, first)
    assert y.shape == (5, 3, 6) and y.dtype == jnp.float32
    # The recurrence is the plain GRU's; the output is relu(Dense(gru output)).
    gru_params = {"params": {k: v for k, v in params["params"].items() if k != "Dense_0"}}
    plain_hidden, gru_y = plain.apply(gru_params, h0, x, first)
    np.testing.assert_allclose(hidden, plain_hidden, rtol=1e-6)
    dense = params["params"]["Dense_0"]
    np.testing.assert_allclose(
        y, jax.nn.relu(gru_y @ dense["kernel"] + dense["bias"]), rtol=1e-5, atol=1e-6
    )
    assert float(jnp.mean(y == 0.0)) > 0.05  # relu was applied


def test_gru_post_sizes_belong_to_the_gru_trunk():
    from jaxmarl.config import ConfigError, load_config
    from jaxmarl.training.config import GRUTrunkConfig, NetworkConfig

    with pytest.raises(ConfigError, match=r"'trunk.post_sizes' .* is a field of trunk=gru"):
        load_config(NetworkConfig, overrides=["trunk.post_sizes=[8]"])
    with pytest.raises(ValueError, match="network.trunk.post_sizes must be > 0"):
        GRUTrunkConfig(post_sizes=(0,))
