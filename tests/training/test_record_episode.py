"""Greedy episodes: the GIF recording stops at the episode's end; evaluation counts the first
episode of each env."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.baselines.ppo import PPOConfig, make_ppo
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig
from jaxmarl.training.learner import evaluate, record_greedy_episode


def learner_for(env_id, **env_kwargs):
    config = PPOConfig(
        env=EnvConfig(env_id=env_id, env_kwargs=env_kwargs, num_envs=2),
        network=NetworkConfig(embed_dim=8, trunk=MLPTrunkConfig(sizes=(8,))),
        run=RunConfig(total_timesteps=2 * 8),
        num_steps=8,
        num_minibatches=1,
    )
    return make_ppo(config)


def record(learner, seed):
    state = learner.init(jax.random.key(seed))
    return jax.jit(lambda p, k: record_greedy_episode(learner, p, k))(
        state.params, jax.random.key(seed + 1)
    )


def test_time_limited_episode_fills_every_frame():
    learner = learner_for("MPE_simple_spread_v3")
    states, num_frames = record(learner, 0)
    max_steps = learner.env.unwrapped.max_steps
    assert num_frames.dtype == jnp.int32 and int(num_frames) == max_steps + 1
    assert states.step.shape == (max_steps + 1,)
    np.testing.assert_array_equal(states.step, np.arange(max_steps + 1))


def test_episode_that_ends_early_holds_its_final_state():
    # A 3m battle with walls that kill ends long before the 100-step limit for an untrained
    # greedy policy (it walks into a wall or loses the fight).
    learner = learner_for("HeuristicEnemySMAX", scenario="3m", walls_cause_death=True)
    env = learner.env.unwrapped
    for seed in range(3):
        states, num_frames = record(learner, seed)
        frames = int(num_frames)
        assert 1 < frames < env.max_steps + 1, frames
        last = jax.tree.map(lambda x: x[frames - 1], states)
        assert bool(last.done)
        assert not bool(states.done[frames - 2])
        for leaf, final in zip(jax.tree.leaves(states), jax.tree.leaves(last)):
            np.testing.assert_array_equal(
                leaf[frames - 1 :], np.broadcast_to(final, leaf[frames - 1 :].shape)
            )


def test_evaluation_counts_the_first_episode_of_each_env():
    # 3m battles of an untrained greedy policy end in a few steps, so with auto-reset most envs
    # finish several episodes within max_steps; only the first of each is counted.
    learner = learner_for("HeuristicEnemySMAX", scenario="3m", walls_cause_death=True)
    params = learner.init(jax.random.key(0)).params
    metrics = jax.jit(lambda p, k: evaluate(learner, p, k, 8))(params, jax.random.key(1))
    assert float(metrics["episodes"]) == 8.0
    assert 0 < float(metrics["episode_length"]) < learner.env.unwrapped.max_steps
    assert 0.0 <= float(metrics["won"]) <= 1.0
