"""The main job until a learner exists: a random-policy rollout of thousands of environments.

``python -m jaxmarl.random_rollout --env MPE_simple_spread_v3 --num-envs 4096`` compiles one
program that resets ``num_envs`` environments and runs ``steps`` vmapped steps of uniformly
random valid actions in a ``lax.scan``, prints compile time and env/agent steps per second, and
writes an episode GIF and a summary (JSON and Markdown) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import jaxmarl
from jaxmarl.env import random_actions


def make_rollout(env, num_envs: int, num_steps: int):
    """``key -> (final state, summed rewards [num_envs], episodes ended)``, jitted."""

    def rollout(key):
        reset_key, key = jax.random.split(key)
        _, state = jax.vmap(env.reset)(jax.random.split(reset_key, num_envs))

        def body(state, step_key):
            action_key, step_key = jax.random.split(step_key)
            actions = jax.vmap(lambda k, s: random_actions(env, k, s))(
                jax.random.split(action_key, num_envs), state
            )
            _, state, rewards, dones, _ = jax.vmap(env.step)(
                jax.random.split(step_key, num_envs), state, actions
            )
            team_reward = sum(rewards[agent] for agent in env.agents)
            return state, (team_reward, dones["__all__"])

        state, (team_rewards, ended) = jax.lax.scan(body, state, jax.random.split(key, num_steps))
        return state, team_rewards.sum(axis=0), ended.sum()

    return jax.jit(rollout)


def record_episode(env, key, num_steps: int):
    """States of one environment over ``num_steps`` random steps (stacked, ``[T, ...]``)."""

    @jax.jit
    def run(key):
        reset_key, key = jax.random.split(key)
        _, state = env.reset(reset_key)

        def body(state, step_key):
            action_key, step_key = jax.random.split(step_key)
            actions = random_actions(env, action_key, state)
            _, next_state, *_ = env.step_env(step_key, state, actions)
            return next_state, next_state

        _, states = jax.lax.scan(body, state, jax.random.split(key, num_steps))
        return jax.tree.map(lambda first, rest: jnp.concatenate([first[None], rest]), state, states)

    return run(key)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MPE_simple_spread_v3")
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100, help="steps per timed rollout")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/random_rollout")
    parser.add_argument("--no-gif", action="store_true")
    args = parser.parse_args(argv)
    if args.num_envs < 1 or args.steps < 1 or args.repeats < 1:
        parser.error("--num-envs, --steps and --repeats must be >= 1")

    env = jaxmarl.make(args.env)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rollout = make_rollout(env, args.num_envs, args.steps)
    key = jax.random.key(args.seed)

    print(
        f"{args.env}: {args.num_envs} envs x {args.steps} steps, {env.num_agents} agents, "
        f"backend {jax.default_backend()}"
    )
    start = time.perf_counter()
    compiled = rollout.lower(key).compile()
    compile_s = time.perf_counter() - start
    print(f"compile: {compile_s:.2f} s")

    times = []
    for i in range(args.repeats):
        start = time.perf_counter()
        _, returns, ended = jax.block_until_ready(compiled(jax.random.fold_in(key, i)))
        times.append(time.perf_counter() - start)
        rate = args.num_envs * args.steps / times[-1]
        print(
            f"  repeat {i + 1}/{args.repeats}: {rate:,.0f} env steps/s "
            f"({rate * env.num_agents:,.0f} agent steps/s)"
        )
    best = min(times)
    env_steps_per_s = args.num_envs * args.steps / best
    summary = {
        "env": args.env,
        "num_envs": args.num_envs,
        "steps": args.steps,
        "num_agents": env.num_agents,
        "compile_s": round(compile_s, 3),
        "env_steps_per_s": round(env_steps_per_s),
        "agent_steps_per_s": round(env_steps_per_s * env.num_agents),
        "episodes_finished": int(ended),
        "mean_team_reward_per_step": float(returns.mean() / args.steps),
        "backend": jax.default_backend(),
        "machine": platform.platform(),
        "jax": jax.__version__,
    }
    if not args.no_gif:
        from jaxmarl.envs.mpe.render import save_gif

        states = record_episode(env, jax.random.fold_in(key, 10_000), env.max_steps)
        gif = out / "episode.gif"
        save_gif(env, states, gif)
        summary["gif"] = str(gif)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = "\n".join(
        ["| metric | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in summary.items()]
    )
    (out / "summary.md").write_text(table + "\n")
    print(
        f"best: {env_steps_per_s:,.0f} env steps/s, "
        f"{env_steps_per_s * env.num_agents:,.0f} agent steps/s"
    )
    print(f"wrote {out}/summary.md" + (f" and {summary['gif']}" if "gif" in summary else ""))
    return summary


if __name__ == "__main__":
    main()
