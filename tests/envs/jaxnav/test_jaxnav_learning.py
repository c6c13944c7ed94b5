"""IPPO learns JaxNav on an easy level: its success rate clearly beats a random policy's.

The level: one robot on an empty 6 x 6 map (4 x 4 m inside the walls), a 20-beam lidar and
120-step episodes. Both policies are scored the same way, in one rollout after training: the
success rate of the first episode of each of ``EVAL_ENVS`` fresh envs, half of them driven by
the trained policy's greedy action, half by actions drawn uniformly within the action bounds
(the random policy). An untrained network's greedy action does not reach the goal, so the
test fails without learning.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxmarl.baselines.ppo import PPOConfig, make_ppo
from jaxmarl.training.config import EnvConfig, MLPTrunkConfig, NetworkConfig, RunConfig
from jaxmarl.training.learner import make_train_from
from jaxmarl.training.rollout import rollout

EASY = dict(
    num_agents=1,
    lidar_num_beams=20,
    max_steps=120,
    map_params={"map_size": (6, 6), "fill": 0.0},
)
NUM_ENVS, NUM_STEPS, UPDATES, EVAL_ENVS = 32, 64, 80, 256


def trained_and_random_success(seed: int, lr: float = 3e-3) -> tuple[float, float]:
    """Success rates ``(trained greedy, uniform random)`` after ``UPDATES`` IPPO updates."""
    config = PPOConfig(
        env=EnvConfig(env_id="jaxnav", num_envs=NUM_ENVS, env_kwargs=EASY),
        network=NetworkConfig(trunk=MLPTrunkConfig(sizes=(64,)), embed_dim=64),
        run=RunConfig(total_timesteps=NUM_ENVS * NUM_STEPS * UPDATES),
        num_steps=NUM_STEPS,
        lr=lr,
        num_minibatches=4,
        ent_coef=0.0,
    )
    learner = make_ppo(config)
    env = learner.env
    space = env.unwrapped.action_space(env.unwrapped.agents[0])
    trained_half = (jnp.arange(2 * EVAL_ENVS) < EVAL_ENVS)[:, None, None]

    @jax.jit
    def run(key):
        state, _ = make_train_from(learner)(key)

        def policy(carry, inputs, keys):  # one key per env
            carry, greedy = learner.greedy_policy(state.params, carry, inputs)
            random = jax.vmap(
                lambda k: jax.random.uniform(
                    k, (1, *space.shape), minval=space.low, maxval=space.high
                )
            )(keys)
            return carry, jnp.where(trained_half, greedy, random), {}

        runner = env.reset(jax.random.key(7), 2 * EVAL_ENVS, learner.initial_carry(2 * EVAL_ENVS))
        _, trajectory = rollout(env, policy, runner, env.max_steps)
        ended = trajectory.episode_done  # [T, B]; every env ends an episode by max_steps
        first = ended & (jnp.cumsum(ended, axis=0, dtype=jnp.int32) == 1)
        success = jnp.sum(trajectory.env_infos["success_rate"] * first, axis=0)  # [B]
        return success[:EVAL_ENVS].mean(), success[EVAL_ENVS:].mean()

    trained, random = run(jax.random.key(seed))
    return float(trained), float(random)


@pytest.mark.slow
def test_ippo_success_rate_clearly_beats_a_random_policy_on_an_easy_map():
    trained, random = trained_and_random_success(seed=0)
    assert trained > random + 0.3, (trained, random)
