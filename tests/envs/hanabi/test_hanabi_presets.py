"""The Hanabi PPO presets build JaxMARL 0.2.0's networks, layer for layer (shapes only; no
compile): the layers of ``baselines/{IPPO,MAPPO}/*_hanabi.py`` mapped to this library's
encoder -> trunk -> heads parameter tree."""

from __future__ import annotations

import pytest

from tests.envs.preset_layers import kernel_shapes, preset_network

OBS, ACTIONS = 658, 21  # 2-player Hanabi
# MAPPO's critic reads 2 x (658 + 125) (every observation and hand) + a 2-way agent id; JaxMARL's
# reads the agent's own 658 (envs/hanabi/README.md, deviations).
WORLD = 2 * (OBS + 125) + 2
GRU = {"input_kernel": (128, 384), "recurrent_kernel": (128, 384)}  # 3 gates of 128

EXPECTED = {
    # Dense 512 shared by actor and critic, then Dense 512 -> logits / Dense 512 -> value.
    ("ippo", "hanabi"): {
        "encoder/Dense_0": (OBS, 512),
        "heads/policy/hidden_0": (512, 512),
        "heads/policy/Dense_0": (512, ACTIONS),
        "critic/head/hidden_0": (512, 512),
        "critic/head/Dense_0": (512, 1),
    },
    # Dense 128 and a GRU of 128 shared, then Dense 128 -> logits / Dense 128 -> value.
    ("ippo", "hanabi_rnn"): {
        "encoder/Dense_0": (OBS, 128),
        **{f"trunk/{k}": v for k, v in GRU.items()},
        "heads/policy/hidden_0": (128, 128),
        "heads/policy/Dense_0": (128, ACTIONS),
        "critic/head/hidden_0": (128, 128),
        "critic/head/Dense_0": (128, 1),
    },
    # Actor Dense 128 -> Dense 128 -> logits; critic the same over the world state -> value.
    ("mappo", "hanabi"): {
        "encoder/Dense_0": (OBS, 128),
        "trunk/Dense_0": (128, 128),
        "heads/policy/Dense_0": (128, ACTIONS),
        "critic/encoder/Dense_0": (WORLD, 128),
        "critic/trunk/Dense_0": (128, 128),
        "critic/head/Dense_0": (128, 1),
    },
    # Actor Dense 128 -> GRU 128 -> Dense 128 -> logits; critic the same -> value.
    ("mappo", "hanabi_rnn"): {
        "encoder/Dense_0": (OBS, 128),
        **{f"trunk/{k}": v for k, v in GRU.items()},
        "heads/policy/hidden_0": (128, 128),
        "heads/policy/Dense_0": (128, ACTIONS),
        "critic/encoder/Dense_0": (WORLD, 128),
        **{f"critic/trunk/{k}": v for k, v in GRU.items()},
        "critic/head/hidden_0": (128, 128),
        "critic/head/Dense_0": (128, 1),
    },
}


@pytest.mark.parametrize(("alg", "preset"), list(EXPECTED), ids=["/".join(k) for k in EXPECTED])
def test_hanabi_presets_build_jaxmarls_networks(alg, preset):
    config, _, _, params = preset_network(alg, preset, "env.num_envs=4")
    kernels = kernel_shapes(params)
    assert kernels == EXPECTED[alg, preset]
    if (alg, preset) != ("mappo", "hanabi"):  # JaxMARL's head layers: orthogonal gain 2
        assert config.network.head_init_gain == 2.0
