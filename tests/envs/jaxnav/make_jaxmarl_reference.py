"""Record JaxMARL 0.2.0 JaxNav episodes for the parity tests (run under the peer venv).

    /tmp/peer/bin/python -I tests/envs/jaxnav/make_jaxmarl_reference.py

For each case: JaxMARL resets with a fixed key, then steps ``step_env`` (no auto-reset) with
actions from a noisy steer-to-goal controller (NumPy RNG) until the episode ends or
``STEPS`` steps. Saved per case (``data/jaxmarl_jaxnav_<case>.npz``): the initial states
(map, poses, goals, lambda), the actions and after every step positions, headings,
velocities, flags, rewards, dones, the info counters, the lidar as sample indices (uint8)
and the other five observation features. Run with ``-I`` so the repository's ``jaxmarl``
does not shadow the installed one.
"""

from __future__ import annotations

import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "data"
STEPS = 80
CASES = {
    "default": dict(kwargs={}, episodes=3, seed=0),
    "discrete_evaporating_4a": dict(
        kwargs=dict(num_agents=4, act_type="Discrete", evaporating=True),
        episodes=2,
        seed=1,
    ),
    "grid_cases_short": dict(
        kwargs=dict(
            num_agents=3,
            max_steps=40,
            goal_radius=0.3,
            map_params={
                "map_size": (9, 9),
                "fill": 0.5,
                "sample_test_case_type": "grid",
                "valid_path_check": True,
            },
        ),
        episodes=2,
        seed=2,
    ),
}
DISCRETE = np.array([[v, w] for v in (0.0, 0.5, 1.0) for w in (0.5, 0.25, 0.0, -0.25, -0.5)])


def controller(rng, state, env):
    """Steer toward the goal with noise: commands ``[n, 2]`` (v, w)."""
    pos, goal, theta = np.asarray(state.pos), np.asarray(state.goal), np.asarray(state.theta)
    delta = goal - pos
    bearing = np.arctan2(delta[:, 1], delta[:, 0]) - theta
    bearing = (bearing + np.pi) % (2 * np.pi) - np.pi
    w = np.clip(1.5 * bearing + rng.normal(0, 0.3, bearing.shape), -np.pi / 6, np.pi / 6)
    v = np.clip(np.where(np.abs(bearing) < 1.0, 1.0, 0.2) + rng.normal(0, 0.3, w.shape), 0, 1)
    return np.stack([v, w], -1).astype(np.float32)


def record(name, kwargs, episodes, seed):
    # Imported here so the parity test can read CASES without the peer installed.
    import jax
    import jax.numpy as jnp

    from jaxmarl.environments.jaxnav import JaxNav

    env = JaxNav(**kwargs)
    discrete = env._act_type == "Discrete"
    spacing = float(env.lidar_ranges[1] - env.lidar_ranges[0])
    step = jax.jit(env.step_env)
    rng = np.random.default_rng(seed)
    out = {k: [] for k in ("map", "pos0", "theta0", "goal", "lam", "length")}
    per_step = {
        k: []
        for k in (
            "action",
            "pos",
            "theta",
            "vel",
            "done",
            "goal_reached",
            "move_term",
            "ep_done",
            "reward",
            "lidar",
            "own",
            "GoalR",
            "AgentC",
            "MapC",
            "TimeO",
            "NumC",
        )
    }
    for episode in range(episodes):
        _, state = env.reset(jax.random.PRNGKey(100 * seed + episode))
        out["map"].append(np.asarray(state.map_data, np.uint8))
        out["pos0"].append(np.asarray(state.pos))
        out["theta0"].append(np.asarray(state.theta))
        out["goal"].append(np.asarray(state.goal))
        out["lam"].append(np.float32(state.rew_lambda))
        rows = {k: [] for k in per_step}
        for t in range(STEPS):
            command = controller(rng, state, env)
            if discrete:
                picks = np.argmin(
                    np.linalg.norm(command[:, None] - DISCRETE[None], axis=-1)
                    + rng.uniform(0, 0.4, (command.shape[0], len(DISCRETE))),
                    axis=1,
                ).astype(np.int32)
                actions = {a: jnp.int32(picks[i]) for i, a in enumerate(env.agents)}
                rows["action"].append(picks[:, None].astype(np.float32))
            else:
                actions = {a: jnp.asarray(command[i]) for i, a in enumerate(env.agents)}
                rows["action"].append(command)
            obs, state, rewards, dones, infos = step(jax.random.PRNGKey(t), state, actions)
            obs = np.stack([np.asarray(obs[a]) for a in env.agents])
            ranges = (obs[:, : env.lidar_num_beams] + 0.5) * env.lidar_max_range
            rows["lidar"].append(np.rint(ranges / spacing).astype(np.uint8))
            rows["own"].append(obs[:, env.lidar_num_beams :])
            rows["pos"].append(np.asarray(state.pos))
            rows["theta"].append(np.asarray(state.theta))
            rows["vel"].append(np.asarray(state.vel))
            for k in ("done", "goal_reached", "move_term"):
                rows[k].append(np.asarray(getattr(state, k)))
            rows["ep_done"].append(np.asarray(state.ep_done))
            rows["reward"].append(np.array([rewards[a] for a in env.agents], np.float32))
            for k in ("GoalR", "AgentC", "MapC", "TimeO", "NumC"):
                rows[k].append(np.asarray(infos[k]).astype(np.int8))
            if bool(state.ep_done):
                break
        out["length"].append(len(rows["pos"]))
        for k, v in rows.items():
            per_step[k].append(np.stack(v))
    arrays = {k: np.stack(v) for k, v in out.items()}
    arrays.update({k: np.concatenate(v) for k, v in per_step.items()})
    OUT.mkdir(exist_ok=True)
    path = OUT / f"jaxmarl_jaxnav_{name}.npz"
    np.savez_compressed(path, **arrays)
    outcomes = dict(
        steps=int(arrays["length"].sum()),
        goals=int(arrays["GoalR"].sum()),
        map_c=int(arrays["MapC"].sum()),
        agent_c=int(arrays["AgentC"].sum()),
        time_o=int(arrays["TimeO"].sum()),
    )
    print(name, path.stat().st_size, "bytes", outcomes)


if __name__ == "__main__":
    for name, case in CASES.items():
        record(name, case["kwargs"], case["episodes"], case["seed"])
