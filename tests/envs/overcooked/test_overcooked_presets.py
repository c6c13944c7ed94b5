"""The OvercookedV2 IPPO-GRU preset builds JaxMARL 0.2.0's ``ippo_rnn_overcooked_v2`` network
layer for layer (shapes only, no compile): CNN (a LayerNorm on its output) and GRU shared by
actor and critic, a dense 128 layer in each head."""

from __future__ import annotations

import jax

from jaxmarl.baselines.ppo import build_network, ppo_parts
from jaxmarl.train import parse
from jaxmarl.training.rollout import TrainingEnv


def test_overcooked_v2_rnn_preset_builds_jaxmarls_network():
    config = parse(["alg=ippo", "preset=overcooked_v2_rnn", "--no-progress"]).config
    env = TrainingEnv.from_config(config.env, agent_id=False, world_state=False)
    parts = ppo_parts(config, env, build_network(config, env.batch))
    params, _ = jax.eval_shape(parts.init_params, jax.random.key(0), jax.random.key(1))
    kernels = {  # every weight array (biases follow from them), by its layer's path
        "/".join(k.key for k in path).removesuffix("/kernel"): leaf.shape
        for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]
        if leaf.ndim >= 2
    }
    channels = env.batch.input_shape[-1]  # grounded_coord_simple's observation channels
    assert kernels == {
        "encoder/Conv_0": (1, 1, channels, 128),
        "encoder/Conv_1": (1, 1, 128, 128),
        "encoder/Conv_2": (1, 1, 128, 8),
        "encoder/Conv_3": (3, 3, 8, 16),
        "encoder/Conv_4": (3, 3, 16, 32),
        "encoder/Conv_5": (3, 3, 32, 32),
        "encoder/Dense_0": (5 * 5 * 32, 128),  # the 5 x 5 view, flattened
        "trunk/input_kernel": (128, 3 * 128),  # the GRU's three gates
        "trunk/recurrent_kernel": (128, 3 * 128),
        "heads/policy/hidden_0": (128, 128),
        "heads/policy/Dense_0": (128, 6),
        "critic/head/hidden_0": (128, 128),
        "critic/head/Dense_0": (128, 1),
    }
    assert params["encoder"]["output_norm"]["scale"].shape == (128,)  # before the GRU
    assert config.network.head_init_gain == 2.0  # JaxMARL's head layers' orthogonal gain
