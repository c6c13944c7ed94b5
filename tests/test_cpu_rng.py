"""The unrolled CPU threefry lowering (``jaxmarl._cpu_rng``): in place, loop-free, same bits."""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl  # noqa: F401  (applies the lowering)
from jaxmarl import _cpu_rng

pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu", reason="a CPU lowering")

# Draws that cover the call sites a training program has: split, uniform, normal, randint,
# categorical (gumbel), under vmap.
_DRAWS = """
import json, jax, jax.numpy as jnp
import jaxmarl
key = jax.random.key(7)
def draws(key):
    a, b, c, d = jax.random.split(key, 4)
    return {
        "uniform": jax.random.uniform(a, (5,)),
        "normal": jax.random.normal(b, (3, 2)),
        "randint": jax.random.randint(c, (6,), 0, 100),
        "categorical": jax.vmap(lambda k: jax.random.categorical(k, jnp.zeros(5)))(
            jax.random.split(d, 4)),
    }
out = {k: v.tolist() for k, v in jax.jit(draws)(key).items()}
out["has_loop"] = "while" in jax.jit(draws).lower(key).compile().as_text()
print(json.dumps(out))
"""


def test_applied_on_import():
    # Fails if a JAX upgrade moved the internals the lowering is registered through.
    assert _cpu_rng.applied()


def test_compiled_random_numbers_have_no_loop():
    compiled = jax.jit(lambda key: jax.random.uniform(key, (8,))).lower(jax.random.key(0))
    assert "while" not in compiled.compile().as_text()


def test_known_answers():
    # Random123's threefry2x32 (20 rounds) known-answer vectors.
    from jax._src.random.threefry2x32 import threefry_2x32

    hash_ = jax.jit(threefry_2x32)
    cases = [
        ((0x0, 0x0), (0x0, 0x0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ]
    for key, count, expected in cases:
        out = hash_(jnp.array(key, jnp.uint32), jnp.array(count, jnp.uint32))
        assert [int(v) for v in out] == list(expected)


def test_same_bits_as_jax_default_lowering():
    def run(rolled: str) -> dict:
        env = {**os.environ, _cpu_rng.OPT_OUT_VARIABLE: rolled, "JAX_PLATFORMS": "cpu"}
        done = subprocess.run(
            [sys.executable, "-c", _DRAWS], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    unrolled, rolled = run("0"), run("1")
    assert rolled.pop("has_loop") and not unrolled.pop("has_loop")  # two different programs
    assert unrolled.keys() == rolled.keys()
    for name in unrolled:
        np.testing.assert_array_equal(np.asarray(unrolled[name]), np.asarray(rolled[name]))


def test_opt_out_leaves_the_default(monkeypatch):
    monkeypatch.setattr(_cpu_rng, "_applied", False)
    monkeypatch.setenv(_cpu_rng.OPT_OUT_VARIABLE, "1")
    assert _cpu_rng.apply() is False
    assert not _cpu_rng.applied()
