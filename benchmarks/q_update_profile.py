"""Where one Q-learning update's time goes on a CPU, and how close it runs to matrix-product speed.

The question this answers: how much faster could an update of IQL/VDN/QMIX be on this machine
with the same arithmetic? (Issue 4 asks for 2x JaxMARL's throughput; both libraries do the same
matrix products per update.) For one preset (default: the MPE simple_spread QMIX preset, every
update learning), on one thread unless ``--threads`` says otherwise:

1. **Split.** ms per update with learning (``learning_starts=0``) and without (rollout and replay
   insert only); the difference is the learning step (replay sample, online and target network
   over the sampled sequences, backward pass, mixer, optimiser, target update).
2. **Products.** Every matrix product (``dot_general``) of the learning step, read from the
   program's jaxpr, with the scans' trip counts multiplied in (``matmul_flops``): the FLOPs it
   cannot avoid, since any implementation of the same update multiplies the same matrices.
3. **Their speed alone.** Each distinct product, same shapes and dimension numbers, timed in
   isolation (``time_product``: one jitted product called back to back), gives the time the
   products need at the rate XLA reaches for them here.

The table then says what share of the learning step is matrix products at full speed, and so
the most that removing *everything else* (gates, loop bookkeeping, gathers, optimiser) could
gain. Run::

    .venv/bin/python benchmarks/q_update_profile.py                 # QMIX, MPE preset
    .venv/bin/python benchmarks/q_update_profile.py --alg vdn --json out.json
    .venv/bin/python benchmarks/q_update_profile.py --alg qmix --preset HeuristicEnemySMAX_3m_cpu

The thread count is fixed before JAX starts (``XLA_FLAGS``), so it is a command-line option.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter


def _set_threads(threads: int) -> None:
    if threads == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()


# --------------------------------------------------------------------------- counting products
def _sub_jaxprs(eqn):
    """``(multiplier, [jaxpr, ...])`` for the jaxprs nested in one equation: a ``scan``'s body
    ``length`` times, a ``cond``'s branches as alternatives (``"branch"``), anything else (calls,
    custom derivatives, a ``while`` body) once."""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    inner = lambda value: value.jaxpr if isinstance(value, ClosedJaxpr) else value
    if eqn.primitive.name == "cond":
        return [("branch", [inner(b) for b in eqn.params["branches"]])]
    multiplier = eqn.params["length"] if eqn.primitive.name == "scan" else 1
    found = []
    for value in eqn.params.values():
        for item in value if isinstance(value, tuple | list) else (value,):
            if isinstance(item, ClosedJaxpr | Jaxpr):
                found.append((multiplier, [inner(item)]))
    return found


def _product_key(eqn):
    return (
        tuple(eqn.invars[0].aval.shape),
        tuple(eqn.invars[1].aval.shape),
        eqn.params["dimension_numbers"],
    )


def matmul_flops(jaxpr, branch=max) -> tuple[int, Counter, int]:
    """``(flops, products, while_loops)`` of a jaxpr: total matrix-product FLOPs, a ``Counter``
    of ``(lhs shape, rhs shape, dimension numbers) -> executions``, and how many ``while``
    bodies were counted once for want of a static trip count. ``branch`` picks which branch of
    each ``cond`` counts, by FLOPs (``max``: the costliest, ``min``: the cheapest)."""
    total, products, whiles = 0, Counter(), 0
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            key = _product_key(eqn)
            products[key] += 1
            total += product_flops(key)
            continue
        whiles += eqn.primitive.name == "while"
        for multiplier, bodies in _sub_jaxprs(eqn):
            counted = [matmul_flops(body, branch) for body in bodies]
            if multiplier == "branch":
                counted, multiplier = [branch(counted, key=lambda c: c[0])], 1
            for flops, inner_products, inner_whiles in counted:
                total += multiplier * flops
                for key, count in inner_products.items():
                    products[key] += multiplier * count
                whiles += inner_whiles
    return total, products, whiles


def product_flops(key) -> int:
    lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) = key
    free = lambda shape, skip: math.prod(d for i, d in enumerate(shape) if i not in skip)
    batch = math.prod(lhs[d] for d in lhs_batch)
    contracted = math.prod(lhs[d] for d in lhs_contract)
    lhs_free = free(lhs, set(lhs_contract) | set(lhs_batch))
    rhs_free = free(rhs, set(rhs_contract) | set(rhs_batch))
    return 2 * batch * lhs_free * rhs_free * contracted


# --------------------------------------------------------------------------- timing
def _best_seconds(fn, *args, repeats: int = 5) -> float:
    import jax

    jax.block_until_ready(fn(*args))
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def time_product(key, target_s: float = 0.05) -> float:
    """Seconds for one execution of the product ``key`` alone: one jitted ``dot_general`` of
    those shapes and dimension numbers (compiled as XLA compiles it inside the update: e.g. a
    ``[T, N, D]`` operand becomes a bitcast to ``[T*N, D]``), called back to back until
    ``target_s`` has passed (JAX dispatches asynchronously, so for all but the smallest products
    the calls cost their compute), best of 5."""
    import jax

    lhs_shape, rhs_shape, dims = key
    lhs = jax.random.normal(jax.random.key(0), lhs_shape)
    rhs = jax.random.normal(jax.random.key(1), rhs_shape)
    product = jax.jit(lambda lhs, rhs: jax.lax.dot_general(lhs, rhs, dims))
    jax.block_until_ready(product(lhs, rhs))
    calls = max(1, int(target_s / max(_best_seconds(product, lhs, rhs, repeats=1), 1e-6)))
    many = lambda: [product(lhs, rhs) for _ in range(calls)][-1]
    return _best_seconds(many) / calls


def profile(alg: str, preset: str, overrides: list[str], updates: int) -> dict:
    import jax

    from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning
    from jaxmarl.config import load_config, preset_path
    from jaxmarl.cpu_rng import use_fast_cpu_rng

    use_fast_cpu_rng()  # the update as the train command compiles it (docs/cpu_rng.md)

    def learner_with(extra):
        config = load_config(QLearningConfig, preset_path(alg, preset), [*overrides, *extra])
        return config, make_q_learning(config)

    def ms_per_update(learner) -> tuple[float, dict]:
        state = jax.jit(learner.init)(jax.random.key(0))
        chunk = jax.jit(
            lambda s: jax.lax.scan(lambda s, _: learner.update(s), s, None, length=updates),
            donate_argnums=0,
        )
        state, _ = jax.block_until_ready(chunk(state))  # compile, fill the buffer
        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            state, metrics = jax.block_until_ready(chunk(state))
            best = min(best, time.perf_counter() - start)
        return 1e3 * best / updates, metrics

    config, learning = learner_with(["learning_starts=0"])
    _, acting = learner_with([f"learning_starts={2**30}"])  # never reached: no learning
    total_ms, metrics = ms_per_update(learning)
    if not bool(metrics["learning"].all()):
        raise RuntimeError("an update of the learning variant did not learn")
    rollout_ms, _ = ms_per_update(acting)
    learn_ms = total_ms - rollout_ms

    state = jax.jit(learning.init)(jax.random.key(0))
    # The update learns inside a lax.cond (learn or skip); its costliest branch is the learning
    # step, its cheapest the rollout alone.
    jaxpr = jax.make_jaxpr(learning.update)(state).jaxpr
    update_flops, products, whiles = matmul_flops(jaxpr, max)
    rollout_flops, rollout_products, _ = matmul_flops(jaxpr, min)
    learning_products = products - rollout_products
    rows = []
    for key, count in sorted(
        learning_products.items(), key=lambda kv: -product_flops(kv[0]) * kv[1]
    ):
        seconds = time_product(key)
        flops = product_flops(key)
        rows.append(
            {
                "lhs": list(key[0]),
                "rhs": list(key[1]),
                "dimension_numbers": [[list(a), list(b)] for a, b in key[2]],
                "count": count,
                "gflop": count * flops / 1e9,
                "alone_gflop_per_s": flops / seconds / 1e9,
                "alone_ms": 1e3 * count * seconds,
            }
        )
    products_ms = sum(r["alone_ms"] for r in rows)
    learn_gflop = (update_flops - rollout_flops) / 1e9
    rollout_gflop = rollout_flops / 1e9
    return {
        "alg": alg,
        "preset": preset,
        "overrides": overrides,
        "env_steps_per_update": config.steps_per_update,
        "ms_per_update": total_ms,
        "rollout_ms": rollout_ms,
        "learning_ms": learn_ms,
        "update_gflop": update_flops / 1e9,
        "learning_gflop": learn_gflop,
        "rollout_gflop": rollout_gflop,
        "learning_gflop_per_s": learn_gflop / (learn_ms / 1e3),
        "products_alone_ms": products_ms,
        "while_loops_counted_once": whiles,
        "products": rows,
        "jax": jax.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "cpu": _cpu_name(),
    }


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        return "unknown"


def report(result: dict) -> str:
    r = result
    lines = [
        f"{r['alg']} `{r['preset']}` {' '.join(r['overrides'])} on {r['cpu']} "
        f"(jax {r['jax']}, XLA_FLAGS={r['xla_flags'] or 'default'})",
        "",
        "| | ms per update | share |",
        "|---|---:|---:|",
        f"| whole update ({r['env_steps_per_update']} env steps) | {r['ms_per_update']:.2f} | "
        f"100% |",
        f"| rollout + replay insert | {r['rollout_ms']:.2f} | "
        f"{r['rollout_ms'] / r['ms_per_update']:.0%} |",
        f"| learning step | {r['learning_ms']:.2f} | {r['learning_ms'] / r['ms_per_update']:.0%} |",
        f"| the learning step's matrix products, each at its speed alone | "
        f"{r['products_alone_ms']:.2f} | "
        f"{r['products_alone_ms'] / r['ms_per_update']:.0%} |",
        "",
        f"Learning step: {r['learning_gflop']:.3f} GFLOP of products, run at "
        f"{r['learning_gflop_per_s']:.0f} GFLOP/s overall; its products alone take "
        f"{r['products_alone_ms'] / r['learning_ms']:.0%} of its time. An update that did "
        f"nothing but the rollout and these products at their speed alone would be "
        f"{r['ms_per_update'] / (r['rollout_ms'] + r['products_alone_ms']):.2f}x as fast.",
        "",
        "| product (lhs x rhs, contracting / batch dims) | executions | GFLOP | GFLOP/s alone | "
        "ms alone |",
        "|---|---:|---:|---:|---:|",
    ]
    shown, rest = r["products"][:12], r["products"][12:]
    for p in shown:
        (lc, rc), (lb, rb) = p["dimension_numbers"]
        lines.append(
            f"| {p['lhs']} x {p['rhs']}, {lc}/{rc}, {lb}/{rb} | {p['count']} | {p['gflop']:.4f} "
            f"| {p['alone_gflop_per_s']:.0f} | {p['alone_ms']:.3f} |"
        )
    if rest:
        lines.append(
            f"| {len(rest)} smaller products | {sum(p['count'] for p in rest)} | "
            f"{sum(p['gflop'] for p in rest):.4f} | | {sum(p['alone_ms'] for p in rest):.3f} |"
        )
    if r["while_loops_counted_once"]:
        lines.append(f"\n{r['while_loops_counted_once']} while loop(s) counted once.")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alg", default="qmix", choices=("iql", "vdn", "qmix"))
    parser.add_argument("--preset", default="MPE_simple_spread_v3")
    parser.add_argument("--override", action="append", default=[], help="KEY=VALUE")
    parser.add_argument("--updates", type=int, default=100, help="updates per timed call")
    parser.add_argument("--threads", type=int, default=1, help="1: one XLA thread; 0: default")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    _set_threads(args.threads)
    result = profile(args.alg, args.preset, args.override, args.updates)
    print(report(result))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
