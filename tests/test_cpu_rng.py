"""The opt-in unrolled CPU threefry lowering (``jaxmarl.cpu_rng``): opt-in, loop-free, same bits.

conftest.py opts the test process in (see there why), so the in-process tests here see the
lowering in place; what a plain ``import jaxmarl`` does is checked in fresh subprocesses.
"""

import dataclasses
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl import cpu_rng, train

pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu", reason="a CPU lowering")

# Draws that cover the call sites a training program has: split, uniform, normal, randint,
# categorical (gumbel), under vmap. The library is used as a script would use it (an env
# built, a learner module imported) and opts in only when told to (argv[1] == "opt-in").
_DRAWS = """
import json, sys, jax, jax.numpy as jnp
import jaxmarl, jaxmarl.baselines.q_learning
from jaxmarl import cpu_rng
jaxmarl.make("MPE_simple_spread_v3").reset(jax.random.key(0))
if sys.argv[1] == "opt-in":
    jaxmarl.use_fast_cpu_rng()
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
out["in_use"] = cpu_rng.fast_cpu_rng_in_use()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def draws_by_setting() -> dict[str, dict]:
    """The draws of a fresh process that imports jaxmarl, without and with the opt-in."""

    def run(mode: str) -> dict:
        env = {**os.environ, "JAX_PLATFORMS": "cpu"}
        env.pop(cpu_rng.OPT_OUT_VARIABLE, None)
        done = subprocess.run(
            [sys.executable, "-c", _DRAWS, mode],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    return {"default": run("default"), "opt-in": run("opt-in")}


def test_import_jaxmarl_leaves_the_lowering_alone(draws_by_setting):
    default = draws_by_setting["default"]
    assert default["has_loop"] and not default["in_use"]  # JAX's rolled loop
    opted_in = draws_by_setting["opt-in"]
    assert opted_in["in_use"] and not opted_in["has_loop"]


def test_same_bits_as_jax_default_lowering(draws_by_setting):
    default, opted_in = (
        {k: v for k, v in draws_by_setting[mode].items() if k not in ("has_loop", "in_use")}
        for mode in ("default", "opt-in")
    )
    assert default.keys() == opted_in.keys()
    for name in default:
        np.testing.assert_array_equal(np.asarray(opted_in[name]), np.asarray(default[name]))


def test_in_use_in_the_test_process():
    # Fails if a JAX upgrade moved the internals the lowering is registered through.
    assert jaxmarl.use_fast_cpu_rng() and cpu_rng.fast_cpu_rng_in_use()


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


def test_opt_out_leaves_the_default(monkeypatch):
    monkeypatch.setattr(cpu_rng, "_in_use", False)
    monkeypatch.setenv(cpu_rng.OPT_OUT_VARIABLE, "1")
    assert cpu_rng.use_fast_cpu_rng() is False
    assert not cpu_rng.fast_cpu_rng_in_use()


def test_train_command_opts_in_before_building_the_learner(monkeypatch, tmp_path, capsys):
    events = []
    monkeypatch.setattr(cpu_rng, "use_fast_cpu_rng", lambda: events.append("fast rng"))
    real = train._algorithm

    def recording(name):
        def make(config):
            events.append("make")  # the first step that can trace or compile a program
            raise ValueError("stop here")

        return dataclasses.replace(real(name), make=make)

    monkeypatch.setattr(train, "_algorithm", recording)
    argv = ["alg=ippo", "env=MPE_simple_v3", f"run.out_dir={tmp_path}"]
    assert train.main(argv) == 2
    assert "stop here" in capsys.readouterr().err
    assert events == ["fast rng", "make"]
