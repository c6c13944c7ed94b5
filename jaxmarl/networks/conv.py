"""Convolutions of the CNN encoders: on a CPU, one matrix product per layer ("patches").

XLA:CPU runs a convolution through its library kernel only in the canonical layout. Inside a
loop, such as a learner's minibatch ``scan``, it keeps a convolution's two gradients (the
input's and the kernel's) in transposed layouts and emits a generic loop nest for them, which
is far slower (``benchmarks/FINDINGS.md``, "CNN gradients on a CPU"). ``patch_conv`` computes
the same convolution as a dot: each output cell's window, gathered into one vector, times the
kernel reshaped to a matrix. Its gradients are dots, pads and slices, which XLA:CPU runs well
inside loops too. Other backends keep XLA's convolution (``lax.conv_general_dilated``); the
two have not been compared there yet. ``JAXMARL_CONV=xla`` or ``JAXMARL_CONV=patches`` picks
one on every backend (``grid_conv``).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax


def channels_last(ndim: int) -> lax.ConvDimensionNumbers:
    """Flax's dimension numbers for an ``ndim``-dimensional input: ``[N, *spatial, C]`` with a
    ``[*window, C_in, C_out]`` kernel (NHWC / HWIO in two dimensions)."""
    spec = (0, ndim - 1, *range(1, ndim - 1))
    return lax.ConvDimensionNumbers(spec, (ndim - 1, ndim - 2, *range(ndim - 2)), spec)


def _pads(padding: str | Sequence[tuple[int, int]], window: Sequence[int]) -> list[tuple[int, int]]:
    if padding == "SAME":  # lax's split of the k - 1 padded cells at stride 1: the smaller half low
        return [((k - 1) // 2, k - 1 - (k - 1) // 2) for k in window]
    if padding == "VALID":
        return [(0, 0)] * len(window)
    if isinstance(padding, str):
        raise ValueError(
            f"patch_conv supports padding 'SAME', 'VALID' or (low, high) pairs, got {padding!r}"
        )
    return [tuple(pair) for pair in padding]


def patch_conv(
    lhs: jax.Array,
    rhs: jax.Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: lax.ConvDimensionNumbers | None = None,
    feature_group_count: int = 1,
    precision: lax.PrecisionLike = None,
    preferred_element_type: jnp.dtype | None = None,
) -> jax.Array:
    """``lax.conv_general_dilated``'s signature and result for the convolutions the encoders use
    (channels last, stride 1, no dilation, one feature group), computed as one dot.

    Raises:
        NotImplementedError: a stride, dilation, feature grouping or layout it does not cover.
    """
    window = rhs.shape[:-2]
    unit = (1,) * len(window)
    unsupported = {
        "window_strides": tuple(window_strides) != unit,
        "lhs_dilation": lhs_dilation is not None and tuple(lhs_dilation) != unit,
        "rhs_dilation": rhs_dilation is not None and tuple(rhs_dilation) != unit,
        "feature_group_count": feature_group_count != 1,
        "dimension_numbers": dimension_numbers is None  # lax's default is channels first
        or lax.conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
        != channels_last(lhs.ndim),
    }
    if any(unsupported.values()):
        raise NotImplementedError(
            f"patch_conv covers stride 1, no dilation, one feature group and channels-last "
            f"layouts; got {[name for name, bad in unsupported.items() if bad]}. Use "
            f"lax.conv_general_dilated for this convolution."
        )
    padded = jnp.pad(lhs, [(0, 0), *_pads(padding, window), (0, 0)])
    out = [size - k + 1 for size, k in zip(padded.shape[1:-1], window)]
    # Window offsets major, input channels minor: the row order of the kernel reshaped below.
    patches = jnp.concatenate(
        [
            padded[(slice(None), *(slice(o, o + n) for o, n in zip(offset, out)), slice(None))]
            for offset in itertools.product(*(range(k) for k in window))
        ],
        axis=-1,
    )
    kernel = rhs.reshape((math.prod(window) * rhs.shape[-2], rhs.shape[-1]))
    return jnp.matmul(
        patches, kernel, precision=precision, preferred_element_type=preferred_element_type
    )


def grid_conv() -> Callable[..., jax.Array]:
    """The convolution for ``nn.Conv(conv_general_dilated=...)`` on the default backend, picked
    when a network is traced: ``patch_conv`` on a CPU, XLA's convolution elsewhere.

    ``JAXMARL_CONV=xla`` picks XLA's convolution on a CPU too (the two round differently, so
    this reproduces a CPU run recorded before ``patch_conv`` existed bit for bit);
    ``JAXMARL_CONV=patches`` picks ``patch_conv`` on every backend, to time it on another one.

    Raises:
        ValueError: ``JAXMARL_CONV`` holds another value.
    """
    choice = os.environ.get("JAXMARL_CONV", "")
    if choice not in ("", "xla", "patches"):
        raise ValueError(
            f"JAXMARL_CONV={choice!r} is not a convolution: set it to 'xla' or 'patches', or "
            f"unset it for the backend's default"
        )
    if choice == "patches" or (not choice and jax.default_backend() == "cpu"):
        return patch_conv
    return lax.conv_general_dilated
