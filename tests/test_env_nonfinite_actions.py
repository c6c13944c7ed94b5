"""A NaN or infinite continuous action is the no-op, in every env with continuous actions.

The variants are found, not listed: every registered id, built with its defaults and with each
family's continuous ``action_type`` spelling, is kept when one of its action spaces is a
``Box``. Each variant compiles one ``jit(vmap(step))``.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import jaxmarl
from jaxmarl import spaces
from jaxmarl.env import checked_step
from tests.test_env_contract import NIGHTLY_IDS

# The continuous spellings of the families' ``action_type`` (MPE, SMAX).
ACTION_TYPE_VARIANTS = ({}, {"action_type": "Continuous"}, {"action_type": "continuous"})


def _has_box(env):
    return any(isinstance(env.action_space(a), spaces.Box) for a in env.agents)


def continuous_variants():
    found = []
    for env_id in jaxmarl.registered_envs:
        for kwargs in ACTION_TYPE_VARIANTS:
            try:
                env = jaxmarl.make(env_id, **kwargs)
            except (TypeError, ValueError):
                continue
            if _has_box(env) and (env_id, env.action_space(env.agents[0])) not in [
                (i, s) for i, _, s in found
            ]:
                found.append((env_id, kwargs, env.action_space(env.agents[0])))
    # The multi-agent MuJoCo ids compile MJX physics for tens of seconds each: nightly, as in the
    # contract suite (tests/envs/mabrax checks their action clipping in CI).
    return [
        pytest.param(
            i, k, id=f"{i}{k or ''}", marks=[pytest.mark.nightly] if i in NIGHTLY_IDS else []
        )
        for i, k, _ in found
    ]


VARIANTS = continuous_variants()


def test_every_family_with_continuous_actions_is_covered():
    ids = {p.values[0] for p in VARIANTS}
    assert "MPE_simple_spread_v3" in ids and "SMAX" in ids and "HeuristicEnemySMAX" in ids
    assert any(i.startswith("MPE_simple_facmac") for i in ids)


def _fill(env, value):
    return {a: jnp.full(env.action_space(a).shape, value, jnp.float32) for a in env.agents}


@functools.cache
def _batched_step(env):
    return jax.jit(jax.vmap(env.step))


@pytest.mark.parametrize("env_id, kwargs", VARIANTS)
def test_non_finite_action_is_the_noop(env_id, kwargs):
    env = jaxmarl.make(env_id, **kwargs)
    keys = jax.random.split(jax.random.key(0), 4)
    _, states = jax.vmap(env.reset)(keys)
    noop = {a: env.noop_action(a) for a in env.agents}
    half_nan = {a: jnp.asarray(noop[a]).at[0].set(jnp.nan) for a in env.agents}
    batch = [_fill(env, jnp.nan), _fill(env, jnp.inf), half_nan, noop]
    actions = jax.tree.map(lambda *xs: jnp.stack(xs), *batch)
    # Same states and keys in every row: the non-finite rows must equal the no-op row.
    same = lambda tree: jax.tree.map(lambda x: jnp.repeat(x[:1], 4, axis=0), tree)
    step_keys = same(jax.random.split(jax.random.key(1), 4))
    step = _batched_step(env)
    first = step(step_keys, same(states), actions)
    again = step(step_keys, same(states), actions)
    chex.assert_trees_all_equal(first, again)
    obs, state, rewards, _, _ = first
    for leaf in jax.tree.leaves((obs, state, rewards)):
        if jnp.issubdtype(leaf.dtype, jnp.floating):
            assert np.isfinite(np.asarray(leaf)).all()
    for row in range(3):
        chex.assert_trees_all_equal(
            jax.tree.map(lambda x, r=row: x[r], first), jax.tree.map(lambda x: x[3], first)
        )


def test_finite_actions_pass_unchanged():
    env = jaxmarl.make("MPE_simple_spread_v3", action_type="Continuous")
    actions = _fill(env, 0.3)
    chex.assert_trees_all_equal(env.finite_actions(actions), actions)


def test_checked_step_raises_on_nan_and_passes_finite_actions():
    env = jaxmarl.make("MPE_simple_spread_v3", action_type="Continuous")
    _, state = env.reset(jax.random.key(0))
    step = checked_step(env)
    err, _ = step(jax.random.key(1), state, _fill(env, 0.5))
    err.throw()  # finite: no error
    bad = dict(_fill(env, 0.5), agent_1=jnp.asarray([0.0, jnp.nan, 0.0, 0.0, 0.0]))
    err, (obs, *_) = step(jax.random.key(1), state, bad)
    assert all(np.isfinite(np.asarray(o)).all() for o in obs.values())
    with pytest.raises(checkify.JaxRuntimeError, match="agent_1"):
        err.throw()
    # Under vmap the error of any row is reported.
    batch = jax.tree.map(lambda g, b: jnp.stack([g, b]), _fill(env, 0.5), bad)
    states = jax.tree.map(lambda x: jnp.stack([x, x]), state)
    err, _ = jax.vmap(step)(jax.random.split(jax.random.key(2), 2), states, batch)
    with pytest.raises(checkify.JaxRuntimeError, match="non-finite"):
        err.throw()
