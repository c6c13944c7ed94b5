"""CPU-seconds per rollout of ``_workload.py``'s workload, for a machine too loaded for wall time.

``env_throughput.py`` times wall seconds, which on a shared 2-core machine depend on what
else runs. This times the same compiled rollout (``make_rollout``: ``batch`` envs, ``steps``
steps, random actions) with ``time.process_time``, the CPU time of this process, and prints env
steps per CPU-second (best and median of ``--repeats`` calls). Like ``_workload.py`` it runs
unchanged under either library's interpreter (``-I``)::

    .venv/bin/python -I benchmarks/env_cpu_time.py switch_riddle
    /tmp/peer/bin/python -I benchmarks/env_cpu_time.py switch_riddle
    .venv/bin/python -I benchmarks/env_cpu_time.py switch_riddle --base-step

``--base-step`` (ours only) times the env with ``MultiAgentEnv.step`` instead of its own
``step`` override, to measure what the override gains. ``--floor`` replaces ``env.step`` by a
stand-in that does no env work (it reads every action and returns the first reset's
observations shifted by their sum, the state unchanged, constant dones): what is left is the
workload's own cost (action draws, key splits, writing and summing observations of this
env's size), a bound no implementation of the env can beat in this workload. ``--draws ahead``
times ``_workload.py``'s other workload (actions and step keys drawn before the scan).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
from _workload import DRAWS, make_rollout  # noqa: E402

import jaxmarl  # noqa: E402


def _floor_step(env):
    """``env.step``'s stand-in for ``--floor`` (see the module docstring)."""
    import jax.numpy as jnp

    first_obs, _ = env.reset(jax.random.PRNGKey(0))  # concrete arrays: constants below

    def step(key, state, actions):
        total = sum(jnp.sum(jnp.asarray(a, jnp.float32)) for a in actions.values())
        obs = jax.tree.map(lambda x: x + total.astype(x.dtype), first_obs)
        rewards = {agent: total for agent in env.agents}
        dones = {agent: jnp.bool_(False) for agent in [*env.agents, "__all__"]}
        return obs, state, rewards, dones, {}

    return step


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("env_id")
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--base-step", action="store_true")
    parser.add_argument("--floor", action="store_true")
    parser.add_argument(
        "--draws",
        choices=DRAWS,
        default="per_step",
        help="where the workload draws actions and step keys (see _workload.py)",
    )
    args = parser.parse_args(argv)
    env = jaxmarl.make(args.env_id)
    if args.base_step:
        from jaxmarl.env import MultiAgentEnv

        type(env).step = MultiAgentEnv.step
    if args.floor:
        env.step = _floor_step(env)
    rollout = jax.jit(make_rollout(env, args.batch, args.steps, args.draws))
    compiled = rollout.lower(jax.random.PRNGKey(0)).compile()
    jax.block_until_ready(compiled(jax.random.PRNGKey(1)))
    cpu = []
    for i in range(args.repeats):
        start = time.process_time()
        jax.block_until_ready(compiled(jax.random.PRNGKey(2 + i)))
        cpu.append(time.process_time() - start)
    work = args.batch * args.steps
    label = "base step" if args.base_step else "floor" if args.floor else jaxmarl.__file__
    print(
        f"{args.env_id} batch {args.batch} ({label}, draws {args.draws}): env steps per CPU-second "
        f"best {work / min(cpu):,.0f}, median {work / statistics.median(cpu):,.0f}"
    )


if __name__ == "__main__":
    main()
