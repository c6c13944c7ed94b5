"""PPO's ``action_bounds=tanh``: Gaussian samples squashed into the action bounds, the loss
reading the samples before the squashing, and the squashed distribution's entropy."""

import types

import chex
import distrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl import train
from jaxmarl.baselines.ppo import build_network, make_ppo, make_train, ppo_parts
from jaxmarl.baselines.ppo.config import ClipToBounds, TanhToBounds
from jaxmarl.baselines.ppo.learner import TanhSquash
from jaxmarl.baselines.ppo.loss import log_tanh_slope, squashed_entropy
from jaxmarl.training.config import EnvConfig, RunConfig
from jaxmarl.training.rollout import rollout
from tests.baselines.test_ppo import small_config

CONTINUOUS = EnvConfig(
    env_id="MPE_simple_spread_v3", num_envs=4, env_kwargs={"action_type": "Continuous"}
)


def tanh_config(**overrides):
    return small_config(env=CONTINUOUS, action_bounds=TanhToBounds(), **overrides)


def test_the_command_line_chooses_the_bounds_and_clip_stays_the_default():
    assert isinstance(small_config().action_bounds, ClipToBounds)
    command = train.parse(["alg=ippo", "preset=MPE_simple_spread_v3", "action_bounds=tanh"])
    assert isinstance(command.config.action_bounds, TanhToBounds)


def test_tanh_bounds_refuse_discrete_and_unbounded_actions_before_building():
    with pytest.raises(ValueError, match="discrete ones; leave action_bounds=clip"):
        make_ppo(small_config(action_bounds=TanhToBounds()))
    unbounded = types.SimpleNamespace(
        batch=types.SimpleNamespace(
            discrete=False, action_low=(-1.0, -np.inf), action_high=(1.0, 1.0)
        )
    )
    with pytest.raises(ValueError, match="needs finite action bounds"):
        TanhSquash.of(tanh_config(), unbounded)


def test_log_tanh_slope_is_stable_and_exact():
    u = np.array([-3.0, -0.5, 0.0, 0.7, 4.0])
    exact = np.log1p(-(np.tanh(u) ** 2))  # float64
    np.testing.assert_allclose(log_tanh_slope(jnp.asarray(u, jnp.float32)), exact, rtol=1e-6)
    far = log_tanh_slope(jnp.array([-60.0, 60.0]))  # 1 - tanh^2 underflows to 0 here
    np.testing.assert_allclose(far, [2 * (np.log(2) - 60.0)] * 2, rtol=1e-6)


def test_squashed_entropy_is_the_squashed_distributions_and_its_gradient_reaches_mean_and_scale():
    loc, scale = jnp.array([0.3, -1.2]), jnp.array([0.5, 1.5])
    half_range = jnp.array([1.0, 2.5])
    dist = distrax.MultivariateNormalDiag(loc, scale)
    # Entropy of a = low + (tanh(u) + 1) * half_range, u ~ N(loc, scale), by quadrature over u:
    # H(a) = H(u) + E[log |da/du|].
    grid = np.linspace(-12, 12, 200001)
    expected = float(dist.entropy())
    for d in range(2):
        density = np.exp(-0.5 * ((grid - loc[d]) / scale[d]) ** 2) / (scale[d] * np.sqrt(2 * np.pi))
        slope = np.log(half_range[d]) + np.log1p(-(np.tanh(grid) ** 2))
        expected += np.trapezoid(density * slope, grid)
    samples = dist.sample(seed=jax.random.key(0), sample_shape=(200_000,))
    estimate = jnp.mean(squashed_entropy(dist, samples, half_range))
    np.testing.assert_allclose(estimate, expected, atol=5e-3)

    # Pathwise gradient at one stored sample u = loc + scale * noise:
    # d/dloc = -2 tanh(u); d/dscale = 1 / scale - 2 tanh(u) * noise.
    u = samples[0]
    noise = (u - loc) / scale

    def entropy_of(loc, scale):
        return squashed_entropy(distrax.MultivariateNormalDiag(loc, scale), u, half_range)

    grad_loc, grad_scale = jax.grad(entropy_of, argnums=(0, 1))(loc, scale)
    np.testing.assert_allclose(grad_loc, -2 * jnp.tanh(u), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        grad_scale, 1 / scale - 2 * jnp.tanh(u) * noise, rtol=1e-5, atol=1e-6
    )


def test_the_env_gets_squashed_samples_and_the_loss_reads_the_samples():
    config = tanh_config()
    learner = make_ppo(config)
    network = build_network(config, learner.env.batch)
    parts = ppo_parts(config, learner.env, network)
    params, runner = parts.init_params(jax.random.key(1), jax.random.key(2))
    _, trajectory = rollout(learner.env, parts.sampling_policy(params), runner, 8)
    low = np.asarray(learner.env.batch.action_low)  # MPE: [0, 1] in every dimension
    high = np.asarray(learner.env.batch.action_high)
    raw, action = trajectory.extras["raw_action"], trajectory.action
    np.testing.assert_allclose(action, low + (np.tanh(raw) + 1) * (high - low) / 2, atol=1e-6)
    assert np.all((action >= low) & (action <= high))
    assert np.any(raw < low) or np.any(raw > high)  # the samples themselves leave the bounds

    # The stored log-probs are the samples' under the policy that drew them: the first
    # minibatch's probability ratio is 1 (no KL); the squashed actions would give another.
    _, data, _ = parts.collect(params, runner)
    whole = jax.tree.map(lambda x: x[0], parts.minibatches(jax.random.key(3), data).stacked())
    _, stats = parts.loss_fn(params, whole)
    assert abs(float(stats["approx_kl"])) < 1e-6 and float(stats["clip_fraction"]) == 0.0
    # The entropy bonus is the squashed one: below the Gaussian's (state-independent here) plus
    # the log half-widths, since the slope of tanh is at most 1.
    log_std = params["heads"]["policy"]["log_std"]
    gaussian = float(jnp.sum(log_std) + log_std.shape[0] * 0.5 * np.log(2 * np.pi * np.e))
    assert float(stats["entropy"]) < gaussian + float(np.sum(np.log((high - low) / 2)))
    squashed = whole.replace(
        steps=whole.steps.replace(action=TanhSquash.of(config, learner.env)(whole.steps.action))
    )
    _, wrong = parts.loss_fn(params, squashed)
    assert abs(float(wrong["approx_kl"])) > 1e-3

    # Greedy actions are the squashed mean.
    inputs = learner.env.runner_inputs(runner)
    _, greedy = parts.greedy_policy(params, runner.policy_carry, inputs)
    _, dist = network.policy(
        params,
        runner.policy_carry[0],
        inputs.obs.reshape(1, -1, inputs.obs.shape[-1]),
        jnp.zeros((1, inputs.obs.shape[0] * inputs.obs.shape[1]), bool),
    )
    mean = dist.mode().reshape(greedy.shape)
    np.testing.assert_allclose(greedy, low + (np.tanh(mean) + 1) * (high - low) / 2, atol=1e-6)


def test_training_with_tanh_bounds_is_pure_under_vmap():
    train_fn = make_train(tanh_config(run=RunConfig(total_timesteps=4 * 16 * 2)))
    keys = jax.random.split(jax.random.key(4), 2)
    states, batched = jax.jit(jax.vmap(train_fn))(keys)
    state, metrics = jax.jit(train_fn)(keys[0])
    chex.assert_trees_all_close(
        jax.tree.map(lambda x: x[0], batched), metrics, rtol=1e-5, atol=1e-6
    )
    chex.assert_tree_all_finite(states.params)
    assert not np.allclose(batched["loss"][0], batched["loss"][1])
