"""IPPO learns JaxNav on an easy level: the logged success rate rises well above random's."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxmarl.baselines.ppo import PPOConfig, make_train
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig

# One robot on an empty 7 x 7 map (5 x 5 m inside the walls), a 20-beam lidar and 60-step
# episodes: a random policy rarely reaches the goal.
EASY = dict(
    num_agents=1,
    lidar_num_beams=20,
    max_steps=120,
    map_params={"map_size": (6, 6), "fill": 0.0},
)


@pytest.mark.nightly  # minutes of training on a loaded 2-core CPU
def test_ippo_success_rate_rises_above_random_on_an_easy_map():
    config = PPOConfig(
        env=EnvConfig(env_id="jaxnav", num_envs=32, env_kwargs=EASY),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64),
        run=RunConfig(total_timesteps=32 * 64 * 80),
        num_steps=64,
        lr=3e-3,
        num_minibatches=4,
        ent_coef=0.0,
    )
    _, metrics = jax.jit(make_train(config))(jax.random.key(0))
    success = np.asarray(metrics["success_rate"])
    first, last = success[:5].mean(), success[-5:].mean()
    assert first < 0.3, first
    assert last > first + 0.3, (first, last)
