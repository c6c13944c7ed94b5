"""n-step and TD(lambda) targets worked by hand, against naive loops, and at episode ends."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.training import targets

# One env, T = 4. Rewards 1, 2, 3, 4; values of the next state 10, 20, 30, 40; gamma = 0.5.
R = jnp.array([1.0, 2.0, 3.0, 4.0])
V = jnp.array([10.0, 20.0, 30.0, 40.0])
NO = jnp.zeros(4, dtype=bool)


def test_one_step_targets_by_hand():
    out = targets.n_step_returns(R, V, NO, NO, 0.5, 1)
    # r_t + 0.5 * V_t: 1 + 5, 2 + 10, 3 + 15, 4 + 20
    np.testing.assert_allclose(out, [6.0, 12.0, 18.0, 24.0])


def test_two_step_targets_by_hand():
    out = targets.n_step_returns(R, V, NO, NO, 0.5, 2)
    # G0 = 1 + .5*2 + .25*V1 = 1 + 1 + 5 = 7;  G1 = 2 + .5*3 + .25*30 = 11
    # G2 = 3 + .5*4 + .25*40 = 15;  G3 = 4 + .5*40 = 24 (sequence ends: 1-step)
    np.testing.assert_allclose(out, [7.0, 11.0, 15.0, 24.0])


def test_n_step_stops_at_episode_end():
    done = jnp.array([False, True, False, False])
    out = targets.n_step_returns(R, V, done, done, 0.5, 3)
    # G1 = 2 (terminated: no value, no later reward); G0 = 1 + .5*2 = 2
    # G2 = 3 + .5*4 + .25*40 = 15; G3 = 4 + .5*40 = 24
    np.testing.assert_allclose(out, [2.0, 2.0, 15.0, 24.0])
    # Truncated instead of terminated: step 1 bootstraps from its own next value (20).
    out = targets.n_step_returns(R, V, NO, done, 0.5, 3)
    # G1 = 2 + .5*20 = 12; G0 = 1 + .5*12 = 7
    np.testing.assert_allclose(out, [7.0, 12.0, 15.0, 24.0])


def test_lambda_returns_by_hand():
    out = targets.lambda_returns(R, V, NO, NO, 0.5, 0.5)
    # G3 = 4 + .5*40 = 24
    # G2 = 3 + .5*(.5*30 + .5*24) = 3 + .5*27 = 16.5
    # G1 = 2 + .5*(.5*20 + .5*16.5) = 2 + .5*18.25 = 11.125
    # G0 = 1 + .5*(.5*10 + .5*11.125) = 1 + .5*10.5625 = 6.28125
    np.testing.assert_allclose(out, [6.28125, 11.125, 16.5, 24.0])


def test_lambda_extremes_match_one_step_and_monte_carlo():
    np.testing.assert_allclose(
        targets.lambda_returns(R, V, NO, NO, 0.5, 0.0), targets.n_step_returns(R, V, NO, NO, 0.5, 1)
    )
    # lambda = 1: discounted rewards to the end, bootstrapped from the last next value.
    np.testing.assert_allclose(
        targets.lambda_returns(R, V, NO, NO, 0.5, 1.0),
        targets.n_step_returns(R, V, NO, NO, 0.5, 4),
    )


def naive_lambda(rewards, values, terminated, done, gamma, lam):
    out = np.zeros_like(rewards)
    for t in range(len(rewards)):
        # Weighted n-step returns within the episode and the sequence (the forward view).
        horizon = len(rewards) - t
        for k in range(t, len(rewards)):
            if done[k]:
                horizon = k - t + 1
                break
        total, weight_left = 0.0, 1.0
        for n in range(1, horizon + 1):
            g, disc = 0.0, 1.0
            for k in range(t, t + n):
                g = g + disc * rewards[k]
                disc = disc * gamma
            g = g + disc * (1 - terminated[t + n - 1]) * values[t + n - 1]
            w = weight_left * ((1 - lam) if n < horizon else 1.0)
            total, weight_left = total + w * g, weight_left * lam
        out[t] = total
    return out


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.9, 1.0])
def test_lambda_returns_match_the_forward_view(lam):
    rng = np.random.default_rng(0)
    shape = (9, 2, 3)
    rewards = rng.normal(size=shape).astype(np.float32)
    values = rng.normal(size=shape).astype(np.float32)
    done = rng.random(shape) < 0.2
    terminated = done & (rng.random(shape) < 0.5)
    out = targets.lambda_returns(*map(jnp.asarray, (rewards, values, terminated, done)), 0.9, lam)
    expected = np.zeros(shape, dtype=np.float32)
    for b in range(shape[1]):
        for a in range(shape[2]):
            expected[:, b, a] = naive_lambda(
                rewards[:, b, a], values[:, b, a], terminated[:, b, a], done[:, b, a], 0.9, lam
            )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert out.dtype == jnp.float32


def test_n_step_must_be_positive():
    with pytest.raises(ValueError, match="n must be >= 1"):
        targets.n_step_returns(R, V, NO, NO, 0.5, 0)
