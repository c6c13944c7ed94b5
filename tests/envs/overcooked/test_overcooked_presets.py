"""The OvercookedV2 IPPO-GRU preset builds JaxMARL 0.2.0's ``ippo_rnn_overcooked_v2`` network
layer for layer (shapes only, no compile): CNN (a LayerNorm on its output) and GRU shared by
actor and critic, a dense 128 layer in each head."""

from __future__ import annotations

from tests.envs.preset_layers import kernel_shapes, preset_network


def test_overcooked_v2_rnn_preset_builds_jaxmarls_network():
    config, env, _, params = preset_network("ippo", "overcooked_v2_rnn")
    kernels = kernel_shapes(params)
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
