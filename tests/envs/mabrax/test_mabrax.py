"""Multi-agent MuJoCo on brax: factorisation indices, bad input, and the multi-agent step.

Compiling MJX physics costs minutes per program on a loaded 2-core CPU, so CI compiles two
physics programs here: a batched ``hopper_3x1`` rollout on short episodes, shared by the checks
below, and the exact equality of the multi-agent step with brax's single-agent step on
``ant_4x2``. Every id is checked by tracing (``jax.eval_shape``: shapes and dtypes without
compiling) and by small programs without physics (action routing). The step equality on the
other ids, and the contract suite on the default 1000-step episodes, are ``nightly``.
"""

from __future__ import annotations

import functools
import importlib
import pathlib
import re
import sys
import types
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from brax.envs.base import State as BraxState

import jaxmarl
import jaxmarl.envs.mabrax
from jaxmarl.env import random_actions
from jaxmarl.envs.mabrax import factorisation as fz

IDS = ["ant_4x2", "halfcheetah_6x1", "hopper_3x1", "humanoid_9|8", "walker2d_2x3"]
EPISODE = 4  # short episodes so the CI rollout crosses several time limits
STEPS = 11
BATCH = 2


@functools.cache
def make(env_id, **kwargs):
    return jaxmarl.make(env_id, **kwargs)


def mj_model(env):
    """The MuJoCo model brax built the robot from (joint and actuator names)."""
    return env.sys.mj_model


# ------------------------------------------------------------------ no compile: construction


def test_missing_brax_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "brax", None)  # as if brax were not installed
    monkeypatch.delitem(sys.modules, "jaxmarl.envs.mabrax.mabrax", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'jaxmarl\[mujoco\]'"):
        jaxmarl.make("ant_4x2")
    monkeypatch.undo()
    importlib.import_module("jaxmarl.envs.mabrax.mabrax")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(env_name="ant_3x3"), r"unknown MaMuJoCo factorisation 'ant_3x3'; known: .*ant_4x2"),
        (dict(env_name="spider_4x2"), r"known: .*walker2d_2x3"),
        (dict(env_name="ant_4x2", agent_obsk=-1), r"agent_obsk .* >= 0, got -1"),
        (dict(env_name="ant_4x2", agent_obsk=None), r"agent_obsk .* >= 0, got None"),
        (dict(env_name="ant_4x2", agent_obsk=1.5), r"agent_obsk .* >= 0, got 1.5"),
        (dict(env_name="ant_4x2", episode_length=None), r"episode_length .* got None"),
        (dict(env_name="ant_4x2", homogenisation_method="min"), r"homogenisation_method"),
        (dict(env_name="ant_4x2", backend="warp"), r"backend must be one of"),
        (dict(env_name="ant_4x2", auto_reset=False), r"auto_reset=False"),
        (dict(env_name="ant_4x2", global_categories=("cvel",)), r"global category 'cvel'"),
        (dict(env_name="ant_4x2", global_categories="q"), r"global category 'q'.* 'qpos'"),
        (
            dict(env_name="hopper_3x1", agent_action_mapping={"a": [0], "b": [1], "c": [2]}),
            r"same agents in the same order, got \['agent_0', 'agent_1', 'agent_2'\] and \['a'",
        ),
        (
            dict(env_name="hopper_custom", agent_obs_mapping={"agent_0": [0]}),
            r"known: .*hopper_3x1.*Only agent_obs_mapping was given.*pass both",
        ),
    ],
)
def test_bad_input_raises_before_compiling(kwargs, match):
    from jaxmarl.envs.mabrax import MABraxEnv

    with pytest.raises(ValueError, match=match):
        MABraxEnv(**kwargs)


def test_unknown_id_hint_lists_the_known_factorisations():
    """The family's hook for the registry's unknown-id error (``jaxmarl.make("ant_3x3")``)."""
    hint = fz.unknown_id_hint("ant_3x3")
    assert "'ant_3x3' is not a known MaMuJoCo factorisation of ant" in hint
    for robot, names in fz.known_factorisations().items():
        assert f"{robot}: {', '.join(names)}" in hint
    assert "ids: ant_4x2, halfcheetah_6x1, hopper_3x1, humanoid_9|8, walker2d_2x3" in hint
    assert "MABraxEnv('ant_2x4')" in fz.unknown_id_hint("ant_2x4")  # known, not an id
    assert fz.unknown_id_hint("spider_4x2") is None  # not a robot of this family
    assert fz.known_factorisations()["ant"] == ("ant_2x4", "ant_2x4d", "ant_4x2")
    assert sorted(n for names in fz.known_factorisations().values() for n in names) == sorted(
        fz.KNOWN
    )
    mabrax_ids = [
        env_id
        for env_id in jaxmarl.registered_envs
        if jaxmarl.registry.spec(env_id).entry_point.startswith(jaxmarl.envs.mabrax.__name__)
    ]
    assert sorted(mabrax_ids) == sorted(fz.REGISTERED) == sorted(IDS)


def test_global_categories_must_be_a_sequence_of_names():
    from jaxmarl.envs.mabrax import MABraxEnv

    with pytest.raises(TypeError, match=r"global_categories must be a category name or a tuple"):
        MABraxEnv("ant_4x2", global_categories=None)
    one = MABraxEnv("ant_4x2", global_categories="qvel")  # a single name
    assert one.global_categories == ("qvel",)
    for agent, idx in make("ant_4x2").agent_obs_mapping.items():
        # the root's 5 positions (no x, y) and 6 velocities close the default observation
        np.testing.assert_array_equal(one.agent_obs_mapping[agent], np.r_[idx[:-11], idx[-6:]])


def test_either_mapping_alone_replaces_the_factorisations():
    """As in JaxMARL, a mapping given alone is used and the other one is the factorisation's."""
    from jaxmarl.envs.mabrax import MABraxEnv

    default = make("hopper_3x1")
    obs = {"agent_0": [0, 1], "agent_1": [2], "agent_2": [10, 3]}
    env = MABraxEnv("hopper_3x1", agent_obs_mapping=obs)
    assert {a: v.tolist() for a, v in env.agent_obs_mapping.items()} == obs
    assert [env.observation_space(a).shape for a in env.agents] == [(2,), (1,), (2,)]
    for agent in env.agents:
        np.testing.assert_array_equal(
            env.agent_action_mapping[agent], default.agent_action_mapping[agent]
        )
    actions = {"agent_0": [2], "agent_1": [0], "agent_2": [1]}
    env = MABraxEnv("hopper_3x1", agent_action_mapping=actions)
    assert {a: v.tolist() for a, v in env.agent_action_mapping.items()} == actions
    for agent in env.agents:
        np.testing.assert_array_equal(
            env.agent_obs_mapping[agent], default.agent_obs_mapping[agent]
        )


@pytest.mark.parametrize("env_id", IDS)
def test_observing_the_root_position_shifts_the_agents_indices(env_id):
    """brax's ``exclude_current_positions_from_observation=False`` puts the root's x (and y)
    first in its observation: the declared size follows brax's (traced), and every agent's
    index list moves up by as many entries."""
    default = make(env_id)
    env = make(env_id, exclude_current_positions_from_observation=False)
    skipped = default.robot.layout.skipped_qpos
    brax_obs = jax.eval_shape(env.env.reset, jax.random.key(0)).obs
    assert brax_obs.shape == (env.obs_size,) == (default.obs_size + skipped,)
    for agent in env.agents:
        np.testing.assert_array_equal(
            env.agent_obs_mapping[agent], default.agent_obs_mapping[agent] + skipped
        )
        assert env.observation_space(agent) == default.observation_space(agent)


@pytest.mark.parametrize("env_id", ["ant_4x2", "halfcheetah_6x1", "hopper_3x1", "walker2d_2x3"])
def test_agents_observe_the_same_values_with_the_root_position_observed(env_id):
    """brax's observation function of both settings on the same physical state (random
    values, no compile; the humanoid's needs a full physics state) gives each agent the same
    observation."""
    default = make(env_id)
    env = make(env_id, exclude_current_positions_from_observation=False)
    rng = np.random.default_rng(0)
    model = mj_model(env)
    physics = types.SimpleNamespace(
        q=jnp.asarray(rng.normal(size=model.nq), jnp.float32),
        qd=jnp.asarray(rng.normal(size=model.nv), jnp.float32),
        x=types.SimpleNamespace(pos=jnp.asarray(rng.normal(size=(model.nbody, 3)), jnp.float32)),
    )
    observed = env.local_observations(env.env._get_obs(physics))
    want = default.local_observations(default.env._get_obs(physics))
    for agent in env.agents:
        np.testing.assert_array_equal(observed[agent], want[agent])


@pytest.mark.parametrize("env_id", IDS)
def test_agents_act_on_their_joints_and_observe_them_first(env_id):
    """Each agent's actions drive its own joints (named in brax's MuJoCo model), and its
    observation starts with the positions and velocities of those joints (sorted by name)."""
    env = make(env_id)
    model = mj_model(env)
    robot, conf = fz.parse(env_id)
    layout = robot.layout
    owned = [i for idx in env.agent_action_mapping.values() for i in idx.tolist()]
    assert sorted(owned) == list(range(model.nu))  # every actuator has exactly one agent
    for agent, group in zip(env.agents, robot.partitions[conf]):
        joints = [model.actuator_trnid[a, 0] for a in env.agent_action_mapping[agent]]
        assert [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joints] == [
            name.replace("hip", "hip_").replace("ankle", "ankle_") if env_id == "ant_4x2" else name
            for name in group
        ]
        obs_idx = env.agent_obs_mapping[agent].tolist()
        by_name = sorted(zip(group, joints))
        expected = []
        for _, j in by_name:
            expected.append(layout.qpos(int(model.jnt_qposadr[j])))
            expected.append(layout.qvel(int(model.jnt_dofadr[j])))
        # depth 0 nodes in name order: qpos, qvel, then (humanoid) body quantities per node
        got = [i for i in obs_idx if i < layout.qvel(model.nv)][: 2 * len(group)]
        assert got == expected, (agent, got, expected)


@pytest.mark.parametrize("env_id", IDS)
def test_spaces_match_traced_shapes(env_id):
    """Declared spaces equal what reset emits (traced, not compiled; step's observations come
    from the same ``get_obs``), and action bounds are the actuators' control ranges."""
    env = make(env_id)
    obs, state = jax.eval_shape(env.reset, jax.random.key(0))
    brax_obs = state.brax_state.obs
    assert brax_obs.shape == (env.obs_size,) and brax_obs.dtype == jnp.float32
    assert env.action_size == mj_model(env).nu
    ctrl = np.asarray(mj_model(env).actuator_ctrlrange, np.float32)
    for agent in env.agents:
        space = env.observation_space(agent)
        assert obs[agent].shape == space.shape and obs[agent].dtype == space.dtype
        idx = env.agent_action_mapping[agent]
        np.testing.assert_array_equal(env.action_space(agent).low, ctrl[idx, 0])
        np.testing.assert_array_equal(env.action_space(agent).high, ctrl[idx, 1])
    assert env.get_world_state(state).shape == (env.obs_size,)
    assert env.max_steps == 1000


def readme_table() -> dict[str, list[str]]:
    """The README's table of the ids: id -> its other cells, as written."""
    readme = pathlib.Path(jaxmarl.envs.mabrax.__file__).with_name("README.md").read_text()
    rows = {}
    for line in readme.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows[cells[0].strip("`").replace("\\|", "|")] = cells[1:]
    return rows


def per_agent(cell: str, num_agents: int) -> list[int]:
    """``"18 each"``, ``"9, 8"`` or ``"9 (abdomen, arms), 8 (legs)"`` -> one int per agent."""
    values = [int(v) for v in re.sub(r"\([^)]*\)|each", "", cell).split(",")]
    return values * num_agents if len(values) == 1 else values


def test_readme_table_matches_the_envs():
    rows = readme_table()
    assert sorted(rows) == sorted(IDS)
    for env_id, (agents, actuators, widths, bounds) in rows.items():
        env = make(env_id)
        assert int(agents) == env.num_agents, env_id
        got = [env.agent_action_mapping[a].size for a in env.agents]
        assert per_agent(actuators, env.num_agents) == got, env_id
        got = [env.observation_space(a).shape[0] for a in env.agents]
        assert per_agent(widths, env.num_agents) == got, env_id
        low, high = (float(v) for v in bounds.strip("[]").split(","))
        assert (env.action_low == low).all() and (env.action_high == high).all(), env_id


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_observation_distance_grows_the_neighbourhood(k):
    env = make("walker2d_2x3", agent_obsk=k)
    assert env.agent_obsk == k
    sizes = [make("walker2d_2x3", agent_obsk=j).agent_obs_mapping["agent_0"].size for j in (k, 1)]
    # 3 own joints (qpos, qvel) + 5 root entries; each further depth adds joint positions
    assert sizes[0] == {0: 11, 1: 12, 2: 13, 3: 14}[k] and sizes[1] == 12


def test_homogenisation_widths():
    plain = make("humanoid_9|8")
    padded = make("humanoid_9|8", homogenisation_method="max")
    concat = make("humanoid_9|8", homogenisation_method="concat")
    widths = [plain.agent_obs_mapping[a].size for a in plain.agents]
    for agent in plain.agents:
        assert padded.observation_space(agent).shape == (2 + max(widths),)
        assert padded.action_space(agent).shape == (9,)
        assert concat.observation_space(agent).shape == (plain.obs_size,)
        assert concat.action_space(agent).shape == (17,)


def test_step_leaves_the_given_state_untouched_without_jit():
    """brax updates the metrics dict of the state it steps in place; the env hands it copies
    (a stub stands in for the physics, so nothing compiles)."""
    from jaxmarl.envs.mabrax import MABraxEnv, MABraxState

    env = MABraxEnv("hopper_3x1")

    class MutatingPhysics:
        def step(self, brax_state, action):
            brax_state.metrics.update(moved=jnp.float32(1.0))
            return brax_state.replace(reward=jnp.float32(2.0))

    env.env = MutatingPhysics()
    brax_state = BraxState(
        pipeline_state=None,
        obs=jnp.zeros(env.obs_size),
        reward=jnp.float32(0.0),
        done=jnp.float32(0.0),
        metrics={"moved": jnp.float32(0.0)},
    )
    state = MABraxState(brax_state=brax_state, done=jnp.bool_(False), step=jnp.int32(0))
    actions = {a: jnp.zeros(env.action_space(a).shape) for a in env.agents}
    _, next_state, rewards, _, _ = env.step_env(jax.random.key(0), state, actions)
    assert float(state.brax_state.metrics["moved"]) == 0.0
    assert float(next_state.brax_state.metrics["moved"]) == 1.0 and float(rewards["agent_0"]) == 2


@pytest.mark.parametrize("flags", ["", "--xla_backend_optimization_level=0"])
def test_reset_warns_where_large_cpu_batches_deadlocked(monkeypatch, flags):
    from jaxmarl.envs.mabrax import mabrax

    if jax.default_backend() != "cpu":
        pytest.skip("the warning is for CPU runs only")
    monkeypatch.setenv("XLA_FLAGS", flags)
    env = make("walker2d_2x3")
    with pytest.warns(RuntimeWarning, match=r"XLA_FLAGS=--xla_cpu_enable_concurrency_optimized"):
        mabrax.warn_if_cpu_deadlock(env.robot.brax_name, env.backend)
    with pytest.warns(RuntimeWarning, match=r"1024 or more envs"):
        # traced afresh (no jit cache): the check runs in reset's Python body
        jax.eval_shape(lambda key: type(env).reset.__wrapped__(env, key), jax.random.key(0))
    monkeypatch.setenv("XLA_FLAGS", f"{flags} {mabrax.CPU_DEADLOCK_FLAG}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mabrax.warn_if_cpu_deadlock("walker2d", "mjx")  # the workaround is set
        mabrax.warn_if_cpu_deadlock("halfcheetah", "mjx")
    monkeypatch.setenv("XLA_FLAGS", flags)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mabrax.warn_if_cpu_deadlock("ant", "mjx")  # ran at every batch tried
        mabrax.warn_if_cpu_deadlock("halfcheetah", "positional")  # ran at 1024 without the flag


# ------------------------------------------------------------------ one compiled rollout


def scatter(env, actions):
    """brax's action vector from agent actions, built here independently of the env: each
    agent's i-th action entry drives the i-th actuator of its MaMuJoCo group."""
    robot, conf = fz.parse(env.env_name)
    full = jnp.zeros(env.action_size, jnp.float32)
    for agent, group in zip(env.agents, robot.partitions[conf]):
        for i, name in enumerate(group):
            full = full.at[robot.node(name).actuator].set(actions[agent][i])
    return full


def homogenised_actions(env, actions, method):
    if method is None:
        return actions
    if method == "max":
        width = max(v.size for v in env.agent_action_mapping.values())
        return {a: jnp.pad(v, (0, width - v.size), constant_values=7.0) for a, v in actions.items()}
    full = scatter(env, actions)
    return {a: full for a in env.agents}


@pytest.mark.parametrize("env_id", IDS)
def test_agent_actions_scatter_into_brax_action_vector(env_id):
    """The action vector the env hands brax is the agents' actions scattered into their
    actuators and clipped to the control range, under every homogenisation method (small
    programs, no physics). ``step_env`` then calls brax's step with it: the exact equality of
    the next states is compared on every id nightly."""
    env = make(env_id)
    keys = jax.random.split(jax.random.key(5), len(env.agents))
    # about a third of the entries out of bounds: clipped, not rejected
    actions = {a: 1.5 * env.action_space(a).sample(k) for a, k in zip(env.agents, keys)}
    first = env.agents[0]
    actions[first] = actions[first].at[0].set(3.0 * env.action_space(first).high[0])
    raw = np.asarray(scatter(env, actions))
    assert (np.abs(raw) > env.action_high).any()
    want = np.clip(raw, env.action_low, env.action_high)
    for method in (None, "max", "concat"):
        homog = make(env_id, homogenisation_method=method)
        got = jax.jit(homog.global_action)(homogenised_actions(env, actions, method))
        np.testing.assert_array_equal(np.asarray(got), want)


@functools.cache
def hopper_rollout():
    """``[B, T]`` outputs of a hopper rollout with short episodes and some out-of-bounds
    actions: the one physics program CI compiles for this family."""
    env = make("hopper_3x1", episode_length=EPISODE)
    homog = {
        m: make("hopper_3x1", episode_length=EPISODE, homogenisation_method=m)
        for m in ("max", "concat")
    }

    def rollout(key):
        obs, state = env.reset(key)

        def body(carry, step_key):
            obs, state = carry
            act_key, step_key = jax.random.split(step_key)
            actions = random_actions(env, act_key, state)
            actions = {a: 1.5 * v for a, v in actions.items()}  # a third out of bounds
            out = env.step(step_key, state, actions, with_terminal_obs=True)
            record = dict(
                obs=obs,
                state=state,
                actions=actions,
                out=out,
                world=env.get_world_state(state),
                max_obs=homog["max"].get_obs(state),
                concat_obs=homog["concat"].get_obs(state),
            )
            return (out[0], out[1]), record

        return jax.lax.scan(body, (obs, state), jax.random.split(key, STEPS))[1]

    run = jax.jit(jax.vmap(rollout))
    keys = jax.random.split(jax.random.key(0), BATCH)
    return env, run, keys, run(keys)


def test_observations_are_brax_observation_entries():
    env, _, _, traj = hopper_rollout()
    brax_obs = traj["state"].brax_state.obs  # [B, T, 11]
    np.testing.assert_array_equal(traj["world"], brax_obs)
    for i, agent in enumerate(env.agents):
        idx = env.agent_obs_mapping[agent]
        np.testing.assert_array_equal(traj["obs"][agent], brax_obs[..., idx])
        padded = traj["max_obs"][agent]
        np.testing.assert_array_equal(
            padded[..., :3], np.broadcast_to(np.eye(3)[i], padded[..., :3].shape)
        )
        np.testing.assert_array_equal(padded[..., 3 : 3 + idx.size], brax_obs[..., idx])
        assert not padded[..., 3 + idx.size :].any()
        concat = np.asarray(traj["concat_obs"][agent])
        np.testing.assert_array_equal(concat[..., idx], brax_obs[..., idx])
        others = np.setdiff1d(np.arange(env.obs_size), idx)
        assert not concat[..., others].any()


def test_episodes_truncate_at_the_limit_and_terminate_on_falls():
    env, _, _, traj = hopper_rollout()
    obs, state, rewards, dones, infos = traj["out"]
    done, trunc, term = (
        np.asarray(x) for x in (dones["__all__"], infos["truncated"], infos["terminated"])
    )
    np.testing.assert_array_equal(done, trunc | term)
    assert not (trunc & term).any()
    steps = np.asarray(traj["state"].step)
    np.testing.assert_array_equal(trunc, (steps + 1 == EPISODE) & ~term)
    np.testing.assert_array_equal(np.asarray(state.step)[done], 0)  # auto-reset
    stepped = infos["terminal_state"].brax_state  # brax's state after the step, pre-reset
    np.testing.assert_array_equal(term, np.asarray(stepped.done) > 0)
    np.testing.assert_array_equal(
        steps[:, 1:], np.where(done, 0, np.asarray(infos["terminal_state"].step))[:, :-1]
    )
    for agent in env.agents:
        np.testing.assert_array_equal(rewards[agent], stepped.reward)
        assert rewards[agent].dtype == jnp.float32 and obs[agent].dtype == jnp.float32
    assert trunc.any()


def test_rollout_is_deterministic_and_batch_rows_independent():
    _, run, keys, traj = hopper_rollout()
    swapped = run(keys[::-1])
    jax.tree.map(
        lambda a, b: np.testing.assert_array_equal(a[::-1], b), traj["obs"], swapped["obs"]
    )
    assert not np.array_equal(traj["world"][0], traj["world"][1])


# ------------------------------------------------------------------ one id in CI, every id nightly


# CI compiles this for ant_4x2 (its agents' actuators are permuted in brax's action vector, where
# a wrong scatter shows); the other ids nightly.
IN_CI = "ant_4x2"


@pytest.mark.parametrize(
    "env_id", [e if e == IN_CI else pytest.param(e, marks=pytest.mark.nightly) for e in IDS]
)
def test_every_id_steps_as_brax_does(env_id):
    """step_env's next brax state is brax's step of the same state and scattered actions."""
    env = make(env_id)

    @jax.jit
    def both(key):
        _, state = env.reset(key)
        actions = random_actions(env, key, state)
        multi = env.step_env(key, state, actions)[1].brax_state
        low, high = env.action_low, env.action_high
        return multi, env.env.step(state.brax_state, jnp.clip(scatter(env, actions), low, high))

    multi, single = both(jax.random.key(3))
    jax.tree.map(np.testing.assert_array_equal, multi, single)


def test_episode_renders_to_gif_and_brax_html(tmp_path):
    import imageio.v2 as imageio

    from jaxmarl.render import save_episode_gif

    env, _, _, traj = hopper_rollout()
    episode = jax.tree.map(lambda x: x[0], traj["state"])  # [T, ...] of the first env
    path = save_episode_gif(env, episode, tmp_path / "hopper.gif")
    frames = imageio.mimread(path)
    # (the GIF writer merges identical consecutive frames, e.g. a robot at rest)
    assert 1 < len(frames) <= STEPS and frames[0].shape == (240, 320, 3)
    assert not np.array_equal(frames[0], frames[-1])  # the robot moved
    html = (tmp_path / "hopper.html").read_text()
    assert "<html" in html.lower() and len(html) > 1000


class _Links(NamedTuple):
    """Stand-in for a state's link positions: ``.brax_state.pipeline_state.x.pos`` (a pytree,
    as the env's states are)."""

    pos: Any

    @property
    def brax_state(self):
        return types.SimpleNamespace(pipeline_state=types.SimpleNamespace(x=self))


def test_oblique_view_separates_limbs_that_the_side_view_stacks():
    """Two legs mirrored across the x-z plane fall on one point seen from the side, on two from
    the oblique camera; the planar robots default to the side view, the ant to the oblique."""
    from jaxmarl.envs.mabrax.render import default_view, render_frame

    state = _Links(np.array([[0.0, 0.0, 0.5], [0.0, 0.8, 0.3], [0.0, -0.8, 0.3]]))
    env = types.SimpleNamespace(
        robot=types.SimpleNamespace(brax_name="ant"),
        sys=types.SimpleNamespace(link_parents=[-1, 0, 0]),
    )

    def joint_pixels(view):
        frame = render_frame(env, state, view=view)
        return int(np.all(frame == [220, 60, 40], axis=-1).sum())

    one_dot = 25  # a joint is drawn as a 5 x 5 square
    assert joint_pixels("side") == 2 * one_dot  # the root's and the two stacked legs'
    assert joint_pixels("oblique") == 3 * one_dot
    np.testing.assert_array_equal(
        render_frame(env, state), render_frame(env, state, view="oblique")
    )
    with pytest.raises(ValueError, match="view must be one of"):
        render_frame(env, state, view="top")
    ids = ("ant_4x2", "hopper_3x1", "humanoid_9|8")
    assert [default_view(make(i)) for i in ids] == ["oblique", "side", "oblique"]


def test_capsules_are_drawn_along_their_axes_in_the_world():
    """A capsule along its geom's z, turned onto the link's x by the geom's rotation, then onto
    the world's y by the link's: its ends are the link's position -+ the half-length along y.
    The floor (a geom of the world body) and spheres are not limbs."""
    from jaxmarl.envs.mabrax.render import capsule_segments

    s = np.sqrt(0.5)
    sys = types.SimpleNamespace(
        geom_type=np.array([3, 3, 2]),  # capsule on the world body, capsule, sphere
        geom_bodyid=np.array([0, 1, 1]),
        geom_size=np.array([[1.0, 9.0, 0.0], [0.1, 0.5, 0.0], [0.1, 0.0, 0.0]]),
        geom_pos=np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.0, 0.0]]),
        geom_quat=np.array([[1.0, 0, 0, 0], [s, 0.0, s, 0.0], [1.0, 0, 0, 0]]),  # z -> x
    )
    pos = np.array([[1.0, 2.0, 0.3]])
    rot = np.array([[s, 0.0, 0.0, s]])  # x -> y
    ends = capsule_segments(sys, pos, rot)
    np.testing.assert_allclose(ends, [[[1.0, 1.7, 0.3], [1.0, 2.7, 0.3]]], rtol=0, atol=1e-6)
    assert capsule_segments(types.SimpleNamespace(), pos, rot).shape == (0, 2, 3)
