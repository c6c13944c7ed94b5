"""The base class's own promises, on a toy env with a real termination and a time limit."""

import chex
import jax
import jax.numpy as jnp
import pytest

import jaxmarl
from tests.toy_envs import CounterEnv


def _actions(a0, a1):
    return {"agent_0": jnp.int32(a0), "agent_1": jnp.int32(a1)}


def _start(env, total):
    _, state = env.reset(jax.random.key(0))
    return state.replace(total=jnp.int32(total))


def test_real_termination_is_terminated_not_truncated():
    env = CounterEnv(target=6, max_steps=5)
    state = _start(env, 4)
    obs, next_state, rewards, dones, infos = env.step(jax.random.key(1), state, _actions(2, 0))
    assert bool(dones["__all__"]) and bool(infos["terminated"]) and not bool(infos["truncated"])
    assert float(rewards["agent_0"]) == 6.0  # the finished episode's reward
    assert int(next_state.step) == 0  # auto-reset happened
    assert infos["terminated"].dtype == jnp.bool_ and infos["terminated"].shape == ()


def test_time_limit_is_truncated_and_bootstrappable():
    env = CounterEnv(target=100, max_steps=3)
    state = _start(env, 0)
    key = jax.random.key(2)
    for t in range(3):
        key, step_key = jax.random.split(key)
        obs, state, rewards, dones, infos = env.step(step_key, state, _actions(0, 0))
        last = t == 2
        assert bool(dones["__all__"]) == last
        assert bool(infos["truncated"]) == last
        assert not bool(infos["terminated"])
    assert int(state.step) == 0


def test_termination_on_the_last_step_counts_as_termination():
    env = CounterEnv(target=2, max_steps=1)
    state = _start(env, 0)
    _, _, _, dones, infos = env.step(jax.random.key(3), state, _actions(2, 0))
    assert bool(dones["__all__"]) and bool(infos["terminated"]) and not bool(infos["truncated"])


def test_terminal_obs_and_reset_state():
    env = CounterEnv(target=6, max_steps=5)
    state = _start(env, 5)
    fixed = _start(env, 1).replace(step=jnp.int32(0))
    obs, next_state, _, dones, infos = env.step(
        jax.random.key(4), state, _actions(1, 0), reset_state=fixed, with_terminal_obs=True
    )
    assert bool(dones["__all__"])
    chex.assert_trees_all_equal(next_state, fixed)
    chex.assert_trees_all_equal(obs, env.get_obs(fixed))
    # The pre-reset observation shows the terminal total of 6 after one step.
    assert infos["terminal_obs"]["agent_0"].tolist() == [6.0, 1.0]


def test_step_key_split_matches_jaxmarl_order():
    # JaxMARL splits the step key into (step_key, reset_key) and resets with the second.
    env = CounterEnv(target=1, max_steps=5)
    state = _start(env, 0)
    key = jax.random.key(5)
    obs, next_state, *_ = env.step(key, state, _actions(1, 0))
    _, reset_key = jax.random.split(key)
    expected_obs, expected_state = env.reset(reset_key)
    chex.assert_trees_all_equal(next_state, expected_state)


@pytest.mark.parametrize(
    "actions, error, match",
    [
        ({"agent_0": jnp.int32(0)}, ValueError, r"missing \['agent_1'\]"),
        (
            {"agent_0": jnp.int32(0), "agent_1": jnp.int32(0), "agent_9": jnp.int32(0)},
            ValueError,
            r"unexpected \['agent_9'\]",
        ),
        (
            {"agent_0": jnp.zeros((2,), jnp.int32), "agent_1": jnp.int32(0)},
            ValueError,
            r"agent 'agent_0' has shape \(2,\), expected \(\)",
        ),
        (
            {"agent_0": jnp.float32(1.0), "agent_1": jnp.int32(0)},
            TypeError,
            r"agent 'agent_0' has dtype float32, expected an integer dtype",
        ),
        ([0, 1], TypeError, "dict keyed by agent name"),
    ],
)
def test_bad_actions_raise_before_compiling(actions, error, match):
    env = CounterEnv()
    state = _start(env, 0)
    with pytest.raises(error, match=match):
        env.step(jax.random.key(0), state, actions)


def test_discrete_actions_of_shape_one_are_taken_as_scalars():
    # JaxMARL's baseline scripts unbatchify actions to [num_envs, 1] per agent, so each env
    # of a vmapped step gets shape (1,); JaxMARL's envs take it, and so do these.
    env = CounterEnv()
    state = _start(env, 0)
    scalar = {"agent_0": jnp.int32(2), "agent_1": jnp.int32(1)}
    column = {agent: action[None] for agent, action in scalar.items()}
    chex.assert_trees_all_equal(
        env.step(jax.random.key(0), state, column), env.step(jax.random.key(0), state, scalar)
    )
    keys = jax.random.split(jax.random.key(1), 3)
    states = jax.vmap(lambda k: env.reset(k)[1])(keys)
    batch = {agent: jnp.full((3, 1), action) for agent, action in scalar.items()}
    stepped = jax.vmap(env.step)(keys, states, batch)
    assert stepped[2]["agent_0"].shape == (3,)


def test_default_avail_actions_and_world_state():
    env = CounterEnv()
    state = _start(env, 3)
    avail = env.get_avail_actions(state)
    assert avail["agent_0"].tolist() == [True] * 3 and avail["agent_1"].tolist() == [True] * 2
    world = env.get_world_state(state)
    assert world.shape == (5,) and world.dtype == jnp.float32
    assert env.agent_classes == {"agent": ["agent_0", "agent_1"]}


def test_spaces_without_an_agent_are_the_shared_space():
    # JaxMARL's Overcooked scripts call env.action_space() and env.observation_space().
    from jaxmarl.wrappers import LogWrapper

    env = LogWrapper(jaxmarl.make("overcooked"))
    assert env.action_space() == env.action_space("agent_0")
    assert env.observation_space().shape == env.observation_space("agent_1").shape
    with pytest.raises(ValueError, match=r"they differ.*call observation_space\(agent\)"):
        jaxmarl.make("MPE_simple_adversary_v3").observation_space()
