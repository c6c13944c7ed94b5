import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.training import losses
from jaxmarl.training.minibatch import shuffle_and_split


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


def test_shuffle_and_split_is_a_permutation():
    data = {"a": jnp.arange(12), "b": jnp.arange(24).reshape(12, 2)}
    split = shuffle_and_split(jax.random.key(0), data, 3)
    assert split["a"].shape == (3, 4) and split["b"].shape == (3, 4, 2)
    assert sorted(np.asarray(split["a"]).ravel().tolist()) == list(range(12))
    np.testing.assert_array_equal(split["b"][..., 0], 2 * split["a"])  # rows stay together
    time_major = jnp.arange(30).reshape(3, 10)
    split_t = shuffle_and_split(jax.random.key(1), time_major, 5, axis=1)
    assert split_t.shape == (5, 3, 2)
    np.testing.assert_array_equal(split_t[:, 1] - split_t[:, 0], 10)  # sequences kept whole


def test_sequence_minibatches_keep_sequences_or_split_samples():
    from jaxmarl.training.minibatch import sequence_minibatches

    steps = {"x": jnp.arange(3 * 4).reshape(3, 4)}  # [T=3, N=4], value = 4t + n
    carries = jnp.arange(4.0)[:, None] * jnp.ones((4, 2))  # [N, H=2], row n holds n
    seq, seq_carry = sequence_minibatches(jax.random.key(0), steps, carries, 2, recurrent=True)
    assert seq["x"].shape == (2, 3, 2) and seq_carry.shape == (2, 2, 2)
    # Each sequence keeps its time order and its own initial state.
    np.testing.assert_array_equal(seq["x"][:, 1] - seq["x"][:, 0], 4)
    np.testing.assert_array_equal(seq["x"][:, 0], seq_carry[..., 0])
    flat, zeros = sequence_minibatches(jax.random.key(0), steps, carries, 2, recurrent=False)
    assert flat["x"].shape == (2, 1, 6) and zeros.shape == (2, 6, 2)
    assert sorted(np.asarray(flat["x"]).ravel().tolist()) == list(range(12))
    assert float(jnp.abs(zeros).sum()) == 0.0


def test_step_inputs_world_state_equals_env_world_state():
    from jaxmarl.training.rollout import TrainingEnv

    env = TrainingEnv.make("MPE_simple_spread_v3", agent_id=False, world_state=True)
    obs, state = jax.vmap(env.env.reset)(jax.random.split(jax.random.key(0), 2))
    inputs = env.inputs(obs, state, jnp.ones(2, bool))
    expected = jax.vmap(env.env.get_world_state)(state)
    np.testing.assert_allclose(inputs.world_state, expected, rtol=1e-6)
    assert inputs.world_state.shape == (2, 54) and inputs.obs.shape == (2, 3, 18)
