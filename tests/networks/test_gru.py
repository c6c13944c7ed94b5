"""The GRU recurrence's hand-written backward pass equals automatic differentiation."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl.networks.gru import _forward, gru_sequence


def _inputs(key, t=6, n=5, h=4):
    k = jax.random.split(key, 5)
    kernel = 0.7 * jax.random.normal(k[0], (h, 3 * h))
    bias = 0.3 * jax.random.normal(k[1], (h,))
    hidden = jax.random.normal(k[2], (n, h))
    projected = jax.random.normal(k[3], (t, n, 3 * h))
    keep = (jax.random.uniform(k[4], (t, n)) > 0.3).astype(jnp.float32)
    return kernel, bias, hidden, projected, keep


def _loss(sequence_fn):
    def loss(kernel, bias, hidden, projected, keep):
        last, outputs = sequence_fn(kernel, bias, hidden, projected, keep)
        weights = jnp.sin(jnp.arange(outputs.size, dtype=jnp.float32)).reshape(outputs.shape)
        return jnp.sum(weights * outputs) + jnp.sum(jnp.cos(last))

    return loss


def test_gru_sequence_gradients_match_autodiff():
    autodiff = lambda *args: _forward(*args)[0]
    for seed in range(3):
        args = _inputs(jax.random.key(seed))
        ours = jax.jit(jax.grad(_loss(gru_sequence), argnums=(0, 1, 2, 3)))(*args)
        reference = jax.grad(_loss(autodiff), argnums=(0, 1, 2, 3))(*args)
        for got, want in zip(ours, reference, strict=True):
            assert got.shape == want.shape and got.dtype == jnp.float32
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_gru_sequence_forward_and_vmap():
    args = _inputs(jax.random.key(7))
    last, outputs = gru_sequence(*args)
    ref_last, ref_outputs = _forward(*args)[0]
    np.testing.assert_array_equal(outputs, ref_outputs)
    np.testing.assert_array_equal(last, ref_last)
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *[_inputs(jax.random.key(s)) for s in (1, 2)])
    grads = jax.vmap(jax.grad(_loss(gru_sequence)))(*stacked)
    single = jax.grad(_loss(gru_sequence))(*_inputs(jax.random.key(2)))
    np.testing.assert_allclose(grads[1], single, rtol=1e-5, atol=1e-6)
