"""The GRU recurrence over a whole sequence, with a hand-written backward pass.

``gru_sequence`` runs the part of a GRU that must be sequential: given the input projections
of every step (computed outside, as one matrix product), it scans the recurrent product and
the gates over time. Its gradient is the same as automatic differentiation's (tested), but laid
out for speed: autodiff of a scan accumulates the recurrent kernel's gradient inside the
backward loop, one small ``[H, N] x [N, 3H]`` product and a ``[H, 3H]`` read-add-write per
step; here the backward loop only emits each step's gate gradients and the kernel and bias
gradients are one ``[H, T*N] x [T*N, 3H]`` product after it.

Equations (those of ``flax.linen.GRUCell``), per step with ``px`` the input projections and
``h`` the state after the episode-start reset::

    ph = h @ W                      # [N, 3H]: reset, update, candidate blocks
    r = sigmoid(px_r + ph_r)        z = sigmoid(px_z + ph_z)
    a = ph_n + b                    n = tanh(px_n + r * a)
    h' = (1 - z) * n + z * h
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _step(kernel, bias, hidden, projected_x, keep):
    """One step; returns the new state and what the backward pass needs.

    ``projected_x`` is ``(px_r, px_z, px_n)``, each ``[N, H]``.
    """
    px_r, px_z, px_n = projected_x
    size = hidden.shape[-1]
    hidden = hidden * keep[:, None]
    projected_h = hidden @ kernel
    r = jax.nn.sigmoid(px_r + projected_h[:, :size])
    z = jax.nn.sigmoid(px_z + projected_h[:, size : 2 * size])
    a = projected_h[:, 2 * size :] + bias
    n = jnp.tanh(px_n + r * a)
    new_hidden = (1.0 - z) * n + z * hidden
    return new_hidden, (hidden, r, z, a, n)


def _forward(kernel, bias, hidden, projected_x, keep):
    # The loop reads each gate's input projection from its own [T, N, H] array: XLA's CPU
    # kernels are slow to slice gate blocks out of the minor axis of a dynamically indexed
    # [T, N, 3H] array (benchmarks/FINDINGS.md, "GRU layout").
    size = hidden.shape[-1]
    gates_x = tuple(projected_x[..., i * size : (i + 1) * size] for i in range(3))

    def body(hidden, inputs):
        gate_x, keep = inputs
        new_hidden, saved = _step(kernel, bias, hidden, gate_x, keep)
        return new_hidden, (new_hidden, saved)

    last, (outputs, saved) = jax.lax.scan(body, hidden, (gates_x, keep))
    return (last, outputs), saved


@jax.custom_vjp
def gru_sequence(kernel, bias, hidden, projected_x, keep):
    """Scan the GRU over time.

    Args:
        kernel: ``[H, 3H]`` recurrent kernel (reset, update, candidate blocks).
        bias: ``[H]`` candidate bias applied to the recurrent product.
        hidden: ``[N, H]`` state before the first step.
        projected_x: ``[T, N, 3H]`` input projections (including their biases).
        keep: ``[T, N]`` float, 0 where the state is reset before the step, else 1.

    Returns:
        ``(last state [N, H], outputs [T, N, H])``.
    """
    return _forward(kernel, bias, hidden, projected_x, keep)[0]


def _gru_sequence_fwd(kernel, bias, hidden, projected_x, keep):
    out, saved = _forward(kernel, bias, hidden, projected_x, keep)
    return out, (kernel, saved, keep)


def _gru_sequence_bwd(residuals, cotangents):
    kernel, (hidden_in, r, z, a, n), keep = residuals
    d_last, d_outputs = cotangents

    def body(d_hidden, inputs):
        d_out, hidden, r, z, a, n, keep = inputs
        d_new = d_hidden + d_out
        d_n = d_new * (1.0 - z)
        d_pre_n = d_n * (1.0 - n * n)
        d_pre_z = d_new * (hidden - n) * z * (1.0 - z)
        d_pre_r = d_pre_n * a * r * (1.0 - r)
        d_projected_x = jnp.concatenate([d_pre_r, d_pre_z, d_pre_n], axis=-1)
        d_projected_h = jnp.concatenate([d_pre_r, d_pre_z, d_pre_n * r], axis=-1)
        d_reset_hidden = d_new * z + d_projected_h @ kernel.T
        return d_reset_hidden * keep[:, None], (d_projected_x, d_projected_h)

    inputs = (d_outputs, hidden_in, r, z, a, n, keep)
    d_hidden, (d_projected_x, d_projected_h) = jax.lax.scan(body, d_last, inputs, reverse=True)
    size = hidden_in.shape[-1]
    flat = lambda x: x.reshape((-1, x.shape[-1]))
    d_kernel = flat(hidden_in).T @ flat(d_projected_h)
    d_bias = jnp.sum(flat(d_projected_h)[:, 2 * size :], axis=0)
    return d_kernel, d_bias, d_hidden, d_projected_x, jnp.zeros_like(keep)


gru_sequence.defvjp(_gru_sequence_fwd, _gru_sequence_bwd)
