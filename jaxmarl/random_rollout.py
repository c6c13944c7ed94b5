"""A random-policy rollout of thousands of environments, for any registered env id.

``python -m jaxmarl.random_rollout --env MPE_simple_spread_v3 --num-envs 4096`` compiles one
program that resets ``num_envs`` environments and runs ``steps`` vmapped steps of uniformly
random valid actions in a ``lax.scan``, prints compile time and env/agent steps per second, and
writes a summary (JSON and Markdown) into ``--out``, with an episode GIF drawn by the env
family's renderer (``jaxmarl.render``) where the family has one.

Constructor keywords go in ``--env-kwargs`` as one JSON object, passed to
``jaxmarl.make(env, **kwargs)``::

    python -m jaxmarl.random_rollout --env HeuristicEnemySMAX --env-kwargs '{"scenario": "2s3z"}'
    python -m jaxmarl.random_rollout --env MPE_simple_spread_v3 \
        --env-kwargs '{"num_agents": 5, "action_type": "Continuous"}'

An unknown env id or keywords the env rejects exit with status 2 and one message.
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
from jaxmarl.render import can_render, save_episode_gif

ENV_KWARGS_HELP = (
    'constructor keywords as one JSON object, e.g. \'{"scenario": "2s3z"}\' or '
    '\'{"num_agents": 5, "action_type": "Continuous"}\''
)


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


def write_summary(out: Path, summary: dict) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = "\n".join(
        ["| metric | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in summary.items()]
    )
    (out / "summary.md").write_text(table + "\n")


def parse_env_kwargs(text: str) -> dict:
    """``--env-kwargs``: a JSON object -> dict (``ValueError`` with a readable message)."""
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--env-kwargs is not valid JSON ({exc.msg}): {text!r}") from None
    if not isinstance(kwargs, dict):
        raise ValueError(f"--env-kwargs must be a JSON object like '{{\"key\": 1}}', got {text!r}")
    return kwargs


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="ids: " + ", ".join(jaxmarl.registered_envs),
    )
    parser.add_argument("--env", default="MPE_simple_spread_v3", help="a registered env id")
    parser.add_argument("--env-kwargs", default="{}", help=ENV_KWARGS_HELP)
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=100, help="steps per timed rollout")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/random_rollout")
    parser.add_argument("--no-gif", action="store_true", help="skip the episode GIF")
    parser.add_argument(
        "--gif-steps", type=int, default=None, help="steps in the GIF (default: the time limit)"
    )
    args = parser.parse_args(argv)
    if args.num_envs < 1 or args.steps < 1 or args.repeats < 1:
        parser.error("--num-envs, --steps and --repeats must be >= 1")
    if args.gif_steps is not None and args.gif_steps < 1:
        parser.error("--gif-steps must be >= 1")

    try:
        env_kwargs = parse_env_kwargs(args.env_kwargs)
        env = jaxmarl.make(args.env, **env_kwargs)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
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
        "env_kwargs": env_kwargs,
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
    write_summary(out, summary)  # before the GIF, so a renderer failure keeps the numbers
    if not args.no_gif and not can_render(env):
        print(f"no GIF: {type(env).__name__} has no renderer")
    elif not args.no_gif:
        gif_steps = args.gif_steps or env.max_steps or 100
        states = record_episode(env, jax.random.fold_in(key, 10_000), gif_steps)
        gif = save_episode_gif(env, states, out / "episode.gif")
        summary["gif"] = str(gif)
    write_summary(out, summary)
    print(
        f"best: {env_steps_per_s:,.0f} env steps/s, "
        f"{env_steps_per_s * env.num_agents:,.0f} agent steps/s"
    )
    print(f"wrote {out}/summary.md" + (f" and {summary['gif']}" if "gif" in summary else ""))
    return summary


if __name__ == "__main__":
    main()
