"""A learning test CI can afford: IPPO on ``hopper_3x1`` clearly beats a random policy.

Both are scored the same way in the same program: the return of the first episode of each of
32 fresh envs (100-step episodes), actions sampled from the trained Gaussian policy (what PPO
trains) against actions drawn uniformly within the bounds. The greedy (mean) action is not the
score: an untrained network's mean is close to zero, and a hopper holding still stays healthy
for the whole short episode, so it would pass without learning.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.ppo import PPOConfig, build_network, make_ppo, ppo_parts
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig
from jaxmarl.training.learner import make_train_from
from jaxmarl.training.rollout import rollout

NUM_ENVS, NUM_STEPS, UPDATES, EPISODE, EVAL_ENVS = 16, 64, 10, 100, 32


def config(lr: float = 1e-3) -> PPOConfig:
    return PPOConfig(
        env=EnvConfig(
            env_id="hopper_3x1", env_kwargs={"episode_length": EPISODE}, num_envs=NUM_ENVS
        ),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64, activation="tanh"),
        run=RunConfig(total_timesteps=NUM_ENVS * NUM_STEPS * UPDATES),
        num_steps=NUM_STEPS,
        lr=lr,
        ent_coef=0.0,
        num_minibatches=4,
        update_epochs=4,
    )


def first_episode_returns(trajectory) -> jax.Array:
    """``[B]`` team return of each env's first episode (each env ends one: a time limit)."""
    ended = trajectory.episode_done  # [T, B]
    first = ended & (jnp.cumsum(ended, axis=0, dtype=jnp.int32) == 1)
    return jnp.sum(jnp.mean(trajectory.episode_return, axis=-1) * first, axis=0)


def trained_and_random_program(lr: float = 1e-3):
    """``key -> (trained return, random return)``, jitted: the mean return of the first episode
    of ``EVAL_ENVS`` fresh envs each, both policies stepped in one rollout (the first half of
    its envs act with the trained policy, the second half at random)."""
    cfg = config(lr)
    learner = make_ppo(cfg)
    env = learner.env
    parts = ppo_parts(cfg, env, build_network(cfg, env.batch))
    spaces = [env.unwrapped.action_space(a) for a in env.unwrapped.agents]
    low, high = spaces[0].low, spaces[0].high
    assert all(np.array_equal(s.low, low) and np.array_equal(s.high, high) for s in spaces)
    uniform = jax.vmap(
        lambda k: jax.random.uniform(k, (len(spaces), *low.shape), minval=low, maxval=high)
    )
    trained_half = (jnp.arange(2 * EVAL_ENVS) < EVAL_ENVS)[:, None, None]

    # The suite compiles at XLA's backend optimisation level 0 (tests/conftest.py), at which
    # MJX's physics runs far slower than the time it saves compiling: this program asks for 1.
    @functools.partial(jax.jit, compiler_options={"xla_backend_optimization_level": 1})
    def run(key):
        state, _ = make_train_from(learner)(key)
        sample = parts.sampling_policy(state.params)

        def policy(carry, inputs, keys):  # one key per env
            carry, action, _ = sample(carry, inputs, keys)
            random = uniform(jax.vmap(lambda k: jax.random.fold_in(k, 1))(keys))
            return carry, jnp.where(trained_half, action, random), {}

        runner = env.reset(jax.random.key(7), 2 * EVAL_ENVS, learner.initial_carry(2 * EVAL_ENVS))
        returns = first_episode_returns(rollout(env, policy, runner, env.max_steps)[1])
        return returns[:EVAL_ENVS].mean(), returns[EVAL_ENVS:].mean()

    return run


def trained_and_random_returns(seed: int, lr: float = 1e-3) -> tuple[float, float]:
    trained, random = trained_and_random_program(lr)(jax.random.key(seed))
    return float(trained), float(random)


@pytest.mark.slow
def test_ippo_beats_random_on_hopper_3x1():
    trained, random = trained_and_random_returns(seed=0)
    # A random hopper falls within a few dozen steps, and so does the untrained policy
    # (lr near 0 fails this); training keeps it up and moving.
    assert trained > 3 * random and trained > random + 40, (trained, random)
