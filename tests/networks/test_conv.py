"""``patch_conv``: XLA's convolution as one dot, for the CNN encoders on a CPU."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jaxmarl.networks import conv as conv_module
from jaxmarl.networks.conv import channels_last, grid_conv, patch_conv
from jaxmarl.networks.encoders import CNNEncoder

CASES = [
    # (grid, window, in channels, out channels, padding)
    ((5, 8), (5, 5), 26, 4, "SAME"),  # Overcooked's first layer on counter_circuit
    ((4, 7), (3, 3), 3, 2, "SAME"),
    ((5, 5), (1, 1), 6, 3, "SAME"),  # OvercookedV2's 1x1 layers
    ((6, 5), (2, 4), 2, 3, "SAME"),  # even windows: lax puts the extra padded cell high
    ((6, 5), (3, 2), 2, 3, "VALID"),
    ((6, 5), (3, 3), 2, 3, ((2, 0), (1, 3))),
    ((9,), (4,), 2, 3, "SAME"),  # one spatial axis
]


@pytest.mark.parametrize("grid, window, c_in, c_out, padding", CASES)
def test_patch_conv_equals_xla_convolution_and_its_gradients(grid, window, c_in, c_out, padding):
    keys = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(keys[0], (3, *grid, c_in))
    fan_in = np.prod(window) * c_in  # outputs of order 1, so float32 rounding stays small
    w = jax.random.normal(keys[1], (*window, c_in, c_out)) / np.sqrt(fan_in)
    numbers = channels_last(x.ndim)

    def loss(conv, x, w):
        y = conv(x, w, (1,) * len(grid), padding, dimension_numbers=numbers)
        return jnp.sum(jnp.sin(y)), y  # a nonlinear loss: every output gets its own cotangent

    (_, expected), expected_grads = jax.value_and_grad(
        lambda x, w: loss(lax.conv_general_dilated, x, w), (0, 1), has_aux=True
    )(x, w)
    if len(grid) == 2:  # lax's string form of the same layout is accepted too
        named = patch_conv(x, w, (1, 1), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))
        np.testing.assert_allclose(named, expected, rtol=1e-5, atol=1e-4)
    (_, out), grads = jax.jit(
        jax.value_and_grad(lambda x, w: loss(patch_conv, x, w), (0, 1), has_aux=True)
    )(x, w)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    for got, want in zip(grads, expected_grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"window_strides": (2, 2)}, "window_strides"),
        ({"rhs_dilation": (2, 2)}, "rhs_dilation"),
        ({"feature_group_count": 2}, "feature_group_count"),
        ({"dimension_numbers": ("NCHW", "OIHW", "NCHW")}, "dimension_numbers"),
        ({"dimension_numbers": None}, "dimension_numbers"),  # lax's default: channels first
    ],
)
def test_patch_conv_refuses_what_it_does_not_compute(kwargs, name):
    x, w = jnp.ones((1, 4, 4, 2)), jnp.ones((3, 3, 2, 2))
    call = {"window_strides": (1, 1), "padding": "SAME", "dimension_numbers": channels_last(4)}
    with pytest.raises(NotImplementedError, match=name):
        patch_conv(x, w, **{**call, **kwargs})


def test_patch_conv_refuses_an_unknown_padding():
    x, w = jnp.ones((1, 4, 4, 2)), jnp.ones((3, 3, 2, 2))
    with pytest.raises(ValueError, match="padding 'SAME', 'VALID' or"):
        patch_conv(x, w, (1, 1), "CIRCULAR", dimension_numbers=channels_last(4))


def test_cnn_encoder_trains_without_xla_convolutions_on_a_cpu(monkeypatch):
    """On a CPU the encoder's forward pass and gradient are dots (the tests run on a CPU), unless
    ``JAXMARL_CONV=xla``; another backend keeps XLA's convolution unless
    ``JAXMARL_CONV=patches``."""
    assert jax.default_backend() == "cpu"
    encoder = CNNEncoder(features=(4, 4), kernel_sizes=(5, 3), embed_dim=8)
    obs = jnp.ones((2, 3, 5, 8, 26))
    params = encoder.init(jax.random.key(0), obs)

    def loss(params):
        return jnp.sum(encoder.apply(params, obs))

    # The printed program includes the nested ones (flax's layers, jit, custom rules).
    assert "conv_general_dilated" not in str(jax.make_jaxpr(jax.grad(loss))(params))
    monkeypatch.setenv("JAXMARL_CONV", "xla")  # reproduces runs recorded before patch_conv
    assert "conv_general_dilated" in str(jax.make_jaxpr(jax.grad(loss))(params))
    monkeypatch.setenv("JAXMARL_CONV", "xlaa")
    with pytest.raises(ValueError, match="JAXMARL_CONV='xlaa' is not a convolution"):
        grid_conv()
    monkeypatch.delenv("JAXMARL_CONV")
    assert grid_conv() is patch_conv
    monkeypatch.setattr(conv_module.jax, "default_backend", lambda: "gpu")
    assert grid_conv() is lax.conv_general_dilated
    monkeypatch.setenv("JAXMARL_CONV", "patches")  # to time patch_conv on a GPU
    assert grid_conv() is patch_conv
