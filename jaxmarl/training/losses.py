"""Loss terms. Each returns a scalar float32 and takes an optional mask of valid entries."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def masked_mean(x: jax.Array, mask: jax.Array | None = None) -> jax.Array:
    """Mean of ``x`` over entries where ``mask`` is true (0 when none is)."""
    if mask is None:
        return jnp.mean(x)
    mask = mask.astype(x.dtype)
    return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def normalize(x: jax.Array, mask: jax.Array | None = None, eps: float = 1e-8) -> jax.Array:
    """Zero mean, unit variance over the (masked) entries."""
    mean = masked_mean(x, mask)
    std = jnp.sqrt(masked_mean((x - mean) ** 2, mask))
    return (x - mean) / (std + eps)


def ppo_policy_loss(
    log_prob: jax.Array,
    old_log_prob: jax.Array,
    advantages: jax.Array,
    clip_eps: float,
    mask: jax.Array | None = None,
) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Clipped surrogate objective (negated, to minimise).

    Returns:
        ``(loss, {"approx_kl", "clip_fraction"})``.
    """
    log_ratio = log_prob - old_log_prob
    ratio = jnp.exp(log_ratio)
    unclipped = ratio * advantages
    clipped = jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps) * advantages
    loss = -masked_mean(jnp.minimum(unclipped, clipped), mask)
    # k3 estimator of KL(old || new): unbiased and non-negative.
    approx_kl = masked_mean((ratio - 1.0) - log_ratio, mask)
    clip_fraction = masked_mean((jnp.abs(ratio - 1.0) > clip_eps).astype(jnp.float32), mask)
    return loss, {"approx_kl": approx_kl, "clip_fraction": clip_fraction}


def value_loss(
    values: jax.Array,
    old_values: jax.Array,
    targets: jax.Array,
    clip_eps: float | None,
    mask: jax.Array | None = None,
) -> jax.Array:
    """Half squared error; with ``clip_eps`` the PPO clipped form (max of both errors)."""
    error = jnp.square(values - targets)
    if clip_eps is not None:
        clipped = old_values + jnp.clip(values - old_values, -clip_eps, clip_eps)
        error = jnp.maximum(error, jnp.square(clipped - targets))
    return 0.5 * masked_mean(error, mask)
