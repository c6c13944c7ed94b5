"""GAE worked by hand, against a naive loop, and the termination/truncation distinction."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training import targets


def naive_gae(rewards, values, next_values, terminated, done, gamma, lam):
    advantages = np.zeros_like(rewards)
    running = np.zeros_like(rewards[0])
    for t in reversed(range(len(rewards))):
        delta = rewards[t] + gamma * (1 - terminated[t]) * next_values[t] - values[t]
        running = delta + gamma * lam * (1 - done[t]) * running
        advantages[t] = running
    return advantages


def test_gae_by_hand_with_a_termination():
    # T = 3, one env. Rewards 1, 2, 3; values 0.5, 1.0, 1.5; the episode terminates at t=1,
    # s_3 (after the rollout) has value 2.0. gamma = 0.9, lambda = 0.5.
    rewards = jnp.array([1.0, 2.0, 3.0])
    values = jnp.array([0.5, 1.0, 1.5])
    terminated = jnp.array([False, True, False])
    nxt = targets.next_values(values, jnp.float32(2.0), terminated, jnp.zeros(3))
    # next values: t0 -> V(s1)=1.0, t1 -> bootstrap 0 (done), t2 -> last value 2.0
    np.testing.assert_allclose(nxt, [1.0, 0.0, 2.0])
    adv, ret = targets.gae(rewards, values, nxt, terminated, terminated, 0.9, 0.5)
    # delta2 = 3 + 0.9*2.0 - 1.5 = 3.3            A2 = 3.3
    # delta1 = 2 + 0 - 1.0 = 1.0 (terminated)      A1 = 1.0 (trace stops at the end)
    # delta0 = 1 + 0.9*1.0 - 0.5 = 1.4             A0 = 1.4 + 0.45*1.0 = 1.85
    np.testing.assert_allclose(adv, [1.85, 1.0, 3.3], rtol=1e-6)
    np.testing.assert_allclose(ret, [2.35, 2.0, 4.8], rtol=1e-6)


def test_truncation_bootstraps_termination_does_not():
    rewards = jnp.array([1.0])
    values = jnp.array([0.0])
    ended = jnp.array([True])
    nxt = targets.next_values(values, jnp.float32(99.0), ended, jnp.array([10.0]))
    truncated_adv, _ = targets.gae(rewards, values, nxt, jnp.array([False]), ended, 0.5, 0.9)
    terminated_adv, _ = targets.gae(rewards, values, nxt, jnp.array([True]), ended, 0.5, 0.9)
    np.testing.assert_allclose(truncated_adv, [1.0 + 0.5 * 10.0])  # bootstraps V(terminal obs)
    np.testing.assert_allclose(terminated_adv, [1.0])  # no future value
    # The last value after the rollout (99) belongs to the next episode and is never used.


@pytest.mark.parametrize("gamma, lam", [(0.99, 0.95), (0.9, 1.0), (1.0, 0.0)])
def test_gae_matches_naive_loop_on_random_batches(gamma, lam):
    rng = np.random.default_rng(0)
    shape = (17, 4, 3)  # [T, B, A]
    rewards = rng.normal(size=shape).astype(np.float32)
    values = rng.normal(size=shape).astype(np.float32)
    done = rng.random(shape) < 0.15
    terminated = done & (rng.random(shape) < 0.5)
    bootstrap = rng.normal(size=shape).astype(np.float32)
    last = rng.normal(size=shape[1:]).astype(np.float32)
    nxt = targets.next_values(jnp.asarray(values), jnp.asarray(last), jnp.asarray(done), bootstrap)
    expected_next = np.concatenate([values[1:], last[None]])
    expected_next = np.where(done, bootstrap, expected_next)
    np.testing.assert_allclose(nxt, expected_next)
    adv, ret = jax.jit(targets.gae, static_argnums=(5, 6))(
        jnp.asarray(rewards), jnp.asarray(values), nxt, terminated, done, gamma, lam
    )
    expected = naive_gae(rewards, values, expected_next, terminated, done, gamma, lam)
    np.testing.assert_allclose(adv, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, expected + values, rtol=1e-5, atol=1e-5)
    assert adv.dtype == jnp.float32
