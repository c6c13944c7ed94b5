"""IPPO learns 2-player Hanabi: a CI-sized run clearly beats a random legal policy, whose mean
score is measured here on the same env."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxmarl
from jaxmarl.baselines.ppo import PPOConfig, make_train
from jaxmarl.random_rollout import make_rollout
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig

MARGIN = 0.4  # points of mean final score above random legal play


def random_legal_mean_score(num_envs: int = 256, num_steps: int = 228) -> float:
    """The mean final score of the games that uniformly random legal play (``random_actions``
    samples from ``get_avail_actions``) finishes on the env the learner trains on.

    Rewards are score changes shared by every agent, so the summed team reward is
    ``num_agents`` times the final scores of the finished games plus the scores so far
    (``state.score``) of the games still running when the rollout stops; those are taken out.
    """
    env = jaxmarl.make("hanabi", num_agents=2)
    state, team_rewards, ended = make_rollout(env, num_envs, num_steps)(jax.random.key(1))
    assert int(ended) > num_envs, int(ended)  # several finished games per env
    finished = float(team_rewards.sum()) / env.num_agents - float(state.score.sum())
    return finished / int(ended)


@pytest.mark.slow
def test_ippo_beats_random_legal_play():
    random_score = random_legal_mean_score()
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
    # The untrained policy is close to uniform over the legal moves, so it scores as random
    # legal play does (which loses its three lives before the deck runs out; a lost game
    # scores 0, HLE's scoring).
    assert abs(first - random_score) < 0.1, (first, random_score)
    # Learning first avoids misplays, so games reach the end of the deck with cards played.
    assert last > random_score + MARGIN, (random_score, first, last, returns)
