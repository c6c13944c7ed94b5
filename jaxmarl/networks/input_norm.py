"""Running input normalisation: each input feature standardised by the mean and variance of
every input seen so far.

The statistics live in the network's parameters (``params["input_norm"]``), so whatever holds the
parameters (the rollout, the loss, greedy evaluation, a checkpoint, a vmapped seed axis, one
copy per agent) normalises the same way without extra state. They are not trained: the network
reads them through ``stop_gradient`` (their gradient is exactly zero, so Adam leaves them where
they are), and the learner merges each rollout's inputs into them with ``merge``.

A statistics leaf is ``{"mean": [*F], "var": [*F], "count": []}`` for inputs of feature shape
``F``; before any merge it is the identity (mean 0, variance 1, count 0), and the first merge
replaces it with the batch's moments. Normalised inputs are clipped to ``CLIP`` standard
deviations, so that a feature whose variance is still near 0 cannot throw the first layer far
off when it first moves.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxmarl.training.data_parallel import SINGLE, DataShards

Stats = dict[str, jax.Array]

CLIP = 10.0  # standard deviations (CleanRL's and Stable-Baselines3's bound)
EPS = 1e-8  # added to the variance: a constant feature (a one-hot id, a padded slot) maps to 0


def initial(feature_shape: tuple[int, ...]) -> Stats:
    """The identity statistics for inputs of feature shape ``feature_shape``."""
    return {
        "mean": jnp.zeros(feature_shape, jnp.float32),
        "var": jnp.ones(feature_shape, jnp.float32),
        "count": jnp.zeros((), jnp.float32),
    }


def normalise(stats: Stats, x: jax.Array) -> jax.Array:
    """``x`` ``[..., *F]`` standardised feature by feature and clipped to ``±CLIP``."""
    stats = jax.lax.stop_gradient(stats)
    scaled = (x - stats["mean"]) * jax.lax.rsqrt(stats["var"] + EPS)
    return jnp.clip(scaled, -CLIP, CLIP)


def merge(stats: Stats, x: jax.Array, data: DataShards = SINGLE) -> Stats:
    """``stats`` updated with the samples ``x`` ``[n, *F]`` (every device's, when the batch is
    split over ``data``; each device holds ``n`` of them).

    The batch's mean and variance are combined with the running ones exactly (Chan et al.'s
    parallel update), so merging batches one by one gives the moments of all of them at once.
    """
    x = x.astype(jnp.float32)
    n = jnp.float32(x.shape[0] * data.count)
    batch_mean = data.mean(jnp.mean(x, axis=0))
    batch_var = data.mean(jnp.mean(jnp.square(x - batch_mean), axis=0))
    count = stats["count"]
    total = count + n
    delta = batch_mean - stats["mean"]
    mean = stats["mean"] + delta * (n / total)
    squares = stats["var"] * count + batch_var * n + jnp.square(delta) * (count * n / total)
    return {"mean": mean, "var": squares / total, "count": total}
