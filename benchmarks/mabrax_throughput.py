"""Multi-agent MuJoCo throughput: jaxmarl's env next to brax's single-agent env (the floor).

For each id and batch size, two jitted programs run ``--steps`` vmapped steps in a
``lax.scan`` after a vmapped reset: ``env.step`` of the multi-agent env with random actions
(auto-reset, action routing, per-agent observations) and brax's own ``env.step`` of the same
robot on the same pipeline with a random full action vector (no time limit, no reset). The
ratio is what the multi-agent layer costs over the physics. Compile and run times are printed
as a Markdown table.

    python benchmarks/mabrax_throughput.py --envs ant_4x2 halfcheetah_6x1 --batches 256 1024
"""

from __future__ import annotations

import argparse
import time

import jax

import jaxmarl
from jaxmarl.env import random_actions


def programs(env, batch: int, steps: int):
    brax_env = env.env

    def ours(key):
        obs, state = env.reset(key)

        def body(carry, k):
            a_key, s_key = jax.random.split(k)
            _, state, rewards, _, _ = env.step(s_key, carry, random_actions(env, a_key, carry))
            return state, rewards[env.agents[0]]

        return jax.lax.scan(body, state, jax.random.split(key, steps))[1].sum()

    def floor(key):
        state = brax_env.reset(key)

        def body(carry, k):
            action = jax.random.uniform(k, (env.action_size,), minval=-1.0, maxval=1.0)
            nxt = brax_env.step(carry, action)
            return nxt, nxt.reward

        return jax.lax.scan(body, state, jax.random.split(key, steps))[1].sum()

    keys = jax.random.split(jax.random.key(0), batch)
    return {"jaxmarl": (jax.jit(jax.vmap(ours)), keys), "brax": (jax.jit(jax.vmap(floor)), keys)}


def measure(fn, keys, repeats: int) -> tuple[float, float]:
    start = time.perf_counter()
    compiled = fn.lower(keys).compile()
    compile_s = time.perf_counter() - start
    jax.block_until_ready(compiled(keys))  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(keys))
        best = min(best, time.perf_counter() - start)
    return compile_s, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", nargs="+", default=["ant_4x2", "halfcheetah_6x1"])
    parser.add_argument("--batches", nargs="+", type=int, default=[256, 1024, 4096])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--backend", default="mjx")
    args = parser.parse_args()
    print("| id | batch | jaxmarl env steps/s | brax single-agent steps/s | ratio | compile (s) |")
    print("|---|---|---|---|---|---|")
    for env_id in args.envs:
        env = jaxmarl.make(env_id, backend=args.backend)
        for batch in args.batches:
            rates, compiles = {}, {}
            for side, (fn, keys) in programs(env, batch, args.steps).items():
                compiles[side], seconds = measure(fn, keys, args.repeats)
                rates[side] = batch * args.steps / seconds
            print(
                f"| {env_id} | {batch:,} | {rates['jaxmarl']:,.0f} | {rates['brax']:,.0f} | "
                f"{rates['jaxmarl'] / rates['brax']:.2f}x | "
                f"{compiles['jaxmarl']:.0f} / {compiles['brax']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
