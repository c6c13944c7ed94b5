import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.training import losses


def test_ppo_policy_loss_by_hand():
    # Ratios e^0 = 1, e^0.5 = 1.6487, e^-0.5 = 0.6065; advantages 1, 1, -1; clip 0.2.
    old = jnp.zeros(3)
    new = jnp.array([0.0, 0.5, -0.5])
    adv = jnp.array([1.0, 1.0, -1.0])
    loss, stats = losses.ppo_policy_loss(new, old, adv, 0.2)
    # min(r*A, clip(r)*A): 1 ; min(1.6487, 1.2) = 1.2 ; min(-0.6065, -0.8) = -0.8
    np.testing.assert_allclose(loss, -(1.0 + 1.2 - 0.8) / 3, rtol=1e-6)
    np.testing.assert_allclose(stats["clip_fraction"], 2 / 3, rtol=1e-6)
    # k3 KL: (r - 1) - log r  -> 0, 0.1487, 0.1065
    np.testing.assert_allclose(
        stats["approx_kl"], (np.exp(0.5) - 1.5 + np.exp(-0.5) - 0.5) / 3, rtol=1e-5
    )


def test_value_loss_clipped_by_hand():
    values = jnp.array([2.0])
    old = jnp.array([1.0])
    target = jnp.array([3.0])
    # unclipped error (2-3)^2 = 1; clipped value 1 + 0.2 = 1.2 -> (1.2-3)^2 = 3.24; max = 3.24
    np.testing.assert_allclose(losses.value_loss(values, old, target, 0.2), 0.5 * 3.24, rtol=1e-6)
    np.testing.assert_allclose(losses.value_loss(values, old, target, None), 0.5, rtol=1e-6)


def test_masked_mean_and_normalize():
    x = jnp.array([1.0, 2.0, 100.0])
    mask = jnp.array([True, True, False])
    np.testing.assert_allclose(losses.masked_mean(x, mask), 1.5)
    assert float(losses.masked_mean(x, jnp.zeros(3, bool))) == 0.0  # no NaN when empty
    z = losses.normalize(jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose([z.mean(), z.std()], [0.0, 1.0], atol=1e-5)


def test_losses_are_finite_with_grads():
    grads = jax.grad(lambda lp: losses.ppo_policy_loss(lp, jnp.zeros(4), jnp.ones(4), 0.2)[0])(
        jnp.array([0.1, -0.1, 0.3, 5.0])
    )
    assert bool(jnp.isfinite(grads).all())
    # The heavily clipped sample (ratio e^5) has zero gradient.
    assert float(grads[3]) == 0.0


def test_step_inputs_world_state_equals_env_world_state():
    from jaxmarl.training.rollout import TrainingEnv

    env = TrainingEnv.make("MPE_simple_spread_v3", agent_id=False, world_state=True)
    obs, state = jax.vmap(env.env.reset)(jax.random.split(jax.random.key(0), 2))
    inputs = env.inputs(obs, state, jnp.ones(2, bool))
    expected = jax.vmap(env.env.get_world_state)(state)
    np.testing.assert_allclose(inputs.world_state, expected, rtol=1e-6)
    assert inputs.world_state.shape == (2, 54) and inputs.obs.shape == (2, 3, 18)
