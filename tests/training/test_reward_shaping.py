"""``env.reward_shaping``: an annealed dense reward from the env's infos, added in the rollout."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training.config import EnvConfig, RewardShapingConfig
from jaxmarl.training.rollout import TrainingEnv, rollout, shaping_of


def test_coefficient_anneals_linearly_to_zero():
    shaping = RewardShapingConfig(horizon=1000, scale=2.0)
    values = [float(shaping.coefficient(t)) for t in (0, 250, 1000, 5000)]
    np.testing.assert_allclose(values, [2.0, 1.5, 0.0, 0.0])
    assert shaping_of(EnvConfig(env_id="overcooked"), jnp.int32(0)) is None  # off by default
    key, coef = shaping_of(EnvConfig(env_id="overcooked", reward_shaping=shaping), 500)
    assert key == "shaped_reward" and float(coef) == 1.0
    with pytest.raises(ValueError, match="horizon must be a whole number"):
        RewardShapingConfig(horizon=-1)


@functools.cache
def shaped_rollout():
    env = TrainingEnv.make("overcooked", {"random_reset": True}, agent_id=False, world_state=False)

    def policy(carry, inputs, keys):  # one key per env
        agents = inputs.avail_actions.shape[1]
        return carry, jax.vmap(lambda k: jax.random.randint(k, (agents,), 0, 6))(keys), {}

    @jax.jit
    def run(coef):
        runner = env.reset(jax.random.key(0), 16, None)
        shaping = None if coef is None else ("shaped_reward", coef)
        return rollout(env, policy, runner, 64, shaping=shaping)[1]

    return env, run


def test_rollout_adds_the_weighted_shaped_reward_and_logs_the_env_return():
    env, run = shaped_rollout()
    plain, half, full = run(None), run(jnp.float32(0.5)), run(jnp.float32(1.0))
    extra_half = np.asarray(half.reward - plain.reward)
    extra_full = np.asarray(full.reward - plain.reward)
    assert (extra_full > 0).any(), "random play from random states should earn some shaping"
    np.testing.assert_allclose(2 * extra_half, extra_full, atol=1e-6)
    assert set(np.unique(extra_full)) <= {0.0, 3.0, 5.0, 6.0, 8.0, 10.0}
    # The logged episode returns stay the env's own.
    np.testing.assert_array_equal(full.episode_return, plain.episode_return)


def test_an_env_without_the_info_fails_clearly():
    env = TrainingEnv.make("MPE_simple_spread_v3", agent_id=False, world_state=False)

    def policy(carry, inputs, key):
        return carry, jnp.zeros(inputs.avail_actions.shape[:2], jnp.int32), {}

    runner = env.reset(jax.random.key(0), 2, None)
    with pytest.raises(ValueError, match=r"reads infos\['shaped_reward'\]\[agent\]"):
        rollout(env, policy, runner, 2, shaping=("shaped_reward", jnp.float32(1.0)))
