"""The CNN encoder (``network.encoder=cnn``): shapes, config choice, learners' wiring."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import yaml

from jaxmarl.baselines.ppo.config import PPOConfig
from jaxmarl.baselines.ppo.network import build_network
from jaxmarl.config import load_config, save_config
from jaxmarl.networks.encoders import CNNEncoder, DictEncoder, MLPEncoder, encoder_from_config
from jaxmarl.training.config import CNNEncoderConfig, MLPEncoderConfig, NetworkConfig
from jaxmarl.wrappers import AgentBatch


def test_cnn_keeps_leading_axes_and_uses_same_padding():
    encoder = CNNEncoder(features=(8, 4), kernel_sizes=(5, 3), embed_dim=16)
    obs = jnp.ones((3, 2, 5, 4, 7, 26))  # [T, B, A, h, w, c]
    params = encoder.init(jax.random.key(0), obs)
    out = encoder.apply(params, obs)
    assert out.shape == (3, 2, 5, 16)
    kernels = [p["kernel"].shape for p in params["params"].values()]
    # SAME padding, stride 1: the dense layer reads the whole grid (4 * 7 cells x 4 channels).
    assert kernels == [(5, 5, 26, 8), (3, 3, 8, 4), (4 * 7 * 4, 16)]
    # Each observation is encoded on its own: the leading axes are a batch.
    single = encoder.apply(params, obs[1, 0, 2])
    np.testing.assert_allclose(out[1, 0, 2], single, rtol=1e-5, atol=1e-6)


def test_cnn_layer_norm_adds_one_norm_per_layer():
    encoder = CNNEncoder(features=(4, 4), kernel_sizes=(3, 3), embed_dim=8, layer_norm=True)
    params = encoder.init(jax.random.key(0), jnp.ones((2, 4, 5, 3)))["params"]
    assert sum(name.startswith("LayerNorm") for name in params) == 3


@pytest.mark.parametrize("dict_obs", [False, True])
def test_cnn_output_norm_normalises_each_embedding(dict_obs):
    """``output_norm``: each output row has mean 0 and variance 1 (LayerNorm at its initial
    scale 1 and offset 0), and is the plain encoder's output normalised."""
    conv = dict(features=(4,), kernel_sizes=(3,), embed_dim=8)
    grid = jax.random.normal(jax.random.key(1), (6, 4, 5, 3))
    if dict_obs:
        leaves = (("grid", (4, 5, 3)), ("flat", (2,)))
        obs = jnp.concatenate([grid.reshape(6, -1), jnp.ones((6, 2))], axis=-1)
        plain, normed = (
            DictEncoder(leaves=leaves, **conv),
            DictEncoder(leaves=leaves, output_norm=True, **conv),
        )
    else:
        obs, plain, normed = grid, CNNEncoder(**conv), CNNEncoder(output_norm=True, **conv)
    params = normed.init(jax.random.key(0), obs)["params"]
    out = normed.apply({"params": params}, obs)
    np.testing.assert_allclose(out.mean(-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(out.var(-1), 1.0, rtol=1e-3)
    body = {k: v for k, v in params.items() if k != "output_norm"}
    raw = plain.apply({"params": body}, obs)
    expected = (raw - raw.mean(-1, keepdims=True)) / jnp.sqrt(raw.var(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_mlp_flattens_grid_observations():
    grid = jax.random.normal(jax.random.key(1), (2, 3, 4, 5, 6))
    mlp = MLPEncoder(hidden_sizes=(), embed_dim=8, obs_ndim=3)
    params = mlp.init(jax.random.key(0), grid)
    flat = MLPEncoder(hidden_sizes=(), embed_dim=8)
    np.testing.assert_allclose(
        mlp.apply(params, grid), flat.apply(params, grid.reshape(2, 3, -1)), rtol=1e-6
    )


def test_encoder_from_config_picks_the_kind():
    cnn = NetworkConfig(encoder=CNNEncoderConfig(features=(16,), kernel_sizes=(3,)))
    module = encoder_from_config(cnn, (4, 5, 26))
    assert isinstance(module, CNNEncoder) and tuple(module.features) == (16,)
    assert isinstance(encoder_from_config(NetworkConfig(), (4, 5, 26)), MLPEncoder)
    with pytest.raises(ValueError, match="network.encoder=cnn needs grid observations"):
        encoder_from_config(cnn, (18,))
    with pytest.raises(ValueError, match="one kernel size per convolution"):
        CNNEncoderConfig(features=(8, 8), kernel_sizes=(3,))


def test_encoder_choice_from_overrides_and_saved_configs(tmp_path):
    config = load_config(PPOConfig, overrides=["network.encoder=cnn"])
    assert config.network.encoder == CNNEncoderConfig()
    config = load_config(
        PPOConfig, overrides=["network.encoder={kind: cnn, features: [8], kernel_sizes: [3]}"]
    )
    assert config.network.encoder == CNNEncoderConfig(features=(8,), kernel_sizes=(3,))
    path = save_config(config, tmp_path / "config.yaml")
    assert yaml.safe_load(path.read_text())["network"]["encoder"]["kind"] == "cnn"
    assert load_config(PPOConfig, path) == config
    # A run directory written before the encoder choice existed (no network.encoder) loads
    # with the dense encoder it was trained with.
    saved = yaml.safe_load(save_config(load_config(PPOConfig), tmp_path / "new.yaml").read_text())
    del saved["network"]["encoder"], saved["env"]["reward_shaping"]
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(saved))
    old = load_config(PPOConfig, tmp_path / "old.yaml")
    assert old.network.encoder == MLPEncoderConfig() and not old.env.reward_shaping.active


@pytest.mark.parametrize("encoder", ["cnn", "mlp"])
def test_overcooked_grids_keep_their_shape_through_agent_batching(encoder):
    config = load_config(
        PPOConfig,
        overrides=[
            "env.env_id=overcooked",
            "env.num_envs=2",
            f"network.encoder={encoder}",
            "run.total_timesteps=256",
        ],
    )
    import jaxmarl

    env = jaxmarl.make("overcooked")
    batch = AgentBatch.from_env(env, agent_id=False)
    assert batch.input_shape == (4, 5, 26)
    obs, _ = env.reset(jax.random.key(0))
    stacked = batch.stack_obs(obs)
    assert stacked.shape == (2, 4, 5, 26)
    network = build_network(config, batch)
    kind = CNNEncoder if encoder == "cnn" else MLPEncoder
    assert isinstance(network.encoder, kind)


@pytest.mark.parametrize(
    "alg, preset, sizes",
    [
        ("ippo", "overcooked_cnn", ["num_steps=8", "num_minibatches=2"]),
        pytest.param(
            "pqn_vdn",
            "overcooked_cnn",
            ["num_steps=4", "num_minibatches=2"],
            marks=pytest.mark.nightly,
        ),
    ],
)
@pytest.mark.slow
def test_cnn_presets_train_end_to_end(alg, preset, sizes):
    """The Overcooked CNN presets, shrunk, train two updates with finite metrics."""
    from jaxmarl.algorithms import algorithms
    from jaxmarl.train import parse

    steps = int(sizes[0].split("=")[1])
    command = parse(
        [
            f"alg={alg}",
            f"preset={preset}",
            "env.num_envs=4",
            "network.encoder.features=[4]",
            "network.encoder.kernel_sizes=[3]",
            "network.embed_dim=8",
            "network.trunk.sizes=[8]",
            "env.reward_shaping.horizon=64",
            f"run.total_timesteps={2 * 4 * steps}",
            *sizes,
            "--no-progress",
        ]
    )
    learner = algorithms()[alg].make(command.config)
    assert (
        isinstance(learner.env.batch.input_shape, tuple) and len(learner.env.batch.input_shape) == 3
    )
    from jaxmarl.training.learner import make_train_from

    _, metrics = jax.jit(make_train_from(learner))(jax.random.key(0))
    assert all(np.isfinite(np.asarray(v)).all() for v in jax.tree.leaves(metrics))


LEAVES = (("observation", (5, 4, 3)), ("inventory", (6,)))


def test_dict_encoder_convolves_the_grid_leaf_and_concatenates_the_rest():
    from flax import linen as nn

    encoder = DictEncoder(leaves=LEAVES, features=(8,), kernel_sizes=(3,), embed_dim=16)
    packed = jax.random.normal(jax.random.key(1), (3, 2, 5 * 4 * 3 + 6))  # [B, A, D]
    params = encoder.init(jax.random.key(0), packed)["params"]
    assert set(params) == {"observation", "Dense_0"}
    assert params["observation"]["Conv_0"]["kernel"].shape == (3, 3, 3, 8)
    assert params["Dense_0"]["kernel"].shape == (5 * 4 * 8 + 6, 16)
    out = encoder.apply({"params": params}, packed)
    assert out.shape == (3, 2, 16)
    # By hand: the image is the packed vector's first 60 entries, the inventory the last 6.
    image = packed[..., :60].reshape((6, 5, 4, 3))
    conv = nn.Conv(8, (3, 3)).apply({"params": params["observation"]["Conv_0"]}, image)
    features = jnp.concatenate(
        [jax.nn.relu(conv).reshape((6, -1)), packed[..., 60:].reshape((6, 6))], -1
    )
    dense = nn.Dense(16).apply({"params": params["Dense_0"]}, features)
    np.testing.assert_allclose(out, jax.nn.relu(dense).reshape((3, 2, 16)), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="add up to 66"):
        encoder.apply({"params": params}, packed[..., :-1])


def test_encoder_from_config_for_dict_observations():
    cnn = NetworkConfig(encoder=CNNEncoderConfig(features=(16,), kernel_sizes=(3,)))
    module = encoder_from_config(cnn, (66,), LEAVES)
    assert isinstance(module, DictEncoder) and module.leaves == LEAVES
    assert isinstance(encoder_from_config(NetworkConfig(), (66,), LEAVES), MLPEncoder)
    with pytest.raises(ValueError, match="needs a grid"):
        encoder_from_config(cnn, (8,), (("a", (2,)), ("b", (6,))))


@pytest.mark.parametrize("preset", ["storm_2p", pytest.param("storm", marks=pytest.mark.nightly)])
def test_storm_presets_feed_dict_observations_to_the_cnn(preset):
    """The STORM presets' networks read the packed Dict observations of real env steps: each
    agent's image goes through the convolution, its inventory joins after it."""
    from jaxmarl.algorithms import algorithms
    from jaxmarl.train import parse

    command = parse(
        ["alg=ippo", f"preset={preset}", "env.num_envs=2", "num_minibatches=2", "--no-progress"]
    )
    learner = algorithms()["ippo"].make(command.config)
    env, batch = learner.env, learner.env.batch
    image = env.unwrapped.observation_space(env.unwrapped.agents[0]).spaces["observation"].shape
    assert batch.obs_leaves[0] == ("observation", image)
    state = jax.jit(learner.init)(jax.random.key(0))
    inputs = env.runner_inputs(state.runner)
    assert inputs.obs.shape == (2, batch.num_agents, batch.obs_shape[0])
    # One parameter set per agent (share_parameters: false): the conv kernels have [A] first.
    conv = state.params["encoder"]["observation"]["Conv_0"]["kernel"]
    assert conv.shape == (batch.num_agents, 3, 3, image[-1], 16)
    carry = learner.initial_carry(2)
    _, action = learner.greedy_policy(state.params, carry, inputs)
    assert action.shape == (2, batch.num_agents)
