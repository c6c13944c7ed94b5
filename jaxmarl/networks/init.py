"""Weight initialisers, set in one place so every network agrees.

Orthogonal initialisation with gain sqrt(2) for hidden layers (ReLU/tanh bodies), a small gain
(0.01) for policy logits so the initial policy is near uniform, and gain 1 for value and Q
outputs (and GRU recurrent kernels): the choices of the PPO implementation-details literature.

Why our own ``orthogonal`` rather than ``flax.linen.initializers.orthogonal``: flax's calls
LAPACK's QR, and on CPU jaxlib (0.10.2) runs batched QR kernels on the same thread pool that
executes the program; when several of them run at once (``vmap`` over seeds of a network with
a few orthogonal layers) every pool thread can end up blocked waiting for work queued behind
it, and ``init`` never returns. ``orthogonal`` here orthogonalises with Householder
reflections written in ``jax.numpy`` (plain XLA ops, no custom call), so it cannot deadlock;
it draws the same Gaussian matrix from the same key as flax and returns the same matrix up to
float32 rounding (tested), so the distribution of initial networks is unchanged.
"""

import math

import jax
import jax.numpy as jnp
from flax import linen as nn


def householder_q(a: jax.Array) -> jax.Array:
    """The ``Q`` of the thin QR factorisation ``a = Q R`` with ``diag(R) > 0``, for ``m >= n``.

    One Householder reflection per column zeroes that column below the diagonal; ``Q`` is the
    product of the reflections applied to the first ``n`` columns of the identity. Signs are
    chosen so that ``R``'s diagonal is positive, which makes the factorisation unique (and the
    orthogonal matrix Haar-distributed when ``a`` is Gaussian).
    """
    m, n = a.shape
    rows = jnp.arange(m)

    def reflect(k, carry):
        r, vs, diag = carry
        x = jnp.where(rows >= k, r[:, k], 0.0)
        norm = jnp.linalg.norm(x)
        # Reflect x onto -sign(x_k) |x| e_k: adding rather than subtracting avoids cancellation.
        alpha = -jnp.where(x[k] >= 0, 1.0, -1.0) * norm
        v = x - alpha * (rows == k)
        v = v / jnp.maximum(jnp.linalg.norm(v), jnp.finfo(a.dtype).tiny)
        r = r - 2.0 * jnp.outer(v, v @ r)
        return r, vs.at[:, k].set(v), diag.at[k].set(alpha)

    init = (a, jnp.zeros_like(a), jnp.zeros((n,), a.dtype))
    _, vs, diag = jax.lax.fori_loop(0, n, reflect, init)

    def apply(i, q):
        v = vs[:, n - 1 - i]
        return q - 2.0 * jnp.outer(v, v @ q)

    q = jax.lax.fori_loop(0, n, apply, jnp.eye(m, n, dtype=a.dtype))
    return q * jnp.where(diag >= 0, 1.0, -1.0).astype(a.dtype)


def orthogonal(scale: float = 1.0, column_axis: int = -1):
    """Orthogonal initialiser (rows or columns orthonormal, times ``scale``).

    Same convention as ``jax.nn.initializers.orthogonal``: the kernel is viewed as a matrix
    with ``shape[column_axis]`` columns and everything else as rows; the larger side gets the
    orthonormal vectors.
    """

    def init(key, shape, dtype=jnp.float32):
        if len(shape) < 2:
            raise ValueError(f"orthogonal initialiser needs at least 2 dimensions, got {shape}")
        num_cols = shape[column_axis]
        num_rows = math.prod(shape) // num_cols
        tall = num_rows >= num_cols
        matrix_shape = (num_rows, num_cols) if tall else (num_cols, num_rows)
        gaussian = jax.random.normal(key, matrix_shape, dtype)
        q = householder_q(gaussian)
        q = q if tall else q.T  # [num_rows, num_cols]
        rows_shape = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        q = jnp.moveaxis(q.reshape(rows_shape + (num_cols,)), -1, column_axis)
        return scale * q

    return init


HIDDEN = orthogonal(math.sqrt(2.0))
POLICY = orthogonal(0.01)
VALUE = orthogonal(1.0)
RECURRENT = orthogonal(1.0)
GRU_INPUT = nn.initializers.lecun_normal()  # flax GRUCell's input-kernel default
BIAS = nn.initializers.zeros_init()

ACTIVATIONS = {"relu": nn.relu, "tanh": nn.tanh, "gelu": nn.gelu, "silu": nn.silu}


def activation(name: str):
    """The activation called ``name``; raises ``ValueError`` listing the valid names."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown activation {name!r}; choose one of {sorted(ACTIVATIONS)}"
        ) from None
