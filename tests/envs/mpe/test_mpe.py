"""Unit tests of the MPE family: layouts, action decoding, time limit, validation, rendering.

Step-by-step parity with mpe2 lives in ``test_mpe_parity.py`` and the generic API checks in
``tests/test_env_contract.py``; this file checks what is specific to MPE. One jitted
function per (env id, action type) produces everything the per-config tests look at
(compiling dominates the cost), so the file runs in well under a minute on two cores.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl import spaces
from jaxmarl.envs import mpe
from jaxmarl.envs.mpe._world import drop_diagonal

# id -> (agents, observation sizes, discrete sizes, continuous sizes, goal shape)
LAYOUTS = {
    "MPE_simple_v3": (["agent_0"], [4], [5], [5], (0,)),
    "MPE_simple_tag_v3": (
        ["adversary_0", "adversary_1", "adversary_2", "agent_0"],
        [16, 16, 16, 14],
        [5] * 4,
        [5] * 4,
        (0,),
    ),
    "MPE_simple_world_comm_v3": (
        ["leadadversary_0", "adversary_0", "adversary_1", "adversary_2", "agent_0", "agent_1"],
        [34, 34, 34, 34, 28, 28],
        [20, 5, 5, 5, 5, 5],
        [9, 5, 5, 5, 5, 5],
        (0,),
    ),
    "MPE_simple_spread_v3": (["agent_0", "agent_1", "agent_2"], [18] * 3, [5] * 3, [5] * 3, (0,)),
    "MPE_simple_crypto_v3": (["eve_0", "alice_0", "bob_0"], [4, 8, 8], [4] * 3, [4] * 3, (2,)),
    "MPE_simple_speaker_listener_v4": (["speaker_0", "listener_0"], [3, 11], [3, 5], [3, 5], ()),
    "MPE_simple_push_v3": (["adversary_0", "agent_0"], [8, 19], [5, 5], [5, 5], ()),
    "MPE_simple_adversary_v3": (
        ["adversary_0", "agent_0", "agent_1"],
        [8, 10, 10],
        [5] * 3,
        [5] * 3,
        (),
    ),
    "MPE_simple_reference_v3": (["agent_0", "agent_1"], [21, 21], [50, 50], [15, 15], (2,)),
    "MPE_simple_facmac_v1": (
        ["adversary_0", "adversary_1", "adversary_2", "agent_0"],
        [16] * 4,
        [5] * 4,
        [5] * 4,
        (0,),
    ),
    "MPE_simple_facmac_3a_v1": (
        ["adversary_0", "adversary_1", "adversary_2", "agent_0"],
        [16] * 4,
        [5] * 4,
        [5] * 4,
        (0,),
    ),
    "MPE_simple_facmac_6a_v1": (
        [f"adversary_{i}" for i in range(6)] + ["agent_0", "agent_1"],
        [28] * 8,
        [5] * 8,
        [5] * 8,
        (0,),
    ),
    "MPE_simple_facmac_9a_v1": (
        [f"adversary_{i}" for i in range(9)] + ["agent_0", "agent_1", "agent_2"],
        [40] * 12,
        [5] * 12,
        [5] * 12,
        (0,),
    ),
}
MPE_IDS = [env_id for env_id in jaxmarl.registered_envs if env_id.startswith("MPE_")]
ACTION_TYPES = ["Discrete", "Continuous"]


def test_every_registered_mpe_id_is_covered():
    assert sorted(MPE_IDS) == sorted(LAYOUTS)


@functools.cache
def make(env_id: str, action_type: str):
    return jaxmarl.make(env_id, action_type=action_type)


def _random_actions(env, rng: np.random.Generator):
    """One random valid action per agent, drawn on the host (nothing to compile)."""
    actions = {}
    for agent in env.agents:
        space = env.action_space(agent)
        if env.discrete:
            actions[agent] = np.int32(rng.integers(space.n))
        else:
            actions[agent] = rng.random(space.shape, dtype=np.float32)
    return actions


# Tests check behaviour, not speed: XLA's backend optimisations off halve the compile time.
FAST_COMPILE = {"xla_backend_optimization_level": 0}


def _compile(fn, *args):
    return jax.jit(fn).lower(*args).compile(FAST_COMPILE)


@functools.cache
def episode(env_id: str, action_type: str):
    """Reset, then one episode and one step more with random actions.

    ``step`` is compiled once per config (compiling dominates this file) and driven from
    Python; the outputs are shared by the tests below.

    Returns:
        ``(env, obs0, state0, trajectory, obs_of_reset_state)``; ``trajectory`` holds the
        outputs of every step stacked over time (NumPy) plus ``"last_state"``, the final
        state as returned by ``step``; ``obs_of_reset_state`` is ``get_obs`` of the state
        returned by the episode's last step (the auto-reset one).
    """
    env = make(env_id, action_type)
    rng = np.random.default_rng(0)
    key = jax.random.key(7)
    reset = _compile(env.reset, key)
    obs0, state0 = reset(key)
    step = _compile(
        functools.partial(env.step, with_terminal_obs=True),
        key,
        state0,
        _random_actions(env, rng),
    )
    outputs = []
    obs, state = obs0, state0
    for step_key in jax.random.split(key, env.max_steps + 1):
        obs, state, rewards, dones, infos = step(step_key, state, _random_actions(env, rng))
        outputs.append(dict(obs=obs, state=state, rewards=rewards, dones=dones, infos=infos))
    trajectory = jax.tree.map(lambda *xs: np.stack(xs), *outputs)
    trajectory["last_state"] = outputs[-1]["state"]
    reset_state = outputs[env.max_steps - 1]["state"]
    obs_of_reset_state = _compile(env.get_obs, reset_state)(reset_state)
    return env, obs0, state0, trajectory, obs_of_reset_state


@pytest.fixture(params=[(i, t) for i in sorted(LAYOUTS) for t in ACTION_TYPES], ids=str)
def config(request):
    return request.param


def test_layout_matches_jaxmarl(config):
    env_id, action_type = config
    env = make(env_id, action_type)
    agents, obs_sizes, discrete, continuous, _ = LAYOUTS[env_id]
    assert env.agents == agents
    assert env.num_agents == len(agents)
    for agent, obs_size, n, k in zip(agents, obs_sizes, discrete, continuous):
        assert env.observation_space(agent) == spaces.Box(-np.inf, np.inf, (obs_size,))
        if action_type == "Discrete":
            assert env.action_space(agent) == spaces.Discrete(n)
        else:
            assert env.action_space(agent) == spaces.Box(0.0, 1.0, (k,), jnp.float32)


def test_observations_match_declared_spaces(config):
    env, obs0, _, trajectory, _ = episode(*config)
    for agent in env.agents:
        space = env.observation_space(agent)
        assert obs0[agent].shape == space.shape
        assert obs0[agent].dtype == jnp.float32
        steps = trajectory["obs"][agent]
        assert steps.shape == (env.max_steps + 1, *space.shape)
        assert steps.dtype == jnp.float32
        assert np.all(np.isfinite(steps))
        assert trajectory["rewards"][agent].dtype == jnp.float32


def test_state_fields_and_dtypes(config):
    env, _, state0, trajectory, _ = episode(*config)
    goal_shape = LAYOUTS[config[0]][4]
    expected = {
        "p_pos": ((env.num_entities, 2), jnp.float32),
        "p_vel": ((env.num_entities, 2), jnp.float32),
        "c": ((env.num_agents, env.dim_c), jnp.float32),
        "done": ((env.num_agents,), jnp.bool_),
        "step": ((), jnp.int32),
        "goal": (goal_shape, jnp.int32),
    }
    for name, (shape, dtype) in expected.items():
        leaf = getattr(state0, name)
        assert (leaf.shape, leaf.dtype, leaf.weak_type) == (shape, dtype, False), name
        stepped = getattr(trajectory["last_state"], name)
        assert (stepped.shape, stepped.dtype, stepped.weak_type) == (shape, dtype, False), name
    assert isinstance(state0, mpe.State)


def test_episode_truncates_at_max_steps_and_resets(config):
    env, _, _, trajectory, obs_of_reset_state = episode(*config)
    assert env.max_steps == 25
    truncated = np.asarray(trajectory["infos"]["truncated"])
    terminated = np.asarray(trajectory["infos"]["terminated"])
    done_all = np.asarray(trajectory["dones"]["__all__"])
    expected = np.zeros(env.max_steps + 1, dtype=bool)
    expected[env.max_steps - 1] = True  # the 25th step ends the episode
    np.testing.assert_array_equal(truncated, expected)
    np.testing.assert_array_equal(done_all, expected)
    assert not terminated.any()
    for agent in env.agents:
        np.testing.assert_array_equal(np.asarray(trajectory["dones"][agent]), expected)
    steps = np.asarray(trajectory["state"].step)
    np.testing.assert_array_equal(steps, [*range(1, env.max_steps), 0, 1])
    last = env.max_steps - 1
    # The auto-reset observation is returned (it belongs to the new state) ...
    for agent in env.agents:
        np.testing.assert_allclose(
            trajectory["obs"][agent][last], obs_of_reset_state[agent], rtol=1e-6, atol=1e-6
        )
    # ... and the pre-reset one is in infos["terminal_obs"]: it differs for moving agents.
    moved = [
        not np.array_equal(
            trajectory["obs"][agent][last], trajectory["infos"]["terminal_obs"][agent][last]
        )
        for agent in env.agents
    ]
    assert any(moved)
    reset_pos = np.asarray(trajectory["state"].p_pos[last])
    assert not np.array_equal(reset_pos, np.asarray(trajectory["state"].p_pos[last - 1]))
    np.testing.assert_array_equal(np.asarray(trajectory["state"].p_vel[last]), 0.0)


@pytest.mark.parametrize("env_id", sorted(LAYOUTS))
def test_out_of_range_discrete_action_is_action_zero(env_id):
    """Actions reach the dynamics only through ``decode_actions``, so equal decodings mean
    equal steps (checked end to end for one scenario below)."""
    env = make(env_id, "Discrete")

    def decode_all(candidates):
        return jax.vmap(env.decode_actions)(candidates)

    # Too large, much too large, negative, and 0: all but the last must decode like 0.
    candidates = {a: np.array([env.action_space(a).n, 1000, -1, 0], np.int32) for a in env.agents}
    u, c = _compile(decode_all, candidates)(candidates)
    for leaf in (np.asarray(u), np.asarray(c)):
        for row in leaf[:3]:
            np.testing.assert_array_equal(row, leaf[3])
    assert not np.asarray(u).any()


def test_out_of_range_discrete_step_equals_step_with_action_zero():
    env, _, state0, _, _ = episode("MPE_simple_reference_v3", "Discrete")
    step_env = _compile(
        env.step_env, jax.random.key(0), state0, {a: np.int32(0) for a in env.agents}
    )
    bad = step_env(jax.random.key(3), state0, {a: np.int32(57) for a in env.agents})
    zero = step_env(jax.random.key(3), state0, {a: np.int32(0) for a in env.agents})
    for bad_leaf, zero_leaf in zip(jax.tree.leaves(bad), jax.tree.leaves(zero)):
        np.testing.assert_array_equal(np.asarray(bad_leaf), np.asarray(zero_leaf))


@pytest.mark.parametrize("env_id", sorted(LAYOUTS))
def test_unknown_keyword_and_bad_values_raise(env_id):
    with pytest.raises(TypeError):
        jaxmarl.make(env_id, not_an_argument=1)
    constructor = jaxmarl.spec(env_id).load()
    with pytest.raises(TypeError):
        constructor(not_an_argument=1)
    with pytest.raises(ValueError, match="action_type"):
        jaxmarl.make(env_id, action_type="discrete")
    with pytest.raises(ValueError, match="max_steps"):
        jaxmarl.make(env_id, max_steps=0)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("MPE_simple_v3", {"num_agents": 0}),
        ("MPE_simple_spread_v3", {"num_agents": 0}),
        ("MPE_simple_spread_v3", {"local_ratio": 1.5}),
        ("MPE_simple_spread_v3", {"num_landmarks": 2.5}),
        ("MPE_simple_tag_v3", {"num_adversaries": -1}),
        ("MPE_simple_world_comm_v3", {"num_food": 0}),
        ("MPE_simple_push_v3", {"num_landmarks": 3}),
        ("MPE_simple_reference_v3", {"num_agents": 3}),
        ("MPE_simple_speaker_listener_v4", {"num_landmarks": 2}),
        ("MPE_simple_crypto_v3", {"num_agents": 2}),
        ("MPE_simple_facmac_v1", {"score_function": "max"}),
    ],
)
def test_invalid_constructor_values_raise_value_error(env_id, kwargs):
    with pytest.raises(ValueError):
        jaxmarl.make(env_id, **kwargs)


def test_custom_sizes_give_consistent_layouts():
    env = jaxmarl.make("MPE_simple_tag_v3", num_good_agents=2, num_adversaries=2, num_obs=1)
    obs, _ = env.reset(jax.random.key(0))
    assert {a: o.shape[0] for a, o in obs.items()} == {
        "adversary_0": 16,
        "adversary_1": 16,
        "agent_0": 14,
        "agent_1": 14,
    }
    env = jaxmarl.make("MPE_simple_spread_v3", num_agents=5, num_landmarks=2, max_steps=3)
    obs, _ = env.reset(jax.random.key(0))
    assert all(o.shape == (4 + 4 + 16,) for o in obs.values())
    assert env.max_steps == 3


def test_discrete_action_directions_and_messages():
    env = make("MPE_simple_reference_v3", "Discrete")
    # a = move + 5 * word: 2 = +x, 3 + 5*4 = -y with word 4.
    u, c = env.decode_actions({"agent_0": jnp.int32(2), "agent_1": jnp.int32(3 + 5 * 4)})
    np.testing.assert_allclose(np.asarray(u), [[5.0, 0.0], [0.0, -5.0]])
    np.testing.assert_array_equal(np.asarray(c), np.eye(10)[[0, 4]])
    env = make("MPE_simple_tag_v3", "Continuous")
    actions = {a: jnp.array([0.0, 0.2, 0.7, 1.5, -1.0], jnp.float32) for a in env.agents}
    u, c = env.decode_actions(actions)
    # clipped to [0, 1]: (0.7 - 0.2, 0 - 1) times accel 3 (adversaries) / 4 (good agent)
    np.testing.assert_allclose(np.asarray(u[0]), [1.5, -3.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(u[3]), [2.0, -4.0], rtol=1e-6)
    assert c.shape == (4, 2) and not np.asarray(c).any()


def test_drop_diagonal_keeps_order():
    pairs = jnp.arange(16).reshape(4, 4)
    np.testing.assert_array_equal(
        np.asarray(drop_diagonal(pairs)), [[1, 2, 3], [4, 6, 7], [8, 9, 11], [12, 13, 14]]
    )


def test_contact_pushes_overlapping_agents_apart():
    env = make("MPE_simple_spread_v3", "Discrete")
    _, state = env.reset(jax.random.key(0))
    p_pos = state.p_pos.at[0].set(jnp.array([0.0, 0.0])).at[1].set(jnp.array([0.1, 0.0]))
    p_pos = p_pos.at[2].set(jnp.array([0.9, 0.9]))
    state = state.replace(p_pos=p_pos)
    noop = {a: np.int32(0) for a in env.agents}
    _, state, rewards, _, _ = _compile(env.step_env, jax.random.key(1), state, noop)(
        jax.random.key(1), state, noop
    )
    vel = np.asarray(state.p_vel)
    assert vel[0, 0] < 0 < vel[1, 0]
    np.testing.assert_allclose(vel[0], -vel[1], rtol=1e-6)
    # local reward: agents 0 and 1 still overlap (-1 each, times local_ratio 0.5)
    assert float(rewards["agent_0"]) < float(rewards["agent_2"])


def test_render_frame_and_gif(tmp_path):
    pytest.importorskip("matplotlib")
    imageio = pytest.importorskip("imageio.v2")
    from jaxmarl.envs.mpe.render import plot_state, render_frame, save_gif

    for env_id in ("MPE_simple_world_comm_v3", "MPE_simple_speaker_listener_v4"):
        env, _, state0, trajectory, _ = episode(env_id, "Discrete")
        frame = render_frame(env, state0, size=2.0)
        assert frame.shape == (200, 200, 3) and frame.dtype == np.uint8
        assert frame.min() < 255  # something was drawn
        assert plot_state(env, state0) is not None
        path = tmp_path / f"{env_id}.gif"
        states = jax.tree.map(lambda x: x[:4], trajectory["state"])
        save_gif(env, states, path, fps=5, size=1.5)
        frames = imageio.mimread(path)
        assert len(frames) == 4 and frames[0].shape[:2] == (150, 150)
        later = jax.tree.map(lambda x: x[3], trajectory["state"])
        save_gif(env, [state0, later], tmp_path / "list.gif", size=1.0)
        assert len(imageio.mimread(tmp_path / "list.gif")) == 2
    with pytest.raises(ValueError, match="one environment"):
        batched = jax.tree.map(lambda x: x[None], state0)
        render_frame(env, batched)
