"""IPPO learns 2-player Hanabi: a CI-sized run clearly beats a random legal policy."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxmarl.baselines.ppo import PPOConfig, make_train
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig


@pytest.mark.slow
def test_ippo_beats_random_legal_play():
    # 30 updates of 32 envs x 64 steps (61k env steps), relu 64-64, illegal moves masked.
    config = PPOConfig(
        env=EnvConfig(env_id="hanabi", num_envs=32),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64, activation="relu"),
        run=RunConfig(total_timesteps=32 * 64 * 30),
        num_steps=64,
        lr=2e-3,
        anneal_lr=False,
        num_minibatches=4,
    )
    _, metrics = jax.jit(make_train(config))(jax.random.key(0))
    returns = np.asarray(metrics["episode_return"])  # mean final score of episodes ended
    first, last = returns[:5].mean(), returns[-5:].mean()
    # The untrained policy is uniform over the legal moves: random legal play loses its three
    # lives before the deck runs out, and a lost game scores 0 (HLE's scoring).
    assert first < 0.1, first
    # Learning first avoids misplays, so games reach the end of the deck with cards played.
    assert last > 0.4, (first, last, returns)
