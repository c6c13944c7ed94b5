"""The JaxNav PPO presets build the JaxNav paper's networks (the sfl repository's
``ActorCriticRNN`` for IPPO, ``ActorRNN`` and ``CriticRNN`` for MAPPO), layer for layer: shapes,
the head layers' gain and the policy's initial log-std (no compile: ``eval_shape`` and one
``init`` of the small parameter tree)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from tests.envs.preset_layers import kernel_shapes, preset_network

OBS, ACTIONS = 205, 2  # 200 lidar beams + 5 own-state features; (v, omega)
GRU = {"input_kernel": (512, 1536), "recurrent_kernel": (512, 1536)}  # 3 gates of 512


def expected(alg: str, world: int) -> dict[str, tuple[int, int]]:
    if alg == "ippo":  # Dense 512 and GRU 512 shared, then Dense 512 -> mean / Dense 512 -> value
        return {
            "encoder/Dense_0": (OBS, 512),
            **{f"trunk/{k}": v for k, v in GRU.items()},
            "heads/policy/hidden_0": (512, 512),
            "heads/policy/Dense_0": (512, ACTIONS),
            "critic/head/hidden_0": (512, 512),
            "critic/head/Dense_0": (512, 1),
        }
    # Actor Dense 512 -> GRU 512 -> Dense 512 -> mean; critic the same over the world state.
    return {
        "encoder/Dense_0": (OBS, 512),
        **{f"trunk/{k}": v for k, v in GRU.items()},
        "heads/policy/hidden_0": (512, 512),
        "heads/policy/Dense_0": (512, ACTIONS),
        "critic/encoder/Dense_0": (world, 512),
        **{f"critic/trunk/{k}": v for k, v in GRU.items()},
        "critic/head/hidden_0": (512, 512),
        "critic/head/Dense_0": (512, 1),
    }


@pytest.mark.parametrize("alg", ["ippo", "mappo"])
def test_jaxnav_presets_build_the_papers_networks(alg):
    config, _, parts, params = preset_network(alg, "jaxnav", "env.num_envs=4")
    kernels = kernel_shapes(params)
    # The critic reads every robot's row of JaxMARL's [4, 319] JaxNav world state, flattened
    # (the learners take one world state per env), plus the agent id.
    world = 4 * 319 + 4
    assert kernels == expected(alg, world)
    assert config.network.head_init_gain == 2.0  # the paper's head layers: orthogonal gain 2
    # The paper's policy starts at log-std 0 (std 1); read the value from real parameters.
    real, _ = parts.init_params(jax.random.key(0), jax.random.key(1))
    log_std = real["heads"]["policy"]["log_std"]
    np.testing.assert_array_equal(np.asarray(log_std), np.zeros(ACTIONS, np.float32))
