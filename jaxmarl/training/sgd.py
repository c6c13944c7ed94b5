"""Epochs of minibatch gradient steps: the optimisation loop shared by on-policy learners."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from jaxmarl.training.data_parallel import SINGLE, DataShards
from jaxmarl.training.minibatch import Minibatches

LR_DECAYS = ("linear", "cosine")


def learning_rate(
    lr: float, anneal: bool, steps: int, warmup: int = 0, decay: str = "linear"
) -> float | optax.Schedule:
    """``lr``, or with ``anneal`` a schedule decaying it to 0 over ``steps`` optimiser steps
    (every learner's ``anneal_lr``).

    Args:
        lr: the peak learning rate.
        anneal: decay after the warmup (else hold ``lr``).
        steps: optimiser steps of the whole run.
        warmup: optimiser steps at the start during which the rate rises linearly from 0 to
            ``lr`` (0: none); the decay then spans the remaining ``steps - warmup``.
        decay: ``"linear"`` or ``"cosine"`` (``optax.cosine_decay_schedule``, to 0).
    """
    if decay not in LR_DECAYS:
        raise ValueError(f"learning-rate decay must be one of {LR_DECAYS}, got {decay!r}")
    if not 0 <= warmup < max(steps, 1):
        raise ValueError(f"warmup must be in [0, {steps}) optimiser steps, got {warmup}")
    rest = max(steps - warmup, 1)
    if not anneal:
        after = optax.constant_schedule(lr)
    elif decay == "cosine":
        after = optax.cosine_decay_schedule(lr, rest)
    else:
        after = optax.linear_schedule(lr, 0.0, rest)
    if warmup == 0:
        return after if anneal else lr
    return optax.join_schedules([optax.linear_schedule(0.0, lr, warmup), after], [warmup])


def sgd_epochs(
    loss_fn: Callable[[Any, Any], tuple[jax.Array, dict]],
    optimiser: optax.GradientTransformation,
    params: Any,
    opt_state: Any,
    key: jax.Array,
    make_minibatches: Callable[[jax.Array], Any],
    num_epochs: int,
    data: DataShards = SINGLE,
) -> tuple[Any, Any, jax.Array, dict[str, jax.Array]]:
    """``num_epochs`` passes; each draws fresh minibatches and takes one step per minibatch.

    Args:
        loss_fn: ``(params, minibatch) -> (loss, metrics)``.
        optimiser: an optax transformation.
        params, opt_state: current parameters and optimiser state.
        key: PRNG key for shuffling (returned advanced).
        make_minibatches: ``key -> minibatches``: a pytree with a leading ``[M]`` axis on every
            leaf, or ``Minibatches`` (each minibatch gathered when its step comes).
        num_epochs: passes over the data.
        data: with a data split, each device's minibatches are its share of the global ones;
            gradients and metrics are averaged over the devices (so parameters stay equal).

    Returns:
        ``(params, opt_state, key, metrics)``; metrics are means over every step, plus
        ``grad_norm``.
    """

    def epoch(carry, _):
        params, opt_state, key = carry
        key, shuffle_key = jax.random.split(key)

        minibatches = Minibatches.of(make_minibatches(shuffle_key))

        def step(carry, index):
            params, opt_state = carry
            minibatch = minibatches.build(index)
            grads, metrics = data.mean(jax.grad(loss_fn, has_aux=True)(params, minibatch))
            updates, opt_state = optimiser.update(grads, opt_state, params)
            metrics = {**metrics, "grad_norm": optax.tree.norm(grads)}
            return (optax.apply_updates(params, updates), opt_state), metrics

        (params, opt_state), metrics = jax.lax.scan(step, (params, opt_state), minibatches.index)
        return (params, opt_state, key), metrics

    (params, opt_state, key), metrics = jax.lax.scan(
        epoch, (params, opt_state, key), None, num_epochs
    )
    return params, opt_state, key, jax.tree.map(jnp.mean, metrics)
