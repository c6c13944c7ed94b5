"""Every v1 layout under ``jit`` and ``vmap``: short random rollouts inside the declared spaces.

The contract suite builds ``overcooked`` with its default layout only; here each layout (and
``random_reset`` on one) plays a few envs for a few steps of uniform random actions through
``env.step`` (auto-reset included: ``max_steps`` is shorter than the rollout), and every
observation must have the declared shape and dtype and lie within the declared bounds. One
compiled rollout per case; on one layout the vmapped rollout must equal the same rollout run
env by env.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.env import random_actions
from jaxmarl.envs.overcooked.layouts import overcooked_layouts

NUM_ENVS = 3
STEPS = 10
MAX_STEPS = 6  # shorter than STEPS, so each rollout auto-resets once
CASES = [(name, False) for name in overcooked_layouts] + [("counter_circuit", True)]


@functools.cache
def rollout(layout: str, random_reset: bool):
    """The env and its one-env rollout ``key -> (obs [STEPS + 1, ...], rewards, dones, shaped)``."""
    env = jaxmarl.make("overcooked", layout=layout, random_reset=random_reset, max_steps=MAX_STEPS)

    def run(key):
        # One reset key, then an (action key, step key) pair per step.
        reset_key, *step_keys = jax.random.split(key, 1 + 2 * STEPS)
        obs, state = env.reset(reset_key)

        def body(state, keys):
            actions = random_actions(env, keys[0], state)
            out = env.step(keys[1], state, actions)
            return out[1], (out[0], out[2], out[3], out[4]["shaped_reward"])

        pairs = jnp.stack(step_keys).reshape(STEPS, 2)
        _, (obs_seq, rewards, dones, shaped) = jax.lax.scan(body, state, pairs)
        first = jax.tree.map(lambda x: x[None], obs)
        obs_seq = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), first, obs_seq)
        return obs_seq, rewards, dones, shaped

    return env, run


@functools.cache
def batched(layout: str, random_reset: bool):
    env, run = rollout(layout, random_reset)
    keys = jax.random.split(jax.random.key(7), NUM_ENVS)
    return env, keys, jax.device_get(jax.jit(jax.vmap(run))(keys))


@pytest.mark.parametrize("layout, random_reset", CASES)
def test_vmapped_random_rollout_stays_in_the_declared_spaces(layout, random_reset):
    env, _, (obs, rewards, dones, shaped) = batched(layout, random_reset)
    for agent in env.agents:
        space = env.observation_space(agent)
        o = obs[agent]
        assert o.shape == (NUM_ENVS, STEPS + 1, *space.shape), (layout, o.shape)
        assert o.shape[-3:] == (env.height, env.width, 26)
        assert o.dtype == space.dtype, (layout, o.dtype)
        assert (o >= space.low).all() and (o <= space.high).all(), layout
        assert rewards[agent].dtype == np.float32 and shaped[agent].dtype == np.float32
    # Each rollout auto-reset at MAX_STEPS.
    assert dones["__all__"][:, MAX_STEPS - 1].all() and dones["__all__"].sum() == NUM_ENVS


def test_vmap_equals_a_loop_over_the_same_keys():
    layout, random_reset = "forced_coord", False
    _, run = rollout(layout, random_reset)
    _, keys, batch = batched(layout, random_reset)
    single = jax.jit(run)
    for i, key in enumerate(keys):
        one = jax.device_get(single(key))
        for got, want in zip(jax.tree.leaves(one), jax.tree.leaves(batch)):
            np.testing.assert_array_equal(got, want[i], f"{layout} env {i}")
