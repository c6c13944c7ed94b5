import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl import spaces
from jaxmarl.networks.encoders import split_leaves
from jaxmarl.wrappers import AgentBatch, LogWrapper, VecEnv
from tests.toy_envs import CounterEnv


def test_log_wrapper_returns_and_lengths():
    env = LogWrapper(CounterEnv(target=100, max_steps=3))
    obs, state = env.reset(jax.random.key(0))
    state = state.replace(env_state=state.env_state.replace(total=jnp.int32(0)))
    actions = {"agent_0": jnp.int32(1), "agent_1": jnp.int32(1)}
    infos_seen = []
    for t in range(3):
        obs, state, rewards, dones, infos = env.step(jax.random.key(t + 1), state, actions)
        infos_seen.append(infos)
    # Totals after each step: 2, 4, 6, so the return is 12 for each agent over 3 steps.
    final = infos_seen[-1]
    assert final["returned_episode"].tolist() == [True, True]
    np.testing.assert_allclose(final["returned_episode_returns"], [12.0, 12.0])
    assert final["returned_episode_lengths"].tolist() == [3, 3]
    assert final["returned_episode_lengths"].dtype == jnp.int32
    assert infos_seen[0]["returned_episode"].tolist() == [False, False]
    assert bool(final["truncated"]) and not bool(final["terminated"])
    assert state.episode_returns.tolist() == [0.0, 0.0]  # cleared for the next episode
    assert state.episode_returns.dtype == jnp.float32


def test_log_wrapper_forwards_and_jits_under_vmap():
    env = LogWrapper(CounterEnv(), replace_info=True)
    keys = jax.random.split(jax.random.key(1), 4)
    obs, state = jax.vmap(env.reset)(keys)
    actions = {"agent_0": jnp.zeros(4, jnp.int32), "agent_1": jnp.ones(4, jnp.int32)}
    out = jax.jit(jax.vmap(env.step))(keys, state, actions)
    assert out[4]["returned_episode_returns"].shape == (4, 2)
    assert set(out[4]) == {
        "terminated",
        "truncated",
        "returned_episode",
        "returned_episode_returns",
        "returned_episode_lengths",
    }
    assert env.agents == ["agent_0", "agent_1"]  # attribute access falls through
    assert env.get_avail_actions(jax.tree.map(lambda x: x[0], state))["agent_0"].shape == (3,)


def test_vec_env_splits_keys():
    venv = VecEnv(CounterEnv(), num_envs=8)
    obs, state = venv.reset(jax.random.key(2))
    assert obs["agent_1"].shape == (8, 3) and state.total.shape == (8,)
    assert len(set(state.total.tolist())) > 1  # different keys, different starts
    actions = {"agent_0": jnp.ones(8, jnp.int32), "agent_1": jnp.zeros(8, jnp.int32)}
    _, next_state, rewards, dones, infos = venv.step(jax.random.key(3), state, actions)
    assert rewards["agent_0"].shape == (8,) and infos["truncated"].shape == (8,)
    np.testing.assert_array_equal(next_state.total, state.total + 1)
    with pytest.raises(ValueError, match="num_envs"):
        VecEnv(CounterEnv(), num_envs=0)


def test_agent_batch_pads_heterogeneous_agents():
    env = CounterEnv()
    batch = AgentBatch.from_env(env, agent_id=True)
    assert batch.obs_shape == (3,) and batch.input_shape == (5,) and batch.num_actions == 3
    assert not batch.homogeneous
    obs = {"agent_0": jnp.array([[1.0, 2.0]]), "agent_1": jnp.array([[3.0, 4.0, 5.0]])}
    stacked = batch.stack_obs(obs)
    assert stacked.shape == (1, 2, 5) and stacked.dtype == jnp.float32
    np.testing.assert_array_equal(
        stacked[0], [[1.0, 2.0, 0.0, 1.0, 0.0], [3.0, 4.0, 5.0, 0.0, 1.0]]
    )
    np.testing.assert_array_equal(
        batch.obs_mask(), [[True, True, False, True, True], [True, True, True, True, True]]
    )
    avail = batch.stack_avail_actions(
        {"agent_0": jnp.array([True, False, True]), "agent_1": jnp.array([True, True])}
    )
    np.testing.assert_array_equal(avail, [[True, False, True], [True, True, False]])
    np.testing.assert_array_equal(batch.action_mask(), [[True, True, True], [True, True, False]])
    actions = batch.unstack_actions(jnp.array([[2, 1], [0, 0]]))
    assert actions["agent_0"].tolist() == [2, 0] and actions["agent_1"].dtype == jnp.int32
    rewards = {"agent_0": jnp.array([1.0, 2.0]), "agent_1": jnp.array([3.0, 4.0])}
    stacked_rewards = batch.stack(rewards)
    assert stacked_rewards.shape == (2, 2)
    chex.assert_trees_all_equal(batch.unstack(stacked_rewards), rewards)


class Stub:
    """Just the spaces of two agents, as ``AgentBatch.from_env`` reads them."""

    agents = ["a_0", "a_1"]

    def __init__(self, obs, act):
        self._obs, self._act = obs, act

    def observation_space(self, agent):
        return self._obs[agent]

    def action_space(self, agent):
        return self._act[agent]


def test_agent_batch_continuous_and_errors():
    box = spaces.Box(0.0, 1.0, (4,))
    env = Stub(
        {"a_0": box, "a_1": box},
        {"a_0": spaces.Box(0.0, 1.0, (2,)), "a_1": spaces.Box(0.0, 1.0, (3,))},
    )
    batch = AgentBatch.from_env(env)
    acts = batch.unstack_actions(jnp.ones((5, 2, 3)))
    assert acts["a_0"].shape == (5, 2) and acts["a_1"].shape == (5, 3)
    mixed = Stub({"a_0": box, "a_1": box}, {"a_0": spaces.Discrete(2), "a_1": box})
    with pytest.raises(ValueError, match="both discrete and continuous"):
        AgentBatch.from_env(mixed)
    grid = Stub(
        {"a_0": spaces.Box(0.0, 1.0, (2, 2)), "a_1": spaces.Box(0.0, 1.0, (3,))},
        {"a_0": spaces.Discrete(2), "a_1": spaces.Discrete(2)},
    )
    with pytest.raises(ValueError, match="different ranks"):
        AgentBatch.from_env(grid)


def test_agent_batch_appends_agent_ids_to_grids_as_constant_channels():
    grid = spaces.Box(0.0, 1.0, (2, 3, 4))
    env = Stub({"a_0": grid, "a_1": grid}, {"a_0": spaces.Discrete(2), "a_1": spaces.Discrete(2)})
    batch = AgentBatch.from_env(env, agent_id=True)
    assert batch.obs_shape == (2, 3, 4) and batch.input_shape == (2, 3, 6)
    obs = {"a_0": jnp.full((5, 2, 3, 4), 7.0), "a_1": jnp.full((5, 2, 3, 4), 9.0)}
    stacked = batch.stack_obs(obs)
    assert stacked.shape == (5, 2, 2, 3, 6)
    np.testing.assert_array_equal(stacked[..., :4], jnp.stack([obs["a_0"], obs["a_1"]], axis=1))
    ids = np.broadcast_to(np.eye(2)[None, :, None, None, :], (5, 2, 2, 3, 2))
    np.testing.assert_array_equal(stacked[..., 4:], ids)  # agent i's one-hot at every cell
    assert batch.obs_mask().shape == (2, 2, 3, 6) and bool(batch.obs_mask().all())
    np.testing.assert_array_equal(batch.strip_agent_ids(stacked), stacked[..., :4])
    plain = AgentBatch.from_env(env)
    np.testing.assert_array_equal(plain.strip_agent_ids(stacked[..., :4]), stacked[..., :4])
    np.testing.assert_array_equal(batch.append_agent_ids(stacked[..., :4]), stacked)


def test_agent_batch_world_state_per_agent():
    env = CounterEnv()
    batch = AgentBatch.from_env(env)
    _, state = env.reset(jax.random.key(0))
    world = batch.world_state(env, state)
    assert world.shape == (2, 5)
    np.testing.assert_array_equal(world[0], world[1])


def _image_and_inventory(image=(2, 3, 4), inventory=(5,)):
    return spaces.Dict(
        {"image": spaces.Box(0.0, 1.0, image), "inventory": spaces.Box(0.0, 9.0, inventory)}
    )


def test_agent_batch_packs_dict_observations_in_leaf_order():
    discrete = {"a_0": spaces.Discrete(3), "a_1": spaces.Discrete(3)}
    env = Stub({"a_0": _image_and_inventory(), "a_1": _image_and_inventory()}, discrete)
    batch = AgentBatch.from_env(env, agent_id=True)
    assert batch.obs_leaves == (("image", (2, 3, 4)), ("inventory", (5,)))
    assert batch.obs_shape == (29,) and batch.input_shape == (31,) and batch.homogeneous
    assert batch.input_leaves[-1] == ("agent_id", (2,))
    keys = jax.random.split(jax.random.key(0), 4)
    obs = {  # leading axes [T=2, B=3]; integer leaves are cast to float32
        agent: {
            "inventory": jax.random.randint(keys[2 * i], (2, 3, 5), 0, 9),
            "image": jax.random.uniform(keys[2 * i + 1], (2, 3, 2, 3, 4)),
        }
        for i, agent in enumerate(env.agents)
    }
    stacked = batch.stack_obs(obs)
    assert stacked.shape == (2, 3, 2, 31) and stacked.dtype == jnp.float32
    leaves = split_leaves(stacked, batch.input_leaves)
    for i, agent in enumerate(env.agents):
        np.testing.assert_array_equal(leaves["image"][:, :, i], obs[agent]["image"])
        np.testing.assert_array_equal(leaves["inventory"][:, :, i], obs[agent]["inventory"])
        np.testing.assert_array_equal(
            leaves["agent_id"][:, :, i], np.broadcast_to(np.eye(2)[i], (2, 3, 2))
        )
    # The packed vector is the leaves flattened, image first (the space's order).
    np.testing.assert_array_equal(stacked[1, 2, 0, :24], obs["a_0"]["image"][1, 2].ravel())
    with pytest.raises(ValueError, match="'inventory' of agent 'a_0' has shape"):
        batch.stack_obs({**obs, "a_0": {**obs["a_0"], "inventory": jnp.zeros((2, 3, 4))}})


def test_agent_batch_dict_observation_errors():
    discrete = {"a_0": spaces.Discrete(3), "a_1": spaces.Discrete(3)}
    box = spaces.Box(0.0, 1.0, (29,))
    with pytest.raises(ValueError, match="others have Dict spaces"):
        AgentBatch.from_env(Stub({"a_0": _image_and_inventory(), "a_1": box}, discrete))
    with pytest.raises(ValueError, match="Dict observation spaces differ"):
        AgentBatch.from_env(
            Stub(
                {"a_0": _image_and_inventory(), "a_1": _image_and_inventory(inventory=(6,))},
                discrete,
            )
        )
    nested = spaces.Dict({"inner": spaces.Dict({"x": box})})
    with pytest.raises(ValueError, match="Box leaves only"):
        AgentBatch.from_env(Stub({"a_0": nested, "a_1": nested}, discrete))
