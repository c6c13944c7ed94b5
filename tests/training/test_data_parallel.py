"""Data-parallel training of one run (``run.data_devices``): the same results as one device.

The learners' programs under a data split are checked here in this process, with the devices
emulated by ``jax.vmap(..., axis_name=DATA_AXIS)`` (the collectives are the same ones the mesh
runs). Real meshes of host devices and two processes joined by ``jax.distributed`` are in
``tests/training/host/test_scale_out.py``.
"""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import pytest

from jaxmarl.baselines.ppo import CentralisedCritic, PPOConfig, make_ppo
from jaxmarl.baselines.q_learning import QLearningConfig, make_q_learning
from jaxmarl.baselines.q_learning.pqn import PQNConfig, make_pqn
from jaxmarl.networks.mixers import QMIXMixerConfig
from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig
from jaxmarl.training.data_parallel import DATA_AXIS, DataShards
from jaxmarl.training.replay import add, init, sample, sample_split

ENV = EnvConfig(env_id="MPE_simple_spread_v3", num_envs=8, env_kwargs={"max_steps": 5})
GRU = NetworkConfig(trunk=GRUTrunkConfig(size=16), embed_dim=16, activation="relu", agent_id=True)
UPDATES = 3


def ippo_ff(data):
    return PPOConfig(
        env=ENV,
        network=NetworkConfig(embed_dim=16),
        run=RunConfig(total_timesteps=8 * 8 * UPDATES, data_devices=data),
        num_steps=8,
        num_minibatches=4,
        update_epochs=2,
    )


def mappo_gru(data):
    return dataclasses.replace(
        ippo_ff(data), network=GRU, critic=CentralisedCritic(), num_minibatches=2
    )


def mappo_ff_input_norm(data):
    """Both sets of input statistics merge every device's share of the rollout."""
    return dataclasses.replace(ippo_ff(data), critic=CentralisedCritic(), normalize_obs=True)


def qmix(data):
    return QLearningConfig(
        env=ENV,
        network=GRU,
        run=RunConfig(total_timesteps=8 * 6 * UPDATES, data_devices=data),
        num_steps=6,
        buffer_size=24,
        batch_size=4,
        learning_starts=0,
        target_update_interval=2,
        burn_in=2,  # a masked loss: the kept steps differ between the devices' shares
        mixer=QMIXMixerConfig(embed_dim=8, hypernet_hidden_dim=16),
    )


def pqn(data):
    return PQNConfig(
        env=ENV,
        network=GRU,
        run=RunConfig(total_timesteps=8 * 6 * UPDATES, data_devices=data),
        num_steps=6,
        num_minibatches=2,
        num_epochs=2,
    )


LEARNERS = {
    "ippo_ff": (ippo_ff, make_ppo),
    "mappo_gru": (mappo_gru, make_ppo),
    "mappo_ff_input_norm": (mappo_ff_input_norm, make_ppo),
    "qmix_burn_in": (qmix, make_q_learning),
    "pqn_vdn": (pqn, make_pqn),
}


def train(make, config):
    learner = make(config)

    def run(key):
        state = learner.init(key)
        return jax.lax.scan(lambda s, _: learner.update(s), state, None, UPDATES)

    return run


# MAPPO-GRU and VDN also run on real meshes in tests/training/host/test_scale_out.py.
@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "ippo_ff",
        "mappo_ff_input_norm",
        "qmix_burn_in",
        pytest.param("mappo_gru", marks=pytest.mark.nightly),
        pytest.param("pqn_vdn", marks=pytest.mark.nightly),
    ],
)
def test_two_data_devices_compute_what_one_computes(name):
    build, make = LEARNERS[name]
    key = jax.random.key(3)
    state, metrics = jax.jit(train(make, build(1)))(key)
    split = train(make, build(2))
    shares, split_metrics = jax.jit(
        lambda k: jax.vmap(lambda _: split(k), axis_name=DATA_AXIS)(jnp.arange(2))
    )(key)
    for device in range(2):  # parameters stay identical on every device, and equal one's
        params = jax.tree.map(lambda x: x[device], shares.params)
        chex.assert_trees_all_close(params, state.params, rtol=2e-5, atol=2e-6)
        device_metrics = jax.tree.map(lambda x: x[device], split_metrics)
        chex.assert_trees_all_close(device_metrics, metrics, rtol=2e-4, atol=2e-5)
    assert float(jnp.abs(metrics["episode_return"]).sum()) > 0  # episodes ended: compared
    # Each device held half the envs.
    local = jax.tree.leaves(shares.runner.obs)[0].shape[1]
    assert local == ENV.num_envs // 2


def test_split_replay_sample_is_the_one_device_sample():
    # 4 envs write an item each per add; two devices hold 2 envs each.
    items = lambda write: {"x": 10 * write + jnp.arange(4, dtype=jnp.float32)}
    whole = init({"x": jnp.float32(0)}, 12)
    for write in range(5):  # wraps around a capacity of 3 writes
        whole = add(whole, items(write))
    key = jax.random.key(0)
    expected = sample(whole, key, 6)["x"]

    def device(index):
        buffer = init({"x": jnp.float32(0)}, 6)
        for write in range(5):
            mine = jax.lax.dynamic_slice(items(write)["x"], (2 * index,), (2,))
            buffer = add(buffer, {"x": mine})
        return sample_split(buffer, key, 6, DataShards(2), 4)

    parts = jax.vmap(device, axis_name=DATA_AXIS)(jnp.arange(2))  # [2, 3] halves of the sample
    chex.assert_trees_all_equal(parts["x"].reshape(-1), expected)


@pytest.mark.parametrize(
    "config, match",
    [
        (lambda: ippo_ff(3), r"env.num_envs=8 does not split evenly over run.data_devices=3"),
        (
            lambda: dataclasses.replace(ippo_ff(4), num_minibatches=32),
            r"2 envs per data device x num_steps = 16 is not divisible by num_minibatches=32",
        ),
        (lambda: mappo_gru(8), r"1 envs per data device is not divisible by num_minibatches=2"),
        (
            lambda: dataclasses.replace(qmix(2), buffer_size=20),
            r"buffer_size=20 to be a multiple of env.num_envs=8; use buffer_size=24",
        ),
        (lambda: dataclasses.replace(qmix(2), batch_size=5), r"batch_size=5 does not split"),
        (lambda: pqn(8), r"1 envs per data device are not divisible by num_minibatches=2"),
        (lambda: RunConfig(data_devices=0), r"run.data_devices must be > 0"),
    ],
)
def test_a_data_split_that_does_not_fit_is_refused_with_the_fix(config, match):
    with pytest.raises(ValueError, match=match):
        config()
