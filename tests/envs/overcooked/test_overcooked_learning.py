"""A learning test CI can afford: IPPO on cramped_room beats a random policy clearly.

A short run cannot serve many soups yet, so the score is what JaxMARL's configs train on early:
the sparse plus the (unannealed) shaped reward per episode, of actions sampled from the trained
policy against uniform random play in the same envs.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxmarl.baselines.ppo import PPOConfig, build_network, make_ppo
from jaxmarl.training.config import (
    EnvConfig,
    MLPTrunkConfig,
    NetworkConfig,
    RewardShapingConfig,
    RunConfig,
)
from jaxmarl.training.learner import make_train_from
from jaxmarl.training.rollout import rollout

NUM_ENVS, NUM_STEPS, UPDATES = 16, 128, 24


def score(learner, act, key):
    """Mean sparse + shaped return per agent and episode over 32 envs x one episode."""
    env = learner.env
    runner = env.reset(key, NUM_ENVS, learner.initial_carry(NUM_ENVS))
    _, trajectory = rollout(env, act, runner, env.max_steps, shaping=("shaped_reward", 1.0))
    return jnp.sum(trajectory.reward) / (NUM_ENVS * 2)


@pytest.mark.slow
def test_ippo_beats_random_on_cramped_room():
    config = PPOConfig(
        env=EnvConfig(
            env_id="overcooked",
            env_kwargs={"layout": "cramped_room"},
            num_envs=NUM_ENVS,
            reward_shaping=RewardShapingConfig(horizon=10_000_000),
        ),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64, activation="tanh"),
        run=RunConfig(total_timesteps=NUM_ENVS * NUM_STEPS * UPDATES),
        num_steps=NUM_STEPS,
        lr=1e-3,
        num_minibatches=4,
        update_epochs=4,
    )
    learner = make_ppo(config)
    network = build_network(config, learner.env.batch)

    @jax.jit
    def run(key):
        state, _ = make_train_from(learner)(key)

        def trained(carry, inputs, keys):  # one key per env; one draw for the batch suffices
            key = keys[0]
            envs, agents = inputs.avail_actions.shape[:2]
            flat = lambda x: x.reshape((1, envs * agents, *x.shape[2:]))  # noqa: E731
            first = jnp.repeat(inputs.first, agents)[None]
            actor_carry, dist = network.policy(
                state.params, carry[0], flat(inputs.obs), first, flat(inputs.avail_actions)
            )
            action = dist.sample(seed=key).reshape((envs, agents))
            return (actor_carry, carry[1]), action, {}

        def uniform(carry, inputs, keys):  # one key per env
            agents = inputs.avail_actions.shape[1]
            return carry, jax.vmap(lambda k: jax.random.randint(k, (agents,), 0, 6))(keys), {}

        eval_key = jax.random.key(7)
        return score(learner, trained, eval_key), score(learner, uniform, eval_key)

    trained, random = (float(x) for x in run(jax.random.key(0)))
    # Uniform random play scores about 1 (a rare onion in the pot); a trained cook fills pots.
    assert trained > random + 6.0 and trained > 3 * random, (trained, random)
