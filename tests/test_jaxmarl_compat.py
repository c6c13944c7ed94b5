"""JaxMARL's import paths: short JaxMARL-style snippets run unchanged against this project.

The snippets are written here from JaxMARL 0.2.0's documented usage (its README and
tutorials): the same imports, calls and attribute names a JaxMARL user types.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
import jaxmarl.environments as environments


def test_paths_name_the_same_modules_and_classes():
    import jaxmarl.env
    import jaxmarl.envs.mpe
    import jaxmarl.envs.smax
    import jaxmarl.spaces
    from jaxmarl.environments.mpe.simple_spread import SimpleSpreadMPE as deep
    from jaxmarl.envs.mpe import SimpleSpreadMPE

    assert importlib.import_module("jaxmarl.environments.mpe") is jaxmarl.envs.mpe
    assert importlib.import_module("jaxmarl.environments.smax") is jaxmarl.envs.smax
    assert importlib.import_module("jaxmarl.environments.spaces") is jaxmarl.spaces
    assert importlib.import_module("jaxmarl.environments.multi_agent_env") is jaxmarl.env
    assert deep is SimpleSpreadMPE is environments.SimpleSpreadMPE
    assert isinstance(jaxmarl.make("MPE_simple_spread_v3"), environments.MultiAgentEnv)


def test_every_jaxmarl_top_level_name_resolves():
    missing = []
    for name in environments._NAMES:
        try:
            getattr(environments, name)
        except AttributeError as error:
            missing.append(f"{name}: {error}")
    assert not missing, "\n".join(missing)
    assert environments.SUBMODULE_ENVIRONMENTS is False


def test_unknown_path_is_a_module_not_found_error():
    with pytest.raises(ModuleNotFoundError, match="jaxmarl.environments.no_such_family"):
        importlib.import_module("jaxmarl.environments.no_such_family")


def test_renamed_module_paths():
    # JaxMARL's tests and examples import the classes from these modules.
    from jaxmarl.environments.mabrax.mabrax_env import Ant, MABraxEnv
    from jaxmarl.environments.mpe.mpe_visualizer import MPEVisualizer
    from jaxmarl.environments.overcooked_v2.overcooked import ObservationType, OvercookedV2

    assert OvercookedV2 is environments.OvercookedV2 and ObservationType.__name__
    assert issubclass(Ant, MABraxEnv) and Ant is environments.Ant
    assert MPEVisualizer is environments.mpe.MPEVisualizer


def test_mpe_default_params_module_path():
    # JaxMARL's MPE tests pick the action type so.
    from jaxmarl.environments.mpe.default_params import CONTINUOUS_ACT, DISCRETE_ACT, MAX_STEPS

    continuous = jaxmarl.make("MPE_simple_v3", action_type=CONTINUOUS_ACT)
    discrete = jaxmarl.make("MPE_simple_v3", action_type=DISCRETE_ACT)
    agent = continuous.agents[0]
    assert continuous.action_space(agent).shape == (5,)
    assert discrete.action_space(agent).n == 5
    assert continuous.max_steps == MAX_STEPS == 25


def test_registration_module_path():
    from jaxmarl.registration import SUBMODULE_ENVIRONMENTS, MultiAgentEnv, make, registered_envs

    assert make is jaxmarl.make and MultiAgentEnv is environments.MultiAgentEnv
    assert registered_envs == jaxmarl.registered_envs and "overcooked" in registered_envs
    assert SUBMODULE_ENVIRONMENTS is False


def test_jaxnav_docs_visualizer_snippet(tmp_path):
    # JaxMARL's JaxNav docs, unchanged apart from the episode length and the GIF path.
    from jaxmarl.environments.jaxnav.jaxnav_env import JaxNav
    from jaxmarl.environments.jaxnav.jaxnav_viz import JaxNavVisualizer

    env = JaxNav(num_agents=4)
    rng = jax.random.PRNGKey(0)
    rng, _rng = jax.random.split(rng)
    obs, env_state = env.reset(_rng)
    obs_list, env_state_list = [obs], [env_state]
    for _ in range(2):
        rng, act_rng, step_rng = jax.random.split(rng, 3)
        act_rngs = jax.random.split(act_rng, env.num_agents)
        actions = {
            a: env.action_space(a).sample(act_rngs[i])
            for i, a in enumerate(env.action_spaces.keys())
        }
        obs, env_state, _, _, _ = env.step(step_rng, env_state, actions)
        obs_list.append(obs)
        env_state_list.append(env_state)
    viz = JaxNavVisualizer(env, obs_list, env_state_list)
    viz.animate(str(tmp_path / "test.gif"))
    import imageio.v2 as imageio

    frames = imageio.mimread(tmp_path / "test.gif")
    assert len(frames) == 3 and not np.array_equal(frames[0], frames[-1])


def test_importing_the_compat_paths_loads_no_family():
    code = (
        "import sys, jaxmarl.environments, jaxmarl.wrappers.baselines, jaxmarl.viz,"
        " jaxmarl.registration;"
        "print([m for m in sys.modules if m.startswith('jaxmarl.envs.')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_mpe_tutorial_snippet(tmp_path):
    # JaxMARL's README / MPE tutorial, unchanged apart from the GIF path.
    from jaxmarl import make
    from jaxmarl.environments.mpe import MPEVisualizer

    key = jax.random.PRNGKey(0)
    env = make("MPE_simple_reference_v3")
    obs, state = env.reset(key)
    state_seq = []
    for _ in range(5):
        state_seq.append(state)
        key, key_act = jax.random.split(key)
        key_act = jax.random.split(key_act, env.num_agents)
        actions = {
            agent: env.action_space(agent).sample(key_act[i]) for i, agent in enumerate(env.agents)
        }
        obs, state, reward, done, infos = env.step(key, state, actions)
    viz = MPEVisualizer(env, state_seq)
    viz.animate(str(tmp_path / "mpe.gif"), view=False)
    assert (tmp_path / "mpe.gif").stat().st_size > 0


def test_smax_tutorial_snippet(tmp_path):
    from jaxmarl import make
    from jaxmarl.environments.smax import map_name_to_scenario
    from jaxmarl.viz.visualizer import SMAXVisualizer  # JaxMARL's smax_introduction.py path
    from jaxmarl.wrappers.baselines import SMAXLogWrapper

    scenario = map_name_to_scenario("3m")
    env = make("HeuristicEnemySMAX", scenario=scenario)
    key = jax.random.PRNGKey(0)
    key, key_reset = jax.random.split(key)
    obs, state = env.reset(key_reset)
    state_seq = []
    for _ in range(3):
        key, key_act, key_step = jax.random.split(key, 3)
        key_act = jax.random.split(key_act, env.num_agents)
        actions = {
            agent: env.action_space(agent).sample(key_act[i]) for i, agent in enumerate(env.agents)
        }
        state_seq.append((key_step, state, actions))
        obs, state, rewards, dones, infos = env.step(key_step, state, actions)
    SMAXVisualizer(env, state_seq).animate(view=False, save_fname=str(tmp_path / "smax.gif"))
    assert (tmp_path / "smax.gif").stat().st_size > 0

    logged = SMAXLogWrapper(env)
    obs, log_state = logged.reset(jax.random.PRNGKey(1))
    step = jax.jit(logged.step)
    actions = {agent: jnp.int32(0) for agent in env.agents}
    for i in range(3):
        obs, log_state, rewards, dones, infos = step(jax.random.PRNGKey(i), log_state, actions)
    assert infos["returned_won_episode"].shape == (env.num_agents,)
    # JaxMARL's baselines pass the inner state to the env's methods.
    assert env.get_avail_actions(log_state.env_state)[env.agents[0]].shape == (
        env.action_space(env.agents[0]).n,
    )


def test_smax_log_wrapper_reports_the_win_at_the_episode_end():
    from jaxmarl.wrappers.baselines import SMAXLogWrapper

    env = SMAXLogWrapper(jaxmarl.make("HeuristicEnemySMAX", scenario="3m"))
    obs, state = env.reset(jax.random.PRNGKey(0))
    # Kill the enemies: the next step ends the episode with a win for the allies.
    inner = state.env_state
    inner = inner.replace(
        unit_health=inner.unit_health.at[env.num_allies :].set(0.0),
        unit_alive=inner.unit_alive.at[env.num_allies :].set(False),
    )
    state = state.replace(env_state=inner)
    actions = {agent: jnp.int32(0) for agent in env.agents}
    obs, state, rewards, dones, infos = jax.jit(env.step)(jax.random.PRNGKey(1), state, actions)
    assert bool(dones["__all__"])
    np.testing.assert_array_equal(infos["returned_won_episode"], np.ones(env.num_agents))


def test_mpe_log_wrapper_scales_logged_returns_not_rewards():
    from jaxmarl.wrappers.baselines import LogWrapper, MPELogWrapper

    env = jaxmarl.make("MPE_simple_spread_v3", max_steps=4)

    def episode(wrapper):
        obs, state = wrapper.reset(jax.random.PRNGKey(0))
        actions = {agent: jnp.int32(1) for agent in env.agents}
        rewards_seen = []
        for i in range(4):
            obs, state, rewards, dones, infos = wrapper.step(jax.random.PRNGKey(i), state, actions)
            rewards_seen.append(rewards[env.agents[0]])
        return np.asarray(infos["returned_episode_returns"]), np.asarray(rewards_seen)

    plain_returns, plain_rewards = episode(LogWrapper(env))
    mpe_returns, mpe_rewards = episode(MPELogWrapper(env))
    np.testing.assert_array_equal(mpe_rewards, plain_rewards)
    np.testing.assert_allclose(mpe_returns, plain_returns * env.num_agents, rtol=1e-6)
    assert np.all(plain_returns != 0)


def test_ct_rollout_manager_pads_tags_and_adds_globals():
    from jaxmarl.wrappers.baselines import CTRolloutManager, LogWrapper

    env = jaxmarl.make("MPE_simple_adversary_v3")  # adversary 8 features, agents 10
    wrapped = CTRolloutManager(LogWrapper(env), batch_size=4)
    assert wrapped.max_obs_length == 10
    assert wrapped.obs_size == 10 + env.num_agents
    key = jax.random.PRNGKey(0)
    obs, state = wrapped.batch_reset(key)
    raw, _ = jax.vmap(env.reset)(jax.random.split(key, 4))
    adversary = env.agents[0]
    assert obs[adversary].shape == (4, wrapped.obs_size)
    np.testing.assert_array_equal(obs[adversary][:, :8], raw[adversary])
    np.testing.assert_array_equal(obs[adversary][:, 8:10], 0.0)
    np.testing.assert_array_equal(obs[adversary][:, 10:], np.tile(np.eye(3)[0], (4, 1)))
    expected_state = jnp.concatenate([raw[a] for a in env.agents], axis=-1)
    np.testing.assert_array_equal(obs["__all__"], expected_state)

    actions = {a: wrapped.batch_sample(jax.random.PRNGKey(1), a) for a in env.agents}
    obs, state, rewards, dones, infos = wrapped.batch_step(jax.random.PRNGKey(2), state, actions)
    team = sum(rewards[a] for a in env.agents)
    np.testing.assert_allclose(rewards["__all__"], team, rtol=1e-6)
    valid = wrapped.get_valid_actions(state)
    assert valid[adversary].shape == (4, 5) and valid[adversary].dtype == jnp.float32


def test_ct_rollout_manager_infos_take_jaxmarls_form():
    # JaxMARL's bare MPE env returns no infos and shaq.py's logging relies on it; neither its
    # envs nor its log wrappers return time-limit infos. Every leaf has the agent axis the
    # scripts index.
    from jaxmarl.wrappers.baselines import CTRolloutManager, LogWrapper

    def step_infos(wrapped):
        _, state = wrapped.batch_reset(jax.random.PRNGKey(0))
        actions = {a: wrapped.batch_sample(jax.random.PRNGKey(1), a) for a in wrapped.agents}
        infos = wrapped.batch_step(jax.random.PRNGKey(2), state, actions)[4]
        for value in jax.tree.leaves(infos):
            assert value.shape == (3, wrapped.num_agents)
        return set(infos)

    mpe = jaxmarl.make("MPE_simple_spread_v3")
    assert step_infos(CTRolloutManager(mpe, batch_size=3)) == set()
    logged = step_infos(CTRolloutManager(LogWrapper(mpe), batch_size=3))
    assert "returned_episode" in logged and not {"terminated", "truncated"} & logged
    assert step_infos(CTRolloutManager(jaxmarl.make("switch_riddle"), batch_size=3)) == {"success"}


def test_ct_rollout_manager_on_smax_uses_world_state_and_avail_actions():
    from jaxmarl.wrappers.baselines import CTRolloutManager

    env = jaxmarl.make("HeuristicEnemySMAX", scenario="3m")
    wrapped = CTRolloutManager(env, batch_size=2)
    obs, state = wrapped.batch_reset(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(obs["__all__"], jax.vmap(env.get_world_state)(state))
    valid = wrapped.get_valid_actions(state)
    avail = jax.vmap(env.get_avail_actions)(state)
    for agent in env.agents:
        np.testing.assert_array_equal(valid[agent], avail[agent].astype(np.float32))


def test_save_and_load_params_round_trip(tmp_path):
    from jaxmarl.wrappers.baselines import load_params, save_params

    params = {"params": {"dense": {"kernel": jnp.ones((2, 3)), "bias": jnp.zeros(3)}}}
    save_params(params, tmp_path / "p.safetensors")
    loaded = load_params(tmp_path / "p.safetensors")
    jax.tree.map(np.testing.assert_array_equal, loaded, params)


def test_baseline_script_step_pattern_runs_unchanged():
    # What JaxMARL's PPO scripts do each step: actions unbatchified to [num_envs, 1] per agent,
    # a vmapped step of the LogWrapper-wrapped env, then every info leaf reshaped to
    # [num_envs * num_agents] (one value per actor).
    from jaxmarl.wrappers.baselines import MPELogWrapper

    env = MPELogWrapper(jaxmarl.make("MPE_simple_spread_v3"))
    num_envs, num_agents = 4, env.num_agents
    keys = jax.random.split(jax.random.PRNGKey(0), num_envs)
    _, state = jax.vmap(env.reset)(keys)
    flat = jnp.arange(num_agents * num_envs, dtype=jnp.int32) % 5  # [num_actors]
    columns = flat.reshape((num_agents, num_envs, -1))
    actions = {agent: columns[i] for i, agent in enumerate(env.agents)}
    assert actions[env.agents[0]].shape == (num_envs, 1)
    _, _, rewards, _, infos = jax.vmap(env.step)(keys, state, actions)
    per_actor = jax.tree.map(lambda x: x.reshape((num_agents * num_envs,)), infos)
    assert set(per_actor) >= {"returned_episode_returns", "terminated", "truncated"}
    assert per_actor["terminated"].dtype == jnp.bool_
    # The (1,) actions act as the scalars they hold.
    scalar = {agent: a[:, 0] for agent, a in actions.items()}
    _, _, same_rewards, _, _ = jax.vmap(env.step)(keys, state, scalar)
    chex.assert_trees_all_equal(rewards, same_rewards)


def test_overcooked_tutorial_snippet():
    # JaxMARL's overcooked_introduction.py: the layout from its table, random actions, and each
    # state drawn by a visualiser built without the env, at the env's agent_view_size.
    from jaxmarl import make
    from jaxmarl.environments.overcooked import overcooked_layouts
    from jaxmarl.envs.overcooked.render import render_frame
    from jaxmarl.viz.overcooked_visualizer import OvercookedVisualizer

    env = make("overcooked", layout=overcooked_layouts["cramped_room"], max_steps=3)
    key = jax.random.PRNGKey(0)
    obs, state = env.reset(key)
    viz = OvercookedVisualizer()
    for _ in range(3):
        key, key_s, key_a = jax.random.split(key, 3)
        key_a = jax.random.split(key_a, env.num_agents)
        actions = {a: env.action_space(a).sample(key_a[i]) for i, a in enumerate(env.agents)}
        obs, state, rewards, dones, infos = env.step(key_s, state, actions)
        frame = viz.render(env.agent_view_size, state, highlight=False)
        np.testing.assert_array_equal(frame, render_frame(env, state))
    assert env.agent_view_size == 5


def test_overcooked_v2_visualizer_draws_stacked_states_without_the_env(tmp_path):
    from jaxmarl.envs.overcooked.v2.render import render_frame
    from jaxmarl.viz.overcooked_v2_visualizer import OvercookedV2Visualizer

    env = jaxmarl.make("overcooked_v2", layout="two_rooms")
    assert env.num_ingredients == 2  # not the default 1: the state must tell the renderer
    _, state = env.reset(jax.random.PRNGKey(0))
    step = jax.jit(env.step)
    states = [state]
    for i in range(3):
        actions = {a: jnp.int32((i + k) % 6) for k, a in enumerate(env.agents)}
        _, state, *_ = step(jax.random.PRNGKey(i), state, actions)
        states.append(state)
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *states)
    viz = OvercookedV2Visualizer()
    frames = viz.render_sequence(stacked, agent_view_size=2)
    assert frames.shape[0] == 4 and frames.dtype == np.uint8
    for frame, state in zip(frames, states):
        np.testing.assert_array_equal(frame, render_frame(env, state))
    np.testing.assert_array_equal(viz.render(states[0]), frames[0])
    viz.animate(stacked, filename=str(tmp_path / "v2.gif"), agent_view_size=2)
    assert (tmp_path / "v2.gif").stat().st_size > 0


def test_overcooked_visualizer_and_v2_log_wrapper_paths(tmp_path):
    from jaxmarl.viz.overcooked_visualizer import OvercookedVisualizer
    from jaxmarl.wrappers.baselines import OvercookedV2LogWrapper

    env = jaxmarl.make("overcooked", layout="counter_circuit")
    _, state = env.reset(jax.random.PRNGKey(0))
    path = tmp_path / "episode.gif"
    OvercookedVisualizer(env).animate([state, state], agent_view_size=5, filename=str(path))
    assert path.stat().st_size > 0
    # As JaxMARL's scripts call it, without the env: the state carries its kitchen, through jit
    # and vmap.
    _, states = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(1), 2))
    one = jax.tree.map(lambda x: x[1], states)
    np.testing.assert_array_equal(
        OvercookedVisualizer().render(5, one), OvercookedVisualizer(env).render(5, one)
    )
    OvercookedVisualizer().animate([one, one], agent_view_size=5, filename=str(path))
    custom = jaxmarl.make("overcooked", layout="XPXX\nO1 X\nX 2D\nXSXX")
    _, custom_state = custom.reset(jax.random.PRNGKey(0))
    frame = OvercookedVisualizer().render(5, custom_state)
    np.testing.assert_array_equal(frame, OvercookedVisualizer(custom).render(5, custom_state))
    assert frame.shape != OvercookedVisualizer().render(5, one).shape
    with pytest.raises(ValueError, match="carries no layout"):
        OvercookedVisualizer().render(5, one.replace(layout_text=""))
    v2 = OvercookedV2LogWrapper(jaxmarl.make("overcooked_v2"), replace_info=False)
    obs, state = v2.reset(jax.random.PRNGKey(0))
    actions = {agent: jnp.int32(4) for agent in v2.agents}
    *_, infos = v2.step(jax.random.PRNGKey(1), state, actions)
    assert "returned_episode_recipe_returns" in infos
    assert infos["terminated"].shape == (v2.num_agents,)


def test_jaxmarl_wrappers_see_smax_world_state_in_obs_as_jaxmarl_puts_it():
    # JaxMARL's SMAX returns obs["world_state"]; its MAPPO script's own wrapper (a
    # JaxMARLWrapper subclass) reads it from the raw env's reset and step.
    from jaxmarl.wrappers.baselines import JaxMARLWrapper, SMAXLogWrapper

    class ScriptWorldState(JaxMARLWrapper):  # the shape of mappo_rnn_smax.py's wrapper
        def reset(self, key):
            obs, state = self._env.reset(key)
            return {**obs, "critic": obs["world_state"][None].repeat(self.num_allies, 0)}, state

    raw = jaxmarl.make("HeuristicEnemySMAX", scenario="3m")
    env = SMAXLogWrapper(ScriptWorldState(raw))
    obs, state = env.reset(jax.random.PRNGKey(0))
    world = raw.get_world_state(state.env_state)
    assert world.shape == (raw.state_size,)
    np.testing.assert_array_equal(obs["critic"], np.tile(world, (3, 1)))

    log = SMAXLogWrapper(raw)
    obs, state = log.reset(jax.random.PRNGKey(0))
    actions = {agent: jnp.int32(4) for agent in raw.agents}
    obs, state, *_ = jax.jit(log.step)(jax.random.PRNGKey(1), state, actions)
    np.testing.assert_array_equal(obs["world_state"], raw.get_world_state(state.env_state))
    # The env itself keeps to the contract: observation keys are the agents.
    raw_obs, _ = raw.reset(jax.random.PRNGKey(0))
    assert set(raw_obs) == set(raw.agents)


def test_jaxmarl_wrappers_declare_hanabi_obs_shape_as_jaxmarl_does():
    # JaxMARL's Hanabi declares the int 658; its PPO scripts build (1, num_envs, shape).
    from jaxmarl.wrappers.baselines import CTRolloutManager, LogWrapper

    raw = jaxmarl.make("hanabi")
    env = LogWrapper(raw)
    space = env.observation_space(raw.agents[0])
    assert isinstance(space.shape, int) and space.shape == 658
    assert jnp.zeros((1, 4, space.shape)).shape == (1, 4, 658)
    assert jnp.zeros((space.shape,)).shape == (658,)
    # ... and it still reads as the declared (658,) for code written for declared shapes.
    assert space.shape == (658,) and tuple(space.shape) == (658,) and not space.shape != (658,)
    obs, _ = env.reset(jax.random.PRNGKey(0))
    assert bool(space.contains(obs[raw.agents[0]]))
    assert not bool(space.contains(obs[raw.agents[0]][:-1]))
    assert raw.observation_space(raw.agents[0]).shape == (658,)
    assert type(raw.observation_space(raw.agents[0]).shape) is tuple
    manager = CTRolloutManager(env, batch_size=2)
    assert manager.obs_size == 658 + raw.num_agents
    # Envs JaxMARL shapes like the contract pass through unchanged.
    mpe = jaxmarl.make("MPE_simple_spread_v3")
    wrapped = LogWrapper(mpe)
    assert wrapped.observation_space(mpe.agents[0]) == mpe.observation_space(mpe.agents[0])
    obs, _ = wrapped.reset(jax.random.PRNGKey(0))
    assert set(obs) == set(mpe.agents)
