"""``jaxmarl.wrappers.gymnasium.GymnasiumVectorEnv``: the same trajectory as a JAX loop over
``VecEnv`` with the same keys, observations inside the declared spaces, on MPE and SMAX."""

import functools

import jax
import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="gymnasium comes with the pettingzoo extra")
from gymnasium.vector import AutoresetMode  # noqa: E402

import jaxmarl  # noqa: E402
from jaxmarl.wrappers.gymnasium import GymnasiumVectorEnv  # noqa: E402
from jaxmarl.wrappers.vec import VecEnv  # noqa: E402

CASES = [
    ("MPE_simple_spread_v3", {"max_steps": 3}, 5),  # two time limits inside the rollout
    ("HeuristicEnemySMAX", {"scenario": "3m"}, 2),
]


def _actions(envs, infos, t):
    """Deterministic valid actions: the (t + i)-th available action of each agent."""
    out = {}
    for i, agent in enumerate(envs.agents):
        mask = infos["action_mask"][agent]
        out[agent] = np.array([np.flatnonzero(row)[(t + i) % row.sum()] for row in mask])
    return out


@pytest.mark.parametrize("env_id, kwargs, steps", CASES, ids=[c[0] for c in CASES])
def test_same_trajectory_as_the_jax_env_and_inside_the_spaces(env_id, kwargs, steps):
    num_envs = 2
    envs = GymnasiumVectorEnv(env_id, num_envs=num_envs, **kwargs)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    venv = VecEnv(jaxmarl.make(env_id, **kwargs), num_envs)
    venv_reset = jax.jit(venv.reset)
    venv_step = jax.jit(functools.partial(venv.step, with_terminal_obs=True))

    observations, infos = envs.reset(seed=7)
    key, reset_key = jax.random.split(jax.random.key(7))
    obs, state = venv_reset(reset_key)
    assert envs.observation_space.contains(observations)
    jax.tree.map(np.testing.assert_array_equal, observations, jax.device_get(obs))

    ended = np.zeros(num_envs, dtype=bool)
    for t in range(steps):
        actions = _actions(envs, infos, t)
        assert envs.action_space.contains(
            {a: v.astype(envs.action_space[a].dtype) for a, v in actions.items()}
        )
        observations, rewards, terms, truncs, infos = envs.step(actions)
        key, step_key = jax.random.split(key)
        jax_actions = {a: v.astype(np.int32) for a, v in actions.items()}
        obs, state, jax_rewards, dones, jax_infos = venv_step(step_key, state, jax_actions)
        jax.tree.map(np.testing.assert_array_equal, observations, jax.device_get(obs))
        for agent in envs.agents:
            np.testing.assert_array_equal(rewards[agent], jax_rewards[agent])
            assert rewards[agent].shape == (num_envs,) and rewards[agent].dtype == np.float32
        np.testing.assert_array_equal(terms | truncs, dones["__all__"])
        np.testing.assert_array_equal(truncs, jax_infos["truncated"])
        np.testing.assert_array_equal(infos["_final_obs"], dones["__all__"])
        jax.tree.map(
            np.testing.assert_array_equal,
            infos["final_obs"],
            jax.device_get(jax_infos["terminal_obs"]),
        )
        assert envs.observation_space.contains(observations)
        ended |= terms | truncs
    if env_id.startswith("MPE"):
        assert ended.all()  # the time limit reset every env, and the trajectories still match


def test_seeding_repeats_and_bad_input_is_named():
    envs = GymnasiumVectorEnv(
        "MPE_simple_spread_v3", num_envs=3, max_steps=3, render_mode="rgb_array"
    )
    first, _ = envs.reset(seed=1)
    again, _ = envs.reset(seed=1)
    other, _ = envs.reset(seed=2)
    jax.tree.map(np.testing.assert_array_equal, first, again)
    assert not np.array_equal(first["agent_0"], other["agent_0"])
    frames = envs.render()  # one RGB frame per env
    assert len(frames) == 3 and frames[0].ndim == 3 and frames[0].dtype == np.uint8
    assert GymnasiumVectorEnv("MPE_simple_spread_v3", num_envs=1).render() is None
    with pytest.raises(KeyError, match="missing"):
        envs.step({"agent_0": np.zeros(3, dtype=np.int64)})
    with pytest.raises(ValueError, match="expected"):
        envs.step({a: np.zeros(2, dtype=np.int64) for a in envs.agents})
    with pytest.raises(ValueError, match="num_envs"):
        GymnasiumVectorEnv("MPE_simple_spread_v3", num_envs=0)
    with pytest.raises(ValueError, match="render_mode"):
        GymnasiumVectorEnv("MPE_simple_spread_v3", num_envs=1, render_mode="human")
