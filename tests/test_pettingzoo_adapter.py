"""``jaxmarl.wrappers.pettingzoo.PettingZooEnv``: PettingZoo's own API test, and the same
trajectory as the JAX env."""

import gc
import weakref

import jax
import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo comes with the dev extra (mpe2)")
from pettingzoo.test import parallel_api_test  # noqa: E402

import jaxmarl  # noqa: E402
from jaxmarl.wrappers.pettingzoo import PettingZooEnv  # noqa: E402

API_IDS = [
    ("MPE_simple_spread_v3", {"max_steps": 10}),
    ("MPE_simple_world_comm_v3", {"max_steps": 6}),  # heterogeneous agents
    ("MPE_simple_spread_v3", {"max_steps": 5, "action_type": "Continuous"}),
    ("HeuristicEnemySMAX", {"scenario": "3m"}),
    ("coin_game", {"num_inner_steps": 3, "num_outer_steps": 2}),
    ("switch_riddle", {}),
]


@pytest.mark.parametrize("env_id, kwargs", API_IDS, ids=[i for i, _ in API_IDS])
def test_parallel_api_test_passes(env_id, kwargs):
    parallel_api_test(PettingZooEnv(env_id, **kwargs), num_cycles=60)


def test_same_trajectory_as_the_jax_env_with_the_same_keys():
    env = jaxmarl.make("MPE_simple_spread_v3", max_steps=4)
    adapter = PettingZooEnv(env)
    observations, _ = adapter.reset(seed=3)
    key = jax.random.key(3)
    key, reset_key = jax.random.split(key)
    obs, state = env.reset(reset_key)
    for agent in env.agents:
        np.testing.assert_array_equal(observations[agent], obs[agent])
    for t in range(4):
        actions = {agent: (t + i) % 5 for i, agent in enumerate(env.agents)}
        observations, rewards, terms, truncs, _ = adapter.step(actions)
        key, step_key = jax.random.split(key)
        jax_actions = {a: np.int32(v) for a, v in actions.items()}
        _, _, jax_rewards, dones, infos = env.step(
            step_key, state, jax_actions, with_terminal_obs=True
        )
        obs, state = infos["terminal_obs"], infos["terminal_state"]
        for agent in env.agents:
            np.testing.assert_array_equal(observations[agent], obs[agent])
            assert rewards[agent] == pytest.approx(float(jax_rewards[agent]))
    # The episode ended at the time limit: truncated, not terminated, and no agent is left.
    assert all(truncs.values()) and not any(terms.values())
    assert adapter.agents == []
    with pytest.raises(RuntimeError, match="call reset"):
        adapter.step({})


def test_seeded_resets_repeat_and_spaces_are_gymnasium():
    import gymnasium

    adapter = PettingZooEnv("HeuristicEnemySMAX", scenario="3m")
    first, infos = adapter.reset(seed=11)
    again, _ = adapter.reset(seed=11)
    other, _ = adapter.reset(seed=12)
    agent = adapter.possible_agents[0]
    np.testing.assert_array_equal(first[agent], again[agent])
    assert not np.array_equal(first[agent], other[agent])
    assert isinstance(adapter.action_space(agent), gymnasium.spaces.Discrete)
    assert adapter.observation_space(agent).contains(first[agent])
    mask = infos[agent]["action_mask"]
    assert mask.dtype == np.int8 and mask.shape == (adapter.action_space(agent).n,)
    assert adapter.state().shape == adapter.jax_env.get_world_state(adapter._state).shape


def test_render_and_bad_input():
    adapter = PettingZooEnv("MPE_simple_v3", render_mode="rgb_array")
    adapter.reset(seed=0)
    frame = adapter.render()
    assert frame.ndim == 3 and frame.shape[-1] == 3 and frame.dtype == np.uint8
    with pytest.raises(KeyError, match="unknown agents"):
        adapter.step({"nobody": 0})
    with pytest.raises(ValueError, match="render_mode"):
        PettingZooEnv("MPE_simple_v3", render_mode="human")


def test_a_dropped_adapter_and_its_env_are_freed():
    adapter = PettingZooEnv("MPE_simple_spread_v3", max_steps=3)
    adapter.reset(seed=0)
    agent = adapter.possible_agents[0]
    assert adapter.observation_space(agent) is adapter.observation_space(agent)
    assert adapter.action_space(agent) is adapter.action_space(agent)
    adapter.step({a: 0 for a in adapter.agents})
    refs = [weakref.ref(adapter), weakref.ref(adapter.jax_env)]
    del adapter
    gc.collect()
    assert [ref() for ref in refs] == [None, None]
