"""``jit_method``: an env's jitted methods compile per instance and are freed with it."""

import copy
import gc
import pickle
import re
import weakref
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.wrappers import LogWrapper

ROOT = Path(__file__).resolve().parents[1]


class Scaled(MultiAgentEnv):
    traces = 0

    def __init__(self, scale):
        super().__init__(num_agents=1)
        self.scale = scale

    @jit_method(static_argnames=("offset",))
    def value(self, x, offset=0.0):
        Scaled.traces += 1
        return x * self.scale + offset


def test_each_instance_compiles_once_and_reads_its_own_attributes():
    Scaled.traces = 0
    a, b = Scaled(2.0), Scaled(3.0)
    x = jnp.ones(3)
    np.testing.assert_allclose(a.value(x), 2.0)
    np.testing.assert_allclose(a.value(x + 1), 4.0)
    assert Scaled.traces == 1
    np.testing.assert_allclose(b.value(x, offset=1.0), 4.0)
    assert Scaled.traces == 2
    assert a.value is a.value  # one compiled function per instance
    np.testing.assert_allclose(Scaled.value(a, x), a.value(x))  # called on the class
    # Traced into enclosing transformations like any jitted function.
    np.testing.assert_allclose(jax.jit(lambda y: a.value(y) + 1)(x), 3.0)
    np.testing.assert_allclose(jax.vmap(a.value)(jnp.ones((4, 3))), 2.0)


def test_copies_and_pickles_compile_their_own_methods():
    env = Scaled(2.0)
    env.value(jnp.ones(2))
    for clone in (copy.copy(env), copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        clone.scale = 5.0
        np.testing.assert_allclose(clone.value(jnp.ones(2)), 5.0)
    np.testing.assert_allclose(env.value(jnp.ones(2)), 2.0)
    # A wrapper's compiled methods stay behind too; the copy compiles its own.
    wrapped = LogWrapper(jaxmarl.make("MPE_simple_v3"))
    obs, _ = wrapped.reset(jax.random.key(0))
    assert any(name.startswith("_jit_method.") for name in vars(wrapped))
    clone = copy.copy(wrapped)
    assert not any(name.startswith("_jit_method.") for name in vars(clone))
    assert clone.reset is not wrapped.reset
    clone_obs, _ = clone.reset(jax.random.key(0))
    jax.tree.map(np.testing.assert_array_equal, clone_obs, obs)


def test_an_env_used_and_dropped_is_freed_with_its_programs():
    # With ``self`` a static jit argument JAX's caches kept every env ever stepped (and its
    # compiled programs) alive: a process making an env per map or sweep point grew until
    # XLA:CPU crashed at the kernel's limit of memory mappings.
    key = jax.random.key(0)
    refs = []
    for env_id in ("MPE_simple_spread_v3", "overcooked"):
        env = LogWrapper(jaxmarl.make(env_id))
        obs, state = env.reset(key)
        actions = {agent: jnp.int32(0) for agent in env.agents}
        env.step(key, state, actions)
        refs += [weakref.ref(env), weakref.ref(env.unwrapped)]
        del env, obs, state
    gc.collect()
    assert [ref() for ref in refs] == [None] * 4


def test_no_env_or_wrapper_jits_a_method_with_self_static():
    pattern = re.compile(r"^\s*@(functools\.)?partial\(\s*jax\.jit,\s*static_argnums=\(?0\b", re.M)
    offenders = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}"
        for folder in ("envs", "jaxmarl", "baselines")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for text in [path.read_text()]
        for m in pattern.finditer(text)
    ]
    assert not offenders, f"use jaxmarl.env.jit_method instead: {offenders}"
