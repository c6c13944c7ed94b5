"""TransfQMIX (``alg=transf_qmix``): entity views, the transformer agent and mixer, and the
learner under ``jit`` and ``vmap``."""

import dataclasses
import pathlib

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl import train
from jaxmarl.baselines.q_learning import (
    QLearningConfig,
    TransformerNetworkConfig,
    TransfQMIXConfig,
    make_q_learning,
    make_train,
)
from jaxmarl.networks.mixers import TransformerMixerConfig
from jaxmarl.networks.transformer import (
    EntityTransformer,
    TransformerAgent,
    TransformerMixer,
    TransformerQNetwork,
    linear_attention,
)
from jaxmarl.training.config import EnvConfig, RunConfig
from jaxmarl.wrappers.entities import EntityObservations

SMALL_NETWORK = TransformerNetworkConfig(width=8, num_layers=1, num_heads=2, ff_dim=16)
SMALL_MIXER = TransformerMixerConfig(num_layers=1, num_heads=2, ff_dim=16, init_scale=0.1)
SMALL_BODY = EntityTransformer(width=8, num_layers=1, num_heads=2, ff_dim=16)


def small_config(env_id="MPE_simple_spread_v3", env_kwargs=None, **overrides):
    base = dict(
        env=EnvConfig(env_id=env_id, env_kwargs=env_kwargs or {}, num_envs=2),
        network=SMALL_NETWORK,
        mixer=SMALL_MIXER,
        run=RunConfig(total_timesteps=2 * 10 * 5),
        num_steps=10,
        buffer_size=6,
        batch_size=2,
        learning_starts=40,
        target_update_interval=2,
    )
    base.update(overrides)
    return TransfQMIXConfig(**base)


# ------------------------------------------------------------------ entity views
VIEWS = pathlib.Path(__file__).resolve().parent / "data" / "jaxmarl_transformer_views.npz"


def test_spread_entity_matrices_match_jaxmarls_transformer_manager():
    # make_transf_qmix_reference.py: JaxMARL's matrices of its own states after random steps.
    data = np.load(VIEWS)
    env = jaxmarl.make("MPE_simple_spread_v3")
    _, state = env.reset(jax.random.key(0))
    for t in range(len(data["spread_p_pos"])):
        at = state.replace(
            p_pos=jnp.asarray(data["spread_p_pos"][t]), p_vel=jnp.asarray(data["spread_p_vel"][t])
        )
        rows = env.get_entity_obs(at)
        ours = np.stack([rows[a] for a in env.agents])
        np.testing.assert_allclose(ours, data["spread_obs"][t], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(
            env.get_entity_world_state(at), data["spread_state"][t], rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("case", ["3m", "3s5z_vs_3s6z_selfplay"])
def test_smax_entity_matrices_match_jaxmarls_transformer_manager(case):
    # The SMAX parity fixture's post-step states; JaxMARL flags rows as an ally sees them, so
    # its matrices are the allies' (an enemy's teammate column is its own team here).
    from tests.envs.smax.test_smax_parity import env_of, fixture, states

    data = np.load(VIEWS)
    env = env_of(case)
    for t, row in enumerate(data[f"smax_{case}_rows"]):
        state = jax.tree.map(lambda x: x[row], states(fixture(case), "post"))
        rows = env.get_entity_obs(state, env.get_obs(state))
        allies = np.stack([rows[a] for a in env.agents[: env.num_allies]])
        np.testing.assert_allclose(allies, data[f"smax_{case}_obs"][t], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(
            env.get_entity_world_state(state), data[f"smax_{case}_state"][t], rtol=1e-6
        )


def test_spread_entity_rows_are_the_flat_observation_regrouped():
    env = jaxmarl.make("MPE_simple_spread_v3")
    obs, state = env.reset(jax.random.key(0))
    obs, state, *_ = env.step(jax.random.key(1), state, {a: jnp.int32(1) for a in env.agents})
    rows = env.get_entity_obs(state)
    for i, agent in enumerate(env.agents):
        flat, mine = np.asarray(obs[agent]), np.asarray(rows[agent])
        assert mine.shape == env.entity_obs_shape == (6, 4)
        np.testing.assert_allclose(mine[3:, :2], flat[4:10].reshape(3, 2), atol=1e-6)
        others = [j for j in range(3) if j != i]
        np.testing.assert_allclose(mine[others, :2], flat[10:14].reshape(2, 2), atol=1e-6)
        np.testing.assert_array_equal(mine[i], [0.0, 0.0, 1.0, 1.0])  # itself
        np.testing.assert_array_equal(mine[:, 2], np.eye(3, 6)[i])
        np.testing.assert_array_equal(mine[:, 3], [1, 1, 1, 0, 0, 0])
    world = np.asarray(env.get_entity_world_state(state))
    assert world.shape == env.entity_world_shape == (6, 5)
    np.testing.assert_array_equal(world[:, :2], state.p_pos)
    np.testing.assert_array_equal(world[:, 2:4], state.p_vel)
    assert getattr(env, "entity_action_rows", None) is None


@pytest.mark.parametrize("case", ["3m", "3s5z_vs_3s6z_selfplay"])
def test_smax_entity_rows_and_attack_rows(case):
    # Mid-battle states of the SMAX parity fixtures, where units see each other.
    from tests.envs.smax.test_smax_parity import env_of, fixture, states

    env = env_of(case)
    data = fixture(case)
    width = len(env.unit_features)
    n = env.num_units
    checked = {True: 0, False: 0}  # attack slots matched to a target in sight, by team
    for step in range(0, len(data["actions"]), 7):
        state = jax.tree.map(lambda x: x[step], states(data, "post"))  # noqa: B023
        obs = env.get_obs(state)
        rows = env.get_entity_obs(state, obs)
        world = np.asarray(env.get_entity_world_state(state))
        flat_world = np.asarray(env.get_world_state(state))
        np.testing.assert_array_equal(world[:, :10], flat_world[: 10 * n].reshape(n, 10))
        np.testing.assert_array_equal(world[:, 10], flat_world[10 * n : 11 * n])  # teams
        sight = np.asarray(env.unit_stats.sight_ranges)[np.asarray(state.unit_types)]
        for agent in env.agents:
            me = env.agent_ids[agent]
            mine = np.asarray(rows[agent])
            assert mine.shape == env.entity_obs_shape == (n, width + 2)
            np.testing.assert_array_equal(mine[:-1, :width].ravel(), np.asarray(obs[agent])[:-10])
            np.testing.assert_array_equal(mine[-1, :10], np.asarray(obs[agent])[-10:])
            np.testing.assert_array_equal(mine[:, -1], np.eye(n)[-1])  # is-self: the last row
            ally = me < env.num_allies
            team = env.num_allies if ally else env.num_enemies
            np.testing.assert_array_equal(mine[:-1, -2], np.arange(n - 1) < team - 1)
            # Attack slot k reads the row of the unit it targets (allies: enemy k; enemies:
            # ally A-1-k), identified by its relative position when it is in sight.
            action_rows = env.entity_action_rows(agent)
            assert action_rows.shape == (env.action_space(agent).n,)
            assert np.all(action_rows[: env.num_movement_actions] == -1)
            for k, row in enumerate(action_rows[env.num_movement_actions :]):
                target = env.num_allies + k if ally else env.num_allies - 1 - k
                offset = state.unit_positions[target] - state.unit_positions[me]
                relative = np.asarray(offset) / sight[me]
                if np.linalg.norm(relative) < 1.0 and mine[row, 0] > 0 and state.unit_alive[me]:
                    np.testing.assert_allclose(mine[row, 1:3], relative, rtol=1e-5, atol=1e-6)
                    checked[bool(ally)] += 1
    assert checked[True] > 0, checked
    assert checked[False] > 0, checked


def test_entity_wrapper_serves_the_view_through_the_contract():
    env = EntityObservations(jaxmarl.make("MPE_simple_spread_v3", max_steps=3))
    obs, state = env.reset(jax.random.key(0))
    for agent in env.agents:
        assert env.observation_space(agent).shape == obs[agent].shape == (6, 4)
        assert obs[agent].dtype == jnp.float32
    actions = {a: jnp.int32(2) for a in env.agents}
    step = jax.jit(lambda k, s: env.step(k, s, actions, with_terminal_obs=True))
    for t in range(3):
        obs, state, _, dones, infos = step(jax.random.key(t), state)
    assert bool(dones["__all__"])  # the time limit: obs are the next episode's, terminal kept
    expected = env.get_entity_obs(infos["terminal_state"])
    chex.assert_trees_all_close(infos["terminal_obs"], expected)
    chex.assert_trees_all_close(obs, env.get_obs(state))
    np.testing.assert_array_equal(env.get_world_state(state), env.get_entity_world_state(state))
    assert env.action_rows() is None


def test_env_without_entity_view_is_refused_with_the_methods_to_define():
    with pytest.raises(ValueError, match=r"SimpleMPE has no entity view.*get_entity_obs"):
        EntityObservations(jaxmarl.make("MPE_simple_v3"))
    config = small_config(env_id="MPE_simple_v3")
    with pytest.raises(ValueError, match="has no entity view"):
        make_q_learning(config)


# ------------------------------------------------------------------ networks
def test_linear_attention_is_the_normalised_relu_kernel():
    q, k, v = jax.random.normal(jax.random.key(0), (3, 2, 5, 4, 3))  # [batch, tokens, heads, d]
    phi = lambda x: np.maximum(np.asarray(x), 0.0) + 1e-3
    weights = np.einsum("bqhd,bkhd->bhqk", phi(q), phi(k))
    weights /= weights.sum(-1, keepdims=True)
    expected = np.einsum("bhqk,bkhd->bqhd", weights, np.asarray(v))
    np.testing.assert_allclose(linear_attention(q, k, v), expected, rtol=1e-5, atol=1e-6)


def _mixer_and_inputs():
    mixer = TransformerMixer((4, 3), SMALL_BODY)
    keys = jax.random.split(jax.random.key(1), 4)
    q = jax.random.normal(keys[0], (5, 2, 3))
    world = jax.random.normal(keys[1], (5, 2, 12))
    states = jax.random.normal(keys[2], (5, 2, 3, 8))
    first = jnp.zeros((5, 2), bool).at[3, 1].set(True)
    params = mixer.init(keys[3], q, world, states, first)
    return mixer, params, q, world, states, first


def test_transformer_mixer_is_monotonic_in_every_agent_q():
    mixer, params, q, world, states, first = _mixer_and_inputs()
    grads = jax.grad(lambda q: mixer.apply(params, q, world, states, first).sum())(q)
    assert np.all(np.asarray(grads) >= 0.0) and np.any(np.asarray(grads) > 0.0)


def test_transformer_mixer_token_restarts_at_episode_starts():
    mixer, params, q, world, states, first = _mixer_and_inputs()
    mixed = mixer.apply(params, q, world, states, first)
    # Env 1 starts an episode at step 3: from there it equals a sequence started at step 3.
    later = mixer.apply(params, q[3:], world[3:], states[3:], first[3:])
    np.testing.assert_allclose(mixed[3:, 1], later[:, 1], rtol=1e-5, atol=1e-6)
    assert not np.allclose(mixed[3:, 0], later[:, 0])  # env 0 carries its token on


def _agent_network(action_rows=None, num_actions=7):
    agent = TransformerAgent(num_actions, EntityTransformer(8, 2, 2, 16))
    return TransformerQNetwork(agent, SMALL_MIXER_MODULE, 2, action_rows)


SMALL_MIXER_MODULE = TransformerMixer((3, 2), SMALL_BODY)


def test_agent_token_resets_and_continues_one_step_on():
    net = _agent_network()
    obs = jax.random.normal(jax.random.key(0), (6, 3, 2, 5, 4))
    first = jnp.zeros((6, 3), bool).at[0].set(True).at[4, 2].set(True)
    params = net.init(jax.random.key(1), obs[0], jnp.zeros((3, 6)))
    carry = jax.random.normal(jax.random.key(2), (3, 2, 8))
    q, states = net.q_values_and_states(params, carry, obs, first)
    # Where an episode starts the carried token is ignored.
    _, fresh = net.q_values(params, net.initial_carry(3), obs[4:], first[4:])
    np.testing.assert_allclose(q[4:, 2], fresh[:, 2], rtol=1e-5, atol=1e-5)
    # One step on from the recorded tokens is the next step of the sequence.
    after, reached = net.q_values_after(params, states[:-1], obs[1:], with_states=True)
    keep = ~np.asarray(first[1:])
    np.testing.assert_allclose(
        np.asarray(after)[keep], np.asarray(q[1:])[keep], rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(reached)[keep], np.asarray(states[1:])[keep], rtol=1e-5, atol=1e-5
    )


def test_actions_tied_to_entities_follow_their_rows():
    # Two moves of its own, then attacks on entities 2, 3 and 4: permuting those rows permutes
    # the attack values (attention has no positions), and the moves are unchanged.
    rows = np.array([[-1, -1, 2, 3, 4]] * 2)
    net = _agent_network(rows, num_actions=5)
    obs = jax.random.normal(jax.random.key(0), (1, 1, 2, 5, 4))
    params = net.init(jax.random.key(1), obs[0], jnp.zeros((1, 6)))
    first = jnp.ones((1, 1), bool)
    _, q = net.q_values(params, net.initial_carry(1), obs, first)
    swapped = obs[:, :, :, [0, 1, 4, 2, 3]]
    _, q_swapped = net.q_values(params, net.initial_carry(1), swapped, first)
    np.testing.assert_allclose(q_swapped[..., :2], q[..., :2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q_swapped[..., 2:], q[..., [4, 2, 3]], rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ learner
@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        # Nightly: spread's jit path is covered by the retracing test below (time limits too).
        pytest.param("MPE_simple_spread_v3", {}, marks=pytest.mark.nightly),
        ("HeuristicEnemySMAX", {"scenario": "3m"}),
    ],
    ids=["spread", "smax_3m"],
)
def test_vmapped_seeds_equal_separate_runs(env_id, kwargs):
    config = small_config(env_id, kwargs, team_reward="mean" if "SMAX" in env_id else "sum")
    train_fn = make_train(config)
    keys = jax.random.split(jax.random.key(7), 2)
    states, batched = jax.jit(jax.vmap(train_fn))(keys)
    assert float(batched["learning"][0, -1]) == 1.0
    single = jax.jit(train_fn)
    for i in range(2):
        _, metrics = single(keys[i])
        seed = jax.tree.map(lambda x: x[i], batched)
        # The gradient norm is read before clipping, where it reaches 1e6 (the mixer's
        # weights are |tokens|, so Q_tot moves tens of times faster than any agent's Q):
        # there float rounding that differs between the two programs shows at the 1e-2 level,
        # and in the loss at the 1e-4 level after four updates.
        np.testing.assert_allclose(seed.pop("grad_norm"), metrics.pop("grad_norm"), rtol=5e-2)
        chex.assert_trees_all_close(seed, metrics, rtol=2e-3, atol=1e-5)
    again = single(keys[1])[1]
    again.pop("grad_norm")
    chex.assert_trees_all_equal(metrics, again)  # same key, same result
    assert not np.allclose(batched["loss"][0], batched["loss"][1])
    chex.assert_tree_all_finite((batched, states.params))
    assert set(states.params) == {"agent", "mixer"}
    if "SMAX" in env_id:  # the attacks read their targets' tokens
        assert "q_entity" in states.params["agent"]


def test_learner_updates_without_retracing_and_bootstraps_time_limits():
    config = small_config(env_kwargs={"max_steps": 7})  # a time limit inside every sequence
    learner = make_q_learning(config)
    update = jax.jit(chex.assert_max_traces(learner.update, n=1))
    state = learner.init(jax.random.key(0))
    for _ in range(3):
        state, metrics = update(state)
    chex.clear_trace_counter()
    assert float(metrics["learning"]) == 1.0 and float(metrics["loss"]) > 0.0
    assert state.buffer.data.terminal_inputs is not None
    chex.assert_tree_all_finite((metrics, state.params))


@pytest.mark.parametrize(
    "build, match",
    [
        (
            lambda: QLearningConfig(mixer=TransformerMixerConfig()),
            r"mixer=transformer mixes the hidden tokens of transformer agents; use "
            r"alg=transf_qmix",
        ),
        (
            lambda: TransformerNetworkConfig(width=30, num_heads=8),
            r"network.num_heads=8 must divide network.width=30",
        ),
        (lambda: TransformerNetworkConfig(attention="fast"), r"network.attention must be one"),
        (
            lambda: small_config(mixer=TransformerMixerConfig(num_heads=3)),
            r"mixer.num_heads=3 must divide network.width=8",
        ),
        (lambda: TransformerMixerConfig(ff_dim=0), r"mixer.ff_dim must be > 0"),
    ],
)
def test_bad_transf_qmix_settings_name_the_fix(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_alg_transf_qmix_loads_jaxmarls_mpe_settings():
    config = train.parse(["alg=transf_qmix"]).config
    assert isinstance(config, TransfQMIXConfig)
    assert config.env.env_id == "MPE_simple_spread_v3" and config.mixer.kind == "transformer"
    assert config.network == TransformerNetworkConfig()  # width 32, 2 layers, 8 heads, 128
    assert config.mixer == TransformerMixerConfig(init_scale=0.01)
    assert (config.optimiser, config.adam_eps, config.lr, config.anneal_lr) == (
        "adam",
        1e-6,
        1e-3,
        True,
    )
    assert config.returns.kind == "lambda" and config.returns.td_lambda == pytest.approx(0.6)
    assert (config.gamma, config.max_grad_norm, config.target_update_interval) == (0.9, 10.0, 200)
    assert int(config.eps_decay * config.num_updates) * config.steps_per_update == 800_000
    # Transformer agents under another mixer (TransfQMix's ablations) stay possible.
    assert train.parse(["alg=transf_qmix", "mixer=qmix"]).config.mixer.kind == "qmix"


def test_smax_preset_decouples_attacks_and_scales_rewards():
    config = train.parse(["alg=transf_qmix", "preset=HeuristicEnemySMAX_5m_vs_6m"]).config
    assert config.env.env_kwargs["scenario"] == "5m_vs_6m" and config.reward_scale == 10.0
    assert config.network.embed_relu and config.network.entity_actions
    assert config.team_reward == "mean" and config.mixer.init_scale == 1.0
    assert dataclasses.replace(config.network, embed_relu=False) == TransformerNetworkConfig()


def test_saved_config_reads_back(tmp_path):
    # A run directory's config.yaml is read back to resume and evaluate the run.
    from jaxmarl.config import config_from_file, save_config

    config = train.parse(["alg=transf_qmix", "network.width=16", "mixer.num_heads=4"]).config
    path = save_config(config, tmp_path / "config.yaml")
    assert "mixer:\n  kind: transformer\n" in path.read_text()
    assert config_from_file(TransfQMIXConfig, path) == config


@pytest.mark.parametrize("env_id", ["MPE_simple_spread_v3", "HeuristicEnemySMAX"])
def test_jaxmarls_transformer_manager_serves_the_entity_view(env_id):
    # JaxMARL's transf_qmix.py builds its batches with TransformersCTRolloutManager.
    from jaxmarl.wrappers.baselines import MPELogWrapper, SMAXLogWrapper
    from jaxmarl.wrappers.transformers import TransformersCTRolloutManager

    smax = "SMAX" in env_id
    base = jaxmarl.make(env_id, scenario="3m") if smax else jaxmarl.make(env_id)
    manager = TransformersCTRolloutManager((SMAXLogWrapper if smax else MPELogWrapper)(base), 3)
    obs, state = manager.batch_reset(jax.random.key(0))
    for t in range(40):
        actions = {
            a: manager.batch_sample(jax.random.fold_in(jax.random.key(1), 100 * t + i), a)
            for i, a in enumerate(base.agents)
        }
        obs, state, rewards, dones, _ = manager.batch_step(jax.random.key(t), state, actions)
        inner = state.env_state
        expected = jax.vmap(base.get_entity_obs)(inner, jax.vmap(base.get_obs)(inner))
        for agent in base.agents:
            # SMAX's observations of done agents are zero, as JaxMARL's manager has them.
            done = dones[agent][:, None, None] & smax
            np.testing.assert_allclose(obs[agent], jnp.where(done, 0.0, expected[agent]), atol=1e-6)
        np.testing.assert_allclose(obs["__all__"], jax.vmap(base.get_entity_world_state)(inner))
        assert rewards["__all__"].shape == (3,)
    assert obs[base.agents[0]].shape == (3, *base.entity_obs_shape)


def test_jaxmarls_transformer_manager_refuses_an_env_without_entity_view():
    from jaxmarl.wrappers.transformers import TransformersCTRolloutManager

    with pytest.raises(NotImplementedError, match="has no entity view"):
        TransformersCTRolloutManager(jaxmarl.make("MPE_simple_v3"), 2)
