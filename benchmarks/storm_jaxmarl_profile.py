"""Where JaxMARL 0.2.0's ``storm`` (``InTheGrid``) spends its step time.

Runs under JaxMARL's own interpreter (same import name as ours)::

    /tmp/peer/bin/python -I benchmarks/storm_jaxmarl_profile.py

Times a batch-64 ``step_env`` and ``reset`` twice: with JaxMARL's table of start-cell
combinations (43758 x 8 x 2) and with the table cut to its first row. The env reads the table
from its module while tracing, so the second build uses the cut table and nothing else changes.
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.storm import storm_env  # noqa: E402


def best_time(fn, *args, repeats=3):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def main(batch=64):
    full = storm_env.AGENT_SPAWNS
    print(f"AGENT_SPAWNS {full.shape} {full.dtype}, {full.nbytes} bytes")
    keys = jax.random.split(jax.random.PRNGKey(0), batch)
    for rows in (full.shape[0], 1):
        storm_env.AGENT_SPAWNS = full[:rows]
        env = storm_env.InTheGrid()
        states = jax.vmap(env.reset)(keys)[1]
        actions = {a: jnp.full((batch,), 2, jnp.int32) for a in env.agents}
        step = best_time(jax.jit(jax.vmap(env.step_env)), keys, states, actions)
        reset = best_time(jax.jit(jax.vmap(env.reset)), keys)
        print(
            f"table rows {rows}: batch {batch} step_env {step * 1e3:.1f} ms, "
            f"reset {reset * 1e3:.1f} ms"
        )
    storm_env.AGENT_SPAWNS = full


if __name__ == "__main__":
    main()
